/* Unit tests for the MoE router (core/moe.c): counts, distinct top-k, skew, seeds, the even baseline. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "railbench/moe.h"

static uint64_t sum(const uint64_t *v, int n)
{
    uint64_t s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

/* Every rank sends tokens x top_k copies; with top_k = experts each token reaches every expert once. */
static void test_counts_distinct(void **state)
{
    (void)state;
    struct rb_moe_cfg c = {.ranks = 4, .tokens = 1000, .experts = 8, .top_k = 8, .skew = 3, .seed = 7};
    uint64_t to[16], load[8];
    assert_int_equal(rb_moe_route(&c, 0, to, load), 0);
    for (int e = 0; e < 8; e++)
        assert_int_equal(load[e], 4000); /* distinct: each of the 4000 tokens once per expert */
    for (int r = 0; r < 4; r++)
        assert_int_equal(sum(to + 4 * r, 4), 8000);
    c.top_k = 2;
    assert_int_equal(rb_moe_route(&c, 3, to, load), 0);
    assert_int_equal(sum(load, 8), 8000);
    assert_int_equal(sum(to, 16), 8000);
    for (int j = 0; j < 4; j++) /* expert rank j's copies are its two experts' */
        assert_int_equal(to[j] + to[4 + j] + to[8 + j] + to[12 + j], load[2 * j] + load[2 * j + 1]);
}

/* Skew 0 is uniform; Zipf s = 1 with top-1 gives expert e about (1/(e+1)) / H_8 of the tokens. */
static void test_skew(void **state)
{
    (void)state;
    struct rb_moe_cfg c = {.ranks = 2, .tokens = 200000, .experts = 8, .top_k = 1, .skew = 0, .seed = 1};
    uint64_t to[4], load[8];
    assert_int_equal(rb_moe_route(&c, 0, to, load), 0);
    for (int e = 0; e < 8; e++)
        assert_true(fabs((double)load[e] / 400000.0 - 0.125) < 0.005);
    assert_true(rb_moe_imbalance(load, 8) < 1.03);
    c.skew = 1;
    assert_int_equal(rb_moe_route(&c, 0, to, load), 0);
    double h = 0;
    for (int e = 0; e < 8; e++)
        h += 1.0 / (e + 1);
    for (int e = 0; e < 8; e++)
        assert_true(fabs((double)load[e] / 400000.0 - 1.0 / (e + 1) / h) < 0.005);
    assert_true(fabs(rb_moe_imbalance(load, 8) - 8 / h) < 0.05); /* max/mean = (1/H) / (1/8) */
}

/* The same seed and step route the same; another step or seed does not. */
static void test_seeded(void **state)
{
    (void)state;
    struct rb_moe_cfg c = {.ranks = 4, .tokens = 500, .experts = 16, .top_k = 2, .skew = 1.2, .seed = 42};
    uint64_t a[16], b[16];
    assert_int_equal(rb_moe_route(&c, 5, a, NULL), 0);
    assert_int_equal(rb_moe_route(&c, 5, b, NULL), 0);
    assert_memory_equal(a, b, sizeof a);
    assert_int_equal(rb_moe_route(&c, 6, b, NULL), 0);
    assert_memory_not_equal(a, b, sizeof a);
    c.seed = 43;
    assert_int_equal(rb_moe_route(&c, 5, b, NULL), 0);
    assert_memory_not_equal(a, b, sizeof a);
}

static void test_balanced_and_bad(void **state)
{
    (void)state;
    struct rb_moe_cfg c = {.ranks = 4, .tokens = 100, .experts = 8, .top_k = 2, .skew = 2, .seed = 1};
    uint64_t to[16], load[8];
    assert_int_equal(rb_moe_route_balanced(&c, to, load), 0);
    for (int e = 0; e < 8; e++)
        assert_int_equal(load[e], 100);
    assert_true(rb_moe_imbalance(load, 8) == 1.0);
    c.experts = 6; /* not a multiple of 4 ranks */
    assert_int_equal(rb_moe_route(&c, 0, to, load), -EINVAL);
    c.experts = 8;
    c.top_k = 9;
    assert_int_equal(rb_moe_check(&c), -EINVAL);
    c.top_k = 2;
    c.skew = -1;
    assert_int_equal(rb_moe_check(&c), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_distinct),
        cmocka_unit_test(test_skew),
        cmocka_unit_test(test_seeded),
        cmocka_unit_test(test_balanced_and_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
