#!/usr/bin/env bash
# bench_coll.sh BINARY SRCDIR - every collective is bit-exact over shm and tcp with 2, 3 and 4 ranks.
#
# For each collective x transport x rank count (3 is not a power of two) it runs a small
# sweep over every dtype and op, out of place and in place, with --json, and checks that every
# row reports 0 wrong elements, that both placements and every dtype/op appear, and that the
# header fields (ranks, transport) are what was asked for.  Then larger sizes so the pipelined
# ring cuts chunks into several slices (all-reduce with --algo ring and shm, reduce-scatter,
# all-gather), and finally the checker's own test: CLUSTERFIT_BENCH_CORRUPT=3 flips 3 result
# elements on rank 0 before each check, which must show as #wrong = 3 in every row and exit 3.
set -euo pipefail

fail() { echo "bench_coll.sh: $*" >&2; exit 1; }
(($# == 2)) || fail "usage: bench_coll.sh BINARY SRCDIR"
bin=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-benchcoll.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# check_json FILE RANKS TRANSPORT ROWS [WRONG_PER_ROW]
check_json() {
    python3 - "$@" <<'PY'
import json, sys
name, ranks, transport, rows = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
per_row = int(sys.argv[5]) if len(sys.argv) > 5 else 0
j = json.load(open(name))
bad = []
if j["ranks"] != ranks: bad.append(f"ranks {j['ranks']} != {ranks}")
if j["transport"] != transport: bad.append(f"transport {j['transport']} != {transport}")
res = j["results"]
if len(res) != rows: bad.append(f"{len(res)} results, want {rows}")
for r in res:
    if r["wrong"] != per_row:
        bad.append(f"{r['type']} {r['redop']} {r['size_bytes']} B in_place={r['in_place']}: wrong = {r['wrong']}")
    if not r["time_s"] > 0: bad.append(f"time_s {r['time_s']}")
if sorted({r["in_place"] for r in res}) != [False, True]: bad.append("not both placements")
if j["wrong_total"] != per_row * len(res): bad.append(f"wrong_total {j['wrong_total']}")
if bad:
    sys.exit(f"{name}: " + "; ".join(bad[:8]))
PY
}

run() {   # run OUT ARGS...: the benchmark with --json into OUT, failing loudly
    local out=$1; shift
    "$bin" bench "$@" --json >"$out" 2>"$out.err" || fail "bench $* failed (exit $?): $(cat "$out.err")"
}

n=0
for coll in allreduce reducescatter allgather alltoall sendrecv; do
    for tr in shm tcp; do
        for np in 2 3 4; do
            out=$tmp/$coll-$tr-$np.json
            # sizes 1, 64, 4K: empty blocks, partial 16-byte rounding, many elements per rank
            if [[ $coll == allreduce || $coll == reducescatter ]]; then
                run "$out" "$coll" --np "$np" --transport "$tr" -b 1 -e 4K -f 64 -n 1 -w 1 -d all -o all
                rows=$((3 * 5 * 5 * 2))
            else
                run "$out" "$coll" --np "$np" --transport "$tr" -b 1 -e 4K -f 64 -n 1 -w 1 -d all
                rows=$((3 * 5 * 2))
            fi
            check_json "$out" "$np" "$tr" "$rows" || fail "$coll over $tr with $np ranks"
            n=$((n + 1))
        done
    done
done

# Several 512 KiB slices per chunk: the pipeline, the scratch reuse of reduce-scatter.
for args in "allreduce --algo ring" "allreduce --algo shm" "reducescatter" "allgather"; do
    for tr in shm tcp; do
        [[ $args == *"algo shm"* && $tr == tcp ]] && continue
        out=$tmp/big.json
        # shellcheck disable=SC2086
        run "$out" $args --np 3 --transport "$tr" -b 4M -e 4M -n 1 -w 0 -d float -o sum
        check_json "$out" 3 "$tr" 2 || fail "$args over $tr, 4 MiB"
        n=$((n + 1))
    done
done

# The checker counts wrong elements: 3 flipped on rank 0 per check.
set +e
CLUSTERFIT_BENCH_CORRUPT=3 "$bin" bench allreduce --np 3 -b 4K -e 64K -f 4 -n 1 -w 0 --json >"$tmp/bad.json" 2>"$tmp/bad.err"
status=$?
CLUSTERFIT_BENCH_CORRUPT=3 "$bin" bench alltoall --np 2 --transport tcp -b 4K -e 4K -n 1 -w 0 >"$tmp/bad.txt" 2>&1
status2=$?
set -e
((status == 3)) || fail "corrupted all-reduce exited $status, want 3: $(cat "$tmp/bad.err")"
grep -q "3 wrong elements\|wrong elements" "$tmp/bad.err" || fail "no wrong-element message: $(cat "$tmp/bad.err")"
check_json "$tmp/bad.json" 3 shm 6 3 || fail "corrupted all-reduce rows"
((status2 == 3)) || fail "corrupted all-to-all exited $status2, want 3"
grep -q "^# Out of bounds values : 2 FAILED" "$tmp/bad.txt" || fail "footer: $(cat "$tmp/bad.txt")"
grep -qE "^ +4096 .* 3 +[^ ]+ +[^ ]+ +[^ ]+ +3$" "$tmp/bad.txt" || fail "row: $(cat "$tmp/bad.txt")"
echo "bench_coll.sh: $n runs bit-exact, corruption counted"
