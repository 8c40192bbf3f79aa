/* File I/O engines: psync does each I/O when it is submitted; io_uring keeps up to depth I/Os in the kernel's ring. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "fileio_int.h"

/*
 * A queue: the engine's table and state. psync keeps its finished I/Os in
 * done[] until reaped; io_uring keeps them in the ring's completion queue.
 */
struct rb_fio {
    const struct rb_fio_ops *ops;
    unsigned depth, pending;
    /* psync */
    struct rb_fio_io *done;
    unsigned ndone;
    /* io_uring: an I/O's description waits in ios[id] while the ring has it; id travels as the SQE's user data */
    struct io_uring ring;
    bool ring_up;
    struct rb_fio_io *ios;
    unsigned *free_ids, nfree;
};

bool rb_fio_fatal(int err)
{
    return err == ENOSPC || err == EDQUOT || err == EROFS || err == ENOTCONN || err == ESTALE || err == ENODEV;
}

void *rb_fio_buffer(size_t len)
{
    void *p = NULL;
    size_t n = (len + RB_FIO_ALIGN - 1) / RB_FIO_ALIGN * RB_FIO_ALIGN;
    if (posix_memalign(&p, RB_FIO_ALIGN, n ? n : RB_FIO_ALIGN) != 0)
        return NULL;
    return p;
}

/* ---- psync: pread, pwrite, fsync on the caller's thread ---- */

static int psync_init(struct rb_fio *q, unsigned depth)
{
    q->done = calloc(depth, sizeof *q->done);
    return q->done ? 0 : -ENOMEM;
}

/* Does io now; a short transfer is the caller's to continue (as with io_uring). */
static int psync_submit(struct rb_fio *q, const struct rb_fio_io *io)
{
    if (q->ndone == q->depth)
        return -EBUSY;
    struct rb_fio_io *d = &q->done[q->ndone];
    *d = *io;
    ssize_t n;
    do {
        if (io->kind == RB_FIO_READ)
            n = pread(io->fd, io->buf, io->len, (off_t)io->off);
        else if (io->kind == RB_FIO_WRITE)
            n = pwrite(io->fd, io->buf, io->len, (off_t)io->off);
        else
            n = fsync(io->fd);
    } while (n < 0 && errno == EINTR);
    d->res = n < 0 ? -errno : n;
    q->ndone++;
    return 0;
}

static int psync_reap(struct rb_fio *q, struct rb_fio_io *out, unsigned max, uint64_t wait_ns)
{
    (void)wait_ns; /* an I/O is finished when submit returns: nothing to wait for */
    unsigned n = q->ndone < max ? q->ndone : max;
    memcpy(out, q->done, n * sizeof *out);
    memmove(q->done, q->done + n, (q->ndone - n) * sizeof *q->done);
    q->ndone -= n;
    return (int)n;
}

static void psync_free(struct rb_fio *q)
{
    free(q->done);
}

const struct rb_fio_ops rb_fio_psync_ops = {"psync", psync_init, psync_submit, psync_reap, psync_free};

/* ---- io_uring: one ring per worker, depth entries ---- */

static int uring_init(struct rb_fio *q, unsigned depth)
{
    /* The ring needs a power of two; entries beyond depth simply stay unused. */
    int rc = io_uring_queue_init(depth, &q->ring, 0);
    if (rc < 0)
        return rc;
    q->ring_up = true;
    q->ios = calloc(depth, sizeof *q->ios);
    q->free_ids = calloc(depth, sizeof *q->free_ids);
    if (!q->ios || !q->free_ids)
        return -ENOMEM;
    for (unsigned i = 0; i < depth; i++)
        q->free_ids[q->nfree++] = depth - 1 - i;
    return 0;
}

static int uring_submit(struct rb_fio *q, const struct rb_fio_io *io)
{
    if (!q->nfree)
        return -EBUSY;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
    if (!sqe)
        return -EBUSY;
    unsigned id = q->free_ids[--q->nfree];
    q->ios[id] = *io;
    if (io->kind == RB_FIO_READ)
        io_uring_prep_read(sqe, io->fd, io->buf, (unsigned)io->len, io->off);
    else if (io->kind == RB_FIO_WRITE)
        io_uring_prep_write(sqe, io->fd, io->buf, (unsigned)io->len, io->off);
    else
        io_uring_prep_fsync(sqe, io->fd, 0);
    io_uring_sqe_set_data(sqe, (void *)(uintptr_t)id);
    /* Submitted at once: the in-flight count is the ring's real depth, never a batch waiting in user space. */
    int rc = io_uring_submit(&q->ring);
    if (rc < 0) {
        q->free_ids[q->nfree++] = id;
        return rc;
    }
    return 0;
}

static int uring_reap(struct rb_fio *q, struct rb_fio_io *out, unsigned max, uint64_t wait_ns)
{
    unsigned n = 0;
    struct io_uring_cqe *cqe;
    if (max && wait_ns && q->pending) {
        struct __kernel_timespec ts = {.tv_sec = (long long)(wait_ns / 1000000000u), .tv_nsec = (long long)(wait_ns % 1000000000u)};
        int rc = io_uring_wait_cqe_timeout(&q->ring, &cqe, &ts);
        if (rc < 0 && rc != -ETIME && rc != -EINTR)
            return rc;
    }
    while (n < max && io_uring_peek_cqe(&q->ring, &cqe) == 0) {
        unsigned id = (unsigned)(uintptr_t)io_uring_cqe_get_data(cqe);
        out[n] = q->ios[id];
        out[n].res = cqe->res;
        q->free_ids[q->nfree++] = id;
        io_uring_cqe_seen(&q->ring, cqe);
        n++;
    }
    return (int)n;
}

static void uring_free(struct rb_fio *q)
{
    free(q->ios);
    free(q->free_ids);
    if (q->ring_up)
        io_uring_queue_exit(&q->ring);
}

const struct rb_fio_ops rb_fio_uring_ops = {"io_uring", uring_init, uring_submit, uring_reap, uring_free};

/* ---- the queue ---- */

const struct rb_fio_ops *rb_fio_ops_for(enum rb_fio_engine e)
{
    return e == RB_FIO_IO_URING ? &rb_fio_uring_ops : &rb_fio_psync_ops;
}

int rb_fio_new(struct rb_fio **out, enum rb_fio_engine e, unsigned depth)
{
    *out = NULL;
    struct rb_fio *q = calloc(1, sizeof *q);
    if (!q)
        return -ENOMEM;
    q->ops = rb_fio_ops_for(e);
    q->depth = depth ? depth : 1;
    int rc = q->ops->init(q, q->depth);
    if (rc) {
        rb_fio_free(q);
        return rc;
    }
    *out = q;
    return 0;
}

void rb_fio_free(struct rb_fio *q)
{
    if (!q)
        return;
    q->ops->free(q);
    free(q);
}

int rb_fio_submit(struct rb_fio *q, const struct rb_fio_io *io)
{
    int rc = q->ops->submit(q, io);
    if (!rc)
        q->pending++;
    return rc;
}

int rb_fio_reap(struct rb_fio *q, struct rb_fio_io *out, unsigned max, uint64_t wait_ns)
{
    int n = q->ops->reap(q, out, max, wait_ns);
    if (n > 0)
        q->pending -= (unsigned)n;
    return n;
}

unsigned rb_fio_pending(const struct rb_fio *q)
{
    return q->pending;
}
