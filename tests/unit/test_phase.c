/*
 * Unit tests for loader/engine/phase.c: the load commands' error policy (--max-error-rate, the error_rate and
 * no_symlinks checks, their lines), the open loop's rate check, a phase's summary row and report section from
 * real stats, and whole phases on a harness without MPI against a peer in a thread of this test (script_peer.h):
 * one that completes, one that ends on its duration, one stopped because the target refuses every request.
 */
#define _GNU_SOURCE

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "phase_int.h"
#include "railbench/clock.h"
#include "railbench/file.h"
#include "railbench/units.h"
#include "script_peer.h"

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* A record to check into, in a directory of its own (removed by result_done). */
struct rec {
    char dir[64];
    struct rb_result r;
};

static void result_begin(struct rec *x)
{
    snprintf(x->dir, sizeof x->dir, "/tmp/rb-test-phase-XXXXXX");
    assert_non_null(mkdtemp(x->dir));
    assert_int_equal(rb_result_open(&x->r, x->dir, "load get", NULL), 0);
}

static void result_done(struct rec *x)
{
    rb_result_close(&x->r);
    nftw(x->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The i-th check recorded: its name, whether it passed, its detail. */
static void assert_check(const struct rec *x, int i, const char *name, bool passed, const char *detail)
{
    const cJSON *c = cJSON_GetArrayItem(x->r.checks, i);
    assert_non_null(c);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), name);
    assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(c, "passed")), passed);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "detail")), detail);
}

/* stderr captured into a file around a call. */
struct cap {
    char path[64];
    int saved;
};

static void cap_begin(struct cap *c)
{
    fflush(stderr);
    snprintf(c->path, sizeof c->path, "/tmp/rb-test-phase-err-XXXXXX");
    int fd = mkstemp(c->path);
    assert_true(fd >= 0);
    c->saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
}

static char *cap_end(struct cap *c)
{
    fflush(stderr);
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    char *text = NULL;
    size_t len;
    assert_int_equal(rb_file_read(c->path, 1 << 20, &text, &len), 0);
    unlink(c->path);
    return text;
}

/* ---- the error policy ---- */

static void test_errors_over(void **state)
{
    (void)state;
    assert_true(rb_load_errors_over(0, 0, 100));   /* nothing was made: nothing was measured */
    assert_false(rb_load_errors_over(0, 10, 0));
    assert_true(rb_load_errors_over(1, 1000000, 0)); /* the default 0: any failure */
    assert_false(rb_load_errors_over(1, 100, 1.0));  /* exactly the limit passes */
    assert_true(rb_load_errors_over(2, 100, 1.0));
    assert_false(rb_load_errors_over(100, 100, 100));
}

static void test_check_errors_lines(void **state)
{
    (void)state;
    struct rec x;
    result_begin(&x);
    uint64_t cls[RB_LERR_COUNT] = {0};
    cls[RB_LERR_RESET] = 1;
    cls[RB_LERR_HTTP_5XX] = 2;
    struct cap c;
    cap_begin(&c);
    bool ok = rb_load_check_errors(&x.r, "get", "requests", cls, 3, 10, 0);
    char *err = cap_end(&c);
    assert_false(ok);
    assert_true(rb_result_failed(&x.r));
    assert_check(&x, 0, "error_rate", false,
                 "get: 3 of 10 requests failed (30.000 %; --max-error-rate 0 %); reset 1, http_5xx 2");
    assert_string_equal(err, "railbench: error: get: 3 of 10 requests failed (30.000 %), above --max-error-rate 0 %; "
                             "reset 1, http_5xx 2\n");
    free(err);

    /* Within the limit: a passed check, no line. Without a phase name the detail starts at the count. */
    cap_begin(&c);
    ok = rb_load_check_errors(&x.r, NULL, "reads", cls, 3, 1000, 0.5);
    err = cap_end(&c);
    assert_true(ok);
    assert_check(&x, 1, "error_rate", true, "3 of 1000 reads failed (0.300 %; --max-error-rate 0.5 %); reset 1, http_5xx 2");
    assert_string_equal(err, "");
    free(err);

    /* Nothing made: failed whatever the limit. */
    cap_begin(&c);
    ok = rb_load_check_errors(&x.r, "put", "writes", NULL, 0, 0, 100);
    err = cap_end(&c);
    assert_false(ok);
    assert_check(&x, 2, "error_rate", false, "put: no writes were made: nothing was measured");
    assert_string_equal(err, "railbench: error: put: no writes were made: nothing was measured\n");
    free(err);
    result_done(&x);
}

/* A symbolic link at a name fails the run whatever --max-error-rate allows: a check of its own. */
static void test_symlinks_never_tolerated(void **state)
{
    (void)state;
    struct rec x;
    result_begin(&x);
    uint64_t cls[RB_LERR_COUNT] = {0};
    cls[RB_LERR_SYMLINK] = 1;
    struct cap c;
    cap_begin(&c);
    bool ok = rb_load_check_errors(&x.r, "get", "reads", cls, 1, 100, 50);
    char *err = cap_end(&c);
    assert_false(ok);
    assert_check(&x, 0, "error_rate", true, "get: 1 of 100 reads failed (1.000 %; --max-error-rate 50 %); symlink 1");
    assert_check(&x, 1, "no_symlinks", false, "get: reads that met a symbolic link at their name: 1 (refused, not followed)");
    assert_string_equal(err, "railbench: error: get: reads that met a symbolic link at their name: 1 (refused, not followed)\n");
    free(err);

    /* rb_load_record_errors: the same checks, no line (the run already ended on one). */
    cap_begin(&c);
    ok = rb_load_record_errors(&x.r, "get", "reads", cls, 60, 100, 50);
    err = cap_end(&c);
    assert_false(ok);
    assert_check(&x, 2, "error_rate", false, "get: 60 of 100 reads failed (60.000 %; --max-error-rate 50 %); symlink 1");
    assert_check(&x, 3, "no_symlinks", false, "get: reads that met a symbolic link at their name: 1 (refused, not followed)");
    assert_string_equal(err, "");
    free(err);
    result_done(&x);
}

/* The open loop's achieved rate (abandoned requests were never sent) and its check at 95 % of the target. */
static void test_rate_check(void **state)
{
    (void)state;
    struct rb_load_result res = {0};
    res.total = rb_stats_new();
    res.total->ops = 100;
    res.total->err[RB_LERR_ABANDONED] = 5;
    assert_true(isnan(rb_load_achieved_rate(&res))); /* a closed loop has no rate */
    res.rate_per_s = 10;
    assert_true(isnan(rb_load_achieved_rate(&res))); /* no send window */
    res.send_window_s = 10;
    assert_true(rb_load_achieved_rate(&res) == 9.5);
    res.total->ops = 5;
    assert_true(rb_load_achieved_rate(&res) == 0); /* every request abandoned: nothing sent */
    rb_stats_free(res.total);

    struct rec x;
    result_begin(&x);
    struct cap c;
    cap_begin(&c);
    assert_true(rb_load_check_rate(&x.r, "get", 10, 9.5));
    assert_false(rb_load_check_rate(&x.r, NULL, 10, 9.4));
    assert_false(rb_load_check_rate(&x.r, "get", 10, NAN));
    char *err = cap_end(&c);
    assert_check(&x, 0, "rate", true, "get: achieved 9.5 of the target 10 requests/s (at least 95 % needed)");
    assert_check(&x, 1, "rate", false, "achieved 9.4 of the target 10 requests/s (at least 95 % needed)");
    assert_check(&x, 2, "rate", false, "get: achieved 0 of the target 10 requests/s (at least 95 % needed)");
    assert_string_equal(err, "railbench: error: the open loop achieved 9.4 requests/s, below 95 % of the target 10 requests/s\n"
                             "railbench: error: get: the open loop achieved 0 requests/s, below 95 % of the target 10 requests/s\n");
    free(err);
    result_done(&x);
}

/* ---- the summary row and the report section ---- */

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static void fill_result(struct rb_load_result *res, uint64_t *segs)
{
    memset(res, 0, sizeof *res);
    res->phase = "get";
    res->op = "GET";
    res->total = rb_stats_new();
    res->total->ops = 10;
    res->total->errors = 2;
    res->total->err[RB_LERR_HTTP_4XX] = 2;
    res->total->bytes = 8 * RB_MIB;
    res->total->extra[RB_LX_REDIRECTS] = 3;
    for (int i = 0; i < 8; i++)
        rb_hist_record(&res->total->lat, 4 * RB_NS_PER_MS);
    res->duration_s = 4.5;
    segs[0] = 1 * RB_MIB, segs[1] = 3 * RB_MIB, segs[2] = 2 * RB_MIB, segs[3] = RB_MIB / 2, segs[4] = 9 * RB_MIB;
    res->segments = segs;
    res->nsegments = 5;
    res->tls_unmeasured = true;
}

static void test_summary_row(void **state)
{
    (void)state;
    struct rb_load_result res;
    uint64_t segs[5];
    fill_result(&res, segs);
    cJSON *o = rb_load_summary_json(&res);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "op")), "GET");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "phase")), "get");
    assert_true(num(o, "requests") == 10);
    assert_true(num(o, "objects") == 8);
    assert_true(num(o, "bytes") == 8 * RB_MIB);
    assert_true(fabs(num(o, "throughput_bytes_per_s") - 8.0 * RB_MIB / 4.5) < 1e-6);
    assert_true(fabs(num(o, "ops_per_s") - 8 / 4.5) < 1e-9);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(o, "open_loop")));
    /* Only the 4 whole seconds count (the fifth, partial one does not): slowest 0.5, median (1+2)/2, fastest 3. */
    const cJSON *g = cJSON_GetObjectItem(o, "segments");
    assert_true(num(g, "seconds") == 4);
    assert_true(num(g, "slowest_bytes_per_s") == RB_MIB / 2);
    assert_true(num(g, "median_bytes_per_s") == 1.5 * RB_MIB);
    assert_true(num(g, "fastest_bytes_per_s") == 3 * RB_MIB);
    const cJSON *e = cJSON_GetObjectItem(o, "errors");
    assert_true(num(e, "total") == 2);
    assert_true(num(e, "http_4xx") == 2);
    assert_true(num(e, "http_5xx") == 0);
    assert_true(num(cJSON_GetObjectItem(o, "extra"), "redirects") == 3);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "tls"))); /* handshakes inside libcurl's requests: not measured */
    assert_true(num(cJSON_GetObjectItem(o, "latency_ns"), "min") == 4 * RB_NS_PER_MS);
    assert_true(num(cJSON_GetObjectItem(o, "latency_ns"), "max") == 4 * RB_NS_PER_MS);
    cJSON_Delete(o);

    /* Requests per second for an op that moves no bytes; no whole second: no segments (null, not 0). */
    res.segments_ops = true;
    o = rb_load_summary_json(&res);
    assert_true(num(cJSON_GetObjectItem(o, "segments"), "median_ops_per_s") == 1.5 * RB_MIB);
    cJSON_Delete(o);
    res.duration_s = 0.5;
    o = rb_load_summary_json(&res);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "segments")));
    cJSON_Delete(o);
    rb_stats_free(res.total);
}

static void test_report_section(void **state)
{
    (void)state;
    struct rb_load_result res;
    uint64_t segs[5];
    fill_result(&res, segs);
    char *md = NULL;
    size_t len = 0;
    assert_int_equal(rb_load_report_md(&res, &md, &len), 0);
    assert_int_equal(strlen(md), len);
    assert_non_null(strstr(md, "\n## GET (phase get)\n"));
    assert_non_null(strstr(md, "| 10 | 8 | 8 MiB | 4.50 s | 1.78 | 1.8 | 2 |\n"));
    assert_non_null(strstr(md, "| request | 4.0"));
    assert_non_null(strstr(md, "| time to first byte | – | – | – | – | – | – |\n")); /* none measured: not 0 */
    assert_non_null(strstr(md, "1-second segments (4 of 4.50 s): fastest 3.00 MiB/s, median 1.50 MiB/s, slowest 0.50 MiB/s\n"));
    assert_non_null(strstr(md, "\nerrors: http_4xx 2; redirects followed: 3\n"));
    assert_null(strstr(md, "nan"));
    /* An open loop shows both latencies; a run without errors says "none"; cache counts when any was seen. */
    res.open_loop = true;
    res.uncorrected = rb_hist_new();
    rb_hist_record(res.uncorrected, 3 * RB_NS_PER_MS);
    res.total->errors = res.total->err[RB_LERR_HTTP_4XX] = 0;
    res.total->extra[RB_LX_REDIRECTS] = 0;
    res.total->extra[RB_LX_CACHE_HIT] = 4;
    res.total->extra[RB_LX_CACHE_ABSENT] = 6;
    free(md);
    md = NULL;
    len = 0;
    assert_int_equal(rb_load_report_md(&res, &md, &len), 0);
    assert_non_null(strstr(md, "| request, from intended send (corrected) | 4.0"));
    assert_non_null(strstr(md, "| request, from actual send (uncorrected) | 3.0"));
    assert_non_null(strstr(md, "\nerrors: none; cache hit 4, miss 0, other 0, absent 6\n"));
    free(md);
    rb_hist_free(res.uncorrected);
    rb_stats_free(res.total);
}

/* ---- whole phases on a harness (one process, no MPI) against a peer ---- */

static const struct rb_opt no_opts[] = {{0}};
static const struct rb_cmd_spec spec = {"railbench load get [options]", "A phase under test.", no_opts, 0, 0, false};

struct bench {
    struct script_peer peer;
    char tmp[64], out[128];
    struct rb_cli cli;
    struct rb_harness h;
    struct rb_target *t;
    struct rb_objset s;
    struct rb_load_opts o;
};

/*
 * A harness writing into a new directory (metrics into its textfile, railbench.prom beside the run, when
 * metrics), ticking every 50 ms, and GETs of n objects named prefix-i on the peer.
 */
static void bench_begin_with(struct bench *b, const char *prefix, size_t n, bool metrics)
{
    assert_int_equal(sp_start(&b->peer), 0);
    snprintf(b->tmp, sizeof b->tmp, "/tmp/rb-test-phase-XXXXXX");
    assert_non_null(mkdtemp(b->tmp));
    snprintf(b->out, sizeof b->out, "%s/run", b->tmp);
    char *argv[] = {"get", "--out", b->out, "--interval", "50ms", "--quiet", "--prom-textfile", b->tmp, NULL};
    assert_int_equal(rb_cli_parse(&b->cli, &spec, metrics ? 8 : 6, argv), 0);
    assert_int_equal(rb_harness_init(&b->h, "load get", &b->cli, NULL), 0);
    b->t = sp_target(b->peer.port);
    memset(&b->s, 0, sizeof b->s);
    for (size_t i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s-%zu", prefix, i);
        assert_int_equal(rb_objset_add(&b->s, name, SP_BYTES), 0);
    }
    b->o = (struct rb_load_opts){
        .op = RB_LOAD_GET, .target = b->t, .objects = &b->s, .threads = 1, .inflight = 2,
        .pattern = RB_PATTERN_SEQUENTIAL, .seed = SP_SEED, .verify = true, .timeout_ns = 10 * RB_NS_PER_S,
        .max_redirects = 5, .log_fd = -1, .engine = RB_ENGINE_NATIVE, .io_loop = RB_IOLOOP_EPOLL,
    };
}

static void bench_begin(struct bench *b, const char *prefix, size_t n)
{
    bench_begin_with(b, prefix, n, false);
}

/* Ends the run (exit status want) and reads its result.json back. */
static cJSON *bench_end_prom(struct bench *b, int status, int want, char **prom)
{
    struct cap c;
    cap_begin(&c);
    assert_int_equal(rb_harness_finish(&b->h, NULL, status), want);
    free(cap_end(&c));
    char path[4300], *buf = NULL;
    size_t len;
    snprintf(path, sizeof path, "%s/result.json", b->out);
    assert_int_equal(rb_file_read(path, 1 << 26, &buf, &len), 0);
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    assert_non_null(j);
    if (prom) {
        snprintf(path, sizeof path, "%s/railbench.prom", b->tmp);
        assert_int_equal(rb_file_read(path, 1 << 26, prom, &len), 0);
    }
    rb_cli_free(&b->cli);
    rb_objset_free(&b->s);
    rb_target_close(b->t);
    sp_stop(&b->peer);
    nftw(b->tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return j;
}

static cJSON *bench_end(struct bench *b, int status, int want)
{
    return bench_end_prom(b, status, want, NULL);
}

static uint64_t sum_array(const cJSON *a)
{
    uint64_t n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, a)
        n += (uint64_t)it->valuedouble;
    return n;
}

/* A phase that ends with its request count: totals, the uncorrected histogram, 1-second segments, the record. */
static void test_phase_runs_to_count(void **state)
{
    (void)state;
    struct bench b;
    bench_begin(&b, "cl", 10);
    b.o.count = 30;
    struct rb_load_result res;
    assert_int_equal(rb_load_run_phase(&b.h, "get", 0, &b.o, &res), 0);
    assert_string_equal(res.phase, "get");
    assert_string_equal(res.op, "GET");
    assert_int_equal(res.total->ops, 30);
    assert_int_equal(res.total->errors, 0);
    assert_int_equal(res.total->bytes, 30 * SP_BYTES);
    assert_int_equal(res.uncorrected->count, 30);
    assert_false(res.open_loop);
    assert_true(isnan(rb_load_achieved_rate(&res)));
    assert_true(res.rank_busy_s > 0 && res.rank_busy_s <= res.duration_s + 0.5);
    uint64_t seg = 0;
    for (size_t i = 0; i < res.nsegments; i++)
        seg += res.segments[i];
    assert_int_equal(seg, 30 * SP_BYTES); /* every byte in one of the 1-second segments */
    assert_false(res.segments_ops);
    assert_null(res.tls);
    assert_false(res.tls_unmeasured);
    assert_int_equal(atomic_load(&b.peer.requests), 30);
    assert_true(rb_load_check_errors(&b.h.result, "get", "requests", res.total->err, res.total->errors,
                                     res.total->ops, 0));
    rb_load_result_free(&res);
    assert_null(res.total);
    cJSON *j = bench_end(&b, 0, 0);
    const cJSON *ph = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "phases"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ph, "name")), "get");
    assert_true(num(ph, "count") == 30);
    assert_true(num(ph, "bytes") == 30 * SP_BYTES);
    const cJSON *unc = cJSON_GetObjectItem(ph, "latency_uncorrected_ns");
    assert_true(num(unc, "min") > 0 && num(unc, "max") >= num(unc, "min"));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(ph, "open_loop")));
    assert_int_equal(sum_array(cJSON_GetObjectItem(ph, "bytes_per_second")), 30 * SP_BYTES);
    assert_null(cJSON_GetObjectItem(ph, "until_steady"));
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "checks"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), "error_rate");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c, "passed")));
    cJSON_Delete(j);
}

/* A phase with a duration and no other limit ends at it; its requests all counted. */
static void test_phase_ends_on_duration(void **state)
{
    (void)state;
    struct bench b;
    bench_begin(&b, "cl", 4);
    struct rb_load_result res;
    assert_int_equal(rb_load_run_phase(&b.h, "timed", 300 * RB_NS_PER_MS, &b.o, &res), 0);
    assert_true(res.duration_s >= 0.3 && res.duration_s < 5);
    assert_true(res.total->ops > 0);
    assert_int_equal(res.total->errors, 0);
    assert_int_equal(res.total->bytes, res.total->ops * SP_BYTES);
    rb_load_result_free(&res);
    cJSON *j = bench_end(&b, 0, 0);
    const cJSON *ph = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "phases"), 0);
    assert_true(num(ph, "duration_s") >= 0.3);
    cJSON_Delete(j);
}

/*
 * --until-steady: rank 0 feeds each tick's bytes to the detector and the phase ends once they settle (a loose
 * 100 % over 200 ms settles within a few ticks), long before its duration; the record says when. With metrics
 * asked for, each tick also sets the in-flight gauge.
 */
static void test_phase_until_steady(void **state)
{
    (void)state;
    struct bench b;
    bench_begin_with(&b, "cl", 4, true);
    struct rb_load_phase_opts po = {.steady = {.pct = 100, .window_ns = 200 * RB_NS_PER_MS}};
    struct rb_load_result res;
    assert_int_equal(rb_load_run_phase_with(&b.h, "steady", 30 * RB_NS_PER_S, &b.o, &po, &res), 0);
    assert_true(res.steady_converged);
    assert_true(res.steady_pct == 100);
    assert_true(res.steady_window_s == 0.2);
    assert_true(res.steady_at_s >= 0.2 && res.steady_at_s <= res.duration_s + 0.1);
    assert_true(res.duration_s < 25); /* it did not run to its duration */
    assert_int_equal(res.total->errors, 0);
    cJSON *row = rb_load_summary_json(&res);
    const cJSON *u = cJSON_GetObjectItem(row, "until_steady");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(u, "converged")));
    assert_true(num(u, "converged_at_s") == res.steady_at_s);
    cJSON_Delete(row);
    uint64_t bytes = res.total->bytes;
    rb_load_result_free(&res);
    char *prom = NULL;
    cJSON *j = bench_end_prom(&b, 0, 0, &prom);
    const cJSON *ph = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "phases"), 0);
    u = cJSON_GetObjectItem(ph, "until_steady");
    assert_true(num(u, "pct") == 100);
    assert_true(num(u, "window_s") == 0.2);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(u, "converged")));
    assert_true(num(u, "converged_at_s") >= 0.2);
    cJSON_Delete(j);
    assert_non_null(strstr(prom, "\nrailbench_inflight_requests{phase=\"steady\","));
    const char *bt = strstr(prom, "\nrailbench_bytes_total{op=\"GET\",phase=\"steady\",");
    assert_non_null(bt);
    unsigned long long got = 0;
    assert_int_equal(sscanf(strchr(bt, '}') + 1, "%llu", &got), 1);
    assert_int_equal(got, bytes); /* the phase's total, as the record has it */
    free(prom);
}

/* A phase that ends on its count before its window filled: not converged, and its time is null, not 0. */
static void test_phase_not_steady(void **state)
{
    (void)state;
    struct bench b;
    bench_begin(&b, "cl", 4);
    b.o.count = 4;
    struct rb_load_phase_opts po = {.steady = {.pct = 1, .window_ns = 60 * RB_NS_PER_S}};
    struct rb_load_result res;
    assert_int_equal(rb_load_run_phase_with(&b.h, "short", 0, &b.o, &po, &res), 0);
    assert_false(res.steady_converged);
    assert_int_equal(res.total->ops, 4);
    rb_load_result_free(&res);
    cJSON *j = bench_end(&b, 0, 0);
    const cJSON *u = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "phases"), 0), "until_steady");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(u, "converged")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(u, "converged_at_s")));
    cJSON_Delete(j);
}

/* A rank started late on purpose (load checkpoint --delay-rank): its busy time counts the delay, its requests all run. */
static void test_phase_start_delay(void **state)
{
    (void)state;
    struct bench b;
    bench_begin(&b, "cl", 2);
    b.o.count = 6;
    struct rb_load_phase_opts po = {.start_delay_ns = 250 * RB_NS_PER_MS};
    struct rb_load_result res;
    assert_int_equal(rb_load_run_phase_with(&b.h, "late", 0, &b.o, &po, &res), 0);
    assert_int_equal(res.total->ops, 6);
    assert_int_equal(res.total->errors, 0);
    assert_true(res.rank_busy_s >= 0.25);
    assert_true(res.duration_s >= 0.25);
    rb_load_result_free(&res);
    cJSON_Delete(bench_end(&b, 0, 0));
}

/*
 * stop_hopeless: a target that answers every request 404 ends the phase at the first tick after
 * RB_LOAD_HOPELESS_REQUESTS were made, with one error line and exit 3; what was counted is kept.
 */
static void test_phase_stops_when_hopeless(void **state)
{
    (void)state;
    struct bench b;
    bench_begin(&b, "e404", 8);
    b.o.count = 1000000;
    struct rb_load_phase_opts po = {.stop_hopeless = true};
    struct rb_load_result res;
    struct cap c;
    cap_begin(&c);
    int rc = rb_load_run_phase_with(&b.h, "get", 0, &b.o, &po, &res);
    char *err = cap_end(&c);
    assert_int_equal(rc, RB_EXIT_RUNTIME);
    assert_true(res.total->ops >= RB_LOAD_HOPELESS_REQUESTS && res.total->ops < 1000000);
    assert_int_equal(res.total->err[RB_LERR_HTTP_4XX], res.total->ops);
    assert_int_equal(res.total->bytes, 0);
    assert_non_null(strstr(err, "railbench: error: get: all of the first "));
    assert_non_null(strstr(err, " were answered 403 or 404, none otherwise (the warning above names the first): the "
                                "target cannot serve this load; stopped early\n"));
    /* The warning the line points to: the first refused request (either slot's), once. */
    const char *w = strstr(err, "railbench: warning: GET \"e404-");
    assert_non_null(w);
    assert_non_null(strstr(w, "HTTP 404 (first http_4xx error; all are counted by class)\n"));
    assert_null(strstr(w + 1, "railbench: warning:"));
    free(err);
    rb_load_result_free(&res);
    cJSON *j = bench_end(&b, rc, RB_EXIT_RUNTIME);
    assert_true(num(j, "exit_status") == RB_EXIT_RUNTIME);
    const cJSON *ph = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "phases"), 0);
    assert_true(num(cJSON_GetObjectItem(ph, "errors"), "http_4xx") == num(ph, "count"));
    cJSON_Delete(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors_over),
        cmocka_unit_test(test_check_errors_lines),
        cmocka_unit_test(test_symlinks_never_tolerated),
        cmocka_unit_test(test_rate_check),
        cmocka_unit_test(test_summary_row),
        cmocka_unit_test(test_report_section),
        cmocka_unit_test(test_phase_runs_to_count),
        cmocka_unit_test(test_phase_ends_on_duration),
        cmocka_unit_test(test_phase_until_steady),
        cmocka_unit_test(test_phase_not_steady),
        cmocka_unit_test(test_phase_start_delay),
        cmocka_unit_test(test_phase_stops_when_hopeless),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
