/* Unit tests for the engine (loader/engine/: engine.c, worker.c, transfer.c, picker.c): pickers, error classes, requests. */
#define _GNU_SOURCE

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "payload_int.h"
#include "railbench/cli.h"
#include "railbench/clock.h"
#include "script_peer.h"
#include "worker_int.h"

#define SEED 7
#define OBJ_BYTES 10000

/* ---- pickers ---- */

static void make_set(struct rb_objset *s, size_t n)
{
    assert_int_equal(rb_objset_generate(s, "obj-", n), 0);
}

static struct rb_load_opts pick_opts(const struct rb_objset *s, enum rb_load_op op, enum rb_load_pattern pat)
{
    return (struct rb_load_opts){.op = op, .objects = s, .pattern = pat, .seed = SEED, .rank = 0, .log_fd = -1};
}

static void test_picker_put_once_in_order(void **state)
{
    (void)state;
    struct rb_objset s = {0};
    make_set(&s, 7);
    struct rb_load_opts o = pick_opts(&s, RB_LOAD_PUT, RB_PATTERN_RANDOM); /* a PUT ignores the GET pattern */
    struct rb_picker p = {0};
    assert_int_equal(rb_picker_init(&p, &o, 1, 3), 0);
    size_t idx, got[8], n = 0;
    while (n < 8 && rb_picker_next(&p, &idx))
        got[n++] = idx;
    /* Thread 1 of 3 owns the objects j with j % 3 == 1, each once. */
    assert_int_equal(n, 2);
    assert_int_equal(got[0], 1);
    assert_int_equal(got[1], 4);
    assert_false(rb_picker_next(&p, &idx));
    rb_picker_free(&p);
    rb_objset_free(&s);
}

static void test_picker_sequential_wraps(void **state)
{
    (void)state;
    struct rb_objset s = {0};
    make_set(&s, 4);
    struct rb_load_opts o = pick_opts(&s, RB_LOAD_GET, RB_PATTERN_SEQUENTIAL);
    struct rb_picker p = {0};
    assert_int_equal(rb_picker_init(&p, &o, 0, 2), 0);
    const size_t want[] = {0, 2, 0, 2, 0, 2};
    for (size_t i = 0; i < 6; i++) {
        size_t idx;
        assert_true(rb_picker_next(&p, &idx));
        assert_int_equal(idx, want[i]);
    }
    rb_picker_free(&p);
    rb_objset_free(&s);
}

static void test_picker_epoch_permutes_and_stops(void **state)
{
    (void)state;
    struct rb_objset s = {0};
    make_set(&s, 50);
    struct rb_load_opts o = pick_opts(&s, RB_LOAD_GET, RB_PATTERN_EPOCH);
    o.epochs = 3;
    struct rb_picker p = {0};
    assert_int_equal(rb_picker_init(&p, &o, 0, 1), 0);
    size_t order[3][50];
    for (int e = 0; e < 3; e++) {
        unsigned seen[50] = {0};
        for (size_t i = 0; i < 50; i++) {
            assert_true(rb_picker_next(&p, &order[e][i]));
            assert_true(order[e][i] < 50);
            seen[order[e][i]]++;
        }
        for (size_t i = 0; i < 50; i++)
            assert_int_equal(seen[i], 1); /* every object once per epoch */
    }
    size_t idx;
    assert_false(rb_picker_next(&p, &idx)); /* --epochs 3 reached */
    /* Each epoch has its own permutation, and not the listing order. */
    assert_memory_not_equal(order[0], order[1], sizeof order[0]);
    size_t ident = 0;
    for (size_t i = 0; i < 50; i++)
        ident += order[0][i] == i;
    assert_true(ident < 50);
    rb_picker_free(&p);

    /* The same seed, rank and thread give the same order on every host. */
    struct rb_picker q = {0};
    assert_int_equal(rb_picker_init(&q, &o, 0, 1), 0);
    for (size_t i = 0; i < 50; i++) {
        assert_true(rb_picker_next(&q, &idx));
        assert_int_equal(idx, order[0][i]);
    }
    rb_picker_free(&q);
    rb_objset_free(&s);
}

/*
 * The per-index epoch picker over rank partitions: in every epoch each of the
 * N objects is requested exactly once by exactly one (rank, thread); the
 * partitions are disjoint and cover the set; a rank computes the same order
 * on every host; nothing is allocated per object.
 */
static void test_picker_epoch_partitions(void **state)
{
    (void)state;
    enum { N = 1009, RANKS = 3, THREADS = 2, EPOCHS = 3 };
    struct rb_objset all = {0}, mine[RANKS] = {{0}};
    make_set(&all, N);
    static uint64_t order[EPOCHS][N]; /* the global index at each (rank, thread, position) slot, per epoch */
    unsigned seen[EPOCHS][N];
    memset(seen, 0, sizeof seen);
    size_t filled[EPOCHS] = {0};
    char buf[RB_OBJSET_NAME_BYTES];
    for (int r = 0; r < RANKS; r++) {
        assert_int_equal(rb_objset_partition(&all, r, RANKS, &mine[r]), 0);
        struct rb_load_opts o = pick_opts(&mine[r], RB_LOAD_GET, RB_PATTERN_EPOCH);
        o.rank = r;
        o.epochs = EPOCHS;
        for (unsigned t = 0; t < THREADS; t++) {
            struct rb_picker p = {0}, again = {0};
            assert_int_equal(rb_picker_init(&p, &o, t, THREADS), 0);
            assert_int_equal(rb_picker_init(&again, &o, t, THREADS), 0);
            for (int e = 0; e < EPOCHS; e++)
                for (uint64_t k = 0; k < p.nslice; k++) {
                    size_t idx, idx2;
                    assert_true(rb_picker_next(&p, &idx));
                    assert_true(rb_picker_next(&again, &idx2));
                    assert_int_equal(idx, idx2); /* the same on every host */
                    assert_true(idx < mine[r].n);
                    assert_int_equal(idx % THREADS, t); /* only the thread's own objects */
                    uint64_t g = strtoull(rb_objset_name(&mine[r], idx, buf) + 4, NULL, 10);
                    assert_int_equal(g % RANKS, (uint64_t)r); /* only the rank's own objects */
                    seen[e][g]++;
                    order[e][filled[e]++] = g;
                }
            size_t idx;
            assert_false(rb_picker_next(&p, &idx));
            rb_picker_free(&p);
            rb_picker_free(&again);
        }
    }
    for (int e = 0; e < EPOCHS; e++) {
        assert_int_equal(filled[e], N);
        for (size_t i = 0; i < N; i++)
            assert_int_equal(seen[e][i], 1); /* disjoint and covering, every epoch */
    }
    assert_memory_not_equal(order[0], order[1], sizeof order[0]); /* a fresh permutation per epoch */
    for (int r = 0; r < RANKS; r++)
        rb_objset_free(&mine[r]);
    rb_objset_free(&all);
}

/* A billion objects: the picker starts in O(1) and its first picks are in range and distinct. */
static void test_picker_billion(void **state)
{
    (void)state;
    struct rb_objset all = {0}, mine = {0};
    assert_int_equal(rb_objset_generate(&all, "obj-", 1000000000ull), 0);
    assert_int_equal(rb_objset_partition(&all, 1, 4, &mine), 0);
    struct rb_load_opts o = pick_opts(&mine, RB_LOAD_GET, RB_PATTERN_EPOCH);
    struct rb_picker p = {0};
    assert_int_equal(rb_picker_init(&p, &o, 3, 8), 0);
    size_t first[64];
    for (int i = 0; i < 64; i++) {
        assert_true(rb_picker_next(&p, &first[i]));
        assert_true(first[i] < mine.n);
        assert_int_equal(first[i] % 8, 3);
        for (int k = 0; k < i; k++)
            assert_true(first[k] != first[i]);
    }
    rb_picker_free(&p);
    rb_objset_free(&mine);
    rb_objset_free(&all);
}

static void test_picker_random_in_range(void **state)
{
    (void)state;
    struct rb_objset s = {0};
    make_set(&s, 5);
    struct rb_load_opts o = pick_opts(&s, RB_LOAD_GET, RB_PATTERN_RANDOM);
    struct rb_picker p = {0}, q = {0};
    assert_int_equal(rb_picker_init(&p, &o, 0, 2), 0);
    assert_int_equal(rb_picker_init(&q, &o, 0, 2), 0);
    p.rng = q.rng = 12345;
    unsigned seen[5] = {0};
    for (int i = 0; i < 1000; i++) {
        size_t a, b;
        assert_true(rb_picker_next(&p, &a));
        assert_true(rb_picker_next(&q, &b));
        assert_int_equal(a, b); /* seeded: reproducible */
        assert_true(a < 5);     /* any of the rank's objects, not only the thread's slice */
        seen[a]++;
    }
    for (int i = 0; i < 5; i++)
        assert_true(seen[i] > 100);
    rb_picker_free(&p);
    rb_picker_free(&q);

    struct rb_objset none = {0};
    o.objects = &none;
    assert_int_equal(rb_picker_init(&p, &o, 0, 1), 0);
    size_t idx;
    assert_false(rb_picker_next(&p, &idx));
    rb_picker_free(&p);
    rb_objset_free(&s);
}

/* ---- error classes ---- */

static void test_classify(void **state)
{
    (void)state;
    assert_int_equal(rb_engine_classify(CURLE_OK, 200, false, false), -1);
    assert_int_equal(rb_engine_classify(CURLE_OK, 206, false, false), -1);
    /* 600 and up are no HTTP status class (RFC 9110): other, not http_5xx. */
    assert_int_equal(rb_engine_classify(CURLE_OK, 600, false, false), RB_LERR_OTHER);
    assert_int_equal(rb_engine_classify(CURLE_OK, 999, false, false), RB_LERR_OTHER);
    assert_int_equal(rb_engine_classify(CURLE_OK, 599, false, false), RB_LERR_HTTP_5XX);
    assert_int_equal(rb_engine_classify(CURLE_OK, 201, false, false), -1);
    assert_int_equal(rb_engine_classify(CURLE_COULDNT_CONNECT, 0, false, false), RB_LERR_CONNECT);
    assert_int_equal(rb_engine_classify(CURLE_COULDNT_RESOLVE_HOST, 0, false, false), RB_LERR_CONNECT);
    assert_int_equal(rb_engine_classify(CURLE_OPERATION_TIMEDOUT, 200, false, false), RB_LERR_TIMEOUT);
    assert_int_equal(rb_engine_classify(CURLE_RECV_ERROR, 0, false, false), RB_LERR_RESET);
    assert_int_equal(rb_engine_classify(CURLE_GOT_NOTHING, 0, false, false), RB_LERR_RESET);
    assert_int_equal(rb_engine_classify(CURLE_PARTIAL_FILE, 200, false, false), RB_LERR_SHORT_READ);
    assert_int_equal(rb_engine_classify(CURLE_TOO_MANY_REDIRECTS, 302, false, false), RB_LERR_REDIRECTS);
    assert_int_equal(rb_engine_classify(CURLE_SSL_CONNECT_ERROR, 0, false, false), RB_LERR_OTHER);
    assert_int_equal(rb_engine_classify(CURLE_OK, 404, false, false), RB_LERR_HTTP_4XX);
    assert_int_equal(rb_engine_classify(CURLE_OK, 503, false, false), RB_LERR_HTTP_5XX);
    assert_int_equal(rb_engine_classify(CURLE_OK, 302, false, false), RB_LERR_OTHER); /* a redirect not followed */
    assert_int_equal(rb_engine_classify(CURLE_OK, 0, false, false), RB_LERR_OTHER);   /* no HTTP status */
    /* The transport and the status come first; then the body. */
    assert_int_equal(rb_engine_classify(CURLE_OK, 500, true, true), RB_LERR_HTTP_5XX);
    assert_int_equal(rb_engine_classify(CURLE_OK, 200, true, true), RB_LERR_CHECKSUM);
    assert_int_equal(rb_engine_classify(CURLE_OK, 200, false, true), RB_LERR_SHORT_READ);
    assert_string_equal(rb_load_err_names[RB_LERR_CHECKSUM], "checksum");
    assert_null(rb_load_err_names[RB_LERR_COUNT]);
}

/* ---- a real peer: a tiny HTTP/1.1 responder on 127.0.0.1 (script_peer.h), one thread per connection ---- */

struct peer {
    struct script_peer sp;
    atomic_uint gets, puts, puts_ok;
};

/*
 * GET /data/NAME: 200 with OBJ_BYTES of NAME's payload; "missing" is a 404,
 * "corrupt" has one wrong byte, "short" promises OBJ_BYTES and closes halfway.
 * PUT /data/NAME: reads the body, 201 when it is NAME's payload, else 400.
 */
static bool answer(struct script_peer *sp, int c, const char *method, const char *path, const char *req, char *rest,
                   size_t *have)
{
    struct peer *p = sp->ctx;
    const char *name = strncmp(path, "/data/", 6) == 0 ? path + 6 : path;
    uint64_t key = rb_payload_key(SEED, name);
    unsigned char *body = malloc(OBJ_BYTES);
    rb_payload_fill(NULL, key, 0, body, OBJ_BYTES);
    char resp[256];
    bool keep = true;
    if (strcmp(method, "PUT") == 0) {
        atomic_fetch_add(&p->puts, 1);
        const char *cl = strcasestr(req, "\r\nContent-Length:");
        size_t len = cl ? strtoul(cl + 17, NULL, 10) : 0;
        unsigned char *got = malloc(len ? len : 1);
        size_t n = *have < len ? *have : len;
        memcpy(got, rest, n);
        while (n < len) {
            ssize_t r = read(c, got + n, len - n);
            if (r <= 0)
                break;
            n += (size_t)r;
        }
        bool ok = n == OBJ_BYTES && memcmp(got, body, OBJ_BYTES) == 0;
        atomic_fetch_add(&p->puts_ok, ok);
        free(got);
        int m = snprintf(resp, sizeof resp, "HTTP/1.1 %s\r\nContent-Length: 0\r\n\r\n",
                         ok ? "201 Created" : "400 Bad Request");
        sp_write(c, resp, (size_t)m);
        *have = 0;
    } else {
        atomic_fetch_add(&p->gets, 1);
        if (strcmp(name, "missing") == 0) {
            int m = snprintf(resp, sizeof resp, "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found");
            sp_write(c, resp, (size_t)m);
        } else {
            if (strcmp(name, "corrupt") == 0)
                body[OBJ_BYTES / 2] ^= 0xff;
            int m = snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", OBJ_BYTES);
            sp_write(c, resp, (size_t)m);
            keep = strcmp(name, "short") != 0; /* "short": the connection closes mid-body */
            sp_write(c, body, keep ? OBJ_BYTES : OBJ_BYTES / 2);
        }
    }
    free(body);
    return keep;
}

static void peer_start(struct peer *p)
{
    memset(p, 0, sizeof *p);
    assert_int_equal(sp_start_with(&p->sp, answer, p), 0);
}

/*
 * Ten GETs, sequential over five objects (two good, one absent, one corrupt,
 * one cut short), on the peer through engine and loop; false (nothing run)
 * when loop cannot run here. The peer's GETs and connections go to gets, conns.
 */
static bool ten_gets(enum rb_engine_kind engine, enum rb_io_loop loop, struct rb_stats *st, unsigned *gets, unsigned *conns)
{
    struct peer p;
    peer_start(&p);
    struct rb_target *t = sp_target(p.sp.port);
    struct rb_objset s = {0};
    const char *names[] = {"obj-a", "obj-b", "missing", "corrupt", "short"};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(rb_objset_add(&s, names[i], OBJ_BYTES), 0);
    struct rb_load_opts o = {
        .op = RB_LOAD_GET, .target = t, .objects = &s, .threads = 1, .inflight = 1,
        .pattern = RB_PATTERN_SEQUENTIAL, .count = 10, .seed = SEED, .verify = true,
        .timeout_ns = 10 * RB_NS_PER_S, .max_redirects = 5, .log_fd = -1, .engine = engine, .io_loop = loop,
    };
    bool runs = loop == RB_IOLOOP_AUTO || rb_native_io_loop(&o) == loop;
    if (runs)
        sp_run_engine(&o, st);
    *gets = atomic_load(&p.gets);
    *conns = atomic_load(&p.sp.conns);
    rb_objset_free(&s);
    rb_target_close(t);
    sp_stop(&p.sp);
    return runs;
}

/* What ten_gets must count, on any engine and loop. */
static void check_ten_gets(const struct rb_stats *st, unsigned gets, unsigned conns)
{
    /* Sequential over five objects, ten requests: each object twice. */
    assert_int_equal(st->ops, 10);
    assert_int_equal(gets, 10);
    assert_int_equal(st->errors, 6);
    assert_int_equal(st->err[RB_LERR_HTTP_4XX], 2);
    assert_int_equal(st->err[RB_LERR_CHECKSUM], 2);
    assert_int_equal(st->err[RB_LERR_SHORT_READ], 2);
    assert_int_equal(st->bytes, 4 * OBJ_BYTES); /* failed requests count no bytes */
    assert_int_equal(st->lat.count, 4);
    /* Keep-alive: one connection, plus one after the first "short" closed it (the second was the last request). */
    assert_int_equal(conns, 2);
}

static void test_get_counts_bytes_and_classes(void **state)
{
    (void)state;
    struct rb_stats *st = rb_stats_new();
    unsigned gets, conns;
    ten_gets(RB_ENGINE_AUTO, RB_IOLOOP_AUTO, st, &gets, &conns);
    check_ten_gets(st, gets, conns);
    rb_stats_free(st);
}

/* The native engine's two loops on the same GETs: the same requests, bytes, classes and connections. */
static void test_io_loops_agree(void **state)
{
    (void)state;
    const enum rb_io_loop loops[] = {RB_IOLOOP_EPOLL, RB_IOLOOP_URING};
    for (size_t l = 0; l < 2; l++) {
        struct rb_stats *st = rb_stats_new();
        unsigned gets, conns;
        if (ten_gets(RB_ENGINE_NATIVE, loops[l], st, &gets, &conns))
            check_ten_gets(st, gets, conns);
        else /* a kernel or seccomp profile without io_uring */
            print_message("io_uring is not available here: the io_uring half is skipped\n");
        rb_stats_free(st);
    }
}

static void test_put_sends_the_payload(void **state)
{
    (void)state;
    struct peer p;
    peer_start(&p);
    struct rb_target *t = sp_target(p.sp.port);
    struct rb_objset s = {0};
    assert_int_equal(rb_objset_generate(&s, "obj-", 6), 0);
    struct rb_load_opts o = {
        .op = RB_LOAD_PUT, .target = t, .objects = &s, .threads = 2, .inflight = 2,
        .pattern = RB_PATTERN_RANDOM, .seed = SEED, .min_size = OBJ_BYTES, .max_size = OBJ_BYTES,
        .timeout_ns = 10 * RB_NS_PER_S, .max_redirects = 5, .log_fd = -1,
    };
    struct rb_stats *st = rb_stats_new();
    sp_run_engine(&o, st);
    /* Every object once over both threads, each body the seeded payload. */
    assert_int_equal(st->ops, 6);
    assert_int_equal(st->errors, 0);
    assert_int_equal(st->bytes, 6 * OBJ_BYTES);
    assert_int_equal(atomic_load(&p.puts), 6);
    assert_int_equal(atomic_load(&p.puts_ok), 6);
    rb_stats_free(st);
    rb_objset_free(&s);
    rb_target_close(t);
    sp_stop(&p.sp);
}

/* Where the io_uring loop applies: plain http:// GET, HEAD, DELETE of an engine's phase; not TLS, bodies, listings. */
static void test_uring_fits(void **state)
{
    (void)state;
    char err[256];
    struct rb_target *h = NULL, *s = NULL;
    struct rb_target_cfg ch = {.url = "http://127.0.0.1:1/d"}, cs = {.url = "https://127.0.0.1:1/d"};
    assert_int_equal(rb_target_open(&h, &ch, err, sizeof err), 0);
    assert_int_equal(rb_target_open(&s, &cs, err, sizeof err), 0);
    const char *why = NULL;
    struct rb_load_opts o = {.op = RB_LOAD_GET, .target = h};
    assert_true(rb_native_uring_fits(&o, &why));
    assert_null(why);
    o.op = RB_LOAD_HEAD;
    assert_true(rb_native_uring_fits(&o, NULL));
    o.op = RB_LOAD_DELETE;
    assert_true(rb_native_uring_fits(&o, NULL));
    o.op = RB_LOAD_PUT;
    assert_false(rb_native_uring_fits(&o, &why));
    assert_non_null(strstr(why, "GET, HEAD and DELETE only"));
    o.op = RB_LOAD_GET;
    o.listing = true;
    assert_false(rb_native_uring_fits(&o, &why));
    o.listing = false;
    o.target = s;
    assert_false(rb_native_uring_fits(&o, &why));
    assert_non_null(strstr(why, "https://"));
    /* epoll asked for, or a run that cannot use io_uring: epoll; libcurl names no loop. */
    o.target = h;
    o.io_loop = RB_IOLOOP_EPOLL;
    assert_int_equal(rb_native_io_loop(&o), RB_IOLOOP_EPOLL);
    o.io_loop = RB_IOLOOP_AUTO;
    o.op = RB_LOAD_PUT;
    assert_int_equal(rb_native_io_loop(&o), RB_IOLOOP_EPOLL);
    o.engine = RB_ENGINE_CURL;
    assert_null(rb_engine_io_loop_name(&o));
    rb_target_close(h);
    rb_target_close(s);
}

/* One transport per run, chosen from the target's capabilities and the engine options; the caller's own wins. */
static void test_transport_for(void **state)
{
    (void)state;
    char err[256];
    char dir[] = "/tmp/rb-tp-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char url[64];
    snprintf(url, sizeof url, "file://%s", dir);
    struct rb_target *h = NULL, *f = NULL;
    struct rb_target_cfg ch = {.url = "http://127.0.0.1:1/d"}, cf = {.url = url};
    assert_int_equal(rb_target_open(&h, &ch, err, sizeof err), 0);
    assert_int_equal(rb_target_open(&f, &cf, err, sizeof err), 0);
    struct rb_load_opts o = {.op = RB_LOAD_PUT, .target = f, .engine = RB_ENGINE_NATIVE};
    const struct rb_transport *tp = rb_transport_for(&o, false);
    assert_non_null(tp);
    assert_string_equal(tp->name, "file");
    assert_true(tp->files && tp->drives);
    assert_null(rb_engine_io_loop_name(&o));
    assert_string_equal(rb_engine_name(&o), "file");
    o.target = h;
    o.engine = RB_ENGINE_CURL;
    assert_string_equal(rb_transport_for(&o, false)->name, "curl");
    assert_false(rb_transport_for(&o, false)->files);
    o.engine = RB_ENGINE_NATIVE;
    tp = rb_transport_for(&o, false); /* a PUT has a body: epoll */
    assert_string_equal(tp->name, "native");
    assert_string_equal(tp->io_loop, "epoll");
    assert_false(tp->drives);
    o.op = RB_LOAD_GET;
    o.io_loop = RB_IOLOOP_URING; /* asked for: the io_uring row, whose set-up says why when it cannot run */
    assert_string_equal(rb_transport_for(&o, false)->io_loop, "io_uring");
    assert_string_equal(rb_transport_for(&o, true)->io_loop, "epoll"); /* a fetcher's calls: any thread */
    const struct rb_transport mine = {.name = "mine"};
    o.transport = &mine;
    assert_ptr_equal(rb_transport_for(&o, false), &mine);
    rb_target_close(h);
    rb_target_close(f);
    assert_int_equal(rmdir(dir), 0);
}

/* The --engine and --io-loop checks take the command's arguments (no process state): each pair against a target. */
static void test_check_usage(void **state)
{
    (void)state;
    char err[256];
    struct rb_target *h = NULL;
    struct rb_target_cfg ch = {.url = "http://127.0.0.1:1/d"};
    assert_int_equal(rb_target_open(&h, &ch, err, sizeof err), 0);
    struct rb_engine_args ea = {.engine = RB_ENGINE_AUTO, .io_loop = RB_IOLOOP_AUTO};
    assert_int_equal(rb_engine_check_usage(&ea, h, RB_LOAD_GET, false), 0);
    ea.io_loop = RB_IOLOOP_URING;
    assert_int_equal(rb_engine_check_usage(&ea, h, RB_LOAD_GET, false), 0);
    assert_int_equal(rb_engine_check_usage(&ea, h, RB_LOAD_PUT, false), RB_EXIT_USAGE); /* io_uring: no bodies */
    ea.engine = RB_ENGINE_CURL;
    assert_int_equal(rb_engine_check_usage(&ea, h, RB_LOAD_GET, false), RB_EXIT_USAGE); /* io_uring is native's */
    ea.io_loop = RB_IOLOOP_EPOLL;
    assert_int_equal(rb_engine_check_usage(&ea, h, RB_LOAD_PUT, false), 0);
    ea.engine = RB_ENGINE_NATIVE;
    assert_int_equal(rb_engine_check_usage(&ea, h, RB_LOAD_PUT, false), 0);
    rb_target_close(h);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_picker_put_once_in_order),
        cmocka_unit_test(test_picker_sequential_wraps),
        cmocka_unit_test(test_picker_epoch_permutes_and_stops),
        cmocka_unit_test(test_picker_epoch_partitions),
        cmocka_unit_test(test_picker_billion),
        cmocka_unit_test(test_picker_random_in_range),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_get_counts_bytes_and_classes),
        cmocka_unit_test(test_put_sends_the_payload),
        cmocka_unit_test(test_io_loops_agree),
        cmocka_unit_test(test_uring_fits),
        cmocka_unit_test(test_transport_for),
        cmocka_unit_test(test_check_usage),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
