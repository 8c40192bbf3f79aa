#!/usr/bin/env bash
# How fast load train --populate writes each file format, against load put of the same bytes (objects of the same
# count and size) to the same directory: a row per format and round, alternating put and populate, then the
# min/median/max of populate's bandwidth over put's per format. Files go to BENCH_DIR (default: a new directory
# under /dev/shm, a tmpfs, so the write path is memory; give a directory on the storage to measure there).
# Usage: tests/bench/train_formats_gen.sh; BENCH_ROUNDS rounds (default 5), BENCH_RANKS ranks (default 2),
# BENCH_FILES files per format (default 16; JPEG's 322,957-byte files 32 times as many).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
ROUNDS=${BENCH_ROUNDS:-5}
RANKS=${BENCH_RANKS:-2}
FILES=${BENCH_FILES:-16}
DIR=${BENCH_DIR:-$(mktemp -d /dev/shm/rb-formats-gen.XXXXXX)}
[ -d "$DIR" ] || fail "BENCH_DIR $DIR is not a directory"
[ -z "$(ls -A "$DIR")" ] || fail "BENCH_DIR $DIR is not empty"
# The directory it made goes at exit, also when interrupted; the end checks that the runs left it empty.
[ -n "${BENCH_DIR:-}" ] || AT_EXIT+=("rm -rf '$DIR'")
# The formats: name, files, and the load train options of its data set (fixed sizes, so load put can write the same
# bytes).
FORMATS=(
    "parquet-dlrm|$FILES|--format parquet --parquet-schema scalar:200 --sample-size 761 --samples-per-object 65536 --row-group-size 6144"
    "parquet-flux|$FILES|--format parquet --parquet-schema list:5 --sample-size 2164832 --samples-per-object 16 --row-group-size 8"
    "npz-unet3d|$FILES|--format npz --sample-size 16MiB --samples-per-object 1"
    "jpeg-retinanet|$((FILES * 32))|--format jpeg --sample-size 322957 --samples-per-object 1"
)
printf '%-14s %5s %14s %14s %7s\n' format round "put MiB/s" "populate MiB/s" ratio
for spec in "${FORMATS[@]}"; do
    IFS='|' read -r name files rest <<<"$spec"
    read -r -a opts <<<"$rest"
    for r in $(seq "$ROUNDS"); do
        # populate first, to learn the files' size (then deleted); then put of that many bytes per object.
        rb_mpirun "$RANKS" "$RB" load train "file://$DIR" --prefix gen- --objects "$files" "${opts[@]}" --populate \
            --compute-time 1ms --steps 1 --out "$T/pop-$name-$r" --quiet >/dev/null 2>&1
        "$RB" load delete "file://$DIR" --prefix gen- --objects "$files" --out "$T/del1-$name-$r" --quiet >/dev/null
        size=$(jq '.summary.populate.bytes / .summary.populate.objects | floor' "$T/pop-$name-$r/result.json")
        # load put deletes what it wrote at its end (its cleanup phase)
        rb_mpirun "$RANKS" "$RB" load put "file://$DIR" --prefix gen- --objects "$files" --size "$size" \
            --out "$T/put-$name-$r" --quiet >/dev/null 2>&1
        p=$(jq '.summary.populate.throughput_bytes_per_s' "$T/pop-$name-$r/result.json")
        u=$(jq '.summary.ops[0].throughput_bytes_per_s' "$T/put-$name-$r/result.json")
        awk -v n="$name" -v r="$r" -v p="$p" -v u="$u" \
            'BEGIN { printf "%-14s %5d %14.1f %14.1f %7.3f\n", n, r, u / 1048576, p / 1048576, p / u }'
    done
done | tee "$T/rows"
echo
# min / median / max per format (sorted by format, then ratio; plain awk: Debian's is mawk)
sort -k1,1 -k5,5g "$T/rows" | awk '
function out() { printf "%-14s populate/put min %.3f median %.3f max %.3f (%d rounds)\n", f, v[1],
    (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2), v[n], n }
$1 != f { if (f != "") out(); f = $1; n = 0 }
{ v[++n] = $5 }
END { if (f != "") out() }'
[ -n "${BENCH_DIR:-}" ] || rmdir "$DIR"
