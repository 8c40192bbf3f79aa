#!/usr/bin/env bash
# railbench load get against wrk on the same nginx, same object, threads and connections: prints req/s and
# bytes/s ratios (railbench / wrk) for 1 KiB, 1 MiB and 10 MiB, and req/s at 16 and 1,024 in flight.
# Usage: tests/bench/loader_vs_wrk.sh [SECONDS]   (railbench records histograms as always)
# BENCH_ENGINE=curl|native|auto (default auto: native for these plain http:// GETs) picks railbench's engine.
# BENCH_ROWS picks rows as SIZE/INFLIGHT (default "1k/16 1m/16 10m/16 1k/1024"; "1k/16 1k/1024" for the
# in-flight scaling alone); with both 1 KiB rows it prints railbench@1024 / railbench@16 and, as the server's
# own reference on the same nginx, wrk@1024 / wrk@16. BENCH_RB=PATH runs another railbench build.
# Each row alternates the two tools ROUNDS times and keeps each one's best run: on a shared machine the
# best of a few short runs is the figure least disturbed by other load.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
SECS=${1:-${BENCH_SECONDS:-3}}
THREADS=${BENCH_THREADS:-1}
ROUNDS=${BENCH_ROUNDS:-3}
ENGINE=${BENCH_ENGINE:-auto}
ROWS=${BENCH_ROWS:-1k/16 1m/16 10m/16 1k/1024}
RB=${BENCH_RB:-$RB}
chmod 755 "$T"
PORT=$(free_port)
mkdir -p "$T/www/1k" "$T/www/1m" "$T/www/10m"
head -c 1024 /dev/urandom >"$T/www/1k/obj-00000000"
head -c $((1024 * 1024)) /dev/urandom >"$T/www/1m/obj-00000000"
head -c $((10 * 1024 * 1024)) /dev/urandom >"$T/www/10m/obj-00000000"
nginx_start web "server { listen 127.0.0.1:$PORT backlog=4096; root $T/www; sendfile on; tcp_nopush on; }"
wait_port "$PORT"
ulimit -n 65536 2>/dev/null || true

# wrk prints "Requests/sec: N"; its Transfer/sec counts headers too, so bytes/s is req/s x object size for both.
wrk_rps() { wrk -t "$THREADS" -c "$2" -d "${SECS}s" "http://127.0.0.1:$PORT/$1/obj-00000000" | awk '/^Requests\/sec:/ { print $2 }'; }
rb_rps() {
    "$RB" load get "http://127.0.0.1:$PORT/$1" --objects 1 --engine "$ENGINE" -t "$THREADS" -c "$2" --duration "${SECS}s" --out "$T/r-$1-$2" --force \
        --quiet >/dev/null
    jq -r '.summary.ops[0] | if .errors.total > 0 then error("railbench saw errors") else .ops_per_s end' "$T/r-$1-$2/result.json"
}

printf '%-8s %9s %12s %12s %8s %14s %14s %8s\n' size inflight "wrk req/s" "rb req/s" ratio "wrk MiB/s" "rb MiB/s" ratio
RB16='' WRK16='' # both tools' 1 KiB rates at 16 in flight, for the 1,024 row's own-rate ratios
row() { # DIR BYTES INFLIGHT
    local w=0 r=0 x i
    for i in $(seq "$ROUNDS"); do
        x=$(wrk_rps "$1" "$3"); w=$(awk -v a="$w" -v b="$x" 'BEGIN { print (b > a) ? b : a }')
        x=$(rb_rps "$1" "$3"); r=$(awk -v a="$r" -v b="$x" 'BEGIN { print (b > a) ? b : a }')
    done
    awk -v s="$1" -v b="$2" -v c="$3" -v w="$w" -v r="$r" 'BEGIN {
        printf "%-8s %9d %12.0f %12.0f %8.3f %14.1f %14.1f %8.3f\n", s, c, w, r, r / w, w * b / 1048576, r * b / 1048576, r / w }'
    [ "$1/$3" != 1k/16 ] || { RB16=$r; WRK16=$w; }
    [ "$1/$3" != 1k/1024 ] || [ -z "$RB16" ] || awk -v r="$r" -v r16="$RB16" -v w="$w" -v w16="$WRK16" 'BEGIN {
        printf "railbench 1,024 in flight / its own 16 in flight: %.3f (wrk on the same nginx: %.3f)\n", r / r16, w / w16 }'
}
declare -A BYTES=([1k]=1024 [1m]=1048576 [10m]=10485760)
for rc in $ROWS; do row "${rc%/*}" "${BYTES[${rc%/*}]}" "${rc#*/}"; done
echo "engine $ENGINE, threads $THREADS, best of $ROUNDS alternating ${SECS}s runs, nginx 1 worker, one object per size; ratio = railbench / wrk"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
