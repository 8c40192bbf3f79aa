/* Reports of `coll` and `fabric sim`: the nccl-tests table (out-of-place and in-place halves) and busbw by size. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "railbench/busbw.h"
#include "report_int.h"

/* nccl-tests' closing lines: the mean busbw over every row and both halves, and the wrong values. */
static void closing_notes(struct rb_rtable *t, const struct rb_report_set *s, size_t i, bool pred)
{
    const cJSON *sum = s->runs[i]->summary;
    double avg = rb_rundir_num(sum, "avg_busbw_gbps");
    if (!isfinite(avg)) {
        double total = 0;
        size_t n = 0;
        const cJSON *row;
        cJSON_ArrayForEach(row, rb_rundir_array(sum, "collective_rows"))
        {
            static const char *const halves[] = {"oop.busbw_gbps", "ip.busbw_gbps"};
            for (size_t h = 0; h < 2; h++) {
                double v = rb_rundir_num(row, halves[h]);
                if (isfinite(v)) {
                    total += v;
                    n++;
                }
            }
        }
        avg = n ? total / (double)n : NAN;
    }
    if (isfinite(avg))
        rb_report_note(t, s, i, "Avg bus bandwidth: %g GB/s%s", avg, pred ? " (predicted)" : "");
    double wrong = rb_rundir_num(sum, "wrong_total");
    if (pred)
        rb_report_note(t, s, i, "Out of bounds values: N/A (predicted by the alpha-beta model; no data moved)");
    else if (isfinite(wrong))
        rb_report_note(t, s, i, "Out of bounds values: %.0f %s", wrong, wrong == 0 ? "OK" : "FAILED");
    else
        rb_report_note(t, s, i, "Out of bounds values: N/A (not checked)");
    const char *topo = rb_rundir_str(sum, "topology.name"), *kind = rb_rundir_str(sum, "topology.kind");
    if (pred && topo)
        rb_report_note(t, s, i, "topology %s (%s), PXN %s", topo, kind ? kind : "?",
                cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sum, "pxn")) ? "on" : "off");
    double e0 = rb_rundir_num(sum, "calibration.mean_abs_error_default"),
           e1 = rb_rundir_num(sum, "calibration.mean_abs_error_calibrated");
    const char *src = rb_rundir_str(sum, "calibration.source");
    if (isfinite(e0) && isfinite(e1))
        rb_report_note(t, s, i, "calibrated against %s: mean absolute error %.1f %% before, %.1f %% after", src ? src : "?",
                100 * e0, 100 * e1);
}

/* The "#wrong" cell: a count, or N/A when nothing was checked (nccl-tests -c 0, or predicted). */
static void wrong_cell(struct rb_rtable *t, size_t r, const char *key, const cJSON *half)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(half, "wrong");
    if (cJSON_IsNumber(w))
        rb_rtable_num(t, r, key, w->valuedouble);
    else
        rb_rtable_text(t, r, key, "N/A");
}

/* "allreduce 2(n-1)/n; allgather, reducescatter, ... (n-1)/n; broadcast, ... 1" from the collectives' definitions. */
static void busbw_factors(char *buf, size_t len)
{
    static const char *const factor[] = {"1", "(n-1)/n", "2(n-1)/n"};
    size_t n = 0;
    buf[0] = '\0';
    for (int num = 2; num >= 0; num--) {
        bool first = true;
        for (int k = 0; k < RB_COLL_KINDS; k++) {
            const struct rb_coll_kind_def *d = rb_coll_kind_def((enum rb_coll_kind)k);
            if (d->busbw_num != num || n >= len)
                continue;
            n += (size_t)snprintf(buf + n, len - n, "%s%s", first ? (n ? "; " : "") : ", ", d->name);
            first = false;
        }
        if (!first && n < len)
            n += (size_t)snprintf(buf + n, len - n, " %s", factor[num]);
    }
}

static void coll_table(const struct rb_report_set *s, struct rb_report_tables *out, bool pred)
{
    struct rb_rtable *t =
        rb_report_table(out, s, "collectives",
                 pred ? "Collectives predicted by fabric sim (nccl-tests columns)" : "Collectives (nccl-tests columns)");
    if (!t)
        return;
    rb_rtable_col(t, "coll", "collective", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "algo", "algo", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "design", "design", RB_RF_TEXT, 0, 1, RB_RCOL_KEY | RB_RCOL_OPTIONAL);
    rb_rtable_col(t, "size_bytes", "size (B)", RB_RF_NUM, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "count", "count (elements)", RB_RF_NUM, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "type", "type", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "redop", "redop", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "root", "root", RB_RF_NUM, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "ranks", "ranks", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "oop_time_us", "oop time (us)", RB_RF_NUM, 2, 1, 0);
    rb_rtable_col(t, "oop_algbw_gbps", "oop algbw (GB/s)", RB_RF_NUM, 2, 1, 0);
    rb_rtable_col(t, "oop_busbw_gbps", "oop busbw (GB/s)", RB_RF_NUM, 2, 1, 0);
    rb_rtable_col(t, "oop_wrong", "oop #wrong", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "ip_time_us", "ip time (us)", RB_RF_NUM, 2, 1, 0);
    rb_rtable_col(t, "ip_algbw_gbps", "ip algbw (GB/s)", RB_RF_NUM, 2, 1, 0);
    rb_rtable_col(t, "ip_busbw_gbps", "ip busbw (GB/s)", RB_RF_NUM, 2, 1, 0);
    rb_rtable_col(t, "ip_wrong", "ip #wrong", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "osu_min_us", "OSU min (us)", RB_RF_NUM, 2, 1, RB_RCOL_OPTIONAL);
    rb_rtable_col(t, "osu_avg_us", "OSU avg (us)", RB_RF_NUM, 2, 1, RB_RCOL_OPTIONAL);
    rb_rtable_col(t, "osu_max_us", "OSU max (us)", RB_RF_NUM, 2, 1, RB_RCOL_OPTIONAL);
    static const char *const text[] = {"coll", "algo", "design", "type", "redop"};
    static const char *const num[] = {"size_bytes", "count", "root", "ranks"};
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *row;
        cJSON_ArrayForEach(row, rb_rundir_array(s->runs[i]->summary, "collective_rows"))
        {
            size_t r = rb_report_row(t, s, i);
            for (size_t k = 0; k < sizeof text / sizeof text[0]; k++)
                rb_rtable_text(t, r, text[k], rb_rundir_str(row, text[k]));
            for (size_t k = 0; k < sizeof num / sizeof num[0]; k++)
                rb_rtable_num(t, r, num[k], rb_rundir_num(row, num[k]));
            const cJSON *oop = cJSON_GetObjectItemCaseSensitive(row, "oop"),
                        *ip = cJSON_GetObjectItemCaseSensitive(row, "ip");
            rb_rtable_num(t, r, "oop_time_us", rb_rundir_num(oop, "time_us"));
            rb_rtable_num(t, r, "oop_algbw_gbps", rb_rundir_num(oop, "algbw_gbps"));
            rb_rtable_num(t, r, "oop_busbw_gbps", rb_rundir_num(oop, "busbw_gbps"));
            wrong_cell(t, r, "oop_wrong", oop);
            rb_rtable_num(t, r, "ip_time_us", rb_rundir_num(ip, "time_us"));
            rb_rtable_num(t, r, "ip_algbw_gbps", rb_rundir_num(ip, "algbw_gbps"));
            rb_rtable_num(t, r, "ip_busbw_gbps", rb_rundir_num(ip, "busbw_gbps"));
            wrong_cell(t, r, "ip_wrong", ip);
            rb_rtable_num(t, r, "osu_min_us", rb_rundir_num(row, "osu.min_us"));
            rb_rtable_num(t, r, "osu_avg_us", rb_rundir_num(row, "osu.avg_us"));
            rb_rtable_num(t, r, "osu_max_us", rb_rundir_num(row, "osu.max_us"));
        }
        closing_notes(t, s, i, pred);
    }
    char factors[512];
    busbw_factors(factors, sizeof factors);
    rb_rtable_note(t, "GB/s is 1e9 bytes/s; busbw = algbw x the collective's factor (%s), as nccl-tests computes it",
                   factors);
}

/* coll moe: a row per run, summary.moe's step figures (docs/coll.md). */
static void moe_table(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "moe", "Mixture-of-experts dispatch and combine (coll moe)");
    if (!t)
        return;
    static const struct {
        const char *key, *title;
        int decimals;
    } cols[] = {{"ranks", "ranks", 0},
                {"experts", "experts", 0},
                {"top_k", "top-k", 0},
                {"tokens_per_rank", "tokens/rank", 0},
                {"hidden", "hidden", 0},
                {"skew", "skew", 2},
                {"steps", "steps", 0},
                {"step_us", "step (us)", 1},
                {"dispatch_us", "dispatch (us)", 1},
                {"combine_us", "combine (us)", 1},
                {"wait_us", "wait (us)", 1},
                {"balanced_step_us", "balanced step (us)", 1},
                {"lost_us", "lost (us)", 1},
                {"lost_pct", "lost (%)", 1},
                {"imbalance", "imbalance (max/mean)", 2},
                {"wrong", "#wrong", 0}};
    rb_rtable_col(t, "algo", "algo", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
        rb_rtable_col(t, cols[c].key, cols[c].title, RB_RF_NUM, cols[c].decimals, 1, 0);
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(s->runs[i]->summary, "moe");
        if (!cJSON_IsObject(m))
            continue;
        size_t r = rb_report_row(t, s, i);
        rb_rtable_text(t, r, "algo", rb_rundir_str(m, "algo"));
        for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
            rb_rtable_num(t, r, cols[c].key, rb_rundir_num(m, cols[c].key));
    }
    rb_rtable_note(t, "times are means over the timed steps (summary.moe); balanced step: the same tokens spread "
                      "evenly over the expert ranks; lost = step - balanced step");
}

static void tables_coll(const struct rb_report_set *s, struct rb_report_tables *out)
{
    bool rows = false, moe = false;
    for (size_t i = 0; i < s->n; i++) {
        rows |= rb_rundir_array(s->runs[i]->summary, "collective_rows") != NULL;
        moe |= cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(s->runs[i]->summary, "moe"));
    }
    if (rows || !moe) /* a run with neither: the nccl-tests table, without rows */
        coll_table(s, out, false);
    if (moe)
        moe_table(s, out);
}

/* fabric sim --calibrate: per measured row, the model's time before and after fitting it. */
static void calibration_table(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "calibration", "Model calibrated on measured collectives");
    if (!t)
        return;
    rb_rtable_col(t, "coll", "collective", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "algo", "algo", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "ranks", "ranks", RB_RF_NUM, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "size_bytes", "size (B)", RB_RF_NUM, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "measured_us", "measured (us)", RB_RF_NUM, 2, 1, 0);
    rb_rtable_col(t, "default_us", "model, defaults (us)", RB_RF_NUM, 2, 1, 0);
    rb_rtable_col(t, "calibrated_us", "model, calibrated (us)", RB_RF_NUM, 2, 1, 0);
    rb_rtable_col(t, "error_default_pct", "error, defaults (%)", RB_RF_NUM, 1, 100, 0);
    rb_rtable_col(t, "error_calibrated_pct", "error, calibrated (%)", RB_RF_NUM, 1, 100, 0);
    static const char *const figs[] = {"ranks", "size_bytes", "measured_us", "default_us", "calibrated_us"};
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *row;
        cJSON_ArrayForEach(row, rb_rundir_array(s->runs[i]->summary, "calibration.rows"))
        {
            size_t r = rb_report_row(t, s, i);
            rb_rtable_text(t, r, "coll", rb_rundir_str(row, "coll"));
            rb_rtable_text(t, r, "algo", rb_rundir_str(row, "algo"));
            for (size_t f = 0; f < sizeof figs / sizeof figs[0]; f++)
                rb_rtable_num(t, r, figs[f], rb_rundir_num(row, figs[f]));
            rb_rtable_num(t, r, "error_default_pct", rb_rundir_num(row, "error_default"));
            rb_rtable_num(t, r, "error_calibrated_pct", rb_rundir_num(row, "error_calibrated"));
        }
        const char *src = rb_rundir_str(s->runs[i]->summary, "calibration.source");
        char e0[32], e1[32];
        if (src)
            rb_report_note(t, s, i, "fitted to %s: mean |error| %s %% with the defaults, %s %% calibrated", src,
                           rb_report_fig(e0, sizeof e0, rb_rundir_num(s->runs[i]->summary, "calibration.mean_abs_error_default"), 100, 1),
                           rb_report_fig(e1, sizeof e1, rb_rundir_num(s->runs[i]->summary, "calibration.mean_abs_error_calibrated"), 100, 1));
    }
}

static void tables_sim(const struct rb_report_set *s, struct rb_report_tables *out)
{
    bool rows = false, calib = false;
    for (size_t i = 0; i < s->n; i++) {
        rows |= rb_rundir_array(s->runs[i]->summary, "collective_rows") != NULL;
        calib |= rb_rundir_array(s->runs[i]->summary, "calibration.rows") != NULL;
    }
    if (rows || !calib) /* a run with neither: the predicted table, without rows */
        coll_table(s, out, true);
    if (calib)
        calibration_table(s, out);
}

/* One figure of a collective against message size: what it plots and how. */
struct coll_fig {
    const char *id, *what, *field, *ytitle, *caption;
    double yscale;
};

static const struct coll_fig coll_figs[] = {
    {"busbw-size", "bus bandwidth", "oop.busbw_gbps", "busbw (GB/s, log scale)",
     "Out-of-place bus bandwidth (nccl-tests' busbw, GB/s = 1e9 B/s), one line per algorithm.", 1},
    {"time-size", "time", "oop.time_us", "time per operation (us, log scale)",
     "Out-of-place time per operation, one line per algorithm.", 1},
};

/* Series of figure f for collective coll: one per algorithm (on design, for fabric sim --compare). */
static void coll_series(struct rb_plot *p, const struct rb_report_set *s, const char *coll, const struct coll_fig *f)
{
    for (size_t i = 0; i < s->n; i++) {
        char names[64][160];
        int idx[64];
        size_t nnames = 0;
        const cJSON *row;
        cJSON_ArrayForEach(row, rb_rundir_array(s->runs[i]->summary, "collective_rows"))
        {
            const char *c = rb_rundir_str(row, "coll"), *algo = rb_rundir_str(row, "algo"),
                       *design = rb_rundir_str(row, "design");
            if (!c || strcmp(c, coll) != 0)
                continue;
            char what[160];
            snprintf(what, sizeof what, "%s%s%s", algo ? algo : "?", design ? " on " : "", design ? design : "");
            size_t k = 0;
            while (k < nnames && strcmp(names[k], what) != 0)
                k++;
            if (k == nnames) {
                if (nnames == sizeof names / sizeof names[0])
                    continue;
                snprintf(names[nnames], sizeof names[0], "%s", what);
                idx[nnames++] = rb_report_series(p, s, i, what);
            }
            rb_plot_point(p, idx[k], rb_rundir_num(row, "size_bytes"), rb_rundir_num(row, f->field));
        }
    }
}

/* fabric sim --calibrate: per algorithm the measured times and the calibrated model's, dashed, in one hue. */
static size_t calibration_series(struct rb_plot *p, const struct rb_report_set *s, const char *coll)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *row;
        cJSON_ArrayForEach(row, rb_rundir_array(s->runs[i]->summary, "calibration.rows"))
        {
            const char *c = rb_rundir_str(row, "coll"), *algo = rb_rundir_str(row, "algo");
            if (!c || !algo || strcmp(c, coll) != 0)
                continue;
            char name[600], key[400];
            int sm = -1, sc = -1;
            snprintf(key, sizeof key, "%s%s%s", s->n > 1 ? s->runs[i]->name : "", s->n > 1 ? ": " : "", algo);
            for (size_t k = 0; k < p->nseries; k++) {
                snprintf(name, sizeof name, "%s measured", key);
                if (strcmp(p->series[k].name, name) == 0)
                    sm = (int)k;
                snprintf(name, sizeof name, "%s model (calibrated)", key);
                if (strcmp(p->series[k].name, name) == 0)
                    sc = (int)k;
            }
            if (sm < 0) {
                snprintf(name, sizeof name, "%s measured", key);
                sm = rb_plot_series_keyed(p, name, key, false);
                snprintf(name, sizeof name, "%s model (calibrated)", key);
                sc = rb_plot_series_keyed(p, name, key, true);
            }
            double size = rb_rundir_num(row, "size_bytes");
            rb_plot_point(p, sm, size, rb_rundir_num(row, "measured_us"));
            rb_plot_point(p, sc, size, rb_rundir_num(row, "calibrated_us"));
            n++;
        }
    }
    return n;
}

/* Collectives of the runs in order of first appearance (rows, then calibration rows). */
static size_t coll_names(const struct rb_report_set *s, const char **colls, size_t max)
{
    static const char *const arrays[] = {"collective_rows", "calibration.rows"};
    size_t n = 0;
    for (size_t a = 0; a < 2; a++) {
        for (size_t i = 0; i < s->n; i++) {
            const cJSON *row;
            cJSON_ArrayForEach(row, rb_rundir_array(s->runs[i]->summary, arrays[a]))
            {
                const char *c = rb_rundir_str(row, "coll");
                bool seen = !c;
                for (size_t k = 0; k < n && !seen; k++)
                    seen = strcmp(colls[k], c) == 0;
                if (!seen && n < max)
                    colls[n++] = c;
            }
        }
    }
    return n;
}

/* Per collective, busbw and time against message size on log-log axes, one line per algorithm. */
static void plots(const struct rb_report_set *s, struct rb_buf *html)
{
    const char *colls[32];
    size_t ncolls = coll_names(s, colls, sizeof colls / sizeof colls[0]);
    for (size_t c = 0; c < ncolls; c++) {
        for (size_t f = 0; f < sizeof coll_figs / sizeof coll_figs[0]; f++) {
            const struct coll_fig *fig = &coll_figs[f];
            char title[256];
            snprintf(title, sizeof title, "%s: %s by message size, per algorithm", colls[c], fig->what);
            struct rb_plot *p = rb_plot_new(fig->id, title);
            if (!p)
                return;
            rb_plot_xaxis(p, "message size (bytes, log scale)", RB_AXIS_LOG2_BYTES, 1, false);
            rb_plot_yaxis(p, fig->ytitle, RB_AXIS_LOG10, fig->yscale, false);
            rb_plot_caption(p, fig->caption);
            coll_series(p, s, colls[c], fig);
            if (strcmp(fig->id, "time-size") == 0 && calibration_series(p, s, colls[c]))
                rb_plot_caption(p, "Time per operation: solid, measured (the runs given to --calibrate); dashed, in "
                                   "the same colour, the model calibrated on them.");
            rb_report_plot_emit(p, html);
        }
    }
}

RB_REPORT_KIND(coll, 60) = {"coll", tables_coll, plots, NULL};
RB_REPORT_KIND(sim, 70) = {"fabric sim", tables_sim, plots, NULL};
