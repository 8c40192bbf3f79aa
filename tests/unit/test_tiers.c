/* Unit tests for loader/tiers/tiers.c: cold/warm verdicts from cache-status counts, speed-ups, size labels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tiers_int.h"

static void test_cold(void **state)
{
    (void)state;
    char why[256];
    const struct rb_tiers_cache all_miss = {.miss = 8};
    assert_int_equal(rb_tiers_judge(RB_TIERS_COLD, &all_miss, why, sizeof why), RB_TIERS_VERIFIED);
    assert_non_null(strstr(why, "8 MISS"));
    /* One HIT is enough: the tier held an object the run never read through it. */
    const struct rb_tiers_cache one_hit = {.hit = 1, .miss = 7};
    assert_int_equal(rb_tiers_judge(RB_TIERS_COLD, &one_hit, why, sizeof why), RB_TIERS_FAILED);
    assert_non_null(strstr(why, "1 of 8 cold GETs were cache HITs"));
    /* Other statuses (nginx EXPIRED, BYPASS) do not fail cold by themselves. */
    const struct rb_tiers_cache other = {.miss = 4, .other = 4};
    assert_int_equal(rb_tiers_judge(RB_TIERS_COLD, &other, NULL, 0), RB_TIERS_VERIFIED);
}

static void test_warm(void **state)
{
    (void)state;
    char why[256];
    const struct rb_tiers_cache all_hit = {.hit = 16};
    assert_int_equal(rb_tiers_judge(RB_TIERS_WARM, &all_hit, why, sizeof why), RB_TIERS_VERIFIED);
    const struct rb_tiers_cache miss = {.hit = 14, .miss = 2};
    assert_int_equal(rb_tiers_judge(RB_TIERS_WARM, &miss, why, sizeof why), RB_TIERS_FAILED);
    assert_non_null(strstr(why, "2 of 16 warm GETs were cache MISSes"));
    /* A HIT in warm and a MISS in cold are what is expected: swap them and both pass. */
    const struct rb_tiers_cache cold_like = {.miss = 5};
    assert_int_equal(rb_tiers_judge(RB_TIERS_WARM, &cold_like, NULL, 0), RB_TIERS_FAILED);
}

static void test_unverified(void **state)
{
    (void)state;
    char why[256];
    /* A tier without a cache-status header (AIStore, or a misnamed header): nothing to judge by. */
    const struct rb_tiers_cache none = {.absent = 8};
    assert_int_equal(rb_tiers_judge(RB_TIERS_COLD, &none, why, sizeof why), RB_TIERS_UNVERIFIED);
    assert_non_null(strstr(why, "none of the 8 responses"));
    assert_int_equal(rb_tiers_judge(RB_TIERS_WARM, &none, NULL, 0), RB_TIERS_UNVERIFIED);
    /* Direct reads never pass the tier and are not judged, whatever they carry. */
    const struct rb_tiers_cache hits = {.hit = 3};
    assert_int_equal(rb_tiers_judge(RB_TIERS_DIRECT, &hits, why, sizeof why), RB_TIERS_UNVERIFIED);
    /* No responses at all. */
    const struct rb_tiers_cache zero = {0};
    assert_int_equal(rb_tiers_judge(RB_TIERS_COLD, &zero, NULL, 0), RB_TIERS_UNVERIFIED);
}

static void test_speedup(void **state)
{
    (void)state;
    assert_true(rb_tiers_speedup(10e9, 1e9) == 10.0);
    assert_true(rb_tiers_speedup(1e9, 4e9) == 0.25);
    assert_true(rb_tiers_speedup(1e9, 0) < 0);
    assert_true(rb_tiers_speedup(0, 1e9) == 0.0);
}

static void test_size_label(void **state)
{
    (void)state;
    char b[32];
    rb_tiers_size_label(b, sizeof b, 1048576);
    assert_string_equal(b, "1MiB");
    rb_tiers_size_label(b, sizeof b, 10 * 1048576);
    assert_string_equal(b, "10MiB");
    rb_tiers_size_label(b, sizeof b, 262144);
    assert_string_equal(b, "256KiB");
    rb_tiers_size_label(b, sizeof b, 1536 * 1024);
    assert_string_equal(b, "1536KiB");
    rb_tiers_size_label(b, sizeof b, 1000000);
    assert_string_equal(b, "1000000B");
    rb_tiers_size_label(b, sizeof b, 1ull << 40);
    assert_string_equal(b, "1TiB");
    rb_tiers_size_label(b, sizeof b, 1ull << 50);
    assert_string_equal(b, "1024TiB");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cold),
        cmocka_unit_test(test_warm),
        cmocka_unit_test(test_unverified),
        cmocka_unit_test(test_speedup),
        cmocka_unit_test(test_size_label),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
