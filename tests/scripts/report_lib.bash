# report_lib.bash - shared by report_html.sh and report_render.sh: writes every kind of
# `--report FILE.html` into a directory.  Sourced; defines make_reports BINARY DIR (prints the
# names it wrote, one a line; fails the calling test on a non-zero exit).

make_reports() {
    local bin=$1 dir=$2
    "$bin" plan -q --report "$dir/plan-sizing.html" >"$dir/plan-sizing.out" 2>&1 ||
        { echo "plan --report (sizing) failed: $(cat "$dir/plan-sizing.out")" >&2; return 1; }
    echo plan-sizing
    "$bin" plan --model llama3-8b --gpu h100-sxm --gpus 64 -q --report "$dir/plan-fixed.html" \
        >"$dir/plan-fixed.out" 2>&1 ||
        { echo "plan --report (fixed) failed: $(cat "$dir/plan-fixed.out")" >&2; return 1; }
    echo plan-fixed
    if "$bin" sim --help 2>/dev/null | grep -q -- --report; then
        "$bin" sim --topology fattree:k=8,oversub=2 -b 64K -e 64M -f 4 --report "$dir/sim-fattree.html" \
            >"$dir/sim-fattree.out" 2>&1 ||
            { echo "sim --report failed: $(cat "$dir/sim-fattree.out")" >&2; return 1; }
        echo sim-fattree
        "$bin" sim --topology dragonfly:p=4,a=8,h=4 -b 1M -e 16M -f 4 --report "$dir/sim-dragonfly.html" \
            >"$dir/sim-dragonfly.out" 2>&1 ||
            { echo "sim --report (dragonfly) failed: $(cat "$dir/sim-dragonfly.out")" >&2; return 1; }
        echo sim-dragonfly
        "$bin" sim --gpu h100-sxm --nodes 4 -b 8 -e 1G -f 4 --report "$dir/sim-nccl.html" \
            >"$dir/sim-nccl.out" 2>&1 ||
            { echo "sim --gpu --report failed: $(cat "$dir/sim-nccl.out")" >&2; return 1; }
        echo sim-nccl
        "$bin" sim --gpu h100-sxm --nodes 2 -b 8 -e 512M -f 4 \
            --calibration "$(dirname "${BASH_SOURCE[0]}")/../fixtures/nccl/all_reduce_perf-2x8.log" \
            --report "$dir/sim-nccl-calibrated.html" >"$dir/sim-nccl-calibrated.out" 2>&1 ||
            { echo "sim --calibration --report failed: $(cat "$dir/sim-nccl-calibrated.out")" >&2; return 1; }
        echo sim-nccl-calibrated
    fi
    if "$bin" bench allreduce --help 2>/dev/null | grep -q -- --report; then
        "$bin" bench allreduce --np 2 -b 1K -e 4M -f 4 -n 5 -w 1 --report "$dir/bench-allreduce.html" \
            >"$dir/bench-allreduce.out" 2>&1 ||
            { echo "bench allreduce --report failed: $(cat "$dir/bench-allreduce.out")" >&2; return 1; }
        echo bench-allreduce
        local rc=0   # 3 = slow links found (a busy machine): the report is still written
        "$bin" bench pairs --np 3 -n 3 --lat-iters 10 --report "$dir/bench-pairs.html" >"$dir/bench-pairs.out" 2>&1 ||
            rc=$?
        ((rc == 0 || rc == 3)) || { echo "bench pairs --report failed: $(cat "$dir/bench-pairs.out")" >&2; return 1; }
        echo bench-pairs
    fi
    if "$bin" bench storage --help 2>/dev/null | grep -q -- --report; then
        mkdir -p "$dir/storage"
        "$bin" bench storage --path "$dir/storage" --size 16M --need 0.001 --report "$dir/bench-storage.html" \
            >"$dir/bench-storage.out" 2>&1 ||
            { echo "bench storage --report failed: $(cat "$dir/bench-storage.out")" >&2; return 1; }
        echo bench-storage
        "$bin" bench memory --size 8M --ntimes 3 --threads 1 --report "$dir/bench-memory.html" \
            >"$dir/bench-memory.out" 2>&1 ||
            { echo "bench memory --report failed: $(cat "$dir/bench-memory.out")" >&2; return 1; }
        echo bench-memory
    fi
}
