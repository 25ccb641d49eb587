#!/usr/bin/env bash
# bench_netns.sh BINARY SRCDIR - four "hosts" in network namespaces on a bridge, one of them
# behind a 200 Mbit/s token bucket (tc tbf, both directions); one rank per namespace,
# launched torchrun-style with `ip netns exec`.  `bench pairs` must use tcp between them
# (same hostname, different namespaces), exit 3, and name the shaped host as slow together
# with its three links.  Exit 77 (skipped) only where namespaces cannot be created.
set -uo pipefail
bin=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-ns.XXXXXX")
fail() { echo "FAIL: $*"; for f in "$tmp"/*; do [[ -f $f ]] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/netns_lib.bash"
netns_hosts cf 10.99.0 4
# host 2: 200 Mbit/s out of it (its eth0) and into it (the hub's end of its cable)
netns_run ip netns exec "${ns[2]}" tc qdisc add dev eth0 root tbf rate 200mbit burst 64kb latency 50ms
netns_run ip netns exec "$hub" tc qdisc add dev v2 root tbf rate 200mbit burst 64kb latency 50ms

port=$((20000 + RANDOM % 20000))
for i in 3 2 1 0; do
    ip netns exec "${ns[$i]}" env RANK=$i WORLD_SIZE=4 MASTER_ADDR=10.99.0.1 MASTER_PORT=$port \
        "$bin" bench pairs -s 2M -n 3 --lat-iters 20 --timeout 20s --json \
        >"$tmp/rank$i.out" 2>"$tmp/rank$i.err" &
    pid[$i]=$!
done
for i in 0 1 2 3; do
    wait "${pid[$i]}"
    status[$i]=$?
done
((status[0] == 3)) || fail "rank 0 exited ${status[0]}, expected 3 (a slow host)"
for i in 1 2 3; do ((status[i] == 3)) || fail "rank $i exited ${status[i]}, expected 3"; done
out=$tmp/rank0.out
h=$(hostname)
for i in 0 1 2 3; do
    grep -q "\"$h:rank$i\"" "$out" || fail "host label $h:rank$i missing (one rank per namespace)"
done
grep -q "\"slow_hosts\": \[\"$h:rank2\"\]" "$out" || fail "the shaped host $h:rank2 is not the one slow host"
for i in 0 1 3; do
    a=$((i < 2 ? i : 2)) b=$((i < 2 ? 2 : i))
    grep -q "{\"a\": \"$h:rank$a\", \"b\": \"$h:rank$b\"" "$out" || fail "link rank$a - rank$b not named slow"
done
n=$(grep -o '"a": ' "$out" | wc -l)
((n == 3)) || fail "$n slow links, expected the shaped host's 3"
cat "$out"

# mixed transports: two ranks in each of two namespaces (shm inside one, tcp across), every
# rank measured (--per-rank), each through a ring-step-heavy pairs run and a barrier mesh
port=$((port + 1))
for i in 3 2 1 0; do
    ip netns exec "${ns[$((i / 2))]}" env RANK=$i WORLD_SIZE=4 MASTER_ADDR=10.99.0.1 MASTER_PORT=$port \
        "$bin" bench pairs --per-rank -s 1M -n 3 --lat-iters 20 --slow-threshold 1 --timeout 20s --json \
        >"$tmp/mixed$i.out" 2>"$tmp/mixed$i.err" &
    pid[$i]=$!
done
for i in 0 1 2 3; do
    wait "${pid[$i]}"
    status[$i]=$?
done
for i in 0 1 2 3; do ((status[i] == 0)) || fail "mixed: rank $i exited ${status[i]}"; done
for i in 0 1 2 3; do
    grep -q "\"$h:rank$i\"" "$tmp/mixed0.out" || fail "mixed: rank $i missing"
done
cat "$tmp/mixed0.out"
echo "ok"
