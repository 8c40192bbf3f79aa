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
# Lay the file out once (railbench writes it in full, --keep leaves it) and keep the job file raw fio will run.
"$RB" block --target "$T/data" --size 256M --bs "$bs" --iodepth "$qd" --runtime "$runtime" --ramp 1s \
    --keep --out "$T/prep" --quiet >/dev/null
job=$T/prep/points/0/$name.fio

run_rb() { # round -> IOPS railbench reports for the point
    "$RB" block --target "$T/data" --size 256M --bs "$bs" --iodepth "$qd" --runtime "$runtime" --ramp 1s \
        --keep --out "$T/rb$1" --quiet >/dev/null
    cmp -s "$job" "$T/rb$1/points/0/$name.fio" || { echo "job files differ between runs" >&2; exit 1; }
    jq -er '.summary.block_points[0].iops' "$T/rb$1/result.json"
}
run_fio() { # round -> IOPS raw fio reports for the same job file, run with railbench's argv
    fio --output-format=json+ --output="$T/fio$1.json" --eta=never --readonly "$job"
    sed -n '/^{/,$p' "$T/fio$1.json" | jq -er '.jobs[0].read.iops'
}

printf '%-6s %-10s %14s %14s %8s\n' round first railbench_iops fio_iops ratio
ratios=()
for i in $(seq "$rounds"); do
    # Alternate which goes first, so drift of a shared, noisy disk does not favour one side.
    if [ $((i % 2)) = 1 ]; then first=railbench; rb=$(run_rb "$i"); raw=$(run_fio "$i")
    else first=fio; raw=$(run_fio "$i"); rb=$(run_rb "$i"); fi
    ratio=$(awk -v a="$rb" -v b="$raw" 'BEGIN { printf "%.3f", a / b }')
    ratios+=("$ratio")
    printf '%-6s %-10s %14.0f %14.0f %8s\n' "$i" "$first" "$rb" "$raw" "$ratio"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
echo "block_vs_fio: $name, runtime $runtime + ramp 1s, $rounds rounds: median IOPS ratio railbench/fio = $median"
