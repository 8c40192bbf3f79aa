/* Unit tests of report tables: formats, escaping, which way figures are better, and comparisons. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "rtable_int.h"

#define MIB (1024.0 * 1024.0)

/* A small load-like table: two key columns, a size, three figures, an optional and a note column. */
static struct rb_rtable *sample(const char *title, double mibs, double p99_ms, double errors)
{
    struct rb_rtable *t = rb_rtable_new("load", title);
    rb_rtable_col(t, "op", "op", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "size_bytes", "size", RB_RF_SIZE, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "throughput_bytes_per_s", "MiB/s", RB_RF_NUM, 2, 1 / MIB, 0);
    rb_rtable_col(t, "latency_p99_ns", "p99 (ms)", RB_RF_NUM, 3, 1e-6, 0);
    rb_rtable_col(t, "errors", "errors", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "cache_hit", "hits", RB_RF_NUM, 0, 1, RB_RCOL_OPTIONAL);
    rb_rtable_col(t, "note", "", RB_RF_TEXT, 0, 1, RB_RCOL_NOTE);
    size_t r = rb_rtable_row(t);
    rb_rtable_text(t, r, "op", "GET");
    rb_rtable_num(t, r, "size_bytes", 1048576);
    rb_rtable_num(t, r, "throughput_bytes_per_s", mibs * MIB);
    rb_rtable_num(t, r, "latency_p99_ns", p99_ms * 1e6);
    rb_rtable_num(t, r, "errors", errors);
    r = rb_rtable_row(t);
    rb_rtable_text(t, r, "op", "PUT");
    rb_rtable_num(t, r, "size_bytes", 4096);
    rb_rtable_num(t, r, "throughput_bytes_per_s", NAN); /* missing: "–" */
    rb_rtable_num(t, r, "latency_p99_ns", 2.5e6);
    rb_rtable_num(t, r, "errors", 0);
    rb_rtable_text(t, r, "note", "knee");
    return t;
}

static void test_markdown(void **state)
{
    (void)state;
    struct rb_rtable *t = sample("Load | \"run\"", 1131.875, 9.0114, 0);
    rb_rtable_note(t, "target <http://x>: 1 rank, p99<=2ms");
    struct rb_buf b = {0};
    rb_rtable_md(t, &b);
    assert_false(t->oom);
    /*
     * Numbers right-aligned and scaled, sizes human, missing "–" (padded by its width, one column) and said
     * why once below the table, empty note blank, the optional column gone.
     */
    assert_string_equal(b.s, "## Load \\| \"run\"\n\n"
                             "| op  |  size |   MiB/s | p99 (ms) | errors |      |\n"
                             "|:----|------:|--------:|---------:|-------:|:-----|\n"
                             "| GET | 1 MiB | 1131.88 |    9.011 |      0 |      |\n"
                             "| PUT | 4 KiB |       – |    2.500 |      0 | knee |\n"
                             "\n"
                             "- target \\<http://x>: 1 rank, p99<=2ms\n"
                             "- –: not in that run's result (not measured there, or not applicable to that row)\n"
                             "\n");
    rb_buf_free(&b);
    /* A note of the kind's own that says why a figure is – stands for the generic one. */
    rb_rtable_note(t, "MiB/s –: not measured for PUT");
    rb_rtable_md(t, &b);
    assert_null(strstr(b.s, "not in that run's result"));
    assert_non_null(strstr(b.s, "- MiB/s –: not measured for PUT\n"));
    rb_buf_free(&b);
    rb_rtable_free(t);
}

static void test_markdown_escapes_cells(void **state)
{
    (void)state;
    struct rb_rtable *t = rb_rtable_new("x", "x");
    rb_rtable_col(t, "host", "host", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    size_t r = rb_rtable_row(t);
    rb_rtable_text(t, r, "host", "a|b\n<img src=x>`c`");
    struct rb_buf b = {0};
    rb_rtable_md(t, &b);
    /* One line per row, pipes and tags escaped: the table keeps its shape. */
    assert_non_null(strstr(b.s, "| a\\|b \\<img src=x>\\`c\\` |\n"));
    rb_buf_free(&b);
    rb_rtable_free(t);
}

static void test_csv(void **state)
{
    (void)state;
    struct rb_rtable *t = sample("Load", 100, 2, 1);
    rb_rtable_text(t, 1, "op", "PUT, \"big\"");
    struct rb_buf b = {0};
    rb_rtable_csv(t, &b);
    /* Sizes in bytes, empty for missing values, RFC 4180 quoting. */
    assert_string_equal(b.s, "# Load\n"
                             "op,size,MiB/s,p99 (ms),errors,\n"
                             "GET,1048576,100.00,2.000,1,\n"
                             "\"PUT, \"\"big\"\"\",4096,,2.500,0,knee\n"
                             "\n");
    rb_buf_free(&b);
    rb_rtable_free(t);
}

static void test_json(void **state)
{
    (void)state;
    struct rb_rtable *t = sample("Load", 100, 2, 1);
    rb_rtable_num(t, 0, "cache_hit", 7);
    cJSON *j = rb_rtable_json(t);
    assert_non_null(j);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "id")), "load");
    cJSON *rows = cJSON_GetObjectItem(j, "rows");
    assert_int_equal(cJSON_GetArraySize(rows), 2);
    cJSON *r0 = cJSON_GetArrayItem(rows, 0), *r1 = cJSON_GetArrayItem(rows, 1);
    /* Base units, not display units. */
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(r0, "throughput_bytes_per_s")) == 100 * MIB);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(r0, "latency_p99_ns")) == 2e6);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(r0, "size_bytes")) == 1048576);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r1, "throughput_bytes_per_s")));
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(r0, "cache_hit")) == 7);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(r1, "note")), "knee");
    cJSON_Delete(j);
    rb_rtable_free(t);
}

static void test_html(void **state)
{
    (void)state;
    struct rb_rtable *t = sample("<b>Load</b>", 100, 2, 1);
    rb_rtable_text(t, 0, "op", "<script>alert(1)</script>");
    rb_rtable_note(t, "note \"<i>\"");
    struct rb_buf b = {0};
    rb_rtable_html(t, &b);
    assert_null(strstr(b.s, "<script"));
    assert_null(strstr(b.s, "<b>"));
    assert_null(strstr(b.s, "<i>"));
    assert_non_null(strstr(b.s, "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>"));
    assert_non_null(strstr(b.s, "<td class=\"num\">100.00</td>"));
    assert_non_null(strstr(b.s, "<h3>&lt;b&gt;Load&lt;/b&gt;</h3>"));
    rb_buf_free(&b);
    rb_rtable_free(t);
}

static void test_better(void **state)
{
    (void)state;
    static const char *const higher[] = {"throughput_bytes_per_s", "ops_per_s", "oop_busbw_gbps", "ip_algbw_gbps",
                                         "iops", "au_pct", "au_mean_pct", "samples_per_s", "warm_over_direct",
                                         "segment_slowest_bytes_per_s", "bw_bytes_per_s"};
    static const char *const lower[] = {"latency_p99_ns", "ttfb_p50_ns", "clat_p999_ns", "oop_time_us", "osu_max_us",
                                        "errors", "oop_wrong", "data_wait_p99_ns", "latency_uncorrected_p99_ns"};
    static const char *const neither[] = {"requests", "objects", "samples", "count", "size_bytes", "duration_s",
                                          "disk_util_ratio", "disk_util_pct", "net_bytes_per_s", "net_rx_bytes_per_s",
                                          "disk_read_iops", "cpu_util_ratio", "ib_tx_bytes_per_s", "au_min_pct",
                                          "accelerators", "ranks", "cache_hit"};
    for (size_t i = 0; i < sizeof higher / sizeof higher[0]; i++)
        assert_int_equal(rb_rtable_better(higher[i]), RB_BETTER_HIGHER);
    for (size_t i = 0; i < sizeof lower / sizeof lower[0]; i++)
        assert_int_equal(rb_rtable_better(lower[i]), RB_BETTER_LOWER);
    for (size_t i = 0; i < sizeof neither / sizeof neither[0]; i++)
        assert_int_equal(rb_rtable_better(neither[i]), RB_BETTER_NONE);
    assert_int_equal(rb_rtable_better(NULL), RB_BETTER_NONE);
}

static void test_judge(void **state)
{
    (void)state;
    /* Throughput 10 % lower: a regression beyond 5 %, not beyond 10 %. */
    assert_int_equal(rb_rtable_judge(RB_BETTER_HIGHER, 100, 90, 5), -1);
    assert_int_equal(rb_rtable_judge(RB_BETTER_HIGHER, 100, 90, 10), 0);
    assert_int_equal(rb_rtable_judge(RB_BETTER_HIGHER, 100, 111, 10), 1);
    /* Latency higher is worse. */
    assert_int_equal(rb_rtable_judge(RB_BETTER_LOWER, 2e6, 2.2e6, 5), -1);
    assert_int_equal(rb_rtable_judge(RB_BETTER_LOWER, 2e6, 1.8e6, 5), 1);
    assert_int_equal(rb_rtable_judge(RB_BETTER_LOWER, 2e6, 2.05e6, 5), 0);
    /* From zero errors, any error is a regression; the same value never is. */
    assert_int_equal(rb_rtable_judge(RB_BETTER_LOWER, 0, 1, 5), -1);
    assert_int_equal(rb_rtable_judge(RB_BETTER_LOWER, 0, 0, 0), 0);
    /* Negative baselines (a signed figure) judge by |A|. */
    assert_int_equal(rb_rtable_judge(RB_BETTER_HIGHER, -10, -12, 5), -1);
    assert_int_equal(rb_rtable_judge(RB_BETTER_NONE, 1, 1000, 5), 0);
    assert_int_equal(rb_rtable_judge(RB_BETTER_HIGHER, NAN, 1, 5), 0);
}

static const char *cell(const struct rb_rtable *t, size_t r, const char *key, char *buf, size_t len)
{
    int c = rb_rtable_find(t, key);
    assert_true(c >= 0);
    rb_rtable_cell_text(t, r, (size_t)c, buf, len);
    return buf;
}

static void test_compare(void **state)
{
    (void)state;
    struct rb_rtable *a = sample("Load", 1000, 2.0, 0), *b = sample("Load", 850, 2.04, 2);
    /* Row keys: B's PUT has another size, so it matches nothing; B has an extra row too. */
    rb_rtable_num(b, 1, "size_bytes", 8192);
    size_t regressions = 99;
    struct rb_rtable *d = rb_rtable_compare(a, b, 5, &regressions);
    assert_non_null(d);
    char buf[128];
    /* GET: MiB/s, p99, errors (the optional hits column has no values). Then PUT only in A, PUT only in B. */
    assert_int_equal(d->nrows, 5);
    assert_string_equal(cell(d, 0, "figure", buf, sizeof buf), "MiB/s");
    assert_string_equal(cell(d, 0, "a", buf, sizeof buf), "1000.00");
    assert_string_equal(cell(d, 0, "b", buf, sizeof buf), "850.00");
    assert_string_equal(cell(d, 0, "delta", buf, sizeof buf), "-150.00");
    assert_string_equal(cell(d, 0, "delta_pct", buf, sizeof buf), "-15.0");
    assert_string_equal(cell(d, 0, "mark", buf, sizeof buf), "REGRESSION");
    assert_string_equal(cell(d, 0, "op", buf, sizeof buf), "GET");
    assert_string_equal(cell(d, 0, "size_bytes", buf, sizeof buf), "1 MiB");
    /* p99 2.00 -> 2.04 ms is +2 %: within the threshold. */
    assert_string_equal(cell(d, 1, "figure", buf, sizeof buf), "p99 (ms)");
    assert_string_equal(cell(d, 1, "delta", buf, sizeof buf), "+0.040");
    assert_string_equal(cell(d, 1, "delta_pct", buf, sizeof buf), "+2.0");
    assert_string_equal(cell(d, 1, "mark", buf, sizeof buf), "");
    /* 0 -> 2 errors: no percentage, still a regression. */
    assert_string_equal(cell(d, 2, "figure", buf, sizeof buf), "errors");
    assert_string_equal(cell(d, 2, "delta_pct", buf, sizeof buf), "–");
    assert_string_equal(cell(d, 2, "mark", buf, sizeof buf), "REGRESSION");
    assert_string_equal(cell(d, 3, "mark", buf, sizeof buf), "only in A");
    assert_string_equal(cell(d, 3, "size_bytes", buf, sizeof buf), "4 KiB");
    assert_string_equal(cell(d, 4, "mark", buf, sizeof buf), "only in B");
    assert_string_equal(cell(d, 4, "size_bytes", buf, sizeof buf), "8 KiB");
    assert_int_equal(regressions, 2);
    /* JSON carries base units and the figure's key. */
    cJSON *j = rb_rtable_json(d);
    cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "rows"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(r0, "figure_key")), "throughput_bytes_per_s");
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(r0, "delta")) == -150 * MIB);
    assert_true(fabs(cJSON_GetNumberValue(cJSON_GetObjectItem(r0, "delta_pct")) + 15) < 1e-9);
    cJSON_Delete(j);
    rb_rtable_free(d);

    /* A looser threshold keeps the throughput drop unmarked; the errors stay a regression. */
    d = rb_rtable_compare(a, b, 20, &regressions);
    assert_string_equal(cell(d, 0, "mark", buf, sizeof buf), "");
    assert_int_equal(regressions, 1);
    rb_rtable_free(d);
    /* Swapped, the same change is an improvement. */
    d = rb_rtable_compare(b, a, 5, &regressions);
    assert_string_equal(cell(d, 0, "mark", buf, sizeof buf), "improved");
    assert_int_equal(regressions, 0);
    rb_rtable_free(d);
    rb_rtable_free(a);
    rb_rtable_free(b);
}

static void test_columns_after_rows_refused(void **state)
{
    (void)state;
    struct rb_rtable *t = rb_rtable_new("x", "x");
    rb_rtable_col(t, "a", "a", RB_RF_NUM, 0, 1, 0);
    rb_rtable_row(t);
    assert_int_equal(rb_rtable_col(t, "b", "b", RB_RF_NUM, 0, 1, 0), -1);
    /* Unknown keys and rows are ignored, not written out of bounds. */
    rb_rtable_num(t, 5, "a", 1);
    rb_rtable_text(t, 0, "nope", "x");
    assert_int_equal(t->ncols, 1);
    rb_rtable_free(t);
    rb_rtable_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_markdown),
        cmocka_unit_test(test_markdown_escapes_cells),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_html),
        cmocka_unit_test(test_better),
        cmocka_unit_test(test_judge),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_columns_after_rows_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
