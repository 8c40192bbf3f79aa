#!/usr/bin/env bash
# Benchmark: railbench coll bibw, bw and latency against Intel MPI Benchmarks' Biband, Uniband and PingPong, or
# against the OSU micro-benchmarks' osu_bibw, osu_bw and osu_latency, built from the peer's source when one is given,
# on the same 2 ranks, in rounds; prints the ratio per size (min, median, max over the rounds). Not a timed test: it
# measures. Nothing of IMB or OSU is kept in this repository.
# On a shared machine one run says more about the neighbours than about either tool, so each round runs the two
# back to back in alternating order (the peer first in odd rounds, railbench first in even ones: a drift in the load
# favours neither), each COLL_IMB_BEST times in a row, and takes each one's best (bandwidth: highest, latency:
# lowest): load only ever slows a run down, so the best of a few is the figure least disturbed by it.
# Why OSU as well: IMB takes its buffers from MPI_Alloc_mem (malloc: 16 bytes past a page at 1 MiB), OSU aligns them
# on a page as railbench does, and on this CPU the shared-memory copy's speed depends on that alignment (see
# BENCHMARKS.md); OSU's osu_bibw is also the method `coll bibw` follows (a window of receives, then of sends, both
# ranks at once, Waitall).
#
# Environment: OSU_SRC (a checkout of the OSU micro-benchmarks, e.g. 5.x with mpi/pt2pt/osu_bibw.c: the peer is
# OSU, built with mpicc from mpi/pt2pt; OSU runs every size from 1 B to 4 MiB with -i N -x 10 and the sizes asked
# for are read from its table), otherwise IMB_SRC (a checkout of github.com/intel/mpi-benchmarks; without either
# the bench says so and stops),
# IMB_BUILD (where to build IMB, default /tmp/railbench-imb; OSU is built in OSU_BUILD, default /tmp/railbench-osu),
# COLL_IMB_ROUNDS (default 8), COLL_IMB_BEST (runs of
# each tool per round, default 3), COLL_IMB_SIZES (log2 of the sizes, default "16 20": 64 KiB and 1 MiB),
# COLL_IMB_ITERS (timed windows at 64 KiB, default 200; scaled by 64 KiB / size above it, at least 10; with OSU,
# which runs every size with one -i, the same N at every size, default 100),
# COLL_IMB_TESTS (IMB:railbench pairs, default "Biband:bibw Uniband:bw PingPong:latency"; with OSU
# "osu_bibw:bibw osu_bw:bw osu_latency:latency"), COLL_IMB_NICE (a
# niceness for both tools' runs, e.g. -10: on a machine shared with other work, two busy-polling ranks that lose
# their core for a time slice swing the figures tenfold, and a raised priority for both keeps them on it; unset:
# ordinary priority), COLL_IMB_RB (the railbench binary, default build/railbench).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
RB=${COLL_IMB_RB:-$here/build/railbench}
ROUNDS=${COLL_IMB_ROUNDS:-8}
BEST=${COLL_IMB_BEST:-3}
LOGS=${COLL_IMB_SIZES:-16 20}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Containers forbid the ptrace-based single copy; both go through the same shared-memory copies.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
if [ -n "${OSU_SRC:-}" ]; then
    PEER=osu
    [ -f "$OSU_SRC/mpi/pt2pt/osu_bibw.c" ] ||
        { echo "OSU not found: $OSU_SRC/mpi/pt2pt/osu_bibw.c is missing (nothing measured)"; exit 0; }
    TESTS=${COLL_IMB_TESTS:-osu_bibw:bibw osu_bw:bw osu_latency:latency}
    ITERS=${COLL_IMB_ITERS:-100}
    BUILD=${OSU_BUILD:-/tmp/railbench-osu}
    if [ ! -x "$BUILD/osu_latency" ]; then
        rm -rf "$BUILD"
        mkdir -p "$BUILD"
        for t in osu_bibw osu_bw osu_latency; do
            mpicc -O2 -I"$OSU_SRC/mpi/pt2pt" -o "$BUILD/$t" "$OSU_SRC/mpi/pt2pt/$t.c" "$OSU_SRC/mpi/pt2pt/osu_pt2pt.c" \
                >>"$BUILD/build.log" 2>&1 || { echo "OSU did not build (see $BUILD/build.log): nothing measured"; exit 0; }
        done
    fi
else
    PEER=imb
    TESTS=${COLL_IMB_TESTS:-Biband:bibw Uniband:bw PingPong:latency}
    ITERS=${COLL_IMB_ITERS:-200}
    BUILD=${IMB_BUILD:-/tmp/railbench-imb}
    if [ -z "${IMB_SRC:-}" ] || [ ! -f "$IMB_SRC/src_c/IMB_bandwidth.c" ]; then
        echo "no peer: set OSU_SRC to a checkout of the OSU micro-benchmarks or IMB_SRC to one of" \
            "github.com/intel/mpi-benchmarks (nothing measured)"
        exit 0
    fi
    if [ ! -x "$BUILD/IMB-MPI1" ]; then
        rm -rf "$BUILD"
        mkdir -p "$BUILD"
        cp -r "$IMB_SRC"/. "$BUILD"/
        # Open MPI's C++ bindings do not build with IMB's -Werror; IMB uses the C API only.
        make -C "$BUILD" -j2 IMB-MPI1 CC=mpicc CXX=mpicxx \
            CXXFLAGS="-O2 -DOMPI_SKIP_MPICXX=1 -Ihelpers -I../src_c -DMPI1 -I." >"$BUILD/build.log" 2>&1 ||
            { echo "IMB did not build (see $BUILD/build.log): nothing measured"; exit 0; }
    fi
fi
OUT=$(mktemp -d "${TMPDIR:-/tmp}/coll_vs_imb.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
MPI=(mpirun --bind-to none --mca btl self,vader -np 2)
[ -z "${COLL_IMB_NICE:-}" ] || MPI=(nice -n "$COLL_IMB_NICE" "${MPI[@]}")
echo "# railbench: ${MPI[*]} $RB coll bibw|bw|latency -m S:S -i N -x 10 -W 64"
if [ "$PEER" = osu ]; then
    echo "# OSU: ${MPI[*]} $BUILD/osu_bibw|osu_bw|osu_latency -i $ITERS -x 10   (railbench -i $ITERS at every size)"
else
    echo "# IMB: ${MPI[*]} $BUILD/IMB-MPI1 Biband|Uniband|PingPong -msglog L:L -iter N -iter_policy off -window_size 64 -time 600"
    echo "#   (N: $ITERS at 64 KiB and below, scaled by 64 KiB / size above it, at least 10; railbench the same N)"
fi
echo "# rounds: $ROUNDS, each tool $BEST times per round (best taken), order alternating"

# peer TEST L N K, rb TEST S N K: run K of each tool; the file names carry the size (OSU's one run serves every size).
peer() {
    if [ "$PEER" = osu ]; then
        "${MPI[@]}" "$BUILD/$1" -i "$3" -x 10 >"$OUT/peer-$1-all-$round-$4.txt" 2>&1
        for L in $LOGS; do ln -sf "peer-$1-all-$round-$4.txt" "$OUT/peer-$1-$((1 << L))-$round-$4.txt"; done
    else
        "${MPI[@]}" "$BUILD/IMB-MPI1" "$1" -msglog "$2:$2" -iter "$3" -iter_policy off -window_size 64 -time 600 \
            >"$OUT/peer-$1-$((1 << $2))-$round-$4.txt" 2>&1
    fi
}
rb() { "${MPI[@]}" "$RB" coll "$1" -m "$2:$2" -i "$3" -x 10 -W 64 --out "$OUT/rb-$1-$2-$round-$4" --quiet >/dev/null 2>&1; }
# pass PEER_TEST RB_TEST L N K: one run of each, the order alternating by round.
pass() {
    if [ $((round % 2)) = 1 ]; then
        peer "$1" "$3" "$4" "$5"; rb "$2" "$((1 << $3))" "$4" "$5"
    else
        rb "$2" "$((1 << $3))" "$4" "$5"; peer "$1" "$3" "$4" "$5"
    fi
}
for round in $(seq "$ROUNDS"); do
    for pair in $TESTS; do
        t_peer=${pair%%:*} t_rb=${pair#*:}
        for k in $(seq "$BEST"); do
            if [ "$PEER" = osu ]; then
                # One OSU run covers every size; railbench runs each size asked for, right after (or before) it.
                first=1
                for L in $LOGS; do
                    if [ $first = 1 ]; then pass "$t_peer" "$t_rb" "$L" "$ITERS" "$k"; first=0
                    else rb "$t_rb" "$((1 << L))" "$ITERS" "$k"; fi
                done
            else
                for L in $LOGS; do
                    S=$((1 << L))
                    n=$((ITERS * 65536 / S))
                    [ "$n" -ge 10 ] || n=10
                    [ "$S" -ge 65536 ] || n=$ITERS
                    pass "$t_peer" "$t_rb" "$L" "$n" "$k"
                done
            fi
        done
    done
done

python3 - "$OUT" "$PEER" "$ROUNDS" "$BEST" "$TESTS" $LOGS <<'PY'
import json, statistics, sys
out, peer, rounds, best, tests = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5].split()
logs = [int(x) for x in sys.argv[6:]]
name = {'osu': 'OSU', 'imb': 'IMB'}[peer]

def peer_value(path, size):
    """The peer's figure for size: IMB Biband/Uniband '#bytes #repetitions Mbytes/sec Msg/sec' and PingPong
    '#bytes #repetitions t[usec] Mbytes/sec' (the third column); OSU '# Size  Bandwidth (MB/s)' or
    '# Size  Latency (us)' (the second)."""
    col, width = (1, 2) if peer == 'osu' else (2, 4)
    for line in open(path):
        f = line.split()
        if len(f) >= width and f[0] == str(size):
            return float(f[col])
    raise SystemExit(f'{path}: no row for {size} B')

def rb_row(path):
    r = json.load(open(f'{path}/result.json'))
    return r['phases'][0]

print(f"\n== railbench / {name}, 2 ranks, {rounds} rounds, best of {best} runs of each per round "
      "(min / median / max of the per-round ratios)")
print(f"{'test':>20} {'size (B)':>10} {name:>12} {'railbench':>12} {'min':>6} {'median':>6} {'max':>6}")
for L in logs:
    S = 1 << L
    for pt, rb in (t.split(':') for t in tests):
        what = 'us' if rb == 'latency' else 'MB/s'
        ratios, pvals, rvals = [], [], []
        for r in range(1, rounds + 1):
            runs = range(1, best + 1)
            pv = [peer_value(f'{out}/peer-{pt}-{S}-{r}-{k}.txt', S) for k in runs]
            if what == 'us':  # lower is better: the peer's time over ours, so > 1 means railbench is faster
                pv, rv = min(pv), min(rb_row(f'{out}/rb-{rb}-{S}-{r}-{k}')['latency_us'] for k in runs)
                ratios.append(pv / rv)
            else:
                pv, rv = max(pv), max(rb_row(f'{out}/rb-{rb}-{S}-{r}-{k}')['bandwidth_mb_per_s'] for k in runs)
                ratios.append(rv / pv)
            pvals.append(pv)
            rvals.append(rv)
        print(f"{pt + '/' + rb:>20} {S:>10} {statistics.median(pvals):>9.1f} {what:<2} "
              f"{statistics.median(rvals):>9.1f} {what:<2} {min(ratios):>6.3f} {statistics.median(ratios):>6.3f} "
              f"{max(ratios):>6.3f}")
        print(f"{'':>20} {'':>10} rounds: " + ' '.join(f'{x:.3f}' for x in ratios))
print(f"(bandwidth: railbench / {name}; latency: {name} / railbench; 1.0 = the same)")
PY
