#!/usr/bin/env bash
# exporter_golden.sh BINARY SRCDIR - scrape the fixture sysfs/procfs trees and the fake NVML
# (tests/fixtures/) once, in the text format and in OpenMetrics, and diff with the golden files
# tests/fixtures/golden/scrape.{prom,om} (collector durations masked); the gpu collector alone with
# --compat dcgm against tests/fixtures/golden/scrape-dcgm.prom.  UPDATE_GOLDEN=1 rewrites
# them.  The text scrape must pass `promtool check metrics`.  Needs CFIT_FAKENVML (set by CMake).
set -uo pipefail
bin=$1 src=$2
fail() { echo "exporter_golden.sh: $*" >&2; exit 1; }
[[ -n ${CFIT_FAKENVML:-} && -f $CFIT_FAKENVML ]] || fail "CFIT_FAKENVML does not name the fake NVML library"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-golden.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
fx=$src/tests/fixtures
mask='s/^\(clusterfit_scrape_collector_duration_seconds{[^}]*}\) .*/\1 DURATION/'
ok=1
for fmt in prom om; do
    extra=()
    [[ $fmt == om ]] && extra=(--openmetrics)
    FAKENVML_FIXTURE=$fx/nvml/healthy.txt LC_ALL=C "$bin" exporter --once "${extra[@]}" \
        --path.sysfs "$fx/sysfs" --path.procfs "$fx/procfs" --nvml-library "$CFIT_FAKENVML" \
        >"$tmp/raw.$fmt" 2>"$tmp/err.$fmt" || fail "exporter --once ($fmt) exited $?: $(cat "$tmp/err.$fmt")"
    sed -e "$mask" "$tmp/raw.$fmt" >"$tmp/scrape.$fmt"
    golden=$fx/golden/scrape.$fmt
    if [[ ${UPDATE_GOLDEN:-0} == 1 ]]; then
        mkdir -p "$fx/golden" && cp "$tmp/scrape.$fmt" "$golden"
        echo "exporter_golden.sh: wrote $golden"
    elif ! diff -u "$golden" "$tmp/scrape.$fmt"; then
        echo "exporter_golden.sh: scrape ($fmt) differs from $golden (UPDATE_GOLDEN=1 rewrites it)" >&2
        ok=0
    fi
done
# --compat dcgm: the gpu collector alone, with dcgm-exporter's names beside the native ones
NODE_NAME=node1 FAKENVML_FIXTURE=$fx/nvml/healthy.txt LC_ALL=C "$bin" exporter --once --compat dcgm \
    --nvml-library "$CFIT_FAKENVML" --no-collector.netdev --no-collector.disk --no-collector.infiniband \
    >"$tmp/raw.dcgm" 2>"$tmp/err.dcgm" || fail "exporter --once --compat dcgm exited $?: $(cat "$tmp/err.dcgm")"
sed -e "$mask" "$tmp/raw.dcgm" >"$tmp/scrape.dcgm"
if [[ ${UPDATE_GOLDEN:-0} == 1 ]]; then
    cp "$tmp/scrape.dcgm" "$fx/golden/scrape-dcgm.prom" && echo "exporter_golden.sh: wrote $fx/golden/scrape-dcgm.prom"
elif ! diff -u "$fx/golden/scrape-dcgm.prom" "$tmp/scrape.dcgm"; then
    echo "exporter_golden.sh: --compat dcgm scrape differs from $fx/golden/scrape-dcgm.prom (UPDATE_GOLDEN=1 rewrites it)" >&2
    ok=0
fi
# NVML installed but no driver loaded (nvmlInit_v2 -> DRIVER_NOT_LOADED): no GPUs, no failure
FAKENVML_FIXTURE=$fx/nvml/no-driver.txt "$bin" exporter --once --nvml-library "$CFIT_FAKENVML" --no-collector.netdev \
    --no-collector.disk --no-collector.infiniband >"$tmp/nodriver" 2>"$tmp/nodriver.err" || fail "no-driver scrape failed"
for want in 'clusterfit_gpu_nvml_up 0' 'clusterfit_gpu_devices 0' 'clusterfit_scrape_collector_success{collector="gpu"} 1'; do
    grep -qxF "$want" "$tmp/nodriver" || { echo "no-driver scrape lacks: $want" >&2; ok=0; }
done
grep -q 'driver not loaded' "$tmp/nodriver.err" || { echo "no-driver case not logged" >&2; ok=0; }
# every collector succeeded, and the OpenMetrics exposition ends with # EOF
grep -q 'clusterfit_scrape_collector_success{[^}]*} 0' "$tmp/raw.prom" && { echo "a collector failed" >&2; ok=0; }
[[ $(tail -n 1 "$tmp/raw.om") == "# EOF" ]] || { echo "OpenMetrics scrape does not end with # EOF" >&2; ok=0; }
if command -v promtool >/dev/null 2>&1; then
    promtool check metrics <"$tmp/raw.prom" || { echo "promtool check metrics failed" >&2; ok=0; }
    # dcgm-exporter's own names break the lint's conventions (counters without _total, units not
    # in the name): only parse errors count there
    promtool check metrics <"$tmp/raw.dcgm" 2>&1 | grep 'parsing error' && { echo "promtool cannot parse the --compat dcgm scrape" >&2; ok=0; }
else
    echo "exporter_golden.sh: promtool not installed (scripts/deps.sh installs it): lint skipped"
fi
((ok)) && echo "exporter_golden.sh: ok" && exit 0
exit 1
