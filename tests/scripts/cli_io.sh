#!/usr/bin/env bash
# cli_io.sh BINARY SRCDIR - checked output, "-" as stdin/stdout, UTF-8 and catalog size (issue 17 part 5).
#
# - Output that cannot be written is an error: every command below with stdout on /dev/full (or
#   closed) exits 1 with "clusterfit: error: cannot write standard output"; an --emit or --report
#   file on /dev/full exits 1 naming the option.
# - "-" is standard input for check, --catalog, --from-plan, --calibration, bench storage --plan,
#   and standard output for --emit KIND:- (the file's text alone, no "#" header).
# - Invalid UTF-8 in a catalog file or an argument file is refused at FILE:LINE:COL (exit 2);
#   a name from the command line that is not UTF-8 leaves --json output valid UTF-8 JSON.
# - The catalog loader is linear (60,000 models against 6,000, in the same run).
set -euo pipefail

fail() { echo "cli_io.sh: $*" >&2; exit 1; }
(($# == 2)) || fail "usage: cli_io.sh BINARY SRCDIR"
bin=$1 src=$2
[[ -x $bin ]] || fail "binary not executable: $bin"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-io.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
plan8="plan --model llama3-8b --gpu h100-sxm --gpus 16"

# 1. a failed write of stdout: exit 1 and the error, for small and large outputs
full_cases=(
    "rules"
    "$plan8 --json"
    "$plan8"
    "catalog list"
    "sim --gpu h100-sxm --nodes 2 -b 8 -e 1G"
    "--version"
    "--help"
)
for c in "${full_cases[@]}"; do
    set +e
    # shellcheck disable=SC2086
    "$bin" $c >/dev/full 2>"$tmp/err"
    rc=$?
    set -e
    ((rc == 1)) || fail "'$c' > /dev/full: exit $rc, want 1"
    grep -q '^clusterfit: error: cannot write standard output' "$tmp/err" || fail "'$c' > /dev/full: $(cat "$tmp/err")"
done
set +e
"$bin" catalog list >&- 2>"$tmp/err"; rc=$?
set -e
((rc == 1)) || fail "catalog list with stdout closed: exit $rc, want 1"
# shellcheck disable=SC2086
if "$bin" $plan8 -q --emit megatron:/dev/full 2>"$tmp/err" >/dev/null; then fail "--emit to /dev/full: exit 0"; fi
grep -q "^clusterfit: error: --emit: cannot write '/dev/full': No space left on device" "$tmp/err" || fail "--emit: $(cat "$tmp/err")"
# shellcheck disable=SC2086
if "$bin" $plan8 -q --report /dev/full 2>"$tmp/err" >/dev/null; then fail "--report to /dev/full: exit 0"; fi
grep -q "^clusterfit: error: --report: cannot write '/dev/full'" "$tmp/err" || fail "--report: $(cat "$tmp/err")"

# 2. "-": --emit KIND:- writes the bare file to stdout; check - reads it back
# shellcheck disable=SC2086
"$bin" $plan8 -q --emit deepspeed:- >"$tmp/ds.json" || fail "--emit deepspeed:- failed"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/ds.json" || fail "--emit deepspeed:- is not bare JSON"
# shellcheck disable=SC2086
"$bin" $plan8 -q --emit deepspeed:"$tmp/ds2.json" >/dev/null
cmp -s "$tmp/ds.json" "$tmp/ds2.json" || fail "--emit deepspeed:- differs from the file"
out=$("$bin" check - --gpus 16 <"$tmp/ds.json") || fail "check - failed: $out"
grep -q '^check: 0 errors.* in <stdin>$' <<<"$out" || fail "check -: $out"
# shellcheck disable=SC2086
"$bin" $plan8 -q --emit megatron:- | "$bin" check - --gpus 16 >"$tmp/out" || fail "megatron args through a pipe: $(cat "$tmp/out")"
# shellcheck disable=SC2086
if "$bin" $plan8 --json --emit deepspeed:- >/dev/null 2>"$tmp/err"; then fail "--json --emit deepspeed:- accepted"; fi
printf '{"models": [{"name": "stdin-7b", "layers": 32, "hidden_size": 4096, "ffn_hidden_size": 11008, "num_heads": 32, "num_kv_heads": 32, "vocab_size": 32000, "seq_len": 4096, "mlp": "swiglu", "tied_embeddings": false, "source": "test"}]}' >"$tmp/cat.json"
"$bin" catalog show stdin-7b --catalog - <"$tmp/cat.json" | grep -q stdin-7b || fail "--catalog - not read"
# shellcheck disable=SC2086
"$bin" $plan8 --json >"$tmp/plan.json"
"$bin" rules --from-plan - <"$tmp/plan.json" >"$tmp/rules.txt" || fail "rules --from-plan - failed"
"$bin" rules --from-plan "$tmp/plan.json" | cmp -s - "$tmp/rules.txt" || fail "rules --from-plan - differs from the file"
log=$src/tests/fixtures/nccl/all_reduce_perf-2x8.log
a=$("$bin" sim --gpu h100-sxm --nodes 2 -b 8 -e 512M -f 4 --calibration - <"$log") || fail "sim --calibration - failed"
b=$("$bin" sim --gpu h100-sxm --nodes 2 -b 8 -e 512M -f 4 --calibration "$log")
[[ ${a//<stdin>/$log} == "$b" ]] || fail "sim --calibration - differs from the file (but for its name)"

# 3. UTF-8
printf '{"models": [{"name": "bad\xff", "layers": 2}]}' >"$tmp/bad.json"
set +e
"$bin" catalog list models --catalog "$tmp/bad.json" >/dev/null 2>"$tmp/err"; rc=$?
set -e
((rc == 2)) || fail "invalid UTF-8 in a catalog: exit $rc"
grep -q "^clusterfit: error: $tmp/bad.json:1:26: invalid UTF-8 byte 0xff in string" "$tmp/err" || fail "utf-8: $(cat "$tmp/err")"
printf -- '--num-layers 2 # caf\xe9\n' >"$tmp/args.txt"
set +e
"$bin" check "$tmp/args.txt" >/dev/null 2>"$tmp/err"; rc=$?
set -e
((rc == 2)) || fail "invalid UTF-8 in Megatron args: exit $rc"
grep -q "^clusterfit: error: $tmp/args.txt:1:21: invalid UTF-8 byte 0xe9" "$tmp/err" || fail "utf-8 args: $(cat "$tmp/err")"
"$bin" check - --model $'llama\xff' --gpus 16 --json <"$tmp/ds.json" >"$tmp/out.json" 2>/dev/null || true
"$bin" sim --gpu $'h100\xfe' --json >"$tmp/sim.json" 2>/dev/null || true
for f in "$tmp/out.json" "$tmp/sim.json"; do
    [[ -s $f ]] || continue
    python3 -c 'import json,sys; json.loads(open(sys.argv[1],"rb").read().decode("utf-8"))' "$f" ||
        fail "$f is not valid UTF-8 JSON"
done

# 4. the catalog loader is linear: 60,000 models take well under 30x the time of 6,000 (10x when
#    linear, ~100x with the old quadratic loader). A ratio measured in the same run, not a wall-clock
#    limit, so a slow or sanitised build cannot fail it.
python3 - "$tmp" <<'PY'
import json, sys
m = {"layers": 2, "hidden_size": 64, "ffn_hidden_size": 256, "num_heads": 4, "num_kv_heads": 4,
     "vocab_size": 1000, "seq_len": 512, "mlp": "swiglu", "tied_embeddings": False, "source": "test"}
for n in (6000, 60000):
    json.dump({"models": [dict(m, name="m%05d" % i) for i in range(n)]},
              open("%s/big%d.json" % (sys.argv[1], n), "w"))
PY
list_ms() { # N -> sets n and ms
    local start
    start=$(date +%s%N)
    n=$("$bin" catalog list models --catalog "$tmp/big$1.json" | grep -c '^m[0-9]')
    ms=$((($(date +%s%N) - start) / 1000000))
    ((n == $1)) || fail "$1-model catalog listed $n models"
}
list_ms 6000
small_ms=$((ms > 0 ? ms : 1))
list_ms 60000
((ms < 30 * small_ms)) || fail "60,000 models took $ms ms, 6,000 took $small_ms ms (want < 30x: linear)"
echo "cli_io.sh: ok (60,000 models in $ms ms, 6,000 in $small_ms ms)"
