/* Report of `block`: fio's IOPS-vs-latency sweep (Lightbits/Ceph style) with the knee and the best point within the SLO. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_int.h"

/* The index a knee or SLO entry points at, or -1. */
static int point_index(const cJSON *o)
{
    double k = rb_rundir_num(o, "index");
    return isfinite(k) && k >= 0 && k == floor(k) && k < 1e6 ? (int)k : -1;
}

static bool is_knee(const cJSON *summary, int index)
{
    const cJSON *k;
    cJSON_ArrayForEach(k, rb_rundir_array(summary, "knee.per_bs"))
    {
        if (point_index(cJSON_GetObjectItemCaseSensitive(k, "point")) == index)
            return true;
    }
    return false;
}

static void point_desc(char *buf, size_t len, const cJSON *p, bool with_bs)
{
    char bs[48] = "", size[32];
    if (with_bs) {
        rb_report_size(size, sizeof size, rb_rundir_num(p, "bs"));
        snprintf(bs, sizeof bs, "bs %s, ", size);
    }
    char out[32], qd[32], jobs[32];
    snprintf(buf, len, "outstanding %s (%siodepth %s, jobs %s)", rb_report_fig(out, sizeof out, rb_rundir_num(p, "outstanding"), 1, 0),
             bs, rb_report_fig(qd, sizeof qd, rb_rundir_num(p, "iodepth"), 1, 0),
             rb_report_fig(jobs, sizeof jobs, rb_rundir_num(p, "numjobs"), 1, 0));
}

static void notes(struct rb_rtable *t, const struct rb_report_set *s, size_t i)
{
    const cJSON *sum = s->runs[i]->summary;
    const char *rw = rb_rundir_str(sum, "rw"), *engine = rb_rundir_str(sum, "engine"),
               *fio = rb_rundir_str(sum, "fio_version");
    double ranks = rb_rundir_num(s->runs[i]->root, "mpi.size");
    char direct[32], f[4][32];
    rb_report_note(t, s, i, "%s, %s direct=%s, %s, %.0f rank(s); IOPS and MiB/s summed over ranks, clat over every I/O",
                   rw ? rw : "?", engine ? engine : "?", rb_report_fig(direct, sizeof direct, rb_rundir_num(sum, "direct"), 1, 0),
                   fio ? fio : "fio", isfinite(ranks) ? ranks : 1);
    const cJSON *k;
    cJSON_ArrayForEach(k, rb_rundir_array(sum, "knee.per_bs"))
    {
        const cJSON *pt = cJSON_GetObjectItemCaseSensitive(k, "point"), *next = cJSON_GetObjectItemCaseSensitive(k, "next");
        char bs[32], desc[160];
        rb_report_size(bs, sizeof bs, rb_rundir_num(k, "bs"));
        if (!cJSON_IsObject(pt)) {
            rb_report_note(t, s, i, "knee (bs %s): none, IOPS kept growing", bs);
            continue;
        }
        point_desc(desc, sizeof desc, pt, false);
        double gain = rb_rundir_num(k, "iops_gain_pct"), growth = rb_rundir_num(k, "p99_growth_pct");
        rb_report_note(t, s, i, "knee (bs %s): %s at %s IOPS; the next step to outstanding %s changes IOPS by %s%s %% "
                                "and clat p99 by %s%s %%",
                       bs, desc, rb_report_fig(f[0], sizeof f[0], rb_rundir_num(pt, "iops"), 1, 0),
                       rb_report_fig(f[1], sizeof f[1], rb_rundir_num(next, "outstanding"), 1, 0), gain >= 0 ? "+" : "",
                       rb_report_fig(f[2], sizeof f[2], gain, 1, 1), growth >= 0 ? "+" : "",
                       rb_report_fig(f[3], sizeof f[3], growth, 1, 0));
    }
    const char *expr = rb_rundir_str(sum, "slo.expr");
    if (expr) {
        const cJSON *best = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sum, "slo"), "best");
        char desc[160];
        if (cJSON_IsObject(best)) {
            point_desc(desc, sizeof desc, best, true);
            rb_report_note(t, s, i, "SLO %s: highest IOPS %s at %s", expr,
                           rb_report_fig(f[0], sizeof f[0], rb_rundir_num(best, "iops"), 1, 0), desc);
        } else {
            rb_report_note(t, s, i, "SLO %s: no point meets it", expr);
        }
    }
}

static void tables(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "block", "Block: IOPS against latency (fio)");
    if (!t)
        return;
    const double us = 1e-3;
    rb_rtable_col(t, "bs", "bs", RB_RF_SIZE, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "rw", "rw", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "iodepth", "iodepth", RB_RF_NUM, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "numjobs", "jobs", RB_RF_NUM, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "outstanding", "outstanding", RB_RF_NUM, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "iops", "IOPS", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "bw_bytes_per_s", "MiB/s", RB_RF_NUM, 2, 1 / (double)RB_MIB, 0);
    rb_rtable_col(t, "clat_p50_ns", "clat p50 (us)", RB_RF_NUM, 1, us, 0);
    rb_rtable_col(t, "clat_p99_ns", "clat p99 (us)", RB_RF_NUM, 1, us, 0);
    rb_rtable_col(t, "clat_p999_ns", "clat p99.9 (us)", RB_RF_NUM, 1, us, 0);
    rb_rtable_col(t, "disk_util_pct", "util %", RB_RF_NUM, 1, 1, 0);
    rb_rtable_col(t, "note", "", RB_RF_TEXT, 0, 1, RB_RCOL_NOTE);
    static const char *const figs[] = {"bs", "iodepth", "numjobs", "outstanding", "iops", "bw_bytes_per_s",
                                       "disk_util_pct"};
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *sum = s->runs[i]->summary;
        int best = point_index(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sum, "slo"), "best"));
        int idx = 0;
        const cJSON *p;
        cJSON_ArrayForEach(p, rb_rundir_array(sum, "block_points"))
        {
            size_t r = rb_report_row(t, s, i);
            for (size_t f = 0; f < sizeof figs / sizeof figs[0]; f++)
                rb_rtable_num(t, r, figs[f], rb_rundir_num(p, figs[f]));
            rb_rtable_text(t, r, "rw", rb_rundir_str(p, "rw"));
            rb_report_latency_cells(t, r, "clat", cJSON_GetObjectItemCaseSensitive(p, "clat_ns"));
            bool knee = is_knee(sum, idx);
            rb_rtable_text(t, r, "note", knee && idx == best ? "knee, best within SLO"
                                         : knee               ? "knee"
                                         : idx == best        ? "best within SLO"
                                                              : NULL);
            idx++;
        }
        notes(t, s, i);
    }
}

/* The percentile the SLO names ("p99" when there is none), and its label. */
static void slo_percentile(const cJSON *sum, char *key, size_t len, char *label, size_t llen)
{
    const char *lat = rb_rundir_str(sum, "slo.latency"), *pct = rb_rundir_str(sum, "slo.percentile");
    static const char *const ok[] = {"p50", "p90", "p99", "p999", "p9999"};
    bool good = false;
    for (size_t k = 0; pct && k < sizeof ok / sizeof ok[0]; k++)
        good |= strcmp(pct, ok[k]) == 0;
    if (!good)
        pct = "p99";
    if (!lat || (strcmp(lat, "clat") != 0 && strcmp(lat, "lat") != 0))
        lat = "clat";
    snprintf(key, len, "%s_ns.%s", lat, pct);
    snprintf(label, llen, "%s %s", lat, strcmp(pct, "p999") == 0 ? "p99.9" : strcmp(pct, "p9999") == 0 ? "p99.99" : pct);
}

/* IOPS against the SLO's latency percentile, one series per block size, the SLO as a line and the knee circled. */
static void plot_iops(const struct rb_report_set *s, struct rb_buf *html)
{
    char key[32], what[32], ytitle[96], title[128];
    slo_percentile(s->runs[0]->summary, key, sizeof key, what, sizeof what);
    snprintf(ytitle, sizeof ytitle, "%s latency (us, log scale)", what);
    snprintf(title, sizeof title, "Block: IOPS against %s latency", what);
    struct rb_plot *p = rb_plot_new("iops-latency", title);
    if (!p)
        return;
    rb_plot_xaxis(p, "IOPS", RB_AXIS_LINEAR, 1, true);
    rb_plot_yaxis(p, ytitle, RB_AXIS_LOG10, 1e-3, false);
    rb_plot_caption(p, "One line per workload (rw and block size), one point per fio run labelled by its queue depth "
                       "(iodepth, x jobs when several); dashed red: the SLO; circled: the knee.");
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *sum = s->runs[i]->summary;
        double bs_of[16];
        int series[16];
        size_t nbs = 0;
        int idx = 0;
        const cJSON *pt;
        cJSON_ArrayForEach(pt, rb_rundir_array(sum, "block_points"))
        {
            double bs = rb_rundir_num(pt, "bs");
            size_t k = 0;
            while (k < nbs && bs_of[k] != bs)
                k++;
            if (k == nbs && nbs < 16) {
                char b[32], what_bs[96];
                rb_report_size(b, sizeof b, bs);
                const char *rw = rb_rundir_str(pt, "rw");
                snprintf(what_bs, sizeof what_bs, "%s %s", rw ? rw : "", b);
                bs_of[nbs] = bs;
                series[nbs++] = rb_report_series(p, s, i, what_bs);
            }
            double x = rb_rundir_num(pt, "iops"), y = rb_rundir_num(pt, key), jobs = rb_rundir_num(pt, "numjobs");
            char qd[64];
            char depth[32];
            rb_report_fig(depth, sizeof depth, rb_rundir_num(pt, "iodepth"), 1, 0);
            if (jobs > 1)
                snprintf(qd, sizeof qd, "qd %s x %.0f jobs", depth, jobs);
            else
                snprintf(qd, sizeof qd, "qd %s", depth);
            if (k < nbs)
                rb_plot_point_label(p, series[k], x, y, qd);
            if (is_knee(sum, idx))
                rb_plot_mark(p, x, y, "knee");
            idx++;
        }
        double bound = rb_rundir_num(sum, "slo.bound_ns");
        const char *expr = rb_rundir_str(sum, "slo.expr");
        if (isfinite(bound) && expr) {
            char label[160];
            snprintf(label, sizeof label, "SLO %s", expr);
            rb_plot_ref(p, bound, label);
        }
    }
    rb_report_plot_emit(p, html);
}

static void plots(const struct rb_report_set *s, struct rb_buf *html)
{
    rb_report_plot_latency(s, html);
}

RB_REPORT_KIND(block, 80) = {"block", tables, plot_iops, plots};
