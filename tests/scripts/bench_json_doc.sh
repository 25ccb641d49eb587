#!/usr/bin/env bash
# bench_json_doc.sh BINARY SRCDIR - docs/json.md and `clusterfit bench <collective> --json` agree (DESIGN.md §5).
#
# Runs `bench allreduce --json` (2 ranks, two sizes) and `bench alltoall --json -c 0` (so `wrong` is
# null); every key path of the output (`results[].time_s`) must appear in the table under the
# "## `clusterfit bench allreduce|...` --json" heading of docs/json.md, and every path that table
# names must occur in the output.
set -euo pipefail

fail() { echo "bench_json_doc.sh: $*" >&2; exit 1; }
(($# == 2)) || fail "usage: bench_json_doc.sh BINARY SRCDIR"
bin=$1
doc=$2/docs/json.md
[[ -f $doc ]] || fail "missing $doc"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-benchjson.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$bin" bench allreduce --np 2 -b 1K -e 4K -f 4 -n 1 -w 0 --json >"$tmp/ar.json" || fail "bench allreduce --json failed"
"$bin" bench alltoall --np 2 -b 1K -e 1K -n 1 -w 0 -c 0 --json >"$tmp/a2a.json" || fail "bench alltoall --json failed"

python3 - "$(dirname "${BASH_SOURCE[0]}")" "$doc" "$tmp/ar.json" "$tmp/a2a.json" <<'PY'
import json, sys
sys.path.insert(0, sys.argv.pop(1))
from json_doc_lib import disagreements, paths, section_table

doc, outputs = sys.argv[1], sys.argv[2:]
found = set()
objs = [json.load(open(name)) for name in outputs]
for o in objs:
    paths(o, "", found)
assert objs[1]["results"][0]["wrong"] is None, "-c 0 must print wrong: null"
table = section_table(doc, "bench allreduce", "bench_json_doc.sh")
errors = disagreements(found, table, "bench")
if errors:
    sys.exit("\n".join(errors))
print(f"bench_json_doc.sh: {len(found)} output paths documented")
PY
