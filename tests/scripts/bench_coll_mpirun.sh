#!/usr/bin/env bash
# bench_coll_mpirun.sh BINARY SRCDIR - `bench allreduce` (and an all-gather over tcp) launched by a
# real Open MPI `mpirun`: rank and size come from OMPI_COMM_WORLD_*, rank 0 prints the nccl-tests
# table or JSON for all ranks, and every element is right.  Exit 77 (skipped) without mpirun.
set -uo pipefail
bin=$1
command -v mpirun >/dev/null 2>&1 || { echo "skipped: mpirun not installed (scripts/deps.sh installs openmpi-bin)"; exit 77; }
source "$(dirname "$0")/bench_lib.bash"
fail() { echo "FAIL: $*"; for f in "$tmp"/*; do [[ -f $f ]] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_plm_rsh_agent=false

# The table, as the issue writes the command.
timeout 60 mpirun --allow-run-as-root --oversubscribe -np 4 \
    "$bin" bench allreduce -b 1K -e 1M -f 8 -n 2 -w 1 --rendezvous "127.0.0.1:$(port)" \
    >"$tmp/table.out" 2>"$tmp/table.err" || fail "mpirun -np 4 bench allreduce: exit $?"
grep -q "^# clusterfit bench allreduce .*: 4 ranks on 1 host, transport shm" "$tmp/table.out" || fail "header"
[[ $(grep -c "^#  Rank  [0-3] Group  0 Pid" "$tmp/table.out") == 4 ]] || fail "not 4 rank lines"
[[ $(grep -cE "^ +[0-9]+ +[0-9]+ +float +sum +-1 " "$tmp/table.out") == 4 ]] || fail "not 4 rows (1K..1M x8)"
grep -q "^# Out of bounds values : 0 OK" "$tmp/table.out" || fail "wrong elements"

# Every dtype and op, JSON, all-gather over tcp with 3 ranks.
timeout 60 mpirun --allow-run-as-root --oversubscribe -np 3 \
    "$bin" bench allreduce -b 4K -e 4K -n 1 -w 0 -d all -o all --json --rendezvous "127.0.0.1:$(port)" \
    >"$tmp/all.json" 2>"$tmp/all.err" || fail "mpirun -np 3 bench allreduce -d all -o all: exit $?"
timeout 60 mpirun --allow-run-as-root --oversubscribe -np 3 \
    "$bin" bench allgather --transport tcp -b 64K -e 64K -n 1 -w 0 --json --rendezvous "127.0.0.1:$(port)" \
    >"$tmp/ag.json" 2>"$tmp/ag.err" || fail "mpirun -np 3 bench allgather --transport tcp: exit $?"
python3 - "$tmp/all.json" "$tmp/ag.json" <<'PY' || fail "JSON"
import json, sys
a, g = (json.load(open(f)) for f in sys.argv[1:])
assert a["ranks"] == 3 and a["transport"] == "shm" and len(a["results"]) == 5 * 5 * 2, a
assert a["wrong_total"] == 0 and all(r["wrong"] == 0 for r in a["results"])
assert g["ranks"] == 3 and g["transport"] == "tcp" and g["wrong_total"] == 0, g
PY
echo "bench_coll_mpirun.sh: mpirun -np 4 and -np 3 runs agree bit for bit"
