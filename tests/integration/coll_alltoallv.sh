#!/usr/bin/env bash
# needs: mpi
# railbench coll alltoallv, gather, scatter (nccl-tests 2.19): a skewed traffic matrix on 4 ranks moves exactly the
# bytes per pair the matrix says (counted by MPI_Get_count in the pairwise exchange, and by the data check), #wrong 0
# with MPI's, the pairwise and the PXN relay; --spread against nccl-tests' formula; busbw factors; bad input.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
MPIRUN+=(--mca mpi_yield_when_idle 1)

# A skewed matrix: rank 2 sends 128 KiB to rank 3, some cells not multiples of 16 (nccl-tests aligns them down),
# some traffic to itself. Row sums 70720, 18448, 139520, 37952; column sums 49456, 13328, 70192, 134224 (aligned).
cat >"$T/skew.txt" <<'EOF'
64      4096   65536  1024
16384   0      17     2048
256     8192   0      131072
32768   1040   4640   15
EOF

# check_rows RESULT MATRIX SCALE NP: every row's size, count, #wrong, algbw and busbw by nccl-tests' rules, and the
# pairwise rows' pair_bytes equal to the matrix's cells as nccl-tests reads them (x SCALE, aligned down to 16).
check_rows() {
    python3 - "$@" <<'PY'
import json, sys
res, mpath, scale, n = json.load(open(sys.argv[1])), sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
m = [[int(float(v) * scale) & ~15 for v in line.split()] for line in open(mpath) if line.strip()]
m = [row[:n] for row in m[:n]]
busiest = max(max(sum(r) for r in m), max(sum(m[i][j] for i in range(n)) for j in range(n)))
rows = res['summary']['collective_rows']
algos = sorted({r['algo'] for r in rows})
counted = 0
for r in rows:
    assert r['coll'] == 'alltoallv' and r['size_bytes'] == busiest and r['count'] == 0, r
    for h in ('oop', 'ip'):
        x = r[h]
        assert x['wrong'] == 0, (r['algo'], h, x['wrong'])
        assert abs(x['algbw_gbps'] - busiest / (x['time_us'] * 1e3)) <= 1e-9 * x['algbw_gbps']
        assert abs(x['busbw_gbps'] - x['algbw_gbps'] * (n - 1) / n) <= 1e-9 * x['algbw_gbps']
        if r['algo'] == 'ring':
            assert x['pair_bytes'] == m, f"{h}: received {x['pair_bytes']} != matrix {m}"
            counted += 1
        else:
            assert 'pair_bytes' not in x, r['algo']
assert counted == 2, counted
print(f"{len(rows)} rows ({','.join(algos)}): size {busiest} B (busiest rank), #wrong 0, busbw = algbw x {n - 1}/{n}; "
      f"bytes received per pair = matrix, e.g. 2->3 {m[2][3]}, 1->2 {m[1][2]}, 3->3 {m[3][3]}")
PY
}

rb_mpirun 4 "$RB" coll alltoallv --algo mpi,ring,hier --ranks-per-node 2 --matrix "$T/skew.txt" -b 256K -e 256K \
    -n 2 -w 1 -J "$T/skew.json" --out "$T/skew" >"$T/skew.out"
out=$(check_rows "$T/skew/result.json" "$T/skew.txt" 1 4) || fail "skewed matrix: $out"
ok "skewed matrix on 4 ranks: $out"
assert_jq "$T/skew.json" '[.results[] | .size == 139520 and .count == 0 and .redop == "none" and .root == "    -1" and .out_of_place.nwrong == 0] | all and length == 3' \
    "-J: size = the busiest rank's bytes, count 0 (nccl-tests' matrix mode)"

# nccl-tests' environment variables do the same; the scale multiplies every cell before the alignment.
NCCL_TESTS_ALLTOALLV_MATRIX_FILE=$T/skew.txt NCCL_TESTS_ALLTOALLV_MATRIX_SCALE=2 \
    rb_mpirun 4 "$RB" coll alltoallv --algo ring -b 512K -e 512K -n 1 -w 0 --out "$T/env" --quiet >/dev/null
out=$(check_rows "$T/env/result.json" "$T/skew.txt" 2 4) || fail "matrix from the environment, scale 2: $out"
ok "NCCL_TESTS_ALLTOALLV_MATRIX_FILE and _SCALE=2: $out"

# --spread: the generated pattern, per nccl-tests' formula written out here; 1 (the default) is distance-weighted,
# 0 uniform, and NCCL_TESTS_ALLTOALLV_SPREAD sets it when --spread is not given.
spread_check() {
    python3 - "$@" <<'PY'
import json, sys
res, spread, n = json.load(open(sys.argv[1])), float(sys.argv[2]), int(sys.argv[3])
rows = res['summary']['collective_rows']
for r in rows:
    total = r['count'] * n * 4  # float: the per-peer share times n ranks
    def pair(i, j):
        d = (j - i) % n
        return int((1 - spread) * total / n + spread * d * total / (n * (n - 1) / 2)) & ~15
    want = [[pair(i, j) for j in range(n)] for i in range(n)]
    for h in ('oop', 'ip'):
        assert r[h]['wrong'] == 0, (r['algo'], h)
        assert r['algo'] != 'ring' or r[h]['pair_bytes'] == want, (r['size_bytes'], h, r[h].get('pair_bytes'), want)
    assert r['size_bytes'] == max(sum(row) for row in want)
print(f"{len(rows)} rows, spread {spread}: pairs as nccl-tests' formula, e.g. 0->1 {want[0][1]} B, #wrong 0")
PY
}
rb_mpirun 4 "$RB" coll alltoallv --algo ring -b 1K -e 1M -f 32 -n 1 -w 0 --out "$T/s1" --quiet >/dev/null
out=$(spread_check "$T/s1/result.json" 1 4) || fail "spread 1: $out"
ok "default spread: $out"
NCCL_TESTS_ALLTOALLV_SPREAD=0 rb_mpirun 4 "$RB" coll alltoallv --algo ring -b 1K -e 1M -f 32 -n 1 -w 0 --out "$T/s0" \
    --quiet >/dev/null
out=$(spread_check "$T/s0/result.json" 0 4) || fail "spread 0: $out"
ok "NCCL_TESTS_ALLTOALLV_SPREAD=0: $out"
NCCL_TESTS_ALLTOALLV_SPREAD=0 rb_mpirun 3 "$RB" coll alltoallv --spread 0.25 --algo ring,mpi -b 3000 -e 3000 -n 1 \
    -w 0 --out "$T/s25" --quiet >/dev/null
out=$(spread_check "$T/s25/result.json" 0.25 3) || fail "spread 0.25: $out"
ok "--spread 0.25 over the environment, 3 ranks: $out"

# gather and scatter: every root, #wrong 0, S = n x count x type bytes, busbw = algbw x (n-1)/n.
rb_mpirun 4 "$RB" coll gather -r all -b 4K -e 64K -f 4 -n 2 -w 0 --out "$T/g" --quiet >/dev/null
rb_mpirun 4 "$RB" coll scatter -r all -b 4K -e 64K -f 4 -n 2 -w 0 --out "$T/sc" --quiet >/dev/null
for r in g sc; do
    assert_jq "$T/$r/result.json" '.summary.collective_rows | length == 12 and ([.[].root] | unique) == [0,1,2,3] and all(.oop.wrong == 0 and .ip.wrong == 0 and .size_bytes == .count * 4 * 4 and (.oop.busbw_gbps - .oop.algbw_gbps * 0.75 | fabs) <= 1e-9 * .oop.algbw_gbps and (.oop.algbw_gbps - .size_bytes / (.oop.time_us * 1e3) | fabs) <= 1e-9 * .oop.algbw_gbps)' \
        "$r: 3 sizes x 4 roots, #wrong 0 both halves, S = 4 x count x 4 B, busbw = algbw x 3/4"
done

# Bad input: one line, exit 2, no result directory.
printf '1 2 3\n4 5\n' >"$T/ragged.txt"
printf '16 16\n16 16\n' >"$T/two.txt"
for bad in "--matrix $T/ragged.txt -b 64 -e 64:--matrix $T/ragged.txt: row 2 has 2 values, row 1 has 3" \
    "--matrix $T/two.txt -b 64 -e 64:--matrix $T/two.txt: 3 ranks need a 3x3 matrix, the file has 2x2" \
    "--matrix $T/skew.txt -b 1K -e 1M:--matrix: -b and -e must be equal" \
    "--matrix $T/nothere -b 64 -e 64:--matrix: cannot read" \
    "--spread 2:--spread: 2 is out of range"; do
    args=${bad%%:*} want=${bad#*:}
    set +e
    # shellcheck disable=SC2086 # the options and their values
    rb_mpirun 3 "$RB" coll alltoallv $args --out "$T/never" >"$T/bad.out" 2>"$T/bad.err"
    rc=$?
    set -e
    [ "$rc" = 2 ] || fail "$args: exit $rc, expected 2"
    [ "$(grep -c '^railbench: error: ' "$T/bad.err")" = 1 ] || fail "$args: $(cat "$T/bad.err")"
    grep -qF "railbench: error: $want" "$T/bad.err" || fail "$args: $(grep '^railbench:' "$T/bad.err")"
    [ ! -e "$T/never" ] || fail "$args: a result directory was created"
done
ok "ragged matrix, too small a matrix, -b != -e, a missing file, --spread 2: exit 2 with one line each"
