#!/usr/bin/env bash
# exporter_prometheus.sh BINARY SRCDIR - a real Prometheus server (Debian package), started on a
# free loopback port with its TSDB in a temp dir, scrapes `clusterfit exporter` (fixture trees,
# fake NVML) every second and loads `clusterfit rules`; its HTTP API must show up == 1, a GPU
# metric, a job metric and the rule groups healthy.  Skips (77) only when prometheus is absent.
set -uo pipefail
BIN=$1 src=$2
. "$src/tests/scripts/exporter_lib.bash"
command -v prometheus >/dev/null 2>&1 || { echo "SKIP: the prometheus binary is not installed (scripts/deps.sh installs it)"; exit 77; }
[[ -n ${CFIT_FAKENVML:-} && -f $CFIT_FAKENVML ]] || fail "CFIT_FAKENVML does not name the fake NVML library"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-prom.XXXXXX") || fail mktemp
PIDS=()
trap 'for p in "${PIDS[@]}"; do stop "$p"; done; rm -rf "$tmp"' EXIT
fx=$src/tests/fixtures
export FAKENVML_FIXTURE=$fx/nvml/healthy.txt
start_exporter "$tmp/exporter.log" --web.listen-address 127.0.0.1:0 --path.sysfs "$fx/sysfs" \
    --path.procfs "$fx/procfs" --nvml-library "$CFIT_FAKENVML" --job-socket "$tmp/job.sock"
PIDS+=("$EXPORTER_PID")
python3 "$src/contrib/clusterfit_report.py" --socket "$tmp/job.sock" --job llama --rank 0 --step 2 --count 3 ||
    fail "clusterfit_report.py failed"
"$BIN" rules >"$tmp/rules.yml" || fail "clusterfit rules failed"
start_prometheus rules.yml
PIDS+=("$PROMETHEUS_PID")
# query EXPR WANT: the first sample's value equals WANT
query() {
    curl -sS --get --data-urlencode "query=$1" "$api/query" 2>/dev/null |
        python3 -c 'import json,sys
r = json.load(sys.stdin)["data"]["result"]
sys.exit(0 if r and r[0]["value"][1] == sys.argv[1] else 1)' "$2" 2>/dev/null
}
for i in $(seq 1 300); do query 'up{job="clusterfit"}' 1 && break; sleep 0.1; done
query 'up{job="clusterfit"}' 1 || fail "Prometheus never saw up == 1: $(tail -n 5 "$tmp/prometheus.log")"
query 'clusterfit_gpu_utilization_ratio{gpu="0"}' 0.87 || fail "no GPU metric in Prometheus"
query 'clusterfit_gpu_xid_errors_total{gpu="0",xid="79"}' 2 || fail "no XID counter in Prometheus"
query 'clusterfit_job_steps_total{training_job="llama",rank="0"}' 3 || fail "no job metric in Prometheus"
query 'scrape_samples_scraped{job="clusterfit"} > bool 150' 1 || fail "too few samples scraped"
curl -sS "$api/rules" | python3 -c 'import json,sys
g = json.load(sys.stdin)["data"]["groups"]
rules = [r for x in g for r in x["rules"]]
bad = [r["name"] for r in rules if r.get("health") not in ("ok", "unknown")]
assert len(rules) >= 9 and not bad, (len(rules), bad)' || fail "Prometheus did not load the rules healthy"
echo "exporter_prometheus.sh: ok"
