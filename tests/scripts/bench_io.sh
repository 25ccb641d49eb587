#!/usr/bin/env bash
# bench_io.sh BINARY SRCDIR - `bench storage` cleans up when interrupted, and the JSON of
# `bench storage`, `bench memory` and `plan --calibration` agrees with docs/json.md.
#
# 1. A storage run (4K random reads, capped at 30 s) gets SIGINT once its test file exists: it must
#    exit 1 within a few seconds, say "interrupted" and leave no file behind.
# 2. Every key path of `bench storage --json` (with a --need), `bench memory --json` and of the
#    `calibration` object of `plan --calibration FILE --json` (a bench file and an nccl-tests log) appears in backticks in docs/json.md,
#    and every path in the first column of the tables under their headings occurs in the output.
set -euo pipefail

fail() { echo "bench_io.sh: $*" >&2; exit 1; }
(($# == 2)) || fail "usage: bench_io.sh BINARY SRCDIR"
bin=$1
src=$2
doc=$src/docs/json.md
command -v python3 >/dev/null || fail "python3 is needed"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-benchio.XXXXXX")
pid=
trap '[[ -n $pid ]] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

# 1. SIGINT
mkdir "$tmp/st"
"$bin" bench storage --path "$tmp/st" --size 16M --block 4K --engine pread --random-ops 100M \
    >"$tmp/int.out" 2>"$tmp/int.err" &
pid=$!
for _ in $(seq 100); do
    [[ -e $tmp/st/clusterfit-bench-storage.dat ]] && break
    sleep 0.05
done
[[ -e $tmp/st/clusterfit-bench-storage.dat ]] || fail "the test file never appeared"
sleep 0.2
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
pid=
((rc == 1)) || fail "interrupted run: exit $rc, want 1 ($(cat "$tmp/int.err"))"
grep -q interrupted "$tmp/int.err" || fail "interrupted run: stderr does not say so: $(cat "$tmp/int.err")"
left=$(ls -A "$tmp/st")
[[ -z $left ]] || fail "interrupted run left files behind: $left"

# 2. JSON and docs
"$bin" bench storage --path "$tmp/st" --size 2M --block 256K --need 0.001 --json >"$tmp/storage.json"
"$bin" bench memory --size 64K --threads 2 --ntimes 3 --json >"$tmp/memory.json"
"$bin" plan --model llama3-8b --gpu h100-sxm --gpus 64 --json \
    --calibration "$src/tests/cli/0179-plan-calibration-json/allreduce.json" >"$tmp/plan.json"
"$bin" plan --model llama3-8b --gpu h100-sxm --gpus 64 --json \
    --calibration "$src/tests/fixtures/nccl/all_reduce_perf-2x8.log" >"$tmp/plan-log.json"

python3 - "$(dirname "${BASH_SOURCE[0]}")" "$doc" "$tmp/storage.json" "$tmp/memory.json" "$tmp/plan.json" \
    "$tmp/plan-log.json" <<'PY'
import json
import sys
sys.path.insert(0, sys.argv.pop(1))
from json_doc_lib import paths, section_table

doc, storage, memory, plan, plan_log = sys.argv[1:]


errors = []
for name, heading, root in [(storage, "`clusterfit bench storage --json`", None),
                            (memory, "`clusterfit bench memory --json`", None),
                            (plan, "`calibration`", "calibration")]:
    obj = json.load(open(name))
    if root:
        obj = {root: obj[root]}
    found = paths(obj)
    if root:   # a bench --json file and an nccl-tests log fill different parts of `calibration`
        found |= paths({root: json.load(open(plan_log))[root]})
    if root:
        found.discard(root)   # documented in the plan table itself
    documented = set(section_table(doc, heading, "bench_io.sh"))
    for p in sorted(found - documented):
        errors.append(f"{heading}: output path `{p}` is not in its table in docs/json.md")
    for p in sorted(documented - found):
        errors.append(f"{heading}: docs/json.md documents `{p}`, which the output does not have")
if errors:
    print("\n".join(errors))
    sys.exit(1)
print("bench_io.sh: storage, memory and calibration JSON match docs/json.md")
PY
