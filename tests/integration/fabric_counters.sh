#!/usr/bin/env bash
# needs: mpi
# railbench fabric counters: live disk/NIC rates while we write known bytes with O_DIRECT and send over loopback.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

# Singleton run while dd writes with O_DIRECT: the disk holding $T must show writes. The test makes them itself,
# inside the window: from the first interval line (the phase is running) until result.json (it has ended), 16 MiB
# at a time with fsync, so neither a slow start on a loaded host nor a quiet disk elsewhere decides the outcome.
dev=$(df --output=source "$T" | tail -n1)
bg "$RB" fabric counters --duration 3s --interval 500ms --out "$T/r1" --quiet
rb=$LAST_PID
for _ in $(seq 300); do
    [ -s "$T/r1/intervals.jsonl" ] && break
    sleep 0.1
done
[ -s "$T/r1/intervals.jsonl" ] || fail "fabric counters wrote no interval line in 30 s"
mib=0
while [ ! -s "$T/r1/result.json" ] && [ "$mib" -lt 4096 ]; do
    dd if=/dev/zero of="$T/blob" bs=1M count=16 oflag=direct conv=fsync status=none
    mib=$((mib + 16))
done
wait "$rb"
ok "dd wrote $mib MiB during the run"
R=$T/r1/result.json
assert_jq "$R" '.phases[0].counters | length == 1' "one host"
assert_jq "$R" '.phases[0].duration_s >= 2.9 and .phases[0].duration_s < 4' "ran for --duration"
assert_jq "$R" '[.phases[0].counters[0].disk[].write_bytes_per_s] | add > 0' "disk writes seen ($dev)"
lines=$(jq -s 'map(select(.hosts)) | length' "$T/r1/intervals.jsonl")
[ "$lines" -ge 4 ] || fail "expected >= 4 interval lines, got $lines"
ok "$lines interval lines"

# Fixture tree: the IB counters are 4-byte words, so 1e9 words/s appears as 4e9 B/s... over a static tree, 0.
assert_exit 0 "fixture root" "$RB" fabric counters --duration 1s --interval 500ms --root "$ROOT/tests/fixtures/counters/t0" --out "$T/r2" --quiet
assert_jq "$T/r2/result.json" '.phases[0].counters[0].ib | length >= 1' "IB port read from the fixture tree"

# Under mpirun -np 2 on one host: one host entry (local rank 0 samples), two ranks.
rb_mpirun 2 "$RB" fabric counters --duration 1s --interval 500ms --out "$T/r3" --quiet
assert_jq "$T/r3/result.json" '.mpi.size == 2 and (.phases[0].counters | length) == 1 and .hosts[0].ranks == 2' "two ranks, one host"

# Bad input.
assert_exit 2 "bad duration" "$RB" fabric counters --duration 10parsecs
assert_stderr_line 'duration'
assert_exit 3 "missing root" "$RB" fabric counters --duration 1s --root "$T/nope" --out "$T/r4"
