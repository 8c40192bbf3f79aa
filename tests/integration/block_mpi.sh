#!/usr/bin/env bash
# needs: mpi
# railbench block under mpirun -np 2: each rank drives its own file; IOPS sum over ranks, p99 merges from the bins.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

# 1. %r gives each rank its own file; two points, 1 s each, both ranks at once.
rb_mpirun 2 "$RB" block --allow-root-fs --target "$T/f%r.dat" --size 16M --iodepth 1,8 --runtime 1s --out "$T/r1" --quiet
R=$T/r1/result.json
assert_jq "$R" '.mpi.size == 2 and (.summary.block_points | length) == 2' "two ranks, two points"
assert_jq "$R" "[.summary.block_points[0].per_rank[].target] == [\"$T/f0.dat\", \"$T/f1.dat\"]" \
    "rank r drives f<r>.dat"
[ ! -e "$T/f0.dat" ] && [ ! -e "$T/f1.dat" ] || fail "per-rank files not removed"
ok "per-rank files removed"

for k in 0 1; do
    name=$(jqr "$R" ".summary.block_points[$k].name")
    # Each rank's IOPS is its own fio's; the aggregate is their sum.
    for r in 0 1; do
        sed -n '/^{/,$p' "$T/r1/points/$r/$name.json" >"$T/fio$r.json"
        jq -en --slurpfile f "$T/fio$r.json" --slurpfile res "$R" --argjson k "$k" --argjson r "$r" '
            $res[0].summary.block_points[$k].per_rank[$r] as $p |
            ($p.rank == $r) and ($p.iops == $f[0].jobs[0].read.iops) and ($p.total_ios == $f[0].jobs[0].read.total_ios)
            and ($p.fio.read.clat_ns.p99 == $f[0].jobs[0].read.clat_ns.percentile["99.000000"])' >/dev/null ||
            fail "$name rank $r: figures differ from its fio JSON"
    done
    ok "$name: each rank's iops, I/Os and p99 equal its own fio JSON"
    assert_jq "$R" ".summary.block_points[$k] | (.iops - ([.per_rank[].iops] | add) | fabs) < 1e-6 and .iops > 0" \
        "$name: aggregate IOPS = sum of per-rank IOPS"
    assert_jq "$R" ".summary.block_points[$k] | (.bw_bytes_per_s - ([.per_rank[].bw_bytes_per_s] | add) | fabs) < 1e-3" \
        "$name: aggregate bandwidth = sum of per-rank bandwidth"
    assert_jq "$R" ".summary.block_points[$k] | .total_ios == ([.per_rank[].total_ios] | add)" \
        "$name: aggregate I/Os = sum of per-rank I/Os"
    assert_jq "$R" ".phases[$k].count == .summary.block_points[$k].total_ios and .phases[$k].ranks == 2" \
        "$name: the harness's reduced count is the same sum"
    # Merged from the ranks' histograms (every I/O of both ranks), so it lies between the ranks' own p99s.
    for q in p50 p99 p999; do
        assert_jq "$R" ".summary.block_points[$k] | [.per_rank[].clat_ns.$q] as \$r |
            (.clat_ns.$q >= (\$r | min)) and (.clat_ns.$q <= (\$r | max))" "$name: merged clat $q between the ranks' $q"
    done
    assert_jq "$R" ".summary.block_points[$k] | [.per_rank[].lat_ns.p99] as \$r | (.lat_ns.p99 >= (\$r | min)) and (.lat_ns.p99 <= (\$r | max))" \
        "$name: merged total-latency p99 between the ranks' p99"
    assert_jq "$R" ".summary.block_points[$k].per_rank | all(has(\"lat_hist\") | not)" "$name: histograms not repeated per rank"
done
# The merged histogram is the union: its count is both ranks' I/O count.
assert_jq "$R" '.phases[1].latency_hist.count == .summary.block_points[1].total_ios' "merged histogram holds every I/O"

# 2. Two ranks on one host may not share an existing target.
head -c 4194304 /dev/zero >"$T/shared.dat"
assert_exit 2 "shared target refused" rb_mpirun 2 "$RB" block --allow-root-fs --target "$T/shared.dat" --iodepth 1 --runtime 1s --out "$T/r2" --quiet
grep -q "ranks 0 and 1 on .* would both use $T/shared.dat; put %r" "$T/stderr" || { cat "$T/stderr"; fail "no message naming the ranks"; }
ok "message names both ranks and the file"
