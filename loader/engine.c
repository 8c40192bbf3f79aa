/* Per-thread libcurl multi loops (closed or open loop) that hand their stats to the main thread once per tick. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "engine_int.h"
#include "payload_int.h"
#include "railbench/buf.h"
#include "railbench/clock.h"
#include "railbench/log.h"

#define LOG_BUF_BYTES (64u << 10)
#define ERRBODY_BYTES 2048
#define IDLE_POLL_MS 100
#define EPOLL_BATCH 256
/*
 * Requests per curl multi handle. libcurl 7.88 looks for a reusable
 * connection by walking every connection it holds to the host, so one
 * multi handle with 1,024 connections spends its time there; a thread
 * spreads its slots over several multi handles that share one epoll set.
 */
#define SHARD_SLOTS 32
#define EV_WAKE UINT64_MAX
/* How long collect() waits for a worker to notice a tick before taking what its mailbox has. */
#define HANDOVER_WAIT_NS (200 * RB_NS_PER_MS)

const char *const rb_load_err_names[RB_LERR_COUNT + 1] = {
    "connect", "timeout", "reset", "http_4xx", "http_5xx", "short_read", "checksum", "too_many_redirects",
    "other", NULL};
const char *const rb_load_extra_names[RB_LX_COUNT + 1] = {"redirects", "cache_hit", "cache_miss",
                                                          "cache_other", "cache_absent", NULL};

struct worker;

/* One curl multi handle of a worker, with its own connection pool and timer. */
struct shard {
    CURLM *multi;
    struct worker *w;
    unsigned idx;
    uint64_t timer_ns;          /* when curl wants its timeout action; UINT64_MAX none */
};

/* One request slot: an easy handle reused for request after request, so its connection stays alive. */
struct req {
    CURL *easy;
    struct worker *w;
    struct shard *sh;
    struct curl_slist *hdrs;
    size_t ep;                  /* endpoint of this slot (round-robin per connection) */
    const char *name;
    uint64_t key;               /* payload key of the object */
    uint64_t off;               /* object offset of the next body byte */
    uint64_t expect_len;        /* body bytes a verified GET must return; 0 unknown */
    uint64_t size;              /* object size when known, else 0 */
    bool ranged;                /* a Range was asked for */
    uint64_t put_size, put_pos;
    uint64_t intended_ns, start_ns, start_wall_ns;
    uint64_t body;              /* body bytes received */
    bool busy, mismatch, status_known, err_status;
    int cache;                  /* RB_LX_CACHE_* seen in this response, or RB_LX_CACHE_ABSENT */
    unsigned cache_pos;         /* position in the cache header list of the name that set cache; UINT_MAX none */
    struct rb_buf errbody;      /* start of an error response's body, for one log line */
    char ebuf[CURL_ERROR_SIZE];
};

struct worker {
    struct rb_engine *e;
    const struct rb_load_opts *o;
    unsigned id;
    pthread_t th;
    bool started;
    struct shard *shards;
    unsigned nshards;
    int epfd, evfd;             /* epoll set of curl's sockets, and an eventfd to wake the loop (ticks, stop) */
    struct req *reqs;
    unsigned nreq, nfree, *free_slots;

    /* Where the next object comes from. */
    uint32_t *slice;            /* this thread's share of the rank's objects */
    size_t nslice, pos;
    uint64_t epoch, rng;
    uint64_t issued, count_limit, bytes_done, bytes_limit;
    bool exhausted;
    const char *const *fetch_names; /* fetcher mode: names to GET, in order */
    size_t fetch_n;

    uint64_t period_ns, next_ns;    /* open loop: spacing and next intended send time */

    /* Private stats; handed to the mailbox under mu when the tick sequence moves. */
    struct rb_stats *local;
    struct rb_hist *unc_local;
    uint64_t *seg;
    size_t nseg;
    pthread_mutex_t mu;
    struct rb_stats *box;
    struct rb_hist *unc_box;
    unsigned box_inflight;      /* requests in flight at the last handover (under mu) */
    atomic_uint acked;
    atomic_bool finished;
    int failed;                 /* -errno when the loop itself failed */
    atomic_flag *logged;        /* per error class: already logged once (engine- or fetcher-wide) */

    char *logbuf;
    size_t loglen;
};

struct rb_engine {
    struct rb_load_opts o;
    unsigned inflight;          /* requests in flight at the last collect, over all workers */
    struct worker *w;
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

static uint64_t next_rand(uint64_t *x)
{
    /* xorshift64* (Vigna 2016). */
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 0x2545f4914f6cdd1dull;
}

static uint64_t rand_below(uint64_t *x, uint64_t n)
{
    return n ? (uint64_t)(((unsigned __int128)next_rand(x) * n) >> 64) : 0;
}

/* ---- libcurl callbacks ---- */

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    struct req *r = arg;
    size_t len = size * n;
    if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
        /* A new response (after a redirect, or 100 Continue): start over. */
        r->status_known = false;
        r->cache = RB_LX_CACHE_ABSENT;
        r->cache_pos = UINT_MAX;
        return len;
    }
    const char *name = r->w->o->cache_header;
    if (!name)
        return len;
    /* A list "A,B": the value of the earliest name in the list that the response carries counts. */
    size_t nl = 0;
    unsigned pos = 0;
    for (; *name; pos++) {
        nl = strcspn(name, ",");
        if (nl && len > nl + 1 && p[nl] == ':' && strncasecmp(p, name, nl) == 0)
            break;
        name += nl + (name[nl] == ',');
    }
    if (*name && pos < r->cache_pos) {
        r->cache_pos = pos;
        const char *v = p + nl + 1, *end = p + len;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        size_t vl = (size_t)(end - v);
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
            vl--;
        /* nginx's $upstream_cache_status is HIT or MISS; Varnish/CDNs write "HIT from ...". */
        if (vl >= 3 && strncasecmp(v, "HIT", 3) == 0)
            r->cache = RB_LX_CACHE_HIT;
        else if (vl >= 4 && strncasecmp(v, "MISS", 4) == 0)
            r->cache = RB_LX_CACHE_MISS;
        else
            r->cache = RB_LX_CACHE_OTHER;
    }
    return len;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct req *r = arg;
    size_t len = size * n;
    if (!r->status_known) {
        long status = 0;
        curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
        r->err_status = status >= 300;
        r->status_known = true;
        if (status == 200 && r->ranged) {
            /* The server ignored Range and sends the whole object: verify it from its start. */
            r->off = 0;
            r->expect_len = r->size;
        }
    }
    if (r->err_status) {
        if (r->errbody.len < ERRBODY_BYTES)
            rb_buf_append(&r->errbody, p,
                          len < ERRBODY_BYTES - r->errbody.len ? len : ERRBODY_BYTES - r->errbody.len);
        return len;
    }
    if (r->w->o->verify && !r->mismatch && rb_payload_verify(r->key, r->off, p, len) != len)
        r->mismatch = true;
    r->off += len;
    r->body += len;
    return len;
}

static size_t on_read(char *buf, size_t size, size_t n, void *arg)
{
    struct req *r = arg;
    size_t len = size * n;
    uint64_t left = r->put_size - r->put_pos;
    if (len > left)
        len = (size_t)left;
    rb_payload_fill(r->key, r->put_pos, buf, len);
    r->put_pos += len;
    return len;
}

/* The payload is seekable, so a PUT redirected by an AIStore proxy can be sent again from the start. */
static int on_seek(void *arg, curl_off_t offset, int origin)
{
    struct req *r = arg;
    if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > r->put_size)
        return CURL_SEEKFUNC_CANTSEEK;
    r->put_pos = (uint64_t)offset;
    return CURL_SEEKFUNC_OK;
}

/* ---- slots ---- */

static int req_init(struct worker *w, struct req *r, size_t ep)
{
    const struct rb_load_opts *o = w->o;
    r->w = w;
    r->ep = ep;
    r->errbody.limit = ERRBODY_BYTES + 1;
    r->easy = curl_easy_init();
    if (!r->easy)
        return -ENOMEM;
    CURL *c = r->easy;
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_PRIVATE, r));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_ERRORBUFFER, r->ebuf));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_WRITEDATA, r));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_HEADERDATA, r));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 256L * 1024));
    /*
     * Requests go straight to the endpoints: a load generator must not route
     * through whatever http_proxy the environment names (and libcurl would
     * otherwise look the variables up on every request).
     */
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_PROXY, ""));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, o->max_redirects > 0 ? 1L : 0L));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_MAXREDIRS, o->max_redirects));
    if (o->timeout_ns)
        RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)((o->timeout_ns + RB_NS_PER_MS - 1) / RB_NS_PER_MS)));
    if (o->op == RB_LOAD_PUT) {
        RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_UPLOAD, 1L));
        RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read));
        RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_READDATA, r));
        RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, on_seek));
        RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_SEEKDATA, r));
        RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, 256L * 1024));
        /* No 100-continue round trip before each body: a benchmark measures the transfer, not the handshake. */
        r->hdrs = curl_slist_append(r->hdrs, "Expect:");
        if (!r->hdrs)
            return -ENOMEM;
    }
    int rc = rb_target_setup(o->target, c, o->op, &r->hdrs);
    if (rc)
        return rc;
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->hdrs));
    return 0;
}

static void req_free(struct req *r)
{
    if (r->easy)
        curl_easy_cleanup(r->easy);
    curl_slist_free_all(r->hdrs);
    rb_buf_free(&r->errbody);
}

/* ---- where objects come from ---- */

static uint64_t object_size(const struct rb_load_opts *o, size_t i)
{
    if (o->objects->sizes[i])
        return o->objects->sizes[i];
    if (o->max_size)
        return rb_payload_size(o->seed, o->objects->names[i], o->min_size, o->max_size);
    return 0;
}

/* Picks the next object for this worker; false when its limits or its objects are used up. */
static bool next_object(struct worker *w, const char **name, uint64_t *size)
{
    const struct rb_load_opts *o = w->o;
    if (w->count_limit && w->issued >= w->count_limit)
        return false;
    if (w->bytes_limit && w->bytes_done >= w->bytes_limit)
        return false;
    if (w->fetch_names) {
        if (w->pos >= w->fetch_n)
            return false;
        *name = w->fetch_names[w->pos++];
        *size = 0;
        return true;
    }
    size_t idx;
    if (o->op == RB_LOAD_GET && o->pattern == RB_PATTERN_RANDOM) {
        if (!o->objects->n)
            return false;
        idx = (size_t)rand_below(&w->rng, o->objects->n);
    } else {
        if (w->pos == w->nslice) {
            if (o->op == RB_LOAD_PUT || !w->nslice)
                return false;
            w->epoch++;
            if (o->pattern == RB_PATTERN_EPOCH) {
                if (o->epochs && w->epoch >= o->epochs)
                    return false;
                rb_objset_shuffle(w->slice, w->nslice, o->seed ^ (w->epoch * 0x9e3779b97f4a7c15ull) ^
                                                           ((uint64_t)o->rank << 32 | w->id));
            }
            w->pos = 0;
        }
        idx = w->slice[w->pos++];
    }
    *name = o->objects->names[idx];
    *size = object_size(o, idx);
    return true;
}

static int issue(struct worker *w, const char *name, uint64_t size, uint64_t intended_ns)
{
    const struct rb_load_opts *o = w->o;
    struct req *r = &w->reqs[w->free_slots[--w->nfree]];
    char url[RB_URL_MAX];
    int rc = rb_target_object_url(o->target, r->ep, name, url, sizeof url);
    if (rc) {
        w->nfree++;
        return rc;
    }
    r->name = name;
    r->key = (o->verify || o->op == RB_LOAD_PUT) ? rb_payload_key(o->seed, name) : 0;
    r->body = 0;
    r->mismatch = r->status_known = r->err_status = false;
    r->cache = RB_LX_CACHE_ABSENT;
    r->cache_pos = UINT_MAX;
    r->errbody.len = 0;
    r->ebuf[0] = '\0';
    if (curl_easy_setopt(r->easy, CURLOPT_URL, url) != CURLE_OK) {
        w->nfree++;
        return -ENOMEM;
    }
    if (o->op == RB_LOAD_PUT) {
        r->put_size = size;
        r->put_pos = 0;
        curl_easy_setopt(r->easy, CURLOPT_INFILESIZE_LARGE, (curl_off_t)size);
    } else {
        uint64_t off = 0, len = 0;
        if (o->random_range_len) {
            len = o->random_range_len;
            if (size > len)
                off = rand_below(&w->rng, size - len + 1);
            else
                len = size;
        } else if (o->range_len) {
            off = o->range_off;
            len = o->range_len;
        }
        char range[64];
        if (len) {
            snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, off, off + len - 1);
            curl_easy_setopt(r->easy, CURLOPT_RANGE, range);
        } else {
            curl_easy_setopt(r->easy, CURLOPT_RANGE, NULL);
        }
        r->off = off;
        r->size = size;
        r->ranged = len != 0;
        /* With known sizes a verified GET also checks the length: fewer bytes are a short read. */
        r->expect_len = 0;
        if (size)
            r->expect_len = len ? (off < size ? (size - off < len ? size - off : len) : 0) : size;
    }
    r->start_ns = rb_clock_ns();
    /* Closed loop (0): a request is due when it is sent. */
    r->intended_ns = intended_ns ? intended_ns : r->start_ns;
    r->start_wall_ns = rb_clock_wall_ns();
    CURLMcode mc = curl_multi_add_handle(r->sh->multi, r->easy);
    if (mc != CURLM_OK) {
        rb_error("curl_multi_add_handle: %s", curl_multi_strerror(mc));
        w->nfree++;
        return -EIO;
    }
    r->busy = true;
    w->issued++;
    return 0;
}

static int classify(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return RB_LERR_CONNECT;
    case CURLE_OPERATION_TIMEDOUT:
        return RB_LERR_TIMEOUT;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
        return RB_LERR_RESET;
    case CURLE_PARTIAL_FILE:
        return RB_LERR_SHORT_READ;
    case CURLE_TOO_MANY_REDIRECTS:
        return RB_LERR_REDIRECTS;
    default:
        return RB_LERR_OTHER;
    }
}

/* The first error of each class is logged once per rank, with the server's own words when it gave some. */
static void log_first_error(struct worker *w, struct req *r, int cls, CURLcode rc, long status)
{
    if (atomic_flag_test_and_set(&w->logged[cls]))
        return;
    const char *op = w->o->op == RB_LOAD_PUT ? "PUT" : "GET";
    char msg[400] = "";
    if (rc != CURLE_OK) {
        snprintf(msg, sizeof msg, "%s", r->ebuf[0] ? r->ebuf : curl_easy_strerror(rc));
    } else if (status >= 300) {
        char server[300];
        rb_target_error_message(w->o->target, r->errbody.s ? r->errbody.s : "", r->errbody.len, server,
                                sizeof server);
        snprintf(msg, sizeof msg, "HTTP %ld%s%s", status, server[0] ? " " : "", server);
    } else if (cls == RB_LERR_CHECKSUM) {
        snprintf(msg, sizeof msg, "the body differs from the payload written with --seed %" PRIu64, w->o->seed);
    } else {
        snprintf(msg, sizeof msg, "%" PRIu64 " body bytes, expected %" PRIu64, r->body, r->expect_len);
    }
    rb_warn("%s \"%s\" (%s): %s (first %s error; all are counted by class)", op, r->name,
            rb_target_name(w->o->target), msg, rb_load_err_names[cls]);
}

static void log_request(struct worker *w, const struct req *r, long status, int cls, uint64_t bytes,
                        uint64_t ttfb_ns, uint64_t total_ns, uint64_t lat_ns)
{
    if (w->loglen + 2400 > LOG_BUF_BYTES) {
        if (write(w->o->log_fd, w->logbuf, w->loglen) < 0)
            rb_warn("--log-requests: write failed: %s", strerror(errno));
        w->loglen = 0;
    }
    /* CSV (RFC 4180): a name with a comma, quote or line break is quoted, its quotes doubled. */
    char name[2100];
    if (strpbrk(r->name, ",\"\r\n")) {
        size_t o = 0;
        name[o++] = '"';
        for (const char *c = r->name; *c && o + 3 < sizeof name; c++) {
            if (*c == '"')
                name[o++] = '"';
            name[o++] = *c;
        }
        name[o++] = '"';
        name[o] = '\0';
    } else {
        snprintf(name, sizeof name, "%s", r->name);
    }
    int n = snprintf(w->logbuf + w->loglen, LOG_BUF_BYTES - w->loglen,
                     "%d,%u,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%ld,%s,%" PRIu64 "\n",
                     w->o->rank, w->id, w->o->op == RB_LOAD_PUT ? "PUT" : "GET", name, bytes,
                     r->start_wall_ns, ttfb_ns, r->start_wall_ns + total_ns, status,
                     cls >= 0 ? rb_load_err_names[cls] : "ok", lat_ns);
    if (n > 0 && (size_t)n < LOG_BUF_BYTES - w->loglen)
        w->loglen += (size_t)n;
}

static void complete(struct worker *w, struct req *r, CURLcode rc)
{
    const struct rb_load_opts *o = w->o;
    long status = 0, redirects = 0;
    curl_off_t total_us = 0, ttfb_us = 0;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(r->easy, CURLINFO_TOTAL_TIME_T, &total_us);
    curl_easy_getinfo(r->easy, CURLINFO_STARTTRANSFER_TIME_T, &ttfb_us);
    curl_easy_getinfo(r->easy, CURLINFO_REDIRECT_COUNT, &redirects);
    curl_multi_remove_handle(r->sh->multi, r->easy);
    r->busy = false;
    w->free_slots[w->nfree++] = (unsigned)(r - w->reqs);

    int cls = -1;
    if (rc != CURLE_OK)
        cls = classify(rc);
    else if (status >= 500)
        cls = RB_LERR_HTTP_5XX;
    else if (status >= 400)
        cls = RB_LERR_HTTP_4XX;
    else if (status >= 300 || status < 200)
        cls = RB_LERR_OTHER; /* a redirect we were not told to follow, or no HTTP status */
    else if (r->mismatch)
        cls = RB_LERR_CHECKSUM;
    else if (o->verify && o->op == RB_LOAD_GET && r->expect_len && r->body != r->expect_len)
        cls = RB_LERR_SHORT_READ;

    struct rb_stats *s = w->local;
    uint64_t total_ns = (uint64_t)total_us * RB_NS_PER_US, ttfb_ns = (uint64_t)ttfb_us * RB_NS_PER_US;
    /* Coordinated omission: the request was due at intended_ns; any wait for a free slot is latency too. */
    uint64_t lat_ns = (r->start_ns - r->intended_ns) + total_ns;
    uint64_t bytes = o->op == RB_LOAD_PUT ? r->put_size : r->body;
    s->ops++;
    s->extra[RB_LX_REDIRECTS] += (uint64_t)redirects;
    if (o->cache_header)
        s->extra[r->cache]++;
    if (cls >= 0) {
        rb_stats_error(s, (unsigned)cls);
        log_first_error(w, r, cls, rc, status);
        bytes = 0;
    } else {
        s->bytes += bytes;
        w->bytes_done += bytes;
        rb_hist_record(&s->lat, lat_ns);
        rb_hist_record(&s->ttfb, ttfb_ns);
        rb_hist_record(w->unc_local, total_ns);
        if (w->seg) {
            uint64_t now = rb_clock_ns();
            size_t sec = now > w->e->t0_ns ? (size_t)((now - w->e->t0_ns) / RB_NS_PER_S) : 0;
            if (sec >= w->nseg) {
                size_t n = w->nseg ? w->nseg : 64;
                while (n <= sec)
                    n *= 2;
                uint64_t *seg = realloc(w->seg, n * sizeof *seg);
                if (seg) {
                    memset(seg + w->nseg, 0, (n - w->nseg) * sizeof *seg);
                    w->seg = seg;
                    w->nseg = n;
                }
            }
            if (sec < w->nseg)
                w->seg[sec] += bytes;
        }
    }
    if (o->log_fd >= 0 && w->logbuf)
        log_request(w, r, status, cls, bytes, ttfb_ns, total_ns, lat_ns);
}

/* Drains finished transfers; returns how many completed. */
static unsigned drain(struct worker *w)
{
    unsigned n = 0;
    for (unsigned i = 0; i < w->nshards; i++) {
        int left;
        CURLMsg *m;
        while ((m = curl_multi_info_read(w->shards[i].multi, &left))) {
            if (m->msg != CURLMSG_DONE)
                continue;
            struct req *r = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
            CURLcode rc = m->data.result;
            complete(w, r, rc);
            n++;
        }
    }
    return n;
}

/* Hands the private stats to the mailbox: once per tick, never per request. */
static void handover(struct worker *w)
{
    pthread_mutex_lock(&w->mu);
    rb_stats_merge(w->box, w->local);
    rb_hist_merge(w->unc_box, w->unc_local);
    w->box_inflight = w->nreq - w->nfree;
    pthread_mutex_unlock(&w->mu);
    rb_stats_reset(w->local);
    rb_hist_reset(w->unc_local);
}

/*
 * curl's socket callback: keeps the epoll set in step with the sockets curl
 * wants watched, so a wait costs O(ready sockets), not O(connections), and
 * thousands of requests in flight stay cheap (libcurl's multi_socket API).
 */
static int on_socket(CURL *easy, curl_socket_t s, int what, void *arg, void *socketp)
{
    (void)easy;
    struct shard *sh = arg;
    struct worker *w = sh->w;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(w->epfd, EPOLL_CTL_DEL, s, NULL); /* may already be gone with a closed socket */
        return 0;
    }
    struct epoll_event ev = {.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u),
                             .data.u64 = (uint64_t)sh->idx << 32 | (uint32_t)s};
    int op = socketp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(w->epfd, op, s, &ev) != 0) {
        /* A descriptor number reused after a close, or dropped from the set when it closed. */
        op = errno == EEXIST ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
        if (epoll_ctl(w->epfd, op, s, &ev) != 0) {
            rb_error("epoll_ctl: %s", strerror(errno));
            return -1;
        }
    }
    if (!socketp)
        curl_multi_assign(sh->multi, s, sh);
    return 0;
}

static int on_timer(CURLM *multi, long timeout_ms, void *arg)
{
    (void)multi;
    struct shard *sh = arg;
    sh->timer_ns = timeout_ms < 0 ? UINT64_MAX : rb_clock_ns() + (uint64_t)timeout_ms * RB_NS_PER_MS;
    return 0;
}

static void wake(struct worker *w)
{
    uint64_t one = 1;
    if (write(w->evfd, &one, sizeof one) < 0 && errno != EAGAIN)
        rb_warn("eventfd write: %s", strerror(errno));
}

static int socket_action(struct shard *sh, curl_socket_t s, int mask)
{
    int running = 0;
    CURLMcode mc = curl_multi_socket_action(sh->multi, s, mask, &running);
    if (mc != CURLM_OK) {
        rb_error("curl_multi_socket_action: %s", curl_multi_strerror(mc));
        return -EIO;
    }
    return 0;
}

/*
 * Waits for socket events at most wait_ns. An open loop's sends are due at
 * exact moments and any lateness is charged to latency, so the wait has
 * nanosecond resolution (epoll_pwait2, Linux 5.11) rather than epoll_wait's
 * milliseconds, which would add half a millisecond to every corrected latency.
 */
static int wait_events(struct worker *w, struct epoll_event *evs, uint64_t wait_ns)
{
    static atomic_bool no_pwait2;
    if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
        struct timespec ts = {.tv_sec = (time_t)(wait_ns / RB_NS_PER_S), .tv_nsec = (long)(wait_ns % RB_NS_PER_S)};
        int n = epoll_pwait2(w->epfd, evs, EPOLL_BATCH, &ts, NULL);
        if (n >= 0 || errno != ENOSYS)
            return n;
        atomic_store(&no_pwait2, true);
    }
    /* Rounded up: a send at most 1 ms late is still timed from its intended moment. */
    return epoll_wait(w->epfd, evs, EPOLL_BATCH, (int)((wait_ns + RB_NS_PER_MS - 1) / RB_NS_PER_MS));
}

/* The request loop; stop and stop2 may be NULL. Returns 0 or -errno. */
static int run_loop(struct worker *w, const atomic_bool *stop, const volatile int *stop2)
{
    const bool open_loop = w->period_ns != 0;
    struct epoll_event evs[EPOLL_BATCH];
    int rc = 0;
    for (;;) {
        if ((stop && atomic_load_explicit(stop, memory_order_relaxed)) || (stop2 && *stop2))
            break;
        uint64_t now = rb_clock_ns();
        while (w->nfree && !w->exhausted) {
            if (open_loop && now < w->next_ns)
                break;
            const char *name;
            uint64_t size;
            if (!next_object(w, &name, &size)) {
                w->exhausted = true;
                break;
            }
            uint64_t intended = open_loop ? w->next_ns : 0;
            if (open_loop)
                w->next_ns += w->period_ns;
            if ((rc = issue(w, name, size, intended)))
                return rc;
        }
        if (w->exhausted && w->nfree == w->nreq)
            break;
        /* New handles ask for an immediate timeout action: that is what starts them. */
        now = rb_clock_ns();
        for (unsigned i = 0; i < w->nshards; i++)
            if (w->shards[i].timer_ns <= now) {
                w->shards[i].timer_ns = UINT64_MAX;
                if ((rc = socket_action(&w->shards[i], CURL_SOCKET_TIMEOUT, 0)))
                    return rc;
            }
        unsigned done = drain(w);
        if (w->e && atomic_load_explicit(&w->e->seq, memory_order_acquire) != atomic_load(&w->acked)) {
            unsigned seq = atomic_load(&w->e->seq);
            handover(w);
            atomic_store_explicit(&w->acked, seq, memory_order_release);
        }
        /*
         * The last transfers just finished: leave now rather than after an
         * idle poll, which a fetcher's caller would pay on every batch.
         */
        if (w->exhausted && w->nfree == w->nreq)
            break;
        if (done && w->nfree && !w->exhausted && !open_loop)
            continue; /* slots freed: refill before waiting */
        now = rb_clock_ns();
        uint64_t until = now + IDLE_POLL_MS * RB_NS_PER_MS;
        for (unsigned i = 0; i < w->nshards; i++)
            if (w->shards[i].timer_ns < until)
                until = w->shards[i].timer_ns;
        if (open_loop && w->nfree && !w->exhausted && w->next_ns < until)
            until = w->next_ns;
        int n = wait_events(w, evs, until > now ? until - now : 0);
        if (n < 0 && errno != EINTR) {
            rb_error("epoll_wait: %s", strerror(errno));
            return -errno;
        }
        for (int i = 0; i < n; i++) {
            if (evs[i].data.u64 == EV_WAKE) {
                uint64_t v;
                if (read(w->evfd, &v, sizeof v) < 0 && errno != EAGAIN)
                    rb_warn("eventfd read: %s", strerror(errno));
                continue;
            }
            int mask = ((evs[i].events & EPOLLIN) ? CURL_CSELECT_IN : 0) |
                       ((evs[i].events & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
                       ((evs[i].events & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
            unsigned sh = (unsigned)(evs[i].data.u64 >> 32);
            if (sh < w->nshards && (rc = socket_action(&w->shards[sh], (curl_socket_t)(uint32_t)evs[i].data.u64, mask)))
                return rc;
        }
    }
    /* Requests still in flight when told to stop are abandoned, not counted. */
    for (unsigned i = 0; i < w->nreq; i++)
        if (w->reqs[i].busy) {
            curl_multi_remove_handle(w->reqs[i].sh->multi, w->reqs[i].easy);
            w->reqs[i].busy = false;
            w->free_slots[w->nfree++] = i;
        }
    return 0;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    /* The default 50 us timer slack would be charged to every open-loop request. */
    if (w->period_ns)
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    w->failed = run_loop(w, &w->e->stop, NULL);
    if (w->logbuf && w->loglen) {
        if (write(w->o->log_fd, w->logbuf, w->loglen) < 0)
            rb_warn("--log-requests: write failed: %s", strerror(errno));
        w->loglen = 0;
    }
    handover(w);
    atomic_store(&w->finished, true);
    atomic_fetch_add(&w->e->nfinished, 1);
    return NULL;
}

static int worker_init(struct worker *w, const struct rb_load_opts *o, unsigned id, size_t ep0)
{
    w->o = o;
    w->id = id;
    w->nreq = o->inflight;
    w->nshards = (w->nreq + SHARD_SLOTS - 1) / SHARD_SLOTS;
    w->shards = calloc(w->nshards, sizeof *w->shards);
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    w->reqs = calloc(w->nreq, sizeof *w->reqs);
    w->free_slots = calloc(w->nreq, sizeof *w->free_slots);
    w->local = rb_stats_new();
    w->unc_local = rb_hist_new();
    w->box = rb_stats_new();
    w->unc_box = rb_hist_new();
    if (!w->shards || !w->reqs || !w->free_slots || !w->local || !w->unc_local || !w->box || !w->unc_box)
        return -ENOMEM;
    if (w->epfd < 0 || w->evfd < 0)
        return -errno;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = EV_WAKE};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->evfd, &ev) != 0)
        return -errno;
    pthread_mutex_init(&w->mu, NULL);
    for (unsigned i = 0; i < w->nshards; i++) {
        struct shard *sh = &w->shards[i];
        sh->w = w;
        sh->idx = i;
        sh->timer_ns = UINT64_MAX;
        if (!(sh->multi = curl_multi_init()))
            return -ENOMEM;
        curl_multi_setopt(sh->multi, CURLMOPT_MAXCONNECTS, (long)SHARD_SLOTS);
        curl_multi_setopt(sh->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
        curl_multi_setopt(sh->multi, CURLMOPT_SOCKETDATA, sh);
        curl_multi_setopt(sh->multi, CURLMOPT_TIMERFUNCTION, on_timer);
        curl_multi_setopt(sh->multi, CURLMOPT_TIMERDATA, sh);
    }
    size_t neps = rb_target_endpoint_count(o->target);
    for (unsigned i = 0; i < w->nreq; i++) {
        w->reqs[i].sh = &w->shards[i / SHARD_SLOTS];
        int rc = req_init(w, &w->reqs[i], (ep0 + i) % neps);
        if (rc)
            return rc;
        w->free_slots[w->nfree++] = w->nreq - 1 - i;
    }
    if (o->log_fd >= 0) {
        w->logbuf = malloc(LOG_BUF_BYTES);
        if (!w->logbuf)
            return -ENOMEM;
    }
    w->rng = (o->seed + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)o->rank << 20) ^ id;
    if (!w->rng)
        w->rng = 1;
    return 0;
}

static void worker_free(struct worker *w)
{
    for (unsigned i = 0; w->reqs && i < w->nreq; i++) {
        if (w->reqs[i].busy && w->reqs[i].sh && w->reqs[i].sh->multi)
            curl_multi_remove_handle(w->reqs[i].sh->multi, w->reqs[i].easy);
        req_free(&w->reqs[i]);
    }
    for (unsigned i = 0; w->shards && i < w->nshards; i++)
        if (w->shards[i].multi)
            curl_multi_cleanup(w->shards[i].multi);
    free(w->shards);
    if (w->epfd > 0)
        close(w->epfd);
    if (w->evfd > 0)
        close(w->evfd);
    if (w->box)
        pthread_mutex_destroy(&w->mu);
    free(w->reqs);
    free(w->free_slots);
    free(w->slice);
    free(w->seg);
    free(w->logbuf);
    rb_stats_free(w->local);
    rb_stats_free(w->box);
    rb_hist_free(w->unc_local);
    rb_hist_free(w->unc_box);
}

/* Share i of n equal parts of total (the first total % n parts one larger). */
static uint64_t share(uint64_t total, unsigned n, unsigned i)
{
    return total / n + (i < total % n ? 1 : 0);
}

int rb_engine_new(struct rb_engine **out, const struct rb_load_opts *o)
{
    *out = NULL;
    if (!o->target || !o->objects || o->threads == 0 || o->inflight == 0)
        return -EINVAL;
    struct rb_engine *e = calloc(1, sizeof *e);
    if (!e)
        return -ENOMEM;
    e->o = *o;
    e->nw = o->threads;
    for (int i = 0; i < RB_LERR_COUNT; i++)
        atomic_flag_clear(&e->logged[i]);
    e->w = calloc(e->nw, sizeof *e->w);
    if (!e->w) {
        free(e);
        return -ENOMEM;
    }
    int rc = 0;
    for (unsigned t = 0; t < e->nw && !rc; t++) {
        struct worker *w = &e->w[t];
        w->e = e;
        w->logged = e->logged;
        rc = worker_init(w, &e->o, t, (size_t)t * o->inflight + (size_t)o->rank * o->threads * o->inflight);
        if (rc)
            break;
        /* This thread's slice: the rank's objects j with j % threads == t. */
        size_t n = o->objects->n / e->nw + (t < o->objects->n % e->nw ? 1 : 0);
        w->slice = malloc((n ? n : 1) * sizeof *w->slice);
        if (!w->slice) {
            rc = -ENOMEM;
            break;
        }
        for (size_t j = t, k = 0; j < o->objects->n; j += e->nw)
            w->slice[k++] = (uint32_t)j;
        w->nslice = n;
        if (o->pattern == RB_PATTERN_EPOCH && o->op == RB_LOAD_GET)
            rb_objset_shuffle(w->slice, n, o->seed ^ ((uint64_t)o->rank << 32 | t));
        w->count_limit = o->count ? share(o->count, e->nw, t) : 0;
        w->bytes_limit = o->bytes ? share(o->bytes, e->nw, t) : 0;
        if (o->count && !w->count_limit)
            w->exhausted = true; /* fewer requests than threads: this one has none */
        if (o->rate_per_s > 0)
            w->period_ns = (uint64_t)((double)RB_NS_PER_S * e->nw / o->rate_per_s);
        if (o->rate_per_s > 0 && !w->period_ns)
            w->period_ns = 1;
        w->seg = calloc(64, sizeof *w->seg);
        w->nseg = w->seg ? 64 : 0;
    }
    if (rc) {
        rb_engine_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

int rb_engine_start(struct rb_engine *e)
{
    e->t0_ns = rb_clock_ns();
    for (unsigned t = 0; t < e->nw; t++) {
        struct worker *w = &e->w[t];
        /* Open loop: threads' schedules interleave evenly within one period. */
        w->next_ns = e->t0_ns + w->period_ns * t / e->nw;
        int rc = pthread_create(&w->th, NULL, worker_main, w);
        if (rc) {
            rb_engine_stop(e);
            return -rc;
        }
        w->started = true;
    }
    e->started = true;
    return 0;
}

void rb_engine_collect(struct rb_engine *e, struct rb_stats *into, struct rb_hist *uncorrected)
{
    unsigned seq = atomic_fetch_add(&e->seq, 1) + 1;
    for (unsigned t = 0; t < e->nw; t++)
        if (e->w[t].started && !atomic_load(&e->w[t].finished))
            wake(&e->w[t]);
    uint64_t deadline = rb_clock_ns() + HANDOVER_WAIT_NS;
    e->inflight = 0;
    for (unsigned t = 0; t < e->nw; t++) {
        struct worker *w = &e->w[t];
        while (w->started && !atomic_load(&w->finished) && atomic_load(&w->acked) != seq &&
               rb_clock_ns() < deadline)
            rb_clock_sleep_ns(100 * RB_NS_PER_US, NULL);
        pthread_mutex_lock(&w->mu);
        rb_stats_merge(into, w->box);
        if (uncorrected)
            rb_hist_merge(uncorrected, w->unc_box);
        rb_stats_reset(w->box);
        rb_hist_reset(w->unc_box);
        if (!atomic_load(&w->finished))
            e->inflight += w->box_inflight;
        pthread_mutex_unlock(&w->mu);
    }
}

unsigned rb_engine_inflight(const struct rb_engine *e)
{
    return e->inflight;
}

bool rb_engine_done(struct rb_engine *e)
{
    return atomic_load(&e->nfinished) == e->nw;
}

void rb_engine_stop(struct rb_engine *e)
{
    if (!e || e->joined)
        return;
    atomic_store(&e->stop, true);
    for (unsigned t = 0; t < e->nw; t++)
        if (e->w[t].started)
            wake(&e->w[t]);
    for (unsigned t = 0; t < e->nw; t++)
        if (e->w[t].started) {
            pthread_join(e->w[t].th, NULL);
            if (e->w[t].failed)
                rb_error("worker %u stopped early: %s", t, strerror(-e->w[t].failed));
        }
    e->joined = true;
    /* Sum the per-second byte counters of every worker (they are private until the join). */
    size_t n = 0;
    for (unsigned t = 0; t < e->nw; t++) {
        size_t last = e->w[t].nseg;
        while (last && !e->w[t].seg[last - 1])
            last--;
        if (last > n)
            n = last;
    }
    free(e->segments);
    e->segments = calloc(n ? n : 1, sizeof *e->segments);
    e->nsegments = e->segments ? n : 0;
    for (unsigned t = 0; t < e->nw && e->segments; t++)
        for (size_t i = 0; i < e->w[t].nseg && i < n; i++)
            e->segments[i] += e->w[t].seg[i];
}

int rb_engine_status(const struct rb_engine *e)
{
    for (unsigned t = 0; t < e->nw; t++)
        if (e->w[t].failed)
            return e->w[t].failed;
    return 0;
}

const uint64_t *rb_engine_segments(const struct rb_engine *e, size_t *n)
{
    *n = e->nsegments;
    return e->segments;
}

void rb_engine_free(struct rb_engine *e)
{
    if (!e)
        return;
    rb_engine_stop(e);
    for (unsigned t = 0; e->w && t < e->nw; t++)
        worker_free(&e->w[t]);
    free(e->w);
    free(e->segments);
    free(e);
}

/* ---- fetcher ---- */

struct rb_fetcher {
    struct rb_load_opts o;
    struct worker w;
    atomic_flag logged[RB_LERR_COUNT];
};

int rb_fetcher_new(struct rb_fetcher **out, const struct rb_load_opts *o)
{
    *out = NULL;
    if (!o->target || o->op != RB_LOAD_GET || o->inflight == 0)
        return -EINVAL;
    struct rb_fetcher *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    f->o = *o;
    f->o.objects = NULL;
    f->o.rate_per_s = 0;
    for (int i = 0; i < RB_LERR_COUNT; i++)
        atomic_flag_clear(&f->logged[i]);
    f->w.logged = f->logged;
    int rc = worker_init(&f->w, &f->o, 0, 0);
    if (rc) {
        rb_fetcher_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int rb_fetcher_get(struct rb_fetcher *f, const char *const *names, size_t n, struct rb_stats *stats,
                   struct rb_hist *uncorrected, const volatile int *stop)
{
    struct worker *w = &f->w;
    w->fetch_names = names;
    w->fetch_n = n;
    w->pos = 0;
    w->exhausted = false;
    w->issued = 0;
    uint64_t errors0 = w->local->errors;
    int rc = run_loop(w, NULL, stop);
    int failed = (int)(w->local->errors - errors0);
    if (w->logbuf && w->loglen) {
        if (write(w->o->log_fd, w->logbuf, w->loglen) < 0)
            rb_warn("--log-requests: write failed: %s", strerror(errno));
        w->loglen = 0;
    }
    rb_stats_merge(stats, w->local);
    if (uncorrected)
        rb_hist_merge(uncorrected, w->unc_local);
    rb_stats_reset(w->local);
    rb_hist_reset(w->unc_local);
    w->fetch_names = NULL;
    return rc ? rc : failed;
}

void rb_fetcher_free(struct rb_fetcher *f)
{
    if (!f)
        return;
    worker_free(&f->w);
    free(f);
}
