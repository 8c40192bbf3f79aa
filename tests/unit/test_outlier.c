/* Unit tests of core/outlier.c: median, MAD, robust z and the one outlier rule. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>

#include <cmocka.h>

#include "railbench/outlier.h"

static void test_median_mad(void **state)
{
    (void)state;
    struct rb_outlier_fleet f;
    const double odd[] = {5, 1, 3, 100, 2}; /* sorted 1 2 3 5 100: median 3; |x-3| = 2 1 0 2 97 -> MAD 2 */
    assert_int_equal(rb_outlier_fleet(odd, 5, &f), 0);
    assert_int_equal(f.n, 5);
    assert_true(f.median == 3 && f.mad == 2);
    const double even[] = {4, 1, 3, 2}; /* median 2.5; deviations 1.5 1.5 0.5 0.5 -> MAD 1 */
    assert_int_equal(rb_outlier_fleet(even, 4, &f), 0);
    assert_true(f.median == 2.5 && f.mad == 1);
    const double nans[] = {NAN, 7, NAN};
    assert_int_equal(rb_outlier_fleet(nans, 3, &f), 0);
    assert_true(f.n == 1 && f.median == 7 && f.mad == 0);
    const double none[] = {NAN};
    assert_int_equal(rb_outlier_fleet(none, 1, &f), -EINVAL);
    assert_int_equal(f.n, 0);
    assert_int_equal(rb_outlier_fleet(NULL, 0, &f), -EINVAL);
}

static void test_z_and_ratio(void **state)
{
    (void)state;
    struct rb_outlier_fleet f = {.n = 5, .median = 10, .mad = 2};
    assert_true(fabs(rb_outlier_z(&f, 10 - 1.4826 * 2 * 3) + 3) < 1e-12);
    assert_true(rb_outlier_z(&f, 10) == 0);
    assert_true(fabs(rb_outlier_ratio(&f, 2.5) - 0.25) < 1e-15);
    struct rb_outlier_fleet flat = {.n = 4, .median = 10, .mad = 0};
    assert_true(isinf(rb_outlier_z(&flat, 9)) && rb_outlier_z(&flat, 9) < 0);
    struct rb_outlier_fleet zero = {.n = 4, .median = 0, .mad = 0};
    assert_true(isnan(rb_outlier_ratio(&zero, 1)));
}

static void test_rule(void **state)
{
    (void)state;
    /* Four hosts, one at a fiftieth of the others (the straggler test's shape). */
    const double tput[] = {236e6, 4.2e6, 155e6, 190e6};
    struct rb_outlier_fleet f;
    assert_int_equal(rb_outlier_fleet(tput, 4, &f), 0);
    int flagged = 0;
    for (int i = 0; i < 4; i++)
        flagged += rb_outlier_is(&f, tput[i], true, RB_OUTLIER_THRESHOLD, 0) ? 1 << i : 0;
    assert_int_equal(flagged, 1 << 1);
    /* Exactly at the threshold is not an outlier; just below is. */
    struct rb_outlier_fleet g = {.n = 3, .median = 100, .mad = 10};
    assert_false(rb_outlier_is(&g, 50, true, 0.5, 0));
    assert_true(rb_outlier_is(&g, 49.9, true, 0.5, 0));
    /* Lower is better: latency above median / threshold. */
    assert_false(rb_outlier_is(&g, 200, false, 0.5, 0));
    assert_true(rb_outlier_is(&g, 200.1, false, 0.5, 0));
    /* min_z: a wide fleet keeps a far-below member unless its z clears the bar. */
    struct rb_outlier_fleet wide = {.n = 8, .median = 100, .mad = 40};
    assert_true(rb_outlier_is(&wide, 40, true, 0.5, 0));
    assert_false(rb_outlier_is(&wide, 40, true, 0.5, 3)); /* z = -60 / 59.3 = -1.01 */
    assert_true(rb_outlier_is(&wide, 40, true, 0.5, 1));
    /* Fewer than two values, or NaN, flags nothing. */
    struct rb_outlier_fleet one = {.n = 1, .median = 100, .mad = 0};
    assert_false(rb_outlier_is(&one, 1, true, 0.5, 0));
    assert_false(rb_outlier_is(&g, NAN, true, 0.5, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_mad),
        cmocka_unit_test(test_z_and_ratio),
        cmocka_unit_test(test_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
