#!/usr/bin/env bash
# bench_reliability.sh BINARY SRCDIR - a rank killed mid-run, mismatched arguments, a
# rendezvous port in use, an unreachable rendezvous and a rank that never arrives each end
# the job quickly with a clear message and the right exit status; no shared memory
# segment of the job is left in /dev/shm (and none exists while it runs).
set -uo pipefail
bin=$1
. "$(dirname "$0")/bench_lib.bash"

# 1. kill -9 one rank of a running 4-rank job, over shm and over tcp
for transport in auto tcp; do
    err=$tmp/kill-$transport.err
    "$bin" bench pairs --np 4 -s 1M -n 1000000 --timeout 10s --transport "$transport" >/dev/null 2>"$err" &
    parent=$!
    pids+=("$parent")
    children=()
    for ((i = 0; i < 50 && ${#children[@]} < 4; i++)); do
        sleep 0.1
        mapfile -t children < <(ps -o pid= --ppid "$parent" | awk '{print $1}' | sort -n)
    done
    ((${#children[@]} == 4)) || fail "$transport: expected 4 ranks under pid $parent, found ${#children[@]}"
    sleep 1   # well into the measurement
    [[ $(segments_of "$parent") == 0 ]] || fail "$transport: shm segments visible while the job runs"
    start=$SECONDS
    kill -9 "${children[2]}"
    wait_for "$parent" 15
    ((status == 1)) || fail "$transport: killed rank: exit $status, expected 1"
    ((SECONDS - start <= 10)) || fail "$transport: took $((SECONDS - start)) s to end after the kill"
    grep -q "rank 2 (pid ${children[2]}) was killed by signal 9" "$err" || fail "$transport: parent did not name rank 2"
    grep -qE "error: rank [013]: rank 2 lost" "$err" || fail "$transport: no surviving rank named rank 2"
    [[ $(segments_of "$parent") == 0 ]] || fail "$transport: shm segments left in /dev/shm"
done

# 1b. a rank that stops (SIGSTOP) makes no progress: a rank waiting on it (directly, or through a
# barrier) times out naming whom it waited for, the others hear of it, and the --np parent
# kills the stopped rank --timeout + 5 s later
err=$tmp/stop.err
"$bin" bench pairs --np 3 -s 256K -n 1000000 --timeout 1s >/dev/null 2>"$err" &
parent=$!
pids+=("$parent")
children=()
for ((i = 0; i < 50 && ${#children[@]} < 3; i++)); do
    sleep 0.1
    mapfile -t children < <(ps -o pid= --ppid "$parent" | awk '{print $1}' | sort -n)
done
((${#children[@]} == 3)) || fail "stop: expected 3 ranks under pid $parent, found ${#children[@]}"
sleep 0.5
kill -STOP "${children[1]}"
wait_for "$parent" 15
((status == 1)) || fail "stop: exit $status, expected 1"
grep -qE "error: rank [02]: no progress for 1 s: rank 1 is stopped" "$err" || fail "stop: no rank named rank 1"
for r in 0 2; do
    grep -qE "error: rank $r: (no progress for 1 s: rank 1 is stopped|rank [02] timed out waiting for rank 1)" "$err" ||
        fail "stop: rank $r did not report the stall of rank 1"
done
grep -q "rank 1 did not exit within 6 s after rank [02] failed; killing it" "$err" ||
    fail "stop: the parent did not kill the stopped rank"

# 2. ranks launched from the environment with different arguments: both exit 2
p=$(port)
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p "$bin" bench pairs -s 64K -n 2 --timeout 10s \
    >/dev/null 2>"$tmp/mm0.err" &
r0=$!
pids+=("$r0")
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p "$bin" bench pairs -s 64K -n 3 --timeout 10s \
    >/dev/null 2>"$tmp/mm1.err"
s1=$?
wait_for "$r0" 15
((status == 2 && s1 == 2)) || fail "mismatch: exit $status and $s1, expected 2 and 2"
for f in mm0 mm1; do
    grep -q "rank 1 was given different arguments: 'pairs -s 64K -n 3 --timeout 10s' (rank 0: 'pairs -s 64K -n 2 --timeout 10s')" \
        "$tmp/$f.err" || fail "mismatch: $f does not name rank 1 and both argument lists"
done

# 3. the rendezvous port is in use (a rank 0 waiting there holds it)
p=$(port)
RANK=0 WORLD_SIZE=2 MASTER_PORT=$p "$bin" bench pairs --timeout 5s >/dev/null 2>"$tmp/hold.err" &
holder=$!
pids+=("$holder")
sleep 0.5
RANK=0 WORLD_SIZE=2 "$bin" bench pairs --rendezvous "127.0.0.1:$p" --timeout 5s >/dev/null 2>"$tmp/inuse.err"
s=$?
kill "$holder" 2>/dev/null
((s == 1)) || fail "port in use: exit $s, expected 1"
grep -q "clusterfit: error: rendezvous port $p is in use" "$tmp/inuse.err" || fail "port in use: unclear message"

# 4. nobody listens at the rendezvous: a rank gives up after --timeout naming HOST:PORT
p=$(port)
start=$SECONDS
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p "$bin" bench pairs --timeout 1s >/dev/null 2>"$tmp/unreach.err"
s=$?
((s == 1)) || fail "unreachable: exit $s, expected 1"
((SECONDS - start <= 5)) || fail "unreachable: took $((SECONDS - start)) s with --timeout 1s"
grep -q "clusterfit: error: cannot reach the rendezvous at 127.0.0.1:$p within 1 s" "$tmp/unreach.err" ||
    fail "unreachable: unclear message"

# 4b. something else listens at the rendezvous: the rank does not hang on it, it says so
if command -v python3 >/dev/null 2>&1; then
    p=$(port)
    python3 -c "import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $p)); s.listen(8); time.sleep(8)" &
    py=$!
    sleep 0.5
    RANK=1 WORLD_SIZE=2 MASTER_PORT=$p "$bin" bench pairs --timeout 2s >/dev/null 2>"$tmp/foreign.err"
    s=$?
    kill "$py" 2>/dev/null
    wait "$py" 2>/dev/null
    ((s == 1)) || fail "foreign listener: exit $s, expected 1"
    grep -q "cannot reach the rendezvous at 127.0.0.1:$p within 2 s (something listens there but is not a clusterfit rank 0)" \
        "$tmp/foreign.err" || fail "foreign listener: unclear message"
fi

# 5. rank 0 waits for a rank that never comes: names it after --timeout
p=$(port)
RANK=0 WORLD_SIZE=3 MASTER_PORT=$p "$bin" bench pairs --timeout 1s >/dev/null 2>"$tmp/missing.err"
s=$?
((s == 1)) || fail "missing rank: exit $s, expected 1"
grep -q "rendezvous at 127.0.0.1:$p: 1 of 3 ranks arrived within 1 s (missing rank 1, 2)" "$tmp/missing.err" ||
    fail "missing rank: unclear message"

# 6. launcher variables that make no sense are bad input (exit 2)
RANK=4 WORLD_SIZE=4 "$bin" bench pairs >/dev/null 2>"$tmp/env.err"
s=$?
((s == 2)) || fail "RANK=4 WORLD_SIZE=4: exit $s, expected 2"
grep -q "RANK: '4' is out of range (0 to 3)" "$tmp/env.err" || fail "bad RANK: unclear message"

# 7. so are tcp tuning variables: refused before any rank starts, naming the variable
for bad in "CLUSTERFIT_TCP_THREADS=abc|CLUSTERFIT_TCP_THREADS: 'abc' is not a whole number" \
           "CLUSTERFIT_TCP_THREADS=65|CLUSTERFIT_TCP_THREADS: '65' is out of range (0 to 64)" \
           "CLUSTERFIT_TCP_CONNS=0|CLUSTERFIT_TCP_CONNS: '0' is out of range (1 to 64)" \
           "CLUSTERFIT_TCP_BUF=1K|CLUSTERFIT_TCP_BUF: '1K' is out of range (4K to 1G)" \
           "CLUSTERFIT_TCP_BUF=lots|CLUSTERFIT_TCP_BUF: "; do
    assign=${bad%%|*} want=${bad#*|}
    env "$assign" "$bin" bench allreduce --np 2 --transport tcp -b 1M -e 1M -n 1 -w 0 >/dev/null 2>"$tmp/tune.err"
    s=$?
    ((s == 2)) || fail "$assign: exit $s, expected 2"
    grep -qF "clusterfit: error: $want" "$tmp/tune.err" || fail "$assign: unclear message: $(cat "$tmp/tune.err")"
done
echo "ok"
