#!/usr/bin/env bash
# railbench load meta vs fio's filecreate, filestat and filedelete engines and a small-file open-read-close job, on
# the same file system, the same number of files in one directory, one thread each, alternating in rounds: the
# operations-per-second ratio railbench/fio per operation, min/median/max (BENCHMARKS.md).
# Env: RB (the binary; default build/railbench), BENCH_FILES (default 5000), BENCH_ROUNDS (3), BENCH_FS (ext4|xfs).
# Root: a file system of its own on a loop device (tests/servers/loopfs.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
RB=${RB:-$here/build/railbench}
n=${BENCH_FILES:-5000}
rounds=${BENCH_ROUNDS:-3}
[ "$(id -u)" = 0 ] || { echo "meta_vs_fio: needs root (a loop device)" >&2; exit 3; }
command -v fio >/dev/null || { echo "fio not found; install it with: apt-get install fio" >&2; exit 3; }
mkdir -p "$here/build/tmp"
T=$(mktemp -d "$here/build/tmp/meta_vs_fio.XXXXXX")
trap '"$here/tests/servers/loopfs.sh" umount "$T/fs" >/dev/null 2>&1; rm -rf "$T"' EXIT
# shellcheck disable=SC1090
. <("$here/tests/servers/loopfs.sh" mount "$T/fs" 400M "${BENCH_FS:-ext4}")
D=$LOOP_MNT

# railbench: one tree of 1 directory x n files: create (empty, as fio's filecreate), stat, unlink; then a tree of
# 4 KiB files for open-read-close. Prints "create stat unlink read" operations per second.
run_rb() {
    "$RB" load meta "$D" --dirs 1 --files "$n" --phases mkdir,create,stat,unlink,rmdir --out "$T/rb-m-$1" --quiet >/dev/null
    "$RB" load meta "$D" --dirs 1 --files "$n" --size 4k --phases mkdir,create,read,unlink,rmdir --out "$T/rb-r-$1" \
        --quiet >/dev/null
    local m=$T/rb-m-$1/result.json r=$T/rb-r-$1/result.json
    echo "$(jq '.summary.ops[] | select(.phase == "create") | .ops_per_s' "$m") $(jq '.summary.ops[] | select(.phase == "stat") | .ops_per_s' "$m")" \
        "$(jq '.summary.ops[] | select(.phase == "unlink") | .ops_per_s' "$m") $(jq '.summary.ops[] | select(.phase == "read") | .ops_per_s' "$r")"
}
# fio: the same n files in one directory, one job each: filecreate, filestat, filedelete; and a psync read of 4 KiB
# files, each opened, read once and closed (openfiles=1), laid out by fio before its timing starts.
fio_job() { # ROUND NAME OPTIONS... -> that job's operations per second
    local round=$1 name=$2; shift 2
    mkdir -p "$D/fio"
    fio --name="$name" --directory="$D/fio" --nrfiles="$n" --openfiles=1 --thread --output-format=json \
        --output="$T/fio-$name-$round.json" "$@" >/dev/null
    jq '.jobs[0].read.iops' "$T/fio-$name-$round.json"
}
run_fio() {
    local c s d r
    c=$(fio_job "$1" m --ioengine=filecreate --filesize=4k --fallocate=none --create_on_open=1)
    s=$(fio_job "$1" m --ioengine=filestat --filesize=4k)
    d=$(fio_job "$1" m --ioengine=filedelete --filesize=4k)
    r=$(fio_job "$1" r --ioengine=psync --rw=read --bs=4k --filesize=4k --file_service_type=sequential --invalidate=0)
    rm -rf "$D/fio"
    echo "$c $s $d $r"
}

ops=(create stat unlink open-read-close)
declare -A ratios
printf '%-6s %-10s %-16s %12s %12s %7s\n' round first operation "railbench/s" "fio/s" ratio
for i in $(seq "$rounds"); do
    if [ $((i % 2)) = 1 ]; then first=railbench; read -r -a rb <<<"$(run_rb "$i")"; read -r -a raw <<<"$(run_fio "$i")"
    else first=fio; read -r -a raw <<<"$(run_fio "$i")"; read -r -a rb <<<"$(run_rb "$i")"; fi
    for k in 0 1 2 3; do
        ratio=$(awk -v a="${rb[k]}" -v b="${raw[k]}" 'BEGIN { printf "%.3f", a / b }')
        ratios[${ops[k]}]+="$ratio "
        printf '%-6s %-10s %-16s %12.0f %12.0f %7s\n' "$i" "$first" "${ops[k]}" "${rb[k]}" "${raw[k]}" "$ratio"
    done
done
echo
echo "meta_vs_fio: ${BENCH_FS:-ext4} on a loop device, $n files in one directory, one thread, $rounds rounds; ratio railbench/fio operations per second:"
for op in "${ops[@]}"; do
    printf '%s\n' ${ratios[$op]} | sort -n | awk -v n="$op" '{ v[NR] = $1 }
        END { printf "%-16s min %.3f  median %.3f  max %.3f\n", n, v[1], (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[NR] }'
done
