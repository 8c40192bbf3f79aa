#!/usr/bin/env bash
# Large PUTs to Ceph RGW: whole objects (one PUT each, the reference) against multipart uploads of the same
# objects (parts in parallel on the same -c slots), in one run: throughput, object p50/p99, part p50, the ratio;
# and the multipart upload on each engine (--engine native, the default, against --engine curl) in the same
# rounds: client CPU seconds per part and throughput, native / curl per round, min / median / max.
# Usage: tests/bench/s3_multipart.sh   (BENCH_SIZE_MIB, BENCH_PART_MIB, BENCH_OBJECTS, BENCH_INFLIGHT, BENCH_ROUNDS)
# Each form runs ROUNDS times, alternating, and keeps its best run (the least disturbed on a shared machine);
# every run deletes what it wrote (cleanup), but RGW frees the tails of large objects only at its garbage
# collection (hours), so the defaults stay small: ROUNDS x 3 x N x SIZE must fit the 4 GiB memory store.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
SIZE_MIB=${BENCH_SIZE_MIB:-32}
PART_MIB=${BENCH_PART_MIB:-8}
N=${BENCH_OBJECTS:-8}
C=${BENCH_INFLIGHT:-8}
ROUNDS=${BENCH_ROUNDS:-3}
rgw_up
rgw_bucket bench

TIMEFORMAT='%U %S'
# put_run NAME ARGS...: prints bytes_per_s p50_ms p99_ms part_p50_ms (- without parts); fails on any error.
# The client's user+system seconds go to $T/NAME.cpu.
put_run() {
    local d=$T/$1; shift
    { time "$RB" load put s3://bench/mp/ --endpoint "$RGW_ENDPOINT" --objects "$N" --size "${SIZE_MIB}MiB" -c "$C" \
        "$@" --out "$d" --quiet >/dev/null 2>"$d.err" || { cat "$d.err" >&2; fail "$d: railbench failed"; }; } \
        2>"$d.time"
    awk '{ print $1 + $2 }' "$d.time" >"$d.cpu"
    jq -r '.summary as $s | $s.ops[0] | if .errors.total > 0 or $s.cleanup.failed > 0 then error("errors")
        else "\(.throughput_bytes_per_s) \(.latency_ns.p50 / 1e6) \(.latency_ns.p99 / 1e6) \(
        if ($s.ops | length) > 1 then $s.ops[1].latency_ns.p50 / 1e6 else "-" end)" end' "$d/result.json"
}

best_single="0 0 0 -" best_multi="0 0 0 -" cpu_ratio=() rate_ratio=()
for r in $(seq "$ROUNDS"); do
    s=$(put_run "single-$r" --multipart-threshold "$((SIZE_MIB + 1))MiB")
    m=$(put_run "multi-$r" --part-size "${PART_MIB}MiB" --multipart-threshold "${PART_MIB}MiB")
    mc=$(put_run "multi-curl-$r" --part-size "${PART_MIB}MiB" --multipart-threshold "${PART_MIB}MiB" --engine curl)
    [ "$(jq -r .summary.engine "$T/multi-$r/result.json")" = native ] || fail "multipart did not run on the native engine"
    cpu_ratio+=("$(awk -v a="$(cat "$T/multi-$r.cpu")" -v b="$(cat "$T/multi-curl-$r.cpu")" 'BEGIN { printf "%.3f", a / b }')")
    rate_ratio+=("$(awk -v a="${m%% *}" -v b="${mc%% *}" 'BEGIN { printf "%.3f", a / b }')")
    echo "round $r: single $s | multipart $m ($(cat "$T/multi-$r.cpu") s CPU) | multipart on curl $mc ($(cat "$T/multi-curl-$r.cpu") s CPU)"
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
# stats R...: min / median / max of the numbers given.
stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f / %.2f / %.2f", v[1], v[int((NR + 1) / 2)], v[NR] }'; }
printf '\nmultipart, --engine native / --engine curl, the same objects and parts (%d rounds):\n' "$ROUNDS"
printf '  client CPU (the same parts, so CPU per part): %s\n' "$(stats "${cpu_ratio[@]}")"
printf '  throughput: %s\n' "$(stats "${rate_ratio[@]}")"
