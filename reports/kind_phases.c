/* Report of any other result, and of runs rebuilt from intervals.jsonl: one row per phase record. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_int.h"

static void tables(const struct rb_report_set *s, struct rb_report_tables *out)
{
    struct rb_rtable *t = rb_report_table(out, s, "phases", "Phases");
    if (!t)
        return;
    const double ms = 1e-6;
    rb_rtable_col(t, "phase", "phase", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "op", "op", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "count", "count", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "bytes", "bytes", RB_RF_SIZE, 0, 1, 0);
    rb_rtable_col(t, "duration_s", "duration (s)", RB_RF_NUM, 2, 1, 0);
    rb_rtable_col(t, "throughput_bytes_per_s", "MiB/s", RB_RF_NUM, 2, 1 / (double)RB_MIB, 0);
    rb_rtable_col(t, "ops_per_s", "ops/s", RB_RF_NUM, 1, 1, 0);
    rb_rtable_col(t, "latency_p50_ns", "p50 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "latency_p90_ns", "p90 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "latency_p99_ns", "p99 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "latency_p999_ns", "p99.9 (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "latency_max_ns", "max (ms)", RB_RF_NUM, 3, ms, 0);
    rb_rtable_col(t, "errors", "errors", RB_RF_NUM, 0, 1, 0);
    static const char *const figs[] = {"count", "bytes", "duration_s", "throughput_bytes_per_s", "ops_per_s"};
    static const char *const lat[] = {"latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_p999_ns",
                                      "latency_max_ns"};
    for (size_t i = 0; i < s->n; i++) {
        const struct rb_rundir *run = s->runs[i];
        size_t rows = 0, interrupted = 0;
        const cJSON *ph;
        cJSON_ArrayForEach(ph, run->phases)
        {
            if (!cJSON_IsObject(ph))
                continue;
            size_t r = rb_report_row(t, s, i);
            rows++;
            rb_rtable_text(t, r, "phase", rb_rundir_str(ph, "name"));
            rb_rtable_text(t, r, "op", rb_rundir_str(ph, "op"));
            for (size_t f = 0; f < sizeof figs / sizeof figs[0]; f++)
                rb_rtable_num(t, r, figs[f], rb_rundir_num(ph, figs[f]));
            rb_rtable_num(t, r, "errors", rb_rundir_num(ph, "errors.total"));
            /* A record without a latency summary (collectives, samplers) leaves the cells empty. */
            const cJSON *l = cJSON_GetObjectItemCaseSensitive(ph, "latency_ns");
            if (run->partial) {
                for (size_t k = 0; k < sizeof lat / sizeof lat[0]; k++)
                    rb_rtable_text(t, r, lat[k], "n/a");
            } else if (cJSON_IsObject(l) && rb_rundir_num(l, "max") > 0) {
                rb_report_latency_cells(t, r, "latency", l);
            }
            interrupted += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ph, "interrupted"));
        }
        if (run->partial)
            rb_report_note(t, s, i,
                    "rebuilt from %zu lines of intervals.jsonl (no usable result.json): counts, bytes and rates are "
                    "sums over whole intervals; latency percentiles are not available (n/a) because interval lines "
                    "carry no histograms",
                    run->interval_lines);
        else if (!rows)
            rb_report_note(t, s, i, "no phase records");
        if (interrupted)
            rb_report_note(t, s, i, "interrupted by a signal: the phases cover what ran before it");
        if (*run->command && !run->partial)
            rb_report_note(t, s, i, "command \"%s\": no table of its own here, so its phase records are shown",
                    run->command);
    }
}

static void plots(const struct rb_report_set *s, struct rb_buf *html)
{
    rb_report_plot_latency(s, html);
}

RB_REPORT_KIND(phases, 1000) = {"phases", tables, rb_report_plot_timeline, plots};
