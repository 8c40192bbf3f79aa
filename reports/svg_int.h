/* SVG plots drawn by railbench itself: lines (linear, log, byte-size, percentile axes) and bars, grouped or stacked;
 * the model is built in plot.c, drawn in svg.c. */
#ifndef RB_SVG_INT_H
#define RB_SVG_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "railbench/buf.h"

enum rb_axis_kind {
    RB_AXIS_LINEAR,     /* nice steps of 1, 2 or 5 x 10^k */
    RB_AXIS_LOG10,      /* decades; values <= 0 are not drawn */
    RB_AXIS_LOG2_BYTES, /* powers of two labelled "4 KiB", "1 MiB" */
    RB_AXIS_PERCENTILE, /* x given as percent q, drawn at log10(1/(1 - q/100)): p50, p90, p99, p99.9 ... */
};

struct rb_axis {
    char *title;   /* with units: "latency (ms, log scale)" */
    enum rb_axis_kind kind;
    double scale;  /* tick labels show value x scale */
    bool zero;     /* linear: the range includes 0 */
};

struct rb_plot_series {
    char *name;
    double *x, *y;    /* bars: x is the category index; a NAN pair breaks a line */
    double *x0;       /* per point: where its interval starts (rb_plot_interval), else NAN */
    char **labels;    /* per point, drawn beside it (NULL entries: none); NULL when no point has one */
    size_t n, cap;
    int colour;       /* palette index: series sharing a colour key share it */
    bool dashed;      /* the paired or predicted line of its colour */
};

/* How the series are drawn. */
enum rb_plot_style {
    RB_PLOT_LINES,    /* one path per series, points marked */
    RB_PLOT_BARS,     /* grouped bars: one bar per series in each category */
    RB_PLOT_STACKED,  /* one bar per category, the series stacked in order */
};

struct rb_plot_span { /* a stretch of the x axis named: a phase on a time axis */
    double x0, x1;
    char *label;
};

struct rb_plot_ref {   /* a horizontal reference line: an SLO, a minimum AU */
    double y;
    char *label;
};

struct rb_plot_mark {  /* a point called out: the knee */
    double x, y;
    char *label;
};

struct rb_plot {
    char *id;      /* data-plot attribute: "latency-percentiles", "busbw-size" ... */
    char *title;
    char *caption;
    struct rb_axis x, y;
    struct rb_plot_series *series;
    size_t nseries;
    struct rb_plot_ref *refs;
    size_t nrefs;
    struct rb_plot_mark *marks;
    size_t nmarks;
    struct rb_plot_span *spans;
    size_t nspans;
    enum rb_plot_style style;
    char **cats;   /* bar categories, in order */
    size_t ncats;
    char **keys;   /* colour keys, index = palette index */
    size_t nkeys;
    double xlo, xhi; /* fixed x range (both finite), else fitted to the data */
    bool oom;      /* an allocation failed; what was added before is kept */
};

/* Series drawn per plot; more are listed in the caption as not drawn. */
#define RB_PLOT_MAX_SERIES 24

/*
 * Distinct colours of the palette (Okabe-Ito, safe for colour blindness);
 * beyond them a series repeats a colour with a dotted, then dash-dotted line.
 */
#define RB_PLOT_COLOURS 8

/* A new plot with no series; NULL when out of memory. Free with rb_plot_free (NULL-safe). */
struct rb_plot *rb_plot_new(const char *id, const char *title);
void rb_plot_free(struct rb_plot *p);

/* Sets an axis (title copied). */
void rb_plot_xaxis(struct rb_plot *p, const char *title, enum rb_axis_kind kind, double scale, bool zero);
void rb_plot_yaxis(struct rb_plot *p, const char *title, enum rb_axis_kind kind, double scale, bool zero);

/* Sets the caption under the plot (copied). */
void rb_plot_caption(struct rb_plot *p, const char *text);

/* Adds a series with a colour of its own and returns its index (-1 when out of memory). */
int rb_plot_series(struct rb_plot *p, const char *name);

/*
 * Adds a series coloured by key: series with the same key share a colour (A
 * and B of a comparison, a measurement and its model), dashed draws it dashed.
 * Returns its index, or -1 when out of memory.
 */
int rb_plot_series_keyed(struct rb_plot *p, const char *name, const char *key, bool dashed);

/* Adds a point to series s; non-finite values are ignored. */
void rb_plot_point(struct rb_plot *p, int s, double x, double y);

/* Adds a point with a label drawn beside it ("qd 8", "3.1x"); the label is copied. */
void rb_plot_point_label(struct rb_plot *p, int s, double x, double y, const char *label);

/* Ends the current stretch of line s: the next point starts a new one (a restart, a gap in time). */
void rb_plot_gap(struct rb_plot *p, int s);

/*
 * A value that holds over the interval [x0, x1] of a line series (a rate
 * over an --interval): drawn as a level line from x0 to x1, its marker at
 * x1, so consecutive intervals form steps and a phase shorter than one
 * interval is a short line, never a lone dot.
 */
void rb_plot_interval(struct rb_plot *p, int s, double x0, double x1, double y);

/* Draws the series as bars in categories (added with rb_plot_category) instead of lines. */
void rb_plot_style(struct rb_plot *p, enum rb_plot_style style);

/* The index of the bar category named name, added at the end when new; -1 when out of memory. */
int rb_plot_category(struct rb_plot *p, const char *name);

/* Names the stretch [x0, x1] of the x axis (shaded, label at the top). */
void rb_plot_span(struct rb_plot *p, double x0, double x1, const char *label);

/* Fixes the x range (plots that share a time axis); NAN leaves it fitted to the data. */
void rb_plot_xrange(struct rb_plot *p, double lo, double hi);

void rb_plot_ref(struct rb_plot *p, double y, const char *label);
void rb_plot_mark(struct rb_plot *p, double x, double y, const char *label);

/* Points that can be drawn on the plot's axes (log axes drop values <= 0). */
size_t rb_plot_drawable(const struct rb_plot *p);

/*
 * Appends <figure><svg class="plot" data-plot="id">...</svg><figcaption>
 * to out: grid, ticks and axis titles, one <path class="series"> per series
 * (or its bars), colour classes s0..s7 / f0..f7 and dash classes, a legend,
 * spans, reference lines, marks and point labels, a <title> tooltip on every
 * point or bar. Every string is escaped. Nothing is appended when no point
 * can be drawn.
 */
void rb_plot_svg(const struct rb_plot *p, struct rb_buf *out);

/* ---- text that fits its place (svg_text.c; rb_plot_svg's helpers) ---- */

/* Characters a legend entry may show: what the legend's 200 units hold at 12 px (about 6.8 units each). */
#define RB_SVG_LEGEND_CHARS 29

/* Appends at most max characters of s (whole UTF-8 characters), escaped, with an ellipsis when cut. */
void rb_svg_text_cut(struct rb_buf *out, const char *s, size_t max);

/*
 * A bar category's name as the text of its tick (fit characters wide,
 * centred at x): whole when it fits; else two lines split after "RUN:" (the
 * run, then what the bars show, e.g. "1 MiB"), each cut only if it still does
 * not fit, so a unit is never cut off.
 */
void rb_svg_category_label(struct rb_buf *out, const char *label, size_t fit, double x);

/*
 * Names too long for their place (default result directory names share
 * their date and command) are shortened to what differs between them: for
 * the n names name_of(ctx, i), when any is longer than longer_than, *pre and
 * *suf get the bytes of the prefix and suffix every name shares, cut back to
 * a separator (- _ / space T : =), to leave out; 0 and 0 when the names are
 * short or one would be left empty. Legends use it, and so do figures for the
 * names of their runs.
 */
void rb_svg_common_affix(const char *(*name_of)(const void *ctx, size_t i), const void *ctx, size_t n,
                         size_t longer_than, size_t *pre, size_t *suf);

#endif
