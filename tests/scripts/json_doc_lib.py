"""json_doc_lib.py - shared by the docs/json.md agreement tests (json_doc.sh, sim_json_doc.sh,
bench_json_doc.sh, bench_io.sh): key paths of an output and the table of a docs/json.md section."""
import re
import sys


def paths(value, prefix="", out=None):
    """Every key path under value (`results[].time_s`): objects recursively, arrays through all
    their elements.  Returns out (a new set when None)."""
    if out is None:
        out = set()
    if isinstance(value, dict):
        for key, sub in value.items():
            p = f"{prefix}.{key}" if prefix else key
            out.add(p)
            paths(sub, p, out)
    elif isinstance(value, list):
        for item in value:
            paths(item, prefix + "[]", out)
    return out


def section_table(doc, heading, who):
    """First-column paths (in backticks) of the table under the first '## ' heading of doc that
    contains `heading`, in order; exits naming `who` when there is no such section."""
    lines = open(doc).read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("## ") and heading in l), None)
    if start is None:
        sys.exit(f"{who}: docs/json.md has no section '{heading}'")
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        m = re.match(r"\|\s*`([^`]+)`\s*\|", line)
        if m:
            rows.append(m.group(1))
    return rows


def disagreements(found, table, what):
    """Lines naming output paths missing from the table and table paths missing from the output."""
    errors = [f"output path `{p}` is not in the {what} table of docs/json.md" for p in sorted(found)
              if p not in table]
    errors += [f"docs/json.md documents `{p}`, which {what} --json does not print" for p in table
               if p not in found]
    return errors
