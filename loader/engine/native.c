/* The native engine: GET, PUT, HEAD, DELETE on our own keep-alive sockets, one epoll loop per worker, http_parser (wrk's design). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <http_parser.h>

#include "native_int.h"
#include "native_tls_int.h"
#include "payload_int.h"
#include "railbench/cli.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "worker_int.h"

#define IDLE_POLL_NS (100 * RB_NS_PER_MS)
#define REQ_NAME_MAX (3 * 1024 + 1)
#define REQ_FIXED_MAX 200      /* method, " HTTP/1.1", "Host: ", Range, Content-Length, line ends */
#define REQ_AUTH_MAX 600       /* a SigV4 Authorization line and its x-amz-* lines, the session token apart */
#define HDR_MAX 128            /* captured header name and value (cache-status counting) */
#define LOC_MAX 2048           /* a redirect's Location */
#define NPOOL_MAX 64           /* redirect targets with a keep-alive pool each (AIStore: one per storage target) */

/*
 * Idle keep-alive connections to one host a redirect led to (AIStore: a
 * target the proxy sent a request to), shared by the worker's requests as
 * AIStore's own clients keep a pool per target. Made at the first redirect
 * to the host; a request takes a connection and gives it back when done.
 */
struct npool {
    char hostport[RB_NHOST_MAX];
    size_t hostport_len;
    struct sockaddr_storage addr;
    socklen_t alen;
    int *idle;                 /* up to the worker's slots */
    unsigned nidle;
};

/*
 * One connection and the request on it. The request's accounting lives in
 * r, the very struct the curl path fills, so rb_xfer_record and the error
 * log treat both engines alike. Everything is allocated at start: a request
 * writes into the connection's request buffer and reads into the worker's
 * one read buffer. The fields every request touches come first and r last:
 * at 1,024 connections the structs no longer fit in cache, and each event
 * then costs a miss per cache line it touches (perf showed the loads of
 * busy and ttfb_ns as the loop's hottest instructions).
 */
struct nconn {
    int fd;                    /* the socket the request is on: the endpoint's, or a redirect's (leg); -1: closed */
    unsigned ep;
    bool verify, no_body, busy, connecting, reused, got_bytes, headers_done, complete, in_value;
    bool is_loc, redirect;     /* the header being read is Location; the response is a redirect to follow */
    bool handshaking;          /* TLS: the handshake is under way */
    uint64_t connect_ns;       /* when the connection began (TLS: the handshake's time is from here) */
    struct rb_ntls_conn tls;   /* TLS state of fd, or none */
    size_t wlen, woff;
    uint64_t ttfb_ns;
    uint64_t idx;              /* the object's index in its set: what a put that cleans up notes as written */
    char *wbuf;                /* the request's head, written per request */
    http_parser p;
    struct rb_req r;
    size_t hname_len, hval_len;
    char hname[HDR_MAX], hval[HDR_MAX];
    /* Redirects (rare): where the request is now and what it came from. */
    int home_fd;               /* the endpoint's keep-alive connection while a leg runs on fd; -1 none */
    struct npool *leg;         /* the pool fd belongs to, or NULL: fd is the endpoint's */
    unsigned redirects;
    uint64_t range_off, range_len; /* the request's Range (len 0: none), for each leg */
    size_t loc_len;
    char loc[LOC_MAX];
};

/*
 * What differs between the ops, chosen once per worker: the method, whether
 * the request carries a body (PUT: its length in the head, the payload after
 * it from r.put_pos of r.put_size) or the response carries none (HEAD), and
 * what a request readies before it goes out. Sending needs no branch on the op.
 */
struct nop {
    const char *method;
    bool sends_body, no_body;
    /* Readies r for one request of name (size bytes, 0 unknown); a ranged GET sets *len (0: whole) and *off. */
    void (*ready)(struct rb_worker *w, struct rb_req *r, const char *name, uint64_t size, uint64_t *off, uint64_t *len);
};

/* A worker's native state; endpoints are resolved once, the request's fixed parts (rb_nshape) built once. */
struct rb_native {
    const struct nop *op;
    const struct rb_nproto *proto;
    struct rb_nauth *auth;     /* the protocol's signing state, or NULL */
    struct nconn *c;
    char *rbuf;                /* the read buffer (rbuf_bytes): a response is parsed as it arrives, nothing keeps it */
    size_t rbuf_bytes;
    char *slab;                /* every connection's request buffer, in one allocation */
    size_t wbuf_bytes;
    http_parser_settings settings;
    struct sockaddr_storage addr[RB_TARGET_MAX_ENDPOINTS];
    socklen_t alen[RB_TARGET_MAX_ENDPOINTS];
    uint64_t next_scan_ns, scan_ns;        /* timeouts are checked every scan_ns, not per request */
    bool follow;                           /* redirects are followed (up to o->max_redirects) */
    struct rb_ntls *tls;                   /* TLS context when an endpoint is https://, else NULL */
    bool ep_tls[RB_TARGET_MAX_ENDPOINTS];  /* endpoint e is https:// */
    struct npool *pools;                   /* NPOOL_MAX, made at the first redirect */
    unsigned npools;
    struct rb_nshape shape;
};

bool rb_engine_native_fits(const struct rb_load_opts *o, const char **why)
{
    const char *w = NULL;
    const struct rb_target *t = o->target;
    bool tls = false;
    for (size_t e = 0; e < t->nendpoints; e++)
        tls = tls || strncmp(t->endpoints[e], "https:", 6) == 0;
    (void)tls;
    if (!rb_nproto_for(rb_target_scheme(t)))
        w = "http://, https://, s3:// and ais:// targets only";
    else if (o->op > RB_LOAD_HEAD)
        w = "GET, PUT, DELETE and HEAD only";
    else if (o->mix)
        w = "one op per run (load mixed's requests go through libcurl)";
    else if (o->op == RB_LOAD_PUT && o->part_size)
        w = "whole-object PUTs only (multipart uploads go through libcurl)";
    else if (o->op == RB_LOAD_GET && o->part_size)
        w = "whole-object GETs only (reads in ranged parts go through libcurl)";
    if (why)
        *why = w;
    return !w;
}

int rb_engine_check_usage(enum rb_engine_kind engine, const struct rb_target *t, enum rb_load_op op, bool ranged)
{
    const struct rb_load_opts o = {.op = op, .target = t, .range_len = ranged};
    const char *why;
    if (engine == RB_ENGINE_NATIVE && !rb_engine_native_fits(&o, &why))
        return rb_cli_usage_error("--engine native: %s; use --engine curl or auto", why);
    /* libcurl 7.88 signs the x-amz-content-sha256 it is handed and hashes no streamed body. */
    if (t->sign_payload && engine == RB_ENGINE_CURL)
        return rb_cli_usage_error("--sign-payload: only the native engine signs bodies; drop --engine curl");
    if (t->sign_payload && !rb_engine_native_fits(&o, &why))
        return rb_cli_usage_error("--sign-payload: only the native engine signs bodies, and this run cannot use it: %s", why);
    return 0;
}

enum rb_engine_kind rb_engine_kind(const struct rb_load_opts *o)
{
    if (o->engine == RB_ENGINE_AUTO)
        return rb_engine_native_fits(o, NULL) ? RB_ENGINE_NATIVE : RB_ENGINE_CURL;
    return o->engine;
}

/* ---- parser callbacks (p->data is the connection) ---- */

/* A whole header has been seen: count it when it names the cache status. */
static void header_done(struct nconn *c)
{
    char line[2 * HDR_MAX + 2];
    if (!c->r.w->o->cache_header || c->hname_len >= HDR_MAX || c->hval_len >= HDR_MAX)
        return; /* longer than any cache-status header: not one */
    memcpy(line, c->hname, c->hname_len);
    line[c->hname_len] = ':';
    memcpy(line + c->hname_len + 1, c->hval, c->hval_len);
    rb_xfer_cache_header(&c->r, line, c->hname_len + 1 + c->hval_len);
}

static void append(char *buf, size_t *len, const char *at, size_t n)
{
    if (*len + n < HDR_MAX)
        memcpy(buf + *len, at, n);
    *len += n; /* past HDR_MAX: marks the header as too long to matter */
}

static int on_header_field(http_parser *p, const char *at, size_t n)
{
    struct nconn *c = p->data;
    if (c->in_value) {
        header_done(c);
        c->in_value = c->is_loc = false;
        c->hname_len = c->hval_len = 0;
    }
    append(c->hname, &c->hname_len, at, n);
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t n)
{
    struct nconn *c = p->data;
    if (!c->in_value) {
        /* Only a redirect's Location is kept, and only where redirects are followed (the callback is set then). */
        c->is_loc = p->status_code / 100 == 3 && c->hname_len == 8 && strncasecmp(c->hname, "location", 8) == 0;
        if (c->is_loc)
            c->loc_len = 0;
    }
    c->in_value = true;
    append(c->hval, &c->hval_len, at, n);
    if (c->is_loc) {
        if (c->loc_len + n < LOC_MAX)
            memcpy(c->loc + c->loc_len, at, n);
        c->loc_len += n; /* past LOC_MAX: too long to follow */
    }
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    struct nconn *c = p->data;
    if (c->in_value)
        header_done(c);
    c->headers_done = true;
    /* 301, 302, 303, 307, 308 with a Location (the callbacks that set loc_len run only when redirects are followed). */
    c->redirect = c->loc_len && (p->status_code == 301 || p->status_code == 302 || p->status_code == 303 ||
                                 p->status_code == 307 || p->status_code == 308);
    c->r.err_status = p->status_code >= 300;
    if (p->status_code == 200 && c->r.ranged) {
        /* The server ignored Range and sends the whole object: verify it from its start (as the curl path does). */
        c->r.off = 0;
        c->r.expect_len = c->r.size;
    }
    return c->no_body ? 1 : 0; /* 1: the answer to a HEAD has no body, whatever its length says */
}

/* The body as it streams: verified in place against the payload, or kept (its start) when it is an error's. */
static int on_body(http_parser *p, const char *at, size_t n)
{
    struct nconn *c = p->data;
    struct rb_req *r = &c->r;
    if (r->err_status) {
        if (r->errbody.len < 2048)
            rb_buf_append(&r->errbody, at, n < 2048 - r->errbody.len ? n : 2048 - r->errbody.len);
        return 0;
    }
    if (c->verify && !r->mismatch && rb_payload_verify(r->key, r->off, at, n) != n)
        r->mismatch = true;
    r->off += n;
    r->body += n;
    return 0;
}

static int on_message_complete(http_parser *p)
{
    struct nconn *c = p->data;
    c->complete = true;
    http_parser_pause(p, 1); /* one response per request: anything after it is not ours */
    return 0;
}

/* ---- connections ---- */

static void conn_close(struct nconn *c)
{
    rb_ntls_end(&c->tls);
    if (c->fd >= 0)
        close(c->fd); /* leaves the epoll set with it */
    c->fd = -1;
    c->connecting = c->handshaking = false;
}

/* Sends on c's socket, through TLS when it has it; as send(2). */
static ssize_t io_send(struct nconn *c, const void *buf, size_t len, int flags)
{
    return c->tls.ssl ? rb_ntls_send(&c->tls, buf, len) : send(c->fd, buf, len, flags);
}

static ssize_t io_recv(struct nconn *c, void *buf, size_t len)
{
    return c->tls.ssl ? rb_ntls_recv(&c->tls, buf, len) : recv(c->fd, buf, len, 0);
}

/* Gives fd back to pool pl's idle connections (closes it when they are full). */
static void pool_put(struct rb_worker *w, struct npool *pl, int fd)
{
    if (pl->nidle < w->nreq)
        pl->idle[pl->nidle++] = fd;
    else
        close(fd);
}

/* Leaves a redirect's leg: its connection back to its pool (kept alive) or closed, the endpoint's back in c. */
static void leg_end(struct rb_worker *w, struct nconn *c, bool keep)
{
    if (!c->leg)
        return;
    if (c->fd >= 0 && keep && !c->connecting && !c->tls.ssl)
        pool_put(w, c->leg, c->fd);
    else
        conn_close(c); /* a TLS leg's session state is the slot's: not pooled */
    c->fd = c->home_fd;
    c->home_fd = -1;
    c->leg = NULL;
    c->connecting = false;
}

/* Ends c's request with rc (CURLE_OK: a response was parsed) and frees its slot; closes the connection unless it stays alive. */
static void finish(struct rb_worker *w, struct nconn *c, CURLcode rc, const char *msg)
{
    uint64_t now = rb_clock_ns();
    long status = rc == CURLE_OK ? (long)c->p.status_code : 0;
    if (msg)
        snprintf(c->r.ebuf, sizeof c->r.ebuf, "%s", msg);
    else if (rc != CURLE_OK)
        c->r.ebuf[0] = '\0';
    bool keep = rc == CURLE_OK && http_should_keep_alive(&c->p);
    if (c->leg)
        leg_end(w, c, keep);
    else if (!keep)
        conn_close(c);
    c->busy = false;
    w->free_slots[w->nfree++] = (unsigned)(c - w->nat->c);
    uint64_t errors = w->local->errors;
    rb_xfer_record(w, &c->r, rc, status, c->got_bytes ? c->ttfb_ns : 0, now - c->r.start_ns, (long)c->redirects, now);
    if (w->o->track_written && w->local->errors == errors)
        rb_worker_wrote(w, c->idx); /* a put that cleans up deletes what it wrote, on either engine */
}

/* The epoll tag of c's socket fd: the slot and the descriptor, so an event of a connection c no longer uses is told apart. */
static uint64_t ev_tag(struct rb_native *n, struct nconn *c, int fd)
{
    return (uint64_t)(c - n->c) | (uint64_t)(uint32_t)fd << 32;
}

/* Opens c's connection: to its endpoint, or to the host of its redirect leg. */
static int conn_open(struct rb_worker *w, struct nconn *c)
{
    struct rb_native *n = w->nat;
    const struct sockaddr_storage *addr = c->leg ? &c->leg->addr : &n->addr[c->ep];
    socklen_t alen = c->leg ? c->leg->alen : n->alen[c->ep];
    c->fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return -errno;
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* Edge-triggered, both directions, once per connection: no epoll_ctl per request. */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.u64 = ev_tag(n, c, c->fd)};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
        int e = -errno;
        conn_close(c);
        return e;
    }
    c->reused = false;
    c->connecting = false;
    c->connect_ns = rb_clock_ns();
    if (connect(c->fd, (const struct sockaddr *)addr, alen) == 0)
        return 0;
    if (errno == EINPROGRESS) {
        c->connecting = true;
        return 0;
    }
    int e = -errno;
    conn_close(c);
    return e;
}

/* Writes what is left of the request; the rest goes when the socket is writable again. */
static void conn_send(struct rb_worker *w, struct nconn *c);

/*
 * A new connection is up: over TLS the handshake first (driven again by
 * each event until done), then the request. The handshake is reported apart
 * (rb_ntls_stats), not in the request's times: a request that waited for it
 * starts when it is done (a closed loop's request is due then too; an open
 * loop's stays due when it was, so its corrected latency still counts it).
 */
static void conn_go(struct rb_worker *w, struct nconn *c)
{
    struct rb_native *n = w->nat;
    if (n->ep_tls[c->ep] && !c->tls.ssl) {
        const char *host = c->leg ? c->leg->hostport : n->shape.host[c->ep];
        if (rb_ntls_start(n->tls, c->fd, host, (unsigned)(c - n->c), &c->tls)) {
            finish(w, c, CURLE_OUT_OF_MEMORY, "TLS: out of memory (native engine)");
            return;
        }
        c->handshaking = true;
    }
    if (c->handshaking) {
        char msg[300];
        uint64_t now = rb_clock_ns();
        int rc = rb_ntls_handshake(n->tls, &c->tls, now - c->connect_ns, msg, sizeof msg);
        if (rc == -EAGAIN)
            return;
        if (rc) {
            finish(w, c, rc == -EACCES ? CURLE_PEER_FAILED_VERIFICATION : CURLE_SSL_CONNECT_ERROR, msg);
            return;
        }
        c->handshaking = false;
        if (!c->redirects) {
            if (c->r.intended_ns == c->r.start_ns)
                c->r.intended_ns = now;
            c->r.start_ns = now;
        }
    }
    conn_send(w, c);
}

/* A reused connection the server had already closed: connect again and resend once, as libcurl does. */
static bool retry_stale(struct rb_worker *w, struct nconn *c)
{
    if (!c->reused || c->got_bytes)
        return false;
    conn_close(c);
    if (conn_open(w, c) != 0)
        return false;
    c->woff = 0;
    c->r.put_pos = 0;
    if (!c->connecting)
        conn_go(w, c);
    return true;
}

/* What is left to send of c's request (head, then a PUT's body made from the payload), and where it is. */
static size_t pending(struct rb_native *n, struct nconn *c, const char **at)
{
    if (c->woff < c->wlen) {
        *at = c->wbuf + c->woff;
        return c->wlen - c->woff;
    }
    uint64_t left = c->r.put_size - c->r.put_pos;
    size_t len = left < n->rbuf_bytes ? (size_t)left : n->rbuf_bytes;
    if (len)
        rb_payload_fill(c->r.key, c->r.put_pos, n->rbuf, len); /* a short send makes the rest again: it is seekable */
    *at = n->rbuf;
    return len;
}

static void conn_send(struct rb_worker *w, struct nconn *c)
{
    const char *at;
    size_t len;
    while ((len = pending(w->nat, c, &at)) > 0) {
        bool head = c->woff < c->wlen;
        ssize_t k = io_send(c, at, len, MSG_NOSIGNAL | (head && c->r.put_size ? MSG_MORE : 0));
        if (k > 0) {
            if (head)
                c->woff += (size_t)k;
            else
                c->r.put_pos += (uint64_t)k;
            continue;
        }
        if (k < 0 && errno == EAGAIN)
            return;
        if (k < 0 && errno == EINTR)
            continue;
        if (!retry_stale(w, c))
            finish(w, c, CURLE_SEND_ERROR, k < 0 ? strerror(errno) : "send failed");
        return;
    }
}

/* A response was parsed: the request ends, or follows the redirect it got. */
static void follow(struct rb_worker *w, struct nconn *c);
static void complete(struct rb_worker *w, struct nconn *c)
{
    if (c->redirect)
        follow(w, c);
    else
        finish(w, c, CURLE_OK, NULL);
}

/* The connection ended (EOF or error) before the response did. */
static void conn_ended(struct rb_worker *w, struct nconn *c, int err)
{
    if (retry_stale(w, c))
        return;
    if (!err && c->headers_done) {
        /* A body delimited by the close completes now; otherwise it is short. */
        http_parser_execute(&c->p, &w->nat->settings, NULL, 0);
        if (c->complete) {
            conn_close(c); /* the server closed it: a leg's is not pooled, an endpoint's connects again next time */
            complete(w, c);
            return;
        }
    }
    char msg[200];
    snprintf(msg, sizeof msg, "connection %s after %" PRIu64 " body bytes (native engine)",
             err ? strerror(err) : "closed", c->r.body);
    finish(w, c, err ? CURLE_RECV_ERROR : c->headers_done ? CURLE_PARTIAL_FILE : CURLE_GOT_NOTHING, msg);
}

/* Reads and parses until the response is complete or the socket is drained; ev is the epoll event that woke it. */
static void conn_read(struct rb_worker *w, struct nconn *c, uint32_t ev)
{
    struct rb_native *n = w->nat;
    for (;;) {
        ssize_t k = io_recv(c, n->rbuf, n->rbuf_bytes);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && errno == EAGAIN)
            return;
        if (k <= 0) {
            conn_ended(w, c, k < 0 ? errno : 0);
            return;
        }
        if (!c->got_bytes) {
            c->got_bytes = true;
            c->r.response_ns = rb_clock_ns(); /* a PUT's time to first byte (its op row says so) */
            c->ttfb_ns = c->r.response_ns - c->r.start_ns;
        }
        size_t used = http_parser_execute(&c->p, &n->settings, n->rbuf, (size_t)k);
        if (c->complete) {
            complete(w, c);
            return;
        }
        if (used != (size_t)k || HTTP_PARSER_ERRNO(&c->p) != HPE_OK) {
            char msg[200];
            snprintf(msg, sizeof msg, "unparsable response: %s (native engine)",
                     http_errno_description(HTTP_PARSER_ERRNO(&c->p)));
            finish(w, c, CURLE_WEIRD_SERVER_REPLY, msg);
            return;
        }
        /*
         * Edge-triggered: a short read drained the socket, and data arriving
         * later raises a new edge, so no read is spent on EAGAIN. A close
         * that came with this edge raises none: read on to the EOF then.
         */
        if ((size_t)k < n->rbuf_bytes && !c->tls.ssl && !(ev & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
            return; /* (TLS returns a record at a time, and may hold more: read on to EAGAIN) */
    }
}

static void on_event(struct rb_worker *w, struct nconn *c, int fd, uint32_t ev)
{
    if (!c->busy || c->fd < 0 || fd != c->fd)
        return; /* an idle keep-alive connection (or one pooled for redirects): its close shows at its next use */
    if (c->connecting) {
        if (!(ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return;
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) {
            finish(w, c, CURLE_COULDNT_CONNECT, strerror(err));
            return;
        }
        c->connecting = false;
        conn_go(w, c);
        return;
    }
    if (c->handshaking) {
        conn_go(w, c);
        return;
    }
    if (c->woff < c->wlen || c->r.put_pos < c->r.put_size) {
        conn_send(w, c);
        /* Out now: read once, as a server may have answered early (an error) on an edge spent while sending. */
        if (c->busy && c->fd >= 0 && !c->connecting && c->woff >= c->wlen && c->r.put_pos >= c->r.put_size)
            conn_read(w, c, ev);
        return;
    }
    if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP))
        conn_read(w, c, ev);
}

/* ---- requests and the loop ---- */

static void get_ready(struct rb_worker *w, struct rb_req *r, const char *name, uint64_t size, uint64_t *off, uint64_t *len)
{
    rb_xfer_get_range(w, r, name, size, off, len);
    r->put_size = r->put_pos = 0;
}

/* The head carries the body's length; the body is the seeded payload, made as it goes out. */
static void put_ready(struct rb_worker *w, struct rb_req *r, const char *name, uint64_t size, uint64_t *off, uint64_t *len)
{
    r->key = rb_payload_key(w->o->seed, name);
    r->size = r->put_size = size;
    r->put_pos = r->expect_len = r->off = 0;
    r->ranged = false;
    *off = *len = 0;
}

/* DELETE and HEAD: nothing sent, nothing counted but the status. */
static void meta_ready(struct rb_worker *w, struct rb_req *r, const char *name, uint64_t size, uint64_t *off, uint64_t *len)
{
    (void)w;
    (void)name;
    r->key = 0;
    r->size = size;
    r->put_size = r->put_pos = r->expect_len = r->off = 0;
    r->ranged = false;
    *off = *len = 0;
}

static const struct nop native_ops[] = {
    [RB_LOAD_GET] = {"GET", false, false, get_ready},
    [RB_LOAD_PUT] = {"PUT", true, false, put_ready},
    [RB_LOAD_DELETE] = {"DELETE", false, false, meta_ready},
    [RB_LOAD_HEAD] = {"HEAD", false, true, meta_ready},
};

/* Writes v in decimal at p; returns the end. */
static char *put_u64(char *p, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

#define PUT_LIT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) += sizeof(lit) - 1)

/*
 * Writes the head's rest at p, after c's request line ("METHOD path[?query]"
 * whose path and query are given for signing): the version, Host, Range, a
 * PUT's length, the shape's fixed line, the protocol's auth lines, the
 * blank line. Returns 0 or the auth hook's -ENOSPC.
 */
static int head_rest(struct rb_worker *w, struct nconn *c, char *p, const char *path, size_t path_len, const char *query,
                     size_t query_len, const char *host, size_t host_len)
{
    struct rb_native *n = w->nat;
    const struct rb_nshape *sh = &n->shape;
    char *end = c->wbuf + n->wbuf_bytes;
    PUT_LIT(p, " HTTP/1.1\r\nHost: ");
    memcpy(p, host, host_len);
    p += host_len;
    PUT_LIT(p, "\r\n");
    if (c->range_len) {
        PUT_LIT(p, "Range: bytes=");
        p = put_u64(p, c->range_off);
        *p++ = '-';
        p = put_u64(p, c->range_off + c->range_len - 1);
        PUT_LIT(p, "\r\n");
    }
    if (n->op->sends_body) {
        PUT_LIT(p, "Content-Length: ");
        p = put_u64(p, c->r.put_size);
        PUT_LIT(p, "\r\n");
    }
    if (sh->extra_len) {
        memcpy(p, sh->extra, sh->extra_len);
        p += sh->extra_len;
        PUT_LIT(p, "\r\n");
    }
    if (n->auth) {
        const struct rb_nsign sg = {.method = n->op->method, .path = path, .path_len = path_len, .query = query,
                                    .query_len = query_len, .host = host, .host_len = host_len,
                                    .sends_body = n->op->sends_body, .body_key = c->r.key, .body_size = c->r.put_size,
                                    .scratch = n->rbuf, .scratch_len = n->rbuf_bytes};
        int k = n->proto->auth(n->auth, &sg, p, (size_t)(end - p) - 2);
        if (k < 0)
            return k;
        p += k;
    }
    PUT_LIT(p, "\r\n");
    c->wlen = (size_t)(p - c->wbuf);
    c->woff = 0;
    return 0;
}

/*
 * Writes the head of one request of name on c into c->wbuf: request line
 * (the shape's path, the escaped name, its query), Host, a GET's Range, a
 * PUT's length, the shape's fixed line, the protocol's auth lines.
 * Readies c->r through the op. Returns 0, -ENAMETOOLONG or -ENOSPC.
 */
static int build_head(struct rb_worker *w, struct nconn *c, const char *name, uint64_t size)
{
    struct rb_native *n = w->nat;
    const struct rb_nshape *sh = &n->shape;
    char *p = c->wbuf;
    size_t ml = strlen(n->op->method);
    memcpy(p, n->op->method, ml);
    p += ml;
    *p++ = ' ';
    char *path = p;
    memcpy(p, sh->path, sh->path_len);
    p += sh->path_len;
    if (rb_url_escape(name, true, p, REQ_NAME_MAX))
        return -ENAMETOOLONG;
    p += strlen(p);
    size_t path_len = (size_t)(p - path);
    memcpy(p, sh->query, sh->query_len);
    p += sh->query_len;
    n->op->ready(w, &c->r, name, size, &c->range_off, &c->range_len);
    return head_rest(w, c, p, path, path_len, sh->query_len ? sh->query + 1 : "", sh->query_len ? sh->query_len - 1 : 0,
                     sh->host[c->ep], sh->host_len[c->ep]);
}

/* Readies c to read a (new) response: what the last one set is cleared, the parser started again. */
static void response_reset(struct nconn *c)
{
    struct rb_req *r = &c->r;
    r->body = 0;
    r->mismatch = r->err_status = false;
    r->cache = RB_LX_CACHE_ABSENT;
    r->cache_pos = UINT_MAX;
    r->errbody.len = 0; /* ebuf is written by every finish that reports an error */
    r->response_ns = 0;
    http_parser_init(&c->p, HTTP_RESPONSE);
    c->p.data = c;
    c->got_bytes = c->headers_done = c->complete = c->in_value = c->is_loc = c->redirect = false;
    c->hname_len = c->hval_len = c->loc_len = 0;
}

static void resolve(const char *url, struct sockaddr_storage *addr, socklen_t *alen, char *hostport, size_t hplen);

/* The pool of hostport ("HOST:PORT"), made (and the host resolved, once) at its first use; NULL when none can be. */
static struct npool *pool_get(struct rb_worker *w, const char *scheme, const char *hostport, size_t len)
{
    struct rb_native *n = w->nat;
    for (unsigned i = 0; i < n->npools; i++)
        if (n->pools[i].hostport_len == len && memcmp(n->pools[i].hostport, hostport, len) == 0)
            return &n->pools[i];
    if (len >= RB_NHOST_MAX || n->npools == NPOOL_MAX)
        return NULL;
    if (!n->pools && !(n->pools = calloc(NPOOL_MAX, sizeof *n->pools)))
        return NULL;
    struct npool *pl = &n->pools[n->npools];
    if (!(pl->idle = calloc(w->nreq, sizeof *pl->idle)))
        return NULL;
    memcpy(pl->hostport, hostport, len);
    pl->hostport[len] = '\0';
    pl->hostport_len = len;
    char url[RB_NHOST_MAX + 8], hp[RB_NHOST_MAX];
    snprintf(url, sizeof url, "%s%s", scheme, pl->hostport);
    resolve(url, &pl->addr, &pl->alen, hp, sizeof hp);
    if (!pl->alen) {
        free(pl->idle);
        pl->idle = NULL;
        return NULL;
    }
    n->npools++;
    return pl;
}

/*
 * Follows c's redirect, as libcurl does with CURLOPT_FOLLOWLOCATION: the
 * same method and body to the Location, on a keep-alive connection of that
 * host's pool (AIStore: proxy -> target), counted in redirects. Past
 * --max-redirects: too_many_redirects; a Location of another scheme is
 * refused (class other), on libcurl too (CURLOPT_REDIR_PROTOCOLS_STR).
 */
static void follow(struct rb_worker *w, struct nconn *c)
{
    struct rb_native *n = w->nat;
    if (c->redirects >= (unsigned)w->o->max_redirects) {
        char msg[100];
        snprintf(msg, sizeof msg, "more than %ld redirects (native engine)", w->o->max_redirects);
        finish(w, c, CURLE_TOO_MANY_REDIRECTS, msg);
        return;
    }
    if (c->loc_len >= LOC_MAX) {
        finish(w, c, CURLE_WEIRD_SERVER_REPLY, "a redirect's Location is too long (native engine)");
        return;
    }
    c->loc[c->loc_len] = '\0';
    const char *loc = c->loc, *path, *hp;
    size_t hp_len;
    const char *scheme = n->ep_tls[c->ep] ? "https://" : "http://";
    size_t sl = strlen(scheme);
    if (strncasecmp(loc, scheme, sl) == 0) {
        hp = loc + sl;
        hp_len = strcspn(hp, "/?#");
        path = hp + hp_len;
    } else if (loc[0] == '/') {
        hp = c->leg ? c->leg->hostport : n->shape.host[c->ep];
        hp_len = c->leg ? c->leg->hostport_len : n->shape.host_len[c->ep];
        path = loc;
    } else {
        char msg[200], shown[100];
        rb_target_escape(loc, shown, sizeof shown);
        snprintf(msg, sizeof msg, "redirect to \"%s\": not an %s location (native engine)", shown, scheme);
        finish(w, c, CURLE_UNSUPPORTED_PROTOCOL, msg);
        return;
    }
    /* The connection the redirect came on stays alive for the next request: its endpoint's or its pool's. */
    bool keep = http_should_keep_alive(&c->p) && !c->tls.ssl; /* a TLS connection's state is the slot's: closed */
    if (c->leg) {
        leg_end(w, c, keep);
    } else if (!keep) {
        conn_close(c);
    }
    c->home_fd = c->fd;
    c->fd = -1;
    c->leg = pool_get(w, scheme, hp, hp_len);
    if (!c->leg) {
        c->fd = c->home_fd;
        c->home_fd = -1;
        finish(w, c, CURLE_COULDNT_RESOLVE_HOST, "cannot reach a redirect's host (native engine)");
        return;
    }
    c->redirects++;
    /* The head again: method, the Location's path and query as sent, its host (signed again when signing). */
    char *p = c->wbuf;
    size_t ml = strlen(n->op->method), pl = strcspn(path, "#");
    memcpy(p, n->op->method, ml);
    p += ml;
    *p++ = ' ';
    char *np = p;
    if (pl == 0)
        *p++ = '/';
    memcpy(p, path, pl);
    p += pl;
    size_t path_len = strcspn(np, "?");
    if (path_len > (size_t)(p - np))
        path_len = (size_t)(p - np);
    const char *q = np + path_len;
    size_t qlen = (size_t)(p - q);
    int rc = head_rest(w, c, p, np, path_len, qlen ? q + 1 : "", qlen ? qlen - 1 : 0, c->leg->hostport,
                       c->leg->hostport_len);
    if (rc) {
        finish(w, c, CURLE_OUT_OF_MEMORY, "a redirect's request does not fit (native engine)");
        return;
    }
    response_reset(c);
    c->r.off = c->range_off;
    c->r.put_pos = 0;
    struct npool *leg = c->leg;
    if (leg->nidle) {
        c->fd = leg->idle[--leg->nidle];
        c->reused = true;
        c->connecting = false;
        /* The pooled connection was last some other slot's: its events come to this one now. */
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.u64 = ev_tag(n, c, c->fd)};
        epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
        conn_send(w, c);
        return;
    }
    int e = conn_open(w, c);
    if (e)
        finish(w, c, CURLE_COULDNT_CONNECT, strerror(-e));
    else if (!c->connecting)
        conn_go(w, c);
}

/* Starts a request for name on a free connection, its head written afresh (build_head). */
static int issue(struct rb_worker *w, const char *name, uint64_t size, uint64_t intended_ns)
{
    struct rb_native *n = w->nat;
    const struct rb_load_opts *o = w->o;
    struct nconn *c = &n->c[w->free_slots[--w->nfree]];
    struct rb_req *r = &c->r;
    int hrc = build_head(w, c, name, size);
    if (hrc) {
        w->nfree++;
        return hrc;
    }
    /* The name may live in the worker's one buffer: the request keeps its own copy for the completion's logs. */
    size_t len = strnlen(name, RB_OBJSET_NAME_MAX);
    memcpy(r->name_buf, name, len);
    r->name_buf[len] = '\0';
    r->name = r->name_buf;
    c->idx = w->cur_idx;
    c->redirects = 0;
    response_reset(c);
    r->start_ns = rb_clock_ns();
    r->intended_ns = intended_ns ? intended_ns : r->start_ns;
    if (o->log_fd >= 0)
        r->start_wall_ns = rb_clock_wall_ns();
    c->busy = true;
    w->issued++;
    w->last_issue_ns = r->start_ns;
    if (c->fd >= 0) {
        c->reused = true;
        conn_send(w, c);
        return 0;
    }
    if (!n->alen[c->ep]) {
        finish(w, c, CURLE_COULDNT_RESOLVE_HOST, "could not resolve the endpoint's host (native engine)");
        return 0;
    }
    int e = conn_open(w, c);
    if (e)
        finish(w, c, CURLE_COULDNT_CONNECT, strerror(-e));
    else if (!c->connecting)
        conn_go(w, c);
    return 0;
}

/* Ends every request older than --timeout; called every scan_ns rather than arming a timer per request. */
static void expire(struct rb_worker *w, uint64_t now)
{
    for (unsigned i = 0; i < w->nreq; i++) {
        struct nconn *c = &w->nat->c[i];
        if (c->busy && now - c->r.start_ns >= w->o->timeout_ns) {
            char msg[100];
            snprintf(msg, sizeof msg, "no response within %" PRIu64 " ms (native engine)",
                     (uint64_t)(w->o->timeout_ns / RB_NS_PER_MS));
            finish(w, c, CURLE_OPERATION_TIMEDOUT, msg);
        }
    }
}

int rb_native_run(struct rb_worker *w, const atomic_bool *stop, const volatile int *stop2)
{
    struct rb_native *n = w->nat;
    struct epoll_event evs[RB_EPOLL_BATCH];
    uint64_t drain_until = 0;
    for (;;) {
        if (rb_worker_drained(w, stop, stop2, &drain_until))
            break;
        int rc = rb_worker_refill(w, issue);
        if (rc)
            return rc;
        if (w->exhausted && w->nfree == w->nreq)
            break;
        rb_worker_tick(w);
        uint64_t now = rb_clock_ns(), until = now + IDLE_POLL_NS;
        if (w->o->timeout_ns) {
            if (now >= n->next_scan_ns) {
                expire(w, now);
                n->next_scan_ns = now + n->scan_ns;
                continue;
            }
            if (n->next_scan_ns < until)
                until = n->next_scan_ns;
        }
        if (w->period_ns && w->nfree && !w->exhausted && w->next_ns < until)
            until = w->next_ns;
        if (drain_until && drain_until < until)
            until = drain_until;
        int k = rb_worker_wait(w, evs, until > now ? until - now : 0);
        if (k < 0 && errno != EINTR) {
            rb_error("epoll_wait: %s", strerror(errno));
            return -errno;
        }
        for (int i = 0; i < k; i++) {
            uint64_t tag = evs[i].data.u64;
            if (tag == RB_EV_WAKE)
                rb_worker_eat_wake(w);
            else if ((uint32_t)tag < w->nreq)
                on_event(w, &n->c[(uint32_t)tag], (int)(tag >> 32), evs[i].events);
        }
    }
    if (n->tls) {
        const struct rb_ntls_stats *ts = rb_ntls_stats(n->tls);
        if (ts->handshakes)
            rb_info("TLS (native engine, thread %u): %" PRIu64 " handshakes, %" PRIu64 " resumed, %" PRIu64
                    " on kernel TLS, %.3f ms each on average (connect included), outside the request times",
                    w->id, ts->handshakes, ts->resumed, ts->ktls, (double)ts->handshake_ns / (double)ts->handshakes / 1e6);
    }
    /* Requests still in flight when the drain ran out are counted as abandoned, never dropped; their connections closed. */
    uint64_t now = rb_clock_ns();
    for (unsigned i = 0; i < w->nreq; i++)
        if (n->c[i].busy) {
            leg_end(w, &n->c[i], false);
            conn_close(&n->c[i]);
            n->c[i].busy = false;
            w->free_slots[w->nfree++] = i;
            rb_xfer_abandon(w, NULL, n->c[i].r.name, n->c[i].r.intended_ns, now);
        }
    return 0;
}

/* ---- set-up ---- */

/* Resolves endpoint url ("http://HOST[:PORT]") once; on failure leaves *alen 0 (requests fail as connect errors). */
static void resolve(const char *url, struct sockaddr_storage *addr, socklen_t *alen, char *hostport, size_t hplen)
{
    const char *hp = strstr(url, "://");
    hp = hp ? hp + 3 : url;
    snprintf(hostport, hplen, "%s", hp);
    char host[512], port[16];
    snprintf(port, sizeof port, "%s", strncmp(url, "https:", 6) == 0 ? "443" : "80");
    const char *colon = strrchr(hp, ':');
    if (hp[0] == '[') {
        const char *end = strchr(hp, ']');
        snprintf(host, sizeof host, "%.*s", end ? (int)(end - hp - 1) : 0, hp + 1);
        colon = end && end[1] == ':' ? end + 1 : NULL;
    } else {
        snprintf(host, sizeof host, "%.*s", colon ? (int)(colon - hp) : (int)strlen(hp), hp);
    }
    if (colon)
        snprintf(port, sizeof port, "%s", colon + 1);
    /* "localhost" and "*.localhost" are the loopback (RFC 6761), as libcurl resolves them, without asking the
     * resolver: a fresh Debian root may have no /etc/hosts entry for them, or list ::1 first while the server
     * listens on 127.0.0.1 only. */
    size_t hl = strlen(host);
    if (strcasecmp(host, "localhost") == 0 || (hl > 10 && strcasecmp(host + hl - 10, ".localhost") == 0))
        snprintf(host, sizeof host, "127.0.0.1");
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    *alen = 0;
    if (getaddrinfo(host, port, &hints, &ai) == 0 && ai && ai->ai_addrlen <= sizeof *addr) {
        memcpy(addr, ai->ai_addr, ai->ai_addrlen);
        *alen = ai->ai_addrlen;
    }
    if (ai)
        freeaddrinfo(ai);
}

int rb_native_new(struct rb_worker *w, size_t ep0)
{
    const struct rb_load_opts *o = w->o;
    const struct rb_target *t = o->target;
    struct rb_native *n = calloc(1, sizeof *n);
    if (!n)
        return -ENOMEM;
    w->nat = n;
    n->op = &native_ops[o->op];
    n->proto = rb_nproto_for(rb_target_scheme(t));
    if (!n->proto)
        return -EINVAL;
    int rc = n->proto->shape(t, &n->shape);
    if (rc)
        return rc;
    if (n->proto->auth_new && (rc = n->proto->auth_new(&n->auth, t)))
        return rc;
    size_t neps = rb_target_endpoint_count(t), host_max = 0;
    for (size_t e = 0; e < neps; e++) {
        char hp[600];
        resolve(t->endpoints[e], &n->addr[e], &n->alen[e], hp, sizeof hp);
        n->ep_tls[e] = strncmp(t->endpoints[e], "https:", 6) == 0;
        if (n->ep_tls[e] && !n->tls) {
            char err[200];
            if ((rc = rb_ntls_new(&n->tls, w->nreq, t->insecure, err, sizeof err))) {
                rb_error("%s", err);
                return rc;
            }
        }
        host_max = n->shape.host_len[e] > host_max ? n->shape.host_len[e] : host_max;
    }
    /*
     * One read buffer for the worker, not one per connection: the loop reads
     * one socket at a time and the parser keeps no pointer into it, so big
     * reads for big objects cost no memory per connection, and at 1,024
     * connections the bytes read stay in cache (per-connection buffers were
     * 16 MiB of them).
     */
    n->rbuf_bytes = 256u << 10;
    /* The longer of a request's own path and a redirect's Location, to the longer of its host and a pool's. */
    size_t path_max = n->shape.path_len + REQ_NAME_MAX + n->shape.query_len;
    n->wbuf_bytes = REQ_FIXED_MAX + (path_max > LOC_MAX ? path_max : LOC_MAX) + RB_NHOST_MAX + host_max +
                    n->shape.extra_len + (n->auth ? REQ_AUTH_MAX + 2 * (t->token_header ? strlen(t->token_header) : 0) : 0);
    n->c = calloc(w->nreq, sizeof *n->c);
    n->rbuf = malloc(n->rbuf_bytes);
    n->slab = malloc(w->nreq * n->wbuf_bytes);
    if (!n->c || !n->rbuf || !n->slab)
        return -ENOMEM;
    for (unsigned i = 0; i < w->nreq; i++) {
        struct nconn *c = &n->c[i];
        c->fd = c->home_fd = -1;
        c->ep = (unsigned)((ep0 + i) % neps);
        c->verify = o->verify && o->op == RB_LOAD_GET; /* a PUT's response body is not the payload */
        c->no_body = n->op->no_body;
        c->wbuf = n->slab + (size_t)i * n->wbuf_bytes;
        c->r.w = w;
        c->r.errbody.limit = 2048 + 1;
    }
    http_parser_settings_init(&n->settings);
    n->settings.on_headers_complete = on_headers_complete;
    n->settings.on_body = on_body;
    n->settings.on_message_complete = on_message_complete;
    /* As libcurl is set up (transfer.c, target_ais.c): AIStore's proxy redirects every object request. */
    n->follow = o->max_redirects > 0 || strcmp(rb_target_scheme(t), "ais") == 0;
    if (o->cache_header || n->follow) {
        n->settings.on_header_field = on_header_field;
        n->settings.on_header_value = on_header_value;
    }
    n->scan_ns = o->timeout_ns / 20;
    n->scan_ns = n->scan_ns < RB_NS_PER_MS ? RB_NS_PER_MS : n->scan_ns > 100 * RB_NS_PER_MS ? 100 * RB_NS_PER_MS : n->scan_ns;
    return 0;
}

void rb_native_free(struct rb_worker *w)
{
    struct rb_native *n = w->nat;
    if (!n)
        return;
    for (unsigned i = 0; n->c && i < w->nreq; i++) {
        leg_end(w, &n->c[i], false);
        conn_close(&n->c[i]);
        rb_buf_free(&n->c[i].r.errbody);
    }
    if (n->proto && n->proto->auth_free)
        n->proto->auth_free(n->auth);
    rb_ntls_free(n->tls);
    for (unsigned i = 0; n->pools && i < n->npools; i++) {
        for (unsigned j = 0; j < n->pools[i].nidle; j++)
            close(n->pools[i].idle[j]);
        free(n->pools[i].idle);
    }
    free(n->pools);
    free(n->c);
    free(n->rbuf);
    free(n->slab);
    free(n);
    w->nat = NULL;
}
