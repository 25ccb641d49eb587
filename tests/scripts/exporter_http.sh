#!/usr/bin/env bash
# exporter_http.sh BINARY SRCDIR - `clusterfit exporter` over HTTP on loopback: /metrics (text
# 0.0.4, OpenMetrics by Accept, promtool-clean), /, /-/healthy, 404/405; job reports from the
# Python helper; a fake-NVML "driver restart" recovered by re-initialisation; a slowloris client
# cut off while scrapes go on; TLS + bcrypt basic auth from a web config file.
set -uo pipefail
BIN=$1 src=$2
. "$src/tests/scripts/exporter_lib.bash"
[[ -n ${CFIT_FAKENVML:-} && -f $CFIT_FAKENVML ]] || fail "CFIT_FAKENVML does not name the fake NVML library"
command -v curl >/dev/null || { echo "SKIP: curl missing (scripts/deps.sh installs it)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-http.XXXXXX") || fail mktemp
PIDS=()
trap 'for p in "${PIDS[@]}"; do stop "$p"; done; rm -rf "$tmp"' EXIT
fx=$src/tests/fixtures
cp "$fx/nvml/healthy.txt" "$tmp/nvml.txt"
export FAKENVML_FIXTURE=$tmp/nvml.txt
start_exporter "$tmp/log" --web.listen-address 127.0.0.1:0 --web.timeout 2s --path.sysfs "$fx/sysfs" \
    --path.procfs "$fx/procfs" --nvml-library "$CFIT_FAKENVML" --job-socket "$tmp/job.sock"
PIDS+=("$EXPORTER_PID")
url=http://127.0.0.1:$EXPORTER_PORT

# endpoints and content types
ct=$(curl -sS -o "$tmp/m.prom" -w '%{http_code} %{content_type}' "$url/metrics") || fail "curl /metrics"
[[ $ct == "200 text/plain; version=0.0.4; charset=utf-8" ]] || fail "/metrics answered '$ct'"
grep -q '^clusterfit_gpu_utilization_ratio{gpu="0",uuid="GPU-0a1b2c3d-0000-0000-0000-000000000000"} 0.87$' "$tmp/m.prom" ||
    fail "no GPU 0 utilisation in the scrape"
if command -v promtool >/dev/null; then promtool check metrics <"$tmp/m.prom" || fail "promtool check metrics"; fi
ct=$(curl -sS -o "$tmp/m.om" -w '%{http_code} %{content_type}' \
    -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' "$url/metrics")
[[ $ct == "200 application/openmetrics-text; version=1.0.0; charset=utf-8" ]] || fail "OpenMetrics answered '$ct'"
[[ $(tail -n 1 "$tmp/m.om") == "# EOF" ]] || fail "OpenMetrics scrape does not end with # EOF"
[[ $(curl -sS -o /dev/null -w '%{http_code}' "$url/") == 200 ]] || fail "/ is not 200"
[[ $(curl -sS "$url/-/healthy") == OK ]] || fail "/-/healthy is not OK"
[[ $(curl -sS -o /dev/null -w '%{http_code}' "$url/nope") == 404 ]] || fail "/nope is not 404"
[[ $(curl -sS -o /dev/null -w '%{http_code}' -X POST -d x=1 "$url/metrics") == 405 ]] || fail "POST is not 405"

# job reports through the Python helper; the garbage line is counted and dropped
python3 "$src/contrib/clusterfit_report.py" --socket "$tmp/job.sock" --job llama --rank 0 --step 2 --data 0.2 \
    --allreduce 0.25 --count 5 --raw "this is not a report" || fail "clusterfit_report.py failed"
job_ok() {
    curl -sS "$url/metrics" >"$tmp/j.prom" && grep -q '^clusterfit_job_reports_total 5$' "$tmp/j.prom" &&
        grep -q '^clusterfit_job_bad_lines_total 1$' "$tmp/j.prom" &&
        grep -q '^clusterfit_job_data_loading_seconds_total{training_job="llama",rank="0"} 1$' "$tmp/j.prom"
}
wait_for job_ok || fail "job reports not in the scrape: $(grep job "$tmp/j.prom")"
[[ $(stat -c %a "$tmp/job.sock") == 600 ]] || fail "job socket is not mode 600"

# driver restart: the fixture changes under the exporter (every NVML call says UNINITIALIZED);
# the GPUs are reported down, then NVML is initialised again and they come back
sed 's/energy_mj=123456789012/energy_mj=42000/' "$fx/nvml/healthy.txt" >"$tmp/nvml.new"
mv "$tmp/nvml.new" "$tmp/nvml.txt"
curl -sS "$url/metrics" >"$tmp/r1.prom"
grep -q '^clusterfit_gpu_up{gpu="0",uuid="GPU-0a1b2c3d-0000-0000-0000-000000000000"} 0$' "$tmp/r1.prom" ||
    fail "GPU 0 not reported down after the driver restart"
grep -q '^clusterfit_scrape_collector_success{collector="gpu"} 1$' "$tmp/r1.prom" || fail "gpu collector failed the scrape"
curl -sS "$url/metrics" >"$tmp/r2.prom"
grep -q '^clusterfit_gpu_up{gpu="0",uuid="GPU-0a1b2c3d-0000-0000-0000-000000000000"} 1$' "$tmp/r2.prom" ||
    fail "GPU 0 not back after re-initialisation"
grep -q '^clusterfit_gpu_nvml_reinitializations_total 1$' "$tmp/r2.prom" || fail "re-initialisation not counted"
grep -q '^clusterfit_gpu_energy_joules_total{gpu="0",[^}]*} 42$' "$tmp/r2.prom" || fail "new driver values not read"
grep -q 're-initialising NVML' "$tmp/log" || fail "re-initialisation not logged"

# slowloris: a client that never finishes its headers is cut off (--web.timeout 2s) while
# other scrapes are served; an oversized request is refused
python3 - "$EXPORTER_PORT" <<'PY' || fail "slow or oversized clients were not cut off"
import socket, sys, time, urllib.request
port = int(sys.argv[1])
slow = socket.create_connection(("127.0.0.1", port)); slow.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
t0 = time.time()
assert urllib.request.urlopen("http://127.0.0.1:%d/-/healthy" % port, timeout=2).read() == b"OK\n"
slow.settimeout(8)
try:
    data = slow.recv(100)
except socket.timeout:
    sys.exit("slow client still connected after 8 s")
closed_after = time.time() - t0
assert data == b"" or b" 408 " in data, data
assert 1.0 < closed_after < 6, "slow client cut after %.1f s (--web.timeout 2s)" % closed_after
big = socket.create_connection(("127.0.0.1", port)); big.settimeout(5)
try:
    big.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100000 + b"\r\n\r\n")
except OSError:
    pass   # reset while sending: refused
else:
    reply = big.recv(200)
    assert reply == b"" or b" 431 " in reply or b" 413 " in reply or b" 400 " in reply, reply
PY
stop "$EXPORTER_PID"
grep -q 'stopping' "$tmp/log" || fail "no clean stop on SIGTERM: $(cat "$tmp/log")"
[[ ! -e $tmp/job.sock ]] || fail "job socket left behind"

# TLS and basic auth
command -v openssl >/dev/null || { echo "SKIP: openssl missing (scripts/deps.sh installs it)"; exit 77; }
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/server.key" -out "$tmp/server.crt" -days 2 \
    -subj /CN=127.0.0.1 >/dev/null 2>&1 || fail "openssl could not make a test certificate"
cat >"$tmp/web.yml" <<YML
# test web config: password "secret" (bcrypt cost 4)
tls_server_config:
  cert_file: server.crt
  key_file: server.key
basic_auth_users:
  alice: \$2b\$04\$i8DBDwdLN5Mbh8ZUsUL7JuIC2Z0Ii25Dr.OT2NQH.ohaXrhTjmNf2
  bob: "\$2b\$12\$uHLFg1K8glyfq3eTq0D.W.PstvseTb3skMpOMfA1sExsoaNebj0jm"   # "secret", cost 12
YML
start_exporter "$tmp/log2" --web.listen-address 127.0.0.1:0 --web.config.file "$tmp/web.yml" --no-collector.gpu \
    --path.sysfs "$fx/sysfs" --path.procfs "$fx/procfs"
PIDS+=("$EXPORTER_PID")
surl=https://127.0.0.1:$EXPORTER_PORT
[[ $(curl -ksS -o /dev/null -w '%{http_code}' -u alice:secret "$surl/metrics") == 200 ]] || fail "TLS + right password is not 200"
[[ $(curl -ksS -o /dev/null -w '%{http_code}' -u alice:wrong "$surl/metrics") == 401 ]] || fail "wrong password is not 401"
[[ $(curl -ksS -o /dev/null -w '%{http_code}' "$surl/metrics") == 401 ]] || fail "no credentials is not 401"
# a good password is checked with bcrypt once, then from the cache; a wrong one never passes
t1=$(curl -ksS -o /dev/null -w '%{http_code} %{time_total}' -u bob:secret "$surl/-/healthy")
t2=$(curl -ksS -o /dev/null -w '%{http_code} %{time_total}' -u bob:secret "$surl/-/healthy")
[[ ${t1% *} == 200 && ${t2% *} == 200 ]] || fail "bob's good password: $t1 / $t2"
python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if b < a / 3 else 1)' "${t1#* }" "${t2#* }" ||
    fail "the second authenticated request was not served from the cache (${t1#* } s, then ${t2#* } s)"
[[ $(curl -ksS -o /dev/null -w '%{http_code}' -u bob:secreT "$surl/-/healthy") == 401 ]] || fail "wrong password after caching is not 401"
curl -sS -o /dev/null "http://127.0.0.1:$EXPORTER_PORT/metrics" 2>/dev/null &&
    [[ $(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$EXPORTER_PORT/metrics" 2>/dev/null) == 200 ]] &&
    fail "plain HTTP served on the TLS port"
echo "exporter_http.sh: ok"
