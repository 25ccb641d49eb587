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

python3 - "$doc" "$tmp/ar.json" "$tmp/a2a.json" <<'PY'
import json, re, sys

doc, outputs = sys.argv[1], sys.argv[2:]

def paths(v, prefix, out):
    if isinstance(v, dict):
        for k, sub in v.items():
            p = f"{prefix}.{k}" if prefix else k
            out.add(p)
            paths(sub, p, out)
    elif isinstance(v, list):
        for item in v:
            paths(item, prefix + "[]", out)

found = set()
objs = [json.load(open(name)) for name in outputs]
for o in objs:
    paths(o, "", found)
assert objs[1]["results"][0]["wrong"] is None, "-c 0 must print wrong: null"
lines = open(doc).read().splitlines()
start = next((i for i, l in enumerate(lines) if l.startswith("## ") and "bench allreduce" in l), None)
if start is None:
    sys.exit("bench_json_doc.sh: docs/json.md has no '## `clusterfit bench allreduce|...`' section")
table = []
for l in lines[start + 1:]:
    if l.startswith("## "):
        break
    m = re.match(r"\|\s*`([^`]+)`\s*\|", l)
    if m:
        table.append(m.group(1))
errors = [f"output path `{p}` is not in the bench table of docs/json.md" for p in sorted(found) if p not in table]
errors += [f"docs/json.md documents `{p}`, which bench --json does not print" for p in table if p not in found]
if errors:
    sys.exit("\n".join(errors))
print(f"bench_json_doc.sh: {len(found)} output paths documented")
PY
