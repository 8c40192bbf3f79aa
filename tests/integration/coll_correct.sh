#!/usr/bin/env bash
# needs: mpi
# railbench coll under mpirun -np 2, 3 and 4: every collective x every algorithm x types and ops, #wrong = 0 everywhere.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

# Two processes per core at -np 4: let idle ranks yield instead of spinning against each other.
MPIRUN+=(--mca mpi_yield_when_idle 1)

# Algorithms each collective runs (the rest must be reported as not applicable).
APPLIES='{"allreduce": "mpi ring rd rhd tree hier", "allgather": "mpi ring rd", "reducescatter": "mpi ring rhd",
  "broadcast": "mpi ring rhd tree", "reduce": "mpi ring rhd tree", "alltoall": "mpi ring", "sendrecv": "mpi",
  "gather": "mpi tree hier", "scatter": "mpi tree hier", "alltoallv": "mpi ring hier"}'

# check_run NAME NP NTYPES NOPS NSIZES NROOTS: every (collective, algorithm) has its rows, all exact. One pass over
# result.json (several MB at np 2) instead of a jq per pair, which took most of this test's time.
check_run() {
    local name=$1
    python3 - "$T/$name/result.json" "$T/$name.out" "$APPLIES" "$@" <<'PY2' || fail "$name: see above"
import json, sys
res, text, applies = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), json.loads(sys.argv[3])
name, np, ntypes, nops, nsizes, nroots = sys.argv[4], *map(int, sys.argv[5:10])
REDUCES, ROOTED = {'allreduce', 'reducescatter', 'reduce'}, {'broadcast', 'reduce', 'gather', 'scatter'}
def check(ok, what):
    if not ok: sys.exit(f'FAIL: {name}: {what}')
    print(f'ok: {name}: {what}')
rows, sm = res['summary']['collective_rows'], res['summary']
check(res['mpi']['size'] == np, f'{np} ranks')
check(sm['wrong_total'] == 0, 'wrong_total 0')
check(all(r[h]['wrong'] == 0 for r in rows for h in ('oop', 'ip')), 'every row checked (not null) and exact, both halves')
check(any(c['name'] == 'wrong' and c['passed'] for c in res['checks']), "check 'wrong' passed")
check('\n# Out of bounds values : 0 OK\n' in text, 'closing line')
count = {}
for r in rows:
    count[(r['coll'], r['algo'])] = count.get((r['coll'], r['algo']), 0) + 1
pairs = 0
for coll, algos in applies.items():
    for algo in algos.split():
        want = ntypes * nsizes * (nops if coll in REDUCES else 1) * (nroots if coll in ROOTED else 1)
        got = count.pop((coll, algo), 0)
        if got != want: sys.exit(f'FAIL: {name}: {coll}/{algo} has {got} rows, want {want}')
        if f'\n# railbench table: {coll}, algorithm {algo}\n' not in text: sys.exit(f'FAIL: {name}: no table for {coll}/{algo}')
        pairs += 1
check(not count, f'row counts of the {pairs} applicable pairs, and no rows of others ({sorted(count)})')
na = sm['not_applicable']
check(len(na) == 60 - pairs and all(len(x['why']) > 10 for x in na), f'{60 - pairs} pairs not applicable, each with a reason')
check(text.count(': not applicable to ') == 60 - pairs, 'a not-applicable line per pair in the table')
check({(x['coll'], x['algo']) for x in na} == {(c, a) for c in applies for a in ('mpi', 'ring', 'rd', 'rhd', 'tree', 'hier')
                                                if a not in applies[c].split()}, 'exactly the other pairs listed')
check(any(x['coll'] == 'broadcast' and x['algo'] == 'rd' for x in na), 'broadcast/rd reported not applicable')
PY2
}

# np 2: every type and every op, three sizes.
rb_mpirun 2 "$RB" coll all --algo all -d all -o all -b 64 -e 6400 -f 10 -n 1 -w 1 -c 1 \
    --out "$T/np2" --quiet >"$T/np2.out"
check_run np2 2 10 5 3 1

# np 3 (not a power of two): counts that do not divide by 3, every root; int types and avg/prod.
rb_mpirun 3 "$RB" coll all --algo all -d int8 -o all -r all -b 5 -e 5000 -f 10 -n 1 -w 0 -c 2 \
    --out "$T/np3a" --quiet >"$T/np3a.out"
check_run np3a 3 1 5 4 3
rb_mpirun 3 "$RB" coll all --algo all -d all -o avg -b 7 -e 7000 -f 10 -n 1 -w 0 -c 1 --chunk 256 \
    --out "$T/np3b" --quiet >"$T/np3b.out"
check_run np3b 3 10 1 4 1

# np 4 as two nodes of two ranks (hier crosses both levels); small pipeline chunks so tree/chain pipeline.
# 48000 B takes hier's bandwidth path (node reduce-scatter, rail Rabenseifner, node allgather), the rest its latency path.
rb_mpirun 4 "$RB" coll all --algo all -d all -o all -r 3 --ranks-per-node 2 -b 48 -e 48000 -f 10 -n 1 -w 0 -c 1 \
    --chunk 1K --out "$T/np4" --quiet >"$T/np4.out"
check_run np4 4 10 5 4 1
assert_jq "$T/np4/result.json" '[.summary.collective_rows[] | select(.coll == "reduce") | .root] | all(. == 3)' \
    "np4: reduce rooted at -r 3"
assert_jq "$T/np4/result.json" '[.summary.collective_rows[] | select(.coll == "allreduce") | .root] | all(. == -1)' \
    "np4: allreduce root -1"

# Beyond the issue's 2, 3, 4: 5, 6 and 7 ranks fold 1, 2 and 3 ranks into the power of two;
# at 6, --ranks-per-node 3 gives hier two nodes of three ranks (and 2 would give three nodes).
rb_mpirun 5 "$RB" coll all --algo all -d int32 -o all -r all -b 40 -e 4000 -f 10 -n 1 -w 0 -c 1 --chunk 128 \
    --out "$T/np5" --quiet >"$T/np5.out"
check_run np5 5 1 5 3 5
rb_mpirun 6 "$RB" coll all --algo all -d all -o sum --ranks-per-node 3 -b 60 -e 6000 -f 10 -n 1 -w 0 -c 1 \
    --out "$T/np6" --quiet >"$T/np6.out"
check_run np6 6 10 1 3 1
rb_mpirun 6 "$RB" coll allreduce --algo hier -d bfloat16 -o all --ranks-per-node 2 -b 60 -e 60000 -f 10 -n 1 -w 0 \
    -c 1 --out "$T/np6h" --quiet >"$T/np6h.out"
assert_jq "$T/np6h/result.json" '.summary.wrong_total == 0 and (.summary.collective_rows | length) == 20' \
    "np6: hier over three nodes of two ranks, bfloat16, every op, exact"
rb_mpirun 7 "$RB" coll all --algo all -d half -o all -b 70 -e 7000 -f 10 -n 1 -w 0 -c 1 --chunk 100 \
    --out "$T/np7" --quiet >"$T/np7.out"
check_run np7 7 1 5 3 1
