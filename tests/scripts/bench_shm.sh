#!/usr/bin/env bash
# bench_shm.sh BINARY SRCDIR - the --np launcher owns the job's shared memory (issue 17):
# SIGTERM to the launcher during set-up, and SIGKILL of one rank, leave no segment named
# /dev/shm/clusterfit-<launcher pid>-* and no rank behind; a job whose shared memory and
# buffers exceed /dev/shm's free space and MemAvailable is refused before anything starts.
set -uo pipefail
bin=$1
. "$(dirname "$0")/bench_lib.bash"
ranks_of() { ps -o pid= --ppid "$1" | awk '{print $1}' | sort -n; }

# Rank pids still alive among "$@".
alive() { local p n=0; for p in "$@"; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done; echo "$n"; }

# 1. SIGTERM to the launcher a second in (16 ranks are still mapping their segments)
"$bin" bench allreduce --np 16 -b 8 -e 8 -n 100000 --timeout 20s >/dev/null 2>"$tmp/term.err" &
parent=$!
pids+=("$parent")
sleep 1
mapfile -t children < <(ranks_of "$parent")
((${#children[@]} == 16)) || fail "term: expected 16 ranks under pid $parent, found ${#children[@]}"
kill -TERM "$parent"
wait_for "$parent" 15
((status == 143)) || fail "term: exit $status, expected 143 (128 + SIGTERM)"
[[ $(segments_of "$parent") == 0 ]] || fail "term: $(segments_of "$parent") segments of pid $parent left in /dev/shm"
[[ $(alive "${children[@]}") == 0 ]] || fail "term: $(alive "${children[@]}") ranks still alive"
grep -q "clusterfit: error: interrupted by signal 15 (Terminated): stopped 16 ranks and removed the job's shared memory" \
    "$tmp/term.err" || fail "term: no message"

# 2. SIGKILL of one rank (a child of the launcher), during set-up and while it measures
for when in 0.5 2.5; do
    err=$tmp/kill-$when.err
    "$bin" bench allreduce --np 8 -b 8 -e 64K -n 100000 --timeout 5s >/dev/null 2>"$err" &
    parent=$!
    pids+=("$parent")
    sleep "$when"
    mapfile -t children < <(ranks_of "$parent")
    ((${#children[@]} == 8)) || fail "kill $when: expected 8 ranks under pid $parent, found ${#children[@]}"
    kill -9 "${children[3]}"
    wait_for "$parent" 20
    ((status == 1)) || fail "kill $when: exit $status, expected 1"
    grep -q "clusterfit: error: rank 3 (pid ${children[3]}) was killed by signal 9" "$err" ||
        fail "kill $when: the launcher did not name rank 3"
    [[ $(segments_of "$parent") == 0 ]] || fail "kill $when: segments of pid $parent left in /dev/shm"
    [[ $(alive "${children[@]}") == 0 ]] || fail "kill $when: ranks still alive"
done

# 3. more shared memory than /dev/shm has free (--algo shm: 4 windows of 2 x 16 GiB): refused
#    at once, exit 1, naming both numbers, and nothing created
start=$SECONDS
"$bin" bench allreduce --np 4 -b 16G -e 16G --algo shm >/dev/null 2>"$tmp/big.err" &
parent=$!
pids+=("$parent")
wait_for "$parent" 10
((status == 1)) || fail "too big: exit $status, expected 1"
((SECONDS - start <= 3)) || fail "too big: took $((SECONDS - start)) s to refuse"
grep -qE "clusterfit: error: 4 ranks need [0-9.]+ GB of shared memory and [0-9.]+ GB of memory in all, but /dev/shm has [0-9.]+ GB free and the host [0-9.]+ GB available \(MemAvailable\); nothing was started" \
    "$tmp/big.err" || fail "too big: unclear message"
[[ $(segments_of "$parent") == 0 ]] || fail "too big: segments created"
echo "ok"
