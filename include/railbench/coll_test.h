/* The plug-in interface of railbench coll: one const struct per collective, like nccl-tests' test table. */
#ifndef RB_COLL_TEST_H
#define RB_COLL_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "railbench/coll.h"
#include "railbench/coll_data.h"

/* A communicator the algorithms run over, with this rank's place in it. */
struct rb_coll_comm {
    MPI_Comm comm;
    int rank, size;
};

/* Element counts for one size, as nccl-tests' getCollByteCount defines them. */
struct rb_coll_counts {
    size_t send, recv;       /* elements in the send and the receive buffer */
    size_t param;            /* the count passed to the collective and printed in the "count" column */
    size_t send_inplace_off; /* in place, send = recv + send_inplace_off x rank (elements) */
    size_t recv_inplace_off; /* in place, recv = buffer + recv_inplace_off x rank (elements) */
};

/* Everything one call of a collective needs; filled by the harness, read-only for the collective. */
struct rb_coll_args {
    struct rb_coll_comm world; /* every rank */
    struct rb_coll_comm node;  /* the ranks of this node (or of this --ranks-per-node group) */
    struct rb_coll_comm rail;  /* the ranks with this local index on every node: one NIC's rail */
    enum rb_coll_dtype type;
    size_t type_bytes;
    enum rb_coll_redop op;     /* RB_COLL_NONE for collectives that do not reduce */
    int root;                  /* broadcast and reduce; -1 otherwise */
    size_t count;              /* rb_coll_counts.param */
    void *send, *recv;         /* in place: both inside one buffer, per the counts' offsets */
    bool in_place;
    void *scratch;             /* RB_COLL_SCRATCH_BYTES(largest buffer) bytes the algorithms may use */
    size_t scratch_bytes;
    size_t chunk_bytes;        /* pipeline chunk of the tree and chain algorithms */
    MPI_Datatype mpi_type;     /* for the mpi algorithm */
    MPI_Op mpi_op;
};

/* Pipelined algorithms keep this many chunks in flight per peer. */
#define RB_COLL_PIPELINE_DEPTH 4

/* Scratch the algorithms need for buffers of at most max_bytes: two full buffers (64-byte aligned) and the pipeline slots. */
#define RB_COLL_SCRATCH_BYTES(max_bytes, chunk_bytes)                                              \
    (2 * (((max_bytes) + 63) / 64 * 64) + 2 * RB_COLL_PIPELINE_DEPTH * (chunk_bytes))

/* One collective. run[a] is NULL where algorithm a does not apply; not_applicable[a] says why. */
struct rb_coll_test {
    enum rb_coll_kind kind;
    const char *name;
    bool reduces;                         /* takes -o */
    bool rooted;                          /* takes -r */
    /* Counts for count = size / type bytes elements on nranks ranks. */
    void (*counts)(size_t count, int nranks, struct rb_coll_counts *out);
    /* Fills this rank's input with the test data of seed and poisons the output it expects. */
    void (*init)(const struct rb_coll_args *a, uint64_t seed);
    /* Runs the collective once with one algorithm; returns 0 or -errno (MPI errors abort). Collective. */
    int (*run[RB_COLL_ALGOS])(const struct rb_coll_args *a);
    const char *not_applicable[RB_COLL_ALGOS];
    /* Number of wrong elements in this rank's output for the data of seed. */
    uint64_t (*check)(const struct rb_coll_args *a, uint64_t seed);
    /* nccl-tests' bus-bandwidth factor for nranks (rb_coll_busbw_factor for this kind). */
    double (*busbw_factor)(int nranks);
};

extern const struct rb_coll_test rb_coll_allreduce, rb_coll_allgather, rb_coll_reducescatter,
    rb_coll_broadcast, rb_coll_reduce, rb_coll_alltoall, rb_coll_sendrecv;

/* The collective of kind k. */
const struct rb_coll_test *rb_coll_test_get(enum rb_coll_kind k);

#endif
