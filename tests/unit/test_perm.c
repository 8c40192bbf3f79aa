/* The seeded bijection: a permutation of [0, n) for many n, the same for the same seed, uniform enough. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "railbench/perm.h"

/* Every value of [0, n) exactly once. */
static void assert_bijection(uint64_t n, uint64_t seed)
{
    struct rb_perm p;
    assert_int_equal(rb_perm_init(&p, n, seed), 0);
    uint8_t *seen = calloc(n, 1);
    assert_non_null(seen);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = rb_perm_at(&p, i);
        assert_true(v < n);
        assert_int_equal(seen[v], 0);
        seen[v] = 1;
    }
    free(seen);
}

static void test_bijection_small_and_odd(void **state)
{
    (void)state;
    static const uint64_t ns[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 31, 97, 100, 127, 128, 1000, 4093, 65536, 65537,
                                  1000003};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        for (uint64_t seed = 0; seed < 3; seed++)
            assert_bijection(ns[k], seed * 0x12345 + 1);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* 2^32 + 1 needs a 34-bit domain: 2^16 positions at both ends land in range, all distinct. */
static void test_beyond_32_bits(void **state)
{
    (void)state;
    const uint64_t n = (1ull << 32) + 1;
    struct rb_perm p;
    assert_int_equal(rb_perm_init(&p, n, 42), 0);
    enum { W = 1 << 16 };
    uint64_t *v = malloc(2 * W * sizeof *v);
    assert_non_null(v);
    for (uint64_t i = 0; i < W; i++) {
        v[i] = rb_perm_at(&p, i);
        v[W + i] = rb_perm_at(&p, n - W + i);
        assert_true(v[i] < n && v[W + i] < n);
    }
    qsort(v, 2 * W, sizeof *v, cmp_u64);
    for (uint64_t i = 1; i < 2 * W; i++)
        assert_true(v[i] != v[i - 1]);
    free(v);
    assert_bijection((1ull << 20) + 1, 42); /* the same shape (just past a power of two), checked whole */
}

static void test_same_seed_same_order(void **state)
{
    (void)state;
    struct rb_perm a, b, c;
    assert_int_equal(rb_perm_init(&a, 1000, 7), 0);
    assert_int_equal(rb_perm_init(&b, 1000, 7), 0);
    assert_int_equal(rb_perm_init(&c, 1000, 8), 0);
    int differ = 0;
    for (uint64_t i = 0; i < 1000; i++) {
        assert_int_equal(rb_perm_at(&a, i), rb_perm_at(&b, i));
        differ += rb_perm_at(&a, i) != rb_perm_at(&c, i);
    }
    assert_true(differ > 900); /* another seed is another order */
}

/*
 * Uniformity: where position i lands, binned into B buckets of positions x B buckets of values, over many
 * seeds; chi-square with (B-1)^2 degrees of freedom must stay under its 99.9th percentile (about 1.3x dof
 * for dof = 225 plus a margin: 315.6 is the 99.9 % quantile for 225 degrees of freedom).
 */
static void test_uniform_chi_square(void **state)
{
    (void)state;
    enum { N = 4096, B = 16, SEEDS = 64 };
    static double cell[B][B];
    memset(cell, 0, sizeof cell);
    for (uint64_t s = 0; s < SEEDS; s++) {
        struct rb_perm p;
        assert_int_equal(rb_perm_init(&p, N, s * 7919 + 3), 0);
        for (uint64_t i = 0; i < N; i++)
            cell[i * B / N][rb_perm_at(&p, i) * B / N] += 1;
    }
    const double expect = (double)N * SEEDS / (B * B);
    double chi = 0;
    for (int i = 0; i < B; i++)
        for (int j = 0; j < B; j++)
            chi += (cell[i][j] - expect) * (cell[i][j] - expect) / expect;
    print_message("chi-square %.1f for 225 degrees of freedom\n", chi);
    assert_true(chi < 315.6);
}

static void test_bad_n(void **state)
{
    (void)state;
    struct rb_perm p;
    assert_int_equal(rb_perm_init(&p, 0, 1), -EINVAL);
    assert_int_equal(rb_perm_init(&p, (1ull << 62) + 1, 1), -EINVAL);
    assert_int_equal(rb_perm_init(&p, 1000000000ull, 1), 0);
    assert_true(rb_perm_at(&p, 999999999ull) < 1000000000ull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bijection_small_and_odd), cmocka_unit_test(test_beyond_32_bits),
        cmocka_unit_test(test_same_seed_same_order),    cmocka_unit_test(test_uniform_chi_square),
        cmocka_unit_test(test_bad_n),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
