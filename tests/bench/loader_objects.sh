#!/usr/bin/env bash
# Start-up and peak memory of `load get --objects N --pattern epoch` for several N: the object set's cost.
# Usage: tests/bench/loader_objects.sh [N...]   (default 1000000 100000000 1000000000)
# BENCH_RB=path/to/railbench measures another build (e.g. an older one, for "before" figures).
# Start-up = launch to the first request's start (wall clock, from --log-requests); peak RSS from
# /usr/bin/time (the same for builds without result.json's rss_max_bytes); best of BENCH_ROUNDS runs.
# BENCH_TRAIN_NAMES="N..." adds `load train` under mpirun -np BENCH_RANKS (default 4) on a --filelist of N names:
# the host's pss_bytes with it, less the same run over N generated names (one step), against the names' bytes.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
BIN=${BENCH_RB:-$RB}
ROUNDS=${BENCH_ROUNDS:-3}
[ $# -gt 0 ] || set -- 1000000 100000000 1000000000
chmod 755 "$T"
PORT=$(free_port)
mkdir -p "$T/www"
head -c 1024 /dev/urandom >"$T/www/one"
# Every name answers with the same 1 KiB file: the names need not exist.
nginx_start web "server { listen 127.0.0.1:$PORT; root $T/www; location / { try_files /one =404; } }"
wait_port "$PORT"
printf '| objects | start-up ms (best of %d) | peak RSS MiB | rss_max_bytes MiB |\n|---:|---:|---:|---:|\n' "$ROUNDS"
for n in "$@"; do
    best_ms='' best_kib=''
    for _ in $(seq "$ROUNDS"); do
        rm -rf "$T/run" "$T/req.csv"
        t0=$(date +%s%N)
        /usr/bin/time -f %M -o "$T/rss" "$BIN" load get "http://127.0.0.1:$PORT/o" --objects "$n" --pattern epoch \
            --count 100 -c 4 --log-requests "$T/req.csv" --out "$T/run" --quiet >/dev/null
        first=$(tail -n +2 "$T/req.csv" | cut -d, -f6 | sort -n | head -1)
        ms=$(((first - t0) / 1000000))
        kib=$(cat "$T/rss")
        [ -z "$best_ms" ] || [ "$ms" -lt "$best_ms" ] && best_ms=$ms
        [ -z "$best_kib" ] || [ "$kib" -lt "$best_kib" ] && best_kib=$kib
    done
    hwm=$(jq -r '.hosts[0].rss_max_bytes // empty' "$T/run/result.json")
    printf '| %s | %s | %s | %s |\n' "$n" "$best_ms" "$(awk -v k="$best_kib" 'BEGIN { printf "%.1f", k / 1024 }')" \
        "${hwm:+$(awk -v b="$hwm" 'BEGIN { printf "%.1f", b / 1048576 }')}"
done

[ -n "${BENCH_TRAIN_NAMES:-}" ] || exit 0
NP=${BENCH_RANKS:-4}
train_pss() { # OUT ARGS...: the host's pss_bytes after a load train of NP ranks
    local out=$1; shift
    rb_mpirun "$NP" "$BIN" load train "http://127.0.0.1:$PORT/d" "$@" --batch-size 500 --compute-time 1ms -c 16 \
        --out "$T/$out" --force --quiet >/dev/null 2>&1
    jq -r '.hosts[0] | "\(.pss_bytes) \(.rss_max_bytes)"' "$T/$out/result.json"
}
printf '\n| names | ranks | names MiB (len + 13/object) | host Pss MiB, filelist | generated | grown | grown / names | largest rank peak RSS MiB, filelist |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for n in $BENCH_TRAIN_NAMES; do
    awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "train/shard-%04d/sample-%09d.jpeg\n", i % 1000, i }' >"$T/list"
    names=$(awk '{ s += length($0) + 13 } END { print s }' "$T/list")
    read -r fl peak < <(train_pss fl --filelist "$T/list" --steps 2)
    read -r gen _ < <(train_pss gen --objects "$n" --steps 2)
    awk -v n="$n" -v np="$NP" -v b="$names" -v f="$fl" -v g="$gen" -v p="$peak" 'BEGIN { m = 1048576
        printf "| %d | %d | %.1f | %.1f | %.1f | %.1f | %.2f | %.1f |\n", n, np, b / m, f / m, g / m, (f - g) / m, (f - g) / b, p / m }'
done
