#!/usr/bin/env bash
# run_case.sh BINARY CASEDIR - run one golden CLI test (docs/architecture.md "Tests").
#
# CASEDIR holds:
#   args             shell words on one line (quoting works; $(...) and $VAR are expanded too).
#                    Tokens: @SRC@ = repository root, @CASE@ = CASEDIR, @TMP@ = a fresh scratch
#                    directory, which is also the working directory (files a test writes land there).
#   stdin            optional; otherwise stdin is /dev/null
#   expected_stdout  optional; compared when present
#   expected_stderr  optional; compared when present
#   expected_status  optional exit status, default 0
#   filter           optional sed script applied to stdout and stderr before comparison
#                    (to mask timings such as "search took 0.12 s")
# Before comparison the absolute paths of CASEDIR, the scratch directory and the repository root
# in the output are written back as @CASE@, @TMP@ and @SRC@, so golden files are portable.
# The binary runs with LC_ALL=C TZ=UTC COLUMNS=100 and stdout/stderr redirected to files
# (so neither is a terminal). A sanitizer report on stderr fails the case whatever the status.
# UPDATE_GOLDEN=1 writes the actual outputs into expected_stdout, expected_stderr and
# expected_status instead of comparing, and passes.
# Exit status: 0 on match, 1 otherwise.
set -uo pipefail

fail() { echo "run_case.sh: $*" >&2; exit 1; }

(($# == 2)) || fail "usage: run_case.sh BINARY CASEDIR"
bin=$1
[[ -x $bin ]] || fail "binary not executable: $bin"
[[ -d $2 ]] || fail "no such case directory: $2"
case_dir=$(cd "$2" && pwd -P)
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
[[ $bin == /* ]] || bin=$(cd "$(dirname "$bin")" && pwd -P)/$(basename "$bin")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-cli.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
work=$tmp/work
mkdir "$work"

# Arguments: substitute the tokens, then let the shell split and unquote them.
line=""
[[ -f $case_dir/args ]] && line=$(tr '\n' ' ' <"$case_dir/args")
line=${line//@SRC@/"$src"}
line=${line//@CASE@/"$case_dir"}
line=${line//@TMP@/"$work"}
eval "set -- $line" || fail "$case_dir/args: cannot parse: $line"

stdin=/dev/null
[[ -f $case_dir/stdin ]] && stdin=$case_dir/stdin

(cd "$work" && exec env LC_ALL=C TZ=UTC COLUMNS=100 "$bin" "$@") \
    <"$stdin" >"$tmp/stdout.raw" 2>"$tmp/stderr.raw"
status=$?

# Paths back to tokens (longest and most specific first), then the case's own filter.
sed_escape() { printf '%s' "$1" | sed -e 's/[]\/$*.^[]/\\&/g'; }
normalize() {
    sed -e "s/$(sed_escape "$case_dir")/@CASE@/g" \
        -e "s/$(sed_escape "$work")/@TMP@/g" \
        -e "s/$(sed_escape "$src")/@SRC@/g" "$1" >"$2.tok" || return 1
    if [[ -f $case_dir/filter ]]; then
        sed -f "$case_dir/filter" "$2.tok" >"$2" || return 1
    else
        mv "$2.tok" "$2"
    fi
}
normalize "$tmp/stdout.raw" "$tmp/stdout" || fail "$case_dir: normalizing stdout failed (bad filter?)"
normalize "$tmp/stderr.raw" "$tmp/stderr" || fail "$case_dir: normalizing stderr failed (bad filter?)"

if [[ ${UPDATE_GOLDEN:-0} == 1 ]]; then
    cp "$tmp/stdout" "$case_dir/expected_stdout"
    cp "$tmp/stderr" "$case_dir/expected_stderr"
    echo "$status" >"$case_dir/expected_status"
    echo "run_case.sh: updated golden files in $case_dir (status $status)"
    exit 0
fi

ok=1
expected_status=0
if [[ -f $case_dir/expected_status ]]; then
    expected_status=$(tr -d ' \t\r\n' <"$case_dir/expected_status")
fi
if [[ $status != "$expected_status" ]]; then
    echo "exit status: expected $expected_status, got $status"
    ok=0
fi
for stream in stdout stderr; do
    if [[ -f $case_dir/expected_$stream ]] &&
        ! diff -u --label "expected_$stream" --label "actual $stream" \
            "$case_dir/expected_$stream" "$tmp/$stream"; then
        ok=0
    fi
done
if grep -qE '^==[0-9]+==ERROR: |runtime error: ' "$tmp/stderr.raw"; then
    echo "sanitizer report on stderr:"
    cat "$tmp/stderr.raw"
    ok=0
fi

if ((ok)); then
    exit 0
fi
echo "FAILED: $case_dir"
printf 'command:'; printf ' %q' "$bin" "$@"; echo
echo "(UPDATE_GOLDEN=1 rewrites the expected files if the new output is right)"
exit 1
