#!/usr/bin/env python3
"""dcgm_queries.py API SRCDIR - exporter_dcgm.sh's query pass, in one process.

Evaluates through Prometheus' HTTP API (API: its /api/v1 base URL) every query of NVIDIA's
dcgm-exporter Grafana dashboard (SRCDIR/tests/fixtures/dcgm/dashboard-queries.txt) and of
SRCDIR/deploy/grafana/clusterfit-dashboard.json: each must get at least one series; a line
starting with '!' must get none, and its metric must be in docs/metrics.md.  Grafana's variables
become ".*" and $__rate_interval 10s; a panel that shows only what is wrong (`... == 0`) must get
series once the filter is dropped.  One interpreter for all of them: a python3 and a curl per
query cost seconds each on a loaded 2-core machine (the test ran past its timeout under ctest -j8).
Prints one line per failed query; exit 1 when any failed, else prints the counts.
"""
import json
import re
import sys
import urllib.parse
import urllib.request


def series(api, query):
    """How many series the instant query returns; -1 when it failed."""
    url = api + "/query?" + urllib.parse.urlencode({"query": query})
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            doc = json.load(r)
    except Exception:
        return -1
    return len(doc["data"]["result"]) if doc.get("status") == "success" else -1


def grafana(expr):
    """A dashboard expression with Grafana's variables filled; label_values(M, L) as count by (L) (M)."""
    for var in ("$instance", "$gpu", "$training_job"):
        expr = expr.replace(var, ".*")
    expr = expr.replace("$__rate_interval", "10s")
    return re.sub(r"^label_values\(([A-Za-z_:]*), *([A-Za-z_]*)\)$", r"count by (\2) (\1)", expr)


def check(api, want, expr):
    """True when the query gets the series it should (want: 'some' or 'none')."""
    q = grafana(expr)
    n = series(api, q)
    m = re.match(r"^(.*[^ ]) *== *[0-9]+$", q)
    if want == "some" and n == 0 and m:
        n = series(api, m.group(1))   # a panel of what is wrong: the metric must be there
    if n == -1 or (want == "some" and n < 1) or (want == "none" and n != 0):
        print(f"exporter_dcgm.sh: want {want} series, got {n}: {q}", file=sys.stderr)
        return False
    return True


def main():
    api, src = sys.argv[1], sys.argv[2]
    metrics_doc = open(f"{src}/docs/metrics.md").read().split("\n")
    ok, n = True, 0
    for line in open(f"{src}/tests/fixtures/dcgm/dashboard-queries.txt").read().split("\n"):
        if not line or line.startswith("#"):
            continue
        n += 1
        if line.startswith("!"):
            metric = (re.findall(r"DCGM_[A-Z_]+", line) or [""])[0]
            if not any(re.match(r"^\| .*`" + re.escape(metric) + r"`.* \|", d) for d in metrics_doc):
                print(f"{metric} is not in docs/metrics.md", file=sys.stderr)
                ok = False
            ok = check(api, "none", line[1:]) and ok
        else:
            ok = check(api, "some", line) and ok
    ndcgm = n
    dash = json.load(open(f"{src}/deploy/grafana/clusterfit-dashboard.json"))
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    exprs += [v["definition"] for v in dash.get("templating", {}).get("list", []) if v.get("type") == "query"]
    for e in exprs:
        n += 1
        ok = check(api, "some", e) and ok
    if not ok:
        return 1
    print(f"exporter_dcgm.sh: ok ({ndcgm} dcgm-exporter dashboard queries, {n - ndcgm} deploy/grafana queries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
