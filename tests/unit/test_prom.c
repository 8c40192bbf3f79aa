/* Unit tests of the Prometheus registry: exact cumulative buckets, families, escaping, listener errors. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "railbench/prom.h"

static void test_le_boundaries_align(void **state)
{
    (void)state;
    assert_int_equal(rb_prom_le_count(), 108);
    assert_int_equal(rb_prom_le_ns(0), 1024);
    assert_int_equal(rb_prom_le_ns(1), 1280);
    for (size_t i = 0; i < rb_prom_le_count(); i++) {
        uint64_t le = rb_prom_le_ns(i);
        /* Each boundary starts a histogram bucket, so "< le" is a whole number of buckets. */
        assert_int_equal(rb_hist_bucket_lower(rb_hist_index(le)), le);
        if (i)
            assert_true(le > rb_prom_le_ns(i - 1));
    }
}

/* Value of the first line starting with prefix, or -1. */
static double value_of(const char *text, const char *prefix)
{
    const char *p = strstr(text, prefix);
    return p ? strtod(p + strlen(prefix), NULL) : -1;
}

static void test_render_phase(void **state)
{
    (void)state;
    struct rb_prom *p = rb_prom_new("site=\"lab\"");
    struct rb_stats *s = rb_stats_new();
    /* 10 values of 1 ms, 5 of 1.024 us (exactly a boundary: counts above it), 1 of 10 s. */
    for (int i = 0; i < 10; i++)
        rb_hist_record(&s->lat, 1000000);
    for (int i = 0; i < 5; i++)
        rb_hist_record(&s->lat, 1024);
    rb_hist_record(&s->lat, 10000000000ull);
    s->ops = 16;
    s->bytes = 4096;
    rb_stats_error(s, 1); /* http_4xx */
    rb_stats_error(s, 3); /* connect */
    s->extra[0] = 7;
    static const char *const errs[] = {"http_5xx", "http_4xx", "timeout", "connect", NULL};
    static const char *const extra[] = {"cache_hit", NULL};
    const struct rb_stats_names names = {errs, extra};
    rb_prom_phase(p, "cold", "GET", &names, s);
    rb_prom_set(p, "railbench_inflight_requests", "gauge", "In flight.", "", 32);
    rb_prom_set(p, "railbench_inflight_requests", "gauge", "In flight.", "", 16);
    char *t = rb_prom_render(p);
    assert_non_null(t);
    assert_true(value_of(t, "railbench_requests_total{op=\"GET\",phase=\"cold\",code_class=\"2xx\",site=\"lab\"} ") == 14);
    assert_true(value_of(t, "railbench_requests_total{op=\"GET\",phase=\"cold\",code_class=\"4xx\",site=\"lab\"} ") == 1);
    /* timeout and connect share the "error" class: one series. */
    assert_true(value_of(t, "code_class=\"error\",site=\"lab\"} ") == 1);
    assert_null(strstr(strstr(t, "code_class=\"error\"") + 1, "code_class=\"error\""));
    assert_true(value_of(t, "railbench_bytes_total{op=\"GET\",phase=\"cold\",site=\"lab\"} ") == 4096);
    assert_true(value_of(t, "railbench_errors_total{op=\"GET\",phase=\"cold\",class=\"connect\",site=\"lab\"} ") == 1);
    assert_true(value_of(t, "railbench_events_total{op=\"GET\",phase=\"cold\",event=\"cache_hit\",site=\"lab\"} ") == 7);
    const char *h = "railbench_request_duration_seconds_bucket{op=\"GET\",phase=\"cold\",le=";
    char key[256];
    snprintf(key, sizeof key, "%s\"1.024e-06\",site=\"lab\"} ", h);
    assert_true(value_of(t, key) == 0);
    snprintf(key, sizeof key, "%s\"1.28e-06\",site=\"lab\"} ", h);
    assert_true(value_of(t, key) == 5);
    snprintf(key, sizeof key, "%s\"0.001048576\",site=\"lab\"} ", h);
    assert_true(value_of(t, key) == 15);
    snprintf(key, sizeof key, "%s\"+Inf\",site=\"lab\"} ", h);
    assert_true(value_of(t, key) == 16);
    assert_true(value_of(t, "railbench_request_duration_seconds_count{op=\"GET\",phase=\"cold\",site=\"lab\"} ") == 16);
    double sum = value_of(t, "railbench_request_duration_seconds_sum{op=\"GET\",phase=\"cold\",site=\"lab\"} ");
    assert_true(sum > 10.010005 && sum < 10.010006); /* 10 s + 10 x 1 ms + 5 x 1.024 us */
    /* No TTFB recorded: no TTFB family. */
    assert_null(strstr(t, "railbench_ttfb_seconds"));
    assert_true(value_of(t, "railbench_inflight_requests{site=\"lab\"} ") == 16);
    /* One HELP/TYPE per family. */
    assert_null(strstr(strstr(t, "# TYPE railbench_inflight_requests") + 1, "# TYPE railbench_inflight_requests"));
    free(t);

    /* A later update replaces the phase's totals; counters only grow. */
    s->ops = 20;
    rb_prom_phase(p, "cold", "GET", &names, s);
    t = rb_prom_render(p);
    assert_true(value_of(t, "code_class=\"2xx\",site=\"lab\"} ") == 18);
    free(t);
    rb_stats_free(s);
    rb_prom_free(p);
    rb_prom_free(NULL);
}

static void test_escape(void **state)
{
    (void)state;
    char out[64];
    rb_prom_escape(out, sizeof out, "a\"b\\c\nd");
    assert_string_equal(out, "a\\\"b\\\\c\\nd");
    rb_prom_escape(out, 4, "abcdef");
    assert_true(strlen(out) < 4);
}

static void test_listen_errors(void **state)
{
    (void)state;
    struct rb_prom *p = rb_prom_new(NULL);
    char msg[256];
    const char *bad[] = {"", "0", "70000", "abc", ":9000", "host:9000", "1.2.3.4:", "9000x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(rb_prom_listen(p, bad[i], msg, sizeof msg), -EINVAL);

    /* Occupy a port, then ask for it. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 1), 0);
    socklen_t sl = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    char spec[32];
    snprintf(spec, sizeof spec, "%u", ntohs(sa.sin_port));
    assert_int_equal(rb_prom_listen(p, spec, msg, sizeof msg), -EADDRINUSE);
    assert_non_null(strstr(msg, "Address already in use"));
    close(fd);
    rb_prom_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_le_boundaries_align),
        cmocka_unit_test(test_render_phase),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_listen_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
