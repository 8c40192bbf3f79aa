/* Unit tests for loader/engine/mixed.c: --mix parsing (weights per op, the bad item named) and the op keys. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mixed_int.h"

static void test_parse(void **state)
{
    (void)state;
    struct rb_mix m;
    char bad[128];
    assert_int_equal(rb_mix_parse(RB_MIX_DEFAULT, &m, bad, sizeof bad), 0);
    assert_int_equal(m.weight[RB_LOAD_GET], 45);
    assert_int_equal(m.weight[RB_LOAD_PUT], 15);
    assert_int_equal(m.weight[RB_LOAD_DELETE], 10);
    assert_int_equal(m.weight[RB_LOAD_HEAD], 30);
    assert_int_equal(m.total, 100);
    /* A subset, in any order; the others weigh 0. */
    assert_int_equal(rb_mix_parse("stat=3,get=1", &m, bad, sizeof bad), 0);
    assert_int_equal(m.weight[RB_LOAD_HEAD], 3);
    assert_int_equal(m.weight[RB_LOAD_PUT], 0);
    assert_int_equal(m.total, 4);
}

static void test_bad(void **state)
{
    (void)state;
    struct rb_mix m;
    char bad[128];
    static const struct {
        const char *in, *bad;
    } cases[] = {
        {"get=45,list=5", "bad item \"list=5\""},
        {"get", "bad item \"get\""},
        {"get=", "bad item \"get=\""},
        {"get=-1", "bad item \"get=-1\""},
        {"get=1x", "bad item \"get=1x\""},
        {"get=1,", "bad item \"\""},
        {"get=1,get=2", "bad item \"get=2\" (given twice)"},
        {"put=1000001", "bad item \"put=1000001\""},
        {"GET=1", "bad item \"GET=1\""},
        {"get=0,stat=0", "every weight is 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(rb_mix_parse(cases[i].in, &m, bad, sizeof bad), -EINVAL);
        assert_string_equal(bad, cases[i].bad);
    }
}

static void test_keys(void **state)
{
    (void)state;
    assert_string_equal(rb_mix_key(RB_LOAD_GET), "get");
    assert_string_equal(rb_mix_key(RB_LOAD_HEAD), "stat");
    assert_string_equal(rb_mix_key(RB_LOAD_MIXED), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
