"""bench/fidelity_args.py - what bench/fidelity.py and bench/moe_fidelity.py share: their command line
([path/to/clusterfit] [--csv FILE] [-v] [--emit-table FILE]) and the catalog "fidelity" table they
write with --emit-table (data/fidelity.json, data/moe-fidelity.json; src/core/catalog.c)."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _take(argv, flag):
    """The value after flag, removed from argv with it; None without the flag."""
    if flag not in argv:
        return None
    i = argv.index(flag)
    value = argv[i + 1]
    del argv[i:i + 2]
    return value


def parse(argv, default_csv, prog):
    """(binary, csv_path, verbose, table) from the arguments, or None after saying why."""
    argv = list(argv)
    table = _take(argv, "--emit-table")
    csv_path = _take(argv, "--csv") or os.path.join(HERE, "data", default_csv)
    verbose = "-v" in argv
    argv = [a for a in argv if a != "-v"]
    binary = argv[0] if argv else os.path.join(HERE, "..", "build", "release", "clusterfit")
    if not os.access(binary, os.X_OK):
        print("%s: no clusterfit binary at %s (build first: make build)" % (prog, binary), file=sys.stderr)
        return None
    return binary, csv_path, verbose, table


def write_table(path, entries):
    """entries as the catalog's "fidelity" array, one entry per line."""
    with open(path, "w") as f:
        f.write('{"fidelity": [\n')
        f.write(",\n".join("  " + json.dumps(e) for e in entries))
        f.write("\n]}\n")
    return 0
