/* A plot's model as its kinds build it (series, points, categories, spans, references, marks); svg.c draws it. */
#define _POSIX_C_SOURCE 200809L
#include "svg_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rb_plot *rb_plot_new(const char *id, const char *title)
{
    struct rb_plot *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->id = strdup(id);
    p->title = strdup(title);
    p->x.scale = p->y.scale = 1;
    p->xlo = p->xhi = NAN;
    if (!p->id || !p->title) {
        rb_plot_free(p);
        return NULL;
    }
    return p;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

void rb_plot_free(struct rb_plot *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nseries; i++) {
        free(p->series[i].name);
        free(p->series[i].x);
        free(p->series[i].x0);
        free(p->series[i].y);
        free_strv(p->series[i].labels, p->series[i].n);
    }
    free(p->series);
    for (size_t i = 0; i < p->nrefs; i++)
        free(p->refs[i].label);
    free(p->refs);
    for (size_t i = 0; i < p->nmarks; i++)
        free(p->marks[i].label);
    free(p->marks);
    for (size_t i = 0; i < p->nspans; i++)
        free(p->spans[i].label);
    free(p->spans);
    free_strv(p->cats, p->ncats);
    free_strv(p->keys, p->nkeys);
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

/* The index of name in the string list *v (appended when new); -1 when out of memory. */
static int strv_index(struct rb_plot *p, char ***v, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i], name) == 0)
            return (int)i;
    char **nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv) {
        p->oom = true;
        return -1;
    }
    *v = nv;
    if (!(nv[*n] = dup_or_oom(p, name)))
        return -1;
    return (int)(*n)++;
}

int rb_plot_series_keyed(struct rb_plot *p, const char *name, const char *key, bool dashed)
{
    int colour = strv_index(p, &p->keys, &p->nkeys, key ? key : name);
    if (colour < 0)
        return -1;
    struct rb_plot_series *s = realloc(p->series, (p->nseries + 1) * sizeof *s);
    if (!s) {
        p->oom = true;
        return -1;
    }
    p->series = s;
    memset(&s[p->nseries], 0, sizeof *s);
    s[p->nseries].colour = colour;
    s[p->nseries].dashed = dashed;
    if (!(s[p->nseries].name = dup_or_oom(p, name)))
        return -1;
    return (int)p->nseries++;
}

int rb_plot_series(struct rb_plot *p, const char *name)
{
    char key[32];
    /* A key no other series has: its own colour. */
    snprintf(key, sizeof key, "\x01%zu", p->nseries);
    return rb_plot_series_keyed(p, name, key, false);
}

/* Appends (x, y, label) to series si without checking the values. */
static void push_point(struct rb_plot *p, int si, double x, double y, const char *label)
{
    if (si < 0 || (size_t)si >= p->nseries)
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
        double *nx0 = realloc(s->x0, cap * sizeof *nx0);
        if (!nx0) {
            p->oom = true;
            return;
        }
        s->x0 = nx0;
        if (s->labels) {
            char **nl = realloc(s->labels, cap * sizeof *nl);
            if (!nl) {
                p->oom = true;
                return;
            }
            s->labels = nl;
        }
        s->cap = cap;
    }
    if (label && !s->labels) {
        if (!(s->labels = calloc(s->cap, sizeof *s->labels))) {
            p->oom = true;
            return;
        }
    }
    s->x[s->n] = x;
    s->x0[s->n] = NAN;
    s->y[s->n] = y;
    if (s->labels)
        s->labels[s->n] = label ? dup_or_oom(p, label) : NULL;
    s->n++;
}

void rb_plot_point(struct rb_plot *p, int si, double x, double y)
{
    if (isfinite(x) && isfinite(y))
        push_point(p, si, x, y, NULL);
}

void rb_plot_interval(struct rb_plot *p, int si, double x0, double x1, double y)
{
    if (!isfinite(x0) || !isfinite(x1) || !isfinite(y) || si < 0 || (size_t)si >= p->nseries)
        return;
    struct rb_plot_series *s = &p->series[si];
    size_t n = s->n;
    push_point(p, si, x1, y, NULL);
    if (s->n > n)
        s->x0[n] = fmin(x0, x1);
}

void rb_plot_point_label(struct rb_plot *p, int si, double x, double y, const char *label)
{
    if (isfinite(x) && isfinite(y))
        push_point(p, si, x, y, label);
}

void rb_plot_gap(struct rb_plot *p, int si)
{
    if (si >= 0 && (size_t)si < p->nseries && p->series[si].n && isfinite(p->series[si].x[p->series[si].n - 1]))
        push_point(p, si, NAN, NAN, NULL);
}

void rb_plot_style(struct rb_plot *p, enum rb_plot_style style)
{
    p->style = style;
}

int rb_plot_category(struct rb_plot *p, const char *name)
{
    return strv_index(p, &p->cats, &p->ncats, name);
}

void rb_plot_span(struct rb_plot *p, double x0, double x1, const char *label)
{
    if (!isfinite(x0) || !isfinite(x1) || x1 < x0)
        return;
    struct rb_plot_span *v = realloc(p->spans, (p->nspans + 1) * sizeof *v);
    if (!v) {
        p->oom = true;
        return;
    }
    p->spans = v;
    v[p->nspans] = (struct rb_plot_span){x0, x1, dup_or_oom(p, label)};
    if (v[p->nspans].label)
        p->nspans++;
}

void rb_plot_xrange(struct rb_plot *p, double lo, double hi)
{
    p->xlo = lo;
    p->xhi = hi;
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
