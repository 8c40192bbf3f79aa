/* railbench load tiers: a file:// tier, a local cache directory read through in front of the backend (filled on a miss). */
#define _GNU_SOURCE
#include "tiers_fcache_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../engine/fwatch_int.h"
#include "../engine/payload_int.h"
#include "../engine/worker_int.h"
#include "../file/fileio_int.h"
#include "../file/pagecache_int.h"
#include "railbench/beneath.h"
#include "railbench/clock.h"
#include "railbench/log.h"

/*
 * One worker thread's state: its request (done inside issue, recorded on the
 * loop's next turn, so a refill issues one request per turn and the loop
 * still ticks and sees its stop flags), its block buffer and, for an
 * http/s3/ais backend, its libcurl handle (one connection, kept alive).
 */
struct rb_tiers_fc_thread {
    struct rb_req r;
    bool pending;              /* r finished and waits to be recorded */
    CURLcode rc;
    long status;
    uint64_t ttfb_ns, total_ns;
    CURL *easy;
    struct curl_slist *hdrs;
    int tfd;                   /* the cache file being filled, while a fetch runs */
    char tpath[PATH_MAX];      /* its path, for the watchdog's line */
    int werr;                  /* errno of a failed write into it */
    uint64_t pos;              /* bytes of the object fetched so far */
    unsigned char *buf;
    int fatal;                 /* errno that ends the run: the cache file system is full, gone or refuses */
    struct rb_fwatch *watch;   /* the file system call in progress, for the watchdog (--timeout), or NULL */
    char fatal_what[PATH_MAX + 64];
};

/* The file cache a phase's target belongs to: the target is the first member of its struct. */
static struct rb_tiers_fcache *fc_of(const struct rb_worker *w)
{
    return (struct rb_tiers_fcache *)((char *)w->o->target - offsetof(struct rb_tiers_fcache, t));
}

/* The one `error:` line of a cache file system that stopped working, once per process. */
static atomic_flag fatal_logged = ATOMIC_FLAG_INIT;

/* Sets th's outcome: a local failure err in what (0: none), as the file loop reports it. */
static void outcome(struct rb_tiers_fc_thread *th, int err, const char *what, const char *path, bool short_read)
{
    if (err) {
        th->rc = err == ETIMEDOUT ? CURLE_OPERATION_TIMEDOUT : CURLE_READ_ERROR;
        th->status = 0;
        th->r.link = err == RB_BENEATH_LINK; /* class symlink: refused, never followed */
        snprintf(th->r.ebuf, sizeof th->r.ebuf, "%s %.160s: %s", what, path,
                 th->r.link ? "a symbolic link (or a way out of the target), not followed" : strerror(err));
        if ((rb_fio_fatal(err) || err == EACCES || err == EPERM) && !th->fatal) {
            th->fatal = err;
            snprintf(th->fatal_what, sizeof th->fatal_what, "%s %s", what, path);
        }
    } else if (short_read) {
        th->rc = CURLE_PARTIAL_FILE;
        snprintf(th->r.ebuf, sizeof th->r.ebuf, "the object ends at byte %llu, expected %llu",
                 (unsigned long long)th->pos, (unsigned long long)th->r.size);
    }
}

/* Takes n bytes of the object at th->pos: the first byte's time, --verify, the count. */
static void took(struct rb_tiers_fc_thread *th, const struct rb_load_opts *o, const void *p, size_t n)
{
    if (!th->ttfb_ns)
        th->ttfb_ns = rb_clock_ns() - th->r.start_ns;
    if (o->verify && !th->r.mismatch && rb_payload_verify(&o->payload, th->r.key, th->pos, p, n) != n)
        th->r.mismatch = true;
    th->pos += n;
    th->r.body += n;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* HIT: the cache file is read to its end in blocks. Returns 0 or an errno (what names the call). */
static int read_hit(struct rb_tiers_fcache *fc, struct rb_tiers_fc_thread *th, const struct rb_load_opts *o, int fd,
                    const char *path, const char **what)
{
    for (;;) {
        ssize_t n = RB_FWATCHED(th->watch, "read", path, pread(fd, th->buf, fc->block_bytes, (off_t)th->pos));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *what = "read (cache file)";
            return errno;
        }
        if (n == 0)
            return 0;
        took(th, o, th->buf, (size_t)n);
    }
}

/* MISS from a file:// backend: its file copied into the cache file block by block. */
static int fetch_file(struct rb_tiers_fcache *fc, struct rb_tiers_fc_thread *th, const struct rb_load_opts *o,
                      const char *origin_name, const char **what)
{
    int dir = rb_target_file_dir(fc->origin);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", rb_target_file_root(fc->origin), origin_name);
    int fd = dir < 0 ? dir : (int)RB_FWATCHED(th->watch, "open", path, rb_beneath_open(dir, origin_name, O_RDONLY, 0));
    if (fd < 0) {
        *what = "open (backend)";
        return -fd;
    }
    int err = 0;
    for (;;) {
        ssize_t n = RB_FWATCHED(th->watch, "read", path, pread(fd, th->buf, fc->block_bytes, (off_t)th->pos));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            err = errno;
            *what = "read (backend)";
            break;
        }
        if (n == 0)
            break;
        if ((err = (int)RB_FWATCHED(th->watch, "write", th->tpath, write_all(th->tfd, th->buf, (size_t)n))) != 0) {
            *what = "write (cache file)";
            break;
        }
        took(th, o, th->buf, (size_t)n);
    }
    close(fd);
    return err;
}

/* libcurl's body callback: a 200's bytes go into the cache file; an error body is left for the status to report. */
static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct rb_tiers_fc_thread *th = arg;
    long status = 0;
    curl_easy_getinfo(th->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200)
        return size * n;
    if ((th->werr = (int)RB_FWATCHED(th->watch, "write", th->tpath, write_all(th->tfd, (const unsigned char *)p, size * n))) != 0)
        return 0; /* libcurl ends the transfer: CURLE_WRITE_ERROR */
    took(th, th->r.w->o, p, size * n);
    return size * n;
}

/* MISS from an http/s3/ais backend: one GET on the thread's handle, its body written into the cache file. */
static int fetch_http(struct rb_tiers_fcache *fc, struct rb_tiers_fc_thread *th, const char *origin_name,
                      const char **what)
{
    char url[RB_URL_MAX];
    size_t ep = th->r.w->id % rb_target_endpoint_count(fc->origin);
    if (rb_target_object_url(fc->origin, ep, origin_name, url, sizeof url) != 0) {
        *what = "GET (backend URL)";
        return ENAMETOOLONG;
    }
    curl_easy_setopt(th->easy, CURLOPT_URL, url);
    th->werr = 0;
    CURLcode cc = curl_easy_perform(th->easy);
    if (th->werr) {
        *what = "write (cache file)";
        return th->werr;
    }
    th->rc = cc;
    curl_easy_getinfo(th->easy, CURLINFO_RESPONSE_CODE, &th->status);
    return 0;
}

/*
 * Puts the filled file tmp in place as name (both beneath dir) without
 * replacing anything: renameat2(RENAME_NOREPLACE), or link and unlink where
 * the file system has no such rename. Returns 0, EEXIST when name appeared
 * meanwhile (tmp is removed, name left alone), or another errno.
 */
static int publish(int dir, const char *tmp, const char *name)
{
    int rc = rb_beneath_rename(dir, tmp, name, RENAME_NOREPLACE);
    if (rc)
        rb_beneath_unlink(dir, tmp);
    return -rc;
}

/*
 * MISS: fetch the object from the backend into a file of this run's own
 * (created with O_EXCL), then put it in place under its name, never over a
 * file that appeared meanwhile. Returns 0 or an errno with what set.
 */
static int fill(struct rb_tiers_fcache *fc, struct rb_tiers_fc_thread *th, const struct rb_load_opts *o,
                const char *name, const char *origin_name, uint64_t idx, const char **what)
{
    char tmp[PATH_MAX];
    int dir = rb_target_file_dir(&fc->t);
    if (snprintf(tmp, sizeof tmp, "%s.rb-fill-%ld-%u", name, (long)getpid(), th->r.w->id) >= (int)sizeof tmp) {
        *what = "create (cache file)";
        return ENAMETOOLONG;
    }
    if (snprintf(th->tpath, sizeof th->tpath, "%s/%s", rb_target_file_root(&fc->t), tmp) >= (int)sizeof th->tpath)
        snprintf(th->tpath, sizeof th->tpath, "%s", tmp); /* for the watchdog's line only */
    struct rb_fwatch *wt = th->watch;
    int fd = dir < 0 ? dir : (int)RB_FWATCHED(wt, "open", th->tpath, rb_beneath_open(dir, tmp, O_WRONLY | O_CREAT | O_EXCL, 0644));
    /* the directories of names with '/': the run's, they stay */
    if (fd == -ENOENT && RB_FWATCHED(wt, "mkdir", th->tpath, rb_beneath_mkdirs(dir, tmp)) == 0)
        fd = (int)RB_FWATCHED(wt, "open", th->tpath, rb_beneath_open(dir, tmp, O_WRONLY | O_CREAT | O_EXCL, 0644));
    if (fd < 0) {
        *what = "create (cache file)";
        return -fd;
    }
    th->tfd = fd;
    int err = fc->origin_file ? fetch_file(fc, th, o, origin_name, what) : fetch_http(fc, th, origin_name, what);
    bool whole = !err && th->rc == CURLE_OK && th->status == 200 && !th->r.mismatch &&
                 (!th->r.size || th->pos == th->r.size);
    if (whole && fc->fsync && RB_FWATCHED(wt, "fsync", th->tpath, fsync(th->tfd)) != 0) {
        err = errno;
        *what = "fsync (cache file)";
        whole = false;
    }
    if (RB_FWATCHED(wt, "close", th->tpath, close(th->tfd)) != 0 && !err) {
        err = errno;
        *what = "close (cache file)";
        whole = false;
    }
    th->tfd = -1;
    if (!whole) {
        if (!rb_fwatch_fired()) /* a stalled file system: the partial file stays; the watchdog named it */
            RB_FWATCHED(wt, "unlink", th->tpath, rb_beneath_unlink(dir, tmp)); /* a failed fetch caches nothing */
        return err;
    }
    err = (int)RB_FWATCHED(wt, "rename", th->tpath, publish(dir, tmp, name));
    if (err == EEXIST) {
        atomic_fetch_add(&fc->conflicts, 1); /* someone else's file took the name: served, not cached, left alone */
        return 0;
    }
    if (err) {
        *what = "rename (cache file)";
        return err;
    }
    atomic_fetch_or(&fc->created[idx / 64], 1ull << (idx % 64));
    atomic_fetch_add(&fc->files_filled, 1);
    atomic_fetch_add(&fc->origin_bytes, th->pos);
    return 0;
}

static bool created(const struct rb_tiers_fcache *fc, uint64_t idx)
{
    return idx < fc->nobjects && (atomic_load(&fc->created[idx / 64]) >> (idx % 64)) & 1;
}

/* --drop-cache: name's cached pages dropped (when it exists beneath dir), before the request's clock starts. */
static void drop_pages(struct rb_fwatch *wt, int dir, const char *name, const char *path)
{
    int fd = dir < 0 ? dir : (int)RB_FWATCHED(wt, "open", path, rb_beneath_open(dir, name, O_RDONLY, 0));
    if (fd >= 0) {
        rb_pagecache_drop_fd(fd);
        close(fd);
    }
}

/* One GET through the cache: the cache file when it is there (HIT), else a fill from the backend (MISS). */
static int issue(struct rb_worker *w, const char *name, uint64_t size, uint64_t intended_ns)
{
    struct rb_tiers_fcache *fc = fc_of(w);
    struct rb_tiers_fc_thread *th = &fc->th[w->id];
    const struct rb_load_opts *o = w->o;
    struct rb_req *r = &th->r;
    w->nfree--;
    size_t len = strnlen(name, RB_OBJSET_NAME_MAX);
    memcpy(r->name_buf, name, len);
    r->name_buf[len] = '\0';
    r->name = r->name_buf;
    r->body = r->off = 0;
    r->mismatch = r->err_status = r->ranged = r->link = false;
    r->cache = RB_LX_CACHE_ABSENT;
    r->ebuf[0] = '\0';
    r->size = size;
    r->expect_len = o->verify ? size : 0;
    th->rc = CURLE_OK;
    th->status = 200;
    th->ttfb_ns = th->pos = 0;
    th->tfd = -1;
    w->issued++;
    char path[PATH_MAX], origin_name[RB_OBJSET_NAME_BYTES + 1100];
    int err = 0;
    const char *what = "open (cache file)";
    snprintf(origin_name, sizeof origin_name, "%s%s", rb_target_prefix(fc->origin), name);
    r->key = rb_payload_key(o->seed, origin_name); /* the backend's bytes, under the backend's name */
    const bool path_ok = snprintf(path, sizeof path, "%s/%s", rb_target_file_root(&fc->t), name) < (int)sizeof path;
    const int dir = rb_target_file_dir(&fc->t);
    if (fc->drop_files && path_ok) {
        drop_pages(th->watch, dir, name, path);
        char opath[PATH_MAX];
        if (fc->origin_file &&
            snprintf(opath, sizeof opath, "%s/%s", rb_target_file_root(fc->origin), origin_name) < (int)sizeof opath)
            drop_pages(th->watch, rb_target_file_dir(fc->origin), origin_name, opath);
    }
    r->start_ns = w->last_issue_ns = rb_clock_ns();
    r->intended_ns = intended_ns ? intended_ns : r->start_ns;
    if (o->log_fd >= 0)
        r->start_wall_ns = rb_clock_wall_ns();
    if (!path_ok) {
        err = ENAMETOOLONG;
    } else {
        int fd = dir < 0 ? dir : (int)RB_FWATCHED(th->watch, "open", path, rb_beneath_open(dir, name, O_RDONLY, 0));
        if (fd >= 0) {
            r->cache = RB_LX_CACHE_HIT;
            err = read_hit(fc, th, o, fd, path, &what);
            RB_FWATCHED(th->watch, "close", path, close(fd));
            atomic_fetch_add(&fc->cache_bytes, th->pos);
            if (!created(fc, w->cur_idx))
                atomic_fetch_add(&fc->foreign_hits, 1); /* a file this run did not make: read, never touched */
        } else if (fd == -ENOENT || fd == -ENOTDIR) {
            r->cache = RB_LX_CACHE_MISS;
            err = fill(fc, th, o, name, origin_name, w->cur_idx, &what);
        } else {
            err = -fd;
        }
    }
    outcome(th, err, what, path, !err && size && th->pos < size && th->rc == CURLE_OK && th->status == 200);
    th->total_ns = rb_clock_ns() - r->start_ns;
    th->pending = true;
    return 0;
}

/* Records the request issue finished and gives its slot back. */
static void settle(struct rb_worker *w, struct rb_tiers_fc_thread *th)
{
    if (!th->pending)
        return;
    th->pending = false;
    w->free_slots[w->nfree++] = 0;
    uint64_t now = rb_clock_ns();
    th->r.response_ns = th->r.start_ns + (th->ttfb_ns ? th->ttfb_ns : th->total_ns);
    rb_xfer_record(w, &th->r, th->rc, th->status, th->ttfb_ns ? th->ttfb_ns : th->total_ns, th->total_ns, 0, now);
}

static int fc_run(struct rb_worker *w, const atomic_bool *stop, const volatile int *stop2)
{
    struct rb_tiers_fc_thread *th = &fc_of(w)->th[w->id];
    uint64_t drain_until = 0;
    for (;;) {
        if (th->fatal || rb_fwatch_fired() || rb_worker_drained(w, stop, stop2, &drain_until))
            break;
        int rc = rb_worker_refill(w, issue);
        settle(w, th);
        if (rc)
            return rc;
        if (w->exhausted && w->nfree == w->nreq)
            break;
        rb_worker_tick(w);
    }
    if (!th->fatal && rb_fwatch_fired()) {
        w->failed_logged = true; /* the watchdog said which call stopped answering */
        return -ETIMEDOUT;
    }
    if (th->fatal) {
        if (!atomic_flag_test_and_set(&fatal_logged))
            rb_error("%s: %s (%s); stopping (what was measured so far is kept)", rb_target_name(w->o->target),
                     strerror(th->fatal), th->fatal_what);
        w->failed_logged = true;
        return -th->fatal;
    }
    return 0;
}

static int fc_init(struct rb_worker *w, size_t ep0)
{
    (void)ep0;
    struct rb_tiers_fcache *fc = fc_of(w);
    const struct rb_load_opts *o = w->o;
    if (o->op != RB_LOAD_GET || w->nreq != 1 || w->id >= fc->nthreads)
        return -EINVAL;
    struct rb_tiers_fc_thread *th = &fc->th[w->id];
    memset(th, 0, sizeof *th);
    th->tfd = -1;
    th->r.w = w;
    /* --timeout bounds the cache's file system calls too: a stalled cache directory ends the run. */
    int rc = rb_fwatch_start(o->timeout_ns);
    if (rc)
        return rc;
    w->watch = th->watch = rb_fwatch_claim();
    w->free_slots[w->nfree++] = 0;
    if (!(th->buf = malloc(fc->block_bytes)))
        return -ENOMEM;
    if (fc->origin_file)
        return 0;
    if (!(th->easy = curl_easy_init()))
        return -ENOMEM;
    CURL *c = th->easy;
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_ERRORBUFFER, th->r.ebuf));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_WRITEDATA, th));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_PROXY, "")); /* straight to the backend, as the engine's requests */
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, o->max_redirects > 0 ? 1L : 0L));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_MAXREDIRS, o->max_redirects));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, rb_target_endpoint_tls(fc->origin, w->id % fc->origin->nendpoints) ? "https" : "http"));
    if (o->timeout_ns)
        RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)((o->timeout_ns + RB_NS_PER_MS - 1) / RB_NS_PER_MS)));
    rc = rb_target_setup(fc->origin, c, RB_LOAD_GET, &th->hdrs);
    if (rc)
        return rc;
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_HTTPHEADER, th->hdrs));
    return 0;
}

static void fc_free(struct rb_worker *w)
{
    struct rb_tiers_fcache *fc = fc_of(w);
    if (w->id >= fc->nthreads)
        return;
    struct rb_tiers_fc_thread *th = &fc->th[w->id];
    if (th->easy)
        curl_easy_cleanup(th->easy);
    curl_slist_free_all(th->hdrs);
    free(th->buf);
    rb_fwatch_release(th->watch);
    w->watch = th->watch = NULL;
    th->easy = NULL;
    th->hdrs = NULL;
    th->buf = NULL;
}

const struct rb_transport rb_tiers_fc_transport = {.name = "file", .files = true, .drives = true, .init = fc_init,
                                                   .run = fc_run, .free = fc_free};

int rb_tiers_fcache_new(struct rb_tiers_fcache **out, const struct rb_target *tier, const struct rb_target *origin,
                        unsigned threads, uint64_t block_bytes)
{
    struct rb_tiers_fcache *fc = calloc(1, sizeof *fc);
    if (!fc || !(fc->th = calloc(threads, sizeof *fc->th))) {
        free(fc);
        return -ENOMEM;
    }
    fc->t = *tier;
    fc->origin = origin;
    fc->origin_file = rb_target_can(origin, RB_TCAP_FILES);
    fc->nthreads = threads;
    fc->block_bytes = block_bytes;
    *out = fc;
    return 0;
}

void rb_tiers_fcache_free(struct rb_tiers_fcache *fc)
{
    if (!fc)
        return;
    free(fc->created);
    free(fc->th);
    free(fc);
}

int rb_tiers_fcache_objects(struct rb_tiers_fcache *fc, uint64_t n)
{
    free(fc->created);
    fc->nobjects = n;
    fc->created = calloc(n / 64 + 1, sizeof *fc->created);
    return fc->created ? 0 : -ENOMEM;
}

void rb_tiers_fcache_take(struct rb_tiers_fcache *fc, uint64_t v[RB_TIERS_FC_COUNTS])
{
    v[0] = atomic_exchange(&fc->origin_bytes, 0);
    v[1] = atomic_exchange(&fc->cache_bytes, 0);
    v[2] = atomic_exchange(&fc->files_filled, 0);
    v[3] = atomic_exchange(&fc->foreign_hits, 0);
    v[4] = atomic_exchange(&fc->conflicts, 0);
}

/* The path of this rank's object i in the cache directory. */
static int cache_path(const struct rb_tiers_fcache *fc, const struct rb_objset *mine, uint64_t i, char *path,
                      size_t len)
{
    char buf[RB_OBJSET_NAME_BYTES];
    int k = snprintf(path, len, "%s/%s", rb_target_file_root(&fc->t), rb_objset_name(mine, i, buf));
    return k < 0 || (size_t)k >= len ? -ENAMETOOLONG : 0;
}

int rb_tiers_fcache_existing(const struct rb_tiers_fcache *fc, const struct rb_objset *mine, uint64_t *n,
                             char *first, size_t len)
{
    *n = 0;
    for (uint64_t i = 0; i < mine->n; i++) {
        char path[PATH_MAX];
        struct stat st;
        if (cache_path(fc, mine, i, path, sizeof path))
            return -ENAMETOOLONG;
        char buf[RB_OBJSET_NAME_BYTES];
        int dir = rb_target_file_dir(&fc->t);
        int rc = dir < 0 ? dir : rb_beneath_stat(dir, rb_objset_name(mine, i, buf), &st);
        if (rc == 0 || rc == -RB_BENEATH_LINK) { /* a link there is something there: never written through */
            if (!(*n)++)
                snprintf(first, len, "%s", path);
        } else if (rc != -ENOENT && rc != -ENOTDIR) {
            snprintf(first, len, "%s: %s", path, strerror(-rc));
            return rc;
        }
    }
    return 0;
}

void rb_tiers_fcache_on_disk(const struct rb_tiers_fcache *fc, const struct rb_objset *mine, uint64_t size,
                             uint64_t *created_n, uint64_t *files, uint64_t *bytes)
{
    *created_n = *files = *bytes = 0;
    for (uint64_t i = 0; i < mine->n; i++) {
        if (!created(fc, i))
            continue;
        ++*created_n;
        char buf[RB_OBJSET_NAME_BYTES];
        struct stat st;
        int dir = rb_target_file_dir(&fc->t);
        if (dir >= 0 && rb_beneath_stat(dir, rb_objset_name(mine, i, buf), &st) == 0 && S_ISREG(st.st_mode) &&
            (uint64_t)st.st_size == size) {
            ++*files;
            *bytes += (uint64_t)st.st_size;
        }
    }
}

uint64_t rb_tiers_fcache_remove(struct rb_tiers_fcache *fc, const struct rb_objset *mine)
{
    uint64_t removed = 0;
    for (uint64_t i = 0; i < mine->n; i++) {
        char buf[RB_OBJSET_NAME_BYTES];
        int dir = rb_target_file_dir(&fc->t);
        if (created(fc, i) && dir >= 0 && rb_beneath_unlink(dir, rb_objset_name(mine, i, buf)) == 0)
            removed++;
    }
    return removed;
}
