/* Internal to collectives/: one run of railbench coll (the harness's state) and what its files share. */
#ifndef RB_COLL_RUN_INT_H
#define RB_COLL_RUN_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "coll_int.h"

/* coll --background: a GET load on every rank during a second pass of the sweep. */
struct rb_coll_bg {
    const char *url;
    uint64_t objects, threads, inflight, alone_ns, timeout_ns;
    double rate;
};

/* One run: what the options resolved to, the communicators, the buffers and the output. */
struct rb_coll_run {
    struct rb_harness *h;
    const struct rb_coll_opts *o;
    const char *which; /* the collective argument */
    const struct rb_coll_test *tests[RB_COLL_KINDS];
    enum rb_coll_kind kinds[RB_COLL_KINDS];
    int ntests;
    enum rb_coll_algo algos[RB_COLL_ALGOS];
    int nalgos;
    enum rb_coll_dtype types[RB_COLL_DTYPES];
    int ntypes;
    enum rb_coll_redop ops[RB_COLL_REDOPS];
    int nops;
    int root_all; /* -r all */
    int root;
    struct rb_coll_rails rl; /* this rank's group, node and rail */
    const char *split_expr, *split_mask; /* --split or NCCL_TESTS_SPLIT; NCCL_TESTS_SPLIT_MASK */
    const char *split_desc;              /* how the groups were made, for the output; NULL: no split */
    char *sendbuf, *recvbuf, *scratch;
    size_t buf_bytes, scratch_bytes;
    double *times; /* per-rank times, rank 0 */
    double *iter_us; /* -I: this rank's time per operation of each -n iteration */
    bool stop;
    struct rb_coll_out out;
    const struct rb_coll_bg *bg; /* --background, or NULL */
    struct rb_coll_a2av a2av;    /* alltoallv's traffic pattern (--spread, --matrix, --matrix-scale) */
};

/* coll_comm.c: places this rank, splits its group off (--split, --per-rail, NCCL_TESTS_SPLIT*), and its rails.
 * Collective. */
void rb_coll_run_comms(struct rb_coll_run *R);

/* coll_run.c: allocates and touches the send, receive and scratch buffers (exits 3 when memory runs out). */
void rb_coll_run_buffers(struct rb_coll_run *R);

/* One table: every type, op and root of collective t with algorithm algo, or its not-applicable line. Collective. */
void rb_coll_run_table(struct rb_coll_run *R, const struct rb_coll_test *t, enum rb_coll_algo algo);

/* The args shared by every call of one (collective, type, op, root). */
void rb_coll_run_args(struct rb_coll_run *R, struct rb_coll_args *a, enum rb_coll_dtype type, enum rb_coll_redop op,
                      int root);

/* The size after *size in the sweep (-f's factor or -i's step); false past -e. Pure. */
bool rb_coll_run_next_size(const struct rb_coll_opts *o, uint64_t *size);

/* Rank 0: the busbw (GB/s) of one size, out-of-place, timed as the table times it. Collective. */
double rb_coll_run_busbw(struct rb_coll_run *R, const struct rb_coll_test *t, enum rb_coll_algo algo,
                         struct rb_coll_args *a, uint64_t size);

/* coll_bg.c: --background's options; one line and RB_EXIT_USAGE when they make no load, else 0 (R->bg set
 * when given). */
int rb_coll_bg_check(struct rb_coll_run *R, const struct rb_coll_bg *bg);

/* --background's option group (--background, --bg-*): rows into t whose values land in bg (its defaults). */
void rb_coll_bg_options(struct rb_opts *t, struct rb_coll_bg *bg);

/*
 * --background: the sweep once more, out-of-place, without and then with a
 * GET load on every rank; the load alone for --bg-alone before the second
 * pass, then during it. Collective. Returns 0 or an exit status; rank 0's
 * record in *rec.
 */
int rb_coll_bg_pass(struct rb_coll_run *R, cJSON **rec);

#endif
