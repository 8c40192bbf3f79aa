#!/usr/bin/env bash
# needs: mpi
# railbench coll's nccl-tests table parses back: busbw = algbw x factor and algbw = size / time on every row; -J, -a, -c 0.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
MPIRUN+=(--mca mpi_yield_when_idle 1)

# parse_table OUT RESULT NP [RULE]: reads the printed table like an nccl-tests parser and checks every row,
# including its size and count against nccl-tests' count rule (RULE aligned, the default, or legacy).
parse_table() {
    python3 - "$1" "$2" "$3" "${4:-aligned}" <<'PY'
import json, re, sys
out, result, n, rule = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
# nccl-tests doc/PERFORMANCE.md, written out independently of the C code.
factor = {"allreduce": 2 * (n - 1) / n, "allgather": (n - 1) / n, "reducescatter": (n - 1) / n,
          "alltoall": (n - 1) / n, "broadcast": 1.0, "reduce": 1.0, "sendrecv": 1.0,
          "gather": (n - 1) / n, "scatter": (n - 1) / n, "alltoallv": (n - 1) / n}
tsize = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "half": 2, "float": 4,
         "double": 8, "bfloat16": 2}
whole = {"allgather", "reducescatter", "alltoall", "gather", "scatter"}

def a2av_size(per_peer, typ):
    """alltoallv (src/alltoallv.cu, default spread 1): the busiest rank's bytes of the distance-weighted pattern."""
    total = per_peer * n * tsize[typ]
    return sum(int(d * total / (n * (n - 1) / 2)) & ~15 for d in range(n)) if n > 1 else total & ~15

def expected(coll, size, typ):
    """(count, size) of a row for a requested size, as nccl-tests' *GetCollByteCount (src/*.cu) computes them:
    since v2.13.12 the per-rank share is (count / n) & ~(16 / eltSize - 1); before, count / n."""
    count = size // tsize[typ]
    if coll not in whole:
        return count, count * tsize[typ]
    base = count // n
    if rule == "aligned":
        base &= ~(16 // tsize[typ] - 1)
    return base, base * n * tsize[typ]

coll, rows, busbws, avg, oob, sizes, k = None, 0, [], None, None, [], 0
for line in open(out):
    f = line.split()
    m = re.match(r"# nThread 1 nGpus 1 minBytes (\d+) maxBytes (\d+) step: (\d+)\((factor|bytes)\)", line)
    if m:
        lo, hi, step = int(m[1]), int(m[2]), int(m[3])
        while lo <= hi:
            sizes.append(lo)
            lo = lo * step if m[4] == "factor" else lo + step
    if line.startswith("# railbench table:"):
        coll, k = f[3].rstrip(","), 0
        continue
    if line.startswith("# Avg bus bandwidth"):
        avg = float(f[-1])
    if line.startswith("# Out of bounds values"):
        oob = (int(f[-2]), f[-1])
    if line.startswith("#") or not f:
        continue
    assert len(f) == 13, f"row with {len(f)} fields: {line!r}"
    size, count, typ, redop, root = int(f[0]), int(f[1]), f[2], f[3], int(f[4])
    if coll == "alltoallv":
        assert size == a2av_size(count, typ), f"alltoallv: size {size} != busiest rank of {count} per peer"
        count_, size_ = expected("alltoall", sizes[k % len(sizes)], typ)
        assert count == count_, f"alltoallv: count {count} != alltoall's {count_}"
        k += 1
        want = (count, size)
    else:
        assert size == count * tsize[typ] * (n if coll in whole else 1), f"{coll}: size {size} != count {count} x type"
        want = expected(coll, sizes[k % len(sizes)], typ)
    assert (count, size) == want, f"{coll} {typ} -b {sizes[k % len(sizes)]}: count/size {count}/{size}, {rule} rule says {want}"
    k += 0 if coll == "alltoallv" else 1
    assert (redop != "none") == (coll in ("allreduce", "reducescatter", "reduce")), f"{coll} redop {redop}"
    assert (root >= 0) == (coll in ("broadcast", "reduce", "gather", "scatter")), f"{coll} root {root}"
    for h in (5, 9):
        t, alg, bus, wrong = float(f[h]), float(f[h + 1]), float(f[h + 2]), f[h + 3]
        assert wrong == "0", f"{coll} {size}: #wrong {wrong}"
        assert t > 0, f"time {t}"
        # Printed with 2 decimals: allow the rounding of time, algbw and busbw.
        alg_lo, alg_hi = size / ((t + 0.005) * 1e3), size / (max(t - 0.005, 1e-9) * 1e3)
        assert alg_lo - 0.005 <= alg <= alg_hi + 0.005, f"{coll} {size}: algbw {alg} vs size/time {size / (t * 1e3)}"
        assert abs(bus - alg * factor[coll]) <= 0.005 + 0.005 * factor[coll] + 1e-9, \
            f"{coll} {size}: busbw {bus} != algbw {alg} x {factor[coll]}"
        busbws.append(bus)
    rows += 1
assert rows > 0 and avg is not None and oob == (0, "OK"), (rows, avg, oob)
mean = sum(busbws) / len(busbws)
assert abs(avg - mean) <= 0.006, f"Avg bus bandwidth {avg} != mean of busbw column {mean}"
# The unrounded figures in result.json obey the same formulas exactly.
r = json.load(open(result))
cr = r["summary"]["collective_rows"]
assert len(cr) == rows, (len(cr), rows)
for row in cr:
    S = row["count"] * tsize[row["type"]] * (n if row["coll"] in whole else 1)
    if row["coll"] == "alltoallv":
        S = a2av_size(row["count"], row["type"])
    assert S == row["size_bytes"]
    for h in ("oop", "ip"):
        x = row[h]
        assert abs(x["algbw_gbps"] - S / (x["time_us"] * 1e3)) <= 1e-9 * x["algbw_gbps"] + 1e-12
        assert abs(x["busbw_gbps"] - x["algbw_gbps"] * factor[row["coll"]]) <= 1e-9 * x["algbw_gbps"] + 1e-12
    o = row["osu"]
    assert o["min_us"] <= o["avg_us"] <= o["max_us"], o
    assert row["ranks"] == n
assert abs(r["summary"]["avg_busbw_gbps"] - mean) <= 0.006
print(f"{rows} rows: busbw = algbw x factor, algbw = size/time, avg busbw {avg} = mean {mean:.4f}")
PY
}

# Every collective, sizes large enough that times print with several significant digits.
rb_mpirun 4 "$RB" coll all --algo mpi,ring -b 64K -e 1M -f 4 -n 3 -w 1 --ranks-per-node 2 \
    -J "$T/nccl.json" --out "$T/r1" >"$T/r1.out"
out=$(parse_table "$T/r1.out" "$T/r1/result.json" 4) || fail "table: $out"
ok "table: $out"

# nccl-tests' count rule on 3 ranks, with sizes that do not divide: every row's size and count as v2.13.12+
# prints them (np 3, float, 1000 B is 80 elements, 960 B), and the legacy rule behind --count-rule legacy.
rb_mpirun 3 "$RB" coll all -b 1000 -e 64000 -f 4 -n 1 -w 0 --out "$T/cr1" >"$T/cr1.out"
out=$(parse_table "$T/cr1.out" "$T/cr1/result.json" 3) || fail "count rule: $out"
ok "count rule (aligned): $out"
grep -Eq '^ +960 +80 +float +none +-1 ' "$T/cr1.out" || fail "allgather np 3 float 1000 B: 960 B, 80 elements"
rb_mpirun 3 "$RB" coll all -b 1000 -e 1000 -n 1 -w 0 -d int8 --out "$T/cr2" >"$T/cr2.out"
out=$(parse_table "$T/cr2.out" "$T/cr2/result.json" 3) || fail "count rule int8: $out"
ok "count rule (aligned, int8: 16 elements): $out"
for d in double half; do
    rb_mpirun 3 "$RB" coll reducescatter -b 1000 -e 9000 -f 3 -n 1 -w 0 -d $d --out "$T/cr3$d" >"$T/cr3$d.out"
    out=$(parse_table "$T/cr3$d.out" "$T/cr3$d/result.json" 3) || fail "count rule $d: $out"
    ok "count rule (aligned, $d): $out"
done
rb_mpirun 3 "$RB" coll all -b 1000 -e 4000 -f 2 -n 1 -w 0 --count-rule legacy --out "$T/cr4" >"$T/cr4.out"
out=$(parse_table "$T/cr4.out" "$T/cr4/result.json" 3 legacy) || fail "count rule legacy: $out"
grep -Eq '^ +996 +83 +float +none +-1 ' "$T/cr4.out" || fail "legacy: allgather np 3 float 1000 B: 996 B, 83 elements"
ok "count rule (legacy): $out"
grep -q "^# Writing JSON output to $T/nccl.json\$" "$T/r1.out" || fail "-J announced"
grep -q '^# nThread 1 nGpus 1 minBytes 65536 maxBytes 1048576 step: 4(factor) warmup iters: 1 iters: 3 ' "$T/r1.out" ||
    fail "nccl-tests preamble line"
grep -Eq '^#  Rank  3 Group  0 Pid +[0-9]+ on +[^ ]+ device  1 \[node 1 rail 1\] cpu$' "$T/r1.out" ||
    fail "rank 3 is on node 1, rail 1 with --ranks-per-node 2"
cmp -s "$T/r1/table.md" "$T/r1.out" || fail "table.md differs from what was printed"
ok "table.md is the printed table"

# -J: nccl-tests' JSON layout, one result per table row.
J=$T/nccl.json
assert_jq "$J" '.version == 3 and .config.iterations == 3 and .config.step_factor == 4 and (.config.devices | length) == 4' \
    "-J: config"
nrows=$(jq '.summary.collective_rows | length' "$T/r1/result.json")
assert_jq "$J" ".results | length == $nrows" "-J: one result per row ($nrows)"
assert_jq "$J" '.results | all(.out_of_place.bus_bw >= 0 and .in_place.nwrong == 0 and (.root | test("^ *-?[0-9]+$")))' \
    "-J: result records"
assert_jq "$J" '.out_of_bounds == {"count": 0, "okay": "true"} and (.average_bus_bandwidth.bandwidth > 0)' "-J: closing"
assert_jq "$J" 'has("env") | not' "-J: no environment (it may hold secrets)"
# A second run with the same -J keeps the first file (nccl-tests writes FILE.0).
rb_mpirun 2 "$RB" coll sendrecv -b 1K -e 1K -n 1 -w 0 -J "$J" --out "$T/r1b" --quiet >/dev/null
assert_jq "$J.0" '.results | length == 1' "-J: an existing file is not replaced"

# -c 0: #wrong prints N/A and is null in the results; no "wrong" check is recorded.
rb_mpirun 2 "$RB" coll allreduce -b 1K -e 4K -f 2 -n 2 -w 0 -c 0 --out "$T/r2" >"$T/r2.out"
[ "$(grep -v '^#' "$T/r2.out" | awk '$9 == "N/A" && $13 == "N/A"' | wc -l)" = 3 ] || fail "-c 0: N/A in 3 rows"
assert_jq "$T/r2/result.json" '[.summary.collective_rows[] | .oop.wrong, .ip.wrong] | all(. == null)' "-c 0: wrong is null"
assert_jq "$T/r2/result.json" '[.checks[] | select(.name == "wrong")] | length == 0' "-c 0: no wrong check"

# -a 2 and -a 3 report the fastest and the slowest rank (OSU's min and max); -a 1 the mean.
for a in 1 2 3; do
    rb_mpirun 3 "$RB" coll broadcast -b 256K -e 256K -n 3 -w 1 -a $a --out "$T/a$a" --quiet >/dev/null
done
assert_jq "$T/a1/result.json" '.summary.collective_rows[0] | .oop.time_us == .osu.avg_us' "-a 1: mean time"
assert_jq "$T/a2/result.json" '.summary.collective_rows[0] | .oop.time_us == .osu.min_us' "-a 2: min time"
assert_jq "$T/a3/result.json" '.summary.collective_rows[0] | .oop.time_us == .osu.max_us' "-a 3: max time"

# Phases: one per (collective, algorithm, size), named like "allreduce/ring/65536".
R=$T/r1/result.json
assert_jq "$R" '[.phases[].name] | index("allreduce/ring/65536") != null and index("alltoall/mpi/1048576") != null' \
    "phase names"
assert_jq "$R" '[.phases[] | select(.name == "allreduce/ring/262144")][0] | .op == "allreduce" and .busbw_gbps > 0 and .count == 3 and .elements == 65536' \
    "phase record: op, busbw, iterations, elements"
[ "$(grep -c '"phase":' "$T/r1/intervals.jsonl")" = "$(jq '.phases | length' "$R")" ] || fail "one interval line per row"
ok "one interval line per row"
# The comparison table has a column per algorithm.
grep -q '^# allreduce: busbw (GB/s, out-of-place) by algorithm$' "$T/r1.out" || fail "comparison table"
grep -Eq '^#  +1048576 +float +sum +-1 +[0-9.]+ +[0-9.]+$' "$T/r1.out" || fail "comparison row with mpi and ring"
ok "comparison table"
