/* railbench load train, the run: read threads, the prefetch queue, a trainer per rank, epochs as harness phases. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "railbench/buf.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "railbench/units.h"
#include "../engine/fwatch_int.h"
#include "train_cmd_int.h"

/* The trainer sleeps in slices so a stop is noticed within one. */
#define SLEEP_SLICE_NS (20 * RB_NS_PER_MS)
/*
 * A barrier is polled with growing sleeps up to this, so waiting ranks leave
 * the CPU to the read threads; short, because a rank that notices the end
 * late starts its next step late and its peers pay for it at the next barrier.
 */
#define SYNC_POLL_MAX_NS (50 * RB_NS_PER_US)


/* One epoch on this rank: the batches of its stream, the prefetch queue, the trainer's accounts. */
struct epoch {
    struct rb_train_run *R;
    struct train_mode mode;         /* reads or not; barrier, serial all-reduce, or overlapped */
    uint64_t seq;
    unsigned accel;
    uint64_t steps, nbatches, prefetch;
    uint32_t *stream;               /* the rank's objects (indices into R->all) in stream order */
    size_t nnames;

    pthread_mutex_t mu;             /* guards the queue: next, taken, ready[], go */
    pthread_cond_t ready_cv, room_cv;
    uint64_t next, taken;           /* next batch a read thread claims; batches the trainer took */
    unsigned char *ready;
    bool go;                        /* every rank started its threads: the trainer may begin */
    volatile int stop;              /* end now: set by the harness's stop, or a read thread that failed */

    pthread_t trainer;
    bool trainer_started;
    atomic_bool finished;
    atomic_uint_least64_t bytes;
    uint64_t *ready_ns, *comp_ns;   /* the trainer's current step, per accelerator */
    struct rb_train_tally *tally;   /* per accelerator */
    struct rb_hist *wait;           /* data wait per accelerator and step, first step excluded */
    struct rb_hist *sync;           /* time in the step's barrier or all-reduce, per step, first step excluded */
    struct train_steps st;          /* the trainer's step breakdown (fetch_* from the atomics below) */
    atomic_uint_least64_t fetch_ns, fetch_bytes, fetches;
};

/* ---- read threads ---- */

static void *loader_main(void *arg)
{
    struct loader *l = arg;
    struct epoch *ep = l->ep;
    const struct train_args *a = ep->R->a;
    for (;;) {
        pthread_mutex_lock(&ep->mu);
        while (!ep->stop && ep->next < ep->nbatches && ep->next >= ep->taken + ep->prefetch)
            pthread_cond_wait(&ep->room_cv, &ep->mu);
        if (ep->stop || ep->next >= ep->nbatches) {
            pthread_mutex_unlock(&ep->mu);
            break;
        }
        uint64_t k = ep->next++;
        pthread_mutex_unlock(&ep->mu);

        uint64_t first, count;
        rb_train_batch_objects(k, a->batch, a->spo, &first, &count);
        if (first > ep->nnames)
            first = ep->nnames;
        if (count > ep->nnames - first)
            count = ep->nnames - first;
        rb_train_decode_begin(ep->R, l, ep->stream + first, (size_t)count);
        uint64_t t0 = rb_clock_ns();
        int rc = ep->R->tar ? rb_train_tar_fetch(ep->R, l, ep->stream, ep->nnames, k, &ep->stop)
                 : ep->R->pqr ? rb_train_pq_fetch(ep->R, l, ep->stream, ep->nnames, k, &ep->stop)
                            : rb_fetcher_get(l->f, ep->R->all, ep->stream + first, (size_t)count, l->local, NULL, &ep->stop);
        uint64_t bytes = l->local->bytes;
        /* The batch's fetch time: what the storage slowdown of --overlap compares (train_overlap.c). */
        atomic_fetch_add(&ep->fetch_ns, rb_clock_ns() - t0);
        atomic_fetch_add(&ep->fetch_bytes, bytes);
        atomic_fetch_add(&ep->fetches, 1);
        rb_train_decode_end(ep->R, l); /* the loader's CPU before the batch is ready, not the fetch's time */
        /* Once per batch, never per request: the harness's collect takes the box at its tick. */
        pthread_mutex_lock(&l->mu);
        rb_stats_merge(l->box, l->local);
        pthread_mutex_unlock(&l->mu);
        rb_stats_reset(l->local);
        atomic_fetch_add(&ep->bytes, bytes);
        pthread_mutex_lock(&ep->mu);
        if (rc < 0) {
            l->failed = rc;
            ep->stop = 1;
            pthread_cond_broadcast(&ep->room_cv);
        } else if (!ep->stop) {
            /* A batch with a failed read delivers no samples (2): its accelerators have nothing to compute. */
            ep->ready[k] = rc == 0 ? 1 : 2;
        }
        pthread_cond_broadcast(&ep->ready_cv);
        pthread_mutex_unlock(&ep->mu);
        if (rc < 0) {
            if (rc != -ECANCELED) /* -ECANCELED: the reason was one line of its own */
                rb_error("read thread %u stopped: %s", l->id, strerror(-rc));
            break;
        }
    }
    return NULL;
}

/* ---- the trainer ---- */

/*
 * Waits for req, polling with sleeps that grow to 50 us so a waiting rank
 * leaves the CPU to the read threads (MPI progresses inside MPI_Test):
 * growing sleeps rather than a blocking call that spins on a core they need.
 */
static void poll_req(MPI_Request *req)
{
    uint64_t nap = RB_NS_PER_US;
    for (;;) {
        int done = 0;
        RB_MPI_CHECK(MPI_Test(req, &done, MPI_STATUS_IGNORE));
        if (done)
            return;
        struct timespec ts = {0, (long)nap};
        nanosleep(&ts, NULL);
        if (nap < SYNC_POLL_MAX_NS)
            nap *= 2;
    }
}

/*
 * The overlapped step's synchronisation (--overlap): wait for the previous
 * step's all-reduce, which ran while this step's batch was fetched and
 * computed, then start this step's. The last step, and a rank that must
 * stop, wait for their own at once (nothing follows to hide it). Sets
 * *ar_ns to the duration of the all-reduce waited for (0: none).
 */
static int overlap_sync(struct epoch *ep, uint64_t s, int stop, struct train_steps *ar)
{
    struct train_ar *th = ep->R->ar;
    uint64_t d = 0;
    if (rb_train_ar_pending(th)) {
        int any = rb_train_ar_wait(th, &d);
        if (s > 1) { /* the first step's all-reduce is left out, as the first step is */
            ar->allreduce_ns += d;
            ar->allreduces++;
        }
        if (any)
            return 1; /* every rank sees the same vote, so every rank leaves here */
    }
    rb_train_ar_start(th, stop);
    if (!stop && s + 1 < ep->steps)
        return 0;
    int any = rb_train_ar_wait(th, &d);
    if (s > 0) {
        ar->allreduce_ns += d;
        ar->allreduces++;
    }
    return any;
}

/*
 * The step's synchronisation: a barrier, or an all-reduce of --grad-bytes
 * as data-parallel training does after each step, blocking or overlapped.
 * It also carries whether any rank must stop, so every trainer leaves after
 * the same step and none waits for a peer that has gone. Returns that
 * agreement; ar gets the all-reduces completed (allreduce_ns, allreduces).
 */
static int step_sync(struct epoch *ep, uint64_t s, int stop, struct train_steps *ar)
{
    struct rb_train_run *R = ep->R;
    if (ep->mode.sync == TRAIN_SYNC_OVERLAP)
        return overlap_sync(ep, s, stop, ar);
    if (ep->mode.sync == TRAIN_SYNC_BARRIER) {
        int any = 0;
        MPI_Request req;
        RB_MPI_CHECK(MPI_Iallreduce(&stop, &any, 1, MPI_INT, MPI_MAX, R->comm, &req));
        poll_req(&req);
        return any;
    }
    /* A real all-reduce (float sum), blocking as a training step's is; element 0 carries the stop vote. */
    uint64_t t0 = rb_clock_ns();
    R->grad_send[0] = stop ? 1.0f : 0.0f;
    RB_MPI_CHECK(MPI_Allreduce(R->grad_send, R->grad_recv, R->grad_count, MPI_FLOAT, MPI_SUM, R->comm));
    if (s > 0) {
        ar->allreduce_ns += rb_clock_ns() - t0;
        ar->allreduces++;
    }
    return R->grad_recv[0] > 0.5f;
}

/*
 * Takes a batch per simulated accelerator from the queue (the wait is the
 * data wait) and draws each one's compute time; without reads (the
 * collective baseline) every batch is in hand at once. Returns whether the
 * step was cut by a stop; *starved counts accelerators whose batch failed.
 */
static bool take_batches(struct epoch *ep, uint64_t s, unsigned *starved)
{
    struct rb_train_run *R = ep->R;
    const struct train_args *a = R->a;
    bool cut = false;
    for (unsigned x = 0; x < ep->accel && !cut; x++) {
        uint64_t k = s * ep->accel + x;
        ep->comp_ns[x] = rb_train_compute_ns(a->compute_ns, a->compute_stdev_ns, a->seed, ep->seq, R->h->rank, x, s);
        if (!ep->mode.reads) {
            ep->ready_ns[x] = rb_clock_ns();
            continue;
        }
        pthread_mutex_lock(&ep->mu);
        while (!ep->ready[k] && !ep->stop)
            pthread_cond_wait(&ep->ready_cv, &ep->mu);
        /*
         * The accelerator has its batch now: its compute starts here even
         * if the read thread woken below takes the CPU for a while.
         */
        ep->ready_ns[x] = rb_clock_ns();
        cut = !ep->ready[k];
        ep->taken = k + 1;
        pthread_cond_signal(&ep->room_cv); /* one slot freed: one read thread */
        pthread_mutex_unlock(&ep->mu);
        if (!cut && ep->ready[k] == 2) {
            ep->comp_ns[x] = 0;
            (*starved)++;
        }
    }
    return cut;
}

/* Adds one step after the first to the breakdown: data wait, compute, the synchronisation, the all-reduce. */
static void steps_add(struct train_steps *st, const struct epoch *ep, uint64_t start, uint64_t wake, uint64_t end,
                      const struct train_steps *ar)
{
    uint64_t ready = start;
    for (unsigned x = 0; x < ep->accel; x++)
        if (ep->ready_ns[x] > ready)
            ready = ep->ready_ns[x];
    if (wake < ready)
        wake = ready;
    st->steps++;
    st->wait_ns += ready - start;
    st->compute_ns += wake - ready;
    st->sync_ns += end > wake ? end - wake : 0;
    st->step_ns += end - start;
    st->allreduce_ns += ar->allreduce_ns;
    st->allreduces += ar->allreduces;
}

/* Sleeps until deadline (monotonic ns) or *stop; returns the time it woke. */
static uint64_t sleep_until(uint64_t deadline, const volatile int *stop)
{
    for (;;) {
        uint64_t now = rb_clock_ns();
        if (now >= deadline || *stop)
            return now;
        uint64_t left = deadline - now;
        if (left > SLEEP_SLICE_NS)
            left = SLEEP_SLICE_NS;
        struct timespec ts = {(time_t)(left / RB_NS_PER_S), (long)(left % RB_NS_PER_S)};
        nanosleep(&ts, NULL);
    }
}

/*
 * One rank's steps: take a batch per simulated accelerator from the queue
 * (the wait is the data wait), let each accelerator "compute" from the
 * moment its batch is ready — by sleeping until the slowest finishes, since
 * a real accelerator leaves the host's CPU to the data loader, and busy
 * waiting on a shared host would slow the very reads being measured — then
 * synchronise with the other ranks.
 */
static void *trainer_main(void *arg)
{
    struct epoch *ep = arg;
    const struct train_args *a = ep->R->a;
    /* The default 50 us timer slack would stretch every compute sleep. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    pthread_mutex_lock(&ep->mu);
    while (!ep->go && !ep->stop)
        pthread_cond_wait(&ep->ready_cv, &ep->mu);
    bool begin = ep->go && !ep->stop;
    pthread_mutex_unlock(&ep->mu);

    uint64_t t = rb_clock_ns();
    for (uint64_t s = 0; begin && s < ep->steps; s++) {
        const uint64_t start = t;
        unsigned starved = 0;
        bool cut = take_batches(ep, s, &starved);
        uint64_t wake = 0;
        if (!cut) {
            uint64_t cend = rb_train_compute_end(ep->ready_ns, ep->comp_ns, ep->accel);
            wake = sleep_until(cend, &ep->stop);
            cut = wake < cend;
        }
        const uint64_t sync_start = rb_clock_ns();
        struct train_steps ar = {0};
        int any = step_sync(ep, s, cut || ep->stop || rb_harness_signalled(), &ar);
        /* --checkpoint-every: the checkpoint's stall is part of the step (what it costs AU). */
        if (!cut && !any && ep->mode.reads)
            rb_train_ckpt_step(ep->R->ckpt, start);
        uint64_t end = rb_clock_ns();
        if (!cut) {
            if (ep->tally[0].steps > 0) { /* the first step is left out, as from AU */
                rb_hist_record(ep->sync, end - sync_start);
                steps_add(&ep->st, ep, start, wake, end, &ar);
            }
            rb_train_step_account(ep->tally, ep->accel, a->batch, start, ep->ready_ns, ep->comp_ns, wake, end,
                                  ep->wait);
            /* The starved accelerators' samples were never delivered (a failed read is not a sample). */
            for (unsigned x = 0; x < ep->accel && starved; x++)
                if (ep->comp_ns[x] == 0 && ep->tally[x].samples >= a->batch) {
                    ep->tally[x].samples -= a->batch;
                    starved--;
                }
        }
        t = end;
        if (any)
            break;
    }
    atomic_store(&ep->finished, true);
    return NULL;
}

/* ---- an epoch as a harness phase ---- */

static int ep_start(void *ctx)
{
    struct epoch *ep = ctx;
    struct rb_train_run *R = ep->R;
    for (unsigned i = 0; ep->mode.reads && i < R->nloaders; i++) {
        struct loader *l = &R->loaders[i];
        l->ep = ep;
        l->failed = 0;
        int rc = pthread_create(&l->th, NULL, loader_main, l);
        if (rc) {
            rb_error("cannot start read thread %u: %s", i, strerror(rc));
            return -rc;
        }
        l->started = true;
    }
    int rc = pthread_create(&ep->trainer, NULL, trainer_main, ep);
    if (rc) {
        rb_error("cannot start the trainer thread: %s", strerror(rc));
        return -rc;
    }
    ep->trainer_started = true;
    return 0;
}

static void ep_collect(void *ctx, struct rb_stats *into)
{
    struct epoch *ep = ctx;
    for (unsigned i = 0; i < ep->R->nloaders; i++) {
        struct loader *l = &ep->R->loaders[i];
        pthread_mutex_lock(&l->mu);
        rb_stats_merge(into, l->box);
        rb_stats_reset(l->box);
        pthread_mutex_unlock(&l->mu);
    }
}

/*
 * The harness calls done() first once every rank's start() succeeded, so
 * that is when the trainer may begin: a trainer must not enter its first
 * barrier while another rank failed to start one and will never arrive.
 */
static bool ep_done(void *ctx)
{
    struct epoch *ep = ctx;
    if (!ep->go) {
        pthread_mutex_lock(&ep->mu);
        ep->go = true;
        pthread_cond_broadcast(&ep->ready_cv);
        pthread_mutex_unlock(&ep->mu);
    }
    /* A file system call past --timeout: the watchdog said which; the epoch ends here (exit 3). */
    return atomic_load(&ep->finished) || rb_fwatch_fired();
}

static void ep_stop(void *ctx)
{
    struct epoch *ep = ctx;
    pthread_mutex_lock(&ep->mu);
    ep->stop = 1;
    pthread_cond_broadcast(&ep->ready_cv);
    pthread_cond_broadcast(&ep->room_cv);
    pthread_mutex_unlock(&ep->mu);
    if (ep->trainer_started) {
        pthread_join(ep->trainer, NULL);
        ep->trainer_started = false;
    }
    /* A read thread stuck in a file system call is left behind (rb_fwatch_join): its batch's read timed out. */
    for (unsigned i = 0; i < ep->R->nloaders; i++) {
        struct loader *l = &ep->R->loaders[i];
        if (l->started && !rb_fwatch_join(l->th, rb_fetcher_watch(l->f))) {
            l->failed = -ETIMEDOUT;
            ep->R->abandoned = true;
        }
        l->started = false;
    }
}

static void epoch_free(struct epoch *ep)
{
    if (ep->R->abandoned)
        return; /* a read thread left in the kernel may still come back to it */
    pthread_mutex_destroy(&ep->mu);
    pthread_cond_destroy(&ep->ready_cv);
    pthread_cond_destroy(&ep->room_cv);
    free(ep->stream);
    free(ep->ready);
    free(ep->ready_ns);
    free(ep->comp_ns);
    free(ep->tally);
    rb_hist_free(ep->wait);
    rb_hist_free(ep->sync);
    free(ep);
}

static const char *const extra_redirects[] = {"redirects", NULL};


/* An epoch's state before its phase: its steps, prefetch depth, this rank's stream of names, the tallies. */
static void epoch_init(struct epoch *ep, struct rb_train_run *R, const struct trial *tr, uint64_t epoch_no)
{
    struct rb_harness *h = R->h;
    const struct train_args *a = R->a;
    memset(ep, 0, sizeof *ep);
    ep->R = R;
    ep->mode = R->mode;
    ep->seq = ++R->epoch_seq;
    ep->accel = (unsigned)tr->accel;
    ep->steps = rb_train_steps(R->all->n, h->size, a->spo, tr->accel, a->batch, a->max_steps);
    ep->nbatches = ep->steps * tr->accel;
    /* PyTorch's DataLoader keeps prefetch_factor (2) batches per worker in flight; here per reader or accelerator. */
    ep->prefetch = a->prefetch ? a->prefetch : 2 * (a->read_threads > tr->accel ? a->read_threads : tr->accel);
    pthread_mutex_init(&ep->mu, NULL);
    pthread_cond_init(&ep->ready_cv, NULL);
    pthread_cond_init(&ep->room_cv, NULL);
    atomic_init(&ep->finished, false);
    atomic_init(&ep->bytes, 0);
    atomic_init(&ep->fetch_ns, 0);
    atomic_init(&ep->fetch_bytes, 0);
    atomic_init(&ep->fetches, 0);

    size_t nstream = 0;
    int rc = rb_train_epoch_stream(R->all->n, a->seed, ep->seq, h->rank, h->size, &ep->stream, &nstream);
    ep->ready = calloc(ep->nbatches ? ep->nbatches : 1, 1);
    ep->ready_ns = calloc(ep->accel, sizeof *ep->ready_ns);
    ep->comp_ns = calloc(ep->accel, sizeof *ep->comp_ns);
    ep->tally = calloc(ep->accel, sizeof *ep->tally);
    ep->wait = rb_hist_new();
    ep->sync = rb_hist_new();
    if (rc || !ep->ready || !ep->ready_ns || !ep->comp_ns || !ep->tally || !ep->wait || !ep->sync)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory for epoch %" PRIu64, epoch_no);
    ep->nnames = nstream;
}

/* This rank's figures of the epoch as JSON, for rank 0 (rank: this rank). */
static cJSON *rank_json(struct epoch *ep, int rank)
{
    struct rb_train_rank mine;
    rb_train_rank_figures(ep->tally, ep->accel, atomic_load(&ep->bytes), &mine);
    cJSON *mj = cJSON_CreateObject();
    cJSON_AddNumberToObject(mj, "rank", rank);
    cJSON_AddItemToObject(mj, "steps", rb_json_u64(mine.steps));
    cJSON_AddItemToObject(mj, "samples", rb_json_u64(mine.samples));
    cJSON_AddItemToObject(mj, "bytes", rb_json_u64(mine.bytes));
    cJSON_AddItemToObject(mj, "wall_ns", rb_json_u64(mine.wall_ns));
    cJSON_AddNumberToObject(mj, "au_pct", mine.au_pct);
    cJSON_AddBoolToObject(mj, "cut", mine.steps < ep->steps);
    ep->st.fetch_ns = atomic_load(&ep->fetch_ns);
    ep->st.fetch_bytes = atomic_load(&ep->fetch_bytes);
    ep->st.fetches = atomic_load(&ep->fetches);
    cJSON *sj = cJSON_AddObjectToObject(mj, "step_sums");
    const struct train_steps *st = &ep->st;
    const char *const keys[] = {"steps", "wait_ns", "compute_ns", "sync_ns", "step_ns", "allreduce_ns", "allreduces",
                                "fetch_ns", "fetch_bytes", "fetches"};
    const uint64_t vals[] = {st->steps, st->wait_ns, st->compute_ns, st->sync_ns, st->step_ns, st->allreduce_ns,
                             st->allreduces, st->fetch_ns, st->fetch_bytes, st->fetches};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        cJSON_AddItemToObject(sj, keys[i], rb_json_u64(vals[i]));
    return mj;
}

int rb_train_run_epoch(struct rb_train_run *R, struct trial *tr, uint64_t epoch_no, const char *name)
{
    struct rb_harness *h = R->h;
    const struct train_args *a = R->a;
    /* On the heap: a read thread left in a stalled file system call keeps it (epoch_free). */
    struct epoch *ep = malloc(sizeof *ep);
    if (!ep)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory for epoch %" PRIu64, epoch_no);
    epoch_init(ep, R, tr, epoch_no);

    struct rb_phase p = {
        .name = name,
        .op = "GET",
        .names = {rb_load_err_names, a->cache_header || a->file.cold_check ? rb_load_extra_names : extra_redirects},
        .start = ep_start,
        .collect = ep_collect,
        .done = ep_done,
        .stop = ep_stop,
        .ctx = ep,
    };
    int status = rb_harness_run_phase(h, &p);
    int broken = 0, any_broken;
    for (unsigned i = 0; i < R->nloaders; i++)
        broken |= R->loaders[i].failed != 0;
    any_broken = broken;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&broken, &any_broken, 1, MPI_INT, MPI_MAX, h->comm));
    if (any_broken && !status)
        status = RB_EXIT_RUNTIME;
    R->broken = R->broken || any_broken;

    /* This rank's figures to rank 0, and the data waits merged there. */
    cJSON *mj = rank_json(ep, h->rank);
    cJSON *ranks_json = rb_harness_gather_json(h, mj);
    cJSON_Delete(mj);
    struct rb_hist *wait_all = rb_hist_new(), *sync_all = rb_hist_new();
    if (!wait_all || !sync_all)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    rb_harness_reduce_hist(h, ep->wait, wait_all);
    rb_harness_reduce_hist(h, ep->sync, sync_all);

    double au = 0, sps = 0;
    if (h->rank == 0 && ranks_json) {
        struct rb_train_figures fig;
        cJSON *e = rb_train_epoch_entry(R, ranks_json, epoch_no, ep->seq == 1, ep->accel, &p, wait_all, sync_all, &fig);
        struct rb_train_figures *grown = realloc(tr->fig, (tr->nfig + 1) * sizeof *grown);
        if (!e || !grown)
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
        tr->fig = grown;
        /* An epoch cut short (a signal, a failed or stalled read) is shown, never counted in the trial's means. */
        bool complete = !status && !any_broken && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "interrupted"));
        cJSON_AddBoolToObject(e, "complete", complete);
        if (complete)
            tr->fig[tr->nfig++] = fig;
        cJSON_AddItemToArray(tr->epochs, e);
        au = fig.au_pct;
        sps = fig.samples_per_s;
        if (p.total) {
            rb_file_check_cold(&h->result, name, &a->file, p.total); /* --cold-check: "<epoch>_cold" */
            R->requests += p.total->ops;
            R->errors += p.total->errors;
            /* Ranged shard reads: a request is a sample, spo of them a shard. */
            R->read_objects += (p.total->ops - p.total->errors) / (R->tar ? a->spo : 1);
            R->read_bytes += p.total->bytes;
        }
        char l[96];
        snprintf(l, sizeof l, "epoch=\"%" PRIu64 "\",accelerators=\"%" PRIu64 "\"", epoch_no,
                 tr->accel * (uint64_t)h->size);
        if (complete) {
            rb_harness_metric(h, "railbench_train_au_ratio", "gauge",
                              "Accelerator utilisation of the epoch: compute time over wall time, first step excluded, "
                              "mean over the simulated accelerators.", l, au / 100.0);
            rb_harness_metric(h, "railbench_train_samples_per_second", "gauge",
                              "Samples per second of the epoch, summed over ranks.", l, sps);
        }
    }
    rb_harness_metrics_update(h);
    cJSON_Delete(ranks_json);
    rb_hist_free(wait_all);
    rb_hist_free(sync_all);
    rb_harness_phase_free(&p);
    epoch_free(ep);
    return status;
}

/* Runs --epochs epochs with tr->accel accelerators per rank; every rank learns the trial's verdict. */
static int run_trial(struct rb_train_run *R, struct trial *tr)
{
    struct rb_harness *h = R->h;
    int status = 0;
    for (uint64_t e = 1; e <= R->a->epochs; e++) {
        char name[64];
        if (R->a->find_max)
            snprintf(name, sizeof name, "trial-%" PRIu64 "-epoch-%" PRIu64, tr->accel * (uint64_t)h->size, e);
        else if (R->a->overlap)
            snprintf(name, sizeof name, "overlapped"); /* after the baselines storage-alone and collective-alone */
        else
            snprintf(name, sizeof name, "epoch-%" PRIu64, e);
        /* --drop-cache host: every epoch reads what the storage serves, not what the last one left cached. */
        bool dropped = R->a->file.drop_cache == RB_DROP_HOST;
        if (dropped && (status = rb_file_drop_host_cache(h, &R->a->file, name)))
            break;
        int before = cJSON_GetArraySize(tr->epochs);
        status = rb_train_run_epoch(R, tr, e, name);
        cJSON *entry = cJSON_GetArraySize(tr->epochs) > before ? cJSON_GetArrayItem(tr->epochs, before) : NULL;
        if (entry && dropped) {
            cJSON_AddBoolToObject(entry, "host_cache_dropped", true);
            /* The drop makes the epoch cold by configuration; a page-cache count taken during it still decides. */
            if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(entry, "cache_basis")), "measured") != 0)
                rb_train_epoch_cache(entry, true, NULL);
        }
        if (status || h->interrupted)
            break;
    }
    double v[3] = {0, 0, 0};
    if (h->rank == 0) {
        rb_train_run_figures(tr->fig, tr->nfig, &tr->au_mean_pct, &tr->samples_per_s);
        v[0] = tr->au_mean_pct;
        v[1] = tr->samples_per_s;
        v[2] = tr->nfig > 0 && tr->au_mean_pct >= R->a->au_min;
    }
    if (h->mpi)
        RB_MPI_CHECK(MPI_Bcast(v, 3, MPI_DOUBLE, 0, h->comm));
    tr->au_mean_pct = v[0];
    tr->samples_per_s = v[1];
    tr->met = v[2] != 0;
    tr->interrupted = h->interrupted;
    return status;
}

/* ---- the trials ---- */

int rb_train_run_trials(struct rb_train_run *R)
{
    const struct train_args *a = R->a;
    struct rb_harness *h = R->h;
    /* The largest count that still leaves two steps, so every trial has an AU. */
    uint64_t data_max = rb_train_steps(R->all->n, h->size, a->spo, 1, a->batch, 0) / 2;
    rb_train_search_init(&R->search, a->max_accel < data_max ? a->max_accel : data_max);
    int status = 0;
    for (;;) {
        struct trial *grown = realloc(R->trials, (R->ntrials + 1) * sizeof *grown);
        if (!grown)
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
        R->trials = grown;
        struct trial *tr = &R->trials[R->ntrials++];
        memset(tr, 0, sizeof *tr);
        tr->accel = a->find_max ? R->search.next : a->accel;
        tr->epochs = cJSON_CreateArray();
        status = run_trial(R, tr);
        R->measured_anything = true;
        rb_train_estimate_dataset(R);
        if (status || h->interrupted || !a->find_max)
            break;
        rb_train_search_record(&R->search, tr->met);
        if (R->search.done)
            break;
    }
    return status;
}
