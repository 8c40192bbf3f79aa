/* Engine: per-thread libcurl multi loops that run one rank's GETs or PUTs; the fetcher (a batch on the caller's thread). */
#ifndef RB_ENGINE_INT_H
#define RB_ENGINE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "../objset/objset_int.h"
#include "payload_int.h"
#include "railbench/hist.h"
#include "railbench/load_errors.h"
#include "railbench/stats.h"
#include "../proto/target_int.h"

/*
 * Thread-safety: an engine is driven from one thread (the main thread:
 * new, start, collect, done, stop, status, segments, free); its workers
 * run on their own threads and hand their stats over through a per-worker
 * mailbox, so no call here takes a lock on the request path. A fetcher
 * belongs to the thread that created it. rb_engine_classify is pure.
 */

/* Error classes, in the order of rb_load_err_names (a phase's names.err): RB_LOAD_ERR_LIST. */
enum rb_load_err {
#define RB_LERR_ENUM(K, name) RB_LERR_##K,
    RB_LOAD_ERR_LIST(RB_LERR_ENUM)
#undef RB_LERR_ENUM
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

/* Extra counters of a run's TLS figures (struct rb_load_result.tls): handshakes resumed, on kernel TLS. */
enum rb_tls_extra { RB_TLS_RESUMED, RB_TLS_KTLS, RB_TLS_EXTRA_COUNT };

enum rb_load_pattern { RB_PATTERN_RANDOM, RB_PATTERN_SEQUENTIAL, RB_PATTERN_EPOCH };

/*
 * Which engine carries the requests: libcurl (every target and op), or the
 * native one (plain http:// GET of whole objects and PUT on our own epoll loop).
 * AUTO takes native where it applies. Chosen once per engine, never per request.
 */
enum rb_engine_kind { RB_ENGINE_AUTO, RB_ENGINE_CURL, RB_ENGINE_NATIVE };

/*
 * The native engine's event loop (--io-loop): epoll (readiness, one send and
 * one receive call per request), or io_uring (sends and multishot receives
 * as submissions, submitted with the wait in one system call). AUTO takes
 * io_uring where it applies and the kernel allows it. Chosen once per run.
 */
enum rb_io_loop { RB_IOLOOP_AUTO, RB_IOLOOP_EPOLL, RB_IOLOOP_URING };

/* What the engine options fill in (rb_engine_options); a command sets the defaults before parsing. */
struct rb_engine_args {
    int engine;             /* --engine: enum rb_engine_kind, auto|curl|native */
    uint64_t max_redirects; /* --max-redirects: followed per request (AIStore); default RB_ENGINE_MAX_REDIRECTS */
    int io_loop;            /* --io-loop: enum rb_io_loop, auto|epoll|io_uring */
};
#define RB_ENGINE_MAX_REDIRECTS 5

/* Adds the engine's option rows (--engine, --max-redirects, --io-loop), their dests in ea, to t. Main thread. */
void rb_engine_options(struct rb_opts *t, struct rb_engine_args *ea);
/* Adds --engine alone (load list: a listing follows no redirects of its own). Main thread. */
void rb_engine_list_options(struct rb_opts *t, struct rb_engine_args *ea);
/*
 * rb_target_list_pages on the engine the command chose (native_list.c): engine CURL, or a target that lists
 * itself (file://) or has no listing request, goes to proto's rb_target_list_pages (libcurl's listing); AUTO and
 * NATIVE list on the native engine. Same contract as rb_target_list_pages.
 */
int rb_engine_list_pages(enum rb_engine_kind engine, const struct rb_target *t, const char *prefix,
                         uint64_t timeout_ns, struct rb_objset *out, rb_list_page_fn *on_page, void *ctx, char *err,
                         size_t errlen);
/* rb_engine_list_pages without a callback: rb_target_list on the chosen engine. */
int rb_engine_list(enum rb_engine_kind engine, const struct rb_target *t, const char *prefix, uint64_t timeout_ns,
                   struct rb_objset *out, char *err, size_t errlen);

/* What one rank runs in a phase. Pointers are borrowed and must outlive the engine. */
struct rb_file_opts;

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
    /* What PUT bodies are and GET --verify expects (load train's formats, load kvcache's .npy objects); {0}: plain. */
    struct rb_payload_layout payload;
    bool verify;                      /* GET: compare every byte with the payload (class checksum) */
    uint64_t min_size, max_size;      /* PUT object sizes (rb_payload_size) */
    uint64_t timeout_ns;              /* per request; 0 = none */
    long max_redirects;               /* beyond this: class too_many_redirects */
    const char *cache_header;         /* count this response header's HIT/MISS (or a list, see above); NULL = off */
    int rank;                         /* for --log-requests lines */
    int log_fd;                       /* --log-requests file (O_APPEND), or -1 */
    enum rb_engine_kind engine;       /* AUTO (0): native where it applies */
    enum rb_io_loop io_loop;          /* the native engine's loop; AUTO (0): io_uring where it applies */
    /*
     * PUT to s3://: objects above multipart_threshold go up in parts of part_size (multipart.c); GET: they are read
     * as parallel Range requests of part_size (ranged.c). part_size 0 = off.
     */
    uint64_t part_size, multipart_threshold;
    /* load mixed: ops drawn per request by these weights over the rank's objects (mixed.c); NULL = op alone. */
    const struct rb_mix *mix;
    bool mix_prepared;                /* mixed: the objects were written by this run's prepare phase */
    bool track_written;               /* put: keep which objects were written, for cleanup (rb_engine_each_written) */
    bool listing;                     /* the native engine's listing worker (native_list.c): one slot, pages in turn */
    const struct rb_objset *preexisting; /* names that existed before the run (--overwrite): cleanup leaves them; may be NULL */
    /*
     * GET: every body read as a tar archive as it streams (tarsamples.c), each regular member one sample of the
     * part statistics (one record per sample, rb_engine_part_stats); a body that is not a whole archive stops
     * the rank with one error line and one sample error (class other). load get --samples tar.
     */
    bool tar_samples;
    /* --phases: each request's latency cut into spans (rphase_int.h), one histogram each; off: no clock read more. */
    bool phases;
    /* --slowest N: the N slowest requests kept by name (0: none). */
    unsigned slowest;
    /*
     * GET: every body's bytes as they arrive, to body(name, offset in the object, bytes, n) on the thread that
     * drives the fetcher (load train --decode keeps a batch's bodies); NULL: none. Must not block.
     */
    void (*body)(const char *name, uint64_t off, const void *p, size_t n);
    /* A file:// target's options (--io-engine, --direct, --block-size, --fsync, ...); NULL: the defaults. */
    const struct rb_file_opts *file;
    /* The caller's own transport (worker_int.h; load tiers' read-through cache), or NULL: rb_transport_for's pick. */
    const struct rb_transport *transport;
};

/*
 * The engine's options every command starts from, built from a command's
 * target and engine options: op on t (its --timeout from tc), ea's engine
 * and redirects, rank for --log-requests lines, no request log. The command
 * then sets its own fields (objects, threads, limits, pattern, ...). Pure.
 */
struct rb_load_opts rb_load_opts_from(enum rb_load_op op, const struct rb_target *t, const struct rb_target_cfg *tc,
                                      const struct rb_engine_args *ea, int rank);

/*
 * Whether the native engine can run o: an http:// target, GET of whole
 * objects (no --range or --random-range) or PUT. When it cannot, *why (if not
 * NULL) gets a static phrase naming what is missing. Pure; thread-safe.
 */
bool rb_engine_native_fits(const struct rb_load_opts *o, const char **why);

/*
 * A user's --engine and --io-loop (ea) checked against what runs on target t:
 * 0, or RB_EXIT_USAGE after one line on stderr when native or io_uring was
 * forced where it does not apply (ranged: a --range or --random-range GET).
 * Thread-safe.
 */
int rb_engine_check_usage(const struct rb_engine_args *ea, const struct rb_target *t, enum rb_load_op op, bool ranged);

/* The name of o's transport, for results: "native", "curl", "file" (transport.c: rb_transport_for). Thread-safe. */
const char *rb_engine_name(const struct rb_load_opts *o);

/*
 * Whether the native engine's io_uring loop can run o (an engine worker's
 * requests to plain http:// endpoints without a request body: GET, HEAD,
 * DELETE; TLS, PUT bodies, load mixed and listings stay on epoll). When it
 * cannot, *why (if not NULL) gets a static phrase. Pure; thread-safe.
 */
bool rb_native_uring_fits(const struct rb_load_opts *o, const char **why);
/*
 * The loop o's native workers run: o->io_loop with AUTO resolved (io_uring
 * where it fits and the kernel allows it: probed once per process, an info
 * line when auto falls back). Thread-safe.
 */
enum rb_io_loop rb_native_io_loop(const struct rb_load_opts *o);
/* Its transport's loop for results ("epoll", "io_uring"); NULL when o does not run on the native engine. */
const char *rb_engine_io_loop_name(const struct rb_load_opts *o);

/* The engine o runs on: o->engine, with AUTO resolved (native when it fits). Pure; thread-safe. */
enum rb_engine_kind rb_engine_kind(const struct rb_load_opts *o);

/* The op's name as requests and phase records show it ("GET", "PUT", "DELETE", "HEAD"). Pure. */
const char *rb_load_op_name(enum rb_load_op op);

/* True for ops that go through each object once (PUT, DELETE): an object is gone or written after one. Pure. */
bool rb_load_op_once(enum rb_load_op op);

/* False for the ops without a body either way (DELETE, HEAD): their figure is requests/s, not bytes/s. Pure. */
bool rb_load_op_moves_bytes(enum rb_load_op op);

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

/* When the last worker's loop ended (rb_clock_ns), once every one has (rb_engine_done); 0 before. Main thread. */
uint64_t rb_engine_done_ns(struct rb_engine *e);

/* Tells workers to stop issuing, abandons requests in flight, joins the threads. Idempotent. */
void rb_engine_stop(struct rb_engine *e);

/* 0, or the -errno of the first worker whose loop failed (what it measured before is kept). */
int rb_engine_status(const struct rb_engine *e);

/* Requests in flight on this rank as the workers handed over at the last rb_engine_collect. */
unsigned rb_engine_inflight(const struct rb_engine *e);

/*
 * Requests recorded since the engine started, and how many of them the
 * server answered 403 or 404, as of the last rb_engine_collect (main thread).
 */
void rb_engine_refusals(const struct rb_engine *e, uint64_t *answered, uint64_t *refused);

/* Bytes completed in each whole second since start, summed over workers; *n gets the length. */
const uint64_t *rb_engine_segments(const struct rb_engine *e, size_t *n);

/*
 * Calls fn(name, arg) for every object a put with o->track_written wrote
 * (name borrowed for the call). After rb_engine_stop. Returns 0 or fn's first non-zero.
 */
int rb_engine_each_written(const struct rb_engine *e, int (*fn)(const char *name, void *arg), void *arg);
/* Calls fn(name, arg) for every put whose outcome is unknown (rb_written_unknown). After rb_engine_stop. */
int rb_engine_each_unknown(const struct rb_engine *e, int (*fn)(const char *name, void *arg), void *arg);

/* Adds every worker's part statistics (multipart PUT, ranged GET) into into (nothing without parts). After rb_engine_stop. */
void rb_engine_part_stats(const struct rb_engine *e, struct rb_stats *into);
/* Adds the native engine's TLS handshakes of every worker into into (rb_native_tls_collect). After the phase. */
void rb_engine_tls_stats(const struct rb_engine *e, struct rb_stats *into);

/* Adds every worker's request spans (o->phases) into into: load mixed's op (enum rb_load_op) alone, or with op -1 (and
 * outside load mixed) every request's. After rb_engine_stop. */
struct rb_rphases;
void rb_engine_rphases(const struct rb_engine *e, int op, struct rb_rphases *into);
/* Offers every worker's slowest requests (o->slowest) to into. After rb_engine_stop. */
struct rb_slowheap;
void rb_engine_slowest(const struct rb_engine *e, struct rb_slowheap *into);

/*
 * After the workers stopped: the open loop's send window in ns from start,
 * to the last send plus one period or to the moment the workers were told
 * to stop while they still had sends to make (the later); 0 when none.
 */
uint64_t rb_engine_send_window_ns(const struct rb_engine *e);

/* Stops if needed and frees; NULL-safe. */
void rb_engine_free(struct rb_engine *e);

struct rb_fetcher;

/*
 * A fetcher owns one curl multi handle and o->inflight easy handles (or the
 * native engine's connections), kept from one call to the next; o->op is
 * GET, PUT (each object of its set's size) or DELETE; objects, threads and
 * limits in o are ignored. Returns 0 or -errno. One fetcher per thread;
 * free with rb_fetcher_free (NULL-safe).
 */
int rb_fetcher_new(struct rb_fetcher **f, const struct rb_load_opts *o);
/* The same, its connections on the target's endpoints from number ep0 on (modulo their count) instead of the first. */
int rb_fetcher_new_at(struct rb_fetcher **f, const struct rb_load_opts *o, size_t ep0);

/*
 * GETs (PUTs, DELETEs: the fetcher's op) the objects idx[0..n) of set (names formatted per request into the
 * fetcher's buffer; set and idx borrowed for the call) with up to inflight requests at a time and returns when
 * all have finished (or *stop became non-zero), recording each request into
 * stats (and uncorrected, which may be NULL). Returns the number of failed
 * requests (>= 0), or -errno when the engine itself failed.
 */
int rb_fetcher_get(struct rb_fetcher *f, const struct rb_objset *set, const uint32_t *idx, size_t n, struct rb_stats *stats,
                   struct rb_hist *uncorrected, const volatile int *stop);
/*
 * rb_fetcher_get of ranges: item i is bytes [off[i], off[i] + len[i]) of
 * object idx[i] (len[i] > 0), one Range GET (file://: reads at the offset)
 * each, which fails unless exactly len[i] body bytes come back (a server
 * that ignores Range, a range past the object's end); with len NULL, whole objects.
 */
int rb_fetcher_get_ranges(struct rb_fetcher *f, const struct rb_objset *set, const uint32_t *idx, const uint64_t *off,
                          const uint64_t *len, size_t n, struct rb_stats *stats, struct rb_hist *uncorrected,
                          const volatile int *stop);
/*
 * The file watchdog's slot (fwatch_int.h) that f's file system calls are
 * published in, or NULL (not file://, or no --timeout): whoever joins the
 * thread that calls rb_fetcher_get joins it with rb_fwatch_join and this slot.
 * That thread may publish its own file system calls in it between fetches.
 */
struct rb_fwatch *rb_fetcher_watch(const struct rb_fetcher *f);
/* Frees the fetcher, its handles and connections; NULL-safe. */
void rb_fetcher_free(struct rb_fetcher *f);

/*
 * The error class of a finished request: rc from libcurl, the HTTP status
 * (0 when none), whether the body differed from the payload, and whether a
 * verified GET got fewer or more body bytes than expected. Returns an
 * RB_LERR_* value, or -1 for a success. Pure; thread-safe.
 */
int rb_engine_classify(CURLcode rc, long status, bool mismatch, bool wrong_length);

#endif
