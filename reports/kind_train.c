/* Report of `load train`: accelerator utilisation per epoch and whether the run passes (MLPerf Storage style). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_int.h"

static void find_max_note(struct rb_rtable *t, const struct rb_report_set *s, size_t i)
{
    const cJSON *fm = cJSON_GetObjectItemCaseSensitive(s->runs[i]->summary, "find_max");
    if (!cJSON_IsObject(fm))
        return;
    char tried[1024] = "";
    size_t n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, rb_rundir_array(fm, "tried"))
    {
        char acc[32], au[32];
        if (n < sizeof tried)
            n += (size_t)snprintf(tried + n, sizeof tried - n, "%s%s: %s %%", n ? ", " : "",
                                  rb_report_fig(acc, sizeof acc, rb_rundir_num(e, "accelerators"), 1, 0),
                                  rb_report_fig(au, sizeof au, rb_rundir_num(e, "au_pct"), 1, 1));
    }
    char min[32];
    double max = rb_rundir_num(fm, "max_accelerators");
    rb_report_fig(min, sizeof min, rb_rundir_num(s->runs[i]->summary, "au_min_pct"), 1, 0);
    if (isfinite(max))
        rb_report_note(t, s, i, "most accelerators kept at AU >= %s %%: %.0f (tried %s)", min, max, tried);
    else
        rb_report_note(t, s, i, "no accelerator count kept AU >= %s %% (tried %s)", min, tried);
}

static void tables(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "train", "Training emulation: accelerator utilisation per epoch");
    if (!t)
        return;
    const double ms = 1e-6;
    rb_rtable_col(t, "epoch", "epoch", RB_RF_NUM, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "cold", "cache", RB_RF_TEXT, 0, 1, RB_RCOL_NOTE);
    rb_rtable_col(t, "samples", "samples", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "samples_per_s", "samples/s", RB_RF_NUM, 1, 1, 0);
    rb_rtable_col(t, "bytes_per_s", "MiB/s", RB_RF_NUM, 1, 1 / (double)RB_MIB, 0);
    rb_rtable_col(t, "au_pct", "AU (%)", RB_RF_NUM, 2, 1, 0);
    rb_rtable_col(t, "data_wait_p50_ns", "data wait p50 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "data_wait_p99_ns", "data wait p99 (ms)", RB_RF_NUM, 3, ms, 0);
    static const char *const figs[] = {"epoch",  "samples",          "samples_per_s",   "bytes_per_s",
                                       "au_pct", "data_wait_p50_ns", "data_wait_p99_ns"};
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *e;
        cJSON_ArrayForEach(e, rb_rundir_array(s->runs[i]->summary, "train_epochs"))
        {
            size_t r = rb_report_row(t, s, i);
            for (size_t f = 0; f < sizeof figs / sizeof figs[0]; f++)
                rb_rtable_num(t, r, figs[f], rb_rundir_num(e, figs[f]));
            /* A label measured by page-cache or cache-header counts, or "(configured)"; older results: the bool. */
            const cJSON *cold = cJSON_GetObjectItemCaseSensitive(e, "cold");
            const char *cache = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "cache"));
            const char *basis = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "cache_basis"));
            char label[48];
            if (cache)
                snprintf(label, sizeof label, "%s%s", cache,
                         basis && strcmp(basis, "configured") == 0 ? " (configured)" : "");
            if (cache)
                rb_rtable_text(t, r, "cold", label);
            else if (cJSON_IsBool(cold))
                rb_rtable_text(t, r, "cold", cJSON_IsTrue(cold) ? "cold" : "warm");
        }
        if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(s->runs[i]->summary, "interference")))
            rb_report_note(t, s, i, "--overlap: the epoch is the overlapped phase, the data's second read in the run "
                                    "(the storage-alone phase read it first), hence warm");
    }
    rb_rtable_note(t, "AU = compute time / wall time x 100 over the epoch, first step excluded (MLPerf Storage); "
                      "data wait = time a step waited for its batch");

    struct rb_rtable *sum = rb_report_table(out, s, "train-summary", "Training emulation: run");
    if (!sum)
        return;
    rb_rtable_col(sum, "accelerators", "accelerators", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(sum, "samples_per_s", "samples/s", RB_RF_NUM, 1, 1, 0);
    rb_rtable_col(sum, "au_mean_pct", "AU mean (%)", RB_RF_NUM, 2, 1, 0);
    rb_rtable_col(sum, "au_min_pct", "AU minimum (%)", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(sum, "passed", "result", RB_RF_TEXT, 0, 1, RB_RCOL_NOTE);
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *summary = s->runs[i]->summary;
        size_t r = rb_report_row(sum, s, i);
        rb_rtable_num(sum, r, "accelerators", rb_rundir_num(summary, "accelerators"));
        rb_rtable_num(sum, r, "samples_per_s", rb_rundir_num(summary, "samples_per_s"));
        rb_rtable_num(sum, r, "au_mean_pct", rb_rundir_num(summary, "au_mean_pct"));
        rb_rtable_num(sum, r, "au_min_pct", rb_rundir_num(summary, "au_min_pct"));
        const cJSON *passed = cJSON_GetObjectItemCaseSensitive(summary, "passed");
        if (cJSON_IsBool(passed))
            rb_rtable_text(sum, r, "passed", cJSON_IsTrue(passed) ? "PASS" : "FAIL");
        find_max_note(sum, s, i);
    }
}

/*
 * Share of an epoch's wall time spent waiting for data: mean wait per step x
 * steps / epoch time, in percent; NAN when the epoch lacks a figure.
 */
static double wait_pct(const cJSON *e)
{
    double mean = rb_rundir_num(e, "data_wait_ns.mean"), steps = rb_rundir_num(e, "steps"),
           dur = rb_rundir_num(e, "duration_s");
    if (!(dur > 0) || !(steps > 0) || !(mean >= 0))
        return NAN;
    return fmin(100, 100 * mean * 1e-9 * steps / dur);
}

/*
 * The headline: per epoch a bar of 100 % of the wall time, stacked compute
 * (AU), data wait, and the rest (the step barrier that stands for the
 * all-reduce, and overheads), with the AU minimum as a line.
 */
static void plot_epochs(const struct rb_report_set *s, struct rb_buf *html)
{
    struct rb_plot *p = rb_plot_new("au-epoch", "Accelerator utilisation per epoch: compute, data wait, sync");
    if (!p)
        return;
    rb_plot_style(p, RB_PLOT_STACKED);
    rb_plot_xaxis(p, "epoch", RB_AXIS_LINEAR, 1, false);
    rb_plot_yaxis(p, "share of the epoch's wall time (%)", RB_AXIS_LINEAR, 1, true);
    int sc = rb_plot_series(p, "compute (AU)"), sw = rb_plot_series(p, "waiting for data"),
        sr = rb_plot_series(p, "sync barrier and the rest");
    double min = NAN;
    bool any_wait = false;
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *e;
        cJSON_ArrayForEach(e, rb_rundir_array(s->runs[i]->summary, "train_epochs"))
        {
            double au = rb_rundir_num(e, "au_pct"), w = wait_pct(e);
            if (!isfinite(au))
                continue;
            char what[64], cat[300], label[32], no[32];
            snprintf(what, sizeof what, "epoch %s%s", rb_report_fig(no, sizeof no, rb_rundir_num(e, "epoch"), 1, 0),
                     cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "cold")) ? " (cold)" : "");
            rb_report_series_name(cat, sizeof cat, s, i, what);
            int c = rb_plot_category(p, cat);
            snprintf(label, sizeof label, "AU %.1f %%", au);
            rb_plot_point_label(p, sc, c, au, label);
            if (isfinite(w)) {
                any_wait = true;
                snprintf(label, sizeof label, "%.1f %%", w);
                rb_plot_point_label(p, sw, c, fmin(w, 100 - au), label);
                snprintf(label, sizeof label, "%.1f %%", fmax(0, 100 - au - w));
                rb_plot_point_label(p, sr, c, fmax(0, 100 - au - w), label);
            } else {
                rb_plot_point(p, sr, c, 100 - au);
            }
        }
        double m = rb_rundir_num(s->runs[i]->summary, "au_min_pct");
        if (isfinite(m) && !isfinite(min))
            min = m;
    }
    if (isfinite(min)) {
        char label[64];
        snprintf(label, sizeof label, "AU minimum %.0f %%", min);
        rb_plot_ref(p, min, label);
    }
    rb_plot_caption(p, any_wait ? "Compute share = AU (first step excluded, MLPerf Storage); data wait = mean wait "
                                  "per step x steps / epoch time; the rest is the step barrier (standing for the "
                                  "all-reduce) and overheads. A run passes when AU stays at or above the minimum."
                                : "Compute share = AU (MLPerf Storage); the rest of the wall time is data wait and "
                                  "the step barrier together (this result does not split them).");
    rb_report_plot_emit(p, html);
}

/* AU against the number of accelerators tried by --find-max. */
static void plot_find_max(const struct rb_report_set *s, struct rb_buf *html)
{
    struct rb_plot *p = rb_plot_new("au-accelerators", "Accelerator utilisation by number of accelerators");
    if (!p)
        return;
    rb_plot_xaxis(p, "simulated accelerators (log scale)", RB_AXIS_LOG10, 1, false);
    rb_plot_yaxis(p, "AU (%)", RB_AXIS_LINEAR, 1, true);
    char name[512];
    double min = NAN;
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *tried = rb_rundir_array(s->runs[i]->summary, "find_max.tried");
        if (!tried)
            continue;
        rb_report_series_name(name, sizeof name, s, i, "AU");
        int si = rb_plot_series(p, name);
        const cJSON *e;
        cJSON_ArrayForEach(e, tried)
        {
            rb_plot_point(p, si, rb_rundir_num(e, "accelerators"), rb_rundir_num(e, "au_pct"));
        }
        double m = rb_rundir_num(s->runs[i]->summary, "au_min_pct");
        if (isfinite(m) && !isfinite(min))
            min = m;
    }
    if (isfinite(min)) {
        char label[64];
        snprintf(label, sizeof label, "AU minimum %.0f %%", min);
        rb_plot_ref(p, min, label);
    }
    rb_report_plot_emit(p, html);
}

/* The three phases of `load train --overlap`, as summary.interference names them and as the report shows them. */
static const char *const ov_keys[] = {"storage_alone", "collective_alone", "overlapped"};
static const char *const ov_names[] = {"storage alone", "collective alone", "overlapped"};

/* Whether any run of the set has an interference record (--overlap). */
static bool any_interference(const struct rb_report_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(s->runs[i]->summary, "interference")))
            return true;
    return false;
}

/* --overlap: the mean step of each phase and the two slowdown factors. */
static void interference_table(const struct rb_report_set *s, struct rb_report_tables *out)
{
    if (!any_interference(s))
        return;
    struct rb_rtable *t = rb_report_table(out, s, "train-interference",
                                          "Training emulation: reads and the all-reduce, alone and overlapped");
    if (!t)
        return;
    /*
     * The step's figures: key in interference.<phase>.step, heading, scale (ns to ms, B/s to MiB/s) and
     * decimals (durations to the microsecond, as the epochs table's data wait: a 1 us wait is 0.001, not 0.00).
     */
    static const struct {
        const char *key, *head;
        double scale;
        int decimals;
    } figs[] = {{"data_wait_ns", "data wait (ms)", 1e-6, 3},   {"compute_ns", "compute (ms)", 1e-6, 3},
                {"sync_wait_ns", "sync wait (ms)", 1e-6, 3},   {"allreduce_ns", "all-reduce (ms)", 1e-6, 3},
                {"step_ns", "step (ms)", 1e-6, 3},             {"fetch_bytes_per_s", "fetch MiB/s", 1 / (double)RB_MIB, 2}};
    rb_rtable_col(t, "phase", "phase", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "steps", "steps", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "au_pct", "AU (%)", RB_RF_NUM, 1, 1, 0);
    rb_rtable_col(t, "bytes_per_s", "MiB/s", RB_RF_NUM, 1, 1 / (double)RB_MIB, 0);
    for (size_t f = 0; f < sizeof figs / sizeof figs[0]; f++)
        rb_rtable_col(t, figs[f].key, figs[f].head, RB_RF_NUM, figs[f].decimals, figs[f].scale, 0);
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(s->runs[i]->summary, "interference");
        if (!cJSON_IsObject(in))
            continue;
        for (size_t k = 0; k < 3; k++) {
            const cJSON *ph = cJSON_GetObjectItemCaseSensitive(in, ov_keys[k]), *st = cJSON_GetObjectItemCaseSensitive(ph, "step");
            size_t r = rb_report_row(t, s, i);
            rb_rtable_text(t, r, "phase", ov_names[k]);
            rb_rtable_num(t, r, "steps", rb_rundir_num(ph, "steps"));
            rb_rtable_num(t, r, "au_pct", rb_rundir_num(ph, "au_pct"));
            double bps = rb_rundir_num(ph, "bytes_per_s"); /* the collective phase reads nothing: not measured */
            rb_rtable_num(t, r, "bytes_per_s", bps > 0 ? bps : NAN);
            for (size_t f = 0; f < sizeof figs / sizeof figs[0]; f++)
                rb_rtable_num(t, r, figs[f].key, rb_rundir_num(st, figs[f].key));
        }
        char fs[32], fc[32];
        rb_report_note(t, s, i, "slowdown under overlap: storage %sx, collective %sx",
                       rb_report_fig(fs, sizeof fs, rb_rundir_num(in, "slowdown.storage"), 1, 2),
                       rb_report_fig(fc, sizeof fc, rb_rundir_num(in, "slowdown.collective"), 1, 2));
    }
    rb_rtable_note(t, "steps per rank and MiB/s over the phase's wall time, as in the epoch table; the durations are "
                      "means per step, first step excluded; fetch MiB/s per read thread while it fetches; storage slowdown = fetch throughput alone / overlapped, "
                      "collective slowdown = all-reduce time overlapped / alone");
}

static void tables_all(const struct rb_report_set *s, struct rb_report_tables *out)
{
    tables(s, out);
    interference_table(s, out);
}

/*
 * --overlap: the mean step of each phase stacked from its parts (data wait,
 * compute, the wait for the all-reduce), so the isolated steps stand beside
 * the overlapped one; the full all-reduce time is in the label.
 */
static void plot_interference(const struct rb_report_set *s, struct rb_buf *html)
{
    if (!any_interference(s))
        return;
    struct rb_plot *p = rb_plot_new("train-interference", "Step time: reads and the all-reduce, alone and overlapped");
    if (!p)
        return;
    rb_plot_style(p, RB_PLOT_STACKED);
    rb_plot_xaxis(p, "phase", RB_AXIS_LINEAR, 1, false);
    rb_plot_yaxis(p, "mean time per step (ms)", RB_AXIS_LINEAR, 1e-6, true);
    int sw = rb_plot_series(p, "data wait"), sc = rb_plot_series(p, "compute"),
        sa = rb_plot_series(p, "sync wait");
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(s->runs[i]->summary, "interference");
        for (size_t k = 0; cJSON_IsObject(in) && k < 3; k++) {
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(in, ov_keys[k]), "step");
            char cat[300], label[64], ar[32];
            rb_report_series_name(cat, sizeof cat, s, i, ov_names[k]);
            int c = rb_plot_category(p, cat);
            double w = rb_rundir_num(st, "data_wait_ns"), cp = rb_rundir_num(st, "compute_ns"),
                   sy = rb_rundir_num(st, "sync_wait_ns"), a = rb_rundir_num(st, "allreduce_ns");
            if (isfinite(w))
                rb_plot_point(p, sw, c, w);
            if (isfinite(cp))
                rb_plot_point(p, sc, c, cp);
            if (!isfinite(sy))
                continue;
            /* The label (drawn where the segment is tall enough) gives the all-reduce's whole time. */
            snprintf(label, sizeof label, "all-reduce %s ms", rb_report_fig(ar, sizeof ar, a * 1e-6, 1, 1));
            rb_plot_point_label(p, sa, c, sy, isfinite(a) ? label : "barrier");
        }
    }
    rb_plot_caption(p, "Each bar is a phase's mean step (first step excluded): data wait, compute, then the time the "
                       "trainer waited for the step's all-reduce (barrier alone with the reads). Overlapped, the "
                       "all-reduce runs during the next step's reads and compute, so only the part they do not hide "
                       "is waited for; the segment's label gives its whole time.");
    rb_report_plot_emit(p, html);
}

static void plots(const struct rb_report_set *s, struct rb_buf *html)
{
    plot_interference(s, html);
    plot_find_max(s, html);
    rb_report_plot_timeline(s, html);
    rb_report_plot_latency(s, html);
}

RB_REPORT_KIND(train, 40) = {"load train", tables_all, plot_epochs, plots};
