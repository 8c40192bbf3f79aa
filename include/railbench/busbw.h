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
 * The nccl-tests table's header lines ("out-of-place / in-place", column
 * names, units) into buf, as nccl-tests' writeResultHeader: cputime names
 * the time columns "cputime" (-C); per_iter adds i_min i_max i_p99 i_cv% to
 * each half, "(+ per-iteration)" in its title (-I); timestamps adds a last
 * "timestamp" column with its strftime format (-S). Returns the length, or
 * -ENOSPC when buf was too small.
 */
static inline int rb_coll_table_header_str(char *buf, size_t len, bool cputime, bool per_iter, bool timestamps)
{
    /* A half is 37 characters wide ("  %9s  %7s  %7s  %6s"), 79 with -I; each title starts 13 into its half. */
    static const char *const cols[2][8] = {{"time", "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%"},
                                           {"(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)", "(%)"}};
    static const char *const lead[2][5] = {{"size", "count", "type", "redop", "root"}, {"(B)", "(elements)", "", "", ""}};
    size_t off = 0;
    rb_coll_table_cat(buf, len, &off, "#%12s  %12s  %8s  %6s  %6s             %-*sin-place%s\n", "", "", "", "", "",
                      per_iter ? 81 : 39, per_iter ? "out-of-place (+ per-iteration)" : "out-of-place",
                      per_iter ? " (+ per-iteration)" : "");
    for (int l = 0; l < 2; l++) {
        const char *const *c = cols[l];
        rb_coll_table_cat(buf, len, &off, "#%12s  %12s  %8s  %6s  %6s", lead[l][0], lead[l][1], lead[l][2],
                          lead[l][3], lead[l][4]);
        for (int half = 0; half < 2; half++) {
            rb_coll_table_cat(buf, len, &off, "  %9s  %7s  %7s  %6s", !l && cputime ? "cputime" : c[0], c[1], c[2],
                              c[3]);
            if (per_iter)
                rb_coll_table_cat(buf, len, &off, "  %9s  %9s  %9s  %7s", c[4], c[5], c[6], c[7]);
        }
        if (timestamps)
            rb_coll_table_cat(buf, len, &off, "  %19s", l ? "%Y-%m-%d %H:%M:%S" : "timestamp");
        rb_coll_table_cat(buf, len, &off, "\n");
    }
    return off < len ? (int)off : -ENOSPC;
}

/* A row's first columns: size (B), count (elements), type, redop, root; returns what snprintf returns. */
static inline int rb_coll_table_row_start(char *buf, size_t len, size_t size_bytes, size_t count, const char *type,
                                          const char *redop, int root)
{
    return snprintf(buf, len, " %12zu  %12zu  %8s  %6s  %6d", size_bytes, count, type, redop, root);
}

/* One half of a row: time (us), algbw, busbw (GB/s), #wrong (wrong < 0 prints N/A); returns what snprintf returns. */
static inline int rb_coll_table_half(char *buf, size_t len, double time_us, double algbw, double busbw,
                                     long long wrong)
{
    char w[24];
    if (wrong < 0)
        snprintf(w, sizeof w, "N/A");
    else
        snprintf(w, sizeof w, "%lld", wrong);
    return snprintf(buf, len, "  %9.2f  %7.2f  %7.2f  %6s", time_us, algbw, busbw, w);
}

/*
 * nccl-tests' closing lines: "# Out of bounds values : N OK|FAILED" and
 * "# Avg bus bandwidth    : X" (X the plain mean of busbw over every row
 * and both halves), then "#". Returns what snprintf returns.
 */
static inline int rb_coll_table_footer(char *buf, size_t len, long long wrong, double avg_busbw_gbps)
{
    return snprintf(buf, len, "# %-20s : %lld %s\n# %-20s : %g \n#\n", "Out of bounds values", wrong,
                    wrong ? "FAILED" : "OK", "Avg bus bandwidth", avg_busbw_gbps);
}

#endif
