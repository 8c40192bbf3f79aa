/* What the kinds of report share: run and label columns, notes, the throughput and latency plots. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/units.h"
#include "report_int.h"

#define LABEL_KEY_PREFIX "label_"

int rb_report_set_init(struct rb_report_set *s, struct rb_rundir *const *runs, size_t n)
{
    memset(s, 0, sizeof *s);
    s->runs = runs;
    s->n = n;
    for (size_t i = 0; i < n; i++) {
        const cJSON *l;
        cJSON_ArrayForEach(l, runs[i]->labels)
        {
            if (!l->string || !cJSON_IsString(l))
                continue;
            bool seen = false;
            for (size_t k = 0; k < s->nlabel_keys && !seen; k++)
                seen = strcmp(s->label_keys[k], l->string) == 0;
            if (seen)
                continue;
            const char **v = realloc(s->label_keys, (s->nlabel_keys + 1) * sizeof *v);
            if (!v)
                return -ENOMEM;
            s->label_keys = v;
            v[s->nlabel_keys++] = l->string;
        }
    }
    return 0;
}

void rb_report_set_free(struct rb_report_set *s)
{
    if (!s)
        return;
    free(s->label_keys);
    memset(s, 0, sizeof *s);
}

void rb_report_tables_add(struct rb_report_tables *out, struct rb_rtable *t)
{
    if (!t) {
        out->oom = true;
        return;
    }
    if (out->n == out->cap) {
        size_t cap = out->cap ? 2 * out->cap : 8;
        struct rb_rtable **v = realloc(out->v, cap * sizeof *v);
        if (!v) {
            rb_rtable_free(t);
            out->oom = true;
            return;
        }
        out->v = v;
        out->cap = cap;
    }
    out->v[out->n++] = t;
}

void rb_report_tables_free(struct rb_report_tables *out)
{
    if (!out)
        return;
    for (size_t i = 0; i < out->n; i++)
        rb_rtable_free(out->v[i]);
    free(out->v);
    memset(out, 0, sizeof *out);
}

struct rb_rtable *rb_report_table(struct rb_report_tables *out, const struct rb_report_set *s, const char *id,
                                  const char *title)
{
    struct rb_rtable *t = rb_rtable_new(id, title);
    if (t && s->n > 1) {
        rb_rtable_col(t, "run", "dir", RB_RF_TEXT, 0, 1, RB_RCOL_IDENT | RB_RCOL_KEY);
        for (size_t k = 0; k < s->nlabel_keys; k++) {
            char key[256];
            snprintf(key, sizeof key, LABEL_KEY_PREFIX "%s", s->label_keys[k]);
            rb_rtable_col(t, key, s->label_keys[k], RB_RF_TEXT, 0, 1, RB_RCOL_IDENT | RB_RCOL_KEY);
        }
    }
    size_t before = out->n;
    rb_report_tables_add(out, t);
    return out->n > before ? t : NULL;
}

size_t rb_report_row(struct rb_rtable *t, const struct rb_report_set *s, size_t i)
{
    size_t r = rb_rtable_row(t);
    if (s->n > 1) {
        rb_rtable_text(t, r, "run", s->runs[i]->name);
        for (size_t k = 0; k < s->nlabel_keys; k++) {
            char key[256];
            snprintf(key, sizeof key, LABEL_KEY_PREFIX "%s", s->label_keys[k]);
            rb_rtable_text(t, r, key, rb_rundir_label(s->runs[i], s->label_keys[k]));
        }
    }
    return r;
}

void rb_report_note(struct rb_rtable *t, const struct rb_report_set *s, size_t i, const char *fmt, ...)
{
    char text[1800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (s->n > 1)
        rb_rtable_note(t, "%s: %s", s->runs[i]->name, text);
    else
        rb_rtable_note(t, "%s", text);
}

/* Run names this long are shortened in figures (default result directories: 20261126T000102Z-load-tiers). */
#define RUN_NAME_SHORT 16

static const char *run_name_of(const void *set, size_t i)
{
    return ((const struct rb_report_set *)set)->runs[i]->name;
}

/*
 * The part of run i's name that tells it from the set's other runs (the
 * date and command default directory names share are left out:
 * "000102Z"); short names stay whole. The table of runs names them in full.
 */
static void run_short_name(const struct rb_report_set *s, size_t i, char *buf, size_t len)
{
    size_t pre, suf;
    rb_svg_common_affix(run_name_of, s, s->n, RUN_NAME_SHORT, &pre, &suf);
    const char *me = s->runs[i]->name;
    snprintf(buf, len, "%.*s", (int)(strlen(me) - pre - suf), me + pre);
}

void rb_report_series_name(char *buf, size_t len, const struct rb_report_set *s, size_t i, const char *what)
{
    char run[256];
    if (s->n > 1)
        run_short_name(s, i, run, sizeof run);
    if (s->paired)
        snprintf(buf, len, "%s %s: %s", i ? "B" : "A", run, what);
    else if (s->n > 1)
        snprintf(buf, len, "%s: %s", run, what);
    else
        snprintf(buf, len, "%s", what);
}

void rb_report_plot_emit(struct rb_plot *p, struct rb_buf *html)
{
    if (!p)
        return;
    if (rb_plot_drawable(p) > 0)
        rb_plot_svg(p, html);
    rb_plot_free(p);
}

const char *rb_report_fig(char *buf, size_t len, double v, double scale, int decimals)
{
    if (isfinite(v) && isfinite(v * scale))
        snprintf(buf, len, "%.*f", decimals, v * scale);
    else
        snprintf(buf, len, RB_RTABLE_MISSING);
    return buf;
}

void rb_report_size(char *buf, size_t len, double bytes)
{
    if (isfinite(bytes) && bytes >= 0 && bytes < 1.8e19)
        rb_format_size(buf, len, (uint64_t)bytes);
    else
        snprintf(buf, len, "?");
}

void rb_report_latency_cells(struct rb_rtable *t, size_t r, const char *prefix, const cJSON *obj)
{
    static const char *const figs[] = {"min", "mean", "p50", "p90", "p99", "p999", "p9999", "max"};
    char key[96];
    for (size_t k = 0; k < sizeof figs / sizeof figs[0]; k++) {
        snprintf(key, sizeof key, "%s_%s_ns", prefix, figs[k]);
        rb_rtable_num(t, r, key, rb_rundir_num(obj, figs[k]));
    }
}

int rb_report_series(struct rb_plot *p, const struct rb_report_set *s, size_t i, const char *what)
{
    char name[512];
    rb_report_series_name(name, sizeof name, s, i, what);
    if (s->paired)
        return rb_plot_series_keyed(p, name, what, i > 0);
    return rb_plot_series(p, name);
}

/*
 * Where the intervals of run r sit on its time axis: x = at_s - *t0 when every
 * line has its wall-clock time, else x = offset[k] + t_s with the phases laid
 * end to end in order. offset has r->nseries entries.
 */
static bool timeline_origin(const struct rb_rundir *r, double *t0, double *offset)
{
    bool wall = true;
    double first = INFINITY, end = 0;
    for (size_t k = 0; k < r->nseries; k++) {
        const struct rb_series *se = &r->series[k];
        offset[k] = end;
        double last = 0;
        for (size_t j = 0; j < se->n; j++) {
            wall &= isfinite(se->at_s[j]);
            first = fmin(first, se->at_s[j] - se->t_s[j]);
            last = fmax(last, se->t_s[j]);
        }
        end += last;
    }
    *t0 = first;
    return wall && isfinite(first);
}

static double timeline_x(const struct rb_series *se, size_t j, bool wall, double t0, double offset)
{
    return wall ? se->at_s[j] - t0 : offset + se->t_s[j];
}

/* Adds the intervals of every run to the throughput plot tp and the latency plot lp; returns the last x. */
static double timeline_points(const struct rb_report_set *s, struct rb_plot *tp, struct rb_plot *lp)
{
    double xmax = 0;
    char what[400];
    for (size_t i = 0; i < s->n; i++) {
        const struct rb_rundir *r = s->runs[i];
        double *offset = calloc(r->nseries ? r->nseries : 1, sizeof *offset), t0;
        if (!offset)
            return xmax;
        bool wall = timeline_origin(r, &t0, offset);
        for (size_t k = 0; k < r->nseries; k++) {
            const struct rb_series *se = &r->series[k];
            int ts = rb_report_series(tp, s, i, se->name), l99 = -1, l50 = -1;
            double x0 = NAN, x1 = NAN, prev_x = 0;
            for (size_t j = 0; j < se->n; j++) {
                double x = timeline_x(se, j, wall, t0, offset[k]);
                /* The phase started over (a result directory used twice): a new stretch of line. */
                if (j && se->t_s[j] < se->t_s[j - 1]) {
                    rb_plot_gap(tp, ts);
                    rb_plot_gap(lp, l50);
                    rb_plot_gap(lp, l99);
                }
                /* The interval ran since the previous line of the phase (the first: since the phase began). */
                double from = j && se->t_s[j] >= se->t_s[j - 1] ? fmin(prev_x, x) : x - se->t_s[j];
                prev_x = x;
                rb_plot_interval(tp, ts, from, x, se->bytes_per_s[j]);
                if (l99 < 0 && (isfinite(se->p99_ns[j]) || isfinite(se->p50_ns[j]))) {
                    snprintf(what, sizeof what, "%s p99", se->name);
                    l99 = rb_report_series(lp, s, i, what);
                    snprintf(what, sizeof what, "%s p50", se->name);
                    l50 = rb_report_series(lp, s, i, what);
                }
                rb_plot_interval(lp, l99, from, x, se->p99_ns[j]);
                rb_plot_interval(lp, l50, from, x, se->p50_ns[j]);
                /* x - t_s is when the phase started. */
                x0 = isfinite(x0) ? fmin(x0, x - se->t_s[j]) : x - se->t_s[j];
                x1 = isfinite(x1) ? fmax(x1, x) : x;
            }
            if (s->n == 1 && isfinite(x0)) {
                rb_plot_span(tp, fmax(0, x0), x1, se->name);
                rb_plot_span(lp, fmax(0, x0), x1, se->name);
            }
            xmax = fmax(xmax, isfinite(x1) ? x1 : 0);
        }
        free(offset);
    }
    return xmax;
}

void rb_report_plot_timeline(const struct rb_report_set *s, struct rb_buf *html)
{
    double max = 0;
    for (size_t i = 0; i < s->n; i++)
        for (size_t k = 0; k < s->runs[i]->nseries; k++)
            for (size_t j = 0; j < s->runs[i]->series[k].n; j++)
                max = fmax(max, s->runs[i]->series[k].bytes_per_s[j]);
    /* Phases that moved nothing (collectives' intervals carry bandwidths instead) draw no plot. */
    if (max <= 0)
        return;
    bool gib = max >= 10 * (double)RB_GIB;
    struct rb_plot *tp = rb_plot_new("throughput-time", "Throughput over the run, phases in sequence");
    struct rb_plot *lp = rb_plot_new("latency-time", "Latency over the run: p50 and p99 per interval");
    if (!tp || !lp) {
        rb_plot_free(tp);
        rb_plot_free(lp);
        return;
    }
    rb_plot_xaxis(tp, "time since the run started (s)", RB_AXIS_LINEAR, 1, true);
    rb_plot_yaxis(tp, gib ? "throughput (GiB/s)" : "throughput (MiB/s)", RB_AXIS_LINEAR, gib ? 1 / (double)RB_GIB : 1 / (double)RB_MIB,
                  true);
    rb_plot_caption(tp, "One level line per --interval from intervals.jsonl, over the interval it covers: bytes moved "
                        "in the interval over its length (a phase shorter than an interval is one short line); "
                        "shaded: the phases, in the order they ran.");
    rb_plot_xaxis(lp, "time since the run started (s)", RB_AXIS_LINEAR, 1, true);
    rb_plot_yaxis(lp, "latency (ms, log scale)", RB_AXIS_LOG10, 1e-6, false);
    rb_plot_caption(lp, "p50 and p99 of the requests completed in each interval (intervals without requests have "
                        "none).");
    double xmax = timeline_points(s, tp, lp);
    rb_plot_xrange(tp, 0, xmax);
    rb_plot_xrange(lp, 0, xmax);
    rb_report_plot_emit(tp, html);
    rb_report_plot_emit(lp, html);
}

void rb_report_plot_latency(const struct rb_report_set *s, struct rb_buf *html)
{
    double max = 0;
    for (size_t i = 0; i < s->n; i++)
        for (size_t k = 0; k < s->runs[i]->ncurves; k++)
            for (size_t j = 0; j < s->runs[i]->curves[k].n; j++)
                max = fmax(max, s->runs[i]->curves[k].lat_ns[j]);
    const char *title = "latency (ns, log scale)";
    double scale = 1;
    if (max >= 1e6) {
        title = "latency (ms, log scale)";
        scale = 1e-6;
    } else if (max >= 1e3) {
        title = "latency (us, log scale)";
        scale = 1e-3;
    }
    struct rb_plot *p = rb_plot_new("latency-percentiles", "Latency by percentile, per phase");
    if (!p)
        return;
    rb_plot_xaxis(p, "percentile (log scale of 1/(1 - q))", RB_AXIS_PERCENTILE, 1, false);
    rb_plot_yaxis(p, title, RB_AXIS_LOG10, scale, false);
    rb_plot_caption(p, "From each phase's full latency histogram (every sample of every rank, nearest rank); "
                       "a curve stops where its samples no longer resolve the percentile.");
    for (size_t i = 0; i < s->n; i++) {
        const struct rb_rundir *r = s->runs[i];
        for (size_t k = 0; k < r->ncurves; k++) {
            int si = rb_report_series(p, s, i, r->curves[k].phase);
            for (size_t j = 0; j < r->curves[k].n; j++)
                rb_plot_point(p, si, r->curves[k].q_pct[j], r->curves[k].lat_ns[j]);
        }
    }
    rb_report_plot_emit(p, html);
}
