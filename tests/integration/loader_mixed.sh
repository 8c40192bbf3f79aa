#!/usr/bin/env bash
# needs: ceph mpi
# railbench load mixed against nginx WebDAV (http://, PUT and DELETE enabled) and Ceph RGW (s3://): op counts
# within a binomial band of the weights, no error and no 404 (the servers' own logs), per-op bytes exact, the rows
# adding up to the total, the live set equal to what the server lists, MPI ranks on disjoint names, cleanup.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T" # nginx's workers run as nobody
nginx_dav web "access_log $T/web/access.log;"
URL=http://127.0.0.1:$DAV_PORT
S=$((4 * 1024))
op() { jq -c "[.summary.ops[] | select(.op == \"$2\")][0] | $3" "$T/$1/result.json"; }
# binomial RUN OP P: the op's count lies within 5 standard deviations of total x P (a fair draw fails this
# about once in 10^6 runs; a wrong weight by more than a few percent of a thousand draws fails it surely).
binomial() {
    local n c
    n=$(jq .summary.total.requests "$T/$1/result.json")
    c=$(op "$1" "$2" .requests)
    python3 -c "import math,sys; n,c,p=$n,$c,$3; s=math.sqrt(n*p*(1-p)); sys.exit(0 if abs(c-n*p) <= 5*s else 1)" ||
        fail "$1: $2 count $c out of $n is not within 5 sigma of p=$3"
    ok "$1: $2 $c of $n requests (p=$3)"
}
# consistent RUN: no error at all; per-op rows add up to the total; GET bytes = GETs x size; PUT bytes = PUTs x size.
consistent() {
    assert_eq "$1: errors" 0 "$(jq .summary.total.errors.total "$T/$1/result.json")"
    assert_jq "$T/$1/result.json" '([.summary.ops[].requests] | add) == .summary.total.requests and
        ([.summary.ops[].bytes] | add) == .summary.total.bytes' "$1: the op rows add up to the total"
    assert_eq "$1: GET bytes" $(($(op "$1" GET .requests) * S)) "$(op "$1" GET .bytes)"
    assert_eq "$1: PUT bytes" $(($(op "$1" PUT .requests) * S)) "$(op "$1" PUT .bytes)"
    assert_jq "$T/$1/result.json" '[.summary.ops[] | select(.op == "DELETE" or .op == "HEAD") | .bytes] == [0, 0]' \
        "$1: DELETE and HEAD move no bytes"
}
dav_files() { curl -fsS "$URL/dav/$1/" | jq '[.[] | select(.type == "file")] | length'; }

# 1. http, warp's default mix, 2 threads x 4 in flight, 1,000 requests over 64 objects, kept.
"$RB" load mixed "$URL/dav/a" --objects 64 --size 4k -t 2 -c 4 --count 1000 --keep --out "$T/h1" >/dev/null 2>&1
assert_eq "h1: total requests (--count)" 1000 "$(jq .summary.total.requests "$T/h1/result.json")"
assert_eq "h1: prepare PUTs" 64 "$(jq .summary.prepare.objects "$T/h1/result.json")"
binomial h1 GET 0.45
binomial h1 PUT 0.15
binomial h1 DELETE 0.10
binomial h1 HEAD 0.30
consistent h1
# --keep writes names the user keeps: one HEAD per name first finds none there (64 404s), then no 404 at all.
assert_eq "h1: 404s in nginx's log (the look-up before the prepare)" 64 "$(grep -c '" 404 ' "$T/web/access.log" || true)"
assert_eq "h1: HEAD 404s on a/" 64 "$(grep -c '"HEAD /dav/a/obj-[0-9]* HTTP/1.1" 404 ' "$T/web/access.log" || true)"
assert_eq "h1: live set = files nginx lists" "$(jq .summary.live_objects "$T/h1/result.json")" "$(dav_files a)"
assert_jq "$T/h1/result.json" '.summary.cleanup.kept == true and .summary.cleanup.written == .summary.live_objects' \
    "h1: --keep keeps what the run wrote"
assert_jq "$T/h1/result.json" '[.phases[].name] == ["prepare", "mixed"] and .phases[1].op == "MIXED"
    and .phases[1].count == 1000' "h1: phases prepare and mixed"

# 2. A skewed mix without STAT, 2 MPI ranks on disjoint names for 3 s, then cleanup: nothing left.
rb_mpirun 2 "$RB" load mixed "$URL/dav/b" --objects 40 --size 4k -c 4 --duration 3s --mix get=20,put=50,delete=30 \
    --out "$T/h2" >/dev/null 2>&1
binomial h2 GET 0.2
binomial h2 PUT 0.5
binomial h2 DELETE 0.3
assert_jq "$T/h2/result.json" '[.summary.ops[].op] == ["GET", "PUT", "DELETE"]' "h2: rows of the ops drawn only"
assert_eq "h2: errors" 0 "$(jq .summary.total.errors.total "$T/h2/result.json")"
assert_eq "h2: 404s in nginx's log (h1's look-up only)" 64 "$(grep -c '" 404 ' "$T/web/access.log" || true)"
assert_jq "$T/h2/result.json" '.summary.cleanup.kept == false and .summary.cleanup.failed == 0 and
    .summary.cleanup.deleted == .summary.live_objects and .summary.live_unknown == 0' "h2: cleanup deleted the live set"
assert_eq "h2: files left" 0 "$(dav_files b)"

# 3. s3:// on Ceph RGW: the default mix for 3 s, kept; the live set equals RGW's listing; then --no-prepare over
#    the objects left, and its cleanup leaves the objects it did not write alone.
rgw_up
rgw_bucket mixed
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE || true
keys() { rgw_keys mixed "$1"; }
"$RB" load mixed s3://mixed/s/ --endpoint "$RGW_ENDPOINT" --objects 48 --size 4k -c 8 --duration 3s --keep \
    --out "$T/s1" >/dev/null 2>&1
binomial s1 GET 0.45
binomial s1 PUT 0.15
binomial s1 DELETE 0.10
binomial s1 HEAD 0.30
consistent s1
rgw_assert_seen "s1: 404s in RGW's log" 0 '[A-Z]+ /mixed/s/obj-[0-9]{8}' 404
live=$(jq .summary.live_objects "$T/s1/result.json")
assert_eq "s1: live set = keys RGW lists" "$live" "$(keys s/)"
"$RB" report "$T/s1" >"$T/s1.report"
grep -Eq '^\| HEAD +\| mixed \| +[0-9]+ \| +0 \|' "$T/s1.report" && grep -q 's3://mixed/s/: 1 rank' "$T/s1.report" ||
    { cat "$T/s1.report"; fail "railbench report does not show the mixed run's rows"; }
ok "railbench report shows a row per op"
"$RB" load delete s3://mixed --endpoint "$RGW_ENDPOINT" --prefix s/ --out "$T/d1" --quiet >/dev/null 2>"$T/d1.err" || { cat "$T/d1.err"; fail "delete s/"; }
"$RB" load put s3://mixed/n/ --endpoint "$RGW_ENDPOINT" --objects 20 --size 4k --keep --out "$T/n0" --quiet \
    >/dev/null 2>&1
"$RB" load mixed s3://mixed/n/ --endpoint "$RGW_ENDPOINT" --objects 20 --size 4k -c 2 --count 200 --no-prepare \
    --mix get=50,stat=50 --out "$T/n1" >/dev/null 2>&1
assert_jq "$T/n1/result.json" '(.summary | has("prepare") | not) and .summary.total.requests == 200 and
    .summary.total.errors.total == 0 and .summary.cleanup.written == 0' "--no-prepare: reads existing objects, writes none"
assert_eq "--no-prepare: the objects stay" 20 "$(keys n/)"

# A mix that only deletes runs dry after the 16 objects are gone: 16 DELETEs, not the 100 asked for; a failed
# check (live_set), exit 1.
assert_exit 1 "a mix that runs out of objects" "$RB" load mixed "$URL/dav/dry" --objects 16 --size 1k -c 4 --count 100 \
    --mix delete=1 --quiet --out "$T/dry"
assert_jq "$T/dry/result.json" '.summary.total.requests == 16 and .summary.live_objects == 0 and
    ([.checks[] | select(.name == "live_set")][0].passed == false)' "ran dry: 16 DELETEs, check live_set failed"
assert_eq "files left by the dry run" 0 "$(dav_files dry)"

# 4. Bad input: one line naming the bad item, exit 2.
assert_exit 2 "unknown op in --mix" "$RB" load mixed "$URL/dav/x" --objects 4 --mix get=45,list=5
assert_stderr_line '--mix get=45,list=5: bad item "list=5"'
assert_exit 2 "weight not a number" "$RB" load mixed "$URL/dav/x" --objects 4 --mix get=lots
assert_stderr_line 'bad item "get=lots"'
assert_exit 2 "op twice" "$RB" load mixed "$URL/dav/x" --objects 4 --mix get=1,get=2
assert_stderr_line 'bad item "get=2" \(given twice\)'
assert_exit 2 "all weights 0" "$RB" load mixed "$URL/dav/x" --objects 4 --mix get=0,put=0
assert_stderr_line '--mix get=0,put=0: every weight is 0'
assert_exit 2 "no working set" "$RB" load mixed "$URL/dav/x"
assert_stderr_line 'load mixed: give --objects N'
echo "PASS loader_mixed"
