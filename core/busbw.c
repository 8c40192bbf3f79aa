/* nccl-tests' figures (include/railbench/busbw.h): the collective kinds, algbw and busbw, the table's columns. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "railbench/busbw.h"

const struct rb_coll_kind_def *rb_coll_kind_def(enum rb_coll_kind k)
{
    static const struct rb_coll_kind_def defs[RB_COLL_KINDS] = {
#define RB_COLL_KIND_DEF(K, name, num, whole, reduces, rooted) [RB_COLL_##K] = {#name, num, whole, reduces, rooted},
        RB_COLL_KIND_LIST(RB_COLL_KIND_DEF)
#undef RB_COLL_KIND_DEF
    };
    return (unsigned)k < RB_COLL_KINDS ? &defs[k] : NULL;
}

const char *rb_coll_kind_name(enum rb_coll_kind k)
{
    const struct rb_coll_kind_def *d = rb_coll_kind_def(k);
    return d ? d->name : NULL;
}

char *rb_coll_kind_names(char *buf, size_t len, const char *sep, const char *last)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < RB_COLL_KINDS; i++)
        rb_coll_table_cat(buf, len, &off, "%s%s", i == 0 ? "" : i == RB_COLL_KINDS - 1 && last ? last : sep,
                          rb_coll_kind_name((enum rb_coll_kind)i));
    return buf;
}

int rb_coll_kind_parse(const char *s, enum rb_coll_kind *k)
{
    for (int i = 0; i < RB_COLL_KINDS; i++)
        if (strcmp(s, rb_coll_kind_def((enum rb_coll_kind)i)->name) == 0) {
            *k = (enum rb_coll_kind)i;
            return 0;
        }
    return -EINVAL;
}

double rb_coll_busbw_factor(enum rb_coll_kind k, int n)
{
    const struct rb_coll_kind_def *d = rb_coll_kind_def(k);
    if (n < 1)
        n = 1;
    return d && d->busbw_num ? d->busbw_num * (double)(n - 1) / n : 1.0;
}

double rb_coll_algbw_bytes(enum rb_coll_kind k, size_t count, size_t type_bytes, int n)
{
    const struct rb_coll_kind_def *d = rb_coll_kind_def(k);
    double s = (double)count * (double)type_bytes;
    return d && d->whole_array ? s * (n < 1 ? 1 : n) : s;
}

size_t rb_coll_per_rank_count(size_t count, int n, size_t type_bytes, bool legacy)
{
    size_t base = count / (size_t)(n < 1 ? 1 : n);
    size_t align = legacy || type_bytes == 0 || type_bytes >= 16 ? 1 : 16 / type_bytes;
    return base / align * align;
}

double rb_coll_algbw_gbps(double size_bytes, double time_us)
{
    return time_us > 0 ? size_bytes / (time_us * 1e3) : 0;
}

double rb_coll_busbw_gbps(enum rb_coll_kind k, int n, double algbw_gbps)
{
    return algbw_gbps * rb_coll_busbw_factor(k, n);
}

void rb_coll_table_cat(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
    if (*off >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *off, len - *off, fmt, ap);
    va_end(ap);
    *off = n < 0 ? len : *off + (size_t)n;
}

int rb_coll_table_float(char *buf, size_t len, double v, int w)
{
    static const char *const fmts[3] = {"%*.2f", "%*.1f", "%*.0f"};
    for (int i = 0; i < 3; i++) {
        int n = snprintf(buf, len, fmts[i], w, v);
        if (n <= w)
            return n;
    }
    /* nccl-tests cuts the exponent form to the column (snprintf into width + 1 bytes). */
    size_t cut = len < (size_t)w + 1 ? len : (size_t)w + 1;
    int n = snprintf(buf, cut, w >= 7 ? "%*.1e" : "%*.0e", w, v);
    return n > w ? w : n;
}

int rb_coll_table_header_str(char *buf, size_t len, bool cputime, bool per_iter, bool timestamps)
{
    const char *ts_lbl = timestamps ? "timestamp" : "", *ts_fmt = timestamps ? "%Y-%m-%d %H:%M:%S" : "";
    const int ts_pad = timestamps ? 19 : 0;
    const char *tm = cputime ? "cputime" : "time";
    size_t off = 0;
    rb_coll_table_cat(buf, len, &off, "#\n");
    if (per_iter) {
        rb_coll_table_cat(buf, len, &off,
                          "# %10s  %12s  %8s  %6s  %6s              out-of-place (+ per-iteration)"
                          "                                in-place (+ per-iteration)\n",
                          "", "", "", "", "");
        for (int l = 0; l < 2; l++) {
            const char *c[8] = {tm, "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%"};
            const char *u[8] = {"(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)", "(%)"};
            const char *const *x = l ? u : c;
            rb_coll_table_cat(buf, len, &off,
                              "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s"
                              "  %7s  %7s  %7s  %7s %*s\n",
                              l ? "(B)" : "size", l ? "(elements)" : "count", l ? "" : "type", l ? "" : "redop",
                              l ? "" : "root", x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[0], x[1], x[2],
                              x[3], x[4], x[5], x[6], x[7], ts_pad, l ? ts_fmt : ts_lbl);
        }
    } else {
        rb_coll_table_cat(buf, len, &off,
                          "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place"
                          "          \n",
                          "", "", "", "", "");
        rb_coll_table_cat(buf, len, &off, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n",
                          "size", "count", "type", "redop", "root", tm, "algbw", "busbw", "#wrong", tm, "algbw",
                          "busbw", "#wrong", ts_pad, ts_lbl);
        rb_coll_table_cat(buf, len, &off, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n",
                          "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
                          "(GB/s)", "", ts_pad, ts_fmt);
    }
    return off < len ? (int)off : -ENOSPC;
}

int rb_coll_table_row_start(char *buf, size_t len, size_t size_bytes, size_t count, const char *type, const char *redop, int root)
{
    return snprintf(buf, len, "%12zu  %12zu  %8s  %6s  %6d", size_bytes, count, type, redop, root);
}

int rb_coll_table_half(char *buf, size_t len, double time_us, double algbw, double busbw, long long wrong)
{
    char t[16], a[16], b[16];
    rb_coll_table_float(t, sizeof t, time_us, 7);
    rb_coll_table_float(a, sizeof a, algbw, 6);
    rb_coll_table_float(b, sizeof b, busbw, 6);
    if (wrong < 0)
        return snprintf(buf, len, "  %7s  %6s  %6s    N/A", t, a, b);
    return snprintf(buf, len, "  %7s  %6s  %6s  %6g", t, a, b, (double)wrong);
}

int rb_coll_table_footer(char *buf, size_t len, long long wrong, double avg_busbw_gbps)
{
    return snprintf(buf, len, "# %-20s : %lld %s\n# %-20s : %g \n#\n", "Out of bounds values", wrong,
                    wrong ? "FAILED" : "OK", "Avg bus bandwidth", avg_busbw_gbps);
}
