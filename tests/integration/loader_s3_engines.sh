#!/usr/bin/env bash
# needs: ceph
# Both request engines on the same runs against Ceph RGW (strict SigV4): PUT, verified GET, ranged GET, HEAD,
# DELETE, path and virtual-host style, a session token, a wrong secret; each run's counts, bytes and error classes
# must be the same on libcurl (CURLOPT_AWS_SIGV4) and the native engine (loader/sigv4.c), and RGW's own log must
# show the native requests answered.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T"
rgw_up
rgw_bucket eng
EP=$RGW_ENDPOINT
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE || true
# counts RUN: requests, bytes and every error class of the run's first op, one line.
counts() { jq -c '.summary.ops[0] | [.requests, .bytes, .errors]' "$T/$1/result.json"; }
engine() { jq -r .summary.engine "$T/$1/result.json"; }
# both NAME EXPECTED_EXIT ARGS...: the run on each engine and on auto (out dirs NAME-curl, NAME-native, NAME-auto;
# PREFIX in ARGS becomes curl, native or auto), asserting the exit status, that auto chose native, and equal counts.
both() {
    local name=$1 want=$2 e rc a; shift 2
    for e in curl native auto; do
        a=("${@//PREFIX/$e}")
        rc=0
        "$RB" load "${a[@]}" --engine "$e" --out "$T/$name-$e" --quiet >/dev/null 2>"$T/$name-$e.err" || rc=$?
        [ "$rc" = "$want" ] || { cat "$T/$name-$e.err"; fail "$name on $e: exit $rc, expected $want"; }
    done
    assert_eq "$name: engine auto picks" native "$(engine "$name-auto")"
    assert_eq "$name: curl's counts = native's" "$(counts "$name-curl")" "$(counts "$name-native")"
}

# 1. PUT 300 objects of 1 KiB through each engine under its own prefix; RGW holds 300 under each.
both put 0 put s3://eng/PREFIX/ --endpoint "$EP" --keep --objects 300 --size 1k -c 8
assert_eq "put: counts" '[300,307200,{"total":0,"connect":0,"timeout":0,"reset":0,"http_4xx":0,"http_5xx":0,"short_read":0,"checksum":0,"too_many_redirects":0,"symlink":0,"other":0,"abandoned":0}]' "$(counts put-native)"
assert_eq "keys RGW lists under native/" 300 "$(rgw_keys eng native/)"
assert_seen() { rgw_assert_seen "$@"; }

# 2. Verified GETs of the native engine's objects, each exactly twice (epoch order); whole objects then ranges.
both get 0 get s3://eng/native/ --endpoint "$EP" --objects 300 --size 1k --pattern epoch --epochs 2 --verify -c 8
assert_eq "get: requests and bytes" "[600,614400]" "$(jq -c '.summary.ops[0] | [.requests, .bytes]' "$T/get-native/result.json")"
both range 0 get s3://eng/native/ --endpoint "$EP" --objects 300 --size 1k --range 100:200 --count 300 --verify -c 8
assert_eq "range: bytes" 60000 "$(jq '.summary.ops[0].bytes' "$T/range-native/result.json")"
both rrange 0 get s3://eng/native/ --endpoint "$EP" --objects 300 --size 1k --random-range 64 --count 300 --verify -c 8
assert_eq "random range: bytes" 19200 "$(jq '.summary.ops[0].bytes' "$T/rrange-native/result.json")"

# 3. Virtual-host style (Host: eng.localhost) and a session token (signed as x-amz-security-token; RGW without
#    STS does not check it, so both engines must be answered 200 with the token in the signed headers).
both vhost 0 get s3://eng/native/ --endpoint "$RGW_VHOST_ENDPOINT" --virtual-host --objects 300 --size 1k --count 200 --verify -c 4
assert_eq "virtual host: bytes" 204800 "$(jq '.summary.ops[0].bytes' "$T/vhost-native/result.json")"
AWS_SESSION_TOKEN=railbench-test-token both token 0 get s3://eng/native/ --endpoint "$EP" --objects 300 --size 1k --count 100 -c 4
assert_eq "session token: bytes" 102400 "$(jq '.summary.ops[0].bytes' "$T/token-native/result.json")"

# 4. A wrong secret: every request 403 (SignatureDoesNotMatch), counted as http_4xx, on both engines. With
#    --max-error-rate 100 the refusals are what is measured (exit 0), so the run is not stopped as hopeless
#    (loader_s3.sh 7b has that) and both engines make all 100 requests.
AWS_SECRET_ACCESS_KEY=not-the-secret both wrong 0 get s3://eng/native/ --endpoint "$EP" --objects 300 --size 1k --count 100 -c 4 \
    --max-error-rate 100
assert_eq "wrong secret: http_4xx" 100 "$(jq '.summary.ops[0].errors.http_4xx' "$T/wrong-native/result.json")"
grep -q 'HTTP 403 SignatureDoesNotMatch' "$T/wrong-native.err" || { cat "$T/wrong-native.err"; fail "no 403 SignatureDoesNotMatch line"; }

# 4b. Signed payloads (--sign-payload, native only): x-amz-content-sha256 is each body's SHA-256; RGW takes the
#     PUTs and the verified GETs read back what was signed. libcurl refuses the option (exit 2).
"$RB" load put s3://eng/signed/ --endpoint "$EP" --keep --objects 40 --size 100k -c 4 --sign-payload --out "$T/sp" \
    --quiet >/dev/null
assert_eq "signed payload PUT: counts" '[40,4096000,0]' "$(jq -c '.summary.ops[0] | [.requests, .bytes, .errors.total]' "$T/sp/result.json")"
"$RB" load get s3://eng/signed/ --endpoint "$EP" --objects 40 --size 100k -c 4 --sign-payload --verify --pattern epoch \
    --out "$T/sg" --quiet >/dev/null
assert_eq "signed payload GET: counts" '[40,4096000,0]' "$(jq -c '.summary.ops[0] | [.requests, .bytes, .errors.total]' "$T/sg/result.json")"
assert_seen "signed PUTs RGW answered 200" 40 'PUT /eng/signed/obj-[0-9]{8}' 200
assert_exit 2 "--sign-payload on libcurl" "$RB" load put s3://eng/signed/ --endpoint "$EP" --objects 1 --size 1k \
    --sign-payload --engine curl
assert_stderr_line '--sign-payload: only the native engine signs bodies'

# 5. HEAD each object once, then DELETE each once: 300 answered each; HEAD after DELETE is 404 for all 300.
both stat 0 stat s3://eng/PREFIX/ --endpoint "$EP" --objects 300 --pattern epoch -c 8
assert_eq "stat: requests, bytes" "[300,0]" "$(jq -c '.summary.ops[0] | [.requests, .bytes]' "$T/stat-native/result.json")"
both delete 0 delete s3://eng/PREFIX/ --endpoint "$EP" --objects 300 -c 8
assert_eq "delete: requests" 300 "$(jq '.summary.ops[0].requests' "$T/delete-native/result.json")"
assert_eq "keys left under native/" 0 "$(rgw_keys eng native/)"
assert_eq "keys left under curl/" 0 "$(rgw_keys eng curl/)"
assert_eq "keys left under auto/" 0 "$(rgw_keys eng auto/)"
both gone 1 stat s3://eng/PREFIX/ --endpoint "$EP" --objects 300 --pattern epoch -c 8
assert_eq "stat after delete: http_4xx" 300 "$(jq '.summary.ops[0].errors.http_4xx' "$T/gone-native/result.json")"
# RGW answered the native engine's requests (native and auto, 300 each): PUT 200, HEAD 200, DELETE 204.
assert_seen "native PUTs RGW answered 200" 600 'PUT /eng/(native|auto)/obj-[0-9]{8}' 200
assert_seen "native HEADs RGW answered 200" 600 'HEAD /eng/(native|auto)/obj-[0-9]{8}' 200
assert_seen "native DELETEs RGW answered 204" 600 'DELETE /eng/(native|auto)/obj-[0-9]{8}' 204
