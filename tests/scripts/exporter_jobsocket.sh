#!/usr/bin/env bash
# exporter_jobsocket.sh BINARY SRCDIR - the job socket is never taken over (issue 16): a second
# exporter on the live --job-socket of a first exits 1 with a clear message and leaves it alone
# (the first keeps hearing its reporters and removes the socket at its exit); a stale socket
# (nobody listening) is replaced.
set -uo pipefail
BIN=$1 src=$2
. "$src/tests/scripts/exporter_lib.bash"
command -v curl >/dev/null || { echo "SKIP: curl missing (scripts/deps.sh installs it)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-jobsock.XXXXXX") || fail mktemp
PIDS=()
trap 'for p in "${PIDS[@]}"; do stop "$p"; done; rm -rf "$tmp"' EXIT
sock=$tmp/job.sock
common=(--web.listen-address 127.0.0.1:0 --no-collector.gpu --no-collector.netdev --no-collector.disk
    --no-collector.infiniband --job-socket "$sock")
start_exporter "$tmp/a.log" "${common[@]}"
PIDS+=("$EXPORTER_PID")
a=$EXPORTER_PID a_port=$EXPORTER_PORT

# a second exporter on the same socket refuses to start
"$BIN" exporter "${common[@]}" 2>"$tmp/b.log" &
b=$!
wait "$b"
rc=$?
[[ $rc == 1 ]] || fail "second exporter: exit $rc, want 1: $(cat "$tmp/b.log")"
grep -q "clusterfit: error: --job-socket: $sock is served by another live process" "$tmp/b.log" ||
    fail "unclear refusal: $(cat "$tmp/b.log")"
[[ -S $sock ]] || fail "the second exporter removed the first's socket"

# the first still hears its reporters
python3 "$src/contrib/clusterfit_report.py" --socket "$sock" --job j1 --rank 0 --step 1.5 ||
    fail "reporter failed"
got() { curl -sf "http://127.0.0.1:$a_port/metrics" | grep -q 'clusterfit_job_steps_total{training_job="j1",rank="0"} 1'; }
wait_for got || fail "the first exporter did not get the report"
stop "$a"
[[ ! -e $sock ]] || fail "the socket was left behind at exit"

# a stale socket (bound, then its owner gone) is replaced
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1])' "$sock"
[[ -S $sock ]] || fail "could not make a stale socket"
start_exporter "$tmp/c.log" "${common[@]}"
PIDS+=("$EXPORTER_PID")
stop "$EXPORTER_PID"
echo "exporter_jobsocket.sh: ok"
