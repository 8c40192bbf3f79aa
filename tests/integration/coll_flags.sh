#!/usr/bin/env bash
# needs: mpi
# railbench coll takes every nccl-tests flag: with its meaning (-m -z -N -T -S -u -M -C -I -K), or noted (-G -y -R -x -V
# -p), or refused once, on rank 0 (-t/-g other than 1, -D other than 0). -C, -I, -K and -S change the table's columns
# as in nccl-tests, and the per-iteration figures agree with the times they come from.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
MPIRUN+=(--mca mpi_yield_when_idle 1)

# The most common nccl-tests line, and every other flag of nccl-tests' getopt string.
rb_mpirun 2 "$RB" coll allreduce -b 8 -e 128 -f 4 -g 1 -t 1 -n 3 -w 1 -c 1 -m 2 -z 3 -N 2 -T 30 -S 1 -u 1 -M 1 \
    -p 1 -y 0 -G 1 -C 1 -R 0 -x 0 -V 16 -D 0 -I 1 -K 1 -a 1 -o sum -d float -r 0 --out "$T/all" >"$T/all.out" 2>"$T/all.err" ||
    fail "every nccl-tests flag: exit $? ($(cat "$T/all.err"))"
grep -q '^# nThread 1 nGpus 1 minBytes 8 maxBytes 128 step: 4(factor) warmup iters: 1 iters: 3 agg iters: 2 ' "$T/all.out" ||
    fail "-m 2 in the preamble"
for f in -p -G -x; do
    [ "$(grep -c "^# note: $f [0-9]*: " "$T/all.out")" = 1 ] || fail "one note for $f"
done
for f in -C -I -K; do
    [ "$(grep -c "^# note: $f " "$T/all.out")" = 0 ] || fail "$f has a meaning now, yet a note says it has none"
done
grep -q '^# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes barrier $' "$T/all.out" ||
    fail "-z 3: nccl-tests' line"
grep -Eq '^# memory: [0-9]+ bytes per rank \(send 136, receive 136, ' "$T/all.out" || fail "-M 1: 128 + 8 x -u 1 bytes"
[ "$(grep -Ec '^ +[0-9]+ +[0-9]+ +float +sum +-1 .* [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}$' "$T/all.out")" = 6 ] ||
    fail "-N 2 x 3 sizes, each row ending with -S's timestamp"
ok "every nccl-tests flag accepted; -N 2 prints 6 rows with timestamps; notes for the flags without meaning here"
grep -q '^# Per-Iteration Report: CPU clock timing; i_\* uses max over process rows; summary skips first 1 iterations $' \
    "$T/all.out" || fail "-I 1 -K 1: no per-iteration line in the preamble"
ok "-I 1 -K 1: nccl-tests' per-iteration line in the preamble"
assert_jq "$T/all/result.json" '[.phases[].name] == ["allreduce/mpi/8/cycle1","allreduce/mpi/32/cycle1","allreduce/mpi/128/cycle1","allreduce/mpi/8/cycle2","allreduce/mpi/32/cycle2","allreduce/mpi/128/cycle2"]' \
    "-N: one phase per cycle and size"
assert_jq "$T/all/result.json" '[.phases[].count] | all(. == 6)' "-m 2 -n 3: 6 operations timed per phase"
assert_jq "$T/all/result.json" '[.summary.collective_rows[] | .oop.wrong, .ip.wrong] | all(. == 0)' "-u 1: data still checks"

# -C 1 -I 1 -K 2 -S 1 -a 3, 2 ranks, 10 iterations per size: nccl-tests' columns, and figures that agree with the
# per-iteration times in the -J file (each rank's, and the slowest rank's per iteration).
rb_mpirun 2 "$RB" coll allreduce -b 1K -e 64K -f 8 -n 10 -w 2 -C 1 -I 1 -K 2 -S 1 -a 3 -J "$T/iter.json" \
    --out "$T/iter" >"$T/iter.out" 2>"$T/iter.err" || fail "-C -I -K -S: exit $? ($(cat "$T/iter.err"))"
python3 - "$T/iter.out" "$T/iter.json" "$T/iter/result.json" <<'PY' || fail "-C -I -K -S: table and figures disagree"
import json, math, re, sys
text = open(sys.argv[1]).read().splitlines()
doc, res = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
def fail(msg): sys.exit(f'FAIL: {msg}')
title = next(l for l in text if 'out-of-place' in l and l.startswith('#  '))
if title.split() != ['#', 'out-of-place', '(+', 'per-iteration)', 'in-place', '(+', 'per-iteration)']: fail(f'title {title}')
names = next(l for l in text if l.startswith('#       size')).split()[1:]
half = ['cputime', 'algbw', 'busbw', '#wrong', 'i_min', 'i_max', 'i_p99', 'i_cv%']
if names != ['size', 'count', 'type', 'redop', 'root'] + half + half + ['timestamp']: fail(f'columns {names}')
units = next(l for l in text if l.startswith('#        (B)'))
if not units.endswith('%Y-%m-%d %H:%M:%S') or units.count('(%)') != 2: fail(f'units {units}')
rows = [l.split() for l in text if re.match(r'^ +\d+ +\d+ +float', l)]
if len(rows) != 3 or len(doc['results']) != 3: fail(f'{len(rows)} rows, {len(doc["results"])} -J records')
def mean(v): return sum(v) / len(v)
def float_cell(v, w=7):
    """nccl-tests' getFloatStr: 2, 1 or 0 decimals, whichever fits in w, else an exponent cut to w."""
    for f in ('%*.2f', '%*.1f', '%*.0f'):
        if len(f % (w, v)) <= w: return (f % (w, v)).strip()
    return ((w >= 7 and '%*.1e' or '%*.0e') % (w, v))[:w].strip()
for row, rec, cr in zip(rows, doc['results'], res['summary']['collective_rows']):
    if not re.fullmatch(r'\d{4}-\d\d-\d\d', row[-2]) or not re.fullmatch(r'\d\d:\d\d:\d\d', row[-1]): fail(f'timestamp {row}')
    for h, key, cells in (('oop', 'out_of_place', row[5:13]), ('ip', 'in_place', row[13:21])):
        it, per = rec[key + '_per_iter'], rec[key + '_per_iter']['per_process_max_times_us']
        times = it['times_us']
        if len(times) != 10 or len(per) != 2 or it['skipped_iterations'] != 2: fail(f'{key}: shape')
        # each iteration's figure is the slowest rank's
        if any(abs(t - max(p[i] for p in per)) > 1e-9 for i, t in enumerate(times)): fail(f'{key}: not the max over ranks')
        kept = sorted(times[2:])
        avg = mean(kept); sd = math.sqrt(mean([(t - avg) ** 2 for t in kept]))
        want = {'min_us': kept[0], 'max_us': kept[-1], 'avg_us': avg, 'p50_us': kept[4],
                'p95_us': kept[min(7, (8 * 95 + 99) // 100 - 1)], 'p99_us': kept[min(7, (8 * 99 + 99) // 100 - 1)],
                'stdev_us': sd, 'cv_pct': sd / avg * 100}
        for k, v in want.items():
            if abs(it[k] - v) > 1e-9 * max(1, abs(v)): fail(f'{key}.{k} = {it[k]}, from the times {v}')
        # the table shows them, rounded as printed
        for cell, k in zip(cells[4:], ('min_us', 'max_us', 'p99_us', 'cv_pct')):
            if cell != float_cell(it[k]): fail(f'{key}: table {cell} vs {k} {it[k]}')
        # -C: cputime is rank 0's own mean time, and the per-iteration times of rank 0 add up to it
        cpu = rec[key]['cpu_time']
        if abs(cpu - mean(per[0])) > 1e-6 * cpu: fail(f'{key}: cputime {cpu} vs mean of rank 0 {mean(per[0])}')
        if cells[0] != float_cell(cpu): fail(f'{key}: table cputime {cells[0]} vs {cpu}')
        # -a 3: algbw from the slowest rank's mean time (each rank's iterations add up to its mean)
        slowest = max(mean(p) for p in per)
        if abs(cr[h]['time_us'] - slowest) > 1e-6 * slowest: fail(f'{key}: -a 3 time {cr[h]["time_us"]} vs {slowest}')
        if abs(rec[key]['alg_bw'] - rec['size'] / (slowest * 1e3)) > 1e-6 * rec[key]['alg_bw']: fail(f'{key}: algbw')
        if cr[h]['per_iter']['p99_us'] != it['p99_us'] or cr[h]['cputime_us'] != cpu: fail(f'{key}: result.json')
print('ok')
PY
ok "-C -I -K -S: columns cputime, i_min i_max i_p99 i_cv%, timestamp; i_* from the slowest rank per iteration after -K 2; cputime = rank 0's mean; -a 3 time = slowest rank's mean"

# -C with -J: nccl-tests' key for the time is cpu_time; without -C it is time.
assert_jq "$T/iter.json" '[.results[] | .out_of_place | has("cpu_time") and (has("time") | not)] | all' "-J with -C: cpu_time"
assert_jq "$T/iter.json" '.config.per_iter_timing == "true" and .config.per_iter_skip == 2' "-J config: per_iter_timing, per_iter_skip"

# Refused, once: mpirun starts 3 ranks, and one line reaches stderr.
for bad in "-g 2:--ngpus: 2 devices per rank" "-t 4:--nthreads: 4 threads per rank" "-D 1:--device_implementation: 1" \
    "-z 4:--blocking: 4 is not a mode" "-m 0:--agg_iters: 0 is out of range" \
    "-K 1:--per_iter_skip: 1 needs per-iteration timing (-I 1)" "-I 2:--per_iter_timing: 2 is not 0 or 1" \
    "-C 2:--report_cputime: 2 is not 0 or 1" "-S 2:--report_timestamps: 2 is not 0 or 1" \
    "-I 1 -n 3 -K 3:--per_iter_skip: 3 leaves no iteration of -n 3 (use 0 to 2)"; do
    flag=${bad%%:*} want=${bad#*:}
    set +e
    # shellcheck disable=SC2086 # "-g 2" is a flag and its value
    rb_mpirun 3 "$RB" coll allreduce -b 8 -e 8 $flag --out "$T/never" >"$T/bad.out" 2>"$T/bad.err"
    rc=$?
    set -e
    [ "$rc" = 2 ] || fail "$flag: exit $rc, expected 2"
    [ "$(grep -c "^railbench: error: " "$T/bad.err")" = 1 ] || fail "$flag: $(grep -c "^railbench: error: " "$T/bad.err") error lines: $(cat "$T/bad.err")"
    grep -q "^railbench: error: $want" "$T/bad.err" || fail "$flag: $(grep '^railbench:' "$T/bad.err")"
    [ ! -e "$T/never" ] || fail "$flag: a result directory was created"
done
ok "-g 2, -t 4, -D 1, -z 4, -m 0, -K without -I, -I 2, -C 2, -S 2, -K >= -n: exit 2 with one error line from 3 ranks"

# --help says whose letters win.
"$RB" coll --help >"$T/help.out"
grep -q "nccl-tests' letters win: -c is check" "$T/help.out" || fail "--help: nccl-tests' letters"
ok "--help: nccl-tests' letters win inside coll"

# -T 1: a rank that stops answering ends the run after about a second, exit 3, in nccl-tests' words.
bg "${MPIRUN[@]}" -np 2 "$RB" coll allreduce -b 1M -e 1M -n 100000 -w 0 -T 1 --out "$T/to" >"$T/to.out" 2>"$T/to.err"
mp=$LAST_PID
for _ in $(seq 100); do grep -q 'Rank  1 .* Pid' "$T/to.out" 2>/dev/null && break; sleep 0.1; done
pid1=$(awk '/#  Rank  1 Group/ {print $7}' "$T/to.out")
[ -n "$pid1" ] || fail "-T: rank 1's pid not printed"
sleep 0.5
kill -STOP "$pid1"
t0=$(date +%s%N)
set +e
wait "$mp"
rc=$?
set -e
kill -CONT "$pid1" 2>/dev/null || true
el_ms=$((($(date +%s%N) - t0) / 1000000))
[ "$rc" != 0 ] || fail "-T: exit 0 although rank 1 was stopped"
grep -q ': Test timeout (1s): railbench coll$' "$T/to.err" || fail "-T: no timeout line ($(head -c 300 "$T/to.err"))"
[ "$el_ms" -lt 15000 ] || fail "-T 1: took ${el_ms} ms"
ok "-T 1: the waiting rank gave up after ${el_ms} ms with nccl-tests' 'Test timeout (1s)' (mpirun exit $rc)"
