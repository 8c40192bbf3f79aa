#!/usr/bin/env bash
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
