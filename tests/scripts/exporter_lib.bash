# exporter_lib.bash - helpers shared by the exporter_*.sh script tests (sourced, not run).
fail() { echo "${0##*/}: $*" >&2; exit 1; }
# start_exporter LOG ARGS... : run the exporter in the background, wait for its "listening on"
# line, set EXPORTER_PID and EXPORTER_PORT.
start_exporter() {
    local log=$1
    shift
    "$BIN" exporter "$@" 2>"$log" &
    EXPORTER_PID=$!
    local i
    for i in $(seq 1 100); do
        EXPORTER_PORT=$(sed -n 's/.*listening on .*(port \([0-9]*\),.*/\1/p' "$log" | head -n 1)
        [[ -n $EXPORTER_PORT ]] && return 0
        kill -0 "$EXPORTER_PID" 2>/dev/null || fail "exporter exited early: $(cat "$log")"
        sleep 0.05
    done
    fail "exporter did not start listening: $(cat "$log")"
}
# stop PID: SIGTERM, then wait for it.
stop() { [[ -n ${1:-} ]] && kill "$1" 2>/dev/null && wait "$1" 2>/dev/null; return 0; }
# wait_for CMD... : retry a command for up to 10 s.
wait_for() {
    local i
    for i in $(seq 1 100); do "$@" && return 0; sleep 0.1; done
    return 1
}
# start_prometheus [RULE_FILE]: a real Prometheus on a free loopback port (port_lib.bash) scraping
# the exporter at EXPORTER_PORT every second, its config and TSDB in $tmp, RULE_FILE (relative to
# $tmp) loaded when given; sets PROMETHEUS_PID and api (its HTTP API's base URL).
start_prometheus() {
    . "$(dirname "${BASH_SOURCE[0]}")/port_lib.bash"
    local prom_port
    prom_port=$(port)
    [[ -n $prom_port ]] || fail "no free port for Prometheus"
    {
        echo 'global: {scrape_interval: 1s, evaluation_interval: 1s}'
        [[ -n ${1:-} ]] && echo "rule_files: [$1]"
        echo 'scrape_configs:'
        echo '  - job_name: clusterfit'
        echo "    static_configs: [{targets: [\"127.0.0.1:$EXPORTER_PORT\"]}]"
    } >"$tmp/prometheus.yml"
    prometheus --config.file "$tmp/prometheus.yml" --storage.tsdb.path "$tmp/data" \
        --web.listen-address "127.0.0.1:$prom_port" >"$tmp/prometheus.log" 2>&1 &
    PROMETHEUS_PID=$!
    api=http://127.0.0.1:$prom_port/api/v1
}
