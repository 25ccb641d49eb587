#!/usr/bin/env bash
# sim_json_doc.sh BINARY SRCDIR - docs/json.md and `clusterfit sim --json` agree (DESIGN.md §5).
#
# Runs `sim --json` (a two-size sweep, one size with --gpu for the "links" object, the NCCL engine, the
# NCCL engine with --calibration) and
# `sim --describe --json`; every key path of the output
# (`results[].time_s`) must appear in the table under the "## `clusterfit sim --json`" heading,
# and every path that table names must occur in the output.
set -euo pipefail

fail() { echo "sim_json_doc.sh: $*" >&2; exit 1; }
(($# == 2)) || fail "usage: sim_json_doc.sh BINARY SRCDIR"
bin=$1
doc=$2/docs/json.md
[[ -f $doc ]] || fail "missing $doc"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-simjson.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$bin" sim --topology fattree:k=4 -b 1M -e 4M -f 4 --json >"$tmp/sim.json" || fail "sim --json failed"
"$bin" sim --topology fattree:k=4 --describe --json >"$tmp/describe.json" || fail "sim --describe --json failed"
"$bin" sim --engine flow --topology fattree:k=4 --gpu h100-sxm --size 1M --json >"$tmp/gpu.json" ||
    fail "sim --engine flow --gpu --json failed"
"$bin" sim --gpu h100-sxm --nodes 4 -b 1K -e 1G -f 1024 --json >"$tmp/nccl.json" || fail "sim --gpu --nodes --json failed"
"$bin" sim --gpu h100-sxm --nodes 2 --size 1G --calibration "$2/tests/fixtures/nccl/all_reduce_perf-2x8.log" --json \
    >"$tmp/cal.json" || fail "sim --calibration --json failed"

python3 - "$(dirname "${BASH_SOURCE[0]}")" "$doc" "$tmp/sim.json" "$tmp/describe.json" "$tmp/gpu.json" "$tmp/nccl.json" "$tmp/cal.json" <<'PY'
import json, sys
sys.path.insert(0, sys.argv.pop(1))
from json_doc_lib import disagreements, paths, section_table

doc, outputs = sys.argv[1], sys.argv[2:]
found = set()
for name in outputs:
    paths(json.load(open(name)), "", found)
table = section_table(doc, "sim --json", "sim_json_doc.sh")
errors = disagreements(found, table, "sim")
if errors:
    sys.exit("\n".join(errors))
print(f"sim_json_doc.sh: {len(found)} output paths documented")
PY
