/* Unit tests of the SVG plots: axes and their labels, log and percentile scales, escaping, limits, colours and dashes, point labels, gaps, spans, bars. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "svg_int.h"

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* The text of the tick labels, in order, joined by '|'. */
static void ticks(const char *svg, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (const char *p = svg; (p = strstr(p, "<text class=\"tick\"")); p++) {
        const char *s = strchr(p, '>') + 1, *e = strstr(s, "</text>");
        n += (size_t)snprintf(out + n, len - n, "%s%.*s", n ? "|" : "", (int)(e - s), s);
        if (n >= len)
            break;
    }
}

static void test_percentile_and_log_axes(void **state)
{
    (void)state;
    struct rb_plot *p = rb_plot_new("latency-percentiles", "Latency");
    rb_plot_xaxis(p, "percentile", RB_AXIS_PERCENTILE, 1, false);
    rb_plot_yaxis(p, "latency (ms, log scale)", RB_AXIS_LOG10, 1e-6, false);
    int s = rb_plot_series(p, "get");
    rb_plot_point(p, s, 50, 1.5e6);
    rb_plot_point(p, s, 99, 4e6);
    rb_plot_point(p, s, 99.9, 9e6);
    rb_plot_point(p, s, 100, 1e7);  /* 1/(1-q) is infinite: not drawable */
    rb_plot_point(p, s, 99.99, 0);  /* not on a log axis */
    assert_int_equal(rb_plot_drawable(p), 3);
    struct rb_buf b = {0};
    rb_plot_svg(p, &b);
    char t[512];
    ticks(b.s, t, sizeof t);
    /* y: 1 to 10 ms in decades with 2 and 5 between; x: p50 to p99.99. */
    assert_string_equal(t, "1|2|5|10|p50|p90|p99|p99.9|p99.99");
    assert_non_null(strstr(b.s, "data-plot=\"latency-percentiles\""));
    assert_non_null(strstr(b.s, ">latency (ms, log scale)</text>"));
    assert_int_equal(count(b.s, "<path class=\"series s0\""), 1);
    assert_int_equal(count(b.s, "<circle class=\"f0\""), 3);
    /* p50 sits at the left edge, 1.5 ms at log10(1.5) of the decade up from the bottom. */
    char pt[64];
    snprintf(pt, sizeof pt, "d=\"M80.0,%.1f", 360.0 - log10(1.5) * 320.0);
    assert_non_null(strstr(b.s, pt));
    rb_buf_free(&b);
    rb_plot_free(p);
}

static void test_linear_and_bytes_axes(void **state)
{
    (void)state;
    struct rb_plot *p = rb_plot_new("busbw-size", "busbw");
    rb_plot_xaxis(p, "message size (bytes, log scale)", RB_AXIS_LOG2_BYTES, 1, false);
    rb_plot_yaxis(p, "throughput (MiB/s)", RB_AXIS_LINEAR, 1.0 / (1 << 20), true);
    int s = rb_plot_series(p, "ring");
    for (int e = 10; e <= 24; e += 2)
        rb_plot_point(p, s, (double)(1 << e), (e - 9) * 100.0 * (1 << 20));
    struct rb_buf b = {0};
    rb_plot_svg(p, &b);
    char t[512];
    ticks(b.s, t, sizeof t);
    /* Nice steps in the displayed unit (MiB/s), from zero; sizes every other power of two. */
    assert_string_equal(t, "0|500|1000|1500|1 KiB|4 KiB|16 KiB|64 KiB|256 KiB|1 MiB|4 MiB|16 MiB");
    rb_buf_free(&b);
    rb_plot_free(p);
}

/* Legend entries too long for the legend (default result directory names) keep only what differs. */
static void test_legend_shortened(void **state)
{
    (void)state;
    struct rb_plot *p = rb_plot_new("rates", "rates");
    rb_plot_xaxis(p, "time (s)", RB_AXIS_LINEAR, 1, true);
    rb_plot_yaxis(p, "rate (MiB/s)", RB_AXIS_LINEAR, 1, true);
    const char *names[] = {"20261125T202758Z-fabric-counters: vm disk r+w", "20261125T202758Z-fabric-counters-2: vm disk r+w",
                           "20261125T202759Z-fabric-counters-3: vm disk r+w"};
    for (int i = 0; i < 3; i++)
        rb_plot_point(p, rb_plot_series(p, names[i]), 1, i);
    struct rb_buf b = {0};
    rb_plot_svg(p, &b);
    const char *legend = strstr(b.s, "<g class=\"legend\">");
    assert_non_null(legend);
    assert_non_null(strstr(legend, ">202758Z-fabric-counters<"));
    assert_non_null(strstr(legend, ">202758Z-fabric-counters-2<"));
    assert_non_null(strstr(legend, ">202759Z-fabric-counters-3<"));
    rb_buf_free(&b);
    rb_plot_free(p);
    /* Short names stay whole. */
    p = rb_plot_new("rw", "rw");
    rb_plot_point(p, rb_plot_series(p, "write"), 1, 1);
    rb_plot_point(p, rb_plot_series(p, "read"), 1, 2);
    b = (struct rb_buf){0};
    rb_plot_svg(p, &b);
    assert_non_null(strstr(b.s, ">write<"));
    assert_non_null(strstr(b.s, ">read<"));
    rb_buf_free(&b);
    rb_plot_free(p);
}

/* Bar categories named after default result directories keep their unit: two lines, never "…: 1" for "1 MiB". */
static void test_category_labels_whole(void **state)
{
    (void)state;
    struct rb_plot *p = rb_plot_new("tiers-bars", "sizes");
    rb_plot_style(p, RB_PLOT_BARS);
    rb_plot_xaxis(p, "object size", RB_AXIS_LINEAR, 1, false);
    rb_plot_yaxis(p, "throughput (GiB/s)", RB_AXIS_LINEAR, 1, true);
    int s = rb_plot_series(p, "warm");
    for (int i = 0; i < 9; i++) {
        char cat[96];
        snprintf(cat, sizeof cat, "20261126T00010%dZ-load-tiers: %d MiB", i, i + 1);
        rb_plot_point(p, s, rb_plot_category(p, cat), 1 + i);
    }
    struct rb_buf b = {0};
    rb_plot_svg(p, &b);
    /* 9 slots of 870 units: a line holds (96.7 - 8) / 6.4 = 13 characters: the run's name is cut, not the size. */
    assert_int_equal(count(b.s, "<tspan"), 18);
    for (int i = 0; i < 9; i++) {
        char want[64];
        snprintf(want, sizeof want, "dy=\"13\">%d MiB</tspan>", i + 1);
        assert_non_null(strstr(b.s, want));
    }
    assert_non_null(strstr(b.s, ">20261126T0001\xE2\x80\xA6</tspan>"));
    rb_buf_free(&b);
    rb_plot_free(p);
}

/* A value over an interval is a level line over it: a phase shorter than one interval is a line, not a dot. */
static void test_interval_lines(void **state)
{
    (void)state;
    struct rb_plot *p = rb_plot_new("throughput-time", "rates");
    rb_plot_xaxis(p, "time (s)", RB_AXIS_LINEAR, 1, true);
    rb_plot_yaxis(p, "rate (MiB/s)", RB_AXIS_LINEAR, 1, true);
    rb_plot_xrange(p, 0, 10);
    int s = rb_plot_series(p, "put");
    rb_plot_interval(p, s, 0, 0.4, 100); /* one interval of 0.4 s */
    int t = rb_plot_series(p, "get");
    rb_plot_interval(p, t, 1, 2, 50);
    rb_plot_interval(p, t, 2, 3, 70);
    struct rb_buf b = {0};
    rb_plot_svg(p, &b);
    /* x: 0..10 s over 80..950 units; y: 0..100 MiB/s. The put line runs from 80 to 114.8 (0.4 s), one marker. */
    const char *put = strstr(b.s, "data-series=\"put\"");
    assert_non_null(put);
    assert_non_null(strstr(put, "d=\"M80.0,"));
    assert_non_null(strstr(put, " L114.8,"));
    const char *get = strstr(b.s, "data-series=\"get\"");
    assert_non_null(get);
    /* Steps: a level line per interval, joined at 2 s (254.0). */
    assert_non_null(strstr(get, "d=\"M167.0,"));
    assert_int_equal(count(get, "L254.0,"), 2);
    assert_int_equal(count(b.s, "<circle"), 3);
    rb_buf_free(&b);
    rb_plot_free(p);
}

static void test_refs_marks_escaping(void **state)
{
    (void)state;
    struct rb_plot *p = rb_plot_new("iops-latency", "IOPS <vs> p99");
    rb_plot_xaxis(p, "IOPS", RB_AXIS_LINEAR, 1, true);
    rb_plot_yaxis(p, "clat p99 (us, log scale)", RB_AXIS_LOG10, 1e-3, false);
    rb_plot_caption(p, "caption & <more>");
    int s = rb_plot_series(p, "host\"><script>alert(1)</script>");
    rb_plot_point(p, s, 20000, 50e3);
    rb_plot_point(p, s, 60000, 300e3);
    rb_plot_ref(p, 2e6, "SLO clat p99<=2ms");
    rb_plot_mark(p, 60000, 300e3, "knee");
    struct rb_buf b = {0};
    rb_plot_svg(p, &b);
    assert_null(strstr(b.s, "<script"));
    assert_non_null(strstr(b.s, "data-series=\"host&quot;&gt;&lt;script&gt;"));
    assert_non_null(strstr(b.s, "IOPS &lt;vs&gt; p99"));
    assert_non_null(strstr(b.s, "<figcaption>caption &amp; &lt;more&gt;</figcaption>"));
    /* The SLO line widens the range to include it: 10 us to 10 ms. */
    assert_int_equal(count(b.s, "<line class=\"ref\""), 1);
    assert_non_null(strstr(b.s, ">SLO clat p99&lt;=2ms</text>"));
    assert_int_equal(count(b.s, "<circle class=\"mark\""), 1);
    char t[512];
    ticks(b.s, t, sizeof t);
    assert_non_null(strstr(t, "10|100|1000|10000|0|"));
    rb_buf_free(&b);
    rb_plot_free(p);
}

static void test_limits(void **state)
{
    (void)state;
    struct rb_plot *p = rb_plot_new("x", "x");
    rb_plot_xaxis(p, "x", RB_AXIS_LINEAR, 1, false);
    rb_plot_yaxis(p, "y", RB_AXIS_LOG10, 1, false);
    struct rb_buf b = {0};
    /* No drawable point: nothing at all, not an empty frame. */
    int s = rb_plot_series(p, "zeros");
    rb_plot_point(p, s, 1, 0);
    rb_plot_point(p, s, NAN, 5);
    rb_plot_svg(p, &b);
    assert_int_equal(b.len, 0);
    /* More series than drawn: the caption says how many are left out; long names are cut. */
    for (int i = 0; i < RB_PLOT_MAX_SERIES + 3; i++) {
        char name[96];
        snprintf(name, sizeof name, "series %02d with a name far too long for the legend \xC3\xA9\xC3\xA9", i);
        int k = rb_plot_series(p, name);
        rb_plot_point(p, k, i, i + 1);
        rb_plot_point(p, k, i + 1, i + 2);
    }
    rb_plot_svg(p, &b);
    assert_int_equal(count(b.s, "<path class=\"series"), RB_PLOT_MAX_SERIES);
    assert_non_null(strstr(b.s, "4 more series not drawn"));
    assert_non_null(strstr(b.s, ">series 00 with a name far too\xE2\x80\xA6</text>"));
    /* One value only: the axis still has a range. */
    struct rb_plot *q = rb_plot_new("one", "one");
    rb_plot_xaxis(q, "x", RB_AXIS_LINEAR, 1, false);
    rb_plot_yaxis(q, "y", RB_AXIS_LINEAR, 1, false);
    rb_plot_point(q, rb_plot_series(q, "a"), 3, 7);
    rb_buf_free(&b);
    rb_plot_svg(q, &b);
    assert_null(strstr(b.s, "nan"));
    assert_null(strstr(b.s, "inf"));
    rb_buf_free(&b);
    rb_plot_free(q);
    rb_plot_free(p);
    rb_plot_free(NULL);
}

/* The d attribute of the n-th series path. */
static void path_d(const char *svg, size_t n, char *out, size_t len)
{
    const char *p = svg;
    for (size_t i = 0; i <= n && p; i++)
        p = strstr(i ? p + 1 : p, "<path class=\"series");
    assert_non_null(p);
    const char *d = strstr(p, " d=\"") + 4, *e = strchr(d, '"');
    snprintf(out, len, "%.*s", (int)(e - d), d);
}

static void test_colours_labels_gaps(void **state)
{
    (void)state;
    struct rb_plot *p = rb_plot_new("sweep-knee", "t");
    rb_plot_xaxis(p, "x", RB_AXIS_LINEAR, 1, true);
    rb_plot_yaxis(p, "y", RB_AXIS_LINEAR, 1, true);
    /* A and B of one figure share a hue, B dashed; another figure gets the next colour. */
    int a = rb_plot_series_keyed(p, "A: get", "get", false), b = rb_plot_series_keyed(p, "B: get", "get", true);
    int c = rb_plot_series_keyed(p, "A: put", "put", false);
    rb_plot_point_label(p, a, 0, 1, "1 in flight");
    rb_plot_point_label(p, a, 10, 2, "4 <in> flight");
    rb_plot_point(p, b, 0, 3);
    rb_plot_gap(p, b);
    rb_plot_point(p, b, 10, 4);
    rb_plot_point(p, c, 5, 5);
    /* Past the palette a colour comes back dotted, then dash-dotted. */
    for (int i = 0; i < 2 * RB_PLOT_COLOURS; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        rb_plot_point(p, rb_plot_series(p, name), i, i);
    }
    struct rb_buf out = {0};
    rb_plot_svg(p, &out);
    assert_int_equal(count(out.s, "<path class=\"series s0\""), 1);
    assert_int_equal(count(out.s, "<path class=\"series s0 dash\""), 1);
    assert_int_equal(count(out.s, "<path class=\"series s1\""), 1);
    /* series 3.. are colours 2..17: 2..7 plain, 8..15 dotted, 16..17 dash-dotted. */
    assert_int_equal(count(out.s, "<path class=\"series s2\""), 1);
    assert_int_equal(count(out.s, "<path class=\"series s0 dot\""), 1);
    assert_int_equal(count(out.s, "<path class=\"series s1 dashdot\""), 1);
    assert_int_equal(count(out.s, "<path class=\"series"), 3 + 2 * RB_PLOT_COLOURS);
    assert_int_equal(count(out.s, "<text class=\"pt-label\""), 2);
    assert_non_null(strstr(out.s, ">4 &lt;in&gt; flight</text>"));
    assert_non_null(strstr(out.s, "<title>A: get: 10, 2 (4 &lt;in&gt; flight)</title>"));
    /* A line with a gap: two moves, no line drawn across it. */
    char d[256];
    path_d(out.s, 1, d, sizeof d);
    assert_int_equal(count(d, "M"), 2);
    assert_int_equal(count(d, "L"), 0);
    path_d(out.s, 0, d, sizeof d);
    assert_int_equal(count(d, "M"), 1);
    assert_int_equal(count(d, "L"), 1);
    rb_buf_free(&out);
    rb_plot_free(p);
}

static void test_bars_and_spans(void **state)
{
    (void)state;
    struct rb_plot *p = rb_plot_new("tiers-bars", "bars");
    rb_plot_style(p, RB_PLOT_BARS);
    rb_plot_xaxis(p, "object size", RB_AXIS_LINEAR, 1, false);
    rb_plot_yaxis(p, "GiB/s", RB_AXIS_LINEAR, 1, true);
    int d = rb_plot_series(p, "direct"), w = rb_plot_series(p, "warm");
    assert_int_equal(rb_plot_category(p, "1 MiB"), 0);
    assert_int_equal(rb_plot_category(p, "10 MiB"), 1);
    assert_int_equal(rb_plot_category(p, "1 MiB"), 0);
    rb_plot_point_label(p, d, 0, 1, "1.00");
    rb_plot_point_label(p, w, 0, 4, "4.00 (4.0x)");
    rb_plot_point_label(p, d, 1, 2, "2.00");
    rb_plot_point_label(p, w, 1, 8, "8.00 (4.0x)");
    rb_plot_ref(p, 5, "goal");
    struct rb_buf out = {0};
    rb_plot_svg(p, &out);
    assert_int_equal(count(out.s, "<rect class=\"bar f0\""), 2);
    assert_int_equal(count(out.s, "<rect class=\"bar f1\""), 2);
    assert_int_equal(count(out.s, "<text class=\"bar-label\""), 4);
    assert_non_null(strstr(out.s, ">4.00 (4.0x)</text>"));
    assert_non_null(strstr(out.s, "<title>warm: 10 MiB, 8 (8.00 (4.0x))</title>"));
    char t[512];
    ticks(out.s, t, sizeof t);
    assert_string_equal(t, "0|2|4|6|8|1 MiB|10 MiB");
    /* Grouped: the warm bar of 10 MiB is 8 units high, twice the 1 MiB one. */
    double h[4];
    const char *q = out.s;
    for (int i = 0; i < 4; i++) {
        q = strstr(q, "<rect class=\"bar");
        assert_non_null(q);
        assert_int_equal(sscanf(strstr(q, "height=\"") + 8, "%lf", &h[i]), 1);
        q++;
    }
    assert_true(fabs(h[3] - 2 * h[2]) < 0.2);
    assert_true(fabs(h[2] - 4 * h[0]) < 0.2);
    rb_buf_free(&out);
    /* Stacked: one bar per category, labels inside; the axis reaches the sum. */
    rb_plot_style(p, RB_PLOT_STACKED);
    rb_plot_svg(p, &out);
    ticks(out.s, t, sizeof t);
    assert_string_equal(t, "0|2|4|6|8|10|1 MiB|10 MiB");
    assert_int_equal(count(out.s, "<text class=\"bar-label inside\""), 4);
    rb_buf_free(&out);
    rb_plot_free(p);

    /* Spans name stretches of a time axis; a fixed range holds them all. */
    p = rb_plot_new("throughput-time", "t");
    rb_plot_xaxis(p, "s", RB_AXIS_LINEAR, 1, true);
    rb_plot_yaxis(p, "y", RB_AXIS_LINEAR, 1, true);
    int s = rb_plot_series(p, "get");
    rb_plot_point(p, s, 1, 1);
    rb_plot_point(p, s, 3, 2);
    rb_plot_span(p, 0, 3, "put");
    rb_plot_span(p, 3, 6, "get <phase>");
    rb_plot_span(p, 5, 4, "backwards: ignored");
    rb_plot_xrange(p, 0, 6);
    rb_plot_svg(p, &out);
    assert_int_equal(count(out.s, "<rect class=\"span"), 2);
    assert_non_null(strstr(out.s, ">get &lt;phase&gt;</text>"));
    ticks(out.s, t, sizeof t);
    assert_non_null(strstr(t, "|0|1|2|3|4|5|6"));
    rb_buf_free(&out);
    rb_plot_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentile_and_log_axes),
        cmocka_unit_test(test_linear_and_bytes_axes),
        cmocka_unit_test(test_refs_marks_escaping),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_legend_shortened),
        cmocka_unit_test(test_category_labels_whole),
        cmocka_unit_test(test_interval_lines),
        cmocka_unit_test(test_colours_labels_gaps),
        cmocka_unit_test(test_bars_and_spans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
