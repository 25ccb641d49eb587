#!/usr/bin/env bash
# exporter_slowloris.sh BINARY SRCDIR - slow clients (issue 16): bench/exporter_slowloris.py
# scaled down to stay under 30 s (1,000 slow half-open connections from 200 loopback addresses:
# >= 90 of 100 concurrent scrapes served, a fresh scrape in < 1 s; then 3,000 rather than the
# bench's 10,000: still up, peak RSS <= 64 MB); --web.max-requests answers 503 at once while a
# scrape is still being sent to a client that does not read; gzip when the client asks.
set -uo pipefail
BIN=$1 src=$2
. "$src/tests/scripts/exporter_lib.bash"
[[ -n ${CFIT_FAKENVML:-} && -f $CFIT_FAKENVML ]] || fail "CFIT_FAKENVML does not name the fake NVML library"
command -v curl >/dev/null || { echo "SKIP: curl missing (scripts/deps.sh installs it)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-slow.XXXXXX") || fail mktemp
PIDS=()
trap 'for p in "${PIDS[@]}"; do stop "$p"; done; rm -rf "$tmp"' EXIT

# The targets are for a release build: a sanitizer build is slower and its shadow memory alone is
# past 64 MB, so there only the checks below run.
if grep -qa -e __asan_init -e __tsan_init "$BIN"; then
    echo "sanitizer build: slowloris targets not measured (bench/exporter_slowloris.py on a release build)"
else
    python3 "$src/bench/exporter_slowloris.py" "$BIN" --slow 1000 --addresses 200 --scrapes 100 --big 3000 \
        --hold 2 >"$tmp/bench.out" 2>&1 || fail "slowloris targets missed: $(cat "$tmp/bench.out")"
    cat "$tmp/bench.out"
fi

# a big scrape (8,000 job series, about 13 MB: more than the 4 MiB tcp_wmem maximum) held by a
# client that never reads: the second scrape gets 503 at once
start_exporter "$tmp/log" --web.listen-address 127.0.0.1:0 --no-collector.gpu --no-collector.netdev \
    --no-collector.disk --no-collector.infiniband --job-socket "$tmp/job.sock" --job-socket.max-series 8000 \
    --web.max-requests 1
PIDS+=("$EXPORTER_PID")
url=http://127.0.0.1:$EXPORTER_PORT
python3 - "$tmp/job.sock" "$EXPORTER_PORT" <<'PY' || fail "503 check failed"
import socket, sys, time, urllib.request, urllib.error
path, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
for base in range(0, 8000, 1000):
    s.sendto("".join("job=big rank=%d step=1\n" % r for r in range(base, base + 1000)).encode(), path)
for _ in range(100):
    body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=30).read()
    if b"clusterfit_job_series 8000\n" in body:
        break
    time.sleep(0.1)
else:
    sys.exit("the 8,000 reports did not arrive")
stuck = socket.socket()
stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
stuck.connect(("127.0.0.1", port))
stuck.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
time.sleep(1)
t0 = time.time()
try:
    urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5)
    sys.exit("a second scrape was served while the first was in progress (--web.max-requests 1)")
except urllib.error.HTTPError as e:
    assert e.code == 503, e.code
    assert b"--web.max-requests" in e.read()
assert time.time() - t0 < 1, "the 503 was not at once"
stuck.close()
for _ in range(50):   # the slot comes back once the stuck client is gone
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=30).read()
        break
    except urllib.error.HTTPError:
        time.sleep(0.1)
else:
    sys.exit("the scrape slot never came back")
PY

# gzip when asked (Vary either way), identity otherwise
curl -sS -D "$tmp/h" -o "$tmp/m.gz" -H 'Accept-Encoding: gzip' "$url/metrics" || fail "curl gzip"
grep -qi '^Content-Encoding: gzip' "$tmp/h" || fail "no Content-Encoding: gzip: $(cat "$tmp/h")"
grep -qi '^Vary: Accept-Encoding' "$tmp/h" || fail "no Vary header"
gzip -dc "$tmp/m.gz" >"$tmp/m.txt" && grep -q '^clusterfit_job_series 8000$' "$tmp/m.txt" || fail "the gzip body does not decode to the scrape"
curl -sS -D "$tmp/h2" -o /dev/null -H 'Accept-Encoding: gzip;q=0, br' "$url/metrics" || fail "curl identity"
! grep -qi '^Content-Encoding' "$tmp/h2" || fail "gzip sent although q=0"
echo "exporter_slowloris.sh: ok"
