/* Report of `fabric counters`: per-host disk, NIC and InfiniBand rates over the run. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_int.h"

/* A host without devices of a section (no InfiniBand port, no disk) measured nothing there: NAN, shown "–". */
static bool none(const cJSON *host, const char *section)
{
    return cJSON_GetArraySize(rb_rundir_array(host, section)) == 0;
}

static double sum_field(const cJSON *host, const char *section, const char *field)
{
    if (none(host, section))
        return NAN;
    double s = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, rb_rundir_array(host, section))
    {
        double v = rb_rundir_num(d, field);
        if (isfinite(v))
            s += v;
    }
    return s;
}

static double max_field(const cJSON *host, const char *section, const char *field)
{
    if (none(host, section))
        return NAN;
    double m = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, rb_rundir_array(host, section))
    {
        double v = rb_rundir_num(d, field);
        if (v > m)
            m = v;
    }
    return m;
}

static void tables(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "counters", "Host counters over the run");
    if (!t)
        return;
    rb_rtable_col(t, "host", "host", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "disk_read_iops", "disk r/s", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "disk_write_iops", "disk w/s", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "disk_read_bytes_per_s", "rd MiB/s", RB_RF_NUM, 2, 1 / (double)RB_MIB, 0);
    rb_rtable_col(t, "disk_write_bytes_per_s", "wr MiB/s", RB_RF_NUM, 2, 1 / (double)RB_MIB, 0);
    rb_rtable_col(t, "disk_util_ratio", "util %", RB_RF_NUM, 1, 100, 0);
    rb_rtable_col(t, "net_rx_bytes_per_s", "net rx MiB/s", RB_RF_NUM, 2, 1 / (double)RB_MIB, 0);
    rb_rtable_col(t, "net_tx_bytes_per_s", "net tx MiB/s", RB_RF_NUM, 2, 1 / (double)RB_MIB, 0);
    rb_rtable_col(t, "ib_rx_bytes_per_s", "IB rx MiB/s", RB_RF_NUM, 2, 1 / (double)RB_MIB, 0);
    rb_rtable_col(t, "ib_tx_bytes_per_s", "IB tx MiB/s", RB_RF_NUM, 2, 1 / (double)RB_MIB, 0);
    rb_rtable_col(t, "cpu_util_ratio", "cpu %", RB_RF_NUM, 1, 100, 0);
    bool no_disk = false, no_net = false, no_ib = false;
    for (size_t i = 0; i < s->n; i++) {
        double dur = NAN;
        const cJSON *h;
        cJSON_ArrayForEach(h, s->runs[i]->summary)
        {
            no_disk |= none(h, "disk");
            no_net |= none(h, "net");
            no_ib |= none(h, "ib");
            size_t r = rb_report_row(t, s, i);
            rb_rtable_text(t, r, "host", rb_rundir_str(h, "host"));
            rb_rtable_num(t, r, "disk_read_iops", sum_field(h, "disk", "read_iops"));
            rb_rtable_num(t, r, "disk_write_iops", sum_field(h, "disk", "write_iops"));
            rb_rtable_num(t, r, "disk_read_bytes_per_s", sum_field(h, "disk", "read_bytes_per_s"));
            rb_rtable_num(t, r, "disk_write_bytes_per_s", sum_field(h, "disk", "write_bytes_per_s"));
            rb_rtable_num(t, r, "disk_util_ratio", max_field(h, "disk", "util_ratio"));
            rb_rtable_num(t, r, "net_rx_bytes_per_s", sum_field(h, "net", "rx_bytes_per_s"));
            rb_rtable_num(t, r, "net_tx_bytes_per_s", sum_field(h, "net", "tx_bytes_per_s"));
            rb_rtable_num(t, r, "ib_rx_bytes_per_s", sum_field(h, "ib", "rx_bytes_per_s"));
            rb_rtable_num(t, r, "ib_tx_bytes_per_s", sum_field(h, "ib", "tx_bytes_per_s"));
            rb_rtable_num(t, r, "cpu_util_ratio", rb_rundir_num(h, "cpu_util_ratio"));
            if (!isfinite(dur))
                dur = rb_rundir_num(h, "duration_s");
        }
        if (isfinite(dur))
            rb_report_note(t, s, i, "rates over %.1f s; disks and interfaces summed per host, util %% of the busiest disk",
                           dur);
    }
    if (no_disk)
        rb_rtable_note(t, "disk –: not measured on a host with no block device to read");
    if (no_net)
        rb_rtable_note(t, "net –: not measured on a host with no network interface but lo (lo is left out)");
    if (no_ib)
        rb_rtable_note(t, "IB –: not measured on a host with no InfiniBand or RoCE port");
}

/* Network and disk bytes per host over time, from the interval lines. */
static void plots(const struct rb_report_set *s, struct rb_buf *html)
{
    struct rb_plot *p = rb_plot_new("host-rates", "Host network and disk rates over time");
    if (!p)
        return;
    rb_plot_xaxis(p, "time (s)", RB_AXIS_LINEAR, 1, true);
    rb_plot_yaxis(p, "rate (MiB/s)", RB_AXIS_LINEAR, 1 / (double)RB_MIB, true);
    rb_plot_caption(p, "Per host: bytes received and sent over every interface (Ethernet and InfiniBand), and "
                       "bytes read and written by every disk, per interval.");
    char name[512];
    for (size_t i = 0; i < s->n; i++) {
        for (size_t k = 0; k < s->runs[i]->nseries; k++) {
            const struct rb_series *ser = &s->runs[i]->series[k];
            rb_report_series_name(name, sizeof name, s, i, ser->name);
            int si = rb_plot_series(p, name);
            for (size_t j = 0; j < ser->n; j++)
                rb_plot_point(p, si, ser->t_s[j], ser->bytes_per_s[j]);
        }
    }
    rb_report_plot_emit(p, html);
}

RB_REPORT_KIND(counters, 90) = {"fabric counters", tables, plots, NULL};
