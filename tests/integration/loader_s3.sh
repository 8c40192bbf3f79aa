#!/usr/bin/env bash
# needs: ceph
# railbench load put|get against Ceph RGW (strict SigV4): path and virtual-host style PUT and verified GET,
# >1,000-object listing across pages, ranged GETs, a wrong secret rejected (403), credentials, secrets.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
rgw_up
rgw_bucket bench
EP=$RGW_ENDPOINT
PORT=$RGW_PORT
SECRET=$AWS_SECRET_ACCESS_KEY
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE || true
summary() { jq -c ".summary.ops[0] | $2" "$T/$1/result.json"; }
# RGW's beast frontend logs one access line per request: ... "METHOD PATH HTTP/1.1" STATUS ...
seen() { rgw_seen "$@"; }
assert_seen() { rgw_assert_seen "$@"; }

# 1. Missing credentials: a clear error before any request is sent.
rgw_mark nocred-before
assert_exit 2 "no credentials" env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY HOME="$T/nohome" \
    "$RB" load get s3://bench --endpoint "$EP" --objects 1
assert_stderr_line 'no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY'
assert_exit 2 "half the credentials" env -u AWS_SECRET_ACCESS_KEY "$RB" load get s3://bench --endpoint "$EP" --objects 1
assert_stderr_line 'AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not'
rgw_mark nocred-after
assert_eq "requests sent without credentials" 0 "$(rgw_between nocred-before nocred-after)"
assert_exit 2 "bad bucket name" "$RB" load get s3://B --endpoint "$EP" --objects 1
assert_stderr_line 'bad bucket name "B"'
assert_exit 2 "bad endpoint" "$RB" load get s3://bench --endpoint "ftp://127.0.0.1:$PORT" --objects 1
assert_stderr_line 'endpoint "ftp://127.0.0.1'

# 2. Path style: PUT 1,100 objects of 2 KiB signed with SigV4 (UNSIGNED-PAYLOAD) over two endpoint spellings
#    (round-robin per connection). RGW checks every signature: one wrongly signed header and all are 403.
"$RB" load put s3://bench/set/ --keep --endpoint "$EP" --endpoint "http://localhost:$PORT" --objects 1100 --size 2k \
    -t 2 -c 8 --log-requests "$T/put.csv" --out "$T/p1" --quiet >/dev/null 2>"$T/p1.err"
assert_eq "PUT: objects" 1100 "$(summary p1 .objects)"
assert_eq "PUT: bytes" $((1100 * 2048)) "$(summary p1 .bytes)"
assert_eq "PUT: errors" 0 "$(summary p1 .errors.total)"
assert_seen "PUTs RGW answered 200" 1100 'PUT /bench/set/obj-[0-9]{8}' 200

# 3. GET by listing: ListObjectsV2 pages of 1,000, so all 1,100 only arrive through the continuation token;
#    every byte verified against the seeded payload.
"$RB" load get s3://bench/set/ --endpoint "$EP" --pattern epoch --verify --size 2k -t 2 -c 8 --out "$T/g1" \
    >/dev/null 2>"$T/g1.err"
assert_eq "listed and read: objects" 1100 "$(summary g1 .objects)"
assert_eq "verified GET: bytes" $((1100 * 2048)) "$(summary g1 .bytes)"
assert_eq "verified GET: errors" 0 "$(summary g1 .errors.total)"
grep -q 'listed 1100 objects' "$T/g1.err" || fail "listing did not report 1100 objects"
# Two first pages: the put --keep's look-up (set/obj-, nothing there) and the get's listing.
assert_seen "listing: first pages" 2 'GET /bench\?list-type=2[^ ]*' 200
assert_seen "listing: pages after it, by continuation-token" 1 'GET /bench\?continuation-token=[^ ]*' 200
# A listing prefix narrows it: set/obj-0000100* is 10 objects.
"$RB" load get s3://bench --endpoint "$EP" --prefix set/obj-0000100 --pattern epoch --out "$T/g2" --quiet >/dev/null 2>&1
assert_eq "prefix listing" 10 "$(summary g2 .requests)"
# Verification can fail: objects written with seed 1 read as if written with seed 2 are all wrong.
"$RB" load get s3://bench/set/ --endpoint "$EP" --objects 1100 --count 40 --verify --size 2k --seed 2 \
    --out "$T/g2b" --quiet >/dev/null 2>&1 || true
assert_eq "verify with the wrong seed: checksum errors" 40 "$(summary g2b .errors.checksum)"

# 4. Ranged GETs, verified: a fixed range and a random range inside each object.
"$RB" load get s3://bench/set/ --endpoint "$EP" --objects 1100 --count 30 --range 100:200 --verify --size 2k \
    --out "$T/r1" --quiet >/dev/null
assert_eq "fixed range: bytes" $((30 * 200)) "$(summary r1 .bytes)"
assert_eq "fixed range: errors" 0 "$(summary r1 .errors.total)"
"$RB" load get s3://bench/set/ --endpoint "$EP" --objects 1100 --count 40 --random-range 512 --verify --size 2k \
    --out "$T/r2" --quiet >/dev/null
assert_eq "random range: bytes" $((40 * 512)) "$(summary r2 .bytes)"
assert_eq "random range: errors" 0 "$(summary r2 .errors.total)"
assert_seen "RGW answered 206 Partial Content" 70 'GET /bench/set/obj-[0-9]{8}' 206

# 5. Virtual-host style: bench.localhost (libcurl resolves *.localhost to loopback itself; RGW takes the
#    bucket from the Host header, rgw dns name = localhost). PUT, list and verified GET, all signed.
"$RB" load put s3://bench/vh/ --keep --endpoint "$RGW_VHOST_ENDPOINT" --virtual-host --objects 60 --size 3k \
    --out "$T/v1" --quiet >/dev/null
assert_eq "virtual host PUT: objects" 60 "$(summary v1 .objects)"
assert_seen "virtual host PUTs on the wire without the bucket in the path" 60 'PUT /vh/obj-[0-9]{8}' 200
"$RB" load get s3://bench/vh/ --endpoint "$RGW_VHOST_ENDPOINT" --virtual-host --pattern epoch --verify --size 3k \
    --out "$T/v2" --quiet >/dev/null
assert_eq "virtual host listing + verified GET: objects" 60 "$(summary v2 .objects)"
assert_eq "virtual host GET: errors" 0 "$(summary v2 .errors.total)"

# 6. Credentials from a file and profile (no environment).
cat >"$T/creds" <<EOF
[default]
aws_access_key_id = NOT-THIS-ONE
aws_secret_access_key = x
[bench]
aws_access_key_id = $AWS_ACCESS_KEY_ID
aws_secret_access_key = $SECRET
EOF
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$RB" load get s3://bench/set/ --endpoint "$EP" --objects 1100 \
    --count 20 --verify --size 2k --credentials-file "$T/creds" --profile bench --out "$T/g4" --quiet >/dev/null
assert_eq "credentials file: objects" 20 "$(summary g4 .objects)"
assert_exit 2 "unknown profile" env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$RB" load get s3://bench \
    --endpoint "$EP" --objects 1 --credentials-file "$T/creds" --profile nope
assert_stderr_line 'profile "nope" not found'

# 7. A wrong secret: RGW recomputes the signature and refuses; every request is a 403 counted as http_4xx,
#    and the server's reason is logged once. GET and PUT both.
WRONG="wRoNg-$RANDOM-$RANDOM-not-the-secret"
# (--max-error-rate 100: refusals are what this run measures, so it is not stopped as hopeless; see 7b.)
AWS_SECRET_ACCESS_KEY=$WRONG "$RB" load get s3://bench/set/ --endpoint "$EP" --objects 1100 --count 30 \
    --max-error-rate 100 --out "$T/g5" --quiet >/dev/null 2>"$T/g5.err" || true
assert_eq "wrong secret GET: http_4xx" 30 "$(summary g5 .errors.http_4xx)"
assert_eq "wrong secret GET: objects" 0 "$(summary g5 .objects)"
grep -q 'HTTP 403 SignatureDoesNotMatch' "$T/g5.err" || { cat "$T/g5.err"; fail "no SignatureDoesNotMatch message"; }
ok "message: $(grep SignatureDoesNotMatch "$T/g5.err")"
AWS_SECRET_ACCESS_KEY=$WRONG "$RB" load put s3://bench/bad/ --endpoint "$EP" --objects 10 --size 1k \
    --log-requests "$T/bad.csv" --out "$T/p5" --quiet >/dev/null 2>"$T/p5.err" || true
assert_eq "wrong secret PUT: http_4xx" 10 "$(summary p5 .errors.http_4xx)"
# RGW refuses before reading the body and keeps the connection open, so the unread body bytes of a refused
# PUT can turn the next request on that connection into a 400 (RGW logs no access line for it). Every PUT
# is a 403 or such a 400, and RGW logged exactly the 403s railbench saw.
n403=$(awk -F, '$9 == 403' "$T/bad.csv" | wc -l)
n400=$(awk -F, '$9 == 400' "$T/bad.csv" | wc -l)
assert_eq "wrong secret PUT: 403s + 400s in the request log" 10 $((n403 + n400))
[ "$n403" -gt 0 ] || fail "wrong secret PUT: no 403 in the request log"
ok "wrong secret PUT: $n403 answered 403, $n400 answered 400"
assert_seen "PUTs RGW refused with 403, as railbench saw them" "$n403" 'PUT /bench/bad/rb-[^ ]*obj-[0-9]{8}' 403
assert_eq "refused PUTs RGW stored" 0 "$(seen 'PUT /bench/bad/rb-[^ ]*obj-[0-9]{8}' 200)"
# An unknown access key is a different refusal.
AWS_ACCESS_KEY_ID=NOBODY "$RB" load get s3://bench/set/ --endpoint "$EP" --objects 1100 --count 5 --out "$T/g6" \
    --quiet >/dev/null 2>"$T/g6.err" || true
assert_eq "unknown key: http_4xx" 5 "$(summary g6 .errors.http_4xx)"
grep -q 'HTTP 403 InvalidAccessKeyId' "$T/g6.err" || { cat "$T/g6.err"; fail "no InvalidAccessKeyId message"; }
# Listing with a wrong secret fails with the server's words, exit 3.
assert_exit 3 "listing with a wrong secret" env AWS_SECRET_ACCESS_KEY="$WRONG" "$RB" load get s3://bench \
    --endpoint "$EP" --out "$T/g7"
assert_stderr_line 'listing failed: HTTP 403 SignatureDoesNotMatch'

# 7b. A bucket that does not exist: every GET is a 404 NoSuchBucket, so the run stops at its first tick with one
#     error line and exit 3 instead of sending 404s for its whole --duration.
start=$SECONDS
rc=0; "$RB" load get s3://no-such-bucket-$RANDOM/ --endpoint "$EP" --objects 50 --size 1k --duration 60s \
    --out "$T/g8" --quiet >/dev/null 2>"$T/g8.err" || rc=$?
assert_eq "missing bucket: exit" 3 "$rc"
[ $((SECONDS - start)) -lt 30 ] || fail "missing bucket: ran $((SECONDS - start)) s of its 60 s"
grep -q 'HTTP 404 NoSuchBucket' "$T/g8.err" || { cat "$T/g8.err"; fail "missing bucket: no NoSuchBucket warning"; }
grep -q 'error: get: all of the first [0-9]* requests (.*) were answered 403 or 404' "$T/g8.err" ||
    { cat "$T/g8.err"; fail "missing bucket: no error line"; }
assert_jq "$T/g8/result.json" '.summary.ops[0].requests >= 16 and .summary.ops[0].errors.http_4xx == .summary.ops[0].requests' \
    "missing bucket: every request a 404, at least 16"

# 8. Neither secret appears anywhere: results, intervals, tables, request logs, stderr, the command line record.
for f in "$T"/p1 "$T"/g1 "$T"/g4 "$T"/g5 "$T"/p5 "$T"/v1 "$T"/r1 "$T/put.csv" "$T/p1.err" "$T/g1.err" \
    "$T/g5.err" "$T/p5.err" "$T/bad.csv" "$T/stderr" "$T/stdout"; do
    if grep -rqF -e "$SECRET" -e "$WRONG" "$f"; then fail "a secret leaked into $f"; fi
done
ok "neither the secret nor the wrong one is in any result, log or message"
