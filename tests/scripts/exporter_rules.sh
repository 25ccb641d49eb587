#!/usr/bin/env bash
# exporter_rules.sh BINARY SRCDIR - `clusterfit rules` output passes `promtool check rules`
# (default thresholds, from the fixture plan, from a real `clusterfit plan --json`, and with a
# job name and plan strings holding ": ", " #", quotes, braces and "\r"), and `promtool test rules`
# (tests/fixtures/rules/tests.yml, tests_default.yml) proves every alert, at both severities,
# fires when it should and stays quiet when it should not.  Skips (77) only when promtool is
# missing.
set -uo pipefail
bin=$1 src=$2
fail() { echo "exporter_rules.sh: $*" >&2; exit 1; }
command -v promtool >/dev/null 2>&1 || { echo "exporter_rules.sh: SKIP: promtool not installed (scripts/deps.sh installs the prometheus package)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-rules.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
"$bin" rules >"$tmp/default.yml" || fail "rules exited $?"
promtool check rules "$tmp/default.yml" || fail "promtool check rules rejects the default rules"
"$bin" plan --model llama3-8b --gpu h100-sxm --gpus 64 --json >"$tmp/plan.json" || fail "plan --json exited $?"
"$bin" rules --from-plan "$tmp/plan.json" --gpu-util-below 0.5 >"$tmp/real.yml" || fail "rules --from-plan (real plan) exited $?"
promtool check rules "$tmp/real.yml" || fail "promtool check rules rejects the rules from a real plan"
grep -q 'ClusterfitStepSlowerThanPlan' "$tmp/real.yml" || fail "no step-time alert from a real plan"
grep -q '"clusterfit_gpu_utilization_ratio < 0.5"$' "$tmp/real.yml" || fail "--gpu-util-below not applied"
"$bin" rules --gpu-util-warning 0.85 --gpu-util-critical 0.80 --for 10m >"$tmp/levels.yml" || fail "rules with levels exited $?"
promtool check rules "$tmp/levels.yml" || fail "promtool check rules rejects the rules with levels"
grep -q '"clusterfit_gpu_utilization_ratio < 0.8"$' "$tmp/levels.yml" || fail "--gpu-util-critical not applied"
# text from outside the program: valid YAML whatever it holds
job=$'gpu: nodes #1 "x" {{ y }}\r'
sed 's/"gpu": "h100-sxm"/"gpu": "h100: {{x}} #1 \\"q\\"\\r"/' "$src/tests/fixtures/rules/plan.json" >"$tmp/odd.json"
"$bin" rules --from-plan "$tmp/odd.json" --exporter-job "$job" >"$tmp/odd.yml" || fail "rules with odd strings exited $?"
promtool check rules "$tmp/odd.yml" || fail "promtool check rules rejects the rules for an odd job name or plan"
python3 - "$tmp/odd.yml" "$job" <<'PY' || fail "the odd job name did not survive the YAML round trip"
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
exprs = [r["expr"] for g in doc["groups"] for r in g["rules"] if r["alert"] == "ClusterfitExporterDown"]
want = 'up{job="%s"} == 0' % sys.argv[2].replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\x0d")
assert exprs == [want], (exprs, want)
PY
"$bin" rules --gpu-util-critical 0.9 >/dev/null 2>&1
[[ $? == 2 ]] || fail "a critical threshold above the warning was not refused"
"$bin" rules --from-plan "$src/tests/fixtures/rules/plan.json" >"$tmp/rules.yml" || fail "rules --from-plan exited $?"
cp "$src/tests/fixtures/rules/tests.yml" "$src/tests/fixtures/rules/tests_default.yml" "$tmp/"
promtool check rules "$tmp/rules.yml" || fail "promtool check rules rejects the plan rules"
promtool test rules "$tmp/tests.yml" "$tmp/tests_default.yml" || fail "promtool test rules failed"
# docs/alerts.md is the runbook: a section for every alert the rules name
for a in $(sed -n 's/^  - alert: "\(.*\)"$/\1/p' "$tmp/rules.yml" "$tmp/default.yml" | sort -u); do
    grep -qx "## $a" "$src/docs/alerts.md" || fail "docs/alerts.md has no runbook section '## $a'"
done
grep -q '"docs/alerts.md#clusterfitgpuunderutilized"' "$tmp/rules.yml" || fail "no runbook_url on the alerts"
echo "exporter_rules.sh: ok"
