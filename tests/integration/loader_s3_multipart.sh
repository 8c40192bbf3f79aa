#!/usr/bin/env bash
# needs: ceph
# railbench load put multipart against Ceph RGW: parts and objects counted exactly, ETags with the -N suffix,
# payloads verified by get --verify, the threshold, a failed upload aborted (an nginx in front refuses bodies
# over 6 MiB with 413, as a load balancer's body limit does) and no upload left in progress (signed
# ListMultipartUploads), a timed put that finishes its uploads under way, and bad input. The counted runs (1, 4,
# 5) run on both engines (--engine curl and native) with the same counts, RGW's log showing each engine's
# initiates, parts, completions and aborts; the others on --engine auto, which picks native.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T"
rgw_up
rgw_bucket mpu
EP=$RGW_ENDPOINT
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE || true
MIB=1048576
row() { jq -c "[.summary.ops[] | select(.op == \"$2\")][0] | $3" "$T/$1/result.json"; }
# s3 QUERY-OR-PATH [curl args]: one signed request to RGW with curl (the keys go through --user, never logged).
s3() {
    local what=$1; shift
    curl -sS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@" "$EP/mpu$what"
}
# in_progress: how many multipart uploads RGW lists in progress in the bucket (ListMultipartUploads).
in_progress() {
    local body
    body=$(s3 '?uploads=')
    grep -q '<ListMultipartUploadsResult' <<<"$body" || fail "ListMultipartUploads: $body"
    grep -o '<Upload>' <<<"$body" | wc -l
}
# listing PREFIX: "size" lines of the objects under PREFIX (one ListObjectsV2 page, up to 1,000).
listing() {
    local body
    body=$(s3 "?list-type=2&prefix=${1//\//%2F}")
    grep -q '<ListBucketResult' <<<"$body" || fail "listing $1: $body"
    grep -o '<Size>[0-9]*</Size>' <<<"$body" | tr -dc '0-9\n' || true
}
# rb NAME ARGS...: railbench ARGS --out $T/NAME; a failure shows its stderr and fails the test.
rb() {
    local name=$1; shift
    "$RB" "$@" --out "$T/$name" >/dev/null 2>"$T/$name.err" || { cat "$T/$name.err" >&2; fail "$name: railbench failed"; }
}
etag() { s3 "/$1" -I | tr -d '\r' | sed -n 's/^[Ee][Tt]ag: *//p'; }

# 1. 4 objects of 12 MiB in 5 MiB parts (5 + 5 + 2), 4 in flight: 4 initiates, 12 part PUTs, 4 completions; on
#    each engine under its own prefix (a-curl/, a-native/), then on auto (a-auto/), which picks native.
for e in curl native auto; do
    rb "p1-$e" load put "s3://mpu/a-$e/" --endpoint "$EP" --keep --objects 4 --size 12M --part-size 5M -c 4 --engine "$e"
    assert_eq "put ($e): objects" 4 "$(row "p1-$e" PUT .objects)"
    assert_eq "put ($e): bytes" $((4 * 12 * MIB)) "$(row "p1-$e" PUT .bytes)"
    assert_eq "put ($e): errors" 0 "$(row "p1-$e" PUT .errors.total)"
    assert_eq "parts ($e): requests" 12 "$(row "p1-$e" 'PUT part' .requests)"
    assert_eq "parts ($e): bytes" $((4 * 12 * MIB)) "$(row "p1-$e" 'PUT part' .bytes)"
    assert_eq "parts ($e): errors" 0 "$(row "p1-$e" 'PUT part' .errors.total)"
    assert_jq "$T/p1-$e/result.json" '.phases[0].parts.count == 12 and .phases[0].parts.latency_hist.count == 12
        and .phases[0].latency_hist.count == 4' "phase record ($e): 4 object latencies, 12 part latencies"
    assert_jq "$T/p1-$e/result.json" '(.summary.ops[0].latency_ns.p50 >= .summary.ops[1].latency_ns.p50)' \
        "an object's PUT latency (the whole upload) is not below its parts' ($e)"
    rgw_assert_seen "initiates RGW answered 200 ($e)" 4 "POST /mpu/a-$e/obj-[0-9]{8}\\?uploads=" 200
    rgw_assert_seen "part PUTs RGW answered 200 ($e)" 12 "PUT /mpu/a-$e/obj-[0-9]{8}\\?partNumber=[123]&uploadId=[^ ]+" 200
    rgw_assert_seen "completions RGW answered 200 ($e)" 4 "POST /mpu/a-$e/obj-[0-9]{8}\\?uploadId=[^ ]+" 200
    for i in 0 3; do
        t=$(etag "a-$e/obj-0000000$i")
        [[ $t =~ ^\"[0-9a-f]{32}-3\"$ ]] || fail "ETag of a-$e/obj-0000000$i: $t, expected a multipart ETag ending -3"
        ok "ETag of a-$e/obj-0000000$i: $t"
    done
    assert_eq "sizes RGW lists ($e)" "$(printf '%s\n' $((12 * MIB)) $((12 * MIB)) $((12 * MIB)) $((12 * MIB)))" \
        "$(listing "a-$e/")"
    rb "g1-$e" load get "s3://mpu/a-$e/" --endpoint "$EP" --objects 4 --size 12M --verify --pattern epoch -c 4
    assert_eq "get --verify ($e): requests" 4 "$(row "g1-$e" GET .requests)"
    assert_eq "get --verify ($e): bytes" $((4 * 12 * MIB)) "$(row "g1-$e" GET .bytes)"
    assert_eq "get --verify ($e): #wrong (checksum)" 0 "$(row "g1-$e" GET .errors.checksum)"
    assert_eq "get --verify ($e): errors" 0 "$(row "g1-$e" GET .errors.total)"
done
assert_eq "engine auto picks for multipart" native "$(jq -r .summary.engine "$T/p1-auto/result.json")"
assert_eq "engine native is recorded" native "$(jq -r .summary.engine "$T/p1-native/result.json")"
assert_eq "engine curl is recorded" curl "$(jq -r .summary.engine "$T/p1-curl/result.json")"
# The same counts on both engines: requests, bytes and errors of the object and the part rows.
counts() { jq -c '[.summary.ops[] | [.op, .requests, .objects, .bytes, .errors]]' "$T/$1/result.json"; }
assert_eq "put: curl's counts = native's" "$(counts p1-curl)" "$(counts p1-native)"
assert_eq "uploads in progress" 0 "$(in_progress)"

# 1b. Signed payloads (--sign-payload, native only): each part's x-amz-content-sha256 is the SHA-256 of its
#     bytes (the payload from the part's offset), the completion's of its XML; RGW checks them and takes all.
rb sp load put s3://mpu/s/ --endpoint "$EP" --keep --objects 2 --size 11M --part-size 5M -c 4 --sign-payload
assert_eq "signed parts: counts" '[["PUT",2,2,23068672,0],["PUT part",6,6,23068672,0]]' \
    "$(jq -c '[.summary.ops[] | [.op, .requests, .objects, .bytes, .errors.total]]' "$T/sp/result.json")"
rgw_assert_seen "signed completions RGW answered 200" 2 'POST /mpu/s/obj-[0-9]{8}\?uploadId=[^ ]+' 200
rb gsp load get s3://mpu/s/ --endpoint "$EP" --objects 2 --size 11M --verify --pattern epoch -c 2
assert_eq "signed parts get --verify: bytes, errors" '[23068672,0]' "$(row gsp GET '[.bytes, .errors.total]')"

# 2. The default threshold and part size (8 MiB each): 8 MiB goes up whole (no part row, a plain ETag), 9 MiB in
#    2 parts (8 + 1).
rb p2 load put s3://mpu/b/ --endpoint "$EP" --keep --objects 2 --size 8M --quiet
assert_jq "$T/p2/result.json" '(.summary.ops | length) == 1 and .summary.ops[0].objects == 2 and
    (.phases[0] | has("parts") | not)' "8 MiB at the default threshold: plain PUTs"
e=$(etag b/obj-00000000)
[[ $e =~ ^\"[0-9a-f]{32}\"$ ]] || fail "ETag of a plain PUT: $e"
ok "plain PUT ETag: $e"
rb p3 load put s3://mpu/c/ --endpoint "$EP" --keep --objects 2 --size 9M --quiet
assert_eq "9 MiB, default part size: parts" 4 "$(row p3 'PUT part' .requests)"
[[ $(etag c/obj-00000001) =~ -2\"$ ]] || fail "ETag of a 9 MiB object: $(etag c/obj-00000001), expected -2"
ok "9 MiB object: ETag ends -2"

# 3. Seeded sizes from 1 to 16 MiB, threshold 6 MiB, 5 MiB parts: the parts are sum(ceil(size / 5 MiB)) over the
#    objects above 6 MiB, computed from the sizes RGW lists; every payload verifies.
rb p4 load put s3://mpu/d/ --endpoint "$EP" --keep --objects 12 --min-size 1M --max-size 16M --multipart-threshold 6M \
    --part-size 5M -c 6 --seed 7 --quiet
mapfile -t sizes < <(listing d/)
assert_eq "objects RGW lists" 12 "${#sizes[@]}"
parts=0 big=0 total=0
for s in "${sizes[@]}"; do
    total=$((total + s))
    if [ "$s" -gt $((6 * MIB)) ]; then big=$((big + 1)); parts=$((parts + (s + 5 * MIB - 1) / (5 * MIB))); fi
done
[ "$big" -gt 0 ] && [ "$big" -lt 12 ] || fail "seed 7 should give both sides of the threshold, got $big above it"
assert_eq "mixed sizes: bytes" "$total" "$(row p4 PUT .bytes)"
assert_eq "mixed sizes: parts" "$parts" "$(row p4 'PUT part' .requests)"
rgw_assert_seen "mixed sizes: initiates" "$big" 'POST /mpu/d/obj-[0-9]{8}\?uploads=' 200
rb g4 load get s3://mpu/d/ --endpoint "$EP" --objects 12 --min-size 1M --max-size 16M --seed 7 --verify \
    --pattern epoch --quiet
assert_eq "mixed sizes get --verify: bytes" "$total" "$(row g4 GET .bytes)"
assert_eq "mixed sizes get --verify: errors" 0 "$(row g4 GET .errors.total)"

# 3b. --filelist: each listed file's size decides, not --size (1 MiB by default, below the 8 MiB threshold): the
#     12 MiB file goes up in 3 parts of 5 MiB, the 100 KiB one whole; a line without a size takes --size.
printf 'e/big %d\ne/small %d\ne/nosize\n' $((12 * MIB)) $((100 * 1024)) >"$T/files.txt"
rb p5 load put s3://mpu/ --endpoint "$EP" --keep --filelist "$T/files.txt" --part-size 5M -c 2 --quiet
assert_eq "filelist: objects" 3 "$(row p5 PUT .objects)"
assert_eq "filelist: bytes" $((12 * MIB + 100 * 1024 + MIB)) "$(row p5 PUT .bytes)"
assert_eq "filelist: parts (the 12 MiB file only)" 3 "$(row p5 'PUT part' .requests)"
rgw_assert_seen "filelist: one initiate" 1 'POST /mpu/e/big\?uploads=' 200
[[ $(etag e/big) =~ ^\"[0-9a-f]{32}-3\"$ ]] || fail "ETag of e/big: $(etag e/big), expected -3"
[[ $(etag e/small) =~ ^\"[0-9a-f]{32}\"$ ]] || fail "ETag of e/small: $(etag e/small), expected a plain PUT's"
ok "filelist: e/big in 3 parts, e/small whole"
assert_eq "filelist: sizes RGW lists" "$(printf '%s\n' $((12 * MIB)) $MIB $((100 * 1024)))" "$(listing e/)"
#     and the list's largest size is the one S3's part limit is checked against (exit 2 before any request).
printf 'g/huge %d\n' $((60 * 1024 * MIB)) >"$T/huge.txt"
assert_exit 2 "a listed file of more than 10,000 parts" "$RB" load put s3://mpu/ --endpoint "$EP" --filelist "$T/huge.txt" \
    --part-size 5M --out "$T/h1"
assert_stderr_line 'would take 12288 parts, S3 allows at most 10000'
assert_eq "objects under g/" "" "$(listing g/)"

# 4. A failed upload is aborted: behind an nginx that refuses bodies over 6 MiB, 20 MiB objects in 8 MiB parts
#    initiate fine and fail at their first part (413); one in flight, so each object sends exactly one part.
PX=$(free_port)
nginx_start px "server { listen 127.0.0.1:$PX; client_max_body_size 6m;
    location / { proxy_pass http://127.0.0.1:$RGW_PORT; proxy_set_header Host \$http_host;
                 proxy_request_buffering off; proxy_http_version 1.1; proxy_set_header Connection \"\"; } }"
wait_port "$PX"
for e in curl native; do
    assert_exit 1 "put through a 6 MiB body limit ($e)" "$RB" load put "s3://mpu/f-$e/" --endpoint "http://127.0.0.1:$PX" \
        --objects 3 --size 20M --part-size 8M -c 1 --engine "$e" --out "$T/f1-$e"
    assert_eq "failed put ($e): objects" 0 "$(row "f1-$e" PUT .objects)"
    assert_eq "failed put ($e): http_4xx" 3 "$(row "f1-$e" PUT .errors.http_4xx)"
    assert_eq "failed put ($e): part requests" 3 "$(row "f1-$e" 'PUT part' .requests)"
    assert_eq "failed put ($e): uploads aborted" 3 "$(row "f1-$e" 'PUT part' .multipart.uploads_aborted)"
    assert_eq "failed put ($e): aborts failed" 0 "$(row "f1-$e" 'PUT part' .multipart.aborts_failed)"
    assert_jq "$T/f1-$e/result.json" '[.checks[] | select(.name == "multipart_abort")][0].passed == true' \
        "abort check passed ($e)"
    rgw_assert_seen "aborts RGW answered 204 ($e)" 3 "DELETE /mpu/f-$e/rb-[^ ?]*obj-[0-9]{8}\\?uploadId=[^ ]+" 204
    assert_eq "uploads in progress after the failed put ($e)" 0 "$(in_progress)"
    assert_eq "objects under f-$e/" "" "$(listing "f-$e/")"
done
jq -c '[.summary.ops[] | [.op, .requests, .bytes, .errors, .multipart]]' "$T/f1-curl/result.json" >"$T/f1-curl.counts"
jq -c '[.summary.ops[] | [.op, .requests, .bytes, .errors, .multipart]]' "$T/f1-native/result.json" >"$T/f1-native.counts"
assert_eq "failed put: curl's counts and error classes = native's" "$(cat "$T/f1-curl.counts")" "$(cat "$T/f1-native.counts")"

# 5. A timed put stops taking new objects at 1 s and finishes the uploads under way: every object it counts is
#    in the bucket whole, no error, nothing in progress.
for e in curl native; do
    rb "t1-$e" load put "s3://mpu/t-$e/" --endpoint "$EP" --keep --objects 500 --size 12M --part-size 5M -c 6 \
        --duration 1s --engine "$e" --quiet
    n=$(row "t1-$e" PUT .objects)
    [ "$n" -gt 0 ] && [ "$n" -lt 500 ] || fail "timed put ($e): $n objects, expected some but not all 500"
    assert_eq "timed put ($e): errors" 0 "$(row "t1-$e" PUT .errors.total)"
    assert_eq "timed put ($e): parts" $((3 * n)) "$(row "t1-$e" 'PUT part' .requests)"
    assert_eq "timed put ($e): objects RGW lists" "$n" "$(listing "t-$e/" | grep -c "^$((12 * MIB))$")"
    assert_eq "uploads in progress after the timed put ($e)" 0 "$(in_progress)"
done

# 5b. SIGINT 2 s into a put of 200 such objects (no --keep): no new object starts, the uploads under way finish
#     within the drain or are aborted, cleanup is skipped after the signal (and says so); nothing stays in
#     progress, and RGW holds what summary.left_behind says was written.
"$RB" load put s3://mpu/i/ --endpoint "$EP" --objects 200 --size 12M --part-size 5M -c 6 --out "$T/i1" --quiet \
    >/dev/null 2>"$T/i1.err" &
ipid=$!
sleep 2
kill -INT "$ipid"
wait "$ipid" || true
grep -q 'interrupted: no cleanup; the [0-9]* objects this run wrote stay under s3://mpu/i/' "$T/i1.err" ||
    { cat "$T/i1.err"; fail "an interrupted put does not say that it did not clean up"; }
assert_eq "uploads in progress after SIGINT" 0 "$(in_progress)"
left=$(jq .summary.left_behind.objects "$T/i1/result.json")
most=$(jq .summary.left_behind.objects_max "$T/i1/result.json")
inbucket=$(listing i/ | grep -c . || true)
[ "$left" -le "$inbucket" ] && [ "$inbucket" -le "$most" ] && [ "$left" -lt 200 ] ||
    fail "interrupted multipart put: left_behind $left..$most, $inbucket in the bucket"
ok "interrupted multipart put: left_behind $left..$most, $inbucket in the bucket"
assert_jq "$T/i1/result.json" '.summary.cleanup.skipped == true' "cleanup skipped after the signal"

# 6. Without --keep a put deletes what it wrote at the end, multipart objects as the others (phase cleanup):
#    seeded sizes of 1 to 12 MiB, threshold 6 MiB; nothing is left under the prefix and no upload in progress.
"$RB" load put s3://mpu/k/ --endpoint "$EP" --objects 6 --min-size 1M --max-size 12M --multipart-threshold 6M \
    --part-size 5M -c 4 --out "$T/k1" >/dev/null 2>"$T/k1.err"
grep -q 'deleted 6 objects this run wrote (--keep keeps them)' "$T/k1.err" || { cat "$T/k1.err"; fail "no cleanup line"; }
assert_jq "$T/k1/result.json" '.summary.cleanup == {"written": 6, "deleted": 6, "failed": 0, "kept": false,
    "skipped": false} and .summary.left_behind.objects == 0' "cleanup: 6 written, 6 deleted"
assert_jq "$T/k1/result.json" '[.phases[] | {name, op, count}] | .[1] == {"name": "cleanup", "op": "DELETE", "count": 6}' \
    "cleanup is a DELETE phase of 6 requests"
assert_eq "objects left under k/" "" "$(listing k/)"
assert_eq "uploads in progress after cleanup" 0 "$(in_progress)"

# 7. Bad input: one line, exit 2.
assert_exit 2 "part size below 5 MiB" "$RB" load put s3://mpu/x/ --endpoint "$EP" --objects 1 --size 12M --part-size 4M
assert_stderr_line '--part-size 4194304: S3 parts are at least 5 MiB'
assert_exit 2 "more than 10,000 parts" "$RB" load put s3://mpu/x/ --endpoint "$EP" --objects 1 --size 60G --part-size 5M
assert_stderr_line 'would take 12288 parts, S3 allows at most 10000'
assert_exit 2 "multipart on http://" "$RB" load put "http://127.0.0.1:$PX/x/" --objects 1 --part-size 8M
assert_stderr_line 'multipart uploads are for PUTs to s3:// targets; http://127.0.0.1:[0-9]+/x/ is not one'
assert_exit 2 "multipart with --rate" "$RB" load put s3://mpu/x/ --endpoint "$EP" --objects 1 --size 12M --rate 10
assert_stderr_line '--rate with multipart uploads'
echo "PASS loader_s3_multipart"
