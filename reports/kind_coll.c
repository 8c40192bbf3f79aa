/* Reports of `coll` and `fabric sim`: the nccl-tests table (out-of-place and in-place halves) and busbw by size. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_int.h"

/* Measured rows come from `coll`; `fabric sim` marks its rows "predicted". */
static bool predicted(const struct rb_rundir *r)
{
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r->summary, "predicted")))
        return true;
    const cJSON *first = cJSON_GetArrayItem(rb_rundir_array(r->summary, "collective_rows"), 0);
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(first, "predicted"));
}

static bool detect_coll(const struct rb_rundir *r)
{
    return rb_rundir_array(r->summary, "collective_rows") && !predicted(r);
}

static bool detect_sim(const struct rb_rundir *r)
{
    return rb_rundir_array(r->summary, "collective_rows") && predicted(r);
}

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
    rb_rtable_note(t, "GB/s is 1e9 bytes/s; busbw = algbw x the collective's factor (allreduce 2(n-1)/n; "
                      "allgather, reducescatter, alltoall (n-1)/n; others 1), as nccl-tests computes it");
}

static void tables_coll(const struct rb_report_set *s, struct rb_report_tables *out)
{
    coll_table(s, out, false);
}

static void tables_sim(const struct rb_report_set *s, struct rb_report_tables *out)
{
    coll_table(s, out, true);
}

/* One plot per collective: out-of-place busbw against message size, one series per algorithm (and design). */
static void plots(const struct rb_report_set *s, struct rb_buf *html)
{
    const char *colls[32];
    size_t ncolls = 0;
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *row;
        cJSON_ArrayForEach(row, rb_rundir_array(s->runs[i]->summary, "collective_rows"))
        {
            const char *c = rb_rundir_str(row, "coll");
            bool seen = !c;
            for (size_t k = 0; k < ncolls && !seen; k++)
                seen = strcmp(colls[k], c) == 0;
            if (!seen && ncolls < sizeof colls / sizeof colls[0])
                colls[ncolls++] = c;
        }
    }
    for (size_t c = 0; c < ncolls; c++) {
        char title[256], id[128];
        snprintf(title, sizeof title, "%s: bus bandwidth by message size, per algorithm", colls[c]);
        snprintf(id, sizeof id, "busbw-size");
        struct rb_plot *p = rb_plot_new(id, title);
        if (!p)
            return;
        rb_plot_xaxis(p, "message size (bytes, log scale)", RB_AXIS_LOG2_BYTES, 1, false);
        rb_plot_yaxis(p, "busbw (GB/s)", RB_AXIS_LINEAR, 1, true);
        rb_plot_caption(p, "Out-of-place bus bandwidth (nccl-tests' busbw, GB/s = 1e9 B/s).");
        for (size_t i = 0; i < s->n; i++) {
            /* Series in order of first appearance: algo, or algo on design for sim --compare. */
            char names[64][160];
            int idx[64];
            size_t nnames = 0;
            const cJSON *row;
            cJSON_ArrayForEach(row, rb_rundir_array(s->runs[i]->summary, "collective_rows"))
            {
                const char *coll = rb_rundir_str(row, "coll"), *algo = rb_rundir_str(row, "algo"),
                           *design = rb_rundir_str(row, "design");
                if (!coll || strcmp(coll, colls[c]) != 0)
                    continue;
                char what[160], name[512];
                snprintf(what, sizeof what, "%s%s%s", algo ? algo : "?", design ? " on " : "", design ? design : "");
                size_t k = 0;
                while (k < nnames && strcmp(names[k], what) != 0)
                    k++;
                if (k == nnames) {
                    if (nnames == sizeof names / sizeof names[0])
                        continue;
                    snprintf(names[nnames], sizeof names[0], "%s", what);
                    rb_report_series_name(name, sizeof name, s, i, what);
                    idx[nnames++] = rb_plot_series(p, name);
                }
                rb_plot_point(p, idx[k], rb_rundir_num(row, "size_bytes"), rb_rundir_num(row, "oop.busbw_gbps"));
            }
        }
        rb_report_plot_emit(p, html);
    }
}

const struct rb_report_kind rb_report_kind_coll = {"coll", detect_coll, tables_coll, plots};
const struct rb_report_kind rb_report_kind_sim = {"fabric sim", detect_sim, tables_sim, plots};
