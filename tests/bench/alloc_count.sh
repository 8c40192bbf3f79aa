#!/usr/bin/env bash
# Allocations per request in steady state: railbench load get under an LD_PRELOAD shim that counts
# malloc/calloc/realloc/posix_memalign calls on threads other than the main one (the workers, and
# MPI's helpers), run for N1 and N2 requests on the same nginx; the
# difference divided by N2 - N1 is what each further request allocates (start-up and teardown cancel).
# The interval is 1h by default: each tick allocates on the main thread (JSON lines, progress) whatever the
# engine, and a longer run has more ticks; ALLOC_INTERVAL=1s shows that cost too.
# Usage: tests/bench/alloc_count.sh [ENGINE...]   (default: curl native; N2 - N1 = 100,000 requests)
# ALLOC_OP=put counts load put of 1 KiB objects instead (to an nginx location that answers 201 and discards them).
# ALLOC_PROTO=https reads the same objects from nginx over TLS (a self-signed certificate, --insecure), TLS 1.3
# unless ALLOC_TLS=1.2 (nginx 1.22 offers only 1.2 unless told; OpenSSL 3.0 allocates per record, more on 1.3);
# ALLOC_PROTO=s3 reads 100 objects of 1 KiB from Ceph RGW, every GET signed with SigV4 (GET only).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
ENGINES=("${@:-curl native}")
read -r -a ENGINES <<<"${ENGINES[*]}"
N1=${ALLOC_N1:-1000}
N2=${ALLOC_N2:-101000}
chmod 755 "$T"
cc -O2 -shared -fPIC -o "$T/shim.so" "$ROOT/tests/alloc_shim.c"
PORT=$(free_port)
mkdir -p "$T/www/1k"
for i in $(seq 0 99); do head -c 1024 /dev/urandom >"$T/www/1k/obj-$(printf %08d "$i")"; done
self_signed_cert
SPORT=$(free_port)
nginx_start web "server { listen 127.0.0.1:$PORT; root $T/www; keepalive_requests 1000000;
    location /sink/ { return 201; } }
    server { listen 127.0.0.1:$SPORT ssl; root $T/www; keepalive_requests 1000000; ssl_certificate $T/cert.pem;
    ssl_protocols TLSv${ALLOC_TLS:-1.3};
    ssl_certificate_key $T/key.pem; location /sink/ { return 201; } }"
wait_port "$PORT"
BASE=http://127.0.0.1:$PORT TLS=()
[ "${ALLOC_PROTO:-http}" != https ] || { BASE=https://127.0.0.1:$SPORT; TLS=(--insecure); }
# GET: 100 objects read N times; PUT: N objects written once each (a put goes through its set once).
if [ "${ALLOC_OP:-get}" = put ]; then OP=(put "$BASE/sink" "${TLS[@]}" --size 1KiB --objects); else
    OP=(get "$BASE/1k" "${TLS[@]}" --objects 100 --count); fi
if [ "${ALLOC_PROTO:-http}" = s3 ]; then
    rgw_up
    rgw_bucket alloc
    "$RB" load put s3://alloc/1k/ --endpoint "$RGW_ENDPOINT" --keep --objects 100 --size 1k -c 8 --out "$T/put" --quiet >/dev/null
    OP=(get s3://alloc/1k/ --endpoint "$RGW_ENDPOINT" --objects 100 --size 1k --count)
fi
count() { # ENGINE REQUESTS -> allocations
    ALLOC_COUNT_OUT=$T/n LD_PRELOAD=$T/shim.so "$RB" load "${OP[@]}" "$2" \
        --engine "$1" -c 16 --interval "${ALLOC_INTERVAL:-1h}" --out "$T/r-$1-$2" --quiet >/dev/null
    local errs; errs=$(jq '.summary.ops[0].errors.total' "$T/r-$1-$2/result.json")
    [ "$errs" = 0 ] || fail "$1: $errs errors"
    cat "$T/n"
}
printf '%-8s %12s %12s %14s\n' engine "allocs@$N1" "allocs@$N2" "per request"
for e in "${ENGINES[@]}"; do
    a=$(count "$e" "$N1"); b=$(count "$e" "$N2")
    awk -v e="$e" -v a="$a" -v b="$b" -v d=$((N2 - N1)) 'BEGIN { printf "%-8s %12d %12d %14.3f\n", e, a, b, (b - a) / d }'
done
