/*
 * A scripted HTTP/1.1 peer for unit tests (include after cmocka.h): a listener on 127.0.0.1 (an ephemeral port)
 * in a thread of the test, one thread per connection. What it answers is chosen by the request's last path
 * segment (the object name):
 *
 *   "cl-*"        200 with Content-Length and SP_BYTES of the name's payload (the common head)
 *   "hdr-*"       the same with more headers (X-Cache-Status: HIT, ETag), so the full parser reads it
 *   "chunked-*"   200, Transfer-Encoding: chunked, the payload in three chunks and a trailer
 *   "eof-*"       200 without a length, Connection: close: the body ends at the close
 *   "stale-*"     as "cl-" and the peer then closes the connection without saying so (a stale keep-alive)
 *   "cut-*"       promises SP_BYTES and closes after half of them
 *   "cutchunk-*"  chunked, closes in the middle of the second chunk
 *   "nothing-*"   closes without answering
 *   "badstatus-*" a status line that is not HTTP ("HTTP/1.1 2x0 OK")
 *   "e500-*", "e404-*"  500 / 404 with a short text body
 *   "redir-*"     307 to the same name on the leg peer (http://127.0.0.1:<leg_port>/data/NAME); a peer that is
 *                 itself a leg (is_leg) answers it as "cl-" with the name's payload
 *   "loop-*"      307 to itself, for ever
 *   "rel-*"       302 to a path on this host ("/data/NAME?hop=1#frag"), which it answers as "cl-"
 *   "scheme-*"    307 to an ftp:// location;  "longloc-*" 307 with a Location of 3000 bytes
 *   "hang-*"      reads the request and never answers (the client's timeout ends it)
 *
 * Every request's head is kept (the last one, and counts), so a test can check what the client sent. A test with
 * answers of its own gives sp_start_with an answer function (one request) instead of the script.
 * sp_run_engine runs a one-rank engine to its end, as a phase would.
 */
#ifndef RB_TEST_SCRIPT_PEER_H
#define RB_TEST_SCRIPT_PEER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "payload_int.h"
#include "railbench/clock.h"
#include "worker_int.h"

#define SP_BYTES 10000
#define SP_SEED 7

struct script_peer {
    int fd;
    unsigned short port, leg_port;
    bool is_leg;
    pthread_t th;
    atomic_uint conns, requests, open_conns;
    atomic_uint fragments; /* requests whose path carried a '#' (a client must not send one) */
    pthread_mutex_t mu;
    char last_head[2048]; /* the last request's head, under mu */
    /*
     * Answers one request (its head req; what came after it in rest[0..*have)) on c and returns whether the
     * connection stays open; NULL: the script. It may read a body from c and consume rest (*have).
     */
    bool (*answer)(struct script_peer *p, int c, const char *method, const char *path, const char *req, char *rest,
                   size_t *have);
    void *ctx; /* the answer function's */
};

static inline size_t sp_read_head(int c, char *buf, size_t cap, size_t *have)
{
    for (;;) {
        buf[*have] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (end)
            return (size_t)(end - buf) + 4;
        if (*have + 1 >= cap)
            return 0;
        ssize_t n = read(c, buf + *have, cap - 1 - *have);
        if (n <= 0)
            return 0;
        *have += (size_t)n;
    }
}

/* The next request head on c: its length (0 at EOF), its method and path (what fits). */
static inline size_t sp_next(int c, char *head, size_t cap, size_t *have, char method[8], char path[512])
{
    size_t hl = sp_read_head(c, head, cap, have);
    method[0] = path[0] = '\0';
    if (hl)
        sscanf(head, "%7s %511s", method, path);
    return hl;
}

static inline void sp_write(int c, const void *p, size_t n)
{
    const char *b = p;
    while (n) {
        ssize_t w = write(c, b, n);
        if (w <= 0)
            return;
        b += w;
        n -= (size_t)w;
    }
}

static inline void sp_printf(int c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void sp_printf(int c, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    sp_write(c, buf, (size_t)n);
}

/* The payload of name, as the engine's verification expects it. */
static inline unsigned char *sp_body(const char *name)
{
    unsigned char *b = malloc(SP_BYTES);
    rb_payload_fill(NULL, rb_payload_key(SP_SEED, name), 0, b, SP_BYTES);
    return b;
}

static inline bool sp_is(const char *name, const char *prefix)
{
    return strncmp(name, prefix, strlen(prefix)) == 0;
}

/* The redirects that are not to the leg peer, and "hang-": true when name was one of them. */
static inline bool sp_answer_other(int c, const char *name, const char *query)
{
    if (sp_is(name, "rel-") && !strstr(query, "hop=1")) {
        sp_printf(c, "HTTP/1.1 302 Found\r\nLocation: /data/%s?hop=1#frag\r\nContent-Length: 0\r\n\r\n", name);
    } else if (sp_is(name, "scheme-")) {
        sp_printf(c, "HTTP/1.1 307 Temporary Redirect\r\nLocation: ftp://127.0.0.1/%s\r\nContent-Length: 0\r\n\r\n",
                  name);
    } else if (sp_is(name, "longloc-")) {
        sp_printf(c, "HTTP/1.1 307 Temporary Redirect\r\nLocation: /data/");
        char pad[3000];
        memset(pad, 'x', sizeof pad);
        sp_write(c, pad, sizeof pad);
        sp_printf(c, "\r\nContent-Length: 0\r\n\r\n");
    } else if (!sp_is(name, "hang-")) {
        return false;
    }
    return true;
}

/* Answers one request for name (query: what followed '?') on c; false when the connection is to be closed. */
static inline bool sp_answer(struct script_peer *p, int c, const char *method, const char *name, const char *query)
{
    if (sp_answer_other(c, name, query))
        return true;
    bool head = strcmp(method, "HEAD") == 0;
    unsigned char *b = sp_body(name);
    bool keep = true;
    if (sp_is(name, "cl-") || sp_is(name, "stale-") || sp_is(name, "rel-") || (p->is_leg && sp_is(name, "redir-"))) {
        sp_printf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", SP_BYTES);
        if (!head)
            sp_write(c, b, SP_BYTES);
        keep = !sp_is(name, "stale-");
    } else if (sp_is(name, "hdr-")) {
        sp_printf(c, "HTTP/1.1 200 OK\r\nServer: script-peer\r\nX-Cache-Status: HIT\r\nETag: \"e1\"\r\n"
                     "Content-Length: %d\r\n\r\n", SP_BYTES);
        if (!head)
            sp_write(c, b, SP_BYTES);
    } else if (sp_is(name, "chunked-") || sp_is(name, "cutchunk-")) {
        const size_t part[3] = {1000, 5000, SP_BYTES - 6000};
        sp_printf(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        size_t off = 0;
        for (int i = 0; i < 3; i++) {
            sp_printf(c, "%zx\r\n", part[i]);
            if (i == 1 && sp_is(name, "cutchunk-")) {
                sp_write(c, b + off, part[i] / 2);
                keep = false;
                break;
            }
            sp_write(c, b + off, part[i]);
            sp_printf(c, "\r\n");
            off += part[i];
        }
        if (keep)
            sp_printf(c, "0\r\nX-Trailer: done\r\n\r\n");
    } else if (sp_is(name, "eof-")) {
        sp_printf(c, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
        sp_write(c, b, SP_BYTES);
        keep = false;
    } else if (sp_is(name, "cut-")) {
        sp_printf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", SP_BYTES);
        sp_write(c, b, SP_BYTES / 2);
        keep = false;
    } else if (sp_is(name, "nothing-")) {
        keep = false;
    } else if (sp_is(name, "badstatus-")) {
        sp_printf(c, "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n");
        keep = false;
    } else if (sp_is(name, "e500-") || sp_is(name, "e404-")) {
        bool e5 = sp_is(name, "e500-");
        sp_printf(c, "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\n%s",
                  e5 ? "500 Internal Server Error" : "404 Not Found", head ? "" : "nope\r\n");
    } else if (sp_is(name, "redir-") || sp_is(name, "loop-")) {
        bool loop = sp_is(name, "loop-");
        sp_printf(c, "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:%u/data/%s\r\n"
                     "Content-Length: 0\r\n\r\n", loop ? p->port : p->leg_port, name);
    } else {
        sp_printf(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    }
    free(b);
    return keep;
}

static inline void sp_serve(struct script_peer *p, int c)
{
    char head[8192];
    size_t have = 0;
    for (;;) {
        char method[8], path[512];
        size_t hl = sp_next(c, head, sizeof head, &have, method, path);
        if (!hl)
            return;
        atomic_fetch_add(&p->requests, 1);
        char req[2048];
        snprintf(req, sizeof req, "%.*s", (int)hl, head);
        pthread_mutex_lock(&p->mu);
        memcpy(p->last_head, req, sizeof req);
        pthread_mutex_unlock(&p->mu);
        have -= hl;
        memmove(head, head + hl, have);
        if (strchr(path, '#'))
            atomic_fetch_add(&p->fragments, 1);
        char *query = strchr(path, '?');
        if (query)
            *query++ = '\0';
        const char *slash = strrchr(path, '/');
        if (!(p->answer ? p->answer(p, c, method, path, req, head, &have)
                        : sp_answer(p, c, method, slash ? slash + 1 : path, query ? query : "")))
            return;
    }
}

static inline void *sp_conn_main(void *arg)
{
    struct script_peer *p = ((void **)arg)[0];
    int c = (int)(intptr_t)((void **)arg)[1];
    free(arg);
    sp_serve(p, c);
    close(c);
    atomic_fetch_sub(&p->open_conns, 1);
    return NULL;
}

static inline void *sp_main(void *arg)
{
    struct script_peer *p = arg;
    for (;;) {
        int c = accept(p->fd, NULL, NULL);
        if (c < 0)
            return NULL; /* the listener was shut down */
        atomic_fetch_add(&p->conns, 1);
        atomic_fetch_add(&p->open_conns, 1);
        void **a = malloc(2 * sizeof *a);
        a[0] = p;
        a[1] = (void *)(intptr_t)c;
        pthread_t th;
        if (pthread_create(&th, NULL, sp_conn_main, a) == 0)
            pthread_detach(th);
    }
}

/* Starts p listening on an ephemeral port of 127.0.0.1, answering with answer (NULL: the script); 0 or -1. */
static inline int sp_start_with(struct script_peer *p,
                                bool (*answer)(struct script_peer *, int, const char *, const char *, const char *,
                                               char *, size_t *),
                                void *ctx)
{
    memset(p, 0, sizeof *p);
    p->answer = answer;
    p->ctx = ctx;
    pthread_mutex_init(&p->mu, NULL);
    p->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    if (p->fd < 0 || bind(p->fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(p->fd, 64) != 0 ||
        getsockname(p->fd, (struct sockaddr *)&sa, &sl) != 0)
        return -1;
    p->port = ntohs(sa.sin_port);
    return pthread_create(&p->th, NULL, sp_main, p) == 0 ? 0 : -1;
}

static inline int sp_start(struct script_peer *p)
{
    return sp_start_with(p, NULL, NULL);
}

/* Stops accepting and waits (at most 5 s) until every connection's thread has ended. */
static inline void sp_stop(struct script_peer *p)
{
    shutdown(p->fd, SHUT_RDWR);
    pthread_join(p->th, NULL);
    close(p->fd);
    for (int i = 0; i < 500 && atomic_load(&p->open_conns); i++)
        usleep(10000);
    pthread_mutex_destroy(&p->mu);
}

static inline void sp_last_head(struct script_peer *p, char *buf, size_t len)
{
    pthread_mutex_lock(&p->mu);
    snprintf(buf, len, "%s", p->last_head);
    pthread_mutex_unlock(&p->mu);
}

/* The target http://127.0.0.1:PORT/data. */
static inline struct rb_target *sp_target(unsigned short port)
{
    char url[64], err[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/data", port);
    struct rb_target_cfg cfg = {.url = url};
    struct rb_target *t = NULL;
    assert_int_equal(rb_target_open(&t, &cfg, err, sizeof err), 0);
    return t;
}

/* Runs o to its end on one rank (at most 20 s) and adds what the engine measured to st. */
static inline void sp_run_engine(const struct rb_load_opts *o, struct rb_stats *st)
{
    struct rb_engine *e = NULL;
    assert_int_equal(rb_engine_new(&e, o), 0);
    assert_int_equal(rb_engine_start(e), 0);
    uint64_t deadline = rb_clock_ns() + 20 * RB_NS_PER_S;
    while (!rb_engine_done(e) && rb_clock_ns() < deadline)
        rb_clock_sleep_ns(5 * RB_NS_PER_MS, NULL);
    assert_true(rb_engine_done(e));
    rb_engine_collect(e, st, NULL);
    rb_engine_stop(e);
    assert_int_equal(rb_engine_status(e), 0);
    rb_engine_free(e); /* closes the keep-alive connections: the peer's threads end */
}

#endif
