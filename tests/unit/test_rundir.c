/* Unit tests of reading result directories: fixtures, runs rebuilt from intervals, and truncated or garbage files. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "railbench/hist.h"
#include "rundir_int.h"

#define FIX RB_FIXTURES_DIR "/report"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static void put(const char *dir, const char *name, const char *data, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static bool any_warning(const struct rb_rundir *r, const char *needle)
{
    for (size_t i = 0; i < r->nwarnings; i++)
        if (strstr(r->warnings[i], needle))
            return true;
    return false;
}

static void test_fixture_with_curves(void **state)
{
    (void)state;
    struct rb_rundir r;
    assert_int_equal(rb_rundir_load(&r, FIX "/get-a/", RB_RUNDIR_SERIES | RB_RUNDIR_CURVES), 0);
    assert_string_equal(r.name, "get-a");
    assert_string_equal(r.command, "load get");
    assert_false(r.partial);
    assert_int_equal(r.nwarnings, 0);
    assert_non_null(r.phases);
    assert_string_equal(rb_rundir_label(&r, "conc"), "4");
    /* Histograms are dropped once turned into curves. */
    const cJSON *ph = cJSON_GetArrayItem(r.phases, 0);
    assert_null(cJSON_GetObjectItem(ph, "latency_hist"));
    assert_int_equal(r.ncurves, 1);
    const struct rb_curve *c = &r.curves[0];
    assert_string_equal(c->phase, "get");
    /* The curve's p50 and p99 are the record's own (same histogram, same nearest rank). */
    assert_true(c->q_pct[0] == 50);
    assert_true(c->lat_ns[0] == rb_rundir_num(ph, "latency_ns.p50"));
    bool saw99 = false;
    for (size_t i = 1; i < c->n; i++) {
        assert_true(c->q_pct[i] > c->q_pct[i - 1]);
        assert_true(c->lat_ns[i] >= c->lat_ns[i - 1]);
        if (fabs(c->q_pct[i] - 99) < 1e-9) {
            saw99 = true;
            assert_true(c->lat_ns[i] == rb_rundir_num(ph, "latency_ns.p99"));
        }
    }
    assert_true(saw99);
    /* The curve stops where the samples no longer resolve the percentile: 1/(1-q) <= count. */
    double last = c->q_pct[c->n - 1];
    assert_true(1.0 / (1.0 - last / 100.0) <= (double)c->count * 1.0000001);
    /* One series point per interval line. */
    assert_int_equal(r.nseries, 1);
    assert_int_equal(r.series[0].n, r.interval_lines);
    assert_int_equal(r.interval_lines, 6);
    rb_rundir_free(&r);
    rb_rundir_free(&r);
}

static void test_partial_run(void **state)
{
    (void)state;
    struct rb_rundir r;
    assert_int_equal(rb_rundir_load(&r, FIX "/partial", 0), 0);
    assert_true(r.partial);
    assert_string_equal(r.command, "");
    assert_true(any_warning(&r, "the last line (4) is truncated"));
    assert_true(any_warning(&r, "no result.json"));
    /* The rebuilt phase is the sum of the complete lines. */
    size_t len;
    char *text = slurp(FIX "/partial/intervals.jsonl", &len);
    double count = 0, bytes = 0, dur = 0;
    int lines = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *j = cJSON_Parse(line);
        if (!j)
            continue;
        count += rb_rundir_num(j, "count");
        bytes += rb_rundir_num(j, "bytes");
        dur += rb_rundir_num(j, "duration_s");
        lines++;
        cJSON_Delete(j);
    }
    free(text);
    assert_int_equal(lines, 3);
    assert_int_equal(cJSON_GetArraySize(r.phases), 1);
    const cJSON *ph = cJSON_GetArrayItem(r.phases, 0);
    assert_true(rb_rundir_num(ph, "count") == count);
    assert_true(rb_rundir_num(ph, "bytes") == bytes);
    assert_true(fabs(rb_rundir_num(ph, "throughput_bytes_per_s") - bytes / dur) < 1e-6 * bytes / dur);
    assert_null(cJSON_GetObjectItem(ph, "latency_ns"));
    rb_rundir_free(&r);
}

static void test_missing_and_empty(void **state)
{
    (void)state;
    struct rb_rundir r;
    assert_int_equal(rb_rundir_load(&r, "/nonexistent/railbench-run", 0), -ENOENT);
    rb_rundir_free(&r);
    assert_int_equal(rb_rundir_load(&r, FIX "/get-a/result.json", 0), -ENOTDIR);
    rb_rundir_free(&r);
    char dir[] = "/tmp/rb_rundir_XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(rb_rundir_load(&r, dir, 0), -ENODATA);
    assert_true(any_warning(&r, "not a result directory"));
    rb_rundir_free(&r);
    /* A directory of result directories lists them, sorted. */
    char **kids;
    size_t n;
    assert_int_equal(rb_rundir_children(FIX, &kids, &n), 0);
    assert_true(n >= 10);
    for (size_t i = 0; i < n; i++) {
        if (i)
            assert_true(strcmp(kids[i - 1], kids[i]) < 0);
        assert_true(rb_rundir_is_result(kids[i]));
    }
    for (size_t i = 0; i < n; i++)
        free(kids[i]);
    free(kids);
    assert_int_equal(rb_rundir_children(dir, &kids, &n), 0);
    assert_int_equal(n, 0);
    free(kids);
    rmdir(dir);
}

static void test_paths(void **state)
{
    (void)state;
    cJSON *o = cJSON_Parse("{\"a\":{\"b\":3,\"s\":\"x\",\"big\":\"18446744073709551615\",\"arr\":[1]},\"n\":null}");
    assert_true(rb_rundir_num(o, "a.b") == 3);
    assert_true(rb_rundir_num(o, "a.big") == 18446744073709551615.0);
    assert_true(isnan(rb_rundir_num(o, "a.s")));
    assert_true(isnan(rb_rundir_num(o, "a.b.c")));
    assert_true(isnan(rb_rundir_num(o, "n.x")));
    assert_true(isnan(rb_rundir_num(NULL, "a")));
    assert_string_equal(rb_rundir_str(o, "a.s"), "x");
    assert_null(rb_rundir_str(o, "a.b"));
    assert_non_null(rb_rundir_array(o, "a.arr"));
    assert_null(rb_rundir_array(o, "a"));
    cJSON_Delete(o);
}

/*
 * Every prefix of a result.json (a run killed while writing, a disk full) and
 * byte-flipped copies: loading never crashes, and a file that is not the
 * whole record is either reported with a warning or still well-formed JSON.
 */
static void test_truncated_and_garbage(void **state)
{
    (void)state;
    static const char *const fixtures[] = {FIX "/put/result.json", FIX "/counters/result.json"};
    char dir[] = "/tmp/rb_rundir_fuzz_XXXXXX";
    assert_non_null(mkdtemp(dir));
    unsigned seed = 12345;
    for (size_t f = 0; f < sizeof fixtures / sizeof fixtures[0]; f++) {
        size_t len;
        char *full = slurp(fixtures[f], &len);
        /* Up to (not including) the closing brace: every such prefix is incomplete JSON. */
        size_t end = len;
        while (end > 0 && full[end - 1] != '}')
            end--;
        assert_true(end > 1);
        for (size_t cut = 0; cut < end; cut += 1 + cut / 400) {
            put(dir, "result.json", full, cut);
            struct rb_rundir r;
            int rc = rb_rundir_load(&r, dir, RB_RUNDIR_SERIES | RB_RUNDIR_CURVES);
            assert_true(rc == 0 || rc == -ENODATA);
            /* Without intervals.jsonl to fall back on, a truncated record is nothing to report. */
            assert_int_equal(rc, -ENODATA);
            assert_true(r.nwarnings >= 1);
            assert_true(any_warning(&r, "result.json"));
            rb_rundir_free(&r);
        }
        char *mut = malloc(len);
        for (int k = 0; k < 400; k++) {
            memcpy(mut, full, len);
            for (int flips = 0; flips < 1 + k % 5; flips++) {
                seed = seed * 1103515245u + 12345u;
                mut[(seed >> 8) % len] = (char)(seed >> 24);
            }
            put(dir, "result.json", mut, len);
            struct rb_rundir r;
            int rc = rb_rundir_load(&r, dir, RB_RUNDIR_SERIES | RB_RUNDIR_CURVES);
            assert_true(rc == 0 || rc == -ENODATA);
            rb_rundir_free(&r);
        }
        free(mut);
        free(full);
    }
    /* Garbage intervals with a half-written last line: the good lines still count. */
    const char lines[] = "{\"phase\":\"get\",\"op\":\"GET\",\"t_s\":1,\"count\":5,\"bytes\":50,\"duration_s\":1}\n"
                         "\x01\x02 not json\n"
                         "[1,2,3]\n"
                         "{\"phase\":\"get\",\"count\":\"7\",\"bytes\":70,\"duration_s\":1,\"t_s\":2}\n"
                         "{\"phase\":{\"x\":1},\"count\":-3,\"bytes\":1e400,\"duration_s\":\"x\"}\n"
                         "{\"phase\":\"get\",\"count\":1";
    char path[512];
    snprintf(path, sizeof path, "%s/result.json", dir);
    unlink(path);
    put(dir, "intervals.jsonl", lines, sizeof lines - 1);
    struct rb_rundir r;
    assert_int_equal(rb_rundir_load(&r, dir, RB_RUNDIR_SERIES), 0);
    assert_true(r.partial);
    assert_true(any_warning(&r, "3 of 6 lines are not JSON objects (first: line 2)"));
    const cJSON *ph = cJSON_GetArrayItem(r.phases, 0);
    assert_string_equal(rb_rundir_str(ph, "name"), "get");
    assert_true(rb_rundir_num(ph, "count") == 12);
    assert_true(rb_rundir_num(ph, "bytes") == 120);
    rb_rundir_free(&r);
    snprintf(path, sizeof path, "%s/intervals.jsonl", dir);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_with_curves),
        cmocka_unit_test(test_partial_run),
        cmocka_unit_test(test_missing_and_empty),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_truncated_and_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
