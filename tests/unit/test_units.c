/* Unit tests for core/units.c: parsing and formatting of sizes, durations, rates and lists. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "railbench/units.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))
#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)
#define TiB (1024ull * GiB)
#define SENTINEL 0xdeadbeefull

struct u64_case {
    const char *in;
    int rc;
    uint64_t want;
};

/* Runs parse over a table; on failure the output must be left alone. */
static void check_u64_table(int (*parse)(const char *, uint64_t *), const struct u64_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t v = SENTINEL;
        int rc = parse(c[i].in, &v);
        if (rc != c[i].rc || (rc == 0 && v != c[i].want) || (rc != 0 && v != SENTINEL))
            fail_msg("input \"%s\": rc %d (want %d), value %llu (want %llu)", c[i].in, rc, c[i].rc,
                     (unsigned long long)v, (unsigned long long)(rc == 0 ? c[i].want : SENTINEL));
    }
}

static void test_size_valid(void **state)
{
    (void)state;
    static const struct u64_case cases[] = {
        {"0", 0, 0},
        {"1", 0, 1},
        {"4096", 0, 4096},
        {"4B", 0, 4},
        {"4k", 0, 4 * KiB},
        {"4K", 0, 4 * KiB},
        {"4KiB", 0, 4 * KiB},
        {"4kiB", 0, 4 * KiB},
        {"4KB", 0, 4000},
        {"4kB", 0, 4000},
        {"1M", 0, MiB},
        {"1m", 0, MiB},
        {"1MiB", 0, MiB},
        {"1MB", 0, 1000000},
        {"2g", 0, 2 * GiB},
        {"2GiB", 0, 2 * GiB},
        {"2GB", 0, 2000000000ull},
        {"1t", 0, TiB},
        {"1TiB", 0, TiB},
        {"1TB", 0, 1000000000000ull},
        {"1.5KiB", 0, 1536},
        {"1.5k", 0, 1536},
        {"0.5KiB", 0, 512},
        {"2.5MB", 0, 2500000},
        {"0.25M", 0, 256 * KiB},
        {"1.0", 0, 1},
        {"1.50000000000000000000000KiB", 0, 1536},
        {"007k", 0, 7 * KiB},
        {"18446744073709551615", 0, UINT64_MAX},
        {"16777215TiB", 0, 16777215ull * TiB},
    };
    check_u64_table(rb_parse_size, cases, N_ELEMS(cases));
}

static void test_size_invalid(void **state)
{
    (void)state;
    static const struct u64_case cases[] = {
        {"", -EINVAL, 0},
        {"0.5B", -EINVAL, 0},   /* half a byte */
        {"1.5", -EINVAL, 0},
        {"0.3k", -EINVAL, 0},   /* 307.2 bytes */
        {"-1", -EINVAL, 0},
        {"+1", -EINVAL, 0},
        {"4x", -EINVAL, 0},
        {"1e3", -EINVAL, 0},    /* no exponents: "e" is not a unit */
        {" 4k", -EINVAL, 0},
        {"4k ", -EINVAL, 0},
        {"4 k", -EINVAL, 0},
        {"k", -EINVAL, 0},
        {"B", -EINVAL, 0},
        {".5k", -EINVAL, 0},
        {"1.k", -EINVAL, 0},
        {"4kb", -EINVAL, 0},    /* lowercase b reads as bits: refused */
        {"4Ki", -EINVAL, 0},
        {"4KiBB", -EINVAL, 0},
        {"4P", -EINVAL, 0},
        {"0x10", -EINVAL, 0},
        {"4k,8k", -EINVAL, 0},
        {"20000000TiB", -ERANGE, 0},
        {"16777216TiB", -ERANGE, 0}, /* exactly 2^64 */
        {"18446744073709551616", -ERANGE, 0},
        {"99999999999999999999999k", -ERANGE, 0},
        {"99999999999999999999999x", -EINVAL, 0}, /* a bad suffix is reported before the overflow */
    };
    check_u64_table(rb_parse_size, cases, N_ELEMS(cases));
    uint64_t v = SENTINEL;
    assert_int_equal(rb_parse_size(NULL, &v), -EINVAL);
    assert_int_equal(v, SENTINEL);
}

static void test_duration(void **state)
{
    (void)state;
    static const struct u64_case cases[] = {
        {"10s", 0, 10000000000ull},
        {"500us", 0, 500000},
        {"1.5s", 0, 1500000000ull},
        {"2m", 0, 120000000000ull},
        {"1h", 0, 3600000000000ull},
        {"1.25h", 0, 4500000000000ull},
        {"7", 0, 7000000000ull},
        {"7ns", 0, 7},
        {"0", 0, 0},
        {"250ms", 0, 250000000},
        {"0.1s", 0, 100000000},
        {"1.5ns", 0, 2},          /* rounds half up */
        {"1.4ns", 0, 1},
        {"0.0000000015", 0, 2},   /* seconds: 1.5 ns */
        {"0.333333333333333333333333h", 0, 1200000000000ull},
        {"5124095h", 0, 5124095ull * 3600000000000ull},
        {"18446744073709551615ns", 0, UINT64_MAX},
        {"10 parsecs", -EINVAL, 0},
        {"", -EINVAL, 0},
        {"-1s", -EINVAL, 0},
        {"1.5.2s", -EINVAL, 0},
        {"s", -EINVAL, 0},
        {"10S", -EINVAL, 0},
        {"10sec", -EINVAL, 0},
        {"10 s", -EINVAL, 0},
        {"1e3", -EINVAL, 0},
        {"1d", -EINVAL, 0},
        {"5124096h", -ERANGE, 0},
        {"18446744073709551616ns", -ERANGE, 0},
        {"18446744073709551615.6ns", -ERANGE, 0},
    };
    check_u64_table(rb_parse_duration, cases, N_ELEMS(cases));
}

static void test_rate(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int rc;
        double want;
    } cases[] = {
        {"1000", 0, 1000},     {"1000/s", 0, 1000},  {"60/m", 0, 1},      {"3600/h", 0, 1},
        {"2.5k/s", 0, 2500},   {"2k", 0, 2000},      {"1.5", 0, 1.5},     {"0.5/s", 0, 0.5},
        {"1M/h", 0, 1e6 / 3600}, {"3G", 0, 3e9},
        {"0", -EINVAL, 0},     {"0/s", -EINVAL, 0},  {"-5", -EINVAL, 0},  {"", -EINVAL, 0},
        {"/s", -EINVAL, 0},    {"10/x", -EINVAL, 0}, {"10/", -EINVAL, 0}, {"10/sec", -EINVAL, 0},
        {"1e3", -EINVAL, 0},   {"abc", -EINVAL, 0},  {"10 /s", -EINVAL, 0}, {"10/s ", -EINVAL, 0},
    };
    for (size_t i = 0; i < N_ELEMS(cases); i++) {
        double v = -1;
        int rc = rb_parse_rate(cases[i].in, &v);
        if (rc != cases[i].rc || (rc == 0 && fabs(v - cases[i].want) > 1e-9 * cases[i].want) ||
            (rc != 0 && v != -1))
            fail_msg("rate \"%s\": rc %d value %g", cases[i].in, rc, v);
    }
}

static void test_integers(void **state)
{
    (void)state;
    static const struct u64_case u[] = {
        {"0", 0, 0},           {"42", 0, 42},         {"18446744073709551615", 0, UINT64_MAX},
        {"", -EINVAL, 0},      {"-1", -EINVAL, 0},    {"+1", -EINVAL, 0},
        {"4k", -EINVAL, 0},    {" 1", -EINVAL, 0},    {"1 ", -EINVAL, 0},
        {"0x1", -EINVAL, 0},   {"18446744073709551616", -ERANGE, 0},
    };
    check_u64_table(rb_parse_u64, u, N_ELEMS(u));

    static const struct {
        const char *in;
        int rc;
        int64_t want;
    } s[] = {
        {"0", 0, 0},
        {"-3", 0, -3},
        {"+7", 0, 7},
        {"9223372036854775807", 0, INT64_MAX},
        {"-9223372036854775808", 0, INT64_MIN},
        {"9223372036854775808", -ERANGE, 0},
        {"-9223372036854775809", -ERANGE, 0},
        {"-", -EINVAL, 0},
        {"", -EINVAL, 0},
        {"1.5", -EINVAL, 0},
        {"--1", -EINVAL, 0},
    };
    for (size_t i = 0; i < N_ELEMS(s); i++) {
        int64_t v = 99;
        int rc = rb_parse_i64(s[i].in, &v);
        if (rc != s[i].rc || (rc == 0 && v != s[i].want) || (rc != 0 && v != 99))
            fail_msg("i64 \"%s\": rc %d value %lld", s[i].in, rc, (long long)v);
    }
}

static void test_double_percent(void **state)
{
    (void)state;
    double v = -7;
    assert_int_equal(rb_parse_double("0.5", &v), 0);
    assert_true(v == 0.5);
    assert_int_equal(rb_parse_double("-1e-3", &v), 0);
    assert_true(v == -1e-3);
    v = -7;
    assert_int_equal(rb_parse_double("", &v), -EINVAL);
    assert_int_equal(rb_parse_double(" 1", &v), -EINVAL);
    assert_int_equal(rb_parse_double("1x", &v), -EINVAL);
    assert_int_equal(rb_parse_double("nan", &v), -EINVAL);
    assert_int_equal(rb_parse_double("inf", &v), -EINVAL);
    assert_int_equal(rb_parse_double("1e999", &v), -ERANGE);
    assert_true(v == -7);

    assert_int_equal(rb_parse_percent("90", &v), 0);
    assert_true(v == 90);
    assert_int_equal(rb_parse_percent("99.9%", &v), 0);
    assert_true(v == 99.9);
    assert_int_equal(rb_parse_percent("0%", &v), 0);
    assert_true(v == 0);
    assert_int_equal(rb_parse_percent("100", &v), 0);
    v = -7;
    assert_int_equal(rb_parse_percent("101", &v), -ERANGE);
    assert_int_equal(rb_parse_percent("-1%", &v), -ERANGE);
    assert_int_equal(rb_parse_percent("%", &v), -EINVAL);
    assert_int_equal(rb_parse_percent("90%%", &v), -EINVAL);
    assert_int_equal(rb_parse_percent("90 %", &v), -EINVAL);
    assert_true(v == -7);
}

static void test_list(void **state)
{
    (void)state;
    uint64_t out[4];
    size_t n = 99;
    const char *bad = NULL;

    const char *s = "4k,8k,1M";
    assert_int_equal(rb_parse_list(s, rb_parse_size, out, 4, &n, &bad), 0);
    assert_int_equal(n, 3);
    assert_int_equal(out[0], 4096);
    assert_int_equal(out[1], 8192);
    assert_int_equal(out[2], MiB);

    assert_int_equal(rb_parse_list("1,2,4,8", rb_parse_u64, out, 4, &n, &bad), 0);
    assert_int_equal(n, 4);
    assert_int_equal(out[3], 8);

    assert_int_equal(rb_parse_list("7", rb_parse_u64, out, 4, &n, &bad), 0);
    assert_int_equal(n, 1);

    static const struct {
        const char *in;
        size_t bad_at;
        int rc;
    } bads[] = {
        {"4k,,8k", 3, -EINVAL}, {"4k,8k,", 6, -EINVAL}, {",4k", 0, -EINVAL}, {"", 0, -EINVAL},
        {",", 0, -EINVAL},      {"4k,4x,8k", 3, -EINVAL}, {"4k, 8k", 3, -EINVAL},
        {"1,2,3,4,5", 8, -E2BIG},
    };
    for (size_t i = 0; i < N_ELEMS(bads); i++) {
        n = 99;
        bad = NULL;
        int rc = rb_parse_list(bads[i].in, rb_parse_size, out, 4, &n, &bad);
        if (rc != bads[i].rc || bad != bads[i].in + bads[i].bad_at || n != 99)
            fail_msg("list \"%s\": rc %d, bad element at %td (want %zu)", bads[i].in, rc,
                     bad ? bad - bads[i].in : -1, bads[i].bad_at);
    }
    /* A bad element pointer is optional. */
    assert_int_equal(rb_parse_list("4k,,8k", rb_parse_size, out, 4, &n, NULL), -EINVAL);
    /* An element too long to be a number is refused, not truncated. */
    char longel[300];
    memset(longel, '1', sizeof(longel) - 1);
    longel[sizeof(longel) - 1] = '\0';
    assert_int_equal(rb_parse_list(longel, rb_parse_u64, out, 4, &n, &bad), -EINVAL);
    assert_ptr_equal(bad, longel);
}

static void test_format_size(void **state)
{
    (void)state;
    static const struct {
        uint64_t in;
        const char *want;
    } cases[] = {
        {0, "0 B"},
        {512, "512 B"},
        {1023, "1023 B"},
        {1024, "1 KiB"},
        {4096, "4 KiB"},
        {1536 * KiB, "1.5 MiB"},
        {4000, "3.906 KiB"},
        {MiB - 1, "1023.999 KiB"},
        {GiB - 1, "1 GiB"},
        {3 * TiB, "3 TiB"},
        {1024 * TiB, "1 PiB"},
        {UINT64_MAX, "16 EiB"},
    };
    char buf[32];
    for (size_t i = 0; i < N_ELEMS(cases); i++) {
        rb_format_size(buf, sizeof(buf), cases[i].in);
        assert_string_equal(buf, cases[i].want);
    }
    /* Truncation stays inside the buffer and terminated. */
    char small[4];
    rb_format_size(small, sizeof(small), 1536 * KiB);
    assert_string_equal(small, "1.5");
}

static void test_format_duration(void **state)
{
    (void)state;
    static const struct {
        uint64_t in;
        const char *want;
    } exact[] = {
        {0, "0s"},
        {1000000000ull, "1s"},
        {1500000000ull, "1500ms"},
        {250000, "250us"},
        {7, "7ns"},
        {120000000000ull, "2m"},
        {90000000000ull, "90s"},
        {3600000000000ull, "1h"},
        {7200000000001ull, "7200000000001ns"},
    };
    char buf[32];
    for (size_t i = 0; i < N_ELEMS(exact); i++) {
        uint64_t back = 0;
        rb_format_duration(buf, sizeof(buf), exact[i].in);
        assert_string_equal(buf, exact[i].want);
        /* What we write, we read back exactly (the resolved config relies on it). */
        assert_int_equal(rb_parse_duration(buf, &back), 0);
        assert_int_equal(back, exact[i].in);
    }
    uint64_t back = 0;
    rb_format_duration(buf, sizeof(buf), UINT64_MAX);
    assert_int_equal(rb_parse_duration(buf, &back), 0);
    assert_int_equal(back, UINT64_MAX);

    static const struct {
        uint64_t in;
        const char *want;
    } human[] = {
        {0, "0ns"},
        {812, "812ns"},
        {999, "999ns"},
        {1000, "1.00us"},
        {3410, "3.41us"},
        {12300000, "12.3ms"},
        {999999, "1.00ms"},
        {1250000000ull, "1.25s"},
        {125000000000ull, "125s"},
        {2000000000000ull, "33.3m"},
        {5990000000000ull, "99.8m"},
        {5999000000000ull, "1.67h"},
        {36000000000000ull, "10.0h"},
    };
    for (size_t i = 0; i < N_ELEMS(human); i++) {
        rb_format_duration_human(buf, sizeof(buf), human[i].in);
        assert_string_equal(buf, human[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_valid),     cmocka_unit_test(test_size_invalid),
        cmocka_unit_test(test_duration),       cmocka_unit_test(test_rate),
        cmocka_unit_test(test_integers),       cmocka_unit_test(test_double_percent),
        cmocka_unit_test(test_list),           cmocka_unit_test(test_format_size),
        cmocka_unit_test(test_format_duration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
