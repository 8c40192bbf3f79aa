#!/usr/bin/env bash
# The all-reduce of load train --overlap (MPI_Iallreduce on the collective thread, MPI_Test and sched_yield) against the
# blocking MPI_Allreduce of the serial step, same size and ranks: prints both mean times and the ratio per size.
# Usage: tests/bench/train_overlap.sh [SIZES]; 2 ranks on this host, 10 steps of 100 ms compute per run;
# BENCH_ROUNDS rounds (default 3), a row each (the means cover 18 all-reduces, so one stall shows).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
SIZES=${1:-${BENCH_SIZES:-1MiB 4MiB 16MiB}}
ROUNDS=${BENCH_ROUNDS:-3}
serve_objects 40 4096

train() { # OUT GRAD EXTRA_ARGS...
    local out=$1 grad=$2
    shift 2
    rb_mpirun 2 "$RB" load train "http://127.0.0.1:$PORT/d" --objects 40 -b 2 --compute-time 100ms \
        --grad-bytes "$grad" --steps 10 --out "$T/$out" --quiet "$@" >/dev/null 2>&1
}
printf '%-8s %22s %26s %8s\n' size "blocking MPI_Allreduce" "collective thread (alone)" ratio
for g in $SIZES; do
    for r in $(seq "$ROUNDS"); do
        train "serial-$g-$r" "$g"
        train "overlap-$g-$r" "$g" --overlap
        b=$(jq '.summary.train_epochs[0].step_time.allreduce_ns' "$T/serial-$g-$r/result.json")
        o=$(jq '.summary.interference.collective_alone.step.allreduce_ns' "$T/overlap-$g-$r/result.json")
        awk -v g="$g" -v b="$b" -v o="$o" 'BEGIN { printf "%-8s %19.2f ms %23.2f ms %8.2f\n", g, b / 1e6, o / 1e6, o / b }'
    done
done
