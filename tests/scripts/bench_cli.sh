#!/usr/bin/env bash
# bench_cli.sh BINARY SRCDIR - every bench/*.py script's command line (bench/benchcli.py):
# --help prints the usage and exits 0; a binary that is not there, an option without its value,
# an unknown option or a non-numeric count ends with exit 2 and one line naming the script and
# the problem - never a Python traceback.
set -euo pipefail
(($# == 2)) || { echo "usage: bench_cli.sh BINARY SRCDIR" >&2; exit 1; }
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect RC SCRIPT ARGS... - the script exits with RC; on 2, stderr is one line "<name>: ..."
expect() {
    local want=$1 script=$2 rc=0
    shift 2
    python3 "$src/bench/$script" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
    local what="bench/$script $*"
    if ((rc != want)); then
        echo "FAIL: $what: exit $rc, want $want"; sed 's/^/  /' "$tmp/err" | head -5; fails=$((fails + 1)); return
    fi
    if grep -q Traceback "$tmp/err"; then
        echo "FAIL: $what: Python traceback"; fails=$((fails + 1)); return
    fi
    if ((want == 0)) && ! grep -qi 'usage' "$tmp/out"; then
        echo "FAIL: $what: --help printed no usage"; fails=$((fails + 1)); return
    fi
    if ((want == 2)); then
        local name=${script%.py}
        if [[ $(wc -l <"$tmp/err") -ne 1 ]] || ! grep -q "^${name}[.a-z]*: " "$tmp/err"; then
            echo "FAIL: $what: stderr is not one '${name}: ...' line:"; sed 's/^/  /' "$tmp/err" | head -5
            fails=$((fails + 1))
        fi
    fi
}

for s in fidelity.py moe_fidelity.py sim_fidelity.py goodput_fidelity.py exporter_bench.py exporter_slowloris.py; do
    expect 0 "$s" --help
    expect 0 "$s" -h
    expect 2 "$s" "$tmp/no-such-clusterfit"
    expect 2 "$s" "$bin" --no-such-option
done
for s in fidelity.py moe_fidelity.py sim_fidelity.py goodput_fidelity.py; do
    expect 2 "$s" "$bin" --csv
    expect 2 "$s" "$bin" --csv "$tmp/no-such.csv"
    expect 2 "$s" "$bin" "$bin"
done
expect 2 fidelity.py "$bin" --emit-table
expect 2 exporter_bench.py "$bin" --scrapes many
expect 2 exporter_bench.py "$bin" --clients 0
expect 2 exporter_slowloris.py "$bin" --hold
expect 2 exporter_slowloris.py "$bin" --hold soon

((fails == 0)) || { echo "bench_cli.sh: $fails failures"; exit 1; }
echo "bench_cli.sh: ok"
