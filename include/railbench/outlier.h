/* The one outlier rule of railbench: median and MAD of a fleet, and who is far below (or above) it. */
#ifndef RB_OUTLIER_H
#define RB_OUTLIER_H

#include <stdbool.h>
#include <stddef.h>

/* The default threshold: a host or link below half the median (or a latency above twice it) is an outlier. */
#define RB_OUTLIER_THRESHOLD 0.5

/* Robust summary of a set of values (NaN values are ignored). */
struct rb_outlier_fleet {
    size_t n;        /* values counted */
    double median;
    double mad;      /* median absolute deviation from the median (unscaled) */
};

/*
 * Median and MAD of v[0..n), ignoring NaNs. Returns 0, or -EINVAL when no
 * value is left (fleet then holds n = 0 and NaNs), -ENOMEM when out of memory.
 * Does not modify v; thread-safe.
 */
int rb_outlier_fleet(const double *v, size_t n, struct rb_outlier_fleet *fleet);

/*
 * Robust z-score of x: (x - median) / (1.4826 * MAD), the MAD scaled to a
 * normal distribution's standard deviation (Rousseeuw and Croux 1993).
 * Infinite when MAD is 0 and x differs from the median; 0 when it equals it.
 */
double rb_outlier_z(const struct rb_outlier_fleet *fleet, double x);

/*
 * The rule every outlier report uses: for a figure where higher is better
 * (bandwidth, throughput, ops/s), x is an outlier when x < threshold x median;
 * where lower is better (latency), when x > median / threshold. threshold is
 * in (0, 1]; min_z > 0 additionally requires |robust z| >= min_z, so that a
 * fleet with a wide natural spread does not flag its ordinary members.
 * A fleet of fewer than 2 values or a NaN x flags nothing. Thread-safe.
 */
bool rb_outlier_is(const struct rb_outlier_fleet *fleet, double x, bool higher_is_better, double threshold,
                   double min_z);

/* x as a multiple of the fleet's median (NaN when the median is 0 or NaN). */
double rb_outlier_ratio(const struct rb_outlier_fleet *fleet, double x);

#endif
