/* Unit tests for loader/engine/rphase.c: spans that sum to the latency, their histograms and bands, and the bounded
 * heap of the slowest requests with its merge. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "phase_int.h"
#include "rphase_int.h"

static uint64_t sum_spans(const uint64_t s[RB_RPH_COUNT])
{
    uint64_t t = 0;
    for (int i = 0; i < RB_RPH_COUNT; i++)
        t += s[i];
    return t;
}

/* Each mark ends its span; a missing one (0) makes its span empty; they sum to end - intended. */
static void test_split_network(void **state)
{
    (void)state;
    uint64_t s[RB_RPH_COUNT];
    const uint64_t m[RB_RPH_MARKS] = {1100, 1300, 1400, 2000};
    rb_rph_split(RB_RPH_NET, 900, 1000, m, 2500, s);
    assert_int_equal(s[RB_RPH_QUEUE], 100);
    assert_int_equal(s[RB_RPH_CONNECT], 100);
    assert_int_equal(s[RB_RPH_TLS], 200);
    assert_int_equal(s[RB_RPH_SEND], 100);
    assert_int_equal(s[RB_RPH_FIRST_BYTE], 600);
    assert_int_equal(s[RB_RPH_BODY], 500);
    assert_int_equal(s[RB_RPH_OPEN] + s[RB_RPH_CLOSE], 0);
    assert_int_equal(sum_spans(s), 1600);
    /* A kept-alive connection: no connect, no TLS. */
    const uint64_t k[RB_RPH_MARKS] = {0, 0, 1050, 1200};
    rb_rph_split(RB_RPH_NET, 1000, 1000, k, 1300, s);
    assert_int_equal(s[RB_RPH_CONNECT] + s[RB_RPH_TLS] + s[RB_RPH_QUEUE], 0);
    assert_int_equal(s[RB_RPH_SEND], 50);
    assert_int_equal(s[RB_RPH_FIRST_BYTE], 150);
    assert_int_equal(s[RB_RPH_BODY], 100);
}

/* Marks out of order (an answer before the request was all out) or past the end still sum exactly, none < 0. */
static void test_split_disorder(void **state)
{
    (void)state;
    uint64_t s[RB_RPH_COUNT];
    const uint64_t m[RB_RPH_MARKS] = {1200, 0, 1500, 1300};
    rb_rph_split(RB_RPH_NET, 1000, 1000, m, 1400, s);
    assert_int_equal(sum_spans(s), 400);
    assert_int_equal(s[RB_RPH_CONNECT], 200);
    assert_int_equal(s[RB_RPH_SEND], 200); /* clamped at the end */
    assert_int_equal(s[RB_RPH_FIRST_BYTE] + s[RB_RPH_BODY], 0);
    const uint64_t f[RB_RPH_MARKS] = {10, 20, 30, 40};
    rb_rph_split(RB_RPH_FILE, 0, 5, f, 45, s);
    assert_int_equal(s[RB_RPH_QUEUE], 5);
    assert_int_equal(s[RB_RPH_OPEN], 5);
    assert_int_equal(s[RB_RPH_FIRST_IO], 10);
    assert_int_equal(s[RB_RPH_FSYNC], 10);
    assert_int_equal(s[RB_RPH_CLOSE], 5);
    assert_int_equal(s[RB_RPH_CONNECT] + s[RB_RPH_BODY], 0);
    assert_int_equal(sum_spans(s), 45);
}

/* The histograms' means sum to the latency's mean; bands hold each request's spans; merging adds. */
static void test_record_merge(void **state)
{
    (void)state;
    struct rb_rphases *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    a->kind = b->kind = RB_RPH_NET;
    rb_rph_reset(a);
    rb_rph_reset(b);
    uint64_t s[RB_RPH_COUNT];
    for (uint64_t i = 1; i <= 100; i++) {
        const uint64_t m[RB_RPH_MARKS] = {1000 + i, 1000 + 2 * i, 1000 + 3 * i, 1000 + 7 * i};
        rb_rph_split(RB_RPH_NET, 1000, 1000, m, 1000 + 11 * i, s);
        rb_rph_record(i % 2 ? a : b, s);
    }
    rb_rph_merge(a, b);
    assert_int_equal(a->total.count, 100);
    /* Both recorded (raw): every span's count, sum and spans of 0 ns (queue, a closed loop's) are whole after it. */
    assert_int_equal(a->raw, 0);
    assert_int_equal(a->span[RB_RPH_QUEUE].count, 100);
    assert_int_equal(a->span[RB_RPH_QUEUE].counts[0], 100);
    assert_int_equal(a->span[RB_RPH_QUEUE].min_ns, 0);
    assert_int_equal(a->span[RB_RPH_BODY].count, 100);
    assert_int_equal(a->span[RB_RPH_BODY].sum_ns, 4 * 5050);
    assert_int_equal(a->span[RB_RPH_BODY].min_ns, 4);
    assert_int_equal(a->span[RB_RPH_BODY].max_ns, 400);
    /* Merged again into an empty one (as a rank sums its workers'): the same figures, nothing counted twice. */
    struct rb_rphases *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->kind = RB_RPH_NET;
    rb_rph_reset(c);
    rb_rph_merge(c, a);
    assert_int_equal(c->span[RB_RPH_QUEUE].count, 100);
    assert_int_equal(c->span[RB_RPH_BODY].sum_ns, 4 * 5050);
    assert_int_equal(c->span[RB_RPH_TLS].count, 100);
    free(c);
    double means = 0;
    for (int i = 0; i < RB_RPH_COUNT; i++)
        means += rb_hist_mean(&a->span[i]);
    assert_true(means > rb_hist_mean(&a->total) - 1e-6 && means < rb_hist_mean(&a->total) + 1e-6);
    /* Latency 11 * i: i = 100 (1100 ns) is in band 11, [1024, 2048); so are i = 94..100. */
    assert_int_equal(rb_rph_band(1100), 11);
    assert_int_equal(a->band_count[11], 7);
    assert_int_equal(a->band_sum[11][RB_RPH_BODY], 4 * (94 + 95 + 96 + 97 + 98 + 99 + 100));
    assert_int_equal(rb_rph_band(0), 0);
    assert_int_equal(rb_rph_band(UINT64_MAX), RB_RPH_BANDS - 1);
    free(a);
    free(b);
}

static struct rb_slow slow(uint64_t lat, int rank, uint32_t thread, uint64_t seq)
{
    struct rb_slow e = {.lat_ns = lat, .rank = rank, .thread = thread, .seq = seq, .cls = -1};
    snprintf(e.name, sizeof e.name, "o-%llu", (unsigned long long)lat);
    return e;
}

/* The heap keeps exactly the cap slowest whatever the order they come in, in constant memory. */
static void test_heap_keeps_slowest(void **state)
{
    (void)state;
    struct rb_slowheap h;
    assert_int_equal(rb_slow_init(&h, 5), 0);
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < 10000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t lat = x % 1000000; /* below the planted ones */
        if (i == 5000 || i == 7777 || i == 123) {
            for (int k = 0; k < 2; k++) {
                struct rb_slow p = slow(5000000 + i * 10 + (uint64_t)k, 0, 0, i);
                rb_slow_offer(&h, &p);
            }
        }
        if (!rb_slow_wants(&h, lat))
            continue;
        struct rb_slow e = slow(lat, 0, 0, i);
        rb_slow_offer(&h, &e);
    }
    assert_int_equal(h.n, 5);
    assert_int_equal(h.cap, 5);
    rb_slow_sort(&h);
    const uint64_t want[5] = {5077771, 5077770, 5050001, 5050000, 5001231};
    for (int i = 0; i < 5; i++)
        assert_int_equal(h.v[i].lat_ns, want[i]);
    char id[64];
    h.v[0].rank = 3;
    h.v[0].thread = 2;
    h.v[0].slot = 5;
    h.v[0].seq = 41;
    rb_slow_id(&h.v[0], 8, id, sizeof id);
    assert_string_equal(id, "r3-c21-41");
    rb_slow_free(&h);
    rb_slow_free(&h);
}

/* Ranks' heaps merged give the global N slowest; equal latencies are ordered by rank, thread, seq. */
static void test_heap_merge(void **state)
{
    (void)state;
    struct rb_slowheap r[3], all, none;
    for (int k = 0; k < 3; k++) {
        assert_int_equal(rb_slow_init(&r[k], 4), 0);
        for (uint64_t i = 0; i < 50; i++) {
            struct rb_slow e = slow(i * 3 + (uint64_t)k, k, 0, i);
            rb_slow_offer(&r[k], &e);
        }
    }
    struct rb_slow tie = slow(149, 0, 1, 7);
    rb_slow_offer(&r[0], &tie);
    assert_int_equal(rb_slow_init(&all, 4), 0);
    for (int k = 0; k < 3; k++)
        rb_slow_merge(&all, r[k].v, r[k].n);
    rb_slow_sort(&all);
    assert_int_equal(all.n, 4);
    assert_int_equal(all.v[0].lat_ns, 149);
    assert_int_equal(all.v[0].rank, 0); /* the tie: rank 0 before rank 2 */
    assert_int_equal(all.v[1].lat_ns, 149);
    assert_int_equal(all.v[1].rank, 2);
    assert_int_equal(all.v[2].lat_ns, 148);
    assert_int_equal(all.v[3].lat_ns, 147);
    /* cap 0 keeps nothing and wants nothing. */
    assert_int_equal(rb_slow_init(&none, 0), 0);
    assert_false(rb_slow_wants(&none, UINT64_MAX));
    rb_slow_offer(&none, &tie);
    assert_int_equal(none.n, 0);
    assert_int_equal(rb_slow_init(&none, RB_SLOW_MAX + 5), 0);
    assert_int_equal(none.cap, RB_SLOW_MAX);
    rb_slow_free(&none);
    rb_slow_free(&all);
    for (int k = 0; k < 3; k++)
        rb_slow_free(&r[k]);
}

struct walked {
    char ids[4][64];
    const char *ops[4];
    uint64_t lat[4], end[4];
    int n, stop_at;
};

static int walk(const char *id, const char *op, uint64_t lat_ns, uint64_t end_wall_ns, void *arg)
{
    struct walked *w = arg;
    snprintf(w->ids[w->n], sizeof w->ids[w->n], "%s", id);
    w->ops[w->n] = op;
    w->lat[w->n] = lat_ns;
    w->end[w->n] = end_wall_ns;
    return ++w->n == w->stop_at ? 7 : 0;
}

/* The walk the exemplars are wired to: each kept request's id, op, latency and end, slowest first; fn stops it. */
static void test_slowest_each(void **state)
{
    (void)state;
    struct rb_load_result res = {.inflight = 16};
    assert_int_equal(rb_slow_init(&res.slow, 3), 0);
    for (uint32_t i = 0; i < 5; i++) {
        struct rb_slow e = slow(100 + i, (int)i % 2, i, 10 * i);
        e.slot = i;
        e.op = RB_LOAD_PUT;
        e.end_wall_ns = 1000 + i;
        rb_slow_offer(&res.slow, &e);
    }
    rb_slow_sort(&res.slow);
    struct walked w = {.stop_at = -1};
    assert_int_equal(rb_load_slowest_each(&res, walk, &w), 0);
    assert_int_equal(w.n, 3);
    assert_string_equal(w.ids[0], "r0-c68-40"); /* rank 0, thread 4 x 16 + slot 4, seq 40 */
    assert_string_equal(w.ids[2], "r0-c34-20");
    assert_string_equal(w.ops[1], "PUT");
    assert_int_equal(w.lat[0], 104);
    assert_int_equal(w.end[1], 1003);
    struct walked w2 = {.stop_at = 2};
    assert_int_equal(rb_load_slowest_each(&res, walk, &w2), 7);
    assert_int_equal(w2.n, 2);
    rb_slow_free(&res.slow);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_network),
        cmocka_unit_test(test_split_disorder),
        cmocka_unit_test(test_record_merge),
        cmocka_unit_test(test_heap_keeps_slowest),
        cmocka_unit_test(test_heap_merge),
        cmocka_unit_test(test_slowest_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
