#!/usr/bin/env bash
# make demo: runs railbench's main jobs against local servers and ends with a results table.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
RB=$here/build/railbench
out=railbench-results/demo-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none

echo "== host counters under mpirun -np 2 (3 s)"
mpirun --oversubscribe -np 2 "$RB" fabric counters --duration 3s --out "$out/counters" --quiet >/dev/null
cat "$out/counters/table.md"
echo
# Last: one report over every run above (a directory of runs stands for all of them).
echo "== railbench report over everything the demo ran"
"$RB" report "$out" -o "$out/report.md" --html "$out/report.html" --quiet
cat "$out/report.md"
echo "results: $out"
echo "HTML report: $out/report.html"
