/* Unit tests for loader/engine/steady.c: parsing PCT/WINDOW, the ramp, window coverage, and the deviation limit. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "steady_int.h"

static void test_parse(void **state)
{
    (void)state;
    double pct;
    uint64_t w;
    assert_int_equal(rb_steady_parse("5/10s", &pct, &w), 0);
    assert_true(pct == 5 && w == 10000000000ull);
    assert_int_equal(rb_steady_parse("2.5%/500ms", &pct, &w), 0);
    assert_true(pct == 2.5 && w == 500000000ull);
    const char *bad[] = {"", "5", "5/", "/10s", "0/10s", "101/10s", "x/10s", "5/xs", "5/0s", "-1/1s", "5%%/1s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(rb_steady_parse(bad[i], &pct, &w), -22);
}

/* A constant rate converges once the window is covered, not before; the first interval never counts. */
static void test_converges_after_window(void **state)
{
    (void)state;
    struct rb_steady s;
    rb_steady_init(&s, 5, 3000000000ull);
    assert_false(rb_steady_add(&s, 1.0, 1)); /* ramp: ignored however slow */
    assert_false(rb_steady_add(&s, 2.0, 100));
    assert_false(rb_steady_add(&s, 3.0, 102));
    assert_true(rb_steady_add(&s, 4.002, 99)); /* three samples cover the 3 s window (a late tick counts) */
    assert_true(s.converged && s.converged_at_s == 4.002);
    assert_true(rb_steady_add(&s, 5.0, 0)); /* stays converged */
    rb_steady_free(&s);
}

/* One interval beyond PCT of the window's mean keeps it unsteady until it leaves the window. */
static void test_outlier_leaves_window(void **state)
{
    (void)state;
    struct rb_steady s;
    rb_steady_init(&s, 5, 2000000000ull);
    rb_steady_add(&s, 1, 10);
    assert_false(rb_steady_add(&s, 2, 100));
    assert_false(rb_steady_add(&s, 3, 120)); /* 100 and 120: 9 % from their mean */
    assert_false(rb_steady_add(&s, 4, 100)); /* 120 and 100 */
    assert_true(rb_steady_add(&s, 5, 101));
    rb_steady_free(&s);
    /* Nothing done is not steady. */
    rb_steady_init(&s, 5, 1000000000ull);
    for (int t = 1; t < 10; t++)
        assert_false(rb_steady_add(&s, t, 0));
    rb_steady_free(&s);
    rb_steady_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_converges_after_window),
        cmocka_unit_test(test_outlier_leaves_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
