#!/usr/bin/env bash
# emit_check.sh BINARY SRCDIR - a DeepSpeed config written by `plan --emit` passes `check` clean.
#
# For several plans (data parallel only, tensor parallel, pipeline with ZeRO-1, context
# parallel, fp8) it writes the DeepSpeed config to a file and to stdout in one run, takes the
# "# check it: clusterfit check FILE ..." line the stdout header gives, runs that check on
# the file and requires exit 0 and "0 errors".  The Megatron and torchrun outputs must be
# non-empty and name the plan's sizes, and the Megatron arguments must check clean too.
set -euo pipefail

fail() { echo "emit_check.sh: $*" >&2; exit 1; }
(($# == 2)) || fail "usage: emit_check.sh BINARY SRCDIR"
bin=$1
[[ -x $bin ]] || fail "binary not executable: $bin"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-emit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

plans=(
    "--model llama3-8b --gpu h100-sxm --gpus 16"
    "--model llama3-70b --gpu h100-sxm --gpus 64"
    "--model llama3-70b --gpu h100-sxm --gpus 64 --pp 4 --zero 1 --recompute full"
    "--model llama3-8b --gpu h100-sxm --gpus 16 --cp 2 --tp 1 --pp 1"
    "--model llama3-70b --gpu h200-sxm --gpus 128 --precision fp8"
    # 126 layers over 8 interleaved stages: uneven end stages of whole virtual stages
    "--model llama3-405b --gpu h100-sxm --gpus 1024 --tp 8 --pp 8 --schedule interleaved"
)
n=0
for p in "${plans[@]}"; do
    n=$((n + 1))
    ds=$tmp/ds$n.json mg=$tmp/mg$n.txt
    # shellcheck disable=SC2086
    out=$("$bin" plan $p -q --emit "deepspeed:$ds,megatron:$mg" --emit deepspeed) || fail "plan $p failed"
    [[ -s $ds && -s $mg ]] || fail "plan $p: no files written"
    cmd=$(sed -n 's/^# check it: clusterfit check FILE //p' <<<"$out")
    [[ -n $cmd ]] || fail "plan $p: no '# check it:' line in the stdout header"
    # shellcheck disable=SC2086
    res=$("$bin" check "$ds" $cmd) || fail "plan $p: check $cmd failed: $res"
    grep -q '^check: 0 errors' <<<"$res" || fail "plan $p: check not clean: $res"
    res=$("$bin" check "$mg" $cmd) || fail "plan $p: check of the megatron args failed: $res"
    grep -q '^check: 0 errors, 0 warnings' <<<"$res" || fail "plan $p: megatron args not clean: $res"
    tp=$(sed -n 's/.* tp \([0-9]*\) pp.*/\1/p' <<<"$out" | head -n 1)
    grep -qx -- "--tensor-model-parallel-size $tp" "$mg" || fail "plan $p: megatron args lack TP $tp"
done
echo "emit_check.sh: $n emitted DeepSpeed configs pass check"
