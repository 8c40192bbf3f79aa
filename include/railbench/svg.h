/* SVG line plots drawn by railbench itself: linear, log, byte-size and percentile axes, reference lines. */
#ifndef RB_SVG_H
#define RB_SVG_H

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
    double *x, *y;
    size_t n, cap;
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
    bool oom;      /* an allocation failed; what was added before is kept */
};

/* Series drawn per plot; more are listed in the caption as not drawn. */
#define RB_PLOT_MAX_SERIES 12

/* A new plot with no series; NULL when out of memory. Free with rb_plot_free (NULL-safe). */
struct rb_plot *rb_plot_new(const char *id, const char *title);
void rb_plot_free(struct rb_plot *p);

/* Sets an axis (title copied). */
void rb_plot_xaxis(struct rb_plot *p, const char *title, enum rb_axis_kind kind, double scale, bool zero);
void rb_plot_yaxis(struct rb_plot *p, const char *title, enum rb_axis_kind kind, double scale, bool zero);

/* Sets the caption under the plot (copied). */
void rb_plot_caption(struct rb_plot *p, const char *text);

/* Adds a series and returns its index (-1 when out of memory). */
int rb_plot_series(struct rb_plot *p, const char *name);

/* Adds a point to series s; non-finite values are ignored. */
void rb_plot_point(struct rb_plot *p, int s, double x, double y);

void rb_plot_ref(struct rb_plot *p, double y, const char *label);
void rb_plot_mark(struct rb_plot *p, double x, double y, const char *label);

/* Points that can be drawn on the plot's axes (log axes drop values <= 0). */
size_t rb_plot_drawable(const struct rb_plot *p);

/*
 * Appends <figure><svg class="plot" data-plot="id">...</svg><figcaption>
 * to out: grid, ticks and axis titles, one polyline per series (colour
 * classes s0..s7), a legend, reference lines and marks. Every string is
 * escaped. Nothing is appended when no point can be drawn.
 */
void rb_plot_svg(const struct rb_plot *p, struct rb_buf *out);

#endif
