#!/usr/bin/env bash
# needs: mpi
# railbench coll catches corrupted data end to end: one bit flipped in transit gives #wrong = 1, FAILED, exit 1.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

# MPI_Sendrecv wrapped through PMPI; it corrupts one received message on one rank.
mpicc -shared -fPIC -O2 -o "$T/flip.so" "$ROOT/tests/fault/pmpi_flip.c"

# ring allreduce on 2 ranks makes 2 MPI_Sendrecv per call (reduce-scatter, allgather). The out-of-place
# half runs: 1 untimed call (Sendrecv 1, 2), -n 1 timed (3, 4), -c 1 check (5, 6).
run_flip() { # NAME CALL
    local rc=0
    rb_mpirun 2 -x LD_PRELOAD="$T/flip.so" -x RB_FLIP_RANK=1 -x RB_FLIP_CALL="$2" \
        "$RB" coll allreduce --algo ring -b 64 -e 64 -n 1 -w 0 -c 1 --out "$T/$1" >"$T/$1.out" 2>"$T/$1.err" || rc=$?
    # A rank ended by a signal: what Open MPI and the ranks said, for the failure that follows.
    [ "$rc" -lt 128 ] || { echo "note: $1: mpirun exit $rc; its stderr:"; sed 's/^/    /' "$T/$1.err"; } >&2
    echo "$rc"
}

# Call 6 is the allgather of the checked call: rank 1 receives one bad element, nobody else.
rc=$(run_flip f6 6)
assert_eq "exit status with a corrupted element" 1 "$rc"
row=$(grep -v '^#' "$T/f6.out")
assert_eq "out-of-place #wrong" 1 "$(echo "$row" | awk '{print $9}')"
assert_eq "in-place #wrong" 0 "$(echo "$row" | awk '{print $13}')"
grep -q '^# Out of bounds values : 1 FAILED$' "$T/f6.out" || fail "closing line"
ok "closing line: 1 FAILED"
assert_jq "$T/f6/result.json" '.summary.wrong_total == 1' "wrong_total 1"
assert_jq "$T/f6/result.json" '.checks[] | select(.name == "wrong") | .passed == false' "failed check recorded"

# Call 5 is the reduce-scatter step: the bad partial sum reaches both ranks' output, 2 wrong in all.
rc=$(run_flip f5 5)
assert_eq "exit status" 1 "$rc"
assert_jq "$T/f5/result.json" '.summary.collective_rows[0] | .oop.wrong == 2 and .ip.wrong == 0' \
    "a corrupted partial sum is counted on both ranks"

# Call 3 is timed, not checked: the check runs on fresh data and passes.
rc=$(run_flip f3 3)
assert_eq "exit status when only a timed call is corrupted" 0 "$rc"
assert_jq "$T/f3/result.json" '.summary.wrong_total == 0' "timed iterations are not what is checked"

# A rank killed (kill -9) mid-sweep: mpirun sends the others SIGCONT, SIGTERM 1 s later, SIGKILL 1 s after that.
# Rank 0, held inside a collective that waits for the dead rank, still writes the record within that second: the
# rows done, rank 1 named, exit 3 (mpirun itself exits 137, the status of the rank that was killed).
mpirun_running 2 "$T/k9" "$RB" coll allreduce -b 1K -e 4M -f 4 -n 200 -N 0 --out "$T/k9"
R1=$(rank_pid "$MP" 1)
[ -n "$R1" ] || fail "no rank 1 under mpirun $MP"
kill -9 "$R1"
wait_bounded "$MP" 30
assert_eq "mpirun's exit status after kill -9 of a rank" 137 "$WAIT_RC"
[ -f "$T/k9/result.json" ] || { cat "$T/run.err" >&2; fail "kill -9 of rank 1: no result.json"; }
assert_jq "$T/k9/result.json" ".lost_ranks == [{\"rank\": 1, \"pid\": $R1, \"host\": \"$(hostname)\", \"state\": \"gone\"}]" \
    "the dead rank named: rank 1, pid $R1, gone"
assert_jq "$T/k9/result.json" '.exit_status == 3 and (.checks[] | select(.name == "ranks") | .passed == false)' \
    "exit 3 recorded, the ranks check failed"
printed=$(grep -v '^#' "$T/run.out" | awk 'NF {print $1}' | paste -sd, -)
kept=$(jq -r '[.summary.collective_rows[].size_bytes] | map(tostring) | join(",")' "$T/k9/result.json")
assert_eq "rows kept = rows printed" "$printed" "$kept"
grep -q "^outcome: .*rank 1 (pid $R1 on .*, gone).*(exit 3)$" "$T/run.err" || { cat "$T/run.err" >&2; fail "no outcome line naming rank 1"; }
ok "$(grep '^outcome:' "$T/run.err")"

# A rank stopped (SIGSTOP) mid-sweep: nothing tells mpirun; -T 3 bounds each operation, and rank 0 names the
# stopped rank when its operation passes the bound (exit 3; mpirun then ends every rank, the stopped one too).
mpirun_running 2 "$T/st" "$RB" coll allreduce -b 1K -e 4M -f 4 -n 200 -N 0 -T 3 --out "$T/st"
stop_rank 1 30
assert_eq "mpirun's exit status after a rank stopped" 3 "$WAIT_RC"
assert_jq "$T/st/result.json" ".lost_ranks == [{\"rank\": 1, \"pid\": $R_PID, \"host\": \"$(hostname)\", \"state\": \"stopped\"}] and .exit_status == 3" \
    "the stopped rank named: rank 1, pid $R_PID, stopped"
[ "$TOOK" -le 10 ] || fail "a stopped rank held the run ${TOOK}s (-T 3)"
ok "a stopped rank ended the run after ${TOOK}s: $(grep '^outcome:' "$T/run.err")"
