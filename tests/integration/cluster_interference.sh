#!/usr/bin/env bash
# needs: netns root
# Cluster in a box: load train --overlap with the reads and the all-reduce on one tbf-shaped rail, then on separate
# networks (reads over mgmt); slowdown factors, the bytes each interface carried, and step time against its parts.
# Needs root (network namespaces). Runs its own cluster name and subnet (RB_TEST_CLUSTER_NAME/NET).
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" -eq 0 ] || fail "needs root: network namespaces, veths and sshd"
# shellcheck source=tests/cluster_lib.sh
. "$ROOT/tests/cluster_lib.sh"

# Three clients with one rail: ranks on client1 and client2, the object server on client3 (reachable on its
# rail0 address and on its mgmt0 address, so one server serves both routings).
assert_exit 0 "up --clients 3 --rails 1" cl up --clients 3 --rails 1 --net "$NET"
STATE=$(cl path state)
RAIL_URL=http://$NET.10.13:8080/d/
MGMT_URL=http://$NET.0.13:8080/d/

# 320 objects of 128 KiB: 2 ranks x 10 steps x batch 16 read each object once per phase.
serve_on client3 320 131072 "$MGMT_URL"

# The rail shaped where both kinds of traffic meet: the switch ports towards client1 and client2 (what each
# receives: its reads from client3 and the all-reduce from the other rank) at 100 Mbit/s (12.5 MB/s).
for dev in client1-r0 client2-r0; do
    ip netns exec "$NAME-fabric" tc qdisc replace dev "$dev" root tbf rate 100mbit burst 64kb latency 100ms
done
read -r code size <<<"$(cl exec client1 curl -s -o /dev/null -w '%{http_code} %{size_download}' "${RAIL_URL}obj-00000000")"
assert_eq "a 128 KiB object from client3 over rail0" "200 131072" "$code $size"

# train URL OUT [ARGS...]: 2 ranks (one on client1, one on client2), MPI on the rails; batch 16 x 128 KiB (2 MiB,
# 0.17 s at the rail's rate) read one request at a time (each request's round trips feel the all-reduce's queue;
# with 4 x 512 KiB the one long HTTP transfer kept most of the link and the storage factor ranged 1.00-1.33), 150 ms of compute, an all-reduce of 1 MiB (OpenMPI's
# 2-rank all-reduce moves it one way, then back: about 0.15 s on the shaped rail).
train() {
    local url=$1 out=$2
    shift 2
    mkdir -p "$out.prom"
    cl mpirun --net rails -np 2 --map-by node "$RB" load train "$url" --objects 320 -b 16 -c 1 --compute-time 150ms \
        --grad-bytes 1MiB --steps 10 --out "$out" --quiet --prom-textfile "$out.prom" "$@" >"$out.txt" 2>"$out.err" ||
        { tail -n 5 "$out.err"; fail "load train $* on $url failed"; }
}
# bytes OUT PHASE HOST IFACE: rx + tx bytes the interface carried in that phase of the interference record.
bytes() {
    jq -r --arg p "$2" --arg h "$NAME-$3" --arg i "$4" \
        '.summary.interference[$p].net_bytes[] | select(.host == $h and .interface == $i) | .rx_bytes + .tx_bytes' \
        "$1/result.json"
}
MiB=1048576
# What a rank reads per phase: 10 steps x 16 objects x 128 KiB = 20 MiB; what its all-reduces move: 10 x 1 MiB
# out and 10 x 1 MiB in = 20 MiB. Counted at interface level they come with headers, so at least these.
READ=$((20 * MiB)) AR=$((20 * MiB))

# ---------------------------------------------------------------- (a) one shaped rail for both

# Measured on this 2-core VM (load 3-4): storage 1.12-1.31, collective 1.60-1.66 (7 runs). The reads lose less
# than the all-reduce: HTTP takes the larger share of the shared 12.5 MB/s from MPI's TCP connection. A build on
# the same two cores during the reads-alone phase only (not during the overlapped one) slows the baseline: one run
# so disturbed gave 0.85. So where the bands are held, a run whose factors miss is run once more, and the second
# must hold them.
I='.summary.interference'
for attempt in 1 2; do
    train "$RAIL_URL" "$T/a" --overlap
    fs=$(jq "$I.slowdown.storage" "$T/a/result.json") fc=$(jq "$I.slowdown.collective" "$T/a/result.json")
    { [ "$attempt" = 2 ] || ! holding_bands || { in_band "$fs" 1.05 - && in_band "$fc" 1.2 -; }; } && break
    echo "one shared rail, run 1: storage slowdown $fs, collective $fc; once more"
    mv "$T/a" "$T/a-run1"
    rm -rf "$T/a.prom"
done
band "one shared rail: storage slowdown" "$fs" 1.05 -
band "one shared rail: collective slowdown" "$fc" 1.2 -
R=$T/a/result.json
assert_jq "$R" '[.phases[].name] == ["storage-alone", "collective-alone", "overlapped"]' "three phases, baselines first"
assert_jq "$R" '.checks[] | select(.name == "interference") | .passed' "check interference passed"
assert_jq "$R" "$I | [.storage_alone, .overlapped] | all(.step.fetches == 20 and .step.fetch_bytes == 320 * 131072)" \
    "storage alone and overlapped: 20 batches, 40 MiB read"
assert_jq "$R" "$I | .collective_alone.step | .fetches == 0 and .allreduces == 18 and .steps == 18" \
    "collective alone: no reads, 18 all-reduces timed (9 steps after the first per rank)"
assert_jq "$R" "$I.overlapped.step.allreduces == 18" "overlapped: 18 all-reduces timed"
assert_jq "$R" "$I.au_pct | (.cost_points - (.halves_alone - .overlapped) | fabs) < 1e-9" \
    "AU cost = AU of the slower half alone - AU overlapped"
band "one shared rail: AU cost in points" "$(jq "$I.au_pct.cost_points" "$R")" 5 -
for h in client1 client2; do
    s=$(bytes "$T/a" storage_alone "$h" rail0) c=$(bytes "$T/a" collective_alone "$h" rail0)
    o=$(bytes "$T/a" overlapped "$h" rail0) m=$(bytes "$T/a" overlapped "$h" mgmt0)
    [ "$s" -ge "$READ" ] && [ "$c" -ge "$AR" ] && [ "$o" -ge $((READ + AR)) ] ||
        fail "$h rail0 carried $s (reads alone), $c (all-reduce alone), $o (overlapped) bytes; expected >= $READ, $AR, $((READ + AR))"
    [ "$m" -lt "$MiB" ] || fail "$h mgmt0 carried $m bytes in the overlapped phase; the reads were to go over rail0"
    ok "$h rail0: $s B reads alone, $c B all-reduce alone, $o B both (mgmt0 $m B)"
done
grep -q '^## Interference' "$T/a/table.md" || fail "table.md has no interference section"
grep -Eq "^\| $NAME-client1 \| rail0 \| [0-9.]+ MiB \| [0-9.]+ MiB \| [0-9.]+ MiB \|" "$T/a/table.md" ||
    fail "table.md does not list client1's rail0 bytes per phase"
P=$T/a.prom/railbench.prom
gs=$(awk '/^railbench_interference_slowdown\{side="storage",run="[^"]*"\}/ {print $2}' "$P")
gc=$(awk '/^railbench_interference_slowdown\{side="collective",run="[^"]*"\}/ {print $2}' "$P")
awk -v a="$gs" -v b="$fs" -v c="$gc" -v d="$fc" 'BEGIN { exit !(a != "" && c != "" && (a - b) ^ 2 < 1e-12 && (c - d) ^ 2 < 1e-12) }' ||
    fail "gauges railbench_interference_slowdown storage '$gs' collective '$gc', result.json $fs and $fc"
ok "Prometheus gauges railbench_interference_slowdown{side=storage|collective} = the factors"

# ---------------------------------------------------------------- (b) reads over mgmt, the all-reduce on the rail

train "$MGMT_URL" "$T/b" --overlap
R=$T/b/result.json
fc=$(jq "$I.slowdown.collective" "$R") fs=$(jq "$I.slowdown.storage" "$R")
# Measured (11 runs with 512 KiB objects, 6 with these): collective 0.984-1.11. The storage factor is not held to a band here: reads over the
# unshaped mgmt veths run at memory speed, so it measures only how the two cores were shared (0.58-1.60 seen).
ok "separate networks: collective slowdown ${fc}, storage ${fs}"
band "separate networks: collective slowdown" "$fc" 0.85 1.15
for h in client1 client2; do
    sm=$(bytes "$T/b" storage_alone "$h" mgmt0) sr=$(bytes "$T/b" storage_alone "$h" rail0)
    cm=$(bytes "$T/b" collective_alone "$h" mgmt0) cr=$(bytes "$T/b" collective_alone "$h" rail0)
    om=$(bytes "$T/b" overlapped "$h" mgmt0) or=$(bytes "$T/b" overlapped "$h" rail0)
    # rail0 also carries the harness's interval reductions (well under 1 MiB), mgmt0 mpirun's control messages.
    [ "$sm" -ge "$READ" ] && [ "$sr" -lt "$MiB" ] || fail "$h reads alone: mgmt0 $sm, rail0 $sr bytes"
    [ "$cr" -ge "$AR" ] && [ "$cm" -lt "$MiB" ] || fail "$h all-reduce alone: rail0 $cr, mgmt0 $cm bytes"
    [ "$om" -ge "$READ" ] && [ "$or" -ge "$AR" ] && [ "$or" -lt $((AR + READ / 2)) ] ||
        fail "$h overlapped: mgmt0 $om, rail0 $or bytes"
    ok "$h: reads on mgmt0 ($sm B alone, $om B overlapped), all-reduce on rail0 ($cr B alone, $or B overlapped)"
done

# ---------------------------------------------------------------- (c) step time against the sum of its parts

# Without --overlap (reads over mgmt): data wait, compute, then the blocking all-reduce, one after the other.
train "$MGMT_URL" "$T/c"
R=$T/c/result.json
assert_jq "$R" '.summary.interference == null and ([.phases[].name] == ["epoch-1"])' "without --overlap: one epoch"
st='.summary.train_epochs[0].step_time'
assert_jq "$R" "$st | .allreduces == 18 and .steps == 18" "serial: 18 steps and 18 all-reduces timed"
# The parts are read from the same clock as the step; slack: 1 % and 1 ms for the clock reads between them.
assert_jq "$R" "$st | (.step_ns - (.data_wait_ns + .compute_ns + .allreduce_ns) | fabs) < 0.01 * .step_ns + 1e6" \
    "serial: step time = data wait + compute + all-reduce"
ratio=$(jq "$I.overlapped.step | .step_ns / (.data_wait_ns + .compute_ns + .allreduce_ns)" "$T/b/result.json")
# Measured (9 runs): 0.59-0.64; the all-reduce (about 150 ms) hides behind 150 ms of compute.
band "overlapped on separate networks: step time / (data wait + compute + all-reduce)" "$ratio" - 0.85

# The server first (it lives in client3's namespace), then the cluster.
kill "$NGINX_PID" && wait "$NGINX_PID" 2>/dev/null || true
PIDS_UP=$(awk '$1 == "pid" {print $2, $3}' "$STATE/created")
assert_exit 0 "down" cl down
check_down "$STATE" "$PIDS_UP"
