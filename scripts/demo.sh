#!/usr/bin/env bash
# make demo: runs railbench's main jobs against local servers and ends with the storage tiers table.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
RB=$here/build/railbench
out=railbench-results/demo-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none

echo "== host counters under mpirun -np 2 (3 s)"
mpirun --oversubscribe -np 2 "$RB" fabric counters --duration 3s --out "$out/counters" --quiet >/dev/null
cat "$out/counters/table.md"
echo

# Two nginx servers on free loopback ports: an origin limited to 8 MiB/s per connection, standing in for a
# remote object store, and a proxy_cache tier in front of it that says HIT or MISS in X-Cache-Status.
srv=$(mktemp -d /tmp/railbench-demo.XXXXXX)
nginx_pid=
stop_servers() {
    if [ -n "$nginx_pid" ]; then
        kill "$nginx_pid" 2>/dev/null || true
        wait "$nginx_pid" 2>/dev/null || true
    fi
    rm -rf "$srv"
}
trap stop_servers EXIT
free_port() { python3 "$here/scripts/free-port.py"; }
origin_port=$(free_port)
tier_port=$(free_port)
mkdir -p "$srv/origin/data" "$srv/cache" "$srv/logs" "$srv/tmp"
# Started as root, nginx switches its workers to nobody unless told to stay the invoking user.
nginx_user=
[ "$(id -u)" -ne 0 ] || nginx_user="user $(id -un) $(id -gn);"
cat >"$srv/nginx.conf" <<CONF
$nginx_user
worker_processes 1;
pid $srv/nginx.pid;
error_log $srv/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $srv/tmp/body;
    proxy_temp_path $srv/tmp/proxy;
    fastcgi_temp_path $srv/tmp/fastcgi;
    uwsgi_temp_path $srv/tmp/uwsgi;
    scgi_temp_path $srv/tmp/scgi;
    keepalive_requests 1000000;
    proxy_cache_path $srv/cache levels=1:2 keys_zone=tier:10m max_size=2g inactive=1h use_temp_path=off;
    server {
        listen 127.0.0.1:$origin_port;
        root $srv/origin;
        location /data/ { dav_methods PUT; create_full_put_path on; client_max_body_size 0; limit_rate 8m; }
    }
    server {
        listen 127.0.0.1:$tier_port;
        location /data/ {
            proxy_pass http://127.0.0.1:$origin_port;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache tier;
            proxy_cache_valid 200 1h;
            proxy_cache_lock on;
            add_header X-Cache-Status \$upstream_cache_status;
        }
    }
}
CONF
nginx -p "$srv" -c "$srv/nginx.conf" -g 'daemon off;' &
nginx_pid=$!
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$tier_port") 2>/dev/null && (exec 3<>"/dev/tcp/127.0.0.1/$origin_port") 2>/dev/null && break
    sleep 0.1
done

echo "== storage tiers under mpirun -np 2: origin (8 MiB/s per connection) vs nginx caching tier"
mpirun --oversubscribe -np 2 "$RB" load tiers --backend "http://127.0.0.1:$origin_port/data" \
    --tier "http://127.0.0.1:$tier_port/data" --sizes 1MiB,10MiB --objects 16 -c 4 --warm-epochs 2 \
    --out "$out/tiers" --quiet >/dev/null
cat "$out/tiers/table.md"
echo
# ---- S3 block: a real object store. Ceph RGW and an nginx caching tier in front of it, started by
# scripts/servers.sh (the tier passes Host unchanged, so the SigV4 signature the client made still verifies).
s3_state=$srv/s3-servers
stop_s3() { RB_SERVERS_DIR=$s3_state "$here/scripts/servers.sh" down >/dev/null 2>&1 || true; }
trap 'stop_s3; stop_servers' EXIT
echo "== S3 on Ceph RGW under mpirun -np 2: direct vs cold and warm through an nginx caching tier (SigV4, verified)"
if ! s3_env=$(RB_SERVERS_DIR=$s3_state "$here/scripts/servers.sh" up 2>"$out/s3-servers.err"); then
    echo "demo: the local Ceph RGW did not start: $(tail -n 1 "$out/s3-servers.err")" >&2
    exit 3
fi
eval "$s3_env"
mpirun --oversubscribe -np 2 "$RB" load tiers --backend s3://bench --backend-endpoint "$RGW_ENDPOINT" \
    --tier s3://bench --tier-endpoint "$S3_TIER_ENDPOINT" --sizes 1MiB --objects 32 -c 4 --fresh --verify \
    --out "$out/s3-tiers" --quiet >/dev/null
cat "$out/s3-tiers/table.md"
echo
stop_s3
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
# ---- end of the S3 block

# Last: one report over every run above (a directory of runs stands for all of them).
echo "== railbench report over everything the demo ran"
"$RB" report "$out" -o "$out/report.md" --html "$out/report.html" --quiet
cat "$out/report.md"
echo "results: $out"
echo "HTML report: $out/report.html"
