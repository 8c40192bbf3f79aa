#!/usr/bin/env bash
# railbench load get on file:// vs fio on the very same files, same block size, engine, depth and O_DIRECT, one job
# each, alternating in rounds: throughput ratio railbench/fio per workload, min/median/max (BENCHMARKS.md).
# Env: RB (the binary; default build/railbench), BENCH_RUNTIME (default 5s), BENCH_ROUNDS (3), BENCH_ONLY (a regex of workload names), BENCH_FS (ext4|xfs).
# Buffered workloads read from a warm page cache on both sides, O_DIRECT ones from the device.
# Root: the files are on a file system of their own on a loop device (tests/servers/loopfs.sh, --direct-io=on so
# the loop device itself does not cache), 8 files of 32 MiB written once by railbench.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
RB=${RB:-$here/build/railbench}
runtime=${BENCH_RUNTIME:-5s}
rounds=${BENCH_ROUNDS:-3}
[ "$(id -u)" = 0 ] || { echo "file_vs_fio: needs root (a loop device)" >&2; exit 3; }
command -v fio >/dev/null || { echo "fio not found; install it with: apt-get install fio" >&2; exit 3; }
mkdir -p "$here/build/tmp"
T=$(mktemp -d "$here/build/tmp/file_vs_fio.XXXXXX")
trap '"$here/tests/servers/loopfs.sh" umount "$T/fs" >/dev/null 2>&1; rm -rf "$T"' EXIT
# shellcheck disable=SC1090
. <("$here/tests/servers/loopfs.sh" mount "$T/fs" 400M "${BENCH_FS:-ext4}")
D=$LOOP_MNT/data
mkdir "$D"
nfiles=8
"$RB" load put "$D" --objects $nfiles --size 32M --keep --fsync close --out "$T/put" --quiet >/dev/null
files=$(for i in $(seq 0 $((nfiles - 1))); do printf '%s/obj-%08d:' "$D" "$i"; done)
files=${files%:}
secs=${runtime%s}

# name | railbench load get options | fio options (one job; the rest is common below)
workloads=(
    "seq-1M-psync-buffered|--pattern sequential --block-size 1M|--rw=read --bs=1M --ioengine=psync --file_service_type=sequential"
    "seq-128k-psync-buffered|--pattern sequential --block-size 128k|--rw=read --bs=128k --ioengine=psync --file_service_type=sequential"
    "seq-1M-io_uring-direct-qd4|--pattern sequential --block-size 1M --direct --io-engine io_uring -c 4|--rw=read --bs=1M --direct=1 --ioengine=io_uring --iodepth=4 --file_service_type=sequential"
    "rand-4k-psync-buffered|--random-range 4k --block-size 4k|--rw=randread --bs=4k --ioengine=psync --file_service_type=random"
    "rand-4k-psync-direct|--random-range 4k --block-size 4k --direct|--rw=randread --bs=4k --direct=1 --ioengine=psync --file_service_type=random"
    "rand-4k-io_uring-direct-qd16|--random-range 4k --block-size 4k --direct --io-engine io_uring -c 16|--rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=16 --file_service_type=random"
)

# Buffered runs read from a warm page cache (every file read once just before), direct ones from the device; fio
# is told not to drop the files' pages itself (--invalidate=0), so both start from the same cache.
warm() { case $1 in *buffered*) cat "$D"/obj-* >/dev/null ;; esac; }

run_rb() { # NAME ROUND OPTIONS... -> bytes/s railbench reports
    local name=$1 round=$2; shift 2
    warm "$name"
    # shellcheck disable=SC2068
    "$RB" load get "$D" --size 32M --duration "$runtime" $@ --out "$T/rb-$name-$round" --quiet >/dev/null
    jq -er '.summary.ops[0] | if .errors.total == 0 then .throughput_bytes_per_s else error("errors") end' \
        "$T/rb-$name-$round/result.json"
}
run_fio() { # NAME ROUND OPTIONS... -> bytes/s fio reports
    local name=$1 round=$2; shift 2
    warm "$name"
    # shellcheck disable=SC2068
    fio --name="$name" --filename="$files" --readonly --invalidate=0 --time_based --runtime="$secs" --numjobs=1 --thread \
        --output-format=json --output="$T/fio-$name-$round.json" $@ >/dev/null
    jq -er '.jobs[0].read.bw_bytes' "$T/fio-$name-$round.json"
}

printf '%-30s %-6s %-10s %12s %12s %7s\n' workload round first "railbench MB/s" "fio MB/s" ratio
summary=()
for wl in "${workloads[@]}"; do
    IFS='|' read -r name rbopts fioopts <<<"$wl"
    [[ $name =~ ${BENCH_ONLY:-.} ]] || continue
    ratios=()
    for i in $(seq "$rounds"); do
        # Alternate which goes first, so the drift of a shared, noisy machine favours neither.
        if [ $((i % 2)) = 1 ]; then first=railbench; rb=$(run_rb "$name" "$i" $rbopts); raw=$(run_fio "$name" "$i" $fioopts)
        else first=fio; raw=$(run_fio "$name" "$i" $fioopts); rb=$(run_rb "$name" "$i" $rbopts); fi
        ratio=$(awk -v a="$rb" -v b="$raw" 'BEGIN { printf "%.3f", a / b }')
        ratios+=("$ratio")
        printf '%-30s %-6s %-10s %12.1f %12.1f %7s\n' "$name" "$i" "$first" "$(awk -v v="$rb" 'BEGIN { print v / 1e6 }')" \
            "$(awk -v v="$raw" 'BEGIN { print v / 1e6 }')" "$ratio"
    done
    summary+=("$(printf '%s\n' "${ratios[@]}" | sort -n | awk -v n="$name" '{ v[NR] = $1 }
        END { printf "%-30s min %.3f  median %.3f  max %.3f", n, v[1], (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[NR] }')")
done
echo
echo "file_vs_fio: ${BENCH_FS:-ext4} on a loop device (--direct-io=on), $nfiles files of 32 MiB, $runtime per run, $rounds rounds; ratio railbench/fio throughput:"
printf '%s\n' "${summary[@]}"
