#!/usr/bin/env bash
# needs: mpi
# railbench coll stops at the next row on SIGINT to mpirun and still writes its results.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
# mpirun's SIGKILL comes odls_base_sigkill_timeout after its SIGTERM to the ranks (1 s by default); a full run saw a
# 2-rank sweep with three other tests beside it leave no record within that second. docs/many-hosts.md tells a
# loaded host's users to raise it; so does this test, as loader_signal does.
export OMPI_MCA_odls_base_sigkill_timeout=2

# A sweep that would take hours: one byte more per row.
bg "${MPIRUN[@]}" -np 2 "$RB" coll allreduce -b 4 -i 4 -e 1M -n 2 -w 0 --out "$T/r" --quiet
PID=$LAST_PID
for _ in $(seq 100); do [ -s "$T/r/intervals.jsonl" ] && break; sleep 0.1; done
[ -s "$T/r/intervals.jsonl" ] || fail "no row written"
sleep 0.5
kill -INT "$PID"
wait_bounded "$PID" 60; rc=$WAIT_RC
[ -f "$T/r/result.json" ] || fail "no result.json after SIGINT (exit $rc)"
assert_jq "$T/r/result.json" '.checks[] | select(.name == "completed") | .passed == false' "interrupted run recorded"
assert_jq "$T/r/result.json" '(.summary.collective_rows | length) > 0 and .summary.collective_rows[-1].size_bytes < 1048576' \
    "rows measured before the signal kept, sweep cut short"
assert_jq "$T/r/result.json" '(.phases | length) == (.summary.collective_rows | length)' "a phase per kept row"
[ "$rc" != 0 ] || fail "an interrupted run must not exit 0"
ok "exit status after SIGINT: $rc"

# The rows a signal leaves: result.json's rows are the rows printed on stdout, the cut-short row (if any) is only
# summary.partial_row, the outcome line is printed. Under mpirun a rank gets SIGCONT at once and SIGTERM 2 s after
# mpirun got SIGINT, SIGTERM or SIGHUP, then SIGKILL 2 s later (odls_base_sigkill_timeout, above): the record must be on
# disk by then (mpirun ends about 4 s after the signal). These sweeps have rows far longer than a second (-n 200 up
# to 4 MiB), and repeat until the signal (-N 0): on an idle machine one sweep can end before mpirun passes it on.
check_cut() { # DIR WHAT RC
    local dir=$1 what=$2 rc=$3 printed kept
    [ -f "$dir/result.json" ] || { cat "$T/run.err" >&2; fail "$what: no result.json (exit $rc)"; }
    [ -f "$dir/table.md" ] || fail "$what: no table.md"
    assert_jq "$dir/result.json" '.checks[] | select(.name == "completed") | .passed == false' "$what: interrupted recorded"
    printed=$(grep -v '^#' "$T/run.out" | awk 'NF {print $1}' | paste -sd, -)
    kept=$(jq -r '[.summary.collective_rows[].size_bytes] | map(tostring) | join(",")' "$dir/result.json")
    # mpirun stops forwarding the ranks' stdout once it has the signal, and the ranks get it 1 s later: rows that
    # end in that second are kept (and in table.md) but may never reach mpirun's stdout. So what mpirun printed is
    # the first rows kept, and every kept row is in table.md.
    [[ "$kept," == "$printed,"* ]] || fail "$what: rows printed ($printed) are not the first rows kept ($kept)"
    ok "$what: the $(awk -F, '{print NF}' <<<"$printed") rows printed are the first of the $(awk -F, '{print NF}' <<<"$kept") kept"
    assert_eq "$what: rows in table.md = rows kept" "$kept" \
        "$(grep -v '^#' "$dir/table.md" | awk 'NF && $1 ~ /^[0-9]+$/ {print $1}' | paste -sd, -)"
    assert_jq "$dir/result.json" '(.phases | length) == (.summary.collective_rows | length)' "$what: a phase per kept row"
    assert_jq "$dir/result.json" '.summary.partial_row == null or (.summary.partial_row.phase as $p | (any(.phases[]; .name == $p) | not)
        and ([.summary.partial_row.oop, .summary.partial_row.ip] | map(select(. != null) | .iterations_timed) | all(. <= 200))
        and ((.summary.partial_row.ip == null) or .summary.partial_row.ip.iterations_timed < 200))' "$what: the cut-short row marked, not a row"
    # Exit 1; or, on a machine too busy for the ranks to stop before mpirun's SIGKILL is due, rank 0's watchdog
    # writes the record first and says so (exit 3).
    grep -Eq '^outcome: interrupted by SIG(INT|TERM|HUP) .*\(exit 1\)$' "$T/run.err" ||
        grep -Eq '^outcome: interrupted by SIG(INT|TERM|HUP) .*did not return .* after a signal: every rank is alive on this host, too slow to stop .*\(exit 3\)$' "$T/run.err" ||
        { cat "$T/run.err" >&2; fail "$what: no outcome line"; }
    ok "$what: $(grep '^outcome:' "$T/run.err")"
    [ "$rc" != 0 ] || fail "$what: an interrupted run must not exit 0"
}

for np in 2 4; do
    for how in term-mpirun int-group; do
        d=$T/$how-$np
        mpirun_running "$np" "$d" "$RB" coll allreduce -b 1K -e 4M -f 4 -n 200 -N 0 --out "$d"
        sleep 1
        signal_mpirun "$how"
        check_cut "$d" "$how, $np ranks" "$WAIT_RC"
        [ "$TOOK" -lt 7000 ] || fail "$how-$np: the run took ${TOOK} ms to end after the signal"
        ok "$how, $np ranks: ended ${TOOK} ms after the signal, mpirun exit $WAIT_RC"
    done
done

# -N 0 (until a signal) with SIGHUP to mpirun (a closed terminal).
mpirun_running 2 "$T/hup" "$RB" coll allreduce -b 64K -e 64K -n 50 -N 0 --out "$T/hup"
sleep 1
signal_mpirun hup-mpirun
check_cut "$T/hup" "-N 0, SIGHUP to mpirun" "$WAIT_RC"
