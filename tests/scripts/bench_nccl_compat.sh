#!/usr/bin/env bash
# bench_nccl_compat.sh BINARY SRCDIR - nccl-tests' command-line habits and header (issue 17 part 4).
#
# - attached values (-b1K -e4K -f2) read as -b 1K -e 4K -f 2 (same rows);
# - -g N alone forks N ranks, --np P -g N gives P x N, -t multiplies -g, and under a launcher's
#   environment -g 8 is refused (exit 2) saying to launch 8 processes per host;
# - the text output carries nccl-tests' "# nccl-tests version", "# Collective test starting:
#   NAME_perf" and "# Collective test concluded: NAME_perf" lines, and clusterfit's own
#   nccl-tests log reader (plan --calibration) reads it: it gets past the table to the hosts
#   check ("measured within one host") for every collective.
set -uo pipefail
bin=$1
. "$(dirname "$0")/bench_lib.bash"

run() { timeout 120 "$bin" bench "$@" -n 1 -w 0 --timeout 30s; }
ranks() { grep -c '^#  Rank ' "$1"; }

run allreduce --np 2 -b1K -e4K -f2 >"$tmp/attached.out" 2>"$tmp/attached.err" || fail "attached values: exit $?"
run allreduce --np 2 -b 1K -e 4K -f 2 >"$tmp/spaced.out" 2>"$tmp/spaced.err" || fail "spaced values: exit $?"
rows() { grep -E '^ +[0-9]+ ' "$1" | awk '{print $1, $2}'; }
[[ "$(rows "$tmp/attached.out")" == "$(rows "$tmp/spaced.out")" ]] || fail "-b1K -e4K -f2 differs from -b 1K -e 4K -f 2"
(($(rows "$tmp/attached.out" | wc -l) == 3)) || fail "-b1K -e4K -f2: not 3 sizes"

run allreduce -g 2 -b 1K -e 1K >"$tmp/g2.out" 2>"$tmp/g2.err" || fail "-g 2: exit $?"
(($(ranks "$tmp/g2.out") == 2)) || fail "-g 2: $(ranks "$tmp/g2.out") ranks"
grep -q '^# nThread 1 nGpus 2 ' "$tmp/g2.out" || fail "-g 2: no 'nThread 1 nGpus 2' line"
run allgather --np 2 -g2 -b 1K -e 1K >"$tmp/np2g2.out" 2>"$tmp/np2g2.err" || fail "--np 2 -g 2: exit $?"
(($(ranks "$tmp/np2g2.out") == 4)) || fail "--np 2 -g 2: $(ranks "$tmp/np2g2.out") ranks, want 4"
run reducescatter -t 2 -g 2 -b 1K -e 1K >"$tmp/t2.out" 2>"$tmp/t2.err" || fail "-t 2 -g 2: exit $?"
(($(ranks "$tmp/t2.out") == 4)) || fail "-t 2 -g 2: $(ranks "$tmp/t2.out") ranks, want 4"
OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 "$bin" bench allreduce -g 8 >/dev/null 2>"$tmp/mpi.txt"
rc=$?
((rc == 2)) || fail "-g 8 under mpirun's environment: exit $rc, want 2"
grep -q 'launch 8 processes per host' "$tmp/mpi.txt" || fail "-g 8 under mpirun: $(cat "$tmp/mpi.txt")"
"$bin" bench allreduce -x >/dev/null 2>"$tmp/x.txt"
grep -q "unknown option '-x' (see --help)" "$tmp/x.txt" || fail "-x: $(cat "$tmp/x.txt")"

for coll in allreduce allgather reducescatter alltoall sendrecv; do
    nccl=$(case $coll in allreduce) echo all_reduce ;; allgather) echo all_gather ;;
           reducescatter) echo reduce_scatter ;; *) echo "$coll" ;; esac)
    log=$tmp/$coll.log
    run "$coll" --np 2 -b 64K -e 1M -f 4 >"$log" 2>"$tmp/$coll.err" || fail "$coll: exit $?"
    head -1 "$log" | grep -q '^# nccl-tests version [0-9.]* nccl-headers=0 nccl-library=0$' || fail "$coll: no version line"
    grep -qx "# Collective test starting: ${nccl}_perf" "$log" || fail "$coll: no 'Collective test starting: ${nccl}_perf'"
    grep -qx "# Collective test concluded: ${nccl}_perf" "$log" || fail "$coll: no 'Collective test concluded: ${nccl}_perf'"
    "$bin" plan --model llama3-8b --gpu h100-sxm --gpus 64 -q --calibration "$log" >/dev/null 2>"$tmp/$coll.cal"
    grep -q "measured within one host" "$tmp/$coll.cal" || fail "$coll: the log reader did not read the output: $(cat "$tmp/$coll.cal")"
done
echo "bench_nccl_compat.sh: ok"
