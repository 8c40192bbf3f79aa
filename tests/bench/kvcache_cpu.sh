#!/usr/bin/env bash
# Client CPU of `load kvcache` on file:// against fio moving the same bytes in the same directory, and railbench's
# host time over device time. ROUNDS rounds, each running both back to back (which goes first alternates by round):
# - railbench: MLPerf Storage's option 1 at 1/SCALE with USERS users (16 in flight), one trial of SECONDS, no --verify,
#   calls of 1 MiB (--block-size): entries written as .npy files (fsync before each close) and read back with their
#   pages dropped first;
# - fio 3.x: as many files as railbench wrote entries, each of their mean size in whole MiB (at least 1: fio moves
#   whole blocks only), written one after the other (bs 1 MiB,
#   psync, fsync_on_close) and then read (invalidate=1: each file's pages dropped, as railbench does) as many times
#   over as railbench read each entry on average (loops), the files in a subdirectory of the same directory; the
#   sizes come from the latest railbench run (a round where fio goes first uses the round before's).
# CPU is each process's user + system time (bash's `times` of the child: the whole process, start-up included, on
# both sides), per GiB it wrote and read (railbench: its storage bytes, counts.bytes_written + bytes_read; fio: its
# io_bytes). railbench's own CPU over the trial alone (phases[].cpu_s) is printed beside. host/device is the trial's
# host_device_ratio (docs/kvcache.md): the client's own time over the file system's, in %; MLPerf Storage's users ask
# for at most 2 % on file://. Per round one line; at the end min / median / max over the rounds.
# Usage: tests/bench/kvcache_cpu.sh [SECONDS]   (BENCH_SECONDS, default 30; BENCH_ROUNDS, default 5; BENCH_SCALE,
#        default 64: entries of 1 to 50 MiB; BENCH_USERS, default 8; BENCH_DIR: where the files go, default the
#        script's temporary directory under build/tmp; a directory of its own is made there and removed)
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
SECS=${1:-${BENCH_SECONDS:-30}}
ROUNDS=${BENCH_ROUNDS:-5}
SCALE=${BENCH_SCALE:-64}
USERS=${BENCH_USERS:-8}
command -v fio >/dev/null || fail "fio not installed (scripts/deps.sh)"
D=$(mktemp -d "${BENCH_DIR:-$T}/kvcache_cpu.XXXXXX") || fail "no directory under ${BENCH_DIR:-$T}"
AT_EXIT+=("rm -rf '$D'")
mkdir "$D/fio"
GIB=1073741824

# cpu_run OUT CMD...: runs CMD (stdout to OUT, stderr to OUT.err; a failure fails the script) and prints its user +
# system CPU seconds (the second line of `times`: the subshell's waited children).
cpu_run() {
    local out=$1; shift
    ( "$@" >"$out" 2>"$out.err" || { cat "$out.err" >&2; exit 1; }; times ) | awk 'NR == 2 {
        split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.6f\n", u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
}
# stats NAME V...: one table row with the count, min, median and max of the values.
stats() { local name=$1; shift
    printf '%s\n' "$@" | sort -g | awk -v n="$name" '{v[NR] = $1} END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "| %s | %d | %.4f | %.4f | %.4f |\n", n, NR, v[1], m, v[NR] }'; }

NF=0 SIZE=0 LOOPS=1
# rb R: one railbench run; sets rb_cpu (process, s/GiB), rb_trial (trial alone, s/GiB), hd (%), and the sizes fio
# takes next (NF files of SIZE bytes, read LOOPS times).
rb() {
    local out=$T/rb-$1 cpu
    cpu=$(cpu_run "$out.out" "$RB" load kvcache "file://$D" --option 1 --scale "1/$SCALE" --users "$USERS" \
        --duration "${SECS}s" --trials 1 --block-size 1MiB --out "$out" --quiet) || fail "load kvcache (round $1)"
    read -r bytes tcpu hdpct NF SIZE LOOPS < <(jq -r '.summary.trials[0] as $t | $t.counts as $c |
        if $c.writes == 0 then error("no entry written") else [$c.bytes_written + $c.bytes_read,
        ([.phases[].cpu_s] | add), $t.host_device_ratio * 100, $c.writes, ([($c.bytes_written / $c.writes / 1048576 | floor), 1] | max) * 1048576,
        ([($c.reads / $c.writes + 0.5 | floor), 1] | max)] | @tsv end' "$out/result.json")
    rb_cpu=$(awk -v c="$cpu" -v b="$bytes" -v g="$GIB" 'BEGIN { print c / (b / g) }')
    rb_trial=$(awk -v c="$tcpu" -v b="$bytes" -v g="$GIB" 'BEGIN { print c / (b / g) }')
    rb_bytes=$bytes
}
# fio_jobs: the job file: NF files of SIZE bytes written one at a time (fsync on each close), then read LOOPS times.
fio_jobs() {
    printf '[global]\nioengine=psync\nbs=1M\nfallocate=none\ndirectory=%s\nnrfiles=%s\nfilesize=%s\n' "$D/fio" "$NF" "$SIZE"
    # shellcheck disable=SC2016 # $filenum is fio's own
    printf 'openfiles=1\nfile_service_type=sequential\nfilename_format=kv.$filenum\n'
    printf '[write]\nrw=write\nfsync_on_close=1\n[read]\nstonewall\nrw=read\ninvalidate=1\nloops=%s\n' "$LOOPS"
}
# fi R: one fio run on the sizes of the latest railbench run; sets fio_cpu (s/GiB).
fi_() {
    local out=$T/fio-$1 cpu bytes
    fio_jobs >"$out.fio"
    cpu=$(cpu_run "$out.json" fio --output-format=json "$out.fio") || fail "fio (round $1)"
    bytes=$(jq '[.jobs[] | .write.io_bytes + .read.io_bytes] | add' "$out.json")
    [ "$bytes" -gt 0 ] || fail "fio moved no byte (round $1)"
    rm -f "$D/fio"/kv.*
    fio_cpu=$(awk -v c="$cpu" -v b="$bytes" -v g="$GIB" 'BEGIN { print c / (b / g) }')
    fio_bytes=$bytes
}

RBC=() RBT=() FIOC=() RATIO=() HD=()
for r in $(seq "$ROUNDS"); do
    sync
    if (( r % 2 )) || [ "$NF" -eq 0 ]; then rb "$r"; sync; fi_ "$r"; else fi_ "$r"; sync; rb "$r"; fi
    printf 'round %d: railbench %.4f CPU s/GiB (trial alone %.4f) of %d bytes, host/device %.3f %%; fio %.4f CPU s/GiB of %d bytes (%d files of %d bytes, read %d times)\n' \
        "$r" "$rb_cpu" "$rb_trial" "$rb_bytes" "$hdpct" "$fio_cpu" "$fio_bytes" "$NF" "$SIZE" "$LOOPS"
    RBC+=("$rb_cpu") RBT+=("$rb_trial") FIOC+=("$fio_cpu") HD+=("$hdpct")
    RATIO+=("$(awk -v a="$rb_cpu" -v b="$fio_cpu" 'BEGIN { print a / b }')")
done

printf '\noption 1 at 1/%d, %d users, %s s a trial, %d rounds, in %s (%s)\n' "$SCALE" "$USERS" "$SECS" "$ROUNDS" \
    "$D" "$(df -T "$D" | awk 'NR == 2 {print $2}')"
printf '| figure | rounds | min | median | max |\n|---|---:|---:|---:|---:|\n'
stats "railbench CPU s/GiB (process)" "${RBC[@]}"
stats "railbench CPU s/GiB (trial alone)" "${RBT[@]}"
stats "fio CPU s/GiB (process)" "${FIOC[@]}"
stats "railbench / fio" "${RATIO[@]}"
stats "railbench host / device time, %" "${HD[@]}"
