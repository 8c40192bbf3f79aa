/* Report of `fabric check`: every link worst first, a host x host bandwidth matrix per rail, the findings, and a heat map. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "html_int.h"
#include "report_int.h"

static bool detect(const struct rb_rundir *r)
{
    return strcmp(r->command, "fabric check") == 0 && cJSON_IsArray(rb_rundir_array(r->summary, "links"));
}

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
    rb_rtable_col(t, "a", "a", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "b", "b", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "latency_p50_us", "p50 us", RB_RF_NUM, 1, 1, 0);
    rb_rtable_col(t, "latency_p99_us", "p99 us", RB_RF_NUM, 1, 1, 0);
    rb_rtable_col(t, "bw_ab_bytes_per_s", "a->b MB/s", RB_RF_NUM, 1, 1e-6, 0);
    rb_rtable_col(t, "bw_ba_bytes_per_s", "b->a MB/s", RB_RF_NUM, 1, 1e-6, 0);
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
            rb_rtable_text(t, r, "a", rb_rundir_str(l, "a"));
            rb_rtable_text(t, r, "b", rb_rundir_str(l, "b"));
            rb_rtable_num(t, r, "latency_p50_us", rb_rundir_num(l, "latency_p50_s") * 1e6);
            rb_rtable_num(t, r, "latency_p99_us", rb_rundir_num(l, "latency_p99_s") * 1e6);
            rb_rtable_num(t, r, "bw_ab_bytes_per_s", rb_rundir_num(l, "bw_ab_bytes_per_s"));
            rb_rtable_num(t, r, "bw_ba_bytes_per_s", rb_rundir_num(l, "bw_ba_bytes_per_s"));
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

static void tables(const struct rb_report_set *s, struct rb_report_tables *out)
{
    findings_table(s, out);
    matrix_tables(s, out);
    links_table(s, out);
}

/* Heat map per rail of the first run: each cell coloured by its bandwidth over the rail's median. */
static void plots(const struct rb_report_set *s, struct rb_buf *html)
{
    const cJSON *sum = s->runs[0]->summary, *hosts = rb_rundir_array(sum, "hosts"), *h, *g;
    int rails = (int)rb_rundir_num(sum, "rails");
    for (int r = 0; r < rails; r++) {
        const cJSON *f = cJSON_GetArrayItem(rb_rundir_array(sum, "fleet"), r);
        double med = rb_rundir_num(f, "bw_bytes_per_s.median");
        rb_buf_printf(html, "<figure class=\"heat\" data-rail=\"%d\"><figcaption>Rail %d: bandwidth row &rarr; column "
                            "over the rail median (%.1f MB/s); red is slow, black hung</figcaption>\n<table>\n<tr><th></th>",
                      r, r, med / 1e6);
        cJSON_ArrayForEach(g, hosts)
        {
            rb_buf_printf(html, "<th>");
            rb_html_escape(html, cJSON_GetStringValue(g));
            rb_buf_printf(html, "</th>");
        }
        rb_buf_printf(html, "</tr>\n");
        cJSON_ArrayForEach(h, hosts)
        {
            rb_buf_printf(html, "<tr><th>");
            rb_html_escape(html, cJSON_GetStringValue(h));
            rb_buf_printf(html, "</th>");
            cJSON_ArrayForEach(g, hosts)
            {
                double v = h == g ? NAN : directed(sum, r, cJSON_GetStringValue(h), cJSON_GetStringValue(g));
                if (isnan(v))
                    rb_buf_printf(html, "<td></td>");
                else if (v < 0)
                    rb_buf_printf(html, "<td style=\"background:#000;color:#fff\">hang</td>");
                else /* hue 0 (red) at 0x the median to 120 (green) at 1x and above */
                    rb_buf_printf(html, "<td style=\"background:hsl(%.0f,70%%,60%%)\" title=\"%.1f MB/s\">%.2f</td>",
                                  120 * fmin(1, v / med), v / 1e6, v / med);
            }
            rb_buf_printf(html, "</tr>\n");
        }
        rb_buf_printf(html, "</table></figure>\n");
    }
}

const struct rb_report_kind rb_report_kind_check = {"fabric check", {"fabric check"}, detect, tables, plots, NULL};
