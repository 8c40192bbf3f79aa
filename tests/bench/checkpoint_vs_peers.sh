#!/usr/bin/env bash
# load checkpoint against its peers in one run, best of ROUNDS each (alternating, on a shared machine):
# 1. files: one checkpoint write of llama3-8b at 1/SCALE (16 files, one process playing the 8 ranks, psync, 1 MiB
#    blocks, fsync before each close) on an ext4 loop device, against fio writing the same 16 files (same sizes, one
#    after the other, bs=1M, psync, an fsync after each file's last write, no preallocation): bytes over the slowest
#    rank's time against bytes over the sum of fio's job runtimes and fsync latencies;
# 2. S3: the same checkpoint on Ceph RGW (multipart, 8 MiB parts, -c 8) against `load put` of the same objects
#    (a --filelist with their names and sizes, same parts and -c).
# Usage: tests/bench/checkpoint_vs_peers.sh   (BENCH_SCALE, BENCH_ROUNDS)
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T"
SCALE=${BENCH_SCALE:-500}
ROUNDS=${BENCH_ROUNDS:-3}
command -v fio >/dev/null || fail "fio not installed (scripts/deps.sh)"
loopfs_up fs 1200M ext4
mkdir -p "$LOOP_MNT/ck" "$LOOP_MNT/fio"
gt() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b) }'; }
# median of the arguments
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
FR=() SR=()

ck_file() { # round -> bytes_per_s
    local d=$T/ckf-$1
    "$RB" load checkpoint "file://$LOOP_MNT/ck" --model llama3-8b --scale "1/$SCALE" --writes 1 --reads 0 \
        --name "r$1" --out "$d" --quiet >/dev/null 2>"$d.err" || { cat "$d.err" >&2; fail "checkpoint (file) failed"; }
    jq -r '.summary.writes[0].throughput_bytes_per_s' "$d/result.json"
}
fio_file() { # round -> bytes_per_s, writing the files of round r's checkpoint again, by name and size
    local r=$1 job=$T/fio-$1.fio
    printf '[global]\nioengine=psync\nbs=1M\nrw=write\nfallocate=none\ndirectory=%s\n' "$LOOP_MNT/fio" >"$job"
    # fsync=N with N the file's whole blocks (fio writes those): one fsync after its last write, timed by fio
    # (fsync_on_close is not timed at all; a wall clock around fio would add a process per job).
    (cd "$LOOP_MNT/ck/plan/global_step1" && find . -type f -printf '%P %s\n' | sort) | while read -r name size; do
        printf '[%s-%s]\nstonewall\nfilename=%s-r%s\nsize=%s\nfsync=%s\n' "$name" "$r" "$name" "$r" "$size" \
            "$(( size / 1048576 > 0 ? size / 1048576 : 1 ))" >>"$job"
    done
    fio --output-format=json "$job" >"$T/fio-$r.json" 2>"$T/fio-$r.err" || { cat "$T/fio-$r.err" >&2; fail "fio failed"; }
    # fio's job runtime leaves the fsync out (measured: 0.39 s of runtime beside 3.2 s of fsync for these files):
    # its time is the runtimes plus the fsyncs' latencies.
    jq -r '([.jobs[].write.io_bytes] | add) / (([.jobs[].job_runtime] | add) / 1000
        + ([.jobs[] | .sync.lat_ns.mean * .sync.lat_ns.N] | add) / 1e9)' "$T/fio-$r.json"
}
# The checkpoint's files by name and size: one kept checkpoint ("plan") gives them to fio and to load put.
"$RB" load checkpoint "file://$LOOP_MNT/ck" --model llama3-8b --scale "1/$SCALE" --writes 1 --reads 0 --name plan \
    --keep --quiet --out "$T/plan" >/dev/null 2>&1 || fail "plan"
best_ck=0 best_fio=0
for r in $(seq "$ROUNDS"); do
    c=$(ck_file "$r")
    f=$(fio_file "$r")
    rm -rf "$LOOP_MNT/fio"/* "$LOOP_MNT/ck/r$r"
    echo "files round $r: checkpoint $(awk -v b="$c" 'BEGIN { printf "%.1f", b / 1048576 }') MiB/s, fio $(awk -v b="$f" 'BEGIN { printf "%.1f", b / 1048576 }') MiB/s"
    FR+=("$(awk -v a="$c" -v b="$f" 'BEGIN { print a / b }')")
    [ "$(gt "$c" "$best_ck")" = 1 ] && best_ck=$c
    [ "$(gt "$f" "$best_fio")" = 1 ] && best_fio=$f
done
FILE_RATIO=$(awk -v a="$best_ck" -v b="$best_fio" 'BEGIN { printf "%.3f", a / b }')

rgw_up
rgw_bucket bench
ck_s3() {
    local d=$T/cks-$1
    "$RB" load checkpoint s3://bench/ck/ --endpoint "$RGW_ENDPOINT" --model llama3-8b --scale "1/$SCALE" --writes 1 \
        --reads 0 --name "r$1" --part-size 8MiB --multipart-threshold 8MiB -c 8 --out "$d" --quiet >/dev/null 2>"$d.err" ||
        { cat "$d.err" >&2; fail "checkpoint (s3) failed"; }
    jq -r '.summary.writes[0].throughput_bytes_per_s' "$d/result.json"
}
# The same objects for load put: the plan's names and sizes.
put_s3() {
    local d=$T/put-$1
    "$RB" load put s3://bench/put/ --endpoint "$RGW_ENDPOINT" --filelist "$T/objects-$1" --part-size 8MiB \
        --multipart-threshold 8MiB -c 8 --out "$d" --quiet >/dev/null 2>"$d.err" || { cat "$d.err" >&2; fail "put failed"; }
    jq -r '.summary.ops[0].throughput_bytes_per_s' "$d/result.json"
}
best_cs=0 best_put=0
for r in $(seq "$ROUNDS"); do
    (cd "$LOOP_MNT/ck/plan/global_step1" && find . -type f -printf "put/p$r/%P %s\n" | sort) >"$T/objects-$r"
    c=$(ck_s3 "$r")
    p=$(put_s3 "$r")
    echo "s3 round $r: checkpoint $(awk -v b="$c" 'BEGIN { printf "%.1f", b / 1048576 }') MiB/s, load put $(awk -v b="$p" 'BEGIN { printf "%.1f", b / 1048576 }') MiB/s"
    SR+=("$(awk -v a="$c" -v b="$p" 'BEGIN { print a / b }')")
    [ "$(gt "$c" "$best_cs")" = 1 ] && best_cs=$c
    [ "$(gt "$p" "$best_put")" = 1 ] && best_put=$p
done
S3_RATIO=$(awk -v a="$best_cs" -v b="$best_put" 'BEGIN { printf "%.3f", a / b }')
BYTES=$(jq -r .summary.checkpoint_bytes "$T/plan/result.json")
printf '\nllama3-8b at 1/%d: %s bytes in 16 files per checkpoint, best of %d rounds each\n' "$SCALE" "$BYTES" "$ROUNDS"
printf '| target | load checkpoint (MiB/s, best) | reference | reference (MiB/s, best) | ratio of bests | median ratio of the rounds |\n|---|---:|---|---:|---:|---:|\n'
printf '| ext4 loop device | %.1f | fio, same files, psync bs=1M, fsync after each file | %.1f | %s | %.3f |\n' \
    "$(awk -v b="$best_ck" 'BEGIN { print b / 1048576 }')" "$(awk -v b="$best_fio" 'BEGIN { print b / 1048576 }')" "$FILE_RATIO" "$(median "${FR[@]}")"
printf '| Ceph RGW | %.1f | load put --filelist, same objects, 8 MiB parts, -c 8 | %.1f | %s | %.3f |\n' \
    "$(awk -v b="$best_cs" 'BEGIN { print b / 1048576 }')" "$(awk -v b="$best_put" 'BEGIN { print b / 1048576 }')" "$S3_RATIO" "$(median "${SR[@]}")"
