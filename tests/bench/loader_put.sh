#!/usr/bin/env bash
# load put through the native engine against libcurl, alternating, on one nginx: a sink that discards the body
# (the client's own cost) and WebDAV writing every object to disk (a real store). Prints req/s and native / curl.
# Usage: tests/bench/loader_put.sh [SECONDS]   BENCH_ROUNDS (default 3) alternating rounds, best of each kept.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
SECS=${1:-${BENCH_SECONDS:-2}}
ROUNDS=${BENCH_ROUNDS:-3}
chmod 755 "$T"
mkdir -p "$T/www/dav" && chmod 777 "$T/www/dav"
PORT=$(free_port)
nginx_start web "server {
        listen 127.0.0.1:$PORT;
        root $T/www;
        client_max_body_size 0;
        location /sink/ { return 201; }
        location /dav/ { dav_methods PUT; create_full_put_path on; client_body_buffer_size 2m; }
    }"
wait_port "$PORT"
rps() { # ENGINE LOCATION SIZE: best-effort req/s of one run (more objects than the run can put)
    "$RB" load put "http://127.0.0.1:$PORT/$2/$3" --objects 1000000 --size "$3" --engine "$1" -c 16 \
        --duration "${SECS}s" --out "$T/r" --force --quiet >/dev/null
    jq -r '.summary.ops[0] | if .errors.total > 0 then error("railbench saw errors") else .ops_per_s end' "$T/r/result.json"
}
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (b > a) ? b : a }'; }
printf '| server | size | curl req/s | native req/s | native / curl |\n|---|---|---:|---:|---:|\n'
for loc in sink dav; do
    for size in 1KiB 1MiB; do
        c=0 n=0
        for _ in $(seq "$ROUNDS"); do
            c=$(best "$c" "$(rps curl "$loc" "$size")")
            n=$(best "$n" "$(rps native "$loc" "$size")")
        done
        awk -v l="$loc" -v s="$size" -v c="$c" -v n="$n" 'BEGIN { printf "| %s | %s | %.0f | %.0f | %.2f |\n", l, s, c, n, n / c }'
    done
done
echo "1 thread x 16 in flight, best of $ROUNDS alternating ${SECS}s runs, nginx 1 worker; load average $(cut -d' ' -f1-3 /proc/loadavg)"
