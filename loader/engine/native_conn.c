/* The native engine's connections: connect (TLS too), send, read and parse a response, follow redirects on pooled legs. */
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
#include <unistd.h>

#include "native_conn_int.h"
#include "native_resp_int.h"
#include "payload_int.h"
#include "railbench/clock.h"

/* ---- parser callbacks (p->data is the connection) ---- */

/* A whole header has been seen: count it when it names the cache status. */
static void header_done(struct rb_nconn *c)
{
    char line[2 * RB_NHDR_MAX + 2];
    if (c->hname_len == 4 && strncasecmp(c->hname, "etag", 4) == 0 && c->hval_len < RB_ETAG_MAX) {
        memcpy(c->r.etag, c->hval, c->hval_len); /* a multipart part's, for the completion */
        c->r.etag[c->hval_len] = '\0';
    }
    if (!c->r.w->o->cache_header || c->hname_len >= RB_NHDR_MAX || c->hval_len >= RB_NHDR_MAX)
        return; /* longer than any cache-status header: not one */
    memcpy(line, c->hname, c->hname_len);
    line[c->hname_len] = ':';
    memcpy(line + c->hname_len + 1, c->hval, c->hval_len);
    rb_xfer_cache_header(&c->r, line, c->hname_len + 1 + c->hval_len);
}

static void append(char *buf, size_t *len, const char *at, size_t n)
{
    if (*len + n < RB_NHDR_MAX)
        memcpy(buf + *len, at, n);
    *len += n; /* past RB_NHDR_MAX: marks the header as too long to matter */
}

static int on_header_field(http_parser *p, const char *at, size_t n)
{
    struct rb_nconn *c = p->data;
    if (!c->all_headers && p->status_code / 100 != 3)
        return 0; /* only a redirect's Location is wanted: a plain answer's headers are not copied */
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
    struct rb_nconn *c = p->data;
    if (!c->all_headers && p->status_code / 100 != 3)
        return 0;
    if (!c->in_value) {
        /* Only a redirect's Location is kept, and only where redirects are followed (the callback is set then). */
        c->is_loc = p->status_code / 100 == 3 && c->hname_len == 8 && strncasecmp(c->hname, "location", 8) == 0;
        if (c->is_loc)
            c->loc_len = 0;
    }
    c->in_value = true;
    append(c->hval, &c->hval_len, at, n);
    if (c->is_loc) {
        if (c->loc_len + n < RB_NLOC_MAX)
            memcpy(c->loc + c->loc_len, at, n);
        c->loc_len += n; /* past RB_NLOC_MAX: too long to follow */
    }
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    struct rb_nconn *c = p->data;
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
    struct rb_nconn *c = p->data;
    struct rb_req *r = &c->r;
    if (r->err_status || c->keep_body) {
        /* Its start (errbody.limit - 1 bytes: 2 KiB for an error's words; a listing's page is kept whole). */
        size_t cap = r->errbody.limit - 1;
        if (r->errbody.len < cap)
            rb_buf_append(&r->errbody, at, n < cap - r->errbody.len ? n : cap - r->errbody.len);
        else if (c->keep_body)
            r->errbody.oom = true; /* more than it may hold */
        return 0;
    }
    if (c->verify && !r->mismatch && rb_payload_verify(&r->w->o->payload, r->key, r->off, at, n) != n)
        r->mismatch = true;
    if (r->w->tars)
        rb_tar_body(r, at, n);
    if (r->w->o->body)
        r->w->o->body(r->name, r->off, at, n);
    r->off += n;
    r->body += n;
    return 0;
}

static int on_message_complete(http_parser *p)
{
    struct rb_nconn *c = p->data;
    c->complete = true;
    http_parser_pause(p, 1); /* one response per request: anything after it is not ours */
    return 0;
}

void rb_nconn_parser_settings(http_parser_settings *s, bool headers)
{
    http_parser_settings_init(s);
    s->on_headers_complete = on_headers_complete;
    s->on_body = on_body;
    s->on_message_complete = on_message_complete;
    if (headers) {
        s->on_header_field = on_header_field;
        s->on_header_value = on_header_value;
    }
}

void rb_nconn_reset(struct rb_nconn *c)
{
    struct rb_req *r = &c->r;
    r->body = 0;
    r->mismatch = r->err_status = r->resent = false;
    r->cache = RB_LX_CACHE_ABSENT;
    r->cache_pos = UINT_MAX;
    r->errbody.len = 0; /* ebuf is written by every finish that reports an error */
    r->response_ns = 0;
    http_parser_init(&c->p, HTTP_RESPONSE);
    c->p.data = c;
    c->got_bytes = c->headers_done = c->complete = c->in_value = c->is_loc = c->redirect = c->plain = false;
    c->hname_len = c->hval_len = c->loc_len = 0;
}

/* Whether the response's connection stays alive after it, whichever reader read the head. */
static bool resp_keep_alive(const struct rb_nconn *c)
{
    return c->plain || http_should_keep_alive(&c->p); /* a plain head says HTTP/1.1 and no Connection: close */
}

/* ---- connections ---- */

/* Closes fd, one of w's connections: it leaves the epoll set with it; io_uring's requests on it end first. */
static void fd_close(struct rb_worker *w, int fd)
{
    if (w->nat->ur)
        w->nat->ring->close(w, fd);
    else
        close(fd);
}

void rb_nconn_close(struct rb_nconn *c)
{
    rb_ntls_end(&c->tls);
    if (c->fd >= 0)
        fd_close(c->r.w, c->fd);
    c->fd = -1;
    c->connecting = c->handshaking = c->sending = false;
}

/* Sends on c's socket, through TLS when it has it; as send(2). */
static ssize_t io_send(struct rb_nconn *c, const void *buf, size_t len, int flags)
{
    return c->tls.ssl ? rb_ntls_send(&c->tls, buf, len) : send(c->fd, buf, len, flags);
}

static ssize_t io_recv(struct rb_nconn *c, void *buf, size_t len)
{
    return c->tls.ssl ? rb_ntls_recv(&c->tls, buf, len) : recv(c->fd, buf, len, 0);
}

void rb_nconn_leg_enter(struct rb_nconn *c, struct rb_npool *pl)
{
    c->home_fd = c->fd;
    c->home_tls = c->tls;
    c->fd = -1;
    c->tls = (struct rb_ntls_conn){0};
    c->leg = pl;
}

/* Leaves a redirect's leg: its connection (with its TLS state) back to its pool or closed, the endpoint's back in c. */
void rb_nconn_leg_end(struct rb_worker *w, struct rb_nconn *c, bool keep)
{
    if (!c->leg)
        return;
    struct rb_npool *pl = c->leg;
    if (c->fd >= 0 && keep && !c->connecting && !c->handshaking && pl->nidle < w->nreq) {
        pl->idle[pl->nidle++] = (struct rb_nidle){c->fd, c->tls};
        c->tls = (struct rb_ntls_conn){0};
    } else {
        rb_nconn_close(c);
    }
    c->fd = c->home_fd;
    c->tls = c->home_tls;
    c->home_fd = -1;
    c->home_tls = (struct rb_ntls_conn){0};
    c->leg = NULL;
    c->connecting = c->handshaking = false;
}

/* Ends c's request with rc (CURLE_OK: a response was parsed) and frees its slot; closes the connection unless it stays alive. */
void rb_nconn_finish(struct rb_worker *w, struct rb_nconn *c, CURLcode rc, const char *msg)
{
    uint64_t now = rb_clock_ns();
    long status = rc == CURLE_OK ? (long)c->p.status_code : 0;
    if (msg)
        snprintf(c->r.ebuf, sizeof c->r.ebuf, "%s", msg);
    else if (rc != CURLE_OK)
        c->r.ebuf[0] = '\0';
    /* (io_uring: a send still in the kernel when the answer came early would mix with the next request's) */
    bool keep = rc == CURLE_OK && resp_keep_alive(c) && !c->sending;
    if (c->leg)
        rb_nconn_leg_end(w, c, keep);
    else if (!keep)
        rb_nconn_close(c);
    c->busy = false;
    w->free_slots[w->nfree++] = (unsigned)(c - w->nat->c);
    if (w->drv->done) {
        w->drv->done(w, &c->r, rc, status, c->got_bytes ? c->ttfb_ns : 0, now - c->r.start_ns, (long)c->redirects,
                     now); /* may send on this very slot again */
        return;
    }
    uint64_t errors = w->local->errors;
    rb_xfer_record(w, &c->r, rc, status, c->got_bytes ? c->ttfb_ns : 0, now - c->r.start_ns, (long)c->redirects, now);
    if (w->o->track_written && w->local->errors == errors)
        rb_worker_wrote(w, c->idx); /* a put that cleans up deletes what it wrote, on either engine */
}

/* The epoll tag of c's socket fd: the slot and the descriptor, so an event of a connection c no longer uses is told apart. */
static uint64_t ev_tag(struct rb_native *n, struct rb_nconn *c, int fd)
{
    return (uint64_t)(c - n->c) | (uint64_t)(uint32_t)fd << 32;
}

/* Opens c's connection: to its endpoint, or to the host of its redirect leg. */
static int conn_open(struct rb_worker *w, struct rb_nconn *c)
{
    struct rb_native *n = w->nat;
    const struct sockaddr_storage *addr = c->leg ? &c->leg->addr : &n->addr[c->ep];
    socklen_t alen = c->leg ? c->leg->alen : n->alen[c->ep];
    c->fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return -errno;
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* Edge-triggered, both directions, once per connection: no epoll_ctl per request (io_uring: no set at all). */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.u64 = ev_tag(n, c, c->fd)};
    if (!n->ur && epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
        int e = -errno;
        rb_nconn_close(c);
        return e;
    }
    c->reused = false;
    c->connecting = false;
    c->connect_ns = rb_clock_ns();
    if (connect(c->fd, (const struct sockaddr *)addr, alen) == 0)
        return 0;
    int e = -errno;
    if (e == -EINPROGRESS) {
        c->connecting = true;
        if (!n->ur || !(e = n->ring->watch(w, c)))
            return 0;
    }
    rb_nconn_close(c);
    return e;
}

/*
 * A new connection is up: over TLS the handshake first (driven again by
 * each event until done), then the request. The handshake is inside the
 * request's time, as its connect is (and as on libcurl); it is also
 * reported apart (rb_ntls_stats), and with --phases it is the request's tls span.
 */
static void conn_go(struct rb_worker *w, struct rb_nconn *c)
{
    struct rb_native *n = w->nat;
    if (w->rph && !c->handshaking && !c->tls.ssl)
        c->r.ph_ns[0] = rb_clock_ns(); /* the TCP connection is up */
    if (n->ep_tls[c->ep] && !c->tls.ssl) {
        const char *host = c->leg ? c->leg->hostport : n->shape.host[c->ep];
        unsigned place = c->leg ? 1 + (unsigned)(c->leg - n->pools) : 0; /* the slot's endpoint, or a pool's host */
        if (rb_ntls_start(n->tls, c->fd, host, place, (unsigned)(c - n->c), &c->tls)) {
            rb_nconn_finish(w, c, CURLE_OUT_OF_MEMORY, "TLS: out of memory (native engine)");
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
            rb_nconn_finish(w, c, rc == -EACCES ? CURLE_PEER_FAILED_VERIFICATION : CURLE_SSL_CONNECT_ERROR, msg);
            return;
        }
        c->handshaking = false;
        if (w->rph)
            c->r.ph_ns[1] = now;
    }
    rb_nconn_send(w, c);
}

void rb_nconn_connect(struct rb_worker *w, struct rb_nconn *c)
{
    int e = conn_open(w, c);
    if (e)
        rb_nconn_finish(w, c, CURLE_COULDNT_CONNECT, strerror(-e));
    else if (!c->connecting)
        conn_go(w, c);
}

/* A reused connection the server had already closed: connect again and resend once, as libcurl does. */
static bool retry_stale(struct rb_worker *w, struct rb_nconn *c)
{
    if (!c->reused || c->got_bytes)
        return false;
    rb_nconn_close(c);
    c->r.resent = true; /* whatever ends it now, the first sending may have been stored */
    if (conn_open(w, c) != 0)
        return false;
    c->woff = 0;
    c->r.put_pos = 0;
    if (!c->connecting)
        conn_go(w, c);
    return true;
}

size_t rb_nconn_pending(struct rb_native *n, struct rb_nconn *c, const char **at)
{
    if (c->woff < c->wlen) {
        *at = c->wbuf + c->woff;
        return c->wlen - c->woff;
    }
    uint64_t left = c->r.put_size - c->r.put_pos;
    size_t len = left < n->rbuf_bytes ? (size_t)left : n->rbuf_bytes;
    if (c->body_mem) {
        *at = c->body_mem + c->r.put_pos;
        return (size_t)left;
    }
    if (len) /* a short send makes the rest again */
        rb_payload_fill(&c->r.w->o->payload, c->r.key, c->body_off + c->r.put_pos, n->rbuf, len);
    *at = n->rbuf;
    return len;
}

void rb_nconn_wrote(struct rb_nconn *c, size_t k)
{
    size_t head = c->wlen - c->woff; /* k may run past the head into the body (tls_pending) */
    if (k <= head) {
        c->woff += k;
        if (c->r.w->rph && c->woff == c->wlen && c->r.put_pos >= c->r.put_size)
            c->r.ph_ns[2] = rb_clock_ns(); /* the request is all out: a head alone */
        return;
    }
    c->woff = c->wlen;
    c->r.put_pos += k - head;
    if (c->r.w->rph && c->r.put_pos >= c->r.put_size)
        c->r.ph_ns[2] = rb_clock_ns(); /* the request is all out */
}

/* A TLS record's most plaintext (SSL3_RT_MAX_PLAIN_LENGTH): SSL_write with partial writes returns after each one. */
#define TLS_RECORD_MAX 16384

/*
 * Over TLS each SSL_write is at least one record of its own: its header and
 * tag, OpenSSL 3.0's per-record set-up (two allocations in its record layer,
 * three on TLS 1.3) and a TCP segment of its own (MSG_MORE does not reach
 * through SSL_write). So a head with a body goes out with the body's start
 * in the same write, both made in the worker's buffer, the head first. And
 * as SSL_write (SSL_MODE_ENABLE_PARTIAL_WRITE) takes one record per call, a
 * body made from the payload is made a record at a time, not the worker's
 * whole buffer for each record. A write OpenSSL must retry is made again
 * the same (nothing moved).
 */
static size_t tls_pending(struct rb_native *n, struct rb_nconn *c, const char **at)
{
    size_t head = c->wlen - c->woff;
    uint64_t left = c->r.put_size - c->r.put_pos;
    size_t cap = n->rbuf_bytes < TLS_RECORD_MAX ? n->rbuf_bytes : TLS_RECORD_MAX;
    if (!left || head >= cap || (c->body_mem && !head))
        return rb_nconn_pending(n, c, at); /* the head alone, or a body in memory: nothing to make */
    size_t len = left < cap - head ? (size_t)left : cap - head;
    memcpy(n->rbuf, c->wbuf + c->woff, head);
    if (c->body_mem)
        memcpy(n->rbuf + head, c->body_mem + c->r.put_pos, len);
    else
        rb_payload_fill(&c->r.w->o->payload, c->r.key, c->body_off + c->r.put_pos, n->rbuf + head, len);
    *at = n->rbuf;
    return head + len;
}

void rb_nconn_send_failed(struct rb_worker *w, struct rb_nconn *c, int err)
{
    if (!retry_stale(w, c))
        rb_nconn_finish(w, c, CURLE_SEND_ERROR, err ? strerror(err) : "send failed");
}

void rb_nconn_send(struct rb_worker *w, struct rb_nconn *c)
{
    if (w->nat->ur) {
        w->nat->ring->send(w, c); /* submitted with the loop's next wait */
        return;
    }
    const char *at;
    size_t len;
    while ((len = c->tls.ssl ? tls_pending(w->nat, c, &at) : rb_nconn_pending(w->nat, c, &at)) > 0) {
        bool head = c->woff < c->wlen;
        ssize_t k = io_send(c, at, len, MSG_NOSIGNAL | (head && c->r.put_size ? MSG_MORE : 0));
        if (k > 0) {
            rb_nconn_wrote(c, (size_t)k);
            continue;
        }
        if (k < 0 && errno == EAGAIN)
            return;
        if (k < 0 && errno == EINTR)
            continue;
        rb_nconn_send_failed(w, c, k < 0 ? errno : 0);
        return;
    }
}

/* A response was parsed: the request ends, or follows the redirect it got. */
static void follow(struct rb_worker *w, struct rb_nconn *c);
static void complete(struct rb_worker *w, struct rb_nconn *c)
{
    if (c->redirect)
        follow(w, c);
    else
        rb_nconn_finish(w, c, CURLE_OK, NULL);
}

void rb_nconn_ended(struct rb_worker *w, struct rb_nconn *c, int err)
{
    if (retry_stale(w, c))
        return;
    if (!err && c->headers_done && !c->plain) {
        /* A body delimited by the close completes now; otherwise it is short (a plain head's always is). */
        http_parser_execute(&c->p, &w->nat->settings, NULL, 0);
        if (c->complete) {
            rb_nconn_close(c); /* the server closed it: a leg's is not pooled, an endpoint's connects again next time */
            complete(w, c);
            return;
        }
    }
    char msg[200];
    snprintf(msg, sizeof msg, "connection %s after %" PRIu64 " body bytes (native engine)",
             err ? strerror(err) : "closed", c->r.body);
    rb_nconn_finish(w, c, err ? CURLE_RECV_ERROR : c->headers_done ? CURLE_PARTIAL_FILE : CURLE_GOT_NOTHING, msg);
}

bool rb_nconn_data(struct rb_worker *w, struct rb_nconn *c, const char *buf, size_t k)
{
    if (!c->got_bytes) {
        c->got_bytes = true;
        c->r.response_ns = rb_clock_ns(); /* a PUT's time to first byte (its op row says so) */
        c->ttfb_ns = c->r.response_ns - c->r.start_ns;
        unsigned status;
        size_t head = c->all_headers || c->no_body ? 0 : rb_nresp_head(buf, k, &status, &c->plain_left);
        if (head) {
            /* The common head (native_resp_int.h): read in one pass, its body counted here, not by http_parser. */
            c->plain = true;
            c->p.status_code = (unsigned short)status;
            on_headers_complete(&c->p);
            buf += head;
            k -= head;
        }
    }
    if (c->plain) {
        size_t n = k < c->plain_left ? k : (size_t)c->plain_left;
        if (n)
            on_body(&c->p, buf, n);
        c->plain_left -= n;
        if (c->plain_left == 0) { /* (bytes after the body are not this request's: http_parser's pause drops them too) */
            c->complete = true;
            complete(w, c);
            return true;
        }
        return false;
    }
    size_t used = http_parser_execute(&c->p, &w->nat->settings, buf, k);
    if (c->complete) {
        complete(w, c);
        return true;
    }
    if (used != k || HTTP_PARSER_ERRNO(&c->p) != HPE_OK) {
        char msg[200];
        snprintf(msg, sizeof msg, "unparsable response: %s (native engine)",
                 http_errno_description(HTTP_PARSER_ERRNO(&c->p)));
        rb_nconn_finish(w, c, CURLE_WEIRD_SERVER_REPLY, msg);
        return true;
    }
    return false;
}

/* Reads and parses until the response is complete or the socket is drained; ev is the epoll event that woke it. */
static void conn_read(struct rb_worker *w, struct rb_nconn *c, uint32_t ev)
{
    struct rb_native *n = w->nat;
    for (;;) {
        ssize_t k = io_recv(c, n->rbuf, n->rbuf_bytes);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && errno == EAGAIN)
            return;
        if (k <= 0) {
            rb_nconn_ended(w, c, k < 0 ? errno : 0);
            return;
        }
        if (rb_nconn_data(w, c, n->rbuf, (size_t)k))
            return;
        /*
         * Edge-triggered: a short read drained the socket, and data arriving
         * later raises a new edge, so no read is spent on EAGAIN. A close
         * that came with this edge raises none: read on to the EOF then.
         */
        if ((size_t)k < n->rbuf_bytes && !c->tls.ssl && !(ev & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
            return; /* (TLS returns a record at a time, and may hold more: read on to EAGAIN) */
    }
}

void rb_nconn_connected(struct rb_worker *w, struct rb_nconn *c)
{
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err) {
        rb_nconn_finish(w, c, CURLE_COULDNT_CONNECT, strerror(err));
        return;
    }
    c->connecting = false;
    conn_go(w, c);
}

void rb_nconn_event(struct rb_worker *w, struct rb_nconn *c, int fd, uint32_t ev)
{
    if (!c->busy || c->fd < 0 || fd != c->fd)
        return; /* an idle keep-alive connection (or one pooled for redirects): its close shows at its next use */
    if (c->connecting) {
        if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            rb_nconn_connected(w, c);
        return;
    }
    if (c->handshaking) {
        conn_go(w, c);
        return;
    }
    if (c->woff < c->wlen || c->r.put_pos < c->r.put_size) {
        rb_nconn_send(w, c);
        /* Out now: read once, as a server may have answered early (an error) on an edge spent while sending. */
        if (c->busy && c->fd >= 0 && !c->connecting && c->woff >= c->wlen && c->r.put_pos >= c->r.put_size)
            conn_read(w, c, ev);
        return;
    }
    if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP))
        conn_read(w, c, ev);
}

struct rb_npool *rb_npool_get(struct rb_worker *w, const char *scheme, const char *hostport, size_t len)
{
    struct rb_native *n = w->nat;
    for (unsigned i = 0; i < n->npools; i++)
        if (n->pools[i].hostport_len == len && memcmp(n->pools[i].hostport, hostport, len) == 0)
            return &n->pools[i];
    if (!n->npool_max)
        n->npool_max = RB_NPOOL_MAX;
    if (len >= RB_NHOST_MAX || n->npools == n->npool_max)
        return NULL;
    if (!n->pools && !(n->pools = calloc(n->npool_max, sizeof *n->pools)))
        return NULL;
    struct rb_npool *pl = &n->pools[n->npools];
    if (!(pl->idle = calloc(w->nreq, sizeof *pl->idle)))
        return NULL;
    memcpy(pl->hostport, hostport, len);
    pl->hostport[len] = '\0';
    pl->hostport_len = len;
    char url[RB_NHOST_MAX + 8], hp[RB_NHOST_MAX];
    snprintf(url, sizeof url, "%s%s", scheme, pl->hostport);
    rb_nresolve(url, &pl->addr, &pl->alen, hp, sizeof hp);
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
static void follow(struct rb_worker *w, struct rb_nconn *c)
{
    struct rb_native *n = w->nat;
    if (c->redirects >= (unsigned)w->o->max_redirects) {
        char msg[100];
        snprintf(msg, sizeof msg, "more than %ld redirects (native engine)", w->o->max_redirects);
        rb_nconn_finish(w, c, CURLE_TOO_MANY_REDIRECTS, msg);
        return;
    }
    if (c->loc_len >= RB_NLOC_MAX) {
        rb_nconn_finish(w, c, CURLE_WEIRD_SERVER_REPLY, "a redirect's Location is too long (native engine)");
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
        rb_nconn_finish(w, c, CURLE_UNSUPPORTED_PROTOCOL, msg);
        return;
    }
    /* The connection the redirect came on stays alive for the next request: its endpoint's or its pool's. */
    bool keep = resp_keep_alive(c);
    if (c->leg) {
        rb_nconn_leg_end(w, c, keep);
    } else if (!keep) {
        rb_nconn_close(c);
    }
    struct rb_npool *to = rb_npool_get(w, scheme, hp, hp_len);
    if (!to) {
        rb_nconn_finish(w, c, CURLE_COULDNT_RESOLVE_HOST, "cannot reach a redirect's host (native engine)");
        return;
    }
    rb_nconn_leg_enter(c, to);
    c->redirects++;
    /* The head again: method, the Location's path and query as sent, its host (signed again when signing). */
    char *p = c->wbuf;
    size_t ml = strlen(c->method), pl = strcspn(path, "#");
    memcpy(p, c->method, ml);
    p += ml;
    *p++ = ' ';
    char *np = p;
    if (pl == 0)
        *p++ = '/';
    memcpy(p, path, pl);
    p += pl;
    /* The head is not NUL-terminated here: look for the query only in what was written. */
    const char *qm = memchr(np, '?', (size_t)(p - np));
    size_t path_len = qm ? (size_t)(qm - np) : (size_t)(p - np);
    const char *q = np + path_len;
    size_t qlen = (size_t)(p - q);
    int rc = rb_nhead_rest(w, c, p, np, path_len, qlen ? q + 1 : "", qlen ? qlen - 1 : 0, c->leg->hostport,
                       c->leg->hostport_len);
    if (rc) {
        rb_nconn_finish(w, c, CURLE_OUT_OF_MEMORY, "a redirect's request does not fit (native engine)");
        return;
    }
    rb_nconn_reset(c);
    c->r.off = c->range_off;
    c->r.put_pos = 0;
    rb_nconn_leg_go(w, c);
}

void rb_nconn_leg_go(struct rb_worker *w, struct rb_nconn *c)
{
    struct rb_npool *leg = c->leg;
    if (leg->nidle) {
        struct rb_nidle *k = &leg->idle[--leg->nidle];
        c->fd = k->fd;
        c->tls = k->tls;
        rb_ntls_adopt(&c->tls, (unsigned)(c - w->nat->c));
        c->reused = true;
        c->connecting = false;
        /* The pooled connection was last some other slot's: its events come to this one now (io_uring: its completions
         * go to whoever sent on it last, the ring's send). */
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                                 .data.u64 = ev_tag(w->nat, c, c->fd)};
        if (!w->nat->ur)
            epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
        rb_nconn_send(w, c);
        return;
    }
    rb_nconn_connect(w, c);
}

/* Resolves endpoint url ("http://HOST[:PORT]") once; on failure leaves *alen 0 (requests fail as connect errors). */
void rb_nresolve(const char *url, struct sockaddr_storage *addr, socklen_t *alen, char *hostport, size_t hplen)
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
