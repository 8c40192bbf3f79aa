/* Report of a load run's request phases (--phases) and slowest requests (--slowest): two tables, when recorded. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_int.h"

/* The spans as result.json names them (loader/engine/rphase.c), in the order a request meets them. */
static const char *const spans[] = {"queue", "connect", "tls", "send", "first_byte", "body",
                                    "open", "first_io", "last_io", "fsync", "close"};
#define NSPANS (sizeof spans / sizeof spans[0])

/* Whether row has key, recorded (not null, not an empty list). */
static bool row_has(const cJSON *row, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key);
    return v && !cJSON_IsNull(v) && !(cJSON_IsArray(v) && !cJSON_GetArraySize(v));
}

/* Whether some op row of a run of s (or its total: load mixed keeps its slowest requests there) has key. */
static bool any_row_has(const struct rb_report_set *s, const char *key)
{
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *op;
        cJSON_ArrayForEach(op, rb_rundir_array(s->runs[i]->summary, "ops"))
        if (row_has(op, key))
            return true;
        if (row_has(cJSON_GetObjectItemCaseSensitive(s->runs[i]->summary, "total"), key))
            return true;
    }
    return false;
}

/* One row per op: each span's mean and p99, and the latency their sum is. */
static void phases_table(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "load_phases", "Request phases: each span's mean and p99 (ms); the "
                                                                 "means sum to the latency's");
    if (!t)
        return;
    const double ms = 1e-6;
    rb_rtable_col(t, "op", "op", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "phase", "phase", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "requests", "requests", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "latency_mean", "latency avg", RB_RF_NUM, 3, ms, 0);
    char key[64], head[64];
    for (size_t k = 0; k < NSPANS; k++) {
        snprintf(key, sizeof key, "%s_mean", spans[k]);
        snprintf(head, sizeof head, "%s avg", spans[k]);
        rb_rtable_col(t, key, head, RB_RF_NUM, 3, ms, RB_RCOL_OPTIONAL);
        snprintf(key, sizeof key, "%s_p99", spans[k]);
        snprintf(head, sizeof head, "%s p99", spans[k]);
        rb_rtable_col(t, key, head, RB_RF_NUM, 3, ms, RB_RCOL_OPTIONAL);
    }
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *op;
        cJSON_ArrayForEach(op, rb_rundir_array(s->runs[i]->summary, "ops"))
        {
            const cJSON *p = cJSON_GetObjectItemCaseSensitive(op, "request_phases");
            if (!cJSON_IsObject(p))
                continue;
            size_t r = rb_report_row(t, s, i);
            rb_rtable_text(t, r, "op", rb_rundir_str(op, "op"));
            rb_rtable_text(t, r, "phase", rb_rundir_str(op, "phase"));
            rb_rtable_num(t, r, "requests", rb_rundir_num(p, "requests"));
            rb_rtable_num(t, r, "latency_mean", rb_rundir_num(p, "total_ns.mean"));
            for (size_t k = 0; k < NSPANS; k++) {
                char path[64];
                snprintf(key, sizeof key, "%s_mean", spans[k]);
                snprintf(path, sizeof path, "spans.%s.mean", spans[k]);
                rb_rtable_num(t, r, key, rb_rundir_num(p, path));
                snprintf(key, sizeof key, "%s_p99", spans[k]);
                snprintf(path, sizeof path, "spans.%s.p99", spans[k]);
                rb_rtable_num(t, r, key, rb_rundir_num(p, path));
            }
        }
    }
}

/* The rows of the requests kept in row's "slowest" (an op row, or load mixed's total). */
static void slowest_rows(struct rb_rtable *t, const struct rb_report_set *s, size_t i, const cJSON *row)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, rb_rundir_array(row, "slowest"))
    {
        size_t r = rb_report_row(t, s, i);
        char st[48];
        const char *err = rb_rundir_str(e, "error");
        double status = rb_rundir_num(e, "status");
        if (err)
            snprintf(st, sizeof st, "%s", err);
        else if (isfinite(status))
            snprintf(st, sizeof st, "%.0f", status);
        else
            snprintf(st, sizeof st, "–");
        rb_rtable_text(t, r, "phase", rb_rundir_str(row, "phase"));
        rb_rtable_text(t, r, "id", rb_rundir_str(e, "id"));
        rb_rtable_text(t, r, "op", rb_rundir_str(e, "op"));
        rb_rtable_text(t, r, "object", rb_rundir_str(e, "object"));
        rb_rtable_num(t, r, "latency", rb_rundir_num(e, "latency_ns"));
        rb_rtable_text(t, r, "status", st);
        rb_rtable_text(t, r, "host", rb_rundir_str(e, "host"));
        rb_rtable_text(t, r, "endpoint", rb_rundir_str(e, "endpoint"));
        for (size_t k = 0; k < NSPANS; k++) {
            char path[64];
            snprintf(path, sizeof path, "phases_ns.%s", spans[k]);
            rb_rtable_num(t, r, spans[k], rb_rundir_num(e, path));
        }
    }
}

/* One row per kept request, slowest first within each op row: who it was and where its time went. */
static void slowest_table(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "load_slowest", "Slowest requests (ms)");
    if (!t)
        return;
    const double ms = 1e-6;
    rb_rtable_col(t, "phase", "phase", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "id", "id", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "op", "op", RB_RF_TEXT, 0, 1, 0);
    rb_rtable_col(t, "object", "object", RB_RF_TEXT, 0, 1, 0);
    rb_rtable_col(t, "latency", "latency", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "status", "status", RB_RF_TEXT, 0, 1, 0);
    rb_rtable_col(t, "host", "host", RB_RF_TEXT, 0, 1, 0);
    rb_rtable_col(t, "endpoint", "endpoint", RB_RF_TEXT, 0, 1, RB_RCOL_OPTIONAL);
    for (size_t k = 0; k < NSPANS; k++)
        rb_rtable_col(t, spans[k], spans[k], RB_RF_NUM, 3, ms, RB_RCOL_OPTIONAL);
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *summary = s->runs[i]->summary, *op;
        cJSON_ArrayForEach(op, rb_rundir_array(summary, "ops"))
        slowest_rows(t, s, i, op);
        slowest_rows(t, s, i, cJSON_GetObjectItemCaseSensitive(summary, "total")); /* load mixed's, over its ops */
    }
}

/*
 * The latency breakdown by percentile: per op (and run), a bar at p50, p90,
 * p99 and p99.9 of its latency, stacked with the mean of each span over the
 * requests whose latency lies in that percentile's power-of-two band.
 */
void rb_report_plot_load_phases(const struct rb_report_set *s, struct rb_buf *html)
{
    if (!any_row_has(s, "request_phases"))
        return;
    struct rb_plot *p = rb_plot_new("latency-phases", "Latency breakdown by percentile: where the requests' time went");
    if (!p)
        return;
    rb_plot_style(p, RB_PLOT_STACKED);
    rb_plot_xaxis(p, "latency percentile", RB_AXIS_LINEAR, 1, false);
    rb_plot_yaxis(p, "mean time in each phase (ms)", RB_AXIS_LINEAR, 1e-6, true);
    int series[NSPANS];
    for (size_t k = 0; k < NSPANS; k++)
        series[k] = -1;
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *op;
        cJSON_ArrayForEach(op, rb_rundir_array(s->runs[i]->summary, "ops"))
        {
            const cJSON *b;
            cJSON_ArrayForEach(b, rb_rundir_array(op, "request_phases.by_percentile"))
            {
                char what[96], cat[300], lat[32];
                const char *name = rb_rundir_str(op, "phase");
                snprintf(what, sizeof what, "%s p%g (%s ms)", name ? name : "?", rb_rundir_num(b, "percentile"),
                         rb_report_fig(lat, sizeof lat, rb_rundir_num(b, "latency_ns"), 1e-6, 3));
                rb_report_series_name(cat, sizeof cat, s, i, what);
                int c = rb_plot_category(p, cat);
                for (size_t k = 0; k < NSPANS; k++) {
                    char path[64];
                    snprintf(path, sizeof path, "mean_ns.%s", spans[k]);
                    double v = rb_rundir_num(b, path);
                    if (!isfinite(v))
                        continue;
                    if (series[k] < 0)
                        series[k] = rb_plot_series(p, spans[k]);
                    rb_plot_point(p, series[k], c, v);
                }
            }
        }
    }
    rb_plot_caption(p, "Each bar: the latency at that percentile; its stack, the mean of each phase over the requests "
                       "whose latency lies in the same power-of-two band ([2^(b-1), 2^b) ns) as that percentile's "
                       "value, so a stack's height is about, not exactly, the percentile's latency. The phases are "
                       "consecutive spans of each request that sum to its latency (--phases).");
    rb_report_plot_emit(p, html);
}

void rb_report_load_phases(const struct rb_report_set *s, struct rb_report_tables *out)
{
    if (any_row_has(s, "request_phases"))
        phases_table(s, out);
    if (any_row_has(s, "slowest"))
        slowest_table(s, out);
}
