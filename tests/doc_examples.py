#!/usr/bin/env python3
"""The shell examples of README.md and docs/**/*.md as tests (docs/HACKING.md, "Examples are tests").

Usage: doc_examples.py list DOCROOT
       doc_examples.py parse RAILBENCH DOCROOT [PAGE...]
       doc_examples.py run WORKDIR DOCROOT LOGDIR [PAGE...]
       doc_examples.py plant DOCROOT MANIFEST
       doc_examples.py verify MANIFEST
       doc_examples.py links DOCROOT

DOCROOT holds README.md and docs/. A fenced block opened with ```sh runs as pasted; one opened with
```sh cluster-only needs hosts, devices or hours this machine lacks and is parsed instead. Other fences
(```, ```json, ```text, ...) are not commands.

  list   prints every sh block: PAGE:LINE, its kind, its first line.
  parse  for every `railbench ...` command of every block (cluster-only and runnable alike, wherever it
         stands: after mpirun, srun, a wrapper script, in a pipeline): the command words exist, every option
         exists and every value parses (RAILBENCH_PARSE_ONLY=1: the binary resolves the options and prints
         them without running anything). One line per problem; exit 1 when there is any.
  run    runs the runnable blocks of each page, in order, in one bash (set -eo pipefail) started in WORKDIR,
         with railbench on PATH and the local servers' variables set as the README's tour leaves them
         (`export PATH=$PWD/build:$PATH`, `eval "$(scripts/servers.sh up)"`, Open MPI's two root variables).
         A block that fails is named with its page and line and the command that failed; exit 1 then. Each
         block's wall time is printed (not asserted). With DOC_TMP set, every /tmp/ of a block is read as
         $DOC_TMP/ (the run's own /tmp, shared with no other run); with DOC_BEFORE_DOWN set, that command
         runs just before each `scripts/servers.sh down` of a block (the servers' data is gone after it).
         Pages run DOC_JOBS at a time (default 4); those of ALONE (their examples hold a rule on time) then
         one by one, README.md last; so no two pages under docs/ may name the same thing (a /tmp entry, a
         --prefix, a path in the bucket, a file of WORKDIR, the default obj- names kept): a name two pages
         use is named with both pages before anything runs; exit 1 then.
  plant  puts foreign data where the runnable examples write, under names their cleanups could match: for
         every prefix the examples use (`--prefix P`, a URL's own prefix, the default obj-) the names
         P + "mine.txt" and P + "00000001.keep", in every directory the examples make (`mkdir -p /tmp/...`,
         read under DOC_TMP), in DOC_TMP itself, on the origin ($ORIGIN, WebDAV PUT) and in the bucket
         s3://bench ($RGW_ENDPOINT, SigV4); and a file at every other /tmp path the examples name. Writes
         the sha256 of each to MANIFEST (one JSON line each).
  verify reads every planted file and object back; one line per one changed or gone, exit 1 then.
  links  every page under docs/ (docs/*.md, docs/**/*.md) is linked from README.md, and every page README.md
         links exists; one line per page that is not, exit 1 then.
"""
import glob
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

FENCE = re.compile(r'^```(\S*)\s*(.*)$')
PARALLEL = 8  # commands parsed, planted files and objects written or read, at a time
# Pages whose examples hold a rule on time, which other pages' load beside them breaks: each runs alone, after the
# others (which run DOC_JOBS at a time).
ALONE = {
    'docs/load.md': 'its open loop must achieve 95 % of 400 requests/s, every send on time (none abandoned)',
    'docs/mlperf.md': "MLPerf's AU rule (>= 90 %) over 2 ms of compute a step",
    'docs/sweep.md': 'its open loop against RGW sends every request on time (none abandoned), up to 200 requests/s',
}
# Programs that run the command given after their own options (`mpirun -np 4 railbench ...`); a script
# (`scripts/rail-bind.sh`, `scripts/cluster.sh mpirun`) too. `git clone URL railbench` is no command.
LAUNCHERS = {'mpirun', 'mpiexec', 'srun', 'salloc', 'timeout', 'env', 'sudo', 'time', 'nohup', 'taskset', 'numactl'}
# Values the parse step gives the variables of examples (the servers' and the usual shell ones).
PARSE_ENV = {
    'ORIGIN': 'http://127.0.0.1:8080/data', 'TIER': 'http://127.0.0.1:8081/data',
    'RGW_ENDPOINT': 'http://127.0.0.1:7480', 'RGW_VHOST_ENDPOINT': 'http://s3.localhost:7480',
    'S3_TIER_ENDPOINT': 'http://127.0.0.1:7481', 'PWD': '/tmp', 'HOME': '/root',
}


def pages(root, only=()):
    """README.md then every page under docs/ (or only the pages named), as paths relative to root."""
    found = ['README.md'] + sorted(os.path.relpath(p, root) for p in
                                   glob.glob(os.path.join(root, 'docs', '**', '*.md'), recursive=True))
    found = [p for p in found if os.path.exists(os.path.join(root, p))]
    return [p for p in found if not only or p in only]


def blocks(root, page):
    """(line of the opening fence, kind 'run' or 'cluster-only', text) of every sh block of a page."""
    out, lines, i = [], open(os.path.join(root, page), encoding='utf-8').read().split('\n'), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            j = i + 1
            while j < len(lines) and not lines[j].startswith('```'):
                j += 1
            if m.group(1) == 'sh':
                kind = m.group(2).strip() or 'run'
                if kind not in ('run', 'cluster-only'):
                    sys.exit(f'{page}:{i + 1}: ```sh {kind}: the only kind after sh is cluster-only')
                out.append((i + 1, kind, '\n'.join(lines[i + 1:j])))
            i = j
        i += 1
    return out


def commands(text):
    """Every `railbench ARGS` of a block as (line offset, [args after railbench]), here-documents skipped."""
    out, lines, i = [], text.split('\n'), 0
    while i < len(lines):
        start, line = i, lines[i]
        while line.endswith('\\') and i + 1 < len(lines):
            i += 1
            line = line[:-1] + ' ' + lines[i]
        here = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", line)
        i += 1
        if here:
            while i < len(lines) and lines[i].strip() != here.group(1):
                i += 1
            i += 1
        lex = shlex.shlex(line, posix=True, punctuation_chars=';&|<>()')
        lex.whitespace_split = True
        lex.commenters = '#'
        try:
            toks = list(lex)
        except ValueError as e:
            out.append((start, None, f'cannot split the line: {e}'))
            continue
        cmd = []
        for t in toks + [';']:
            if t and set(t) <= set(';&|()'):
                words = [w for w in cmd if not re.match(r'^\w+=', w)] if cmd else []
                first = os.path.basename(words[0]) if words else ''
                rb = [k for k, w in enumerate(cmd) if os.path.basename(w) == 'railbench']
                if rb and (first == 'railbench' or first in LAUNCHERS or first.endswith('.sh')):
                    args = cmd[rb[0] + 1:]
                    redir = [k for k, w in enumerate(args) if set(w) <= set('<>&')]
                    if redir:
                        k = redir[0]
                        args = args[:k - 1] if k > 0 and args[k - 1].isdigit() else args[:k]
                    out.append((start, [os.path.expandvars(a) for a in args], None))
                cmd = []
            else:
                cmd.append(t)
    return out


def do_list(root):
    for page in pages(root):
        for line, kind, text in blocks(root, page):
            print(f'{page}:{line}\t{kind}\t{text.splitlines()[0] if text else ""}')
    return 0


def do_parse(rb, root, only):
    env = dict(os.environ, RAILBENCH_PARSE_ONLY='1', **PARSE_ENV)
    os.environ.update(PARSE_ENV)  # for expandvars
    found = []  # (where, args or None, the split's error)
    for page in pages(root, only):
        for line, kind, text in blocks(root, page):
            for off, args, err in commands(text):
                found.append((f'{page}:{line + 1 + off}', args, err))

    def parse(item):
        """The problem of one command, or None."""
        where, args, err = item
        if err:
            return f'{where}: {err}'
        p = subprocess.run([os.path.abspath(rb)] + args, capture_output=True, text=True, env=env, cwd=root,
                           stdin=subprocess.DEVNULL, timeout=60)
        if p.returncode != 0 or not p.stdout.strip():
            msg = (p.stderr.strip().splitlines() or ['no output'])[-1]
            return f'{where}: railbench {" ".join(args)}: exit {p.returncode}: {msg}'
        return None

    # Each command parsed on its own (nothing runs), PARALLEL at a time; the problems in the pages' order.
    with ThreadPoolExecutor(PARALLEL) as pool:
        problems = [r for r in pool.map(parse, found) if r]
    n = sum(1 for _, _, err in found if not err)
    for p in problems:
        print(p)
    print(f'{n} railbench commands parsed, {len(problems)} problems')
    return 1 if problems else 0


PREAMBLE = '''set -eo pipefail
export PATH="$PWD/build:$PATH" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
eval "$(scripts/servers.sh up)" >/dev/null
DOC_WHERE=preamble
trap 'echo "DOC-FAIL $DOC_WHERE (line $LINENO of the block): exit $?: $BASH_COMMAND" >&2' ERR
'''


def run_page(work, root, logdir, page):
    """Runs one page's runnable blocks in one bash; (blocks, the lines to print, failure or None)."""
    runnable = [(line, text) for line, kind, text in blocks(root, page) if kind == 'run']
    name = page.replace('/', '_')
    driver = [PREAMBLE]
    for line, text in runnable:
        path = os.path.join(logdir, f'{name}.{line}.sh')
        if os.environ.get('DOC_TMP'):
            text = text.replace('/tmp/', os.environ['DOC_TMP'].rstrip('/') + '/')
        if os.environ.get('DOC_BEFORE_DOWN'):
            text = text.replace('scripts/servers.sh down', os.environ['DOC_BEFORE_DOWN'] + ' && scripts/servers.sh down')
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text + '\n')
        driver.append(f'DOC_WHERE={page}:{line}; echo "DOC-BLOCK {page}:{line} $EPOCHREALTIME"\n. {shlex.quote(path)}\n')
    driver.append('echo "DOC-BLOCK end $EPOCHREALTIME"\n')
    with open(os.path.join(logdir, f'{name}.driver.sh'), 'w', encoding='utf-8') as f:
        f.write(''.join(driver))
    log = os.path.join(logdir, f'{name}.log')
    t0 = time.time()
    with open(log, 'w', encoding='utf-8') as out:
        p = subprocess.run(['bash', os.path.join(logdir, f'{name}.driver.sh')], cwd=work, stdout=out,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=900)
    text = open(log, encoding='utf-8', errors='replace').read()
    marks = re.findall(r'^DOC-BLOCK (\S+) ([\d.]+)$', text, re.M)
    times = [f'{a}:{float(t2) - float(t1):.1f}s'.replace(page + ':', '')
             for (a, t1), (_, t2) in zip(marks, marks[1:])]
    if p.returncode != 0:
        why = re.findall(r'^DOC-FAIL (.*)$', text, re.M)
        failed = f'{why[-1] if why else page + ": exit " + str(p.returncode)} (log: {log})'
        return len(times), [f'FAILED {page}: {failed}', '  ' + '\n  '.join(text.rstrip().splitlines()[-15:])], failed
    return len(times), [f'ok {page}: {len(runnable)} blocks in {time.time() - t0:.0f}s '
                        f'(line:time {" ".join(times)})'], None


def page_cost(root, page):
    """A page's expected wall time, roughly: its railbench commands and the seconds its options name."""
    text = '\n'.join(t for _, kind, t in blocks(root, page) if kind == 'run')
    secs = sum(int(s) for s in re.findall(r'--(?:duration|runtime) (\d+)s', text))
    return len(re.findall(r'\brailbench ', text)) + secs


def page_names(root, page):
    """What a page's runnable blocks name and could make: /tmp entries, --prefix values, files of the working
    directory (--out, --save, -o, ...), paths in the bucket, and obj- where a command keeps (--keep,
    --populate) names of the default prefix."""
    text = '\n'.join(t for _, kind, t in blocks(root, page) if kind == 'run').replace('\\\n', ' ')
    names = {f for f in re.findall(r'/tmp/[\w.-]+', text) if 'XXXXXX' not in f}
    names |= set(re.findall(r'--prefix[ =]([\w./-]+)', text))
    names |= {'./' + f.split('/')[0] for f in re.findall(r'(?:--out|--save|--dot|--html|-o) ([\w.-][\w./-]*)', text)}
    names |= {'s3://%s/%s' % (BUCKET, u) for u in re.findall(r's3://%s/([\w./-]+)' % BUCKET, text)}
    for line in text.split('\n'):
        if re.search(r'\brailbench load \w+ .*--(keep|populate)\b', line) and '--prefix' not in line \
                and '--fresh' not in line and not re.search(r'(s3://%s|file://\S+)/\w' % BUCKET, line):
            names.add(re.sub(r'^.*\brailbench load \w+ ("?\S+"?).*$', r'\1', line) + ' obj-')
    return names


def shared_names(root, docs):
    """One line per name that two pages of docs use."""
    owner, out = {}, []
    for page in docs:
        for n in sorted(page_names(root, page)):
            if n in owner:
                out.append(f'{page} and {owner[n]} both use {n}: pages run at the same time')
            else:
                owner[n] = page
    return out


def do_run(work, root, logdir, only):
    """Pages run DOC_JOBS at a time (default 4), the costliest first: no two pages share a directory, an
    object name or a result directory (docs/HACKING.md, "Examples are tests"); then those of ALONE one by
    one, and README.md last, since its tour ends with scripts/servers.sh down. What each page printed comes
    out in the order they ran, the concurrent ones in the pages' order."""
    os.makedirs(logdir, exist_ok=True)
    jobs = os.environ.get('DOC_JOBS', '4')
    if not jobs.isdigit() or int(jobs) < 1:
        sys.exit(f'run: DOC_JOBS {jobs!r}: expected a whole number >= 1')
    runnable = [p for p in pages(root, only) if any(kind == 'run' for _, kind, _ in blocks(root, p))]
    docs = [p for p in runnable if p != 'README.md']
    clash = shared_names(root, docs)
    if clash:
        print('\n'.join(clash))
        return 1
    done, t0 = {}, time.time()
    together = [p for p in docs if p not in ALONE]
    with ThreadPoolExecutor(int(jobs)) as pool:
        futures = {p: pool.submit(run_page, work, root, logdir, p)
                   for p in sorted(together, key=lambda p: -page_cost(root, p))}
        for p in together:
            done[p] = futures[p].result()
            print('\n'.join(done[p][1]), flush=True)
    for p in [p for p in docs if p in ALONE] + [p for p in runnable if p == 'README.md']:
        done[p] = run_page(work, root, logdir, p)
        print('\n'.join(done[p][1]), flush=True)
    ran = sum(r[0] for r in done.values())
    failed = [r[2] for r in done.values() if r[2]]
    print(f'{ran} blocks ran in {time.time() - t0:.0f}s, {len(failed)} pages failed')
    return 1 if failed else 0


# ---- foreign data: the examples must leave what they did not make as it was ----

PLANT_TAILS = ('mine.txt', '00000001.keep')
BUCKET = 'bench'


def runnable_text(root):
    return '\n'.join(text for page in pages(root) for _, kind, text in blocks(root, page) if kind == 'run')


def plant_plan(root):
    """(directories, lone /tmp files, prefixes) the runnable examples use, as written (/tmp/...)."""
    text = runnable_text(root)
    dirs = set()
    for m in re.finditer(r'^\s*mkdir -p ([^\n#;&|]+)', text, re.M):
        dirs.update(d for d in m.group(1).split() if d.startswith('/tmp/'))
    files = {f for f in re.findall(r'/tmp/[\w.-]+', text)
             if f not in dirs and not any(d.startswith(f + '/') for d in dirs)}
    prefixes = {'obj-'} | set(re.findall(r'--prefix[ =]([\w./-]+)', text))
    for u in re.findall(r's3://%s/([\w./-]+)' % BUCKET, text):
        prefixes |= {u, u + 'obj-'}
    return sorted(dirs), sorted(files), sorted(prefixes)


def s3_curl(args, data=None):
    """curl signed with SigV4 by the keys of the environment; the keys reach curl on stdin, not argv."""
    cfg = 'user = "%s:%s"\n' % (os.environ['AWS_ACCESS_KEY_ID'], os.environ['AWS_SECRET_ACCESS_KEY'])
    return subprocess.run(['curl', '-sS', '-K', '-', '--aws-sigv4', 'aws:amz:us-east-1:s3',
                           '-H', 'x-amz-content-sha256: UNSIGNED-PAYLOAD'] + args,
                          input=cfg.encode(), capture_output=True, timeout=60)


def target_put(where, name, body):
    if where.startswith('s3://') or where.startswith('http'):
        fd, tmp = tempfile.mkstemp(prefix='.plant-body-', dir=os.environ.get('DOC_TMP', '/tmp'))
        with os.fdopen(fd, 'wb') as f:
            f.write(body)
        url = (f"{os.environ['RGW_ENDPOINT']}/{BUCKET}/{name}" if where.startswith('s3://')
               else f"{where.rstrip('/')}/{name}")
        args = ['-o', '/dev/null', '-w', '%{http_code}', '-T', tmp, url]
        p = s3_curl(args) if where.startswith('s3://') else subprocess.run(['curl', '-sS'] + args, capture_output=True,
                                                                           timeout=60)
        os.unlink(tmp)
        code = p.stdout.decode().strip()
        if code not in ('200', '201', '204'):
            sys.exit(f'plant: PUT {url}: HTTP {code} {p.stderr.decode().strip()}')
        return
    path = os.path.join(where, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as f:
        f.write(body)


def target_get(where, name):
    """The bytes of name on a target, or None when it is not there."""
    if where.startswith('s3://') or where.startswith('http'):
        url = (f"{os.environ['RGW_ENDPOINT']}/{BUCKET}/{name}" if where.startswith('s3://')
               else f"{where.rstrip('/')}/{name}")
        fd, out = tempfile.mkstemp(prefix='.verify-body-', dir=os.environ.get('DOC_TMP', '/tmp'))
        os.close(fd)
        args = ['-o', out, '-w', '%{http_code}', url]
        p = s3_curl(args) if where.startswith('s3://') else subprocess.run(['curl', '-sS'] + args, capture_output=True,
                                                                           timeout=60)
        code = p.stdout.decode().strip()
        body = open(out, 'rb').read() if code == '200' and os.path.exists(out) else None
        if os.path.exists(out):
            os.unlink(out)
        return body
    try:
        return open(os.path.join(where, name), 'rb').read()
    except OSError:
        return None


def do_plant(root, manifest):
    tmp = os.environ.get('DOC_TMP')
    if not tmp:
        sys.exit('plant: set DOC_TMP (the directory the examples\' /tmp/ stands for)')
    local = lambda p: p.replace('/tmp/', tmp.rstrip('/') + '/', 1)  # noqa: E731
    dirs, files, prefixes = plant_plan(root)
    targets = [tmp] + [local(d) for d in dirs]
    if os.environ.get('ORIGIN'):
        targets.append(os.environ['ORIGIN'])
    if os.environ.get('RGW_ENDPOINT'):
        targets.append('s3://' + BUCKET)
    rows = []
    for where in targets:
        for p in prefixes:
            for tail in PLANT_TAILS:
                rows.append((where, p + tail))
    rows += [(os.path.dirname(local(f)), os.path.basename(local(f))) for f in files]
    bodies = [(f'foreign data: {name} at {where}, not made by any example\n' * 64).encode() for where, name in rows]
    # Every PUT at once, 8 at a time (each its own file and name); the manifest in the rows' order.
    with ThreadPoolExecutor(PARALLEL) as pool:
        list(pool.map(lambda r: target_put(r[0][0], r[0][1], r[1]), zip(rows, bodies)))
    with open(manifest, 'w', encoding='utf-8') as m:
        for (where, name), body in zip(rows, bodies):
            m.write(json.dumps({'where': where, 'name': name, 'sha256': hashlib.sha256(body).hexdigest()}) + '\n')
    print(f'{len(rows)} foreign files and objects planted: {len(targets)} places, {len(prefixes)} prefixes '
          f'({" ".join(prefixes)}), {len(files)} lone files')
    return 0


def do_verify(manifest):
    bad, n = [], 0
    rows = [json.loads(line) for line in open(manifest, encoding='utf-8')]
    with ThreadPoolExecutor(PARALLEL) as pool:
        got = list(pool.map(lambda r: target_get(r['where'], r['name']), rows))
    for r, body in zip(rows, got):
        n += 1
        if body is None:
            bad.append(f"GONE {r['where']} {r['name']}")
        elif hashlib.sha256(body).hexdigest() != r['sha256']:
            bad.append(f"CHANGED {r['where']} {r['name']}")
    for b in bad:
        print(b)
    print(f'{n - len(bad)} of {n} foreign files and objects unchanged')
    return 1 if bad else 0


def do_links(root):
    readme = open(os.path.join(root, 'README.md'), encoding='utf-8').read()
    linked = {os.path.normpath(t.split('#')[0]) for t in re.findall(r'\]\(([^)\s]+)\)', readme)
              if not re.match(r'\w+://', t) and t.split('#')[0]}
    docs = [p for p in pages(root) if p != 'README.md']
    problems = [f'README.md: no link to {p}' for p in docs if p not in linked]
    problems += [f'README.md: links {p}, which does not exist' for p in sorted(linked)
                 if not os.path.exists(os.path.join(root, p))]
    for p in problems:
        print(p)
    print(f'{len(docs)} pages under docs/, {len(problems)} problems')
    return 1 if problems else 0


def main():
    a = sys.argv[1:]
    if a[:1] == ['list'] and len(a) == 2:
        return do_list(a[1])
    if a[:1] == ['parse'] and len(a) >= 3:
        return do_parse(a[1], a[2], a[3:])
    if a[:1] == ['run'] and len(a) >= 4:
        return do_run(a[1], a[2], a[3], a[4:])
    if a[:1] == ['plant'] and len(a) == 3:
        return do_plant(a[1], a[2])
    if a[:1] == ['verify'] and len(a) == 2:
        return do_verify(a[1])
    if a[:1] == ['links'] and len(a) == 2:
        return do_links(a[1])
    sys.exit(__doc__)


if __name__ == '__main__':
    sys.exit(main())
