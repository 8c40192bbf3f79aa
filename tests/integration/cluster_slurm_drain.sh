#!/usr/bin/env bash
# needs: netns root
# fabric check --drain on the Slurm of a cluster in a box (3 clients x 1 rail): client3's rail port limited to 40 Mbit/s;
# --dry-run prints the one scontrol command and drains nothing; --drain sets client3 to DRAIN with the finding as the reason,
# client1 and client2 stay idle.
# Needs root. Its cluster name and subnet come from RB_TEST_CLUSTER_NAME / RB_TEST_CLUSTER_NET, else its own.
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" -eq 0 ] || fail "needs root: network namespaces, veths, sshd, slurmd"
# shellcheck source=tests/cluster_lib.sh
. "$ROOT/tests/cluster_lib.sh"
for t in slurmctld slurmd munged srun scontrol; do command -v "$t" >/dev/null || fail "$t is missing; run scripts/deps.sh"; done

assert_exit 0 "up --clients 3 --rails 1" cl up --clients 3 --rails 1 --net "$NET"
assert_exit 0 "slurm up" cl slurm up
BAD=$NAME-client3
# state HOST: the node's State= in scontrol show node ("IDLE", "IDLE+DRAIN", ...), once the last job's end has
# settled on it: a node stays COMPLETING for a moment after srun returns (longer on a busy machine); waited up to 30 s.
state() {
    local st
    for _ in $(seq 150); do
        st=$(cl slurm scontrol show node "$1" | grep -o 'State=[A-Z+_]*' | cut -d= -f2)
        [[ $st == *COMPLETING* ]] || break
        sleep 0.2
    done
    echo "$st"
}
for h in client1 client2 client3; do assert_eq "$h before" IDLE "$(state "$NAME-$h")"; done

# client3's rail0 limited both ways: its egress, and the switch port's egress to it.
cl exec client3 tc qdisc replace dev rail0 root tbf rate 40mbit burst 32kb latency 400ms
ip netns exec "$NAME-fabric" tc qdisc replace dev client3-r0 root tbf rate 40mbit burst 32kb latency 400ms

export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=mgmt0 OMPI_MCA_mpi_yield_when_idle=1
check() { # OUT ARGS...: fabric check over 3 ranks (one per host, rail0) under srun (tests/cluster_lib.sh); sets RC
    local out=$1
    shift
    slurm_step "$T/$out.txt" "$T/$out.err" --mpi=pmix -N 3 --ntasks-per-node 1 "$RB" fabric check --size 1MiB --iters 4 \
        --timeout 15s --out "$T/$out" "$@"
    [ -f "$T/$out/result.json" ] || { cat "$T/$out.err"; fail "$out: no result.json"; }
}

# 1. --drain --dry-run: the command for client3 alone, printed; nothing drained.
check dry --drain --dry-run
[ "$RC" = 1 ] || { sed -n '/links, worst/,$p' "$T/dry.txt"; tail -n 5 "$T/dry.err"; }
assert_eq "dry run: exit" 1 "$RC"
R=$T/dry/result.json
jq -r '.summary.findings[] | "finding: \(.text)"' "$R"
assert_jq "$R" ".summary.findings | length == 1 and .[0].kind == \"host-rail\" and .[0].host == \"$BAD\"" "one finding: $BAD's rail 0 port"
assert_jq "$R" "[.summary.actions.drain[] | [.host, .run]] == [[\"$BAD\", false]]" "dry run: one command, for $BAD, not run"
grep -q "^scontrol update NodeName=$BAD State=DRAIN Reason=\"railbench fabric check: rail 0: every link of $BAD is slow" "$T/dry.txt" ||
    { cat "$T/dry.txt"; fail "dry run: the scontrol command is not printed"; }
for h in client1 client2 client3; do assert_eq "$h after the dry run" IDLE "$(state "$NAME-$h")"; done
ok "$(grep '^scontrol update' "$T/dry.txt" | cut -c1-150)..."

# 2. --drain: client3 drained with the finding as the reason; client1 and client2 idle.
check drain --drain
assert_eq "drain: exit" 1 "$RC"
R=$T/drain/result.json
assert_jq "$R" "[.summary.actions.drain[] | [.host, .run, .exit]] == [[\"$BAD\", true, 0]]" "drain: scontrol ran for $BAD alone, exit 0"
assert_jq "$R" "[.checks[] | select(.name == \"drain $BAD\") | .passed] == [true]" "drain: a passed check 'drain $BAD'"
st=$(state "$BAD")
[[ $st == *DRAIN* ]] || fail "$BAD is $st, not drained"
reason=$(cl slurm scontrol show node "$BAD" | grep -o 'Reason=.*' | head -n 1)
[[ $reason == "Reason=railbench fabric check: rail 0: every link of $BAD is slow"* ]] || fail "$BAD's reason is '$reason'"
ok "$BAD: State=$st, $(cut -c1-120 <<<"$reason")..."
for h in client1 client2; do assert_eq "$h after --drain" IDLE "$(state "$NAME-$h")"; done

cl exec client3 tc qdisc del dev rail0 root
ip netns exec "$NAME-fabric" tc qdisc del dev client3-r0 root
assert_exit 0 "slurm down" cl slurm down
assert_exit 0 "down" cl down
