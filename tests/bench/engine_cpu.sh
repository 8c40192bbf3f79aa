#!/usr/bin/env bash
# Client CPU per request and throughput of railbench's two engines against wrk, side by side on the same
# servers and objects (1 KiB): plain http:// on nginx, https:// on nginx (TLS 1.3: nginx 1.22 offers only 1.2 unless
# told; keep-alive: the handshakes are a few per run), and S3 on Ceph RGW (railbench signs every GET with SigV4; wrk reads the same
# objects unsigned from a public-read bucket: the raw HTTP floor), and S3 listings on RGW (railbench `load list`,
# SigV4-signed ListObjectsV2 pages of 1,000 keys, against wrk fetching the same first page unsigned; one request
# per connection at a time each, BENCH_LISTERS of them: CPU per page).
# Usage: tests/bench/engine_cpu.sh [SECONDS]   (BENCH_ROUNDS, default 3; BENCH_INFLIGHT, default 16;
#        BENCH_ROWS, default "http https s3 list"; BENCH_LISTERS, default 4; BENCH_PERF=1 adds system calls and
#        context switches per request of every client, wrk's too: perf stat -e context-switches,raw_syscalls:sys_enter;
#        needs perf, Debian's linux-perf, which scripts/deps.sh installs; BENCH_BASE=PATH adds another build of
#        railbench, the native engine on each loop ("base io_uring", "base epoll"), to the http and s3 rows: an engine
#        change against the build before it, in the same rounds)
# railbench runs as three clients: the native engine on its io_uring loop (rows where it applies: http, s3), on its
# epoll loop (--io-loop epoll), and libcurl (--engine curl).
# Every client runs one thread pinned to CPU 0 (taskset) and the servers are pinned to CPU 1, so the client is
# what is measured; CPU is the client process's user+system seconds (bash's time), and for railbench also its
# phase's alone (start-up excluded: at a few hundred requests a second a fixed start-up is a large share of a
# short run; wrk's figure keeps its own start-up, LuaJIT, its thread and connections: a few milliseconds, which if anything favours railbench). Rounds alternate the tools;
# each round gives a ratio (railbench / wrk) and the table shows min / median / max over the rounds.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
SECS=${1:-${BENCH_SECONDS:-5}}
ROUNDS=${BENCH_ROUNDS:-3}
C=${BENCH_INFLIGHT:-16}
ROWS=${BENCH_ROWS:-http https s3 list}
LISTERS=${BENCH_LISTERS:-4}
N=100
chmod 755 "$T"
TIMEFORMAT='%U %S'
CPUS=$(nproc)
[ "$CPUS" -ge 2 ] || fail "needs 2 CPUs (client on 0, server on 1)"
pin_server() { local p; for p in "$@"; do taskset -a -p -c 1 "$p" >/dev/null; done; }

# Each run prints: requests cpu_s phase_cpu_s (errors fail the run): the whole process's CPU (bash's time: start-up,
# MPI's initialisation, the object set, the phase, the result) and the phase's alone (result.json's phases[].cpu_s,
# railbench's own getrusage from the phase's start barrier to its end).
# client_args CLIENT: railbench's options for a client of the table (io_uring, epoll, curl).
client_args() {
    set -- "${1#base-}"
    case $1 in
    io_uring | epoll) echo "--engine native --io-loop $1" ;;
    *) echo "--engine $1" ;;
    esac
}
# perf_of PATH: with BENCH_PERF=1, the perf stat that wraps a client's run (its counts go to PATH.perf).
perf_of() {
    [ -z "${BENCH_PERF:-}" ] || echo "perf stat -x, -o $1.perf -e context-switches,raw_syscalls:sys_enter --"
}
rb_run() { # NAME CLIENT TARGET...
    local d=$T/$1 e=$2 bin=$RB; shift 2
    [[ $e != base-* ]] || bin=$BENCH_BASE
    # shellcheck disable=SC2046
    { time $(perf_of "$d") taskset -c 0 "$bin" load get "$@" --objects "$N" --size 1k -t 1 -c "$C" $(client_args "$e") \
        --duration "${SECS}s" --out "$d" --force --quiet >/dev/null 2>"$d.err"; } 2>"$d.time"
    jq -r --arg cpu "$(awk '{ print $1 + $2 }' "$d.time")" '([.phases[].cpu_s] | add) as $phase | .summary.ops[0] |
        if .errors.total > 0 then error("railbench saw errors") else "\(.requests) \($cpu) \($phase)" end' "$d/result.json"
}
# list_run NAME ENGINE TARGET...: load list with LISTERS listings at once, each page after page; prints pages cpu_s.
list_run() {
    local d=$T/$1 e=$2; shift 2
    { time taskset -c 0 "$RB" load list "$@" -t "$LISTERS" --engine "${e/epoll/native}" --duration "${SECS}s" --out "$d" --force \
        --quiet >/dev/null 2>"$d.err"; } 2>"$d.time"
    jq -r --arg cpu "$(awk '{ print $1 + $2 }' "$d.time")" '([.phases[].cpu_s] | add) as $phase | .summary.ops[0] |
        if .errors.total > 0 then error("railbench saw errors") else "\(.pages) \($cpu) \($phase)" end' "$d/result.json"
}
cat >"$T/one.lua" <<'EOF'
done = function(summary, latency, requests)
    io.write(string.format("RESULT %d %d\n", summary.requests,
        summary.errors.status + summary.errors.read + summary.errors.connect))
end
EOF
cat >"$T/objs.lua" <<'EOF'
local i = 0
request = function()
    i = (i + 1) % 100
    return wrk.format("GET", string.format(wrk.path .. "obj-%08d", i))
end
done = function(summary, latency, requests)
    io.write(string.format("RESULT %d %d\n", summary.requests,
        summary.errors.status + summary.errors.read + summary.errors.connect))
end
EOF
wrk_run() { # NAME URL-ENDING-IN-SLASH [CONNECTIONS SCRIPT]
    local f=$T/$1
    # shellcheck disable=SC2046
    { time $(perf_of "$f") taskset -c 0 wrk -t 1 -c "${3:-$C}" -d "${SECS}s" -s "${4:-$T/objs.lua}" "$2" >"$f.out" 2>&1; } 2>"$f.time"
    awk -v cpu="$(awk '{ print $1 + $2 }' "$f.time")" '/^RESULT/ {
        if ($3 > 0) { print "wrk saw errors" > "/dev/stderr"; exit 1 } print $2, cpu }' "$f.out"
}
# stats R...: min median max of the numbers given.
stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f / %.2f / %.2f", v[1], v[int((NR + 1) / 2)], v[NR] }'; }

# per_req NAME REQUESTS: "system calls, context switches" per request of a run's perf counts ("– –" without them).
per_req() {
    [ -s "$T/$1.perf" ] || { echo "– –"; return; }
    awk -F, -v n="$2" '$3 == "context-switches" { cs = $1 } $3 == "raw_syscalls:sys_enter" { sc = $1 }
        END { printf "%.2f %.3f\n", sc / n, cs / n }' "$T/$1.perf"
}
label() { case $1 in io_uring | epoll) echo "native ($1)" ;; base-*) echo "base ${1#base-}" ;; *) echo "--engine $1" ;; esac; }
BASE_CLIENTS=
if [ -n "${BENCH_BASE:-}" ]; then
    [ -x "$BENCH_BASE" ] || fail "BENCH_BASE=$BENCH_BASE is not an executable"
    BASE_CLIENTS="base-io_uring base-epoll"
fi

printf '%-6s %-22s %22s %22s %22s %15s\n' row client "CPU/request vs wrk" "phase CPU/req vs wrk" "requests/s vs wrk" \
    "syscalls, cs/req"
printf '%-6s %-22s %22s %22s %22s %15s\n' "" "" "min / median / max" "min / median / max" "min / median / max" "(median)"
row() { # NAME WRK_URL RB_TARGET...   (RUN=list_run, WRK_ARGS="CONNECTIONS SCRIPT": a listing row; CLIENTS: railbench's)
    local name=$1 wurl=$2 i e w r; shift 2
    declare -A cr=() pr=() rr=() sc=() cs=()
    for i in $(seq "$ROUNDS"); do
        # shellcheck disable=SC2086
        w=$(wrk_run "wrk-$name-$i" "$wurl" ${WRK_ARGS:-})
        read -r a b < <(per_req "wrk-$name-$i" "${w%% *}")
        sc[wrk]+="$a " cs[wrk]+="$b "
        for e in ${CLIENTS:-$BASE_CLIENTS io_uring epoll curl}; do
            r=$("${RUN:-rb_run}" "rb-$name-$e-$i" "$e" "$@")
            cr[$e]+="$(awk -v r="$r" -v w="$w" 'BEGIN { split(r, a, " "); split(w, b, " ");
                printf "%.4f", (a[2] / a[1]) / (b[2] / b[1]) }') "
            pr[$e]+="$(awk -v r="$r" -v w="$w" 'BEGIN { split(r, a, " "); split(w, b, " ");
                printf "%.4f", (a[3] / a[1]) / (b[2] / b[1]) }') "
            rr[$e]+="$(awk -v r="$r" -v w="$w" 'BEGIN { split(r, a, " "); split(w, b, " "); printf "%.4f", a[1] / b[1] }') "
            read -r a b < <(per_req "rb-$name-$e-$i" "${r%% *}")
            sc[$e]+="$a " cs[$e]+="$b "
            echo "round $i: $name $(label "$e"): $r (requests, CPU s, phase CPU s); wrk $w" >&2
        done
    done
    med() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
    # shellcheck disable=SC2086
    printf '%-6s %-22s %22s %22s %22s %15s\n' "$name" wrk "1" "1" "1" "$(med ${sc[wrk]}), $(med ${cs[wrk]})"
    for e in ${CLIENTS:-$BASE_CLIENTS io_uring epoll curl}; do
        # shellcheck disable=SC2086
        printf '%-6s %-22s %22s %22s %22s %15s\n' "$name" "$(label "$e")" "$(stats ${cr[$e]})" "$(stats ${pr[$e]})" \
            "$(stats ${rr[$e]})" "$(med ${sc[$e]}), $(med ${cs[$e]})"
    done
    [ -n "$BASE_CLIENTS" ] && [ -z "${CLIENTS:-}" ] || return 0
    for e in io_uring epoll; do # this build against the base, round by round (the same round's wrk cancels out)
        # shellcheck disable=SC2046
        printf '%-6s %-22s %22s %22s\n' "$name" "$e vs base" "–" "$(stats $(awk -v a="${pr[$e]}" -v b="${pr[base-$e]}" \
            'BEGIN { n = split(a, x, " "); split(b, y, " "); for (i = 1; i <= n; i++) printf "%.4f ", x[i] / y[i] }'))"
    done
}

if [[ " $ROWS " == *" http "* || " $ROWS " == *" https "* ]]; then
    mkdir -p "$T/www/d"
    for i in $(seq 0 $((N - 1))); do head -c 1024 /dev/urandom >"$T/www/d/obj-$(printf %08d "$i")"; done
    self_signed_cert
    PORT=$(free_port) SPORT=$(free_port)
    nginx_start web "server { listen 127.0.0.1:$PORT backlog=4096; root $T/www; }
        server { listen 127.0.0.1:$SPORT ssl backlog=4096; root $T/www; ssl_certificate $T/cert.pem;
                 ssl_certificate_key $T/key.pem; ssl_protocols TLSv1.2 TLSv1.3; }"
    wait_port "$PORT"
    # shellcheck disable=SC2046
    pin_server $(pgrep -f "nginx -p $T/web" || true)
    [[ " $ROWS " != *" http "* ]] || row http "http://127.0.0.1:$PORT/d/" "http://127.0.0.1:$PORT/d"
    [[ " $ROWS " != *" https "* ]] || CLIENTS="epoll curl" row https "https://127.0.0.1:$SPORT/d/" "https://127.0.0.1:$SPORT/d" --insecure
fi
if [[ " $ROWS " == *" s3 "* || " $ROWS " == *" list "* ]]; then
    rgw_up
    rgw_bucket bench public-read
    # shellcheck disable=SC2086
    pin_server $RGW_PIDS
    "$RB" load put s3://bench/d/ --endpoint "$RGW_ENDPOINT" --keep --objects "$N" --size 1k -c 8 --out "$T/put" --quiet >/dev/null
    [ "$(curl -s -o /dev/null -w '%{size_download}' "$RGW_ENDPOINT/bench/d/obj-00000000")" = 1024 ] ||
        fail "public-read GET of an object did not return 1024 bytes"
    [[ " $ROWS " != *" s3 "* ]] || row s3 "$RGW_ENDPOINT/bench/d/" s3://bench/d/ --endpoint "$RGW_ENDPOINT"
fi
if [[ " $ROWS " == *" list "* ]]; then
    # 2,000 keys: a listing is two pages of 1,000 (wrk fetches the first page again and again).
    "$RB" load put s3://bench/l/ --endpoint "$RGW_ENDPOINT" --keep --objects 2000 --size 16 -c 16 --out "$T/lput" \
        --quiet >/dev/null
    [ "$(curl -s "$RGW_ENDPOINT/bench?list-type=2&prefix=l%2F" | grep -o '<Key>' | wc -l)" = 1000 ] ||
        fail "an unsigned ListObjectsV2 of the public-read bucket did not give 1,000 keys"
    CLIENTS="epoll curl" RUN=list_run WRK_ARGS="$LISTERS $T/one.lua" row list "$RGW_ENDPOINT/bench?list-type=2&max-keys=1000&prefix=l%2F" \
        s3://bench --prefix l/ --endpoint "$RGW_ENDPOINT"
fi
echo "(2-core machine shared with other work: figures are noisy; ratios come from runs side by side in one invocation)"
