#!/usr/bin/env bash
# exporter_rules.sh BINARY SRCDIR - `clusterfit rules` output passes `promtool check rules`
# (default thresholds, from the fixture plan, and from a real `clusterfit plan --json`), and
# `promtool test rules` (tests/fixtures/rules/tests.yml) proves each alert fires when it should
# and stays quiet when it should not.  Skips (77) only when promtool is missing.
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
grep -q 'clusterfit_gpu_utilization_ratio < 0.5$' "$tmp/real.yml" || fail "--gpu-util-below not applied"
"$bin" rules --from-plan "$src/tests/fixtures/rules/plan.json" >"$tmp/rules.yml" || fail "rules --from-plan exited $?"
cp "$src/tests/fixtures/rules/tests.yml" "$tmp/tests.yml"
promtool check rules "$tmp/rules.yml" || fail "promtool check rules rejects the plan rules"
promtool test rules "$tmp/tests.yml" || fail "promtool test rules failed"
echo "exporter_rules.sh: ok"
