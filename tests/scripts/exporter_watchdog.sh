#!/usr/bin/env bash
# exporter_watchdog.sh BINARY SRCDIR - the idle-GPU watchdog with the fake NVML: a dry run logs
# what it would do and does nothing; --watchdog.enforce runs the action and signals the processes
# NVML lists on the idle GPUs (a sleep started by this test); a busy GPU keeps it quiet; without
# --watchdog.action or --watchdog.signal it refuses to start.
set -uo pipefail
BIN=$1 src=$2
. "$src/tests/scripts/exporter_lib.bash"
[[ -n ${CFIT_FAKENVML:-} && -f $CFIT_FAKENVML ]] || fail "CFIT_FAKENVML does not name the fake NVML library"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-wd.XXXXXX") || fail mktemp
PIDS=()
trap 'for p in "${PIDS[@]}"; do stop "$p"; done; rm -rf "$tmp"' EXIT
# The watchdog signals only processes holding the GPU's device open: the victim holds a stand-in
# for /dev/nvidia0 (CFIT_WATCHDOG_DEVICE_PREFIX, a test-only setting) in its own process group.
: >"$tmp/nvidia0"
export CFIT_WATCHDOG_DEVICE_PREFIX=$tmp/nvidia
set -m
sleep 60 3<"$tmp/nvidia0" &
victim=$!
set +m
sleep 60 &
bystander=$!
PIDS+=("$victim" "$bystander")
printf 'driver 550.54.15\ngpu uuid=GPU-a util=10 memutil=0 pids=%s,%s,0,1,4294967295\ngpu uuid=GPU-b util=30 memutil=0\n' "$victim" "$bystander" >"$tmp/idle.txt"
printf 'driver 550.54.15\ngpu uuid=GPU-a util=10 memutil=0\ngpu uuid=GPU-b util=95 memutil=0\n' >"$tmp/busy.txt"
common=(--web.listen-address 127.0.0.1:0 --nvml-library "$CFIT_FAKENVML" --no-collector.netdev
    --no-collector.disk --no-collector.infiniband --watchdog.idle-below 0.8 --watchdog.for 1s --watchdog.interval 0.2s)

# refuses to run without an action
"$BIN" exporter --watchdog.idle-below 0.5 2>"$tmp/err" && fail "started without an action"
grep -q 'needs --watchdog.action CMD or --watchdog.signal SIG' "$tmp/err" || fail "unclear error: $(cat "$tmp/err")"

# dry run: logs, does not act
FAKENVML_FIXTURE=$tmp/idle.txt start_exporter "$tmp/dry.log" "${common[@]}" --watchdog.action "touch $tmp/acted" --watchdog.signal TERM
PIDS+=("$EXPORTER_PID")
wait_for grep -q 'dry run: would run: touch' "$tmp/dry.log" || fail "no dry-run decision logged: $(cat "$tmp/dry.log")"
grep -q "dry run: would send signal 15 to pid $victim on gpu 0" "$tmp/dry.log" || fail "no dry-run signal logged"
grep -q 'watchdog: idle (highest GPU utilisation 0.30)' "$tmp/dry.log" || fail "idle decisions not logged"
[[ ! -e $tmp/acted ]] || fail "the dry run acted"
kill -0 "$victim" || fail "the dry run killed the process"
stop "$EXPORTER_PID"

# busy: one GPU at 95% keeps it from acting
FAKENVML_FIXTURE=$tmp/busy.txt start_exporter "$tmp/busy.log" "${common[@]}" --watchdog.action "touch $tmp/acted" --watchdog.enforce
PIDS+=("$EXPORTER_PID")
wait_for grep -q 'watchdog: busy (highest GPU utilisation 0.95)' "$tmp/busy.log" || fail "busy not logged: $(cat "$tmp/busy.log")"
sleep 1.5
[[ ! -e $tmp/acted ]] || fail "acted although a GPU was busy"
stop "$EXPORTER_PID"

# enforce: runs the action and signals the GPU's process
FAKENVML_FIXTURE=$tmp/idle.txt start_exporter "$tmp/enf.log" "${common[@]}" --watchdog.action "touch $tmp/acted" \
    --watchdog.signal TERM --watchdog.enforce
PIDS+=("$EXPORTER_PID")
wait_for grep -q "skipping pid 4294967295 on gpu 0: not a process id" "$tmp/enf.log" || fail "pid 4294967295 not skipped"
grep -q "skipping pid 0 on gpu 0: not a process id" "$tmp/enf.log" || fail "pid 0 not skipped"
wait_for test -e "$tmp/acted" || fail "the action did not run: $(cat "$tmp/enf.log")"
wait_for grep -q 'action exited with status 0' "$tmp/enf.log" || fail "action status not logged"
gone() { ! kill -0 "$victim" 2>/dev/null; }
wait_for gone || fail "the GPU's process was not signalled"
grep -q "watchdog: send signal 15 to pid $victim on gpu 0" "$tmp/enf.log" || fail "signal not logged"
kill -0 "$EXPORTER_PID" && kill -0 "$bystander" || fail "the exporter or a process of the test's group was signalled"
echo "exporter_watchdog.sh: ok"
