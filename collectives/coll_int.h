/* Internal to collectives/: algorithms, the plug-in interface (one const struct per collective, as in
 * nccl-tests' test table) and the harness's output. */
#ifndef RB_COLL_INT_H
#define RB_COLL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include <cjson/cJSON.h>

#include "data_int.h"
#include "railbench/busbw.h"
#include "railbench/harness.h"

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

/* "mpi", "ring", "rd", "rhd", "tree", "hier"; NULL for an invalid algorithm. */
const char *rb_coll_algo_name(enum rb_coll_algo a);

/* Algorithm named s; returns 0 or -EINVAL. */
int rb_coll_algo_parse(const char *s, enum rb_coll_algo *a);

/* A communicator the algorithms run over, with this rank's place in it. */
struct rb_coll_comm {
    MPI_Comm comm;
    int rank, size;
};

/* Where a rank sits and the communicators of its group: node (same host or --ranks-per-node block) and rail. */
struct rb_coll_rails {
    struct rb_coll_comm world, node, rail; /* world: the group (every rank without a split) */
    int *world_of;                         /* world rank of (rail rank b, node rank j) at [b x node.size + j] */
    bool hier_ok;                          /* every node holds as many ranks of the group */
    char hier_why[160];                    /* why not, for the not-applicable line */
    int node_index, local, ranks_per_node; /* this rank's node and local index (its rail) */
};

/* Places this rank: node and local index from --ranks-per-node L, or from the hosts (L = 0). */
void rb_coll_rails_place(struct rb_harness *h, uint64_t ranks_per_node, struct rb_coll_rails *r);

/* Splits group (h->comm or a split of it) into nodes and rails; hier_ok and world_of. Collective on h->comm. */
void rb_coll_rails_build(struct rb_harness *h, MPI_Comm group, struct rb_coll_rails *r);

/* Frees the communicators rb_coll_rails_build made (and group unless it is h->comm). Collective. */
void rb_coll_rails_free(struct rb_harness *h, struct rb_coll_rails *r);

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
    const int *world_of;       /* world rank of (rail rank b, node rank j) at [b x node.size + j]; NULL unless
                                  every node has as many ranks */
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
    struct rb_coll_a2av *a2av; /* alltoallv's traffic pattern, the run's (rb_coll_alltoallv_setup); NULL elsewhere */
};

/* Pipelined algorithms keep this many chunks in flight per peer. */
#define RB_COLL_PIPELINE_DEPTH 4

/* Scratch the algorithms need for buffers of at most max_bytes: two full buffers (64-byte aligned) and the pipeline slots. */
#define RB_COLL_SCRATCH_BYTES(max_bytes, chunk_bytes)                                              \
    (2 * (((max_bytes) + 63) / 64 * 64) + 2 * RB_COLL_PIPELINE_DEPTH * (chunk_bytes))

/*
 * One collective. run[a] is NULL where algorithm a does not apply;
 * not_applicable[a] says why. What nccl-tests fixes per kind (busbw factor,
 * whether it reduces or takes a root) is rb_coll_kind_def(kind).
 */
struct rb_coll_test {
    enum rb_coll_kind kind;
    const char *name;
    /*
     * Counts for count = size / type_bytes elements on nranks ranks; legacy
     * selects nccl-tests' rule before v2.13.12 (rb_coll_per_rank_count).
     * a: the run's arguments (alltoallv reads its pattern there); the
     * collectives without state of their own take NULL too.
     */
    void (*counts)(const struct rb_coll_args *a, size_t count, size_t type_bytes, int nranks, bool legacy,
                   struct rb_coll_counts *out);
    /* Fills this rank's input with the test data of seed and poisons the output it expects. */
    void (*init)(const struct rb_coll_args *a, uint64_t seed);
    /* Runs the collective once with one algorithm; returns 0 or -errno (MPI errors abort). Collective. */
    int (*run[RB_COLL_ALGOS])(const struct rb_coll_args *a);
    const char *not_applicable[RB_COLL_ALGOS];
    /* Number of wrong elements in this rank's output for the data of seed. */
    uint64_t (*check)(const struct rb_coll_args *a, uint64_t seed);
    /*
     * Optional: the bytes this rank received from each rank in the last
     * call, as the MPI library counted them, into bytes_from[world size];
     * false when the last call's algorithm could not count them.
     */
    bool (*received)(const struct rb_coll_args *a, uint64_t *bytes_from);
};

/* One test per collective of RB_COLL_KIND_LIST, rb_coll_<name>, defined in collectives/<name>.c. */
#define RB_COLL_TEST_EXTERN(K, name, ...) extern const struct rb_coll_test rb_coll_##name;
RB_COLL_KIND_LIST(RB_COLL_TEST_EXTERN)
#undef RB_COLL_TEST_EXTERN

/* ---- alltoallv's traffic pattern (alltoallv.c; one per run, which hands it on in rb_coll_args.a2av) ---- */

/* nccl-tests 2.19's imbalance controls; a negative number or NULL takes its environment variable. */
struct rb_coll_a2av_opts {
    double spread;      /* 0 uniform .. 1 distance-weighted (NCCL_TESTS_ALLTOALLV_SPREAD, else 1) */
    const char *matrix; /* traffic-matrix file (NCCL_TESTS_ALLTOALLV_MATRIX_FILE), or the generated pattern */
    double scale;       /* factor on the matrix's values (NCCL_TESTS_ALLTOALLV_MATRIX_SCALE, else 1) */
};

/* One run's pattern: what o chose, the matrix read, and what the calls keep between them. */
struct rb_coll_a2av {
    double spread;      /* 0 uniform .. 1 distance-weighted */
    size_t *matrix;     /* dim x dim bytes, each aligned down to 16; NULL: the generated pattern */
    int dim;
    const char *path;   /* the matrix file (o's, or the environment's) */
    double scale;
    size_t *m;          /* the n x n pattern of the last (n, total) asked for */
    int m_n;
    size_t m_total;
    uint64_t *got_from; /* bytes from each source in the last pairwise call (MPI_Get_count) */
    int got_n;
    bool got_valid;
};

/*
 * Fills p (zeroed, or set up before: its old pattern is released) with the
 * pattern of o and reads its matrix; 0, or RB_EXIT_USAGE after one line.
 * Main thread.
 */
int rb_coll_alltoallv_setup(const struct rb_coll_a2av_opts *o, struct rb_coll_a2av *p);

/* With a matrix: it covers nranks, -b equals -e, and -e holds the busiest rank; 0 or RB_EXIT_USAGE after one line. */
int rb_coll_alltoallv_check(const struct rb_coll_a2av *p, int nranks, uint64_t minbytes, uint64_t maxbytes);

/*
 * Bytes rank i sends rank j of n for total_bytes per rank: the matrix's
 * cell, or nccl-tests' blend (1 - spread) x uniform + spread x
 * distance-weighted (distance (j - i) mod n), aligned down to 16 bytes.
 */
size_t rb_coll_alltoallv_pair_bytes(const struct rb_coll_a2av *p, int i, int j, int n, size_t total_bytes);

/* Releases what p holds; safe to call twice. */
void rb_coll_alltoallv_free(struct rb_coll_a2av *p);

/* The collective of kind k; NULL for an invalid kind. */
const struct rb_coll_test *rb_coll_test_get(enum rb_coll_kind k);

/* ---- the harness's output (coll_output.c) ---- */

/* -a: how per-rank times combine into the reported time (nccl-tests). */
enum { RB_COLL_AVG_RANK0, RB_COLL_AVG_MEAN, RB_COLL_AVG_MIN, RB_COLL_AVG_MAX };

/* --count-rule: each rank's share of allgather, reducescatter, alltoall (rb_coll_per_rank_count). */
enum { RB_COLL_COUNT_ALIGNED, RB_COLL_COUNT_LEGACY };

/* The nccl-tests release whose output (table, preamble, -J keys) railbench coll reproduces. */
#define RB_COLL_NCCL_TESTS_VERSION "2.19.6"
/* JSON_FILE_VERSION of that release's -J file. */
#define RB_COLL_NCCL_JSON_VERSION 3

/* The options of railbench coll, as parsed. */
struct rb_coll_opts {
    uint64_t minbytes, maxbytes, stepbytes, stepfactor, iters, warmup, check, ranks_per_node, chunk;
    int op, dtype, average;
    /* nccl-tests' other flags (coll_flags.c): with a meaning here... */
    uint64_t agg_iters, run_cycles, blocking, timeout_s, timestamps, unalign, memory;
    /* ...and without one on CPU ranks: refused unless harmless, else noted in the preamble */
    uint64_t nthreads, ngpus, parallel_init, stream_null, cudagraph, cputime, local_register, device_impl,
        device_cta, per_iter_timing, per_iter_skip;
    int64_t cta_policy;
    int count_rule; /* --count-rule: RB_COLL_COUNT_ALIGNED (nccl-tests v2.13.12+) or RB_COLL_COUNT_LEGACY */
    const char *root, *algo, *json;
    const char *split; /* --split: NCCL_TESTS_SPLIT's expression */
    bool per_rail;     /* --per-rail: one group per local index (rail) */
};

/* nccl-tests' flags beyond -b -e -i -f -n -w -c -o -d -r -a -J, as rb_opt entries of o (a struct rb_coll_opts). */
#define RB_COLL_NCCL_OPTS(o)                                                                                      \
    {"agg_iters", 'm', RB_OPT_U64, &(o).agg_iters, "N", "operations per timed iteration (time / (n x m))", NULL},   \
    {"run_cycles", 'N', RB_OPT_U64, &(o).run_cycles, "N", "run and print the sweep N times (0: until a signal)", NULL}, \
    {"blocking", 'z', RB_OPT_U64, &(o).blocking, "0-3",                                                          \
     "1 barrier after each operation; 3 barrier after each -n iteration, outside the time; 0, 2 none", NULL},     \
    {"timeout", 'T', RB_OPT_U64, &(o).timeout_s, "SECONDS",                                                      \
     "end the run (exit 3) when one operation takes longer (0: no limit)", NULL},                               \
    {"report_timestamps", 'S', RB_OPT_U64, &(o).timestamps, "0|1", "end each row with the time it finished", NULL}, \
    {"unalign", 'u', RB_OPT_U64, &(o).unalign, "N", "misalign send and receive buffers by N elements", NULL},     \
    {"memory", 'M', RB_OPT_U64, &(o).memory, "0|1", "report the buffer memory of each rank", NULL},              \
    {"nthreads", 't', RB_OPT_U64, &(o).nthreads, "1", "threads per rank: 1 (one CPU process per rank)", NULL},    \
    {"ngpus", 'g', RB_OPT_U64, &(o).ngpus, "1", "devices per rank: 1 (each rank is one device)", NULL},          \
    {"parallel_init", 'p', RB_OPT_U64, &(o).parallel_init, "0|1", "accepted; one thread per rank", NULL},        \
    {"stream_null", 'y', RB_OPT_U64, &(o).stream_null, "0|1", "accepted; no CUDA streams on CPU ranks", NULL},   \
    {"cudagraph", 'G', RB_OPT_U64, &(o).cudagraph, "N", "accepted; CUDA graphs do not apply to CPU ranks", NULL}, \
    {"report_cputime", 'C', RB_OPT_U64, &(o).cputime, "0|1", "time column: rank 0's own time (cputime)", NULL},  \
    {"local_register", 'R', RB_OPT_U64, &(o).local_register, "0|1|2", "accepted; no buffer registration", NULL}, \
    {"cta_policy", 'x', RB_OPT_INT, &(o).cta_policy, "N", "accepted; no CTAs on CPU ranks", NULL},               \
    {"device_implementation", 'D', RB_OPT_U64, &(o).device_impl, "0", "0 only: no device kernels", NULL},       \
    {"device_cta_count", 'V', RB_OPT_U64, &(o).device_cta, "N", "accepted; no CTAs on CPU ranks", NULL},         \
    {"per_iter_timing", 'I', RB_OPT_U64, &(o).per_iter_timing, "0|1",                                          \
     "per-iteration report: i_min, i_max, i_p99, i_cv% of the -n iterations (max over ranks)", NULL},            \
    {"per_iter_skip", 'K', RB_OPT_U64, &(o).per_iter_skip, "N", "with -I: leave the first N iterations out of "   \
     "the i_* figures", NULL}

struct rb_coll_out;

/*
 * -w: the sizes nccl-tests 2.19's TimeTest warms up, every one from
 * minbytes to maxbytes, doubling whatever -f or -i say (before 2.19 only
 * the largest and the smallest); a minbytes of 0 is followed by 1. Writes
 * at most cap into out and returns how many. Pure.
 */
size_t rb_coll_warmup_sizes(uint64_t minbytes, uint64_t maxbytes, uint64_t *out, size_t cap);

/* Checks nccl-tests' other flags; one line and RB_EXIT_USAGE for a value CPU ranks cannot honour, else 0. */
int rb_coll_flags_check(const struct rb_coll_opts *o);

/*
 * Returns status. On a usage error, every rank but the first waits (up to
 * 3 s) before it returns: mpirun aborts the job at the first non-zero exit,
 * and a quiet rank exiting first would cut rank 0's one-line message off.
 */
int rb_coll_usage_exit(int status);

/*
 * NCCL_TESTS_SPLIT: the group (MPI_Comm_split color) of world rank rank
 * for expr, as nccl-tests 2.19 reads it: "AND n" or "&n" (rank & n), "OR n"
 * or "|n", "MOD n" or "%n", "DIV n" or "/n", words in any case, n decimal,
 * 0x hex, 0 octal or 0b binary. Returns 0, or -EINVAL for anything else
 * (nccl-tests would silently run one group) and for MOD 0 or DIV 0. Pure.
 */
int rb_coll_split_color(const char *expr, int rank, int *color);

/* NCCL_TESTS_SPLIT_MASK: rank & the hex mask; 0 or -EINVAL. Pure. */
int rb_coll_split_mask_color(const char *hex, int rank, int *color);

/* Prints on rank 0 one "# note:" line per flag given a value that has no meaning on CPU ranks. */
void rb_coll_flags_notes(struct rb_coll_out *out);

/*
 * The watchdog: a thread that ends the process (exit 3) when an operation
 * stays armed longer than timeout_s (-T, after nccl-tests' "HOST: Test
 * timeout (Ns)" line; 0: no limit), or, with last_record (rank 0), more
 * than 0.4 s after a signal arrived and 4 times the row's operation time
 * (rb_coll_watchdog_expect) (a rank it waits for died or stopped, and
 * mpirun kills 1 s after SIGTERM). Before it ends the process it calls
 * last_record(ctx, why) (may be NULL), while the main thread is held inside
 * the operation. Returns 0 or -errno. arm and disarm bracket each operation
 * (an atomic each, safe from the main thread); stop joins the thread.
 */
int rb_coll_watchdog_start(uint64_t timeout_s, const char *host, void (*last_record)(void *ctx, const char *why),
                           void *ctx);
void rb_coll_watchdog_arm(void);
/* How long one operation of the row takes (ns), for the bound after a signal. */
void rb_coll_watchdog_expect(uint64_t op_ns);
void rb_coll_watchdog_disarm(void);
void rb_coll_watchdog_stop(void);

/* ---- OSU point-to-point tests (p2p.c) ---- */

/* True when word names one: latency, bw, bibw, mbw_mr. */
bool rb_coll_p2p_is(const char *word);
/* The name of OSU-style test k (0 latency, bw, bibw, mbw_mr), NULL past the last. */
const char *rb_coll_p2p_name(int k);

/*
 * A message buffer of at least bytes, starting on a page and zeroed (free it
 * with free), or NULL. OSU's buffers start on a page; one 16 bytes past a page
 * (calloc's large block) made bibw's copies slower (BENCHMARKS.md).
 */
char *rb_coll_p2p_buf(size_t bytes);

/*
 * railbench coll latency|bw|bibw|mbw_mr; argv[0] is the test's name. OSU's
 * flags and output; returns the exit status. Collective under mpirun.
 */
int rb_coll_p2p_main(int argc, char **argv);

/*
 * railbench coll moe: a mixture-of-experts layer's dispatch and combine
 * (moe.c); argv[0] is "moe". Returns the exit status. Collective.
 */
int rb_coll_moe_main(int argc, char **argv);

/*
 * -I: nccl-tests' per-iteration report of one half. Each -n iteration's
 * time per operation is the slowest rank's; the figures leave out the
 * first `skipped` iterations (-K). computeIterStats' rules: p50 the middle
 * of the sorted times, p95/p99 at index min(n-1, ceil(n*p/100)-1),
 * standard deviation of the population, cv = stdev / avg in percent.
 */
struct rb_coll_iter_stats {
    bool have;
    uint64_t skipped;
    double min_us, max_us, avg_us, p50_us, p95_us, p99_us, stdev_us, cv_pct;
};

/* One split group's figures of a half (--split, --per-rail). */
struct rb_coll_group_fig {
    int group, ranks; /* the group's color and size */
    double time_us, algbw, busbw;
};

/* One half (out-of-place or in-place) of a row, as reported. */
struct rb_coll_half {
    double time_us, algbw, busbw;
    long long wrong; /* -1: not checked */
    uint64_t iters_done; /* timed iterations (-n unless a signal cut the half short; 0: not run) */
    double min_us, avg_us, max_us;
    double cpu_us;                  /* rank 0's own time per operation: -C's cputime column */
    struct rb_coll_iter_stats iter; /* -I */
    cJSON *iter_json;               /* -I: nccl-tests' *_per_iter record with the times (rank 0; the row owns it) */
    uint64_t *pair_bytes;           /* rank 0: bytes received per [source][destination] in the last call, as MPI
                                       counted them (collectives with t->received); NULL if unknown. The row owns it */
    struct rb_coll_group_fig *groups; /* rank 0, with several split groups: out->ngroups of them (the row owns it) */
};

/*
 * A figure as railbench coll reports it: v rounded once to the 15
 * significant digits cJSON writes (it prints %.15g whenever that reads back
 * within an epsilon), so the table, printed from this value, and the JSON,
 * which reads back exactly this value, never round a half differently
 * (7.575 printed 7.58 from 7.57500000000000106 while -J said 7.575). Pure.
 */
double rb_coll_fig(double v);

/* rb_coll_fig on every figure of a half (times, bandwidths, -I's statistics, the groups'). */
void rb_coll_half_figs(struct rb_coll_half *res, int ngroups);

/* The per-iteration figures of t[0..n) (n >= 1) into *s (pure, for tests). */
void rb_coll_iter_stats(const double *t, size_t n, struct rb_coll_iter_stats *s);

/*
 * -I: gathers every rank's per-iteration times (iter_us[0..n), microseconds
 * per operation) to rank 0, which takes the slowest rank's time of each
 * iteration, fills res->iter from those after skip, and res->iter_json with
 * nccl-tests' record (times_us, and per_process_max_times_us with more than
 * one rank). Collective on h->comm.
 */
void rb_coll_iter_gather(struct rb_harness *h, const double *iter_us, uint64_t n, uint64_t skip,
                         struct rb_coll_half *res);

/* One table row. */
struct rb_coll_row {
    enum rb_coll_kind kind;
    enum rb_coll_algo algo;
    enum rb_coll_dtype type;
    enum rb_coll_redop op;
    int root;
    size_t size_bytes, count;
    struct rb_coll_half half[2];
};

/*
 * What a run reports: the text printed as it is produced (kept for
 * table.md), the rows (for the comparison table), the result's phases,
 * intervals and summary, the busbw gauge and nccl-tests' -J document.
 * Everything but the gauge lives on rank 0 only; the functions do nothing
 * on other ranks unless they say otherwise. Not thread-safe.
 */
struct rb_coll_out {
    struct rb_harness *h;
    const struct rb_coll_opts *o;
    int ranks_per_node;
    int group;   /* this rank's split group (NCCL_TESTS_SPLIT's color), 0 without a split */
    int ngroups; /* split groups running side by side (1 without a split) */
    int group_size; /* ranks in this rank's group (every rank without a split) */
    const char *split; /* how they were made ("AND 0x1", "--per-rail"), or NULL */
    uint64_t t0_ns;
    char *text;
    size_t text_len, text_cap;
    struct rb_coll_row *rows;
    size_t nrows, caprows;
    double bw_sum;
    long bw_n;
    long long wrong_total;
    cJSON *coll_rows, *not_applicable, *json_doc, *json_results;
    cJSON *partial_row; /* rank 0: the row a signal cut short, or NULL */
    const char *json_path; /* "" without -J */
};

/*
 * Starts the output of a run on h (every rank calls it; the run's clock
 * starts here); json_path is the reserved -J file or "". The caller sets
 * ranks_per_node once the communicators are known.
 */
void rb_coll_out_init(struct rb_coll_out *out, struct rb_harness *h, const struct rb_coll_opts *o,
                      const char *json_path);

/* Prints a line on rank 0 and keeps it for table.md (after a signal, table.md only). */
void rb_coll_out_text(struct rb_coll_out *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The preamble in nccl-tests' words and the "# Using devices" lines; starts the -J document. Collective. */
void rb_coll_out_preamble(struct rb_coll_out *out, const char *which, const char *algos, int node_index,
                          int local, int argc, char **argv);

/* Rank 0: "# Collective test starting" and nccl-tests' header lines, with -C's, -I's and -S's columns. */
void rb_coll_out_table_header(struct rb_coll_out *out, const char *name, enum rb_coll_algo algo);

/*
 * Records a finished row: table line, row, result phase phase_name, interval
 * line, busbw gauge, -J record. Takes the halves' iter_json (-I).
 */
void rb_coll_out_row(struct rb_coll_out *out, const struct rb_coll_row *w, const char *phase_name);

/*
 * Rank 0: the row a signal cut short (its halves' iters_done tell how far
 * each got): a "# cut short" line, and summary.partial_row in the record;
 * it is not one of the rows, the table's or collective_rows'.
 */
void rb_coll_out_partial(struct rb_coll_out *out, const struct rb_coll_row *w, const char *phase_name);

/* Notes that algorithm algo does not apply to collective name, and why. */
void rb_coll_out_not_applicable(struct rb_coll_out *out, const char *name, enum rb_coll_algo algo, const char *why);

/*
 * Ends the run on rank 0: one busbw-by-algorithm table per kind when
 * several algorithms ran, nccl-tests' footer, the summary and check of the
 * result, table.md and the -J file.
 */
void rb_coll_out_finish(struct rb_coll_out *out, const char *which, const enum rb_coll_kind *kinds, int nkinds,
                        const enum rb_coll_algo *algos, int nalgos);

/* Releases what the output holds; safe after a partial run. */
void rb_coll_out_free(struct rb_coll_out *out);

#endif
