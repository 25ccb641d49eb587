# report_lib.bash - shared by report_html.sh and report_render.sh: writes every kind of
# `--report FILE.html` into a directory.  Sourced; defines make_reports BINARY DIR (prints the
# names it wrote, one a line; fails the calling test when any command exits with a status it
# does not allow or writes no report).  Every kind is expected: none is skipped because a
# --help text changed (a command that lost --report fails here, it is not silently dropped).

# report_one DIR NAME OK_CODES COMMAND... - run COMMAND (whose --report writes DIR/NAME.html),
# accept the exit codes in OK_CODES ("0" or "0 3"), require a non-empty report, print NAME.
report_one() {
    local dir=$1 name=$2 ok=$3 rc=0
    shift 3
    "$@" >"$dir/$name.out" 2>&1 || rc=$?
    [[ " $ok " == *" $rc "* ]] || { echo "$name: exit $rc: $(cat "$dir/$name.out")" >&2; return 1; }
    [[ -s $dir/$name.html ]] || { echo "$name: no report written ($dir/$name.html): $(cat "$dir/$name.out")" >&2; return 1; }
    echo "$name"
}

# The report kinds make_reports writes, in order (callers may check they got all of them).
REPORT_KINDS="plan-sizing plan-fixed sim-fattree sim-dragonfly sim-nccl sim-nccl-calibrated bench-allreduce
bench-pairs bench-storage bench-memory"

make_reports() {
    local bin=$1 dir=$2
    local cal
    cal="$(dirname "${BASH_SOURCE[0]}")/../fixtures/nccl/all_reduce_perf-2x8.log"
    mkdir -p "$dir/storage"
    report_one "$dir" plan-sizing 0 "$bin" plan -q --report "$dir/plan-sizing.html" &&
    report_one "$dir" plan-fixed 0 "$bin" plan --model llama3-8b --gpu h100-sxm --gpus 64 -q \
        --report "$dir/plan-fixed.html" &&
    report_one "$dir" sim-fattree 0 "$bin" sim --topology fattree:k=8,oversub=2 -b 64K -e 64M -f 4 \
        --report "$dir/sim-fattree.html" &&
    report_one "$dir" sim-dragonfly 0 "$bin" sim --topology dragonfly:p=4,a=8,h=4 -b 1M -e 16M -f 4 \
        --report "$dir/sim-dragonfly.html" &&
    report_one "$dir" sim-nccl 0 "$bin" sim --gpu h100-sxm --nodes 4 -b 8 -e 1G -f 4 --report "$dir/sim-nccl.html" &&
    report_one "$dir" sim-nccl-calibrated 0 "$bin" sim --gpu h100-sxm --nodes 2 -b 8 -e 512M -f 4 \
        --calibration "$cal" --report "$dir/sim-nccl-calibrated.html" &&
    report_one "$dir" bench-allreduce 0 "$bin" bench allreduce --np 2 -b 1K -e 4M -f 4 -n 5 -w 1 \
        --report "$dir/bench-allreduce.html" &&
    # 3 = slow links found (a busy machine): the report is still written
    report_one "$dir" bench-pairs "0 3" "$bin" bench pairs --np 3 -n 3 --lat-iters 10 \
        --report "$dir/bench-pairs.html" &&
    report_one "$dir" bench-storage 0 "$bin" bench storage --path "$dir/storage" --size 16M --need 0.001 \
        --report "$dir/bench-storage.html" &&
    report_one "$dir" bench-memory 0 "$bin" bench memory --size 8M --ntimes 3 --threads 1 \
        --report "$dir/bench-memory.html"
}
