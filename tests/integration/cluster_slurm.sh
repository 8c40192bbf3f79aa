#!/usr/bin/env bash
# needs: netns root
# Slurm in the cluster in a box: srun tiers (MISS then HIT on both hosts), srun coll ring,hier (#wrong 0, hier on-rail), sbatch block + collect.yml, scancel, slurm down.
# Needs root. One cluster (2 clients x 2 rails) and one Slurm serve every assertion.
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" -eq 0 ] || fail "needs root: network namespaces, veths, sshd, slurmd"
# shellcheck source=tests/cluster_lib.sh
. "$ROOT/tests/cluster_lib.sh"
for t in slurmctld slurmd munged srun; do command -v "$t" >/dev/null || fail "$t is missing; run scripts/deps.sh"; done

assert_exit 3 "slurm srun before up" cl slurm srun hostname
assert_stderr_line "is not up"
assert_exit 0 "up --clients 2 --rails 2" cl up --clients 2 --rails 2 --net "$NET" --spine-rate 50mbit
STATE=$(cl path state)
assert_exit 2 "unknown slurm subcommand" cl slurm frobnicate
assert_stderr_line "slurm: expected up, down, status"
assert_exit 3 "slurm srun before slurm up" cl slurm srun hostname
assert_stderr_line "slurm is not up"
assert_exit 0 "slurm up" cl slurm up
assert_exit 0 "slurm up again" cl slurm up
grep -q "already up" "$T/stderr" || fail "second slurm up did not say 'already up'"
assert_exit 0 "slurm status" cl slurm status
grep -Eq "^$NAME-client1 +idle +[0-9]+ +rail0,rail1$" "$T/stdout" || { cat "$T/stdout"; fail "client1 is not an idle node with features rail0,rail1"; }
grep -Eq "^$NAME-client2 +idle +[0-9]+ +rail0,rail1$" "$T/stdout" || fail "client2 is not an idle node with features rail0,rail1"
ok "sinfo: both clients idle, rails as node features"
SPIDS=$(awk '$1 == "pid" {print $2, $3}' "$STATE/slurm/created")

# What every step needs on this 2-core machine: TCP and shared memory, ranks that yield when idle.
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_mpi_yield_when_idle=1
srun_rb() { # ARGS...: a step of 2 tasks on each of the 2 hosts (slurm_step, tests/cluster_lib.sh); fails as srun does
    slurm_step "$T/srun.out" "$T/srun.err" --mpi=pmix -N 2 --ntasks-per-node 2 "$@"
    cat "$T/srun.out"
    cat "$T/srun.err" >&2
    return "$RC"
}

# 1. srun load tiers: 4 ranks on 2 hosts, cold all MISS, warm all HIT.
OMPI_MCA_btl_tcp_if_include=mgmt0 srun_rb "$RB" load tiers --backend "$(cl path backend_url)/slurm-tiers" \
    --tier "$(cl path tier_url)/slurm-tiers" --objects 8 --sizes 1MiB --warm-epochs 2 --fresh -c 2 \
    --out "$T/tiers" --quiet >"$T/tiers.txt"
R=$T/tiers/result.json
assert_jq "$R" '.mpi.size == 4 and .mpi.hosts == 2 and .mpi.ranks_per_host == [2, 2]' "srun: 4 ranks, 2 hosts, 2 per host"
assert_jq "$R" "[.hosts[] | {name, ranks}] | sort_by(.name) == [{\"name\": \"$NAME-client1\", \"ranks\": 2}, {\"name\": \"$NAME-client2\", \"ranks\": 2}]" "ranks on both clients"
assert_jq "$R" '.phases[0].counters | length == 2' "counters sampled once per host"
assert_jq "$R" '.summary.tiers_rows[] | select(.how == "cold") | .cache_miss == 8 and .cache_hit == 0 and .bytes == 8 * 1048576' "cold: 8 MISS, 0 HIT, 8 MiB"
assert_jq "$R" '.summary.tiers_rows[] | select(.how == "warm") | .cache_hit == 16 and .cache_miss == 0 and .bytes == 16 * 1048576' "warm: 16 HIT (2 epochs), 0 MISS, 16 MiB"
assert_jq "$R" '[.checks[] | select(.passed | not)] == []' "every check passed"

# 2. srun coll allreduce --algo ring,hier through rail-bind.sh: exact results; hier stays on its rails.
srun_rb "$ROOT/scripts/rail-bind.sh" "$RB" coll allreduce --algo ring,hier -b 256K -e 1M -f 4 -n 2 -w 1 \
    --out "$T/coll" --quiet >"$T/coll.txt"
assert_jq "$T/coll/result.json" '.summary.wrong_total == 0 and ([.summary.collective_rows[] | .ranks_per_node] | unique) == [2] and ([.summary.collective_rows[].algo] | unique) == ["hier", "ring"]' \
    "srun coll ring,hier: #wrong = 0, 2 ranks per node"
spine() { ip -n "$NAME-spine" -j -s link show | jq '[.[].stats64.rx.bytes] | add'; }
declare -A tx0=()
for h in client1 client2; do for i in rail0 rail1; do tx0[$h.$i]=$(counter "$h" "$i"); done; done
sp0=$(spine)
srun_rb "$ROOT/scripts/rail-bind.sh" "$RB" coll allreduce --algo hier -b 1M -e 1M -n 3 -w 1 --out "$T/hier" --quiet >/dev/null
sp=$(( $(spine) - sp0 ))
assert_jq "$T/hier/result.json" '.summary.wrong_total == 0' "srun coll hier: #wrong = 0"
# hier at 1 MiB over 2 nodes: each rank's 512 KiB share is all-reduced with its peer on the other
# node, on its rail: 512 KiB out and 512 KiB in per run, (3 + 1 warm-up) x 2 (out-of-place, in-place) runs.
want=$((8 * 2 * 524288))
for h in client1 client2; do
    for i in rail0 rail1; do
        d=$(( $(counter "$h" "$i") - tx0[$h.$i] ))
        [ "$d" -ge "$want" ] || fail "$h $i carried $d bytes in the hier run, expected >= $want"
        ok "$h $i carried $d bytes (>= $want)"
    done
done
[ "$sp" -lt 262144 ] || fail "the spine received $sp bytes during the hier run: traffic left its rail"
ok "hier stayed on-rail: the spine received $sp bytes"

# 3. sbatch block on both nodes, results on each node's own disk; collect.yml brings both hosts' fio files.
L=$(cl path local)
jid=$(RB_RESULTS=$L/results RB_TARGET=$L RB_ARGS="--size 4MiB --bs 4k --iodepth 1,4 --runtime 1s --direct 0 --allow-root-fs" \
    OMPI_MCA_btl_tcp_if_include=mgmt0 cl slurm sbatch --parsable -o "$L/%x-%j.out" "$ROOT/scripts/slurm/block.sbatch")
[[ $jid =~ ^[0-9]+$ ]] || fail "sbatch printed '$jid', not a job id"
# wait_job JOBID: until the job has left the queue (bounded: 120 s), then prints its state.
wait_job() {
    local i
    for i in $(seq 240); do
        [ -n "$(cl slurm squeue -h -j "$1" 2>/dev/null)" ] || break
        sleep 0.5
    done
    cl slurm scontrol show job "$1" | grep -o 'JobState=[A-Z]*'
}
assert_eq "sbatch block job state" "JobState=COMPLETED" "$(wait_job "$jid")"
export ANSIBLE_CONFIG=$ROOT/ansible/ansible.cfg ANSIBLE_LOCAL_TEMP=$T/ansible-local ANSIBLE_NOCOLOR=1
ansible-playbook -i "$(cl path inventory)" "$ROOT/ansible/collect.yml" -e "railbench_results_dir=$L/results" \
    -e "railbench_run_id=rb-block-$jid" -e "railbench_collect_dir=$T/collected" </dev/null >"$T/collect.log" 2>&1 ||
    { tail -n 30 "$T/collect.log"; fail "collect.yml failed"; }
C=$T/collected/rb-block-$jid
assert_jq "$C/result.json" '.command == "block" and .mpi.size == 2 and .mpi.hosts == 2' "collected result.json: block on 2 hosts"
assert_jq "$C/result.json" "[.summary.block_points[0].per_rank[].host] | sort == [\"$NAME-client1\", \"$NAME-client2\"]" "one rank on each host"
for r in 0 1; do
    for p in 4k-randread-qd1-j1 4k-randread-qd4-j1; do
        assert_jq "$C/points/$r/$p.json" '.jobs[0].read.total_ios > 0' "rank $r's fio file $p.json came back with its I/Os"
    done
done
tar -tzf "$T/collected/archives/$NAME-client2.tar.gz" >"$T/c2.list"
grep -q "points/1/4k-randread-qd1-j1.json" "$T/c2.list" || fail "client2's archive lacks its fio files"
! grep -q "result.json" "$T/c2.list" || fail "client2's archive has a result.json: it was not written there"
ok "client2's archive holds its own rank's fio files only ($(wc -l <"$T/c2.list") entries)"

# 4. scancel mid-run: the job's result.json is written, with a failed `completed` check.
cl exec client1 "$RB" load put "$(cl path backend_url)/slurm-get" --keep --objects 8 --size 1MiB --out "$T/put" --quiet >/dev/null
assert_jq "$T/put/result.json" '.phases[0].count == 8' "8 objects put on the origin"
jid=$(OMPI_MCA_btl_tcp_if_include=mgmt0 cl slurm sbatch --parsable -N 2 --ntasks-per-node 2 -o "$T/cancel.out" \
    --wrap "srun --mpi=pmix $RB load get $(cl path tier_url)/slurm-get --objects 8 --size 1MiB --duration 60s --interval 500ms --out $T/cancel --quiet")
for _ in $(seq 120); do [ -s "$T/cancel/intervals.jsonl" ] && break; sleep 0.5; done
[ -s "$T/cancel/intervals.jsonl" ] || { cat "$T/cancel.out"; fail "the job to cancel wrote no interval within 60 s"; }
t0=$(date +%s%N)
cl slurm scancel "$jid"
# scancel sends SIGTERM, then SIGKILL after KillWait (5 s here): the whole record (table.md comes with the final
# result.json) must be on disk before that. The outcome line goes to stderr, which srun stops forwarding once the step is cancelled.
for _ in $(seq 100); do [ -s "$T/cancel/table.md" ] && break; sleep 0.05; done
took=$((($(date +%s%N) - t0) / 1000000))
assert_eq "cancelled job state" "JobState=CANCELLED" "$(wait_job "$jid")"
[ -s "$T/cancel/table.md" ] || fail "scancel: no table.md within KillWait (5 s): $(tail -3 "$T/cancel.out")"
assert_jq "$T/cancel/result.json" '([.checks[] | select(.name == "completed")][0] | .passed == false and (.detail | test("^interrupted by")))
    and (.exit_status == 1 or .exit_status == 3)' "scancel: result.json written, interrupted, its exit status recorded"
assert_eq "scancel: requests in result.json = the intervals' sum" \
    "$(jq -s 'map(select(.phase == "get") | .count) | add' "$T/cancel/intervals.jsonl")" "$(jq '.phases[0].count' "$T/cancel/result.json")"
ok "scancel: the whole record ${took} ms after scancel"
assert_jq "$T/cancel/result.json" '.mpi.size == 4 and .phases[0].count > 0 and .phases[0].bytes == .phases[0].count * 1048576' "cancelled run kept what it measured: 4 ranks, every GET a whole 1 MiB object"

# 5. slurm down ends what slurm up started and removes the management host; the cluster stays up.
assert_exit 0 "slurm down" cl slurm down
while read -r pid start; do
    [ "$(proc_start "$pid")" != "$start" ] || fail "process $pid recorded by slurm up still runs after slurm down"
done <<<"$SPIDS"
[ ! -e "/run/netns/$NAME-mgmt" ] || fail "slurm down left namespace $NAME-mgmt"
[ ! -e "$STATE/slurm" ] || fail "slurm down left $STATE/slurm"
ok "slurm down: $(wc -l <<<"$SPIDS") processes ended, management host removed"
assert_exit 0 "status after slurm down" cl status
PIDS_UP=$(awk '$1 == "pid" {print $2, $3}' "$STATE/created")
assert_exit 0 "down" cl down
check_down "$STATE" "$PIDS_UP"
