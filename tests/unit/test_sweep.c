/* Unit tests for loader/cmd/sweep.c: the knee rule on constructed throughput-latency curves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sweep_int.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int knee(const struct rb_sweep_point *p, size_t n)
{
    return rb_sweep_knee(p, n, RB_SWEEP_KNEE_GAIN_PCT, RB_SWEEP_KNEE_LATENCY_PCT);
}

/* Throughput doubles with every doubling of in-flight requests at flat latency: no knee. */
static void test_no_knee_scaling(void **state)
{
    (void)state;
    const struct rb_sweep_point p[] = {{100, 1e6}, {200, 1e6}, {400, 1.05e6}, {800, 1.1e6}, {1600, 1.2e6}};
    assert_int_equal(knee(p, N(p)), -1);
}

/* Saturated from the first step: flat throughput, latency doubling: the knee is the first point. */
static void test_knee_at_start(void **state)
{
    (void)state;
    const struct rb_sweep_point p[] = {{1000, 1e6}, {1020, 2e6}, {1030, 4e6}, {1030, 8e6}};
    assert_int_equal(knee(p, N(p)), 0);
}

/* Scales to the third point, then only queues (the AIStore write-up's 20 vs 100 workers shape). */
static void test_knee_in_middle(void **state)
{
    (void)state;
    const struct rb_sweep_point p[] = {{10, 100e6}, {20, 100e6}, {30, 133e6}, {30.5, 267e6}, {30.6, 530e6}};
    assert_int_equal(knee(p, N(p)), 2);
}

/* Both halves of the rule are needed: latency soaring while throughput still grows is not a knee... */
static void test_latency_up_but_still_scaling(void **state)
{
    (void)state;
    const struct rb_sweep_point p[] = {{100, 1e6}, {150, 3e6}, {200, 9e6}};
    assert_int_equal(knee(p, N(p)), -1);
}

/* ...and flat throughput at flat latency (an idle server that is already fast enough) is not one either. */
static void test_flat_without_latency(void **state)
{
    (void)state;
    const struct rb_sweep_point p[] = {{100, 1e6}, {101, 1.2e6}, {102, 1.4e6}};
    assert_int_equal(knee(p, N(p)), -1);
}

/* The thresholds are strict: exactly +10 % throughput is growth, exactly +50 % latency is not queueing. */
static void test_thresholds(void **state)
{
    (void)state;
    const struct rb_sweep_point gain_at_limit[] = {{100, 1e6}, {110, 2e6}};
    assert_int_equal(knee(gain_at_limit, 2), -1);
    const struct rb_sweep_point lat_at_limit[] = {{100, 1e6}, {100, 1.5e6}};
    assert_int_equal(knee(lat_at_limit, 2), -1);
    const struct rb_sweep_point just_past[] = {{100, 1e6}, {109.9, 1.51e6}};
    assert_int_equal(knee(just_past, 2), 0);
    /* Looser rule: 30 % gain allowed, 20 % latency enough. */
    const struct rb_sweep_point p[] = {{100, 1e6}, {125, 1.25e6}};
    assert_int_equal(rb_sweep_knee(p, 2, 30, 20), 0);
    assert_int_equal(rb_sweep_knee(p, 2, 20, 20), -1);
}

/* A point that completed nothing is skipped as a knee candidate; fewer than two points have none. */
static void test_degenerate(void **state)
{
    (void)state;
    const struct rb_sweep_point p[] = {{0, 0}, {100, 1e6}, {100, 3e6}};
    assert_int_equal(knee(p, N(p)), 1);
    assert_int_equal(knee(p, 1), -1);
    assert_int_equal(knee(p, 0), -1);
    assert_int_equal(knee(NULL, 0), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_knee_scaling),
        cmocka_unit_test(test_knee_at_start),
        cmocka_unit_test(test_knee_in_middle),
        cmocka_unit_test(test_latency_up_but_still_scaling),
        cmocka_unit_test(test_flat_without_latency),
        cmocka_unit_test(test_thresholds),
        cmocka_unit_test(test_degenerate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
