/* Object load engine: targets (http, s3, ais), object sets, seeded payloads, and GET/PUT phases on the harness. */
#ifndef RB_LOADER_H
#define RB_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "railbench/harness.h"
#include "railbench/hist.h"
#include "railbench/stats.h"

enum rb_load_op { RB_LOAD_GET, RB_LOAD_PUT };

/* Error classes, in the order of rb_load_err_names (a phase's names.err). */
enum rb_load_err {
    RB_LERR_CONNECT,
    RB_LERR_TIMEOUT,
    RB_LERR_RESET,
    RB_LERR_HTTP_4XX,
    RB_LERR_HTTP_5XX,
    RB_LERR_SHORT_READ,
    RB_LERR_CHECKSUM,
    RB_LERR_REDIRECTS,
    RB_LERR_OTHER,
    RB_LERR_COUNT
};
extern const char *const rb_load_err_names[RB_LERR_COUNT + 1];

/*
 * Extra counters, in the order of rb_load_extra_names (a phase's names.extra).
 * The cache_* counters count responses by the value of the response header
 * named in rb_load_opts.cache_header: HIT, MISS, any other value, or absent.
 * cache_header may be a comma-separated list ("X-Cache-Status,X-Cache"):
 * a response is counted by the first name of the list that it carries.
 */
enum rb_load_extra {
    RB_LX_REDIRECTS,
    RB_LX_CACHE_HIT,
    RB_LX_CACHE_MISS,
    RB_LX_CACHE_OTHER,
    RB_LX_CACHE_ABSENT,
    RB_LX_COUNT
};
extern const char *const rb_load_extra_names[RB_LX_COUNT + 1];

/* ---- Payload: deterministic, seekable bytes of (seed, object name, offset). ---- */

/* The key of one object's payload; every byte of the object is a function of key and offset. */
uint64_t rb_payload_key(uint64_t seed, const char *name);

/* Writes the len payload bytes starting at offset into buf. Thread-safe, no allocation. */
void rb_payload_fill(uint64_t key, uint64_t offset, void *buf, size_t len);

/* Compares buf with the payload at offset; returns the index of the first differing byte, or len. */
size_t rb_payload_verify(uint64_t key, uint64_t offset, const void *buf, size_t len);

/* Size of object name for a PUT of sizes in [min, max] (min when equal), seeded so GET can recompute it. */
uint64_t rb_payload_size(uint64_t seed, const char *name, uint64_t min_bytes, uint64_t max_bytes);

/* ---- Object sets ---- */

/* Names (and sizes when known; 0 otherwise) of the objects a run works on. */
struct rb_objset {
    size_t n, cap;
    char **names;       /* owned */
    uint64_t *sizes;    /* owned; 0 = unknown */
};

/* Appends one object (name copied). Returns 0 or -ENOMEM. */
int rb_objset_add(struct rb_objset *s, const char *name, uint64_t size_bytes);

/* Generated names "<prefix><index>", index zero-padded to at least 8 digits. Returns 0 or -ENOMEM. */
int rb_objset_generate(struct rb_objset *s, const char *prefix, uint64_t n);

/*
 * Reads one object name per line (blank lines and lines starting with '#'
 * skipped; an optional second tab- or space-separated field is the size in
 * bytes). Returns 0, -errno when the file cannot be read, or -EINVAL with
 * a message in err naming the line.
 */
int rb_objset_from_file(struct rb_objset *s, const char *path, char *err, size_t errlen);

/* This rank's share of all: the objects whose index i has i % size == rank, in order. Returns 0 or -ENOMEM. */
int rb_objset_partition(const struct rb_objset *all, int rank, int size, struct rb_objset *mine);

/* Frees the set; NULL-safe, leaves it empty. */
void rb_objset_free(struct rb_objset *s);

/* In-place seeded Fisher-Yates permutation of idx[0..n) (the same on every host for the same seed). */
void rb_objset_shuffle(uint32_t *idx, size_t n, uint64_t seed);

/*
 * Makes every rank's set a copy of root's (names and sizes), for a listing
 * made once on root. Collective on comm: root passes its set, the others an
 * empty one. Returns 0 on every rank, or -ENOMEM / -EIO on every rank when
 * a rank could not take it (the sets are left partly filled then).
 */
int rb_objset_bcast(struct rb_objset *s, int root, MPI_Comm comm);

/* ---- Targets ---- */

struct rb_target_cfg {
    const char *url;              /* http://host:port/path, s3://bucket[/prefix], ais://bucket[/prefix] */
    const char *const *endpoints; /* --endpoint URLs (s3, ais; http: replace the URL's host) */
    size_t nendpoints;
    const char *region;           /* s3 signing region; NULL: $AWS_REGION or us-east-1 */
    bool virtual_host;            /* s3: bucket.host addressing instead of host/bucket */
    const char *provider;         /* ais: backend provider query ("ais", "aws", "gcp", "azure"); NULL: ais */
    const char *credentials_file; /* s3: NULL: $AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials */
    const char *profile;          /* s3: NULL: $AWS_PROFILE or "default" */
};

struct rb_target;

/*
 * Parses cfg into a target (the scheme picks the http, s3 or ais table) and
 * loads credentials for s3 from the environment or the credentials file.
 * Returns 0; -EINVAL for a malformed URL, unknown scheme or bad endpoint, or
 * -EACCES when s3 credentials are missing, with one line in err (both are
 * usage errors, exit 2). Free with rb_target_close (NULL-safe). Secrets
 * never appear in err.
 */
int rb_target_open(struct rb_target **t, const struct rb_target_cfg *cfg, char *err, size_t errlen);
void rb_target_close(struct rb_target *t);

/* "http", "s3" or "ais". */
const char *rb_target_scheme(const struct rb_target *t);

/* Number of endpoints requests go to round-robin per connection (at least 1). */
size_t rb_target_endpoint_count(const struct rb_target *t);

/* The target as a user wrote it, for messages ("s3://bucket"). */
const char *rb_target_name(const struct rb_target *t);

/* The object prefix given in the URL's path (s3://bucket/prefix/), "" when none. */
const char *rb_target_prefix(const struct rb_target *t);

/*
 * Opens one TCP connection to every endpoint (no request). Returns 0, or a
 * negative errno with one line in err naming the endpoint and the reason.
 */
int rb_target_probe(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen);

/*
 * Lists the objects under prefix (s3: ListObjectsV2 with pagination; ais: the
 * list action with continuation tokens; http: an nginx autoindex JSON page)
 * and appends them with their sizes to out. Returns 0, or -EIO/-EPROTO with
 * one line in err (the HTTP status and the server's message).
 */
int rb_target_list(const struct rb_target *t, const char *prefix, uint64_t timeout_ns,
                   struct rb_objset *out, char *err, size_t errlen);

/* ---- Engine ---- */

enum rb_load_pattern { RB_PATTERN_RANDOM, RB_PATTERN_SEQUENTIAL, RB_PATTERN_EPOCH };

/* What one rank runs in a phase. Pointers are borrowed and must outlive the engine. */
struct rb_load_opts {
    enum rb_load_op op;
    const struct rb_target *target;
    const struct rb_objset *objects;  /* this rank's objects */
    unsigned threads;                 /* worker threads, each with its own curl multi handle */
    unsigned inflight;                /* concurrent requests per thread */
    enum rb_load_pattern pattern;     /* GET order; PUT goes through the set once */
    uint64_t epochs;                  /* epoch pattern: 0 = until another limit */
    uint64_t count;                   /* this rank's request limit; 0 = none */
    uint64_t bytes;                   /* this rank's byte limit (stops issuing once reached); 0 = none */
    uint64_t range_off, range_len;    /* GET Range OFF:LEN; len 0 = whole object */
    uint64_t random_range_len;        /* GET a random LEN-byte range (sizes must be known); 0 = off */
    double rate_per_s;                /* this rank's open-loop rate; 0 = closed loop */
    uint64_t seed;                    /* payload, sizes, permutations */
    bool verify;                      /* GET: compare every byte with the payload (class checksum) */
    uint64_t min_size, max_size;      /* PUT object sizes (rb_payload_size) */
    uint64_t timeout_ns;              /* per request; 0 = none */
    long max_redirects;               /* beyond this: class too_many_redirects */
    const char *cache_header;         /* count this response header's HIT/MISS (or a list, see above); NULL = off */
    int rank;                         /* for --log-requests lines */
    int log_fd;                       /* --log-requests file (O_APPEND), or -1 */
};

struct rb_engine;

/* Creates the workers' state (no threads yet). Returns 0, -EINVAL or -ENOMEM. Free with rb_engine_free. */
int rb_engine_new(struct rb_engine **e, const struct rb_load_opts *o);

/* Starts the worker threads; the phase clock starts now. Returns 0 or -errno. */
int rb_engine_start(struct rb_engine *e);

/*
 * Moves every worker's stats since the last call into into (merged), the
 * uncorrected latencies into uncorrected, and per-second completed bytes
 * into the engine's segment counters. Main thread only; workers hand over
 * at most once per call through a per-thread mailbox (no lock on the request path).
 */
void rb_engine_collect(struct rb_engine *e, struct rb_stats *into, struct rb_hist *uncorrected);

/* True when every worker has run out of work (limits reached) and drained its requests. */
bool rb_engine_done(struct rb_engine *e);

/* Tells workers to stop issuing, abandons requests in flight, joins the threads. Idempotent. */
void rb_engine_stop(struct rb_engine *e);

/* 0, or the -errno of the first worker whose loop failed (what it measured before is kept). */
int rb_engine_status(const struct rb_engine *e);

/* Requests in flight on this rank as the workers handed over at the last rb_engine_collect. */
unsigned rb_engine_inflight(const struct rb_engine *e);

/* Bytes completed in each whole second since start, summed over workers; *n gets the length. */
const uint64_t *rb_engine_segments(const struct rb_engine *e, size_t *n);

/* Stops if needed and frees; NULL-safe. */
void rb_engine_free(struct rb_engine *e);

/* The outcome of one load phase on rank 0 (other ranks: only duration_s). */
struct rb_load_result {
    const char *phase, *op;
    struct rb_stats *total;           /* owned */
    struct rb_hist *uncorrected;      /* owned: latency from the actual send time */
    uint64_t *segments;               /* owned: bytes per whole second, all ranks */
    size_t nsegments;
    double duration_s;
    bool open_loop;
    /* The host counters over the phase (rank 0): disk utilisation averaged over hosts, network summed over hosts. */
    double disk_util_ratio;
    double net_rx_bytes_per_s, net_tx_bytes_per_s;
};

/*
 * Runs one GET or PUT phase of o on every rank (collective): an engine per
 * rank started at the harness's barrier, interval stats through the
 * harness, then the uncorrected histograms and 1-second segments reduced to
 * rank 0 into res, and the phase record extended with them. duration_ns 0
 * means until every rank's limits are reached. Returns 0 or an exit status.
 */
int rb_load_run_phase(struct rb_harness *h, const char *name, uint64_t duration_ns,
                      const struct rb_load_opts *o, struct rb_load_result *res);

/* Frees what rb_load_run_phase allocated in res; NULL-safe. */
void rb_load_result_free(struct rb_load_result *res);

/*
 * The warp-like summary row of res: op, phase, objects, bytes, throughput,
 * latency, TTFB and uncorrected latency summaries, 1-second segments
 * (fastest/median/slowest), errors by class and extra counters.
 */
cJSON *rb_load_summary_json(const struct rb_load_result *res);

/* Appends res's report section (markdown) to the buffer *buf of *len bytes (realloc'd). Returns 0 or -ENOMEM. */
int rb_load_report_md(const struct rb_load_result *res, char **buf, size_t *len);

/* ---- Fetcher: a batch of GETs from the caller's thread (training emulation reads). ---- */

struct rb_fetcher;

/*
 * A fetcher owns one curl multi handle and o->inflight easy handles; o->op
 * must be GET; objects, threads and limits in o are ignored. Returns 0 or
 * -errno. One fetcher per thread; free with rb_fetcher_free (NULL-safe).
 */
int rb_fetcher_new(struct rb_fetcher **f, const struct rb_load_opts *o);

/*
 * GETs names[0..n) with up to inflight requests at a time and returns when
 * all have finished (or *stop became non-zero), recording each request into
 * stats (and uncorrected, which may be NULL). Returns the number of failed
 * requests (>= 0), or -errno when the engine itself failed.
 */
int rb_fetcher_get(struct rb_fetcher *f, const char *const *names, size_t n, struct rb_stats *stats,
                   struct rb_hist *uncorrected, const volatile int *stop);
void rb_fetcher_free(struct rb_fetcher *f);

/* Entry point of `railbench load` (argv[0] = "load"). */
int rb_load_main(int argc, char **argv);

#endif
