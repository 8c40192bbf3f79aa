#!/usr/bin/env bash
# railbench coll takes every nccl-tests flag: with its meaning (-m -z -N -T -S -u -M), or noted (-G -C -y -R -x -V -p -I -K),
# or refused once, on rank 0 (-t/-g other than 1, -D other than 0).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
MPIRUN+=(--mca mpi_yield_when_idle 1)

# The most common nccl-tests line, and every other flag of nccl-tests' getopt string.
rb_mpirun 2 "$RB" coll allreduce -b 8 -e 128 -f 4 -g 1 -t 1 -n 3 -w 1 -c 1 -m 2 -z 3 -N 2 -T 30 -S 1 -u 1 -M 1 \
    -p 1 -y 0 -G 1 -C 1 -R 0 -x 0 -V 16 -D 0 -I 1 -K 1 -a 1 -o sum -d float -r 0 --out "$T/all" >"$T/all.out" 2>"$T/all.err" ||
    fail "every nccl-tests flag: exit $? ($(cat "$T/all.err"))"
grep -q '^# nThread 1 nGpus 1 minBytes 8 maxBytes 128 step: 4(factor) warmup iters: 1 iters: 3 agg iters: 2 ' "$T/all.out" ||
    fail "-m 2 in the preamble"
for f in -p -G -C -x -I -K; do
    [ "$(grep -c "^# note: $f [0-9]*: " "$T/all.out")" = 1 ] || fail "one note for $f"
done
grep -q '^# blocking -z 3: a barrier after each -n iteration, outside the time$' "$T/all.out" || fail "-z 3 noted"
grep -Eq '^# memory: [0-9]+ bytes per rank \(send 136, receive 136, ' "$T/all.out" || fail "-M 1: 128 + 8 x -u 1 bytes"
[ "$(grep -Ec '^ +[0-9]+ +[0-9]+ +float +sum +-1 .* [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}$' "$T/all.out")" = 6 ] ||
    fail "-N 2 x 3 sizes, each row ending with -S's timestamp"
ok "every nccl-tests flag accepted; -N 2 prints 6 rows with timestamps; notes for the flags without meaning here"
assert_jq "$T/all/result.json" '[.phases[].name] == ["allreduce/mpi/8/cycle1","allreduce/mpi/32/cycle1","allreduce/mpi/128/cycle1","allreduce/mpi/8/cycle2","allreduce/mpi/32/cycle2","allreduce/mpi/128/cycle2"]' \
    "-N: one phase per cycle and size"
assert_jq "$T/all/result.json" '[.phases[].count] | all(. == 6)' "-m 2 -n 3: 6 operations timed per phase"
assert_jq "$T/all/result.json" '[.summary.collective_rows[] | .oop.wrong, .ip.wrong] | all(. == 0)' "-u 1: data still checks"

# Refused, once: mpirun starts 3 ranks, and one line reaches stderr.
for bad in "-g 2:--ngpus: 2 devices per rank" "-t 4:--nthreads: 4 threads per rank" "-D 1:--device_implementation: 1" \
    "-z 4:--blocking: 4 is not a mode" "-m 0:--agg_iters: 0 is out of range"; do
    flag=${bad%%:*} want=${bad#*:}
    set +e
    # shellcheck disable=SC2086 # "-g 2" is a flag and its value
    rb_mpirun 3 "$RB" coll allreduce -b 8 -e 8 $flag --out "$T/never" >"$T/bad.out" 2>"$T/bad.err"
    rc=$?
    set -e
    [ "$rc" = 2 ] || fail "$flag: exit $rc, expected 2"
    [ "$(grep -c "^railbench: " "$T/bad.err")" = 1 ] || fail "$flag: $(grep -c "^railbench: " "$T/bad.err") error lines: $(cat "$T/bad.err")"
    grep -q "^railbench: $want" "$T/bad.err" || fail "$flag: $(grep '^railbench:' "$T/bad.err")"
    [ ! -e "$T/never" ] || fail "$flag: a result directory was created"
done
ok "-g 2, -t 4, -D 1, -z 4, -m 0: exit 2 with one error line from 3 ranks"

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
