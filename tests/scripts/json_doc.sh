#!/usr/bin/env bash
# json_doc.sh BINARY SRCDIR - docs/json.md and `clusterfit plan --json` agree (DESIGN.md §5).
#
# Runs `plan --json` five times: a normal plan (llama3-8b on 64 H100s), one where nothing fits
# (llama3-405b on 8 A100s, exit 2: even host-memory offload does not), so that per_gpu[].closest
# appears too, and one with --bom --network (512 H100s), so that the "bom" and "network" objects
# appear, one with --topology, so that "workload.topology" appears, and llama3-405b on 8 H100s,
# which fits only with the NVMe tier, so that the offload's nvme fields appear.  Every key path of
# the output (objects recursively, every element of arrays; written `plans[].memory.total_bytes`)
# must appear in backticks somewhere in docs/json.md, and every path in the first column of the
# table under the "## `clusterfit plan --json`" heading must occur in the output.
# A documented path whose line says "same fields as `X`" (per_gpu[].best: same fields as
# `plans[]`) covers the paths below it by those below X.
set -euo pipefail

fail() { echo "json_doc.sh: $*" >&2; exit 1; }
(($# == 2)) || fail "usage: json_doc.sh BINARY SRCDIR"
bin=$1
src=$2
[[ -x $bin ]] || fail "binary not executable: $bin"
doc=$src/docs/json.md
[[ -f $doc ]] || fail "missing $doc"
command -v python3 >/dev/null || fail "python3 is needed"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-jsondoc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$bin" plan --model llama3-8b --gpu h100-sxm --gpus 64 --json >"$tmp/plan.json" 2>"$tmp/plan.err" ||
    fail "plan --json failed (exit $?): $(cat "$tmp/plan.err")"
[[ ! -s $tmp/plan.err ]] || fail "plan --json wrote to stderr: $(cat "$tmp/plan.err")"
"$bin" plan --model llama3-8b --gpu h100-sxm --gpus 512 --bom --network --json >"$tmp/bom.json" 2>"$tmp/bom.err" ||
    fail "plan --bom --network --json failed (exit $?): $(cat "$tmp/bom.err")"
"$bin" plan --model llama3-8b --gpu h100-sxm --gpus 64 --topology fattree:k=8,oversub=2 --json \
    >"$tmp/topo.json" 2>"$tmp/topo.err" || fail "plan --topology --json failed (exit $?): $(cat "$tmp/topo.err")"
rc=0
"$bin" plan --model llama3-405b --gpu a100-sxm-80g --gpus 8 --json >"$tmp/nofit.json" 2>"$tmp/nofit.err" || rc=$?
((rc == 2)) || fail "plan --json with nothing fitting: exit $rc, want 2"
"$bin" plan --model llama3-405b --gpu h100-sxm --gpus 8 --tokens 1B --top 1 --json >"$tmp/nvme.json" 2>"$tmp/nvme.err" ||
    fail "plan --json on the NVMe tier failed (exit $?): $(cat "$tmp/nvme.err")"

python3 - "$(dirname "${BASH_SOURCE[0]}")" "$doc" "$tmp/plan.json" "$tmp/nofit.json" "$tmp/bom.json" "$tmp/topo.json" "$tmp/nvme.json" <<'EOF'
import json
import re
import sys
sys.path.insert(0, sys.argv.pop(1))
from json_doc_lib import paths

doc_path, outputs = sys.argv[1], sys.argv[2:]


found = {}
for name in outputs:
    with open(name) as f:
        text = f.read()
    try:
        obj = json.loads(text)
    except ValueError as e:
        sys.exit(f"json_doc.sh: {name}: not valid JSON: {e}")
    if not isinstance(obj, dict):
        sys.exit(f"json_doc.sh: {name}: the output is not one object")
    for p in paths(obj):
        found.setdefault(p, name)

with open(doc_path) as f:
    lines = f.read().splitlines()

documented = set()
alias = {}
for line in lines:
    ticks = re.findall(r"`([^`]+)`", line)
    documented.update(ticks)
    m = re.search(r"same fields as `([^`]+)`", line)
    if line.startswith("|") and m and ticks and ticks[0] != m.group(1):
        alias[ticks[0]] = m.group(1)


def is_documented(p, depth=0):
    if p in documented:
        return True
    if depth > 8:                     # alias cycle
        return False
    for a, target in alias.items():
        for sep in (".", "[]"):
            if p.startswith(a + sep) and is_documented(target + p[len(a):], depth + 1):
                return True
    return False


errors = []
for p in sorted(found):
    if not is_documented(p):
        errors.append(f"output path `{p}` is not documented in docs/json.md")

# The plan table: rows under the plan heading, up to the next "## " heading.
start = None
for i, line in enumerate(lines):
    if line.startswith("## ") and "plan" in line and "json" in line:
        start = i
        break
if start is None:
    errors.append("docs/json.md has no '## `clusterfit plan --json`' section")
    rows = []
else:
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            rows.append(line)
table = []
for line in rows:
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    m = re.fullmatch(r"`([^`]+)`", cells[0])
    if not m:
        continue                      # header or separator row
    table.append(m.group(1))
    if len(cells) < 3 or not all(cells[:3]):
        errors.append(f"docs/json.md: row for `{m.group(1)}` needs a unit and a meaning")
if start is not None and not table:
    errors.append("docs/json.md: the plan section has no table rows")
for p in table:
    if p not in found:
        errors.append(f"docs/json.md documents `{p}`, which the output does not have")
dups = sorted({p for p in table if table.count(p) > 1})
for p in dups:
    errors.append(f"docs/json.md documents `{p}` more than once")

if errors:
    print("\n".join(errors))
    sys.exit(1)
print(f"json_doc.sh: {len(found)} output paths documented, {len(table)} table rows present")
EOF
