#!/usr/bin/env bash
# What per-request timing costs in instructions: client instructions per request of `load get` with --phases
# against the same run without it (--slowest 0 both), counted by valgrind's callgrind (the same binary and inputs
# give the same counts whatever else the machine runs, so this one runs on a shared machine where
# tests/bench/phases_cpu.sh's CPU times do not). Per request is the difference of two bounded runs (--count A and
# --count B, one thread, 16 in flight) over B - A: start-up and tear-down cancel out. Only the worker's loop is
# counted (rb_worker_main), less its hand-overs of figures to the main thread (rb_worker_handover: one a tick, so
# their number follows the wall clock, which valgrind stretches by the machine's load). Rows: the native engine
# (epoll; callgrind has no io_uring), libcurl, both on a local nginx with 1 KiB objects, and file:// (a directory
# under this run's temporary one). The target is at most 1.03 (3 %); a row above it is flagged and the script
# exits 1.
# Usage: tests/bench/phases_instr.sh   (BENCH_COUNTS, default "2000 6000"; BENCH_ROWS, default "epoll curl file";
#        BENCH_RB, default build/railbench)
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
read -r A B <<<"${BENCH_COUNTS:-2000 6000}"
ROWS=${BENCH_ROWS:-epoll curl file}
N=100
command -v valgrind >/dev/null || fail "needs valgrind"
RB=${BENCH_RB:-$RB} # another build to compare (the one before a change)

serve_objects "$N" 1024
mkdir -p "$T/files"
cp "$T/www/d/"* "$T/files/"

# target_args ROW: the target and engine options of a row.
target_args() {
    case $1 in
    epoll) echo "http://127.0.0.1:$PORT/d/ --engine native --io-loop epoll" ;;
    curl) echo "http://127.0.0.1:$PORT/d/ --engine curl" ;;
    file) echo "file://$T/files" ;;
    esac
}
# instr NAME ROW COUNT OPTIONS...: prints the instructions of one run of COUNT requests (errors fail it).
instr() {
    local d=$T/$1 row=$2 count=$3; shift 3
    # shellcheck disable=SC2046
    valgrind --tool=callgrind --callgrind-out-file="$d.cg" --dump-instr=no --toggle-collect=rb_worker_main --toggle-collect=rb_worker_handover \
        "$RB" load get $(target_args "$row") --objects "$N" --size 1k -t 1 -c 16 --count "$count" \
        --slowest 0 --out "$d" --force --quiet "$@" >/dev/null 2>"$d.err" ||
        { cat "$d.err" >&2; fail "$1: the run failed"; }
    jq -e '.summary.ops[0].errors.total == 0' "$d/result.json" >/dev/null || fail "$1: railbench saw errors"
    awk '/^(summary|totals):/ { print $2; exit }' "$d.cg"
}

printf '%-6s %22s %22s %10s\n' row "instr/req without" "instr/req --phases" ratio
over=0
for row in $ROWS; do
    off=$((($(instr "off-$row-b" "$row" "$B") - $(instr "off-$row-a" "$row" "$A")) / (B - A)))
    on=$((($(instr "on-$row-b" "$row" "$B" --phases) - $(instr "on-$row-a" "$row" "$A" --phases)) / (B - A)))
    ratio=$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.3f", a / b }')
    printf '%-6s %22d %22d %10s\n' "$row" "$off" "$on" "$ratio"
    if awk -v r="$ratio" 'BEGIN { exit !(r > 1.03) }'; then
        echo "  $row: --phases costs more than 3 % instructions per request"
        over=1
    fi
done
exit "$over"
