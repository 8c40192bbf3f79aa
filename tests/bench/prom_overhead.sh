#!/usr/bin/env bash
# Load throughput with /metrics scraped every second against the same run without an exporter:
# prints both req/s figures and the ratio (with / without). Same nginx, object, threads and connections.
# Usage: tests/bench/prom_overhead.sh [SECONDS]; BENCH_ROUNDS alternating rounds, best of each kept.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
SECS=${1:-${BENCH_SECONDS:-5}}
ROUNDS=${BENCH_ROUNDS:-3}
chmod 755 "$T"
PORT=$(free_port)
mkdir -p "$T/www/d"
for i in $(seq 0 99); do head -c 4096 /dev/urandom >"$T/www/d/$(printf 'obj-%08d' "$i")"; done
nginx_start web "server { listen 127.0.0.1:$PORT backlog=4096; root $T/www; }"
wait_port "$PORT"

run() { # NAME EXTRA_ARGS...
    local name=$1; shift
    "$RB" load get "http://127.0.0.1:$PORT/d" --objects 100 -c 16 --duration "${SECS}s" --out "$T/$name" --quiet "$@" >/dev/null
    jq -r '.summary.ops[0] | if .errors.total > 0 then error("errors") else .ops_per_s end' "$T/$name/result.json"
}
scraped() { # one run with a scrape every second, bounded by the run's length
    local p; p=$(free_port)
    "$RB" load get "http://127.0.0.1:$PORT/d" --objects 100 -c 16 --duration "${SECS}s" --out "$T/with$1" --quiet \
        --prom-listen "$p" >/dev/null &
    local pid=$! n=0
    while kill -0 "$pid" 2>/dev/null && [ $n -lt $((SECS + 5)) ]; do
        curl -s -o /dev/null "http://127.0.0.1:$p/metrics" || true
        sleep 1; n=$((n + 1))
    done
    wait "$pid"
    jq -r '.summary.ops[0].ops_per_s' "$T/with$1/result.json"
}
best_without=0; best_with=0
for i in $(seq "$ROUNDS"); do
    x=$(run "without$i"); best_without=$(awk -v a="$best_without" -v b="$x" 'BEGIN { print (b > a) ? b : a }')
    x=$(scraped "$i"); best_with=$(awk -v a="$best_with" -v b="$x" 'BEGIN { print (b > a) ? b : a }')
done
awk -v a="$best_without" -v b="$best_with" 'BEGIN {
    printf "%-28s %12.0f req/s\n%-28s %12.0f req/s\nratio (scraped / not): %.3f\n", "without exporter", a, "scraped every second", b, b / a }'
