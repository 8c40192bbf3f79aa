#!/usr/bin/env bash
# needs: -
# railbench load against tests/servers/peer.py: known delay, a stall under --rate, every error class,
# SigV4 checked independently of libcurl, and the AIStore API (stand-in written from AIStore's docs).
# Every section runs once per request engine (RB_ENGINE=curl or native runs one of them).
set -euo pipefail
if [ -z "${RB_ENGINE:-}" ]; then
    for e in curl native; do RB_ENGINE=$e bash "$0" "$@" || exit 1; done
    exit 0
fi
. "$(dirname "$0")/../lib.sh"
echo "engine: $RB_ENGINE"
ENG=(--engine "$RB_ENGINE")
PEER=$ROOT/tests/servers/peer.py
summary() { jq -c ".summary.ops[0] | $2" "$T/$1/result.json"; }
# between LO VALUE HI WHAT: LO <= VALUE <= HI (numbers, awk).
between() {
    awk -v lo="$1" -v v="$2" -v hi="$3" 'BEGIN { exit !(lo <= v && v <= hi) }' || fail "$4: $2 not in [$1, $3]"
    ok "$4: $2 in [$1, $3]"
}

# 1. A fixed 50 ms delay: p50 within 10 % of it (the histogram's error is under 1 %). Below 50 ms is wrong
#    at once. Above it by 2 to 4 ms is the Python peer's threads waiting for a core beside three other tests (a
#    full run saw 52.3 to 53.6 ms in three runs in a row): the run is made again (--force: into the same --out), up
#    to 3 times, and the last one must be within 10 %. A delay counted twice, or Nagle's 40 ms, is far outside.
P1=$(free_port)
bg python3 "$PEER" --port "$P1" --delay-ms 50
wait_port "$P1"
for attempt in 1 2 3; do
    "$RB" load get "${ENG[@]}" "http://127.0.0.1:$P1/d" --objects 16 --count 160 -c 8 --out "$T/d1" --force --quiet >/dev/null
    between 50000000 "$(summary d1 '[.latency_ns.p50, .ttfb_ns.p50] | min')" 1000000000000 "p50 and TTFB p50 not below the delay"
    [ "$(summary d1 '[.latency_ns.p50, .ttfb_ns.p50] | max')" -le 55000000 ] && break
    echo "delay: attempt $attempt: p50 $(summary d1 .latency_ns.p50) ns, TTFB p50 $(summary d1 .ttfb_ns.p50) ns (busy machine?); again"
done
between 50000000 "$(summary d1 .latency_ns.p50)" 55000000 "p50 against a 50 ms delay"
between 50000000 "$(summary d1 .ttfb_ns.p50)" 55000000 "TTFB p50 against a 50 ms delay"
assert_eq "delay: requests" 160 "$(summary d1 .requests)"

# 2. Open loop at 100/s with the peer stalling once for 1 s at its 200th request: requests due during
#    the stall wait for it, so the corrected p99 shows the stall; from the actual send only the two
#    requests in flight saw it, so the uncorrected p99 does not.
P2=$(free_port)
bg python3 "$PEER" --port "$P2" --delay-ms 10 --stall-at 200 --stall-ms 1000
wait_port "$P2"
"$RB" load get "${ENG[@]}" "http://127.0.0.1:$P2/d" --objects 10 --count 600 --rate 100/s -c 2 --out "$T/s1" --quiet >/dev/null
assert_eq "open loop: requests" 600 "$(summary s1 .requests)"
between 500000000 "$(summary s1 .latency_ns.p99)" 2000000000 "corrected p99 shows the 1 s stall"
between 10000000 "$(summary s1 .latency_uncorrected_ns.p99)" 200000000 "uncorrected p99 hides it"
between 900000000 "$(summary s1 .latency_uncorrected_ns.max)" 2000000000 "uncorrected max still saw it"
between 10000000 "$(summary s1 .latency_ns.p50)" 200000000 "corrected p50 is the delay"
assert_jq "$T/s1/result.json" '.summary.ops[0].open_loop and .phases[0].latency_uncorrected_ns.p99 > 0' "both in the record"
grep -q 'from intended send (corrected)' "$T/s1/table.md" || fail "table.md lacks the corrected row"
grep -q 'from actual send (uncorrected)' "$T/s1/table.md" || fail "table.md lacks the uncorrected row"
ok "table.md reports both latencies"

# 3. Every error class from the peer's failure paths, counted exactly; under the default error policy
#    (--max-error-rate 0) every one of these runs fails its error_rate check with exit 1.
errors() { # NAME PATH CLASS EXTRA-ARGS...
    local name=$1 path=$2 cls=$3 rc=0; shift 3
    "$RB" load get "${ENG[@]}" "http://127.0.0.1:$P1/$path" --objects 3 --count 6 -c 2 --out "$T/$name" --quiet "$@" \
        >/dev/null 2>"$T/$name.err" || rc=$?
    assert_eq "$path: exit status" 1 "$rc"
    assert_jq "$T/$name/result.json" '[.checks[] | select(.name == "error_rate" and .passed == false)] | length == 1' \
        "$path: failed error_rate check"
    assert_eq "$path: $cls" 6 "$(summary "$name" ".errors.$cls")"
    assert_eq "$path: total errors" 6 "$(summary "$name" .errors.total)"
}
errors e404 status/404 http_4xx
errors e503 status/503 http_5xx
errors ereset reset reset
errors eshort short short_read
errors eslow slow timeout --timeout 300ms
errors eredir redirect too_many_redirects --max-redirects 3
assert_eq "redirects followed before giving up" 18 "$(summary eredir .extra.redirects)"
errors escheme redirect-https other
grep -q 'redirect' "$T/escheme.err" || { cat "$T/escheme.err"; fail "no message about the refused redirect"; }
grep -q 'HTTP 503' "$T/e503.err" || fail "no HTTP 503 message"
ok "first error of a class is logged with its status"

# 4. SigV4 checked by the peer's own implementation of AWS's algorithm (s3rver does not check V4 signatures).
P3=$(free_port)
bg python3 "$PEER" --port "$P3" --sigv4-secret peer-secret --size 512
wait_port "$P3"
AWS_ACCESS_KEY_ID=AKIDPEER AWS_SECRET_ACCESS_KEY=peer-secret "$RB" load put "${ENG[@]}" s3://signed --keep --endpoint "http://127.0.0.1:$P3" \
    --objects 8 --size 4k --out "$T/v1" --quiet >/dev/null
assert_eq "signed PUT: objects" 8 "$(summary v1 .objects)"
# Listing: two pages; the continuation token must be percent-encoded for the signature to match.
AWS_ACCESS_KEY_ID=AKIDPEER AWS_SECRET_ACCESS_KEY=peer-secret AWS_SESSION_TOKEN=session-token "$RB" load get "${ENG[@]}" s3://signed \
    --endpoint "http://127.0.0.1:$P3" --pattern epoch --out "$T/v2" --quiet >/dev/null
assert_eq "signed listing (2 pages) and GETs" 5 "$(summary v2 .objects)"
assert_eq "signed GET: bytes" $((5 * 512)) "$(summary v2 .bytes)"
# load list on this engine: the same two signed pages (names per page from the peer), a token signed with them.
AWS_ACCESS_KEY_ID=AKIDPEER AWS_SECRET_ACCESS_KEY=peer-secret AWS_SESSION_TOKEN=session-token "$RB" load list "${ENG[@]}" \
    s3://signed --endpoint "http://127.0.0.1:$P3" --count 2 --out "$T/v2l" --quiet >/dev/null
assert_eq "signed load list: listings, pages, names, errors" '[2,4,10,0]' \
    "$(summary v2l '[.listings, .pages, .names, .errors.total]')"
AWS_ACCESS_KEY_ID=AKIDPEER AWS_SECRET_ACCESS_KEY=not-the-secret "$RB" load list "${ENG[@]}" s3://signed \
    --endpoint "http://127.0.0.1:$P3" --out "$T/v3l" >/dev/null 2>"$T/v3l.err" && fail "listing with a wrong secret: exit 0" || rc=$?
assert_eq "listing with a wrong secret: exit (a failed check)" 1 "$rc"
assert_eq "listing with a wrong secret: pages answered, requests, http_4xx" '[0,1,1]' \
    "$(summary v3l '[.pages, .requests, .errors.http_4xx]')"
grep -q 'listing failed: HTTP 403 SignatureDoesNotMatch' "$T/v3l.err" || { cat "$T/v3l.err"; fail "no 403 line"; }
ok "listing with a wrong secret: HTTP 403 SignatureDoesNotMatch"
AWS_ACCESS_KEY_ID=AKIDPEER AWS_SECRET_ACCESS_KEY=not-the-secret "$RB" load get "${ENG[@]}" s3://signed --endpoint "http://127.0.0.1:$P3" \
    --objects 4 --count 4 --max-error-rate 100 --out "$T/v3" --quiet >/dev/null 2>"$T/v3.err"
assert_eq "wrong secret: http_4xx" 4 "$(summary v3 .errors.http_4xx)"
grep -q 'SignatureDoesNotMatch' "$T/v3.err" || fail "no SignatureDoesNotMatch message"
ok "wrong secret reported as SignatureDoesNotMatch"

# 5. AIStore API (stand-in): PUT through the proxy's redirect (the body is sent again to the target),
#    listing in pages of 100 with continuation token and uuid, GET through the redirect, provider query.
P4=$(free_port)
bg python3 "$PEER" --port "$P4" --ais-page 100
wait_port "$P4"
"$RB" load put "${ENG[@]}" ais://bench --keep --endpoint "http://127.0.0.1:$P4" --objects 250 --min-size 1k --max-size 8k -c 4 \
    --out "$T/a1" --quiet >/dev/null
assert_eq "ais PUT: objects" 250 "$(summary a1 .objects)"
assert_eq "ais PUT: redirects" 250 "$(summary a1 .extra.redirects)"
"$RB" load get "${ENG[@]}" ais://bench --endpoint "http://127.0.0.1:$P4" --pattern epoch --verify --min-size 1k --max-size 8k -c 4 \
    --out "$T/a2" --quiet >/dev/null
assert_eq "ais listing (3 pages) and verified GET: objects" 250 "$(summary a2 .objects)"
assert_eq "ais GET: bytes as put" "$(summary a1 .bytes)" "$(summary a2 .bytes)"
assert_eq "ais GET: redirects" 250 "$(summary a2 .extra.redirects)"
assert_eq "ais GET: errors" 0 "$(summary a2 .errors.total)"
"$RB" load list "${ENG[@]}" ais://bench --endpoint "http://127.0.0.1:$P4" --count 2 --out "$T/a2l" --quiet >/dev/null
assert_eq "ais load list: listings, pages (100 + 100 + 50), names, errors" '[2,6,500,0]' \
    "$(summary a2l '[.listings, .pages, .names, .errors.total]')"
"$RB" load get "${ENG[@]}" ais://bench --endpoint "http://127.0.0.1:$P4" --objects 3 --prefix missing- --count 3 --out "$T/a3" \
    --max-error-rate 100 --quiet >/dev/null 2>"$T/a3.err"
assert_eq "ais missing objects: http_4xx" 3 "$(summary a3 .errors.http_4xx)"
grep -q 'HTTP 404 object does not exist' "$T/a3.err" || fail "AIStore's JSON error message not shown"
ok "AIStore's error message shown"
assert_exit 2 "ais without endpoint" env -u AIS_ENDPOINT "$RB" load get "${ENG[@]}" ais://bench --objects 1
assert_stderr_line 'no AIStore endpoint'
assert_exit 2 "bad provider" "$RB" load get "${ENG[@]}" ais://bench --endpoint "http://127.0.0.1:$P4" --provider 'S3!' --objects 1
assert_stderr_line 'provider "S3!"'
