#!/usr/bin/env bash
# What per-request timing costs: client CPU per request of `load get` with --phases (each request's spans, one more
# clock reading per request on the native engine, libcurl's four times on curl) and with --slowest (the bounded heap
# of the slowest requests, default 10) against the same run with neither (--slowest 0), on the same local nginx and
# 1 KiB objects, and on file:// (a directory under this run's temporary one). Rounds alternate the three runs; each
# round gives a ratio (with / without) and the table shows min / median / max over the rounds. The target is at
# most 3 % more CPU per request with --phases (and nothing measurable with --slowest alone); a median ratio above
# 1.03 is flagged and the script exits 1.
# Usage: tests/bench/phases_cpu.sh [SECONDS]   (BENCH_ROUNDS, default 5; BENCH_INFLIGHT, default 16;
#        BENCH_ROWS, default "io_uring epoll curl file")
# The client runs one thread pinned to CPU 0 (taskset), nginx is pinned to CPU 1. CPU is the phase's own
# (result.json's phases[].cpu_s: railbench's getrusage from the phase's start to its end), per successful request.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
SECS=${1:-${BENCH_SECONDS:-5}}
ROUNDS=${BENCH_ROUNDS:-5}
C=${BENCH_INFLIGHT:-16}
ROWS=${BENCH_ROWS:-io_uring epoll curl file}
N=100
[ "$(nproc)" -ge 2 ] || fail "needs 2 CPUs (client on 0, server on 1)"

serve_objects "$N" 1024
taskset -a -p -c 1 "$NGINX_PID" >/dev/null
for p in $(pgrep -P "$NGINX_PID" || true); do taskset -a -p -c 1 "$p" >/dev/null; done
mkdir -p "$T/files"
cp "$T/www/d/"* "$T/files/"

# target_args ROW: the target and engine options of a row.
target_args() {
    case $1 in
    io_uring | epoll) echo "http://127.0.0.1:$PORT/d/ --engine native --io-loop $1" ;;
    curl) echo "http://127.0.0.1:$PORT/d/ --engine curl" ;;
    file) echo "file://$T/files" ;;
    esac
}
# run NAME ROW OPTIONS...: prints "requests cpu_per_request_ns" of one run (errors fail it).
run() {
    local d=$T/$1 row=$2; shift 2
    # shellcheck disable=SC2046
    taskset -c 0 "$RB" load get $(target_args "$row") --objects "$N" --size 1k -t 1 -c "$C" --duration "${SECS}s" \
        --out "$d" --force --quiet "$@" >/dev/null 2>"$d.err" || { cat "$d.err" >&2; fail "$1: the run failed"; }
    jq -r '([.phases[].cpu_s] | add) as $cpu | .summary.ops[0] |
        if .errors.total > 0 then error("railbench saw errors") else "\(.requests) \($cpu * 1e9 / .requests)" end' \
        "$d/result.json"
}
# stats R...: min median max of the numbers given.
stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.3f / %.3f / %.3f", v[1], v[int((NR + 1) / 2)], v[NR] }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%-9s %16s %28s %28s\n' row "CPU/req (ns)" "--phases / neither" "--slowest 10 / neither"
printf '%-9s %16s %28s %28s\n' "" "neither, median" "min / median / max" "min / median / max"
over=0
for row in $ROWS; do
    base=() ph=() sl=()
    for i in $(seq "$ROUNDS"); do
        read -r _ b < <(run "off-$row-$i" "$row" --slowest 0)
        read -r _ p < <(run "phases-$row-$i" "$row" --slowest 0 --phases)
        read -r _ s < <(run "slowest-$row-$i" "$row" --slowest 10)
        base+=("$b")
        ph+=("$(awk -v a="$p" -v b="$b" 'BEGIN { print a / b }')")
        sl+=("$(awk -v a="$s" -v b="$b" 'BEGIN { print a / b }')")
    done
    printf '%-9s %16.0f %28s %28s\n' "$row" "$(median "${base[@]}")" "$(stats "${ph[@]}")" "$(stats "${sl[@]}")"
    if awk -v m="$(median "${ph[@]}")" 'BEGIN { exit !(m > 1.03) }'; then
        echo "  $row: --phases costs more than 3 % CPU per request (median ratio $(median "${ph[@]}"))"
        over=1
    fi
done
exit "$over"
