#!/usr/bin/env bash
# exporter_deploy.sh BINARY SRCDIR - deploy/ stays true: the rules file is what `clusterfit rules`
# prints, the Prometheus config passes `promtool check config`, every metric the Grafana dashboard
# queries is in docs/metrics.md, and every flag of the systemd unit is one the exporter takes.
set -uo pipefail
bin=$1 src=$2
fail() { echo "exporter_deploy.sh: $*" >&2; exit 1; }
d=$src/deploy
"$bin" rules | diff -u "$d/prometheus/clusterfit-rules.yml" - ||
    fail "deploy/prometheus/clusterfit-rules.yml is stale: regenerate it with clusterfit rules"
if command -v promtool >/dev/null 2>&1; then
    promtool check config "$d/prometheus/prometheus.yml" || fail "promtool check config failed"
else
    echo "exporter_deploy.sh: promtool not installed: config check skipped"
fi
python3 - "$d/grafana/clusterfit-dashboard.json" "$src/docs/metrics.md" <<'PY' || fail "dashboard check failed"
import json, re, sys
dash = json.load(open(sys.argv[1]))
doc = set(re.findall(r"^\| `(clusterfit_[a-z_]+)` \|", open(sys.argv[2]).read(), re.M))
exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
assert exprs, "no queries"
used = set()
for e in exprs:
    for m in re.findall(r"\bclusterfit_[a-z_]+", e):
        used.add(re.sub(r"_(bucket|sum|count)$", "", m) if m.startswith("clusterfit_job_step_duration") else m)
missing = sorted(used - doc)
assert not missing, "not in docs/metrics.md: %s" % missing
ids = [p["id"] for p in dash["panels"]]
assert len(ids) == len(set(ids)), "duplicate panel ids"
print("dashboard: %d queries over %d metrics" % (len(exprs), len(used)))
PY
help=$("$bin" exporter --help)
flags=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$d/systemd/clusterfit-exporter.service" | grep -oE -- '--[a-z][a-z.-]*')
[[ -n $flags ]] || fail "no flags found in the unit's ExecStart"
for f in $flags; do
    grep -qE -- "(^| )$f( |$)" <<<"$help" || fail "the systemd unit uses $f, which the exporter does not take"
done
echo "exporter_deploy.sh: ok"
