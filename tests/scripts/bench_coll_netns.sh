#!/usr/bin/env bash
# bench_coll_netns.sh BINARY SRCDIR - collectives across "hosts": two network namespaces on a
# bridge with two ranks each, launched torchrun-style with `ip netns exec`.  Ranks in one namespace
# talk over shm, across namespaces over tcp, so the job's transport is "mixed" and it has 2 hosts;
# all-reduce (the ring: no shm window spans hosts), reduce-scatter and all-to-all must be bit-exact
# for every dtype.  Exit 77 (skipped) only where namespaces cannot be created.
set -uo pipefail
bin=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-collns.XXXXXX")
fail() { echo "FAIL: $*"; for f in "$tmp"/*; do [[ -f $f ]] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/netns_lib.bash"
netns_hosts cfc 10.98.0 2

port=$((20000 + RANDOM % 20000))
for coll in allreduce reducescatter alltoall; do
    port=$((port + 1))
    # ranks 0,1 in namespace a and 2,3 in b; each pair from one `ip netns exec` (each exec has its
    # own mount namespace, which the launcher counts as another host)
    for h in 1 0; do
        ip netns exec "${ns[$h]}" bash -c '
            one() { RANK=$1 WORLD_SIZE=4 MASTER_ADDR=10.98.0.1 MASTER_PORT=$2 "$3" bench "$4" -b 1K -e 2M -f 32 \
                        -n 1 -w 0 -d all --timeout 20s --json >"$5/$4$1.out" 2>"$5/$4$1.err"; }
            one "$1" "$3" "$4" "$5" "$6" & a=$!
            one "$2" "$3" "$4" "$5" "$6" & b=$!
            wait $a && wait $b' _ $((2 * h)) $((2 * h + 1)) "$port" "$bin" "$coll" "$tmp" &
        pid[$h]=$!
    done
    for h in 0 1; do
        wait "${pid[$h]}" || fail "$coll: a rank in namespace $h failed"
    done
    python3 - "$tmp/${coll}0.out" <<'PY' || fail "$coll: JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ranks"] == 4 and j["hosts"] == 2 and j["transport"] == "mixed", (j["ranks"], j["hosts"], j["transport"])
assert len(j["results"]) == 3 * 5 * 2, len(j["results"])
assert j["wrong_total"] == 0 and all(r["wrong"] == 0 for r in j["results"])
assert all(r["algo"] in ("ring", "pairwise") for r in j["results"])
PY
done
echo "bench_coll_netns.sh: allreduce, reducescatter, alltoall bit-exact over mixed shm/tcp on 2 hosts"
