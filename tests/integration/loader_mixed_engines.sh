#!/usr/bin/env bash
# needs: ceph
# load mixed on both request engines: the same mix on --engine curl and --engine native (and auto, which picks
# native) gives the same requests per op, bytes and error classes, against nginx WebDAV, Ceph RGW (s3://) and the
# AIStore stand-in (ais://, through the proxy's redirect). Each thread keeps one request in flight (-c 1), so its
# draws, and what each one finds live, are the same sequence on either engine.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T" # nginx's workers run as nobody
rgw_start # for section 5: its start-up runs beside sections 1-4
nginx_dav web "access_log $T/web/access.log;
        location /ro/ { dav_methods PUT; create_full_put_path on; }"
URL=http://127.0.0.1:$DAV_PORT
# rows RUN: per op, its requests, bytes and every error class, then the total's; what must match across engines.
rows() {
    jq -c '[.summary.ops[] | {op, requests, bytes, errors}] + [.summary.total | {requests, bytes, errors}]' \
        "$T/$1/result.json"
}
engine_of() { jq -r .summary.engine "$T/$1/result.json"; }
# same NAME ARGS...: runs load mixed ARGS on curl, native and auto (as NAME-curl, NAME-native, NAME-auto) and
# asserts equal rows; the exit status of each run is kept in $T/NAME-ENGINE.rc.
same() {
    local name=$1 e rc
    shift
    for e in curl native auto; do
        rc=0
        "$RB" load mixed "$@" --engine "$e" --out "$T/$name-$e" --quiet >/dev/null 2>"$T/$name-$e.err" || rc=$?
        echo "$rc" >"$T/$name-$e.rc"
        [ -s "$T/$name-$e/result.json" ] || { cat "$T/$name-$e.err"; fail "$name on $e wrote no result"; }
    done
    assert_eq "$name: engine of --engine native" native "$(engine_of "$name-native")"
    assert_eq "$name: engine of --engine curl" curl "$(engine_of "$name-curl")"
    assert_eq "$name: auto picks native" native "$(engine_of "$name-auto")"
    assert_eq "$name: per-op requests, bytes and error classes, curl = native" "$(rows "$name-curl")" \
        "$(rows "$name-native")"
    assert_eq "$name: native = auto" "$(rows "$name-native")" "$(rows "$name-auto")"
    assert_eq "$name: exit status, curl = native" "$(cat "$T/$name-curl.rc")" "$(cat "$T/$name-native.rc")"
}
op() { jq -c "[.summary.ops[] | select(.op == \"$2\")][0] | $3" "$T/$1/result.json"; }
dav_files() { curl -fsS "$URL/dav/$1/" | jq '[.[] | select(.type == "file")] | length'; }

# 1. http: warp's mix, 2 threads x 1 in flight, 600 requests over 40 objects; cleanup each time.
same h1 "$URL/dav/h1" --objects 40 --size 4k -t 2 -c 1 --count 600
assert_eq "h1: requests" 600 "$(jq .summary.total.requests "$T/h1-native/result.json")"
assert_eq "h1: errors" 0 "$(jq .summary.total.errors.total "$T/h1-native/result.json")"
assert_eq "h1: GET bytes (native)" $(($(op h1-native GET .requests) * 4096)) "$(op h1-native GET .bytes)"
assert_eq "h1: PUT bytes (native)" $(($(op h1-native PUT .requests) * 4096)) "$(op h1-native PUT .bytes)"
assert_jq "$T/h1-native/result.json" '[.summary.ops[].op] == ["GET", "PUT", "DELETE", "HEAD"] and
    ([.summary.ops[] | select(.op == "DELETE" or .op == "HEAD") | .requests] | min) > 0' "h1: every op drawn"
assert_eq "h1: files left after cleanup" 0 "$(dav_files h1)"
# nginx's log holds each engine's requests: the same number of each method (prepare, mix, cleanup).
for m in GET PUT DELETE HEAD; do
    c=$(grep -c "\"$m /dav/h1/rb-" "$T/web/access.log" || true)
    [ $((c % 3)) -eq 0 ] || fail "h1: $c $m requests in nginx's log is not 3 equal runs"
done
ok "h1: nginx logged the same requests per method for the three runs"

# 2. Error classes: a location that takes PUT but refuses DELETE (405): every DELETE of the mix is http_4xx and
#    leaves its object live, the cleanup fails too (exit 1); the same on both engines.
same e1 "$URL/ro/e1" --objects 12 --size 1k -c 1 --count 200 --mix get=30,put=20,delete=30,stat=20
assert_eq "e1: exit status (failed checks)" 1 "$(cat "$T/e1-native.rc")"
assert_jq "$T/e1-native/result.json" '([.summary.ops[] | select(.op == "DELETE")][0] |
    .errors.http_4xx == .requests and .requests > 0) and .summary.total.errors.total == .summary.total.errors.http_4xx' \
    "e1: every DELETE a 4xx, no other error"
# 3. Objects that are not there (--no-prepare over names nobody wrote): GET and STAT 404 on both engines.
same m1 "$URL/dav/none" --objects 8 --size 1k -c 1 --count 100 --no-prepare --mix get=50,stat=50
assert_jq "$T/m1-native/result.json" '.summary.total.errors.http_4xx == 100' "m1: 100 404s counted as http_4xx"

# 4. ais:// through the AIStore stand-in's proxy: the mix redirected per request (one redirect each), the same
#    requests, bytes and classes on both engines, and the redirects counted alike.
PEER=$ROOT/tests/servers/peer.py
AP=$(free_port)
bg python3 "$PEER" --port "$AP"
wait_port "$AP" 30 "the AIStore stand-in"
same a1 ais://mix/a1/ --endpoint "http://127.0.0.1:$AP" --objects 30 --size 2k -c 1 --count 300
for e in curl native; do
    assert_jq "$T/a1-$e/result.json" '.summary.total.errors.total == 0 and .summary.total.requests == 300' \
        "a1 ($e): 300 requests, no error"
    assert_jq "$T/a1-$e/result.json" '.phases[1].extra.redirects == 300' "a1 ($e): one redirect per request"
done
curl -fsS "http://127.0.0.1:$AP/peer/stats" | jq -e '[.held[] | select(startswith("mix/"))] | length == 0' >/dev/null ||
    fail "a1: the stand-in still holds objects after the cleanups"
ok "a1: the cleanups deleted everything on the stand-in"

# 5. s3:// on Ceph RGW: the default mix, 2 threads x 1 in flight; and a wrong secret (every request http_4xx).
rgw_up
rgw_bucket mixe
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE || true
same s1 s3://mixe/s1/ --endpoint "$RGW_ENDPOINT" --objects 24 --size 4k -t 2 -c 1 --count 400
assert_jq "$T/s1-native/result.json" '.summary.total.errors.total == 0 and .summary.total.requests == 400' \
    "s1: 400 requests, no error"
assert_eq "s1: keys left after the cleanups" 0 "$(rgw_keys mixe s1/)"
AWS_SECRET_ACCESS_KEY=wrong same s2 s3://mixe/s2/ --endpoint "$RGW_ENDPOINT" --objects 4 --size 1k -c 1 --count 40 \
    --no-prepare --mix get=50,stat=50
assert_jq "$T/s2-native/result.json" '.summary.total.errors.http_4xx == 40' "s2: a wrong secret: 40 http_4xx"
echo "PASS loader_mixed_engines"
