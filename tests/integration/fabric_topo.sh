#!/usr/bin/env bash
# needs: -
# railbench fabric topo: counts, bisection and hop counts on example designs, --save/--dot/--out, bad input.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
TOPO=$ROOT/fabric/topologies

# One DGX H100 scalable unit: 8 rail leaves (one per rail) and 8 spines; 256 NIC cables and 256 uplinks.
"$RB" fabric topo --topology "$TOPO/dgx-h100-su.json" --json >"$T/su.json"
assert_jq "$T/su.json" '.counts.switches == 16 and .counts.leaves == 8 and .counts.leaves_per_rail == 1' "SU: 8 leaves + 8 spines"
assert_jq "$T/su.json" '.counts.cables == 512 and .counts.spine_cables == 256 and .counts.spine_ports_used == 32' "SU: cables"
# 16 nodes on each side x 8 NICs x 400 Gbit/s.
assert_jq "$T/su.json" '.counts.bisection_gbit_per_s == 51200' "SU: bisection 51.2 Tbit/s"

# Hops: cross-rail 0:7 -> 1:0 is leaf-spine-leaf without PXN, one leaf with PXN (plus one NVLink hop).
"$RB" fabric topo --topology "$TOPO/dgx-h100-su.json" --path 0:7 1:0 --json >"$T/p.json"
assert_jq "$T/p.json" '.path.src == 7 and .path.dst == 8' "path endpoints as ranks"
assert_jq "$T/p.json" '.path.pxn_off.switch_hops == 3 and .path.pxn_off.nvlink_hops == 0 and .path.pxn_off.via_spine' "rail-optimized, PXN off: 3 hops"
assert_jq "$T/p.json" '.path.pxn_on.switch_hops == 1 and .path.pxn_on.nvlink_hops == 1 and (.path.pxn_on.path | index("GPU 0:0")) == 2' "rail-optimized, PXN on: 1 hop via GPU 0:0"
"$RB" fabric topo --topology "$TOPO/dgx-h100-su.json" --path 3,35 --json >"$T/p2.json"
assert_jq "$T/p2.json" '.path.pxn_off.switch_hops == 1 and .path.pxn_on.switch_hops == 1' "same rail (0:3 -> 4:3): 1 hop either way"
# Fat-tree, one node per 16-port leaf: node 0 -> node 1 crosses the spine with or without PXN.
"$RB" fabric topo --kind fat-tree --nodes 4 --leaf-radix 16 --spines 4 --path 0:7 1:0 --json >"$T/f.json"
assert_jq "$T/f.json" '.path.pxn_off.switch_hops == 3 and .path.pxn_on.switch_hops == 3 and .path.pxn_on.nvlink_hops == 0' "fat-tree: 3 hops, PXN moot"
"$RB" fabric topo --kind fat-tree --nodes 4 --leaf-radix 16 --spines 4 --path 0:0 0:5 --json >"$T/f2.json"
assert_jq "$T/f2.json" '.path.pxn_off.switch_hops == 0 and .path.pxn_off.nvlink_hops == 1' "same node: NVLink only"
# Rail-only: no spine, so cross-rail needs PXN.
"$RB" fabric topo --topology "$TOPO/rail-only-16.json" --path 0:7 1:0 --json >"$T/r.json"
assert_jq "$T/r.json" '.path.pxn_off.reachable == false and .path.pxn_on.switch_hops == 1' "rail-only: no path without PXN"
assert_jq "$T/r.json" '.counts.spines == 0 and .counts.switches == 8 and .counts.cables == 128' "rail-only: 8 rail switches"
# 3:1 fat-tree: 48 NIC ports + 16 uplinks a leaf; the spines limit the bisection to a third.
"$RB" fabric topo --topology "$TOPO/fat-tree-3to1.json" --json >"$T/o.json"
assert_jq "$T/o.json" '.counts.leaves == 6 and .counts.nic_ports_per_leaf == 48 and .counts.uplinks_per_leaf == 16' "3:1 leaves"
assert_jq "$T/o.json" '.counts.spine_cables == 88 and .counts.bisection_gbit_per_s == 17600' "3:1 bisection = 88 uplinks / 2 x 400"

# The text table and the path lines.
"$RB" fabric topo --topology "$TOPO/dgx-h100-su.json" --path 0:7 1:0 >"$T/table.txt"
grep -q '^| switches | 16 |$' "$T/table.txt" || fail "table lacks the switch count"
grep -q 'PXN off: 3 switch hops, 0 NVLink hops: GPU 0:7 > NIC 0:7 > leaf 7 > spine > leaf 0 > NIC 1:0 > GPU 1:0' "$T/table.txt" || fail "PXN off path"
ok "table and path lines"

# --save round trip, --dot through Graphviz, --out.
"$RB" fabric topo --kind rail-optimized --nodes 2 --gpus-per-node 4 --nics-per-node 4 --leaf-radix 8 --spines 2 \
    --link leaf:200:2us --save "$T/saved.json" --dot "$T/fabric.dot" --out "$T/run" --quiet >/dev/null
"$RB" fabric topo --topology "$T/saved.json" --json >"$T/reload.json"
assert_jq "$T/reload.json" '.topology.nodes == 2 and .topology.links.leaf.bandwidth_gbit_per_s == 200 and .topology.links.leaf.latency_us == 2' "--save round trip"
dot -Tsvg "$T/fabric.dot" -o "$T/fabric.svg" || fail "dot rejects the graph"
# 8 GPU-NVSwitch + 8 GPU-NIC + 8 NIC-leaf + 4 leaves x 2 spines.
edges=$(grep -c -- ' -- ' "$T/fabric.dot")
assert_eq "Graphviz edges" 32 "$edges"
assert_jq "$T/run/result.json" '.command == "fabric topo" and .summary.counts.switches == 6 and .summary.counts.cables == 16' "--out result.json"
[ -s "$T/run/table.md" ] || fail "no table.md"

# Bad input: one line naming the problem, exit 2.
jq 'del(.nodes)' "$TOPO/dgx-h100-su.json" >"$T/missing.json"
assert_exit 2 "missing field" "$RB" fabric topo --topology "$T/missing.json"
assert_stderr_line 'missing.json: nodes is missing'
jq '.links.spine.bandwidth_gbit_per_s = 0' "$TOPO/dgx-h100-su.json" >"$T/zero.json"
assert_exit 2 "zero bandwidth" "$RB" fabric topo --topology "$T/zero.json"
assert_stderr_line 'links.spine.bandwidth_gbit_per_s must be > 0'
jq '.nics_per_node = 4 | .rails = 4' "$TOPO/dgx-h100-su.json" >"$T/ports.json"
assert_exit 2 "more GPUs than NIC ports" "$RB" fabric topo --topology "$T/ports.json"
assert_stderr_line 'one NIC port per GPU: gpus_per_node 8 > nics_per_node 4'
jq '.nodes = "32x"' "$TOPO/dgx-h100-su.json" >"$T/malformed.json"
assert_exit 2 "malformed number in JSON" "$RB" fabric topo --topology "$T/malformed.json"
assert_stderr_line 'nodes must be a whole number >= 1, got "32x"'
printf '{"kind": "fat-tree",\n "nodes": 4,,}\n' >"$T/broken.json"
assert_exit 2 "invalid JSON" "$RB" fabric topo --topology "$T/broken.json"
assert_stderr_line 'invalid JSON near line 2'
assert_exit 2 "malformed --nodes" "$RB" fabric topo --nodes 8x
assert_stderr_line 'railbench: error: --nodes: expected a whole number >= 1, got "8x"'
assert_exit 2 "bad --link" "$RB" fabric topo --link leaf:fast
assert_stderr_line 'railbench: error: --link'
assert_exit 2 "GPU out of range" "$RB" fabric topo --nodes 2 --path 0:7 2:0
assert_stderr_line 'railbench: error: --path'
assert_exit 2 "missing file" "$RB" fabric topo --topology "$T/nope.json"
assert_stderr_line 'cannot read'
