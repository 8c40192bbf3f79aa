/*
 * nccl-tests' figures, shared by railbench coll (measured) and fabric sim (predicted): the collective
 * kinds (RB_COLL_KIND_LIST, the one list of their names), algbw and busbw, and the table's columns.
 * An ordinary module in core (core/busbw.c), so both use it without linking to each other.
 */
#ifndef RB_BUSBW_H
#define RB_BUSBW_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The collectives, in nccl-tests' order: the one list every other list is
 * made from (the kinds and their definitions, their names in messages and
 * usage lines, coll's table of tests). X(KIND, name, busbw_num, whole_array,
 * reduces, rooted): the fields of struct rb_coll_kind_def. Adding a
 * collective is one line here and its file collectives/<name>.c defining
 * rb_coll_<name>.
 */
#define RB_COLL_KIND_LIST(X) \
    X(ALLREDUCE, allreduce, 2, false, true, false) \
    X(ALLGATHER, allgather, 1, true, false, false) \
    X(REDUCESCATTER, reducescatter, 1, true, true, false) \
    X(BROADCAST, broadcast, 0, false, false, true) \
    X(REDUCE, reduce, 0, false, true, true) \
    X(ALLTOALL, alltoall, 1, true, false, false) \
    X(SENDRECV, sendrecv, 0, false, false, false) \
    /* nccl-tests 2.19 (src/gather.cu, scatter.cu): S = count x n x type bytes, factor (n-1)/n */ \
    X(GATHER, gather, 1, true, false, true) \
    X(SCATTER, scatter, 1, true, false, true) \
    /* src/alltoallv.cu: factor (n-1)/n; S is the busiest rank's bytes, which the collective computes */ \
    X(ALLTOALLV, alltoallv, 1, true, false, false)

enum rb_coll_kind {
#define RB_COLL_KIND_ENUM(K, ...) RB_COLL_##K,
    RB_COLL_KIND_LIST(RB_COLL_KIND_ENUM)
#undef RB_COLL_KIND_ENUM
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

/* The kind's definition; NULL for an invalid kind. Pure, thread-safe. */
const struct rb_coll_kind_def *rb_coll_kind_def(enum rb_coll_kind k);

/* "allreduce", "allgather", ...; NULL for an invalid kind. */
const char *rb_coll_kind_name(enum rb_coll_kind k);

/*
 * Every kind's name in order, joined by sep, into buf ("allreduce, allgather,
 * ..."), for messages and usage lines; last (may be NULL) replaces the last
 * sep (" or "). Returns buf (cut to len - 1 bytes when it is short).
 */
char *rb_coll_kind_names(char *buf, size_t len, const char *sep, const char *last);

/* Kind named s; returns 0 or -EINVAL. */
int rb_coll_kind_parse(const char *s, enum rb_coll_kind *k);

/*
 * Bus-bandwidth factor for n ranks, as nccl-tests defines it (doc/PERFORMANCE.md):
 * allreduce 2(n-1)/n; reducescatter, allgather, alltoall, gather, scatter,
 * alltoallv (n-1)/n; broadcast,
 * reduce, sendrecv 1. n <= 1 gives the n = 1 value (0 or 1).
 */
double rb_coll_busbw_factor(enum rb_coll_kind k, int n);

/*
 * The bytes S that algbw divides by the time, for nccl-tests' per-rank
 * element count (the "count" column): count x type_bytes, times n for
 * allgather, reducescatter and alltoall, whose S is the whole n-rank array.
 */
double rb_coll_algbw_bytes(enum rb_coll_kind k, size_t count, size_t type_bytes, int n);

/*
 * Elements per rank of allgather, reducescatter and alltoall for a total of
 * count elements on n ranks. nccl-tests since v2.13.12 trims each rank's
 * share to a multiple of 16 bytes (its *GetCollByteCount: (count / n) &
 * ~(16 / type_bytes - 1)), so that blocks stay aligned for any n; legacy
 * keeps the older count / n. np 3, float, 1000 B: 80 aligned, 83 legacy.
 */
size_t rb_coll_per_rank_count(size_t count, int n, size_t type_bytes, bool legacy);

/* algbw in GB/s (decimal, as nccl-tests) for size_bytes moved in time_us; 0 when time_us <= 0. */
double rb_coll_algbw_gbps(double size_bytes, double time_us);

/* busbw = algbw x rb_coll_busbw_factor(k, n), in the unit of algbw. */
double rb_coll_busbw_gbps(enum rb_coll_kind k, int n, double algbw_gbps);

/* Appends to buf at *off (kept NUL-terminated); *off passes len once the text no longer fits. */
void rb_coll_table_cat(char *buf, size_t len, size_t *off, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * A figure in a column of width w as nccl-tests 2.19's getFloatStr prints it
 * (src/util.cu): two decimals, or one, or none, or an exponent, whichever
 * first fits in w characters. Returns what snprintf returns.
 */
int rb_coll_table_float(char *buf, size_t len, double v, int w);

/*
 * The nccl-tests table's header lines ("#" line, "out-of-place / in-place",
 * column names, units) into buf, byte for byte as nccl-tests 2.19's
 * writeResultHeader prints them (src/util.cu), trailing spaces included:
 * cputime names the time columns "cputime" (-C); per_iter adds i_min i_max
 * i_p99 i_cv% to each half (-I); timestamps adds a last "timestamp" column
 * with its strftime format (-S). Returns the length, or -ENOSPC when buf
 * was too small.
 */
int rb_coll_table_header_str(char *buf, size_t len, bool cputime, bool per_iter, bool timestamps);

/* A row's first columns: size (B), count (elements), type, redop, root (nccl-tests' "%12li  %12li  %8s  %6s  %6s"). */
int rb_coll_table_row_start(char *buf, size_t len, size_t size_bytes, size_t count, const char *type, const char *redop, int root);

/*
 * One half of a row as nccl-tests 2.19 prints it: time (us, 7 wide), algbw
 * and busbw (GB/s, 6 wide), #wrong ("%6g"; wrong < 0 prints N/A). Returns
 * what snprintf returns.
 */
int rb_coll_table_half(char *buf, size_t len, double time_us, double algbw, double busbw, long long wrong);

/*
 * nccl-tests' closing lines: "# Out of bounds values : N OK|FAILED",
 * "# Avg bus bandwidth    : X " (X the plain mean of busbw over every row
 * and both halves; the trailing space is nccl-tests' when no minimum is
 * checked), then "#". Returns what snprintf returns.
 */
int rb_coll_table_footer(char *buf, size_t len, long long wrong, double avg_busbw_gbps);

#endif
