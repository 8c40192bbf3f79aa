/*
 * nccl-tests' figures, shared by railbench coll (measured) and fabric sim (predicted): the collective
 * kinds, algbw and busbw, and the table's columns. Header-only, so neither module links to the other.
 */
#ifndef RB_BUSBW_H
#define RB_BUSBW_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum rb_coll_kind {
    RB_COLL_ALLREDUCE,
    RB_COLL_ALLGATHER,
    RB_COLL_REDUCESCATTER,
    RB_COLL_BROADCAST,
    RB_COLL_REDUCE,
    RB_COLL_ALLTOALL,
    RB_COLL_SENDRECV,
    RB_COLL_KINDS
};

/*
 * One kind as nccl-tests' doc/PERFORMANCE.md describes it. busbw = algbw x
 * busbw_num x (n-1)/n, or algbw x 1 when busbw_num is 0 (broadcast, reduce,
 * sendrecv: every byte crosses each link once). S, the bytes algbw divides by
 * the time, is count x type bytes, times n when whole_array (the gathered,
 * scattered or exchanged collectives count the whole n-rank array).
 */
struct rb_coll_kind_def {
    const char *name;
    int busbw_num;    /* 2: allreduce; 1: allgather, reducescatter, alltoall; 0: factor 1 */
    bool whole_array; /* S counts the n-rank array */
    bool reduces;     /* takes a reduction operation (-o) */
    bool rooted;      /* takes a root (-r) */
};

/* The kinds, in nccl-tests' order; NULL for an invalid kind. */
static inline const struct rb_coll_kind_def *rb_coll_kind_def(enum rb_coll_kind k)
{
    static const struct rb_coll_kind_def defs[RB_COLL_KINDS] = {
        [RB_COLL_ALLREDUCE] = {"allreduce", 2, false, true, false},
        [RB_COLL_ALLGATHER] = {"allgather", 1, true, false, false},
        [RB_COLL_REDUCESCATTER] = {"reducescatter", 1, true, true, false},
        [RB_COLL_BROADCAST] = {"broadcast", 0, false, false, true},
        [RB_COLL_REDUCE] = {"reduce", 0, false, true, true},
        [RB_COLL_ALLTOALL] = {"alltoall", 1, true, false, false},
        [RB_COLL_SENDRECV] = {"sendrecv", 0, false, false, false},
    };
    return (unsigned)k < RB_COLL_KINDS ? &defs[k] : NULL;
}

/* "allreduce", "allgather", ...; NULL for an invalid kind. */
static inline const char *rb_coll_kind_name(enum rb_coll_kind k)
{
    const struct rb_coll_kind_def *d = rb_coll_kind_def(k);
    return d ? d->name : NULL;
}

/* Kind named s; returns 0 or -EINVAL. */
static inline int rb_coll_kind_parse(const char *s, enum rb_coll_kind *k)
{
    for (int i = 0; i < RB_COLL_KINDS; i++)
        if (strcmp(s, rb_coll_kind_def((enum rb_coll_kind)i)->name) == 0) {
            *k = (enum rb_coll_kind)i;
            return 0;
        }
    return -EINVAL;
}

/*
 * Bus-bandwidth factor for n ranks, as nccl-tests defines it (doc/PERFORMANCE.md):
 * allreduce 2(n-1)/n; reducescatter, allgather, alltoall (n-1)/n; broadcast,
 * reduce, sendrecv 1. n <= 1 gives the n = 1 value (0 or 1).
 */
static inline double rb_coll_busbw_factor(enum rb_coll_kind k, int n)
{
    const struct rb_coll_kind_def *d = rb_coll_kind_def(k);
    if (n < 1)
        n = 1;
    return d && d->busbw_num ? d->busbw_num * (double)(n - 1) / n : 1.0;
}

/*
 * The bytes S that algbw divides by the time, for nccl-tests' per-rank
 * element count (the "count" column): count x type_bytes, times n for
 * allgather, reducescatter and alltoall, whose S is the whole n-rank array.
 */
static inline double rb_coll_algbw_bytes(enum rb_coll_kind k, size_t count, size_t type_bytes, int n)
{
    const struct rb_coll_kind_def *d = rb_coll_kind_def(k);
    double s = (double)count * (double)type_bytes;
    return d && d->whole_array ? s * (n < 1 ? 1 : n) : s;
}

/*
 * Elements per rank of allgather, reducescatter and alltoall for a total of
 * count elements on n ranks. nccl-tests since v2.13.12 trims each rank's
 * share to a multiple of 16 bytes (its *GetCollByteCount: (count / n) &
 * ~(16 / type_bytes - 1)), so that blocks stay aligned for any n; legacy
 * keeps the older count / n. np 3, float, 1000 B: 80 aligned, 83 legacy.
 */
static inline size_t rb_coll_per_rank_count(size_t count, int n, size_t type_bytes, bool legacy)
{
    size_t base = count / (size_t)(n < 1 ? 1 : n);
    size_t align = legacy || type_bytes == 0 || type_bytes >= 16 ? 1 : 16 / type_bytes;
    return base / align * align;
}

/* algbw in GB/s (decimal, as nccl-tests) for size_bytes moved in time_us; 0 when time_us <= 0. */
static inline double rb_coll_algbw_gbps(double size_bytes, double time_us)
{
    return time_us > 0 ? size_bytes / (time_us * 1e3) : 0;
}

/* busbw = algbw x rb_coll_busbw_factor(k, n), in the unit of algbw. */
static inline double rb_coll_busbw_gbps(enum rb_coll_kind k, int n, double algbw_gbps)
{
    return algbw_gbps * rb_coll_busbw_factor(k, n);
}

/* Appends to buf at *off (kept NUL-terminated); *off passes len once the text no longer fits. */
static inline void rb_coll_table_cat(char *buf, size_t len, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline void rb_coll_table_cat(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
    if (*off >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *off, len - *off, fmt, ap);
    va_end(ap);
    *off = n < 0 ? len : *off + (size_t)n;
}

/*
 * A figure in a column of width w as nccl-tests 2.19's getFloatStr prints it
 * (src/util.cu): two decimals, or one, or none, or an exponent, whichever
 * first fits in w characters. Returns what snprintf returns.
 */
static inline int rb_coll_table_float(char *buf, size_t len, double v, int w)
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

/*
 * The nccl-tests table's header lines ("#" line, "out-of-place / in-place",
 * column names, units) into buf, byte for byte as nccl-tests 2.19's
 * writeResultHeader prints them (src/util.cu), trailing spaces included:
 * cputime names the time columns "cputime" (-C); per_iter adds i_min i_max
 * i_p99 i_cv% to each half (-I); timestamps adds a last "timestamp" column
 * with its strftime format (-S). Returns the length, or -ENOSPC when buf
 * was too small.
 */
static inline int rb_coll_table_header_str(char *buf, size_t len, bool cputime, bool per_iter, bool timestamps)
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

/* A row's first columns: size (B), count (elements), type, redop, root (nccl-tests' "%12li  %12li  %8s  %6s  %6s"). */
static inline int rb_coll_table_row_start(char *buf, size_t len, size_t size_bytes, size_t count, const char *type,
                                          const char *redop, int root)
{
    return snprintf(buf, len, "%12zu  %12zu  %8s  %6s  %6d", size_bytes, count, type, redop, root);
}

/*
 * One half of a row as nccl-tests 2.19 prints it: time (us, 7 wide), algbw
 * and busbw (GB/s, 6 wide), #wrong ("%6g"; wrong < 0 prints N/A). Returns
 * what snprintf returns.
 */
static inline int rb_coll_table_half(char *buf, size_t len, double time_us, double algbw, double busbw,
                                     long long wrong)
{
    char t[16], a[16], b[16];
    rb_coll_table_float(t, sizeof t, time_us, 7);
    rb_coll_table_float(a, sizeof a, algbw, 6);
    rb_coll_table_float(b, sizeof b, busbw, 6);
    if (wrong < 0)
        return snprintf(buf, len, "  %7s  %6s  %6s    N/A", t, a, b);
    return snprintf(buf, len, "  %7s  %6s  %6s  %6g", t, a, b, (double)wrong);
}

/*
 * nccl-tests' closing lines: "# Out of bounds values : N OK|FAILED",
 * "# Avg bus bandwidth    : X " (X the plain mean of busbw over every row
 * and both halves; the trailing space is nccl-tests' when no minimum is
 * checked), then "#". Returns what snprintf returns.
 */
static inline int rb_coll_table_footer(char *buf, size_t len, long long wrong, double avg_busbw_gbps)
{
    return snprintf(buf, len, "# %-20s : %lld %s\n# %-20s : %g \n#\n", "Out of bounds values", wrong,
                    wrong ? "FAILED" : "OK", "Avg bus bandwidth", avg_busbw_gbps);
}

#endif
