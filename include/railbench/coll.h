/* Collectives: kinds, algorithms, nccl-tests' bus-bandwidth factors and table format, shared with fabric sim. */
#ifndef RB_COLL_H
#define RB_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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

/* Algorithms, in the order --algo all runs and prints them. */
enum rb_coll_algo {
    RB_COLL_ALGO_MPI,  /* the MPI library's own collective (the baseline) */
    RB_COLL_ALGO_RING, /* ring (reduce-scatter + allgather) or pipelined chain */
    RB_COLL_ALGO_RD,   /* recursive doubling */
    RB_COLL_ALGO_RHD,  /* Rabenseifner: recursive halving reduce-scatter + recursive doubling allgather */
    RB_COLL_ALGO_TREE, /* pipelined binary tree */
    RB_COLL_ALGO_HIER, /* node reduce-scatter, one inter-node allreduce per rail, node allgather */
    RB_COLL_ALGOS
};

/* "allreduce", "allgather", ...; NULL for an invalid kind. */
const char *rb_coll_kind_name(enum rb_coll_kind k);

/* Kind named s; returns 0 or -EINVAL. */
int rb_coll_kind_parse(const char *s, enum rb_coll_kind *k);

/* "mpi", "ring", "rd", "rhd", "tree", "hier"; NULL for an invalid algorithm. */
const char *rb_coll_algo_name(enum rb_coll_algo a);

/* Algorithm named s; returns 0 or -EINVAL. */
int rb_coll_algo_parse(const char *s, enum rb_coll_algo *a);

/*
 * Bus-bandwidth factor for n ranks, as nccl-tests defines it (doc/PERFORMANCE.md):
 * allreduce 2(n-1)/n; reducescatter, allgather, alltoall (n-1)/n; broadcast,
 * reduce, sendrecv 1. n <= 1 gives the n = 1 value (0 or 1).
 */
double rb_coll_busbw_factor(enum rb_coll_kind k, int n);

/*
 * The bytes S that algbw divides by the time, for nccl-tests' per-rank
 * element count (the "count" column): count x type_bytes, times n for
 * allgather, reducescatter and alltoall, whose S is the whole n-rank array.
 */
double rb_coll_algbw_bytes(enum rb_coll_kind k, size_t count, size_t type_bytes, int n);

/* algbw in GB/s (decimal) for size_bytes moved in time_us; 0 when time_us <= 0. */
double rb_coll_algbw_gbps(double size_bytes, double time_us);

/* busbw = algbw x rb_coll_busbw_factor(k, n), in the unit of algbw. */
double rb_coll_busbw_gbps(enum rb_coll_kind k, int n, double algbw_gbps);

/* The nccl-tests table's header lines ("out-of-place / in-place", column names, units). */
void rb_coll_table_header(FILE *out);

/* The same header into buf; returns what snprintf returns. */
int rb_coll_table_header_str(char *buf, size_t len);

/* A row's first columns: size (B), count (elements), type, redop, root. */
int rb_coll_table_row_start(char *buf, size_t len, size_t size_bytes, size_t count, const char *type,
                            const char *redop, int root);

/* One half of a row: time (us), algbw, busbw (GB/s), #wrong (wrong < 0 prints N/A; an empty note prints "-"). */
int rb_coll_table_half(char *buf, size_t len, double time_us, double algbw, double busbw, long long wrong);

/*
 * nccl-tests' closing lines: "# Out of bounds values : N OK|FAILED" and
 * "# Avg bus bandwidth    : X" (X the plain mean of busbw over every row
 * and both halves), then "#".
 */
int rb_coll_table_footer(char *buf, size_t len, long long wrong, double avg_busbw_gbps);

#endif
