"""bench/fidelity_args.py - what bench/fidelity.py and bench/moe_fidelity.py share: their command line
([path/to/clusterfit] [--csv FILE] [-v] [--emit-table FILE]) and the catalog "fidelity" table they
write with --emit-table (data/fidelity.json, data/moe-fidelity.json; src/core/catalog.c)."""
import json

import benchcli


def parse(argv, default_csv, prog, doc):
    """(binary, csv_path, verbose, table) from the arguments; --help and bad usage exit (benchcli)."""
    pos, opts = benchcli.parse(argv, prog, doc, values=("--csv", "--emit-table"), flags=("-v",))
    binary = benchcli.binary(prog, pos, benchcli.RELEASE_BINARY)
    return binary, benchcli.data_csv(prog, opts, default_csv), "-v" in opts, opts.get("--emit-table")


def write_table(path, entries):
    """entries as the catalog's "fidelity" array, one entry per line."""
    with open(path, "w") as f:
        f.write('{"fidelity": [\n')
        f.write(",\n".join("  " + json.dumps(e) for e in entries))
        f.write("\n]}\n")
    return 0
