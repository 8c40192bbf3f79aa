/* railbench load train internals shared by its command (options), run (threads, trainer, epochs) and report files. */
#ifndef RB_TRAIN_CMD_INT_H
#define RB_TRAIN_CMD_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "../cmd/loader_int.h"
#include "../engine/phase_int.h"
#include "../engine/tarshard_int.h"
#include "../file/file_int.h"
#include "railbench/buf.h"
#include "railbench/harness.h"
#include "fmt_int.h"
#include "train_int.h"

/*
 * Thread-safety: struct rb_train_run is set up and reported on the main thread; the
 * read threads and the trainer of an epoch share only what struct epoch
 * guards (its mutex, condition variables and atomics, train_run.c).
 */

/*
 * --format: samples back to back in an object (raw), a ustar shard of one member per sample (tar), a Parquet
 * file of one row per sample (parquet), a zip of x.npy and y.npy as numpy.savez writes them (npz) or a baseline
 * JPEG of one image (jpeg; fmt_int.h).
 */
enum { TRAIN_FORMAT_RAW, TRAIN_FORMAT_TAR, TRAIN_FORMAT_PARQUET, TRAIN_FORMAT_NPZ, TRAIN_FORMAT_JPEG };
#define TRAIN_FORMAT_CHOICES "raw|tar|parquet|npz|jpeg"
/* --shard-read: a tar shard streamed whole, or its index (headers) read once and each sample read as its own range. */
enum { TRAIN_SHARD_WHOLE, TRAIN_SHARD_RANGED };
#define TRAIN_SHARD_READ_CHOICES "whole|ranged"

/* MLPerf Storage: the data set must be at least five times the client hosts' memory, or page caches hide storage. */
#define MEMORY_FACTOR 5

struct train_args {
    /* Values a --workload preset supplies when they are not given (NULL: not given). */
    const char *workload, *batch_s, *spo_s, *compute_s, *sample_s, *threads_s, *au_min_s;
    const char *scale_s;       /* --scale F: the preset's files x F as --objects */
    uint64_t inflight, prefetch, accel, epochs, max_steps, seed, grad_bytes, max_accel;
    bool strict, find_max, populate, overwrite, verify;
    bool overlap;               /* --overlap: baselines, then the all-reduce overlapped with the next step */
    uint64_t objects;
    const char *prefix, *filelist;
    struct rb_target_cfg tgt;  /* the target options: --endpoint, --timeout, each protocol's own */
    struct rb_engine_args eng; /* --engine (of the reads and --populate's PUTs), --max-redirects */
    const char *cache_header;
    double max_error_pct;
    uint64_t ckpt_every, ckpt_bytes; /* --checkpoint-every K steps, --checkpoint-size per rank; 0: none */
    bool ckpt_async;           /* --checkpoint-async: snapshot, then a writer thread */
    struct rb_file_opts file;  /* a file:// data set's options (the file protocol's group) */
    int format;                /* --format: TRAIN_FORMAT_RAW or _TAR, how an object holds its samples */
    int shard_read;            /* --shard-read: TRAIN_SHARD_WHOLE or _RANGED (--format tar) */
    const char *columns;       /* --format parquet: --columns NAME,... (NULL: every column) */
    const char *pq_schema_s, *rg_rows_s; /* --parquet-schema scalar:N|list:N, --row-group-size ROWS (NULL: preset's) */
    bool rg_read;              /* --row-group-read: one request per row group (its projected chunks' span) */
    bool decode;               /* --decode: npz and jpeg files decoded as a loader does (train_decode.c) */
    struct train_pqcfg *pq;    /* --format parquet: the layout and the projection (train_pq.c) */
    struct rb_npz_spec npz;    /* --format npz: what every file holds (fmt_npz.c) */
    struct rb_tar_layout tar;  /* --format tar: the shards' members, the payload layout (tarshard_int.h) */
    struct rb_jpeg_layout *jpeg; /* --format jpeg with a sample size: the coded pool (fmt_jpeg.c) */
    /*
     * What --populate writes and --verify expects, in every protocol: the format's files (ctx one of the above), or
     * {0}: plain (raw; a format read without a sample size). The fetchers' options carry it (rb_load_opts.payload).
     */
    struct rb_payload_layout payload;

    /* Resolved from the options and the preset. */
    const struct rb_train_preset *preset;
    uint64_t batch, spo, read_threads, compute_ns, compute_stdev_ns, sample_bytes, sample_stdev;
    bool sample_known;
    double au_min;
};

/* Bytes of an object whose samples take raw_bytes, in the run's --format (a tar shard adds headers and padding). */
uint64_t rb_train_format_bytes(const struct train_args *a, uint64_t raw_bytes);

struct epoch;

/*
 * How an epoch's steps run: with reads or without (the collective
 * baseline), and what synchronises a step: a barrier, a blocking
 * all-reduce of --grad-bytes (serial), or that all-reduce started on the
 * collective thread and waited for at the end of the next step (--overlap).
 */
enum train_sync { TRAIN_SYNC_BARRIER, TRAIN_SYNC_ALLREDUCE, TRAIN_SYNC_OVERLAP };

struct train_mode {
    bool reads;
    enum train_sync sync;
};

/*
 * One rank's per-step sums over an epoch's steps after the first: where the
 * step's time went, and how long the loader took per batch fetched.
 */
struct train_steps {
    uint64_t steps;             /* steps accounted (the first left out) */
    uint64_t wait_ns;           /* until the step's last batch was in hand */
    uint64_t compute_ns;        /* from then until the trainer woke */
    uint64_t sync_ns;           /* the rest: barrier or all-reduce the trainer waited for */
    uint64_t step_ns;           /* the whole step */
    uint64_t allreduce_ns;      /* each all-reduce from its start to its completion */
    uint64_t allreduces;
    uint64_t fetch_ns, fetch_bytes, fetches; /* the loader's batches: time in the fetch, bytes (every batch) */
};

/* The all-reduce of --overlap on its own thread (train_overlap.c). */
struct train_ar;

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

struct rb_train_run {
    struct train_args *a;
    struct rb_harness *h;
    const struct rb_target *t;
    const struct rb_objset *all;
    struct rb_load_opts fetch;      /* what every fetcher reads with */
    struct loader *loaders;
    unsigned nloaders;
    MPI_Comm comm;                  /* the trainers' barriers and all-reduces */
    struct train_mode mode;         /* how the next epoch runs */
    struct train_ar *ar;            /* --overlap: the collective thread */
    float *grad_send, *grad_recv;
    int grad_count;
    uint64_t epoch_seq;             /* epochs started in this run: seeds each one's permutation */
    uint64_t errors, requests;      /* rank 0: over every epoch */
    bool broken;                    /* a read thread stopped (it said why): exit 3 */
    bool abandoned;                 /* a read thread was left in a file system call (fwatch_int.h): its loader and
                                       epoch stay allocated, it may still come back to them */
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
    cJSON *interference;            /* rank 0, --overlap: summary.interference (owned until handed over) */
    struct train_ckpt *ckpt;        /* --checkpoint-every (train_ckpt.c), or NULL */
    struct train_decode *dec;       /* --decode: the read threads' batches and the decode figures; or NULL */
    struct train_pqread *pqr;       /* --format parquet: the footers' index, the threads' ranges (train_pq.c); or NULL */
    struct train_tar *tar;          /* --shard-read ranged: the shards' index, the threads' ranges (train_tar.c); or NULL */
    cJSON *checkpoint;              /* rank 0: summary.checkpoint (owned until handed over) */
};

/* ---- train_data.c ---- */

/*
 * Builds the whole object set on every rank: generated names (O(1) on
 * each), or the file list or bucket listing read by rank 0 and then held
 * once per host in memory its ranks share (rb_objset_share). Returns 0 or an
 * exit status after rank 0 logged why; *source says where sizes came from.
 */
int rb_train_build_objects(struct rb_harness *h, const struct train_args *a, const struct rb_target *t,
                           const char *prefix, struct rb_objset *all, const char **source);
/*
 * --format tar on a directory without --populate: rank 0 reads the first
 * shard's tar headers; members other than --samples-per-object stop the run.
 * Returns 0 or an exit status (every rank the same). Collective.
 */
int rb_train_check_shards(struct rb_train_run *R);
/*
 * Creates R's fetchers, one per read thread (each epoch starts and joins the
 * threads). Returns 0 or an exit status. Free with rb_train_loaders_free.
 */
int rb_train_loaders_new(struct rb_train_run *R);
/* Frees R's fetchers and their stats (the epochs joined their threads); safe after a partial rb_train_loaders_new. */
void rb_train_loaders_free(struct rb_train_run *R);
/* --populate: PUTs the data set as one load phase; rank 0 gets its summary row in *record. Collective. */
int rb_train_populate(struct rb_train_run *R, cJSON **record);
/* Rank 0: the data set's size against the client hosts' memory (collective: every rank reports its memory). */
cJSON *rb_train_dataset_json(struct rb_train_run *R, uint64_t bytes, const char *source);
/*
 * Rank 0, after a trial: the sample size the objects read hold against the
 * one assumed (a warning when more than 2x apart), and, when the listing gave
 * no sizes, R->dataset estimated from what the first epoch read.
 */
void rb_train_estimate_dataset(struct rb_train_run *R);

/* ---- train_run.c ---- */

/* Runs the trial (or the --find-max-accelerators search) into R->trials. Collective. Returns 0 or an exit status. */
int rb_train_run_trials(struct rb_train_run *R);
/*
 * Runs one epoch in R->mode with tr->accel accelerators per rank as harness
 * phase name; rank 0 appends its summary entry and figures to tr. Collective.
 * Returns 0 or an exit status.
 */
int rb_train_run_epoch(struct rb_train_run *R, struct trial *tr, uint64_t epoch_no, const char *name);

/* ---- train_overlap.c ---- */

/*
 * --overlap: the storage baseline (reads, a barrier per step), the collective
 * baseline (the all-reduce alone, no reads), then the trial with the two
 * overlapped; rank 0 keeps the interference record in R->interference.
 * Collective. Returns 0 or an exit status.
 */
int rb_train_interference_run(struct rb_train_run *R);
/* Starts the collective thread on R->comm for R->grad_count floats. Returns 0 or an exit status (all ranks agree). */
int rb_train_ar_new(struct rb_train_run *R);
/* Stops and joins the collective thread (NULL: nothing). */
void rb_train_ar_free(struct train_ar *ar);
/* Hands the all-reduce of one step (carrying this rank's stop vote) to the collective thread. */
void rb_train_ar_start(struct train_ar *ar, int stop);
/* Waits for the all-reduce started last; *dur_ns its start-to-completion time. Returns whether any rank voted stop. */
int rb_train_ar_wait(struct train_ar *ar, uint64_t *dur_ns);
/* Whether an all-reduce was started and not yet waited for. */
bool rb_train_ar_pending(struct train_ar *ar);
/* Rank 0: the step breakdown of an epoch from every rank's sums (means per step, fetch throughput). */
cJSON *rb_train_steps_json(const cJSON *ranks_json);
/* Rank 0: the interference table (after the epochs table) from summary.interference in (nothing when NULL or null). */
void rb_train_interference_md(struct rb_buf *b, const struct rb_train_run *R, const cJSON *in);

/* ---- train_ckpt.c ---- */

struct train_ckpt;
/* --checkpoint-every: the checkpoint state (*out NULL without it). Collective. Returns 0 or an exit status. */
int rb_train_ckpt_new(struct rb_train_run *R, struct train_ckpt **out);
/* The trainer, after each step: every K steps a checkpoint, written now (sync) or snapshotted and handed to the
 * writer thread (async); the time the step waits for it is the stall; step_start_ns is when the step began (the
 * steps' time is what the stall is a share of). Trainer thread; NULL-safe. */
void rb_train_ckpt_step(struct train_ckpt *c, uint64_t step_start_ns);
/* Waits for the last async write; rank 0 gets summary.checkpoint (the others NULL). Collective; NULL-safe. */
cJSON *rb_train_ckpt_json(struct train_ckpt *c);
/* Deletes the checkpoints written (a cleanup phase) and frees c. Collective; NULL-safe. Returns 0 or a status. */
int rb_train_ckpt_free(struct rb_train_run *R, struct train_ckpt *c);

/* ---- train_tar.c ---- */

struct train_tar;
/* --shard-read ranged: R->tar for R's read threads (nothing otherwise; after rb_train_loaders_new). Returns 0 or -ENOMEM. */
int rb_train_tar_new(struct rb_train_run *R);
/* Frees R->tar; safe when there is none or it is partly set up. */
void rb_train_tar_free(struct rb_train_run *R);
/*
 * Read thread l's batch k of the rank's stream (nnames shards), ranged: each
 * sample is member j % spo of shard stream[j / spo], read as exactly its bytes
 * (rb_fetcher_get_ranges) after the shard's index — its tar headers, one
 * 512-byte ranged read each, once per rank — is in memory. Returns the
 * fetcher's failed reads (>= 0), -ECANCELED when a shard's index could not be
 * read (one error line said why: not tar, truncated, a member past the
 * object's end, another member count), or another -errno.
 */
int rb_train_tar_fetch(struct rb_train_run *R, struct loader *l, const uint32_t *stream, size_t nnames, uint64_t k,
                       const volatile int *stop);
/* --format tar: dataset gets shard_read and the index reads summed over ranks (rank 0, when not NULL). Collective. */
void rb_train_tar_record(struct rb_train_run *R, cJSON *dataset);

/* ---- train_rget.c ---- */

/* One small ranged read of an object: pread on file://, a Range GET (one keep-alive handle) otherwise. */
struct train_rget {
    const struct rb_target *t;
    const char *name;
    uint64_t timeout_ns;
    CURL *easy;                     /* http, s3, ais */
    struct rb_fwatch *watch;        /* file: the call in progress, for the watchdog (or NULL) */
    const char *whole_hint;         /* appended to the line when a server ignores Range (or NULL) */
    unsigned char *buf;             /* room for the largest read asked for */
    /* Set by the calls: */
    int fd;                         /* file: the object open, or -1 */
    char path[PATH_MAX];            /* file: its path, for the watchdog's line */
    size_t want, got;
    bool overflow;                  /* more bytes than the range asked for: the server ignored Range */
    uint64_t total;                 /* the object's size; UINT64_MAX while unknown */
};
/* Opens q->name on file:// (its size into q->total); nothing otherwise. 0 or -errno with one line in err. */
int rb_train_rget_open(struct train_rget *q, char *err, size_t errlen);
/* Reads len bytes at off (suffix: the last len) into q->buf, q->got of them (fewer at the end). 0 or -EIO. */
int rb_train_rget_read(struct train_rget *q, uint64_t off, size_t len, bool suffix, char *err, size_t errlen);
void rb_train_rget_close(struct train_rget *q);

/* A read thread's own for ranged reads: its index reader (one keep-alive handle off file://) and a batch's ranges. */
struct train_reader {
    CURL *easy;
    struct rb_fwatch *watch;        /* file: the fetcher's watchdog slot (set per batch) */
    uint32_t *idx;
    uint64_t *off, *len;
    size_t cap;
};
/* n readers for R's target, with room for cap ranges each. Returns 0 or -ENOMEM (*out may be partly set up). */
int rb_train_readers_new(const struct rb_train_run *R, unsigned n, size_t cap, struct train_reader **out);
void rb_train_readers_free(struct train_reader *rd, unsigned n);
/* Room for used + n ranges in rd. Returns 0 or -ENOMEM. */
int rb_train_reader_reserve(struct train_reader *rd, size_t used, size_t n);

/* Per-object indexes (a shard's tar headers, a Parquet footer), each read once per rank by the first thread to need it. */
struct train_ixcache {
    pthread_mutex_t mu;             /* guards the moves out of reading */
    pthread_cond_t cv;              /* an index became ready (or failed) */
    _Atomic unsigned char *state;   /* per object; ready is final, read without the lock */
    void **item;
    size_t n;
};
int rb_train_ixcache_init(struct train_ixcache *c, size_t n);
/* Frees c and its items (free_item each); safe after a failed init. */
void rb_train_ixcache_free(struct train_ixcache *c, void (*free_item)(void *));
/*
 * Object i's index into *out: in memory, or read now by read(ctx, i, &item)
 * unless another thread is reading it (then waited for). 0, read's -errno
 * (it said why), -EIO when another thread failed on it, -ECANCELED when
 * the reader is stalled in a file system call (the watchdog said so).
 */
int rb_train_ixcache_get(struct train_ixcache *c, size_t i, int (*read)(void *ctx, size_t i, void **item), void *ctx,
                         void **out);

/* ---- train_pq.c ---- */

struct train_pqcfg;
struct train_pqread;
/*
 * --workload and --scale: a->preset, and from it (when not given) --format and --objects (files x F). Prints one
 * line and returns RB_EXIT_USAGE on a problem.
 */
int rb_train_workload_resolve(struct train_args *a, struct rb_cli *cli);
/*
 * --format parquet, npz and jpeg: resolves the parquet schema, row groups and columns, or the npz files, and sets
 * a->payload, the layout --populate writes; prints one line and returns RB_EXIT_USAGE on a problem.
 */
int rb_train_formats_resolve(struct train_args *a);
/* The bytes of every file --populate writes (the layout's). */
uint64_t rb_train_pq_file_bytes(const struct train_args *a);
void rb_train_pq_cfg_free(struct train_args *a);
/* R->pqr for R's read threads (after rb_train_loaders_new). Returns 0 or -ENOMEM. */
int rb_train_pq_new(struct rb_train_run *R);
void rb_train_pq_free(struct rb_train_run *R);
/*
 * Read thread l's batch k: each row group whose first row the batch takes is
 * read as its projected column chunks (one ranged read each; one spanning
 * them with --row-group-read), after its file's footer is in memory (two
 * ranged reads, once per rank). Returns the fetcher's failed reads (>= 0),
 * -ECANCELED when a footer could not be read or used (one error line), or
 * another -errno.
 */
int rb_train_pq_fetch(struct rb_train_run *R, struct loader *l, const uint32_t *stream, size_t nnames, uint64_t k,
                      const volatile int *stop);
/*
 * --format npz or jpeg without --populate: rank 0 reads the first file's first bytes (a zip local header of a .npy
 * member; a JPEG's SOI); anything else stops the run with one line, exit 3. Collective.
 */
int rb_train_check_format(struct rb_train_run *R);
/* --format parquet: dataset gets the projection and what was read, summed over ranks (rank 0). Collective. */
void rb_train_pq_record(struct rb_train_run *R, cJSON *dataset);

/* ---- train_decode.c ---- */

struct train_decode;
/* R->dec for R's read threads with --decode (nothing otherwise). Returns 0 or -ENOMEM. */
int rb_train_decode_new(struct rb_train_run *R);
void rb_train_decode_free(struct rb_train_run *R);
/* The fetcher's body hook (struct rb_load_opts.body): keeps the bytes of the batch this thread is fetching. */
void rb_train_decode_body(const char *name, uint64_t off, const void *p, size_t n);
/* Read thread l is about to fetch objects idx[0..n): keep their bodies (no-op without --decode). */
void rb_train_decode_begin(struct rb_train_run *R, const struct loader *l, const uint32_t *idx, size_t n);
/* The batch arrived: decodes each file kept, timing the thread's CPU (no-op without --decode). */
void rb_train_decode_end(struct rb_train_run *R, const struct loader *l);
/* --decode: dataset gets files, failed, cpu_s and decoded_bytes summed over ranks (rank 0). Collective. */
void rb_train_decode_record(struct rb_train_run *R, cJSON *dataset);

/* ---- train_report.c ---- */

/*
 * Sets the epoch entry e's cache label from a measurement when there is one:
 * counted (may be NULL) holds the page-cache (--cold-check) or cache-header
 * counts; when any read was counted, "cache" is "cold" (no read found a
 * cached page or HIT: the rule of the check "<epoch>_cold"), "warm" (none
 * missed) or "mixed", and "cache_basis" "measured". Otherwise the label is
 * configured_cold's ("cold" or "warm", basis "configured"). "cold" is true
 * exactly when "cache" is "cold". Replaces earlier labels.
 */
void rb_train_epoch_cache(cJSON *e, bool configured_cold, const struct rb_stats *counted);
/* Rank 0: the epoch's summary entry from every rank's figures. */
cJSON *rb_train_epoch_entry(struct rb_train_run *R, const cJSON *ranks_json, uint64_t epoch_no, bool cold,
                            unsigned accel, const struct rb_phase *p, const struct rb_hist *wait, const struct rb_hist *sync,
                            struct rb_train_figures *fig);
/* Rank 0: result.json's summary, table.md and the checks of the trials in R (takes R->dataset and R->populated). */
void rb_train_report(struct rb_train_run *R, struct rb_buf *table);

#endif
