/* Report of `load get|put`: warp's per-operation report (MiB/s, obj/s, latency and TTFB percentiles, segments). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "railbench/load_errors.h"
#include "report_int.h"

/* Error classes of the loader, in its order. */
static const char *const err_classes[] = {RB_LOAD_ERR_NAMES};

static void run_notes(struct rb_rtable *t, const struct rb_report_set *s, size_t i)
{
    const cJSON *sum = s->runs[i]->summary;
    const char *target = rb_rundir_str(sum, "target");
    double ranks = rb_rundir_num(sum, "ranks"), threads = rb_rundir_num(sum, "threads"),
           inflight = rb_rundir_num(sum, "inflight"), rate = rb_rundir_num(sum, "rate_per_s");
    char loop[160];
    double achieved = rb_rundir_num(sum, "achieved_rate_per_s");
    if (rate > 0 && isfinite(achieved))
        snprintf(loop, sizeof loop, "open loop: target %.0f requests/s, achieved %.0f (latency from the intended send time)",
                 rate, achieved);
    else if (rate > 0)
        snprintf(loop, sizeof loop, "open loop at %.0f requests/s (latency from the intended send time)", rate);
    else
        snprintf(loop, sizeof loop, "closed loop");
    if (isfinite(ranks) && isfinite(threads) && isfinite(inflight))
        rb_report_note(t, s, i, "%s: %.0f rank(s) x %.0f thread(s) x %.0f in flight, %s", target ? target : "target", ranks,
                threads, inflight, loop);

    const cJSON *op;
    cJSON_ArrayForEach(op, rb_rundir_array(sum, "ops"))
    {
        char errs[512] = "";
        size_t n = 0;
        const cJSON *errors = cJSON_GetObjectItemCaseSensitive(op, "errors");
        for (size_t k = 0; k < sizeof err_classes / sizeof err_classes[0]; k++) {
            double v = rb_rundir_num(errors, err_classes[k]);
            if (v > 0 && n < sizeof errs)
                n += (size_t)snprintf(errs + n, sizeof errs - n, "%s%s %.0f", n ? ", " : "", err_classes[k], v);
        }
        const char *name = rb_rundir_str(op, "phase");
        if (n)
            rb_report_note(t, s, i, "%s errors: %s", name ? name : "?", errs);
        double hit = rb_rundir_num(op, "extra.cache_hit"), miss = rb_rundir_num(op, "extra.cache_miss"),
               other = rb_rundir_num(op, "extra.cache_other"), absent = rb_rundir_num(op, "extra.cache_absent");
        char f[4][32];
        if (hit > 0 || miss > 0 || other > 0)
            rb_report_note(t, s, i, "%s cache status: hit %s, miss %s, other %s, absent %s", name ? name : "?",
                           rb_report_fig(f[0], sizeof f[0], hit, 1, 0), rb_report_fig(f[1], sizeof f[1], miss, 1, 0),
                           rb_report_fig(f[2], sizeof f[2], other, 1, 0), rb_report_fig(f[3], sizeof f[3], absent, 1, 0));
        double redirects = rb_rundir_num(op, "extra.redirects");
        if (redirects > 0)
            rb_report_note(t, s, i, "%s redirects followed: %.0f", name ? name : "?", redirects);
    }
}

static void tables(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "load", "Object load: per operation (warp-style)");
    if (!t)
        return;
    const double ms = 1e-6;
    rb_rtable_col(t, "op", "op", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "phase", "phase", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "requests", "requests", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "errors", "errors", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "throughput_bytes_per_s", "MiB/s", RB_RF_NUM, 2, 1 / (double)RB_MIB, 0);
    rb_rtable_col(t, "ops_per_s", "obj/s", RB_RF_NUM, 1, 1, 0);
    rb_rtable_col(t, "latency_mean_ns", "avg (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "latency_p50_ns", "p50 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "latency_p90_ns", "p90 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "latency_p99_ns", "p99 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "latency_p999_ns", "p99.9 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "latency_max_ns", "max (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "latency_uncorrected_p99_ns", "p99 uncorrected (ms)", RB_RF_NUM, 3, ms, RB_RCOL_OPTIONAL);
    rb_rtable_col(t, "ttfb_mean_ns", "TTFB avg (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "ttfb_p50_ns", "TTFB p50 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "ttfb_p99_ns", "TTFB p99 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "segment_fastest_bytes_per_s", "fastest 1 s (MiB/s)", RB_RF_NUM, 2, 1 / (double)RB_MIB, RB_RCOL_OPTIONAL);
    rb_rtable_col(t, "segment_median_bytes_per_s", "median 1 s (MiB/s)", RB_RF_NUM, 2, 1 / (double)RB_MIB, RB_RCOL_OPTIONAL);
    rb_rtable_col(t, "segment_slowest_bytes_per_s", "slowest 1 s (MiB/s)", RB_RF_NUM, 2, 1 / (double)RB_MIB, RB_RCOL_OPTIONAL);
    /* HEAD and DELETE move no bytes: their 1-second segments are requests per second. */
    rb_rtable_col(t, "segment_fastest_ops_per_s", "fastest 1 s (op/s)", RB_RF_NUM, 0, 1, RB_RCOL_OPTIONAL);
    rb_rtable_col(t, "segment_median_ops_per_s", "median 1 s (op/s)", RB_RF_NUM, 0, 1, RB_RCOL_OPTIONAL);
    rb_rtable_col(t, "segment_slowest_ops_per_s", "slowest 1 s (op/s)", RB_RF_NUM, 0, 1, RB_RCOL_OPTIONAL);
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *op;
        cJSON_ArrayForEach(op, rb_rundir_array(s->runs[i]->summary, "ops"))
        {
            size_t r = rb_report_row(t, s, i);
            rb_rtable_text(t, r, "op", rb_rundir_str(op, "op"));
            rb_rtable_text(t, r, "phase", rb_rundir_str(op, "phase"));
            rb_rtable_num(t, r, "requests", rb_rundir_num(op, "requests"));
            rb_rtable_num(t, r, "errors", rb_rundir_num(op, "errors.total"));
            rb_rtable_num(t, r, "throughput_bytes_per_s", rb_rundir_num(op, "throughput_bytes_per_s"));
            rb_rtable_num(t, r, "ops_per_s", rb_rundir_num(op, "ops_per_s"));
            rb_report_latency_cells(t, r, "latency", cJSON_GetObjectItemCaseSensitive(op, "latency_ns"));
            rb_report_latency_cells(t, r, "ttfb", cJSON_GetObjectItemCaseSensitive(op, "ttfb_ns"));
            if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(op, "open_loop")))
                rb_rtable_num(t, r, "latency_uncorrected_p99_ns", rb_rundir_num(op, "latency_uncorrected_ns.p99"));
            rb_rtable_num(t, r, "segment_fastest_bytes_per_s", rb_rundir_num(op, "segments.fastest_bytes_per_s"));
            rb_rtable_num(t, r, "segment_median_bytes_per_s", rb_rundir_num(op, "segments.median_bytes_per_s"));
            rb_rtable_num(t, r, "segment_slowest_bytes_per_s", rb_rundir_num(op, "segments.slowest_bytes_per_s"));
            rb_rtable_num(t, r, "segment_fastest_ops_per_s", rb_rundir_num(op, "segments.fastest_ops_per_s"));
            rb_rtable_num(t, r, "segment_median_ops_per_s", rb_rundir_num(op, "segments.median_ops_per_s"));
            rb_rtable_num(t, r, "segment_slowest_ops_per_s", rb_rundir_num(op, "segments.slowest_ops_per_s"));
        }
        run_notes(t, s, i);
    }
    rb_report_load_phases(s, out);
}

static void plots(const struct rb_report_set *s, struct rb_buf *html)
{
    rb_report_plot_latency(s, html);
    rb_report_plot_load_phases(s, html);
}

RB_REPORT_KIND(load, 50) = {"load get|put", tables, rb_report_plot_timeline, plots};
