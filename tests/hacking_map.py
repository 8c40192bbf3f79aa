#!/usr/bin/env python3
"""docs/HACKING.md's code map against the tree: every source file is on the map, every public header listed.

Usage: hacking_map.py ROOT [HACKING.md]

Every .c and .h under the modules (core loader block collectives fabric reports) and include/ must be
named in the map by its file name (`native_s3.c`, `ckpt.h`) in the ``` block of its "## Layout"
section, and every include/railbench/X.h by name on the map's include/railbench/ entry (the public
surface). One line per file missing; a line per name on the map that is no file (a renamed or removed
file). Exit 1 when there is any, else 0 with a count.
"""
import os
import re
import sys

MODULES = ('core', 'loader', 'block', 'collectives', 'fabric', 'reports', 'include')


def layout_map(text):
    """The ``` block of the ## Layout section."""
    sec = text.split('\n## Layout', 1)[1].split('\n## ', 1)[0]
    m = re.search(r'^```\n(.*?)^```', sec, re.S | re.M)
    return m.group(1) if m else ''


def public_entry(block):
    """The lines of the map's include/railbench/ entry (up to the next entry at the left margin)."""
    out, inside = [], False
    for line in block.split('\n'):
        if line.startswith('include/railbench/'):
            inside = True
        elif inside and line[:1] not in (' ', ''):
            break
        if inside:
            out.append(line)
    return '\n'.join(out)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    root = sys.argv[1]
    doc = sys.argv[2] if len(sys.argv) == 3 else os.path.join(root, 'docs', 'HACKING.md')
    block = layout_map(open(doc, encoding='utf-8').read())
    named = set(re.findall(r'(?<![\w*-])[\w-]+\.[ch]\b', block))  # not the patterns *_int.h, kind_*.c
    files = []
    for mod in MODULES:
        for d, _, names in os.walk(os.path.join(root, mod)):
            files += [os.path.relpath(os.path.join(d, n), root) for n in names if n.endswith(('.c', '.h'))]
    problems = [f'{doc}: {f} is not on the map' for f in sorted(files) if os.path.basename(f) not in named]
    bases = {os.path.basename(f) for f in files}
    problems += [f'{doc}: the map names {n}, which is no file under {", ".join(MODULES)}' for n in sorted(named - bases)]
    public = set(re.findall(r'[\w-]+\.h\b', public_entry(block)))
    headers = sorted(n for n in os.listdir(os.path.join(root, 'include', 'railbench')) if n.endswith('.h'))
    problems += [f'{doc}: include/railbench/{h} is not listed as public surface' for h in headers if h not in public]
    for p in problems:
        print(p)
    print(f'{len(files)} source files, {len(headers)} public headers, {len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
