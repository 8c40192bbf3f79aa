/* Report of `load sweep`: throughput and latency as the load grows, and the knee where throughput stops growing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_int.h"

/* Index of the knee point in sweep_points, or -1 (knee null or missing). */
static int knee_index(const struct rb_rundir *r)
{
    double k = rb_rundir_num(r->summary, "knee.index");
    int n = cJSON_GetArraySize(rb_rundir_array(r->summary, "sweep_points"));
    return isfinite(k) && k >= 0 && k < n && k == floor(k) ? (int)k : -1;
}

static void tables(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "sweep", "Sweep: throughput and latency as load grows");
    if (!t)
        return;
    const double ms = 1e-6;
    rb_rtable_col(t, "inflight", "in flight", RB_RF_NUM, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "rate_per_s", "rate (/s)", RB_RF_NUM, 0, 1, RB_RCOL_KEY | RB_RCOL_OPTIONAL);
    rb_rtable_col(t, "throughput_bytes_per_s", "MiB/s", RB_RF_NUM, 2, 1 / (double)RB_MIB, 0);
    rb_rtable_col(t, "ops_per_s", "ops/s", RB_RF_NUM, 1, 1, 0);
    rb_rtable_col(t, "latency_avg_ns", "avg (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "latency_p50_ns", "p50 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "latency_p99_ns", "p99 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "knee", "", RB_RF_TEXT, 0, 1, RB_RCOL_NOTE);
    static const char *const figs[] = {"inflight",       "rate_per_s",     "throughput_bytes_per_s", "ops_per_s",
                                       "latency_avg_ns", "latency_p50_ns", "latency_p99_ns"};
    for (size_t i = 0; i < s->n; i++) {
        const struct rb_rundir *run = s->runs[i];
        int knee = knee_index(run), k = 0;
        const cJSON *pt;
        cJSON_ArrayForEach(pt, rb_rundir_array(run->summary, "sweep_points"))
        {
            size_t r = rb_report_row(t, s, i);
            for (size_t f = 0; f < sizeof figs / sizeof figs[0]; f++)
                rb_rtable_num(t, r, figs[f], rb_rundir_num(pt, figs[f]));
            if (k++ == knee)
                rb_rtable_text(t, r, "knee", "knee");
        }
        if (knee >= 0) {
            const cJSON *p = cJSON_GetArrayItem(rb_rundir_array(run->summary, "sweep_points"), knee);
            double rate = rb_rundir_num(run->summary, "knee.rate_per_s");
            char at[64] = "";
            if (rate > 0)
                snprintf(at, sizeof at, " at %.0f/s", rate);
            char inflight[32], mibs[32], p99[32];
            rb_report_note(t, s, i,
                           "knee: %s in flight%s, %s MiB/s at p99 %s ms: the last point before throughput stops "
                           "growing while latency climbs",
                           rb_report_fig(inflight, sizeof inflight, rb_rundir_num(run->summary, "knee.inflight"), 1, 0),
                           at, rb_report_fig(mibs, sizeof mibs, rb_rundir_num(p, "throughput_bytes_per_s"), 1 / (double)RB_MIB, 2),
                           rb_report_fig(p99, sizeof p99, rb_rundir_num(p, "latency_p99_ns"), ms, 3));
        } else {
            rb_report_note(t, s, i, "no knee: throughput kept growing with load (or the sweep has too few points)");
        }
    }
}

/* Latency against throughput, the knee circled: where more load buys latency, not throughput. */
static void plot_curve(const struct rb_report_set *s, struct rb_buf *html)
{
    struct rb_plot *p = rb_plot_new("sweep-knee", "Sweep: p99 latency against throughput");
    if (!p)
        return;
    rb_plot_xaxis(p, "throughput (MiB/s)", RB_AXIS_LINEAR, 1 / (double)RB_MIB, true);
    rb_plot_yaxis(p, "p99 latency (ms, log scale)", RB_AXIS_LOG10, 1e-6, false);
    rb_plot_caption(p, "One point per sweep step, labelled with its load (requests in flight, or the rate of an "
                       "open loop); the circle is the knee.");
    for (size_t i = 0; i < s->n; i++) {
        int si = rb_report_series(p, s, i, "p99 by step"), k = 0, knee = knee_index(s->runs[i]);
        const cJSON *pt;
        cJSON_ArrayForEach(pt, rb_rundir_array(s->runs[i]->summary, "sweep_points"))
        {
            double x = rb_rundir_num(pt, "throughput_bytes_per_s"), y = rb_rundir_num(pt, "latency_p99_ns");
            double rate = rb_rundir_num(pt, "rate_per_s"), inflight = rb_rundir_num(pt, "inflight");
            char step[64], n[32];
            if (rate > 0)
                snprintf(step, sizeof step, "%.0f/s", rate);
            else
                snprintf(step, sizeof step, "%s in flight", rb_report_fig(n, sizeof n, inflight, 1, 0));
            rb_plot_point_label(p, si, x, y, step);
            if (k++ == knee) {
                char label[96];
                snprintf(label, sizeof label, "knee: %.0f in flight", rb_rundir_num(pt, "inflight"));
                rb_plot_mark(p, x, y, label);
            }
        }
    }
    rb_report_plot_emit(p, html);
}

static void plots(const struct rb_report_set *s, struct rb_buf *html)
{
    rb_report_plot_latency(s, html);
}

RB_REPORT_KIND(sweep, 30) = {"load sweep", tables, plot_curve, plots};
