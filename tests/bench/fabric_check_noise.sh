#!/usr/bin/env bash
# The README's fabric check on the cluster in a box (4 clients x 2 rails) with the defaults, repeated: HEALTHY runs on the
# healthy box (how many give a finding), then FAULTY runs with client1 -> client3 on rail 1 throttled to 30 Mbit/s by an htb
# class for that destination (how many name exactly that one-way link). Prints one line per run and the totals.
# Usage: tests/bench/fabric_check_noise.sh [HEALTHY [FAULTY]]   (default 10 and 5). Needs root.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" -eq 0 ] || fail "needs root: network namespaces"
. "$ROOT/tests/cluster_lib.sh"
HEALTHY=${1:-10}
FAULTY=${2:-5}
CMD=(fabric check --size 1MiB --iters 4)
cl up --clients 4 --rails 2 --net "$NET" >/dev/null 2>&1 || fail "cluster up failed"
# run NAME: one check over 8 ranks (rank i of a host on rail i and core i, as the README's box command);
# prints the load average before it, the exit status, the findings' kinds, the suspects repeated and the time.
run() {
    local rc=0
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    cl mpirun -np 8 --bind-to core "$RB" "${CMD[@]}" --out "$T/$1" --quiet >/dev/null 2>&1 || rc=$?
    [ -f "$T/$1/result.json" ] || fail "$1: no result.json"
    printf '%-10s load %5s  exit %d  findings %s  suspects repeated %s  %.1f s\n' "$1" "$load" "$rc" \
        "$(jq -c '[.summary.findings[] | if .kind == "one-way" then "one-way \(.src) -> \(.dst) rail \(.rail)" else "\(.kind) rail \(.rail)" end]' "$T/$1/result.json")" \
        "$(jq '[.summary.links[] | select(.confirmed)] | length' "$T/$1/result.json")" "$(jq .summary.duration_s "$T/$1/result.json")"
}
echo "# cluster.sh mpirun -np 8 --bind-to core railbench ${CMD[*]} (defaults otherwise), $HEALTHY healthy runs, then $FAULTY with client1 -> client3 on rail 1 at 30 Mbit/s"
quiet=0
for i in $(seq "$HEALTHY"); do
    run "healthy$i"
    [ "$(jq '.summary.findings | length' "$T/healthy$i/result.json")" = 0 ] && quiet=$((quiet + 1))
done
IP3=$(cl exec client3 ip -4 -o addr show dev rail1 | awk '{print $4}' | cut -d/ -f1)
# No default class: htb sends unclassified packets straight out (a 10 Gbit/s default class capped the other links).
cl exec client1 tc qdisc replace dev rail1 root handle 1: htb r2q 1000
cl exec client1 tc class add dev rail1 parent 1: classid 1:20 htb rate 30mbit ceil 30mbit
cl exec client1 tc filter add dev rail1 parent 1: protocol ip prio 1 u32 match ip dst "$IP3/32" flowid 1:20
named=0
for i in $(seq "$FAULTY"); do
    run "oneway$i"
    jq -e --arg a "$NAME-client1" --arg b "$NAME-client3" \
        '.summary.findings | length == 1 and .[0].kind == "one-way" and .[0].src == $a and .[0].dst == $b and .[0].rail == 1' \
        "$T/oneway$i/result.json" >/dev/null && named=$((named + 1))
done
echo "healthy: no finding in $quiet of $HEALTHY runs; 30 Mbit/s one way: named exactly (one-way client1 -> client3, rail 1) in $named of $FAULTY runs"
cl down >/dev/null 2>&1 || true
