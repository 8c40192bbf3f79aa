/*
 * Unit tests for the native engine's connections (loader/engine/native_conn.c through native.c's epoll loop):
 * response framing (Content-Length, chunked, close-delimited), keep-alive reuse and a stale connection's retry,
 * a redirect's leg and its pool, and the error class of each way a response can go wrong. The peer is a real
 * HTTP/1.1 responder in a thread of this test (script_peer.h); the requests go through rb_engine as a phase's do.
 */
#define _GNU_SOURCE

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "railbench/clock.h"
#include "script_peer.h"

struct run {
    struct rb_stats *st;
    unsigned conns, requests; /* as the peer saw them */
    char head[2048];          /* the last request head the peer read */
};

/* How the names are asked for; 0 is the default: GET, 5 redirects, --timeout 10 s, the epoll loop, one slot. */
struct ask {
    enum rb_load_op op;
    unsigned inflight;
    long max_redirects;
    const char *cache_header;
    uint64_t timeout_ns;
    enum rb_io_loop loop;
};
#define ASK(...) (&(struct ask){__VA_ARGS__})

/*
 * One request per name, in order, on the native engine's connection slots (one unless a says) (p's target, GET bodies verified
 * against the payload), run to its end; what the engine counted into r->st. False (nothing run) when a's loop
 * cannot run here.
 */
static bool run_names(struct script_peer *p, const char *const *names, size_t n, const struct ask *a, struct run *r)
{
    struct rb_target *t = sp_target(p->port);
    struct rb_objset s = {0};
    for (size_t i = 0; i < n; i++)
        assert_int_equal(rb_objset_add(&s, names[i], SP_BYTES), 0);
    struct rb_load_opts o = {
        .op = a->op, .target = t, .objects = &s, .threads = 1, .inflight = a->inflight ? a->inflight : 1, .pattern = RB_PATTERN_SEQUENTIAL,
        .count = n, .seed = SP_SEED, .verify = a->op == RB_LOAD_GET,
        .timeout_ns = a->timeout_ns ? a->timeout_ns : 10 * RB_NS_PER_S, .max_redirects = a->max_redirects ? a->max_redirects : 5,
        .cache_header = a->cache_header, .log_fd = -1, .engine = RB_ENGINE_NATIVE,
        .io_loop = a->loop ? a->loop : RB_IOLOOP_EPOLL,
    };
    r->st = rb_stats_new();
    bool runs = rb_native_io_loop(&o) == o.io_loop;
    if (runs)
        sp_run_engine(&o, r->st);
    r->conns = atomic_load(&p->conns);
    r->requests = atomic_load(&p->requests);
    sp_last_head(p, r->head, sizeof r->head);
    rb_objset_free(&s);
    rb_target_close(t);
    return runs;
}

/* Content-Length (the common head and a head the full parser reads) and chunked bodies, all on one connection. */
static void test_framing_and_reuse(void **state)
{
    (void)state;
    struct script_peer p;
    assert_int_equal(sp_start(&p), 0);
    const char *names[] = {"cl-a", "hdr-b", "chunked-c", "cl-d"};
    struct run r;
    run_names(&p, names, 4, ASK(.cache_header = "X-Cache-Status"), &r);
    sp_stop(&p);
    assert_int_equal(r.st->ops, 4);
    assert_int_equal(r.st->errors, 0);
    assert_int_equal(r.st->bytes, 4 * SP_BYTES); /* every body whole and equal to its payload (verify) */
    assert_int_equal(r.st->lat.count, 4);
    assert_int_equal(r.st->ttfb.count, 4);
    assert_int_equal(r.conns, 1);
    assert_int_equal(r.requests, 4);
    /* One response said HIT; the other three carried no cache header. */
    assert_int_equal(r.st->extra[RB_LX_CACHE_HIT], 1);
    assert_int_equal(r.st->extra[RB_LX_CACHE_MISS], 0);
    assert_int_equal(r.st->extra[RB_LX_CACHE_ABSENT], 3);
    /* The request head: the target's path and the name, HTTP/1.1, the endpoint as Host. */
    char host[64];
    snprintf(host, sizeof host, "\r\nHost: 127.0.0.1:%u\r\n", p.port);
    assert_non_null(strstr(r.head, "GET /data/cl-d HTTP/1.1\r\n"));
    assert_non_null(strstr(r.head, host));
    rb_stats_free(r.st);
}

/*
 * A body that ends at the close completes (and the next request connects again); a keep-alive connection the
 * peer closed while idle is found stale at its next request, which is sent again on a new connection.
 */
static void test_close_delimited_and_stale(void **state)
{
    (void)state;
    struct script_peer p;
    assert_int_equal(sp_start(&p), 0);
    const char *names[] = {"eof-a", "cl-b", "stale-c", "cl-d", "cl-e"};
    struct run r;
    run_names(&p, names, 5, ASK(.op = RB_LOAD_GET), &r);
    sp_stop(&p);
    assert_int_equal(r.st->ops, 5);
    assert_int_equal(r.st->errors, 0);
    assert_int_equal(r.st->bytes, 5 * SP_BYTES);
    /* eof-a's connection; cl-b and stale-c on the second; cl-d found it closed and went on a third with cl-e. */
    assert_int_equal(r.conns, 3);
    assert_int_equal(r.requests, 5);
    rb_stats_free(r.st);
}

/* Each way a response goes wrong, in its class; a failed connection is not reused. */
static void test_failures_by_class(void **state)
{
    (void)state;
    struct script_peer p;
    assert_int_equal(sp_start(&p), 0);
    const char *names[] = {"cut-a", "cutchunk-b", "badstatus-c", "e500-d", "e404-e", "cl-f", "nothing-g", "loop-h"};
    struct run r;
    run_names(&p, names, 8, ASK(.max_redirects = 2), &r);
    sp_stop(&p);
    assert_int_equal(r.st->ops, 8);
    assert_int_equal(r.st->errors, 7);
    assert_int_equal(r.st->err[RB_LERR_SHORT_READ], 2); /* closed mid-body: by length and mid-chunk */
    assert_int_equal(r.st->err[RB_LERR_OTHER], 1);      /* a status line that is not HTTP */
    assert_int_equal(r.st->err[RB_LERR_HTTP_5XX], 1);
    assert_int_equal(r.st->err[RB_LERR_HTTP_4XX], 1);
    assert_int_equal(r.st->err[RB_LERR_RESET], 1);      /* closed without a byte, and again when sent anew */
    assert_int_equal(r.st->err[RB_LERR_REDIRECTS], 1);  /* a redirect to itself, past --max-redirects 2 */
    assert_int_equal(r.st->err[RB_LERR_CHECKSUM], 0);
    assert_int_equal(r.st->bytes, SP_BYTES);            /* only cl-f's: a failed request counts no bytes */
    assert_int_equal(r.st->extra[RB_LX_REDIRECTS], 2);  /* the two followed before the limit */
    /*
     * Connections: cut-a, cutchunk-b, badstatus-c each end theirs; e500-d, e404-e and cl-f share the fourth;
     * nothing-g found it closed without an answer and was sent once more on a fifth (closed again); loop-h went
     * on a sixth, and its two redirects on a leg's seventh (the endpoint's connection waits for the leg to end).
     */
    assert_int_equal(r.conns, 7);
    assert_int_equal(r.requests, 3 + 3 + 2 + 3);
    rb_stats_free(r.st);
}

/* What the leg peer saw: its connections, its requests, its last request head and its port. */
struct leg_run {
    unsigned conns, requests;
    unsigned short port;
    char head[2048];
};

/* run_names on a home peer whose "redir-" names are sent on to a leg peer; both stopped after. */
static void run_with_leg(const char *const *names, size_t n, const struct ask *a, struct run *r, struct leg_run *l)
{
    struct script_peer home, leg;
    assert_int_equal(sp_start(&home), 0);
    assert_int_equal(sp_start(&leg), 0);
    leg.is_leg = true;
    home.leg_port = leg.port;
    run_names(&home, names, n, a, r);
    l->conns = atomic_load(&leg.conns);
    l->requests = atomic_load(&leg.requests);
    l->port = leg.port;
    sp_last_head(&leg, l->head, sizeof l->head);
    sp_stop(&home);
    sp_stop(&leg);
}

/* A 307 to another host: the request follows on a leg, whose connection is pooled and reused by the next one. */
static void test_redirect_leg(void **state)
{
    (void)state;
    const char *names[] = {"redir-a", "redir-b", "cl-c"};
    struct run r;
    struct leg_run l;
    run_with_leg(names, 3, ASK(.op = RB_LOAD_GET), &r, &l);
    assert_int_equal(r.st->ops, 3);
    assert_int_equal(r.st->errors, 0);
    assert_int_equal(r.st->bytes, 3 * SP_BYTES); /* the legs' bodies verified against the names' payloads */
    assert_int_equal(r.st->extra[RB_LX_REDIRECTS], 2);
    /* The home connection stays open across the legs (cl-c went on it); the leg host's one connection is reused. */
    assert_int_equal(r.conns, 1);
    assert_int_equal(r.requests, 3);
    assert_int_equal(l.conns, 1);
    assert_int_equal(l.requests, 2);
    char host[64];
    snprintf(host, sizeof host, "\r\nHost: 127.0.0.1:%u\r\n", l.port);
    assert_non_null(strstr(l.head, "GET /data/redir-b HTTP/1.1\r\n"));
    assert_non_null(strstr(l.head, host));
    rb_stats_free(r.st);
}

/*
 * A Location that is a path follows on this host (its query sent, its fragment not); one of another scheme is
 * refused; one too long to hold is refused; a server that never answers runs into --timeout.
 */
static void test_redirect_forms_and_timeout(void **state)
{
    (void)state;
    struct script_peer p;
    assert_int_equal(sp_start(&p), 0);
    const char *names[] = {"rel-a", "scheme-b", "longloc-c", "hang-d", "cl-e"};
    struct run r;
    uint64_t t0 = rb_clock_ns();
    run_names(&p, names, 5, ASK(.timeout_ns = 300 * RB_NS_PER_MS), &r);
    double took_s = (double)(rb_clock_ns() - t0) / 1e9;
    unsigned fragments = atomic_load(&p.fragments);
    sp_stop(&p);
    assert_int_equal(r.st->ops, 5);
    assert_int_equal(r.st->errors, 3);
    assert_int_equal(r.st->err[RB_LERR_OTHER], 2);   /* ftp://, and the Location too long */
    assert_int_equal(r.st->err[RB_LERR_TIMEOUT], 1); /* hang-d */
    assert_int_equal(r.st->bytes, 2 * SP_BYTES);     /* rel-a's leg and cl-e, verified */
    assert_int_equal(r.st->extra[RB_LX_REDIRECTS], 1);
    assert_true(took_s >= 0.3 && took_s < 10);      /* the timeout, not the peer, ended hang-d */
    /* rel-a: its request and its leg's; scheme-b, longloc-c, hang-d and cl-e one each. */
    assert_int_equal(r.requests, 6);
    assert_int_equal(fragments, 0);
    assert_non_null(strstr(r.head, "GET /data/cl-e HTTP/1.1\r\n"));
    rb_stats_free(r.st);
}

/*
 * Four slots following redirects at once: each slot's head is written in its own part of the request slab (the
 * last one's end is the slab's), the legs share the leg host's pool, and every body arrives whole.
 */
static void test_redirects_on_many_slots(void **state)
{
    (void)state;
    const char *names[] = {"redir-0", "redir-1", "redir-2", "redir-3", "redir-4", "redir-5", "redir-6", "redir-7"};
    struct run r;
    struct leg_run l;
    run_with_leg(names, 8, ASK(.inflight = 4), &r, &l);
    assert_int_equal(r.st->ops, 8);
    assert_int_equal(r.st->errors, 0);
    assert_int_equal(r.st->bytes, 8 * SP_BYTES);
    assert_int_equal(r.st->extra[RB_LX_REDIRECTS], 8);
    assert_int_equal(r.requests, 8);
    assert_int_equal(l.requests, 8);
    assert_in_range(r.conns, 1, 4); /* one per slot at most: each slot keeps its endpoint connection */
    assert_in_range(l.conns, 1, 4); /* the pool's idle connections are taken again */
    rb_stats_free(r.st);
}

/* HEAD: the response's length is not a body to wait for; statuses still class. */
static void test_head(void **state)
{
    (void)state;
    struct script_peer p;
    assert_int_equal(sp_start(&p), 0);
    const char *names[] = {"hdr-a", "cl-b", "e404-c", "cl-d"};
    struct run r;
    run_names(&p, names, 4, ASK(.op = RB_LOAD_HEAD), &r);
    sp_stop(&p);
    assert_int_equal(r.st->ops, 4);
    assert_int_equal(r.st->errors, 1);
    assert_int_equal(r.st->err[RB_LERR_HTTP_4XX], 1);
    assert_int_equal(r.st->bytes, 0);
    assert_int_equal(r.conns, 1);
    assert_non_null(strstr(r.head, "HEAD /data/cl-d HTTP/1.1\r\n"));
    rb_stats_free(r.st);
}

/* The io_uring loop on the same requests as epoll: the same counts, classes, bytes and connections. */
static void test_uring_agrees(void **state)
{
    (void)state;
    static const char *const sets[][8] = {
        {"cl-a", "hdr-b", "chunked-c", "cl-d"},
        {"eof-a", "cl-b", "stale-c", "cl-d", "cl-e"},
        {"cut-a", "cutchunk-b", "badstatus-c", "e500-d", "e404-e", "cl-f", "nothing-g", "loop-h"},
        {"rel-a", "scheme-b", "longloc-c", "hang-d", "cl-e"},
    };
    static const size_t counts[] = {4, 5, 8, 5};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        struct run r[2];
        const enum rb_io_loop loops[2] = {RB_IOLOOP_EPOLL, RB_IOLOOP_URING};
        bool ran = true;
        for (int l = 0; l < 2; l++) {
            struct script_peer p;
            assert_int_equal(sp_start(&p), 0);
            ran = run_names(&p, sets[i], counts[i],
                            ASK(.max_redirects = 2, .timeout_ns = 300 * RB_NS_PER_MS, .loop = loops[l]), &r[l]);
            sp_stop(&p);
        }
        if (ran) {
            assert_int_equal(r[1].st->ops, r[0].st->ops);
            assert_int_equal(r[1].st->bytes, r[0].st->bytes);
            assert_memory_equal(r[1].st->err, r[0].st->err, sizeof r[0].st->err);
            assert_int_equal(r[1].st->extra[RB_LX_REDIRECTS], r[0].st->extra[RB_LX_REDIRECTS]);
            assert_int_equal(r[1].conns, r[0].conns);
            assert_int_equal(r[1].requests, r[0].requests);
        } else { /* a kernel or seccomp profile without io_uring */
            print_message("io_uring is not available here: set %zu ran on epoll only\n", i);
        }
        rb_stats_free(r[0].st);
        rb_stats_free(r[1].st);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_framing_and_reuse),
        cmocka_unit_test(test_close_delimited_and_stale),
        cmocka_unit_test(test_failures_by_class),
        cmocka_unit_test(test_redirect_leg),
        cmocka_unit_test(test_redirect_forms_and_timeout),
        cmocka_unit_test(test_redirects_on_many_slots),
        cmocka_unit_test(test_head),
        cmocka_unit_test(test_uring_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
