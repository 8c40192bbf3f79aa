/* SVG heat maps drawn by railbench itself: a value per (row, column), e.g. host x host bandwidth for fabric check. */
#ifndef RB_HEATMAP_INT_H
#define RB_HEATMAP_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "railbench/buf.h"

/*
 * A matrix of figures with named rows and columns. Cells start as NAN (not
 * measured), drawn grey with "-", never as 0. Not thread-safe.
 */
struct rb_heatmap {
    char *id, *title, *caption;
    char *unit;         /* shown after values: "GB/s" */
    double scale;       /* displayed value = value x scale */
    int decimals;
    char **rows, **cols;
    size_t nrows, ncols;
    double *v;          /* nrows x ncols, row-major */
    bool oom;           /* an allocation failed; what was set before is kept */
};

/* Rows and columns at most; the rest is left out and the caption says so. */
#define RB_HEATMAP_MAX 64

/*
 * A new heat map of nrows x ncols cells, all NAN, with the row and column
 * names copied (nrows, ncols <= RB_HEATMAP_MAX). NULL when out of memory or
 * too large. Free with rb_heatmap_free (NULL-safe).
 */
struct rb_heatmap *rb_heatmap_new(const char *id, const char *title, const char *const *rows, size_t nrows,
                                  const char *const *cols, size_t ncols);
void rb_heatmap_free(struct rb_heatmap *h);

/* Sets how values are shown: unit (copied), scale and decimals; and the caption (copied; NULL for none). */
void rb_heatmap_format(struct rb_heatmap *h, const char *unit, double scale, int decimals, const char *caption);

/* Sets cell (r, c); out-of-range indexes and non-finite values are ignored. */
void rb_heatmap_set(struct rb_heatmap *h, size_t r, size_t c, double v);

/*
 * Appends <figure><svg class="plot heatmap" data-plot="id">...</svg> to out:
 * one <rect class="cell"> per cell coloured on a sequential colour-blind-safe
 * scale (viridis) from the smallest to the largest value, its value written
 * in it when it fits, a <title> tooltip "row -> column: value unit", the row
 * and column names, and a colour bar with the extremes. Cells without a
 * value are grey with "-". Every string is escaped. Nothing is appended when
 * no cell has a value.
 */
void rb_heatmap_svg(const struct rb_heatmap *h, struct rb_buf *out);

#endif
