#!/usr/bin/env bash
# railbench load put|get against s3rver: SigV4 PUT then verified GET, >1,000-object listing, credentials, secrets.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
S3RVER=$ROOT/tests/servers/node_modules/.bin/s3rver
[ -x "$S3RVER" ] || fail "s3rver is not installed (scripts/deps.sh runs npm ci in tests/servers)"
PORT=$(free_port)
mkdir -p "$T/s3"
# s3rver 3.7.1 makes continuation tokens with DES, which Node's OpenSSL 3 only has in its legacy provider.
NODE_OPTIONS=--openssl-legacy-provider bg "$S3RVER" -d "$T/s3" -a 127.0.0.1 -p "$PORT" \
    --service-endpoint localhost --configure-bucket bench --configure-bucket other >"$T/s3rver.log" 2>&1
wait_port "$PORT"
EP=http://127.0.0.1:$PORT
summary() { jq -c ".summary.ops[0] | $2" "$T/$1/result.json"; }
# s3rver logs one "info: /PATH STATUS TIME SIZE" line per request.
requests_seen() { grep -Ec 'info.*: /[^ ]* [0-9]{3} ' "$T/s3rver.log" || true; }

# s3rver knows the access key S3RVER and does not check V4 signatures; the secret is ours to choose,
# so we can prove it never leaks.
SECRET="sEcReT-$RANDOM-$RANDOM-do-not-leak"
export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=$SECRET
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE || true

# 1. Missing credentials: a clear error before any request is sent.
before=$(requests_seen)
assert_exit 2 "no credentials" env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY HOME="$T/nohome" \
    "$RB" load get s3://bench --endpoint "$EP" --objects 1
assert_stderr_line 'no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY'
assert_exit 2 "half the credentials" env -u AWS_SECRET_ACCESS_KEY "$RB" load get s3://bench --endpoint "$EP" --objects 1
assert_stderr_line 'AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not'
assert_eq "requests sent without credentials" "$before" "$(requests_seen)"
assert_exit 2 "bad bucket name" "$RB" load get s3://B --endpoint "$EP" --objects 1
assert_stderr_line 'bad bucket name "B"'
assert_exit 2 "bad endpoint" "$RB" load get s3://bench --endpoint "ftp://127.0.0.1:$PORT" --objects 1
assert_stderr_line 'endpoint "ftp://127.0.0.1'

# 2. PUT 1,100 objects of 2 KiB with SigV4 (UNSIGNED-PAYLOAD), over two endpoints (round-robin per connection).
"$RB" load put s3://bench/set/ --endpoint "$EP" --endpoint "http://localhost:$PORT" --objects 1100 --size 2k \
    -t 2 -c 8 --log-requests "$T/put.csv" --out "$T/p1" --quiet >/dev/null 2>"$T/p1.err"
assert_eq "PUT: objects" 1100 "$(summary p1 .objects)"
assert_eq "PUT: bytes" $((1100 * 2048)) "$(summary p1 .bytes)"
assert_eq "PUT: errors" 0 "$(summary p1 .errors.total)"

# 3. GET by listing: ListObjectsV2 pages of 1,000, so all 1,100 only arrive through the continuation token.
"$RB" load get s3://bench/set/ --endpoint "$EP" --pattern epoch --verify --size 2k -t 2 -c 8 --out "$T/g1" \
    >/dev/null 2>"$T/g1.err"
assert_eq "listed and read: objects" 1100 "$(summary g1 .objects)"
assert_eq "verified GET: bytes" $((1100 * 2048)) "$(summary g1 .bytes)"
assert_eq "verified GET: errors" 0 "$(summary g1 .errors.total)"
grep -q 'listed 1100 objects' "$T/g1.err" || fail "listing did not report 1100 objects"
ok "listing went past the first page"
# A listing prefix narrows it: set/obj-0000100* is 10 objects.
"$RB" load get s3://bench --endpoint "$EP" --prefix set/obj-0000100 --pattern epoch --out "$T/g2" --quiet >/dev/null 2>&1
assert_eq "prefix listing" 10 "$(summary g2 .requests)"

# 4. Virtual-host style: bench.s3.localhost (curl resolves *.localhost to loopback; s3rver maps it to the bucket).
"$RB" load get s3://bench/set/ --endpoint "http://s3.localhost:$PORT" --virtual-host --objects 1100 --count 50 \
    --verify --size 2k --out "$T/g3" --quiet >/dev/null
assert_eq "virtual host: objects" 50 "$(summary g3 .objects)"

# 5. Credentials from a file and profile (no environment).
cat >"$T/creds" <<EOF
[default]
aws_access_key_id = NOT-THIS-ONE
aws_secret_access_key = x
[bench]
aws_access_key_id = S3RVER
aws_secret_access_key = $SECRET
EOF
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$RB" load get s3://bench/set/ --endpoint "$EP" --objects 1100 \
    --count 20 --credentials-file "$T/creds" --profile bench --out "$T/g4" --quiet >/dev/null
assert_eq "credentials file: objects" 20 "$(summary g4 .objects)"
assert_exit 2 "unknown profile" env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$RB" load get s3://bench \
    --endpoint "$EP" --objects 1 --credentials-file "$T/creds" --profile nope
assert_stderr_line 'profile "nope" not found'

# 6. An unknown access key: every request is a 403 counted as http_4xx, and the server's reason is logged once.
AWS_ACCESS_KEY_ID=NOBODY "$RB" load get s3://bench/set/ --endpoint "$EP" --objects 1100 --count 30 --out "$T/g5" \
    --max-error-rate 100 --quiet >/dev/null 2>"$T/g5.err"
assert_eq "unknown key: http_4xx" 30 "$(summary g5 .errors.http_4xx)"
assert_eq "unknown key: objects" 0 "$(summary g5 .objects)"
grep -q 'HTTP 403 InvalidAccessKeyId' "$T/g5.err" || { cat "$T/g5.err"; fail "no InvalidAccessKeyId message"; }
ok "message: $(grep InvalidAccessKeyId "$T/g5.err")"
# Listing with an unknown key fails with the server's words, exit 3.
assert_exit 3 "listing with an unknown key" env AWS_ACCESS_KEY_ID=NOBODY "$RB" load get s3://bench --endpoint "$EP" \
    --out "$T/g6"
assert_stderr_line 'listing failed: HTTP 403 InvalidAccessKeyId'

# 7. The secret appears nowhere: results, intervals, tables, request logs, stderr, and the command line record.
for f in "$T"/p1 "$T"/g1 "$T"/g4 "$T"/g5 "$T/put.csv" "$T/p1.err" "$T/g1.err" "$T/g5.err"; do
    if grep -rqF "$SECRET" "$f"; then fail "the secret leaked into $f"; fi
done
ok "the secret is in no result, log or message"
