#!/usr/bin/env bash
# Benchmark: allreduce busbw of ring, rhd and hier against MPI's own (mpi) on the same ranks in the same run,
# 8 B to 256 MiB; prints the ratio per size and the 8 B latency ratio. Not a timed test: it measures.
#
# Environment: COLL_BENCH_NP (default "2 4"), COLL_BENCH_REPS (runs per size, best kept; default 3),
# COLL_BENCH_MAX (largest size, default 256M), COLL_BENCH_ITERS (-n from 1 MiB to 16 MiB, x2.5 below,
# /4 above; default 20), COLL_BENCH_OUT (keep the result directories there).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
RB=$here/build/railbench
NPS=${COLL_BENCH_NP:-2 4}
REPS=${COLL_BENCH_REPS:-3}
MAX=${COLL_BENCH_MAX:-256M}
ITERS=${COLL_BENCH_ITERS:-20}
OUT=${COLL_BENCH_OUT:-}
if [ -z "$OUT" ]; then
    mkdir -p "$here/build/tmp"
    OUT=$(mktemp -d "$here/build/tmp/coll_vs_mpi.XXXXXX")
    trap 'rm -rf "$OUT"' EXIT
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Containers forbid the ptrace-based single copy; both MPI and railbench go through the same shared-memory copies.
export OMPI_MCA_btl_vader_single_copy_mechanism=none

# One run per size with the four algorithms back to back, the sweep repeated REPS times: the machine is
# shared and its load drifts, so each ratio compares algorithms measured seconds apart, not minutes.
sizes=$(python3 -c "
m = {'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30}
s = '$MAX'.lower()
top = int(s[:-1]) * m[s[-1]] if s[-1] in m else int(s)
x = 8
while x <= top:
    print(x)
    x *= 2")
for rep in $(seq "$REPS"); do
    for np in $NPS; do
        # More ranks than cores: idle ranks yield. 4 ranks run as 2 nodes x 2 rails, so hier uses both levels.
        extra=()
        [ "$np" -gt "$(nproc)" ] && extra+=(--oversubscribe --mca mpi_yield_when_idle 1)
        coll=()
        [ "$np" = 4 ] && coll+=(--ranks-per-node 2)
        for size in $sizes; do
            iters=$ITERS
            [ "$size" -lt $((1 << 20)) ] && iters=$((ITERS * 5 / 2))
            [ "$size" -gt $((16 << 20)) ] && iters=$((ITERS / 4 > 0 ? ITERS / 4 : 1))
            cmd=(mpirun "${extra[@]}" --bind-to none --mca btl self,vader -np "$np" "$RB" coll allreduce
                 -b "$size" -e "$size" -n "$iters" -w 2 -c 1 --algo mpi,ring,rhd,hier "${coll[@]}"
                 --out "$OUT/np$np-$size-$rep" --quiet)
            [ "$rep" = 1 ] && echo "# ${cmd[*]}"
            "${cmd[@]}" >/dev/null
        done
    done
done

python3 - "$OUT" $NPS <<'PY'
import glob, json, sys
out, nps = sys.argv[1], sys.argv[2:]
algos = ["ring", "rhd", "hier"]
for np in nps:
    best_bw, best_t = {}, {}
    runs = sorted(glob.glob(f"{out}/np{np}-*/result.json"))
    reps = len({p.rsplit("-", 1)[1] for p in runs})
    for path in runs:
        r = json.load(open(path))
        assert r["summary"]["wrong_total"] == 0, f"{path}: wrong values"
        for row in r["summary"]["collective_rows"]:
            k = (row["algo"], row["size_bytes"])
            best_bw[k] = max(best_bw.get(k, 0.0), row["oop"]["busbw_gbps"])
            best_t[k] = min(best_t.get(k, float("inf")), row["oop"]["time_us"])
    sizes = sorted({s for (_, s) in best_bw})
    print(f"\n== allreduce float sum, {np} ranks: busbw (GB/s, out-of-place, best of {reps} runs) and ratio to mpi")
    print(f"{'size (B)':>12} {'mpi':>8} " + " ".join(f"{a:>8} {a + '/mpi':>9}" for a in algos))
    low = {a: float("inf") for a in algos}
    for s in sizes:
        m = best_bw[("mpi", s)]
        cells = []
        for a in algos:
            b = best_bw[(a, s)]
            ratio = b / m if m > 0 else float("nan")
            if s >= 1 << 20:
                low[a] = min(low[a], ratio)
            cells.append(f"{b:8.2f} {ratio:9.2f}")
        print(f"{s:12d} {m:8.2f} " + " ".join(cells))
    t0 = best_t[("mpi", sizes[0])]
    print(f"latency at {sizes[0]} B: mpi {t0:.2f} us; " +
          "; ".join(f"{a} {best_t[(a, sizes[0])]:.2f} us ({best_t[(a, sizes[0])] / t0:.2f}x)" for a in algos) +
          "   (goal <= 1.5x)")
    if any(s >= 1 << 20 for s in sizes):
        print("lowest busbw ratio at >= 1 MiB: " + "; ".join(f"{a} {low[a]:.2f}" for a in algos) + "   (goal >= 1.0)")
PY
