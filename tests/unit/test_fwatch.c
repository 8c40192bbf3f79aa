/*
 * Unit tests for loader/engine/fwatch.c: a call published past the deadline fires the watchdog and marks its slot
 * stuck; one that returns in time does not; rb_fwatch_join and rb_fwatch_call wait for a thread that returns and
 * leave one that does not.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

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

static int answer(void *arg)
{
    (void)arg;
    return 42;
}

/* Reads a pipe nobody writes to: a call that does not return, as a stalled mount's. */
static int blocks(void *arg)
{
    char c;
    return (int)read(*(int *)arg, &c, 1);
}

static void *quick(void *arg)
{
    (void)arg;
    rb_clock_sleep_ns(30 * RB_NS_PER_MS, NULL);
    return NULL;
}

static void test_join_and_call(void **state)
{
    (void)state;
    /* The watchdog runs (test_watchdog started it with DEADLINE_NS). A call that returns: its value. */
    int rc = 0;
    assert_int_equal(rb_fwatch_call(DEADLINE_NS, "stat", "/d", answer, NULL, &rc), 0);
    assert_int_equal(rc, 42);

    /* A thread that ends is joined, its slot never stuck. */
    struct rb_fwatch *s = rb_fwatch_claim();
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, quick, NULL), 0);
    assert_true(rb_fwatch_join(th, s));
    assert_false(rb_fwatch_stuck(s));
    rb_fwatch_release(s);

    /* A call that never returns is left behind once it passes the deadline (not before): -ETIMEDOUT. */
    static int fds[2];
    assert_int_equal(pipe(fds), 0);
    uint64_t t0 = rb_clock_ns();
    rc = -1;
    assert_int_equal(rb_fwatch_call(DEADLINE_NS, "stat", "/stalled", blocks, &fds[0], &rc), -ETIMEDOUT);
    uint64_t took = rb_clock_ns() - t0;
    assert_true(took >= DEADLINE_NS);
    assert_int_equal(rc, -1); /* untouched: the call did not return */
    /* The thread stays in read() until the process ends (its state is still in use: it is not freed). */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_watchdog), cmocka_unit_test(test_join_and_call)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
