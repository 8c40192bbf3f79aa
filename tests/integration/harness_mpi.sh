#!/usr/bin/env bash
# needs: mpi
# Harness under mpirun -np 3: interval reduces sum every rank's values; a phase's CPU is its ranks' own, summed;
# SIGINT still writes result.json.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
PROG=$ROOT/build/tests/mpi_harness

# 1. Totals: rank r records (r+1)*1000 known values; rank 0 compares the merged histogram bucket by bucket.
rb_mpirun 3 "$PROG" --out "$T/r1" --interval 100ms --quiet
R=$T/r1/result.json
assert_jq "$R" '.schema == "railbench.result/v1"' "schema"
assert_jq "$R" '.mpi.size == 3 and .mpi.enabled' "mpi size 3 recorded"
assert_jq "$R" '.checks[] | select(.name=="totals") | .passed' "rank 0 totals equal the sum of the ranks' values"
assert_jq "$R" '.phases[0].count == 6000 and .phases[0].bytes == 60000' "phase count 6000, bytes 60000"
assert_jq "$R" '.phases[0].errors.http_4xx == 60 and .phases[0].errors.total == 60' "errors by class"
assert_jq "$R" '.phases[0].latency_hist.count == 6000' "histogram in the phase record"
sum=$(jq -s 'map(.count) | add' "$T/r1/intervals.jsonl")
assert_eq "sum of interval counts" 6000 "$sum"

# 1b. The phase's CPU (cpu_s): summed over the ranks, and only the phase's. Each rank spends 200 ms of CPU in the
# phase; alone, a rank that also spends 500 ms before it still records under 0.5 s (the 500 ms are not the phase's).
rb_mpirun 3 "$PROG" --out "$T/c3" --burn-ms 200 --quiet
assert_jq "$T/c3/result.json" '.phases[0].cpu_s >= 0.6' "cpu_s sums the 3 ranks' 200 ms of CPU in the phase"
rb_mpirun 1 "$PROG" --out "$T/c1" --burn-ms 200 --burn-before-ms 500 --quiet
assert_jq "$T/c1/result.json" '.phases[0].cpu_s >= 0.2 and .phases[0].cpu_s < 0.5' \
    "cpu_s counts the phase's 200 ms and not the 500 ms spent before it"

# 2. SIGINT to mpirun mid-run: ranks stop at the next tick and rank 0 still writes the result.
bg "${MPIRUN[@]}" -np 3 "$PROG" --out "$T/r2" --interval 200ms --forever --per-collect 10 --quiet
MP=$LAST_PID
for _ in $(seq 100); do [ -s "$T/r2/intervals.jsonl" ] && break; sleep 0.1; done
[ -s "$T/r2/intervals.jsonl" ] || fail "no interval written"
sleep 0.5
kill -INT "$MP"
wait_bounded "$MP" 60; rc=$WAIT_RC
[ -f "$T/r2/result.json" ] || fail "no result.json after SIGINT (mpirun exit $rc)"
assert_jq "$T/r2/result.json" '.checks[] | select(.name=="completed") | .passed == false' "interrupted run recorded as such"
assert_jq "$T/r2/result.json" '.phases[0].count > 0 and .phases[0].interrupted' "measured values kept"
ok "mpirun exit status after SIGINT: $rc"

# 3. SIGHUP to mpirun, SIGINT to its process group (a terminal's Ctrl-C): every rank stops at one tick; the record
# counts what every interval line counted, and the outcome line is printed.
for how in hup-mpirun int-group; do
    mpirun_running 3 "$T/$how" "$PROG" --out "$T/$how" --interval 200ms --forever --per-collect 10
    sleep 0.5
    signal_mpirun "$how"
    [ -f "$T/$how/result.json" ] || { cat "$T/run.err" >&2; fail "$how: no result.json (mpirun exit $WAIT_RC)"; }
    assert_jq "$T/$how/result.json" '.phases[0].interrupted and (.checks[] | select(.name == "completed") | .passed == false)' \
        "$how: interrupted recorded"
    assert_eq "$how: the phase's count = the intervals' sum" "$(jq -s 'map(.count) | add' "$T/$how/intervals.jsonl")" \
        "$(jq '.phases[0].count' "$T/$how/result.json")"
    grep -q '^outcome: interrupted by SIGTERM during phase' "$T/run.err" || { cat "$T/run.err" >&2; fail "$how: no outcome line"; }
    ok "$how: ended ${TOOK} ms after the signal, mpirun exit $WAIT_RC"
done

# 4. A rank stopped (SIGSTOP): the others wait for its tick 10 s, then rank 0 names it (exit 3).
mpirun_running 3 "$T/stop" "$PROG" --out "$T/stop" --interval 200ms --forever --per-collect 10
stop_rank 2 40
assert_eq "mpirun's exit status with rank 2 stopped" 3 "$WAIT_RC"
assert_jq "$T/stop/result.json" ".lost_ranks == [{\"rank\": 2, \"pid\": $R_PID, \"host\": \"$(hostname)\", \"state\": \"stopped\"}]" \
    "rank 2 named: pid $R_PID, stopped"
[ "$TOOK" -le 15 ] || fail "a stopped rank held the run ${TOOK}s (10 s rank timeout)"
ok "rank 2 stopped: the run ended ${TOOK}s later"

# 5. Rank 0's record watchdog: rank 0 waits in a barrier that rank 1 (sleeping, alive) has not reached. SIGTERM to
#    rank 0 alone: the barrier cannot return, so 0.5 s later the watchdog writes the record (every rank alive on this
#    host: too slow to stop, exit 1) instead of mpirun's SIGKILL taking it.
stalled_barrier() { # DIR: starts the run; returns once its phase is over and rank 0 waits in the barrier
    bg_mpirun_session 2 "$PROG" --out "$1" --per-collect 5000 --interval 100ms --stall-rank 1 --quiet
    MP=$LAST_PID
    R0=$(rank_pid "$MP" 0) R1=$(rank_pid "$MP" 1)
    [ -n "$R0" ] && [ -n "$R1" ] || fail "no ranks under mpirun $MP"
    for _ in $(seq 100); do [ -s "$1/intervals.jsonl" ] && break; sleep 0.1; done
    [ -s "$1/intervals.jsonl" ] || fail "$1: no interval written"
    sleep 1
}
stalled_barrier "$T/wd"
t0=$(date +%s%N)
kill -TERM "$R0"
# The phase ended whole, so its record is not written before the end: result.json appearing is the watchdog's.
for _ in $(seq 100); do [ -s "$T/wd/result.json" ] && break; sleep 0.02; done
took=$((($(date +%s%N) - t0) / 1000000))
wait_bounded "$MP" 30
assert_eq "rank 0 in a barrier after SIGTERM: mpirun's exit status" 1 "$WAIT_RC"
assert_jq "$T/wd/result.json" '.exit_status == 1 and .lost_ranks == [] and
    (.checks[] | select(.name == "ranks") | .passed == false and (.detail | test("an MPI call did not return .* every rank is alive on this host, too slow to stop")))
    and (.checks[] | select(.name == "completed") | .detail == "interrupted by SIGTERM; the results cover what ran before it")
    and .phases[0].count == 3000' "the watchdog's record: every rank alive, too slow to stop, the phase kept"
grep -q '^outcome: interrupted by SIGTERM .*too slow to stop.*(exit 1)$' "$T/run.err" || { cat "$T/run.err" >&2; fail "no outcome line"; }
[ "$took" -lt 1000 ] || fail "the watchdog's record came ${took} ms after SIGTERM (mpirun's SIGKILL comes at 1 s)"
ok "rank 0 stuck in a barrier after SIGTERM: record in ${took} ms: $(grep '^outcome:' "$T/run.err" | cut -c1-120)..."

# 6. The same barrier, rank 1 killed (kill -9): mpirun sends rank 0 SIGTERM, and its watchdog names rank 1 gone (exit 3).
stalled_barrier "$T/wd9"
kill -9 "$R1"
wait_bounded "$MP" 30
assert_eq "rank 1 killed while rank 0 waits in a barrier: mpirun's exit status" 137 "$WAIT_RC"
assert_jq "$T/wd9/result.json" ".exit_status == 3 and .lost_ranks == [{\"rank\": 1, \"pid\": $R1, \"host\": \"$(hostname)\", \"state\": \"gone\"}]" \
    "the watchdog's record names rank 1, gone"
grep -q "^outcome: interrupted by SIGTERM .*rank 1 (pid $R1 on .*, gone) did not take part: an MPI call did not return.*(exit 3)$" \
    "$T/run.err" || { cat "$T/run.err" >&2; fail "no outcome line naming rank 1"; }
ok "rank 1 killed during a barrier: $(grep '^outcome:' "$T/run.err" | cut -c1-120)..."
