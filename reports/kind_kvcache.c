/* Report of `load kvcache`: MLPerf Storage's KV-cache figures per trial, and each rank's read and write bandwidth. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_int.h"

static void tables(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "kvcache", "KV-cache offload: each trial (MLPerf Storage v3.0)");
    if (!t)
        return;
    const double ms = 1e-6;
    rb_rtable_col(t, "trial", "trial", RB_RF_NUM, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "read_bytes_per_s", "read GB/s", RB_RF_NUM, 3, 1e-9, 0);
    rb_rtable_col(t, "write_bytes_per_s", "write GB/s", RB_RF_NUM, 3, 1e-9, 0);
    rb_rtable_col(t, "tokens_per_s", "tokens/s", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "device_read_p95_ns", "device read p95 (ms, max rank)", RB_RF_NUM, 2, ms, 0);
    rb_rtable_col(t, "device_read_p95_merged_ns", "device read p95 (ms, merged)", RB_RF_NUM, 2, ms, 0);
    rb_rtable_col(t, "device_write_p95_ns", "device write p95 (ms, max rank)", RB_RF_NUM, 2, ms, 0);
    rb_rtable_col(t, "device_write_p95_merged_ns", "device write p95 (ms, merged)", RB_RF_NUM, 2, ms, 0);
    rb_rtable_col(t, "host_device_ratio", "host/device", RB_RF_NUM, 4, 1, 0);
    static const char *const figs[] = {"trial", "read_bytes_per_s", "write_bytes_per_s", "tokens_per_s",
                                       "device_read_p95_ns", "device_read_p95_merged_ns", "device_write_p95_ns",
                                       "device_write_p95_merged_ns", "host_device_ratio"};
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *sum = s->runs[i]->summary, *tr;
        cJSON_ArrayForEach(tr, rb_rundir_array(sum, "trials"))
        {
            size_t r = rb_report_row(t, s, i);
            for (size_t k = 0; k < sizeof figs / sizeof figs[0]; k++)
                rb_rtable_num(t, r, figs[k], rb_rundir_num(tr, figs[k]));
        }
        double opt = rb_rundir_num(sum, "option");
        rb_report_note(t, s, i, "%s%.0f %s: %.0f bytes per token, %.0f users and %.0f in flight per rank, scale %s",
                       isfinite(opt) ? "option " : "custom", isfinite(opt) ? opt : 0, rb_rundir_str(sum, "model.name"),
                       rb_rundir_num(sum, "model.bytes_per_token"), rb_rundir_num(sum, "users_per_rank"),
                       rb_rundir_num(sum, "inflight_per_rank"),
                       rb_rundir_str(sum, "scale") ? rb_rundir_str(sum, "scale") : "1");
    }
    rb_rtable_note(t, "GB/s and tokens/s: summed over ranks; max rank: the largest of the ranks' p95s (MLPerf "
                      "Storage's figure); merged: the p95 of every rank's operations together; device: the file "
                      "system's calls (open to close, fsync included) or the object request; host: the rest");
}

/* The headline: each rank's read and write bandwidth, mean over the trials. */
static void plot_ranks(const struct rb_report_set *s, struct rb_buf *html)
{
    struct rb_plot *p = rb_plot_new("kvcache-ranks", "KV-cache read and write bandwidth per rank");
    if (!p)
        return;
    rb_plot_style(p, RB_PLOT_BARS);
    rb_plot_xaxis(p, "rank", RB_AXIS_LINEAR, 1, false);
    rb_plot_yaxis(p, "GB/s, mean over trials", RB_AXIS_LINEAR, 1e-9, true);
    rb_plot_caption(p, "Each bar: one rank's bytes read from (or written to) storage over its trial time, the mean "
                       "over trials; the option's figure is their sum.");
    int rs = rb_plot_series(p, "read"), ws = rb_plot_series(p, "write");
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *trials = rb_rundir_array(s->runs[i]->summary, "trials");
        const cJSON *first = cJSON_GetArrayItem(trials, 0);
        int nranks = cJSON_GetArraySize(cJSON_GetObjectItem(first, "ranks"));
        for (int k = 0; k < nranks && k < 4096; k++) {
            double rsum = 0, wsum = 0;
            int n = 0;
            const cJSON *tr;
            cJSON_ArrayForEach(tr, trials)
            {
                const cJSON *rk = cJSON_GetArrayItem(cJSON_GetObjectItem(tr, "ranks"), k);
                rsum += rb_rundir_num(rk, "read_bytes_per_s");
                wsum += rb_rundir_num(rk, "write_bytes_per_s");
                n++;
            }
            char name[64], cat[300];
            snprintf(name, sizeof name, "rank %d", k);
            rb_report_series_name(cat, sizeof cat, s, i, name);
            int c = rb_plot_category(p, cat);
            if (n && isfinite(rsum))
                rb_plot_point(p, rs, c, rsum / n);
            if (n && isfinite(wsum))
                rb_plot_point(p, ws, c, wsum / n);
        }
    }
    rb_report_plot_emit(p, html);
}

/* Latency by tier and op over each trial: the p95 of every rank's operations of each interval. */
static void plot_latency(const struct rb_report_set *s, struct rb_buf *html)
{
    static const char *const series[] = {"storage_write", "storage_read", "cpu_write", "cpu_read"};
    static const char *const label[] = {"storage write", "storage read", "CPU tier write", "CPU tier read"};
    struct rb_plot *p = rb_plot_new("kvcache-latency", "KV-cache latency by tier and op over time (p95 per interval)");
    if (!p)
        return;
    rb_plot_xaxis(p, "time in the trial (s)", RB_AXIS_LINEAR, 1, true);
    rb_plot_yaxis(p, "p95 latency (ms)", RB_AXIS_LOG10, 1e-6, false);
    rb_plot_caption(p, "Each point: the 95th percentile of the interval's operations of that tier and op over every "
                       "rank (storage: device and host time; CPU tier: the copy). Later trials dashed.");
    bool any = false;
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *tr;
        cJSON_ArrayForEach(tr, rb_rundir_array(s->runs[i]->summary, "trials"))
        {
            double k = rb_rundir_num(tr, "trial");
            for (size_t j = 0; j < sizeof series / sizeof series[0]; j++) {
                const cJSON *pt;
                int n = 0;
                cJSON_ArrayForEach(pt, rb_rundir_array(tr, "timeline"))
                    n += isfinite(rb_rundir_num(cJSON_GetObjectItem(pt, series[j]), "p95_ns"));
                if (!n)
                    continue; /* a tier that was off, an op that never ran */
                char what[96], name[300];
                snprintf(what, sizeof what, "%s, trial %.0f", label[j], k);
                rb_report_series_name(name, sizeof name, s, i, what);
                int ser = rb_plot_series_keyed(p, name, label[j], k > 1);
                cJSON_ArrayForEach(pt, rb_rundir_array(tr, "timeline"))
                    rb_plot_point(p, ser, rb_rundir_num(pt, "t_s"),
                                  rb_rundir_num(cJSON_GetObjectItem(pt, series[j]), "p95_ns"));
                any = true;
            }
        }
    }
    if (any)
        rb_report_plot_emit(p, html);
    else
        rb_plot_free(p);
}

static void plots(const struct rb_report_set *s, struct rb_buf *html)
{
    plot_latency(s, html);
    rb_report_plot_timeline(s, html);
    rb_report_plot_latency(s, html);
}

RB_REPORT_KIND(kvcache, 11) = {"load kvcache", tables, plot_ranks, plots};
