#!/usr/bin/env bash
# fidelity_table.sh BINARY SRCDIR - data/fidelity.json and data/moe-fidelity.json (the published
# runs `plan` quotes as its model check, docs/plan.md) match what bench/fidelity.py and
# bench/moe_fidelity.py --emit-table write with the current model: same rows, same GPUs, counts,
# frameworks and sources, and each error within 0.2 percentage points (room for gcc/clang
# rounding, not for a model change).  Regenerate on a model change:
#   bench/fidelity.py build/rel/clusterfit --emit-table data/fidelity.json
#   bench/moe_fidelity.py build/rel/clusterfit --emit-table data/moe-fidelity.json
set -euo pipefail
(($# == 2)) || { echo "usage: fidelity_table.sh BINARY SRCDIR" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for pair in fidelity:fidelity moe_fidelity:moe-fidelity; do
python3 "$2/bench/${pair%%:*}.py" "$1" --emit-table "$tmp/${pair#*:}.json"
python3 - "$2/data/${pair#*:}.json" "$tmp/${pair#*:}.json" "${pair%%:*}" <<'PY'
import json, sys
name = sys.argv[1].split("/")[-1]
old = {e["name"]: e for e in json.load(open(sys.argv[1]))["fidelity"]}
new = {e["name"]: e for e in json.load(open(sys.argv[2]))["fidelity"]}
bad = ["%s: %s" % (k, "missing from the file" if k not in old else "no longer planned")
       for k in sorted(set(old) ^ set(new))]
for k in sorted(set(old) & set(new)):
    o, n = old[k], new[k]
    for f in ("gpu", "gpus", "framework", "source", "moe"):
        if o.get(f) != n.get(f):
            bad.append("%s: %s %r, now %r" % (k, f, o[f], n[f]))
    if abs(o["params"] - n["params"]) > 1e-3 * n["params"]:
        bad.append("%s: params %g, now %g" % (k, o["params"], n["params"]))
    if abs(o["error"] - n["error"]) > 0.002:
        bad.append("%s: error %+.4f, now %+.4f" % (k, o["error"], n["error"]))
if bad:
    sys.exit("fidelity_table.sh: data/%s is stale (regenerate: bench/%s.py build/rel/clusterfit "
             "--emit-table data/%s): %s" % (name, sys.argv[3], name, "; ".join(bad)))
print("fidelity_table.sh: %d published runs, data/%s current" % (len(new), name))
PY
done
