"""bench/benchcli.py - the command line every bench/*.py script shares: -h/--help prints the
script's docstring and exits 0; a missing option value, an unknown option, a non-numeric value or
a binary that is not executable ends with one line `PROG: what is wrong` on stderr and exit 2
(never a Python traceback)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RELEASE_BINARY = os.path.join(HERE, "..", "build", "release", "clusterfit")   # make build's


def fail(prog, msg):
    """One line on stderr, exit 2."""
    print(f"{prog}: {msg}", file=sys.stderr)
    sys.exit(2)


def parse(argv, prog, doc, values=(), flags=()):
    """(positional arguments, {option: value}) from argv, after -h/--help and bad usage are handled.

    values: options that take a value (--csv FILE); flags: options without one (-v)."""
    if any(a in ("-h", "--help") for a in argv):
        print(doc.strip())
        sys.exit(0)
    pos, opts = [], {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in values:
            if i + 1 >= len(argv):
                fail(prog, f"{a} needs a value (--help for usage)")
            opts[a] = argv[i + 1]
            i += 2
            continue
        if a in flags:
            opts[a] = True
        elif a.startswith("-") and a != "-":
            fail(prog, f"unknown option '{a}' (--help for usage)")
        else:
            pos.append(a)
        i += 1
    return pos, opts


def number(prog, opts, name, default, kind=int):
    """opts[name] as kind (a positive number), default without the option."""
    if name not in opts:
        return default
    try:
        v = kind(opts[name])
    except ValueError:
        fail(prog, f"{name} wants a number, not '{opts[name]}'")
    if v <= 0:
        fail(prog, f"{name} must be positive, not '{opts[name]}'")
    return v


def binary(prog, pos, default=None):
    """The clusterfit binary: the one positional argument, else default; exit 2 if not executable."""
    if len(pos) > 1:
        fail(prog, f"unexpected argument '{pos[1]}' (--help for usage)")
    path = pos[0] if pos else default
    if path is None:
        fail(prog, "no clusterfit binary given (--help for usage)")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        fail(prog, f"no clusterfit binary at {path} (build first: make build)")
    return path


def data_csv(prog, opts, name):
    """--csv FILE, else bench/data/NAME; exit 2 if it is not a file."""
    path = opts.get("--csv") or os.path.join(HERE, "data", name)
    if not os.path.isfile(path):
        fail(prog, f"no such file: {path}")
    return path
