#!/usr/bin/env bash
# bench_mpirun.sh BINARY SRCDIR - `bench pairs` launched the ways users launch jobs:
# by hand with srun-style (SLURM_PROCID/SLURM_NTASKS/SLURM_JOB_NODELIST), torchrun-style
# (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT) and MPICH-style (PMI_RANK/PMI_SIZE) environments,
# then under a real Open MPI
# `mpirun -np 4` (rank and size from OMPI_COMM_WORLD_*).  Every run must see all its ranks.
# Exit 77 (skipped) after the environment runs when mpirun is not installed.
set -uo pipefail
bin=$1
source "$(dirname "$0")/bench_lib.bash"
fail() { echo "FAIL: $*"; for f in "$tmp"/*; do [[ -f $f ]] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
# the measurement on a busy CI machine is noisy: a threshold of 1% keeps exit 3 away
args=(bench pairs -s 64K -n 3 --lat-iters 20 --slow-threshold 1 --timeout 20s --json)

# $1 = label, $2 = expected ranks: rank 0's JSON names every rank as a host
check_json() {
    local out=$tmp/$1.out r
    grep -q '"benchmark": "pairs"' "$out" || fail "$1: no JSON from rank 0"
    for ((r = 0; r < $2; r++)); do
        grep -q ":rank$r\"" "$out" || fail "$1: rank $r missing from the hosts"
    done
    grep -q ":rank$2\"" "$out" && fail "$1: more than $2 ranks"
    return 0
}

# each rank's exit status, waited for by its pid: `wait -n` misses a job that ended before it was
# called on some bash versions and then reports 127 (no child)
# (into $st: a command substitution's subshell could not wait for this shell's children)
statuses() {
    local pid
    st=""
    for pid in "$@"; do
        wait "$pid"
        st+="$? "
    done
}

# srun-style: rank 0 is on the first node of the list (localhost here)
p=$(port)
pids=()
for r in 2 1 0; do
    SLURM_PROCID=$r SLURM_NTASKS=3 SLURM_JOB_NODELIST=localhost MASTER_PORT=$p \
        "$bin" "${args[@]}" >"$tmp/srun$r.out" 2>"$tmp/srun$r.err" &
    pids+=($!)
done
statuses "${pids[@]}"
[[ $st == "0 0 0 " ]] || fail "srun-style: exit $st"
mv "$tmp/srun0.out" "$tmp/srun.out"
check_json srun 3
[[ -s $tmp/srun1.out || -s $tmp/srun2.out ]] && fail "srun-style: ranks other than 0 printed results"

# torchrun-style over tcp
p=$(port)
pids=()
for r in 0 1 2; do
    RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p \
        "$bin" "${args[@]}" --transport tcp >"$tmp/torch$r.out" 2>"$tmp/torch$r.err" &
    pids+=($!)
done
statuses "${pids[@]}"
[[ $st == "0 0 0 " ]] || fail "torchrun-style: exit $st"
mv "$tmp/torch0.out" "$tmp/torch.out"
check_json torch 3

# MPICH/Hydra-style (PMI_RANK/PMI_SIZE), 2 ranks
p=$(port)
PMI_RANK=1 PMI_SIZE=2 MASTER_PORT=$p "$bin" "${args[@]}" >/dev/null 2>"$tmp/pmi1.err" &
pid1=$!
PMI_RANK=0 PMI_SIZE=2 MASTER_PORT=$p "$bin" "${args[@]}" >"$tmp/pmi.out" 2>"$tmp/pmi0.err"
s0=$?
wait "$pid1"; s1=$?
((s0 == 0 && s1 == 0)) || fail "PMI-style: exit $s0 $s1"
check_json pmi 2

if ! command -v mpirun >/dev/null 2>&1; then
    echo "skipped: mpirun not installed (scripts/deps.sh installs openmpi-bin)"
    exit 77
fi
# Open MPI in a container: no cross-memory-attach, no rsh agent needed for one host
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_plm_rsh_agent=false
export OMPI_MCA_rmaps_base_oversubscribe=1
for transport in auto tcp; do
    p=$(port)
    timeout 60 mpirun --allow-run-as-root --oversubscribe -np 4 \
        "$bin" "${args[@]}" --transport "$transport" --rendezvous "127.0.0.1:$p" \
        >"$tmp/mpi-$transport.out" 2>"$tmp/mpi-$transport.err"
    s=$?
    ((s == 0)) || fail "mpirun -np 4 --transport $transport: exit $s"
    check_json "mpi-$transport" 4
done
echo "ok"
