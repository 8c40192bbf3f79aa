#!/usr/bin/env bash
# needs: mpi
# railbench fabric sim: model values against hand-computed formulas, the nccl-tests table, --compare, --calibrate, bad input.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
TOPO=$ROOT/fabric/topologies
FIXTURE=$ROOT/tests/fixtures/fabric/coll-run

# One node of 8 GPUs, NVLink 100 GB/s and 2 us, reduction 1 TB/s (the default), 1 MiB:
#   ring 2(p-1)a + 2(p-1)/p n b + (p-1)/p n g = 28 + 18.35008 + 0.917504 us; rd lg p (a + n b + n g).
"$RB" fabric sim --nodes 1 --link nvlink:800:2us -b 1M -e 1M --algo ring,rd --json >"$T/one.json"
assert_jq "$T/one.json" '.collective_rows | length == 2' "two rows"
assert_jq "$T/one.json" '(.collective_rows[0].oop.time_us - 47.267584 | fabs) < 1e-6' "ring allreduce = 47.267584 us"
assert_jq "$T/one.json" '(.collective_rows[1].oop.time_us - 40.603008 | fabs) < 1e-6' "rd allreduce = 40.603008 us"
assert_jq "$T/one.json" '.collective_rows[0] | (.oop.busbw_gbps - .oop.algbw_gbps * 2 * 7 / 8 | fabs) < 1e-9' "busbw = algbw x 2(p-1)/p"
assert_jq "$T/one.json" '.collective_rows[0] | .predicted and .ranks == 8 and .ranks_per_node == 8 and .count == 262144 and .oop.wrong == null' "row format of coll, predicted"

# The table of railbench coll: two header lines, one row per size, closing lines.
"$RB" fabric sim >"$T/table.txt"
rows=$(grep -cv '^#' "$T/table.txt")
assert_eq "rows for -b 8 -e 128M -f 2" 25 "$rows"
bad=$(grep -v '^#' "$T/table.txt" | awk 'NF != 13' | wc -l)
assert_eq "rows with 13 columns missing" 0 "$bad"
grep -q '^#        (B)    (elements)' "$T/table.txt" || fail "units header line"
grep -q '^# Avg bus bandwidth    : [0-9.]* (predicted)$' "$T/table.txt" || fail "closing line"
ok "nccl-tests table layout"
# allgather rounds to whole elements per rank: 256 ranks x 4 bytes.
"$RB" fabric sim allgather -b 1M -e 1M --json >"$T/ag.json"
assert_jq "$T/ag.json" '.collective_rows[0] | .size_bytes == 1048576 and .count == 1024 and .redop == "none"' "allgather count per rank"

# --compare at 32 nodes (one leaf per rail): tiny messages pay the spine on fat-tree and rail-optimized (4 us a step),
# one switch plus NVLink with PXN (3.8 us): 510 ring steps.
"$RB" fabric sim --compare -b 8 -e 8 --json >"$T/cmp.json"
assert_jq "$T/cmp.json" '.compare_rows[0] | (.fat_tree_time_us - 2040 | fabs) < 0.01 and (.rail_optimized_pxn_time_us - 1938 | fabs) < 0.01' "ring latency: 2040 us vs 1938 us with PXN"
assert_jq "$T/cmp.json" '[.collective_rows[].design] == ["fat-tree", "rail-optimized", "rail-optimized+pxn"]' "three designs in collective_rows"
# Halving-doubling on 64 nodes at 3:1: the fat-tree's cross-leaf traffic shares oversubscribed uplinks.
"$RB" fabric sim --compare --nodes 64 --oversubscription 3 --algo rhd -b 1G -e 1G --json >"$T/cmp2.json"
assert_jq "$T/cmp2.json" '.compare_rows[0] | .rail_optimized_time_us < 0.7 * .fat_tree_time_us' "rail-optimized beats a 3:1 fat-tree"
"$RB" fabric sim --compare -b 1M -e 1G -f 1024 >"$T/cmp.txt"
grep -q 'fat-tree        rail-optimized    rail-optimized+pxn' "$T/cmp.txt" || fail "compare header"
ok "compare table"

# --calibrate on a coll result made from alpha 4 us, 6 GB/s, gamma 1/12 GB/s with 3 % noise.
"$RB" fabric sim --calibrate "$FIXTURE" --save "$T/calibrated.json" --json >"$T/cal.json"
assert_jq "$T/cal.json" '.calibration.rows_used == 112 and .calibration.mean_abs_error_calibrated < .calibration.mean_abs_error_default' "calibrated beats the defaults"
assert_jq "$T/cal.json" '.calibration.mean_abs_error_calibrated < 0.03' "calibrated error within the noise"
assert_jq "$T/cal.json" '.calibration.links.nvlink | (.latency_us - 4 | fabs) < 0.12 and (.bandwidth_gbit_per_s - 48 | fabs) < 1.5' "recovered alpha 4 us, 48 Gbit/s"
assert_jq "$T/cal.json" '.calibration.links.leaf.bandwidth_fitted == false' "leaf not constrained by one-host rows"
jq -r '.calibration.rows[:3][] | "\(.coll) \(.algo) \(.ranks) \(.size_bytes) \(.error_calibrated)"' "$T/cal.json"
# The saved topology predicts the fixture's 4-rank ring allreduce at 1 MiB (357.87 us measured).
"$RB" fabric sim --topology "$T/calibrated.json" --nodes 1 --gpus-per-node 4 -b 1M -e 1M --json >"$T/pred.json"
assert_jq "$T/pred.json" '(.collective_rows[0].oop.time_us / 357.87 - 1 | fabs) < 0.05' "calibrated topology predicts the measurement"
"$RB" fabric sim --calibrate "$FIXTURE" >"$T/cal.txt"
grep -q '^# mean |error|: default [0-9.]* %, calibrated [0-9.]* %$' "$T/cal.txt" || fail "calibration summary line"
ok "calibration table"

# --out: result.json with collective_rows for reports.
"$RB" fabric sim --nodes 4 --algo all -b 1K -e 1M -f 32 --out "$T/run" --quiet >/dev/null
assert_jq "$T/run/result.json" '.command == "fabric sim" and (.summary.collective_rows | length) == 15 and .summary.predicted' "--out summary rows"
[ -s "$T/run/table.md" ] || fail "no table.md"

# The 32,768-GPU sweep (timed in BENCHMARKS.md, not asserted here).
"$RB" fabric sim --nodes 4096 -b 8 -e 8G --json >"$T/big.json"
assert_jq "$T/big.json" '.collective_rows | length == 31 and all(.[]; .ranks == 32768 and .oop.time_us > 0)' "32,768 GPUs, 31 sizes"
echo "model time for the 32,768-GPU sweep: $(jq .model_time_s "$T/big.json") s"

# Bad input.
assert_exit 2 "algorithm not modelled" "$RB" fabric sim reducescatter --algo tree
assert_stderr_line 'railbench: error: --algo tree: not modelled for reducescatter'
assert_exit 2 "unknown type" "$RB" fabric sim -d float16
assert_stderr_line 'railbench: error: -d: expected'
assert_exit 2 "unknown collective" "$RB" fabric sim allscatter
assert_stderr_line 'railbench: error: unknown collective "allscatter" for "railbench fabric sim" \(use allreduce, .*, all, moe; see railbench fabric sim --help\)$'
assert_exit 2 "GPUs > NIC ports" "$RB" fabric sim --nics-per-node 4
assert_stderr_line 'one NIC port per GPU'
jq '.links.nvlink.bandwidth_gbit_per_s = 0' "$TOPO/dgx-h100-su.json" >"$T/zero.json"
assert_exit 2 "zero bandwidth" "$RB" fabric sim --topology "$T/zero.json"
assert_stderr_line 'links.nvlink.bandwidth_gbit_per_s must be > 0'
assert_exit 2 "calibrate: not a coll result" "$RB" fabric sim --calibrate "$TOPO/dgx-h100-su.json"
assert_stderr_line 'not a railbench coll result'
assert_exit 2 "calibrate: missing" "$RB" fabric sim --calibrate "$T/nope"
assert_stderr_line 'cannot read'
assert_exit 2 "sizes" "$RB" fabric sim -b 1M -e 1K
assert_stderr_line 'minbytes <= maxbytes'

# --calibrate on a real `railbench coll` run on this machine: the model's error per size is printed, and the
# fitted alpha/beta predict the measurement better than the uncalibrated defaults.
rb_mpirun 2 "$RB" coll allreduce --algo ring,rhd -b 8 -e 4M -f 4 -n 10 -w 2 --out "$T/coll-real" --quiet >/dev/null
"$RB" fabric sim --calibrate "$T/coll-real" >"$T/cal-real.txt"
grep -Eq 'error' "$T/cal-real.txt" || fail "--calibrate printed no per-size error"
"$RB" fabric sim --calibrate "$T/coll-real" --json >"$T/cal-real.json"
assert_jq "$T/cal-real.json" '.calibration.rows_used == 20' "every measured row (2 algorithms x 10 sizes) used"
assert_jq "$T/cal-real.json" '.calibration.mean_abs_error_calibrated < .calibration.mean_abs_error_default' \
    "calibrated on a real coll run: mean error $(jq -r '.calibration.mean_abs_error_calibrated' "$T/cal-real.json") < default $(jq -r '.calibration.mean_abs_error_default' "$T/cal-real.json")"
# Size bands: each row names its band, each band has its own parameters, all within physical ranges.
# shellcheck disable=SC2016 # $nb is jq's
assert_jq "$T/cal-real.json" '.calibration.bands_used as $nb | $nb >= 1 and (.calibration.bands | length) == $nb and
    ([.calibration.rows[].band] | min == 1 and max == $nb)' "rows carry their size band"
assert_jq "$T/cal-real.json" '[.calibration.bands[].links[] | select(.bandwidth_fitted) | .bandwidth_gbit_per_s] |
    all(. >= 0.001 and . <= 100000)' "fitted bandwidths within 1 Mbit/s .. 100 Tbit/s"
grep -Eq '^# band 1: [0-9]+ \.\. [0-9]+ B, [0-9]+ rows, mean \|error\| [0-9.]+ %$' "$T/cal-real.txt" || fail "band table"
ok "per-band tables"
# Degenerate: every row of one size cannot separate latency from bandwidth: exit 1 with the reason.
mkdir -p "$T/one-size"
jq '.summary.collective_rows |= map(.size_bytes = 1048576)' "$FIXTURE/result.json" >"$T/one-size/result.json"
assert_exit 1 "calibrate: one size" "$RB" fabric sim --calibrate "$T/one-size"
assert_stderr_line 'degenerate fit: every row has the same size'
