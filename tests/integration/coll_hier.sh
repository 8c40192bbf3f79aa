#!/usr/bin/env bash
# needs: mpi
# railbench coll --algo hier: nodes and rails from --ranks-per-node (or the host), same exact results as ring.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
MPIRUN+=(--mca mpi_yield_when_idle 1)

# 4 ranks as 2 nodes x 2 rails: hier and ring over every type and op give the same (exact) outputs.
rb_mpirun 4 "$RB" coll allreduce --algo ring,hier --ranks-per-node 2 -d all -o all -b 12 -e 12K -f 32 -n 1 -w 0 -c 2 \
    --out "$T/h4" >"$T/h4.out"
R=$T/h4/result.json
assert_jq "$R" '.summary.ranks_per_node == 2 and .summary.wrong_total == 0' "ranks_per_node 2, nothing wrong"
assert_jq "$R" '[.summary.collective_rows[] | select(.algo == "hier")] | length == 150' "hier: 10 types x 5 ops x 3 sizes"
assert_jq "$R" '[.summary.collective_rows[] | select(.algo == "hier") | .oop.wrong, .ip.wrong] | all(. == 0)' \
    "hier: every element of every output exact"
# The same rows, element for element (the checker compares every element with one exact expected value).
assert_jq "$R" '[.summary.collective_rows[] | select(.algo == "ring") | [.type, .redop, .size_bytes, .count, .oop.wrong, .ip.wrong]]
    == [.summary.collective_rows[] | select(.algo == "hier") | [.type, .redop, .size_bytes, .count, .oop.wrong, .ip.wrong]]' \
    "hier and ring: same rows, same (zero) wrong elements"
for r in 0 1 2 3; do
    grep -Eq "^#  Rank  $r Group  0 Pid +[0-9]+ on +[^ ]+ device  $((r % 2)) \[node $((r / 2)) rail $((r % 2))\] cpu\$" "$T/h4.out" ||
        fail "rank $r: node $((r / 2)), rail $((r % 2))"
done
ok "ranks map to node r / 2, rail r % 2"
grep -q '4 ranks on 1 hosts, 2 ranks per node (--ranks-per-node)' "$T/h4.out" || fail "preamble names the override"

# Without --ranks-per-node the node is the host: one node of 4 ranks, one rail each.
rb_mpirun 4 "$RB" coll allreduce --algo hier -d int64 -o prod -b 1K -e 1K -n 1 -w 0 --out "$T/h1" --quiet >/dev/null
assert_jq "$T/h1/result.json" '.summary.ranks_per_node == 4 and .summary.wrong_total == 0 and (.summary.collective_rows | length) == 1' \
    "one host: one node of 4"
# --ranks-per-node 1: every rank its own node, hier is one allreduce over a single rail.
rb_mpirun 4 "$RB" coll allreduce --algo hier --ranks-per-node 1 -d uint8 -o max -b 100K -e 100K -n 1 -w 0 \
    --out "$T/h0" --quiet >/dev/null
assert_jq "$T/h0/result.json" '.summary.ranks_per_node == 1 and .summary.wrong_total == 0' "4 nodes of 1 rank"

# hier applies to allreduce only; other collectives say so.
rb_mpirun 2 "$RB" coll broadcast --algo hier -b 1K -e 1K -n 1 -w 0 --out "$T/hb" >"$T/hb.out"
grep -q '^# hier: not applicable to broadcast: hier is the rail-aware allreduce' "$T/hb.out" || fail "n/a line"
assert_jq "$T/hb/result.json" '(.summary.collective_rows | length) == 0 and .summary.not_applicable[0].algo == "hier"' \
    "broadcast: no hier rows, reported not applicable"

# A group size that does not divide the ranks: one line from rank 0, exit 2, no result directory.
rc=0
rb_mpirun 4 "$RB" coll allreduce --algo hier --ranks-per-node 3 --out "$T/bad" >"$T/bad.out" 2>"$T/bad.err" || rc=$?
assert_eq "--ranks-per-node 3 on 4 ranks: exit" 2 "$rc"
[ "$(grep -c '^railbench' "$T/bad.err")" = 1 ] || { cat "$T/bad.err"; fail "one message"; }
grep -q '^railbench: error: --ranks-per-node: 3 does not divide the 4 ranks (use a divisor of 4)$' "$T/bad.err" || fail "message"
[ ! -e "$T/bad" ] || fail "a result directory was created for a usage error"
ok "--ranks-per-node 3: one line, no result directory"
