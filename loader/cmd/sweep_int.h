/* railbench load sweep: one load phase per in-flight or rate step, and the knee of the throughput-latency curve. */
#ifndef RB_SWEEP_INT_H
#define RB_SWEEP_INT_H

#include <stddef.h>

/* The rule's defaults, in percent (the --knee-gain and --knee-latency options). */
#define RB_SWEEP_KNEE_GAIN_PCT 10.0
#define RB_SWEEP_KNEE_LATENCY_PCT 50.0

/* What the knee rule reads of one point of a sweep. */
struct rb_sweep_point {
    double throughput_bytes_per_s;
    double latency_avg_ns;
};

/*
 * The knee of pts[0..n), given in the order the sweep ran (increasing
 * in-flight requests or rate): the first point i such that the next point
 * adds less than gain_pct % throughput while its average latency grows by
 * more than latency_pct %. Returns i, or -1 when no step does (throughput
 * still grows, or latency stays flat, up to the last point) or n < 2. A
 * point without throughput or latency (nothing completed) is never a knee.
 * Pure; thread-safe.
 */
int rb_sweep_knee(const struct rb_sweep_point *pts, size_t n, double gain_pct, double latency_pct);

/* Entry point of `railbench load sweep` (argv[0] = "sweep"). Returns an exit status. */
int rb_load_sweep_main(int argc, char **argv);

#endif
