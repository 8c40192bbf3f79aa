/* Unit tests for loader/engine/fwatch.c: a call published past the deadline fires the watchdog and marks its slot stuck; one that returns in time does not. */
#define _GNU_SOURCE

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fwatch_int.h"
#include "railbench/clock.h"

#define DEADLINE_NS (200 * RB_NS_PER_MS)

/* Sleeps until cond() or limit_ns passed; returns cond(). */
static bool wait_for(bool (*cond)(void), uint64_t limit_ns)
{
    uint64_t end = rb_clock_ns() + limit_ns;
    while (!cond() && rb_clock_ns() < end)
        rb_clock_sleep_ns(10 * RB_NS_PER_MS, NULL);
    return cond();
}

static void test_watchdog(void **state)
{
    (void)state;
    assert_null(rb_fwatch_claim()); /* no watchdog yet: nothing is watched */
    assert_int_equal(rb_fwatch_start(DEADLINE_NS), 0);
    struct rb_fwatch *a = rb_fwatch_claim(), *b = rb_fwatch_claim();
    assert_non_null(a);
    assert_non_null(b);
    assert_ptr_not_equal(a, b);

    /* Calls that return within the deadline, again and again for longer than it: nothing fires. */
    uint64_t end = rb_clock_ns() + 3 * DEADLINE_NS;
    while (rb_clock_ns() < end) {
        rb_fwatch_enter(a, "read", "/d/obj-00000001");
        rb_clock_sleep_ns(20 * RB_NS_PER_MS, NULL);
        rb_fwatch_leave(a);
    }
    assert_false(rb_fwatch_fired());
    assert_false(rb_fwatch_stuck(a));

    /* b's fsync started 300 ms ago (as io_uring publishes its oldest I/O): fires within the watchdog's period. */
    rb_fwatch_enter_at(b, "fsync", "/d/obj-00000003", rb_clock_ns() - 300 * RB_NS_PER_MS);
    assert_true(wait_for(rb_fwatch_fired, 2 * DEADLINE_NS));
    assert_true(rb_fwatch_stuck(b));
    assert_false(rb_fwatch_stuck(a));
    assert_false(rb_fwatch_stuck(NULL));

    /* A stuck slot is never handed out again; a released one is. */
    rb_fwatch_release(b);
    rb_fwatch_release(a);
    struct rb_fwatch *c = rb_fwatch_claim();
    assert_ptr_equal(c, a);

    /* Giving up after a signal: only a call older than the grace. */
    rb_fwatch_enter(c, "open", "/d/fifo");
    assert_false(rb_fwatch_give_up(c, RB_NS_PER_S, "test"));
    assert_true(rb_fwatch_give_up(c, 0, "test"));
    assert_true(rb_fwatch_stuck(c));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_watchdog)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
