/* Report of `load tiers`: the table storage vendors publish (GET from/how, object size, GiB/s, latency, disk util). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_int.h"

static void tables(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "tiers", "Tiers: direct, cold and warm reads (AIStore-style)");
    if (!t)
        return;
    const double ms = 1e-6;
    rb_rtable_col(t, "how", "how", RB_RF_TEXT, 0, 1, RB_RCOL_KEY | RB_RCOL_JSON_ONLY);
    rb_rtable_col(t, "label", "GET from/how", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "size_bytes", "object size", RB_RF_SIZE, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "phase", "phase", RB_RF_TEXT, 0, 1, RB_RCOL_JSON_ONLY);
    rb_rtable_col(t, "objects", "objects", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "throughput_bytes_per_s", "throughput (GiB/s)", RB_RF_NUM, 3, 1 / (double)RB_GIB, 0);
    rb_rtable_col(t, "ops_per_s", "obj/s", RB_RF_NUM, 1, 1, 0);
    rb_rtable_col(t, "latency_avg_ns", "latency avg (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "latency_p99_ns", "latency p99 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "ttfb_p50_ns", "TTFB p50 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "disk_util_ratio", "avg disk util (%)", RB_RF_NUM, 1, 100, 0);
    rb_rtable_col(t, "net_bytes_per_s", "network (MiB/s)", RB_RF_NUM, 1, 1 / (double)RB_MIB, 0);
    rb_rtable_col(t, "cache_hit", "cache hits", RB_RF_NUM, 0, 1, RB_RCOL_OPTIONAL);
    rb_rtable_col(t, "cache_miss", "cache misses", RB_RF_NUM, 0, 1, RB_RCOL_OPTIONAL);
    static const char *const figs[] = {"objects",        "throughput_bytes_per_s", "ops_per_s",       "latency_avg_ns",
                                       "latency_p99_ns", "ttfb_p50_ns",            "disk_util_ratio", "net_bytes_per_s",
                                       "cache_hit",      "cache_miss",             "size_bytes"};
    bool no_net = false, no_disk = false, direct = false;
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *row;
        cJSON_ArrayForEach(row, rb_rundir_array(s->runs[i]->summary, "tiers_rows"))
        {
            no_net |= !isfinite(rb_rundir_num(row, "net_bytes_per_s"));
            no_disk |= !isfinite(rb_rundir_num(row, "disk_util_ratio"));
            direct |= !isfinite(rb_rundir_num(row, "cache_hit")) && !isfinite(rb_rundir_num(row, "cache_miss"));
            size_t r = rb_report_row(t, s, i);
            rb_rtable_text(t, r, "how", rb_rundir_str(row, "how"));
            const char *label = rb_rundir_str(row, "label");
            rb_rtable_text(t, r, "label", label ? label : rb_rundir_str(row, "how"));
            rb_rtable_text(t, r, "phase", rb_rundir_str(row, "phase"));
            for (size_t k = 0; k < sizeof figs / sizeof figs[0]; k++)
                rb_rtable_num(t, r, figs[k], rb_rundir_num(row, figs[k]));
        }
        const cJSON *ok = cJSON_GetObjectItemCaseSensitive(s->runs[i]->summary, "checks_passed");
        if (cJSON_IsBool(ok))
            rb_report_note(t, s, i, "checks: %s", cJSON_IsTrue(ok) ? "passed (cold reads verified as misses, warm as hits)"
                                                            : "FAILED");
    }

    /* Why a figure is –, once each (the run's own table says the same). */
    if (no_net)
        rb_rtable_note(t, "network –: not measured where the target was on loopback (the interface counters leave "
                          "lo out)");
    if (no_disk)
        rb_rtable_note(t, "avg disk util –: not measured where the storage was on another host (its disks are not "
                          "this host's) or no block device could be read");
    if (direct)
        rb_rtable_note(t, "cache hits, misses –: direct reads do not pass the tier (or the tier sent no cache "
                          "header)");
    struct rb_rtable *sp = rb_report_table(out, s, "tiers-speedup", "Tiers: speedup of warm reads");
    if (!sp)
        return;
    rb_rtable_col(sp, "size_bytes", "object size", RB_RF_SIZE, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(sp, "warm_over_direct", "warm / direct (x)", RB_RF_NUM, 2, 1, 0);
    rb_rtable_col(sp, "warm_over_cold", "warm / cold (x)", RB_RF_NUM, 2, 1, 0);
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *row;
        cJSON_ArrayForEach(row, rb_rundir_array(s->runs[i]->summary, "speedups"))
        {
            size_t r = rb_report_row(sp, s, i);
            rb_rtable_num(sp, r, "size_bytes", rb_rundir_num(row, "size_bytes"));
            rb_rtable_num(sp, r, "warm_over_direct", rb_rundir_num(row, "warm_over_direct"));
            rb_rtable_num(sp, r, "warm_over_cold", rb_rundir_num(row, "warm_over_cold"));
        }
    }
    rb_rtable_note(sp, "throughput of warm reads over that of direct and of cold reads, per object size");
}

/* Throughput of the tiers row of run r read "how" at size_bytes, or NAN. */
static double row_throughput(const struct rb_rundir *r, const char *how, double size_bytes)
{
    const cJSON *row;
    cJSON_ArrayForEach(row, rb_rundir_array(r->summary, "tiers_rows"))
    {
        const char *h = rb_rundir_str(row, "how");
        if (h && strcmp(h, how) == 0 && rb_rundir_num(row, "size_bytes") == size_bytes)
            return rb_rundir_num(row, "throughput_bytes_per_s");
    }
    return NAN;
}

/*
 * The headline: grouped bars of direct, cold and warm per object size, each
 * labelled with its GiB/s and, for cold and warm, the speed-up over direct.
 */
static void plot_bars(const struct rb_report_set *s, struct rb_buf *html)
{
    struct rb_plot *p = rb_plot_new("tiers-bars", "Throughput by object size: direct, cold and warm reads");
    if (!p)
        return;
    rb_plot_style(p, RB_PLOT_BARS);
    rb_plot_xaxis(p, "object size", RB_AXIS_LINEAR, 1, false);
    rb_plot_yaxis(p, "throughput (GiB/s)", RB_AXIS_LINEAR, 1 / (double)RB_GIB, true);
    rb_plot_caption(p, "Each bar: GiB/s of one phase; on cold and warm bars, the speed-up over direct reads of the "
                       "same size (x = times as fast).");
    static const char *const hows[] = {"direct", "cold", "warm"};
    int series[3] = {-1, -1, -1};
    for (size_t h = 0; h < 3; h++)
        series[h] = rb_plot_series(p, hows[h]);
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *row;
        cJSON_ArrayForEach(row, rb_rundir_array(s->runs[i]->summary, "tiers_rows"))
        {
            const char *how = rb_rundir_str(row, "how");
            double size = rb_rundir_num(row, "size_bytes"), bps = rb_rundir_num(row, "throughput_bytes_per_s");
            size_t h = 0;
            while (h < 3 && (!how || strcmp(how, hows[h]) != 0))
                h++;
            if (h == 3 || !isfinite(size))
                continue;
            char sz[32], cat[300], label[64];
            rb_report_size(sz, sizeof sz, size);
            rb_report_series_name(cat, sizeof cat, s, i, sz);
            double direct = row_throughput(s->runs[i], "direct", size);
            if (h > 0 && direct > 0 && isfinite(bps))
                snprintf(label, sizeof label, "%.2f (%.1f\xC3\x97)", bps / (double)RB_GIB, bps / direct);
            else
                snprintf(label, sizeof label, "%.2f", bps / (double)RB_GIB);
            rb_plot_point_label(p, series[h], rb_plot_category(p, cat), bps, label);
        }
    }
    rb_report_plot_emit(p, html);
}

static void plots(const struct rb_report_set *s, struct rb_buf *html)
{
    rb_report_plot_timeline(s, html);
    rb_report_plot_latency(s, html);
}

RB_REPORT_KIND(tiers, 20) = {"load tiers", tables, plot_bars, plots};
