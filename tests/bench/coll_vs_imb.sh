#!/usr/bin/env bash
# Benchmark: railbench coll bibw, bw and latency against Intel MPI Benchmarks' Biband, Uniband and PingPong, built
# from IMB's source when one is given, on the same 2 ranks, in rounds; prints the ratio per size (min, median, max
# over the rounds). Not a timed test: it measures. Nothing of IMB is kept in this repository.
# On a shared machine one run says more about the neighbours than about either tool, so each round runs the two
# back to back in alternating order (IMB first in odd rounds, railbench first in even ones: a drift in the load
# favours neither), each COLL_IMB_BEST times in a row, and takes each one's best (bandwidth: highest, latency:
# lowest): load only ever slows a run down, so the best of a few is the figure least disturbed by it.
#
# Environment: IMB_SRC (a checkout of github.com/intel/mpi-benchmarks; without it the bench says so and stops),
# IMB_BUILD (where to build it, default /tmp/railbench-imb), COLL_IMB_ROUNDS (default 8), COLL_IMB_BEST (runs of
# each tool per round, default 3), COLL_IMB_SIZES (log2 of the sizes, default "16 20": 64 KiB and 1 MiB),
# COLL_IMB_ITERS (timed windows at 64 KiB, default 200; scaled by 64 KiB / size above it, at least 10),
# COLL_IMB_TESTS (IMB:railbench pairs, default "Biband:bibw Uniband:bw PingPong:latency"), COLL_IMB_NICE (a
# niceness for both tools' runs, e.g. -10: on a machine shared with other work, two busy-polling ranks that lose
# their core for a time slice swing the figures tenfold, and a raised priority for both keeps them on it; unset:
# ordinary priority), COLL_IMB_RB (the railbench binary, default build/railbench).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
RB=${COLL_IMB_RB:-$here/build/railbench}
ROUNDS=${COLL_IMB_ROUNDS:-8}
BEST=${COLL_IMB_BEST:-3}
TESTS=${COLL_IMB_TESTS:-Biband:bibw Uniband:bw PingPong:latency}
LOGS=${COLL_IMB_SIZES:-16 20}
ITERS=${COLL_IMB_ITERS:-200}
BUILD=${IMB_BUILD:-/tmp/railbench-imb}
if [ -z "${IMB_SRC:-}" ] || [ ! -f "$IMB_SRC/src_c/IMB_bandwidth.c" ]; then
    echo "IMB not available: set IMB_SRC to a checkout of github.com/intel/mpi-benchmarks (nothing measured)"
    exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Containers forbid the ptrace-based single copy; both go through the same shared-memory copies.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
if [ ! -x "$BUILD/IMB-MPI1" ]; then
    rm -rf "$BUILD"
    mkdir -p "$BUILD"
    cp -r "$IMB_SRC"/. "$BUILD"/
    # Open MPI's C++ bindings do not build with IMB's -Werror; IMB uses the C API only.
    make -C "$BUILD" -j2 IMB-MPI1 CC=mpicc CXX=mpicxx \
        CXXFLAGS="-O2 -DOMPI_SKIP_MPICXX=1 -Ihelpers -I../src_c -DMPI1 -I." >"$BUILD/build.log" 2>&1 ||
        { echo "IMB did not build (see $BUILD/build.log): nothing measured"; exit 0; }
fi
OUT=$(mktemp -d "${TMPDIR:-/tmp}/coll_vs_imb.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
MPI=(mpirun --bind-to none --mca btl self,vader -np 2)
[ -z "${COLL_IMB_NICE:-}" ] || MPI=(nice -n "$COLL_IMB_NICE" "${MPI[@]}")
echo "# IMB: ${MPI[*]} $BUILD/IMB-MPI1 Biband|Uniband|PingPong -msglog L:L -iter N -iter_policy off -window_size 64 -time 600"
echo "# railbench: ${MPI[*]} $RB coll bibw|bw|latency -m S:S -i N -x 10 -W 64   (N: $ITERS at 64 KiB, fewer above)"

echo "# rounds: $ROUNDS, each tool $BEST times per round (best taken), order alternating"

# imb TEST L N K, rb TEST S N K: run K of each tool.
imb() { "${MPI[@]}" "$BUILD/IMB-MPI1" "$1" -msglog "$2:$2" -iter "$3" -iter_policy off -window_size 64 -time 600 \
    >"$OUT/imb-$1-$((1 << $2))-$round-$4.txt" 2>&1; }
rb() { "${MPI[@]}" "$RB" coll "$1" -m "$2:$2" -i "$3" -x 10 -W 64 --out "$OUT/rb-$1-$2-$round-$4" --quiet >/dev/null 2>&1; }
for round in $(seq "$ROUNDS"); do
    for L in $LOGS; do
        S=$((1 << L))
        n=$((ITERS * 65536 / S))
        [ "$n" -ge 10 ] || n=10
        [ "$S" -ge 65536 ] || n=$ITERS
        for pair in $TESTS; do
            t_imb=${pair%%:*} t_rb=${pair#*:}
            for k in $(seq "$BEST"); do
                if [ $((round % 2)) = 1 ]; then
                    imb "$t_imb" "$L" "$n" "$k"; rb "$t_rb" "$S" "$n" "$k"
                else
                    rb "$t_rb" "$S" "$n" "$k"; imb "$t_imb" "$L" "$n" "$k"
                fi
            done
        done
    done
done

python3 - "$OUT" "$ROUNDS" "$BEST" "$TESTS" $LOGS <<'PY'
import glob, json, re, statistics, sys
out, rounds, best, tests, logs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(), [int(x) for x in sys.argv[5:]]

def imb_row(path, size):
    """IMB's table row of size: Biband/Uniband '#bytes #repetitions Mbytes/sec Msg/sec', PingPong
    '#bytes #repetitions t[usec] Mbytes/sec'."""
    for line in open(path):
        f = line.split()
        if len(f) >= 4 and f[0] == str(size):
            return [float(x) for x in f[2:4]]
    raise SystemExit(f'{path}: no row for {size} B')

def rb_row(path):
    r = json.load(open(f'{path}/result.json'))
    return r['phases'][0]

print(f"\n== railbench / IMB, 2 ranks, {rounds} rounds, best of {best} runs of each per round "
      "(min / median / max of the per-round ratios)")
print(f"{'test':>20} {'size (B)':>10} {'IMB':>12} {'railbench':>12} {'min':>6} {'median':>6} {'max':>6}")
for L in logs:
    S = 1 << L
    for imb, rb in (t.split(':') for t in tests):
        what = 'us' if rb == 'latency' else 'MB/s'
        ratios, ivals, rvals = [], [], []
        for r in range(1, rounds + 1):
            runs = range(1, best + 1)
            if what == 'us':  # lower is better: IMB's time over ours, so > 1 means railbench is faster
                iv = min(imb_row(f'{out}/imb-{imb}-{S}-{r}-{k}.txt', S)[0] for k in runs)
                rv = min(rb_row(f'{out}/rb-{rb}-{S}-{r}-{k}')['latency_us'] for k in runs)
                ratios.append(iv / rv)
            else:
                iv = max(imb_row(f'{out}/imb-{imb}-{S}-{r}-{k}.txt', S)[0] for k in runs)
                rv = max(rb_row(f'{out}/rb-{rb}-{S}-{r}-{k}')['bandwidth_mb_per_s'] for k in runs)
                ratios.append(rv / iv)
            ivals.append(iv)
            rvals.append(rv)
        print(f"{imb + '/' + rb:>20} {S:>10} {statistics.median(ivals):>9.1f} {what:<2} "
              f"{statistics.median(rvals):>9.1f} {what:<2} {min(ratios):>6.3f} {statistics.median(ratios):>6.3f} "
              f"{max(ratios):>6.3f}")
        print(f"{'':>20} {'':>10} rounds: " + ' '.join(f'{x:.3f}' for x in ratios))
print("(bandwidth: railbench / IMB; latency: IMB / railbench; 1.0 = the same)")
PY
