/* Log-linear latency histogram in nanoseconds with one fixed layout on every rank. */
#ifndef RB_HIST_H
#define RB_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/*
 * Layout: values below 2^RB_HIST_SUB_BITS have a bucket each; above, each
 * power of two [2^e, 2^(e+1)) is split into 2^RB_HIST_SUB_BITS equal buckets,
 * so a bucket is at most 1/128 of its lower bound wide (relative error
 * <= 0.78 %, or 0.39 % when a bucket is reported by its midpoint), and values
 * below 256 ns are exact. The top power is [2^47, 2^48) ns (39 to 78 hours);
 * larger values land in the last bucket and are still exact in max and sum.
 */
#define RB_HIST_SUB_BITS 7
#define RB_HIST_SUB_COUNT (1u << RB_HIST_SUB_BITS)
#define RB_HIST_MAX_EXP 47
#define RB_HIST_BUCKETS (RB_HIST_SUB_COUNT * (RB_HIST_MAX_EXP - RB_HIST_SUB_BITS + 2))

/*
 * The counts, total count and sum are one contiguous uint64_t array
 * (RB_HIST_U64S values starting at counts) so that ranks merge them with a
 * single MPI_Reduce(MPI_UINT64_T, MPI_SUM); min and max need MIN/MAX.
 */
struct rb_hist {
    uint64_t counts[RB_HIST_BUCKETS];
    uint64_t count;   /* number of recorded values */
    uint64_t sum_ns;  /* sum of recorded values (saturates at UINT64_MAX) */
    uint64_t min_ns;  /* UINT64_MAX when empty */
    uint64_t max_ns;  /* 0 when empty */
};
#define RB_HIST_U64S (RB_HIST_BUCKETS + 2)

/* Summary figures of a histogram, all in nanoseconds. */
struct rb_hist_summary {
    uint64_t count;
    uint64_t min_ns, p50_ns, p90_ns, p99_ns, p999_ns, p9999_ns, max_ns;
    double mean_ns;
};

/* Index of the bucket holding v. Never fails; values past the range map to the last bucket. */
static inline size_t rb_hist_index(uint64_t v)
{
    if (v < RB_HIST_SUB_COUNT)
        return (size_t)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v);
    if (e > RB_HIST_MAX_EXP)
        return RB_HIST_BUCKETS - 1;
    unsigned shift = e - RB_HIST_SUB_BITS;
    return (size_t)RB_HIST_SUB_COUNT * (e - RB_HIST_SUB_BITS + 1) +
           (size_t)((v >> shift) & (RB_HIST_SUB_COUNT - 1));
}

/* Records one value: a few arithmetic operations and increments, no allocation. Not thread-safe. */
static inline void rb_hist_record(struct rb_hist *h, uint64_t v)
{
    h->counts[rb_hist_index(v)]++;
    h->count++;
    h->sum_ns = (h->sum_ns + v < h->sum_ns) ? UINT64_MAX : h->sum_ns + v;
    if (v < h->min_ns)
        h->min_ns = v;
    if (v > h->max_ns)
        h->max_ns = v;
}

/*
 * Records value v n times, as n calls of rb_hist_record would (counts, count
 * and sum saturate at UINT64_MAX instead of wrapping). For histograms that
 * arrive already binned, such as fio's json+ latency bins. Not thread-safe.
 */
void rb_hist_record_n(struct rb_hist *h, uint64_t v, uint64_t n);

/* Empties h (all counts zero, min UINT64_MAX, max 0). */
void rb_hist_reset(struct rb_hist *h);

/* Allocates an empty histogram; returns NULL when out of memory. Free with rb_hist_free (NULL-safe). */
struct rb_hist *rb_hist_new(void);
void rb_hist_free(struct rb_hist *h);

/* Lowest value that maps to bucket i. */
uint64_t rb_hist_bucket_lower(size_t i);
/* Highest value that maps to bucket i (inclusive). */
uint64_t rb_hist_bucket_upper(size_t i);

/* Adds every count of src into dst (dst = dst ∪ src). */
void rb_hist_merge(struct rb_hist *dst, const struct rb_hist *src);

/*
 * Value at percentile q (0 < q <= 100) by nearest rank over all recorded
 * values: the midpoint of the bucket holding the ceil(q/100 * count)-th value,
 * clamped to [min, max]. Returns 0 for an empty histogram.
 */
uint64_t rb_hist_percentile(const struct rb_hist *h, double q);

/* Mean of the recorded values (exact: sum / count); 0 when empty. */
double rb_hist_mean(const struct rb_hist *h);

/* Fills s with count, min, mean, p50, p90, p99, p99.9, p99.99, max. */
void rb_hist_summarize(const struct rb_hist *h, struct rb_hist_summary *s);

/*
 * Compact JSON form: {"count":N,"sum_ns":S,"min_ns":A,"max_ns":B,"buckets":[i,c,i,c,...]}
 * listing only non-empty buckets. Values above 2^53 are written as decimal
 * strings so they read back exactly. Returns NULL when out of memory.
 */
cJSON *rb_hist_to_json(const struct rb_hist *h);

/* Reads the form written by rb_hist_to_json into h. Returns 0, or -EINVAL when the JSON is malformed. */
int rb_hist_from_json(const cJSON *json, struct rb_hist *h);

/* Summary object {"min":..,"mean":..,"p50":..,"p90":..,"p99":..,"p999":..,"p9999":..,"max":..} in ns;
 * every figure is null when the histogram is empty (nothing measured is absent, not 0). NULL on ENOMEM. */
cJSON *rb_hist_summary_json(const struct rb_hist *h);

#endif
