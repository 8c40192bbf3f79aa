# Servers for the load tiers tests (source after lib.sh): a rate-limited nginx origin standing in for the
# remote backend, and an nginx proxy_cache tier in front of it that answers X-Cache-Status.
#
# tiers_servers ORIGIN_RATE: starts both on free ports; sets ORIGIN_PORT, TIER_PORT, BACKEND (the origin's
# /data/ URL, WebDAV PUT allowed), TIER (the tier's /data/, X-Cache-Status), TIER_XC (/xc/: the same cache
# status as X-Cache only), TIER_BOTH (/both/: X-Cache-Status plus an X-Cache that always says MISS),
# CACHE_DIR (the tier's proxy_cache_path) and ORIGIN_DIR (the files behind /data/).
tiers_servers() {
    local rate=$1
    ORIGIN_PORT=$(free_port)
    TIER_PORT=$(free_port)
    ORIGIN_DIR=$T/origin/data
    CACHE_DIR=$T/tier-cache
    mkdir -p "$ORIGIN_DIR" "$CACHE_DIR"
    # proxy_cache_lock: concurrent misses of one object wait for one fetch instead of racing to the origin.
    # proxy_cache_valid 200 1h: the origin sends no caching headers; keep what it answers 200 for an hour.
    nginx_start tiers "
    proxy_cache_path $CACHE_DIR levels=1:2 keys_zone=tier:10m max_size=2g inactive=1h use_temp_path=off;
    server {
        listen 127.0.0.1:$ORIGIN_PORT;
        root $T/origin;
        location /data/ { dav_methods PUT DELETE; create_full_put_path on; client_max_body_size 0;
                          limit_rate $rate; autoindex on; autoindex_format json; }
    }
    server {
        listen 127.0.0.1:$TIER_PORT;
        proxy_http_version 1.1;
        proxy_set_header Connection \"\";
        proxy_cache tier;
        proxy_cache_valid 200 1h;
        proxy_cache_lock on;
        location /data/ { proxy_pass http://127.0.0.1:$ORIGIN_PORT;
                          add_header X-Cache-Status \$upstream_cache_status; }
        location /xc/ { proxy_pass http://127.0.0.1:$ORIGIN_PORT/data/;
                        add_header X-Cache \$upstream_cache_status; }
        location /both/ { proxy_pass http://127.0.0.1:$ORIGIN_PORT/data/;
                          add_header X-Cache \"MISS from an upstream proxy\";
                          add_header X-Cache-Status \$upstream_cache_status; }
    }"
    wait_port "$ORIGIN_PORT"
    wait_port "$TIER_PORT"
    BACKEND=http://127.0.0.1:$ORIGIN_PORT/data
    TIER=http://127.0.0.1:$TIER_PORT/data
    TIER_XC=http://127.0.0.1:$TIER_PORT/xc
    TIER_BOTH=http://127.0.0.1:$TIER_PORT/both
}

# row FILE SIZE HOW FIELD: one field of the summary row (size_bytes, how).
row() { jq -r --argjson s "$2" --arg h "$3" ".summary.tiers_rows[] | select(.size_bytes == \$s and .how == \$h) | .$4" "$1"; }

