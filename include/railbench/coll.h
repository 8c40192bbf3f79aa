/* Collectives: kinds, nccl-tests' bus-bandwidth factors and table format, shared with fabric sim. */
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

/* "allreduce", "allgather", ...; NULL for an invalid kind. */
const char *rb_coll_kind_name(enum rb_coll_kind k);

/* Kind named s; returns 0 or -EINVAL. */
int rb_coll_kind_parse(const char *s, enum rb_coll_kind *k);

/*
 * Bus-bandwidth factor for n ranks, as nccl-tests defines it (doc/PERFORMANCE.md):
 * allreduce 2(n-1)/n; reducescatter, allgather, alltoall (n-1)/n; broadcast,
 * reduce, sendrecv 1. n <= 1 gives the n = 1 value (0 or 1).
 */
double rb_coll_busbw_factor(enum rb_coll_kind k, int n);

/* algbw in GB/s (decimal) for size_bytes moved in time_us. */
double rb_coll_algbw_gbps(double size_bytes, double time_us);

/* The nccl-tests table's two header lines (with a leading newline-free "#" style). */
void rb_coll_table_header(FILE *out);

/* One half of a row: time (us), algbw, busbw (GB/s), #wrong (wrong < 0 prints N/A; an empty note prints "-"). */
int rb_coll_table_half(char *buf, size_t len, double time_us, double algbw, double busbw, long long wrong);

#endif
