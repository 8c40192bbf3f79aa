#!/usr/bin/env bash
# needs: netns root
# Cluster in a box: namespaced hosts over ssh, mpirun across them, slow backend vs tier cache, Ansible bench.yml, rails, clean down.
# Needs root (network namespaces, veths, sshd). Runs its own cluster name and subnet, so it
# does not touch a cluster someone else has up.
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" -eq 0 ] || fail "needs root: network namespaces, veths and sshd"
# shellcheck source=tests/cluster_lib.sh
. "$ROOT/tests/cluster_lib.sh"
PP=$ROOT/build/tests/rail_pingpong
[ -x "$PP" ] || fail "$PP is missing; make test builds it"

# ---------------------------------------------------------------- usage

assert_exit 0 "down without up" cl down
grep -q "not up" "$T/stdout" || fail "down without up did not say so"
assert_exit 2 "unknown command" cl frobnicate
assert_stderr_line "unknown command 'frobnicate'"
assert_exit 2 "unknown flag" cl up --colour blue
assert_stderr_line "unknown option '--colour'"
assert_exit 2 "bad --rails" cl up --rails many
assert_stderr_line "rails 'many': expected a number"
assert_exit 1 "status when down" cl status

# ---------------------------------------------------------------- 2 clients on the management network

# The backend link at 80 Mbit/s (10 MB/s): a 4 MiB read over it takes about 0.4 s.
assert_exit 0 "up --clients 2" cl up --clients 2 --net "$NET" --backend-rate 80mbit
STATE=$(cl path state)
assert_exit 0 "up again with the same options" cl up --clients 2 --net "$NET" --backend-rate 80mbit
grep -q "already up" "$T/stderr" || fail "second up did not say 'already up'"
assert_exit 2 "up again with other options" cl up --clients 3 --net "$NET" --backend-rate 80mbit
assert_exit 0 "status" cl status
grep -Eq "rate limited to 80mbit by tbf|netem adds .* limits to 80mbit" "$T/stdout" || { cat "$T/stdout"; fail "status does not describe the backend link"; }
ok "backend link: $(grep -E 'tbf|netem' "$T/stdout" | tail -n1 | sed 's/^ *//')"

# Every host answers over ssh with its own hostname; none has a default route.
names=()
for h in client1 client2 tier backend; do
    n=$(cl ssh "$h" hostname)
    assert_eq "hostname of $h over ssh" "$NAME-$h" "$n"
    names+=("$n")
    [ -z "$(cl exec "$h" ip -4 route show default)" ] || fail "$h has a default route"
done
assert_eq "distinct hostnames" 4 "$(printf '%s\n' "${names[@]}" | sort -u | wc -l)"
assert_eq "client1 reaches client2 over ssh by name" "$NAME-client2" "$(cl exec client1 ssh -F "$(cl path ssh_config)" "$NAME-client2" hostname)"

# mpirun from client1 over ssh: 2 ranks on each client.
cl mpirun -np 4 "$RB" fabric counters --duration 2s --interval 500ms --out "$T/fc" --quiet
R=$T/fc/result.json
assert_jq "$R" '.mpi.size == 4 and .mpi.hosts == 2' "4 ranks on 2 hosts"
assert_jq "$R" "[.hosts[].name] | sort == [\"$NAME-client1\", \"$NAME-client2\"]" "hosts are the two clients"
assert_jq "$R" '[.hosts[].ranks] == [2, 2]' "2 ranks on each host"
assert_jq "$R" '.phases[0].counters | length == 2' "each host sampled its own counters"

# The backend's link is slow, the tier is not: a 4 MiB object straight from the backend, then
# twice through the tier (MISS fetches over the slow link, HIT is served by the tier).
ORIGIN=$(cl path origin_root)
head -c 4194304 /dev/urandom >"$ORIGIN/obj4m"
chmod 0644 "$ORIGIN/obj4m"
sent_before=$(tc -s -n "$NAME-backend" qdisc show dev mgmt0 | awk '/Sent/ {print $2; exit}')
get() { # URL OUTFILE: prints "code size seconds cache-status"
    cl exec client1 curl -s --max-time 60 -o "$2" -w '%{http_code} %{size_download} %{time_total} %header{x-cache-status}\n' "$1"
}
read -r c1 s1 t_direct _ <<<"$(get "http://$NET.0.3/obj4m" "$T/direct")"
read -r c2 s2 t_miss x2 <<<"$(get "http://$NET.0.2/obj4m" "$T/miss")"
read -r c3 s3 t_hit x3 <<<"$(get "http://$NET.0.2/obj4m" "$T/hit")"
assert_eq "direct GET" "200 4194304" "$c1 $s1"
assert_eq "first GET through the tier" "200 4194304 MISS" "$c2 $s2 ${x2:-none}"
assert_eq "second GET through the tier" "200 4194304 HIT" "$c3 $s3 ${x3:-none}"
for f in direct miss hit; do cmp -s "$ORIGIN/obj4m" "$T/$f" || fail "bytes of the $f read differ from the object"; done
ok "direct ${t_direct}s, tier miss ${t_miss}s, tier hit ${t_hit}s"
# Designed gap: 10 MB/s on the backend link against an unshaped veth; 4x is a wide margin (a band: a hit took
# 0.12 s of a loaded machine's time once, a third of the direct read's).
band "direct read time / tier hit time" "$(jq -n "$t_direct / $t_hit")" 4 -
band "tier miss time / tier hit time" "$(jq -n "$t_miss / $t_hit")" 4 -
sent_after=$(tc -s -n "$NAME-backend" qdisc show dev mgmt0 | awk '/Sent/ {print $2; exit}')
[ $((sent_after - sent_before)) -ge $((2 * 4194304)) ] || fail "shaped qdisc sent $((sent_after - sent_before)) bytes, expected the direct and the miss read (>= 8 MiB)"
ok "direct and miss crossed the shaped backend qdisc ($((sent_after - sent_before)) bytes), the hit did not need it"

# Ansible from this machine over ssh: setup, then `load tiers` from both clients against the tier and
# the backend hosts (PUT to the backend, direct, cold and warm through the tier), then collect.
t0=$SECONDS
export ANSIBLE_CONFIG=$ROOT/ansible/ansible.cfg ANSIBLE_LOCAL_TEMP=$T/ansible-local ANSIBLE_NOCOLOR=1
ansible-playbook -i "$(cl path inventory)" "$ROOT/ansible/bench.yml" \
    -e "{\"railbench_command\": \"load tiers\", \"railbench_ranks_per_host\": 2,
         \"railbench_args\": [\"--backend\", \"{{ railbench_backend_url }}/tiers\", \"--tier\", \"{{ railbench_tier_url }}/tiers\",
                            \"--objects\", \"8\", \"--sizes\", \"1MiB\", \"--warm-epochs\", \"2\", \"--fresh\", \"-c\", \"2\"],
         \"railbench_run_id\": \"ansible-tiers\", \"railbench_collect_dir\": \"$T/collected\"}" </dev/null >"$T/ansible.log" 2>&1 ||
    { tail -n 40 "$T/ansible.log"; fail "ansible-playbook bench.yml failed"; }
ok "ansible-playbook bench.yml ($((SECONDS - t0)) s)"
R=$T/collected/ansible-tiers/result.json
[ -f "$R" ] || { tail -n 20 "$T/ansible.log"; fail "bench.yml fetched no result.json"; }
assert_jq "$R" '.command == "load tiers" and .labels.run == "ansible-tiers"' "fetched result is the run's"
assert_jq "$R" "[.hosts[] | {name, ranks}] | sort_by(.name) == [{\"name\": \"$NAME-client1\", \"ranks\": 2}, {\"name\": \"$NAME-client2\", \"ranks\": 2}]" "ranks ran on both clients, 2 each"
assert_jq "$R" '.summary.tiers_rows[] | select(.how == "cold") | .cache_miss == 8 and .cache_hit == 0' "cold: 8 MISS, 0 HIT"
assert_jq "$R" '.summary.tiers_rows[] | select(.how == "warm") | .cache_hit == 16 and .cache_miss == 0' "warm: 16 HIT (2 epochs), 0 MISS"
assert_jq "$R" '.summary.tiers_rows[] | select(.how == "direct") | .bytes == 8 * 1048576' "direct moved exactly 8 MiB"
# Designed gap: the backend link is shaped to 10 MB/s, the tier serves hits from its cache.
assert_jq "$R" '([.summary.tiers_rows[] | select(.how == "warm")][0].throughput_bytes_per_s) > 2 * ([.summary.tiers_rows[] | select(.how == "direct")][0].throughput_bytes_per_s)' "warm more than 2x faster than direct over the slow backend link"
if "$RB" report --help >/dev/null 2>&1; then
    [ -s "$T/collected/report.md" ] || fail "railbench report exists but bench.yml wrote no report.md"
    ok "report written"
else
    grep -q "railbench report is not available" "$T/ansible.log" || fail "collect did not say why there is no report"
    grep -q "ansible-tiers/result.json" "$T/ansible.log" || fail "collect did not list what it fetched"
    ok "no railbench report yet: collect listed the fetched files"
fi
grep -Eq "$NAME-client1 +: ok=[0-9]+ +changed=[0-9]+ +unreachable=0 +failed=0" "$T/ansible.log" || fail "play recap shows a failure"

PIDS_UP=$(awk '$1 == "pid" {print $2, $3}' "$STATE/created")
assert_exit 0 "down" cl down
check_down "$STATE" "$PIDS_UP"
assert_exit 0 "down again" cl down

# ---------------------------------------------------------------- rails

# Spine links at 50 Mbit/s (6.25 MB/s) against unshaped rail bridges.
assert_exit 0 "up --rails 2" cl up --clients 2 --rails 2 --net "$NET" --spine-rate 50mbit
STATE=$(cl path state)

# pingpong ARGS...: runs the ping-pong with rail binding across 2 clients x 2 ranks; prints its JSON lines.
pingpong() {
    cl mpirun --net rails -np 4 "$ROOT/scripts/rail-bind.sh" "$PP" "$@" | grep '^{'
}

same_bw=()
for r in 0 1; do
    o=$((1 - r))
    declare -A before=()
    for h in client1 client2; do for i in rail0 rail1; do before[$h.$i]=$(counter "$h" "$i"); done; done
    line=$(pingpong --bytes 32M --local-rank "$r")
    echo "$line" >"$T/pp$r.json"
    assert_jq "$T/pp$r.json" ".btl_tcp_if_include == \"rail$r\" and .local_rank == $r and .peer_local_rank == $r" "local rank $r bound to rail$r"
    assert_jq "$T/pp$r.json" ".host == \"$NAME-client1\" and .peer_host == \"$NAME-client2\" and .bytes == 67108864" "rank pair on two hosts moved 64 MiB"
    for h in client1 client2; do
        on=$(( $(counter "$h" "rail$r") - before[$h.rail$r] ))
        off=$(( $(counter "$h" "rail$o") - before[$h.rail$o] ))
        [ "$on" -ge 67108864 ] || fail "$h rail$r moved $on bytes, expected >= 64 MiB"
        [ "$off" -lt 1048576 ] || fail "$h rail$o moved $off bytes while only rail$r was in use"
        ok "$h: rail$r moved $on bytes, rail$o $off"
    done
    same_bw+=("$(jq -r .bytes_per_s "$T/pp$r.json")")
    unset before
done

# Cross-rail: local rank 0 of client1 with local rank 1 of client2 goes through the spine.
spine_rx() { ip -n "$NAME-spine" -j -s link show dev r0 | jq '.[0].stats64.rx.bytes'; }
sp0=$(spine_rx)
pingpong --bytes 4M --local-rank 0 --cross >"$T/cross.json"
assert_jq "$T/cross.json" '.local_rank == 0 and .peer_local_rank == 1 and .bytes == 8388608' "cross-rail pair 0 -> 1 moved 8 MiB"
sp1=$(spine_rx)
[ $((sp1 - sp0)) -ge 4194304 ] || fail "spine r0 received $((sp1 - sp0)) bytes in the cross-rail run, expected >= 4 MiB"
ok "cross-rail traffic went through the spine ($((sp1 - sp0)) bytes in on r0)"
cross_bw=$(jq -r .bytes_per_s "$T/cross.json")
ok "same-rail ${same_bw[0]} and ${same_bw[1]} B/s, cross-rail $cross_bw B/s"
# Designed gap: spine links limited to 6.25 MB/s, rail bridges unshaped (0.04-3 GB/s seen on a
# loaded 2-core machine); 3x is a wide margin (a band).
band "rail 0 same-rail / cross-rail bandwidth" "$(jq -n "${same_bw[0]} / $cross_bw")" 3 -
band "rail 1 same-rail / cross-rail bandwidth" "$(jq -n "${same_bw[1]} / $cross_bw")" 3 -

# railbench under rail binding across 2 clients x 2 ranks.
cl mpirun --net rails -np 4 "$ROOT/scripts/rail-bind.sh" "$RB" fabric counters --duration 1s --interval 500ms --out "$T/fc-rails" --quiet
assert_jq "$T/fc-rails/result.json" '.mpi.size == 4 and ([.hosts[].ranks] == [2, 2])' "fabric counters with rail binding: 2 hosts x 2 ranks"

# railbench coll across 2 hosts x 2 ranks, local rank i bound to rail i: ring's inter-host hops go
# rail0 -> rail1 through the slow spine; hier's inter-node allreduces stay on their own rail. The spine's
# byte counters (every port) say which algorithm crossed it; busbw is printed, not compared: at -n 3 on a
# loaded 2-core machine hier's figure swings 40x between runs (0.0036 to 0.15 GB/s seen) while its spine
# bytes stay under 1 KB.
spine_bytes() { ip -n "$NAME-spine" -j -s link show | jq '[.[] | select(.ifname != "lo") | .stats64.rx.bytes] | add'; }
for algo in ring hier; do
    sb0=$(spine_bytes)
    cl mpirun --net rails -np 4 "$ROOT/scripts/rail-bind.sh" "$RB" coll allreduce --algo "$algo" -b 256K -e 1M -f 4 \
        -n 3 -w 1 --out "$T/coll-$algo" --quiet >"$T/coll-$algo.txt"
    sb1=$(spine_bytes)
    declare "spine_$algo=$((sb1 - sb0))"
    C=$T/coll-$algo/result.json
    assert_jq "$C" '.summary.wrong_total == 0 and ([.summary.collective_rows[] | .ranks_per_node] | unique) == [2]' \
        "coll $algo across 2 hosts: #wrong = 0, 2 ranks per node"
done
# shellcheck disable=SC2154 # spine_ring and spine_hier are set by declare above
{
    # ring: 2 sizes x 4 operations, each moving 2(n-1)/n of the buffer across the two inter-host hops.
    [ "$spine_ring" -ge 1048576 ] || fail "ring moved only $spine_ring bytes through the spine, expected >= 1 MiB"
    [ "$spine_hier" -lt 65536 ] || fail "hier moved $spine_hier bytes through the spine, expected none (< 64 KiB of other traffic)"
}
ring_bw=$(jq '[.summary.collective_rows[] | select(.size_bytes == 1048576)][0].oop.busbw_gbps' "$T/coll-ring/result.json")
hier_bw=$(jq '[.summary.collective_rows[] | select(.size_bytes == 1048576)][0].oop.busbw_gbps' "$T/coll-hier/result.json")
ok "spine bytes: ring $spine_ring, hier $spine_hier; 1 MiB allreduce busbw: hier $hier_bw GB/s, ring $ring_bw GB/s"

PIDS_UP=$(awk '$1 == "pid" {print $2, $3}' "$STATE/created")
assert_exit 0 "down (rails)" cl down
check_down "$STATE" "$PIDS_UP"

# ---------------------------------------------------------------- fat-tree

assert_exit 0 "up --rails 2 --fabric fat-tree" cl up --clients 2 --rails 2 --fabric fat-tree --net "$NET"
STATE=$(cl path state)
! grep -q "^$NAME-spine" <<<"$(ip netns list)" || fail "fat-tree made a spine"
ports=$(ip -n "$NAME-fabric" -o link show master fat | wc -l)
assert_eq "client rail ports on the one fat-tree bridge" 4 "$ports"
c1r0=$(counter client1 rail0); c2r1=$(counter client2 rail1)
pingpong --bytes 16M --local-rank 0 --cross >"$T/fat.json"
assert_jq "$T/fat.json" '.peer_local_rank == 1 and .bytes == 33554432' "fat-tree cross-rail pair moved 32 MiB"
d1=$(( $(counter client1 rail0) - c1r0 )); d2=$(( $(counter client2 rail1) - c2r1 ))
if [ "$d1" -lt 33554432 ] || [ "$d2" -lt 33554432 ]; then
    fail "fat-tree cross pair moved $d1 bytes on client1 rail0 and $d2 on client2 rail1, expected >= 32 MiB each"
fi
ok "fat-tree: client1 rail0 talks to client2 rail1 through the one switch"
PIDS_UP=$(awk '$1 == "pid" {print $2, $3}' "$STATE/created")
assert_exit 0 "down (fat-tree)" cl down
check_down "$STATE" "$PIDS_UP"
