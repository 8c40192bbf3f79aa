#!/usr/bin/env bash
# needs: netns root
# Cluster in a box: coll's figures against the bytes the receiving interfaces counted. 3 clients x 1 rank, MPI over
# rail0 only (the ranks' other traffic, mpirun's ssh and Open MPI's out-of-band channel, goes over mgmt0). A ring
# all-reduce of S bytes puts 2(n-1)/n x S on the wire into each rank per operation; coll's busbw x time is the same
# figure (nccl-tests' busbw = algbw x 2(n-1)/n, algbw = S / time). Each client's rail0 rx_bytes and rx_packets
# before and after the run, less 66 header bytes a packet (Ethernet 14, IPv4 20, TCP 20 + 12 of timestamps; the
# veths count a TSO segment as one packet with one set of headers, a pure ACK is 66 bytes of headers and no
# payload), must be within 2 % of (operations x busbw x time). Ratios only: the 2 cores are shared, rates swing.
# Needs root (network namespaces). Runs its own cluster name and subnet (RB_TEST_CLUSTER_NAME/NET).
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" -eq 0 ] || fail "needs root: network namespaces, veths and sshd"
# shellcheck source=tests/cluster_lib.sh
. "$ROOT/tests/cluster_lib.sh"

assert_exit 0 "up --clients 3 --rails 1" cl up --clients 3 --rails 1 --net "$NET"
HOSTS=(client1 client2 client3)
HDR=66

# rx HOST: "rx_bytes rx_packets" of HOST's rail0, as HOST's own /sys counts them.
# shellcheck disable=SC2016 # expanded by the host's sh
rx() { cl exec "$1" sh -c 'echo $(cat /sys/class/net/rail0/statistics/rx_bytes) $(cat /sys/class/net/rail0/statistics/rx_packets)'; }

# S = 3 MiB (786,432 floats: the ring's chunks of S/3 are whole). Operations per rank: -w 1 warm-up (one size),
# then per half (out of place, in place) 1 untimed + -n 5 timed + -c 1 checked = 15 (collectives/coll_run.c).
S=3145728 OPS=15 N=3
declare -A B0 P0
for h in "${HOSTS[@]}"; do read -r "B0[$h]" "P0[$h]" < <(rx "$h"); done
timeout 240 "$CL" --name "$NAME" mpirun --net rails -np "$N" --map-by node "$ROOT/scripts/rail-bind.sh" "$RB" coll \
    allreduce --algo ring -b "$S" -e "$S" -n 5 -w 1 -c 1 --out "$T/ring" >"$T/ring.txt" 2>&1 ||
    { tail -n 5 "$T/ring.txt"; fail "coll allreduce --algo ring failed or ran over 240 s"; }
declare -A B1 P1
for h in "${HOSTS[@]}"; do read -r "B1[$h]" "P1[$h]" < <(rx "$h"); done
R=$T/ring/result.json
assert_jq "$R" '.summary.wrong_total == 0 and .mpi.size == 3 and ([.hosts[].ranks] == [1, 1, 1])' \
    "ring all-reduce of 3 MiB over 3 hosts, one rank each: #wrong = 0"

# coll's bytes per rank and operation from its own figures, each half: busbw (GB/s, decimal) x time (us).
PER_OP=$(jq '[.summary.collective_rows[0] | .oop, .ip | .busbw_gbps * 1e9 * .time_us * 1e-6] | add / length' "$R")
assert_jq "$R" "[.summary.collective_rows[0] | .oop, .ip | (.busbw_gbps * 1e9 * .time_us * 1e-6) / ($S * 2 * ($N - 1) / $N) - 1 | fabs] | max < 1e-3" \
    "busbw x time is 2(n-1)/n x S = $((S * 2 * (N - 1) / N)) bytes per rank and operation, both halves"
EXPECT=$(jq -n "$OPS * $PER_OP")
lo=9 hi=0
for h in "${HOSTS[@]}"; do
    db=$((B1[$h] - B0[$h])) dp=$((P1[$h] - P0[$h]))
    { [ "$db" -gt 0 ] && [ "$dp" -gt 0 ]; } || fail "$h: rail0 counted $db bytes in $dp packets during the run"
    payload=$((db - dp * HDR))
    ratio=$(jq -n "$payload / $EXPECT")
    jq -en "($ratio - 1 | fabs) <= 0.02" >/dev/null ||
        fail "$h: rail0 received $db bytes in $dp packets, $payload of payload after $HDR a packet, against coll's $OPS x $PER_OP = $EXPECT: ratio $ratio, over 2 % apart"
    ok "$h: rail0 payload $payload bytes ($db in $dp packets) / coll's $OPS x busbw x time ($EXPECT) = $ratio"
    lo=$(jq -n "[$lo, $ratio] | min") hi=$(jq -n "[$hi, $ratio] | max")
done
ok "ring all-reduce: the receiving interfaces' payload / coll's busbw-derived bytes $lo-$hi (within 2 %)"

PIDS_UP=$(awk '$1 == "pid" {print $2, $3}' "$(cl path state)/created")
STATE=$(cl path state)
assert_exit 0 "down" cl down
check_down "$STATE" "$PIDS_UP"
