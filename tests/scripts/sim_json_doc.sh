#!/usr/bin/env bash
# sim_json_doc.sh BINARY SRCDIR - docs/json.md and `clusterfit sim --json` agree (DESIGN.md §5).
#
# Runs `sim --json` (a two-size sweep, and one size with --gpu for the "links" object) and
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
"$bin" sim --topology fattree:k=4 --gpu h100-sxm --size 1M --json >"$tmp/gpu.json" || fail "sim --gpu --json failed"

python3 - "$doc" "$tmp/sim.json" "$tmp/describe.json" "$tmp/gpu.json" <<'PY'
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
for name in outputs:
    paths(json.load(open(name)), "", found)
lines = open(doc).read().splitlines()
start = next((i for i, l in enumerate(lines) if l.startswith("## ") and "sim --json" in l), None)
if start is None:
    sys.exit("sim_json_doc.sh: docs/json.md has no '## `clusterfit sim --json`' section")
table = []
for l in lines[start + 1:]:
    if l.startswith("## "):
        break
    m = re.match(r"\|\s*`([^`]+)`\s*\|", l)
    if m:
        table.append(m.group(1))
errors = [f"output path `{p}` is not in the sim table of docs/json.md" for p in sorted(found) if p not in table]
errors += [f"docs/json.md documents `{p}`, which sim --json does not print" for p in table if p not in found]
if errors:
    sys.exit("\n".join(errors))
print(f"sim_json_doc.sh: {len(found)} output paths documented")
PY
