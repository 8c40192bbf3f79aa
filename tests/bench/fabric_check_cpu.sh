#!/usr/bin/env bash
# CPU per byte: fabric check against iperf3 on the same pair of the cluster in a box (2 clients x 1 rail), rounds
# alternating which goes first. Each round runs iperf3's three tests (-t D, -R, --bidir; a one-off server per test)
# and one fabric check (a->b, b->a, both at once, --duration D each), both with writes of 128K, and divides the CPU
# seconds (user + system, of both ends: GNU time around each process) by the bytes both rail0 interfaces sent.
# On the box the veth pair is CPU-bound, so bandwidth is CPU share / CPU per byte: the share follows the load of the
# shared machine, the CPU per byte follows the tool. Prints each round and min/median/max of railbench / iperf3.
# Usage: tests/bench/fabric_check_cpu.sh [ROUNDS [SECONDS]]   (default 5 rounds of 3 s). Needs root, iperf3, time.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" -eq 0 ] || fail "needs root: network namespaces"
command -v iperf3 >/dev/null || fail "iperf3 is missing; run scripts/deps.sh"
[ -x /usr/bin/time ] || fail "GNU time is missing; run scripts/deps.sh"
. "$ROOT/tests/cluster_lib.sh"
ROUNDS=${1:-5}
D=${2:-3}
cl up --clients 2 --rails 1 --net "$NET" >/dev/null 2>&1 || fail "cluster up failed"
A=$(cl exec client1 ip -4 -o addr show dev rail0 | awk '{print $4}' | cut -d/ -f1)
B=$(cl exec client2 ip -4 -o addr show dev rail0 | awk '{print $4}' | cut -d/ -f1)
PORT=5399
# Each railbench rank runs under GNU time, its figures in $T/rank.<rank>.
cat >"$T/timed.sh" <<EOS
#!/bin/sh
exec /usr/bin/time -f "%U %S" -o "$T/rank.\$OMPI_COMM_WORLD_RANK" "\$@"
EOS
chmod +x "$T/timed.sh"
# sent: bytes both rail0 interfaces have sent.
sent() { echo $(($(cl exec client1 cat /sys/class/net/rail0/statistics/tx_bytes) + $(cl exec client2 cat /sys/class/net/rail0/statistics/tx_bytes))); }
cpu() { awk '{s += $1 + $2} END {printf "%.3f", s}' "$@"; }
# iperf3s: the three tests, each with a server of its own; sets i_cpu (s) and i_gb (GB sent).
iperf3s() {
    local b0 m c=0
    b0=$(sent)
    for m in "" -R --bidir; do
        ip netns exec "$NAME-client2" setsid /usr/bin/time -f "%U %S" -o "$T/srv.t" iperf3 -s -1 -B "$B" -p "$PORT" \
            >/dev/null 2>&1 &
        local spid=$!
        for _ in $(seq 50); do cl exec client2 ss -ltn | grep -q ":$PORT " && break; sleep 0.1; done
        # shellcheck disable=SC2086 # $m is one flag or none
        cl exec client1 setsid -w /usr/bin/time -f "%U %S" -o "$T/cli.t" iperf3 -c "$B" -B "$A" -p "$PORT" -t "$D" \
            -l 128K $m >/dev/null || fail "iperf3 $m"
        wait "$spid" || true
        c=$(jq -n "$c + $(cpu "$T/srv.t" "$T/cli.t")")
    done
    i_cpu=$c
    i_gb=$(jq -n "($(sent) - $b0) / 1e9")
}
# railbench ROUND: one fabric check of the pair; sets r_cpu, r_gb.
railbench() {
    local b0
    b0=$(sent)
    rm -f "$T"/rank.*
    cl mpirun -np 2 --map-by node --bind-to none "$T/timed.sh" "$RB" fabric check --rails 1 --ifaces rail0 --size 128K \
        --duration "${D}s" --reps 1 --confirm 0 --lat-iters 20 --timeout 10s --out "$T/rb$1" --quiet >/dev/null 2>&1 || true
    [ -f "$T/rb$1/result.json" ] && [ -f "$T/rank.0" ] && [ -f "$T/rank.1" ] || fail "round $1: fabric check did not finish"
    r_cpu=$(cpu "$T/rank.0" "$T/rank.1")
    r_gb=$(jq -n "($(sent) - $b0) / 1e9")
}
declare -a R
printf '# CPU seconds per GB sent, fabric check vs iperf3 %s, %d rounds of %d s per test, writes of 128K\n' \
    "$(iperf3 --version | awk 'NR == 1 {print $2}')" "$ROUNDS" "$D"
printf '| round | load | first | rb CPU s | rb GB | rb CPU s/GB | iperf3 CPU s | iperf3 GB | iperf3 CPU s/GB |\n|---:|---:|---|---:|---:|---:|---:|---:|---:|\n'
for r in $(seq "$ROUNDS"); do
    load=$(cut -d' ' -f1 /proc/loadavg)
    if [ $((r % 2)) = 1 ]; then first=railbench; railbench "$r"; iperf3s; else first=iperf3; iperf3s; railbench "$r"; fi
    ri=$(jq -n "$r_cpu / $r_gb"); ii=$(jq -n "$i_cpu / $i_gb")
    R+=("$(jq -n "$ri / $ii")")
    printf '| %d | %s | %s | %.2f | %.2f | %.3f | %.2f | %.2f | %.3f |\n' "$r" "$load" "$first" "$r_cpu" "$r_gb" "$ri" \
        "$i_cpu" "$i_gb" "$ii"
done
printf '%s\n' "${R[@]}" | sort -g | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
    printf "ratio CPU per byte railbench / iperf3  min %.2f  median %.2f  max %.2f  (%d rounds)\n", v[1], m, v[NR], NR}'
cl down >/dev/null 2>&1 || true
