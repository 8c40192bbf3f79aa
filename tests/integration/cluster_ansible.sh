#!/usr/bin/env bash
# needs: netns root
# Ansible against the cluster in a box: --check of every playbook changes nothing (also setup.yml from a fresh checkout), tags, argument specs, collect.yml brings both hosts' fio files of a block run.
# Needs root (network namespaces, veths, sshd).
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" -eq 0 ] || fail "needs root: network namespaces, veths and sshd"
# shellcheck source=tests/cluster_lib.sh
. "$ROOT/tests/cluster_lib.sh"

assert_exit 0 "up --clients 2" cl up --clients 2 --net "$NET"
STATE=$(cl path state)
INV=$(cl path inventory)
L=$(cl path local)
export ANSIBLE_CONFIG=$ROOT/ansible/ansible.cfg ANSIBLE_LOCAL_TEMP=$T/ansible-local ANSIBLE_NOCOLOR=1

# play PLAYBOOK LOG ARGS...: ansible-playbook against the box; fails the test with the log's tail.
play() {
    local pb=$1 log=$2; shift 2
    ansible-playbook -i "$INV" "$pb" "$@" </dev/null >"$log" 2>&1 || { tail -n 30 "$log"; fail "ansible-playbook $(basename "$pb") $* failed"; }
}
# recap_ok LOG: every host of the recap has failed=0 and unreachable=0; prints the hosts' count.
recap_ok() {
    local n
    n=$(grep -Ec "^$NAME-client[0-9]+ +: ok=[0-9]+ +changed=[0-9]+ +unreachable=0 +failed=0" "$1" || true)
    [ "$n" -ge 1 ] || { tail -n 20 "$1"; fail "$1: the play recap shows a failure or no host"; }
    [ "$(grep -c ': ok=' "$1")" = "$n" ] || { tail -n 20 "$1"; fail "$1: a host of the recap failed"; }
}

# 1. --check of every playbook: passes, and leaves no result, hostfile or collected file behind.
before=$(find "$STATE/results" "$STATE/hostdisk" | sort)
for pb in setup run collect bench; do
    play "$ROOT/ansible/$pb.yml" "$T/check-$pb.log" --check -e "railbench_collect_dir=$T/check-collected"
    recap_ok "$T/check-$pb.log"
    ok "$pb.yml --check passes"
done
grep -q "check mode: would run mpirun" "$T/check-run.log" || fail "run.yml --check did not say what it would run"
[ "$(find "$STATE/results" "$STATE/hostdisk" | sort)" = "$before" ] || fail "--check changed the results directories"
[ ! -e "$T/check-collected" ] || fail "collect.yml --check created $T/check-collected"
ok "check mode wrote nothing on the hosts or the controller"

# 2. setup.yml --check from a fresh checkout onto hosts that have no source tree yet.
git -C "$ROOT" clone -q "$ROOT" "$T/fresh"
play "$T/fresh/ansible/setup.yml" "$T/check-fresh.log" --check -e railbench_shared_fs=false \
    -e "railbench_controller_src=$T/fresh" -e "railbench_src_dir=$L/src" -e railbench_install=true \
    -e "railbench_prefix=$L/prefix" -e "railbench_bin=$L/prefix/bin/railbench"
recap_ok "$T/check-fresh.log"
grep -q "does not run yet; setup would build and install it" "$T/check-fresh.log" || fail "setup --check did not say the binary is still to be built"
[ -z "$(find "$STATE/hostdisk/client1" "$STATE/hostdisk/client2" -mindepth 1)" ] || fail "setup --check created files on the clients"
ok "setup.yml --check from a fresh checkout passes and creates nothing on the clients"

# 3. Tags pick phases; argument specs reject bad input before anything runs.
ansible-playbook -i "$INV" "$ROOT/ansible/bench.yml" --list-tasks --tags collect </dev/null >"$T/tags.txt"
grep -q "railbench_collect : Fetch the archive" "$T/tags.txt" || fail "--tags collect lists no collect task"
# Ansible tags each role's argument validation "always": those run, and only those, of the other phases.
! grep -E "railbench_(setup|run) :" "$T/tags.txt" | grep -vq "Validating arguments" || fail "--tags collect lists setup or run tasks"
ok "bench.yml --tags collect: collect's tasks only (and every role's argument check)"
rc=0
ansible-playbook -i "$INV" "$ROOT/ansible/run.yml" -e '{"railbench_args": {"not": "a list"}}' </dev/null >"$T/spec.log" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "run.yml accepted railbench_args as a mapping"
if ! grep -q "railbench_args" "$T/spec.log" || ! grep -q "Validation of arguments failed" "$T/spec.log"; then
    tail -n 20 "$T/spec.log"; fail "run.yml's failure does not come from its argument specs naming railbench_args"
fi
ok "argument specs: railbench_args as a mapping is refused (exit $rc)"

# 4. A two-host block run whose results stay on each host's own disk; collect.yml brings both.
play "$ROOT/ansible/run.yml" "$T/run.log" -e "railbench_results_dir=$L/results" \
    -e '{"railbench_command": "block", "railbench_run_id": "blk", "railbench_mpirun_extra_args": ["--mca", "btl", "self,vader,tcp", "--mca", "btl_vader_single_copy_mechanism", "none", "--bind-to", "none"],
         "railbench_args": ["--target", "'"$L"'", "--size", "4MiB", "--bs", "4k", "--iodepth", "1,4", "--runtime", "1s", "--direct", "0"]}'
[ -f "$STATE/hostdisk/client1/results/blk/result.json" ] || fail "no result.json on client1's disk"
[ -d "$STATE/hostdisk/client2/results/blk/points/1" ] || fail "no fio files of rank 1 on client2's disk"
[ ! -e "$STATE/hostdisk/client2/results/blk/points/0" ] || fail "rank 0's fio files on client2's disk"
ok "block across 2 hosts: result.json on client1, rank 1's fio files on client2 only"
play "$ROOT/ansible/collect.yml" "$T/collect.log" -e "railbench_results_dir=$L/results" -e railbench_run_id=blk \
    -e "railbench_collect_dir=$T/collected"
recap_ok "$T/collect.log"
for h in client1 client2; do [ -s "$T/collected/archives/$NAME-$h.tar.gz" ] || fail "no archive from $h"; done
ok "one archive per host"
C=$T/collected/blk
assert_jq "$C/result.json" '.command == "block" and .mpi.size == 2 and .mpi.hosts == 2 and .labels.run == "blk"' "collected result.json: block, 2 ranks on 2 hosts"
assert_jq "$C/result.json" "[.summary.block_points[0].per_rank[] | [.rank, .host]] == [[0, \"$NAME-client1\"], [1, \"$NAME-client2\"]]" "rank 0 ran on client1, rank 1 on client2"
for r in 0 1; do
    for p in 4k-randread-qd1-j1 4k-randread-qd4-j1; do
        ios=$(jq -r ".summary.block_points[] | select(.name == \"$p\") | .per_rank[] | select(.rank == $r) | .total_ios" "$C/result.json")
        got=$(jq -r '.jobs[0].read.total_ios' "$C/points/$r/$p.json")
        [ "$got" -gt 0 ] || fail "rank $r's $p.json: no I/Os"
        [ "$ios" = "$got" ] || fail "rank $r's $p.json has $got I/Os, result.json says $ios"
        ok "rank $r's fio file $p.json came back ($got I/Os)"
    done
done
[ -s "$T/collected/report.md" ] || fail "collect wrote no report.md"
ok "railbench report on the collected run"

PIDS_UP=$(awk '$1 == "pid" {print $2, $3}' "$STATE/created")
assert_exit 0 "down" cl down
check_down "$STATE" "$PIDS_UP"
