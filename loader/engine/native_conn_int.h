/*
 * Native engine internals shared by its loop and set-up (native.c), its
 * connections (native_conn.c: connect, TLS, send, read and parse, redirect
 * legs) and its request heads (native_head.c). Everything here belongs to
 * one worker's thread.
 */
#ifndef RB_NATIVE_CONN_INT_H
#define RB_NATIVE_CONN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <curl/curl.h>
#include <http_parser.h>

#include "../proto/target_native_int.h"
#include "native_tls_int.h"
#include "worker_int.h"

#define RB_NREQ_NAME_MAX (3 * 1024 + 1) /* an escaped object name */
#define RB_NHDR_MAX 128                 /* captured header name and value (cache-status counting) */
#define RB_NLOC_MAX 2048                /* a redirect's Location */
#define RB_NPOOL_MAX 64                 /* redirect targets with a keep-alive pool each (AIStore: one per storage target) */

/* An idle keep-alive connection: its socket and, over https, its TLS state. */
struct rb_nidle {
    int fd;
    struct rb_ntls_conn tls;
};

/*
 * Idle keep-alive connections to one host a redirect led to (AIStore: a
 * target the proxy sent a request to), shared by the worker's requests as
 * AIStore's own clients keep a pool per target. Made at the first redirect
 * to the host; a request takes a connection and gives it back when done.
 */
struct rb_npool {
    char hostport[RB_NHOST_MAX];
    size_t hostport_len;
    struct sockaddr_storage addr;
    socklen_t alen;
    struct rb_nidle *idle;     /* up to the worker's slots */
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
struct rb_nconn {
    int fd;                    /* the socket the request is on: the endpoint's, or a redirect's (leg); -1: closed */
    unsigned ep;
    bool verify, no_body, busy, connecting, reused, got_bytes, headers_done, complete, in_value;
    bool is_loc, redirect;     /* the header being read is Location; the response is a redirect to follow */
    bool handshaking;          /* TLS: the handshake is under way */
    bool sending;              /* io_uring: a send of this request is in the kernel */
    bool all_headers;          /* every header is read (cache status, ETag); else only a redirect's (Location) */
    bool plain;                /* the head was the common one (rb_nresp_head): plain_left body bytes are to come */
    uint64_t plain_left;
    uint64_t connect_ns;       /* when the connection began (TLS: the handshake's time is from here) */
    struct rb_ntls_conn tls;   /* TLS state of fd, or none */
    size_t wlen, woff;
    uint64_t ttfb_ns;
    uint64_t idx;              /* the object's index in its set: what a put that cleans up notes as written */
    char *wbuf;                /* the request's head, written per request */
    /* What this request sends: the op's method and body, or a driver's (rb_native_send). */
    const char *method;
    bool sends_body, keep_body; /* keep_body: the response body's start is kept whatever its status */
    uint64_t body_off;         /* the payload's offset of the body's first byte (a multipart part's) */
    const char *body_mem;      /* the body from memory (put_size bytes), or NULL: made from the payload */
    const char *extra_hdr;     /* one more header line (no CRLF), or NULL */
    http_parser p;
    struct rb_req r;
    size_t hname_len, hval_len;
    char hname[RB_NHDR_MAX], hval[RB_NHDR_MAX];
    /* Redirects (rare): where the request is now and what it came from. */
    int home_fd;               /* the endpoint's keep-alive connection while a leg runs on fd; -1 none */
    struct rb_ntls_conn home_tls; /* home_fd's TLS state, or none */
    struct rb_npool *leg;         /* the pool fd belongs to, or NULL: fd is the endpoint's */
    unsigned redirects;
    uint64_t range_off, range_len; /* the request's Range (len 0: none), for each leg */
    size_t loc_len;
    char loc[RB_NLOC_MAX];
};

/*
 * What differs between the ops, chosen once per worker: the method, whether
 * the request carries a body (PUT: its length in the head, the payload after
 * it from r.put_pos of r.put_size) or the response carries none (HEAD), and
 * what a request readies before it goes out. Sending needs no branch on the op.
 */
struct rb_nop {
    const char *method;
    bool sends_body, no_body;
    /* Readies r for one request of name (size bytes, 0 unknown); a ranged GET sets *len (0: whole) and *off. */
    void (*ready)(struct rb_worker *w, struct rb_req *r, const char *name, uint64_t size, uint64_t *off, uint64_t *len);
};

/* A worker's native state; endpoints are resolved once, the request's fixed parts (rb_nshape) built once. */
/*
 * What a connection asks of the io_uring loop: native_uring.c sets it with
 * rb_native.ur, and native_conn.c calls the loop through it, while the loop
 * calls the connections' rb_nconn_* directly: the arrow runs one way.
 */
struct rb_nring_ops {
    /* Queues what is left of c's request as a send (and arms its connection's receive), submitted with the next wait. */
    void (*send)(struct rb_worker *w, struct rb_nconn *c);
    /* Queues a watch of c's connecting socket (its end comes to rb_nconn_connected). Returns 0 or -errno. */
    int (*watch)(struct rb_worker *w, struct rb_nconn *c);
    /* Closes fd: the kernel's requests on it are ended (their completions ignored), then the descriptor. */
    void (*close)(struct rb_worker *w, int fd);
};

struct rb_native {
    const struct rb_nop *op;
    const struct rb_nproto *proto;
    struct rb_nauth *auth;     /* the protocol's signing state, or NULL */
    struct rb_nconn *c;
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
    struct rb_npool *pools;                   /* npool_max, made at the first redirect (or with the cluster map) */
    unsigned npools, npool_max;
    /* Direct routing (RB_TCAP_DIRECT, --ais-direct): each node's pool (requests go there first); false: to the endpoints. */
    bool direct;
    struct rb_npool **tpool;
    struct rb_nshape shape;
    struct rb_nuring *ur;      /* the io_uring loop's state (native_uring.c), or NULL: the epoll loop */
    const struct rb_nring_ops *ring; /* with ur: the loop's calls a connection makes */
};

/* ---- native_conn.c: a connection and the request on it ---- */

/* Sets s's parser callbacks; with headers, header lines are read too (cache-status counting, Location). */
void rb_nconn_parser_settings(http_parser_settings *s, bool headers);
/* Readies c to read a (new) response: what the last one set is cleared, the parser started again. */
void rb_nconn_reset(struct rb_nconn *c);
/* Closes c's socket (and its TLS state); idempotent. */
void rb_nconn_close(struct rb_nconn *c);
/* Puts c's request on a leg to pool pl: the endpoint's connection (and its TLS state) waits in home_fd. */
void rb_nconn_leg_enter(struct rb_nconn *c, struct rb_npool *pl);
/* Leaves a redirect's leg: its connection back to its pool (keep) or closed, the endpoint's back in c. No-op without a leg. */
void rb_nconn_leg_end(struct rb_worker *w, struct rb_nconn *c, bool keep);
/*
 * Ends c's request with rc (CURLE_OK: a response was parsed; msg: the error
 * line, or NULL) and frees its slot; closes the connection unless it stays alive.
 */
void rb_nconn_finish(struct rb_worker *w, struct rb_nconn *c, CURLcode rc, const char *msg);
/* Opens c's connection (its endpoint's, or its redirect leg's host) and starts it; a failure finishes the request. */
void rb_nconn_connect(struct rb_worker *w, struct rb_nconn *c);
/* Writes what is left of the request; the rest goes when the socket is writable again (io_uring: submitted). */
void rb_nconn_send(struct rb_worker *w, struct rb_nconn *c);
/* What is left to send of c's request (head, then a PUT's body made from the payload into n->rbuf), and where. */
size_t rb_nconn_pending(struct rb_native *n, struct rb_nconn *c, const char **at);
/* k more bytes of c's request went out. */
void rb_nconn_wrote(struct rb_nconn *c, size_t k);
/* A send failed with errno err (0: it sent nothing): a stale keep-alive connection is replaced and the request sent again, else it fails. */
void rb_nconn_send_failed(struct rb_worker *w, struct rb_nconn *c, int err);
/* c's connect ended (the socket is writable or failed): the request fails, or goes (TLS: the handshake first). */
void rb_nconn_connected(struct rb_worker *w, struct rb_nconn *c);
/* k response bytes of c's at buf: parsed; true when the request ended with them (completed, redirected, or failed). */
bool rb_nconn_data(struct rb_worker *w, struct rb_nconn *c, const char *buf, size_t k);
/* c's connection ended (err 0: EOF) before its response did: a stale keep-alive is retried, a close-delimited body completes, else the request fails. */
void rb_nconn_ended(struct rb_worker *w, struct rb_nconn *c, int err);
/*
 * The pool of hostport ("HOST:PORT", scheme "http://" or "https://"), made
 * and its host resolved once at its first use; NULL when none can be (too
 * many hosts, no memory, the host does not resolve).
 */
struct rb_npool *rb_npool_get(struct rb_worker *w, const char *scheme, const char *hostport, size_t len);
/* Sends c's request on its leg (c->leg): an idle connection of the leg's pool, or a new one. */
void rb_nconn_leg_go(struct rb_worker *w, struct rb_nconn *c);
/* Handles epoll event ev on c's socket fd (an event of a socket c no longer uses is dropped). */
void rb_nconn_event(struct rb_worker *w, struct rb_nconn *c, int fd, uint32_t ev);
/*
 * Resolves url ("http[s]://HOST[:PORT]") once into addr and hostport
 * ("HOST:PORT"); on failure leaves *alen 0 (requests then fail as connect errors).
 */
void rb_nresolve(const char *url, struct sockaddr_storage *addr, socklen_t *alen, char *hostport, size_t hplen);

/* ---- native_uring.c: the io_uring loop (plain http:// connections; see rb_native_uring_fits) ---- */

/* Sets up w's io_uring state (w->nat->ur); the ring itself is made by rb_nuring_start. Returns 0 or -errno. */
int rb_nuring_new(struct rb_worker *w);
/* Makes w's ring on the calling thread (the one that submits and waits), once. Returns 0 or -errno. */
int rb_nuring_start(struct rb_worker *w);
/* Frees w's io_uring state (the ring, its buffers); safe when there is none. */
void rb_nuring_free(struct rb_worker *w);
/* Submits what is queued and waits at most wait_ns for completions, then handles them all. Returns 0 or -errno. */
int rb_nuring_wait(struct rb_worker *w, uint64_t wait_ns);

/* ---- native_head.c: request heads ---- */

/* The longest query a driver adds to a request (rb_nreq: "partNumber=N&uploadId=ID", the ID escaped). */
#define RB_NQUERY_MAX 1600
/*
 * Writes the head of one request of name on c into c->wbuf: request line
 * (the shape's path, the escaped name, its query and extra_query), Host, a
 * GET's Range, a body's length, the shape's fixed line, the protocol's auth
 * lines. c->method and c->sends_body are set. Returns 0, -ENAMETOOLONG or -ENOSPC.
 */
int rb_nhead_line(struct rb_worker *w, struct rb_nconn *c, const char *name, const char *extra_query);
/* As rb_nhead_line for a whole path ("/PATH?QUERY", as sent and signed) instead of the shape's path and a name. */
int rb_nhead_path(struct rb_worker *w, struct rb_nconn *c, const char *path);

/* Op row op's request of name (size bytes) on c: c->r readied through it, then its head (rb_nhead_line). */
int rb_nhead_build(struct rb_worker *w, struct rb_nconn *c, const struct rb_nop *op, const char *name, uint64_t size);
/*
 * Writes the head's rest at p, after c's request line ("METHOD path[?query]"
 * whose path and query are given for signing): the version, Host, Range, a
 * PUT's length, the shape's fixed line, the protocol's auth lines, the
 * blank line. Returns 0 or the auth hook's -ENOSPC.
 */
int rb_nhead_rest(struct rb_worker *w, struct rb_nconn *c, char *p, const char *path, size_t path_len, const char *query,
                  size_t query_len, const char *host, size_t host_len);

#endif
