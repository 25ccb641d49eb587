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
# series EXPR: how many series the instant query returns (-1: the query failed)
series() {
    curl -sS --get --data-urlencode "query=$1" "$api/query" 2>/dev/null |
        python3 -c 'import json,sys
try:
    r = json.load(sys.stdin)
    print(len(r["data"]["result"]) if r.get("status") == "success" else -1)
except Exception:
    print(-1)'
}
for i in $(seq 1 300); do [[ $(series 'up{job="clusterfit"} == 1') == 1 ]] && break; sleep 0.1; done
[[ $(series 'up{job="clusterfit"} == 1') == 1 ]] || fail "Prometheus never saw up == 1: $(tail -n 5 "$tmp/prometheus.log")"
sleep 4      # a few scrapes, so rate() over 10s has two samples
report       # steps between the scrapes: the job rates are not all zero
sleep 2
# Grafana's variables; label_values(M, L) becomes count by (L) (M)
grafana() {
    sed -e 's/\$instance/.*/g; s/\$gpu/.*/g; s/\$training_job/.*/g; s/\$__rate_interval/10s/g' \
        -e 's/^label_values(\([A-Za-z_:]*\), *\([A-Za-z_]*\))$/count by (\2) (\1)/' <<<"$1"
}
bad=0 n=0
check() {   # check WANT EXPR  (WANT: some | none)
    local q n_series
    q=$(grafana "$2")
    n_series=$(series "$q")
    if [[ $1 == some && $n_series == 0 && $q =~ ^(.*[^ ])\ *==\ *[0-9]+$ ]]; then
        n_series=$(series "${BASH_REMATCH[1]}")   # a panel of what is wrong: the metric must be there
    fi
    n=$((n + 1))
    if [[ $n_series == -1 ]] || { [[ $1 == some ]] && ((n_series < 1)); } || { [[ $1 == none ]] && ((n_series != 0)); }; then
        echo "exporter_dcgm.sh: want $1 series, got $n_series: $q" >&2
        bad=1
    fi
}
while IFS= read -r line; do
    [[ -z $line || $line == \#* ]] && continue
    if [[ $line == !* ]]; then
        metric=$(grep -oE 'DCGM_[A-Z_]+' <<<"$line" | head -n 1)
        grep -q "^| .*\`$metric\`.* |" "$src/docs/metrics.md" || { echo "$metric is not in docs/metrics.md" >&2; bad=1; }
        check none "${line#!}"
    else
        check some "$line"
    fi
done <"$fx/dcgm/dashboard-queries.txt"
ndcgm=$n
while IFS= read -r expr; do
    check some "$expr"
done < <(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for p in d["panels"]:
    for t in p.get("targets", []):
        print(t["expr"])
for v in d.get("templating", {}).get("list", []):
    if v.get("type") == "query":
        print(v["definition"])' "$src/deploy/grafana/clusterfit-dashboard.json")
((bad)) && fail "some dashboard queries got no series (Prometheus log: $tmp/prometheus.log)"
echo "exporter_dcgm.sh: ok ($ndcgm dcgm-exporter dashboard queries, $((n - ndcgm)) deploy/grafana queries)"
