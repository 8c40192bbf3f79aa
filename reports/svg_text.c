/* Text in SVG figures that fits its place: cut with an ellipsis, legend names shortened, category names on two lines. */
#include "svg_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "html_int.h"

/* At most max characters of s (whole UTF-8 characters), with an ellipsis when cut. */
void rb_svg_text_cut(struct rb_buf *out, const char *s, size_t max)
{
    size_t bytes = 0, chars = 0;
    while (s[bytes] && chars < max) {
        bytes++;
        while (((unsigned char)s[bytes] & 0xC0) == 0x80)
            bytes++;
        chars++;
    }
    rb_html_escape_n(out, s, bytes);
    if (s[bytes])
        rb_buf_printf(out, "\xE2\x80\xA6");
}

void rb_svg_category_label(struct rb_buf *out, const char *label, size_t fit, double x)
{
    const char *colon = strstr(label, ": ");
    if (strlen(label) <= fit || !colon) {
        rb_svg_text_cut(out, label, fit);
        return;
    }
    char first[128];
    snprintf(first, sizeof first, "%.*s", (int)(colon - label + 1), label);
    rb_buf_printf(out, "<tspan x=\"%.1f\">", x);
    rb_svg_text_cut(out, first, fit);
    rb_buf_printf(out, "</tspan><tspan x=\"%.1f\" dy=\"13\">", x);
    rb_svg_text_cut(out, colon + 2, fit);
    rb_buf_printf(out, "</tspan>");
}

static bool legend_sep(char c)
{
    return c == '-' || c == '_' || c == '/' || c == ' ' || c == 'T' || c == ':' || c == '=';
}

void rb_svg_common_affix(const char *(*name_of)(const void *ctx, size_t i), const void *ctx, size_t n,
                         size_t longer_than, size_t *pre, size_t *suf)
{
    *pre = *suf = 0;
    bool long_name = false;
    size_t minlen = SIZE_MAX;
    for (size_t s = 0; s < n; s++) {
        size_t len = strlen(name_of(ctx, s));
        long_name = long_name || len > longer_than;
        minlen = len < minlen ? len : minlen;
    }
    if (n < 2 || !long_name)
        return;
    const char *a = name_of(ctx, 0);
    size_t al = strlen(a), k = 0, j = 0;
    for (bool same = true; same && k < minlen; k += same) /* the common prefix */
        for (size_t s = 1; s < n && same; s++)
            same = name_of(ctx, s)[k] == a[k];
    while (k > 0 && !legend_sep(a[k - 1]))
        k--;
    for (bool same = true; same && j < minlen - k; j += same) /* the common suffix, after the prefix */
        for (size_t s = 1; s < n && same; s++) {
            const char *b = name_of(ctx, s);
            same = b[strlen(b) - 1 - j] == a[al - 1 - j];
        }
    while (j > 0 && !legend_sep(a[al - j]))
        j--;
    for (size_t s = 0; s < n; s++)
        if (strlen(name_of(ctx, s)) <= k + j)
            return; /* a name would be left empty: keep them whole */
    *pre = k;
    *suf = j;
}
