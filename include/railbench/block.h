/* railbench block: the figures of a sweep point, the latency SLO and the knee of an IOPS-vs-latency curve. */
#ifndef RB_BLOCK_H
#define RB_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "railbench/fio.h"

/* Which latency an SLO bounds: fio's completion latency (clat) or total latency (lat = slat + clat). */
enum rb_block_lat { RB_BLOCK_CLAT, RB_BLOCK_LAT };

/* A latency bound such as "p99<=500us": percentile index into rb_fio_pct, bound, strictness. */
struct rb_block_slo {
    enum rb_block_lat kind;
    int pct;                 /* index into rb_fio_pct / rb_fio_pct_key */
    uint64_t bound_ns;
    bool inclusive;          /* "<=" rather than "<" */
    char text[64];           /* canonical form, e.g. "clat p99<=500us" */
};

/* One point of a sweep, aggregated over every rank. */
struct rb_block_point {
    uint64_t bs_bytes, iodepth, numjobs;
    double iops, bw_bytes_per_s;
    uint64_t clat_ns[RB_FIO_PCTS];   /* at rb_fio_pct */
    uint64_t lat_ns[RB_FIO_PCTS];
    double disk_util_pct;            /* < 0 when unknown */
};

/* The knee rule's thresholds (rb_block_knee). */
#define RB_BLOCK_KNEE_MAX_IOPS_GAIN 0.10
#define RB_BLOCK_KNEE_MIN_P99_GROWTH 0.50

/*
 * Parses an SLO: [clat|lat] PERCENTILE (<=|<) DURATION, blanks allowed
 * between the parts, e.g. "p99<=500us", "p99.9 < 2ms", "lat p50<=100us".
 * Percentiles: p50 p90 p99 p99.9 (or p999) p99.99 (or p9999); durations as
 * rb_parse_duration (a plain number is seconds). The latency defaults to
 * clat. Returns 0, or -EINVAL with one sentence in err naming the accepted form.
 */
int rb_block_slo_parse(const char *s, struct rb_block_slo *slo, char *err, size_t errlen);

/* Outstanding I/O of a point: iodepth x numjobs (per rank), the x axis of the curve. */
uint64_t rb_block_outstanding(const struct rb_block_point *p);

/* True when the point's latency at the SLO's percentile is within the bound. */
bool rb_block_slo_met(const struct rb_block_slo *slo, const struct rb_block_point *p);

/*
 * Index of the point with the highest IOPS that meets slo among pts[0..n)
 * (on equal IOPS the one with less outstanding I/O), or -1 when none does.
 */
int rb_block_slo_best(const struct rb_block_slo *slo, const struct rb_block_point *pts, size_t n);

/*
 * The knee of one curve, pts[0..n) in increasing outstanding I/O: the last
 * point before the first step that buys less than 10 % more IOPS
 * (RB_BLOCK_KNEE_MAX_IOPS_GAIN) for more than 50 % more clat p99
 * (RB_BLOCK_KNEE_MIN_P99_GROWTH). Returns its index, or -1 when no step does
 * (IOPS still scale, or latency stays flat, up to the last point).
 */
int rb_block_knee(const struct rb_block_point *pts, size_t n);

#endif
