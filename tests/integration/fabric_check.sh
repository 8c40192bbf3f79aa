#!/usr/bin/env bash
# needs: netns root
# fabric check on a cluster in a box (4 hosts x 2 rails): healthy with the defaults, one rate-limited rail port
# (full and --quick), one direction of one pair throttled to 30 Mbit/s (one-way), one dead rail port; a straggler in load get.
# Needs root (network namespaces, veths, sshd). Its cluster name and subnet come from
# RB_TEST_CLUSTER_NAME / RB_TEST_CLUSTER_NET, else a name of its own and a free 10.x.
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" -eq 0 ] || fail "needs root: network namespaces, veths and sshd"
# shellcheck source=tests/cluster_lib.sh
. "$(dirname "$0")/../cluster_lib.sh"

# ---------------------------------------------------------------- the schedule at scale, no MPI

"$RB" fabric check --plan-only --hosts 1024 --rails 8 --out "$T/plan" >"$T/plan.txt"
cat "$T/plan.txt"
assert_jq "$T/plan/result.json" '.summary.rounds == 1023 and .summary.pairs_per_round == 512 and .summary.links == 4190208 and .summary.verified' \
    "1,024 hosts x 8 rails: 1,023 rounds of 512 pairs, 4,190,208 links, every pair once"
ok "planned in $(jq .summary.plan_s "$T/plan/result.json") s, verified in $(jq .summary.verify_s "$T/plan/result.json") s"
# --quick at the same scale: a few rounds, then each suspect beside two known-good hosts, planned and checked for real.
"$RB" fabric check --plan-only --quick --hosts 1024 --rails 8 --out "$T/planq" >"$T/planq.txt"
grep -- "--quick:" "$T/planq.txt"
assert_jq "$T/planq/result.json" '.summary.quick | .first_rounds == 2 and .second_rounds == 2 and .suspects == 3 and .second_pairs == 6 and .rounds == 4 and .links == 8240' \
    "--quick at 1,024 x 8: 2 + 2 rounds, 3 suspects of one bad port each paired with 2 good hosts, 8,240 links"
assert_jq "$T/planq/result.json" '.summary.quick.estimated_run_s * 20 < .summary.estimated_run_s' "--quick: over 20x less time than every pair"
assert_exit 2 "--plan-only without --hosts" "$RB" fabric check --plan-only
assert_stderr_line "plan-only needs --hosts"
assert_exit 2 "--threshold 2" "$RB" fabric check --plan-only --hosts 4 --threshold 2
assert_stderr_line "threshold 2: expected a number in"

# ---------------------------------------------------------------- 4 hosts x 2 rails

assert_exit 0 "up --clients 4 --rails 2" cl up --clients 4 --rails 2 --net "$NET"
H=("$NAME-client1" "$NAME-client2" "$NAME-client3" "$NAME-client4")
BAD=${H[2]}  # client3

# Single-stream TCP on this shared 2-core machine spans 0.02-1 GB/s from run to run and pair to pair
# while other builds run. Every link the first pass finds below --threshold of its rail's level is measured
# 4 times more beside a reference link, and is slow only when even its best repeat is below the threshold
# times the references' median and below their worst, and its median several standard errors beyond
# theirs (tests/unit/test_fabric_check.c has the rules). The box's hosts share this machine's 2 cores, so
# as the README's command for the box does, --bind-to core puts local rank i of every host (rail i) on core
# i: every pair of a rail then runs alike, as the pairs of a real rail do on hosts of their own (unbound,
# a pair split over two busy cores waits for wake-ups, 2-5x the p50 of a pair on one, for seconds). And
# client1's ranks run in a session of their own (cluster.sh mpirun), as every other host's do, so a test
# or build beside this one does not slow that one host. Every option of fabric check but the README's
# --size and --iters at its default: tests/bench/fabric_check_noise.sh repeats it (BENCHMARKS.md).
BASE=(fabric check --size 1MiB --iters 4)
CHECK=("${BASE[@]}")
# wire_ok RESULT TAG LINKS: every direction of every link (4 each) carries its receiving veth's rx_bytes and rx_packets
# over the receiver's own window, and railbench's payload there is within 2 % of the counters' (rx_bytes less
# 66 header bytes a packet: Ethernet 14, IPv4 20, TCP 20 + 12 of timestamps). Ratios, never rates: the 2 cores
# are shared, so a rate swings with the load while the two counts of one window do not. Each figure reported is
# the window's payload over the window.
wire_ok() {
    local r=$1 tag=$2 n=$3
    assert_jq "$r" "[.summary.links[] | select(.status == \"ok\") | .wire[]] | length == 4 * $n and
        all(. != null and .note == null and .if_rx_bytes > 0 and .if_rx_packets > 0 and .header_bytes_per_packet == 66
            and .payload_bytes > 0 and .window_s > 0 and .if_payload_bytes > 0)" \
        "$tag: every direction of the $n links has its receiving veth's rx bytes and packets over its window"
    assert_jq "$r" '[.summary.links[] | select(.status == "ok") | .wire[].ratio] | min >= 0.98 and max <= 1.02' \
        "$tag: railbench's payload within 2 % of the counters' in every direction"
    assert_jq "$r" '[.summary.links[] | select(.status == "ok") | [.bw_ab_bytes_per_s, .wire.ab], [.bw_ba_bytes_per_s, .wire.ba],
        [.bw_bidir_ab_bytes_per_s, .wire.bidir_ab], [.bw_bidir_ba_bytes_per_s, .wire.bidir_ba] | (.[0] / .[1].payload_bytes_per_s - 1) | fabs] | max < 1e-9' \
        "$tag: each figure is its window's payload over the window"
    assert_jq "$r" ".summary.wire.counted == 4 * $n and .summary.wire.failed_links == 0 and .summary.wire.note == null" \
        "$tag: summary.wire counts $((4 * n)) directions, none apart"
    ok "$tag: railbench / interface counters $(jq -r '.summary.wire | "\(.ratio_min)-\(.ratio_max)"' "$r")"
}

check() { # OUT TIMEOUT: runs the check over 8 ranks (2 per host, rank i of a host on rail i and core i); sets RC
    RC=0
    cl mpirun -np 8 --bind-to core "$RB" "${CHECK[@]}" --timeout "$2" --out "$T/$1" --quiet >"$T/$1.txt" 2>"$T/$1.err" || RC=$?
    [ -f "$T/$1/result.json" ] || { cat "$T/$1.err"; fail "$1: no result.json"; }
}

# The README's command for the box, with --ring and a Prometheus textfile: no finding. How often a healthy box gives
# one is a rate, which tests/bench/fabric_check_noise.sh measures (10 runs; BENCHMARKS.md), not this test.
mkdir -p "$T/healthy1-prom"
CHECK+=(--ring --prom-textfile "$T/healthy1-prom")
check healthy1 10s
R=$T/healthy1/result.json
jq -r '.summary.findings[] | "finding: \(.text)"' "$R"
assert_jq "$R" '[.checks[] | select(.name == "wire" and .passed)] | length == 1' "healthy run: the check wire passed"
assert_jq "$R" '.summary.findings == [] and ([.checks[] | select(.passed == false)] | length) == 0' \
    "healthy run: no finding ($(jq '[.summary.links[] | select(.confirmed)] | length' "$R") suspect link(s) cleared by their repeats)"
assert_eq "healthy run: exit" 0 "$RC"
assert_jq "$R" '.summary.rails == 2 and (.summary.hosts | length) == 4 and (.summary.links | length) == 12' \
    "healthy run: 6 pairs x 2 rails measured"
assert_jq "$R" '[.summary.links[] | select(.status != "ok" or .slow)] | length == 0' "healthy run: no link slow or hung"
assert_jq "$R" '[.summary.links[] | .bw_ab_bytes_per_s, .bw_ba_bytes_per_s, .bw_bidir_ab_bytes_per_s, .bw_bidir_ba_bytes_per_s] | min > 5e6' \
    "healthy run: every direction, alone and both at once, above 5 MB/s"
assert_jq "$R" '[.summary.links[] | (.bw_bidir_bytes_per_s - .bw_bidir_ab_bytes_per_s - .bw_bidir_ba_bytes_per_s) | fabs] | max < 1' \
    "healthy run: both at once is the sum of its two directions"
wire_ok "$R" "healthy run" 12
ok "healthy run: rail medians $(jq -r '[.summary.fleet[] | "\(.bw_bytes_per_s.median / 1e6 | floor) MB/s"] | join(", ")' "$R"), $(jq .summary.duration_s "$R") s"
grep -q "none: every link within" "$T/healthy1.txt" || fail "healthy table does not say there is no finding"
P=$T/healthy1-prom/railbench.prom
assert_eq "gauges: bandwidth per rail and direction" 24 "$(grep -c '^railbench_link_bandwidth_bytes_per_second{' "$P")"
assert_eq "gauges: every link up" 12 "$(grep -c '^railbench_link_up{.*} 1$' "$P")"
grep -q "^railbench_link_bandwidth_bytes_per_second{rail=\"1\",src=\"${H[0]}\",dst=\"${H[1]}\".*} [0-9]" "$P" || fail "no gauge for rail 1 ${H[0]} -> ${H[1]}"
assert_eq "gauges: a ring busbw per rail" 2 "$(grep -c '^railbench_rail_ring_busbw_bytes_per_second{' "$P")"
assert_jq "$T/healthy1/result.json" '[.summary.rings[] | [.rail, .hosts, .status, .wrong]] == [[0, 4, "ok", 0], [1, 4, "ok", 0]] and ([.summary.rings[].busbw_bytes_per_s] | min > 1e6)' \
    "--ring: a 4-host ring all-reduce on each rail, every element right, busbw above 1 MB/s"
ok "--ring busbw: $(jq -r '[.summary.rings[] | "rail \(.rail) \(.busbw_bytes_per_s / 1e6 | floor) MB/s"] | join(", ")' "$T/healthy1/result.json")"

# Nagle on a data connection, the same at both ends: on by default (as iperf3's streams), off at both with -N
# (iperf3 -N). Each rank of one pair (client1, client2 on rail 0) runs under strace, which logs every setsockopt:
# connect_until turns Nagle off on every connection it opens (the control connection's ping-pong needs that),
# then each data connection gets its setting at both ends.
nagle_run() { # TAG [OPTION]: a 2-rank check under strace; sets ZERO0 ZERO1 ONE1 (TCP_NODELAY [0] on ranks 0, 1; [1] on 1)
    local tag=$1
    shift
    cl mpirun -np 2 --map-by node sh -c 'exec strace -f -qq -e trace=setsockopt -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' \
        "$T/strace-$tag" "$RB" fabric check "$@" --rails 1 --ifaces rail0 --size 128K --iters 4 --reps 1 --confirm 0 \
        --lat-iters 20 --out "$T/nagle-$tag" --quiet >/dev/null 2>"$T/nagle-$tag.err" || { cat "$T/nagle-$tag.err"; fail "$tag: fabric check under strace"; }
    assert_jq "$T/nagle-$tag/result.json" '.summary.links | length == 1 and .[0].status == "ok"' "$tag: the pair measured"
    ZERO0=$(grep -c 'TCP_NODELAY, \[0\]' "$T/strace-$tag.0" || true)
    ZERO1=$(grep -c 'TCP_NODELAY, \[0\]' "$T/strace-$tag.1" || true)
    ONE1=$(grep -c 'TCP_NODELAY, \[1\]' "$T/strace-$tag.1" || true)
}
nagle_run default
DATA=$ZERO1 OFF1=$ONE1 # rank 1's other TCP_NODELAY [1]: its control connection and Open MPI's own sockets
[ "$ZERO0" -ge 4 ] && [ "$ZERO0" = "$ZERO1" ] ||
    fail "default: Nagle left on at both ends of every data connection: rank 0 set it on $ZERO0 times, rank 1 $ZERO1"
ok "default: Nagle on at both ends of each of the $DATA data connections"
nagle_run nodelay -N
[ "$ZERO0" = 0 ] && [ "$ZERO1" = 0 ] && [ "$ONE1" = $((OFF1 + DATA)) ] ||
    fail "-N: Nagle off at both ends: rank 0 turned it on $ZERO0 times, rank 1 $ZERO1; rank 1 turned it off $ONE1 times, not $OFF1 + $DATA"
assert_jq "$T/nagle-nodelay/result.json" '.config["no-delay"] == true' "-N recorded in the result's config"
ok "-N: Nagle off at both ends of each of the $DATA data connections"

# The counters catch what railbench did not count: iperf3 sends client1 -> client2 on rail0 while a 2-rank check
# measures that pair, so client2's rail0 receives both streams in a->b's window and the interfaces' payload is about
# twice railbench's; b->a's receiver (client1) gets only iperf3's ACKs, all headers, and still agrees. The check
# fails, naming the pair (an interface shared with other traffic is said, never passed as backed).
command -v iperf3 >/dev/null || fail "iperf3 is missing; run scripts/deps.sh"
A0=$(cl exec client1 ip -4 -o addr show dev rail0 | awk '{print $4}' | cut -d/ -f1)
B0=$(cl exec client2 ip -4 -o addr show dev rail0 | awk '{print $4}' | cut -d/ -f1)
bg ip netns exec "$NAME-client2" iperf3 -s -1 -B "$B0" -p 5399
for _ in $(seq 50); do cl exec client2 ss -ltn | grep -q "$B0:5399 " && break; sleep 0.1; done
bg ip netns exec "$NAME-client1" iperf3 -c "$B0" -B "$A0" -p 5399 -t 30 -l 128K
IPERF_C=$LAST_PID
sleep 1
RC=0
cl mpirun -np 2 --map-by node "$RB" fabric check --rails 1 --ifaces rail0 --size 128K --duration 1s --reps 1 --confirm 0 \
    --lat-iters 20 --out "$T/shared" --quiet >"$T/shared.txt" 2>"$T/shared.err" || RC=$?
kill "$IPERF_C" 2>/dev/null || true
R=$T/shared/result.json
[ -f "$R" ] || { cat "$T/shared.err"; fail "shared rail: no result.json"; }
assert_eq "shared rail: exit" 1 "$RC"
assert_jq "$R" "[.checks[] | select(.passed == false and .name == \"wire rail0 ${H[0]} ${H[1]}\")] | length == 1" \
    "shared rail: the failed check wire rail0 ${H[0]} ${H[1]}"
assert_jq "$R" '.summary.links[0].wire | .ab.ratio < 0.98 and (.ba.ratio - 1 | fabs) <= 0.02 and .ab.if_payload_bytes > .ab.payload_bytes' \
    "shared rail: a->b's interface carried more payload than railbench received, b->a agrees"
assert_jq "$R" '.summary.wire.failed_links == 1 and ([.checks[] | select(.name == "wire")] | length == 0)' \
    "shared rail: summary.wire counts the link, no passed wire check"
ok "shared rail: $(jq -r '.checks[] | select(.name | startswith("wire rail0")) | .detail' "$R" | head -c 300)"

# One direction of one pair: client1 -> client3 on rail 1 throttled to 30 Mbit/s by an htb class for that destination
# on client1's rail1; client3 -> client1 and every other pair untouched: htb sends what no filter classifies straight
# out (no default class). A default class "untouched" at 10 Gbit/s capped client1's other rail-1 links below the
# ~2 GB/s the veths carry since the fabric check's buffers are page-aligned, and the check rightly called them slow.
IP3=$(cl exec client3 ip -4 -o addr show dev rail1 | awk '{print $4}' | cut -d/ -f1)
cl exec client1 tc qdisc replace dev rail1 root handle 1: htb r2q 1000
cl exec client1 tc class add dev rail1 parent 1: classid 1:20 htb rate 30mbit ceil 30mbit
cl exec client1 tc filter add dev rail1 parent 1: protocol ip prio 1 u32 match ip dst "$IP3/32" flowid 1:20
CHECK=("${BASE[@]}")
check oneway 10s
R=$T/oneway/result.json
assert_eq "one-way: exit" 1 "$RC"
assert_jq "$R" ".summary.findings | length == 1 and .[0].kind == \"one-way\" and .[0].rail == 1 and .[0].src == \"${H[0]}\" and .[0].dst == \"$BAD\"" \
    "exactly one finding: one-way ${H[0]} -> $BAD on rail 1"
assert_jq "$R" "[.summary.links[] | select(.rail == 1 and .a == \"${H[0]}\" and .b == \"$BAD\")][0] | .repeats.bw_ab_bytes_per_s < 4.2e6 and .repeats.bw_ba_bytes_per_s > 20e6" \
    "${H[0]} -> $BAD runs at the 30 Mbit/s (3.75 MB/s) limit in its repeats, $BAD -> ${H[0]} above 20 MB/s"
wire_ok "$R" "one-way fault" 12
# The text gives the worse of the direction's two figures: alone ("at"), or while the other way runs.
grep -Eq "one way only: ${H[0]} → $BAD( while the other way runs)? at" "$T/oneway.txt" ||
    { cat "$T/oneway.txt"; fail "the one-way finding is not printed"; }
grep -q "| $(printf '%-16.16s' "${H[0]}") | .* 3\.[0-9]M \* |" "$T/oneway.txt" || { cat "$T/oneway.txt"; fail "the matrix does not star ${H[0]} -> $BAD"; }
ok "finding: $(jq -r '.summary.findings[0].text' "$R")"
cl exec client1 tc qdisc del dev rail1 root

# One rail port limited both ways: client3's rail1 (its egress, and the switch port's egress to it).
cl exec client3 tc qdisc replace dev rail1 root tbf rate 40mbit burst 32kb latency 400ms
ip netns exec "$NAME-fabric" tc qdisc replace dev client3-r1 root tbf rate 40mbit burst 32kb latency 400ms
CHECK=("${BASE[@]}" --ring --k8s-nodes "$T/nodes.yaml")
check slow 10s
R=$T/slow/result.json
assert_eq "rate-limited port: exit" 1 "$RC"
assert_jq "$R" ".summary.findings | length == 1 and .[0].kind == \"host-rail\" and .[0].rail == 1 and .[0].host == \"$BAD\"" \
    "exactly one finding: $BAD on rail 1"
assert_jq "$R" "[.summary.links[] | select(.slow) | [.rail, ([.a, .b] | index(\"$BAD\") != null)]] == [[1, true], [1, true], [1, true]]" \
    "the slow links are exactly $BAD's three on rail 1"
assert_jq "$R" "[.summary.links[] | select(.rail == 1 and (.a == \"$BAD\" or .b == \"$BAD\")) | .bw_ab_bytes_per_s, .bw_ba_bytes_per_s] | max < 6e6" \
    "$BAD's rail-1 links run at the 5 MB/s limit"
jq -e '[.checks[] | select(.passed == false)] | length == 1' "$R" >/dev/null ||
    fail "rate-limited port: failed checks other than the finding: $(jq -c '[.checks[] | select(.passed == false) | "\(.name): \(.detail)"]' "$R")"
ok "one failed check"
grep -q "rail 1: every link of $BAD is slow" "$T/slow.txt" || { cat "$T/slow.txt"; fail "the finding is not printed"; }
ok "finding: $(jq -r '.summary.findings[0].text' "$R")"
# The Kubernetes file: client3 EVICT and tainted with the finding's kind, the others PASS and untouched.
assert_eq "k8s: Node objects" 4 "$(grep -c '^kind: Node$' "$T/nodes.yaml")"
assert_eq "k8s: EVICT labels" 1 "$(grep -c 'railbench.io/fabric-check: EVICT' "$T/nodes.yaml")"
assert_eq "k8s: PASS labels" 3 "$(grep -c 'railbench.io/fabric-check: PASS' "$T/nodes.yaml")"
awk '/^  name: /{n=$2} /value: host-rail/{print n}' "$T/nodes.yaml" | grep -qx "$BAD" || { cat "$T/nodes.yaml"; fail "k8s: $BAD is not tainted host-rail"; }
assert_eq "k8s: taints" 1 "$(grep -c 'effect: NoSchedule' "$T/nodes.yaml")"
ok "k8s: $T/nodes.yaml labels $BAD EVICT with a NoSchedule taint, the other 3 PASS"
# --quick on the same fault: two rounds, then each suspect host beside known-good hosts; the same one finding.
CHECK=("${BASE[@]}" --quick)
check quick 10s
assert_eq "--quick: exit" 1 "$RC"
assert_jq "$T/quick/result.json" ".summary.quick and (.summary.findings | length == 1 and .[0].kind == \"host-rail\" and .[0].rail == 1 and .[0].host == \"$BAD\")" \
    "--quick: exactly one finding, $BAD on rail 1"
# $BAD and the two hosts it met in rounds 0 and 1 are suspects (a noisy link may add the fourth); $BAD then meets the one left.
assert_jq "$T/quick/result.json" '(.summary.quick_suspects == 3 and .summary.quick_second_pairs == 1 and (.summary.links | length) == 10) or (.summary.quick_suspects == 4 and .summary.quick_second_pairs == 0 and (.summary.links | length) == 8)' \
    "--quick: 2 rounds (8 links), then $BAD beside the host it had not met (10 links; 8 when noise made all 4 suspects)"
ok "--quick: $(jq -c '[.summary.quick_suspects, .summary.quick_second_pairs, (.summary.links | length)]' "$T/quick/result.json") (suspects, second-pass pairs, links)"
# The report: the finding, and per rail a host x host heat map with a cell per pair (the diagonal has none).
"$RB" report --html "$T/slow.html" "$T/slow" >"$T/slow-report.md"
grep -q "every link of $BAD is slow" "$T/slow-report.md" || fail "report: the finding is not in the table"
for r in 0 1; do
    svg=$(awk -v id="data-plot=\"check-rail-$r\"" 'index($0, id) { on = 1 } on { print } on && /<\/svg>/ { exit }' "$T/slow.html")
    assert_eq "report: rail $r heat map cells with a value" 12 "$(grep -o '<rect class="cell" ' <<<"$svg" | wc -l)"
done
ok "report: two heat maps, twelve measured cells each"
cl exec client3 tc qdisc del dev rail1 root
ip netns exec "$NAME-fabric" tc qdisc del dev client3-r1 root

# ---------------------------------------------------------------- stragglers in load get

ORIGIN=$(cl path origin_root)
mkdir -p "$ORIGIN/data"
for i in $(seq 0 15); do head -c 1048576 /dev/urandom >"$ORIGIN/data/obj-$(printf %08d "$i")"; done
chmod -R a+rX "$ORIGIN/data"
TIER=$(cl path tier_url)
# Warm the tier's cache, then read from it with client2's link to the switch limited both ways.
cl mpirun -np 8 "$RB" load get "$TIER/data" --objects 16 --pattern epoch --epochs 1 -c 2 --out "$T/warm" --quiet >/dev/null
ip netns exec "$NAME-fabric" tc qdisc replace dev client2-m root tbf rate 40mbit burst 32kb latency 400ms
cl exec client2 tc qdisc replace dev mgmt0 root tbf rate 40mbit burst 32kb latency 400ms
cl mpirun -np 8 "$RB" load get "$TIER/data" --objects 16 --duration 4s -c 2 --out "$T/get" >"$T/get.txt" 2>&1 ||
    { tail "$T/get.txt"; fail "load get under mpirun failed"; }
R=$T/get/result.json
assert_jq "$R" '.phases[0].hosts | length == 4 and ([.[].ranks] == [2, 2, 2, 2])' "load get: a record per host, 2 ranks each"
assert_jq "$R" "[.phases[0].outliers[].host] | unique == [\"${H[1]}\"]" "load get: the stragglers named are ${H[1]} alone"
assert_jq "$R" "[.phases[0].outliers[] | select(.figure == \"throughput_bytes_per_s\")] | length == 1 and .[0].ratio < 0.2" \
    "load get: ${H[1]} below 0.2x the hosts' median throughput"
assert_jq "$R" '([.phases[0].hosts[].count] | add) == .phases[0].count' "load get: per-host counts add up to the phase's"
# railbench report shows the per-host table and names the straggler there.
"$RB" report "$T/get" >"$T/get-report.md"
assert_eq "report: host rows" 4 "$(grep -cE '^\| get +\| [^|]*client[0-9]' "$T/get-report.md")"
assert_eq "report: the straggler row" "${H[1]}" "$(awk -F'|' '/throughput_bytes_per_s .*x the median/ { gsub(/ /, "", $3); print $3 }' "$T/get-report.md")"
grep -q "straggler: ${H[1]}: throughput" "$T/get.txt" || fail "the straggler is not printed"
ok "$(grep "straggler: ${H[1]}: throughput" "$T/get.txt")"
ip netns exec "$NAME-fabric" tc qdisc del dev client2-m root
cl exec client2 tc qdisc del dev mgmt0 root

# ---------------------------------------------------------------- a dead rail port

cl exec client3 ip link set rail1 down
CHECK=("${BASE[@]}" --ring)
check dead 6s
R=$T/dead/result.json
assert_eq "dead port: exit" 1 "$RC"
assert_jq "$R" "[.summary.links[] | select(.status == \"timeout\") | [.rail, ([.a, .b] | index(\"$BAD\") != null)]] == [[1, true], [1, true], [1, true]]" \
    "the hung pairs are exactly $BAD's three on rail 1"
assert_jq "$R" '[.summary.links[] | select(.status == "ok")] | length == 9' "the other 9 links completed"
assert_jq "$R" "[.summary.findings[] | select(.kind == \"hang\") | .rail] == [1, 1, 1]" "three hang findings, all on rail 1"
assert_jq "$R" "[.summary.findings[] | select(.kind != \"hang\") | [.kind, .rail, .host]] == [[\"host-rail\", 1, \"$BAD\"]]" \
    "and one attribution: $BAD's rail-1 port"
grep -q "rail 1: .* ⇄ .* did not complete within the timeout" "$T/dead.txt" || fail "the hang is not printed"
assert_jq "$R" '[.summary.rings[] | [.rail, .hosts, .status, .wrong]] == [[0, 4, "ok", 0], [1, 3, "ok", 0]]' \
    "--ring after the hang: rail 1's ring leaves $BAD out and completes over 3 hosts"
ok "$(grep -m1 'did not complete' "$T/dead.txt")"

assert_exit 0 "down" cl down
