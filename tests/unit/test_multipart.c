/* Unit tests for loader/engine/multipart.c: part counts and S3's part rules (5 MiB minimum, 10,000 parts). */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "multipart_int.h"
#include "railbench/cli.h"

#define MIB (1ull << 20)

static void test_parts(void **state)
{
    (void)state;
    assert_int_equal(rb_mp_parts(12 * MIB, 5 * MIB), 3);  /* 5 + 5 + 2 */
    assert_int_equal(rb_mp_parts(10 * MIB, 5 * MIB), 2);  /* exact multiple: no empty last part */
    assert_int_equal(rb_mp_parts(10 * MIB + 1, 5 * MIB), 3);
    assert_int_equal(rb_mp_parts(1, 5 * MIB), 1);
    assert_int_equal(rb_mp_parts(0, 5 * MIB), 0);
    assert_int_equal(rb_mp_parts(5 * MIB, 0), 0);
}

static void test_rules(void **state)
{
    (void)state;
    /* The usage lines go to stderr; only the statuses are checked here. */
    FILE *keep = stderr;
    stderr = fopen("/dev/null", "w");
    assert_int_equal(rb_mp_check_usage(5 * MIB, 8 * MIB, 12 * MIB), 0);
    assert_int_equal(rb_mp_check_usage(5 * MIB - 1, 8 * MIB, 12 * MIB), RB_EXIT_USAGE);
    /* 10,000 parts of 5 MiB is the largest object at that part size; one byte more is 10,001 parts. */
    assert_int_equal(rb_mp_check_usage(5 * MIB, 8 * MIB, 10000 * 5 * MIB), 0);
    assert_int_equal(rb_mp_check_usage(5 * MIB, 8 * MIB, 10000 * 5 * MIB + 1), RB_EXIT_USAGE);
    /* Objects at or below the threshold go up whole: the part count does not apply to them. */
    assert_int_equal(rb_mp_check_usage(5 * MIB, 100000 * 5 * MIB, 100000 * 5 * MIB), 0);
    fclose(stderr);
    stderr = keep;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parts),
        cmocka_unit_test(test_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
