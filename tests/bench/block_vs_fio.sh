#!/usr/bin/env bash
# One block point through railbench and the same job file through raw fio, alternating, in one run: IOPS ratio.
# Env: BENCH_RUNTIME (default 5s), BENCH_ROUNDS (3), BENCH_IODEPTH (16), BENCH_BS (4k), BENCH_DIR (under build/tmp).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
RB=$here/build/railbench
runtime=${BENCH_RUNTIME:-5s}
rounds=${BENCH_ROUNDS:-3}
qd=${BENCH_IODEPTH:-16}
bs=${BENCH_BS:-4k}
mkdir -p "$here/build/tmp"
T=$(mktemp -d "${BENCH_DIR:-$here/build/tmp}/block_vs_fio.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/data"
command -v fio >/dev/null || { echo "fio not found; install it with: apt-get install fio" >&2; exit 3; }

name=$bs-randread-qd$qd-j1
printf '%-6s %14s %14s %8s\n' round railbench_iops fio_iops ratio
ratios=()
for i in $(seq "$rounds"); do
    # railbench: one point; --keep so that every round (and raw fio) reads the same laid-out file.
    "$RB" block --target "$T/data" --size 256M --bs "$bs" --iodepth "$qd" --runtime "$runtime" --ramp 1s \
        --keep --out "$T/rb$i" --quiet >/dev/null
    rb=$(jq -er '.summary.block_points[0].iops' "$T/rb$i/result.json")
    # Raw fio: the job file railbench generated for that point, with the argv railbench uses.
    fio --output-format=json+ --output="$T/fio$i.json" --eta=never --readonly "$T/rb$i/points/0/$name.fio"
    raw=$(sed -n '/^{/,$p' "$T/fio$i.json" | jq -er '.jobs[0].read.iops')
    ratio=$(awk -v a="$rb" -v b="$raw" 'BEGIN { printf "%.3f", a / b }')
    ratios+=("$ratio")
    printf '%-6s %14.0f %14.0f %8s\n' "$i" "$rb" "$raw" "$ratio"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
echo "block_vs_fio: $name, runtime $runtime, $rounds rounds: median IOPS ratio railbench/fio = $median"
