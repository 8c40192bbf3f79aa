#!/usr/bin/env bash
# Times railbench fabric sim sweeps at 32,768 GPUs (best of 5 wall-clock runs, plus the model's own time
# from the JSON) against the same binary's start-up and a 256-GPU sweep in the same invocation.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
RB=$here/build/railbench

# best_of N CMD...: prints the best wall-clock seconds of N runs of CMD (stdout to $out).
out=$(mktemp)
trap 'rm -f "$out"' EXIT
best_of() {
    local n=$1 best="" i t0 t1; shift
    for i in $(seq "$n"); do
        t0=$(date +%s%N)
        "$@" >"$out"
        t1=$(date +%s%N)
        if [ -z "$best" ] || [ $((t1 - t0)) -lt "$best" ]; then best=$((t1 - t0)); fi
    done
    awk -v b="$best" 'BEGIN { printf "%.4f", b / 1e9 }'
}

start=$(best_of 5 "$RB" version)
printf '%-52s %8s %9s %8s\n' "allreduce sweep -b 8 -e 8G -f 2 (31 sizes)" "wall s" "model s" "/ start"
printf '%-52s %8s %9s %8s\n' "railbench version (process start, reference)" "$start" "-" "1.00"
row() {
    local label=$1 wall model; shift
    wall=$(best_of 5 "$RB" fabric sim "$@" -b 8 -e 8G --json)
    model=$(jq -r '.model_time_s | . * 10000 | round / 10000' "$out")
    printf '%-52s %8s %9s %8s\n' "$label" "$wall" "$model" "$(awk -v a="$wall" -v b="$start" 'BEGIN { printf "%.2f", a / b }')"
}
row "256 GPUs, ring" --nodes 32
row "32,768 GPUs, ring" --nodes 4096
row "32,768 GPUs, all five algorithms" --nodes 4096 --algo all
row "32,768 GPUs, hier, --compare (three designs)" --nodes 4096 --algo hier --compare
row "32,768 GPUs, rhd, --compare (three designs)" --nodes 4096 --algo rhd --compare
