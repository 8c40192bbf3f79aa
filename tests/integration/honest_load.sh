#!/usr/bin/env bash
# needs: -
# Honest results (issue 15) for the object loads, against tests/servers/peer.py: a run that failed, stalled or
# measured the wrong thing says so. Exit status, check names, null figures and exact counts
# (requests = successes + every error class, in-flight-at-end included).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
PEER=$ROOT/tests/servers/peer.py
S() { jq -c ".summary.ops[0] | $2" "$T/$1/result.json"; }
check() { jq -r --arg n "$2" '[.checks[] | select(.name == $n) | .passed] | map(tostring) | join(",")' "$T/$1/result.json"; }
# counts_add_up RUN: requests = objects (successes) + the sum of every error class, and errors.total is that sum.
counts_add_up() {
    assert_jq "$T/$1/result.json" '.summary.ops[0] as $o | ($o.errors | del(.total) | add) as $e
        | ($o.requests == $o.objects + $e) and ($o.errors.total == $e)' "$1: requests = successes + every error class"
}

P=$(free_port)
bg python3 "$PEER" --port "$P" --size 4096
wait_port "$P"
U=http://127.0.0.1:$P

# 1. The default error policy (--max-error-rate 0): any failed request fails the run, exit 1, check error_rate.
assert_exit 1 "GET, every request 503" "$RB" load get "$U/status/503" --objects 4 --count 20 --out "$T/g503" --quiet
assert_eq "503: http_5xx" 20 "$(S g503 .errors.http_5xx)"
assert_eq "503: error_rate check" false "$(check g503 error_rate)"
counts_add_up g503
# No request succeeded: the latency figures do not exist (null), the table shows –, not 0.
assert_jq "$T/g503/result.json" '.summary.ops[0].latency_ns.p99 == null and .summary.ops[0].latency_ns.min == null
    and .summary.ops[0].ttfb_ns.max == null and .phases[0].latency_ns.p50 == null' "no success: latency is null"
grep -q '^| request | – | – | – | – | – | – |$' "$T/g503/table.md" || fail "table.md shows latency that does not exist"
ok "table.md shows – for latency without a sample"
assert_exit 1 "PUT to a server answering 500" "$RB" load put "$U/status/500" --objects 4 --size 4k --out "$T/p500" --quiet
assert_eq "PUT 500: http_5xx" 4 "$(S p500 .errors.http_5xx)"
assert_eq "PUT 500: error_rate check" false "$(check p500 error_rate)"
# --verify with the wrong --seed: every body is a checksum error.
assert_exit 1 "verify with the wrong seed" "$RB" load get "$U/d" --objects 4 --count 12 --size 4096 --verify --seed 99 \
    --out "$T/vseed" --quiet
assert_eq "wrong seed: checksum" 12 "$(S vseed .errors.checksum)"
assert_eq "wrong seed: error_rate check" false "$(check vseed error_rate)"
# An explicit --max-error-rate always records its check, passed or not.
assert_exit 0 "503 under --max-error-rate 100" "$RB" load get "$U/status/503" --objects 4 --count 8 --max-error-rate 100 \
    --out "$T/g100" --quiet
assert_eq "--max-error-rate 100: check recorded and passed" true "$(check g100 error_rate)"
assert_exit 0 "clean run" "$RB" load get "$U/d" --objects 4 --count 8 --out "$T/ok" --quiet
assert_eq "clean run: error_rate check passed" true "$(check ok error_rate)"
# One definition of ops/s: successful requests per second, failed ones beside it.
assert_jq "$T/g100/result.json" '.phases[0].ops_per_s == 0 and .phases[0].errors_per_s > 0 and .summary.ops[0].ops_per_s == 0' \
    "ops_per_s counts successes only"

# 2. HTTP status 600 and 999 are no HTTP class: other, not http_5xx.
assert_exit 1 "status 999" "$RB" load get "$U/status/999" --objects 2 --count 4 --out "$T/s999" --quiet
assert_eq "999: other" "4 0" "$(S s999 '"\(.errors.other) \(.errors.http_5xx)"' | tr -d '"')"
assert_exit 1 "status 600" "$RB" load get "$U/status/600" --objects 2 --count 4 --out "$T/s600" --quiet
assert_eq "600: other" 4 "$(S s600 .errors.other)"

# 3. --cache-header for a header the server never sends: a failed check naming it, not silence.
assert_exit 1 "cache header never sent" "$RB" load get "$U/d" --objects 2 --count 4 --cache-header X-Foo --out "$T/cx" --quiet
assert_eq "cache_header check" false "$(check cx cache_header)"
grep -q -- '--cache-header X-Foo: none of the 4 responses' "$T/stderr" || fail "no error naming the header"
ok "error names the header"

# 4. Requests in flight when --duration ends. A 3 s delay, 2 s run, 1 in flight: the request in flight is
#    waited for (up to --timeout) and counted as a success; the open-loop sends that were due meanwhile but
#    found no free slot are class abandoned. Nothing vanishes.
P2=$(free_port)
bg python3 "$PEER" --port "$P2" --delay-ms 3000
wait_port "$P2"
assert_exit 1 "delayed responses past the end" "$RB" load get "http://127.0.0.1:$P2/d" --objects 4 --rate 10/s --duration 2s -c 1 \
    --log-requests "$T/delay.csv" --out "$T/delay" --quiet
assert_eq "in flight at the end: waited for and counted" 1 "$(S delay .objects)"
# 10/s for 2 s: sends due at 0, 0.1, ... 2.0 s (20 or 21 of them, by when the phase stopped); one was sent.
ab=$(S delay .errors.abandoned)
[ "$ab" -ge 19 ] && [ "$ab" -le 21 ] || fail "due but never sent: $ab abandoned, expected 19 to 21"
ok "due but never sent: $ab abandoned"
assert_eq "requests = 1 + abandoned" $((ab + 1)) "$(S delay .requests)"
counts_add_up delay
assert_eq "request log: one line per request" $((ab + 1)) "$(tail -n +2 "$T/delay.csv" | wc -l)"
assert_eq "request log: abandoned lines" "$ab" "$(grep -c ',abandoned,' "$T/delay.csv")"
# Abandoned requests carry their latency from the intended send time (the last column), never 0 for all.
awk -F, -v ab="$ab" '$10 == "abandoned" && $11 > 0 { n++ } END { exit !(n >= ab - 1) }' "$T/delay.csv" || fail "abandoned latencies missing"
ok "abandoned requests logged with their latency from the intended send"
# With a --timeout shorter than the delay, the one in flight ends as a timeout: still counted.
assert_exit 1 "in flight, timed out" "$RB" load get "http://127.0.0.1:$P2/d" --objects 4 --duration 1s -c 2 --timeout 500ms \
    --out "$T/tmo" --quiet
assert_jq "$T/tmo/result.json" '.summary.ops[0].errors.timeout >= 2 and .summary.ops[0].objects == 0' "in flight at the end: timeouts"
counts_add_up tmo

# 5. Open loop: the achieved rate beside the target, and a failed rate check below 95 % of it.
P3=$(free_port)
bg python3 "$PEER" --port "$P3" --delay-ms 50
wait_port "$P3"
assert_exit 1 "rate not achieved" "$RB" load get "http://127.0.0.1:$P3/d" --objects 4 --rate 200/s --duration 2s -c 1 \
    --max-error-rate 100 --out "$T/rate" --quiet
assert_eq "rate check failed" false "$(check rate rate)"
assert_jq "$T/rate/result.json" '.summary.rate_per_s == 200 and .summary.achieved_rate_per_s < 30' "achieved rate recorded"
grep -q 'open loop: target 200 requests/s, achieved [0-9.]* requests/s' "$T/rate/table.md" || fail "table.md claims the target rate"
ok "table.md gives the achieved rate beside the target"
counts_add_up rate
assert_exit 0 "rate achieved" "$RB" load get "http://127.0.0.1:$P3/d" --objects 4 --rate 20/s --duration 2s -c 4 --out "$T/rate2" --quiet
assert_eq "rate check passed" true "$(check rate2 rate)"

# 6. PUT's time to first byte is the time to the response (50 ms delay), not libcurl's upload start.
"$RB" load put "http://127.0.0.1:$P3/d" --objects 8 --size 4k --out "$T/pttfb" --quiet >/dev/null
assert_jq "$T/pttfb/result.json" '.summary.ops[0].ttfb_ns.p50 >= 45000000 and .summary.ops[0].ttfb_ns.p50 <= .summary.ops[0].latency_ns.max' \
    "PUT TTFB is the time to the response"

# 7. 1-second segments count seconds in which nothing arrived: the server is killed once the first interval
#    has moved bytes (about 1 s into a 4 s run), so the later seconds move 0 bytes. On a loaded host the
#    server may be gone before it served anything; such an attempt measures nothing and is tried again.
for attempt in 1 2 3; do
    P4=$(free_port)
    bg python3 "$PEER" --port "$P4" --delay-ms 5
    wait_port "$P4"
    KILL_PID=$LAST_PID
    rm -rf "$T/seg"
    bg "$RB" load get "http://127.0.0.1:$P4/d" --objects 4 --duration 4s -c 2 --timeout 1s --max-error-rate 100 \
        --out "$T/seg" --quiet
    RUN_PID=$LAST_PID
    for _ in $(seq 100); do
        jq -e 'select(.phase == "get" and .bytes > 0)' "$T/seg/intervals.jsonl" >/dev/null 2>&1 && break
        sleep 0.1
    done
    kill "$KILL_PID"
    wait "$RUN_PID" >/dev/null 2>&1 || true
    [ "$(S seg .objects)" -gt 0 ] && break
    echo "segments: attempt $attempt measured nothing (the server was gone); again"
done
assert_jq "$T/seg/result.json" '.summary.ops[0].segments.seconds >= 3 and .summary.ops[0].segments.slowest_bytes_per_s == 0
    and .summary.ops[0].segments.fastest_bytes_per_s > 0' "segments include the seconds that moved 0 bytes"

# 8. Input that cannot mean anything: one line, exit 2, nothing made.
assert_exit 2 "space in the URL" "$RB" load get "$U/a b" --objects 1 --out "$T/bad1"
assert_stderr_line 'target "http://127.0.0.1:[0-9]+/a b": a space at byte [0-9]+; percent-encode it \(%20\)'
assert_exit 2 "CR/LF in the URL" "$RB" load get "$U/a"$'\r\n'"X-Injected: 1" --objects 1 --out "$T/bad2"
assert_stderr_line 'target "http://127.0.0.1:[0-9]+/a\\r\\nX-Injected: 1": a control character'
assert_exit 2 "credentials in the URL" "$RB" load get "http://user:hunter2@127.0.0.1:$P/x" --objects 1 --out "$T/bad3"
assert_stderr_line 'target "http://\*\*\*@127.0.0.1:[0-9]+/x": credentials in a URL are refused'
assert_exit 2 "credentials in --endpoint" "$RB" load get s3://bucket --endpoint "http://key:hunter2@127.0.0.1:$P" --objects 1 \
    --out "$T/bad4"
assert_stderr_line '--endpoint "http://\*\*\*@127.0.0.1:[0-9]+": credentials in a URL are refused'
! grep -rq hunter2 "$T/stderr" || fail "the password was echoed"
ok "the password is never echoed"
assert_exit 2 "--virtual-host with http://" "$RB" load get "$U/x" --virtual-host --objects 1 --out "$T/bad5"
assert_stderr_line '--virtual-host: only an s3:// target'
assert_exit 2 "--provider with http://" "$RB" load get "$U/x" --provider aws --objects 1 --out "$T/bad6"
assert_stderr_line '--provider: only an ais:// target'
# An s3 row given for a file:// target: refused because s3's plug-in owns it (loader/proto/target_s3.c), nothing made.
mkdir -p "$T/files"
assert_exit 2 "--sign-payload with a file path" "$RB" load put "$T/files" --sign-payload --objects 1 --out "$T/bad5b"
assert_stderr_line "^railbench: error: --sign-payload: only an s3:// target signs its requests' bodies$"
[ -z "$(ls -A "$T/files")" ] && [ ! -e "$T/bad5b" ] || fail "a refused run made files"
ok "a refused run made nothing"
assert_exit 2 "--provider bogus" "$RB" load get ais://bench --endpoint "$U" --provider bogus --objects 1 --out "$T/bad7"
assert_stderr_line '--provider "bogus": expected ais, aws'
assert_exit 2 "put --size 0" "$RB" load put "$U/x" --objects 1 --size 0 --out "$T/bad8"
assert_stderr_line '--size 0: an object needs at least 1 byte'
grep -q -- '--size SIZE .*(default: 1MiB)' <<<"$("$RB" load put --help)" || fail "put --help does not give the default size"
ok "put --help gives the default size"
for d in bad1 bad2 bad3 bad4 bad5 bad6 bad7 bad8; do [ ! -e "$T/$d" ] || fail "$d: a result directory was made"; done
ok "no result directory for refused input"

# 9. load train: a failed read is not a delivered sample; 32 of 32 failed reads fail AU and the error policy.
assert_exit 1 "train on 503s" "$RB" load train "$U/status/503" --objects 16 --compute-time 10ms --epochs 2 --strict \
    --out "$T/t503" --quiet
assert_eq "train 503: au_min check" false "$(check t503 au_min)"
assert_eq "train 503: error_rate check" false "$(check t503 error_rate)"
assert_jq "$T/t503/result.json" '([.summary.train_epochs[] | .samples == 0 and .au_pct == 0 and .errors == 16] | all)
    and .summary.samples_per_s == 0' "train 503: no samples delivered, AU 0"
grep -q '16 of 16 reads failed in that epoch: their batches delivered no samples' "$T/t503/table.md" ||
    fail "table.md does not say the reads failed"
ok "table.md says the reads failed"
# A preset on objects far from its sample size: the data set is what was read, and a warning says so.
rc=0
"$RB" load train "$U/d" --objects 8 --workload resnet50 --epochs 1 --out "$T/tpre" --quiet 2>"$T/tpre.err" >/dev/null || rc=$?
assert_jq "$T/tpre/result.json" '.summary.dataset.bytes_source == "measured" and .summary.dataset.bytes == 8 * 4096' \
    "preset: the data set's size is what was read"
grep -Eq 'the objects read hold [0-9.]+ ?B per sample, the resnet50 assumes .* \(more than 2x apart\)' "$T/tpre.err" ||
    { cat "$T/tpre.err" >&2; fail "no warning on the sample size"; }
ok "a preset 2x away from the objects warns"
