/* railbench load train --decode: each batch's npz or JPEG files kept as they arrive, then decoded as a loader would. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "railbench/clock.h"
#include "railbench/log.h"
#include "fmt_int.h"
#include "train_cmd_int.h"

/* One file of a batch: its name and the bytes that arrived for it. */
struct dec_entry {
    char name[RB_OBJSET_NAME_BYTES];
    unsigned char *buf;
    size_t cap, got;
};

/* A read thread's batch. */
struct dec_batch {
    struct dec_entry *e;
    size_t n, cap;
};

struct train_decode {
    struct dec_batch *b;            /* per read thread */
    unsigned nb;
    int format;
    atomic_uint_least64_t files, failed, cpu_ns, bytes;
    atomic_flag said;
};

/* The batch the read thread on this thread is fetching (bodies go there), or NULL. */
static __thread struct dec_batch *cur;

void rb_train_decode_body(const char *name, uint64_t off, const void *p, size_t n)
{
    struct dec_batch *b = cur;
    for (size_t i = 0; b && i < b->n; i++) {
        struct dec_entry *e = &b->e[i];
        if (strcmp(e->name, name) != 0)
            continue;
        if (off + n > e->cap) {
            size_t cap = e->cap ? e->cap : 64 << 10;
            while (cap < off + n)
                cap *= 2;
            unsigned char *g = realloc(e->buf, cap);
            if (!g)
                return; /* the file is then short, and fails to decode: counted */
            e->buf = g;
            e->cap = cap;
        }
        memcpy(e->buf + off, p, n);
        if (off + n > e->got)
            e->got = (size_t)(off + n);
        return;
    }
}

int rb_train_decode_new(struct rb_train_run *R)
{
    if (!R->a->decode)
        return 0;
    struct train_decode *D = calloc(1, sizeof *D);
    if (!D)
        return -ENOMEM;
    R->dec = D;
    D->format = R->a->format;
    D->nb = R->nloaders;
    D->b = calloc(D->nb, sizeof *D->b);
    atomic_flag_clear(&D->said);
    return D->b ? 0 : -ENOMEM;
}

void rb_train_decode_free(struct rb_train_run *R)
{
    struct train_decode *D = R->dec;
    if (!D || R->abandoned)
        return;
    for (unsigned i = 0; D->b && i < D->nb; i++) {
        for (size_t k = 0; k < D->b[i].cap; k++)
            free(D->b[i].e[k].buf);
        free(D->b[i].e);
    }
    free(D->b);
    free(D);
    R->dec = NULL;
}

void rb_train_decode_begin(struct rb_train_run *R, const struct loader *l, const uint32_t *idx, size_t n)
{
    struct train_decode *D = R->dec;
    if (!D)
        return;
    struct dec_batch *b = &D->b[l->id];
    if (n > b->cap) {
        struct dec_entry *g = realloc(b->e, n * sizeof *g);
        if (!g) {
            b->n = 0;
            cur = b;
            return;
        }
        memset(g + b->cap, 0, (n - b->cap) * sizeof *g);
        b->e = g;
        b->cap = n;
    }
    for (size_t i = 0; i < n; i++) {
        char buf[RB_OBJSET_NAME_BYTES];
        snprintf(b->e[i].name, sizeof b->e[i].name, "%s", rb_objset_name(R->all, idx[i], buf));
        b->e[i].got = 0;
    }
    b->n = n;
    cur = b;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * RB_NS_PER_S + (uint64_t)ts.tv_nsec;
}

void rb_train_decode_end(struct rb_train_run *R, const struct loader *l)
{
    struct train_decode *D = R->dec;
    cur = NULL;
    if (!D)
        return;
    struct dec_batch *b = &D->b[l->id];
    uint64_t t0 = thread_cpu_ns(), files = 0, failed = 0, bytes = 0;
    for (size_t i = 0; i < b->n; i++) {
        struct dec_entry *e = &b->e[i];
        if (!e->got)
            continue; /* a failed read: counted by the fetcher */
        int rc;
        if (D->format == TRAIN_FORMAT_JPEG) {
            unsigned w = 0, h = 0;
            rc = rb_jpeg_decode(e->buf, e->got, &w, &h);
            bytes += rc ? 0 : (uint64_t)w * h * 3;
        } else {
            uint64_t arrays, ab, sum;
            rc = rb_npz_touch(e->buf, e->got, &arrays, &ab, &sum);
            bytes += rc ? 0 : ab;
        }
        files++;
        if (rc) {
            failed++;
            if (!atomic_flag_test_and_set(&D->said))
                rb_warn("--decode: %s \"%s\" (%zu bytes) does not decode as %s", rb_target_name(R->t), e->name, e->got,
                        D->format == TRAIN_FORMAT_JPEG ? "a JPEG" : "an npz of npy arrays");
        }
    }
    atomic_fetch_add(&D->cpu_ns, thread_cpu_ns() - t0);
    atomic_fetch_add(&D->files, files);
    atomic_fetch_add(&D->failed, failed);
    atomic_fetch_add(&D->bytes, bytes);
}

void rb_train_decode_record(struct rb_train_run *R, cJSON *dataset)
{
    struct rb_harness *h = R->h;
    struct train_decode *D = R->dec;
    if (!R->a->decode)
        return;
    uint64_t mine[4] = {0}, sum[4];
    if (D) {
        mine[0] = atomic_load(&D->files);
        mine[1] = atomic_load(&D->failed);
        mine[2] = atomic_load(&D->cpu_ns);
        mine[3] = atomic_load(&D->bytes);
    }
    memcpy(sum, mine, sizeof sum);
    if (h->mpi)
        RB_MPI_CHECK(MPI_Reduce(mine, sum, 4, MPI_UINT64_T, MPI_SUM, 0, h->comm));
    if (h->rank != 0 || !dataset)
        return;
    cJSON *d = cJSON_AddObjectToObject(dataset, "decode");
    cJSON_AddItemToObject(d, "files", rb_json_u64(sum[0]));
    cJSON_AddItemToObject(d, "failed", rb_json_u64(sum[1]));
    cJSON_AddNumberToObject(d, "cpu_s", (double)sum[2] / 1e9);
    cJSON_AddItemToObject(d, "decoded_bytes", rb_json_u64(sum[3]));
    rb_info("--decode: %" PRIu64 " file(s) decoded (%" PRIu64 " failed), %.3f s of CPU, %.3f ms a file", sum[0], sum[1],
            (double)sum[2] / 1e9, sum[0] ? (double)sum[2] / 1e6 / (double)sum[0] : 0.0);
}
