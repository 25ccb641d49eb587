#!/usr/bin/env bash
# api_symbols.sh BINARY SRCDIR - libclusterfit.so exports exactly the public API (issue 18).
#
# The library is built with -fvisibility=hidden and include/clusterfit/*.h marks each public
# function (and the one public table, cfit_collectors) with CFIT_API.  `nm -D --defined-only`
# on the shared library beside BINARY must show no internal cfit__ symbol, no symbol that
# include/clusterfit/ does not declare with CFIT_API, and every name it does declare (a public
# function whose definition does not see its header would otherwise be hidden silently).
set -euo pipefail

fail() { echo "api_symbols.sh: $*" >&2; exit 1; }
(($# == 2)) || fail "usage: api_symbols.sh BINARY SRCDIR"
bin=$1
src=$2
so=$(dirname "$bin")/libclusterfit.so
[[ -e $so ]] || fail "shared library not built: $so"
command -v nm >/dev/null || fail "nm not found"

# (a sanitizer build adds its own, e.g. ASan's __odr_asan.NAME ODR indicators: not ours)
exported=$(nm -D --defined-only "$so" | awk 'NF == 3 && $2 ~ /^[TDRB]$/ && $3 !~ /^__(odr_)?(asan|ubsan|tsan)/ { print $3 }' | sort -u)
[[ -n $exported ]] || fail "no exported symbols in $so"
# The names the public headers declare with CFIT_API: the identifier before the first "(" (a
# function) or "[" (a table) of each CFIT_API declaration, which may span lines;
# preprocessor lines (where CFIT_API itself is defined) do not count.
declared=$(python3 - "$src"/include/clusterfit/*.h <<'PY'
import re, sys
for path in sys.argv[1:]:
    text = re.sub(r'/\*.*?\*/', ' ', open(path).read(), flags=re.S)
    text = re.sub(r'^[ \t]*#.*$', ' ', text, flags=re.M)  # the macro's own definition
    for m in re.finditer(r'\bCFIT_API\b([^;]*);', text):
        decl = re.split(r'[(\[]', m.group(1), maxsplit=1)[0]
        name = re.findall(r'[A-Za-z_]\w*', decl)
        if name:
            print(name[-1])
PY
)
[[ -n $declared ]] || fail "no CFIT_API declarations found under $src/include/clusterfit"
declared=$(sort -u <<<"$declared")

internal=$(grep '^cfit__' <<<"$exported" || true)
[[ -z $internal ]] || fail "$so exports internal symbols: $(tr '\n' ' ' <<<"$internal")"
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
[[ -z $extra ]] || fail "$so exports symbols include/clusterfit/ does not declare: $(tr '\n' ' ' <<<"$extra")"
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
[[ -z $missing ]] || fail "declared with CFIT_API but not exported (does the definition include its header?): $(tr '\n' ' ' <<<"$missing")"
echo "api_symbols.sh: $(wc -l <<<"$exported") exported symbols, all declared in include/clusterfit/"
