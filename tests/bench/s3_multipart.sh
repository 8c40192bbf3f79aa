#!/usr/bin/env bash
# Large PUTs to Ceph RGW: whole objects (one PUT each, the reference) against multipart uploads of the same
# objects (parts in parallel on the same -c slots), in one run: throughput, object p50/p99, part p50, the ratio.
# Usage: tests/bench/s3_multipart.sh   (BENCH_SIZE_MIB, BENCH_PART_MIB, BENCH_OBJECTS, BENCH_INFLIGHT, BENCH_ROUNDS)
# Each form runs ROUNDS times, alternating, and keeps its best run (the least disturbed on a shared machine);
# every run deletes what it wrote (cleanup), but RGW frees the tails of large objects only at its garbage
# collection (hours), so the defaults stay small: ROUNDS x 2 x N x SIZE must fit the 4 GiB memory store.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
SIZE_MIB=${BENCH_SIZE_MIB:-32}
PART_MIB=${BENCH_PART_MIB:-8}
N=${BENCH_OBJECTS:-8}
C=${BENCH_INFLIGHT:-8}
ROUNDS=${BENCH_ROUNDS:-3}
rgw_up
rgw_bucket bench

# put_run NAME ARGS...: prints bytes_per_s p50_ms p99_ms part_p50_ms (- without parts); fails on any error.
put_run() {
    local d=$T/$1; shift
    "$RB" load put s3://bench/mp/ --endpoint "$RGW_ENDPOINT" --objects "$N" --size "${SIZE_MIB}MiB" -c "$C" "$@" \
        --out "$d" --quiet >/dev/null 2>"$d.err" || { cat "$d.err" >&2; fail "$d: railbench failed"; }
    jq -r '.summary as $s | $s.ops[0] | if .errors.total > 0 or $s.cleanup.failed > 0 then error("errors")
        else "\(.throughput_bytes_per_s) \(.latency_ns.p50 / 1e6) \(.latency_ns.p99 / 1e6) \(
        if ($s.ops | length) > 1 then $s.ops[1].latency_ns.p50 / 1e6 else "-" end)" end' "$d/result.json"
}

best_single="0 0 0 -" best_multi="0 0 0 -"
for r in $(seq "$ROUNDS"); do
    s=$(put_run "single-$r" --multipart-threshold "$((SIZE_MIB + 1))MiB")
    m=$(put_run "multi-$r" --part-size "${PART_MIB}MiB" --multipart-threshold "${PART_MIB}MiB")
    echo "round $r: single $s | multipart $m"
    [ "$(awk -v a="${s%% *}" -v b="${best_single%% *}" 'BEGIN { print (a > b) }')" = 1 ] && best_single=$s
    [ "$(awk -v a="${m%% *}" -v b="${best_multi%% *}" 'BEGIN { print (a > b) }')" = 1 ] && best_multi=$m
done
read -r sb sp50 sp99 _ <<<"$best_single"
read -r mb mp50 mp99 mpart <<<"$best_multi"
printf '\n%d objects of %d MiB, -c %d, best of %d rounds each\n' "$N" "$SIZE_MIB" "$C" "$ROUNDS"
printf '| form | MiB/s | object p50 (ms) | object p99 (ms) | part p50 (ms) |\n|---|---:|---:|---:|---:|\n'
printf '| single PUT (reference) | %.1f | %.1f | %.1f | – |\n' "$(awk -v b="$sb" 'BEGIN { print b / 1048576 }')" "$sp50" "$sp99"
printf '| multipart, %d MiB parts | %.1f | %.1f | %.1f | %.1f |\n' "$PART_MIB" "$(awk -v b="$mb" 'BEGIN { print b / 1048576 }')" \
    "$mp50" "$mp99" "$mpart"
printf '\nmultipart / single throughput: %.2fx\n' "$(awk -v m="$mb" -v s="$sb" 'BEGIN { print m / s }')"
