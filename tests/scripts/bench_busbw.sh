#!/usr/bin/env bash
# bench_busbw.sh BINARY SRCDIR - the bandwidth columns the bench goldens mask (issue 17): for
# every collective and np = 2, 3, 4, 8, every row of `bench COLLECTIVE --json` has
# algbw = size / time and busbw = algbw x nccl-tests' bus factor, written out here from
# nccl-tests' doc/PERFORMANCE.md (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md)
# rather than read from the registry (src/base/collective.c), so a wrong factor there fails:
#   all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; send-recv 1.
set -uo pipefail
bin=$1
. "$(dirname "$0")/bench_lib.bash"
command -v python3 >/dev/null 2>&1 || { echo "skip: no python3"; exit 77; }

for coll in allreduce allgather reducescatter alltoall sendrecv; do
    for np in 2 3 4 8; do
        out=$tmp/$coll-$np.json
        "$bin" bench "$coll" --np "$np" -b 4K -e 256K -f 8 -n 2 -w 1 --timeout 30s --json >"$out" 2>"$tmp/$coll-$np.err" ||
            fail "$coll --np $np: exit $?"
        python3 - "$out" "$coll" "$np" <<'PY' || fail "$coll --np $np: bandwidth columns wrong"
import json, sys
path, coll, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
factor = {"allreduce": 2 * (n - 1) / n, "allgather": (n - 1) / n, "reducescatter": (n - 1) / n,
          "alltoall": (n - 1) / n, "sendrecv": 1.0}[coll]
doc = json.load(open(path))
rows = doc["results"]
assert doc["ranks"] == n, f"ranks {doc['ranks']} != {n}"
assert len(rows) == 6, f"{len(rows)} rows, expected 3 sizes x out/in place"
def near(a, b):
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b)) + 1e-9
bad = 0
for r in rows:
    alg = r["size_bytes"] / r["time_s"] / 1e9
    if not near(r["algbw_gbs"], alg):
        print(f"size {r['size_bytes']}: algbw {r['algbw_gbs']} != size/time {alg}"); bad += 1
    if not near(r["busbw_gbs"], r["algbw_gbs"] * factor):
        print(f"size {r['size_bytes']}: busbw/algbw = {r['busbw_gbs'] / r['algbw_gbs']:.6f}, "
              f"nccl-tests' factor on {n} ranks is {factor:.6f}"); bad += 1
avg = sum(r["busbw_gbs"] for r in rows) / len(rows)
if not near(doc["avg_busbw_gbs"], avg):
    print(f"avg_busbw_gbs {doc['avg_busbw_gbs']} != mean of the rows {avg}"); bad += 1
sys.exit(1 if bad else 0)
PY
    done
done
echo "ok"
