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

struct train_tar {
    uint64_t spo, batch;
    struct train_ixcache ix;        /* per shard once read: spo pairs (data offset, bytes) */
    bool ix_init;
    struct train_reader *rd;        /* per read thread */
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
    atomic_flag_clear(&X->said);
    X->ix_init = true;
    int bad = rb_train_ixcache_init(&X->ix, R->all->n);
    X->nrd = R->nloaders;
    return bad || rb_train_readers_new(R, X->nrd, X->batch, &X->rd) ? -ENOMEM : 0;
}

void rb_train_tar_free(struct rb_train_run *R)
{
    struct train_tar *X = R->tar;
    if (!X || R->abandoned) /* a read thread left in a stalled file system call may still come back to it */
        return;
    if (X->ix_init)
        rb_train_ixcache_free(&X->ix, free);
    rb_train_readers_free(X->rd, X->nrd);
    free(X);
    R->tar = NULL;
}

/* ---- reading a shard's headers ---- */

/*
 * Walks the shard's headers from its start, one 512-byte read each: the
 * regular members' data offsets and sizes into out (spo pairs). Every
 * member must lie within the object and there must be exactly spo of them.
 */
static int walk_headers(struct train_tar *X, struct train_rget *q, uint64_t *out, char *err, size_t errlen)
{
    uint64_t members = 0, off = 0;
    for (;;) {
        if (q->total != UINT64_MAX && off >= q->total)
            break; /* the end without zero blocks, as GNU tar accepts */
        int rc = rb_train_rget_read(q, off, BLOCK, false, err, errlen);
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

/* What the index cache's reads of this rank's shards need. */
struct tar_read_ctx {
    struct rb_train_run *R;
    struct train_reader *rd;
};

/* Reads shard i's index (its headers) into a new array. Returns 0 or -errno after one error line. */
static int read_index(void *arg, size_t i, void **out)
{
    struct tar_read_ctx *x = arg;
    struct rb_train_run *R = x->R;
    struct train_tar *X = R->tar;
    char name[RB_OBJSET_NAME_BYTES], err[512] = "";
    unsigned char buf[BLOCK];
    struct train_rget q = {.t = R->t, .name = rb_objset_name(R->all, i, name), .timeout_ns = R->a->tgt.timeout_ns,
                           .easy = x->rd->easy, .watch = x->rd->watch, .buf = buf,
                           .whole_hint = "; use --shard-read whole"};
    uint64_t *m = calloc(2 * X->spo, sizeof *m);
    if (!m)
        return -ENOMEM;
    int rc = rb_train_rget_open(&q, err, sizeof err);
    if (!rc)
        rc = walk_headers(X, &q, m, err, sizeof err);
    rb_train_rget_close(&q);
    if (rc) {
        if (!atomic_flag_test_and_set(&X->said))
            rb_error("--shard-read ranged: %s \"%s\": %s", rb_target_name(R->t), q.name, err);
        free(m);
        return rc;
    }
    atomic_fetch_add(&X->shards, 1);
    *out = m;
    return 0;
}

int rb_train_tar_fetch(struct rb_train_run *R, struct loader *l, const uint32_t *stream, size_t nnames, uint64_t k,
                       const volatile int *stop)
{
    struct train_tar *X = R->tar;
    struct train_reader *rd = &X->rd[l->id];
    rd->watch = rb_fetcher_watch(l->f);
    size_t n = 0;
    /* Batch k takes samples [k b, (k+1) b) of the rank's stream: sample j is member j % spo of shard j / spo. */
    for (uint64_t j = k * X->batch; j < (k + 1) * X->batch && j / X->spo < nnames; j++) {
        uint32_t shard = stream[j / X->spo];
        void *ix;
        struct tar_read_ctx ctx = {R, rd};
        int rc = rb_train_ixcache_get(&X->ix, shard, read_index, &ctx, &ix);
        const uint64_t *m = ix;
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
