#!/usr/bin/env bash
# api_includes.sh BINARY SRCDIR - the CLI goes through the public API (issue 18).
#
# Every #include of src/cli/*.c and *.h must name a header of src/cli itself, a public header
# (clusterfit/NAME.h under include/), or a system header (<...> that is not a file under src/).
# The test fails on any other include: the CLI reaches the library only through its public API.
set -euo pipefail

fail() { echo "api_includes.sh: $*" >&2; exit 1; }
(($# == 2)) || fail "usage: api_includes.sh BINARY SRCDIR"
src=$2
[[ -d $src/src/cli && -d $src/include/clusterfit ]] || fail "not a source tree: $src"

crossing=""
cd "$src"
for f in src/cli/*.c src/cli/*.h; do
    while IFS= read -r line; do
        if [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
            h=${BASH_REMATCH[1]}
            [[ -f src/cli/$h ]] && continue
            [[ $h == clusterfit/* && -f include/$h ]] && continue
        elif [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<([^\>]+)\> ]]; then
            h=${BASH_REMATCH[1]}
            [[ -f src/$h ]] || continue    # a system header
        else
            continue
        fi
        crossing+="$f $h"$'\n'
    done <"$f"
done
crossing=$(sort -u <<<"${crossing%$'\n'}" | sed '/^$/d')

[[ -z $crossing ]] || fail "src/cli includes library internals (use include/clusterfit/):"$'\n'"$crossing"
echo "api_includes.sh: src/cli includes only its own, public and system headers"
