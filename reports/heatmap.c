/* SVG heat maps drawn by railbench itself: a value per (row, column), e.g. host x host bandwidth for fabric check. */
#define _POSIX_C_SOURCE 200809L
#include "heatmap_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_int.h"

/* Geometry in SVG user units (the SVG scales to the page's width). */
#define W 1200.0
#define ML 160.0  /* row names */
#define MT 150.0  /* title and slanted column names */
#define MR 120.0  /* colour bar */
#define MB 50.0
#define CELL_MAX 60.0
#define LABEL_MIN_CELL 34.0 /* narrower cells carry their value in the tooltip only */

/* Viridis at nine even stops (perceptually uniform, readable with colour blindness and in grey). */
static const unsigned char viridis[9][3] = {
    {68, 1, 84},    {71, 44, 122},  {59, 81, 139},   {44, 113, 142}, {33, 144, 141},
    {39, 173, 129}, {92, 200, 99},  {170, 220, 50},  {253, 231, 37},
};

static char *dup_or_oom(struct rb_heatmap *h, const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d)
        h->oom = true;
    return d;
}

static char **dup_names(struct rb_heatmap *h, const char *const *names, size_t n)
{
    char **v = calloc(n ? n : 1, sizeof *v);
    if (!v) {
        h->oom = true;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = dup_or_oom(h, names[i]);
    return v;
}

struct rb_heatmap *rb_heatmap_new(const char *id, const char *title, const char *const *rows, size_t nrows,
                                  const char *const *cols, size_t ncols)
{
    if (nrows > RB_HEATMAP_MAX || ncols > RB_HEATMAP_MAX)
        return NULL;
    struct rb_heatmap *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->id = dup_or_oom(h, id);
    h->title = dup_or_oom(h, title);
    h->unit = dup_or_oom(h, "");
    h->scale = 1;
    h->decimals = 1;
    h->nrows = nrows;
    h->ncols = ncols;
    h->rows = dup_names(h, rows, nrows);
    h->cols = dup_names(h, cols, ncols);
    h->v = malloc((nrows * ncols > 0 ? nrows * ncols : 1) * sizeof *h->v);
    if (h->oom || !h->v) {
        rb_heatmap_free(h);
        return NULL;
    }
    for (size_t i = 0; i < nrows * ncols; i++)
        h->v[i] = NAN;
    return h;
}

void rb_heatmap_free(struct rb_heatmap *h)
{
    if (!h)
        return;
    for (size_t i = 0; h->rows && i < h->nrows; i++)
        free(h->rows[i]);
    for (size_t i = 0; h->cols && i < h->ncols; i++)
        free(h->cols[i]);
    free(h->rows);
    free(h->cols);
    free(h->v);
    free(h->id);
    free(h->title);
    free(h->caption);
    free(h->unit);
    free(h);
}

void rb_heatmap_format(struct rb_heatmap *h, const char *unit, double scale, int decimals, const char *caption)
{
    free(h->unit);
    h->unit = dup_or_oom(h, unit);
    h->scale = scale;
    h->decimals = decimals < 0 ? 0 : decimals > 6 ? 6 : decimals;
    free(h->caption);
    h->caption = caption ? dup_or_oom(h, caption) : NULL;
}

void rb_heatmap_set(struct rb_heatmap *h, size_t r, size_t c, double v)
{
    if (r < h->nrows && c < h->ncols && isfinite(v))
        h->v[r * h->ncols + c] = v;
}

/* The colour of t in [0, 1] on the viridis scale, as "#rrggbb"; whether text on it should be dark. */
static int colour(double t, char *buf, size_t len)
{
    t = fmin(1, fmax(0, isfinite(t) ? t : 0)) * 8;
    size_t i = t >= 8 ? 7 : (size_t)t;
    double f = t - (double)i;
    int rgb[3];
    for (int k = 0; k < 3; k++)
        rgb[k] = (int)lround(viridis[i][k] + f * (viridis[i + 1][k] - viridis[i][k]));
    snprintf(buf, len, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
    /* Relative luminance (sRGB weights, linear enough here): dark text on the light end of the scale. */
    return 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2] > 140;
}

static void value_text(const struct rb_heatmap *h, double v, char *buf, size_t len)
{
    if (isfinite(v))
        snprintf(buf, len, "%.*f", h->decimals, v * h->scale);
    else
        snprintf(buf, len, "-");
}

static void draw_cells(const struct rb_heatmap *h, double cell, double lo, double hi, struct rb_buf *out)
{
    char fill[8], text[48];
    for (size_t r = 0; r < h->nrows; r++) {
        for (size_t c = 0; c < h->ncols; c++) {
            double v = h->v[r * h->ncols + c], x = ML + cell * (double)c, y = MT + cell * (double)r;
            int dark = 1; /* "-" on the grey of a missing cell */
            value_text(h, v, text, sizeof text);
            if (isfinite(v)) {
                dark = colour(hi > lo ? (v - lo) / (hi - lo) : 1, fill, sizeof fill);
                rb_buf_printf(out, "<rect class=\"cell\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">",
                              x, y, cell, cell, fill);
            } else {
                rb_buf_printf(out, "<rect class=\"cell missing\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">",
                              x, y, cell, cell);
            }
            rb_buf_printf(out, "<title>");
            rb_html_escape(out, h->rows[r]);
            rb_buf_printf(out, " \xE2\x86\x92 ");
            rb_html_escape(out, h->cols[c]);
            rb_buf_printf(out, ": %s%s", text, isfinite(v) ? " " : " (not measured)");
            if (isfinite(v))
                rb_html_escape(out, h->unit);
            rb_buf_printf(out, "</title></rect>");
            if (cell >= LABEL_MIN_CELL)
                rb_buf_printf(out, "<text class=\"cell-label%s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
                              dark ? " dark" : "", x + cell / 2, y + cell / 2 + 4, text);
        }
        rb_buf_printf(out, "\n");
    }
}

static void draw_names(const struct rb_heatmap *h, double cell, struct rb_buf *out)
{
    for (size_t r = 0; r < h->nrows; r++) {
        rb_buf_printf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", ML - 6,
                      MT + cell * ((double)r + 0.5) + 4);
        rb_html_escape(out, h->rows[r]);
        rb_buf_printf(out, "</text>");
    }
    for (size_t c = 0; c < h->ncols; c++) {
        double x = ML + cell * ((double)c + 0.5);
        rb_buf_printf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" transform=\"rotate(-45 %.1f %.1f)\">", x, MT - 6,
                      x, MT - 6);
        rb_html_escape(out, h->cols[c]);
        rb_buf_printf(out, "</text>");
    }
    rb_buf_printf(out, "\n");
}

/* A vertical colour bar right of the cells, the extremes written beside it. */
static void draw_bar(const struct rb_heatmap *h, double cell, double lo, double hi, struct rb_buf *out)
{
    char fill[8], text[48];
    double height = cell * (double)h->nrows, x = ML + cell * (double)h->ncols + 24, step = height / 16;
    for (int i = 0; i < 16; i++) {
        colour(1 - (i + 0.5) / 16, fill, sizeof fill);
        rb_buf_printf(out, "<rect class=\"scale\" x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"%.1f\" fill=\"%s\"/>", x,
                      MT + step * i, step + 0.5, fill);
    }
    value_text(h, hi, text, sizeof text);
    rb_buf_printf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">%s ", x + 22, MT + 10, text);
    rb_html_escape(out, h->unit);
    value_text(h, lo, text, sizeof text);
    rb_buf_printf(out, "</text><text class=\"tick\" x=\"%.1f\" y=\"%.1f\">%s ", x + 22, MT + height, text);
    rb_html_escape(out, h->unit);
    rb_buf_printf(out, "</text>\n");
}

void rb_heatmap_svg(const struct rb_heatmap *h, struct rb_buf *out)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < h->nrows * h->ncols; i++) {
        if (isfinite(h->v[i])) {
            lo = fmin(lo, h->v[i]);
            hi = fmax(hi, h->v[i]);
        }
    }
    if (!(lo <= hi))
        return;
    double cell = fmin(CELL_MAX, (W - ML - MR) / (double)h->ncols), height = cell * (double)h->nrows;
    double total = MT + height + MB;
    rb_html_svg_begin(out, "plot heatmap", h->id, W, total, h->title, ML);
    draw_names(h, cell, out);
    draw_cells(h, cell, lo, hi, out);
    draw_bar(h, cell, lo, hi, out);
    rb_buf_printf(out, "</svg>\n");
    if (h->caption) {
        rb_buf_printf(out, "<figcaption>");
        rb_html_escape(out, h->caption);
        rb_buf_printf(out, "</figcaption>\n");
    }
    rb_buf_printf(out, "</figure>\n");
}
