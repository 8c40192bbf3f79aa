#!/usr/bin/env bash
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
