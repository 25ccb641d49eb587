#!/usr/bin/env bash
# prices_doc.sh BINARY SRCDIR - docs/sizing.md lists every price of data/prices.json with its value
# and date (issue 15: "docs/sizing.md lists every price with its source and date"), and every GPU
# of data/gpus.json has a price or a no_price reason.
set -euo pipefail
(($# == 2)) || { echo "usage: prices_doc.sh BINARY SRCDIR" >&2; exit 1; }
python3 - "$2" <<'PY'
import json, sys
src = sys.argv[1]
doc = open(src + "/docs/sizing.md").read()
prices = json.load(open(src + "/data/prices.json"))["prices"]
bad = ["%s (%g, %s)" % (p["name"], p["value"], p["date"]) for p in prices
       if "| `%s` | %g | %s | %s |" % (p["name"], p["value"], p["unit"], p["date"]) not in doc]
names = {p["name"] for p in prices}
for g in json.load(open(src + "/data/gpus.json"))["gpus"]:
    priced = any("%s%s" % (k, g["name"]) in names for k in ("node.", "cloud.on_demand.", "cloud.reserved.", "cloud.spot."))
    if not priced and not g.get("no_price"):
        bad.append("gpu %s: no price and no no_price reason" % g["name"])
if bad:
    sys.exit("prices_doc.sh: not in docs/sizing.md or unpriced: " + "; ".join(bad))
print("prices_doc.sh: %d prices listed, every GPU priced or with a reason" % len(prices))
PY
