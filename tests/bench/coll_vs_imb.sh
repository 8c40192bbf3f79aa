#!/usr/bin/env bash
# Benchmark: railbench coll bibw, bw and latency against Intel MPI Benchmarks' Biband, Uniband and PingPong, built
# from IMB's source when one is given, on the same 2 ranks, in alternating rounds; prints the ratio per size
# (min, median, max over the rounds). Not a timed test: it measures. Nothing of IMB is kept in this repository.
#
# Environment: IMB_SRC (a checkout of github.com/intel/mpi-benchmarks; without it the bench says so and stops),
# IMB_BUILD (where to build it, default /tmp/railbench-imb), COLL_IMB_ROUNDS (default 6),
# COLL_IMB_SIZES (log2 of the sizes, default "16 20": 64 KiB and 1 MiB), COLL_IMB_ITERS (timed windows at 64 KiB,
# default 100; scaled by 64 KiB / size above it, at least 10).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
RB=$here/build/railbench
ROUNDS=${COLL_IMB_ROUNDS:-6}
LOGS=${COLL_IMB_SIZES:-16 20}
ITERS=${COLL_IMB_ITERS:-100}
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
echo "# IMB: ${MPI[*]} $BUILD/IMB-MPI1 Biband|Uniband|PingPong -msglog L:L -iter N -iter_policy off -window_size 64 -time 600"
echo "# railbench: ${MPI[*]} $RB coll bibw|bw|latency -m S:S -i N -x 10 -W 64   (N: $ITERS at 64 KiB, fewer above)"

for round in $(seq "$ROUNDS"); do
    for L in $LOGS; do
        S=$((1 << L))
        n=$((ITERS * 65536 / S))
        [ "$n" -ge 10 ] || n=10
        [ "$S" -ge 65536 ] || n=$ITERS
        for pair in Biband:bibw Uniband:bw PingPong:latency; do
            imb=${pair%%:*} rb=${pair#*:}
            "${MPI[@]}" "$BUILD/IMB-MPI1" "$imb" -msglog "$L:$L" -iter "$n" -iter_policy off -window_size 64 -time 600 \
                >"$OUT/imb-$imb-$S-$round.txt" 2>&1
            "${MPI[@]}" "$RB" coll "$rb" -m "$S:$S" -i "$n" -x 10 -W 64 --out "$OUT/rb-$rb-$S-$round" --quiet \
                >/dev/null 2>&1
        done
    done
done

python3 - "$OUT" "$ROUNDS" $LOGS <<'PY'
import glob, json, re, statistics, sys
out, rounds, logs = sys.argv[1], int(sys.argv[2]), [int(x) for x in sys.argv[3:]]

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

print(f"\n== railbench / IMB, 2 ranks, {rounds} rounds (min / median / max of the per-round ratios)")
print(f"{'test':>20} {'size (B)':>10} {'IMB':>12} {'railbench':>12} {'min':>6} {'median':>6} {'max':>6}")
for L in logs:
    S = 1 << L
    for imb, rb, what in (('Biband', 'bibw', 'MB/s'), ('Uniband', 'bw', 'MB/s'), ('PingPong', 'latency', 'us')):
        ratios, ivals, rvals = [], [], []
        for k in range(1, rounds + 1):
            i = imb_row(f'{out}/imb-{imb}-{S}-{k}.txt', S)
            ph = rb_row(f'{out}/rb-{rb}-{S}-{k}')
            if what == 'us':  # lower is better: IMB's time over ours, so > 1 means railbench is faster
                iv, rv = i[0], ph['latency_us']
                ratios.append(iv / rv)
            else:
                iv, rv = i[0], ph['bandwidth_mb_per_s']
                ratios.append(rv / iv)
            ivals.append(iv)
            rvals.append(rv)
        print(f"{imb + '/' + rb:>20} {S:>10} {statistics.median(ivals):>9.1f} {what:<2} "
              f"{statistics.median(rvals):>9.1f} {what:<2} {min(ratios):>6.3f} {statistics.median(ratios):>6.3f} "
              f"{max(ratios):>6.3f}")
print("(bandwidth: railbench / IMB; latency: IMB / railbench; 1.0 = the same)")
PY
