/* Unit tests of the SVG heat maps: one cell per pair, colours by value, missing cells, labels and escaping, limits. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "heatmap_int.h"

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* The fill of the cell whose tooltip starts with title. */
static void fill_of(const char *svg, const char *title, char *out, size_t len)
{
    const char *t = strstr(svg, title);
    assert_non_null(t);
    const char *r = t;
    while (r > svg && strncmp(r, "<rect", 5) != 0)
        r--;
    const char *f = strstr(r, "fill=\"");
    assert_true(f && f < t);
    snprintf(out, len, "%.7s", f + 6);
}

static void test_host_matrix(void **state)
{
    (void)state;
    const char *hosts[] = {"node1", "node2", "<node3>"};
    struct rb_heatmap *h = rb_heatmap_new("fabric-check", "Host to host bandwidth", hosts, 3, hosts, 3);
    assert_non_null(h);
    rb_heatmap_format(h, "GB/s", 1e-9, 1, "One cell per pair & direction.");
    for (size_t r = 0; r < 3; r++)
        for (size_t c = 0; c < 3; c++)
            if (r != c && !(r == 1 && c == 2))
                rb_heatmap_set(h, r, c, 1e9 * (double)(1 + r + c));
    rb_heatmap_set(h, 1, 2, NAN);   /* ignored: the cell stays unmeasured */
    rb_heatmap_set(h, 9, 0, 1e9);   /* ignored: no such row */
    struct rb_buf b = {0};
    rb_heatmap_svg(h, &b);
    assert_non_null(strstr(b.s, "data-plot=\"fabric-check\""));
    assert_int_equal(count(b.s, "<rect class=\"cell\""), 6 - 1);
    /* The diagonal and the unset pair are not measured: grey, "-", never 0. */
    assert_int_equal(count(b.s, "<rect class=\"cell missing\""), 4);
    assert_non_null(strstr(b.s, "<title>node2 \xE2\x86\x92 &lt;node3&gt;: - (not measured)</title>"));
    assert_non_null(strstr(b.s, "<title>node1 \xE2\x86\x92 node2: 2.0 GB/s</title>"));
    assert_non_null(strstr(b.s, ">4.0</text>"));
    assert_null(strstr(b.s, "<node3>"));
    assert_non_null(strstr(b.s, "<figcaption>One cell per pair &amp; direction.</figcaption>"));
    /* The scale runs from the smallest (2 GB/s, darkest) to the largest (4 GB/s, lightest). */
    char lo[8], hi[8], mid[8];
    fill_of(b.s, "<title>node1 \xE2\x86\x92 node2:", lo, sizeof lo);
    fill_of(b.s, "<title>&lt;node3&gt; \xE2\x86\x92 node2:", hi, sizeof hi);
    fill_of(b.s, "<title>node1 \xE2\x86\x92 &lt;node3&gt;:", mid, sizeof mid);
    assert_string_equal(lo, "#440154");
    assert_string_equal(hi, "#fde725");
    assert_string_not_equal(mid, lo);
    assert_string_not_equal(mid, hi);
    assert_non_null(strstr(b.s, ">4.0 GB/s</text>"));
    assert_non_null(strstr(b.s, ">2.0 GB/s</text>"));
    assert_null(strstr(b.s, "nan"));
    rb_buf_free(&b);
    rb_heatmap_free(h);
}

static void test_limits(void **state)
{
    (void)state;
    const char *names[RB_HEATMAP_MAX + 1];
    char buf[RB_HEATMAP_MAX + 1][8];
    for (int i = 0; i <= RB_HEATMAP_MAX; i++) {
        snprintf(buf[i], sizeof buf[i], "h%d", i);
        names[i] = buf[i];
    }
    assert_null(rb_heatmap_new("x", "x", names, RB_HEATMAP_MAX + 1, names, 1));
    /* Nothing measured: nothing drawn, not an empty frame. */
    struct rb_heatmap *h = rb_heatmap_new("x", "x", names, 2, names, 2);
    struct rb_buf b = {0};
    rb_heatmap_svg(h, &b);
    assert_int_equal(b.len, 0);
    rb_heatmap_free(h);
    /* Many columns: cells too small for their value keep it in the tooltip; one value alone still has a colour. */
    h = rb_heatmap_new("x", "x", names, 1, names, RB_HEATMAP_MAX);
    rb_heatmap_set(h, 0, 3, 5);
    rb_heatmap_svg(h, &b);
    assert_int_equal(count(b.s, "<rect class=\"cell\""), 1);
    assert_int_equal(count(b.s, "class=\"cell-label"), 0);
    assert_non_null(strstr(b.s, "<title>h0 \xE2\x86\x92 h3: 5.0 </title>"));
    rb_buf_free(&b);
    rb_heatmap_free(h);
    rb_heatmap_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_matrix),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
