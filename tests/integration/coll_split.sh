#!/usr/bin/env bash
# needs: mpi
# railbench coll with split groups (nccl-tests 2.19's NCCL_TESTS_SPLIT, --split, --per-rail): the groups nccl-tests'
# expressions give, each group's own figures and their sum, #wrong 0 inside every group; bad expressions refused.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
MPIRUN+=(--mca mpi_yield_when_idle 1)

# groups OUT: "rank:group" of every device line, as nccl-tests prints its color there.
groups() { awk '/^#  Rank/ {printf "%s:%s ", $3, $5}' "$1"; }

# check_split RESULT NGROUPS RANKS_OF_GROUP0: per-group figures by nccl-tests' formulas, the sum, and #wrong 0.
check_split() {
    python3 - "$@" <<'PY'
import json, sys
res, ng, r0 = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
f = {"allreduce": lambda n: 2 * (n - 1) / n, "alltoallv": lambda n: (n - 1) / n, "allgather": lambda n: (n - 1) / n,
     "broadcast": lambda n: 1.0, "scatter": lambda n: (n - 1) / n}
assert res['summary']['split']['groups'] == ng, res['summary'].get('split')
rows = res['summary']['collective_rows']
for r in rows:
    for h in ('oop', 'ip'):
        x = r[h]
        assert x['wrong'] == 0, (r['coll'], h, x['wrong'])
        g = x['groups']
        assert len(g) == ng and g[0]['ranks'] == r0, g
        for e in g:
            assert abs(e['busbw_gbps'] - e['algbw_gbps'] * f[r['coll']](e['ranks'])) <= 1e-9 * (e['algbw_gbps'] + 1e-12)
        assert abs(x['aggregate_busbw_gbps'] - sum(e['busbw_gbps'] for e in g)) <= 1e-9 * x['aggregate_busbw_gbps']
        # the table's row is rank 0's group: its factor, and times combined over every rank (-a 1: the mean)
        assert abs(x['busbw_gbps'] - x['algbw_gbps'] * f[r['coll']](r0)) <= 1e-9 * (x['algbw_gbps'] + 1e-12)
print(f"{len(rows)} rows, {ng} groups, group 0 of {r0} ranks: per-group busbw = algbw x factor(group size), "
      f"sum = aggregate, #wrong 0")
PY
}

# --per-rail on 2 nodes of 2: the ranks with the same local index, {0,2} and {1,3}, one group per rail.
rb_mpirun 4 "$RB" coll allreduce --algo mpi,hier --per-rail --ranks-per-node 2 -b 1K -e 64K -f 8 -n 2 -w 1 \
    --out "$T/pr" >"$T/pr.out"
[ "$(groups "$T/pr.out")" = "0:0 1:1 2:0 3:1 " ] || fail "--per-rail groups: $(groups "$T/pr.out")"
out=$(check_split "$T/pr/result.json" 2 2) || fail "--per-rail: $out"
ok "--per-rail: groups {0,2} {1,3}; $out"
grep -q '^# split --per-rail: 2 groups side by side' "$T/pr.out" || fail "--per-rail: no per-group table"
# The table keeps nccl-tests' columns (118 characters a row).
[ "$(grep -v '^#' "$T/pr.out" | grep -Ev '^$|^results' | awk '{ if (length($0) != 118) bad++ } END { print bad + 0 }')" = 0 ] ||
    fail "--per-rail: rows not 118 characters"

# nccl-tests' environment: AND 0x1 gives the same groups as --per-rail here; the mask form too.
NCCL_TESTS_SPLIT="AND 0x1" rb_mpirun 4 "$RB" coll alltoallv --algo ring -b 4K -e 4K -n 1 -w 0 --out "$T/and" >"$T/and.out"
[ "$(groups "$T/and.out")" = "0:0 1:1 2:0 3:1 " ] || fail "AND 0x1 groups: $(groups "$T/and.out")"
out=$(check_split "$T/and/result.json" 2 2) || fail "AND 0x1: $out"
ok "NCCL_TESTS_SPLIT='AND 0x1': $out"
# alltoallv inside a group of 2: rank 0 exchanged with rank 2 only (pair_bytes is rank 0's group, by group rank).
assert_jq "$T/and/result.json" '.summary.collective_rows[0].oop.pair_bytes | length == 2 and .[0][1] > 0 and .[1][0] > 0' \
    "AND 0x1: alltoallv in a 2-rank group"
NCCL_TESTS_SPLIT_MASK=0x2 rb_mpirun 4 "$RB" coll broadcast -b 4K -e 4K -n 1 -w 0 --out "$T/mask" >"$T/mask.out"
[ "$(groups "$T/mask.out")" = "0:0 1:0 2:2 3:2 " ] || fail "mask 0x2 groups: $(groups "$T/mask.out")"
out=$(check_split "$T/mask/result.json" 2 2) || fail "mask: $out"
ok "NCCL_TESTS_SPLIT_MASK=0x2: groups {0,1} {2,3}; $out"

# --split over the environment; DIV and uneven groups (MOD 3 of 4: {0,3} {1} {2}).
NCCL_TESTS_SPLIT="AND 0x1" rb_mpirun 4 "$RB" coll allgather --split "DIV 2" -b 4K -e 16K -f 4 -n 1 -w 0 \
    --out "$T/div" >"$T/div.out"
[ "$(groups "$T/div.out")" = "0:0 1:0 2:1 3:1 " ] || fail "DIV 2 groups: $(groups "$T/div.out")"
out=$(check_split "$T/div/result.json" 2 2) || fail "DIV 2: $out"
ok "--split 'DIV 2' (over NCCL_TESTS_SPLIT): $out"
rb_mpirun 4 "$RB" coll scatter --split "mod 3" -b 4K -e 4K -n 1 -w 0 --out "$T/mod" >"$T/mod.out"
[ "$(groups "$T/mod.out")" = "0:0 1:1 2:2 3:0 " ] || fail "MOD 3 groups: $(groups "$T/mod.out")"
out=$(check_split "$T/mod/result.json" 3 2) || fail "MOD 3: $out"
assert_jq "$T/mod/result.json" '[.summary.collective_rows[0].oop.groups[].ranks] == [2, 1, 1]' "MOD 3: groups of 2, 1, 1"
ok "--split 'mod 3': uneven groups; $out"

# Bad input: one line, exit 2, no result directory.
# refused WANT ARGS...: the run exits 2 with exactly one "railbench: WANT..." line.
refused() {
    local want=$1 rc
    shift
    set +e
    rb_mpirun 2 "$RB" coll allreduce "$@" --out "$T/never" >"$T/bad.out" 2>"$T/bad.err"
    rc=$?
    set -e
    [ "$rc" = 2 ] || fail "$*: exit $rc, expected 2"
    [ "$(grep -c '^railbench: error: ' "$T/bad.err")" = 1 ] || fail "$*: $(cat "$T/bad.err")"
    grep -qF "railbench: error: $want" "$T/bad.err" || fail "$*: $(grep '^railbench:' "$T/bad.err")"
    [ ! -e "$T/never" ] || fail "$*: a result directory was created"
}
refused '--split: "XOR 3" is not a split' --split "XOR 3"
refused '--split: "MOD 0" is not a split' --split "MOD 0"
refused '--split: give either --split or --per-rail' --split "AND 1" --per-rail
NCCL_TESTS_SPLIT=nonsense refused 'NCCL_TESTS_SPLIT: "nonsense" is not a split'
ok "XOR, MOD 0, --split with --per-rail, a bad NCCL_TESTS_SPLIT: exit 2 with one line each"
