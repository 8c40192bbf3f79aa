#!/usr/bin/env bash
# needs: -
# railbench load put|get against nginx: exact byte/object counts, WebDAV PUT then verified GET, ranges, errors, bad input.
# Runs twice, once per request engine (RB_ENGINE=curl or native runs one of them).
set -euo pipefail
if [ -z "${RB_ENGINE:-}" ]; then
    for e in curl native; do RB_ENGINE=$e bash "$0" "$@" || exit 1; done
    exit 0
fi
. "$(dirname "$0")/../lib.sh"
echo "engine: $RB_ENGINE"
ENG=(--engine "$RB_ENGINE") # on every GET (whole and ranged), PUT, DELETE and HEAD
chmod 755 "$T" # nginx's workers run as nobody
PORT=$(free_port)
W=$T/www
mkdir -p "$W/small" "$W/large" "$W/dav"
chmod 777 "$W/dav"
for i in $(seq 0 19); do head -c 1024 /dev/urandom >"$W/small/obj-$(printf %08d "$i")"; done
for i in $(seq 0 7); do head -c 1048576 /dev/urandom >"$W/large/obj-$(printf %08d "$i")"; done
nginx_start web "server {
        listen 127.0.0.1:$PORT;
        root $W;
        location / { autoindex on; autoindex_format json; }
        location /small/ { autoindex on; autoindex_format json; add_header X-Cache-Status HIT; }
        location /dav/ { dav_methods PUT; create_full_put_path on; client_max_body_size 0;
                         autoindex on; autoindex_format json; }
    }"
wait_port "$PORT"
URL=http://127.0.0.1:$PORT
summary() { jq -c ".summary.ops[0] | $2" "$T/$1/result.json"; }

# 1. 1 KiB objects found by listing (nginx autoindex JSON), 3 epochs: every object exactly 3 times.
"$RB" load get "${ENG[@]}" "$URL/small" --pattern epoch --epochs 3 -t 2 -c 4 --out "$T/g1" --quiet >/dev/null
assert_eq "1 KiB: requests" 60 "$(summary g1 .requests)"
assert_eq "1 KiB: bytes" $((60 * 1024)) "$(summary g1 .bytes)"
assert_eq "1 KiB: errors" 0 "$(summary g1 .errors.total)"
assert_jq "$T/g1/result.json" '.phases[0].count == 60 and .phases[0].latency_hist.count == 60' "phase record and histogram agree"
assert_eq "engine recorded" "\"$RB_ENGINE\"" "$(jq -c .summary.engine "$T/g1/result.json")"
assert_jq "$T/g1/result.json" '.summary.ops[0].latency_ns.p50 > 0 and .summary.ops[0].ttfb_ns.p50 <= .summary.ops[0].latency_ns.p99' "latency and TTFB recorded"
n=$(jq -s 'map(select(.phase == "get") | .count) | add' "$T/g1/intervals.jsonl")
assert_eq "sum of interval counts" 60 "$n"
# load list on this engine: the autoindex page, 3 listings on one connection each; a directory without an index is 404.
"$RB" load list "${ENG[@]}" "$URL/small" --count 3 --out "$T/l1" --quiet >/dev/null
assert_eq "list: listings, pages, names, errors" '[3,3,60,0]' "$(summary l1 '[.listings, .pages, .names, .errors.total]')"
rc=0; "$RB" load list "${ENG[@]}" "$URL/nothing-here" --out "$T/l2" --quiet >/dev/null 2>&1 || rc=$?
assert_eq "list of a missing index: exit (a failed check)" 1 "$rc"
assert_eq "list of a missing index: requests, http_4xx" '[1,1]' "$(summary l2 '[.requests, .errors.http_4xx]')"
grep -q '^| request |' "$T/g1/table.md" || fail "table.md has no latency row"
ok "table.md written"

# 2. 1 MiB objects by generated names, sequential, 20 requests: 20 MiB exactly.
"$RB" load get "${ENG[@]}" "$URL/large" --objects 8 --pattern sequential --count 20 -c 2 --out "$T/g2" --quiet >/dev/null
assert_eq "1 MiB: bytes" $((20 * 1048576)) "$(summary g2 .bytes)"
assert_eq "1 MiB: objects" 20 "$(summary g2 .objects)"

# 3. PUT through WebDAV (sizes 4 KiB..64 KiB, seeded), then GET --verify finds every byte as written.
"$RB" load put "${ENG[@]}" "$URL/dav/set" --keep --objects 40 --min-size 4k --max-size 64k -t 2 -c 4 --seed 7 --out "$T/p1" --quiet >/dev/null
disk=$(find "$W/dav/set" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
assert_eq "PUT: files on disk" 40 "$(find "$W/dav/set" -type f | wc -l)"
assert_eq "PUT: bytes reported = bytes on disk" "$disk" "$(summary p1 .bytes)"
[ "$(find "$W/dav/set" -type f -printf '%s\n' | sort -u | wc -l)" -gt 10 ] || fail "sizes are not spread over the range"
"$RB" load get "${ENG[@]}" "$URL/dav/set" --pattern epoch --verify --seed 7 --min-size 4k --max-size 64k --out "$T/v1" --quiet >/dev/null
assert_eq "verified GET: errors" 0 "$(summary v1 .errors.total)"
assert_eq "verified GET: bytes" "$disk" "$(summary v1 .bytes)"
# The fetcher API (batches of GETs from the caller's thread, as the training emulation reads): 2 passes of 40.
out=$("$ROOT/build/tests/loader_fetch" "$URL/dav/set" 40 7 6 4 "$RB_ENGINE")
assert_eq "fetcher: requests, errors, bytes" "80 0 $((2 * disk))" "$(jq -r '"\(.requests) \(.errors) \(.bytes)"' <<<"$out")"
assert_eq "fetcher: calls of 6 names" 14 "$(jq .calls <<<"$out")"
# The payload is not zeros: nothing compresses it.
[ "$(gzip -c "$W/dav/set/obj-00000000" | wc -c)" -gt "$(stat -c %s "$W/dav/set/obj-00000000")" ] || fail "payload compresses"
ok "payload is incompressible"

# 4. Corruption and truncation are caught: one flipped byte (checksum), one short object (short_read).
printf 'XY' | dd of="$W/dav/set/obj-00000003" bs=1 seek=1000 conv=notrunc status=none
truncate -s 100 "$W/dav/set/obj-00000005"
# Under the default error policy (--max-error-rate 0) these runs exit 1 with the check error_rate failed.
assert_exit 1 "corrupted and truncated objects" "$RB" load get "${ENG[@]}" "$URL/dav/set" --pattern epoch --verify --seed 7 \
    --min-size 4k --max-size 64k --out "$T/v2" --quiet
cp "$T/stderr" "$T/v2.err"
assert_eq "corrupted object: checksum errors" 1 "$(summary v2 .errors.checksum)"
assert_eq "truncated object: short reads" 1 "$(summary v2 .errors.short_read)"
assert_eq "the other objects" 38 "$(summary v2 .objects)"
grep -q 'obj-00000003.*checksum' "$T/v2.err" || fail "no message naming the corrupted object"
ok "message names the corrupted object"
# A wrong seed makes every object mismatch.
assert_exit 1 "wrong seed" "$RB" load get "${ENG[@]}" "$URL/dav/set" --objects 40 --prefix obj- --pattern epoch --verify --seed 8 \
    --out "$T/v3" --quiet
assert_eq "wrong seed: checksum errors" 40 "$(summary v3 .errors.checksum)"
assert_jq "$T/v3/result.json" '.checks[] | select(.name == "error_rate") | .passed == false' "wrong seed: error_rate failed"

# Cache status by response header (the tiers' HIT/MISS): every /small/ response says HIT, /large/ says nothing.
"$RB" load get "${ENG[@]}" "$URL/small" --objects 20 --count 25 --cache-header x-cache-status --out "$T/c1" --quiet >/dev/null
assert_eq "cache hits counted" 25 "$(summary c1 .extra.cache_hit)"
# A header the server never sends is a failed check naming it (as in load tiers), not silence.
assert_exit 1 "cache header never sent" "$RB" load get "${ENG[@]}" "$URL/large" --objects 8 --count 5 --cache-header X-Cache-Status \
    --out "$T/c2" --quiet
assert_eq "no cache header: absent" "5 0" "$(summary c2 '"\(.extra.cache_absent) \(.extra.cache_hit)"' | tr -d '"')"
assert_jq "$T/c2/result.json" '.checks[] | select(.name == "cache_header") | .passed == false' "cache_header check failed"
assert_jq "$T/c1/result.json" '.phases[0].extra.cache_hit == 25' "cache counters in the phase record"

# 5. Ranges: 200 bytes from offset 100 of each 1 KiB object.
"$RB" load get "${ENG[@]}" "$URL/small" --objects 20 --range 100:200 --count 30 --out "$T/r1" --quiet >/dev/null
assert_eq "range: bytes" $((30 * 200)) "$(summary r1 .bytes)"
"$RB" load get "${ENG[@]}" "$URL/small" --objects 20 --size 1k --random-range 100 --count 30 --out "$T/r2" --quiet >/dev/null
assert_eq "random range: bytes" $((30 * 100)) "$(summary r2 .bytes)"

# 6. 404s counted by class; --max-error-rate turns them into exit 1; --log-requests has one line each.
assert_exit 1 "404s over --max-error-rate" "$RB" load get "${ENG[@]}" "$URL/nothing" --objects 5 --count 10 --max-error-rate 10 \
    --log-requests "$T/req.csv" --out "$T/e1" --quiet
assert_eq "404s: http_4xx" 10 "$(summary e1 .errors.http_4xx)"
assert_jq "$T/e1/result.json" '.checks[] | select(.name == "error_rate") | .passed == false' "error_rate check failed"
assert_eq "request log lines (header + 10)" 11 "$(wc -l <"$T/req.csv")"
assert_eq "request log: 404 statuses" 10 "$(awk -F, 'NR > 1 && $9 == 404 && $10 == "http_4xx"' "$T/req.csv" | wc -l)"

# 6b. A target that cannot succeed: 40 names nobody wrote, --duration 60s. Every request is a 404, so the run stops
# at the first tick (RB_LOAD_HOPELESS_REQUESTS) with one error line and exit 3, not after 60 s of 404s.
start=$SECONDS
rc=0; "$RB" load get "${ENG[@]}" "$URL/nothing" --objects 40 --size 1k --duration 60s --out "$T/e2" --quiet \
    >/dev/null 2>"$T/e2.err" || rc=$?
took=$((SECONDS - start))
assert_eq "hopeless GET: exit" 3 "$rc"
[ "$took" -lt 30 ] || fail "hopeless GET: ran ${took} s of its 60 s"
grep -q '^railbench: error: get: all of the first [0-9]* requests (.*) were answered 403 or 404' "$T/e2.err" ||
    { cat "$T/e2.err"; fail "hopeless GET: no error line"; }
assert_jq "$T/e2/result.json" '.summary.ops[0].requests >= 16 and .summary.ops[0].errors.http_4xx == .summary.ops[0].requests
    and .summary.ops[0].objects == 0' "hopeless GET: at least 16 requests, every one a 404, in the record"
# --max-error-rate 100 says errors are expected: the same load runs its course (--count 40).
"$RB" load get "${ENG[@]}" "$URL/nothing" --objects 40 --size 1k --count 40 --max-error-rate 100 --out "$T/e3" --quiet \
    >/dev/null 2>&1
assert_eq "404s accepted by --max-error-rate 100: requests" 40 "$(summary e3 .requests)"

# 7. Bad input: one line, exit 2 (usage) or 3 (runtime).
assert_exit 2 "malformed URL" "$RB" load get "${ENG[@]}" "http//127.0.0.1:$PORT/x" --objects 1
assert_stderr_line 'expected http://HOST'
assert_exit 2 "unknown scheme" "$RB" load get "${ENG[@]}" "ftp://127.0.0.1/x" --objects 1
assert_stderr_line 'unknown scheme "ftp"'
assert_exit 2 "bad port" "$RB" load get "${ENG[@]}" "http://127.0.0.1:99999/x" --objects 1
assert_stderr_line 'bad host or port'
assert_exit 2 "bad range" "$RB" load get "$URL/small" --objects 1 --range 10
assert_stderr_line 'range "10": expected OFF:LEN'
assert_exit 2 "zero threads" "$RB" load get "${ENG[@]}" "$URL/small" --objects 1 --threads 0
assert_stderr_line 'threads 0: expected 1 to'
assert_exit 2 "epochs without epoch pattern" "$RB" load get "${ENG[@]}" "$URL/small" --objects 1 --epochs 2
assert_stderr_line 'epochs 2: needs --pattern epoch'
# A put deletes what it wrote unless --keep; /dav/ here allows PUT but not DELETE (405), so the cleanup fails: a
# named failed check, exit 1, and one error line saying what stays (which is what the directory holds).
assert_exit 1 "put whose cleanup the server refuses" "$RB" load put "${ENG[@]}" "$URL/dav/cl" --objects 3 --size 1k --quiet \
    --out "$T/cl"
grep -q 'cleanup: 3 of 3 objects this run wrote could not be deleted and stay under http://127.0.0.1:[0-9]*/dav/cl (prefix "rb-[0-9T]*Z-[0-9a-f]*-obj-")' \
    "$T/stderr" || { cat "$T/stderr"; fail "no cleanup error line"; }
assert_jq "$T/cl/result.json" '([.checks[] | select(.name == "cleanup")][0].passed == false) and
    .summary.cleanup.failed == 3 and .summary.left_behind.objects == 3' "cleanup check failed, 3 left behind"
assert_eq "files the failed cleanup left" 3 "$(find "$W/dav/cl" -type f | wc -l)"
assert_exit 2 "put without objects" "$RB" load put "$URL/dav/x"
assert_stderr_line 'give --objects N'
assert_exit 2 "bad size" "$RB" load put "$URL/dav/x" --objects 1 --size 12parsecs
assert_stderr_line 'size'
dead=$(free_port)
assert_exit 3 "refused connection" "$RB" load get "${ENG[@]}" "http://127.0.0.1:$dead/x" --objects 1 --out "$T/dead"
assert_stderr_line "cannot connect to endpoint http://127.0.0.1:$dead"
assert_exit 3 "listing a path without an index" "$RB" load get "${ENG[@]}" "$URL/nothing" --out "$T/noidx"
assert_stderr_line 'listing failed: HTTP 404'

# 8. SIGINT mid-run: the result is still written with what was measured.
bg "$RB" load get "${ENG[@]}" "$URL/small" --objects 20 --duration 60s --interval 200ms -c 2 --out "$T/int" --quiet >/dev/null
pid=$LAST_PID
for _ in $(seq 100); do [ -s "$T/int/intervals.jsonl" ] && break; sleep 0.1; done
sleep 0.3
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
assert_eq "exit status after SIGINT" 1 "$rc"
assert_jq "$T/int/result.json" '.checks[] | select(.name == "completed") | .passed == false' "interrupted run recorded"
assert_jq "$T/int/result.json" '.summary.ops[0].requests > 0 and .summary.ops[0].bytes == .summary.ops[0].objects * 1024' "measured requests kept"
