/* SVG line plots drawn by railbench itself: linear, log, byte-size and percentile axes, reference lines. */
#define _POSIX_C_SOURCE 200809L
#include "svg_int.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_int.h"
#include "railbench/units.h"

/* Geometry in SVG user units (the SVG scales to the page's width); the legend sits right of the plot area. */
#define W 1200.0
#define H_MIN 420.0
#define ML 80.0
#define MR 250.0
#define MT 40.0
#define MB 60.0
#define LEGEND_ROW 18.0
#define TICK_CHAR_W 6.4 /* the mean width of a character of an 11 px tick label, in SVG units */
#define MARKERS_MAX_POINTS 60

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
    double px_lo, px_hi;         /* their pixel positions */
    double ticks[MAX_TICKS];     /* axis coordinates */
    char labels[MAX_TICKS][128]; /* category names whole: a run's name and what it shows */
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
        double step = nice_step((hi - lo) / 7);
        /* Data a hair past a tick (3.00007 s) end at that tick, not a whole step later. */
        double first = floor(lo / step + 0.02) * step, last = ceil(hi / step - 0.02) * step;
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
static double px(const struct scale *s, double t)
{
    return s->px_lo + (t - s->lo) / (s->hi - s->lo) * (s->px_hi - s->px_lo);
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

/* Plot height: room for the legend's rows. */
static double plot_height(size_t nser)
{
    return fmax(H_MIN, MT + 8 + LEGEND_ROW * (double)nser + 10);
}

static void draw_axes(const struct rb_plot *p, const struct scale *sx, const struct scale *sy, double h,
                      struct rb_buf *out)
{
    rb_buf_printf(out, "<g class=\"axes\">\n");
    for (size_t i = 0; i < sy->nticks; i++) {
        double y = px(sy, sy->ticks[i]);
        rb_buf_printf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", ML, y, W - MR, y);
        rb_buf_printf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", ML - 6, y + 4);
        rb_html_escape(out, sy->labels[i]);
        rb_buf_printf(out, "</text>\n");
    }
    for (size_t i = 0; i < sx->nticks; i++) {
        double x = px(sx, sx->ticks[i]);
        if (p->style == RB_PLOT_LINES)
            rb_buf_printf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, MT, x,
                          h - MB);
        rb_buf_printf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, h - MB + 16);
        if (p->style == RB_PLOT_LINES)
            rb_html_escape(out, sx->labels[i]);
        else
            rb_svg_category_label(out, sx->labels[i],
                                  (size_t)fmax(4, ((W - MR - ML) / (double)(sx->nticks ? sx->nticks : 1) - 8) / TICK_CHAR_W), x);
        rb_buf_printf(out, "</text>\n");
    }
    rb_buf_printf(out,
                  "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                  "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                  ML, MT, ML, h - MB, ML, h - MB, W - MR, h - MB);
    rb_buf_printf(out, "<text class=\"axis-title x-title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                  (ML + W - MR) / 2, h - 16);
    rb_html_escape(out, p->x.title);
    rb_buf_printf(out, "</text>\n<text class=\"axis-title y-title\" x=\"0\" y=\"0\" text-anchor=\"middle\" "
                       "transform=\"translate(18 %.1f) rotate(-90)\">",
                  (MT + h - MB) / 2);
    rb_html_escape(out, p->y.title);
    rb_buf_printf(out, "</text>\n</g>\n");
}

/* Colour and dash classes of a series: beyond the palette a colour comes back dotted, then dash-dotted. */
static void series_class(const struct rb_plot_series *s, char *buf, size_t len)
{
    static const char *const dashes[] = {"", " dot", " dashdot"};
    int c = s->colour < 0 ? 0 : s->colour;
    snprintf(buf, len, "s%d%s", c % RB_PLOT_COLOURS, s->dashed ? " dash" : dashes[(c / RB_PLOT_COLOURS) % 3]);
}

/* "series: x, y" for a tooltip. */
static void point_title(const struct rb_plot *p, const struct rb_plot_series *s, size_t i, struct rb_buf *out)
{
    char vx[64], vy[32];
    if (p->style != RB_PLOT_LINES && s->x[i] >= 0 && s->x[i] < (double)p->ncats)
        snprintf(vx, sizeof vx, "%.60s", p->cats[(size_t)s->x[i]]);
    else
        value_text(&p->x, s->x[i], vx, sizeof vx);
    value_text(&p->y, s->y[i], vy, sizeof vy);
    rb_buf_printf(out, "<title>");
    rb_html_escape(out, s->name);
    rb_buf_printf(out, ": %s, %s", vx, vy);
    if (s->labels && s->labels[i]) {
        rb_buf_printf(out, " (");
        rb_html_escape(out, s->labels[i]);
        rb_buf_printf(out, ")");
    }
    rb_buf_printf(out, "</title>");
}

static void draw_series(const struct rb_plot *p, size_t si, const struct scale *sx, const struct scale *sy,
                        struct rb_buf *out)
{
    const struct rb_plot_series *s = &p->series[si];
    char cls[32];
    series_class(s, cls, sizeof cls);
    rb_buf_printf(out, "<g class=\"series-group\" data-series=\"");
    rb_html_escape(out, s->name);
    rb_buf_printf(out, "\"><path class=\"series %s\" d=\"", cls);
    size_t drawn = 0;
    bool move = true;
    for (size_t i = 0; i < s->n; i++) {
        double tx = axis_t(&p->x, s->x[i]), ty = axis_t(&p->y, s->y[i]);
        if (!isfinite(tx) || !isfinite(ty)) {
            move |= isnan(s->x[i]); /* a gap, not a value the axis cannot show */
            continue;
        }
        /* An interval: a level line from its start to its end (a phase shorter than one is a line, not a dot). */
        double t0 = axis_t(&p->x, s->x0[i]);
        const char *sep = drawn++ ? " " : "";
        if (isfinite(t0)) {
            rb_buf_printf(out, "%s%s%.1f,%.1f", sep, move ? "M" : "L", px(sx, t0), px(sy, ty));
            move = false;
            sep = " ";
        }
        rb_buf_printf(out, "%s%s%.1f,%.1f", sep, move ? "M" : "L", px(sx, tx), px(sy, ty));
        move = false;
    }
    rb_buf_printf(out, "\"/>\n");
    if (drawn <= MARKERS_MAX_POINTS) {
        for (size_t i = 0; i < s->n; i++) {
            double tx = axis_t(&p->x, s->x[i]), ty = axis_t(&p->y, s->y[i]);
            if (!isfinite(tx) || !isfinite(ty))
                continue;
            double x = px(sx, tx), y = px(sy, ty);
            rb_buf_printf(out, "<circle class=\"f%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\">", s->colour % RB_PLOT_COLOURS,
                          x, y);
            point_title(p, s, i, out);
            rb_buf_printf(out, "</circle>");
            if (s->labels && s->labels[i]) {
                rb_buf_printf(out, "<text class=\"pt-label\" x=\"%.1f\" y=\"%.1f\">", x + 6, y - 7);
                rb_html_escape(out, s->labels[i]);
                rb_buf_printf(out, "</text>");
            }
        }
        rb_buf_printf(out, "\n");
    }
    rb_buf_printf(out, "</g>\n");
}

/* Bar geometry in category c for series k of nser: left edge and width in pixels. */
static void bar_box(const struct rb_plot *p, const struct scale *sx, size_t c, size_t k, size_t nser, double *x0,
                    double *w)
{
    double gw = px(sx, 1) - px(sx, 0), left = px(sx, (double)c) - gw / 2;
    if (p->style == RB_PLOT_STACKED) {
        *w = gw * 0.5;
        *x0 = left + gw * 0.25;
    } else {
        *w = gw * 0.8 / (double)nser;
        *x0 = left + gw * 0.1 + *w * (double)k;
    }
}

static void draw_bars(const struct rb_plot *p, size_t nser, const struct scale *sx, const struct scale *sy,
                      struct rb_buf *out)
{
    double *base = calloc(p->ncats ? p->ncats : 1, sizeof *base); /* stacked: top of the stack so far */
    if (!base) {
        out->oom = true;
        return;
    }
    for (size_t si = 0; si < nser; si++) {
        const struct rb_plot_series *s = &p->series[si];
        rb_buf_printf(out, "<g class=\"series-group bars\" data-series=\"");
        rb_html_escape(out, s->name);
        rb_buf_printf(out, "\">");
        for (size_t i = 0; i < s->n; i++) {
            double c = s->x[i];
            if (!isfinite(c) || c < 0 || c >= (double)p->ncats || !isfinite(s->y[i]) || s->y[i] < 0)
                continue;
            double x0, w, lo = p->style == RB_PLOT_STACKED ? base[(size_t)c] : 0, hi = lo + s->y[i];
            if (p->style == RB_PLOT_STACKED)
                base[(size_t)c] = hi;
            bar_box(p, sx, (size_t)c, si, nser, &x0, &w);
            double ylo = px(sy, lo), yhi = px(sy, hi);
            rb_buf_printf(out, "<rect class=\"bar f%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">",
                          s->colour % RB_PLOT_COLOURS, x0, yhi, w, ylo - yhi);
            point_title(p, s, i, out);
            rb_buf_printf(out, "</rect>");
            if (s->labels && s->labels[i]) {
                bool inside = p->style == RB_PLOT_STACKED;
                if (inside && ylo - yhi < 14)
                    continue;
                rb_buf_printf(out, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                              inside ? "bar-label inside" : "bar-label", x0 + w / 2, inside ? (ylo + yhi) / 2 + 4 : yhi - 5);
                rb_html_escape(out, s->labels[i]);
                rb_buf_printf(out, "</text>");
            }
        }
        rb_buf_printf(out, "</g>\n");
    }
    free(base);
}

/* The data's range in axis coordinates over the drawn series; false when nothing can be drawn. */
static bool data_range(const struct rb_plot *p, size_t nser, double *xlo, double *xhi, double *ylo, double *yhi)
{
    *xlo = *ylo = INFINITY;
    *xhi = *yhi = -INFINITY;
    double stack[64] = {0};
    for (size_t s = 0; s < nser; s++) {
        for (size_t i = 0; i < p->series[s].n; i++) {
            double tx = axis_t(&p->x, p->series[s].x[i]), ty = axis_t(&p->y, p->series[s].y[i]);
            if (!isfinite(tx) || !isfinite(ty))
                continue;
            if (p->style == RB_PLOT_STACKED && tx >= 0 && tx < 64 && ty > 0)
                ty = stack[(size_t)tx] += ty;
            *xlo = fmin(*xlo, isfinite(axis_t(&p->x, p->series[s].x0[i])) ? axis_t(&p->x, p->series[s].x0[i]) : tx);
            *xhi = fmax(*xhi, tx);
            *ylo = fmin(*ylo, ty);
            *yhi = fmax(*yhi, ty);
        }
    }
    if (!(*xlo <= *xhi))
        return false;
    for (size_t i = 0; i < p->nrefs; i++) {
        double t = axis_t(&p->y, p->refs[i].y);
        if (isfinite(t)) {
            *ylo = fmin(*ylo, t);
            *yhi = fmax(*yhi, t);
        }
    }
    for (size_t i = 0; i < p->nspans; i++) {
        *xlo = fmin(*xlo, axis_t(&p->x, p->spans[i].x0));
        *xhi = fmax(*xhi, axis_t(&p->x, p->spans[i].x1));
    }
    if (isfinite(p->xlo) && isfinite(p->xhi) && p->xlo < p->xhi) {
        *xlo = axis_t(&p->x, p->xlo);
        *xhi = axis_t(&p->x, p->xhi);
    }
    return isfinite(*xlo) && isfinite(*xhi);
}

/* The x scale of bars: one slot per category, labelled with its name. */
static void category_scale(const struct rb_plot *p, struct scale *s)
{
    memset(s, 0, sizeof *s);
    s->lo = -0.5;
    s->hi = (double)(p->ncats ? p->ncats : 1) - 0.5;
    for (size_t c = 0; c < p->ncats; c++)
        add_tick(s, (double)c, p->cats[c]);
}

static void draw_spans(const struct rb_plot *p, const struct scale *sx, double h, struct rb_buf *out)
{
    for (size_t i = 0; i < p->nspans; i++) {
        double x0 = fmax(ML, px(sx, axis_t(&p->x, p->spans[i].x0))), x1 = fmin(W - MR, px(sx, axis_t(&p->x, p->spans[i].x1)));
        if (!(x1 >= x0))
            continue;
        rb_buf_printf(out, "<rect class=\"span span%zu\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
                      i % 2, x0, MT, x1 - x0, h - MB - MT);
        rb_buf_printf(out, "<text class=\"span-label\" x=\"%.1f\" y=\"%.1f\">", x0 + 4, MT + 13);
        rb_svg_text_cut(out, p->spans[i].label, (size_t)fmax(1, (x1 - x0 - 8) / 7));
        rb_buf_printf(out, "</text>\n");
    }
}

/* Reference lines over the data, their labels haloed so they stay readable across bars and lines. */
static void draw_refs(const struct rb_plot *p, const struct scale *sy, struct rb_buf *out)
{
    for (size_t i = 0; i < p->nrefs; i++) {
        double t = axis_t(&p->y, p->refs[i].y);
        if (!isfinite(t))
            continue;
        double y = px(sy, t);
        rb_buf_printf(out, "<line class=\"ref\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", ML, y, W - MR, y);
        rb_buf_printf(out, "<text class=\"ref-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", W - MR - 4, y - 5);
        rb_html_escape(out, p->refs[i].label);
        rb_buf_printf(out, "</text>\n");
    }
}

static void draw_marks(const struct rb_plot *p, const struct scale *sx, const struct scale *sy, struct rb_buf *out)
{
    for (size_t i = 0; i < p->nmarks; i++) {
        double tx = axis_t(&p->x, p->marks[i].x), ty = axis_t(&p->y, p->marks[i].y);
        if (!isfinite(tx) || !isfinite(ty) || tx < sx->lo || tx > sx->hi || ty < sy->lo || ty > sy->hi)
            continue;
        double x = px(sx, tx), y = px(sy, ty);
        rb_buf_printf(out, "<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"8\"/>", x, y);
        rb_buf_printf(out, "<text class=\"mark-label\" x=\"%.1f\" y=\"%.1f\">", x + 10, y + 20);
        rb_html_escape(out, p->marks[i].label);
        rb_buf_printf(out, "</text>\n");
    }
}

static const char *series_name_of(const void *plot, size_t i)
{
    return ((const struct rb_plot *)plot)->series[i].name;
}

static void draw_legend(const struct rb_plot *p, size_t nser, struct rb_buf *out)
{
    size_t pre, suf;
    rb_svg_common_affix(series_name_of, p, nser, RB_SVG_LEGEND_CHARS, &pre, &suf);
    rb_buf_printf(out, "<g class=\"legend\">\n");
    for (size_t s = 0; s < nser; s++) {
        double y = MT + 8 + LEGEND_ROW * (double)s, x = W - MR + 14;
        char cls[32];
        series_class(&p->series[s], cls, sizeof cls);
        if (p->style == RB_PLOT_LINES)
            rb_buf_printf(out, "<line class=\"series %s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", cls, x,
                          y, x + 24, y);
        else
            rb_buf_printf(out, "<rect class=\"f%d\" x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"12\"/>",
                          p->series[s].colour % RB_PLOT_COLOURS, x + 4, y - 6);
        rb_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 30, y + 4);
        char shown[512];
        const char *name = p->series[s].name;
        snprintf(shown, sizeof shown, "%.*s", (int)(strlen(name) - pre - suf), name + pre);
        rb_svg_text_cut(out, shown, RB_SVG_LEGEND_CHARS);
        rb_buf_printf(out, "</text>\n");
    }
    rb_buf_printf(out, "</g>\n");
}

void rb_plot_svg(const struct rb_plot *p, struct rb_buf *out)
{
    size_t nser = p->nseries < RB_PLOT_MAX_SERIES ? p->nseries : RB_PLOT_MAX_SERIES;
    double xlo, xhi, ylo, yhi, h = plot_height(nser);
    if (!data_range(p, nser, &xlo, &xhi, &ylo, &yhi))
        return;
    struct scale sx, sy;
    if (p->style == RB_PLOT_LINES)
        make_scale(&p->x, xlo, xhi, &sx);
    else
        category_scale(p, &sx);
    make_scale(&p->y, ylo, yhi, &sy);
    sx.px_lo = ML;
    sx.px_hi = W - MR;
    sy.px_lo = h - MB;
    sy.px_hi = MT;

    rb_html_svg_begin(out, "plot", p->id, W, h, p->title, ML);
    draw_axes(p, &sx, &sy, h, out);
    draw_spans(p, &sx, h, out);
    if (p->style == RB_PLOT_LINES)
        for (size_t s = 0; s < nser; s++)
            draw_series(p, s, &sx, &sy, out);
    else
        draw_bars(p, nser, &sx, &sy, out);
    draw_refs(p, &sy, out);
    draw_marks(p, &sx, &sy, out);
    draw_legend(p, nser, out);
    rb_buf_printf(out, "</svg>\n");
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
