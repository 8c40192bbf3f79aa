/* Unit tests of the object-name check: what leaves the target ("..", a leading "/", "//"), and what stays below it. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "railbench/cli.h"
#include "railbench/objname.h"

static void test_names_refused(void **state)
{
    (void)state;
    static const struct {
        const char *v, *why;
    } bad[] = {
        {"..", "has a \"..\" component"},         {"../x", "has a \"..\" component"},
        {"a/../b", "has a \"..\" component"},     {"a/..", "has a \"..\" component"},
        {"/etc/passwd", "starts with \"/\""},     {"/", "starts with \"/\""},
        {"a//b", "has an empty component (\"//\")"}, {"a/", "ends with \"/\""},
        {"", "an empty name"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *why = rb_objname_problem(bad[i].v, false);
        if (!why || strcmp(why, bad[i].why) != 0)
            fail_msg("name \"%s\": got %s, expected %s", bad[i].v, why ? why : "(fine)", bad[i].why);
    }
}

static void test_prefixes(void **state)
{
    (void)state;
    /* Refused as a prefix too. */
    static const char *const bad[] = {"../outside/x-", "..", "x/..", "x/../../y", "/abs-", "a//b-", "a/../"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (!rb_objname_problem(bad[i], true))
            fail_msg("prefix \"%s\" accepted", bad[i]);
    /* Fine: a prefix's last part continues into the names ("x/.." + "obj-0" is "x/..obj-0"); "dir/" is a folder. */
    static const char *const good[] = {"", "obj-", "dir/", "a/b/c-", "..x", "x..", "a/..b/", "a.b/./c", "x/."};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (rb_objname_problem(good[i], true))
            fail_msg("prefix \"%s\" refused: %s", good[i], rb_objname_problem(good[i], true));
    assert_null(rb_objname_problem(NULL, true));
    assert_null(rb_objname_problem("obj-00000001", false));
    assert_null(rb_objname_problem("d/e/f..g", false));
}

static void test_usage_error(void **state)
{
    (void)state;
    assert_int_equal(rb_objname_check("--prefix", NULL, true), 0);
    assert_int_equal(rb_objname_check("--prefix", "obj-", true), 0);
    assert_int_equal(rb_objname_check("--prefix", "../outside/x-", true), RB_EXIT_USAGE);
    assert_int_equal(rb_objname_check("--name", "a/", false), RB_EXIT_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_refused),
        cmocka_unit_test(test_prefixes),
        cmocka_unit_test(test_usage_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
