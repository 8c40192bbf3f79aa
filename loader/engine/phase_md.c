/*
 * The markdown rows a load phase's report section and its request phases' tables are written with (phase.c,
 * rphase_run.c): below both, so neither calls the other for them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "phase_int.h"
#include "railbench/units.h"

int rb_load_md_append(char **buf, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -EINVAL;
    char *b = realloc(*buf, *len + (size_t)n + 1);
    if (!b)
        return -ENOMEM;
    va_start(ap, fmt);
    vsnprintf(b + *len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *buf = b;
    *len += (size_t)n;
    return 0;
}

int rb_load_md_latency_row(char **buf, size_t *len, const char *label, const struct rb_hist *h)
{
    struct rb_hist_summary s;
    rb_hist_summarize(h, &s);
    if (!s.count) /* nothing completed: the figures do not exist, they are not 0 */
        return rb_load_md_append(buf, len, "| %s | – | – | – | – | – | – |\n", label);
    char v[6][16];
    rb_format_duration_human(v[0], sizeof v[0], (uint64_t)s.mean_ns);
    rb_format_duration_human(v[1], sizeof v[1], s.p50_ns);
    rb_format_duration_human(v[2], sizeof v[2], s.p90_ns);
    rb_format_duration_human(v[3], sizeof v[3], s.p99_ns);
    rb_format_duration_human(v[4], sizeof v[4], s.p999_ns);
    rb_format_duration_human(v[5], sizeof v[5], s.max_ns);
    return rb_load_md_append(buf, len, "| %s | %s | %s | %s | %s | %s | %s |\n", label, v[0], v[1], v[2], v[3], v[4], v[5]);
}
