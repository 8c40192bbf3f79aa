#!/usr/bin/env bash
# needs: mpi
# railbench coll --background under mpirun -np 2: the sweep again without and with an object GET load on every
# rank; per size the busbw both ways and their ratio, the load's own throughput and p99 alone and with the
# collective, its requests against nginx's access log, the open-loop rate, bad input.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
# The access log names every object read.
serve_objects 40 65536 "log_format obj '\$uri';" "access_log $T/web/logs/access.log obj;"
URL=http://127.0.0.1:$PORT/d/

# 1. Closed loop, 4 in flight per rank, 1 s alone; three sizes.
rb_mpirun 2 "$RB" coll allreduce -b 64K -e 1M -f 4 -n 5 -w 1 --background "$URL" --bg-objects 40 --bg-alone 1s \
    --out "$T/c1" >"$T/c1.txt" 2>&1 || { tail -n 5 "$T/c1.txt"; fail "coll --background failed"; }
R=$T/c1/result.json
B='.summary.background'
assert_jq "$R" "[$B.rows[].size_bytes] == [65536, 262144, 1048576]" "a row per size"
assert_jq "$R" "$B.rows | all(.busbw_gbps > 0 and .busbw_with_load_gbps > 0 and (.ratio - .busbw_with_load_gbps / .busbw_gbps | fabs) < 1e-9)" \
    "ratio = busbw with the load / busbw alone"
W="[$B.load_alone, $B.load_with_collective]"
assert_jq "$R" "$W | all(.requests > 0 and .errors == 0 and .duration_s >= 1 and .latency_p99_ns > 0 and
    ((.bytes_per_s * .duration_s / 65536 - .requests) | fabs) < 1e-6 * .requests)" \
    "the load ran in both windows, each at least --bg-alone long, no errors, a p99, bytes/s x duration = requests x 64 KiB"
logged=$(grep -c '^/d/obj-' "$T/web/logs/access.log")
counted=$(jq "$B.load_alone.requests + $B.load_with_collective.requests" "$R")
# Requests in flight when the load stopped (at most 2 ranks x 4) reach nginx but no window.
[ "$logged" -ge "$counted" ] && [ "$logged" -le $((counted + 8)) ] ||
    fail "nginx logged $logged object GETs, the windows counted $counted (+ at most 8 in flight at the stop)"
ok "nginx logged $logged GETs for $counted counted"
assert_eq "text block rows" 3 "$(sed -n '/^# Background load/,/^# load alone/p' "$T/c1.txt" | grep -Ec '^# +[0-9]+ ')"
grep -q '^# Out of bounds values : 0 OK$' "$T/c1.txt" || fail "nccl-tests' closing lines missing after the block"
grep -q '^# load alone: [0-9.]* MiB/s, p99 ' "$T/c1.txt" || fail "no load line"
ok "text: the block, then nccl-tests' closing lines"

# 2. Open loop: 100 requests/s per rank for 1 s alone, two ranks.
: >"$T/web/logs/access.log"
rb_mpirun 2 "$RB" coll allreduce -b 64K -e 64K -n 5 -w 1 --background "$URL" --bg-objects 40 --bg-rate 100 \
    --bg-alone 1s --out "$T/c2" --quiet >/dev/null 2>&1 || fail "coll --background --bg-rate failed"
# 200 sends per second from the two ranks: the window of about 1 s holds about 200, +-25 %.
assert_jq "$T/c2/result.json" "$B.load_alone | (.requests / .duration_s) as \$r | \$r > 150 and \$r < 250" \
    "open loop: about 200 requests/s over both ranks"

# 3. Bad input: one line, exit 2.
assert_exit 2 "--background without --bg-objects" rb_mpirun 2 "$RB" coll allreduce -b 1K -e 1K --background "$URL"
grep -c -- '--background: give --bg-objects N' "$T/stderr" | grep -qx 1 || { cat "$T/stderr"; fail "expected the message once"; }
assert_exit 2 "--background with two algorithms" "$RB" coll allreduce -b 1K -e 1K --algo mpi,ring --background "$URL" \
    --bg-objects 4
assert_stderr_line "^railbench: error: --background: give one collective, one --algo"
