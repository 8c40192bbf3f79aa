/*
 * The native engine's io_uring loop (--io-loop): each request's head is a
 * send submission, each connection has one multishot receive armed for as
 * long as it lives (its data lands in buffers of a provided-buffer ring),
 * and everything a loop iteration queued is submitted together with the
 * wait in one io_uring_enter. What a completion means (bytes sent, response
 * bytes to parse, EOF, a connect's end) goes to the same functions the
 * epoll loop calls (native_conn.c): one state machine, two ways to wait.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <liburing.h>

#include "native_conn_int.h"
#include "railbench/clock.h"
#include "railbench/log.h"

#define BGID 0                   /* the provided-buffer group of every worker's ring (one ring per worker) */
#define BUF_BYTES (32u << 10)    /* one receive buffer: a completion carries at most this much */
#define BUFS_MIN 16
#define BUFS_MAX 512
#define SQ_MAX 4096

/* What a completion is for, in the top byte of its user data; then the descriptor's generation and the descriptor. */
enum { K_RECV = 1, K_SEND, K_CONN, K_WAKE };
#define GEN_MASK 0xffffffu

/*
 * One descriptor the ring has seen. A completion names its descriptor and
 * the descriptor's generation when it was submitted: closing a descriptor
 * moves its generation on, so what the kernel still finishes for the old
 * socket (its number may be a new socket's by then) is told apart. The
 * connection a completion belongs to is the slot that last sent on the
 * descriptor (a pooled redirect connection moves between slots).
 */
struct rb_nufd {
    uint32_t gen;
    uint32_t slot;
    bool armed;                  /* a multishot receive is armed on it */
};

struct rb_nuring {
    struct io_uring ring;
    bool up;                     /* the ring is made (on the worker's thread: rb_nuring_start) */
    unsigned entries;
    struct io_uring_buf_ring *br;
    char *bufs;                  /* nbufs buffers of BUF_BYTES */
    unsigned nbufs;
    struct rb_nufd *fds;         /* by descriptor number, grown when a higher one shows up */
    unsigned nfds;
};

/* ---- the probe: once per process ---- */

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static char probe_why[200];      /* "" when io_uring runs here */
static unsigned probe_flags;     /* the set-up flags this kernel takes */
static atomic_flag probe_said = ATOMIC_FLAG_INIT;

/* A multishot receive with a provided buffer on a socket pair: what the loop needs, tried once (kernel 6.0+). */
static const char *probe_multishot(struct io_uring *ring)
{
    static _Alignas(4096) char ring_mem[4096]; /* the kernel may keep them until the probe's ring is gone */
    static char buf[64];
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return "socketpair failed";
    const char *why = NULL;
    struct io_uring_buf_reg reg = {.ring_addr = (unsigned long)ring_mem, .ring_entries = 1, .bgid = BGID};
    if (io_uring_register_buf_ring(ring, &reg, 0) != 0) {
        why = "no provided-buffer rings (kernel older than 5.19)";
    } else {
        struct io_uring_buf_ring *br = (struct io_uring_buf_ring *)ring_mem;
        io_uring_buf_ring_init(br);
        io_uring_buf_ring_add(br, buf, sizeof buf, 0, io_uring_buf_ring_mask(1), 0);
        io_uring_buf_ring_advance(br, 1);
        struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
        io_uring_prep_recv_multishot(sqe, sv[0], NULL, 0, 0);
        sqe->flags |= IOSQE_BUFFER_SELECT;
        sqe->buf_group = BGID;
        struct io_uring_cqe *cqe = NULL;
        if (write(sv[1], "x", 1) != 1 || io_uring_submit_and_wait(ring, 1) < 0 || io_uring_peek_cqe(ring, &cqe) != 0 ||
            cqe->res != 1 || !(cqe->flags & IORING_CQE_F_BUFFER))
            why = "no multishot receive (kernel older than 6.0)";
    }
    close(sv[0]); /* what is still armed ends with the ring (io_uring_queue_exit) */
    close(sv[1]);
    return why;
}

static void probe(void)
{
    struct io_uring ring;
    /* Completions run only when the worker waits (no interrupt while it runs): the kernel's best mode for one thread. */
    struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};
    int rc = io_uring_queue_init_params(8, &ring, &p);
    if (rc == -EINVAL) { /* before Linux 6.1 */
        p = (struct io_uring_params){0};
        rc = io_uring_queue_init_params(8, &ring, &p);
    }
    if (rc < 0) {
        snprintf(probe_why, sizeof probe_why, "io_uring_setup: %s", strerror(-rc));
        return;
    }
    probe_flags = p.flags & (IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
    const char *why = NULL;
    struct io_uring_probe *ops = io_uring_get_probe_ring(&ring);
    if (!(p.features & IORING_FEAT_EXT_ARG))
        why = "no waiting with a timeout in one call (kernel older than 5.11)";
    else if (!ops || !io_uring_opcode_supported(ops, IORING_OP_SEND) || !io_uring_opcode_supported(ops, IORING_OP_RECV) ||
             !io_uring_opcode_supported(ops, IORING_OP_POLL_ADD))
        why = "no socket send, receive or poll operations";
    else
        why = probe_multishot(&ring);
    if (ops)
        io_uring_free_probe(ops);
    io_uring_queue_exit(&ring);
    if (why)
        snprintf(probe_why, sizeof probe_why, "%s", why);
}

bool rb_native_uring_fits(const struct rb_load_opts *o, const char **why)
{
    const char *w = NULL;
    const struct rb_target *t = o->target;
    for (size_t e = 0; e < rb_target_endpoint_count(t) && !w; e++)
        if (rb_target_endpoint_tls(t, e))
            w = "https:// endpoints run on epoll";
    if (!w && o->listing)
        w = "listings run on epoll";
    if (!w && ((o->op != RB_LOAD_GET && o->op != RB_LOAD_HEAD && o->op != RB_LOAD_DELETE) || o->mix))
        w = "GET, HEAD and DELETE only (requests with a body, and load mixed, run on epoll)";
    if (why)
        *why = w;
    return !w;
}

enum rb_io_loop rb_native_io_loop(const struct rb_load_opts *o)
{
    if (o->io_loop == RB_IOLOOP_EPOLL || !rb_native_uring_fits(o, NULL))
        return RB_IOLOOP_EPOLL;
    pthread_once(&probe_once, probe);
    if (!probe_why[0])
        return RB_IOLOOP_URING;
    if (o->io_loop == RB_IOLOOP_AUTO && !atomic_flag_test_and_set(&probe_said))
        rb_info("io_uring is not available here (%s): the native engine runs on epoll", probe_why);
    return RB_IOLOOP_EPOLL;
}

/* ---- set-up ---- */

static unsigned pow2_at_least(unsigned n)
{
    unsigned p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

/* A connection's calls on the loop (struct rb_nring_ops), below. */
static void ring_send(struct rb_worker *w, struct rb_nconn *c);
static int ring_watch(struct rb_worker *w, struct rb_nconn *c);
static void ring_close(struct rb_worker *w, int fd);
static const struct rb_nring_ops ring_ops = {.send = ring_send, .watch = ring_watch, .close = ring_close};

int rb_nuring_new(struct rb_worker *w)
{
    const struct rb_load_opts *o = w->o;
    if (o->io_loop == RB_IOLOOP_URING) {
        const char *why;
        if (!rb_native_uring_fits(o, &why)) {
            rb_error("--io-loop io_uring: %s; use --io-loop epoll or auto", why);
            return -EINVAL;
        }
        pthread_once(&probe_once, probe);
        if (probe_why[0]) {
            rb_error("--io-loop io_uring: io_uring is not available here (%s); use --io-loop epoll or auto", probe_why);
            return -ENOSYS;
        }
    }
    if (rb_native_io_loop(o) != RB_IOLOOP_URING)
        return 0;
    struct rb_nuring *u = calloc(1, sizeof *u);
    if (!u)
        return -ENOMEM;
    w->nat->ur = u;
    w->nat->ring = &ring_ops;
    /* A send and a receive per connection at most, the wake-up, and room. */
    u->entries = pow2_at_least(2 * w->nreq + 8);
    u->entries = u->entries > SQ_MAX ? SQ_MAX : u->entries;
    unsigned nb = 2 * w->nreq;
    u->nbufs = pow2_at_least(nb < BUFS_MIN ? BUFS_MIN : nb > BUFS_MAX ? BUFS_MAX : nb);
    void *ring = NULL;
    if (posix_memalign(&ring, 4096, u->nbufs * sizeof(struct io_uring_buf)) != 0)
        return -ENOMEM;
    u->br = ring;
    if (!(u->bufs = malloc((size_t)u->nbufs * BUF_BYTES)))
        return -ENOMEM;
    return 0;
}

static struct io_uring_sqe *sqe_get(struct rb_nuring *u)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (!sqe) { /* the queue is full (more than it was sized for): submit what it has, without waiting */
        io_uring_submit(&u->ring);
        sqe = io_uring_get_sqe(&u->ring);
    }
    return sqe;
}

static uint64_t tag(unsigned kind, uint32_t gen, int fd)
{
    return (uint64_t)kind << 56 | (uint64_t)(gen & GEN_MASK) << 32 | (uint32_t)fd;
}

/* The worker's wake-up eventfd (ticks, stop), watched for as long as the ring lives. */
static int arm_wake(struct rb_worker *w)
{
    struct io_uring_sqe *sqe = sqe_get(w->nat->ur);
    if (!sqe)
        return -EBUSY;
    io_uring_prep_poll_multishot(sqe, w->evfd, POLLIN);
    io_uring_sqe_set_data64(sqe, tag(K_WAKE, 0, w->evfd));
    return 0;
}

static void buf_put(struct rb_nuring *u, unsigned bid)
{
    io_uring_buf_ring_add(u->br, u->bufs + (size_t)bid * BUF_BYTES, BUF_BYTES, (unsigned short)bid,
                          io_uring_buf_ring_mask(u->nbufs), 0);
    io_uring_buf_ring_advance(u->br, 1);
}

int rb_nuring_start(struct rb_worker *w)
{
    struct rb_nuring *u = w->nat->ur;
    if (u->up)
        return 0;
    struct io_uring_params p = {.flags = probe_flags};
    int rc = io_uring_queue_init_params(u->entries, &u->ring, &p);
    if (rc < 0) {
        rb_error("io_uring_setup (native engine, thread %u): %s", w->id, strerror(-rc));
        return rc;
    }
    u->up = true;
    struct io_uring_buf_reg reg = {.ring_addr = (unsigned long)u->br, .ring_entries = u->nbufs, .bgid = BGID};
    if ((rc = io_uring_register_buf_ring(&u->ring, &reg, 0)) != 0) {
        rb_error("io_uring: registering the receive buffers (native engine, thread %u): %s", w->id, strerror(-rc));
        return rc;
    }
    io_uring_buf_ring_init(u->br);
    for (unsigned i = 0; i < u->nbufs; i++)
        io_uring_buf_ring_add(u->br, u->bufs + (size_t)i * BUF_BYTES, BUF_BYTES, (unsigned short)i,
                              io_uring_buf_ring_mask(u->nbufs), (int)i);
    io_uring_buf_ring_advance(u->br, (int)u->nbufs);
    return arm_wake(w);
}

void rb_nuring_free(struct rb_worker *w)
{
    struct rb_nuring *u = w->nat ? w->nat->ur : NULL;
    if (!u)
        return;
    if (u->up)
        io_uring_queue_exit(&u->ring); /* ends what is still in it, and with it the sockets it held */
    free(u->br);
    free(u->bufs);
    free(u->fds);
    free(u);
    w->nat->ur = NULL;
}

/* ---- submissions ---- */

/* fd's entry, the table grown to hold it (an allocation only when a higher descriptor number shows up). */
static struct rb_nufd *fd_entry(struct rb_nuring *u, int fd)
{
    if ((unsigned)fd >= u->nfds) {
        unsigned n = u->nfds ? u->nfds : 64;
        while (n <= (unsigned)fd)
            n *= 2;
        struct rb_nufd *t = realloc(u->fds, n * sizeof *t);
        if (!t)
            return NULL;
        memset(t + u->nfds, 0, (n - u->nfds) * sizeof *t);
        u->fds = t;
        u->nfds = n;
    }
    return &u->fds[fd];
}

/* Arms fd's multishot receive: its data comes in the ring's buffers, completion after completion, until EOF or an error. */
static bool arm_recv(struct rb_nuring *u, struct rb_nufd *f, int fd)
{
    struct io_uring_sqe *sqe = sqe_get(u);
    if (!sqe)
        return false;
    io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BGID;
    io_uring_sqe_set_data64(sqe, tag(K_RECV, f->gen, fd));
    f->armed = true;
    return true;
}

static void ring_send(struct rb_worker *w, struct rb_nconn *c)
{
    struct rb_native *n = w->nat;
    struct rb_nuring *u = n->ur;
    struct rb_nufd *f = fd_entry(u, c->fd);
    if (!f) {
        rb_nconn_finish(w, c, CURLE_OUT_OF_MEMORY, "out of memory (native engine, io_uring)");
        return;
    }
    f->slot = (uint32_t)(c - n->c);
    const char *at;
    size_t len = rb_nconn_pending(n, c, &at); /* a head: bodies made from the payload stay on epoll (rb_native_uring_fits) */
    struct io_uring_sqe *sqe = NULL;
    if ((f->armed || arm_recv(u, f, c->fd)) && (!len || (sqe = sqe_get(u)))) {
        if (!len)
            return;
        io_uring_prep_send(sqe, c->fd, at, len, MSG_NOSIGNAL);
        io_uring_sqe_set_data64(sqe, tag(K_SEND, f->gen, c->fd));
        c->sending = true;
        return;
    }
    rb_nconn_finish(w, c, CURLE_SEND_ERROR, "io_uring: no room in the submission queue (native engine)");
}

static int ring_watch(struct rb_worker *w, struct rb_nconn *c)
{
    struct rb_nuring *u = w->nat->ur;
    struct rb_nufd *f = fd_entry(u, c->fd);
    if (!f)
        return -ENOMEM;
    struct io_uring_sqe *sqe = sqe_get(u);
    if (!sqe)
        return -EBUSY;
    f->slot = (uint32_t)(c - w->nat->c);
    io_uring_prep_poll_add(sqe, c->fd, POLLOUT);
    io_uring_sqe_set_data64(sqe, tag(K_CONN, f->gen, c->fd));
    return 0;
}

static void ring_close(struct rb_worker *w, int fd)
{
    struct rb_nuring *u = w->nat->ur;
    if ((unsigned)fd < u->nfds) {
        /*
         * The armed receive (a send, a connect's poll) holds the socket: shut
         * it down so they end now and the peer sees the close now, not when
         * the ring lets go. Their completions carry the old generation.
         */
        shutdown(fd, SHUT_RDWR);
        u->fds[fd].gen++;
        u->fds[fd].armed = false;
    }
    close(fd);
}

/* ---- completions ---- */

/* The connection a live completion on fd is for: the slot that sent on it last, while its request is on fd. */
static struct rb_nconn *owner(struct rb_worker *w, const struct rb_nufd *f, int fd)
{
    if (f->slot >= w->nreq)
        return NULL;
    struct rb_nconn *c = &w->nat->c[f->slot];
    return c->busy && c->fd == fd ? c : NULL;
}

static void on_recv(struct rb_worker *w, struct rb_nufd *f, struct rb_nconn *c, int fd, const struct io_uring_cqe *cqe)
{
    struct rb_nuring *u = w->nat->ur;
    if (f && !(cqe->flags & IORING_CQE_F_MORE))
        f->armed = false; /* the receive ended (EOF, an error, no buffer left): the next send arms one again */
    if (c && !c->connecting) {
        if (cqe->res > 0) /* handed over now: its time is taken as it is parsed, as on epoll */
            rb_nconn_data(w, c, u->bufs + (size_t)(cqe->flags >> IORING_CQE_BUFFER_SHIFT) * BUF_BYTES,
                          (size_t)cqe->res);
        else if (cqe->res == -ENOBUFS)
            arm_recv(u, f, fd); /* the buffers come back as this batch is handled; the data waits in the socket */
        else if (cqe->res != -ECANCELED)
            rb_nconn_ended(w, c, -cqe->res);
    }
    if (cqe->flags & IORING_CQE_F_BUFFER)
        buf_put(u, cqe->flags >> IORING_CQE_BUFFER_SHIFT);
}

static void on_cqe(struct rb_worker *w, const struct io_uring_cqe *cqe)
{
    struct rb_nuring *u = w->nat->ur;
    uint64_t t = io_uring_cqe_get_data64(cqe);
    unsigned kind = (unsigned)(t >> 56);
    int fd = (int)(uint32_t)t;
    if (kind == K_WAKE) {
        rb_worker_eat_wake(w);
        if (!(cqe->flags & IORING_CQE_F_MORE))
            arm_wake(w);
        return;
    }
    struct rb_nufd *f = (unsigned)fd < u->nfds && (u->fds[fd].gen & GEN_MASK) == (uint32_t)(t >> 32 & GEN_MASK)
                            ? &u->fds[fd]
                            : NULL; /* NULL: for a socket since closed */
    struct rb_nconn *c = f ? owner(w, f, fd) : NULL;
    switch (kind) {
    case K_RECV:
        on_recv(w, f, c, fd, cqe);
        break;
    case K_SEND:
        if (!c || !c->sending)
            break;
        c->sending = false;
        if (cqe->res > 0) {
            rb_nconn_wrote(c, (size_t)cqe->res);
            ring_send(w, c); /* the rest of a partial send, if any */
        } else if (cqe->res == -EINTR || cqe->res == -EAGAIN) {
            ring_send(w, c);
        } else {
            rb_nconn_send_failed(w, c, -cqe->res);
        }
        break;
    case K_CONN:
        if (c && c->connecting)
            rb_nconn_connected(w, c);
        break;
    default:
        break;
    }
}

int rb_nuring_wait(struct rb_worker *w, uint64_t wait_ns)
{
    struct rb_nuring *u = w->nat->ur;
    struct __kernel_timespec ts = {.tv_sec = (long long)(wait_ns / RB_NS_PER_S), .tv_nsec = (long long)(wait_ns % RB_NS_PER_S)};
    struct io_uring_cqe *cqe = NULL;
    /* One io_uring_enter: this iteration's sends and receives submitted, then the wait for the first completion. */
    int rc = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, &ts, NULL);
    if (rc < 0 && rc != -ETIME && rc != -EINTR) {
        rb_error("io_uring_enter (native engine, thread %u): %s", w->id, strerror(-rc));
        return rc;
    }
    unsigned head, k = 0;
    io_uring_for_each_cqe(&u->ring, head, cqe)
    {
        on_cqe(w, cqe);
        k++;
    }
    io_uring_cq_advance(&u->ring, k);
    return 0;
}
