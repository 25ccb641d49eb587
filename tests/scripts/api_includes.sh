#!/usr/bin/env bash
# api_includes.sh BINARY SRCDIR - the CLI goes through the public API (issue 18).
#
# Every #include of src/cli/*.c and *.h must name a header of src/cli itself, a public header
# (clusterfit/NAME.h under include/), or a system header (<...> that is not a file under src/).
# The includes that still cross the line are listed below, one "FILE HEADER" per line; the
# test fails on any include outside these rules and the list, and on a listed one that is gone
# (remove it from the list: the list only shrinks).  What is left is the JSON/text builder
# (cfit_buf in base/json.h), whole-file reading (base/file.h) and the HTML/SVG report writer
# (report/report.h), whose cfit__ names the CLI still calls.
set -euo pipefail

fail() { echo "api_includes.sh: $*" >&2; exit 1; }
(($# == 2)) || fail "usage: api_includes.sh BINARY SRCDIR"
src=$2
[[ -d $src/src/cli && -d $src/include/clusterfit ]] || fail "not a source tree: $src"

allowed=$(sort <<'LIST'
src/cli/bench_report.c report/report.h
src/cli/cli.c base/json.h
src/cli/cmd_bench_coll.c base/json.h
src/cli/cmd_bench_io.c base/file.h
src/cli/cmd_bench_io.c base/json.h
src/cli/cmd_bench_pairs.c base/json.h
src/cli/cmd_check.c base/file.h
src/cli/cmd_check.c base/json.h
src/cli/cmd_rules.c base/file.h
src/cli/cmd_rules.c base/json.h
src/cli/cmd_sim.c base/json.h
src/cli/plan_bom.h base/json.h
src/cli/plan_json.c base/json.h
src/cli/plan_offload.c base/json.h
src/cli/plan_report.c report/report.h
src/cli/sim_nccl.c base/json.h
src/cli/sim_nccl_cal.c base/json.h
src/cli/sim_nccl_report.c report/report.h
src/cli/sim_report.c report/report.h
LIST
)

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

new=$(comm -13 <(echo "$allowed") <(echo "$crossing"))
[[ -z $new ]] || fail "src/cli includes library internals (use include/clusterfit/):"$'\n'"$new"
gone=$(comm -23 <(echo "$allowed") <(echo "$crossing"))
[[ -z $gone ]] || fail "no longer included, remove from the list in this script:"$'\n'"$gone"
echo "api_includes.sh: src/cli includes only its own and public headers, but for $(wc -l <<<"$allowed") listed includes"
