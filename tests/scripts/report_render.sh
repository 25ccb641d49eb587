#!/usr/bin/env bash
# report_render.sh BINARY SRCDIR - every `--report FILE.html` renders in headless Chromium (fresh
# profile, no network needed) to a PNG that is not blank (png_check.py: enough colours and ink)
# and without console messages (the pages have no script, so any console line is an error:
# a failed load, a parse problem).  A page with a deliberate console error is rendered first so
# the console check is known to work.  Exit 77 (skipped) only when chromium cannot start.
set -euo pipefail
fail() { echo "report_render.sh: $*" >&2; exit 1; }
(($# == 2)) || fail "usage: report_render.sh BINARY SRCDIR"
bin=$1 src=$2
command -v python3 >/dev/null || fail "python3 is needed"
chrome=$(command -v chromium || command -v chromium-browser || true)
[[ -n $chrome ]] || { echo "report_render.sh: SKIP: chromium is not installed (scripts/deps.sh installs it)"; exit 77; }
source "$src/tests/scripts/report_lib.bash"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-render.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# render HTML PNG WIDTH HEIGHT: screenshot into PNG, Chromium's log into PNG.log
render() {
    local profile
    profile=$(mktemp -d "$tmp/profile.XXXXXX")
    timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
        --user-data-dir="$profile" --enable-logging=stderr --v=0 --window-size="$3,$4" \
        --screenshot="$2" "file://$1" >"$2.log" 2>&1
}

printf '<html><body><p>x</p><script>console.error("cfit-selftest")</script></body></html>\n' >"$tmp/selftest.html"
if ! render "$tmp/selftest.html" "$tmp/selftest.png" 400 300 || [[ ! -s $tmp/selftest.png ]]; then
    echo "report_render.sh: SKIP: chromium cannot start: $(tail -3 "$tmp/selftest.png.log")"
    exit 77
fi
grep -q 'CONSOLE.*cfit-selftest' "$tmp/selftest.png.log" ||
    fail "this chromium does not log console messages to stderr; the console check would be blind"

names=$(make_reports "$bin" "$tmp") || fail "making the reports failed"
[[ $(echo $names) == $(echo $REPORT_KINDS) ]] || fail "reports written: $(echo $names); expected: $(echo $REPORT_KINDS)"
n=0
for name in $names; do
    render "$tmp/$name.html" "$tmp/$name.png" 1200 2000 || fail "$name: chromium failed: $(tail -3 "$tmp/$name.png.log")"
    [[ -s $tmp/$name.png ]] || fail "$name: no screenshot"
    if grep -E 'CONSOLE|Uncaught' "$tmp/$name.png.log"; then
        fail "$name: console messages (above)"
    fi
    python3 "$src/tests/scripts/png_check.py" "$tmp/$name.png" 64 0.01 || fail "$name: the screenshot looks blank"
    n=$((n + 1))
done
echo "report_render.sh: $n reports rendered"
