/* load train --checkpoint-every: a checkpoint every K steps, synchronous or async (snapshot, then a writer thread). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../cmd/cleanup_int.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "train_cmd_int.h"

/* The snapshot of an async checkpoint is a real copy of this much memory at most; beyond it the copy is of this
 * much (the rest is written from the payload as the writer goes). */
#define SNAPSHOT_MAX_BYTES (1ull << 30)
/* Stalls kept one by one, to take each checkpoint's slowest rank (every rank has the same checkpoints). */
#define MAX_STALLS 4096

struct train_ckpt {
    struct rb_train_run *R;
    uint64_t every, bytes;
    bool async;
    char base[1400];            /* "<target prefix>rbckpt-train-<stamp>/" */
    struct rb_load_opts o;      /* the PUT of one checkpoint file */
    uint64_t steps;             /* steps seen (every rank the same) */
    uint64_t trainer_ns;        /* the steps' time, each from its start to the end of its checkpoint */
    /* what this rank measured */
    uint64_t count, write_ns, stall_ns, snapshot_ns, failed;
    double stalls_s[MAX_STALLS]; /* each checkpoint's stall on this rank */
    uint64_t nstalls;
    struct rb_objset written;   /* names written (cleanup deletes them) */
    /* async: the writer thread and its one pending checkpoint */
    char *state, *snap;
    size_t snap_bytes;
    pthread_t th;
    bool th_started, busy, quit;
    uint64_t pending;           /* step number of the checkpoint handed over */
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* Writes this rank's file of checkpoint n through an engine of its own (the calling thread drives it). */
static void write_one(struct train_ckpt *c, uint64_t n)
{
    char name[RB_OBJSET_NAME_BYTES];
    struct rb_objset set = {0};
    int len = snprintf(name, sizeof name, "%.900sstep-%06" PRIu64 "/rank-%05d", c->base, n, c->R->h->rank);
    struct rb_load_opts o = c->o;
    struct rb_engine *e = NULL;
    struct rb_stats *st = rb_stats_new();
    uint64_t t0 = rb_clock_ns();
    int rc = !st ? -ENOMEM : len < 0 || (size_t)len >= sizeof name ? -ENAMETOOLONG : rb_objset_add(&set, name, c->bytes);
    o.objects = &set;
    if (!rc)
        rc = rb_engine_new(&e, &o);
    if (!rc)
        rc = rb_engine_start(e);
    while (!rc && !rb_engine_done(e))
        rb_clock_sleep_ns(200 * RB_NS_PER_US, NULL);
    if (e) {
        rb_engine_stop(e);
        rb_engine_collect(e, st, NULL);
    }
    uint64_t dt = rb_clock_ns() - t0;
    bool ok = !rc && st && st->ops == 1 && st->errors == 0;
    pthread_mutex_lock(&c->mu);
    c->write_ns += dt;
    c->count++;
    if (!ok)
        c->failed++;
    if (ok && rb_objset_add(&c->written, name, 0))
        c->failed++;
    pthread_mutex_unlock(&c->mu);
    rb_engine_free(e);
    rb_stats_free(st);
    rb_objset_free(&set);
}

static void *writer_main(void *arg)
{
    struct train_ckpt *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->busy && !c->quit)
            pthread_cond_wait(&c->cv, &c->mu);
        if (!c->busy)
            break;
        uint64_t n = c->pending;
        pthread_mutex_unlock(&c->mu);
        write_one(c, n);
        pthread_mutex_lock(&c->mu);
        c->busy = false;
        pthread_cond_broadcast(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

int rb_train_ckpt_new(struct rb_train_run *R, struct train_ckpt **out)
{
    const struct train_args *a = R->a;
    *out = NULL;
    if (!a->ckpt_every)
        return 0;
    struct train_ckpt *c = calloc(1, sizeof *c);
    if (!c)
        rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "out of memory");
    c->R = R;
    c->every = a->ckpt_every;
    c->bytes = a->ckpt_bytes;
    c->async = a->ckpt_async;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    unsigned long long stamp[2] = {(unsigned long long)time(NULL), (unsigned long long)getpid()};
    RB_MPI_CHECK(MPI_Bcast(stamp, 2, MPI_UNSIGNED_LONG_LONG, 0, R->h->comm));
    snprintf(c->base, sizeof c->base, "%srbckpt-train-%llx-%llx/", rb_target_prefix(R->t), stamp[0], stamp[1]);
    /* Checkpoint writes go through libcurl whatever --engine the reads take. */
    const struct rb_engine_args ea = {.engine = RB_ENGINE_CURL, .max_redirects = a->eng.max_redirects};
    c->o = rb_load_opts_from(RB_LOAD_PUT, R->t, &a->tgt, &ea, R->h->rank);
    c->o.threads = 1;
    c->o.inflight = 1;
    c->o.seed = a->seed;
    int bad = 0;
    if (c->async) {
        c->snap_bytes = c->bytes < SNAPSHOT_MAX_BYTES ? (size_t)c->bytes : (size_t)SNAPSHOT_MAX_BYTES;
        c->state = malloc(c->snap_bytes ? c->snap_bytes : 1);
        c->snap = malloc(c->snap_bytes ? c->snap_bytes : 1);
        if (!c->state || !c->snap)
            bad = 1;
        else {
            memset(c->state, 0x5a, c->snap_bytes); /* the "device" state, resident before the first copy */
            bad = pthread_create(&c->th, NULL, writer_main, c) != 0;
            c->th_started = !bad;
        }
    }
    int any = bad;
    RB_MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, R->h->comm));
    *out = c;
    if (any) {
        rb_error("--checkpoint-async: cannot set up the %" PRIu64 "-byte snapshot or its writer thread", c->bytes);
        return RB_EXIT_RUNTIME;
    }
    if (R->h->rank == 0)
        rb_info("checkpoint every %" PRIu64 " steps, %" PRIu64 " bytes per rank, %s, under %s%s", c->every, c->bytes,
                c->async ? "async (snapshot, then a writer thread)" : "synchronous", rb_target_name(R->t), c->base);
    return 0;
}

void rb_train_ckpt_step(struct train_ckpt *c, uint64_t step_start_ns)
{
    if (!c)
        return;
    uint64_t now = rb_clock_ns();
    c->steps++;
    if (c->steps % c->every == 0) {
        uint64_t n = c->steps / c->every;
        if (!c->async) {
            write_one(c, n);
        } else {
            /* A framework's async save: wait for the previous write, copy the state (the snapshot), hand it over. */
            pthread_mutex_lock(&c->mu);
            while (c->busy)
                pthread_cond_wait(&c->cv, &c->mu);
            pthread_mutex_unlock(&c->mu);
            uint64_t s0 = rb_clock_ns();
            memcpy(c->snap, c->state, c->snap_bytes);
            uint64_t s1 = rb_clock_ns();
            pthread_mutex_lock(&c->mu);
            c->snapshot_ns += s1 - s0;
            c->pending = n;
            c->busy = true;
            pthread_cond_broadcast(&c->cv);
            pthread_mutex_unlock(&c->mu);
        }
        uint64_t stall = rb_clock_ns() - now;
        c->stall_ns += stall;
        if (c->nstalls < MAX_STALLS)
            c->stalls_s[c->nstalls++] = stall / 1e9;
    }
    c->trainer_ns += rb_clock_ns() - step_start_ns;
}

/* Waits for an async write still under way (its time counts as written, not as a stall) and joins the writer. */
static void writer_join(struct train_ckpt *c)
{
    if (!c->th_started)
        return;
    pthread_mutex_lock(&c->mu);
    while (c->busy)
        pthread_cond_wait(&c->cv, &c->mu);
    c->quit = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->th, NULL);
    c->th_started = false;
}

cJSON *rb_train_ckpt_json(struct train_ckpt *c)
{
    if (!c)
        return NULL;
    writer_join(c);
    struct rb_train_run *R = c->R;
    double mine[6] = {(double)c->count, c->write_ns / 1e9, c->stall_ns / 1e9, c->snapshot_ns / 1e9,
                      (double)c->failed, c->trainer_ns / 1e9};
    double sum[6], max[6];
    RB_MPI_CHECK(MPI_Reduce(mine, sum, 6, MPI_DOUBLE, MPI_SUM, 0, R->h->comm));
    RB_MPI_CHECK(MPI_Reduce(mine, max, 6, MPI_DOUBLE, MPI_MAX, 0, R->h->comm));
    /* A synchronous checkpoint holds every rank at the next step's barrier until the slowest has written: what it
     * costs each step is the slowest rank's stall. */
    unsigned long long ns = c->nstalls, nmax = ns;
    RB_MPI_CHECK(MPI_Allreduce(&ns, &nmax, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, R->h->comm));
    double *slow = calloc(nmax ? nmax : 1, sizeof *slow), *mine_s = calloc(nmax ? nmax : 1, sizeof *mine_s);
    if (!slow || !mine_s)
        rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "out of memory");
    memcpy(mine_s, c->stalls_s, ns * sizeof *mine_s);
    RB_MPI_CHECK(MPI_Reduce(mine_s, slow, (int)nmax, MPI_DOUBLE, MPI_MAX, 0, R->h->comm));
    double slowest = 0;
    for (unsigned long long i = 0; i < nmax; i++)
        slowest += slow[i];
    free(slow);
    free(mine_s);
    if (R->h->rank != 0)
        return NULL;
    double n = R->h->size;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "every_steps", (double)c->every);
    cJSON_AddItemToObject(o, "bytes_per_rank", rb_json_u64(c->bytes));
    cJSON_AddStringToObject(o, "mode", c->async ? "async" : "sync");
    cJSON_AddNumberToObject(o, "checkpoints", max[0]);
    cJSON_AddNumberToObject(o, "failed", sum[4]);
    double per = sum[0] > 0 ? sum[1] / sum[0] : 0;
    cJSON_AddNumberToObject(o, "write_s_mean", per);
    cJSON_AddNumberToObject(o, "stall_s_per_rank", sum[2] / n);
    cJSON_AddNumberToObject(o, "snapshot_s_per_rank", sum[3] / n);
    cJSON_AddNumberToObject(o, "trainer_s_per_rank", sum[5] / n);
    cJSON_AddNumberToObject(o, "slowest_stall_s", slowest);
    /* The share of the trainer's time the checkpoints held it (each checkpoint's slowest rank): what they take off
     * AU (AU without checkpoints x this is the cost). */
    double frac = sum[5] > 0 ? slowest / (sum[5] / n) : 0;
    cJSON_AddNumberToObject(o, "stall_fraction", frac);
    rb_info("checkpoints: %.0f of %" PRIu64 " bytes per rank, %s; write %.3f s each, the trainer stalled %.3f s per rank, "
            "%.3f s by the slowest rank of each (%.1f %% of its time)", max[0], c->bytes, c->async ? "async" : "sync", per,
            sum[2] / n, slowest, 100 * frac);
    if (sum[4] > 0)
        rb_error("checkpoints: %.0f checkpoint write(s) failed", sum[4]);
    return o;
}

int rb_train_ckpt_free(struct rb_train_run *R, struct train_ckpt *c)
{
    if (!c)
        return 0;
    writer_join(c);
    struct rb_cleanup cl = {0};
    char where[1600];
    snprintf(where, sizeof where, "%s (%s)", rb_target_name(R->t), c->base);
    int status = rb_cleanup_run(R->h, &c->o, &c->written, false, RB_CLEANUP_COUNTED, where, &cl);
    rb_objset_free(&c->written);
    free(c->state);
    free(c->snap);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
    return status;
}
