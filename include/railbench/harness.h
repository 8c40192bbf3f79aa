/*
 * MPI lifecycle shared by every command: ranks and hosts, phases, interval ticks, signals, results.
 * Threads: every function here is called from the main thread only (MPI is FUNNELED unless a command
 * asks for MULTIPLE), except rb_harness_signalled and rb_harness_signal_flag, which any thread may read.
 */
#ifndef RB_HARNESS_H
#define RB_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "railbench/cli.h"
#include "railbench/counters.h"
#include "railbench/result.h"
#include "railbench/stats.h"

/* Checks an MPI call; on failure logs host, rank, file, line and MPI's own message, then aborts (exit 3). */
#define RB_MPI_CHECK(call)                                                                     \
    do {                                                                                       \
        rb_harness_mpi_enter();                                                                \
        int rb_mpi_rc_ = (call);                                                               \
        rb_harness_mpi_leave();                                                                \
        if (rb_mpi_rc_ != MPI_SUCCESS)                                                         \
            rb_harness_mpi_fail(rb_mpi_rc_, #call, __FILE__, __LINE__);                        \
    } while (0)

/*
 * Bracket an MPI call (RB_MPI_CHECK does): on rank 0's main thread they tell
 * the record watchdog (rb_harness_opts.own_watchdog) that the thread is inside
 * MPI and not touching the record, which the watchdog may then write when the
 * call does not return after a signal. Elsewhere a thread-local test.
 */
void rb_harness_mpi_enter(void);
void rb_harness_mpi_leave(void);

struct rb_harness {
    int rank, size;               /* in MPI_COMM_WORLD; 0 and 1 without MPI */
    int local_rank, local_size;   /* among the ranks on this host */
    int host_index, host_count;   /* this host's index, and number of hosts */
    char host[256];
    bool mpi;                     /* MPI was initialised by the harness */
    int thread_level;             /* MPI_THREAD_* the library provided (result.json mpi.thread_level) */
    MPI_Comm comm;                /* duplicate of MPI_COMM_WORLD for the command's own collectives */
    MPI_Comm tick_comm;           /* the harness's ticks */
    MPI_Comm done_comm;           /* non-blocking "every rank is done" barriers */
    MPI_Comm node_comm;           /* ranks on this host */
    MPI_Comm live_comm;           /* bounded agreements between ranks (rb_harness_agree) */
    unsigned live_seq;            /* agreements so far, the same on every rank (their tag) */
    uint64_t rank_timeout_ns;     /* how long ranks wait for one that does not answer a tick (default 10 s) */
    int *rank_pids;               /* rank 0: every rank's process id, to name a lost rank */
    char (*rank_hosts)[64];       /* rank 0: every rank's host */
    /* Rank 0, optional: adds what the command measured to the record when a lost rank ends the run there. */
    void (*on_lost)(void *ctx);
    void *on_lost_ctx;
    /* Rank 0, optional: adds the command's summary so far to a copy of the record (root) written at a signal (ctx: on_lost_ctx). */
    void (*early_summary)(void *ctx, cJSON *root);
    const char *command;          /* "load get" */
    struct rb_cli *cli;
    char out_dir[4096];           /* the run's directory, the same string on every rank */
    char run_id[40];              /* "<UTC time>-<6 random hex digits>", the same on every rank (run prefixes) */
    char made_dir[4096];          /* rank 0: the shallowest directory of out_dir this run created ("": none) */
    struct rb_result result;      /* open on rank 0 only */
    bool interrupted;             /* a phase was cut short by SIGINT, SIGTERM or SIGHUP */
    char phase_now[64];           /* the phase running, or the last one run ("" before the first) */
    struct rb_phase *running;     /* the phase in its tick loop, NULL between phases (a lost rank records it) */
    uint64_t running_t0, running_wall0; /* its start: monotonic and wall clock */
    char interrupted_at[160];     /* where the signal found the run: "during phase \"put\" (3.2 s in)" */
    int signal_no;                /* the signal that interrupted the run (the highest number over ranks) */
    char kept[512];               /* rank 0: what a cut-short run leaves behind besides its results (rb_harness_kept) */
    const char *counters_root;    /* proc/sys root sampled around phases; "/" unless a command sets it */
    bool metrics;                 /* any Prometheus output was asked for (same on every rank) */
    struct rb_prom *prom;         /* rank 0: the cluster-wide registry; NULL without metrics */
    struct rb_prom *prom_rank;    /* every rank with --prom-per-rank: this rank's own view */
    struct rb_counters_sample *prom_c0, *prom_cprev; /* host counters at start and last tick */
};

/* A phase: the harness owns barriers, ticks, timing and records; the command owns the work. */
struct rb_phase {
    const char *name;                 /* "get", "cold", "epoch-1" */
    const char *op;                   /* "GET", "PUT", "collect" */
    struct rb_stats_names names;      /* error class and extra counter names */
    uint64_t duration_ns;             /* end after this long; 0: when every rank is done */
    /* Called on every rank right after the start barrier; returns 0 or -errno (run aborts, exit 3). */
    int (*start)(void *ctx);
    /* Moves this rank's stats since the last call into *into (merging); called by the main thread. */
    void (*collect)(void *ctx, struct rb_stats *into);
    /* True when this rank has nothing more to do. */
    bool (*done)(void *ctx);
    /* Asks the work to end now and waits for it (duration reached, another rank failed, a signal). */
    void (*stop)(void *ctx);
    /* Optional: called on every rank after each tick's reduce (collectives allowed); stats valid on rank 0. */
    void (*on_tick)(void *ctx, struct rb_harness *h, const struct rb_stats *interval, double t_s);
    void *ctx;
    bool no_stats;                    /* the phase counts no operations: no progress or stats lines */
    bool no_progress;                 /* keep stats and records but print no live lines (work that reports only at its end) */

    /* Filled by rb_harness_run_phase (totals on rank 0 only). */
    struct rb_stats *total;           /* allocated by the harness; freed by rb_harness_phase_free */
    double duration_s;
    double disk_util_ratio;           /* mean over hosts of the busy disks' utilisation; NAN: no host had a disk */
    double net_rx_bytes_per_s;        /* summed over hosts (all interfaces but lo) */
    double net_tx_bytes_per_s;
    double cpu_s;                     /* railbench's own CPU (user + system, every thread) over the phase, all ranks */
    cJSON *record;                    /* the phase record added to result.json (rank 0), still owned by it */
};

/* How a command wants the harness to start; the harness is the only place MPI is initialised. */
struct rb_harness_opts {
    bool mpi;             /* start MPI; false for calculators that run as one process */
    bool thread_multiple; /* threads besides the main one call MPI: MPI_THREAD_MULTIPLE, else FUNNELED */
    /*
     * The command starts no thread of its own: MPI_THREAD_SINGLE, the level MPI_Init gives OSU's and IMB's
     * benchmarks (Open MPI takes its locks at every level above it). The harness still asks FUNNELED when it
     * starts a thread itself (--prom-listen, --prom-per-rank: the /metrics server).
     */
    bool thread_single;
    /*
     * Optional: checks that need the number of ranks, called on every rank
     * after MPI starts and before the result directory is made. Returns 0 or
     * an exit status (print the reason on rank 0 only); the worst status of
     * any rank ends the run there and then.
     */
    int (*precheck)(void *ctx, int rank, int size);
    void *ctx;
    /*
     * The command watches its own blocking MPI calls (coll: -T and its rows). Otherwise rank 0 runs the record
     * watchdog: once a signal has come, a main-thread MPI call (RB_MPI_CHECK) that has not returned for 0.5 s
     * waits for a rank that is gone or too slow to stop (mpirun sends SIGKILL 1 s after SIGTERM), so the watchdog
     * writes the record as it stands, with the ranks named, and ends the process.
     */
    bool own_watchdog;
};

/*
 * Initialises MPI as opts asks (NULL: no MPI; works under mpirun, srun and as
 * a singleton), discovers ranks and hosts, runs opts->precheck, installs
 * SIGINT, SIGTERM and SIGHUP handlers, and on rank 0 opens the result directory
 * (--out, or railbench-results/<UTC time>-<command>). Returns 0, or an exit
 * status after logging why (MPI is finalised then).
 */
int rb_harness_init(struct rb_harness *h, const char *command, struct rb_cli *cli,
                    const struct rb_harness_opts *opts);

/*
 * Runs one phase on every rank: counters sampled, barrier, start(), then a
 * tick every --interval that collects each rank's stats, reduces them to
 * rank 0, appends an intervals.jsonl line and prints the progress line; ends
 * when every rank is done, the duration has passed, or a signal arrived;
 * then stop() and a last tick. Adds the phase record to result.json.
 * Collective: every rank calls it with the same phases in the same order.
 * Returns 0, or an exit status after logging why.
 */
int rb_harness_run_phase(struct rb_harness *h, struct rb_phase *p);

/* Frees what rb_harness_run_phase allocated in p; NULL-safe. */
void rb_harness_phase_free(struct rb_phase *p);

/* True once SIGINT, SIGTERM or SIGHUP arrived in this process (async-signal-safe flag). */
bool rb_harness_signalled(void);

/* Address of the signal flag, for sleeps that should end early (rb_clock_sleep_ns). */
const volatile int *rb_harness_signal_flag(void);

/*
 * True on every rank when any rank was signalled, and then records the run as
 * interrupted (h->interrupted; result.json gets a failed "completed" check).
 * Collective. The harness is the only writer of h->interrupted.
 */
bool rb_harness_any_signalled(struct rb_harness *h);

/*
 * Every rank's n (at most 4) flags combined by max over ranks, into flags on
 * every rank, without waiting forever for a rank that died or was stopped.
 * bounded: the ranks arrive together (ticks), so a rank missing for
 * h->rank_timeout_ns is lost; otherwise the wait has no bound until a signal
 * arrives. After a signal, a rank missing for 0.5 s more is lost (mpirun
 * sends SIGKILL 1 s after SIGTERM). A lost rank ends the run here: rank 0
 * records who did not answer, what was measured (h->on_lost), and the
 * interruption, writes result.json and the outcome line, and ends every
 * rank with exit 3 (MPI_Abort); a rank that loses rank 0 says so and exits 3.
 * Collective (every rank calls it the same number of times); main thread.
 */
void rb_harness_agree(struct rb_harness *h, int *flags, int n, bool bounded);

/*
 * Rank 0, from any thread while the main thread is held inside an MPI call
 * that will not return (a rank it waits for died or stopped): writes the
 * record with the ranks on this host that are gone or stopped named (why:
 * what was seen), the outcome line; no MPI call. The caller then _exit(3)s.
 */
void rb_harness_record_stuck(struct rb_harness *h, const char *why);

/* Notes an interruption every rank agreed on (sig), where the run was (t_s < 0: between phases). Main thread. */
void rb_harness_note_interrupted(struct rb_harness *h, int sig, double t_s);

/*
 * Gathers one JSON value from every rank to rank 0 (collective on h->comm).
 * Ranks pass their value or NULL (ownership stays with the caller). Rank 0
 * gets a new array of the non-NULL values in rank order (caller frees);
 * other ranks get NULL.
 */
cJSON *rb_harness_gather_json(struct rb_harness *h, const cJSON *mine);

/*
 * Sets a command-specific gauge or counter in the cluster-wide metrics
 * (rank 0; a no-op elsewhere or without metrics). See rb_prom_set.
 */
void rb_harness_metric(struct rb_harness *h, const char *name, const char *type, const char *help,
                       const char *labels, double value);

/*
 * Refreshes the per-host metrics (disk utilisation, network and InfiniBand
 * bytes) and publishes the registry for scrapes. rb_harness_run_phase calls
 * it every tick; commands that do not run phases call it when they have new
 * values. Collective; a no-op without metrics.
 */
void rb_harness_metrics_update(struct rb_harness *h);

/* Sums a histogram over ranks into out on rank 0 (collective on h->comm; exact min and max). */
void rb_harness_reduce_hist(struct rb_harness *h, const struct rb_hist *in, struct rb_hist *out);
/* Sums every rank's stats into out on rank 0 (one sum-reduce, one min-reduce); collective. Main thread. */
void rb_harness_reduce_stats(struct rb_harness *h, const struct rb_stats *in, struct rb_stats *out);

/* Barrier on h->comm (no-op without MPI). */
void rb_harness_barrier(struct rb_harness *h);

/* Formats a stats line like aisloader's for the progress output. */
void rb_harness_progress_line(char *buf, size_t len, const char *phase, const struct rb_stats *interval,
                              const struct rb_stats *total, double interval_s, double t_s);

/*
 * Ends the run: rank 0 writes table (may be NULL) to stdout and table.md,
 * records "interrupted" as a failed check when a signal cut the run short,
 * and writes result.json; then MPI is finalised. Unless --quiet, the last
 * line on stderr states the outcome: "outcome: completed (exit 0)", a failed
 * check by name, "interrupted by SIGINT during phase ..." with what was kept,
 * or "failed: ..." (a run that measured nothing keeps to its error line).
 * Returns the exit status: status if non-zero, else 1 when a check failed,
 * else 0 (broadcast from rank 0).
 */
int rb_harness_finish(struct rb_harness *h, const char *table, int status);

/*
 * Rank 0: says what an interrupted or failed run leaves behind besides its
 * results ("57 objects under s3://bench (prefix \"rb-...\")"), for the
 * outcome line rb_harness_finish prints last. The latest call wins.
 */
void rb_harness_kept(struct rb_harness *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Logs one error line and ends every rank with status (MPI_Abort under MPI). */
void rb_harness_fatal(struct rb_harness *h, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

/* Used by RB_MPI_CHECK. */
void rb_harness_mpi_fail(int rc, const char *call, const char *file, int line) __attribute__((noreturn));

#endif
