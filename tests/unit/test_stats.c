/* Unit tests of phase stats: merge, min/max packing for the MPI reduce, JSON figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "railbench/stats.h"

static void test_merge_and_minmax(void **state)
{
    (void)state;
    struct rb_stats *a = rb_stats_new(), *b = rb_stats_new(), *sum = rb_stats_new();
    for (uint64_t i = 1; i <= 100; i++) {
        a->ops++;
        a->bytes += 10;
        rb_hist_record(&a->lat, i * 1000);
    }
    for (uint64_t i = 1; i <= 50; i++) {
        b->ops++;
        b->bytes += 20;
        rb_hist_record(&b->lat, 500 + i);
        rb_hist_record(&b->ttfb, 7);
    }
    rb_stats_error(b, 2);
    rb_stats_error(b, 99); /* out of range lands in the last class */
    b->extra[1] = 5;

    /* What MPI does: sum every uint64_t, then a MIN reduce of the packed min/max. */
    const uint64_t *pa = (const uint64_t *)a, *pb = (const uint64_t *)b;
    uint64_t *ps = (uint64_t *)sum;
    for (size_t i = 0; i < RB_STATS_U64S; i++)
        ps[i] = pa[i] + pb[i];
    uint64_t ma[4], mb[4], mm[4];
    rb_stats_minmax_pack(a, ma);
    rb_stats_minmax_pack(b, mb);
    for (int i = 0; i < 4; i++)
        mm[i] = ma[i] < mb[i] ? ma[i] : mb[i];
    rb_stats_minmax_unpack(sum, mm);

    rb_stats_merge(a, b);
    assert_memory_equal(a, sum, sizeof *a);
    assert_int_equal(a->ops, 150);
    assert_int_equal(a->bytes, 2000);
    assert_int_equal(a->errors, 2);
    assert_int_equal(a->err[2], 1);
    assert_int_equal(a->err[RB_STATS_ERR_MAX - 1], 1);
    assert_int_equal(a->lat.min_ns, 501);
    assert_int_equal(a->lat.max_ns, 100000);
    assert_int_equal(a->ttfb.min_ns, 7);
    rb_stats_free(a);
    rb_stats_free(b);
    rb_stats_free(sum);
    rb_stats_free(NULL);
}

static void test_json(void **state)
{
    (void)state;
    struct rb_stats *s = rb_stats_new();
    for (int i = 0; i < 4; i++) {
        s->ops++;
        s->bytes += 1000;
        rb_hist_record(&s->lat, 100);
    }
    rb_stats_error(s, 1);
    s->extra[0] = 3;
    static const char *const errs[] = {"connect", "http_4xx", NULL};
    static const char *const extra[] = {"cache_hit", NULL};
    const struct rb_stats_names names = {errs, extra};
    cJSON *o = cJSON_CreateObject();
    rb_stats_to_json(o, s, &names, 2.0, true);
    assert_int_equal(cJSON_GetObjectItem(o, "count")->valuedouble, 4);
    assert_true(cJSON_GetObjectItem(o, "throughput_bytes_per_s")->valuedouble == 2000.0);
    /* 4 operations of which 1 failed, over 2 s: 1.5 successful and 0.5 failed per second. */
    assert_true(cJSON_GetObjectItem(o, "ops_per_s")->valuedouble == 1.5);
    assert_true(cJSON_GetObjectItem(o, "errors_per_s")->valuedouble == 0.5);
    cJSON *e = cJSON_GetObjectItem(o, "errors");
    assert_int_equal(cJSON_GetObjectItem(e, "total")->valuedouble, 1);
    assert_int_equal(cJSON_GetObjectItem(e, "http_4xx")->valuedouble, 1);
    assert_int_equal(cJSON_GetObjectItem(e, "connect")->valuedouble, 0);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "extra"), "cache_hit")->valuedouble, 3);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "latency_ns"), "p50")->valuedouble, 100);
    struct rb_hist *back = rb_hist_new();
    assert_int_equal(rb_hist_from_json(cJSON_GetObjectItem(o, "latency_hist"), back), 0);
    assert_memory_equal(back, &s->lat, sizeof *back);
    rb_hist_free(back);
    cJSON_Delete(o);

    /* No duration: rates were not measured and are null, not 0. */
    o = cJSON_CreateObject();
    rb_stats_to_json(o, s, &names, 0.0, false);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "ops_per_s")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "throughput_bytes_per_s")));
    cJSON_Delete(o);
    rb_stats_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_and_minmax),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
