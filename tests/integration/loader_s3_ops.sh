#!/usr/bin/env bash
# needs: ceph
# railbench load delete|stat|list and --until-steady against Ceph RGW (and nginx WebDAV for http://): exact counts, HEAD of present and
# deleted objects, `load delete --prefix` lists then deletes and leaves the prefix empty (checked by listing it).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T"
rgw_up
rgw_bucket ops
EP=$RGW_ENDPOINT
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE || true
summary() { jq -c ".summary.ops[0] | $2" "$T/$1/result.json"; }
keys() { rgw_keys ops "$1"; }
assert_seen() { rgw_assert_seen "$@"; }

# 1. 1,100 objects of 1 KiB, then HEAD each exactly once (epoch order over generated names): 1,100 HEADs, 0 bytes.
"$RB" load put s3://ops/a/ --endpoint "$EP" --keep --objects 1100 --size 1k -c 16 --out "$T/p1" --quiet >/dev/null
assert_eq "put: objects" 1100 "$(summary p1 .objects)"
"$RB" load stat s3://ops/a/ --endpoint "$EP" --objects 1100 --pattern epoch -c 16 --out "$T/s1" --quiet >/dev/null
assert_eq "stat: requests" 1100 "$(summary s1 .requests)"
assert_eq "stat: errors" 0 "$(summary s1 .errors.total)"
assert_eq "stat: bytes" 0 "$(summary s1 .bytes)"
assert_jq "$T/s1/result.json" '.phases[0].op == "HEAD" and .phases[0].name == "stat" and .command == "load stat"' \
    "stat phase record: op HEAD"
assert_seen "HEADs RGW answered 200" 1100 'HEAD /ops/a/obj-[0-9]{8}' 200
# stat by listing (two ListObjectsV2 pages) with a count limit.
"$RB" load stat s3://ops/a/ --endpoint "$EP" --count 300 -c 8 --out "$T/s2" >/dev/null 2>"$T/s2.err"
assert_eq "stat by listing: requests" 300 "$(summary s2 .requests)"
grep -q 'listed 1100 objects' "$T/s2.err" || fail "stat did not list 1100 objects"

# list: 1,100 names under a/ come in 2 ListObjectsV2 pages (1,000 + 100): one listing = 2 page requests.
assert_eq "curl's listing of a/ (one page)" 1000 "$(keys a/)"
"$RB" load list s3://ops --endpoint "$EP" --prefix a/ --out "$T/l1" --quiet >/dev/null
assert_eq "list: pages" 2 "$(summary l1 .pages)"
assert_eq "list: names" 1100 "$(summary l1 .names)"
assert_eq "list: listings" 1 "$(summary l1 .listings)"
assert_eq "list: errors" 0 "$(summary l1 .errors.total)"
assert_jq "$T/l1/result.json" '.phases[0].op == "LIST" and .phases[0].latency_hist.count == 2' "one latency per page"
# The same listing on each engine (auto above is native), path and virtual-host style: equal pages and names.
for e in curl native; do
    "$RB" load list s3://ops --endpoint "$EP" --prefix a/ --engine "$e" --out "$T/l1-$e" --quiet >/dev/null
    "$RB" load list s3://ops --endpoint "$RGW_VHOST_ENDPOINT" --virtual-host --prefix a/ --engine "$e" \
        --out "$T/l1v-$e" --quiet >/dev/null
    assert_eq "list ($e): listings, pages, names, errors" '[1,2,1100,0]' \
        "$(summary "l1-$e" '[.listings, .pages, .names, .errors.total]')"
    assert_eq "list --virtual-host ($e): listings, pages, names, errors" '[1,2,1100,0]' \
        "$(summary "l1v-$e" '[.listings, .pages, .names, .errors.total]')"
done
AWS_SECRET_ACCESS_KEY=not-the-secret "$RB" load list s3://ops --endpoint "$EP" --prefix a/ --engine native \
    --out "$T/l1w-native" >/dev/null 2>"$T/l1w-native.err" && fail "list with a wrong secret on native: exit 0" || rc=$?
assert_eq "list with a wrong secret on native: exit (a failed check)" 1 "$rc"
AWS_SECRET_ACCESS_KEY=not-the-secret "$RB" load list s3://ops --endpoint "$EP" --prefix a/ --engine curl \
    --out "$T/l1w-curl" >/dev/null 2>"$T/l1w-curl.err" && fail "list with a wrong secret on curl: exit 0" || rc=$?
assert_eq "list with a wrong secret on curl: exit (a failed check)" 1 "$rc"
assert_eq "list with a wrong secret: requests and error classes, curl = native" \
    "$(summary l1w-curl '[.requests, .errors]')" "$(summary l1w-native '[.requests, .errors]')"
assert_eq "list with a wrong secret: http_4xx" 1 "$(summary l1w-native .errors.http_4xx)"
grep -q 'listing failed: HTTP 403 SignatureDoesNotMatch' "$T/l1w-native.err" || { cat "$T/l1w-native.err"; fail "no 403 line"; }
"$RB" load list s3://ops --endpoint "$EP" --prefix a/ --count 3 -t 2 --out "$T/l2" --quiet >/dev/null
assert_eq "list --count 3: pages" 6 "$(summary l2 .pages)"
assert_eq "list --count 3: names" 3300 "$(summary l2 .names)"
"$RB" load list s3://ops --endpoint "$EP" --prefix a/ --duration 2s --out "$T/l3" --quiet >/dev/null
assert_jq "$T/l3/result.json" '.summary.ops[0] | .listings >= 1 and .pages >= 2 * .listings and .names >= 1100 * .listings
    and .pages_per_s > 0' "list --duration: whole listings again and again"

# 2. delete by generated names: the first 100 (a/obj-00000000..99), each once; then HEAD of them is 404.
"$RB" load delete s3://ops/a/ --endpoint "$EP" --objects 100 -c 8 --out "$T/d1" --quiet >/dev/null
assert_eq "delete: requests" 100 "$(summary d1 .requests)"
assert_eq "delete: errors" 0 "$(summary d1 .errors.total)"
assert_jq "$T/d1/result.json" '.phases[0].op == "DELETE"' "delete phase record: op DELETE"
assert_seen "DELETEs RGW answered 204" 100 'DELETE /ops/a/obj-[0-9]{8}' 204
"$RB" load stat s3://ops/a/ --endpoint "$EP" --objects 100 --pattern epoch --out "$T/s3" --quiet \
    >/dev/null 2>&1 || true
assert_eq "stat of deleted objects: http_4xx" 100 "$(summary s3 .errors.http_4xx)"

# 3. delete --prefix: lists what is left (1,000 objects, one page) and deletes each once; the prefix is empty after.
"$RB" load delete s3://ops --endpoint "$EP" --prefix a/ -c 16 --out "$T/d2" --quiet >/dev/null 2>"$T/d2.err"
assert_eq "delete --prefix: requests" 1000 "$(summary d2 .requests)"
assert_eq "delete --prefix: errors" 0 "$(summary d2 .errors.total)"
assert_eq "objects left under a/" 0 "$(keys a/)"
assert_exit 3 "delete of an empty prefix" "$RB" load delete s3://ops --endpoint "$EP" --prefix a/ --out "$T/d2b"
assert_stderr_line 'no objects under prefix "a/" to delete'
# A bare bucket is not deleted by accident.
assert_exit 2 "delete without a set" "$RB" load delete s3://ops --endpoint "$EP"
assert_stderr_line 'load delete: give --prefix P'

# 4. --until-steady: a steady closed-loop GET of small objects settles within a loose 50 % over 2 s well before
#    the 30 s limit; a limit of 0.001 % cannot be met in a 3 s phase (not converged, check failed, exit 1).
"$RB" load put s3://ops/st/ --endpoint "$EP" --keep --objects 40 --size 16k --out "$T/p2" --quiet >/dev/null
"$RB" load get s3://ops/st/ --endpoint "$EP" --objects 40 --size 16k -c 4 --duration 30s --until-steady 50/2s \
    --out "$T/u1" >/dev/null 2>"$T/u1.err"
assert_jq "$T/u1/result.json" '.phases[0].until_steady.converged == true and .phases[0].duration_s < 20' \
    "steady GET converged before the duration"
assert_jq "$T/u1/result.json" '.summary.ops[0].until_steady.pct == 50 and .summary.ops[0].until_steady.window_s == 2' \
    "until_steady in the summary"
assert_jq "$T/u1/result.json" '[.checks[] | select(.name == "steady_state")][0].passed == true' "steady_state check passed"
ok "converged after $(jq .phases[0].until_steady.converged_at_s "$T/u1/result.json") s"
assert_exit 1 "not steady within the duration" "$RB" load get s3://ops/st/ --endpoint "$EP" --objects 40 --size 16k \
    -c 4 --duration 3s --until-steady 0.001/2s --out "$T/u2"
grep -q 'throughput did not settle before the phase ended' "$T/stderr" || fail "no not-settled message"
assert_jq "$T/u2/result.json" '[.checks[] | select(.name == "steady_state")][0].passed == false' "steady_state check failed"
assert_jq "$T/u2/result.json" '.phases[0].until_steady.converged == false and .phases[0].duration_s >= 2.9' \
    "not converged: ran the whole duration"
assert_exit 2 "--until-steady without a duration" "$RB" load put s3://ops/st/ --endpoint "$EP" --objects 1 \
    --until-steady 5/1s
assert_stderr_line '--until-steady: needs --duration D'
assert_exit 2 "--until-steady malformed" "$RB" load get s3://ops/st/ --endpoint "$EP" --objects 1 --until-steady 5
assert_stderr_line '--until-steady "5": expected PCT/WINDOW'
"$RB" load delete s3://ops --endpoint "$EP" --prefix st/ --out "$T/d3" --quiet >/dev/null
assert_eq "objects left under st/" 0 "$(keys st/)"

# 5. An interrupted put says what it left (stderr and summary.left_behind), and that is what the bucket holds;
#    load delete --prefix then empties it.
"$RB" load put s3://ops/int/ --endpoint "$EP" --keep --objects 2000 --size 1k --rate 100/s --out "$T/i1" --quiet \
    >/dev/null 2>"$T/i1.err" &
ipid=$!
# Signalled once its first interval is written (a second or so: ~100 objects at 100/s), bounded.
for _ in $(seq 600); do [ -s "$T/i1/intervals.jsonl" ] && break; kill -0 "$ipid" 2>/dev/null || break; sleep 0.1; done
[ -s "$T/i1/intervals.jsonl" ] || { cat "$T/i1.err"; fail "the put to interrupt wrote no interval"; }
kill -INT "$ipid"
wait "$ipid" || true
grep -q 'interrupted: [0-9]* to [0-9]* objects written to s3://ops/int/ under "int/obj-" stay there (railbench load delete s3://ops/int/ --prefix obj- removes them)' \
    "$T/i1.err" || { cat "$T/i1.err"; fail "interrupted put does not say what it left"; }
left=$(jq .summary.left_behind.objects "$T/i1/result.json")
most=$(jq .summary.left_behind.objects_max "$T/i1/result.json")
inbucket=$(keys int/)
# PUTs in flight at the signal (8 here) are abandoned uncounted, but RGW may have stored them.
[ "$left" -gt 0 ] && [ "$most" -eq $((left + 8)) ] && [ "$left" -le "$inbucket" ] && [ "$inbucket" -le "$most" ] ||
    fail "interrupted put: left_behind $left..$most, $inbucket in the bucket"
ok "interrupted put: left_behind $left..$most, $inbucket in the bucket"
"$RB" load delete s3://ops/int/ --endpoint "$EP" --prefix obj- --out "$T/d4" --quiet >/dev/null
assert_eq "after delete --prefix: objects under int/" 0 "$(keys int/)"

# 6. http:// (nginx WebDAV with DELETE): PUT 20, HEAD 20, DELETE 20, the directory is empty after.
nginx_dav web
URL=$DAV_URL
"$RB" load put "$URL" --keep --objects 20 --size 4k --out "$T/hp" --quiet >/dev/null
assert_eq "http put: files" 20 "$(find "$DAV_ROOT" -type f | wc -l)"
"$RB" load stat "$URL" --pattern epoch --out "$T/hs" --quiet >/dev/null
assert_eq "http stat (listed by autoindex): requests" 20 "$(summary hs .requests)"
"$RB" load list "$URL/" --out "$T/hl" --quiet >/dev/null
assert_eq "http list (one autoindex page): pages" 1 "$(summary hl .pages)"
assert_eq "http list: names" 20 "$(summary hl .names)"
assert_eq "http stat: errors" 0 "$(summary hs .errors.total)"
"$RB" load delete "$URL" --objects 20 --out "$T/hdel" --quiet >/dev/null
assert_eq "http delete: requests" 20 "$(summary hdel .requests)"
assert_eq "http delete: errors" 0 "$(summary hdel .errors.total)"
assert_eq "http delete: files left" 0 "$(find "$DAV_ROOT" -type f | wc -l)"
ok "loader_s3_ops"
