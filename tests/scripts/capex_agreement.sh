#!/usr/bin/env bash
# capex_agreement.sh BINARY SRCDIR - the cost block's capex is the bill of materials' capex.
#
# For every golden CLI case (tests/cli/*/args) that runs `plan ... --bom` and exits 0, runs it
# again with --json and requires plans[0].cost.capex_usd == bom.capex_usd (both null or equal to
# the cent), and without --json requires the totals of the two text capex lines (the cost
# block's "capex: ... = $X" and the bill of materials' "capex: nodes ... = $X") to be the same
# string: one computation (cfit_bom_capex) for both (docs/sizing.md, issue 15).
set -euo pipefail

fail() { echo "capex_agreement.sh: $*" >&2; exit 1; }
(($# == 2)) || fail "usage: capex_agreement.sh BINARY SRCDIR"
bin=$1 src=$2
[[ -x $bin ]] || fail "binary not executable: $bin"
check='
import json, os, sys
d = json.load(sys.stdin)
a, b = d["plans"][0]["cost"]["capex_usd"], d["bom"]["capex_usd"]
if (a is None) != (b is None) or (a is not None and abs(a - b) > 0.005):
    sys.exit("capex_agreement.sh: %s: cost.capex_usd %s != bom.capex_usd %s" % (os.environ["CFIT_CASE"], a, b))
'
n=0
for args in "$src"/tests/cli/*/args; do
    case_dir=$(dirname "$args")
    line=$(tr '\n' ' ' <"$args")
    [[ $line == plan* && $line == *--bom* ]] || continue
    [[ ! -f $case_dir/expected_status || $(cat "$case_dir/expected_status") == 0 ]] || continue
    line=${line//@CASE@/$case_dir}
    line=${line//@SRC@/$src}
    eval "set -- $line"
    json=$("$bin" "$@" --json) || fail "$(basename "$case_dir"): plan --json failed"
    CFIT_CASE=$(basename "$case_dir") python3 -c "$check" <<<"$json" || exit 1
    loud=()
    for a in "$@"; do [[ $a == -q || $a == --quiet || $a == --json ]] || loud+=("$a"); done   # the cost block is in the details
    text=$("$bin" "${loud[@]}") || fail "$(basename "$case_dir"): plan failed"
    cost=$(grep -m1 '^  capex: .* nodes ' <<<"$text" | sed 's/.* = //') || true
    bom=$(grep -m1 '^  capex: nodes ' <<<"$text" | sed 's/.* = //; s/ (.*//') || true
    [[ -n $cost && $cost == "$bom" ]] || fail "$(basename "$case_dir"): text capex '$cost' (cost) != '$bom' (bill of materials)"
    n=$((n + 1))
done
((n > 0)) || fail "no golden case runs plan --bom"
echo "capex_agreement.sh: $n golden --bom plans agree"
