/* Counters and latency histograms of one phase, as one flat block of uint64_t that ranks merge by summing. */
#ifndef RB_STATS_H
#define RB_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "railbench/hist.h"

#define RB_STATS_ERR_MAX 12
#define RB_STATS_EXTRA_MAX 8

/*
 * Every member is uint64_t so the whole struct reduces across ranks with
 * one MPI_Reduce(MPI_UINT64_T, MPI_SUM), after which only the histograms'
 * min/max need fixing (rb_stats_minmax_* below). Error classes and extra
 * counters are named by the phase (struct rb_phase), not here.
 * Threads: a struct rb_stats belongs to one thread; none of these functions
 * lock. Workers hand copies to the main thread, which merges them.
 */
struct rb_stats {
    uint64_t ops;                        /* completed operations, errors included */
    uint64_t bytes;                      /* payload bytes moved */
    uint64_t errors;                     /* sum of err[] */
    uint64_t err[RB_STATS_ERR_MAX];      /* errors by class */
    uint64_t extra[RB_STATS_EXTRA_MAX];  /* command-specific counts (cache hits, redirects, ...) */
    struct rb_hist lat;                  /* total latency per operation, ns */
    struct rb_hist ttfb;                 /* time to first byte, ns (empty where meaningless) */
};
#define RB_STATS_U64S (sizeof(struct rb_stats) / sizeof(uint64_t))

/* Names of a phase's error classes and extra counters; NULL-terminated arrays, may be NULL. */
struct rb_stats_names {
    const char *const *err;
    const char *const *extra;
};

/* Empties s. */
void rb_stats_reset(struct rb_stats *s);

/* Allocates an empty struct (it is large: two histograms); NULL on OOM. rb_stats_free is NULL-safe. */
struct rb_stats *rb_stats_new(void);
void rb_stats_free(struct rb_stats *s);

/* Records one error of class cls (index into the phase's error names). */
static inline void rb_stats_error(struct rb_stats *s, unsigned cls)
{
    s->errors++;
    s->err[cls < RB_STATS_ERR_MAX ? cls : RB_STATS_ERR_MAX - 1]++;
}

/* dst += src, histograms merged. */
void rb_stats_merge(struct rb_stats *dst, const struct rb_stats *src);

/* The min/max values of both histograms packed for one MPI_MIN reduce (maxima stored as ~max). */
void rb_stats_minmax_pack(const struct rb_stats *s, uint64_t out[4]);
void rb_stats_minmax_unpack(struct rb_stats *s, const uint64_t in[4]);

/*
 * Adds the standard figures of s over duration_s to obj: count, bytes,
 * duration_s, throughput_bytes_per_s, ops_per_s (successful operations
 * per second; failed ones are errors_per_s; all three null when duration_s
 * is 0), errors {class: n} (with
 * "total"), extra counters by name, latency_ns and ttfb_ns summaries, and
 * with full_hist the histograms themselves ("latency_hist", "ttfb_hist").
 */
void rb_stats_to_json(cJSON *obj, const struct rb_stats *s, const struct rb_stats_names *names,
                      double duration_s, bool full_hist);

#endif
