#!/usr/bin/env bash
# railbench coll stops at the next row on SIGINT to mpirun and still writes its results.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

# A sweep that would take hours: one byte more per row.
bg "${MPIRUN[@]}" -np 2 "$RB" coll allreduce -b 4 -i 4 -e 1M -n 2 -w 0 --out "$T/r" --quiet
PID=$LAST_PID
for _ in $(seq 100); do [ -s "$T/r/intervals.jsonl" ] && break; sleep 0.1; done
[ -s "$T/r/intervals.jsonl" ] || fail "no row written"
sleep 0.5
kill -INT "$PID"
rc=0; wait "$PID" || rc=$?
[ -f "$T/r/result.json" ] || fail "no result.json after SIGINT (exit $rc)"
assert_jq "$T/r/result.json" '.checks[] | select(.name == "completed") | .passed == false' "interrupted run recorded"
assert_jq "$T/r/result.json" '(.summary.collective_rows | length) > 0 and .summary.collective_rows[-1].size_bytes < 1048576' \
    "rows measured before the signal kept, sweep cut short"
assert_jq "$T/r/result.json" '(.phases | length) == (.summary.collective_rows | length)' "a phase per kept row"
[ "$rc" != 0 ] || fail "an interrupted run must not exit 0"
ok "exit status after SIGINT: $rc"
