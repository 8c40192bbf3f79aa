#!/usr/bin/env bash
# fabric check against iperf3 on the same pair of the cluster in a box (2 clients x 1 rail), rounds alternating:
# railbench fabric check --duration D (a->b alone, b->a alone, both at once with a stream per direction) and
# iperf3 -t D (client1 -> client2), -R (client2 -> client1) and --bidir, the same write size (-l 128K) and Nagle at
# both ends as both tools have it by default (FABRIC_BENCH_NODELAY=1: -N to both, no Nagle; on the box's veths
# Nagle alone costs 128 KiB writes 2-3x); and, as a
# second reference for both ways, two iperf3 clients at once (one each way, each its own process: a thread per
# stream, as iperf3 3.16 and later run --bidir; 3.12's --bidir drives both streams from one thread per end).
# railbench's ranks are not bound (one rank per host would be bound to core 0 on both, by Open MPI's default
# for 2 processes), as iperf3's ends are not. Odd rounds run railbench first, even rounds iperf3 first (the box's load drifts within a round).
# Prints each round's figures with the load average before it, and the min/median/max of the ratio
# railbench / iperf3 per direction.
# With FABRIC_BENCH_RATE (a tc rate, e.g. 2gbit) both hosts' rail0 send through tbf at that rate: the link, not the
# two CPUs, is then the limit, and both tools should read the rate itself (how accurate each is). Without it the
# veths run as fast as the CPUs let them, and the ratio says which tool spends less CPU per byte.
# With FABRIC_BENCH_PIN=1 each tool's end on client1 runs on CPU 0 and its end on client2 on CPU 1 (iperf3 -A 0,1;
# railbench's rank r under taskset -c r): where the ends run then no longer differs between the tools or the rounds.
# Each tool's figures are also held against the receiving rail0's own count (rx_bytes less 66 header bytes per
# rx_packets): railbench's from result.json's wire (the receiver's window), iperf3's single streams from the
# receiving host's counters read around the whole iperf3 run (its control connection and setup included, so a
# little below 1). A ratio near 1 says the tool counted the bytes the interface carried; a gap between the tools
# then lies in what the streams did, not in how they were counted.
# Usage: tests/bench/fabric_check_iperf3.sh [ROUNDS [SECONDS]]   (default 5 rounds of 3 s). Needs root and iperf3.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" -eq 0 ] || fail "needs root: network namespaces"
command -v iperf3 >/dev/null || fail "iperf3 is missing; run scripts/deps.sh"
. "$ROOT/tests/cluster_lib.sh"
ROUNDS=${1:-5}
D=${2:-3}
WSIZE=128K
cl up --clients 2 --rails 1 --net "$NET" >/dev/null 2>&1 || fail "cluster up failed"
A=$(cl exec client1 ip -4 -o addr show dev rail0 | awk '{print $4}' | cut -d/ -f1)
B=$(cl exec client2 ip -4 -o addr show dev rail0 | awk '{print $4}' | cut -d/ -f1)
if [ -n "${FABRIC_BENCH_RATE:-}" ]; then
    for h in client1 client2; do
        cl exec "$h" tc qdisc replace dev rail0 root tbf rate "$FABRIC_BENCH_RATE" burst 1mb latency 50ms ||
            fail "tbf at $FABRIC_BENCH_RATE on $h's rail0"
    done
fi
PIN_IPERF=() PIN_RB=() NODELAY_IPERF=() NODELAY_RB=()
[ "${FABRIC_BENCH_NODELAY:-0}" != 1 ] || { NODELAY_IPERF=(-N); NODELAY_RB=(-N); }
if [ "${FABRIC_BENCH_PIN:-0}" = 1 ]; then
    PIN_IPERF=(-A "0,1")
    # shellcheck disable=SC2016 # expanded by the rank's own sh
    PIN_RB=(sh -c 'exec taskset -c "$OMPI_COMM_WORLD_RANK" "$0" "$@"')
fi
PORT=5399

# One iperf3 server on client2's rail0 for every test (ip netns exec: its PID is the server's, cleanup ends it).
# iperf3's server and client each run in a session of their own, as railbench's two ranks do (cluster.sh
# mpirun's session on client1, the ssh login's on client2): the kernel shares the CPU per session
# (autogroups), and on this CPU-bound box two ends in one session would get half of railbench's share.
bg ip netns exec "$NAME-client2" setsid iperf3 -s -B "$B" -p "$PORT" >/dev/null 2>&1
# A second server for the pair of one-way tests run at once (one per direction, each its own process).
bg ip netns exec "$NAME-client2" setsid iperf3 -s -B "$B" -p "$((PORT + 1))" >/dev/null 2>&1
for p in "$PORT" "$((PORT + 1))"; do
    for _ in $(seq 50); do cl exec client2 ss -ltn | grep -q ":$p " && break; sleep 0.1; done
    grep -q ":$p " <<<"$(cl exec client2 ss -ltn)" || fail "iperf3 server on $B:$p did not listen within 5 s"
done

# iperf MODE ARGS...: one test from client1 (bound to rail0) to client2; prints the bytes/s received (both ways' sum for bidir).
# rx HOST: "rx_bytes rx_packets" of HOST's rail0.
# shellcheck disable=SC2016 # expanded by the host's sh
rx() { cl exec "$1" sh -c 'echo $(cat /sys/class/net/rail0/statistics/rx_bytes) $(cat /sys/class/net/rail0/statistics/rx_packets)'; }
declare -a W_RB
iperf() {
    local mode=$1 out=$T/iperf.json recv=client2 b0 p0 b1 p1
    shift
    [ "${1:-}" != -R ] || recv=client1
    read -r b0 p0 < <(rx "$recv")
    cl exec client1 setsid -w iperf3 -c "$B" -B "$A" -p "$PORT" -t "$D" -l "$WSIZE" "${NODELAY_IPERF[@]}" "${PIN_IPERF[@]}" -J "$@" >"$out" || { cat "$out"; fail "iperf3 $*"; }
    read -r b1 p1 < <(rx "$recv")
    case $mode in
        one) jq ".end.sum_received.bytes / ($((b1 - b0)) - $((p1 - p0)) * 66)" "$out" >>"$T/wire-iperf3" # (a subshell)
             jq '.end.sum_received.bytes / .end.sum_received.seconds' "$out" ;;
        bidir) jq '.end.sum_received.bytes / .end.sum_received.seconds + .end.sum_received_bidir_reverse.bytes / .end.sum_received_bidir_reverse.seconds' "$out" ;;
    esac
}

declare -a R_AB R_BA R_BI R_TWO
printf '# fabric check vs iperf3 %s%s, %d rounds of %d s per direction and stage, writes of %s, on %s -> %s\n' \
    "$(iperf3 --version | awk 'NR == 1 {print $2}')" "${NODELAY_IPERF[*]:+ -N (both tools)}" "$ROUNDS" "$D" "$WSIZE" "$A" "$B"
[ -z "${FABRIC_BENCH_RATE:-}" ] || echo "# each host's rail0 sends through tbf at $FABRIC_BENCH_RATE"
[ "${FABRIC_BENCH_PIN:-0}" != 1 ] || echo "# client1's ends on CPU 0, client2's on CPU 1 (iperf3 -A 0,1; railbench taskset -c RANK)"
# railbench ROUND: one fabric check of the pair; sets ab, ba, bi (bytes/s).
railbench() {
    cl mpirun -np 2 --map-by node --bind-to none "${PIN_RB[@]}" "$RB" fabric check "${NODELAY_RB[@]}" --rails 1 --ifaces rail0 --size "$WSIZE" --duration "${D}s" \
        --reps 1 --confirm 0 --lat-iters 20 --timeout 10s --out "$T/rb$1" --quiet >/dev/null 2>&1 || true
    [ -f "$T/rb$1/result.json" ] || fail "round $1: fabric check wrote no result.json"
    read -r ab ba bi < <(jq -r '.summary.links[0] | "\(.bw_ab_bytes_per_s) \(.bw_ba_bytes_per_s) \(.bw_bidir_bytes_per_s)"' "$T/rb$1/result.json")
    local w
    for w in $(jq -r '.summary.links[0].wire[].ratio | select(. != null)' "$T/rb$1/result.json"); do W_RB+=("$w"); done
}
# iperf_two: a->b and b->a at once as two iperf3 clients, each its own process and session (iperf3 3.12's --bidir
# drives both streams from one thread per end; 3.16 and later run a thread per stream); prints the two received
# rates' sum.
iperf_two() {
    cl exec client1 setsid -w iperf3 -c "$B" -B "$A" -p "$PORT" -t "$D" -l "$WSIZE" "${NODELAY_IPERF[@]}" "${PIN_IPERF[@]}" -J >"$T/two-ab.json" &
    local p1=$!
    cl exec client1 setsid -w iperf3 -c "$B" -B "$A" -p "$((PORT + 1))" -t "$D" -l "$WSIZE" "${NODELAY_IPERF[@]}" "${PIN_IPERF[@]}" -J -R >"$T/two-ba.json" &
    local p2=$!
    wait "$p1" || fail "iperf3 a->b of the pair at once"
    wait "$p2" || fail "iperf3 -R of the pair at once"
    jq -s '.[0].end.sum_received.bytes / .[0].end.sum_received.seconds + .[1].end.sum_received.bytes / .[1].end.sum_received.seconds' \
        "$T/two-ab.json" "$T/two-ba.json"
}
# iperf3s: the same measurements with iperf3; sets i_ab, i_ba, i_bi, i_two.
iperf3s() {
    i_ab=$(iperf one)
    i_ba=$(iperf one -R)
    i_bi=$(iperf bidir --bidir)
    i_two=$(iperf_two)
}
printf '| round | load | first | rb a->b MB/s | iperf3 MB/s | rb b->a MB/s | iperf3 -R MB/s | rb both MB/s | iperf3 --bidir MB/s | two iperf3 at once MB/s |\n|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n'
for r in $(seq "$ROUNDS"); do
    load=$(cut -d' ' -f1 /proc/loadavg)
    if [ $((r % 2)) = 1 ]; then first=railbench; railbench "$r"; iperf3s; else first=iperf3; iperf3s; railbench "$r"; fi
    R_AB+=("$(jq -n "$ab / $i_ab")")
    R_BA+=("$(jq -n "$ba / $i_ba")")
    R_BI+=("$(jq -n "$bi / $i_bi")")
    R_TWO+=("$(jq -n "$bi / $i_two")")
    printf '| %d | %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n' "$r" "$load" "$first" "$(jq -n "$ab/1e6")" \
        "$(jq -n "$i_ab/1e6")" "$(jq -n "$ba/1e6")" "$(jq -n "$i_ba/1e6")" "$(jq -n "$bi/1e6")" "$(jq -n "$i_bi/1e6")" \
        "$(jq -n "$i_two/1e6")"
done
# stats NAME VALUES...: min/median/max
stats() {
    local name=$1
    shift
    printf '%s\n' "$@" | sort -g | awk -v n="$name" '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
        printf "ratio %-22s min %.2f  median %.2f  max %.2f  (%d rounds)\n", n, v[1], m, v[NR], NR}'
}
stats "a->b / iperf3" "${R_AB[@]}"
stats "b->a / iperf3 -R" "${R_BA[@]}"
stats "both / iperf3 --bidir" "${R_BI[@]}"
stats "both / two iperf3 at once" "${R_TWO[@]}"
stats "railbench / rail0 count" "${W_RB[@]}"
mapfile -t W_IP <"$T/wire-iperf3"
stats "iperf3 / rail0 count" "${W_IP[@]}"
cl down >/dev/null 2>&1 || true
