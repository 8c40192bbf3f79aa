#!/usr/bin/env bash
# load checkpoint against its peers in one run: ROUNDS rounds, each running the checkpoint and its reference back to
# back (which goes first alternates by round, on a shared machine; a round 0 before them warms up and is not counted),
# the ratio checkpoint / reference per round, and min / median / max of the ratios. One checkpoint of llama3-8b at 1/SCALE (16 files), one process playing the 8 ranks:
# 1. files, on an ext4 loop device: the write (psync, 1 MiB blocks, fsync before each close) against fio writing the
#    same 16 files (same sizes, one after the other, bs=1M, psync, an fsync after each file's last write, no
#    preallocation): bytes over the checkpoint's duration against bytes over fio's I/O and fsync latencies summed;
#    the read of those files from the device (each file's cached pages dropped first: --drop-cache files, and fio's
#    default invalidate=1, both posix_fadvise DONTNEED) against fio reading them (bs=1M, psync);
# 2. S3, on Ceph RGW: the write (multipart, 8 MiB parts, -c 8) against `load put` of the same names and sizes with the
#    same parts and -c (each listed file's size decides its multipart upload, as the checkpoint's does); the read
#    of those objects whole (--read-part-size 0) against `load get` of them, -c 8.
# Usage: tests/bench/checkpoint_vs_peers.sh   (BENCH_SCALE, BENCH_ROUNDS, BENCH_TARGETS="files s3", BENCH_IMAGE_DIR)
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T"
SCALE=${BENCH_SCALE:-500}
ROUNDS=${BENCH_ROUNDS:-5}
TARGETS=${BENCH_TARGETS:-files s3}
command -v fio >/dev/null || fail "fio not installed (scripts/deps.sh)"
LLAMA8B="4096 32 14336 128256 32 8 1 1 8 3"
# shellcheck disable=SC2086
python3 "$ROOT/tests/integration/checkpoint_formula.py" $LLAMA8B "$SCALE" | sort >"$T/files"
BYTES=$(awk '{s += $2} END {print s}' "$T/files")
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
# stats NAME RATIO...: one table row with min, median and max of the ratios.
stats() { local name=$1; shift
    printf '%s\n' "$@" | sort -g | awk -v n="$name" '{v[NR] = $1} END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "| %s | %d | %.3f | %.3f | %.3f |\n", n, NR, v[1], m, v[NR] }' >>"$T/table"; }
# settle: before each measured run a sync (without it whoever ran second paid for the first one's write-back: ratios
# of 3 and 0.2 by turns, measured), and every file on the loop file system dropped from the page cache (dd
# iflag=nocache count=0: posix_fadvise DONTNEED of the whole file). Without the drop the second writer of a round,
# whichever tool, came out 3-4x slower than the first (the same checkpoint write twice: 687 then 162 MiB/s, 860
# then 272, 818 then 218; with the first one's pages dropped before: 765-1132 every time): its pages came from
# memory the guest had not used lately (likely: this VM has a virtio balloon), the first one's from pages just freed.
settle() { sync; [ -z "${LOOP_MNT:-}" ] ||
    find "$LOOP_MNT" -type f -exec dd if={} iflag=nocache count=0 status=none \; ; }
# pair R A B: runs A then B in odd rounds, B then A in even ones (each a function setting its figure), each settled.
pair() { if (( $1 % 2 )); then settle; "$2" "$1"; settle; "$3" "$1"; else settle; "$3" "$1"; settle; "$2" "$1"; fi; }
ck() { "$RB" load checkpoint "$@" --model llama3-8b --scale "1/$SCALE" --quiet >/dev/null 2>"$T/ck.err" ||
    { cat "$T/ck.err" >&2; fail "load checkpoint $*"; }; }
: >"$T/table"

if [[ " $TARGETS " == *" files "* ]]; then
    # The loop device's image in RAM (/dev/shm; BENCH_IMAGE_DIR names another directory): the disk under build/tmp is
    # shared with every other build and test on the machine, whose I/O would set the figure instead of the tools.
    IMG=$(mktemp -d "${BENCH_IMAGE_DIR:-/dev/shm}/checkpoint_vs_peers.XXXXXX") || fail "no directory for the image"
    AT_EXIT+=("rm -rf '$IMG'")
    T=$IMG loopfs_up fs 1200M ext4
    # Every block of the device written once before anything is measured. The image is sparse and the loop device
    # writes it with O_DIRECT, so a block written for the first time makes the host file system allocate it (an
    # unwritten extent, converted when the write completes), several times the cost of an overwrite; and ext4 inside
    # moves on to blocks it has not used yet as it allocates, so whichever tool wrote second in a round met more
    # never-written blocks and came out 2-3x slower, in either order, with or without a sync (measured: BENCHMARKS.md).
    dd if=/dev/zero of="$LOOP_MNT/fill" bs=1M oflag=direct status=none 2>/dev/null || true
    rm -f "$LOOP_MNT/fill"
    sync
    mkdir -p "$LOOP_MNT/ck" "$LOOP_MNT/fio"
    # fio_job R RW DIR: one job per file, one after the other (stonewall); a write fsyncs after its last block
    # (fsync=N, N its whole blocks: timed by fio, where fsync_on_close is not timed at all).
    fio_job() {
        printf '[global]\nioengine=psync\nbs=1M\nrw=%s\nfallocate=none\ndirectory=%s\n' "$2" "$3"
        while read -r name size; do
            printf '[%s]\nstonewall\nfilename=%s\nsize=%s\n' "$name" "$name" "$size"
            [ "$2" = write ] && printf 'fsync=%s\n' "$(( size / 1048576 > 0 ? size / 1048576 : 1 ))"
        done <"$T/files"
    }
    # fio_run R RW DIR -> bytes/s over the time fio spent in its I/Os and fsyncs: the sums of their latencies (ns;
    # job_runtime is whole milliseconds, and leaves the fsyncs out: 0.39 s of runtime beside 3.2 s of fsync once).
    fio_run() {
        fio_job "$@" >"$T/fio-$1-$2.fio"
        fio --output-format=json "$T/fio-$1-$2.fio" >"$T/fio-$1-$2.json" 2>"$T/fio.err" || { cat "$T/fio.err" >&2; fail "fio"; }
        jq -r --arg rw "$2" '([.jobs[][$rw].io_bytes] | add) / ([.jobs[] | .[$rw].lat_ns.mean * .[$rw].lat_ns.N
            + (.sync.lat_ns.mean // 0) * (.sync.lat_ns.N // 0)] | add) * 1e9' "$T/fio-$1-$2.json"
    }
    FW=() FRD=()
    for r in $(seq 0 "$ROUNDS"); do
        ckw() { ck "file://$LOOP_MNT/ck" --writes 1 --reads 0 --name "r$1" --keep --out "$T/fw-$1"
            cw=$(jq -r '.summary.writes[0].throughput_bytes_per_s' "$T/fw-$1/result.json"); }
        fiow() { fw=$(fio_run "$1" write "$LOOP_MNT/fio"); }
        pair "$r" ckw fiow
        ckr() { ck "file://$LOOP_MNT/ck" --mode read --writes 1 --reads 1 --name "r$1" --drop-cache files --out "$T/fr-$1"
            cr=$(jq -r '.summary.reads[0].throughput_bytes_per_s' "$T/fr-$1/result.json"); }
        fior() { fr=$(fio_run "$1" read "$LOOP_MNT/ck/r$1/global_step1"); }
        pair "$r" ckr fior
        rm -rf "$LOOP_MNT/ck/r$r" "$LOOP_MNT/fio"/*
        [ "$r" -gt 0 ] || continue # round 0 warms up (first files on a fresh file system)
        echo "files round $r: write checkpoint $(mib "$cw") MiB/s, fio $(mib "$fw") MiB/s; read checkpoint $(mib "$cr") MiB/s, fio $(mib "$fr") MiB/s"
        FW+=("$(awk -v a="$cw" -v b="$fw" 'BEGIN { print a / b }')")
        FRD+=("$(awk -v a="$cr" -v b="$fr" 'BEGIN { print a / b }')")
    done
    stats "ext4 write / fio" "${FW[@]}"
    stats "ext4 read (cache dropped per file) / fio" "${FRD[@]}"
fi

if [[ " $TARGETS " == *" s3 "* ]]; then
    rgw_up
    rgw_bucket bench
    EP=(--endpoint "$RGW_ENDPOINT")
    SW=() SRD=()
    for r in $(seq 0 "$ROUNDS"); do
        awk -v r="$r" '{print "put/p" r "/" $1, $2}' "$T/files" >"$T/put-$r"
        awk -v r="$r" '{print "ck/r" r "/global_step1/" $1, $2}' "$T/files" >"$T/ck-$r"
        ckw() { ck s3://bench/ck/ "${EP[@]}" --writes 1 --reads 0 --name "r$1" --keep --part-size 8MiB \
                --multipart-threshold 8MiB -c 8 --out "$T/sw-$1"
            cw=$(jq -r '.summary.writes[0].throughput_bytes_per_s' "$T/sw-$1/result.json"); }
        putw() { "$RB" load put s3://bench/ "${EP[@]}" --filelist "$T/put-$1" \
                --part-size 8MiB --multipart-threshold 8MiB -c 8 --out "$T/pw-$1" --quiet >/dev/null 2>"$T/put.err" ||
                { cat "$T/put.err" >&2; fail "load put"; }
            jq -e ".phases[0].parts.count > 0" "$T/pw-$1/result.json" >/dev/null || fail "load put made no multipart upload"
            pw=$(jq -r '.summary.ops[0].throughput_bytes_per_s' "$T/pw-$1/result.json"); }
        pair "$r" ckw putw
        ckr() { ck s3://bench/ck/ "${EP[@]}" --mode read --writes 1 --reads 1 --name "r$1" --read-part-size 0 -c 8 \
                --out "$T/sr-$1"
            cr=$(jq -r '.summary.reads[0].throughput_bytes_per_s' "$T/sr-$1/result.json"); }
        getr() { "$RB" load get s3://bench/ "${EP[@]}" --filelist "$T/ck-$1" --pattern epoch --epochs 1 -c 8 \
                --out "$T/gr-$1" --quiet >/dev/null 2>"$T/get.err" || { cat "$T/get.err" >&2; fail "load get"; }
            pr=$(jq -r '.summary.ops[0].throughput_bytes_per_s' "$T/gr-$1/result.json"); }
        pair "$r" ckr getr
        # load put deleted its own objects at its end; the checkpoint's were kept for the reads.
        "$RB" load delete s3://bench/ "${EP[@]}" --filelist "$T/ck-$r" --quiet --out "$T/del-$r" >/dev/null 2>&1 ||
            fail "load delete of round $r's objects"
        [ "$r" -gt 0 ] || continue # round 0 warms up (RGW's first objects in a fresh bucket)
        echo "s3 round $r: write checkpoint $(mib "$cw") MiB/s, load put $(mib "$pw") MiB/s; read checkpoint $(mib "$cr") MiB/s, load get $(mib "$pr") MiB/s"
        SW+=("$(awk -v a="$cw" -v b="$pw" 'BEGIN { print a / b }')")
        SRD+=("$(awk -v a="$cr" -v b="$pr" 'BEGIN { print a / b }')")
    done
    stats "RGW write (multipart) / load put" "${SW[@]}"
    stats "RGW read (whole files) / load get" "${SRD[@]}"
fi

printf '\nllama3-8b at 1/%d: %s bytes in 16 files per checkpoint, %d rounds, ratio checkpoint / reference per round\n' \
    "$SCALE" "$BYTES" "$ROUNDS"
printf '| comparison | rounds | min | median | max |\n|---|---:|---:|---:|---:|\n'
cat "$T/table"
