#!/usr/bin/env python3
"""report_check.py FILE.html KIND - a --report page is well-formed, self-contained and complete.

Parses the page as XML (the writer emits XHTML-compatible markup, so every tag must balance),
then checks: no <script>, nothing fetched (no http(s) src/href, no url(), no @import), every
<svg> has a <title> and a <desc>, at least one table, and the section headings of KIND
(plan-sizing, plan-fixed, sim-*, sim-nccl-*, bench-*) are present.  Exit 0 or 1 with the reasons.
"""
import re
import sys
import xml.dom.minidom

HEADINGS = {
    "plan-sizing": ["Top plans", "Memory per GPU", "Step time", "Goodput: failures, checkpoints and restarts",
                    "Scaling with the GPU count", "Cost vs time to train", "Assumptions and sources"],
    "plan-fixed": ["Top plans", "Memory per GPU", "Step time", "Goodput: failures, checkpoints and restarts",
                   "Scaling with the GPU count", "Assumptions and sources"],
    "sim": ["Bus bandwidth vs message size", "Topology and link utilisation", "Topology properties"],
    "sim-nccl": ["Bus bandwidth vs message size", "System"],
    "sim-nccl-calibrated": ["Bus bandwidth vs message size", "Predicted vs measured", "System"],
    "bench": ["Bus bandwidth vs message size"],
    "bench-pairs": ["Bandwidth between hosts", "Latency between hosts"],
    "bench-storage": ["Storage against the need"],
    "bench-memory": ["Host memory bandwidth"],
}


def main():
    path, kind = sys.argv[1], sys.argv[2]
    text = open(path, encoding="utf-8").read()
    errors = []
    try:
        dom = xml.dom.minidom.parseString(text)
    except Exception as e:  # expat error with line and column
        print(f"{path}: not well-formed: {e}")
        return 1
    if "<script" in text.lower():
        errors.append("contains <script>")
    for attr in ("src", "href"):
        for el in dom.getElementsByTagName("*"):
            v = el.getAttribute(attr)
            if v and re.match(r"(https?:)?//", v):
                errors.append(f"fetches {v}")
    if re.search(r"url\(|@import", text):
        errors.append("CSS fetches something (url() or @import)")
    svgs = dom.getElementsByTagName("svg")
    if not svgs:
        errors.append("no chart")
    for svg in svgs:
        kids = [n.tagName for n in svg.childNodes if n.nodeType == n.ELEMENT_NODE]
        if kids[:2] != ["title", "desc"]:
            errors.append(f"svg {svg.getAttribute('id')} lacks <title>/<desc>")
    if not dom.getElementsByTagName("table"):
        errors.append("no table")
    heads = {"".join(t.data for t in h.childNodes if t.nodeType == t.TEXT_NODE)
             for h in dom.getElementsByTagName("h2")}
    want = HEADINGS.get(kind) or HEADINGS.get("-".join(kind.split("-")[:2])) or HEADINGS[kind.split("-")[0]]
    for h in want:
        if h not in heads:
            errors.append(f"missing section '{h}' (have {sorted(heads)})")
    for e in errors:
        print(f"{path}: {e}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
