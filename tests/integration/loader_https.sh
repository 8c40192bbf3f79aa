#!/usr/bin/env bash
# needs: -
# railbench load over HTTPS against nginx with a self-signed certificate made here, on both engines: refused
# without --insecure (exit 3, the certificate named), and with it the same counts and bytes on curl and native,
# --insecure recorded in the result, and the native engine's handshakes resumed on new connections.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T"
self_signed_cert
PORT=$(free_port)
W=$T/www
mkdir -p "$W/d" "$W/dav"
chmod 777 "$W/dav"
for i in $(seq 0 19); do head -c 1024 /dev/urandom >"$W/d/obj-$(printf %08d "$i")"; done
# keepalive_requests 10: connections end every 10 requests, so new ones resume the TLS session.
# Each request's connection serial number and whether its TLS session was resumed ("r"), for the handshake counts.
# TLS 1.3 (nginx 1.22 offers only 1.2 unless told); a second server on TLS 1.2 alone for its session resumption.
PORT12=$(free_port)
nginx_start web "log_format tls '\$connection \$ssl_session_reused \$ssl_protocol';
    server { listen 127.0.0.1:$PORT12 ssl; root $W; keepalive_requests 10; access_log $T/tls12.log tls;
    ssl_certificate $T/cert.pem; ssl_certificate_key $T/key.pem; ssl_session_cache shared:tls12:1m; ssl_protocols TLSv1.2; }
    server { listen 127.0.0.1:$PORT ssl; root $W; keepalive_requests 10; access_log $T/tls.log tls;
    ssl_certificate $T/cert.pem; ssl_certificate_key $T/key.pem; ssl_session_cache shared:tls:1m; ssl_protocols TLSv1.3;
    location /d/ { autoindex on; autoindex_format json; }
    location /dav/ { dav_methods PUT DELETE; create_full_put_path on; client_max_body_size 0; } }"
wait_port "$PORT"
URL=https://127.0.0.1:$PORT
counts() { jq -c '.summary.ops[0] | [.requests, .bytes, .errors]' "$T/$1/result.json"; }

# 1. Not verified: the run is refused before it starts, on either engine.
for e in curl native; do
    assert_exit 3 "self-signed certificate on $e" "$RB" load get "$URL/d" --objects 20 --count 10 --engine "$e" --out "$T/no-$e"
    grep -qi 'certificate' "$T/stderr" || { cat "$T/stderr"; fail "$e: no line about the certificate"; }
done

# 2. --insecure: GET and PUT on both engines, equal counts and bytes; the option is in the result's config.
for e in curl native; do
    : >"$T/tls.log"
    "$RB" load get "$URL/d" --insecure --objects 20 --size 1k --count 200 -c 4 --engine "$e" --out "$T/g-$e" \
        2>"$T/g-$e.err" >/dev/null
    cp "$T/tls.log" "$T/tls-$e.log"
    "$RB" load put "$URL/dav/$e" --insecure --objects 50 --size 4k -c 4 --keep --engine "$e" --out "$T/p-$e" \
        --quiet >/dev/null
    assert_eq "$e: engine" "$e" "$(jq -r .summary.engine "$T/g-$e/result.json")"
done
# 2b. Listings over TLS (the autoindex page) on each engine: refused without --insecure, 20 names with it.
for e in curl native; do
    assert_exit 3 "listing, self-signed certificate on $e" "$RB" load list "$URL/d" --engine "$e" --out "$T/lno-$e"
    grep -qi 'certificate' "$T/stderr" || { cat "$T/stderr"; fail "$e: listing: no line about the certificate"; }
    "$RB" load list "$URL/d" --insecure --count 2 --engine "$e" --out "$T/l-$e" --quiet >/dev/null
    assert_eq "list over TLS ($e): listings, pages, names, errors" '[2,2,40,0]' \
        "$(jq -c '.summary.ops[0] | [.listings, .pages, .names, .errors.total]' "$T/l-$e/result.json")"
done
assert_eq "GET: curl's counts = native's" "$(counts g-curl)" "$(counts g-native)"
assert_eq "GET: bytes" 204800 "$(jq '.summary.ops[0].bytes' "$T/g-native/result.json")"
assert_eq "PUT: curl's counts = native's" "$(counts p-curl)" "$(counts p-native)"
assert_eq "PUT: files written by native" 50 "$(find "$W/dav/native" -type f -size 4k | wc -l)"
# 2c. What the native engine writes over TLS is the payload, byte for byte: a head goes out with its body's start in
# one SSL_write (one record), and 300 KiB bodies run past the worker's 256 KiB buffer into further writes and
# records; libcurl reads them back and verifies every byte.
for sz in 4k 300k; do
    "$RB" load put "$URL/dav/v$sz" --insecure --objects 6 --size "$sz" -c 3 --keep --engine native --out "$T/pv-$sz" \
        --quiet >/dev/null
    "$RB" load get "$URL/dav/v$sz" --insecure --objects 6 --size "$sz" --count 12 -c 3 --verify --engine curl \
        --out "$T/gv-$sz" --quiet >/dev/null
    assert_eq "native PUT of $sz over TLS read back by libcurl: requests, bytes, errors" \
        "[12,$((12 * $(numfmt --from=iec "${sz^^}"))),0]" \
        "$(jq -c '.summary.ops[0] | [.requests, .bytes, .errors.total]' "$T/gv-$sz/result.json")"
done
assert_jq "$T/g-native/result.json" '.config.insecure == true' "--insecure recorded in config"
"$RB" load get "$URL/d" --insecure --objects 20 --count 20 --out "$T/auto" --quiet >/dev/null
assert_eq "auto picks native for https" native "$(jq -r .summary.engine "$T/auto/result.json")"
# The handshakes in result.json (native): one per connection nginx served, resumed as nginx saw them resumed; the
# handshake times (from the connect) are apart from the requests'; libcurl's are not measured apart (null).
conns=$(awk '{print $1}' "$T/tls-native.log" | sort -u | wc -l)
reused=$(awk '$2 == "r" {print $1}' "$T/tls-native.log" | sort -u | wc -l)
assert_eq "tls.handshakes = connections nginx served" "$conns" "$(jq '.summary.ops[0].tls.handshakes' "$T/g-native/result.json")"
assert_eq "tls.resumed = connections nginx resumed" "$reused" "$(jq '.summary.ops[0].tls.resumed' "$T/g-native/result.json")"
assert_jq "$T/g-native/result.json" '.summary.ops[0].tls | .handshakes >= 20 and .resumed >= .handshakes - 4
    and .handshake_ns.min > 0 and .handshake_ns.p50 >= .handshake_ns.min and .handshake_ns.max >= .handshake_ns.p50' \
    "tls: 20 or more handshakes, resumed, timed"
assert_jq "$T/g-curl/result.json" '.summary.ops[0] | has("tls") and .tls == null' "tls on libcurl: null (not measured)"
# 200 GETs on 4 connections of 10 requests each: about 20 handshakes, all but the first per slot resumed.
line=$(grep 'TLS (native engine' "$T/g-native.err" || true)
[ -n "$line" ] || { cat "$T/g-native.err"; fail "no TLS figures from the native engine"; }
hs=$(sed -E 's/.*: ([0-9]+) handshakes, ([0-9]+) resumed.*/\1/' <<<"$line")
res=$(sed -E 's/.*: ([0-9]+) handshakes, ([0-9]+) resumed.*/\2/' <<<"$line")
if [ "$hs" -lt 20 ] || [ "$res" -lt $((hs - 4)) ]; then
    fail "handshakes $hs, resumed $res: expected >= 20 and all but 4 resumed"
fi
ok "native TLS: $hs handshakes, $res resumed"
assert_eq "TLS 1.3 negotiated" TLSv1.3 "$(awk '{print $3}' "$T/tls-native.log" | sort -u)"
# 2d. The same GETs on TLS 1.2 (a session cache, resumed by session id or ticket): as many resumed as nginx saw.
"$RB" load get "https://127.0.0.1:$PORT12/d" --insecure --objects 20 --size 1k --count 200 -c 4 --engine native \
    --out "$T/g12" --quiet >/dev/null
assert_eq "TLS 1.2: protocol, handshakes, resumed as nginx saw them" \
    "TLSv1.2 $(awk '{print $1}' "$T/tls12.log" | sort -u | wc -l) $(awk '$2 == "r" {print $1}' "$T/tls12.log" | sort -u | wc -l)" \
    "$(awk '{print $3}' "$T/tls12.log" | sort -u) $(jq -r '.summary.ops[0].tls | "\(.handshakes) \(.resumed)"' "$T/g12/result.json")"
assert_jq "$T/g12/result.json" '.summary.ops[0] | .bytes == 204800 and .tls.handshakes >= 20
    and .tls.resumed >= .tls.handshakes - 4' "TLS 1.2: all bytes, 20 or more handshakes, all but 4 resumed"

# 3. load mixed over TLS on both engines (one request in flight per thread: the same draws): the same requests, bytes
#    and error classes per op; what each run wrote is deleted.
for e in curl native; do
    "$RB" load mixed "$URL/dav/mix-$e" --insecure --objects 20 --size 2k -t 2 -c 1 --count 200 --engine "$e" \
        --out "$T/m-$e" --quiet >/dev/null 2>"$T/m-$e.err" || { cat "$T/m-$e.err"; fail "load mixed over https ($e)"; }
done
mrows() { jq -c '[.summary.ops[] | {op, requests, bytes, errors}]' "$T/$1/result.json"; }
assert_eq "mixed over https: curl's rows = native's" "$(mrows m-curl)" "$(mrows m-native)"
assert_jq "$T/m-native/result.json" '.summary.engine == "native" and .summary.total.requests == 200 and
    .summary.total.errors.total == 0 and (.summary.ops | length) == 4' "mixed over https: 200 requests of 4 ops, no error"
assert_eq "mixed over https: files left" 0 "$(find "$W/dav/mix-curl" "$W/dav/mix-native" -type f 2>/dev/null | wc -l)"
