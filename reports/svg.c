/* SVG line plots drawn by railbench itself: linear, log, byte-size and percentile axes, reference lines. */
#define _POSIX_C_SOURCE 200809L
#include "railbench/svg.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/html.h"
#include "railbench/units.h"

/* Geometry in SVG user units; the legend sits right of the plot area. */
#define W 780.0
#define H 400.0
#define ML 80.0
#define MR 210.0
#define MT 40.0
#define MB 60.0
#define LEGEND_CHARS 30
#define MARKERS_MAX_POINTS 60

struct rb_plot *rb_plot_new(const char *id, const char *title)
{
    struct rb_plot *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->id = strdup(id);
    p->title = strdup(title);
    p->x.scale = p->y.scale = 1;
    if (!p->id || !p->title) {
        rb_plot_free(p);
        return NULL;
    }
    return p;
}

void rb_plot_free(struct rb_plot *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nseries; i++) {
        free(p->series[i].name);
        free(p->series[i].x);
        free(p->series[i].y);
    }
    free(p->series);
    for (size_t i = 0; i < p->nrefs; i++)
        free(p->refs[i].label);
    free(p->refs);
    for (size_t i = 0; i < p->nmarks; i++)
        free(p->marks[i].label);
    free(p->marks);
    free(p->x.title);
    free(p->y.title);
    free(p->id);
    free(p->title);
    free(p->caption);
    free(p);
}

static char *dup_or_oom(struct rb_plot *p, const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d)
        p->oom = true;
    return d;
}

static void set_axis(struct rb_plot *p, struct rb_axis *a, const char *title, enum rb_axis_kind kind, double scale,
                     bool zero)
{
    free(a->title);
    a->title = dup_or_oom(p, title);
    a->kind = kind;
    a->scale = scale;
    a->zero = zero;
}

void rb_plot_xaxis(struct rb_plot *p, const char *title, enum rb_axis_kind kind, double scale, bool zero)
{
    set_axis(p, &p->x, title, kind, scale, zero);
}

void rb_plot_yaxis(struct rb_plot *p, const char *title, enum rb_axis_kind kind, double scale, bool zero)
{
    set_axis(p, &p->y, title, kind, scale, zero);
}

void rb_plot_caption(struct rb_plot *p, const char *text)
{
    free(p->caption);
    p->caption = dup_or_oom(p, text);
}

int rb_plot_series(struct rb_plot *p, const char *name)
{
    struct rb_plot_series *s = realloc(p->series, (p->nseries + 1) * sizeof *s);
    if (!s) {
        p->oom = true;
        return -1;
    }
    p->series = s;
    memset(&s[p->nseries], 0, sizeof *s);
    if (!(s[p->nseries].name = dup_or_oom(p, name)))
        return -1;
    return (int)p->nseries++;
}

void rb_plot_point(struct rb_plot *p, int si, double x, double y)
{
    if (si < 0 || (size_t)si >= p->nseries || !isfinite(x) || !isfinite(y))
        return;
    struct rb_plot_series *s = &p->series[si];
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        double *nx = realloc(s->x, cap * sizeof *nx);
        if (!nx) {
            p->oom = true;
            return;
        }
        s->x = nx;
        double *ny = realloc(s->y, cap * sizeof *ny);
        if (!ny) {
            p->oom = true;
            return;
        }
        s->y = ny;
        s->cap = cap;
    }
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->n++;
}

void rb_plot_ref(struct rb_plot *p, double y, const char *label)
{
    if (!isfinite(y))
        return;
    struct rb_plot_ref *r = realloc(p->refs, (p->nrefs + 1) * sizeof *r);
    if (!r) {
        p->oom = true;
        return;
    }
    p->refs = r;
    r[p->nrefs] = (struct rb_plot_ref){y, dup_or_oom(p, label)};
    if (r[p->nrefs].label)
        p->nrefs++;
}

void rb_plot_mark(struct rb_plot *p, double x, double y, const char *label)
{
    if (!isfinite(x) || !isfinite(y))
        return;
    struct rb_plot_mark *m = realloc(p->marks, (p->nmarks + 1) * sizeof *m);
    if (!m) {
        p->oom = true;
        return;
    }
    p->marks = m;
    m[p->nmarks] = (struct rb_plot_mark){x, y, dup_or_oom(p, label)};
    if (m[p->nmarks].label)
        p->nmarks++;
}

/* The axis coordinate of a value (before mapping to pixels); NAN when the axis cannot show it. */
static double axis_t(const struct rb_axis *a, double v)
{
    switch (a->kind) {
    case RB_AXIS_LINEAR: return v;
    case RB_AXIS_LOG10: return v > 0 ? log10(v) : NAN;
    case RB_AXIS_LOG2_BYTES: return v > 0 ? log2(v) : NAN;
    case RB_AXIS_PERCENTILE: return v >= 0 && v < 100 ? log10(1.0 / (1.0 - v / 100.0)) : NAN;
    }
    return NAN;
}

size_t rb_plot_drawable(const struct rb_plot *p)
{
    size_t n = 0;
    for (size_t s = 0; s < p->nseries && s < RB_PLOT_MAX_SERIES; s++)
        for (size_t i = 0; i < p->series[s].n; i++)
            n += isfinite(axis_t(&p->x, p->series[s].x[i])) && isfinite(axis_t(&p->y, p->series[s].y[i]));
    return n;
}

#define MAX_TICKS 16

struct scale {
    double lo, hi;               /* axis coordinates at the ends */
    double ticks[MAX_TICKS];     /* axis coordinates */
    char labels[MAX_TICKS][32];
    size_t nticks;
};

/* Short tick label for a value in display units. */
static void tick_label(char *buf, size_t len, double v)
{
    double a = fabs(v);
    if (a < 1e-12)
        snprintf(buf, len, "0");
    else if (a >= 1e7 || a < 1e-3)
        snprintf(buf, len, "%.2g", v);
    else if (a >= 1000)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.4g", v);
}

/* 1, 2 or 5 x 10^k, the smallest not below x. */
static double nice_step(double x)
{
    double e = pow(10, floor(log10(x))), f = x / e;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * e;
}

static void add_tick(struct scale *s, double t, const char *label)
{
    if (s->nticks >= MAX_TICKS)
        return;
    s->ticks[s->nticks] = t;
    snprintf(s->labels[s->nticks], sizeof s->labels[0], "%s", label);
    s->nticks++;
}

/* Fits the axis to [lo, hi] (axis coordinates of the data) and places its ticks. */
static void make_scale(const struct rb_axis *a, double lo, double hi, struct scale *s)
{
    char label[32];
    memset(s, 0, sizeof *s);
    switch (a->kind) {
    case RB_AXIS_LINEAR: {
        /* Steps of 1, 2 or 5 in the units the labels show, not in the data's base units. */
        double k = a->scale > 0 ? a->scale : 1;
        lo *= k;
        hi *= k;
        if (a->zero) {
            lo = fmin(lo, 0);
            hi = fmax(hi, 0);
        }
        if (hi - lo < 1e-9 * fmax(1, fabs(hi))) {
            double pad = fabs(hi) > 0 ? fabs(hi) * 0.1 : 1;
            lo = a->zero && lo >= 0 ? lo : lo - pad;
            hi += pad;
        }
        double step = nice_step((hi - lo) / 5);
        double first = floor(lo / step + 1e-9) * step, last = ceil(hi / step - 1e-9) * step;
        s->lo = first / k;
        s->hi = last / k;
        for (int i = 0; first + i * step <= last + step * 1e-9 && s->nticks < MAX_TICKS; i++) {
            double v = first + i * step;
            tick_label(label, sizeof label, fabs(v) < step * 1e-9 ? 0 : v);
            add_tick(s, v / k, label);
        }
        return;
    }
    case RB_AXIS_LOG10: {
        s->lo = floor(lo);
        s->hi = ceil(hi);
        if (s->hi <= s->lo)
            s->hi = s->lo + 1;
        int stride = (int)ceil((s->hi - s->lo) / 8);
        for (double e = s->lo; e <= s->hi; e += stride) {
            tick_label(label, sizeof label, pow(10, e) * a->scale);
            add_tick(s, e, label);
            /* Few decades: 2 and 5 in between help read values off. */
            if (s->hi - s->lo <= 2 && e < s->hi) {
                for (int m = 2; m <= 5; m += 3) {
                    tick_label(label, sizeof label, m * pow(10, e) * a->scale);
                    add_tick(s, e + log10(m), label);
                }
            }
        }
        return;
    }
    case RB_AXIS_LOG2_BYTES: {
        s->lo = floor(lo);
        s->hi = ceil(hi);
        if (s->hi <= s->lo)
            s->hi = s->lo + 1;
        int stride = (int)ceil((s->hi - s->lo) / 8);
        for (double e = s->lo; e <= s->hi; e += stride) {
            double v = pow(2, e) * a->scale;
            if (v >= 1 && v < 1.8e19) {
                rb_format_size(label, sizeof label, (uint64_t)v);
            } else {
                tick_label(label, sizeof label, v);
            }
            add_tick(s, e, label);
        }
        return;
    }
    case RB_AXIS_PERCENTILE: {
        /* Always p50 to at least p99.99, further when the data reach further. */
        static const char *const names[] = {"p90", "p99", "p99.9", "p99.99", "p99.999", "p99.9999"};
        s->lo = log10(2);
        s->hi = fmax(4, ceil(hi));
        if (s->hi > 6)
            s->hi = 6;
        add_tick(s, s->lo, "p50");
        for (int k = 1; k <= (int)s->hi; k++)
            add_tick(s, k, names[k - 1]);
        return;
    }
    }
}

/* Pixel position of an axis coordinate. */
static double px_x(const struct scale *s, double t)
{
    return ML + (t - s->lo) / (s->hi - s->lo) * (W - ML - MR);
}

static double px_y(const struct scale *s, double t)
{
    return (H - MB) - (t - s->lo) / (s->hi - s->lo) * (H - MB - MT);
}

/* At most max characters of s (whole UTF-8 characters), with an ellipsis when cut. */
static void escape_cut(struct rb_buf *out, const char *s, size_t max)
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

/* A value as the axis labels show it, for tooltips. */
static void value_text(const struct rb_axis *a, double v, char *buf, size_t len)
{
    if (a->kind == RB_AXIS_PERCENTILE)
        snprintf(buf, len, "p%.6g", v);
    else if (a->kind == RB_AXIS_LOG2_BYTES && v >= 0 && v < 1.8e19)
        rb_format_size(buf, len, (uint64_t)(v * a->scale));
    else
        tick_label(buf, len, v * a->scale);
}

static void draw_axes(const struct rb_plot *p, const struct scale *sx, const struct scale *sy, struct rb_buf *out)
{
    rb_buf_printf(out, "<g class=\"axes\">\n");
    for (size_t i = 0; i < sy->nticks; i++) {
        double y = px_y(sy, sy->ticks[i]);
        rb_buf_printf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", ML, y, W - MR, y);
        rb_buf_printf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", ML - 6, y + 4);
        rb_html_escape(out, sy->labels[i]);
        rb_buf_printf(out, "</text>\n");
    }
    for (size_t i = 0; i < sx->nticks; i++) {
        double x = px_x(sx, sx->ticks[i]);
        rb_buf_printf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, MT, x, H - MB);
        rb_buf_printf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, H - MB + 16);
        rb_html_escape(out, sx->labels[i]);
        rb_buf_printf(out, "</text>\n");
    }
    rb_buf_printf(out,
                  "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                  "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                  ML, MT, ML, H - MB, ML, H - MB, W - MR, H - MB);
    rb_buf_printf(out, "<text class=\"axis-title x-title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                  (ML + W - MR) / 2, H - 16);
    rb_html_escape(out, p->x.title);
    rb_buf_printf(out, "</text>\n<text class=\"axis-title y-title\" x=\"0\" y=\"0\" text-anchor=\"middle\" "
                       "transform=\"translate(18 %.1f) rotate(-90)\">",
                  (MT + H - MB) / 2);
    rb_html_escape(out, p->y.title);
    rb_buf_printf(out, "</text>\n</g>\n");
}

static void draw_series(const struct rb_plot *p, size_t si, const struct scale *sx, const struct scale *sy,
                        struct rb_buf *out)
{
    const struct rb_plot_series *s = &p->series[si];
    rb_buf_printf(out, "<g class=\"series-group\" data-series=\"");
    rb_html_escape(out, s->name);
    rb_buf_printf(out, "\"><polyline class=\"series s%zu\" points=\"", si % 8);
    size_t drawn = 0;
    for (size_t i = 0; i < s->n; i++) {
        double tx = axis_t(&p->x, s->x[i]), ty = axis_t(&p->y, s->y[i]);
        if (!isfinite(tx) || !isfinite(ty))
            continue;
        rb_buf_printf(out, "%s%.1f,%.1f", drawn++ ? " " : "", px_x(sx, tx), px_y(sy, ty));
    }
    rb_buf_printf(out, "\"/>\n");
    if (drawn <= MARKERS_MAX_POINTS) {
        char vx[32], vy[32];
        for (size_t i = 0; i < s->n; i++) {
            double tx = axis_t(&p->x, s->x[i]), ty = axis_t(&p->y, s->y[i]);
            if (!isfinite(tx) || !isfinite(ty))
                continue;
            value_text(&p->x, s->x[i], vx, sizeof vx);
            value_text(&p->y, s->y[i], vy, sizeof vy);
            rb_buf_printf(out, "<circle class=\"f%zu\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>", si % 8,
                          px_x(sx, tx), px_y(sy, ty));
            rb_html_escape(out, s->name);
            rb_buf_printf(out, ": %s, %s</title></circle>", vx, vy);
        }
        rb_buf_printf(out, "\n");
    }
    rb_buf_printf(out, "</g>\n");
}

void rb_plot_svg(const struct rb_plot *p, struct rb_buf *out)
{
    size_t nser = p->nseries < RB_PLOT_MAX_SERIES ? p->nseries : RB_PLOT_MAX_SERIES;
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (size_t s = 0; s < nser; s++) {
        for (size_t i = 0; i < p->series[s].n; i++) {
            double tx = axis_t(&p->x, p->series[s].x[i]), ty = axis_t(&p->y, p->series[s].y[i]);
            if (!isfinite(tx) || !isfinite(ty))
                continue;
            xlo = fmin(xlo, tx);
            xhi = fmax(xhi, tx);
            ylo = fmin(ylo, ty);
            yhi = fmax(yhi, ty);
        }
    }
    if (!(xlo <= xhi))
        return;
    for (size_t i = 0; i < p->nrefs; i++) {
        double t = axis_t(&p->y, p->refs[i].y);
        if (isfinite(t)) {
            ylo = fmin(ylo, t);
            yhi = fmax(yhi, t);
        }
    }
    struct scale sx, sy;
    make_scale(&p->x, xlo, xhi, &sx);
    make_scale(&p->y, ylo, yhi, &sy);

    rb_buf_printf(out, "<figure>\n<svg class=\"plot\" data-plot=\"");
    rb_html_escape(out, p->id);
    rb_buf_printf(out, "\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"", W, H,
                  W, H);
    rb_html_escape(out, p->title);
    rb_buf_printf(out, "\">\n<title>");
    rb_html_escape(out, p->title);
    rb_buf_printf(out, "</title>\n<text class=\"title\" x=\"%.1f\" y=\"22\">", ML);
    rb_html_escape(out, p->title);
    rb_buf_printf(out, "</text>\n");
    draw_axes(p, &sx, &sy, out);
    for (size_t i = 0; i < p->nrefs; i++) {
        double t = axis_t(&p->y, p->refs[i].y);
        if (!isfinite(t))
            continue;
        double y = px_y(&sy, t);
        rb_buf_printf(out, "<line class=\"ref\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", ML, y, W - MR, y);
        rb_buf_printf(out, "<text class=\"ref-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", W - MR - 4, y - 5);
        rb_html_escape(out, p->refs[i].label);
        rb_buf_printf(out, "</text>\n");
    }
    for (size_t s = 0; s < nser; s++)
        draw_series(p, s, &sx, &sy, out);
    for (size_t i = 0; i < p->nmarks; i++) {
        double tx = axis_t(&p->x, p->marks[i].x), ty = axis_t(&p->y, p->marks[i].y);
        if (!isfinite(tx) || !isfinite(ty) || tx < sx.lo || tx > sx.hi || ty < sy.lo || ty > sy.hi)
            continue;
        double x = px_x(&sx, tx), y = px_y(&sy, ty);
        rb_buf_printf(out, "<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"7\"/>", x, y);
        rb_buf_printf(out, "<text class=\"mark-label\" x=\"%.1f\" y=\"%.1f\">", x + 10, y - 8);
        rb_html_escape(out, p->marks[i].label);
        rb_buf_printf(out, "</text>\n");
    }
    rb_buf_printf(out, "<g class=\"legend\">\n");
    for (size_t s = 0; s < nser; s++) {
        double y = MT + 8 + 18.0 * (double)s, x = W - MR + 14;
        rb_buf_printf(out, "<line class=\"series s%zu\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", s % 8, x,
                      y, x + 20, y);
        rb_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 26, y + 4);
        escape_cut(out, p->series[s].name, LEGEND_CHARS);
        rb_buf_printf(out, "</text>\n");
    }
    rb_buf_printf(out, "</g>\n</svg>\n");
    if (p->caption || p->nseries > nser) {
        rb_buf_printf(out, "<figcaption>");
        rb_html_escape(out, p->caption);
        if (p->nseries > nser)
            rb_buf_printf(out, "%s%zu more series not drawn (they are in the tables).", p->caption ? " " : "",
                          p->nseries - nser);
        rb_buf_printf(out, "</figcaption>\n");
    }
    rb_buf_printf(out, "</figure>\n");
}
