/* railbench load train --shard-read ranged: each shard's tar index read once per rank, then one ranged read per sample. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "railbench/beneath.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "railbench/units.h"
#include "../engine/fwatch_int.h"
#include "../engine/tarshard_int.h"
#include "train_cmd_int.h"

#define BLOCK 512u

enum { IX_NONE, IX_READING, IX_READY, IX_FAILED };

/* A read thread's own: its header reader (one keep-alive connection) and the batch's ranges. */
struct tar_reader {
    CURL *easy;
    struct rb_fwatch *watch;        /* file: where its index reads are published for the watchdog (the fetcher's) */
    uint32_t *idx;
    uint64_t *off, *len;
};

struct train_tar {
    uint64_t spo, batch;
    pthread_mutex_t mu;             /* guards the moves out of IX_READING */
    pthread_cond_t cv;              /* an index became ready (or failed) */
    _Atomic unsigned char *state;   /* per shard: IX_*; IX_READY is final, read without the lock */
    uint64_t **member;              /* per shard once ready: spo pairs (data offset, bytes) */
    struct tar_reader *rd;          /* per read thread */
    unsigned nrd;
    atomic_uint_least64_t shards, requests, bytes; /* what the index reads took */
    atomic_flag said;               /* this rank said why its index read failed */
};

int rb_train_tar_new(struct rb_train_run *R)
{
    const struct train_args *a = R->a;
    if (a->shard_read != TRAIN_SHARD_RANGED)
        return 0;
    struct train_tar *X = calloc(1, sizeof *X);
    if (!X)
        return -ENOMEM;
    R->tar = X;
    X->spo = a->spo;
    X->batch = a->batch;
    pthread_mutex_init(&X->mu, NULL);
    pthread_cond_init(&X->cv, NULL);
    atomic_flag_clear(&X->said);
    X->state = calloc(R->all->n ? R->all->n : 1, 1);
    X->member = calloc(R->all->n ? R->all->n : 1, sizeof *X->member);
    X->nrd = R->nloaders;
    X->rd = calloc(X->nrd, sizeof *X->rd);
    if (!X->state || !X->member || !X->rd)
        return -ENOMEM;
    for (unsigned i = 0; i < X->nrd; i++) {
        struct tar_reader *rd = &X->rd[i];
        rd->idx = calloc(X->batch, sizeof *rd->idx);
        rd->off = calloc(X->batch, sizeof *rd->off);
        rd->len = calloc(X->batch, sizeof *rd->len);
        if (!rd->idx || !rd->off || !rd->len)
            return -ENOMEM;
        if (!rb_target_can(R->t, RB_TCAP_FILES) && !(rd->easy = curl_easy_init()))
            return -ENOMEM;
    }
    return 0;
}

void rb_train_tar_free(struct rb_train_run *R)
{
    struct train_tar *X = R->tar;
    if (!X || R->abandoned) /* a read thread left in a stalled file system call may still come back to it */
        return;
    for (unsigned i = 0; X->rd && i < X->nrd; i++) {
        curl_easy_cleanup(X->rd[i].easy);
        free(X->rd[i].idx);
        free(X->rd[i].off);
        free(X->rd[i].len);
    }
    for (uint64_t i = 0; X->member && i < R->all->n; i++)
        free(X->member[i]);
    free(X->rd);
    free(X->member);
    free(X->state);
    pthread_mutex_destroy(&X->mu);
    pthread_cond_destroy(&X->cv);
    free(X);
    R->tar = NULL;
}

/* ---- reading a shard's headers ---- */

/* One header read: up to 512 bytes at off into buf (*got), and the object's size (*total, when learnt). */
struct hdr_read {
    const struct rb_target *t;
    const char *name;
    uint64_t timeout_ns;
    CURL *easy;                     /* http, s3, ais */
    int fd;                         /* file */
    struct rb_fwatch *watch;        /* file: the call in progress, for the watchdog (or NULL) */
    char path[PATH_MAX];            /* file: the shard's path, for the watchdog's line */
    unsigned char *buf;
    size_t got;
    bool overflow;                  /* more bytes than the range asked for: the server ignored Range */
    uint64_t total;                 /* the object's size; UINT64_MAX while unknown */
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct hdr_read *q = arg;
    size_t len = size * n, room = BLOCK - q->got;
    memcpy(q->buf + q->got, p, len < room ? len : room);
    q->got += len < room ? len : room;
    q->overflow = q->overflow || len > room;
    return len;
}

/* "Content-Range: bytes A-B/TOTAL" (or "bytes *\/TOTAL" with a 416): the object's size. */
static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    struct hdr_read *q = arg;
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

/* Reads the 512 bytes at off (fewer at the object's end). Returns 0, or -EIO with one line in err. */
static int read_block(struct hdr_read *q, uint64_t off, char *err, size_t errlen)
{
    q->got = 0;
    q->overflow = false;
    if (q->fd >= 0) {
        rb_fwatch_enter(q->watch, "read", q->path);
        ssize_t n = pread(q->fd, q->buf, BLOCK, (off_t)off);
        rb_fwatch_leave(q->watch);
        if (n < 0) {
            snprintf(err, errlen, "read at byte %" PRIu64 ": %s", off, strerror(errno));
            return -EIO;
        }
        q->got = (size_t)n;
        return 0;
    }
    CURL *c = q->easy;
    char url[4096], range[64], ebuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdrs = NULL;
    curl_easy_reset(c);
    snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, off, off + BLOCK - 1);
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
                 "ranged shard reads; use --shard-read whole");
        return -EIO;
    }
    if (status != 206 || q->overflow) {
        snprintf(err, errlen, "GET of bytes %s: HTTP %ld", range, status);
        return -EIO;
    }
    return 0;
}

/*
 * Walks the shard's headers from its start, one 512-byte read each: the
 * regular members' data offsets and sizes into out (spo pairs). Every
 * member must lie within the object and there must be exactly spo of them.
 */
static int walk_headers(struct train_tar *X, struct hdr_read *q, uint64_t *out, char *err, size_t errlen)
{
    uint64_t members = 0, off = 0;
    for (;;) {
        if (q->total != UINT64_MAX && off >= q->total)
            break; /* the end without zero blocks, as GNU tar accepts */
        int rc = read_block(q, off, err, errlen);
        atomic_fetch_add(&X->requests, 1);
        atomic_fetch_add(&X->bytes, q->got);
        if (rc)
            return rc;
        if (q->got == 0 && (q->total == UINT64_MAX || off >= q->total))
            break;
        if (q->got < BLOCK) {
            snprintf(err, errlen, "the header at byte %" PRIu64 " is cut short (%zu bytes): a truncated shard", off,
                     q->got);
            return -EIO;
        }
        uint64_t size = 0;
        bool regular = false;
        rc = rb_tar_header(q->buf, &size, &regular);
        if (rc == 1)
            break;
        if (rc < 0) {
            snprintf(err, errlen, "not a tar archive: the header at byte %" PRIu64 " has no valid checksum or size", off);
            return -EINVAL;
        }
        if (q->total != UINT64_MAX && off + BLOCK + size > q->total) {
            snprintf(err, errlen, "member %" PRIu64 " (%" PRIu64 " bytes at byte %" PRIu64 ") lies beyond the "
                     "object's end (%" PRIu64 " bytes): a truncated shard", members, size, off + BLOCK, q->total);
            return -EIO;
        }
        if (regular && members == X->spo) {
            snprintf(err, errlen, "holds more than --samples-per-object %" PRIu64 " members", X->spo);
            return -EINVAL;
        }
        if (regular) {
            out[2 * members] = off + BLOCK;
            out[2 * members + 1] = size;
            members++;
        }
        off += rb_tar_entry_bytes(size);
    }
    if (members != X->spo) {
        snprintf(err, errlen, "holds %" PRIu64 " members, --samples-per-object is %" PRIu64, members, X->spo);
        return -EINVAL;
    }
    return 0;
}

/* Reads shard i's index (its headers) into a new array. Returns 0 or -errno after one error line. */
static int read_index(struct rb_train_run *R, struct tar_reader *rd, uint64_t i, uint64_t **out)
{
    struct train_tar *X = R->tar;
    char name[RB_OBJSET_NAME_BYTES], err[512] = "";
    unsigned char buf[BLOCK];
    struct hdr_read q = {.t = R->t, .name = rb_objset_name(R->all, i, name), .timeout_ns = R->a->tgt.timeout_ns,
                         .easy = rd->easy, .fd = -1, .watch = rd->watch, .buf = buf, .total = UINT64_MAX};
    const char *shard = q.name;
    int rc = 0;
    uint64_t *m = calloc(2 * X->spo, sizeof *m);
    if (!m)
        return -ENOMEM;
    if (rb_target_can(R->t, RB_TCAP_FILES)) {
        struct stat st;
        int dir = rb_target_file_dir(R->t);
        snprintf(q.path, sizeof q.path, "%s/%s", rb_target_file_root(R->t), shard);
        rb_fwatch_enter(q.watch, "open", q.path);
        q.fd = dir < 0 ? dir : rb_beneath_open(dir, shard, O_RDONLY, 0);
        rc = q.fd < 0 ? q.fd : fstat(q.fd, &st) != 0 ? -errno : 0;
        rb_fwatch_leave(q.watch);
        if (rc) {
            q.fd = q.fd < 0 ? -1 : q.fd;
            snprintf(err, sizeof err, "%s",
                     rc == -RB_BENEATH_LINK ? "a symbolic link (or a way out of the target), not followed"
                                            : strerror(-rc));
        } else {
            q.total = (uint64_t)st.st_size;
        }
    }
    if (!rc)
        rc = walk_headers(X, &q, m, err, sizeof err);
    if (q.fd >= 0)
        close(q.fd);
    if (rc) {
        if (!atomic_flag_test_and_set(&X->said))
            rb_error("--shard-read ranged: %s \"%s\": %s", rb_target_name(R->t), shard, err);
        free(m);
        return rc;
    }
    atomic_fetch_add(&X->shards, 1);
    *out = m;
    return 0;
}

/* Shard i's index, read now by this thread unless another has it or is reading it. Returns 0 or -errno. */
static int shard_index(struct rb_train_run *R, struct tar_reader *rd, uint64_t i, const uint64_t **out)
{
    struct train_tar *X = R->tar;
    /* Every sample after a shard's first: its index is in memory, no lock taken. */
    if (atomic_load_explicit(&X->state[i], memory_order_acquire) == IX_READY) {
        *out = X->member[i];
        return 0;
    }
    pthread_mutex_lock(&X->mu);
    /* The thread reading it may be stuck in a stalled file system: waited for only until the watchdog fires. */
    while (X->state[i] == IX_READING && !rb_fwatch_fired()) {
        uint64_t at = rb_clock_wall_ns() + 50 * RB_NS_PER_MS;
        struct timespec ts = {.tv_sec = (time_t)(at / RB_NS_PER_S), .tv_nsec = (long)(at % RB_NS_PER_S)};
        pthread_cond_timedwait(&X->cv, &X->mu, &ts);
    }
    if (X->state[i] == IX_READING) {
        pthread_mutex_unlock(&X->mu);
        return -ECANCELED; /* the watchdog said which call stopped answering */
    }
    bool mine = X->state[i] == IX_NONE;
    if (mine)
        X->state[i] = IX_READING;
    pthread_mutex_unlock(&X->mu);
    int rc = 0;
    if (mine) {
        uint64_t *m = NULL;
        rc = read_index(R, rd, i, &m);
        pthread_mutex_lock(&X->mu);
        X->member[i] = m;
        atomic_store_explicit(&X->state[i], rc ? IX_FAILED : IX_READY, memory_order_release);
        pthread_cond_broadcast(&X->cv);
        pthread_mutex_unlock(&X->mu);
    } else if (X->state[i] == IX_FAILED) {
        rc = -EIO; /* another thread failed on it and said why */
    }
    *out = X->member[i];
    return rc;
}

int rb_train_tar_fetch(struct rb_train_run *R, struct loader *l, const uint32_t *stream, size_t nnames, uint64_t k,
                       const volatile int *stop)
{
    struct train_tar *X = R->tar;
    struct tar_reader *rd = &X->rd[l->id];
    rd->watch = rb_fetcher_watch(l->f);
    size_t n = 0;
    /* Batch k takes samples [k b, (k+1) b) of the rank's stream: sample j is member j % spo of shard j / spo. */
    for (uint64_t j = k * X->batch; j < (k + 1) * X->batch && j / X->spo < nnames; j++) {
        uint32_t shard = stream[j / X->spo];
        const uint64_t *m;
        int rc = shard_index(R, rd, shard, &m);
        if (rc)
            return rc == -EIO || rc == -EINVAL ? -ECANCELED : rc;
        rd->idx[n] = shard;
        rd->off[n] = m[2 * (j % X->spo)];
        rd->len[n] = m[2 * (j % X->spo) + 1];
        /* An empty member is a sample with no bytes: nothing to read (a zero-length Range is no range). */
        if (rd->len[n])
            n++;
    }
    return rb_fetcher_get_ranges(l->f, R->all, rd->idx, rd->off, rd->len, n, l->local, NULL, stop);
}

void rb_train_tar_record(struct rb_train_run *R, cJSON *dataset)
{
    const struct train_args *a = R->a;
    struct rb_harness *h = R->h;
    if (a->format != TRAIN_FORMAT_TAR)
        return;
    uint64_t mine[3] = {0, 0, 0}, sum[3];
    if (R->tar) {
        mine[0] = atomic_load(&R->tar->shards);
        mine[1] = atomic_load(&R->tar->requests);
        mine[2] = atomic_load(&R->tar->bytes);
    }
    memcpy(sum, mine, sizeof sum);
    if (h->mpi)
        RB_MPI_CHECK(MPI_Reduce(mine, sum, 3, MPI_UINT64_T, MPI_SUM, 0, h->comm));
    if (h->rank != 0 || !dataset)
        return;
    cJSON_AddStringToObject(dataset, "shard_read", a->shard_read == TRAIN_SHARD_RANGED ? "ranged" : "whole");
    if (!R->tar) {
        cJSON_AddNullToObject(dataset, "index");
        return;
    }
    cJSON *ix = cJSON_AddObjectToObject(dataset, "index");
    cJSON_AddItemToObject(ix, "shards", rb_json_u64(sum[0]));
    cJSON_AddItemToObject(ix, "requests", rb_json_u64(sum[1]));
    cJSON_AddItemToObject(ix, "bytes", rb_json_u64(sum[2]));
}
