#!/usr/bin/env bash
# needs: -
# scripts/deps.sh brings in every tool the Makefile and the scripts under scripts/, tests/ and .ci/ call, every
# library the build links and the sanitizer/libFuzzer runtimes make check and make fuzz need.
#
# Derived, not listed: every word of those files (comments dropped) that names an executable in a Debian
# directory (/usr/sbin /usr/bin /sbin /bin) counts as a use; dpkg says which package owns it; that package must
# be in `scripts/deps.sh --list`, be pulled in by one of them through hard Depends/Pre-Depends (no alternatives,
# no Recommends: deps.sh installs with --no-install-recommends), or be part of the minimal base system (Essential
# or Priority required) or of what the README asks for first (make, git, ca-certificates). A word that names a
# tool but is prose in one file is excused for that file only (PROSE below), so a real use elsewhere is still
# checked. Python code fed to python3 through a here-document is skipped. Limits: a tool installed nowhere on
# this machine is not seen (its own test fails here instead), and
# words found only under /usr/local are not checked (no Debian package installs those).
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

command -v dpkg-query >/dev/null || fail "dpkg-query missing: this check needs a Debian system"

# word file: the word appears in that file only as prose or an argument (name=systemd: a cgroup mount option; perf dump: a Ceph admin-socket command; init=: a kernel parameter), never run. File * is for plain English
# words that also name a tool nobody here should need: file(1), write(1), route(8) (net-tools; we use ip route),
# less(1) ("less than 10 %" in a knee rule we grep for), edit, print and see (mailcap's run-mailcap, which some
# Debian packages bring in), and the HTTP methods, which libwww-perl installs as
# commands (GET, HEAD, POST: lwp-request) on machines that have it; here they are only ever request lines.
PROSE='
GET *
HEAD *
POST *
PUT *
DELETE *
column tests/integration/coll_table.sh
column tests/integration/loader_tiers.sh
column tests/integration/report.sh
column tests/integration/train_formats.sh
zip tests/integration/train_formats.sh
zip tests/integration/file_tar_shards.sh
systemd scripts/cluster-slurm.sh
perf tests/integration/cluster_checkpoint.sh
init tests/integration/loader_ktls.sh
file *
write *
route *
less *
edit *
print *
see *
'

"$ROOT/scripts/deps.sh" --list >"$T/listed"
[ -s "$T/listed" ] || fail "scripts/deps.sh --list printed no package"
ok "deps.sh lists $(wc -l <"$T/listed") packages"

python3 - "$ROOT" "$T/listed" "$PROSE" <<'PY'
import glob, os, re, subprocess, sys

root, listed_file, prose_text = sys.argv[1], sys.argv[2], sys.argv[3]
DEBIAN_DIRS = ['/usr/sbin', '/usr/bin', '/sbin', '/bin']
LOCAL_HOOKS = {'/usr/sbin/policy-rc.d'}
BASE_EXTRA = {'make', 'git', 'ca-certificates'}  # README Quick start: installed before the first command
prose = {tuple(l.split()) for l in prose_text.strip().splitlines()}
problems = []

def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True)

# The files whose commands run on a user's machine.
files = {os.path.join(root, 'Makefile'), os.path.join(root, '.ci/run')}
for pat in ('scripts/**/*', 'tests/**/*.sh'):
    files |= {f for f in glob.glob(os.path.join(root, pat), recursive=True)
              if os.path.isfile(f) and '/node_modules/' not in f}
me = os.path.join(root, 'tests/integration/deps_complete.sh')  # its prose list names tools it does not run
files = sorted(f for f in files if os.path.exists(f) and f != me and not f.endswith(('.json', '.md', '.yml', '.py')))

shell_words = set(run('bash', '-c', 'compgen -b; compgen -k').stdout.split())
word_re = re.compile(r'(?<![\w$/.@%:{-])([A-Za-z][\w.+-]*)(?![\w/-])')
abs_re = re.compile(r'(?<![\w.$)}-])(/(?:usr/)?s?bin/[\w.+-]+)')

def exe_in(dirs, word):
    for d in dirs:
        p = os.path.join(d, word)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None

uses = {}  # executable path -> ["file:line", ...]
for f in files:
    rel = os.path.relpath(f, root)
    embedded = None  # the closing word of a here-document that feeds Python code: its words are not commands
    for n, line in enumerate(open(f, errors='replace'), 1):
        if embedded:
            if line.strip() == embedded:
                embedded = None
            continue
        m = re.search(r"python3?\b.*<<-?\s*['\"]?(\w+)", line)
        if m:
            embedded = m.group(1)
        code = re.sub(r'(^|\s)#.*', '', line)
        for m in abs_re.finditer(code):
            p = m.group(1)
            # A file deps.sh writes and never runs is not a tool: /usr/sbin/policy-rc.d is the local admin's hook
            # that invoke-rc.d(8) reads (Debian Policy 9.3.3.1), owned by no package by design; Debian's container
            # images ship one, and deps.sh makes one only while it installs.
            if p in LOCAL_HOOKS:
                continue
            if os.path.isfile(p):
                uses.setdefault(p, []).append(f'{rel}:{n}')
        for m in word_re.finditer(code):
            w = m.group(1).rstrip('.')
            if w in shell_words or (w, rel) in prose or (w, '*') in prose:
                continue
            p = exe_in(DEBIAN_DIRS, w)
            if p and f'{rel}:{n}' not in uses.get(p, []):
                uses.setdefault(p, []).append(f'{rel}:{n}')

def candidates(path):
    """The names dpkg may know path by: as given and resolved, with and without the /usr prefix (merged /usr)."""
    out = []
    for c in (path, os.path.realpath(path)):
        out += [c, c[4:] if c.startswith('/usr/') else '/usr' + c]
    return out

def owners(paths):
    """Maps each path to the Debian package that installed it (None if none did), with one dpkg-query call."""
    names = sorted({c for p in paths for c in candidates(p)})
    pkg_of = {}
    for line in run('dpkg-query', '-S', *names).stdout.splitlines():
        if line.startswith('diversion ') or ': ' not in line:
            continue
        pkgs, f = line.split(': ', 1)
        pkg_of.setdefault(f.strip(), pkgs.split(',')[0].split(':')[0].strip())
    return {p: next((pkg_of[c] for c in candidates(p) if c in pkg_of), None) for p in paths}

# Installed packages: base-system membership and hard dependencies (single-choice Depends and Pre-Depends).
info = {}
fmt = '${Package}\t${Essential}\t${Priority}\t${Pre-Depends}\t${Depends}\n'
for line in run('dpkg-query', '-W', '-f=' + fmt).stdout.splitlines():
    pkg, ess, prio, pre, dep = line.split('\t')
    hard = [re.sub(r'[\s(].*', '', g.strip()).split(':')[0]
            for g in (pre + ',' + dep).split(',') if g.strip() and '|' not in g]
    info[pkg] = (ess == 'yes' or prio == 'required', hard)

listed = open(listed_file).read().split()
for p in listed:
    if p not in info:
        problems.append(f'deps.sh lists {p}, which is not installed here (run scripts/deps.sh as root)')
closure, queue = set(), list(listed) + sorted(BASE_EXTRA)  # breadth of hard dependencies
while queue:
    p = queue.pop()
    if p in closure or p not in info:
        continue
    closure.add(p)
    queue += info[p][1]

def covered(pkg):
    return pkg in closure or (pkg in info and info[pkg][0])

def need(what, path, where, pkg):
    if pkg is None:
        problems.append(f'{what} ({where}): {path} belongs to no Debian package')
    elif not covered(pkg):
        problems.append(f'{what} ({where}) comes from Debian package {pkg}, which scripts/deps.sh does not install')
    return pkg

tool_pkg = owners(list(uses))
for path, where in sorted(uses.items()):
    need(os.path.basename(path), path, ', '.join(where[:4]) + (' ...' if len(where) > 4 else ''), tool_pkg[path])
print(f'ok: {len(uses)} tools used in {len(files)} files, each from a package deps.sh installs or the base system')

# Libraries: each pkg-config name the Makefile maps to a Debian package (DEB_name := package).
makefile = open(os.path.join(root, 'Makefile')).read()
libs = re.findall(r'^DEB_([\w.+-]+)\s*:=\s*(\S+)', makefile, re.M)
pkgs_line = re.search(r'^PKGS\s*:=\s*(.*)$', makefile, re.M).group(1).split()
for name in pkgs_line + ['cmocka']:
    if name not in dict(libs):
        problems.append(f'Makefile: pkg-config name {name} has no DEB_{name} := <Debian package> line')
for name, deb in libs:
    pc = run('pkg-config', '--path', name).stdout.strip()
    if not pc:
        problems.append(f'pkg-config finds no {name} here')
        continue
    got = need(f'library {name}', pc, 'Makefile', owners([pc])[pc])
    if got and got != deb:
        problems.append(f'Makefile: DEB_{name} says {deb}, but {pc} comes from {got}')
print(f'ok: {len(libs)} libraries linked by the Makefile come from packages deps.sh installs')

# mpi.h behind mpicc, and the sanitizer runtimes: make check (mpicc -> gcc, -fsanitize=address,undefined) and
# make fuzz / make test (OMPI_CC=clang, -fsanitize=fuzzer,address,undefined).
inc = run('mpicc', '--showme:incdirs').stdout.split()
mpi_h = next((os.path.join(d, 'mpi.h') for d in inc if os.path.isfile(os.path.join(d, 'mpi.h'))), None)
if mpi_h is None:
    problems.append('mpicc --showme:incdirs names no directory with mpi.h')
else:
    need('mpi.h', mpi_h, 'mpicc', owners([mpi_h])[mpi_h])
sans = set(re.findall(r'-fsanitize=([\w,-]+)', makefile))
sans = {s for group in sans for s in group.split(',')}
runtimes = []
if 'address' in sans:
    runtimes += [('gcc', 'libasan.so'), ('clang', 'libclang_rt.asan-x86_64.a')]
if 'undefined' in sans:
    runtimes += [('gcc', 'libubsan.so'), ('clang', 'libclang_rt.ubsan_standalone-x86_64.a')]
if 'fuzzer' in sans:
    runtimes += [('clang', 'libclang_rt.fuzzer-x86_64.a')]
clang_rt = run('clang', '--print-runtime-dir').stdout.strip()
for cc, lib in runtimes:
    if cc == 'clang':
        path = os.path.join(clang_rt, lib)
    else:
        path = os.path.realpath(run('gcc', f'-print-file-name={lib}').stdout.strip())
    if not os.path.isfile(path):
        problems.append(f'{cc} runtime {lib} not found (looked for {path})')
    else:
        need(f'{cc} runtime {lib}', path, 'Makefile -fsanitize', owners([path])[path])
print(f'ok: {len(runtimes)} sanitizer/libFuzzer runtimes ({", ".join(sorted(sans))}) come from packages deps.sh installs')

if problems:
    for p in problems:
        print('FAIL: ' + p, file=sys.stderr)
    sys.exit(1)
PY
