/* Engine internals: requests and op rows (transfer.c), workers (worker.c, worker_turn.c), pickers, API (engine.c). */
#ifndef RB_WORKER_INT_H
#define RB_WORKER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "engine_int.h"
#include "rphase_int.h"
#include "tarshard_int.h"
#include "railbench/buf.h"
#include "railbench/clock.h"
#include "railbench/perm.h"

/*
 * Thread-safety: a worker and everything it points to belong to its own
 * thread while it runs; the main thread touches only the mailbox (box,
 * unc_box, box_inflight, under mu) and the atomics (acked, finished). The
 * op rows are const and shared.
 */

/*
 * Requests per curl multi handle. libcurl 7.88 looks for a reusable
 * connection by walking every connection it holds to the host, so one
 * multi handle with 1,024 connections spends its time there; a thread
 * spreads its slots over several multi handles that share one epoll set.
 */
#define RB_SHARD_SLOTS 32
/* --log-requests lines are buffered per worker and written whole (O_APPEND keeps lines intact across ranks). */
#define RB_LOG_BUF_BYTES (64u << 10)
/* Events taken per epoll wait. */
#define RB_EPOLL_BATCH 256
/* The epoll tag of a worker's wake-up eventfd. */
#define RB_EV_WAKE UINT64_MAX
/* Room for an ETag header's value: a quoted MD5 is 34 bytes. */
#define RB_ETAG_MAX 80

struct rb_worker;
struct rb_req;

/*
 * What differs between request kinds, as one const row per op chosen once
 * per worker (rb_xfer_op_for): the request loop calls through it and never
 * asks which op it runs. Delete, HEAD, list and multipart become more rows.
 */
struct rb_xfer_op {
    const char *name;                                  /* "GET", "PUT": logs and --log-requests */
    /* Sets what every request of this op needs on a slot's fresh easy handle (upload callbacks, headers). */
    int (*slot_setup)(struct rb_req *r);
    /* Prepares r for one request of object name of size bytes (0 unknown): payload key, range, body size. */
    void (*prepare)(struct rb_worker *w, struct rb_req *r, const char *name, uint64_t size);
    /*
     * The time to first byte is the first response byte's (the final status
     * line's) rather than libcurl's STARTTRANSFER, which for an upload is
     * when the body starts going out, not a first byte of anything.
     */
    bool ttfb_from_response;
    /* The bytes a successful request counts: received for GET, sent for PUT. */
    uint64_t (*bytes)(const struct rb_req *r);
    /* No body either way (DELETE, HEAD): the 1-second segments count requests, not bytes. */
    bool no_body;
};

/* The row of op; NULL for an op without one. Pure. */
const struct rb_xfer_op *rb_xfer_op_for(enum rb_load_op op);

/* ops_meta.c: requests without a body either way (DELETE, HEAD). */
extern const struct rb_xfer_op rb_xfer_delete_op, rb_xfer_head_op;

/*
 * A worker's object picker: which of the rank's objects comes next, by op
 * and pattern, chosen once at rb_picker_init (PUT: its slice once in order;
 * GET random: any of the rank's objects; sequential: its slice over and
 * over; epoch: its slice in a fresh seeded permutation per epoch). The slice
 * (j % threads == thread) and the permutation are computed per index: O(1)
 * memory whatever the number of objects.
 */
struct rb_picker {
    bool (*next)(struct rb_picker *p, size_t *idx);
    uint64_t thread, threads;   /* this thread's share of the rank's objects: j % threads == thread */
    uint64_t nslice, pos, nobjects;
    uint64_t epoch, epochs, seed, salt;
    struct rb_perm perm;        /* epoch: this epoch's permutation of the slice */
    uint64_t rng;               /* xorshift64* state; random GET ranges draw from it too */
};

/*
 * Sets p up for thread of threads over o->objects by o->op and o->pattern
 * (o->seed, o->rank and o->epochs seed and limit it); leaves p->rng alone.
 * Allocates nothing. Returns 0, or -EINVAL for a bad thread or more than
 * 2^62 objects. rb_picker_free is kept for symmetry (NULL-safe). One thread.
 */
int rb_picker_init(struct rb_picker *p, const struct rb_load_opts *o, unsigned thread, unsigned threads);
/* Resets p; NULL-safe, idempotent. */
void rb_picker_free(struct rb_picker *p);

/* The next object's index into the rank's objects; false when the picker has none left. */
static inline bool rb_picker_next(struct rb_picker *p, size_t *idx)
{
    return p->next(p, idx);
}

/* A uniform draw in [0, n) from the xorshift64* state x (0 when n is 0). */
uint64_t rb_picker_rand_below(uint64_t *x, uint64_t n);

/* One curl multi handle of a worker, with its own connection pool and timer. */
struct rb_shard {
    CURLM *multi;
    struct rb_worker *w;
    unsigned idx;
    uint64_t timer_ns;          /* when curl wants its timeout action; UINT64_MAX none */
};

/* One request slot: an easy handle reused for request after request, so its connection stays alive. */
struct rb_req {
    CURL *easy;
    struct rb_worker *w;
    struct rb_shard *sh;
    struct curl_slist *hdrs;
    size_t ep;                  /* endpoint of this slot (round-robin per connection) */
    const char *name;           /* name_buf while a request is in flight */
    uint64_t key;               /* payload key of the object */
    uint64_t off;               /* object offset of the next body byte */
    uint64_t expect_len;        /* body bytes a verified GET must return; 0 unknown */
    uint64_t size;              /* object size when known, else 0 */
    bool ranged;                /* a Range was asked for */
    bool exact_len;             /* a fetcher's range: any other length (a server ignoring Range) fails it */
    bool link;                  /* file://: a symbolic link met at the name (class symlink; include/railbench/beneath.h) */
    uint64_t put_size, put_pos;
    uint64_t intended_ns, start_ns, start_wall_ns;
    uint64_t response_ns;       /* when the last final (non-1xx) status line arrived; 0 none */
    /* --phases: when each span after the start ended (rphase_int.h: connect, tls, send, first byte; file: open,
     * first I/O (response_ns), last I/O, fsync; before start_ns: not reached), taken by the engine when ph_marked; the
     * last span ends at the completion. */
    uint64_t ph_ns[RB_RPH_MARKS];
    bool ph_marked;
    uint64_t body;              /* body bytes received */
    bool busy, mismatch, status_known, err_status;
    bool resent;                /* sent again after its connection closed unanswered: the server may hold the first */
    int cache;                  /* RB_LX_CACHE_* seen in this response, or RB_LX_CACHE_ABSENT */
    unsigned cache_pos;         /* position in the cache header list of the name that set cache; UINT_MAX none */
    struct rb_buf errbody;      /* start of an error response's body, for one log line */
    unsigned slot;              /* this slot's index (w->reqs, the native engine's connections, the file loop's slots) */
    char etag[RB_ETAG_MAX];     /* a multipart part's ETag header ("" none), kept by either engine */
    /* The two big buffers last: the fields each request touches then share a few cache lines. */
    char name_buf[RB_OBJSET_NAME_BYTES]; /* the object's name, kept for the completion's log lines */
    char ebuf[CURL_ERROR_SIZE];
};

struct rb_native;
struct rb_written;
struct rb_tars;
struct rb_file_loop;
struct rb_fwatch;

/*
 * Who issues and accounts a worker's requests: one const row per feature,
 * chosen once at init (worker.c) and never asked per request. The plain row
 * (worker.c: the op row through the picker), a put that notes what it wrote
 * (rb_written_driver, tracked.c), S3 multipart PUT (rb_mp_driver,
 * multipart.c), GET in ranged parts (rb_rg_driver, ranged.c), load mixed
 * (rb_mix_driver, mixed.c). Each feature keeps its state in a struct of its
 * own, owned by its file behind w->drv_state (what a put wrote is
 * written.c's, w->written: several drivers and the file loop note it).
 */
struct rb_worker_driver {
    const char *name;
    /* Sets up the feature's state on w; NULL: it has none. Returns 0 or -errno. Before the worker's thread starts. */
    int (*init)(struct rb_worker *w);
    /* Issues requests on w's free slots; sets w->exhausted once it has nothing more to send. Returns 0 or -errno. */
    int (*refill)(struct rb_worker *w);
    /* Accounts the finished request on slot r and frees the slot. */
    void (*complete)(struct rb_worker *w, struct rb_req *r, CURLcode rc);
    /*
     * The native engine's completion (its slot already freed): rc as libcurl
     * would say it, the status (0 none), times from the send (ttfb 0: no
     * byte came), redirects followed, now_ns. NULL: the driver does not run
     * on the native engine (rb_engine_native_fits).
     */
    void (*done)(struct rb_worker *w, struct rb_req *r, CURLcode rc, long status, uint64_t ttfb_ns, uint64_t total_ns,
                 long redirects, uint64_t now_ns);
    /* After the loop: what is still under way is counted abandoned (or aborted). NULL: nothing. */
    void (*finish)(struct rb_worker *w, uint64_t now_ns);
    /* At each handover, before the stats go to the mailbox. NULL: nothing. */
    void (*fold)(struct rb_worker *w);
    /* Frees the feature's state; safe on a partly set-up one. NULL: nothing to free. */
    void (*free)(struct rb_worker *w);
};

/*
 * How a worker's requests travel: libcurl's multi handles (worker.c), the
 * native engine on epoll or io_uring (native.c), system calls on a local
 * directory (loader/file/file_loop.c). One const row per transport, each
 * registered by RB_TRANSPORT in its own file (a linker section, as the
 * protocols): the engine names none of them, rb_transport_for chooses the
 * one that fits once at worker start, and the worker calls through it.
 */
struct rb_transport {
    const char *name;           /* "curl", "native", "file": messages */
    const char *io_loop;        /* the loop a report names ("epoll", "io_uring"); NULL: none (curl, file) */
    /* System calls on files, not HTTP: --phases spans of a file's I/O, a read answers 200 whatever its length,
     * nothing is sent again. */
    bool files;
    /* It issues and accounts its requests itself (file: a load mixed sets w->drv): the worker picks no driver. */
    bool drives;
    /* Whether it runs o's requests; for a fetcher's worker (no engine) with fetcher. Pure but for a probe. */
    bool (*fits)(const struct rb_load_opts *o, bool fetcher);
    /* Sets up its state on w (ep0: the endpoint of slot 0) and fills w->free_slots. Returns 0 or -errno. */
    int (*init)(struct rb_worker *w, size_t ep0);
    /* The request loop (rb_worker_run's contract). Returns 0 or -errno. */
    int (*run)(struct rb_worker *w, const atomic_bool *stop, const volatile int *stop2);
    /* Frees what init set up; safe after a failed init. */
    void (*free)(struct rb_worker *w);
};

/* A transport's registration, in its own file: RB_TRANSPORT(file) = {.name = "file", ...}. */
#define RB_TRANSPORT(name)                                                                         \
    static const struct rb_transport rb_transport_##name;                                          \
    static const struct rb_transport *const rb_transport_ptr_##name                                \
        __attribute__((used, section("rb_transports"), aligned(sizeof(void *)))) = &rb_transport_##name; \
    static const struct rb_transport rb_transport_##name

/* The transport that runs o's requests (fetcher: for a fetcher's worker); NULL when none linked in fits. */
const struct rb_transport *rb_transport_for(const struct rb_load_opts *o, bool fetcher);

/* --log-requests: a worker's lines, buffered and written whole (transfer.c writes them, rb_worker_flush_log). */
struct rb_reqlog {
    char *buf;                  /* RB_LOG_BUF_BYTES, or NULL: no log */
    size_t len;
};

/* The open loop (o->rate_per_s, set up by engine.c, run by rb_worker_refill): period_ns 0 = closed loop. */
struct rb_open_loop {
    uint64_t period_ns;         /* spacing of this worker's sends */
    uint64_t next_ns;           /* the next intended send time */
};

/*
 * A fetcher's objects (rb_fetcher_get, engine.c): idx[0..n) of set, in order,
 * pos the next; with len (rb_fetcher_get_ranges) item i is the range
 * [off[i], off[i] + len[i]) of its object, which must come back exactly.
 */
struct rb_fetch_list {
    const struct rb_objset *set;
    const uint32_t *idx;
    const uint64_t *off, *len;
    size_t n, pos;
};

struct rb_worker {
    struct rb_engine *e;
    const struct rb_transport *tp; /* how its requests travel (chosen at init) */
    struct rb_native *nat;      /* the native transport's connections, or NULL */
    struct rb_file_loop *file;  /* the file loop's slots and I/O queue (loader/file), or NULL */
    struct rb_fwatch *watch;    /* the file loop's watchdog slot (fwatch_int.h), or NULL */
    bool abandoned;             /* stuck in a file system call past --timeout: not joined, not freed */
    const struct rb_worker_driver *drv; /* who issues and accounts the requests (chosen at init) */
    /* Its driver's own state (struct rb_mp, rb_rg, rb_mixer: the driver's file alone knows it), set by the driver's
     * init and freed by its free; NULL: none. */
    void *drv_state;
    const uint8_t *mix_slot_op; /* load mixed: each slot's op (enum rb_load_op, mixed.c's), else NULL: o->op */
    uint64_t part_off, part_len; /* ranged.c: the Range of the GET it issues next (len 0: none; rb_xfer_get_range) */
    struct rb_written *written; /* o->track_written: what this worker wrote, for cleanup (written.c); else NULL */
    struct rb_tars *tars;       /* o->tar_samples: GET bodies read as tar archives, a record per member (tarsamples.c) */
    const struct rb_load_opts *o;
    unsigned id;
    pthread_t th;
    bool started;
    struct rb_shard *shards;
    unsigned nshards;
    int epfd, evfd;             /* epoll set of curl's sockets, and an eventfd to wake the loop (ticks, stop) */
    struct rb_req *reqs;
    unsigned nreq, nfree, *free_slots;

    /* What each request does and where the next object comes from: both chosen once, at worker start. */
    const struct rb_xfer_op *op;
    bool (*next)(struct rb_worker *w, const char **name, uint64_t *size);
    struct rb_picker pick;      /* engine workers: the rank's objects by op and pattern */
    uint64_t cur_idx;           /* the index of the object next_picked gave last */
    char name_buf[RB_OBJSET_NAME_BYTES]; /* the next object's name, formatted from the set (no allocation) */
    struct rb_fetch_list fetch; /* a fetcher's objects (next_listed) */
    uint64_t issued, count_limit, bytes_done, bytes_limit;
    uint64_t last_issue_ns;     /* when the last request was sent */
    uint64_t stop_issue_ns;     /* when it was told to stop issuing while it still had requests to send; 0 none */
    bool exhausted;

    struct rb_open_loop open;   /* open loop: spacing and next intended send time */

    /* Private stats; handed to the mailbox under mu when the tick sequence moves. */
    struct rb_stats *local;
    struct rb_hist *unc_local;
    uint64_t *seg;
    size_t nseg;
    pthread_mutex_t mu;
    struct rb_stats *box;
    struct rb_hist *unc_box;
    unsigned box_inflight;      /* requests in flight at the last handover (under mu) */
    /* Requests recorded since the start, and those answered 403 or 404: the mailbox's copies under mu. */
    uint64_t answered, refused, box_answered, box_refused;
    atomic_uint acked;
    atomic_bool finished;
    uint64_t done_ns;           /* when the loop ended (rb_clock_ns); written before finished is set */
    int failed;                 /* -errno when the loop itself failed */
    bool failed_logged;         /* the loop said why in its own `error:` line (the engine adds none) */
    atomic_flag *logged;        /* per error class: already logged once (engine- or fetcher-wide) */

    struct rb_reqlog log;       /* --log-requests */
    struct rb_rphases *rph;     /* o->phases: this worker's request spans (rphase_int.h; load mixed: one per op), or NULL */
    struct rb_slowheap slow;    /* o->slowest: its slowest requests */
};

/*
 * load mixed: the op of slot's request (w->mix_slot_op set). Read from the array
 * mixed.c hands the worker, so the layers below the drivers (request phases)
 * need not call into mixed.c.
 */
static inline enum rb_load_op rb_mix_slot_op(const struct rb_worker *w, unsigned slot)
{
    return (enum rb_load_op)w->mix_slot_op[slot];
}

struct rb_engine {
    struct rb_load_opts o;
    unsigned inflight;          /* requests in flight at the last collect, over all workers */
    uint64_t answered, refused; /* at the last collect, over all workers: see rb_engine_refusals */
    struct rb_worker *w;
    unsigned nw;
    atomic_bool stop;
    atomic_uint seq;
    atomic_uint nfinished;
    atomic_flag logged[RB_LERR_COUNT];
    uint64_t t0_ns;
    bool started, joined;
    uint64_t *segments;
    size_t nsegments;
};

/* ---- transfer.c: one request slot and one request ---- */

/* Creates r's easy handle with the options every request of w needs, endpoint ep. Returns 0 or -errno. */
int rb_xfer_slot_init(struct rb_worker *w, struct rb_req *r, size_t ep);
/* Frees r's handle and buffers; safe on a zeroed slot. */
void rb_xfer_slot_free(struct rb_req *r);
/* Starts a request for name on a free slot; intended_ns 0 = closed loop (due when sent). Returns 0 or -errno. */
int rb_xfer_issue(struct rb_worker *w, const char *name, uint64_t size, uint64_t intended_ns);
/*
 * A GET's part of object name of size bytes, the same on either engine: the
 * whole object (*len 0), a ranged read's part (w->part_len), --range
 * OFF:LEN, or a random --random-range LEN drawn from w's picker. Readies r (payload key, offset, ranged, the length
 * a verified GET must get). Worker thread.
 */
void rb_xfer_get_range(struct rb_worker *w, struct rb_req *r, const char *name, uint64_t size, uint64_t *off, uint64_t *len);
/*
 * Slot i's request on either engine (NULL when it has none in flight); with
 * stop, the request is stopped without being accounted and the slot freed
 * (worker_slot.c).
 */
struct rb_req *rb_worker_slot_busy(struct rb_worker *w, unsigned i, bool stop);
/* libcurl: slot r's request ended: its status (0 none) and total time read, its handle out of the multi, the slot freed. */
void rb_xfer_release(struct rb_worker *w, struct rb_req *r, long *status, uint64_t *total_ns);
/* Records a finished request (class, bytes, latencies, --log-requests) and frees its slot. */
void rb_xfer_complete(struct rb_worker *w, struct rb_req *r, CURLcode rc);
/*
 * Records a finished request into w's private stats whichever engine ran it:
 * rc as libcurl would have said it (the native engine maps its failures onto
 * the same codes, so both classify alike), the HTTP status (0 none), times
 * from the send, redirects followed, and now_ns (the completion time, for the
 * per-second byte counters). The caller has freed the slot. Worker thread only.
 */
void rb_xfer_record(struct rb_worker *w, struct rb_req *r, CURLcode rc, long status, uint64_t ttfb_ns,
                    uint64_t total_ns, long redirects, uint64_t now_ns);
/* True when the header line p[0..len) is a status line ("HTTP/..."); a final (non-1xx) one sets r->response_ns. */
bool rb_xfer_status_line(struct rb_req *r, const char *p, size_t len);
/* Counts the response header line p[0..len) ("Name: value") against o->cache_header into r->cache. */
void rb_xfer_cache_header(struct rb_req *r, const char *p, size_t len);
/*
 * Counts one request of class abandoned at now_ns: r still in flight (its
 * handle is removed and its slot freed), or, with r NULL, an open-loop send
 * of name due at intended_ns that never found a free slot. Its latency from
 * the intended send goes to --log-requests; it moved no bytes. Worker thread.
 */
void rb_xfer_abandon(struct rb_worker *w, struct rb_req *r, const char *name, uint64_t intended_ns, uint64_t now_ns);

/* ---- rphase.c: a finished request's spans and its place among the slowest ---- */

/*
 * --phases: mark i of r's request (rb_req.ph_ns) is now; nothing without
 * --phases. A mark left from an earlier request on the slot is before this
 * one's start, so it counts as not reached: nothing is cleared per request.
 */
static inline void rb_rph_mark(const struct rb_worker *w, struct rb_req *r, int i)
{
    if (w->rph)
        r->ph_ns[i] = rb_clock_ns();
}

/*
 * r's request ended at start_ns + total_ns with latency lat_ns (from its
 * intended send), class cls (-1 success), status: its spans into w->rph (a
 * success whose engine took its marks) and it offered to w->slow. Worker thread.
 */
void rb_rph_note(struct rb_worker *w, const struct rb_req *r, int cls, long status, uint64_t total_ns, uint64_t lat_ns);
/* Sets w's spans and heap up for o->phases and o->slowest. Returns 0 or -ENOMEM. Before the worker's thread starts. */
int rb_rph_worker_init(struct rb_worker *w);
/* Frees them; safe on a partly set-up worker. */
void rb_rph_worker_free(struct rb_worker *w);

/* ---- worker.c: the loop ---- */

/* Sets up w's multi handles, slots and buffers for o (objects and picker: the caller's). Returns 0 or -errno. */
int rb_worker_init(struct rb_worker *w, const struct rb_load_opts *o, unsigned id, size_t ep0);
/* Frees what rb_worker_init and the caller set up; safe on a partly set-up worker. */
void rb_worker_free(struct rb_worker *w);
/* The request loop until objects or limits run out or a stop flag is set (either may be NULL). Returns 0 or -errno. */
int rb_worker_run(struct rb_worker *w, const atomic_bool *stop, const volatile int *stop2);
/* The thread function of an engine worker. */
void *rb_worker_main(void *arg);

/* ---- worker_turn.c: what every request loop does each turn (libcurl's, native, file) ---- */

/* The next object for w (name borrowed until the next call); false when its limits or objects are used up. */
bool rb_worker_next(struct rb_worker *w, const char **name, uint64_t *size);
/* Hands w's private stats to its mailbox (under mu); once per tick, never per request. Worker thread. */
void rb_worker_handover(struct rb_worker *w);
/* Waits for events on w's epoll set at most wait_ns (ns resolution where the kernel has epoll_pwait2); as epoll_wait. */
struct epoll_event;
int rb_worker_wait(struct rb_worker *w, struct epoll_event *evs, uint64_t wait_ns);
/*
 * Issues requests on w's free slots through issue (the engine's) while the
 * closed loop has free slots or the open loop's next send is due, at most
 * w->nreq in one call (a request that ends inside issue, as a file's stat
 * does, frees its slot at once: the caller's loop still looks at its stop
 * flags and ticks between rounds); sets w->exhausted when objects or limits
 * run out. Returns 0 or issue's -errno.
 */
int rb_worker_refill(struct rb_worker *w, int (*issue)(struct rb_worker *w, const char *name, uint64_t size,
                                                  uint64_t intended_ns));
/*
 * The refill of a driver that cuts objects into several requests (multipart.c,
 * ranged.c): on each free slot, the driver's pending request of an object under
 * way first (pending returns 0 when it sent one, 1 when it has none, or -errno),
 * else the next object through object; *no_more is set once the objects ran
 * out (or w->exhausted was set: told to stop), and w->exhausted once no object
 * is under_way either. Returns 0 or -errno. Worker thread.
 */
int rb_worker_refill_split(struct rb_worker *w, bool *no_more, int (*pending)(struct rb_worker *w),
                           int (*object)(struct rb_worker *w, const char *name, uint64_t size),
                           bool (*under_way)(const struct rb_worker *w));
/* Hands w's stats over when the engine's tick sequence moved since w last did (engine workers; no-op for a fetcher). */
void rb_worker_tick(struct rb_worker *w);
/*
 * Told to stop: issues nothing more, counts an open loop's due but unsent
 * requests as abandoned, and returns until when requests in flight may
 * still finish (their --timeout from now). Worker thread; either engine.
 */
uint64_t rb_worker_stop_issuing(struct rb_worker *w);

/*
 * The stop rule of both request loops (curl and native): once stop or stop2
 * (either may be NULL) is set, issue nothing more (rb_worker_stop_issuing)
 * and let what is in flight finish until *drain_until (0 before). True when
 * that time has passed and the loop should leave.
 */
bool rb_worker_drained(struct rb_worker *w, const atomic_bool *stop, const volatile int *stop2, uint64_t *drain_until);
/* Consumes a wake-up on w's eventfd (the loop saw RB_EV_WAKE). */
void rb_worker_eat_wake(struct rb_worker *w);
/* Wakes w's loop (a tick or a stop); any thread. */
void rb_worker_wake(struct rb_worker *w);
/* Writes out w's buffered --log-requests lines (transfer.c). */
void rb_worker_flush_log(struct rb_worker *w);

/* ---- tarsamples.c: GET bodies read as tar shards (o->tar_samples) ---- */

/* Sets up w->tars for o->tar_samples (a GET). Returns 0 or -ENOMEM. Before the worker's thread starts. */
int rb_tar_new(struct rb_worker *w);
/* Frees w->tars; safe when there is none. */
void rb_tar_free(struct rb_worker *w);
/* n more body bytes of r (before r->body counts them): its members completed in them go to w->tars. Any engine. */
void rb_tar_body(struct rb_req *r, const void *p, size_t n);
/* A GET of r that succeeded: a body that was not one whole archive is a sample error and stops w's engine. */
void rb_tar_request_end(struct rb_worker *w, struct rb_req *r);
/* Adds w's per-sample statistics into into (nothing without o->tar_samples). After the worker's thread joined. */
void rb_tar_collect_samples(const struct rb_worker *w, struct rb_stats *into);

/* ---- tracked.c: the driver of a put that notes each object it wrote ---- */

/* The plain op row's requests, a success noted (rb_written_slot_stored). */
extern const struct rb_worker_driver rb_written_driver;

/* ---- written.c: which objects a put wrote (o->track_written), what cleanup deletes ---- */

/* Sets up w->written for o->track_written. Returns 0 or -ENOMEM. Before the worker's thread starts. */
int rb_written_new(struct rb_worker *w);
/* Frees w->written; safe when there is none. */
void rb_written_free(struct rb_worker *w);
/* Notes that w wrote object idx of its set (o->track_written); a failed allocation stops tracking with a warning. */
void rb_worker_wrote(struct rb_worker *w, uint64_t idx);
/* Slot's put in flight writes object idx (rb_written_driver). */
void rb_written_slot_put(struct rb_worker *w, unsigned slot, uint64_t idx);
/* Slot's put succeeded: its object (rb_written_slot_put) is noted written. */
void rb_written_slot_stored(struct rb_worker *w, unsigned slot);
/*
 * Notes a put whose outcome is unknown (o->track_written): it timed out or its connection was reset after it was
 * sent, or it was in flight when the loop ended; the server may have stored it. On the file loop: an unfinished file
 * it could not remove (the file system went away).
 */
void rb_written_unknown(struct rb_worker *w, const char *name);
/* Calls fn(name, arg) for every put w noted with rb_written_unknown. Returns 0 or fn's first non-zero. */
int rb_written_each_unknown(const struct rb_worker *w, int (*fn)(const char *name, void *arg), void *arg);
/* Calls fn(name, arg) for every object w noted written (names of set, formatted into buf). Returns 0 or fn's first non-zero. */
int rb_written_each(const struct rb_worker *w, const struct rb_objset *set, char *buf,
                    int (*fn)(const char *name, void *arg), void *arg);

/* ---- native.c: plain http:// GET and PUT on our own connections (see native.c) ---- */

/* Sets up w's native connections (ep0: the endpoint of slot 0, as the curl slots). Returns 0 or -errno. */
int rb_native_new(struct rb_worker *w, size_t ep0);
/* Closes w's native connections and frees them; safe when there are none. */
void rb_native_free(struct rb_worker *w);
/* The native request loop: what rb_worker_run does, on w's own sockets. Returns 0 or -errno. */
int rb_native_run(struct rb_worker *w, const atomic_bool *stop, const volatile int *stop2);

/*
 * One request a driver sends on the native engine (multipart.c, listings):
 * method on name?query (or on path, "/PATH?QUERY" as sent, when not NULL),
 * a body of body_len bytes (sends_body: from body_mem, or the payload of key
 * from body_off), one more header line (header, without its CRLF, or NULL),
 * the response body kept in r->errbody up to its limit whatever its status
 * (keep_body), the ETag header in r->etag.
 */
struct rb_nreq {
    const char *method, *name, *query; /* query without its '?', or NULL */
    const char *path, *header;
    bool sends_body, keep_body;
    uint64_t key, body_off, body_len;
    const char *body_mem;
};
/*
 * Sends q on the free slot w->free_slots[w->nfree - 1] (taken); its end
 * comes through w->drv->done, maybe before this returns (a failed connect).
 * Returns 0, or -ENAMETOOLONG / -ENOSPC (the slot stays free).
 */
int rb_native_send(struct rb_worker *w, const struct rb_nreq *q);
/*
 * Adds w's TLS handshakes into s (native engine, an https:// endpoint):
 * ops the handshakes, lat their times from the connect, extra[RB_TLS_RESUMED]
 * and extra[RB_TLS_KTLS]. No-op without TLS. After the worker's thread joined.
 */
void rb_native_tls_collect(const struct rb_worker *w, struct rb_stats *s);
/* Starts the op's request for name on a free slot (as rb_xfer_issue does on libcurl); its end comes through
 * w->drv->done, maybe before this returns. Returns 0 or -errno (the slot stays free). Native engine. */
int rb_native_issue(struct rb_worker *w, const char *name, uint64_t size, uint64_t intended_ns);
/*
 * load mixed on the native engine (rb_mix_issue_fn): op's request for name
 * (size bytes for a PUT) on the last free slot, closed loop; its end comes
 * through w->drv->done. Returns 0 or -errno (the slot stays free).
 */
int rb_native_issue_op(struct rb_worker *w, enum rb_load_op op, const char *name, uint64_t size);
/* Slot i's request (native engine). */
struct rb_req *rb_native_req(struct rb_worker *w, unsigned i);
/* True while slot i has a request in flight (native engine). */
bool rb_native_busy(const struct rb_worker *w, unsigned i);
/* Stops slot i's request without accounting it: its connection closed, the slot freed (native engine). */
void rb_native_drop(struct rb_worker *w, unsigned i);
/* Runs the native loop, sending nothing new, until no request is in flight or until_ns passes. Returns 0 or -errno. */
int rb_native_pump(struct rb_worker *w, uint64_t until_ns);

#endif
