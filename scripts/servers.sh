#!/usr/bin/env bash
# The local servers the demo and the tests use, for trying railbench by hand: an nginx origin (GET, WebDAV
# PUT), an nginx caching tier in front of it, Ceph RGW (S3, bucket "bench") and an nginx caching tier in
# front of RGW. All listen on free ports on 127.0.0.1.
#
#   scripts/servers.sh up       starts them; prints their URLs and keys as `export` lines, so
#                               eval "$(scripts/servers.sh up)" sets them in your shell
#   scripts/servers.sh env      prints those lines again
#   scripts/servers.sh status   which of the processes are alive
#   scripts/servers.sh down     stops them by PID and removes their files
#
# State lives in build/servers/ (RB_SERVERS_DIR overrides): the export lines (mode 600: they hold the S3
# secret), the PIDs and names of the processes started, and the servers' working directory.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
state=${RB_SERVERS_DIR:-$here/build/servers}

die() { echo "servers.sh: $1" >&2; exit "${2:-3}"; }
# running PID: PID exists and has not exited (a server whose parent, this script's up, has ended stays a zombie,
# state Z, once it exits, until PID 1 collects it: seconds on some machines).
running() { kill -0 "$1" 2>/dev/null && ! grep -qs '^State:[[:space:]]*[ZX]' "/proc/$1/status"; }

# alive_all: every recorded process is running.
alive_all() {
    local pid _name
    while read -r pid _name; do running "$pid" || return 1; done <"$state/pids"
}

status() {
    [ -f "$state/pids" ] || { echo "servers.sh: not up (scripts/servers.sh up starts them)"; return 3; }
    local pid name rc=0
    while read -r pid name; do
        if running "$pid"; then echo "up    $name (pid $pid)"; else echo "DOWN  $name (pid $pid)"; rc=1; fi
    done <"$state/pids"
    grep -E '^export (ORIGIN|TIER|RGW_ENDPOINT|S3_TIER_ENDPOINT)=' "$state/env" | sed 's/^export /      /'
    return $rc
}

down() {
    [ -f "$state/pids" ] || { echo "servers.sh: nothing to stop"; return 0; }
    local pid name pids=() rgw_dir
    rgw_dir=$(sed -n 's/^export RGW_DIR=//p' "$state/env" 2>/dev/null || true)
    while read -r pid name; do [ "$name" = rgw ] || pids+=("$pid"); done <"$state/pids"
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do running "$pid" || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    # RGW's own script stops its three daemons by the PIDs it recorded.
    [ -z "$rgw_dir" ] || [ ! -d "$rgw_dir" ] || "$here/tests/servers/rgw.sh" stop "$rgw_dir"
    local work; work=$(cat "$state/workdir" 2>/dev/null || true)
    [ -z "$work" ] || rm -rf "$work"
    rm -rf "$state"
    echo "servers.sh: stopped"
}

up() {
    if [ -f "$state/pids" ]; then
        alive_all || die "some servers from an earlier 'up' are down (scripts/servers.sh status; down, then up)"
        cat "$state/env"
        return 0
    fi
    mkdir -p "$state"
    # The test helpers start nginx and RGW exactly as the tests do; their EXIT trap stops what was started
    # if anything below fails, and is dropped once everything is up.
    # shellcheck source=tests/lib.sh
    . "$here/tests/lib.sh"
    # shellcheck source=tests/tiers_servers.sh
    . "$here/tests/tiers_servers.sh"
    echo "$T" >"$state/workdir"
    # The servers' own output goes to a log, not to whoever reads ours (a pipe would never see EOF).
    tiers_servers 0 >>"$T/servers.log" 2>&1
    local origin_pid=$NGINX_PID
    rgw_up >/dev/null
    rgw_bucket bench
    local s3_tier_port; s3_tier_port=$(free_port)
    mkdir -p "$T/s3-tier-cache"
    chmod 777 "$T/s3-tier-cache"
    # The tier passes Host unchanged: the client signed it (SigV4), and RGW checks the signature against the
    # Host it receives. Authorization and x-amz-* headers pass as they are.
    nginx_start s3tier "
    proxy_cache_path $T/s3-tier-cache levels=1:2 keys_zone=s3tier:10m max_size=4g inactive=1h use_temp_path=off;
    upstream rgw { server 127.0.0.1:$RGW_PORT; keepalive 64; }
    server {
        listen 127.0.0.1:$s3_tier_port;
        client_max_body_size 0;
        proxy_http_version 1.1;
        proxy_set_header Connection \"\";
        proxy_set_header Host \$http_host;
        proxy_request_buffering off;
        location / { proxy_pass http://rgw; proxy_cache s3tier; proxy_cache_valid 200 1h; proxy_cache_lock on;
                     add_header X-Cache-Status \$upstream_cache_status; }
    }" >>"$T/servers.log" 2>&1
    local s3_tier_pid=$NGINX_PID
    wait_port "$s3_tier_port"
    {
        echo "$origin_pid nginx-origin-and-tier"
        for p in $RGW_PIDS; do echo "$p rgw"; done
        echo "$s3_tier_pid nginx-s3-tier"
    } >"$state/pids"
    umask 077
    cat >"$state/env" <<EOF
# nginx origin: GET, WebDAV PUT and DELETE under /data/
export ORIGIN=$BACKEND
# nginx caching tier in front of ORIGIN (X-Cache-Status: MISS, then HIT)
export TIER=$TIER
# Ceph RGW (S3, SigV4), bucket "bench"; virtual-host style: --endpoint \$RGW_VHOST_ENDPOINT --virtual-host
export RGW_ENDPOINT=$RGW_ENDPOINT
export RGW_VHOST_ENDPOINT=$RGW_VHOST_ENDPOINT
export RGW_DIR=${RGW_DIR:?}
# nginx caching tier in front of RGW (Host passed unchanged, so signed requests verify; X-Cache-Status)
export S3_TIER_ENDPOINT=http://127.0.0.1:$s3_tier_port
export AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID
export AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY
EOF
    trap - EXIT
    cat "$state/env"
}

case ${1:-} in
up) up ;;
env) [ -f "$state/env" ] || die "not up (scripts/servers.sh up starts them)"; cat "$state/env" ;;
status) status ;;
down) down ;;
*) die "usage: scripts/servers.sh up|env|status|down" 2 ;;
esac
