# bench_lib.bash - what the bench job scripts share (sourced after `bin=$1`): a temporary
# directory removed on exit, the pids to kill then ($pids), fail, port, wait_for, segments_of.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-bench.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$tmp"/*.err; do [[ -f $f ]] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/port_lib.bash"

# Segments of a --np job whose launcher had this pid (every segment name starts with it).
segments_of() { find /dev/shm -maxdepth 1 -name "clusterfit-$1-*" 2>/dev/null | wc -l; }

# Wait up to $2 seconds for pid $1 to exit; sets $status (124 when it did not).
wait_for() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        if ! kill -0 "$1" 2>/dev/null; then
            wait "$1"
            status=$?
            return
        fi
        sleep 0.1
    done
    status=124
}
