/* File I/O engines: psync (pread/pwrite, one I/O at a time) and io_uring (a ring as deep as the in-flight count). */
#ifndef RB_FILEIO_INT_H
#define RB_FILEIO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Thread-safety: a queue belongs to the thread that created it (one per
 * worker, like the curl multi handles); nothing here is shared.
 */

/* Which engine a queue uses (--io-engine), chosen once per worker. */
enum rb_fio_engine { RB_FIO_PSYNC, RB_FIO_IO_URING };
/* The most entries a kernel io_uring takes (IORING_MAX_ENTRIES in io_uring/io_uring.c): a ring of --inflight. */
#define RB_FIO_URING_MAX_ENTRIES 32768u
#define RB_FIO_ENGINE_CHOICES "psync|io_uring"

/* When a writer makes its data durable (--fsync): never, once before close, after every write. */
enum rb_fio_fsync { RB_FSYNC_NONE, RB_FSYNC_CLOSE, RB_FSYNC_EACH };
#define RB_FIO_FSYNC_CHOICES "none|close|each"

/* O_DIRECT buffers, offsets and transfer sizes are multiples of this (the largest common logical block). */
#define RB_FIO_ALIGN 4096u

enum rb_fio_kind { RB_FIO_READ, RB_FIO_WRITE, RB_FIO_FSYNC };

/* One I/O: what to do (submitted) and how it went (reaped). */
struct rb_fio_io {
    enum rb_fio_kind kind;
    int fd;
    void *buf;
    size_t len;
    uint64_t off;
    uint64_t tag;     /* the caller's: which slot this I/O belongs to */
    int64_t res;      /* reaped: bytes moved (>= 0) or -errno */
};

struct rb_fio;

/*
 * One engine, chosen once (like the target tables): the loop calls through
 * it and never asks which engine it has.
 */
struct rb_fio_ops {
    const char *name;
    /* Sets q up for depth I/Os in flight. Returns 0 or -errno (-ENOSYS: the kernel has no io_uring). */
    int (*init)(struct rb_fio *q, unsigned depth);
    /* Queues io (psync: does it now). Returns 0 or -errno when it could not be queued (the I/O's own failure is its res). */
    int (*submit)(struct rb_fio *q, const struct rb_fio_io *io);
    /*
     * Moves up to max finished I/Os into out, waiting at most wait_ns for
     * the first when none has finished (0: do not wait). Returns how many,
     * or -errno when the engine itself failed.
     */
    int (*reap)(struct rb_fio *q, struct rb_fio_io *out, unsigned max, uint64_t wait_ns);
    void (*free)(struct rb_fio *q);
};

extern const struct rb_fio_ops rb_fio_psync_ops, rb_fio_uring_ops;

/* The table of engine e. Pure. */
const struct rb_fio_ops *rb_fio_ops_for(enum rb_fio_engine e);

/*
 * Creates a queue of engine e for depth I/Os in flight. Returns 0, -ENOMEM,
 * or the engine's -errno (io_uring: -ENOSYS or -EPERM when the kernel or a
 * sandbox refuses rings). Free with rb_fio_free (NULL-safe).
 */
int rb_fio_new(struct rb_fio **q, enum rb_fio_engine e, unsigned depth);
void rb_fio_free(struct rb_fio *q);

/* Queues io on q; see rb_fio_ops.submit. */
int rb_fio_submit(struct rb_fio *q, const struct rb_fio_io *io);

/* Reaps finished I/Os; see rb_fio_ops.reap. */
int rb_fio_reap(struct rb_fio *q, struct rb_fio_io *out, unsigned max, uint64_t wait_ns);

/* I/Os submitted and not yet reaped. */
unsigned rb_fio_pending(const struct rb_fio *q);

/*
 * A buffer of len bytes (rounded up to RB_FIO_ALIGN) aligned for O_DIRECT,
 * or NULL. Free with free().
 */
void *rb_fio_buffer(size_t len);

/*
 * True when err means the file system itself is gone or full, so no
 * further I/O can succeed and the run must stop (exit 3): ENOSPC, EDQUOT,
 * EROFS, ENOTCONN (a FUSE mount whose daemon died), ESTALE, ENODEV, EIO
 * is not one of them (one file's bad sector). Pure.
 */
bool rb_fio_fatal(int err);

#endif
