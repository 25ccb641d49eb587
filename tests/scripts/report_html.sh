#!/usr/bin/env bash
# report_html.sh BINARY SRCDIR - every `--report FILE.html` is well-formed XHTML, self-contained
# (no script, nothing fetched), has titled charts, tables and its sections (report_check.py),
# and an unwritable report path is a runtime error (exit 1) naming the file.
set -euo pipefail
fail() { echo "report_html.sh: $*" >&2; exit 1; }
(($# == 2)) || fail "usage: report_html.sh BINARY SRCDIR"
bin=$1 src=$2
command -v python3 >/dev/null || fail "python3 is needed"
source "$src/tests/scripts/report_lib.bash"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-report.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

names=$(make_reports "$bin" "$tmp") || fail "making the reports failed"
[[ $(echo $names) == $(echo $REPORT_KINDS) ]] || fail "reports written: $(echo $names); expected: $(echo $REPORT_KINDS)"
n=0
for name in $names; do
    python3 "$src/tests/scripts/report_check.py" "$tmp/$name.html" "$name" || fail "$name.html failed the checks"
    n=$((n + 1))
done

# the same plan twice gives the same bytes (stable output)
"$bin" plan --model llama3-8b --gpu h100-sxm --gpus 64 -q --report "$tmp/again.html" >/dev/null
cmp -s "$tmp/plan-fixed.html" "$tmp/again.html" || fail "two runs of the same plan wrote different reports"

set +e
"$bin" plan --model llama3-8b --gpu h100-sxm --gpus 64 -q --report "$tmp/no/such/dir/r.html" >/dev/null 2>"$tmp/err"
rc=$?
set -e
((rc == 1)) || fail "unwritable --report path: exit $rc, want 1"
grep -q "clusterfit: error: --report: cannot write '$tmp/no/such/dir/r.html'" "$tmp/err" ||
    fail "unwritable --report path: unexpected message: $(cat "$tmp/err")"
echo "report_html.sh: $n reports checked"
