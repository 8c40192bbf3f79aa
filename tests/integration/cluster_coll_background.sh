#!/usr/bin/env bash
# needs: netns root
# Cluster in a box: coll allreduce --background with MPI on a tbf-shaped rail0, the GET load first over mgmt0
# (separate networks), then over rail0 (one shared rail): the block's columns against result.json, ratio =
# busbw with the load / busbw alone, the load's bytes against its requests and the interface counters, and
# the shared rail lowering busbw where the separate network does not.
# Needs root (network namespaces). Runs its own cluster name and subnet (RB_TEST_CLUSTER_NAME/NET).
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" -eq 0 ] || fail "needs root: network namespaces, veths and sshd"
# shellcheck source=tests/cluster_lib.sh
. "$ROOT/tests/cluster_lib.sh"

# Ranks on client1 and client2, the object server on client3 (on its rail0 and its mgmt0 address).
assert_exit 0 "up --clients 3 --rails 1" cl up --clients 3 --rails 1 --net "$NET"
RAIL_URL=http://$NET.10.13:8080/d/
MGMT_URL=http://$NET.0.13:8080/d/

OBJ=131072
serve_on client3 64 $OBJ "$MGMT_URL"
# What client1 and client2 receive on rail0 (their reads from client3 and the all-reduce from the other rank)
# shaped at the switch to 100 Mbit/s (12.5 MB/s).
for dev in client1-r0 client2-r0; do
    ip netns exec "$NAME-fabric" tc qdisc replace dev "$dev" root tbf rate 100mbit burst 64kb latency 100ms
done

# The load is an open loop at 40 GETs/s per rank (2 x 5 MiB/s, 80 % of the shaped rail): a closed loop over
# the unshaped mgmt veths runs at 1-2 GiB/s, and on this 2-core box that starves the ranks' MPI progress so
# that the with-load pass took 45-130 s (measured; the same with `load get` in separate processes and a plain
# `coll`): the cause of the "hang" that reverted the first version (77fe219), which had no test here.
# bgrun URL OUT: coll allreduce --background, 2 ranks on 2 hosts, MPI over rail0; sets D_MGMT and D_RAIL to
# the bytes client1's and client2's mgmt0 and rail0 carried during the run.
bgrun() {
    local url=$1 out=$2 m0 r0
    m0=$(($(counter client1 mgmt0) + $(counter client2 mgmt0)))
    r0=$(($(counter client1 rail0) + $(counter client2 rail0)))
    timeout 120 "$CL" --name "$NAME" mpirun --net rails -np 2 --map-by node "$RB" coll allreduce -b 256K -e 1M -f 4 \
        -n 5 -w 1 --background "$url" --bg-objects 64 --bg-rate 40 --bg-alone 2s --out "$out" >"$out.txt" 2>&1 ||
        { tail -n 5 "$out.txt"; fail "coll --background $url failed or ran over 120 s"; }
    D_MGMT=$(($(counter client1 mgmt0) + $(counter client2 mgmt0) - m0))
    D_RAIL=$(($(counter client1 rail0) + $(counter client2 rail0) - r0))
}
B='.summary.background'
# check OUT: the block's rows against result.json, the ratios, the load's windows; prints the load's bytes.
check() {
    local out=$1 R=$1/result.json
    assert_jq "$R" "[$B.rows[].size_bytes] == [262144, 1048576]" "$(basename "$out"): a row per size"
    assert_jq "$R" "$B.rows | all(.busbw_gbps > 0 and .busbw_with_load_gbps > 0 and
        (.ratio - .busbw_with_load_gbps / .busbw_gbps | fabs) < 1e-9)" "$(basename "$out"): ratio = with / alone"
    # The text block prints the same figures (3 decimals).
    diff <(sed -n '/^# Background load/,/^# load alone/p' "$out.txt" | awk '/^# +[0-9]+ /{print $2, $3, $4, $5}') \
        <(jq -r "$B.rows[] | \"\\(.size_bytes) \\(.busbw_gbps) \\(.busbw_with_load_gbps) \\(.ratio)\"" "$R" |
            awk '{printf "%s %.3f %.3f %.3f\n", $1, $2, $3, $4}') >&2 ||
        fail "$(basename "$out"): the text block and result.json differ"
    ok "$(basename "$out"): text block = result.json rows"
    ok "$(basename "$out"): load windows $(jq -c "[$B.load_alone, $B.load_with_collective] | map({requests, errors, duration_s, bytes_per_s})" "$R")"
    # Bytes are the successes' (requests - errors) x 128 KiB. Alone the load makes no error; beside the collective
    # on a shared rail an open-loop send can fall due with every slot busy and is counted abandoned (2 of 235 seen).
    assert_jq "$R" "$B.load_alone.errors == 0 and $B.load_with_collective.errors <= $B.load_with_collective.requests / 10
        and ([$B.load_alone, $B.load_with_collective] | all(.requests > 0 and .duration_s >= 2
        and ((.bytes_per_s * .duration_s / $OBJ - (.requests - .errors)) | fabs) < 1e-6 * .requests))" \
        "$(basename "$out"): the load ran in both windows, bytes = successes x 128 KiB"
    # 80 GETs/s from the two ranks, +-25 %.
    band "$(basename "$out"): the open loop's GETs/s alone (80 set)" "$(jq "$B.load_alone | .requests / .duration_s" "$R")" 60 100
}
load_bytes() { jq "($B.load_alone.requests + $B.load_with_collective.requests) * $OBJ" "$1/result.json"; }
ratio() { jq ".summary.background.rows[] | select(.size_bytes == $2) | .ratio" "$1/result.json"; }

# ---------------------------------------------------------------- (a) the load over mgmt0, MPI on rail0
bgrun "$MGMT_URL" "$T/a"
check "$T/a"
LB=$(load_bytes "$T/a")
[ "$D_MGMT" -ge "$LB" ] || fail "separate networks: mgmt0 carried $D_MGMT bytes, the load counted $LB"
ok "separate networks: mgmt0 carried $D_MGMT bytes for the load's $LB"
RA=$(ratio "$T/a" 1048576)

# ---------------------------------------------------------------- (b) the load over rail0 with the all-reduce
# Measured busbw ratio at 1 MiB (2 ranks, this 2-core VM with another test run on it, 6 runs each): separate
# networks 0.928-0.981, one shared rail 0.397-0.826 (0.826 while the all-reduce alone was itself slowed by the
# other run). Where the bands are held, a shared-rail run that misses is run once more, and the second must hold.
for attempt in 1 2; do
    bgrun "$RAIL_URL" "$T/b"
    RB_=$(ratio "$T/b" 1048576)
    { [ "$attempt" = 2 ] || ! holding_bands || in_band "$RB_" - 0.85; } && break
    echo "one shared rail, run 1: busbw ratio at 1 MiB $RB_; once more"
    mv "$T/b" "$T/b-run1"
    mv "$T/b.txt" "$T/b-run1.txt"
done
check "$T/b"
LB=$(load_bytes "$T/b")
[ "$D_RAIL" -ge "$LB" ] && [ "$D_MGMT" -lt $((LB / 4)) ] ||
    fail "one shared rail: rail0 carried $D_RAIL, mgmt0 $D_MGMT bytes; the load counted $LB"
ok "one shared rail: rail0 carried $D_RAIL bytes for the load's $LB (mgmt0 $D_MGMT)"
band "one shared rail: busbw ratio at 1 MiB" "$RB_" - 0.85
band "separate networks: busbw ratio at 1 MiB" "$RA" 0.75 1.25

kill "$NGINX_PID" && wait "$NGINX_PID" 2>/dev/null || true
STATE=$(cl path state)
PIDS_UP=$(awk '$1 == "pid" {print $2, $3}' "$STATE/created")
assert_exit 0 "down" cl down
check_down "$STATE" "$PIDS_UP"
