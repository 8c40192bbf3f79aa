/*
 * Request phases (--phases) and the slowest requests named (--slowest N): each request's latency cut into
 * consecutive spans that sum to it, one exact histogram per span, and a bounded min-heap of the slowest requests
 * with their names, merged over workers, ranks and hosts.
 */
#ifndef RB_RPHASE_INT_H
#define RB_RPHASE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "railbench/hist.h"

/*
 * The spans of one request, in the order they happen; each starts where the
 * one before it ended, so they sum to the request's latency. queue is from the
 * intended send to the send (0 in a closed loop). The network engines use
 * connect .. body, the file loop open .. close; the rest stay empty.
 */
enum rb_rph {
    RB_RPH_QUEUE,      /* intended send -> the request starts (open loop: a free slot) */
    RB_RPH_CONNECT,    /* -> its TCP connection is up (0 on a kept-alive one) */
    RB_RPH_TLS,        /* -> its TLS handshake is done (0 without a new TLS connection) */
    RB_RPH_SEND,       /* -> the request's last byte went out (head and body) */
    RB_RPH_FIRST_BYTE, /* -> the response's first byte came */
    RB_RPH_BODY,       /* -> the response's last byte came: the request ends */
    RB_RPH_OPEN,       /* file: -> the file is open */
    RB_RPH_FIRST_IO,   /* file: -> the first read (GET) or write (PUT) returned */
    RB_RPH_LAST_IO,    /* file: -> the last one returned */
    RB_RPH_FSYNC,      /* file: -> fsync returned (0 without --fsync) */
    RB_RPH_CLOSE,      /* file: -> close returned: the request ends */
    RB_RPH_COUNT
};
/* The spans' names in results ("queue", "connect", "tls", "send", "first_byte", "body", "open", ...). */
extern const char *const rb_rph_names[RB_RPH_COUNT + 1];

/* The marks a request takes after its start: when each span but the last ended (rb_req.ph_ns); 0 not reached. */
#define RB_RPH_MARKS 4

/* Which spans a request's marks end: the network engines', or the file loop's. */
enum rb_rph_kind { RB_RPH_NET, RB_RPH_FILE };

/* The first span after queue of each kind; its RB_RPH_MARKS + 1 spans follow in order. */
static inline enum rb_rph rb_rph_first(enum rb_rph_kind k)
{
    return k == RB_RPH_FILE ? RB_RPH_OPEN : RB_RPH_CONNECT;
}

/* The spans of kind k in the order a request meets them, queue first, into out; returns how many (RB_RPH_MARKS + 2). */
int rb_rph_spans(enum rb_rph_kind k, int out[RB_RPH_COUNT]);

/*
 * A request's spans from its clock readings: intended (due), start (sent to
 * its slot), marks[RB_RPH_MARKS] (each span's end, 0: not reached: the span
 * is empty), end. A mark before the one preceding it (a server that answered
 * before the request was all out, a redirect's second connect) is taken as
 * that one, and one after end as end: every span is >= 0 and they sum to
 * end - intended exactly. out gets RB_RPH_COUNT values (spans of the other
 * kind 0). Pure.
 */
void rb_rph_split(enum rb_rph_kind k, uint64_t intended, uint64_t start, const uint64_t marks[RB_RPH_MARKS],
                  uint64_t end, uint64_t out[RB_RPH_COUNT]);

/*
 * The latency bands of the breakdown by percentile: band 0 holds 0 ns, band
 * b >= 1 the latencies [2^(b-1), 2^b) ns; the last one everything above.
 */
#define RB_RPH_BANDS 49

/*
 * One histogram per span and one of the latencies they split (the same
 * requests), and per latency band the requests in it and the sum of each of
 * their spans: a worker's, a rank's, the run's. Plain uint64_t after kind, so
 * ranks sum the bands.
 */
struct rb_rphases {
    struct rb_hist span[RB_RPH_COUNT];
    struct rb_hist total;
    uint64_t band_count[RB_RPH_BANDS];
    uint64_t band_sum[RB_RPH_BANDS][RB_RPH_COUNT];
    uint64_t kind;                 /* enum rb_rph_kind */
    /*
     * A recording worker's (raw) span histograms hold only buckets, min and max of the spans above 0 ns: the
     * spans of 0 ns are counted in zeros, and rb_rph_merge adds those and the count and sum (from the buckets and
     * band_sum) into its dst. Read the span[] of a merged rb_rphases (raw 0) only.
     */
    uint64_t zeros[RB_RPH_COUNT];
    uint64_t raw;
};
/* The band of latency v. Pure. */
static inline unsigned rb_rph_band(uint64_t v)
{
    unsigned b = v ? 64u - (unsigned)__builtin_clzll(v) : 0;
    return b < RB_RPH_BANDS ? b : RB_RPH_BANDS - 1;
}
/* Empties p (kind kept). */
void rb_rph_reset(struct rb_rphases *p);
/* dst += src; dst is then whole (raw 0: every span's count, sum and zeros in its histogram), even when it recorded. */
void rb_rph_merge(struct rb_rphases *dst, const struct rb_rphases *src);

/* Records one request's spans (from rb_rph_split) and their sum into p. No allocation. */
void rb_rph_record(struct rb_rphases *p, const uint64_t spans[RB_RPH_COUNT]);


/*
 * {"kind", "requests", "total_ns": summary, "spans": {name: summary, ...},
 * "by_percentile": [...]} of p (only its kind's spans, queue first), with
 * full_hist each histogram as well ("hist"). by_percentile: for p50, p90,
 * p99, p99.9 of the latency, the band that percentile falls in ([2^(b-1),
 * 2^b) ns), its requests and their mean span each. NULL on ENOMEM.
 */
cJSON *rb_rph_json(const struct rb_rphases *p, bool full_hist);

/* ---- the slowest requests ---- */

#define RB_SLOW_MAX 1000      /* --slowest's most */
#define RB_SLOW_DEFAULT 10
#define RB_SLOW_HOST_MAX 64

/* One kept request; plain bytes (no pointers), so ranks gather them as they are. */
struct rb_slow {
    uint64_t lat_ns;               /* its latency: what ranks it */
    uint64_t end_wall_ns;          /* when it ended, wall clock (ns since the epoch) */
    uint64_t span_ns[RB_RPH_COUNT]; /* its spans (with --phases), else all 0 */
    uint64_t seq;                  /* its worker's request number */
    int32_t rank;
    uint32_t thread, slot;         /* worker and connection slot on its rank */
    uint32_t ep;                   /* the endpoint's index in the target */
    int32_t status;                /* HTTP status (file: 200), 0 none */
    int32_t cls;                   /* error class (rb_load_err), -1 success */
    int32_t op;                    /* enum rb_load_op */
    uint8_t has_spans, kind;       /* span_ns measured; enum rb_rph_kind */
    char host[RB_SLOW_HOST_MAX];   /* the host its rank ran on (filled at the merge) */
    char name[1025];               /* the object's name */
};

/*
 * The N slowest seen, as a min-heap on lat_ns (v[0] the fastest kept): a
 * request enters when fewer than cap are kept or when it is slower than
 * v[0], which it replaces. cap 0: keeps nothing. Memory: cap entries, made at init.
 */
struct rb_slowheap {
    struct rb_slow *v;
    size_t n, cap;
};

/* Sets h up for cap entries (at most RB_SLOW_MAX). Returns 0 or -ENOMEM. */
int rb_slow_init(struct rb_slowheap *h, size_t cap);
/* Frees h's entries; safe on a zeroed heap. */
void rb_slow_free(struct rb_slowheap *h);

/* Whether a request of lat_ns would enter h: the one test a request pays. */
static inline bool rb_slow_wants(const struct rb_slowheap *h, uint64_t lat_ns)
{
    return h->cap && (h->n < h->cap || lat_ns > h->v[0].lat_ns);
}

/* Offers e to h: kept when it is among the cap slowest (e copied). */
void rb_slow_offer(struct rb_slowheap *h, const struct rb_slow *e);
/* Offers every entry of src (n of them) to dst. */
void rb_slow_merge(struct rb_slowheap *dst, const struct rb_slow *src, size_t n);
/* Sorts h's entries slowest first (h is no longer a heap: for output only). Ties by rank, thread, seq. */
void rb_slow_sort(struct rb_slowheap *h);

/* The request's id: "r<rank>-c<connection>-<seq>", connection thread * inflight + slot. Returns snprintf's. */
int rb_slow_id(const struct rb_slow *e, unsigned inflight, char *buf, size_t len);

#endif
