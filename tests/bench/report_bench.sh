#!/usr/bin/env bash
# Times railbench report over 1,000 result directories (every fixture kind, round robin) against reading the same
# files with cat and parsing them with jq -s in the same invocation; prints seconds and ratios (best of N).
# BENCH_RUNS (default 1000) sets the number of directories, BENCH_ROUNDS (default 3) the runs per command.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
RB=$here/build/railbench
runs=${BENCH_RUNS:-1000}
rounds=${BENCH_ROUNDS:-3}
mkdir -p "$here/build/tmp"
T=$(mktemp -d "$here/build/tmp/report_bench.XXXXXX")
trap 'rm -rf "$T"' EXIT

# The fixtures, copied round robin with a label telling the copies apart (the killed run included: it has no result.json).
python3 - "$here/tests/fixtures/report" "$T/runs" "$runs" <<'PY'
import json, os, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
kinds = sorted(d for d in os.listdir(src) if os.path.isfile(os.path.join(src, d, "intervals.jsonl"))
               or os.path.isfile(os.path.join(src, d, "result.json")))
data = {}
for k in kinds:
    data[k] = {}
    for f in ("result.json", "intervals.jsonl"):
        p = os.path.join(src, k, f)
        if os.path.isfile(p):
            data[k][f] = open(p).read()
for i in range(n):
    k = kinds[i % len(kinds)]
    d = os.path.join(dst, "run-%04d-%s" % (i, k))
    os.makedirs(d)
    for f, text in data[k].items():
        if f == "result.json":
            r = json.loads(text)
            if isinstance(r.get("labels"), dict):
                r["labels"]["bench"] = str(i)
            text = json.dumps(r, separators=(",", ":"))
        open(os.path.join(d, f), "w").write(text)
PY
cd "$T/runs"
files=$(find . -name result.json | wc -l)
bytes=$(cat ./*/result.json ./*/intervals.jsonl 2>/dev/null | wc -c)

# best SECONDS of ROUNDS runs of CMD (stdout and stderr discarded).
best() {
    local best="" i t0 t1
    for i in $(seq "$rounds"); do
        t0=$(date +%s%N)
        "$@" >/dev/null 2>&1 || true
        t1=$(date +%s%N)
        if [ -z "$best" ] || [ $((t1 - t0)) -lt "$best" ]; then best=$((t1 - t0)); fi
    done
    awk -v b="$best" 'BEGIN { printf "%.3f", b / 1e9 }'
}
catall() { cat ./*/result.json ./*/intervals.jsonl 2>/dev/null; }
jqall() { jq -s 'length' ./*/result.json; }

t_cat=$(best catall)
t_jq=$(best jqall)
echo "$runs result directories ($files with result.json, $((bytes / 1024)) KiB), best of $rounds"
printf '%-58s %8s %9s\n' "command" "s" "/ jq -s"
row() {
    local label=$1 t; shift
    t=$(best "$@")
    printf '%-58s %8s %9s\n' "$label" "$t" "$(awk -v a="$t" -v b="$t_jq" 'BEGIN { printf "%.2f", a / b }')"
}
printf '%-58s %8s %9s\n' "cat of every result.json and intervals.jsonl (reference)" "$t_cat" \
    "$(awk -v a="$t_cat" -v b="$t_jq" 'BEGIN { printf "%.2f", a / b }')"
printf '%-58s %8s %9s\n' "jq -s length over every result.json (reference)" "$t_jq" "1.00"
row "railbench report DIR (markdown tables)" "$RB" report "$T/runs"
row "railbench report run-* (1,000 arguments)" "$RB" report ./run-*
row "railbench report --format json DIR" "$RB" report --format json "$T/runs"
row "railbench report --html FILE DIR (+ intervals, histograms)" "$RB" report --html "$T/r.html" "$T/runs"
