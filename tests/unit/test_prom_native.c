/* Unit tests of the Prometheus formats beside the classic text: native histogram buckets, the protobuf form
 * decoded with protobuf-c, OpenMetrics with exemplars, and the choice by the scrape's Accept header. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "railbench/buf.h"
#include "railbench/prom.h"
#include "prom_metrics.pb-c.h"

typedef Io__Prometheus__Client__MetricFamily Family;

static void test_native_index(void **state)
{
    (void)state;
    /* Powers of two are boundaries: 2^(k/64) closes bucket k. */
    assert_int_equal(rb_prom_native_index(1.0), 0);
    assert_int_equal(rb_prom_native_index(2.0), 64);
    assert_int_equal(rb_prom_native_index(0.5), -64);
    assert_int_equal(rb_prom_native_index(0.25), -128);
    assert_int_equal(rb_prom_native_index(1.0000001), 1);
    assert_int_equal(rb_prom_native_index(0.9999999), 0);
    /* 1 ms: log2(0.001) * 64 = -637.8..., so bucket -637 = (2^(-638/64), 2^(-637/64)]. */
    assert_int_equal(rb_prom_native_index(0.001), -637);
    assert_true(rb_prom_native_upper(-638) < 0.001 && 0.001 <= rb_prom_native_upper(-637));
    assert_true(fabs(rb_prom_native_upper(64) - 2.0) < 1e-15);
    /* A bucket of rb_hist stands for its midpoint: 1.0 ms is [999424, 1003519] ns -> 1.0014715 ms. */
    size_t ms = rb_hist_index(1000000);
    assert_int_equal(rb_hist_bucket_lower(ms), 999424);
    assert_true(fabs(rb_prom_native_value(ms) - 1001471.5e-9) < 1e-15);
    assert_true(fabs(rb_prom_native_value(rb_hist_index(100)) - 100e-9) < 1e-18); /* exact below 128 ns */

    /* Every bucket of rb_hist: one native bucket, in order, and the stated bound holds for its values. */
    int32_t prev = INT32_MIN;
    double worst = 1;
    for (size_t i = 1; i < RB_HIST_BUCKETS - 1; i++) {
        double mid = rb_prom_native_value(i);
        int32_t k = rb_prom_native_index(mid);
        assert_true(rb_prom_native_upper(k - 1) < mid && mid <= rb_prom_native_upper(k));
        assert_true(k >= prev);
        prev = k;
        double lo = (double)rb_hist_bucket_lower(i) / 1e9, hi = (double)rb_hist_bucket_upper(i) / 1e9;
        double r = fmax(rb_prom_native_upper(k) / lo, hi / rb_prom_native_upper(k - 1));
        worst = fmax(worst, r);
    }
    assert_true(worst <= RB_PROM_NATIVE_ERROR);
    assert_true(worst > 1.014); /* the bound is tight: 2^(1/64) / (1 - 1/256) = 1.01486 */
}

/* A registry with known values: 1 of 0 ns, 5 of 1.024 us, 10 of 1 ms, 1 of 10 s; a gauge and a counter. */
static struct rb_prom *sample_registry(void)
{
    struct rb_prom *p = rb_prom_new("site=\"l\\\"ab\"");
    struct rb_stats *s = rb_stats_new();
    rb_hist_record(&s->lat, 0);
    for (int i = 0; i < 5; i++)
        rb_hist_record(&s->lat, 1024);
    for (int i = 0; i < 10; i++)
        rb_hist_record(&s->lat, 1000000);
    rb_hist_record(&s->lat, 10000000000ull);
    s->ops = 17;
    s->bytes = 4096;
    rb_stats_error(s, 0);
    static const char *const errs[] = {"http_5xx", "http_4xx", NULL};
    const struct rb_stats_names names = {errs, NULL};
    rb_prom_phase(p, "cold", "GET", &names, s);
    rb_stats_free(s);
    rb_prom_set(p, "railbench_inflight_requests", "gauge", "In flight.", "", 16);
    rb_prom_set(p, "railbench_network_bytes_total", "counter", "Bytes.", "device=\"eth0\"", 1e12);
    /* Two requests in the 1 ms bucket (the larger stays, whatever the order), one of 10 s. */
    rb_prom_exemplar(p, "cold", "GET", 0.0010005, "req-b", 1700000000.5);
    rb_prom_exemplar(p, "cold", "GET", 0.001001, "req-\"a\"", 1700000001.25);
    rb_prom_exemplar(p, "cold", "GET", 0.001, "req-c", 1700000002);
    rb_prom_exemplar(p, "cold", "GET", 10.0, "slowest", 1700000003);
    return p;
}

/* The length-delimited messages of buf, decoded; returns how many (at most max). */
static size_t decode(const uint8_t *buf, size_t len, Family **out, size_t max)
{
    size_t n = 0, off = 0;
    while (off < len && n < max) {
        uint64_t l = 0;
        for (int sh = 0; off < len; sh += 7) {
            uint8_t c = buf[off++];
            l |= (uint64_t)(c & 0x7f) << sh;
            if (!(c & 0x80))
                break;
        }
        assert_true(off + l <= len);
        out[n] = io__prometheus__client__metric_family__unpack(NULL, l, buf + off);
        assert_non_null(out[n]);
        n++;
        off += l;
    }
    assert_int_equal(off, len);
    return n;
}

static const char *label(const Io__Prometheus__Client__Metric *m, const char *name)
{
    for (size_t i = 0; i < m->n_label; i++)
        if (strcmp(m->label[i]->name, name) == 0)
            return m->label[i]->value;
    return NULL;
}

static void check_native(const Io__Prometheus__Client__Histogram *h)
{
    assert_int_equal(h->schema, 6);
    assert_int_equal(h->zero_count, 1);
    assert_true(h->zero_threshold > 0 && h->zero_threshold < 1e-30);
    /* Expand spans and deltas into (index, count). */
    int32_t idx[8], k = 0;
    int64_t cnt[8], c = 0;
    size_t nb = 0, d = 0;
    for (size_t s = 0; s < h->n_positive_span; s++) {
        k += h->positive_span[s]->offset;
        for (uint32_t j = 0; j < h->positive_span[s]->length; j++, k++) {
            c += h->positive_delta[d++];
            assert_true(nb < 8);
            idx[nb] = k;
            cnt[nb++] = c;
        }
        /* k is the bucket after this span's last: the next span's offset counts from there. */
    }
    assert_int_equal(d, h->n_positive_delta);
    assert_int_equal(nb, 3);
    assert_int_equal(idx[0], rb_prom_native_index(rb_prom_native_value(rb_hist_index(1024))));
    assert_int_equal(cnt[0], 5);
    assert_int_equal(idx[1], rb_prom_native_index(rb_prom_native_value(rb_hist_index(1000000))));
    assert_int_equal(idx[1], -637); /* 1.0014715 ms */
    assert_int_equal(cnt[1], 10);
    assert_int_equal(idx[2], rb_prom_native_index(rb_prom_native_value(rb_hist_index(10000000000ull))));
    assert_int_equal(cnt[2], 1);
    assert_int_equal(idx[0], -1273); /* 1.0275 us (1024..1031 ns): log2 * 64 = -1273.1 */
}

static void test_protobuf(void **state)
{
    (void)state;
    struct rb_prom *p = sample_registry();
    void *buf;
    size_t len;
    assert_int_equal(rb_prom_render_protobuf(p, &buf, &len), 0);
    Family *f[16];
    size_t n = decode(buf, len, f, 16);
    /* requests, bytes, errors, latency histogram, then the gauge and the counter sample. */
    assert_int_equal(n, 6);
    assert_string_equal(f[0]->name, "railbench_requests_total");
    assert_int_equal(f[0]->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER);
    assert_int_equal(f[0]->n_metric, 3); /* 2xx, 5xx, 4xx */
    const Io__Prometheus__Client__Metric *m = f[0]->metric[0];
    assert_string_equal(label(m, "code_class"), "2xx");
    assert_string_equal(label(m, "op"), "GET");
    assert_string_equal(label(m, "phase"), "cold");
    assert_string_equal(label(m, "site"), "l\"ab"); /* unescaped */
    assert_true(m->counter->value == 16);
    assert_string_equal(f[1]->name, "railbench_bytes_total");
    assert_true(f[1]->metric[0]->counter->value == 4096);

    assert_string_equal(f[3]->name, "railbench_request_duration_seconds");
    assert_int_equal(f[3]->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM);
    const Io__Prometheus__Client__Histogram *h = f[3]->metric[0]->histogram;
    assert_int_equal(h->sample_count, 17);
    assert_true(fabs(h->sample_sum - 10.010005120) < 1e-9);
    assert_int_equal(h->n_bucket, rb_prom_le_count());
    assert_true(h->bucket[0]->upper_bound == 1.024e-6);
    assert_int_equal(h->bucket[0]->cumulative_count, 1);  /* 0 ns */
    assert_int_equal(h->bucket[1]->cumulative_count, 6);  /* + 5 x 1.024 us */
    assert_int_equal(h->bucket[rb_prom_le_count() - 1]->cumulative_count, 17); /* 10 s < about 120 s */
    check_native(h);
    /* Classic buckets: only the slowest exemplar (on its bucket); the native list has every bucket's. */
    size_t with = 0, top = 0;
    while (top < rb_prom_le_count() && rb_prom_le_ns(top) <= 10000000000ull)
        top++;
    for (size_t i = 0; i < h->n_bucket; i++)
        with += h->bucket[i]->exemplar != NULL;
    assert_true(top < rb_prom_le_count());
    assert_int_equal(with, 1);
    assert_non_null(h->bucket[top]->exemplar);
    assert_string_equal(h->bucket[top]->exemplar->label[0]->name, "request_id");
    assert_string_equal(h->bucket[top]->exemplar->label[0]->value, "slowest");
    assert_true(h->bucket[top]->exemplar->value == 10.0);
    assert_int_equal(h->n_exemplars, 2);
    assert_string_equal(h->exemplars[0]->label[0]->value, "req-\"a\"");
    assert_true(h->exemplars[0]->value == 0.001001);
    assert_int_equal(h->exemplars[0]->timestamp->seconds, 1700000001);
    assert_int_equal(h->exemplars[0]->timestamp->nanos, 250000000);
    assert_string_equal(h->exemplars[1]->label[0]->value, "slowest");

    assert_string_equal(f[4]->name, "railbench_inflight_requests");
    assert_int_equal(f[4]->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE);
    assert_true(f[4]->metric[0]->gauge->value == 16);
    assert_int_equal(f[4]->metric[0]->n_label, 1);
    assert_true(f[5]->metric[0]->counter->value == 1e12);
    for (size_t i = 0; i < n; i++)
        io__prometheus__client__metric_family__free_unpacked(f[i], NULL);
    free(buf);
    rb_prom_free(p);
}

static void test_openmetrics(void **state)
{
    (void)state;
    struct rb_prom *p = sample_registry();
    char *t = rb_prom_render_openmetrics(p), *c = rb_prom_render(p);
    assert_non_null(t);
    /* Counter families are named without _total, their samples with it. */
    assert_non_null(strstr(t, "# TYPE railbench_requests counter\n"));
    assert_non_null(strstr(t, "# HELP railbench_requests Completed"));
    assert_non_null(strstr(t, "\nrailbench_requests_total{op=\"GET\",phase=\"cold\",code_class=\"2xx\",site=\"l\\\"ab\"} 16\n"));
    assert_non_null(strstr(t, "# TYPE railbench_network_bytes counter\n"));
    assert_non_null(strstr(t, "# TYPE railbench_inflight_requests gauge\n"));
    /* The exemplar after the count of the bucket it fell into: 1.001 ms < le 0.001048576. */
    assert_non_null(strstr(t, "railbench_request_duration_seconds_bucket{op=\"GET\",phase=\"cold\",le=\"0.001048576\","
                              "site=\"l\\\"ab\"} 16 # {request_id=\"req-\\\"a\\\"\"} 0.001001 1700000001.250\n"));
    assert_non_null(strstr(t, "# {request_id=\"slowest\"} 10 1700000003.000\n"));
    size_t n = 0;
    for (const char *q = t; (q = strstr(q, " # {")); q++)
        n++;
    assert_int_equal(n, 2);
    size_t len = strlen(t);
    assert_true(len > 6 && strcmp(t + len - 6, "# EOF\n") == 0);
    /* The classic text has neither exemplars nor EOF, and names counter families with _total. */
    assert_null(strstr(c, " # {"));
    assert_null(strstr(c, "# EOF"));
    assert_non_null(strstr(c, "# TYPE railbench_requests_total counter\n"));
    free(t);
    free(c);
    rb_prom_free(p);
}

/* Exemplar inputs: no NaN or infinity is kept; an id is cut at RB_PROM_ID_MAX bytes on a character boundary. */
static void test_exemplar_inputs(void **state)
{
    (void)state;
    struct rb_prom *p = sample_registry();
    rb_prom_exemplar(p, "cold", "GET", NAN, "nan", 1700000009);
    rb_prom_exemplar(p, "cold", "GET", INFINITY, "inf", 1700000009);
    rb_prom_exemplar(p, "cold", "GET", 0.002, "no-time", NAN);
    rb_prom_exemplar(p, "cold", "GET", -1, "negative", 1700000009);
    char id[80];
    memset(id, 'x', sizeof id);
    memcpy(id + 62, "\xc3\xa9", 2); /* U+00E9 at bytes 62-63: fits */
    memcpy(id + 64, "\xe2\x82\xac", 3); /* U+20AC at bytes 64-66: past the limit, dropped whole */
    id[sizeof id - 1] = '\0';
    rb_prom_exemplar(p, "cold", "GET", 0.003, id, 1700000010);
    memcpy(id + 62, "x\xe2\x82\xac", 4); /* U+20AC at bytes 63-65: would be cut, so dropped whole */
    rb_prom_exemplar(p, "cold", "GET", 0.005, id, 1700000011);
    char *t = rb_prom_render_openmetrics(p);
    assert_null(strstr(t, "\"nan\""));
    assert_null(strstr(t, "\"inf\""));
    assert_null(strstr(t, " nan"));
    assert_null(strstr(t, " inf"));
    assert_null(strstr(t, "no-time"));
    assert_null(strstr(t, "negative"));
    char want[160];
    snprintf(want, sizeof want, "# {request_id=\"%.62s\xc3\xa9\"} 0.003 1700000010.000\n", id);
    assert_non_null(strstr(t, want));
    snprintf(want, sizeof want, "# {request_id=\"%.63s\"} 0.005 1700000011.000\n", id);
    assert_non_null(strstr(t, want));
    free(t);
    rb_prom_free(p);
}

static void test_negotiate(void **state)
{
    (void)state;
    /* What Prometheus 2.42 sends with and without --enable-feature=native-histograms. */
    assert_int_equal(rb_prom_negotiate("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
                                       "encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,"
                                       "application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
                                       "q=0.5,*/*;q=0.1"),
                     RB_PROM_PROTOBUF);
    assert_int_equal(rb_prom_negotiate("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                                       "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
                     RB_PROM_OPENMETRICS);
    assert_int_equal(rb_prom_negotiate(NULL), RB_PROM_TEXT);
    assert_int_equal(rb_prom_negotiate(""), RB_PROM_TEXT);
    assert_int_equal(rb_prom_negotiate("*/*"), RB_PROM_TEXT);
    assert_int_equal(rb_prom_negotiate("application/json"), RB_PROM_TEXT);
    /* The protobuf type needs both parameters; the text encoding of it is not served. */
    assert_int_equal(rb_prom_negotiate("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
                                       "encoding=text"),
                     RB_PROM_TEXT);
    assert_int_equal(rb_prom_negotiate("application/vnd.google.protobuf; encoding=delimited"), RB_PROM_TEXT);
    assert_int_equal(rb_prom_negotiate("Application/Vnd.Google.Protobuf; proto=\"io.prometheus.client.MetricFamily\"; "
                                       "encoding=delimited"),
                     RB_PROM_PROTOBUF);
    /* q decides; a tie goes to the first; q=0 is refused. */
    assert_int_equal(rb_prom_negotiate("text/plain;q=0.9, application/openmetrics-text;q=0.2"), RB_PROM_TEXT);
    assert_int_equal(rb_prom_negotiate("text/plain;q=0.5, application/openmetrics-text;q=0.5"), RB_PROM_TEXT);
    assert_int_equal(rb_prom_negotiate("application/openmetrics-text;q=0.5, text/plain;q=0.5"), RB_PROM_OPENMETRICS);
    assert_int_equal(rb_prom_negotiate("application/openmetrics-text; q=0"), RB_PROM_TEXT);
}

/* GET url with an Accept header (NULL: curl's default): the answer must be len bytes of want, typed ct. */
static void served(const char *url, const char *accept, const char *want_ct, const void *want, size_t len)
{
    struct rb_buf body = {0};
    CURL *c = curl_easy_init();
    struct curl_slist *hdr = NULL;
    char h[512], *ct = NULL;
    if (accept) {
        snprintf(h, sizeof h, "Accept: %s", accept);
        hdr = curl_slist_append(NULL, h);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, rb_buf_curl_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
    assert_string_equal(ct, want_ct);
    assert_int_equal(body.len, len);
    assert_memory_equal(body.s, want, len);
    rb_buf_free(&body);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(c);
}

static void test_served_by_accept(void **state)
{
    (void)state;
    struct rb_prom *p = sample_registry();
    char msg[256], spec[32], url[64];
    int rc = -EADDRINUSE;
    for (int attempt = 0; attempt < 20 && rc == -EADDRINUSE; attempt++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
        inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
        socklen_t sl = sizeof sa;
        assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
        getsockname(fd, (struct sockaddr *)&sa, &sl);
        close(fd);
        snprintf(spec, sizeof spec, "%u", ntohs(sa.sin_port));
        rc = rb_prom_listen(p, spec, msg, sizeof msg);
    }
    assert_int_equal(rc, 0);
    rb_prom_publish(p);
    snprintf(url, sizeof url, "http://127.0.0.1:%s/metrics", spec);

    char *text = rb_prom_render(p), *om = rb_prom_render_openmetrics(p);
    void *pb;
    size_t len;
    assert_int_equal(rb_prom_render_protobuf(p, &pb, &len), 0);
    served(url, NULL, "text/plain; version=0.0.4; charset=utf-8", text, strlen(text));
    served(url, "application/openmetrics-text;version=1.0.0,text/plain;q=0.5",
           "application/openmetrics-text; version=1.0.0; charset=utf-8", om, strlen(om));
    served(url, "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited",
           "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited", pb, len);
    free(text);
    free(om);
    free(pb);
    rb_prom_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_native_index),
        cmocka_unit_test(test_protobuf),
        cmocka_unit_test(test_openmetrics),
        cmocka_unit_test(test_exemplar_inputs),
        cmocka_unit_test(test_negotiate),
        cmocka_unit_test(test_served_by_accept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
