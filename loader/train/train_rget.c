/* load train's small ranged reads of a file's index (tar headers, a Parquet footer): pread, or one Range GET. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "railbench/beneath.h"
#include "railbench/clock.h"
#include "../engine/fwatch_int.h"
#include "train_cmd_int.h"

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct train_rget *q = arg;
    size_t len = size * n, room = q->want - q->got;
    memcpy(q->buf + q->got, p, len < room ? len : room);
    q->got += len < room ? len : room;
    q->overflow = q->overflow || len > room;
    return len;
}

/* "Content-Range: bytes A-B/TOTAL" (or "bytes *\/TOTAL" with a 416): the object's size. */
static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    struct train_rget *q = arg;
    size_t len = size * n;
    if (len > 14 && strncasecmp(p, "Content-Range:", 14) == 0) {
        const char *slash = memchr(p, '/', len);
        char num[24] = "";
        if (slash) {
            size_t k = 0;
            for (const char *c = slash + 1; c < p + len && *c >= '0' && *c <= '9' && k + 1 < sizeof num; c++)
                num[k++] = *c;
            if (k)
                q->total = strtoull(num, NULL, 10);
        }
    }
    return len;
}

int rb_train_rget_open(struct train_rget *q, char *err, size_t errlen)
{
    q->fd = -1;
    q->total = UINT64_MAX;
    if (!rb_target_can(q->t, RB_TCAP_FILES))
        return 0;
    struct stat st;
    int dir = rb_target_file_dir(q->t);
    snprintf(q->path, sizeof q->path, "%s/%s", rb_target_file_root(q->t), q->name);
    rb_fwatch_enter(q->watch, "open", q->path);
    q->fd = dir < 0 ? dir : rb_beneath_open(dir, q->name, O_RDONLY, 0);
    int rc = q->fd < 0 ? q->fd : fstat(q->fd, &st) != 0 ? -errno : 0;
    rb_fwatch_leave(q->watch);
    if (rc) {
        if (q->fd >= 0)
            close(q->fd);
        q->fd = -1;
        snprintf(err, errlen, "%s",
                 rc == -RB_BENEATH_LINK ? "a symbolic link (or a way out of the target), not followed" : strerror(-rc));
        return rc;
    }
    q->total = (uint64_t)st.st_size;
    return 0;
}

void rb_train_rget_close(struct train_rget *q)
{
    if (q->fd >= 0)
        close(q->fd);
    q->fd = -1;
}

/* The read by pread: len bytes at off, or the last len (suffix; the size is known from fstat). */
static int file_read(struct train_rget *q, uint64_t off, size_t len, bool suffix, char *err, size_t errlen)
{
    if (suffix)
        off = q->total > len ? q->total - len : 0;
    rb_fwatch_enter(q->watch, "read", q->path);
    ssize_t n = pread(q->fd, q->buf, len, (off_t)off);
    rb_fwatch_leave(q->watch);
    if (n < 0) {
        snprintf(err, errlen, "read at byte %" PRIu64 ": %s", off, strerror(errno));
        return -EIO;
    }
    q->got = (size_t)n;
    return 0;
}

int rb_train_rget_read(struct train_rget *q, uint64_t off, size_t len, bool suffix, char *err, size_t errlen)
{
    q->got = 0;
    q->want = len;
    q->overflow = false;
    if (q->fd >= 0)
        return file_read(q, off, len, suffix, err, errlen);
    CURL *c = q->easy;
    char url[4096], range[64], ebuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdrs = NULL;
    curl_easy_reset(c);
    if (suffix)
        snprintf(range, sizeof range, "-%zu", len);
    else
        snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, off, off + len - 1);
    if (rb_target_object_url(q->t, 0, q->name, url, sizeof url) || rb_target_setup(q->t, c, RB_LOAD_GET, &hdrs)) {
        curl_slist_free_all(hdrs);
        snprintf(err, errlen, "cannot build the request");
        return -EIO;
    }
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_RANGE, range);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, q);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, q);
    if (q->timeout_ns)
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(q->timeout_ns / RB_NS_PER_MS ? q->timeout_ns / RB_NS_PER_MS : 1));
    CURLcode cc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hdrs);
    if (cc != CURLE_OK) {
        snprintf(err, errlen, "GET of bytes %s: %s", range, ebuf[0] ? ebuf : curl_easy_strerror(cc));
        return -EIO;
    }
    if (status == 416) { /* the range starts at or past the end: nothing there */
        q->got = 0;
        return 0;
    }
    if (status == 200) {
        snprintf(err, errlen, "the server answered a Range GET with the whole object (HTTP 200): it cannot serve "
                 "ranged reads%s", q->whole_hint ? q->whole_hint : "");
        return -EIO;
    }
    if (status != 206 || q->overflow) {
        snprintf(err, errlen, "GET of bytes %s: HTTP %ld", range, status);
        return -EIO;
    }
    return 0;
}

/* ---- the read threads' readers ---- */

int rb_train_reader_reserve(struct train_reader *rd, size_t used, size_t n)
{
    if (used + n <= rd->cap)
        return 0;
    size_t cap = rd->cap ? rd->cap : 64;
    while (cap < used + n)
        cap *= 2;
    uint32_t *idx = realloc(rd->idx, cap * sizeof *idx);
    if (idx)
        rd->idx = idx;
    uint64_t *off = realloc(rd->off, cap * sizeof *off);
    if (off)
        rd->off = off;
    uint64_t *len = realloc(rd->len, cap * sizeof *len);
    if (len)
        rd->len = len;
    if (!idx || !off || !len)
        return -ENOMEM;
    rd->cap = cap;
    return 0;
}

int rb_train_readers_new(const struct rb_train_run *R, unsigned n, size_t cap, struct train_reader **out)
{
    struct train_reader *rd = calloc(n ? n : 1, sizeof *rd);
    *out = rd;
    if (!rd)
        return -ENOMEM;
    for (unsigned i = 0; i < n; i++) {
        if (rb_train_reader_reserve(&rd[i], 0, cap))
            return -ENOMEM;
        if (!rb_target_can(R->t, RB_TCAP_FILES) && !(rd[i].easy = curl_easy_init()))
            return -ENOMEM;
    }
    return 0;
}

void rb_train_readers_free(struct train_reader *rd, unsigned n)
{
    for (unsigned i = 0; rd && i < n; i++) {
        curl_easy_cleanup(rd[i].easy);
        free(rd[i].idx);
        free(rd[i].off);
        free(rd[i].len);
    }
    free(rd);
}

/* ---- per-object indexes, each read once per rank by whichever read thread needs it first ---- */

enum { IX_NONE, IX_READING, IX_READY, IX_FAILED };

int rb_train_ixcache_init(struct train_ixcache *c, size_t n)
{
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->n = n;
    c->state = calloc(n ? n : 1, 1);
    c->item = calloc(n ? n : 1, sizeof *c->item);
    return c->state && c->item ? 0 : -ENOMEM;
}

void rb_train_ixcache_free(struct train_ixcache *c, void (*free_item)(void *))
{
    for (size_t i = 0; c->item && i < c->n; i++)
        if (c->item[i])
            free_item(c->item[i]);
    free(c->item);
    free((void *)c->state);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
}

int rb_train_ixcache_get(struct train_ixcache *c, size_t i, int (*read)(void *ctx, size_t i, void **item), void *ctx,
                         void **out)
{
    /* Every use after an object's first: its index is in memory, no lock taken. */
    if (atomic_load_explicit(&c->state[i], memory_order_acquire) == IX_READY) {
        *out = c->item[i];
        return 0;
    }
    pthread_mutex_lock(&c->mu);
    /* The thread reading it may be stuck in a stalled file system: waited for only until the watchdog fires. */
    while (c->state[i] == IX_READING && !rb_fwatch_fired()) {
        uint64_t at = rb_clock_wall_ns() + 50 * RB_NS_PER_MS;
        struct timespec ts = {.tv_sec = (time_t)(at / RB_NS_PER_S), .tv_nsec = (long)(at % RB_NS_PER_S)};
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    }
    if (c->state[i] == IX_READING) {
        pthread_mutex_unlock(&c->mu);
        return -ECANCELED; /* the watchdog said which call stopped answering */
    }
    bool mine = c->state[i] == IX_NONE;
    if (mine)
        c->state[i] = IX_READING;
    pthread_mutex_unlock(&c->mu);
    int rc = 0;
    if (mine) {
        void *item = NULL;
        rc = read(ctx, i, &item);
        pthread_mutex_lock(&c->mu);
        c->item[i] = item;
        atomic_store_explicit(&c->state[i], rc ? IX_FAILED : IX_READY, memory_order_release);
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
    } else if (c->state[i] == IX_FAILED) {
        rc = -EIO; /* another thread failed on it and said why */
    }
    *out = c->item[i];
    return rc;
}
