#!/usr/bin/env bash
# needs: netns root
# Cluster in a box: coll's split groups stay on their rail. 2 clients x 2 ranks, local rank i bound to rail i; with
# --per-rail (and NCCL_TESTS_SPLIT 'AND 1', nccl-tests' spelling of the same groups) group g's all-reduce moves its
# bytes over rail g of both clients, the other rail and the spine carry next to nothing; a split that pairs ranks of
# different rails ('MOD 3': ranks 0 and 3) crosses the spine, so the same counters would catch a group off its rail.
# Needs root (network namespaces). Runs its own cluster name and subnet (RB_TEST_CLUSTER_NAME/NET).
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" -eq 0 ] || fail "needs root: network namespaces, veths and sshd"
# shellcheck source=tests/cluster_lib.sh
. "$ROOT/tests/cluster_lib.sh"

assert_exit 0 "up --clients 2 --rails 2" cl up --clients 2 --rails 2 --net "$NET"

# tx HOST IFACE: bytes IFACE sent, as seen inside HOST.
tx() { cl exec "$1" cat "/sys/class/net/$2/statistics/tx_bytes"; }
# spine: bytes the spine received from both rails (what crossed from one rail to the other).
spine() {
    local s=0 i
    for i in r0 r1; do s=$((s + $(ip -n "$NAME-spine" -j -s link show dev "$i" | jq '.[0].stats64.rx.bytes'))); done
    echo "$s"
}
# snap: every counter of interest, "name value" per line.
snap() {
    local h i
    for h in client1 client2; do for i in rail0 rail1; do echo "$h.$i $(tx "$h" "$i")"; done; done
    echo "spine $(spine)"
}
# delta BEFORE AFTER NAME: how much NAME grew.
delta() { echo $(($(awk -v n="$3" '$1 == n {print $2}' <<<"$2") - $(awk -v n="$3" '$1 == n {print $2}' <<<"$1"))); }

# run OUT COLL SIZE ARGS...: coll COLL -b SIZE -e SIZE ARGS on 4 ranks, 2 on each client (by slot), local rank i
# on rail i (MPIX: more mpirun arguments, e.g. -x VAR to hand a variable to the ranks on client2). Operations per
# rank: -w 1 warm-up, then per half 1 untimed + -n 5 timed + -c 1 checked = 15. An all-reduce --algo ring of 2 ranks
# sends S/2 in the reduce-scatter and S/2 in the allgather: S = 1 MiB per operation at -b 1M.
OPS=15 S=1048576 MPIX=()
run() {
    local out=$1 coll=$2 size=$3
    shift 3
    timeout 180 "$CL" --name "$NAME" mpirun --net rails "${MPIX[@]}" -np 4 "$ROOT/scripts/rail-bind.sh" "$RB" coll \
        "$coll" -b "$size" -e "$size" -n 5 -w 1 -c 1 "$@" --out "$out" >"$out.txt" 2>&1 ||
        { tail -n 5 "$out.txt"; fail "coll $coll $* failed or ran over 180 s"; }
}

# Two groups of 2 ranks, one per rail: {0, 2} on rail0 and {1, 3} on rail1. Each client has one rank of each group,
# so rail g of each client sends group g's 15 MiB (plus TCP/IP and MPI headers, and the harness's small gathers):
# at least 15 MiB, and well under the 30 MiB it would carry if the other group's bytes came over it too.
for how in "--per-rail" "env:AND 1"; do
    if [[ $how == env:* ]]; then
        split=${how#env:} name=and1 args=()
        export NCCL_TESTS_SPLIT=$split
        MPIX=(-x NCCL_TESTS_SPLIT)
    else
        split=$how name=perrail args=("$how")
    fi
    b=$(snap)
    run "$T/$name" allreduce 1M --algo ring "${args[@]}"
    a=$(snap)
    unset NCCL_TESTS_SPLIT
    MPIX=()
    R=$T/$name/result.json
    assert_jq "$R" '.summary.wrong_total == 0 and .mpi.size == 4 and ([.hosts[].ranks] == [2, 2])' \
        "$name: #wrong = 0, 2 ranks on each client"
    assert_jq "$R" '.summary.split.groups == 2' "$name: 2 groups"
    assert_jq "$R" '[.summary.collective_rows[].oop.groups[] | [.group, .ranks]] == [[0, 2], [1, 2]]' \
        "$name: groups 0 and 1 of 2 ranks each, figures for each"
    assert_jq "$R" '.summary.collective_rows[].oop | (.aggregate_busbw_gbps - ([.groups[].busbw_gbps] | add) | fabs) < 1e-9' \
        "$name: the aggregate is the groups' sum"
    grep -q "^# split $split: 2 groups" "$T/$name.txt" || fail "$name: no split line in the output"
    for g in 0 1; do
        for h in client1 client2; do
            sent=$(delta "$b" "$a" "$h.rail$g")
            [ "$sent" -ge $((OPS * S)) ] || fail "$name: $h rail$g sent $sent bytes, group $g needs >= $((OPS * S))"
            [ "$sent" -lt $((OPS * S * 3 / 2)) ] ||
                fail "$name: $h rail$g sent $sent bytes, more than group $g's $((OPS * S)) + 50 %: another group on it"
        done
    done
    crossed=$(delta "$b" "$a" spine)
    [ "$crossed" -lt 1048576 ] || fail "$name: $crossed bytes crossed the spine; split groups should stay on their rail"
    ok "$name: rail g of each client sent group g's bytes ($(for k in client1.rail0 client1.rail1 client2.rail0 client2.rail1; do echo -n "$k $(delta "$b" "$a" $k) "; done)), the spine saw $crossed"
done

# The counter-check: 'MOD 3' makes group 0 = ranks 0 and 3 (client1 rail0, client2 rail1), whose bytes must go
# from one rail to the other through the spine; groups 1 and 2 are single ranks.
b=$(snap)
run "$T/mod3" allreduce 1M --algo ring --split 'MOD 3'
a=$(snap)
assert_jq "$T/mod3/result.json" '.summary.wrong_total == 0 and .summary.split.groups == 3' "mod3: 3 groups, #wrong = 0"
crossed=$(delta "$b" "$a" spine)
[ "$crossed" -ge $((OPS * S)) ] || fail "mod3: only $crossed bytes crossed the spine; ranks 0 and 3 sit on different rails"
ok "mod3: a group across rails sent $crossed bytes through the spine (>= $((OPS * S)))"

# Rail-aware gather and scatter without a split: 4 MiB, a 1 MiB block per rank, root 0 (client1, rail 0). hier goes
# along each rail to the rank on the root's node, then inside it, so rank 3's block (client2, rail 1) reaches client1
# over rail1 and nothing crosses the spine; 15 operations move 15 MiB of rank 3's blocks over client2's rail1.
for c in gather scatter; do
    b=$(snap)
    run "$T/$c-hier" "$c" 4M --algo hier
    a=$(snap)
    assert_jq "$T/$c-hier/result.json" '.summary.wrong_total == 0 and ([.summary.collective_rows[].algo] | unique) == ["hier"]' \
        "$c hier across 2 hosts x 2 rails: #wrong = 0"
    crossed=$(delta "$b" "$a" spine)
    if [ $c = gather ]; then on=$(delta "$b" "$a" client2.rail1); else on=$(delta "$b" "$a" client1.rail1); fi
    [ "$crossed" -lt 1048576 ] || fail "$c hier: $crossed bytes crossed the spine; the rail-aware $c stays on the rails"
    [ "$on" -ge $((OPS * S)) ] || fail "$c hier: rail1 sent $on bytes toward rank 3, expected >= $((OPS * S))"
    ok "$c hier: rank 3's blocks went over rail1 ($on bytes), the spine saw $crossed"
done

PIDS_UP=$(awk '$1 == "pid" {print $2, $3}' "$(cl path state)/created")
STATE=$(cl path state)
assert_exit 0 "down" cl down
check_down "$STATE" "$PIDS_UP"
