/* Cost of rb_hist_record and rb_hist_merge, each against a plain-array reference timed in the same run. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "railbench/hist.h"

/*
 * Values are drawn once into a pool that fits in L3 and replayed, so the timed
 * loops measure the histogram, not the PRNG or DRAM bandwidth.
 */
#define POOL_LEN (1u << 20)
#define REF_LEN 8192u /* 64 KiB of counters, the same order as a struct rb_hist (42 KiB) */
#define MERGE_SRCS 64
#define MERGE_ROUNDS 200
#define REPEATS 3 /* best of, to keep scheduler noise out */
#define DEFAULT_RECORDS UINT64_C(100000000)

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Log-uniform 1 us .. 100 ms: spreads records over ~17 powers of two, as a mixed workload does. */
static void fill_pool(uint64_t *pool, size_t n, uint64_t seed)
{
    const double lo = log(1e3), hi = log(1e8);
    for (size_t i = 0; i < n; i++) {
        double u = (double)(splitmix64(&seed) >> 11) * 0x1p-53;
        pool[i] = (uint64_t)exp(lo + u * (hi - lo));
    }
}

static double time_record(struct rb_hist *h, const uint64_t *pool, uint64_t records)
{
    rb_hist_reset(h);
    double t0 = now_ns();
    for (uint64_t done = 0; done < records;) {
        size_t n = records - done < POOL_LEN ? (size_t)(records - done) : POOL_LEN;
        for (size_t i = 0; i < n; i++)
            rb_hist_record(h, pool[i]);
        done += n;
    }
    return now_ns() - t0;
}

static double time_ref_increment(uint64_t *counts, const uint64_t *pool, uint64_t records)
{
    memset(counts, 0, REF_LEN * sizeof(*counts));
    double t0 = now_ns();
    for (uint64_t done = 0; done < records;) {
        size_t n = records - done < POOL_LEN ? (size_t)(records - done) : POOL_LEN;
        for (size_t i = 0; i < n; i++)
            counts[pool[i] & (REF_LEN - 1)]++;
        done += n;
    }
    return now_ns() - t0;
}

/*
 * Merge reference: the same words added without saturation or min/max. Kept
 * out of line because rb_hist_merge is a call into another file too.
 */
__attribute__((noinline)) static void ref_add(uint64_t *dst, const uint64_t *src)
{
    for (size_t k = 0; k < RB_HIST_U64S; k++)
        dst[k] += src[k];
}

static double time_merge(struct rb_hist *dst, struct rb_hist *const *src)
{
    rb_hist_reset(dst);
    double t0 = now_ns();
    for (int r = 0; r < MERGE_ROUNDS; r++)
        for (int k = 0; k < MERGE_SRCS; k++)
            rb_hist_merge(dst, src[k]);
    return now_ns() - t0;
}

static double time_ref_merge(struct rb_hist *dst, struct rb_hist *const *src)
{
    rb_hist_reset(dst);
    double t0 = now_ns();
    for (int r = 0; r < MERGE_ROUNDS; r++)
        for (int k = 0; k < MERGE_SRCS; k++)
            ref_add(dst->counts, src[k]->counts);
    return now_ns() - t0;
}

static double min_d(double a, double b)
{
    return a < b ? a : b;
}

int main(int argc, char **argv)
{
    uint64_t records = DEFAULT_RECORDS;
    if (argc > 2) {
        fprintf(stderr, "usage: %s [records]\n", argv[0]);
        return 2;
    }
    if (argc == 2) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(argv[1], &end, 10);
        if (errno || end == argv[1] || *end || v == 0 || argv[1][0] == '-') {
            fprintf(stderr, "hist_bench: records '%s' is not a positive integer (e.g. 100000000)\n", argv[1]);
            return 2;
        }
        records = v;
    }

    int rc = 1;
    uint64_t *pool = malloc(POOL_LEN * sizeof(*pool));
    uint64_t *ref = malloc(REF_LEN * sizeof(*ref));
    struct rb_hist *h = rb_hist_new();
    struct rb_hist *dst = rb_hist_new();
    struct rb_hist *src[MERGE_SRCS] = {0};
    if (!pool || !ref || !h || !dst) {
        fprintf(stderr, "hist_bench: out of memory\n");
        goto fail;
    }
    fill_pool(pool, POOL_LEN, 42);
    for (int k = 0; k < MERGE_SRCS; k++) {
        if (!(src[k] = rb_hist_new())) {
            fprintf(stderr, "hist_bench: out of memory\n");
            goto fail;
        }
        for (size_t i = 0; i < POOL_LEN / MERGE_SRCS; i++)
            rb_hist_record(src[k], pool[(size_t)k * (POOL_LEN / MERGE_SRCS) + i]);
    }

    /* One discarded pass of each first: page faults, caches and clock ramp-up belong to no one. */
    (void)time_record(h, pool, POOL_LEN);
    (void)time_ref_increment(ref, pool, POOL_LEN);
    (void)time_merge(dst, src);
    (void)time_ref_merge(dst, src);
    double rec = INFINITY, inc = INFINITY, mrg = INFINITY, madd = INFINITY;
    for (int r = 0; r < REPEATS; r++) {
        inc = min_d(inc, time_ref_increment(ref, pool, records));
        rec = min_d(rec, time_record(h, pool, records));
        madd = min_d(madd, time_ref_merge(dst, src));
        mrg = min_d(mrg, time_merge(dst, src));
    }

    /* Use the results, so neither loop can be optimised away, and check they counted everything. */
    uint64_t ref_total = 0;
    for (size_t i = 0; i < REF_LEN; i++)
        ref_total += ref[i];
    if (h->count != records || ref_total != records) {
        fprintf(stderr, "hist_bench: counted %" PRIu64 " and %" PRIu64 ", expected %" PRIu64 "\n",
                h->count, ref_total, records);
        goto fail;
    }

    const double merges = (double)MERGE_ROUNDS * MERGE_SRCS;
    printf("hist_bench: %" PRIu64 " records replayed from %u log-uniform latencies (1 us .. 100 ms); "
           "%d x %d merges of %zu-word histograms; best of %d\n",
           records, POOL_LEN, MERGE_ROUNDS, MERGE_SRCS, (size_t)RB_HIST_U64S, REPEATS);
    printf("%-34s %12s %14s %8s\n", "operation", "total_ms", "ns", "ratio");
    printf("%-34s %12.1f %10.3f/op %8.2f\n", "counts[v & mask]++ (reference)", inc / 1e6,
           inc / (double)records, 1.0);
    printf("%-34s %12.1f %10.3f/op %8.2f\n", "rb_hist_record", rec / 1e6, rec / (double)records, rec / inc);
    printf("%-34s %12.1f %10.1f/op %8.2f\n", "u64 array add (merge reference)", madd / 1e6,
           madd / merges, 1.0);
    printf("%-34s %12.1f %10.1f/op %8.2f\n", "rb_hist_merge", mrg / 1e6, mrg / merges, mrg / madd);
    printf("%-34s %12s %10.1f/op %8s\n", "64 x rb_hist_merge", "", mrg / MERGE_ROUNDS, "");
    printf("p50 %" PRIu64 " ns, p99 %" PRIu64 " ns of the replayed latencies (sanity)\n",
           rb_hist_percentile(h, 50), rb_hist_percentile(h, 99));
    rc = 0;
fail:
    for (int k = 0; k < MERGE_SRCS; k++)
        rb_hist_free(src[k]);
    rb_hist_free(dst);
    rb_hist_free(h);
    free(ref);
    free(pool);
    return rc;
}
