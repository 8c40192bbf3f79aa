/* The native engine: GET, PUT, HEAD, DELETE on our own keep-alive sockets, one epoll (or io_uring) loop per worker, http_parser (wrk's design). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "native_conn_int.h"
#include "payload_int.h"
#include "railbench/cli.h"
#include "railbench/clock.h"
#include "railbench/log.h"

#define IDLE_POLL_NS (100 * RB_NS_PER_MS)
#define REQ_FIXED_MAX 200      /* method, " HTTP/1.1", "Host: ", Range, Content-Length, line ends */

bool rb_engine_native_fits(const struct rb_load_opts *o, const char **why)
{
    const char *w = NULL;
    const struct rb_target *t = o->target;
    if (!rb_target_native(t))
        w = rb_proto_native_only();
    else if (o->op > RB_LOAD_HEAD && o->op != RB_LOAD_MIXED)
        w = "GET, PUT, DELETE and HEAD only";
    if (why)
        *why = w;
    return !w;
}

int rb_engine_check_usage(const struct rb_engine_args *ea, const struct rb_target *t, enum rb_load_op op, bool ranged)
{
    const enum rb_engine_kind engine = (enum rb_engine_kind)ea->engine;
    const struct rb_load_opts o = {.op = op, .target = t, .range_len = ranged};
    const char *why;
    if (engine == RB_ENGINE_NATIVE && !rb_engine_native_fits(&o, &why))
        return rb_cli_usage_error("--engine native: %s; use --engine curl or auto", why);
    /* libcurl 7.88 signs the x-amz-content-sha256 it is handed and hashes no streamed body. */
    const char *signs = rb_target_cap_option(t, RB_TCAP_SIGNED_BODIES), *direct = rb_target_cap_option(t, RB_TCAP_DIRECT);
    if (signs && engine == RB_ENGINE_CURL)
        return rb_cli_usage_error("--%s: only the native engine signs bodies; drop --engine curl", signs);
    if (direct && engine == RB_ENGINE_CURL)
        return rb_cli_usage_error("--%s: only the native engine sends requests straight to the targets; "
                                  "drop --engine curl", direct);
    if (signs && !rb_engine_native_fits(&o, &why))
        return rb_cli_usage_error("--%s: only the native engine signs bodies, and this run cannot use it: %s", signs, why);
    if (ea->io_loop == RB_IOLOOP_URING) {
        const struct rb_load_opts ko = {.op = op, .target = t, .engine = engine, .range_len = ranged};
        if (rb_engine_kind(&ko) != RB_ENGINE_NATIVE)
            return rb_cli_usage_error("--io-loop io_uring: it is the native engine's loop; drop --engine curl");
        if (!rb_native_uring_fits(&ko, &why))
            return rb_cli_usage_error("--io-loop io_uring: %s; use --io-loop epoll or auto", why);
    }
    return 0;
}

enum rb_engine_kind rb_engine_kind(const struct rb_load_opts *o)
{
    if (o->engine == RB_ENGINE_AUTO)
        return rb_engine_native_fits(o, NULL) ? RB_ENGINE_NATIVE : RB_ENGINE_CURL;
    return o->engine;
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

static const struct rb_nop native_ops[] = {
    [RB_LOAD_GET] = {"GET", false, false, get_ready},
    [RB_LOAD_PUT] = {"PUT", true, false, put_ready},
    [RB_LOAD_DELETE] = {"DELETE", false, false, meta_ready},
    [RB_LOAD_HEAD] = {"HEAD", false, true, meta_ready},
};

/* Sends c's request, its head written: on its keep-alive connection, or on a new one. */
static void start(struct rb_worker *w, struct rb_nconn *c, uint64_t intended_ns)
{
    struct rb_native *n = w->nat;
    struct rb_req *r = &c->r;
    c->redirects = 0;
    rb_nconn_reset(c);
    r->start_ns = rb_clock_ns();
    r->intended_ns = intended_ns ? intended_ns : r->start_ns;
    r->ph_marked = w->rph != NULL;
    if (w->o->log_fd >= 0)
        r->start_wall_ns = rb_clock_wall_ns();
    c->busy = true;
    w->last_issue_ns = r->start_ns;
    if (c->leg) {
        rb_nconn_leg_go(w, c); /* straight to an AIStore target (--ais-direct) */
        return;
    }
    if (c->fd >= 0) {
        c->reused = true;
        rb_nconn_send(w, c);
        return;
    }
    if (!n->alen[c->ep]) {
        rb_nconn_finish(w, c, CURLE_COULDNT_RESOLVE_HOST, "could not resolve the endpoint's host (native engine)");
        return;
    }
    rb_nconn_connect(w, c);
}

/* Keeps name in r for the completion's logs (it may live in the worker's one buffer). */
static void keep_name(struct rb_req *r, const char *name)
{
    size_t len = strnlen(name, RB_OBJSET_NAME_MAX);
    memcpy(r->name_buf, name, len);
    r->name_buf[len] = '\0';
    r->name = r->name_buf;
}

/* Starts a request of op row op for name on a free connection, its head written afresh (rb_nhead_build). */
static int issue(struct rb_worker *w, const struct rb_nop *op, const char *name, uint64_t size, uint64_t intended_ns)
{
    struct rb_native *n = w->nat;
    struct rb_nconn *c = &n->c[w->free_slots[--w->nfree]];
    if (n->direct) {
        /* --ais-direct: to the target that owns the object, as a leg on its pool; the endpoint's connection waits. */
        rb_nconn_leg_enter(c, n->tpool[rb_target_route_owner(w->o->target, name)]);
    }
    int hrc = rb_nhead_build(w, c, op, name, size);
    if (hrc) {
        rb_nconn_leg_end(w, c, false); /* nothing was opened on the leg: the endpoint's connection back */
        w->nfree++;
        return hrc;
    }
    keep_name(&c->r, name);
    c->idx = w->cur_idx;
    w->issued++;
    start(w, c, intended_ns);
    return 0;
}

int rb_native_issue(struct rb_worker *w, const char *name, uint64_t size, uint64_t intended_ns)
{
    return issue(w, w->nat->op, name, size, intended_ns);
}

int rb_native_issue_op(struct rb_worker *w, enum rb_load_op op, const char *name, uint64_t size)
{
    struct rb_nconn *c = &w->nat->c[w->free_slots[w->nfree - 1]];
    c->verify = w->o->verify && op == RB_LOAD_GET; /* a PUT's response body is not the payload */
    c->no_body = native_ops[op].no_body;
    return issue(w, &native_ops[op], name, size, 0);
}

int rb_native_send(struct rb_worker *w, const struct rb_nreq *q)
{
    struct rb_nconn *c = &w->nat->c[w->free_slots[w->nfree - 1]];
    struct rb_req *r = &c->r;
    c->method = q->method;
    c->sends_body = q->sends_body;
    c->keep_body = q->keep_body;
    c->body_off = q->body_off;
    c->body_mem = q->body_mem;
    c->extra_hdr = q->header;
    c->range_off = c->range_len = 0;
    r->key = q->key;
    r->size = r->put_size = q->sends_body ? q->body_len : 0;
    r->put_pos = r->expect_len = r->off = 0;
    r->ranged = false;
    r->etag[0] = '\0';
    int rc = q->path ? rb_nhead_path(w, c, q->path) : rb_nhead_line(w, c, q->name, q->query);
    if (rc)
        return rc;
    w->nfree--;
    keep_name(r, q->name ? q->name : q->path);
    start(w, c, 0);
    return 0;
}

void rb_native_tls_collect(const struct rb_worker *w, struct rb_stats *s)
{
    if (!w->nat || !w->nat->tls)
        return;
    const struct rb_ntls_stats *ts = rb_ntls_stats(w->nat->tls);
    s->ops += ts->handshakes;
    s->extra[RB_TLS_RESUMED] += ts->resumed;
    s->extra[RB_TLS_KTLS] += ts->ktls;
    rb_hist_merge(&s->lat, &ts->hs);
}

struct rb_req *rb_native_req(struct rb_worker *w, unsigned i)
{
    return &w->nat->c[i].r;
}

bool rb_native_busy(const struct rb_worker *w, unsigned i)
{
    return w->nat->c[i].busy;
}

void rb_native_drop(struct rb_worker *w, unsigned i)
{
    struct rb_nconn *c = &w->nat->c[i];
    if (!c->busy)
        return;
    rb_nconn_leg_end(w, c, false);
    rb_nconn_close(c);
    c->busy = false;
    w->free_slots[w->nfree++] = i;
}

/* Ends every request older than --timeout; called every scan_ns rather than arming a timer per request. */
static void expire(struct rb_worker *w, uint64_t now)
{
    for (unsigned i = 0; i < w->nreq; i++) {
        struct rb_nconn *c = &w->nat->c[i];
        if (c->busy && now - c->r.start_ns >= w->o->timeout_ns) {
            char msg[100];
            snprintf(msg, sizeof msg, "no response within %" PRIu64 " ms (native engine)",
                     (uint64_t)(w->o->timeout_ns / RB_NS_PER_MS));
            rb_nconn_finish(w, c, CURLE_OPERATION_TIMEDOUT, msg);
        }
    }
}

/* Handles the k events in evs (the wake-up, or a connection's socket). */
static void dispatch(struct rb_worker *w, const struct epoll_event *evs, int k)
{
    for (int i = 0; i < k; i++) {
        uint64_t tag = evs[i].data.u64;
        if (tag == RB_EV_WAKE)
            rb_worker_eat_wake(w);
        else if ((uint32_t)tag < w->nreq)
            rb_nconn_event(w, &w->nat->c[(uint32_t)tag], (int)(tag >> 32), evs[i].events);
    }
}

/* Waits at most wait_ns and handles what came: epoll's events, or io_uring's completions (its queue submitted first). */
static int io_wait(struct rb_worker *w, uint64_t wait_ns)
{
    if (w->nat->ur)
        return rb_nuring_wait(w, wait_ns);
    struct epoll_event evs[RB_EPOLL_BATCH];
    int k = rb_worker_wait(w, evs, wait_ns);
    if (k < 0 && errno != EINTR) {
        rb_error("epoll_wait: %s", strerror(errno));
        return -errno;
    }
    dispatch(w, evs, k);
    return 0;
}

int rb_native_pump(struct rb_worker *w, uint64_t until_ns)
{
    int rc;
    if (w->nat->ur && (rc = rb_nuring_start(w)))
        return rc;
    for (;;) {
        uint64_t now = rb_clock_ns();
        if (w->nfree == w->nreq || now >= until_ns)
            return 0;
        uint64_t wait = until_ns - now < IDLE_POLL_NS ? until_ns - now : IDLE_POLL_NS;
        if ((rc = io_wait(w, wait)))
            return rc;
    }
}

/* The plain op row's refill: one request per object (a driver that runs here refills itself: w->drv->done). */
static int refill_plain(struct rb_worker *w)
{
    return rb_worker_refill(w, rb_native_issue);
}

int rb_native_run(struct rb_worker *w, const atomic_bool *stop, const volatile int *stop2)
{
    struct rb_native *n = w->nat;
    uint64_t drain_until = 0;
    int (*refill)(struct rb_worker *) = w->drv->done ? w->drv->refill : refill_plain;
    int rc;
    if (n->ur && (rc = rb_nuring_start(w))) /* on this thread: the one that submits and waits */
        return rc;
    for (;;) {
        if (rb_worker_drained(w, stop, stop2, &drain_until))
            break;
        if ((rc = refill(w)))
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
        if (w->open.period_ns && w->nfree && !w->exhausted && w->open.next_ns < until)
            until = w->open.next_ns;
        if (drain_until && drain_until < until)
            until = drain_until;
        if ((rc = io_wait(w, until > now ? until - now : 0)))
            return rc;
    }
    if (n->tls && !w->o->listing) {
        const struct rb_ntls_stats *ts = rb_ntls_stats(n->tls);
        if (ts->handshakes)
            rb_info("TLS (native engine, thread %u): %" PRIu64 " handshakes, %" PRIu64 " resumed, %" PRIu64
                    " on kernel TLS, %.3f ms each on average (connect included), inside the request times",
                    w->id, ts->handshakes, ts->resumed, ts->ktls, (double)ts->handshake_ns / (double)ts->handshakes / 1e6);
    }
    /* Requests still in flight when the drain ran out are counted as abandoned, never dropped; their connections closed. */
    uint64_t now = rb_clock_ns();
    if (w->drv->done && w->drv->finish)
        w->drv->finish(w, now); /* multipart: abandons its requests, aborts the uploads still open */
    for (unsigned i = 0; i < w->nreq; i++)
        if (n->c[i].busy) {
            rb_nconn_leg_end(w, &n->c[i], false);
            rb_nconn_close(&n->c[i]);
            n->c[i].busy = false;
            w->free_slots[w->nfree++] = i;
            rb_written_unknown(w, n->c[i].r.name); /* a put in flight may have been stored */
            rb_xfer_abandon(w, NULL, n->c[i].r.name, n->c[i].r.intended_ns, now);
        }
    return 0;
}

/* ---- set-up ---- */

/*
 * --ais-direct: the cluster map (loaded once, at the probe or here) and a
 * pool per target, each host resolved once. Listings still go to the proxy.
 */
static int direct_new(struct rb_worker *w)
{
    struct rb_native *n = w->nat;
    const struct rb_target *t = w->o->target;
    char err[600] = "";
    int rc = rb_target_route_load(t, w->o->timeout_ns, err, sizeof err);
    if (rc) {
        rb_error("%s", err);
        return rc;
    }
    const size_t nodes = rb_target_route_count(t);
    const char *scheme = n->ep_tls[0] ? "https://" : "http://";
    n->npool_max = RB_NPOOL_MAX + (unsigned)nodes;
    if (!(n->tpool = calloc(nodes, sizeof *n->tpool)))
        return -ENOMEM;
    for (size_t i = 0; i < nodes; i++) {
        const char *id, *url = rb_target_route_node(t, i, &id); /* of the first endpoint's scheme (its route_load) */
        const char *hp = url + strlen(scheme);
        if (!(n->tpool[i] = rb_npool_get(w, scheme, hp, strlen(hp)))) {
            rb_error("%s: --%s: target %s at %s does not resolve", t->name, rb_target_cap_option(t, RB_TCAP_DIRECT), id, url);
            return -EHOSTUNREACH;
        }
    }
    n->direct = true;
    return 0;
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
    n->proto = rb_target_native(t);
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
        rb_nresolve(t->endpoints[e], &n->addr[e], &n->alen[e], hp, sizeof hp);
        n->ep_tls[e] = rb_target_endpoint_tls(t, e);
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
    size_t path_max = n->shape.path_len + RB_NREQ_NAME_MAX + n->shape.query_len + (o->part_size ? RB_NQUERY_MAX + 1 : 0);
    if (o->listing)
        path_max = RB_NREQ_NAME_MAX + RB_NQUERY_MAX + 100; /* a listing's path and query, its Content-Type line */
    n->wbuf_bytes = REQ_FIXED_MAX + (path_max > RB_NLOC_MAX ? path_max : RB_NLOC_MAX) + RB_NHOST_MAX + host_max +
                    n->shape.extra_len + (n->auth ? n->shape.auth_max : 0);
    n->c = calloc(w->nreq, sizeof *n->c);
    n->rbuf = malloc(n->rbuf_bytes);
    n->slab = malloc(w->nreq * n->wbuf_bytes);
    if (!n->c || !n->rbuf || !n->slab)
        return -ENOMEM;
    for (unsigned i = 0; i < w->nreq; i++) {
        struct rb_nconn *c = &n->c[i];
        c->fd = c->home_fd = -1;
        c->ep = (unsigned)((ep0 + i) % neps);
        c->verify = o->verify && o->op == RB_LOAD_GET; /* a PUT's response body is not the payload */
        c->no_body = n->op->no_body;
        c->all_headers = o->cache_header || o->part_size; /* a multipart part's ETag */
        c->wbuf = n->slab + (size_t)i * n->wbuf_bytes;
        c->r.w = w;
        c->r.slot = i;
        c->r.errbody.limit = 2048 + 1;
    }
    /* As libcurl is set up (transfer.c, target_ais.c): AIStore's proxy redirects every object request. */
    n->follow = o->max_redirects > 0 || rb_target_can(t, RB_TCAP_REDIRECTS);
    if (rb_target_can(t, RB_TCAP_DIRECT) && !o->listing && (rc = direct_new(w)))
        return rc;
    /* Header lines are read for the cache status, a redirect's Location, a multipart part's ETag. */
    rb_nconn_parser_settings(&n->settings, o->cache_header || n->follow || o->part_size);
    for (unsigned i = 0; i < w->nreq; i++)
        w->free_slots[w->nfree++] = w->nreq - 1 - i;
    static atomic_flag said = ATOMIC_FLAG_INIT;
    if (!w->e && o->io_loop == RB_IOLOOP_URING && !o->listing && !atomic_flag_test_and_set(&said))
        rb_info("--io-loop io_uring: this command's reads run on epoll (io_uring runs the load phases of load and sweep)");
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
        rb_nconn_leg_end(w, &n->c[i], false);
        rb_nconn_close(&n->c[i]);
        rb_buf_free(&n->c[i].r.errbody);
    }
    if (n->proto && n->proto->auth_free)
        n->proto->auth_free(n->auth);
    for (unsigned i = 0; n->pools && i < n->npools; i++) {
        for (unsigned j = 0; j < n->pools[i].nidle; j++) {
            rb_ntls_end(&n->pools[i].idle[j].tls);
            close(n->pools[i].idle[j].fd);
        }
        free(n->pools[i].idle);
    }
    rb_ntls_free(n->tls); /* after every connection's TLS state */
    rb_nuring_free(w); /* after the sockets: what the ring still held of them goes with it */
    free(n->pools);
    free(n->tpool);
    free(n->c);
    free(n->rbuf);
    free(n->slab);
    free(n);
    w->nat = NULL;
}

/* ---- the transports: on epoll, or on io_uring (engine workers; a fetcher's calls may come from any thread) ---- */

static bool on_uring(const struct rb_load_opts *o, bool fetcher)
{
    if (rb_target_can(o->target, RB_TCAP_FILES) || rb_engine_kind(o) != RB_ENGINE_NATIVE || fetcher)
        return false;
    return o->io_loop == RB_IOLOOP_URING || rb_native_io_loop(o) == RB_IOLOOP_URING; /* asked for: its init says why not */
}

static bool epoll_fits(const struct rb_load_opts *o, bool fetcher)
{
    return !rb_target_can(o->target, RB_TCAP_FILES) && rb_engine_kind(o) == RB_ENGINE_NATIVE && !on_uring(o, fetcher);
}

static int uring_init(struct rb_worker *w, size_t ep0)
{
    int rc = rb_native_new(w, ep0);
    return rc ? rc : rb_nuring_new(w);
}

RB_TRANSPORT(native_epoll) = {.name = "native", .io_loop = "epoll", .fits = epoll_fits, .init = rb_native_new,
                              .run = rb_native_run, .free = rb_native_free};
RB_TRANSPORT(native_uring) = {.name = "native", .io_loop = "io_uring", .fits = on_uring, .init = uring_init,
                              .run = rb_native_run, .free = rb_native_free};
