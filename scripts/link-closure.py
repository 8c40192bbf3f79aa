#!/usr/bin/env python3
"""The library objects some programs use, as a static link would pull them in, registration sections included.

Usage: link-closure.py ROOT.o... -- LIB.o...

Prints, one per line, the LIB objects the ROOT objects need: each that defines a symbol a ROOT, or an object
already needed, leaves undefined; and when a needed object refers to __start_SEC or __stop_SEC (the linker's
bounds of section SEC), every LIB object that puts something in SEC (protocols, transports and report kinds
register themselves so), with what those need in turn. The Makefile's fuzz build compiles only these.
"""
import subprocess
import sys


def symbols(objs):
    """{obj: (defined global symbols, undefined symbols)} from one nm run."""
    out = subprocess.run(["nm", "-P", "-A", "-g", *objs], check=True, capture_output=True, text=True).stdout
    table = {o: (set(), set()) for o in objs}
    for line in out.splitlines():
        head, _, rest = line.rpartition(": ")
        fields = rest.split()
        if head not in table or len(fields) < 2:
            continue
        name, kind = fields[0], fields[1]
        if kind == "U":
            table[head][1].add(name)
        elif kind not in ("w", "v"):
            table[head][0].add(name)
    return table


def sections(objs):
    """{obj: names of its sections} from one objdump run."""
    out = subprocess.run(["objdump", "-h", *objs], check=True, capture_output=True, text=True).stdout
    table, cur = {o: set() for o in objs}, None
    for line in out.splitlines():
        if ":     file format " in line:
            cur = line.split(":     file format ")[0]
        elif cur in table:
            f = line.split()
            if len(f) >= 7 and f[0].isdigit():
                table[cur].add(f[1])
    return table


def main(argv):
    if "--" not in argv or argv.index("--") == 0 or argv.index("--") == len(argv) - 1:
        sys.exit("usage: link-closure.py ROOT.o... -- LIB.o...")
    cut = argv.index("--")
    roots, lib = argv[:cut], argv[cut + 1:]
    syms = symbols(roots + lib)
    secs = sections(lib)
    definer = {}
    for o in lib:
        for s in syms[o][0]:
            definer.setdefault(s, o)
    need, todo = set(), [s for r in roots for s in syms[r][1]]
    while todo:
        s = todo.pop()
        objs = []
        if s in definer:
            objs = [definer[s]]
        elif s.startswith(("__start_", "__stop_")):
            sec = s.split("_", 3)[3]
            objs = [o for o in lib if sec in secs[o]]
        for o in objs:
            if o not in need:
                need.add(o)
                todo.extend(syms[o][1])
    for o in lib:
        if o in need:
            print(o)


if __name__ == "__main__":
    main(sys.argv[1:])
