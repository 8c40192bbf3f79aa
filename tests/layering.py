#!/usr/bin/env python3
"""Checks that module dependencies point the declared way (docs/HACKING.md "Layout and the dependency rule").

Usage: layering.py SRC_ROOT [OBJ_DIR]
  Reads every #include of the sources under SRC_ROOT (core, loader, block, collectives, fabric, reports)
  and, with OBJ_DIR (build/obj), the link edges: which module's object uses a symbol another module's object
  defines (nm). Prints one line per edge against the rule, then "N include edges, M link edges, K problems";
  exits 1 on any problem.

The rule: core uses no other module; block, collectives, fabric and reports use core only (collectives may
also drive the loader's background load through include/railbench/bgload.h); inside loader/ the sub-folders
use only the ones below them: objset < proto < engine < file < cmd < train, tiers, ckpt, kvcache (the file
protocol's row in proto/ gets its loop from file/ at start-up, registered from above); loader/load.c (the
dispatcher) and core/main.c (the command table) may name every command. A public header
include/railbench/X.h belongs to the module that holds X.c (or X_*.c); a header without one is core's.

With OBJ_DIR it also draws each module's files as a graph of their link edges (file a uses a symbol file b
defines) and finds its circles (files that use each other, directly or through others of the module): a module in
CIRCLE_FREE may hold none but the circles ALLOWED_CIRCLES names; the others' circles are counted on one line.

Two rules of shape ride along (docs/HACKING.md): no function body longer than MAX_FUNCTION_LINES lines
(from its opening to its closing brace, both at the start of a line, as the house style writes them), and
every command entry point, `int rb_*(int argc, char **argv)`, is named rb_<command>[_<sub>...]_main.
"""
import os
import re
import subprocess
import sys

# The modules: the top folders of the Makefile's SRC (main() reads them), so a new module is checked from the
# moment it is built; this list is the fallback when there is no Makefile beside the sources.
MODULES = ['core', 'loader', 'block', 'collectives', 'fabric', 'reports']
# file/ is the file:// protocol's I/O loop, an engine of its own: above engine/, below the commands.
# A loader sub-folder not named here is a load subcommand's: at the commands' level.
LOADER_LEVEL = {'objset': 0, 'proto': 1, 'engine': 2, 'file': 2.5, 'cmd': 3, 'train': 4, 'tiers': 4, 'ckpt': 4, 'kvcache': 4}
COMMAND_LEVEL = 4


def makefile_modules(root):
    """The top folders of the Makefile's `SRC := $(wildcard ...)`, or None without one."""
    try:
        text = open(os.path.join(root, 'Makefile'), encoding='utf-8').read()
    except OSError:
        return None
    m = re.search(r'^SRC\s*:?=\s*\$\(wildcard ([^)]*)\)', text, re.M)
    return list(dict.fromkeys(w.split('/')[0] for w in m.group(1).split())) if m else None
# Modules whose files form no circle (see circles()), and the circles allowed in them (none).
CIRCLE_FREE = ['loader/engine', 'loader/proto']
ALLOWED_CIRCLES = []
# Declared exceptions: (from module, to module, what may be used).
EXCEPTIONS = {('collectives', 'loader/cmd'): 'include/railbench/bgload.h'}
DISPATCHERS = {'core/main.c', 'loader/load.c'}
MAX_FUNCTION_LINES = 120
MAX_FILE_LINES = 800
ENTRY = re.compile(r'^int (rb_\w+)\(int argc, char \*\*argv\)$', re.M)


def module_of(rel):
    """'loader/engine' for loader/engine/worker.c, 'loader' for loader/load.c, 'core' for core/x.c."""
    parts = rel.split('/')
    if parts[0] == 'loader' and len(parts) > 2:
        return 'loader/' + parts[1]
    return parts[0] if parts[0] in MODULES else None


def allowed(a, b):
    if a == b or b == 'core':
        return True
    if a == 'loader':  # the dispatcher's folder: every loader sub-folder
        return b.startswith('loader/')
    if a.startswith('loader/') and b.startswith('loader/'):
        return LOADER_LEVEL.get(b[7:], COMMAND_LEVEL) < LOADER_LEVEL.get(a[7:], COMMAND_LEVEL)
    return False


def sources(root):
    for m in MODULES:
        for dp, _, files in os.walk(os.path.join(root, m)):
            for f in sorted(files):
                if f.endswith(('.c', '.h')):
                    yield os.path.relpath(os.path.join(dp, f), root)


def header_owner(root, name, all_src):
    """The module of include/railbench/<name>.h: where <name>.c or <name>_*.c is; else core."""
    stem = name[:-2]
    for s in all_src:
        b = os.path.basename(s)
        if b == stem + '.c' or (b.startswith(stem + '_') and b.endswith('.c')):
            return module_of(s)
    return 'core'


def include_edges(root):
    all_src = list(sources(root))
    owners = {}
    for s in all_src:
        a = module_of(s)
        text = open(os.path.join(root, s), encoding='utf-8', errors='replace').read()
        for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
            inc = m.group(1)
            if inc.startswith('railbench/'):
                h = os.path.basename(inc)
                if h not in owners:
                    owners[h] = header_owner(root, h, all_src)
                yield s, a, owners[h], 'include/' + inc
            else:
                tgt = os.path.normpath(os.path.join(os.path.dirname(s), inc))
                yield s, a, module_of(tgt) or '?', tgt


def symbols(objdir):
    """nm on every object of a module: ({symbol: source that defines it}, [(source, symbol it uses)])."""
    defined, used, rels = {}, [], {}
    for dp, _, files in os.walk(objdir):
        for f in sorted(files):
            if not f.endswith('.o'):
                continue
            path = os.path.join(dp, f)
            rel = os.path.relpath(path, objdir)[:-2] + '.c'
            if module_of(rel) is not None:
                rels[path] = rel
    paths = sorted(rels)
    out = subprocess.run(['nm', '-A', *paths], capture_output=True, text=True).stdout if paths else ''
    for line in out.splitlines():  # one nm for all: "PATH:VALUE TYPE SYMBOL" or "PATH:  U SYMBOL"
        path, _, rest = line.partition(':')
        rel, p = rels.get(path), rest.split()
        if rel is None:
            continue
        if len(p) == 3 and p[1] in 'TDBRC':
            defined[p[2]] = rel
        elif len(p) == 2 and p[0] == 'U':
            used.append((rel, p[1]))
    return defined, used


def link_edges(syms):
    defined, used = syms
    for rel, sym in used:
        if sym in defined:
            yield rel, module_of(rel), module_of(defined[sym]), sym


def circles(syms):
    """{module: [sorted files of one circle, ...]}: the strongly connected groups of 2 or more files of each module."""
    defined, used = syms
    graph = {}
    for rel, sym in used:
        to = defined.get(sym)
        if to and to != rel and module_of(to) == module_of(rel):
            graph.setdefault(rel, set()).add(to)
    index, low, stack, on, found = {}, {}, [], set(), {}
    for start in sorted(graph):  # Tarjan's algorithm, without recursion
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    found.setdefault(module_of(v), []).append(sorted(group))
    return found


def functions(root):
    """(source, line of the signature, name, body lines) of every function definition under root."""
    for s in sources(root):
        if not s.endswith('.c'):
            continue
        lines = open(os.path.join(root, s), encoding='utf-8', errors='replace').read().split('\n')
        i = 0
        while i < len(lines):
            if lines[i] == '{':
                j = i - 1  # the signature's first line: the nearest line above that is not indented
                while j > 0 and lines[j][:1] in (' ', '\t'):
                    j -= 1
                k = i + 1
                while k < len(lines) and not lines[k].startswith('}'):
                    k += 1
                m = re.search(r'(\w+)\s*\(', lines[j])
                yield s, j + 1, m.group(1) if m else lines[j].strip(), k - i + 1
                i = k
            i += 1


def shape_problems(root):
    """Functions over MAX_FUNCTION_LINES, files over MAX_FILE_LINES and entry points not named *_main; also the
    longest function."""
    problems, longest = [], (0, '')
    for s, line, name, n in functions(root):
        if n > longest[0]:
            longest = (n, f'{s}:{line} {name}')
        if n > MAX_FUNCTION_LINES:
            problems.append(f'{s}:{line}: {name} is {n} lines long, over {MAX_FUNCTION_LINES}')
    for s in sources(root):
        text = open(os.path.join(root, s), encoding='utf-8', errors='replace').read()
        n = text.count('\n')
        if n > MAX_FILE_LINES:
            problems.append(f'{s}: {n} lines, over {MAX_FILE_LINES}: split it along a seam')
        if s.endswith('.c'):
            for m in ENTRY.finditer(text):
                if not m.group(1).endswith('_main'):
                    problems.append(f'{s}: {m.group(1)} is a command entry point: name it rb_<command>_<sub>_main')
    return problems, longest


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = sys.argv[1]
    MODULES[:] = makefile_modules(root) or MODULES
    problems, ninc, nlink = [], 0, 0
    for src, a, b, what in include_edges(root):
        ninc += 1
        if a is None or allowed(a, b) or src in DISPATCHERS:
            continue
        if EXCEPTIONS.get((a, b)) == what:
            continue
        problems.append(f'{src}: includes {what}: {a} -> {b} is against the dependency rule')
    if len(sys.argv) > 2:
        syms = symbols(sys.argv[2])
        for src, a, b, sym in link_edges(syms):
            nlink += 1
            if allowed(a, b) or src in DISPATCHERS:
                continue
            if (a, b) in EXCEPTIONS and sym.startswith('rb_bgload_'):
                continue
            problems.append(f'{src}: uses {sym}, defined in {b}: {a} -> {b} is against the dependency rule')
        found = circles(syms)
        for mod in CIRCLE_FREE:
            for group in found.get(mod, []):
                if not any(set(group) <= a for a in ALLOWED_CIRCLES):
                    problems.append(f'{mod}: a circle of {len(group)} files that use each other: {", ".join(group)}')
        print('circles inside modules: ' + (', '.join(f'{m} {len(g)} ({sum(map(len, g))} files)'
                                                      for m, g in sorted(found.items())) or 'none'))
    shape, longest = shape_problems(root)
    problems += shape
    print(f'longest function: {longest[0]} lines ({longest[1]})')
    for p in problems:
        print(p)
    print(f'{ninc} include edges, {nlink} link edges, {len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
