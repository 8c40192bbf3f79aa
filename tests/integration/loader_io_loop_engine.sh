#!/usr/bin/env bash
# needs: -
# The native engine's two event loops (--io-loop epoll|io_uring, docs/engine.md) on the same loads: equal requests,
# bytes and error classes against nginx (a 404 mix, 1 MiB bodies on 64 connections, HEAD and DELETE over WebDAV), the
# peer's failure paths (503, reset, short read, timeout, a redirect loop) and the AIStore stand-in's 307 redirects;
# auto picks io_uring for GET and epoll for PUT, summary.io_loop says which ran; a forced io_uring where it does not
# apply is exit 2; and over the same counted run the io_uring loop makes fewer system calls per request (strace -c -f).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T" # nginx's workers may run as nobody
PEER=$ROOT/tests/servers/peer.py
W=$T/www
mkdir -p "$W/small" "$W/large" "$W/dav"
chmod 777 "$W/dav"
for i in $(seq 0 19); do head -c 1024 /dev/urandom >"$W/small/obj-$(printf %08d "$i")"; done
for i in $(seq 0 7); do head -c 1048576 /dev/urandom >"$W/large/obj-$(printf %08d "$i")"; done
self_signed_cert
{ read -r PORT; read -r SPORT; } < <(free_port 2)
nginx_start web "server {
        listen 127.0.0.1:$PORT backlog=1024;
        root $W;
        location /dav/ { dav_methods PUT DELETE; create_full_put_path on; client_max_body_size 0;
                         autoindex on; autoindex_format json; }
    }
    server { listen 127.0.0.1:$SPORT ssl; root $W; ssl_certificate $T/cert.pem; ssl_certificate_key $T/key.pem; }"
wait_port "$PORT" 60 nginx
wait_port "$SPORT" 60 "nginx (TLS)"
URL=http://127.0.0.1:$PORT
# Where the kernel refuses io_uring (a container's seccomp profile: ENOSYS, EPERM), what can be checked is the
# fallback: a forced io_uring is exit 3 with its reason, auto says why in one line and runs epoll, with every answer.
rc=0
"$RB" load get "$URL/small" --objects 20 --count 20 --engine native --io-loop io_uring --out "$T/probe" --quiet \
    >/dev/null 2>"$T/probe.err" || rc=$?
if [ "$rc" = 3 ] && grep -q "io_uring is not available here" "$T/probe.err"; then
    "$RB" load get "$URL/small" --objects 20 --count 20 --out "$T/fallback" >/dev/null 2>"$T/fallback.err"
    grep -q "io_uring is not available here (.*): the native engine runs on epoll" "$T/fallback.err" ||
        { cat "$T/fallback.err"; fail "auto without io_uring: no line saying it runs on epoll"; }
    assert_eq "auto without io_uring: engine, loop, requests, bytes" "[\"native\",\"epoll\",20,$((20 * 1024))]" \
        "$(jq -c '[.summary.engine, .summary.io_loop, .summary.ops[0].requests, .summary.ops[0].bytes]' "$T/fallback/result.json")"
    ok "io_uring refused here ($(grep -o 'not available here ([^)]*)' "$T/probe.err")): --io-loop io_uring exit 3," \
        "auto ran epoll; the two loops cannot be compared on this kernel"
    exit 0
fi
[ "$rc" = 0 ] || { cat "$T/probe.err"; fail "--io-loop io_uring: exit $rc"; }
summary() { jq -c ".summary.ops[0] | $2" "$T/$1/result.json"; }
# What must be equal between the loops: requests, bytes, objects, every error class, redirects.
same() { jq -c '.summary.ops[0] | [.requests, .bytes, .objects, .errors, .extra.redirects]' "$T/$1/result.json"; }
# both NAME CMD ARGS...: `railbench load CMD ARGS...` once per loop (results NAME-epoll, NAME-io_uring); the same figures.
both() {
    local name=$1 l rc; shift
    for l in epoll io_uring; do
        rc=0
        "$RB" load "$@" --engine native --io-loop "$l" --out "$T/$name-$l" --quiet >/dev/null 2>"$T/$name-$l.err" || rc=$?
        [ "$rc" -le 1 ] || { cat "$T/$name-$l.err" >&2; fail "$name on $l: exit $rc"; }
        echo "$rc" >"$T/$name-$l.rc"
        assert_eq "$name: summary.io_loop" "\"$l\"" "$(jq -c .summary.io_loop "$T/$name-$l/result.json")"
    done
    assert_eq "$name: exit status equal on both loops" "$(cat "$T/$name-epoll.rc")" "$(cat "$T/$name-io_uring.rc")"
    assert_eq "$name: requests, bytes, objects, error classes, redirects equal on both loops" \
        "$(same "$name-epoll")" "$(same "$name-io_uring")"
}

# 1. GETs of 30 names of which 20 exist, sequential: each thread's slice of 15 holds 5 absent ones, so 100 of the
#    300 requests are 404s and 200 bring 1 KiB.
both g404 get "$URL/small" --objects 30 --pattern sequential --count 300 -t 2 -c 4 --max-error-rate 100
assert_eq "404 mix: requests, http_4xx, bytes" "[300,100,$((200 * 1024))]" \
    "$(summary g404-io_uring '[.requests, .errors.http_4xx, .bytes]')"
"$RB" load get "$URL/small" --objects 20 --count 40 -c 4 --out "$T/auto" --quiet >/dev/null
assert_eq "auto: native engine on io_uring for GET" '["native","io_uring"]' \
    "$(jq -c '[.summary.engine, .summary.io_loop]' "$T/auto/result.json")"

# 2. 1 MiB bodies on 64 connections at once: more data in flight than the receive buffers hold at a time
#    (their ring runs dry and each connection's receive is armed again); every byte counted.
both big get "$URL/large" --objects 8 --pattern sequential --count 256 -c 64 --timeout 60s
assert_eq "1 MiB on 64 connections: requests, bytes, errors" "[256,$((256 * 1048576)),0]" \
    "$(summary big-io_uring '[.requests, .bytes, .errors.total]')"

# 3. HEAD and DELETE over WebDAV: the PUTs on epoll (auto: bodies stay there), HEAD and DELETE on each loop.
for l in epoll io_uring; do
    "$RB" load put "$URL/dav/s-$l" --keep --objects 20 --size 4k --seed 3 -c 4 --out "$T/put-$l" --quiet >/dev/null
    assert_eq "put ($l pass): auto keeps PUT on epoll" '"epoll"' "$(jq -c .summary.io_loop "$T/put-$l/result.json")"
done
for l in epoll io_uring; do
    "$RB" load stat "$URL/dav/s-$l" --objects 20 --count 20 --engine native --io-loop "$l" -c 4 --out "$T/stat-$l" --quiet >/dev/null
    "$RB" load delete "$URL/dav/s-$l" --objects 20 --engine native --io-loop "$l" -c 4 --out "$T/del-$l" --quiet >/dev/null
    assert_eq "DELETE on $l: files left" 0 "$(find "$W/dav/s-$l" -type f | wc -l)"
done
assert_eq "HEAD: equal on both loops" "$(same stat-epoll)" "$(same stat-io_uring)"
assert_eq "DELETE: equal on both loops" "$(same del-epoll)" "$(same del-io_uring)"
assert_eq "HEAD and DELETE on io_uring: requests, errors" '[20,0,20,0]' \
    "$(jq -sc 'map(.summary.ops[0] | .requests, .errors.total)' "$T/stat-io_uring/result.json" "$T/del-io_uring/result.json")"

# 4. The peer's failure paths, each class counted alike on both loops.
P1=$(free_port)
bg python3 "$PEER" --port "$P1"
wait_port "$P1" 60 "tests/servers/peer.py"
errs() { # NAME PATH CLASS N ARGS...
    local name=$1 path=$2 cls=$3 n=$4; shift 4
    both "$name" get "http://127.0.0.1:$P1/$path" --objects 3 --count "$n" -c 2 --max-error-rate 100 "$@"
    assert_eq "$path: $cls on io_uring" "$n" "$(summary "$name-io_uring" ".errors.$cls")"
}
errs e503 status/503 http_5xx 6
errs ereset reset reset 6
errs eshort short short_read 6
errs eslow slow timeout 4 --timeout 300ms
errs eredir redirect too_many_redirects 6 --max-redirects 3
assert_eq "redirect loop: redirects followed on io_uring" 18 "$(summary eredir-io_uring .extra.redirects)"
errs escheme redirect-https other 6

# 5. AIStore stand-in: GETs through the proxy's 307 on each loop, verified; one redirect per request.
P2=$(free_port)
bg python3 "$PEER" --port "$P2"
wait_port "$P2" 60 "tests/servers/peer.py (AIStore stand-in)"
"$RB" load put ais://iol --keep --endpoint "http://127.0.0.1:$P2" --objects 40 --min-size 1k --max-size 8k -c 4 \
    --out "$T/aput" --quiet >/dev/null
both ais get ais://iol --endpoint "http://127.0.0.1:$P2" --objects 40 --min-size 1k --max-size 8k --pattern epoch \
    --epochs 2 --verify -c 4
assert_eq "ais: requests, redirects, errors; bytes twice what was put" \
    "[80,80,0,$((2 * $(summary aput .bytes)))]" "$(summary ais-io_uring '[.requests, .extra.redirects, .errors.total, .bytes]')"

# 6. A forced io_uring where it does not apply: one line, exit 2.
assert_exit 2 "--io-loop io_uring on a PUT" "$RB" load put "$URL/dav/x" --objects 2 --size 1k --io-loop io_uring --out "$T/x1"
assert_stderr_line 'io-loop io_uring: GET, HEAD and DELETE only'
assert_exit 2 "--io-loop io_uring with --engine curl" "$RB" load get "$URL/small" --objects 2 --engine curl --io-loop io_uring \
    --out "$T/x2"
assert_stderr_line 'io-loop io_uring: .*native engine'
assert_exit 2 "--io-loop io_uring on https://" "$RB" load get "https://127.0.0.1:$SPORT/small" --objects 2 --insecure \
    --io-loop io_uring --out "$T/x3"
assert_stderr_line 'io-loop io_uring: https:// endpoints run on epoll'
assert_exit 2 "--io-loop with a bad value" "$RB" load get "$URL/small" --objects 2 --io-loop kqueue --out "$T/x4"
assert_stderr_line 'io-loop'

# 7. System calls per request over the same counted run (a count, not a time): io_uring submits a loop
#    iteration's sends with its wait in one call, and its receives stay armed, so it makes fewer than epoll's
#    send, receive and wait per request. The process's start-up and result writing are the same on both.
N=4000
declare -A per
for l in epoll io_uring; do
    strace -c -f -o "$T/strace-$l" "$RB" load get "$URL/small" --objects 20 --count "$N" -t 1 -c 16 --engine native \
        --io-loop "$l" --out "$T/sc-$l" --quiet >/dev/null
    assert_eq "strace run on $l: requests, errors" "[$N,0]" "$(summary "sc-$l" '[.requests, .errors.total]')"
    calls=$(awk '$NF == "total" { print $4 }' "$T/strace-$l") # % time, seconds, usecs/call, calls, [errors,] total
    [[ "$calls" =~ ^[0-9]+$ ]] || { cat "$T/strace-$l"; fail "no total in strace's summary for $l"; }
    per[$l]=$(awk -v c="$calls" -v n="$N" 'BEGIN { printf "%.3f", c / n }')
    echo "$l: $calls system calls for $N requests ($(grep -E ' (sendto|recvfrom|epoll_pwait2|io_uring_enter)$' \
        "$T/strace-$l" | awk '{ printf "%s %s; ", $NF, $4 }'))"
done
awk -v u="${per[io_uring]}" -v e="${per[epoll]}" 'BEGIN { exit !(u < e) }' ||
    fail "system calls per request: io_uring ${per[io_uring]} not below epoll ${per[epoll]}"
ok "system calls per request: io_uring ${per[io_uring]} < epoll ${per[epoll]}"
