/* The straggler table of any run under MPI on several hosts: each phase's figures per host, outliers named. */
#include <stdio.h>
#include <string.h>

#include "report_int.h"

/* The figure a phase's outlier list names for host, or NULL: "throughput_bytes_per_s 0.03x". */
static const char *straggler(const cJSON *outliers, const char *host, char *buf, size_t len)
{
    const cJSON *o;
    size_t n = 0;
    buf[0] = '\0';
    cJSON_ArrayForEach(o, outliers)
    {
        const char *h = rb_rundir_str(o, "host");
        if (!h || strcmp(h, host) != 0)
            continue;
        int w = snprintf(buf + n, len - n, "%s%s %.2fx the median", n ? "; " : "", rb_rundir_str(o, "figure"),
                         rb_rundir_num(o, "ratio"));
        if (w < 0 || (size_t)w >= len - n)
            break;
        n += (size_t)w;
    }
    return n ? buf : NULL;
}

static bool any_hosts(const struct rb_report_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *ph;
        cJSON_ArrayForEach(ph, s->runs[i]->phases)
            if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ph, "hosts")) > 1)
                return true;
    }
    return false;
}

void rb_report_hosts_table(const struct rb_report_set *s, struct rb_report_tables *out)
{
    if (!any_hosts(s))
        return;
    struct rb_rtable *t = rb_report_table(out, s, "hosts", "Hosts (stragglers named by the median/MAD rule)");
    if (!t)
        return;
    rb_rtable_col(t, "phase", "phase", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "host", "host", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "ranks", "ranks", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "throughput_bytes_per_s", "MiB/s", RB_RF_NUM, 2, 1 / (double)RB_MIB, 0);
    rb_rtable_col(t, "ops_per_s", "ops/s", RB_RF_NUM, 1, 1, 0);
    rb_rtable_col(t, "latency_p50_ns", "p50 (ms)", RB_RF_NUM, 3, 1e-6, 0);
    rb_rtable_col(t, "latency_p99_ns", "p99 (ms)", RB_RF_NUM, 3, 1e-6, 0);
    rb_rtable_col(t, "errors", "errors", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "straggler", "straggler", RB_RF_TEXT, 0, 1, 0);
    for (size_t i = 0; i < s->n; i++) {
        const cJSON *ph, *h;
        cJSON_ArrayForEach(ph, s->runs[i]->phases)
        {
            const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(ph, "hosts");
            if (cJSON_GetArraySize(hosts) < 2)
                continue;
            cJSON_ArrayForEach(h, hosts)
            {
                size_t r = rb_report_row(t, s, i);
                const char *name = rb_rundir_str(h, "host");
                char why[256];
                rb_rtable_text(t, r, "phase", rb_rundir_str(ph, "name"));
                rb_rtable_text(t, r, "host", name);
                rb_rtable_num(t, r, "ranks", rb_rundir_num(h, "ranks"));
                rb_rtable_num(t, r, "throughput_bytes_per_s", rb_rundir_num(h, "throughput_bytes_per_s"));
                rb_rtable_num(t, r, "ops_per_s", rb_rundir_num(h, "ops_per_s"));
                rb_rtable_num(t, r, "latency_p50_ns", rb_rundir_num(h, "latency_ns.p50"));
                rb_rtable_num(t, r, "latency_p99_ns", rb_rundir_num(h, "latency_ns.p99"));
                rb_rtable_num(t, r, "errors", rb_rundir_num(h, "errors.total"));
                const char *w = name ? straggler(cJSON_GetObjectItemCaseSensitive(ph, "outliers"), name, why, sizeof why)
                                     : NULL;
                rb_rtable_text(t, r, "straggler", w ? w : "");
            }
        }
    }
}
