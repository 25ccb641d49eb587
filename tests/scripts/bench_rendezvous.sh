#!/usr/bin/env bash
# bench_rendezvous.sh BINARY SRCDIR - nobody can break a job at its rendezvous (issue 17):
# three idle TCP connections, a forged hello claiming 99 ranks, one with another job's token
# and one that is not a hello at all, all made to rank 0's port while a real 2-rank
# env-launched job starts: the job succeeds and rank 0 logs each stranger it dropped.  A --np
# job listens on loopback only.
set -uo pipefail
bin=$1
. "$(dirname "$0")/bench_lib.bash"
command -v python3 >/dev/null 2>&1 || { echo "skip: no python3"; exit 77; }

p=$(port)
export CLUSTERFIT_JOB_TOKEN=rdv-test-$$
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p "$bin" bench allreduce -b 1M -e 1M -n 5 --timeout 10s \
    >"$tmp/r0.out" 2>"$tmp/r0.err" &
r0=$!
pids+=("$r0")
python3 - "$p" "$tmp/ready" <<'PY' &
import socket, struct, sys, time
port, ready = int(sys.argv[1]), sys.argv[2]
def connect():
    for _ in range(100):
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=2)
        except OSError:
            time.sleep(0.1)
    sys.exit("rank 0 never listened")
def hello(rank, size, token):
    # magic, version 2, rank, size, pid, data port, host[256], hostkey[192], token[128], digest length
    return (struct.pack(">6I", 0x43464954, 2, rank, size, 1, 1) + b"forger".ljust(256, b"\0")
            + b"forger|key".ljust(192, b"\0") + token.ljust(128, b"\0") + struct.pack(">I", 0))
idle = [connect() for _ in range(3)]                              # say nothing at all
forged = connect(); forged.recv(8); forged.sendall(hello(1, 99, b"token:rdv-test-%d" % 0))
stranger = connect(); stranger.recv(8); stranger.sendall(hello(1, 2, b"token:another-job"))
noise = connect(); noise.recv(8); noise.sendall(b"GET / HTTP/1.0\r\n\r\n" + b"x" * 700)
open(ready, "w").close()
time.sleep(12)
PY
py=$!
pids+=("$py")
for ((i = 0; i < 100; i++)); do [[ -e $tmp/ready ]] && break; sleep 0.1; done
[[ -e $tmp/ready ]] || fail "the strangers could not connect"
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p "$bin" bench allreduce -b 1M -e 1M -n 5 --timeout 10s \
    >/dev/null 2>"$tmp/r1.err"
s1=$?
wait_for "$r0" 20
((status == 0 && s1 == 0)) || fail "the real job failed under strangers: exit $status and $s1"
grep -q "^ *1048576 " "$tmp/r0.out" || fail "no result row"
err=$tmp/r0.err
grep -q "warning: rendezvous at 127.0.0.1:$p: dropped a connection from 127.0.0.1: wrong job token" "$err" ||
    fail "no log line for the wrong token"
grep -q "dropped a connection from 127.0.0.1: a hello of protocol version\|dropped a connection from 127.0.0.1: not a clusterfit hello" "$err" ||
    fail "no log line for the connection that sent no hello"
kill "$py" 2>/dev/null
[[ ${CFIT_SHOW:-} ]] && cat "$err"

# The forged hello with this job's token but 99 ranks: dropped, the job goes on
p=$(port)
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p "$bin" bench allreduce -b 64K -e 64K -n 2 --timeout 15s \
    >/dev/null 2>"$tmp/f0.err" &
r0=$!
pids+=("$r0")
python3 - "$p" "$CLUSTERFIT_JOB_TOKEN" >"$tmp/forger.out" <<'PY'
import socket, struct, sys, time
port, token = int(sys.argv[1]), sys.argv[2].encode()
for _ in range(100):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2); break
    except OSError:
        time.sleep(0.1)
s.recv(8)
s.sendall(struct.pack(">6I", 0x43464954, 2, 1, 99, 1, 1) + b"f".ljust(256, b"\0") + b"k".ljust(192, b"\0")
          + (b"token:" + token).ljust(128, b"\0") + struct.pack(">I", 0))
s.settimeout(3)
try:
    print(s.recv(4096)[8:].decode(errors="replace"))
except OSError:
    pass
PY
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p "$bin" bench allreduce -b 64K -e 64K -n 2 --timeout 15s \
    >/dev/null 2>"$tmp/f1.err"
s1=$?
wait_for "$r0" 20
((status == 0 && s1 == 0)) || fail "forged size: exit $status and $s1"
grep -q "dropped a connection from 127.0.0.1: it says the job has 99 ranks, rank 0 says 2" "$tmp/f0.err" ||
    fail "forged size: no log line"
grep -q "it says the job has 99 ranks, rank 0 says 2" "$tmp/forger.out" || fail "forged size: the forger was not told why"

# A --np job's listeners are on loopback only
if command -v ss >/dev/null 2>&1; then
    "$bin" bench pairs --np 2 --transport tcp -s 1M -n 1000000 --timeout 10s >/dev/null 2>"$tmp/np.err" &
    parent=$!
    pids+=("$parent")
    sleep 1
    mapfile -t children < <(ps -o pid= --ppid "$parent" | awk '{print $1}')
    ((${#children[@]} == 2)) || fail "loopback: expected 2 ranks, found ${#children[@]}"
    for c in "${children[@]}"; do
        ss -Hltnp 2>/dev/null | grep "pid=$c," | grep -qv "127.0.0.1:" &&
            fail "loopback: rank pid $c listens beyond loopback: $(ss -Hltnp | grep "pid=$c,")"
    done
    kill -TERM "$parent"
    wait_for "$parent" 10
fi
echo "ok"
