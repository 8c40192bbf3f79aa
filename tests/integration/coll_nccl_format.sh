#!/usr/bin/env bash
# needs: mpi
# railbench coll prints nccl-tests 2.19's output byte for byte: a fixed-column parser built from nccl-tests' format
# strings (src/util.cu) reads the preamble, header, rows and footer, and every printed figure is the -J file's
# value as nccl-tests' getFloatStr would print it.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
MPIRUN+=(--mca mpi_yield_when_idle 1)

# fixed_parse OUT JSON COLL: the whole check, in Python; prints a one-line summary.
fixed_parse() {
    python3 - "$@" <<'PY'
import json, re, sys
out, jpath, coll = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(out).read().split('\n')
doc = json.load(open(jpath))
def fail(msg): sys.exit(f'FAIL: {msg}')

def float_str(v, w):
    """nccl-tests' getFloatStr: 2, 1 or 0 decimals, whichever fits in w, else an exponent cut to w."""
    for f in ('%*.2f', '%*.1f', '%*.0f'):
        s = f % (w, v)
        if len(s) <= w:
            return s
    return ((w >= 7 and '%*.1e' or '%*.0e') % (w, v))[:w]

# Preamble, in nccl-tests' order: version, program, parameters.
i = 0
if lines[0].startswith('# Writing JSON output to '):
    i = 1
if lines[i] != '# nccl-tests version 2.19.6 nccl-headers=0 nccl-library=0': fail(f'version line {lines[i]!r}')
if lines[i + 1] != f'# Collective test starting: railbench coll {coll}': fail(f'starting line {lines[i + 1]!r}')
cfg = doc['config']
want = (f"# nThread 1 nGpus 1 minBytes {cfg['minimum_bytes']} maxBytes {cfg['maximum_bytes']} "
        f"step: {cfg['step_factor']}(factor) warmup iters: {cfg['warmup_iters']} iters: {cfg['iterations']} "
        f"agg iters: {cfg['aggregated_iterations']} validation: {cfg['validation']} graph: 0 unalign: 0")
if lines[i + 2] != want: fail(f'nThread line {lines[i + 2]!r} != {want!r}')
# The device lines as nccl-tests' parseRankInfo scans them, and as -J lists them.
dev = [l for l in lines if l.startswith('#  Rank ')]
pat = re.compile(r'^#  Rank +(\d+) Group +(\d+) Pid +(\d+) on +(\S+) device +(\d+) \[([^\]]+)\] (.+)$')
if len(dev) != len(cfg['devices']): fail(f'{len(dev)} device lines, {len(cfg["devices"])} in -J')
for l, d in zip(dev, cfg['devices']):
    m = pat.match(l)
    if not m or (int(m[1]), int(m[2]), int(m[3]), m[4], int(m[5]), m[6], m[7]) != \
            (d['rank'], d['group'], d['pid'], d['hostname'], d['device'], d['device_hex'], d['device_info']):
        fail(f'device line {l!r} vs {d}')
    if l != '#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s' % (
            d['rank'], d['group'], d['pid'], d['hostname'], d['device'], d['device_hex'], d['device_info']):
        fail(f'device line widths {l!r}')

# Header: nccl-tests' writeResultHeader, spelled out (trailing spaces included).
hdr = ['#',
       '# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          ' % ('', '', '', '', ''),
       '# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s' % (
           'size', 'count', 'type', 'redop', 'root', 'time', 'algbw', 'busbw', '#wrong', 'time', 'algbw', 'busbw',
           '#wrong', 0, ''),
       '# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s' % (
           '(B)', '(elements)', '', '', '', '(us)', '(GB/s)', '(GB/s)', '', '(us)', '(GB/s)', '(GB/s)', '', 0, '')]
starts = [k for k in range(len(lines) - 3) if lines[k:k + 4] == hdr]
if not starts: fail('no header equal to nccl-tests\' three lines')

# Rows: "%12li  %12li  %8s  %6s  %6s" then per half "  %7s  %6s  %6s" and "  %6g", or "    N/A" unchecked
# (so a row is 118 characters, 116 with -c 0), cut at those fixed columns.
cols = {'size': (0, 12), 'count': (14, 26), 'type': (28, 36), 'redop': (38, 44), 'root': (46, 52)}
half = {'time': (2, 9), 'alg_bw': (11, 17), 'bus_bw': (19, 25)}
rows = [l for l in lines[starts[0] + 4:] if l and not l.startswith('#')]
if len(rows) != len(doc['results']): fail(f'{len(rows)} rows, {len(doc["results"])} -J results')
bw, widths = [], set()
for l, r in zip(rows, doc['results']):
    cut = {k: l[a:b] for k, (a, b) in cols.items()}
    if (int(cut['size']), int(cut['count']), cut['type'].strip(), cut['redop'].strip()) != \
            (r['size'], r['count'], r['type'], r['redop']) or cut['root'] != r['root']:
        fail(f'row {l!r} vs {r}')
    base = 52
    for key in ('out_of_place', 'in_place'):
        h = r[key]
        for k, (a, b) in half.items():
            cell = l[base + a:base + b]
            want = float_str(h[k], 7 if k == 'time' else 6)
            # The table is printed from the figure -J holds (rounded once, rb_coll_fig): equal even on a half.
            if cell != want: fail(f'{key}.{k}: printed {cell!r}, -J {h[k]} prints as {want!r}')
        if l[base:base + 2] != '  ' or l[base + 9:base + 11] != '  ' or l[base + 17:base + 19] != '  ':
            fail(f'separators in {l!r}')
        wrong = '    N/A' if h['nwrong'] is None else '  %6g' % h['nwrong']
        if l[base + 25:base + 25 + len(wrong)] != wrong: fail(f'{key}.nwrong: {l[base + 25:]!r} vs {wrong!r}')
        base += 25 + len(wrong)
        bw.append(h['bus_bw'])
    if len(l) != base: fail(f'row of {len(l)} characters, {base} from the columns: {l!r}')
    widths.add(len(l))

# Footer: out of bounds, average busbw (the mean of both halves of every row), "#", concluded, "#", empty line.
avg = doc['average_bus_bandwidth']['bandwidth']
if abs(avg - sum(bw) / len(bw)) > 1e-9 * max(1, avg): fail(f'average {avg} != mean of bus_bw {sum(bw) / len(bw)}')
tail = ['# Out of bounds values : 0 OK', '# Avg bus bandwidth    : %g ' % avg, '#',
        f'# Collective test concluded: railbench coll {coll}', '#', '', '']
k = lines.index(tail[0])
if lines[k:] != tail: fail(f'footer {lines[k:]!r}')

# -J: nccl-tests' keys in its order (no "env": it may hold secrets), railbench's under railbench_ names.
keys = [k for k in doc if not k.startswith('railbench_')]
if keys != ['version', 'start_time', 'args', 'nccl_version', 'config', 'results', 'out_of_bounds',
            'average_bus_bandwidth', 'errors', 'end_time']: fail(f'top-level keys {keys}')
if doc['version'] != 3: fail('version')
if list(cfg) != ['nthreads', 'ngpus', 'minimum_bytes', 'maximum_bytes', 'step_factor', 'warmup_iters', 'iterations',
                 'aggregated_iterations', 'validation', 'graph', 'blocking_collectives', 'per_iter_timing',
                 'per_iter_skip', 'parallel_init', 'devices']: fail(f'config keys {list(cfg)}')
if cfg['blocking_collectives'] != 'false' or cfg['parallel_init'] != 'false': fail('jsonBool strings')
for r in doc['results']:
    rk = [k for k in r if not k.startswith('railbench_')]
    if rk != ['size', 'count', 'type', 'redop', 'root', 'out_of_place', 'in_place', 'actual_iterations',
              'experiment_name']: fail(f'result keys {rk}')
    if r['railbench_collective'] != coll: fail('railbench_collective')
if not re.fullmatch(r'\d{4}-\d\d-\d\d \d\d:\d\d:\d\d', doc['start_time']): fail('start_time format')
print(f'{len(rows)} rows of {sorted(widths)} characters, every cell = -J value as printed, header/footer/preamble exact')
PY
}

for c in allreduce alltoall broadcast; do
    rb_mpirun 4 "$RB" coll $c -b 1K -e 1M -f 4 -n 3 -w 1 -J "$T/$c.json" --out "$T/$c" >"$T/$c.out"
    out=$(fixed_parse "$T/$c.out" "$T/$c.json" $c) || fail "$c: $out"
    ok "$c: $out"
done
# -c 0: #wrong is "   N/A" in the table, null in -J; the footer still counts 0.
rb_mpirun 2 "$RB" coll allgather -b 64 -e 4K -f 8 -n 2 -w 0 -c 0 -J "$T/nc.json" --out "$T/nc" >"$T/nc.out"
out=$(fixed_parse "$T/nc.out" "$T/nc.json" allgather) || fail "-c 0: $out"
ok "-c 0: $out"
