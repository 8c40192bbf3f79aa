/* The file protocol's request loop: a request opens a file, moves it block by block through the I/O engine, closes it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_int.h"
#include "file_loop_int.h"
#include "openfiles_int.h"
#include "pagecache_int.h"
#include "../engine/fwatch_int.h"
#include "../engine/mixed_int.h"
#include "../engine/payload_int.h"
#include "railbench/beneath.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "../engine/worker_int.h"
#include "../proto/target_int.h"

/* Longest wait for a completion or a due send before the loop looks at ticks and stop flags again. */
#define IDLE_WAIT_NS (20 * RB_NS_PER_MS)
#define REAP_BATCH 64
#define UNMADE_NAMED 8 /* unfinished files removed that each process names */

/*
 * One request slot: the file being read or written and the accounting struct the HTTP
 * transports fill too, so rb_xfer_record classifies and logs all alike; its block buffer is aligned for O_DIRECT.
 */
struct fop;

struct fslot {
    struct rb_req r;
    const struct fop *op;      /* what the request does (load mixed: drawn per request) */
    int fd;
    bool busy, syncing, size_known;
    bool fd_kept;              /* fd is the open-file table's: not closed when the request ends */
    bool created;              /* a put made this file (O_CREAT | O_EXCL): it removes it when it fails */
    uint64_t idx;              /* the object's index in its set (what a put that cleans up notes as written) */
    uint64_t pos, end;         /* next byte of the transfer and where it ends */
    uint64_t ttfb_ns;          /* first block's completion from the start; 0 none yet */
    uint64_t io_ns;            /* when its I/O in the engine was submitted; 0: none there */
    enum rb_fio_kind io_kind;
    unsigned char *buf;
    char path[PATH_MAX];
};

struct rb_file_loop;

/*
 * What differs between reading, writing, deleting and stat-ing, as one row
 * chosen once per worker: start opens or acts, done takes a finished I/O.
 */
struct fop {
    void (*start)(struct rb_worker *w, struct fslot *s, uint64_t size);
    void (*done)(struct rb_worker *w, struct fslot *s, const struct rb_fio_io *io);
};

struct rb_file_loop {
    const struct fop *op;      /* the op of every request; NULL under load mixed (each draws its own) */
    const struct rb_file_opts *fo;
    struct rb_file_opts fo_default;
    struct rb_fio *q;
    struct fslot *s;
    const char *root;
    int dir;                   /* root held open: every name is resolved beneath it, never through a link */
    int fatal;                 /* -errno that ends the run (a full or vanished file system); 0 none */
    char fatal_what[PATH_MAX + 64]; /* the call and path that met it */
    int oflags_read, oflags_write;
    bool mixed;                /* load mixed: ops drawn per request, accounted per op (mixed.c's state, w->mix) */
    struct rb_openfiles *open; /* ranged reads: files stay open between requests; NULL otherwise */
    struct rb_fwatch *watch;   /* where this worker publishes the file system call it is in (fwatch_int.h) */
};

/* Calls that may block on a file system that stops answering: published for the watchdog while they run. */
#define WATCHED(L, op, path, call) RB_FWATCHED((L)->watch, op, path, call)

static const char *const kind_names[] = {[RB_FIO_READ] = "read", [RB_FIO_WRITE] = "write", [RB_FIO_FSYNC] = "fsync"};

/* The run's one `error:` line for a file system that stopped working, once per process. */
static atomic_flag fatal_logged = ATOMIC_FLAG_INIT;

/*
 * A put that did not finish removes the file it created (partial or empty: no run leaves half a file behind).
 * Returns true when the file is gone; false (warned, naming the path) when it stays: a vanished file system.
 */
static bool unmake(const struct fslot *s)
{
    struct rb_file_loop *L = s->r.w->file;
    if (rb_fwatch_fired()) { /* a file system that stopped answering is asked nothing more: the file is listed */
        rb_warn("cannot remove %s, the unfinished file this run created: the file system is not answering (rm -f -- "
                "'%s' removes it)", s->path, s->path);
        return false;
    }
    int rc = (int)WATCHED(L, "unlink", s->path, rb_beneath_unlink(L->dir, s->r.name));
    if (rc == 0) {
        /* Which files went is said (the first few of each process: a wide run cut short has many in flight). */
        static atomic_uint said;
        unsigned k = atomic_fetch_add(&said, 1);
        if (k < UNMADE_NAMED)
            rb_info("removed %s, the unfinished file this run created", s->path);
        else if (k == UNMADE_NAMED)
            rb_info("removed further unfinished files this run created (not named)");
        return true;
    }
    if (rc == -ENOENT)
        return true;
    rb_warn("cannot remove %s, the unfinished file this run created: %s (rm -f -- '%s' removes it)", s->path,
            rc == -RB_BENEATH_LINK ? "a symbolic link (or a way out of the target), not followed" : strerror(-rc),
            s->path);
    return false;
}

/* ---- finishing a request ---- */

/*
 * Ends s's request: closes the file (a close's error, as NFS and FUSE may
 * report a failed write there, fails it), frees the slot and records it.
 * err 0 with short set means the file ended before its known size.
 */
static void finish(struct rb_worker *w, struct fslot *s, int err, const char *what, bool short_read)
{
    struct rb_file_loop *L = w->file;
    if (s->fd_kept) {
        s->fd = -1; /* the open-file table's, closed when the worker ends */
        s->fd_kept = false;
    } else if (s->fd >= 0) {
        if (WATCHED(L, "close", s->path, close(s->fd)) != 0 && !err) {
            err = errno;
            what = "close";
        }
        s->fd = -1;
    }
    bool left = err && s->created && !unmake(s);
    s->created = false;
    uint64_t now = rb_clock_ns();
    CURLcode rc = CURLE_OK;
    if (err == RB_BENEATH_LINK) {
        rc = CURLE_READ_ERROR;
        s->r.link = true;
        snprintf(s->r.ebuf, sizeof s->r.ebuf, "%s %.180s: a symbolic link (or a way out of the target), not followed",
                 what, s->path);
    } else if (err) {
        rc = err == ETIMEDOUT ? CURLE_OPERATION_TIMEDOUT : CURLE_READ_ERROR;
        snprintf(s->r.ebuf, sizeof s->r.ebuf, "%s: %s", what, strerror(err));
        /* Nothing further can work on a full or vanished file system, nor where permission is refused. */
        if ((rb_fio_fatal(err) || err == EACCES || err == EPERM) && !L->fatal) {
            L->fatal = -err;
            snprintf(L->fatal_what, sizeof L->fatal_what, "%s %s", what, s->path);
        }
    } else if (short_read) {
        rc = CURLE_PARTIAL_FILE;
        snprintf(s->r.ebuf, sizeof s->r.ebuf, "the file ends at byte %" PRIu64 ", expected %" PRIu64 " (file system)",
                 s->pos, s->end);
    }
    s->busy = false;
    unsigned slot = (unsigned)(s - L->s);
    w->free_slots[w->nfree++] = slot;
    struct rb_stats *keep = w->local;
    if (L->mixed)
        w->local = rb_mix_slot_stats(w, slot);
    uint64_t errors = w->local->errors;
    s->r.response_ns = s->ttfb_ns ? s->r.start_ns + s->ttfb_ns : now;
    rb_xfer_record(w, &s->r, rc, err ? 0 : 200, s->ttfb_ns ? s->ttfb_ns : now - s->r.start_ns, now - s->r.start_ns,
                   0, now);
    bool ok = w->local->errors == errors;
    w->local = keep;
    if (L->mixed)
        rb_mix_settle(w, slot, ok);
    else if (w->o->track_written && ok)
        rb_worker_wrote(w, s->idx);
    else if (left)
        rb_written_unknown(w, s->r.name); /* unfinished, could not be removed: looked up and listed after the phase */
}

/* Queues s's next I/O; a queue that refuses it ends the request (the engine itself failed). */
static void queue(struct rb_worker *w, struct fslot *s, enum rb_fio_kind kind, size_t len, uint64_t off)
{
    struct rb_file_loop *L = w->file;
    struct rb_fio_io io = {.kind = kind, .fd = s->fd, .buf = s->buf, .len = len, .off = off,
                           .tag = (uint64_t)(s - L->s)};
    s->io_ns = rb_clock_ns();
    s->io_kind = kind;
    int rc = (int)WATCHED(L, kind_names[kind], s->path, rb_fio_submit(L->q, &io)); /* psync: the call itself */
    if (rc) {
        s->io_ns = 0;
        finish(w, s, -rc, "submit", false);
    }
}

/*
 * Opens s's name beneath the root with flags (replace: a new file in place
 * of what is there, its inode never written); with O_DIRECT refused
 * (EINVAL), says so once: --direct cannot work there.
 */
static int open_file(struct rb_worker *w, struct fslot *s, int flags, bool replace)
{
    struct rb_file_loop *L = w->file;
    s->fd = (int)WATCHED(L, "open", s->path,
                         replace ? rb_beneath_replace(L->dir, s->r.name, flags & O_DIRECT, 0644)
                                 : rb_beneath_open(L->dir, s->r.name, flags, 0644));
    rb_rph_mark(w, &s->r, 0); /* --phases: the open span ends (a file kept open has none) */
    if (s->fd >= 0)
        return 0;
    int err = -s->fd;
    s->fd = -1;
    if (err == EINVAL && (flags & O_DIRECT)) {
        w->file->fatal = -EINVAL;
        if (!atomic_flag_test_and_set(&fatal_logged))
            rb_error("--direct: %s refuses O_DIRECT (%s); run without --direct on this file system", s->path,
                     strerror(err));
    }
    return -err;
}

/* ---- GET: read [pos, end) block by block ---- */

/*
 * Opens s's file for reading: from the open-file table when the file is in
 * it (no system call), else opened and, while the table has room, kept
 * there. Returns 0 or -errno.
 */
static int open_read(struct rb_worker *w, struct fslot *s)
{
    struct rb_file_loop *L = w->file;
    int fd = L->open ? rb_openfiles_find(L->open, s->r.name) : -1;
    if (fd >= 0) {
        s->fd = fd;
        s->fd_kept = true;
        return 0;
    }
    int rc = open_file(w, s, L->oflags_read, false);
    if (!rc && L->open && rb_openfiles_keep(L->open, s->r.name, s->fd))
        s->fd_kept = true;
    return rc;
}

/* The next read: with O_DIRECT from the aligned offset at or before pos, for a whole number of aligned blocks. */
static void read_next(struct rb_worker *w, struct fslot *s)
{
    const struct rb_file_opts *fo = w->file->fo;
    uint64_t off = fo->direct ? s->pos / RB_FIO_ALIGN * RB_FIO_ALIGN : s->pos;
    uint64_t want = s->end - off < fo->block_bytes ? s->end - off : fo->block_bytes;
    if (fo->direct)
        want = (want + RB_FIO_ALIGN - 1) / RB_FIO_ALIGN * RB_FIO_ALIGN;
    queue(w, s, RB_FIO_READ, (size_t)want, off);
}

/* Drops the file's cached pages and counts what stayed resident, before the request's clock starts. */
static void cold_prepare(struct rb_worker *w, struct fslot *s, uint64_t size)
{
    const struct rb_file_opts *fo = w->file->fo;
    int fd = (int)WATCHED(w->file, "open", s->path, rb_beneath_open(w->file->dir, s->r.name, O_RDONLY, 0));
    if (fd < 0)
        return; /* the request's own open reports it */
    /* Every call on a file of a file system that may stop answering is watched: a FUSE close waits for its daemon. */
    if (!size) {
        struct stat st;
        size = WATCHED(w->file, "stat", s->path, fstat(fd, &st)) == 0 ? (uint64_t)st.st_size : 0;
    }
    if (fo->drop_cache != RB_DROP_NONE)
        WATCHED(w->file, "fadvise", s->path, rb_pagecache_drop_fd(fd));
    struct rb_residency res;
    if (fo->cold_check && size && WATCHED(w->file, "mincore", s->path, rb_pagecache_residency(fd, size, &res)) == 0) {
        int v = rb_pagecache_verdict(&res);
        s->r.cache = v > 0 ? RB_LX_CACHE_HIT : v == 0 ? RB_LX_CACHE_MISS : RB_LX_CACHE_OTHER;
    }
    WATCHED(w->file, "close", s->path, close(fd));
}

static void get_start(struct rb_worker *w, struct fslot *s, uint64_t size)
{
    const struct rb_load_opts *o = w->o;
    struct rb_file_loop *L = w->file;
    if (L->fo->drop_cache != RB_DROP_NONE || L->fo->cold_check)
        cold_prepare(w, s, size);
    s->r.start_ns = rb_clock_ns();
    if (s->r.intended_ns == 0)
        s->r.intended_ns = s->r.start_ns;
    int rc = open_read(w, s);
    if (rc) {
        finish(w, s, -rc, "open", false);
        return;
    }
    s->size_known = size != 0;
    if (!size) {
        struct stat st;
        if (WATCHED(L, "stat", s->path, fstat(s->fd, &st)) != 0) {
            finish(w, s, errno, "stat", false);
            return;
        }
        size = (uint64_t)st.st_size;
    }
    uint64_t off = 0, len = size;
    s->r.exact_len = w->part_len && w->fetch.len;
    if (s->r.exact_len) {
        /* A fetcher's range (a tar member): exactly these bytes, the file must hold them. */
        off = w->part_off;
        len = w->part_len;
        s->size_known = true;
    } else if (o->random_range_len) {
        /* Ranges of a block or more start on a block boundary, as fio's (blockalign = bs; O_DIRECT needs it). */
        len = o->random_range_len < size ? o->random_range_len : size;
        uint64_t step = len >= RB_FIO_ALIGN ? RB_FIO_ALIGN : 1;
        off = size > len ? rb_picker_rand_below(&w->pick.rng, (size - len) / step + 1) * step : 0;
    } else if (o->range_len) {
        off = o->range_off;
        len = o->range_len;
        if (!s->size_known || off + len <= size)
            s->size_known = true; /* a range asked for is a length the file must have */
        else
            len = off < size ? size - off : 0;
    }
    s->r.key = o->verify ? rb_payload_key(o->seed, s->r.name) : 0;
    s->r.size = size;
    s->r.off = off;
    s->r.ranged = off != 0 || len != size;
    s->r.expect_len = len;
    s->pos = off;
    s->end = off + len;
    if (s->pos >= s->end) {
        finish(w, s, 0, NULL, false);
        return;
    }
    read_next(w, s);
}

static void get_done(struct rb_worker *w, struct fslot *s, const struct rb_fio_io *io)
{
    if (io->res < 0) {
        finish(w, s, (int)-io->res, "read", false);
        return;
    }
    if (!s->ttfb_ns) /* with --phases, reap's mark of this completion */
        s->ttfb_ns = (w->rph ? s->r.ph_ns[2] : rb_clock_ns()) - s->r.start_ns;
    uint64_t got_end = io->off + (uint64_t)io->res, was = s->pos;
    if (got_end > s->end)
        got_end = s->end;
    if (got_end > s->pos) {
        size_t skip = (size_t)(s->pos - io->off), n = (size_t)(got_end - s->pos);
        if (w->o->verify && !s->r.mismatch && rb_payload_verify(&w->o->payload, s->r.key, s->pos, s->buf + skip, n) < n)
            s->r.mismatch = true;
        if (w->tars)
            rb_tar_body(&s->r, s->buf + skip, n);
        if (w->o->body)
            w->o->body(s->r.name, s->pos, s->buf + skip, n);
        s->r.body += n;
        s->pos = got_end;
    }
    if (s->pos >= s->end) {
        finish(w, s, 0, NULL, false);
        return;
    }
    /*
     * End of file before the end the listing or the range gave (a short read when that size was known): a read
     * that moved pos nowhere (0 bytes, or O_DIRECT's aligned re-read of a tail it already had), or one that
     * stopped inside a block O_DIRECT asked for whole (only the file's end does that).
     */
    if (s->pos <= was || (w->file->fo->direct && (uint64_t)io->res < io->len && got_end % RB_FIO_ALIGN)) {
        finish(w, s, 0, NULL, s->size_known);
        return;
    }
    read_next(w, s);
}

/* ---- PUT: create (never over an existing file), write [0, size), sync by policy, close ---- */

/*
 * Makes the directories of s's name beneath the root (mkdir -p; they are the run's). Returns 0 or the errno that
 * stopped it, with the first directory still missing (the one that could not be made: EROFS, EACCES) in failed.
 */
static int make_parents(struct rb_file_loop *L, const struct fslot *s, char *failed, size_t len)
{
    int rc = (int)WATCHED(L, "mkdir", s->path, rb_beneath_mkdirs(L->dir, s->r.name));
    if (!rc)
        return 0;
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s", s->r.name);
    snprintf(failed, len, "%s", s->path);
    for (char *p = sub; (p = strchr(p, '/')); p++) {
        struct stat st;
        *p = '\0';
        if (rb_beneath_stat(L->dir, sub, &st) != 0) {
            if (snprintf(failed, len, "%s/%s", L->root, sub) >= (int)len)
                snprintf(failed, len, "%s", s->path); /* too long to name: the file's path, cut */
            break;
        }
        *p = '/';
    }
    return -rc;
}

static void write_next(struct rb_worker *w, struct fslot *s)
{
    const struct rb_file_opts *fo = w->file->fo;
    uint64_t want = s->end - s->pos < fo->block_bytes ? s->end - s->pos : fo->block_bytes;
    if (fo->direct && (want % RB_FIO_ALIGN || s->pos % RB_FIO_ALIGN)) {
        /* O_DIRECT takes whole aligned blocks: the file's last partial block goes through the page cache. */
        int fl = fcntl(s->fd, F_GETFL);
        if (fl >= 0 && (fl & O_DIRECT))
            fcntl(s->fd, F_SETFL, fl & ~O_DIRECT);
    }
    rb_payload_fill(&w->o->payload, s->r.key, s->pos, s->buf, (size_t)want);
    queue(w, s, RB_FIO_WRITE, (size_t)want, s->pos);
}

/* The data is out: sync before close when asked (unless every write was synced already), else done. */
static void put_last(struct rb_worker *w, struct fslot *s)
{
    if (w->file->fo->fsync == RB_FSYNC_CLOSE && !s->syncing) {
        s->syncing = true;
        queue(w, s, RB_FIO_FSYNC, 0, 0);
        return;
    }
    finish(w, s, 0, NULL, false);
}

static void put_start(struct rb_worker *w, struct fslot *s, uint64_t size)
{
    struct rb_file_loop *L = w->file;
    s->r.key = rb_payload_key(w->o->seed, s->r.name);
    s->r.size = s->r.put_size = s->end = size;
    s->r.put_pos = s->r.expect_len = 0;
    s->pos = 0;
    s->r.start_ns = rb_clock_ns();
    if (s->r.intended_ns == 0)
        s->r.intended_ns = s->r.start_ns;
    bool made = true;
    int rc = open_file(w, s, L->oflags_write, false);
    if (rc == -ENOENT) {
        char dir[PATH_MAX];
        int err = make_parents(L, s, dir, sizeof dir);
        if (err) {
            /* The directory that refused is what the error names, not the file it would have held. */
            snprintf(s->path, sizeof s->path, "%s", dir);
            finish(w, s, err, "mkdir", false);
            return;
        }
        rc = open_file(w, s, L->oflags_write, false);
    }
    if (rc == -EEXIST && ((w->o->preexisting && w->o->preexisting->n) ||
                          (L->mixed && rb_mix_slot_overwrites(w, (unsigned)(s - L->s))))) {
        /*
         * --overwrite: the names found before the run may be replaced (cleanup leaves them); load mixed: a PUT
         * drawn over a live object (this run's, or one --no-prepare --overwrite named). Nothing else.
         */
        rc = open_file(w, s, L->oflags_write, true); /* a new file in the name's place, its old inode never written */
        made = false; /* the user's name: not this put's to remove */
        if (rc == -EEXIST) {
            finish(w, s, EEXIST, "replace (not a regular file: --overwrite replaces files only)", false);
            return;
        }
    }
    if (rc == -EEXIST) {
        finish(w, s, EEXIST, "create (a run never overwrites a file it did not create)", false);
        return;
    }
    if (rc) {
        finish(w, s, -rc, "create", false);
        return;
    }
    s->created = made;
    if (!size) {
        put_last(w, s);
        return;
    }
    write_next(w, s);
}

static void put_done(struct rb_worker *w, struct fslot *s, const struct rb_fio_io *io)
{
    if (io->res < 0) {
        finish(w, s, (int)-io->res, io->kind == RB_FIO_FSYNC ? "fsync" : "write", false);
        return;
    }
    if (io->kind == RB_FIO_FSYNC) {
        if (s->pos >= s->end)
            finish(w, s, 0, NULL, false);
        else
            write_next(w, s);
        return;
    }
    if (!s->ttfb_ns) /* with --phases, reap's mark of this completion */
        s->ttfb_ns = (w->rph ? s->r.ph_ns[2] : rb_clock_ns()) - s->r.start_ns;
    if (io->res == 0) {
        finish(w, s, EIO, "write (no progress)", false);
        return;
    }
    s->pos += (uint64_t)io->res;
    s->r.put_pos = s->pos;
    if (w->file->fo->fsync == RB_FSYNC_EACH) {
        s->syncing = true;
        queue(w, s, RB_FIO_FSYNC, 0, 0);
        return;
    }
    if (s->pos >= s->end)
        put_last(w, s);
    else
        write_next(w, s);
}

/* ---- DELETE and HEAD (stat): one system call each ---- */

static void meta_begin(struct rb_worker *w, struct fslot *s, uint64_t size)
{
    s->r.key = 0;
    s->r.size = size;
    s->r.expect_len = 0;
    s->r.start_ns = rb_clock_ns();
    if (s->r.intended_ns == 0)
        s->r.intended_ns = s->r.start_ns;
    (void)w;
}

static void delete_start(struct rb_worker *w, struct fslot *s, uint64_t size)
{
    meta_begin(w, s, size);
    finish(w, s, -(int)WATCHED(w->file, "unlink", s->path, rb_beneath_unlink(w->file->dir, s->r.name)), "unlink", false);
}

static void stat_start(struct rb_worker *w, struct fslot *s, uint64_t size)
{
    struct stat st;
    meta_begin(w, s, size);
    finish(w, s, -(int)WATCHED(w->file, "stat", s->path, rb_beneath_stat(w->file->dir, s->r.name, &st)), "stat", false);
}

static const struct fop get_fop = {get_start, get_done};
static const struct fop put_fop = {put_start, put_done};
static const struct fop delete_fop = {delete_start, NULL};
static const struct fop stat_fop = {stat_start, NULL};

/* ---- the loop ---- */

/* Starts a request of op for name on the last free slot. */
static int start(struct rb_worker *w, const struct fop *op, const char *name, uint64_t size, uint64_t intended_ns)
{
    struct rb_file_loop *L = w->file;
    if (L->fatal || rb_fwatch_fired()) {
        w->exhausted = true; /* the file system is gone: nothing more is issued, the loop leaves at its next turn */
        if (L->mixed)
            rb_mix_settle(w, w->free_slots[w->nfree - 1], false); /* its object is back where it was */
        return 0;
    }
    struct fslot *s = &L->s[w->free_slots[--w->nfree]];
    struct rb_req *r = &s->r;
    s->op = op;
    int k = snprintf(s->path, sizeof s->path, "%s/%s", L->root, name);
    size_t len = strnlen(name, RB_OBJSET_NAME_MAX);
    memcpy(r->name_buf, name, len);
    r->name_buf[len] = '\0';
    r->name = r->name_buf;
    s->idx = w->cur_idx;
    s->busy = true;
    s->syncing = false;
    s->ttfb_ns = 0;
    s->fd = -1;
    s->fd_kept = false;
    r->body = r->off = 0;
    r->mismatch = r->err_status = r->ranged = r->exact_len = r->link = false;
    r->cache = RB_LX_CACHE_ABSENT;
    r->ebuf[0] = '\0';
    r->intended_ns = intended_ns;
    r->ph_marked = w->rph && (op == &get_fop || op == &put_fop); /* a stat, an unlink: one call, not split */
    if (w->o->log_fd >= 0)
        r->start_wall_ns = rb_clock_wall_ns();
    w->issued++;
    w->last_issue_ns = rb_clock_ns();
    if (k < 0 || (size_t)k >= sizeof s->path) {
        r->start_ns = w->last_issue_ns;
        r->intended_ns = intended_ns ? intended_ns : r->start_ns;
        finish(w, s, ENAMETOOLONG, "open", false);
        return 0;
    }
    op->start(w, s, size);
    return 0;
}

/* rb_worker_refill's issue: the worker's one op. */
static int issue(struct rb_worker *w, const char *name, uint64_t size, uint64_t intended_ns)
{
    return start(w, w->file->op, name, size, intended_ns);
}

static const struct fop *const fop_rows[] = {
    [RB_LOAD_GET] = &get_fop, [RB_LOAD_PUT] = &put_fop, [RB_LOAD_DELETE] = &delete_fop, [RB_LOAD_HEAD] = &stat_fop};

/* rb_mix_refill's issue: the op drawn for this request (closed loop: no intended time). */
static int mixed_issue(struct rb_worker *w, enum rb_load_op op, const char *name, uint64_t size)
{
    return start(w, fop_rows[op], name, size, 0);
}

/* Takes finished I/Os (waiting at most wait_ns for the first) and moves their requests on. Returns 0 or -errno. */
static int reap(struct rb_worker *w, uint64_t wait_ns)
{
    struct rb_file_loop *L = w->file;
    struct rb_fio_io done[REAP_BATCH];
    int n = rb_fio_reap(L->q, done, REAP_BATCH, wait_ns);
    if (n < 0) {
        rb_error("%s: %s", rb_fio_ops_for((enum rb_fio_engine)L->fo->engine)->name, strerror(-n));
        return n;
    }
    for (int i = 0; i < n; i++) {
        struct fslot *s = &L->s[done[i].tag];
        s->io_ns = 0;
        rb_rph_mark(w, &s->r, done[i].kind == RB_FIO_FSYNC ? 3 : 2); /* the last I/O's span so far, or fsync's */
        if (s->busy)
            s->op->done(w, s, &done[i]);
    }
    return 0;
}

/* io_uring: the oldest I/O still in the kernel is the call this worker is in (the watchdog's deadline runs on it). */
static void watch_oldest(struct rb_worker *w)
{
    struct rb_file_loop *L = w->file;
    if (!L->watch || L->fo->engine != RB_FIO_IO_URING)
        return;
    const struct fslot *old = NULL;
    for (unsigned i = 0; i < w->nreq; i++)
        if (L->s[i].busy && L->s[i].io_ns && (!old || L->s[i].io_ns < old->io_ns))
            old = &L->s[i];
    if (old)
        rb_fwatch_enter_at(L->watch, kind_names[old->io_kind], old->path, old->io_ns);
    else
        rb_fwatch_leave(L->watch);
}

int rb_file_run(struct rb_worker *w, const atomic_bool *stop, const volatile int *stop2)
{
    struct rb_file_loop *L = w->file;
    uint64_t drain_until = 0;
    int rc = 0;
    for (;;) {
        if (L->fatal || rb_fwatch_fired())
            break;
        if (rb_worker_drained(w, stop, stop2, &drain_until))
            break;
        if ((rc = L->mixed ? rb_mix_refill(w, mixed_issue) : rb_worker_refill(w, issue)))
            return rc;
        if (w->exhausted && w->nfree == w->nreq)
            break;
        rb_worker_tick(w);
        uint64_t wait = IDLE_WAIT_NS;
        if (w->nfree && !w->exhausted && !w->open.period_ns)
            wait = 0; /* a closed loop's round ended with slots free (stat, delete end inside issue): go on at once */
        else if (w->nfree && !w->exhausted && w->open.period_ns) {
            uint64_t now = rb_clock_ns();
            wait = w->open.next_ns > now ? w->open.next_ns - now : 0;
            wait = wait < IDLE_WAIT_NS ? wait : IDLE_WAIT_NS;
        }
        if (rb_fio_pending(L->q)) {
            if ((rc = reap(w, wait)))
                return rc;
        } else if (w->nfree < w->nreq) {
            if ((rc = reap(w, 0)))
                return rc;
        } else if (wait) {
            rb_clock_sleep_ns(wait, NULL);
        }
        watch_oldest(w);
    }
    /* I/Os still in the kernel finish into their buffers before the slots are given up (not one the watchdog gave up on). */
    while (rb_fio_pending(L->q) && !rb_fwatch_fired()) {
        struct rb_fio_io done[REAP_BATCH];
        if (rb_fio_reap(L->q, done, REAP_BATCH, IDLE_WAIT_NS) < 0)
            break;
    }
    uint64_t now = rb_clock_ns();
    for (unsigned i = 0; i < w->nreq; i++) {
        struct fslot *s = &L->s[i];
        if (!s->busy)
            continue;
        if (s->fd >= 0 && !s->fd_kept)
            WATCHED(L, "close", s->path, close(s->fd));
        s->fd = -1;
        s->fd_kept = false;
        s->busy = false;
        w->free_slots[w->nfree++] = i;
        if (L->mixed) {
            struct rb_stats *keep = w->local;
            w->local = rb_mix_slot_stats(w, i);
            rb_xfer_abandon(w, NULL, s->r.name, s->r.intended_ns, now);
            w->local = keep;
            rb_mix_abandoned(w, i);
            continue;
        }
        rb_xfer_abandon(w, NULL, s->r.name, s->r.intended_ns, now);
        /* A put cut short removes the file it created; one that cannot be removed is cleanup's to try again. */
        bool left = s->created && !unmake(s);
        s->created = false;
        if (left)
            rb_written_unknown(w, s->r.name);
    }
    rb_fwatch_leave(L->watch);
    if (!L->fatal && rb_fwatch_fired()) {
        w->failed_logged = true; /* the watchdog said which call stopped answering */
        return -ETIMEDOUT;
    }
    if (L->fatal) {
        if (!atomic_flag_test_and_set(&fatal_logged))
            rb_error("%s: %s (%s); stopping (what was measured so far is kept)", rb_target_name(w->o->target),
                     strerror(-L->fatal), L->fatal_what);
        w->failed_logged = true;
        return L->fatal;
    }
    return 0;
}

/* ---- set-up ---- */

int rb_file_new(struct rb_worker *w, size_t ep0)
{
    (void)ep0;
    const struct rb_load_opts *o = w->o;
    struct rb_file_loop *L = calloc(1, sizeof *L);
    if (!L)
        return -ENOMEM;
    w->file = L;
    L->fo_default = (struct rb_file_opts)RB_FILE_OPTS_DEFAULT;
    L->fo = o->file ? o->file : &L->fo_default;
    L->root = rb_target_file_root(o->target);
    L->dir = rb_target_file_dir(o->target);
    if (L->dir < 0)
        return L->dir;
    L->mixed = o->mix != NULL;
    if (!L->mixed && ((size_t)o->op >= sizeof fop_rows / sizeof fop_rows[0] || !fop_rows[o->op]))
        return -EOPNOTSUPP;
    L->op = L->mixed ? NULL : fop_rows[o->op];
    /* Ranged reads keep files open (no drop or residency check wants each read to open its file afresh). */
    int rc = 0;
    if (o->op == RB_LOAD_GET && (o->random_range_len || o->range_len) && L->fo->drop_cache == RB_DROP_NONE &&
        !L->fo->cold_check && (rc = rb_openfiles_new(&L->open)))
        return rc;
    int direct = L->fo->direct ? O_DIRECT : 0;
    L->oflags_read = O_RDONLY | direct;
    L->oflags_write = O_WRONLY | O_CREAT | O_EXCL | direct;
    rc = rb_fio_new(&L->q, (enum rb_fio_engine)L->fo->engine, w->nreq);
    if (rc)
        return rc;
    /* --timeout bounds every file system call too: a stalled mount ends the run instead of hanging it. */
    if ((rc = rb_fwatch_start(o->timeout_ns)))
        return rc;
    w->watch = L->watch = rb_fwatch_claim();
    L->s = calloc(w->nreq, sizeof *L->s);
    if (!L->s)
        return -ENOMEM;
    for (unsigned i = 0; i < w->nreq; i++) {
        L->s[i].fd = -1;
        L->s[i].r.w = w;
        L->s[i].r.slot = i;
        if (L->mixed || o->op == RB_LOAD_GET || o->op == RB_LOAD_PUT) {
            if (!(L->s[i].buf = rb_fio_buffer((size_t)L->fo->block_bytes)))
                return -ENOMEM;
        }
        w->free_slots[w->nfree++] = w->nreq - 1 - i;
    }
    if (L->mixed) {
        /* mixed.c's live set and per-op stats; the worker folds them at each handover and frees them. */
        w->drv = &rb_mix_driver;
        return rb_mix_driver.init(w);
    }
    return 0;
}

void rb_file_free(struct rb_worker *w)
{
    struct rb_file_loop *L = w->file;
    if (!L)
        return;
    /* I/Os given up on (io_uring) are in the kernel, which may yet fill their buffers and ring: both stay. */
    bool in_kernel = L->q && rb_fio_pending(L->q) > 0;
    for (unsigned i = 0; L->s && i < w->nreq; i++) {
        if (L->s[i].fd >= 0 && !L->s[i].fd_kept)
            close(L->s[i].fd);
        free(in_kernel ? NULL : L->s[i].buf);
    }
    rb_openfiles_free(L->open);
    free(L->s);
    rb_fio_free(in_kernel ? NULL : L->q);
    rb_fwatch_release(L->watch);
    w->watch = NULL;
    free(L);
    w->file = NULL;
}

static bool file_fits(const struct rb_load_opts *o, bool fetcher)
{
    (void)fetcher;
    return rb_target_can(o->target, RB_TCAP_FILES);
}
/* The engine's transport for a file target: system calls on its directory, issued and accounted here. */
RB_TRANSPORT(file) = {.name = "file", .files = true, .drives = true, .fits = file_fits, .init = rb_file_new,
                      .run = rb_file_run, .free = rb_file_free};
