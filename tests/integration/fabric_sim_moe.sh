#!/usr/bin/env bash
# needs: mpi
# railbench fabric sim moe: coll moe's workload predicted with PXN off and on. The evenly routed step is exactly two
# of the model's pairwise alltoalls of the same size; PXN never slows a rail-optimised step and changes nothing on
# rail-only; the router is coll moe's (the same load imbalance for the same seed); bad input refused.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
MPIRUN+=(--mca mpi_yield_when_idle 1)
TOPO=(--nodes 4 --gpus-per-node 4 --nics-per-node 4 --spines 2 --kind rail-optimized)

# 16 GPUs, top-1, 1024 tokens of 2 KiB: 2 MiB per rank and step; evenly routed, 128 KiB to every rank.
"$RB" fabric sim moe "${TOPO[@]}" --batch 1024 --hidden 1024 --top-k 1 --skew 1 --json --out "$T/m" >"$T/m.json"
for pxn in on off; do
    "$RB" fabric sim alltoall --algo ring -b 2M -e 2M --pxn $pxn "${TOPO[@]}" --json --out "$T/a$pxn" >"$T/a$pxn.json"
    a2a=$(jq '.collective_rows[0].oop.time_us' "$T/a$pxn.json")
    assert_jq "$T/m.json" "(.moe.pxn_$pxn.balanced_step_us - 2 * $a2a | fabs) < 1e-6 * $a2a" \
        "PXN $pxn: the balanced step is dispatch + combine, each the model's ring alltoall of 2 MiB ($a2a us)"
done
assert_jq "$T/m.json" '.moe.pxn_on.step_us <= .moe.pxn_off.step_us and .moe.pxn_off.step_us > .moe.pxn_off.balanced_step_us and (.moe.pxn_on.lost_us - (.moe.pxn_on.step_us - .moe.pxn_on.balanced_step_us) | fabs) < 1e-9 and .moe.imbalance > 2' \
    "rail-optimized, skew 1: PXN on <= off, skewed steps slower than balanced, lost = step - balanced"
"$RB" fabric sim moe --nodes 4 --gpus-per-node 4 --nics-per-node 4 --kind rail-only --batch 256 --hidden 256 \
    --json --out "$T/ro" >"$T/ro.json"
assert_jq "$T/ro.json" '.moe.pxn_on.step_us == .moe.pxn_off.step_us' "rail-only: PXN is the only cross-rail path, on = off"
"$RB" fabric sim moe "${TOPO[@]}" --batch 64 --hidden 64 --out "$T/t" >"$T/t.out"
grep -Eq '^ +off +[0-9.]+ ' "$T/t.out" && grep -Eq '^ +on +[0-9.]+ ' "$T/t.out" && grep -q '^# PXN on: ' "$T/t.out" ||
    fail "table: rows for PXN off and on, and the gain line"

# The same router as coll moe: 4 ranks and 2 x 2 GPUs, the same seed and steps, the same load imbalance.
rb_mpirun 4 "$RB" coll moe --batch 300 --hidden 16 --skew 1.3 --seed 9 --steps 3 --warmup-steps 0 --out "$T/c" --quiet >/dev/null
"$RB" fabric sim moe --nodes 2 --gpus-per-node 2 --nics-per-node 2 --batch 300 --hidden 16 --skew 1.3 --seed 9 --steps 3 \
    --json --out "$T/s" >"$T/s.json"
[ "$(jq .summary.moe.imbalance "$T/c/result.json")" = "$(jq .moe.imbalance "$T/s.json")" ] ||
    fail "imbalance: coll moe $(jq .summary.moe.imbalance "$T/c/result.json"), sim $(jq .moe.imbalance "$T/s.json")"
ok "coll moe and fabric sim moe route alike: imbalance $(jq .moe.imbalance "$T/s.json")"

set +e
"$RB" fabric sim moe "${TOPO[@]}" --experts 20 --out "$T/never" >/dev/null 2>"$T/bad.err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q '^railbench: error: fabric sim moe: --experts 20 ' "$T/bad.err" || fail "--experts 20 on 16 GPUs: exit $rc"
ok "--experts 20 on 16 GPUs: exit 2"
