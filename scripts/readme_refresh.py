"""readme_refresh.py BINARY FILE.md [SUBSTRING...] - rewrite the output of a Markdown file's examples.

Every '$ clusterfit ...' line inside a ``` block (only those containing one of the SUBSTRINGs, when
given) is re-run with BINARY, and the lines after it up to the next '$ ', '...' or '```' are
replaced by the new output: all of it, or, when the block cuts the output with a '...' line, as
many first lines as were there.  Read the diff before committing it."""
import shlex, subprocess, sys
binp, path = sys.argv[1], sys.argv[2]
only = sys.argv[3:]  # substrings selecting commands
lines = open(path).read().split('\n')
out = []; i = 0; inblock = False
while i < len(lines):
    l = lines[i]
    if l.startswith('```'):
        inblock = not inblock; out.append(l); i += 1; continue
    if inblock and l.startswith('$ clusterfit ') and (not only or any(o in l for o in only)):
        out.append(l); j = i + 1
        while j < len(lines) and not (lines[j].startswith('$ ') or lines[j] == '...' or lines[j].startswith('```')):
            j += 1
        n = j - i - 1
        cut = j < len(lines) and lines[j] == '...'
        args = shlex.split(l[2:])
        args[0] = binp
        r = subprocess.run(args, capture_output=True, text=True)
        new = r.stdout.rstrip('\n').split('\n')
        out.extend(new[:n] if cut else new)
        i = j; continue
    out.append(l); i += 1
open(path, 'w').write('\n'.join(out))
