#!/usr/bin/env bash
# exporter_dcgm.sh BINARY SRCDIR - a real Prometheus (Debian package) scrapes `clusterfit exporter
# --compat dcgm` (fixture trees, fake NVML, a job report) every second and evaluates, through its
# HTTP API, every query of NVIDIA's dcgm-exporter Grafana dashboard (tests/fixtures/dcgm/
# dashboard-queries.txt) and of deploy/grafana/clusterfit-dashboard.json: each must get at least one
# series.  Grafana's variables become ".*" and $__rate_interval 10s; a panel that shows only what is
# wrong (`... == 0`) must get series once the filter is dropped.  The one dcgm-exporter query
# expected empty (its metric is in docs/metrics.md's "Not available" table) must stay empty.
# Skips (77) only when prometheus is absent.
set -uo pipefail
bin=$1 src=$2
BIN=$bin
. "$src/tests/scripts/bench_lib.bash"       # tmp (removed on exit), pids (killed on exit), port
. "$src/tests/scripts/exporter_lib.bash"    # fail, start_exporter
command -v prometheus >/dev/null 2>&1 || { echo "SKIP: the prometheus binary is not installed (scripts/deps.sh installs it)"; exit 77; }
[[ -n ${CFIT_FAKENVML:-} && -f $CFIT_FAKENVML ]] || fail "CFIT_FAKENVML does not name the fake NVML library"
fx=$src/tests/fixtures
export FAKENVML_FIXTURE=$fx/nvml/healthy.txt NODE_NAME=node1
start_exporter "$tmp/exporter.log" --compat dcgm --web.listen-address 127.0.0.1:0 --path.sysfs "$fx/sysfs" \
    --path.procfs "$fx/procfs" --nvml-library "$CFIT_FAKENVML" --job-socket "$tmp/job.sock"
pids+=("$EXPORTER_PID")
trap 'for p in "${pids[@]}"; do stop "$p"; done; cleanup' EXIT
report() {
    python3 "$src/contrib/clusterfit_report.py" --socket "$tmp/job.sock" --job llama --rank 0 --step 2 \
        --data 0.2 --allreduce 0.3 --optimizer 0.1 --count 3 || fail "clusterfit_report.py failed"
}
report
start_prometheus
pids+=("$PROMETHEUS_PID")
# up{job="clusterfit"} == 1 has a series: Prometheus scraped the exporter (curl and grep only: a
# python3 per poll costs seconds on a loaded machine)
scraped() {
    curl -sS --get --data-urlencode 'query=up{job="clusterfit"} == 1' "$api/query" 2>/dev/null | grep -q '"result":\[{'
}
deadline=$((SECONDS + 60))
until scraped || ((SECONDS > deadline)); do sleep 0.2; done
scraped || fail "Prometheus never saw up == 1: $(tail -n 5 "$tmp/prometheus.log")"
sleep 4      # a few scrapes, so rate() over 10s has two samples
report       # steps between the scrapes: the job rates are not all zero
sleep 2
python3 "$src/tests/scripts/dcgm_queries.py" "$api" "$src" ||
    fail "some dashboard queries got no series (Prometheus log: $tmp/prometheus.log)"
