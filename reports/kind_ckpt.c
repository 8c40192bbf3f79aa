/* Report of `load checkpoint`: MLPerf Storage's checkpoint table and each rank's write and read times, stragglers marked. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_int.h"

/* Whether rank k is among the stragglers of checkpoint record p. */
static bool is_straggler(const cJSON *p, double k)
{
    const cJSON *st;
    cJSON_ArrayForEach(st, rb_rundir_array(p, "stragglers"))
        if (rb_rundir_num(st, "rank") == k)
            return true;
    return false;
}

/* "yes", or why a checkpoint record is not a whole checkpoint (a record without the field: "yes"). */
static const char *complete_text(const cJSON *p)
{
    if (!cJSON_IsFalse(cJSON_GetObjectItem(p, "complete")))
        return "yes";
    return cJSON_IsTrue(cJSON_GetObjectItem(p, "interrupted")) ? "interrupted" : "incomplete";
}

/* A mean throughput in GB/s, or "–" where no checkpoint was whole. */
static void gbs(char *out, size_t len, double bytes_per_s)
{
    if (isfinite(bytes_per_s))
        snprintf(out, len, "%.3f GB/s", bytes_per_s / 1e9);
    else
        snprintf(out, len, "–");
}

static void tables(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "checkpoint", "Checkpoints: each write and read (MLPerf Storage)");
    if (!t)
        return;
    rb_rtable_col(t, "op", "op", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "checkpoint", "checkpoint", RB_RF_NUM, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "bytes", "GB", RB_RF_NUM, 3, 1e-9, 0);
    rb_rtable_col(t, "duration_s", "duration (s, slowest rank)", RB_RF_NUM, 3, 1, 0);
    rb_rtable_col(t, "throughput_bytes_per_s", "GB/s", RB_RF_NUM, 3, 1e-9, 0);
    rb_rtable_col(t, "min_rank_throughput_bytes_per_s", "min rank GB/s", RB_RF_NUM, 3, 1e-9, 0);
    rb_rtable_col(t, "stragglers", "stragglers", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "complete", "complete", RB_RF_TEXT, 0, 1, 0);
    static const char *const figs[] = {"checkpoint", "bytes", "duration_s", "throughput_bytes_per_s",
                                       "min_rank_throughput_bytes_per_s"};
    static const char *const lists[] = {"writes", "reads"};
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *sum = s->runs[i]->summary;
        for (size_t l = 0; l < 2; l++) {
            const cJSON *p;
            cJSON_ArrayForEach(p, rb_rundir_array(sum, lists[l]))
            {
                size_t r = rb_report_row(t, s, i);
                rb_rtable_text(t, r, "op", rb_rundir_str(p, "op"));
                for (size_t k = 0; k < sizeof figs / sizeof figs[0]; k++)
                    rb_rtable_num(t, r, figs[k], rb_rundir_num(p, figs[k]));
                rb_rtable_num(t, r, "stragglers", (double)cJSON_GetArraySize(cJSON_GetObjectItem(p, "stragglers")));
                rb_rtable_text(t, r, "complete", complete_text(p));
            }
        }
        char mw[32], mr[32];
        gbs(mw, sizeof mw, rb_rundir_num(sum, "write_mean.throughput_bytes_per_s"));
        gbs(mr, sizeof mr, rb_rundir_num(sum, "read_mean.throughput_bytes_per_s"));
        rb_report_note(t, s, i, "%s %s: %.3f GB per checkpoint, scale %s, %.0f process(es); mean of whole writes %s, "
                       "of whole reads %s", rb_rundir_str(sum, "model.name") ? rb_rundir_str(sum, "model.name") : "?",
                       rb_rundir_str(sum, "target") ? rb_rundir_str(sum, "target") : "?",
                       rb_rundir_num(sum, "checkpoint_bytes") / 1e9,
                       rb_rundir_str(sum, "scale") ? rb_rundir_str(sum, "scale") : "1", rb_rundir_num(sum, "processes"),
                       mw, mr);
    }
    rb_rtable_note(t, "duration: the slowest rank's time; GB/s: the checkpoint's bytes over it; min rank GB/s: the "
                      "slowest rank's own bytes over its time; stragglers: ranks below half the median throughput; "
                      "complete: a checkpoint cut short (interrupted) or with failed files (incomplete) has no "
                      "throughput and is not in the means");
}

/* The mean time of rank k over the records of list (NAN when none). */
static double mean_rank_time(const cJSON *list, double k, bool *straggler)
{
    double sum = 0;
    int n = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, list)
    {
        if (cJSON_IsFalse(cJSON_GetObjectItem(p, "complete")))
            continue; /* a checkpoint cut short is no rank's time */
        const cJSON *r;
        cJSON_ArrayForEach(r, rb_rundir_array(p, "ranks"))
            if (rb_rundir_num(r, "rank") == k) {
                sum += rb_rundir_num(r, "time_s");
                n++;
            }
        if (is_straggler(p, k))
            *straggler = true;
    }
    return n ? sum / n : NAN;
}

/* The headline: each rank's mean write and read time, bars labelled "straggler" where the rule named the rank. */
static void plot_ranks(const struct rb_report_set *s, struct rb_buf *html)
{
    struct rb_plot *p = rb_plot_new("checkpoint-ranks", "Checkpoint write and read time per rank");
    if (!p)
        return;
    rb_plot_style(p, RB_PLOT_BARS);
    rb_plot_xaxis(p, "rank", RB_AXIS_LINEAR, 1, false);
    rb_plot_yaxis(p, "time (s), mean over checkpoints", RB_AXIS_LINEAR, 1, true);
    rb_plot_caption(p, "Each bar: one rank's mean time to write (or read) its files of a checkpoint; a checkpoint "
                       "lasts as long as its slowest rank. \"straggler\": the rank was below half the ranks' median "
                       "throughput in at least one checkpoint.");
    int ws = rb_plot_series(p, "write"), rs = rb_plot_series(p, "read");
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *sum = s->runs[i]->summary;
        double n = rb_rundir_num(sum, "processes");
        for (double k = 0; isfinite(n) && k < n && k < 4096; k++) {
            char name[64], cat[300];
            snprintf(name, sizeof name, "rank %.0f", k);
            rb_report_series_name(cat, sizeof cat, s, i, name);
            int c = rb_plot_category(p, cat);
            bool sw = false, sr = false;
            double w = mean_rank_time(rb_rundir_array(sum, "writes"), k, &sw);
            double r = mean_rank_time(rb_rundir_array(sum, "reads"), k, &sr);
            char lw[64], lr[64];
            snprintf(lw, sizeof lw, "%.2f%s", w, sw ? " straggler" : "");
            snprintf(lr, sizeof lr, "%.2f%s", r, sr ? " straggler" : "");
            if (isfinite(w))
                rb_plot_point_label(p, ws, c, w, lw);
            if (isfinite(r))
                rb_plot_point_label(p, rs, c, r, lr);
        }
    }
    rb_report_plot_emit(p, html);
}

static void plots(const struct rb_report_set *s, struct rb_buf *html)
{
    rb_report_plot_timeline(s, html);
    rb_report_plot_latency(s, html);
}

RB_REPORT_KIND(ckpt, 10) = {"load checkpoint", tables, plot_ranks, plots};
