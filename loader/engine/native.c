/* The native engine: plain http:// GETs and PUTs on our own keep-alive sockets, one epoll loop per worker, http_parser (wrk's design). */
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
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <http_parser.h>

#include "payload_int.h"
#include "railbench/cli.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "worker_int.h"

#define IDLE_POLL_NS (100 * RB_NS_PER_MS)
#define REQ_HEAD_MAX 1400      /* "GET <base>/" and " HTTP/1.1\r\nHost: ...\r\n\r\n" (PUT: and the length) */
#define REQ_NAME_MAX (3 * 1024 + 1)
#define HDR_MAX 128            /* captured header name and value (cache-status counting) */

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
    int fd;                    /* -1: closed; the next request connects */
    unsigned ep;
    bool verify, busy, connecting, reused, got_bytes, headers_done, complete, in_value;
    size_t wlen, woff;
    uint64_t ttfb_ns;
    uint64_t idx;              /* the object's index in its set: what a put that cleans up notes as written */
    char *wbuf;                /* request bytes: head prefix, escaped name, tail */
    http_parser p;
    struct req r;
    size_t hname_len, hval_len;
    char hname[HDR_MAX], hval[HDR_MAX];
};

/*
 * What differs between GET and PUT, chosen once per worker: the method, the
 * head's last lines, and what a request readies before it goes out. A PUT's
 * body follows its head from the payload (r.put_pos of r.put_size); a GET
 * has none (put_size 0), so sending needs no branch on the op.
 */
struct nop {
    const char *method, *tail_end; /* tail_end closes the head after "Host: ..." */
    /* Writes the rest of the head at p (PUT: the body's length) and readies r; returns the head's new end. */
    char *(*ready)(const struct rb_load_opts *o, struct req *r, char *p, const char *name, uint64_t size);
};

/* A worker's native state; endpoints are resolved once, request heads built once per connection. */
struct rb_native {
    const struct nop *op;
    struct nconn *c;
    char *rbuf;                /* the read buffer (rbuf_bytes): a response is parsed as it arrives, nothing keeps it */
    size_t rbuf_bytes;
    char *slab;                /* every connection's request buffer, in one allocation */
    http_parser_settings settings;
    struct sockaddr_storage addr[RB_TARGET_MAX_ENDPOINTS];
    socklen_t alen[RB_TARGET_MAX_ENDPOINTS];
    char prefix[REQ_HEAD_MAX];             /* "GET <base_path>/" */
    char tail[RB_TARGET_MAX_ENDPOINTS][REQ_HEAD_MAX]; /* " HTTP/1.1\r\nHost: <host:port>\r\n\r\n" */
    size_t prefix_len, tail_len[RB_TARGET_MAX_ENDPOINTS];
    uint64_t next_scan_ns, scan_ns;        /* timeouts are checked every scan_ns, not per request */
};

bool rb_engine_native_fits(const struct rb_load_opts *o, const char **why)
{
    const char *w = NULL;
    if (strcmp(rb_target_scheme(o->target), "http") != 0)
        w = "plain http:// targets only (s3, ais and https go through libcurl)";
    else if (o->op != RB_LOAD_GET && o->op != RB_LOAD_PUT)
        w = "GET and PUT only (delete and stat go through libcurl)";
    else if (o->mix)
        w = "load get and put only (load mixed's requests go through libcurl)";
    else if (o->range_len || o->random_range_len)
        w = "whole objects only (--range and --random-range go through libcurl)";
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
    if (c->hname_len >= HDR_MAX || c->hval_len >= HDR_MAX)
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
        c->in_value = false;
        c->hname_len = c->hval_len = 0;
    }
    append(c->hname, &c->hname_len, at, n);
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t n)
{
    struct nconn *c = p->data;
    c->in_value = true;
    append(c->hval, &c->hval_len, at, n);
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    struct nconn *c = p->data;
    if (c->in_value)
        header_done(c);
    c->headers_done = true;
    c->r.err_status = p->status_code >= 300;
    return 0;
}

/* The body as it streams: verified in place against the payload, or kept (its start) when it is an error's. */
static int on_body(http_parser *p, const char *at, size_t n)
{
    struct nconn *c = p->data;
    struct req *r = &c->r;
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
    if (c->fd >= 0)
        close(c->fd); /* leaves the epoll set with it */
    c->fd = -1;
    c->connecting = false;
}

/* Ends c's request with rc (CURLE_OK: a response was parsed) and frees its slot; closes the connection unless it stays alive. */
static void finish(struct worker *w, struct nconn *c, CURLcode rc, const char *msg)
{
    uint64_t now = rb_clock_ns();
    long status = rc == CURLE_OK ? (long)c->p.status_code : 0;
    if (msg)
        snprintf(c->r.ebuf, sizeof c->r.ebuf, "%s", msg);
    else if (rc != CURLE_OK)
        c->r.ebuf[0] = '\0';
    if (rc != CURLE_OK || !http_should_keep_alive(&c->p))
        conn_close(c);
    c->busy = false;
    w->free_slots[w->nfree++] = (unsigned)(c - w->nat->c);
    uint64_t errors = w->local->errors;
    rb_xfer_record(w, &c->r, rc, status, c->got_bytes ? c->ttfb_ns : 0, now - c->r.start_ns, 0, now);
    if (w->o->track_written && w->local->errors == errors)
        rb_worker_wrote(w, c->idx); /* a put that cleans up deletes what it wrote, on either engine */
}

static int conn_open(struct worker *w, struct nconn *c)
{
    struct rb_native *n = w->nat;
    c->fd = socket(n->addr[c->ep].ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return -errno;
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* Edge-triggered, both directions, once per connection: no epoll_ctl per request. */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.u64 = (uint64_t)(c - n->c)};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
        int e = -errno;
        conn_close(c);
        return e;
    }
    c->reused = false;
    c->connecting = false;
    if (connect(c->fd, (struct sockaddr *)&n->addr[c->ep], n->alen[c->ep]) == 0)
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
static void conn_send(struct worker *w, struct nconn *c);

/* A reused connection the server had already closed: connect again and resend once, as libcurl does. */
static bool retry_stale(struct worker *w, struct nconn *c)
{
    if (!c->reused || c->got_bytes)
        return false;
    conn_close(c);
    if (conn_open(w, c) != 0)
        return false;
    c->woff = 0;
    c->r.put_pos = 0;
    if (!c->connecting)
        conn_send(w, c);
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

static void conn_send(struct worker *w, struct nconn *c)
{
    const char *at;
    size_t len;
    while ((len = pending(w->nat, c, &at)) > 0) {
        bool head = c->woff < c->wlen;
        ssize_t k = send(c->fd, at, len, MSG_NOSIGNAL | (head && c->r.put_size ? MSG_MORE : 0));
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

/* The connection ended (EOF or error) before the response did. */
static void conn_ended(struct worker *w, struct nconn *c, int err)
{
    if (retry_stale(w, c))
        return;
    if (!err && c->headers_done) {
        /* A body delimited by the close completes now; otherwise it is short. */
        http_parser_execute(&c->p, &w->nat->settings, NULL, 0);
        if (c->complete) {
            finish(w, c, CURLE_OK, NULL);
            conn_close(c);
            return;
        }
    }
    char msg[200];
    snprintf(msg, sizeof msg, "connection %s after %" PRIu64 " body bytes (native engine)",
             err ? strerror(err) : "closed", c->r.body);
    finish(w, c, err ? CURLE_RECV_ERROR : c->headers_done ? CURLE_PARTIAL_FILE : CURLE_GOT_NOTHING, msg);
}

/* Reads and parses until the response is complete or the socket is drained; ev is the epoll event that woke it. */
static void conn_read(struct worker *w, struct nconn *c, uint32_t ev)
{
    struct rb_native *n = w->nat;
    for (;;) {
        ssize_t k = recv(c->fd, n->rbuf, n->rbuf_bytes, 0);
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
            finish(w, c, CURLE_OK, NULL);
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
        if ((size_t)k < n->rbuf_bytes && !(ev & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
            return;
    }
}

static void on_event(struct worker *w, struct nconn *c, uint32_t ev)
{
    if (!c->busy || c->fd < 0)
        return; /* an idle keep-alive connection: its close shows at the next request */
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

static char *get_ready(const struct rb_load_opts *o, struct req *r, char *p, const char *name, uint64_t size)
{
    r->key = o->verify ? rb_payload_key(o->seed, name) : 0;
    r->size = r->expect_len = size; /* whole objects: a known size is the length a verified GET must get */
    r->put_size = r->put_pos = 0;
    return p;
}

/* The head ends with the body's length; the body is the seeded payload, made as it goes out. */
static char *put_ready(const struct rb_load_opts *o, struct req *r, char *p, const char *name, uint64_t size)
{
    r->key = rb_payload_key(o->seed, name);
    r->size = r->put_size = size;
    r->put_pos = r->expect_len = 0;
    p += snprintf(p, 24, "%" PRIu64, size);
    memcpy(p, "\r\n\r\n", 4);
    return p + 4;
}

static const struct nop get_op = {"GET", "Accept: */*\r\n\r\n", get_ready};
static const struct nop put_op = {"PUT", "Content-Length: ", put_ready};

/* Starts a GET or PUT of name on a free connection: the request head is the connection's prefix, the escaped name, its tail (and a PUT's length). */
static int issue(struct worker *w, const char *name, uint64_t size, uint64_t intended_ns)
{
    struct rb_native *n = w->nat;
    const struct rb_load_opts *o = w->o;
    struct nconn *c = &n->c[w->free_slots[--w->nfree]];
    struct req *r = &c->r;
    char *p = c->wbuf + n->prefix_len;
    if (rb_url_escape(name, true, p, REQ_NAME_MAX)) {
        w->nfree++;
        return -ENAMETOOLONG;
    }
    p += strlen(p);
    memcpy(p, n->tail[c->ep], n->tail_len[c->ep]);
    p = n->op->ready(o, r, p + n->tail_len[c->ep], name, size);
    c->wlen = (size_t)(p - c->wbuf);
    c->woff = 0;
    /* The name may live in the worker's one buffer: the request keeps its own copy for the completion's logs. */
    size_t len = strnlen(name, RB_OBJSET_NAME_MAX);
    memcpy(r->name_buf, name, len);
    r->name_buf[len] = '\0';
    r->name = r->name_buf;
    c->idx = w->cur_idx;
    r->body = r->off = 0;
    r->mismatch = r->err_status = false;
    r->cache = RB_LX_CACHE_ABSENT;
    r->cache_pos = UINT_MAX;
    r->errbody.len = 0; /* ebuf is written by every finish that reports an error */
    r->response_ns = 0;
    http_parser_init(&c->p, HTTP_RESPONSE);
    c->p.data = c;
    c->got_bytes = c->headers_done = c->complete = c->in_value = false;
    c->hname_len = c->hval_len = 0;
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
        conn_send(w, c);
    return 0;
}

/* Ends every request older than --timeout; called every scan_ns rather than arming a timer per request. */
static void expire(struct worker *w, uint64_t now)
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

int rb_native_run(struct worker *w, const atomic_bool *stop, const volatile int *stop2)
{
    struct rb_native *n = w->nat;
    struct epoll_event evs[EPOLL_BATCH];
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
            if (evs[i].data.u64 == EV_WAKE)
                rb_worker_eat_wake(w);
            else if (evs[i].data.u64 < w->nreq)
                on_event(w, &n->c[evs[i].data.u64], evs[i].events);
        }
    }
    /* Requests still in flight when the drain ran out are counted as abandoned, never dropped; their connections closed. */
    uint64_t now = rb_clock_ns();
    for (unsigned i = 0; i < w->nreq; i++)
        if (n->c[i].busy) {
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
    char host[512], port[16] = "80";
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
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    *alen = 0;
    if (getaddrinfo(host, port, &hints, &ai) == 0 && ai && ai->ai_addrlen <= sizeof *addr) {
        memcpy(addr, ai->ai_addr, ai->ai_addrlen);
        *alen = ai->ai_addrlen;
    }
    if (ai)
        freeaddrinfo(ai);
}

int rb_native_new(struct worker *w, size_t ep0)
{
    const struct rb_load_opts *o = w->o;
    const struct rb_target *t = o->target;
    struct rb_native *n = calloc(1, sizeof *n);
    if (!n)
        return -ENOMEM;
    w->nat = n;
    n->op = o->op == RB_LOAD_PUT ? &put_op : &get_op;
    int k = snprintf(n->prefix, sizeof n->prefix, "%s %s/", n->op->method, t->base_path);
    if (k < 0 || (size_t)k >= sizeof n->prefix)
        return -ENAMETOOLONG;
    n->prefix_len = (size_t)k;
    size_t neps = rb_target_endpoint_count(t);
    for (size_t e = 0; e < neps; e++) {
        char hp[600];
        resolve(t->endpoints[e], &n->addr[e], &n->alen[e], hp, sizeof hp);
        k = snprintf(n->tail[e], sizeof n->tail[e], " HTTP/1.1\r\nHost: %s\r\n%s", hp, n->op->tail_end);
        if (k < 0 || (size_t)k >= sizeof n->tail[e])
            return -ENAMETOOLONG;
        n->tail_len[e] = (size_t)k;
    }
    /*
     * One read buffer for the worker, not one per connection: the loop reads
     * one socket at a time and the parser keeps no pointer into it, so big
     * reads for big objects cost no memory per connection, and at 1,024
     * connections the bytes read stay in cache (per-connection buffers were
     * 16 MiB of them).
     */
    n->rbuf_bytes = 256u << 10;
    size_t wbuf_bytes = n->prefix_len + REQ_NAME_MAX + REQ_HEAD_MAX + 32; /* 32: a PUT's length and blank line */
    n->c = calloc(w->nreq, sizeof *n->c);
    n->rbuf = malloc(n->rbuf_bytes);
    n->slab = malloc(w->nreq * wbuf_bytes);
    if (!n->c || !n->rbuf || !n->slab)
        return -ENOMEM;
    for (unsigned i = 0; i < w->nreq; i++) {
        struct nconn *c = &n->c[i];
        c->fd = -1;
        c->ep = (unsigned)((ep0 + i) % neps);
        c->verify = o->verify && o->op == RB_LOAD_GET; /* a PUT's response body is not the payload */
        c->wbuf = n->slab + (size_t)i * wbuf_bytes;
        memcpy(c->wbuf, n->prefix, n->prefix_len);
        c->r.w = w;
        c->r.errbody.limit = 2048 + 1;
    }
    http_parser_settings_init(&n->settings);
    n->settings.on_headers_complete = on_headers_complete;
    n->settings.on_body = on_body;
    n->settings.on_message_complete = on_message_complete;
    if (o->cache_header) {
        n->settings.on_header_field = on_header_field;
        n->settings.on_header_value = on_header_value;
    }
    n->scan_ns = o->timeout_ns / 20;
    n->scan_ns = n->scan_ns < RB_NS_PER_MS ? RB_NS_PER_MS : n->scan_ns > 100 * RB_NS_PER_MS ? 100 * RB_NS_PER_MS : n->scan_ns;
    return 0;
}

void rb_native_free(struct worker *w)
{
    struct rb_native *n = w->nat;
    if (!n)
        return;
    for (unsigned i = 0; n->c && i < w->nreq; i++) {
        conn_close(&n->c[i]);
        rb_buf_free(&n->c[i].r.errbody);
    }
    free(n->c);
    free(n->rbuf);
    free(n->slab);
    free(n);
    w->nat = NULL;
}
