/* railbench load train internals shared by its command (options), run (threads, trainer, epochs) and report files. */
#ifndef RB_TRAIN_CMD_INT_H
#define RB_TRAIN_CMD_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "loader_int.h"
#include "phase_int.h"
#include "railbench/buf.h"
#include "railbench/harness.h"
#include "train_int.h"

/*
 * Thread-safety: struct run is set up and reported on the main thread; the
 * read threads and the trainer of an epoch share only what struct epoch
 * guards (its mutex, condition variables and atomics, train_run.c).
 */

/* MLPerf Storage: the data set must be at least five times the client hosts' memory, or page caches hide storage. */
#define MEMORY_FACTOR 5

struct train_args {
    /* Values a --workload preset supplies when they are not given (NULL: not given). */
    const char *workload, *batch_s, *spo_s, *compute_s, *sample_s, *threads_s, *au_min_s;
    uint64_t inflight, prefetch, accel, epochs, max_steps, seed, grad_bytes, max_accel;
    bool strict, find_max, populate, verify;
    uint64_t objects;
    const char *prefix, *filelist;
    struct rb_target_args tgt; /* --endpoint, --region, --virtual-host, credentials, --provider */
    const char *cache_header;
    uint64_t timeout_ns, max_redirects;
    double max_error_pct;
    int engine;                /* enum rb_engine_kind of the reads: auto|curl|native */

    /* Resolved from the options and the preset. */
    const struct rb_train_preset *preset;
    uint64_t batch, spo, read_threads, compute_ns, compute_stdev_ns, sample_bytes, sample_stdev;
    bool sample_known;
    double au_min;
};

struct epoch;

/* One read thread of the rank's data loader: its own fetcher (curl multi handle, connections) and stats. */
struct loader {
    unsigned id;
    struct rb_fetcher *f;
    struct rb_stats *local;     /* what the fetcher recorded for the current batch */
    struct rb_stats *box;       /* handed over per batch, taken by the harness's collect */
    pthread_mutex_t mu;
    pthread_t th;
    bool started;
    int failed;                 /* -errno when the fetcher itself failed */
    struct epoch *ep;
};

/* A reported trial: one accelerator count and the epochs run with it. */
struct trial {
    uint64_t accel;                 /* per rank */
    cJSON *epochs;                  /* rank 0: summary entries of the epochs */
    struct rb_train_figures *fig;   /* rank 0: figures of the epochs */
    size_t nfig;
    double au_mean_pct, samples_per_s;
    bool met, interrupted;
};

struct run {
    struct train_args *a;
    struct rb_harness *h;
    const struct rb_target *t;
    const struct rb_objset *all;
    struct rb_load_opts fetch;      /* what every fetcher reads with */
    struct loader *loaders;
    unsigned nloaders;
    MPI_Comm comm;                  /* the trainers' barriers and all-reduces */
    float *grad_send, *grad_recv;
    int grad_count;
    uint64_t epoch_seq;             /* epochs started in this run: seeds each one's permutation */
    uint64_t errors, requests;      /* rank 0: over every epoch */
    uint64_t read_objects, read_bytes; /* rank 0: to estimate the data set's size when it is unknown */

    /* The trials run so far and what rank 0 reports of them. */
    struct trial *trials;
    size_t ntrials;
    struct rb_train_search search;
    bool measured_anything;
    bool sample_checked;            /* rank 0: the sample size read was compared with the assumed one */
    uint64_t dataset_bytes;         /* from the listing or file list; 0 while unknown */
    const char *source;             /* where the sizes came from; NULL: estimated after the first epoch */
    cJSON *dataset, *populated;     /* rank 0: summary parts (owned until handed to the summary) */
};

/* ---- train_run.c ---- */

/*
 * Builds the whole object set on every rank: generated names (O(1) on
 * each), or the file list or bucket listing read by rank 0 and then held
 * once per host in memory its ranks share (rb_objset_share). Returns 0 or an
 * exit status after rank 0 logged why; *source says where sizes came from.
 */
int rb_train_build_objects(struct rb_harness *h, const struct train_args *a, const struct rb_target *t,
                           const char *prefix, struct rb_objset *all, const char **source);
/*
 * Creates R's fetchers, one per read thread (each epoch starts and joins the
 * threads). Returns 0 or an exit status. Free with rb_train_loaders_free.
 */
int rb_train_loaders_new(struct run *R);
/* Frees R's fetchers and their stats (the epochs joined their threads); safe after a partial rb_train_loaders_new. */
void rb_train_loaders_free(struct run *R);
/* --populate: PUTs the data set as one load phase; rank 0 gets its summary row in *record. Collective. */
int rb_train_populate(struct run *R, cJSON **record);
/* Rank 0: the data set's size against the client hosts' memory (collective: every rank reports its memory). */
cJSON *rb_train_dataset_json(struct run *R, uint64_t bytes, const char *source);
/* Runs the trial (or the --find-max-accelerators search) into R->trials. Collective. Returns 0 or an exit status. */
int rb_train_run_trials(struct run *R);

/* ---- train_report.c ---- */

/* Rank 0: the epoch's summary entry from every rank's figures. */
cJSON *rb_train_epoch_entry(struct run *R, const cJSON *ranks_json, uint64_t epoch_no, bool cold, unsigned accel,
                            const struct rb_phase *p, const struct rb_hist *wait, const struct rb_hist *sync,
                            struct rb_train_figures *fig);
/* Rank 0: result.json's summary, table.md and the checks of the trials in R (takes R->dataset and R->populated). */
void rb_train_report(struct run *R, struct rb_buf *table);

#endif
