/* Report of `fabric check`: every link worst first, a host x host bandwidth matrix per rail, the findings, and a heat map. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "heatmap_int.h"
#include "html_int.h"
#include "report_int.h"

/* The slower direction of a link over its rail's median; -1 for a hang, NaN when unknown. */
static double link_ratio(const cJSON *summary, const cJSON *l)
{
    if (strcmp(rb_rundir_str(l, "status") ? rb_rundir_str(l, "status") : "", "timeout") == 0)
        return -1;
    int rail = (int)rb_rundir_num(l, "rail");
    const cJSON *f = cJSON_GetArrayItem(rb_rundir_array(summary, "fleet"), rail);
    double med = rb_rundir_num(f, "bw_bytes_per_s.median");
    return fmin(rb_rundir_num(l, "bw_ab_bytes_per_s"), rb_rundir_num(l, "bw_ba_bytes_per_s")) / med;
}

static void links_table(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "check-links", "Links (host pair and rail)");
    if (!t)
        return;
    rb_rtable_col(t, "rail", "rail", RB_RF_NUM, 0, 1, RB_RCOL_KEY);
    /* Not "a" and "b": a comparison of two tables has columns of those names (A's and B's value). */
    rb_rtable_col(t, "host_a", "a", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "host_b", "b", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "latency_p50_us", "p50 us", RB_RF_NUM, 1, 1, 0);
    rb_rtable_col(t, "latency_p99_us", "p99 us", RB_RF_NUM, 1, 1, 0);
    rb_rtable_col(t, "bw_ab_bytes_per_s", "a->b MB/s", RB_RF_NUM, 1, 1e-6, 0);
    rb_rtable_col(t, "bw_ba_bytes_per_s", "b->a MB/s", RB_RF_NUM, 1, 1e-6, 0);
    rb_rtable_col(t, "bw_bidir_ab_bytes_per_s", "both: a->b MB/s", RB_RF_NUM, 1, 1e-6, RB_RCOL_OPTIONAL);
    rb_rtable_col(t, "bw_bidir_ba_bytes_per_s", "both: b->a MB/s", RB_RF_NUM, 1, 1e-6, RB_RCOL_OPTIONAL);
    rb_rtable_col(t, "bw_bidir_bytes_per_s", "both MB/s", RB_RF_NUM, 1, 1e-6, 0);
    rb_rtable_col(t, "ratio", "x median", RB_RF_NUM, 2, 1, 0);
    rb_rtable_col(t, "status", "status", RB_RF_TEXT, 0, 1, RB_RCOL_NOTE);
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *sum = s->runs[i]->summary, *l;
        cJSON_ArrayForEach(l, rb_rundir_array(sum, "links"))
        {
            size_t r = rb_report_row(t, s, i);
            double ratio = link_ratio(sum, l);
            const char *st = rb_rundir_str(l, "status");
            bool slow = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(l, "slow"));
            rb_rtable_num(t, r, "rail", rb_rundir_num(l, "rail"));
            rb_rtable_text(t, r, "host_a", rb_rundir_str(l, "a"));
            rb_rtable_text(t, r, "host_b", rb_rundir_str(l, "b"));
            rb_rtable_num(t, r, "latency_p50_us", rb_rundir_num(l, "latency_p50_s") * 1e6);
            rb_rtable_num(t, r, "latency_p99_us", rb_rundir_num(l, "latency_p99_s") * 1e6);
            rb_rtable_num(t, r, "bw_ab_bytes_per_s", rb_rundir_num(l, "bw_ab_bytes_per_s"));
            rb_rtable_num(t, r, "bw_ba_bytes_per_s", rb_rundir_num(l, "bw_ba_bytes_per_s"));
            rb_rtable_num(t, r, "bw_bidir_ab_bytes_per_s", rb_rundir_num(l, "bw_bidir_ab_bytes_per_s"));
            rb_rtable_num(t, r, "bw_bidir_ba_bytes_per_s", rb_rundir_num(l, "bw_bidir_ba_bytes_per_s"));
            rb_rtable_num(t, r, "bw_bidir_bytes_per_s", rb_rundir_num(l, "bw_bidir_bytes_per_s"));
            rb_rtable_num(t, r, "ratio", ratio >= 0 ? ratio : NAN);
            rb_rtable_text(t, r, "status", st && strcmp(st, "timeout") == 0 ? "HANG" : slow ? "slow" : st);
        }
    }
}

static void findings_table(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "check-findings", "Findings");
    if (!t)
        return;
    rb_rtable_col(t, "kind", "kind", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "rail", "rail", RB_RF_NUM, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "host", "host", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "peer", "peer", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "text", "finding", RB_RF_TEXT, 0, 1, RB_RCOL_NOTE);
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *f, *fs = rb_rundir_array(s->runs[i]->summary, "findings");
        if (cJSON_GetArraySize(fs) == 0)
            rb_report_note(t, s, i, "no finding: every link within %.2fx of its rail's median, none hung",
                           rb_rundir_num(s->runs[i]->summary, "threshold"));
        cJSON_ArrayForEach(f, fs)
        {
            size_t r = rb_report_row(t, s, i);
            rb_rtable_text(t, r, "kind", rb_rundir_str(f, "kind"));
            rb_rtable_num(t, r, "rail", rb_rundir_num(f, "rail"));
            rb_rtable_text(t, r, "host", rb_rundir_str(f, "host"));
            rb_rtable_text(t, r, "peer", rb_rundir_str(f, "peer"));
            rb_rtable_text(t, r, "text", rb_rundir_str(f, "text"));
        }
    }
}

/* The figure of src -> dst on a rail: bandwidth, -1 for a hang, NaN when there is no such link. */
static double directed(const cJSON *summary, int rail, const char *src, const char *dst)
{
    const cJSON *l;
    cJSON_ArrayForEach(l, rb_rundir_array(summary, "links"))
    {
        const char *a = rb_rundir_str(l, "a"), *b = rb_rundir_str(l, "b");
        if ((int)rb_rundir_num(l, "rail") != rail || !a || !b)
            continue;
        bool fwd = !strcmp(a, src) && !strcmp(b, dst), back = !strcmp(a, dst) && !strcmp(b, src);
        if (!fwd && !back)
            continue;
        if (!strcmp(rb_rundir_str(l, "status") ? rb_rundir_str(l, "status") : "", "timeout"))
            return -1;
        return rb_rundir_num(l, fwd ? "bw_ab_bytes_per_s" : "bw_ba_bytes_per_s");
    }
    return NAN;
}

/* One matrix per rail (row sends, column receives), for a single run: hosts differ between runs. */
static void matrix_tables(const struct rb_report_set *s, struct rb_report_tables *out)
{
    const cJSON *sum = s->runs[0]->summary, *hosts = rb_rundir_array(sum, "hosts");
    int rails = (int)rb_rundir_num(sum, "rails");
    for (int r = 0; r < rails && s->n == 1; r++) {
        char id[32], title[96];
        snprintf(id, sizeof id, "check-rail%d", r);
        snprintf(title, sizeof title, "Rail %d: bandwidth row -> column, MB/s (-1: hung)", r);
        struct rb_rtable *t = rb_report_table(out, s, id, title);
        if (!t)
            return;
        rb_rtable_col(t, "from", "from \\ to", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
        const cJSON *h, *g;
        cJSON_ArrayForEach(h, hosts)
            rb_rtable_col(t, cJSON_GetStringValue(h), cJSON_GetStringValue(h), RB_RF_NUM, 1, 1e-6, 0);
        cJSON_ArrayForEach(h, hosts)
        {
            size_t row = rb_report_row(t, s, 0);
            rb_rtable_text(t, row, "from", cJSON_GetStringValue(h));
            cJSON_ArrayForEach(g, hosts)
            {
                double v = directed(sum, r, cJSON_GetStringValue(h), cJSON_GetStringValue(g));
                rb_rtable_num(t, row, cJSON_GetStringValue(g), v < 0 ? -1e6 : v);
            }
        }
    }
}

/* --plan-only: the schedule, a row per run (its summary counts the hosts and links instead of listing them). */
static void plan_table(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "check-plan", "Plan (--plan-only: nothing measured)");
    if (!t)
        return;
    static const char *const figs[] = {"hosts", "rails", "rounds", "pairs_per_round", "links", "estimated_run_s"};
    static const char *const heads[] = {"hosts", "rails", "rounds", "pairs per round", "links", "estimated run (s)"};
    for (size_t f = 0; f < sizeof figs / sizeof figs[0]; f++)
        rb_rtable_col(t, figs[f], heads[f], RB_RF_NUM, f == 5 ? 1 : 0, 1, 0);
    for (size_t i = 0; i < s->n; i++) {
        size_t r = rb_report_row(t, s, i);
        for (size_t f = 0; f < sizeof figs / sizeof figs[0]; f++)
            rb_rtable_num(t, r, figs[f], rb_rundir_num(s->runs[i]->summary, figs[f]));
    }
}

static void tables(const struct rb_report_set *s, struct rb_report_tables *out)
{
    bool measured = false, planned = false;
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *links = cJSON_GetObjectItemCaseSensitive(s->runs[i]->summary, "links");
        measured |= !cJSON_IsNumber(links);
        planned |= cJSON_IsNumber(links);
    }
    if (planned)
        plan_table(s, out);
    if (!measured)
        return;
    findings_table(s, out);
    matrix_tables(s, out);
    links_table(s, out);
}

/* Heat map per rail of the first run: host x host bandwidth on the shared colour-blind-safe scale. */
static void plots(const struct rb_report_set *s, struct rb_buf *html)
{
    const cJSON *sum = s->runs[0]->summary, *hosts = rb_rundir_array(sum, "hosts"), *h, *g;
    int rails = (int)rb_rundir_num(sum, "rails");
    const char *names[RB_HEATMAP_MAX];
    size_t n = 0;
    cJSON_ArrayForEach(h, hosts)
        if (n < RB_HEATMAP_MAX)
            names[n++] = cJSON_GetStringValue(h) ? cJSON_GetStringValue(h) : "?";
    for (int r = 0; r < rails; r++) {
        const cJSON *f = cJSON_GetArrayItem(rb_rundir_array(sum, "fleet"), r);
        double med = rb_rundir_num(f, "bw_bytes_per_s.median");
        char id[32], title[64], caption[256];
        snprintf(id, sizeof id, "check-rail-%d", r);
        snprintf(title, sizeof title, "Rail %d: bandwidth row -> column", r);
        snprintf(caption, sizeof caption,
                 "rail median %.3f GB/s; '-' is the host itself, a link not measured, or one that hung (see the findings)",
                 med / 1e9);
        struct rb_heatmap *m = rb_heatmap_new(id, title, names, n, names, n);
        if (!m)
            return;
        rb_heatmap_format(m, "GB/s", 1e-9, 2, caption);
        size_t i = 0;
        cJSON_ArrayForEach(h, hosts)
        {
            size_t j = 0;
            cJSON_ArrayForEach(g, hosts)
            {
                double v = h == g ? NAN : directed(sum, r, cJSON_GetStringValue(h), cJSON_GetStringValue(g));
                if (v >= 0) /* a hang is negative: no value, drawn as '-' */
                    rb_heatmap_set(m, i, j, v);
                j++;
            }
            i++;
        }
        rb_heatmap_svg(m, html);
        rb_heatmap_free(m);
    }
}

RB_REPORT_KIND(check, 100) = {"fabric check", tables, plots, NULL};
