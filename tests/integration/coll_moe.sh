#!/usr/bin/env bash
# needs: mpi
# railbench coll moe: dispatch/combine bytes per rank pair equal the router's token counts (and MPI_Get_count's),
# the load imbalance is max/mean of those counts, uniform routing is balanced and Zipf is not, seeds repeat,
# every algorithm returns every token intact, and the lost time is step - balanced step.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
MPIRUN+=(--mca mpi_yield_when_idle 1)

# check RESULT TOKENS HIDDEN EB TOPK: the figures against the router's counts, independently of the C code.
check() {
    python3 - "$@" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))['summary']['moe']
T, H, EB, K = (int(x) for x in sys.argv[2:6])
n, steps, tok = m['ranks'], int(m['steps']), H * EB
pb = [[int(v) for v in row] for row in m['pair_bytes']]
assert all(v % tok == 0 for row in pb for v in row), 'pair bytes are whole tokens'
for i in range(n):  # every rank sends each of its tokens to top_k experts, every step
    assert sum(pb[i]) == T * K * tok * steps, (i, sum(pb[i]))
ranks = [sum(pb[i][j] for i in range(n)) // tok for j in range(n)]
assert ranks == [int(x) for x in m['rank_tokens']], (ranks, m['rank_tokens'])
assert sum(int(x) for x in m['expert_tokens']) == n * T * K * steps
per = m['experts'] // n
assert ranks == [sum(int(x) for x in m['expert_tokens'][j * per:(j + 1) * per]) for j in range(n)]
imb = max(ranks) / (sum(ranks) / n)
assert abs(m['imbalance'] - imb) < 1e-9, (m['imbalance'], imb)
if 'pair_bytes_counted' in m:
    assert [[int(v) for v in r] for r in m['pair_bytes_counted']] == pb, 'MPI_Get_count disagrees with the router'
bal = [int(x) for x in m['balanced_rank_tokens']]
assert len(set(bal)) == 1 and sum(bal) == sum(ranks), bal
assert abs(m['lost_us'] - (m['step_us'] - m['balanced_step_us'])) < 1e-6 * max(1, m['step_us'])
assert int(m['wrong']) == 0 and m['wait_us'] >= 0
assert abs(m['step_us'] - sum(s['step_us'] for s in m['per_step']) / steps) < 1e-6 * m['step_us']
print(f"imbalance {m['imbalance']:.3f}, tokens per expert rank {ranks}, bytes per pair = tokens x {tok} B, "
      f"step {m['step_us']:.0f} us, balanced {m['balanced_step_us']:.0f} us, lost {m['lost_us']:.0f} us"
      + (', MPI_Get_count agrees' if 'pair_bytes_counted' in m else ''))
PY
}

for algo in ring mpi hier; do
    rb_mpirun 4 "$RB" coll moe --batch 256 --hidden 256 --skew 1.5 --steps 3 --warmup-steps 1 --algo $algo \
        --ranks-per-node 2 --out "$T/$algo" >"$T/$algo.out"
    out=$(check "$T/$algo/result.json" 256 256 2 2) || fail "$algo: $out"
    ok "--algo $algo, skew 1.5: $out"
done
grep -q '^# Out of bounds values : 0 OK$' "$T/ring.out" || fail "closing line"
grep -q '^# lost to the most loaded expert rank: ' "$T/ring.out" || fail "lost line"

# Zipf puts the hot experts on rank 0: its load falls with the rank; uniform routing stays near 1.
assert_jq "$T/ring/result.json" '.summary.moe.rank_tokens | map(tonumber) | . == (sort | reverse) and .[0] > 2 * .[3]' \
    "skew 1.5: expert rank 0 the most loaded, more than twice rank 3"
rb_mpirun 4 "$RB" coll moe --batch 4000 --hidden 8 --element-bytes 4 --top-k 1 --experts 16 --steps 2 --warmup-steps 0 \
    --algo ring --out "$T/uni" --quiet >/dev/null
out=$(check "$T/uni/result.json" 4000 8 4 1) || fail "uniform: $out"
assert_jq "$T/uni/result.json" '.summary.moe.imbalance < 1.05 and .summary.moe.experts == 16' "skew 0: imbalance < 1.05"
ok "skew 0, top-1, 16 experts: $out"

# The same seed routes the same; another seed does not.
rb_mpirun 4 "$RB" coll moe --batch 256 --hidden 256 --skew 1.5 --steps 3 --warmup-steps 1 --algo mpi \
    --ranks-per-node 2 --out "$T/again" --quiet >/dev/null
rb_mpirun 4 "$RB" coll moe --batch 256 --hidden 256 --skew 1.5 --steps 3 --warmup-steps 1 --algo mpi --seed 2 \
    --ranks-per-node 2 --out "$T/seed2" --quiet >/dev/null
[ "$(jq -c .summary.moe.pair_bytes "$T/again/result.json")" = "$(jq -c .summary.moe.pair_bytes "$T/ring/result.json")" ] ||
    fail "seed 1 twice: different routing"
[ "$(jq -c .summary.moe.pair_bytes "$T/seed2/result.json")" != "$(jq -c .summary.moe.pair_bytes "$T/ring/result.json")" ] ||
    fail "seed 2 routed as seed 1"
ok "--seed: the same routing for the same seed, another for another"

# Bad input: one line, exit 2.
set +e
rb_mpirun 4 "$RB" coll moe --experts 6 --out "$T/never" >/dev/null 2>"$T/bad.err"
rc=$?
set -e
[ "$rc" = 2 ] && [ "$(grep -c '^railbench: error: ' "$T/bad.err")" = 1 ] && grep -q '^railbench: error: --experts 6 ' "$T/bad.err" ||
    fail "--experts 6 on 4 ranks: exit $rc, $(cat "$T/bad.err")"
ok "--experts 6 on 4 ranks: exit 2, one line"
