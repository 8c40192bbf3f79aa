/* railbench load train: training emulation — read threads, a prefetch queue, a trainer per rank, AU per epoch. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <curl/curl.h>

#include "loader_int.h"
#include "railbench/buf.h"
#include "railbench/clock.h"
#include "railbench/harness.h"
#include "railbench/loader.h"
#include "railbench/log.h"
#include "railbench/train.h"
#include "railbench/units.h"

#define MIB (1024.0 * 1024.0)
#define MAX_READ_THREADS 256
#define MAX_INFLIGHT 4096
#define MAX_ACCEL 4096
#define MAX_BATCH (1u << 24)
#define MAX_SPO (1u << 24)
#define MAX_SAMPLE_BYTES (64ull << 30)
#define MAX_GRAD_BYTES (4ull << 30)
#define MAX_COMPUTE_NS (3600 * RB_NS_PER_S)
#define MAX_EPOCHS 1000000
/* MLPerf Storage: the data set must be at least five times the client hosts' memory, or page caches hide the storage. */
#define MEMORY_FACTOR 5
/* The trainer sleeps in slices so a stop is noticed within one. */
#define SLEEP_SLICE_NS (20 * RB_NS_PER_MS)
/*
 * A barrier is polled with growing sleeps up to this, so waiting ranks leave
 * the CPU to the read threads; short, because a rank that notices the end
 * late starts its next step late and its peers pay for it at the next barrier.
 */
#define SYNC_POLL_MAX_NS (50 * RB_NS_PER_US)

struct train_args {
    /* Values a --workload preset supplies when they are not given (NULL: not given). */
    const char *workload, *batch_s, *spo_s, *compute_s, *sample_s, *threads_s, *au_min_s;
    uint64_t inflight, prefetch, accel, epochs, max_steps, seed, grad_bytes, max_accel;
    bool strict, find_max, populate, verify;
    uint64_t objects;
    const char *prefix, *filelist;
    struct rb_target_args tgt; /* --endpoint, --region, --virtual-host, credentials, --provider */
    const char *cache_header;
    uint64_t timeout_ns, max_redirects;
    double max_error_pct;

    /* Resolved from the options and the preset. */
    const struct rb_train_preset *preset;
    uint64_t batch, spo, read_threads, compute_ns, compute_stdev_ns, sample_bytes, sample_stdev;
    bool sample_known;
    double au_min;
};

/* A whole number option given as text: value from s, or dflt when s is NULL; -EINVAL outside [lo, hi]. */
static int count_opt(const char *s, uint64_t dflt, uint64_t lo, uint64_t hi, uint64_t *v)
{
    if (!s) {
        *v = dflt;
        return 0;
    }
    if (rb_parse_u64(s, v) || *v < lo || *v > hi)
        return -EINVAL;
    return 0;
}

/* Writes the value an option resolved to into the recorded config, as the text --config reads back. */
static void record_config(struct rb_cli *cli, const char *name, const char *value)
{
    cJSON *v = value ? cJSON_CreateString(value) : cJSON_CreateNull();
    if (v && !cJSON_ReplaceItemInObjectCaseSensitive(cli->config, name, v))
        cJSON_Delete(v);
}

/* Resolves presets and checks the options together; prints one line and returns RB_EXIT_USAGE on the first problem. */
static int resolve(struct train_args *a, struct rb_cli *cli)
{
    const struct rb_train_preset *p = NULL;
    if (a->workload && !(p = rb_train_preset_find(a->workload)))
        return rb_load_usage_error("--workload \"%s\": expected %s", a->workload, rb_train_preset_list);
    a->preset = p;
    if (count_opt(a->batch_s, p ? p->batch_size : 1, 1, MAX_BATCH, &a->batch))
        return rb_load_usage_error("--batch-size \"%s\": expected a whole number of samples, 1 to %u", a->batch_s, MAX_BATCH);
    if (count_opt(a->spo_s, p ? p->samples_per_object : 1, 1, MAX_SPO, &a->spo))
        return rb_load_usage_error("--samples-per-object \"%s\": expected a whole number, 1 to %u", a->spo_s, MAX_SPO);
    if (count_opt(a->threads_s, p ? p->read_threads : 1, 1, MAX_READ_THREADS, &a->read_threads))
        return rb_load_usage_error("--read-threads \"%s\": expected 1 to %d", a->threads_s, MAX_READ_THREADS);
    if (a->compute_s) {
        if (rb_train_parse_duration_dist(a->compute_s, &a->compute_ns, &a->compute_stdev_ns) ||
            a->compute_ns > MAX_COMPUTE_NS || a->compute_stdev_ns > MAX_COMPUTE_NS)
            return rb_load_usage_error("--compute-time \"%s\": expected a duration or MEAN/STDEV up to 1h (e.g. 224ms or "
                               "50ms/5ms)", a->compute_s);
    } else if (p) {
        a->compute_ns = p->compute_ns;
        a->compute_stdev_ns = 0;
    } else {
        return rb_load_usage_error("load train: give --compute-time D (per step) or --workload %s", rb_train_preset_list);
    }
    if (a->compute_ns == 0)
        return rb_load_usage_error("--compute-time \"%s\": must be more than 0 (AU is compute time over wall time)",
                           a->compute_s);
    if (a->sample_s) {
        if (rb_train_parse_size_dist(a->sample_s, &a->sample_bytes, &a->sample_stdev) || !a->sample_bytes ||
            a->sample_bytes > MAX_SAMPLE_BYTES || a->sample_stdev > MAX_SAMPLE_BYTES)
            return rb_load_usage_error("--sample-size \"%s\": expected SIZE or MEAN/STDEV, 1 B to 64 GiB (e.g. 110KiB or "
                               "146.6MB/68.3MB)", a->sample_s);
        a->sample_known = true;
    } else if (p) {
        a->sample_bytes = p->sample_bytes;
        a->sample_stdev = p->sample_stdev_bytes;
        a->sample_known = true;
    }
    a->au_min = p ? p->au_min_pct : 90;
    if (a->au_min_s && rb_parse_percent(a->au_min_s, &a->au_min))
        return rb_load_usage_error("--au-min \"%s\": expected a percentage 0 to 100 (e.g. 90 or 90%%)", a->au_min_s);
    if (a->inflight < 1 || a->inflight > MAX_INFLIGHT)
        return rb_load_usage_error("--inflight %" PRIu64 ": expected 1 to %d", a->inflight, MAX_INFLIGHT);
    if (a->accel < 1 || a->accel > MAX_ACCEL)
        return rb_load_usage_error("--accelerators-per-rank %" PRIu64 ": expected 1 to %d", a->accel, MAX_ACCEL);
    if (a->max_accel < 1 || a->max_accel > MAX_ACCEL)
        return rb_load_usage_error("--max-accelerators-per-rank %" PRIu64 ": expected 1 to %d", a->max_accel, MAX_ACCEL);
    if (a->find_max && a->accel != 1)
        return rb_load_usage_error("--accelerators-per-rank %" PRIu64 " and --find-max-accelerators: the search chooses the "
                           "count (bound it with --max-accelerators-per-rank)", a->accel);
    if (a->epochs < 1 || a->epochs > MAX_EPOCHS)
        return rb_load_usage_error("--epochs %" PRIu64 ": expected 1 to %d", a->epochs, MAX_EPOCHS);
    if (a->prefetch > (1u << 20))
        return rb_load_usage_error("--prefetch %" PRIu64 ": expected 0 (automatic) to %u batches", a->prefetch, 1u << 20);
    if (a->grad_bytes > MAX_GRAD_BYTES)
        return rb_load_usage_error("--grad-bytes %" PRIu64 ": at most 4 GiB", a->grad_bytes);
    if (a->objects && a->filelist)
        return rb_load_usage_error("--objects and --filelist: give one of them");
    if (a->objects > UINT32_MAX)
        return rb_load_usage_error("--objects %" PRIu64 ": at most %u", a->objects, UINT32_MAX);
    if (a->prefix && strlen(a->prefix) > 512)
        return rb_load_usage_error("--prefix: at most 512 bytes");
    if (a->populate && !a->objects && !a->filelist)
        return rb_load_usage_error("--populate: give --objects N (names <prefix><index>) or --filelist FILE to write");
    if (a->populate && !a->sample_known)
        return rb_load_usage_error("--populate: give --sample-size SIZE[/STDEV] or --workload (the size of what to write)");
    if (a->max_error_pct < 0 || a->max_error_pct > 100)
        return rb_load_usage_error("--max-error-rate %g: expected 0 to 100 (percent)", a->max_error_pct);
    if (a->max_redirects > 100)
        return rb_load_usage_error("--max-redirects %" PRIu64 ": expected 0 to 100", a->max_redirects);
    if (a->cache_header && (!*a->cache_header || strpbrk(a->cache_header, ": \t\r\n")))
        return rb_load_usage_error("--cache-header \"%s\": expected a header name such as X-Cache-Status", a->cache_header);

    /* The config records what ran, in the form --config reads back. */
    char v[96], d1[32], d2[32];
    snprintf(v, sizeof v, "%" PRIu64, a->batch);
    record_config(cli, "batch-size", v);
    snprintf(v, sizeof v, "%" PRIu64, a->spo);
    record_config(cli, "samples-per-object", v);
    snprintf(v, sizeof v, "%" PRIu64, a->read_threads);
    record_config(cli, "read-threads", v);
    rb_format_duration(d1, sizeof d1, a->compute_ns);
    rb_format_duration(d2, sizeof d2, a->compute_stdev_ns);
    snprintf(v, sizeof v, a->compute_stdev_ns ? "%s/%s" : "%s", d1, d2);
    record_config(cli, "compute-time", v);
    snprintf(v, sizeof v, a->sample_stdev ? "%" PRIu64 "/%" PRIu64 : "%" PRIu64, a->sample_bytes, a->sample_stdev);
    record_config(cli, "sample-size", a->sample_known ? v : NULL);
    snprintf(v, sizeof v, "%g", a->au_min);
    record_config(cli, "au-min", v);
    return 0;
}

/* ---- the run's shared state ---- */

struct epoch;

/* One read thread of the rank's data loader: its own fetcher (curl multi handle, connections) and stats. */
struct loader {
    unsigned id;
    struct rb_fetcher *f;
    struct rb_stats *local;     /* what the fetcher recorded for the current batch */
    struct rb_stats *box;       /* handed over per batch, taken by the harness's collect */
    pthread_mutex_t mu;
    pthread_t th;
    bool started;
    int failed;                 /* -errno when the fetcher itself failed */
    struct epoch *ep;
};

/* A reported trial: one accelerator count and the epochs run with it. */
struct trial {
    uint64_t accel;                 /* per rank */
    cJSON *epochs;                  /* rank 0: summary entries of the epochs */
    struct rb_train_figures *fig;   /* rank 0: figures of the epochs */
    size_t nfig;
    double au_mean_pct, samples_per_s;
    bool met, interrupted;
};

struct run {
    struct train_args *a;
    struct rb_harness *h;
    const struct rb_target *t;
    const struct rb_objset *all;
    struct rb_load_opts fetch;      /* what every fetcher reads with */
    struct loader *loaders;
    unsigned nloaders;
    MPI_Comm comm;                  /* the trainers' barriers and all-reduces */
    float *grad_send, *grad_recv;
    int grad_count;
    uint64_t epoch_seq;             /* epochs started in this run: seeds each one's permutation */
    uint64_t errors, requests;      /* rank 0: over every epoch */
    uint64_t read_objects, read_bytes; /* rank 0: to estimate the data set's size when it is unknown */
};

/* One epoch on this rank: the batches of its stream, the prefetch queue, the trainer's accounts. */
struct epoch {
    struct run *R;
    uint64_t seq;
    unsigned accel;
    uint64_t steps, nbatches, prefetch;
    const char **names;             /* the rank's objects in stream order */
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
        int rc = rb_fetcher_get(l->f, ep->names + first, (size_t)count, l->local, NULL, &ep->stop);
        uint64_t bytes = l->local->bytes;
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
            ep->ready[k] = 1;
        }
        pthread_cond_broadcast(&ep->ready_cv);
        pthread_mutex_unlock(&ep->mu);
        if (rc < 0) {
            rb_error("read thread %u stopped: %s", l->id, strerror(-rc));
            break;
        }
    }
    return NULL;
}

/* ---- the trainer ---- */

/*
 * The step's synchronisation: a barrier, or an all-reduce of --grad-bytes
 * as data-parallel training does after each step. It also carries whether
 * any rank must stop, so every trainer leaves after the same step and none
 * waits for a peer that has gone. Returns that agreement.
 */
static int step_sync(struct run *R, int stop)
{
    if (!R->grad_count) {
        /* Polled with growing sleeps rather than a blocking barrier that spins on a core the read threads need. */
        int any = 0;
        MPI_Request req;
        RB_MPI_CHECK(MPI_Iallreduce(&stop, &any, 1, MPI_INT, MPI_MAX, R->comm, &req));
        uint64_t nap = RB_NS_PER_US;
        for (;;) {
            int done = 0;
            RB_MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
            if (done)
                return any;
            struct timespec ts = {0, (long)nap};
            nanosleep(&ts, NULL);
            if (nap < SYNC_POLL_MAX_NS)
                nap *= 2;
        }
    }
    /* A real all-reduce (float sum), blocking as a training step's is; element 0 carries the stop vote. */
    R->grad_send[0] = stop ? 1.0f : 0.0f;
    RB_MPI_CHECK(MPI_Allreduce(R->grad_send, R->grad_recv, R->grad_count, MPI_FLOAT, MPI_SUM, R->comm));
    return R->grad_recv[0] > 0.5f;
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
    struct run *R = ep->R;
    const struct train_args *a = R->a;
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
        bool cut = false;
        for (unsigned x = 0; x < ep->accel && !cut; x++) {
            uint64_t k = s * ep->accel + x;
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
            ep->comp_ns[x] = rb_train_compute_ns(a->compute_ns, a->compute_stdev_ns, a->seed, ep->seq,
                                                 R->h->rank, x, s);
        }
        uint64_t wake = 0;
        if (!cut) {
            uint64_t cend = rb_train_compute_end(ep->ready_ns, ep->comp_ns, ep->accel);
            wake = sleep_until(cend, &ep->stop);
            cut = wake < cend;
        }
        int any = step_sync(R, cut || ep->stop || rb_harness_signalled());
        uint64_t end = rb_clock_ns();
        if (!cut)
            rb_train_step_account(ep->tally, ep->accel, a->batch, start, ep->ready_ns, ep->comp_ns, wake, end,
                                  ep->wait);
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
    struct run *R = ep->R;
    for (unsigned i = 0; i < R->nloaders; i++) {
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
    return atomic_load(&ep->finished);
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
    for (unsigned i = 0; i < ep->R->nloaders; i++) {
        struct loader *l = &ep->R->loaders[i];
        if (l->started) {
            pthread_join(l->th, NULL);
            l->started = false;
        }
    }
}

static void epoch_free(struct epoch *ep)
{
    pthread_mutex_destroy(&ep->mu);
    pthread_cond_destroy(&ep->ready_cv);
    pthread_cond_destroy(&ep->room_cv);
    free(ep->names);
    free(ep->ready);
    free(ep->ready_ns);
    free(ep->comp_ns);
    free(ep->tally);
    rb_hist_free(ep->wait);
}

static const char *const extra_redirects[] = {"redirects", NULL};

/* Rank 0: the epoch's summary entry from every rank's figures. */
static cJSON *epoch_entry(struct run *R, const cJSON *ranks_json, uint64_t epoch_no, bool cold, unsigned accel,
                          const struct rb_phase *p, const struct rb_hist *wait, struct rb_train_figures *fig)
{
    const struct rb_harness *h = R->h;
    size_t n = (size_t)cJSON_GetArraySize(ranks_json);
    struct rb_train_rank *rk = calloc(n ? n : 1, sizeof *rk);
    cJSON *e = cJSON_CreateObject();
    if (!rk || !e) {
        free(rk);
        cJSON_Delete(e);
        return NULL;
    }
    const cJSON *it;
    size_t i = 0;
    cJSON *ranks = cJSON_CreateArray();
    bool interrupted = false;
    cJSON_ArrayForEach(it, ranks_json)
    {
        struct rb_train_rank *r = &rk[i++];
        rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(it, "steps"), &r->steps);
        rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(it, "samples"), &r->samples);
        rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(it, "bytes"), &r->bytes);
        rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(it, "wall_ns"), &r->wall_ns);
        r->au_pct = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "au_pct"));
        interrupted |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "cut"));
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "rank")));
        cJSON_AddItemToObject(o, "steps", rb_json_u64(r->steps));
        cJSON_AddItemToObject(o, "samples", rb_json_u64(r->samples));
        cJSON_AddItemToObject(o, "bytes", rb_json_u64(r->bytes));
        cJSON_AddNumberToObject(o, "duration_s", (double)r->wall_ns / 1e9);
        cJSON_AddNumberToObject(o, "samples_per_s", rb_train_per_s(r->samples, r->wall_ns));
        cJSON_AddNumberToObject(o, "bytes_per_s", rb_train_per_s(r->bytes, r->wall_ns));
        cJSON_AddNumberToObject(o, "au_pct", r->au_pct);
        cJSON_AddItemToArray(ranks, o);
    }
    rb_train_epoch_figures(rk, n, fig);
    free(rk);

    cJSON_AddNumberToObject(e, "epoch", (double)epoch_no);
    cJSON_AddStringToObject(e, "phase", p->name);
    cJSON_AddBoolToObject(e, "cold", cold);
    cJSON_AddNumberToObject(e, "accelerators", (double)accel * h->size);
    cJSON_AddNumberToObject(e, "accelerators_per_rank", accel);
    cJSON_AddItemToObject(e, "steps", rb_json_u64(fig->steps));
    cJSON_AddItemToObject(e, "samples", rb_json_u64(fig->samples));
    cJSON_AddItemToObject(e, "bytes", rb_json_u64(fig->bytes));
    cJSON_AddNumberToObject(e, "duration_s", p->duration_s);
    cJSON_AddNumberToObject(e, "samples_per_s", fig->samples_per_s);
    cJSON_AddNumberToObject(e, "bytes_per_s", fig->bytes_per_s);
    cJSON_AddNumberToObject(e, "au_pct", fig->au_pct);
    cJSON_AddItemToObject(e, "data_wait_p50_ns", rb_json_u64(rb_hist_percentile(wait, 50)));
    cJSON_AddItemToObject(e, "data_wait_p99_ns", rb_json_u64(rb_hist_percentile(wait, 99)));
    cJSON_AddItemToObject(e, "data_wait_ns", rb_hist_summary_json(wait));
    cJSON_AddItemToObject(e, "requests", rb_json_u64(p->total ? p->total->ops : 0));
    cJSON_AddItemToObject(e, "errors", rb_json_u64(p->total ? p->total->errors : 0));
    if (R->a->cache_header && p->total) {
        cJSON_AddItemToObject(e, "cache_hit", rb_json_u64(p->total->extra[RB_LX_CACHE_HIT]));
        cJSON_AddItemToObject(e, "cache_miss", rb_json_u64(p->total->extra[RB_LX_CACHE_MISS]));
    }
    if (interrupted)
        cJSON_AddBoolToObject(e, "interrupted", true);
    cJSON_AddItemToObject(e, "ranks", ranks);
    return e;
}

/*
 * Runs one epoch with accel accelerators per rank as the harness phase
 * name; rank 0 appends its entry and figures to tr. Collective. Returns 0
 * or an exit status.
 */
static int run_epoch(struct run *R, struct trial *tr, uint64_t epoch_no, const char *name)
{
    struct rb_harness *h = R->h;
    const struct train_args *a = R->a;
    struct epoch ep;
    memset(&ep, 0, sizeof ep);
    ep.R = R;
    ep.seq = ++R->epoch_seq;
    ep.accel = (unsigned)tr->accel;
    ep.steps = rb_train_steps(R->all->n, h->size, a->spo, tr->accel, a->batch, a->max_steps);
    ep.nbatches = ep.steps * tr->accel;
    /* PyTorch's DataLoader keeps prefetch_factor (2) batches per worker in flight; here per reader or accelerator. */
    ep.prefetch = a->prefetch ? a->prefetch : 2 * (a->read_threads > tr->accel ? a->read_threads : tr->accel);
    pthread_mutex_init(&ep.mu, NULL);
    pthread_cond_init(&ep.ready_cv, NULL);
    pthread_cond_init(&ep.room_cv, NULL);
    atomic_init(&ep.finished, false);
    atomic_init(&ep.bytes, 0);

    uint32_t *stream = NULL;
    size_t nstream = 0;
    int rc = rb_train_epoch_stream(R->all->n, a->seed, ep.seq, h->rank, h->size, &stream, &nstream);
    ep.names = malloc((nstream ? nstream : 1) * sizeof *ep.names);
    ep.ready = calloc(ep.nbatches ? ep.nbatches : 1, 1);
    ep.ready_ns = calloc(ep.accel, sizeof *ep.ready_ns);
    ep.comp_ns = calloc(ep.accel, sizeof *ep.comp_ns);
    ep.tally = calloc(ep.accel, sizeof *ep.tally);
    ep.wait = rb_hist_new();
    if (rc || !ep.names || !ep.ready || !ep.ready_ns || !ep.comp_ns || !ep.tally || !ep.wait)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory for epoch %" PRIu64, epoch_no);
    for (size_t i = 0; i < nstream; i++)
        ep.names[i] = R->all->names[stream[i]];
    ep.nnames = nstream;
    free(stream);

    struct rb_phase p = {
        .name = name,
        .op = "GET",
        .names = {rb_load_err_names, a->cache_header ? rb_load_extra_names : extra_redirects},
        .start = ep_start,
        .collect = ep_collect,
        .done = ep_done,
        .stop = ep_stop,
        .ctx = &ep,
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

    /* This rank's figures to rank 0, and the data waits merged there. */
    struct rb_train_rank mine;
    rb_train_rank_figures(ep.tally, ep.accel, atomic_load(&ep.bytes), &mine);
    cJSON *mj = cJSON_CreateObject();
    cJSON_AddNumberToObject(mj, "rank", h->rank);
    cJSON_AddItemToObject(mj, "steps", rb_json_u64(mine.steps));
    cJSON_AddItemToObject(mj, "samples", rb_json_u64(mine.samples));
    cJSON_AddItemToObject(mj, "bytes", rb_json_u64(mine.bytes));
    cJSON_AddItemToObject(mj, "wall_ns", rb_json_u64(mine.wall_ns));
    cJSON_AddNumberToObject(mj, "au_pct", mine.au_pct);
    cJSON_AddBoolToObject(mj, "cut", mine.steps < ep.steps);
    cJSON *ranks_json = rb_harness_gather_json(h, mj);
    cJSON_Delete(mj);
    struct rb_hist *wait_all = rb_hist_new();
    if (!wait_all)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    rb_harness_reduce_hist(h, ep.wait, wait_all);

    double au = 0, sps = 0;
    if (h->rank == 0 && ranks_json) {
        struct rb_train_figures fig;
        cJSON *e = epoch_entry(R, ranks_json, epoch_no, ep.seq == 1, ep.accel, &p, wait_all, &fig);
        struct rb_train_figures *grown = realloc(tr->fig, (tr->nfig + 1) * sizeof *grown);
        if (!e || !grown)
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
        tr->fig = grown;
        tr->fig[tr->nfig++] = fig;
        cJSON_AddItemToArray(tr->epochs, e);
        au = fig.au_pct;
        sps = fig.samples_per_s;
        if (p.total) {
            R->requests += p.total->ops;
            R->errors += p.total->errors;
            R->read_objects += p.total->ops - p.total->errors;
            R->read_bytes += p.total->bytes;
        }
        char l[96];
        snprintf(l, sizeof l, "epoch=\"%" PRIu64 "\",accelerators=\"%" PRIu64 "\"", epoch_no,
                 tr->accel * (uint64_t)h->size);
        rb_harness_metric(h, "railbench_train_au_ratio", "gauge",
                          "Accelerator utilisation of the epoch: compute time over wall time, first step excluded, "
                          "mean over the simulated accelerators.", l, au / 100.0);
        rb_harness_metric(h, "railbench_train_samples_per_second", "gauge",
                          "Samples per second of the epoch, summed over ranks.", l, sps);
    }
    rb_harness_metrics_update(h);
    cJSON_Delete(ranks_json);
    rb_hist_free(wait_all);
    rb_harness_phase_free(&p);
    epoch_free(&ep);
    return status;
}

/* Runs --epochs epochs with tr->accel accelerators per rank; every rank learns the trial's verdict. */
static int run_trial(struct run *R, struct trial *tr)
{
    struct rb_harness *h = R->h;
    int status = 0;
    for (uint64_t e = 1; e <= R->a->epochs; e++) {
        char name[64];
        if (R->a->find_max)
            snprintf(name, sizeof name, "trial-%" PRIu64 "-epoch-%" PRIu64, tr->accel * (uint64_t)h->size, e);
        else
            snprintf(name, sizeof name, "epoch-%" PRIu64, e);
        status = run_epoch(R, tr, e, name);
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

/* ---- data set ---- */

/*
 * Builds the whole object set on every rank: generated names, the file
 * list, or (rank 0, then broadcast) the bucket listing. Returns 0 or an
 * exit status after rank 0 logged why; *source says where sizes came from.
 */
static int build_objects(struct rb_harness *h, const struct train_args *a, const struct rb_target *t,
                         const char *prefix, struct rb_objset *all, const char **source)
{
    char err[1024] = "";
    *source = NULL;
    if (a->objects) {
        if (rb_objset_generate(all, prefix, a->objects))
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory for %" PRIu64 " object names", a->objects);
    } else if (a->filelist) {
        int bad = rb_objset_from_file(all, a->filelist, err, sizeof err) != 0, any = bad;
        if (h->mpi)
            RB_MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, h->comm));
        if (any) {
            if (h->rank == 0)
                rb_error("%s", err[0] ? err : "--filelist: cannot be read on every rank");
            return RB_EXIT_USAGE;
        }
        if (all->n == 0) {
            if (h->rank == 0)
                rb_error("--filelist %s: no object names in it", a->filelist);
            return RB_EXIT_USAGE;
        }
        *source = "filelist";
    } else {
        int status = 0;
        if (h->rank == 0) {
            if (rb_target_list(t, prefix, a->timeout_ns, all, err, sizeof err)) {
                rb_error("%s", err);
                status = RB_EXIT_RUNTIME;
            } else if (all->n == 0) {
                rb_error("%s: no objects under prefix \"%s\" to train on (put some first, or give --objects N "
                         "--populate)", rb_target_name(t), prefix);
                status = RB_EXIT_RUNTIME;
            } else if (all->n > UINT32_MAX) {
                rb_error("%s: %zu objects listed, at most %u", rb_target_name(t), all->n, UINT32_MAX);
                status = RB_EXIT_RUNTIME;
            }
        }
        if (h->mpi)
            RB_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, h->comm));
        if (status)
            return status;
        if (h->mpi && rb_objset_bcast(all, 0, h->comm) != 0)
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "cannot share the object listing between ranks");
        if (h->rank == 0)
            rb_info("%s: listed %zu objects under \"%s\"", rb_target_name(t), all->n, prefix);
        *source = "listing";
    }
    /* Sizes nobody told us follow from the sample size: what --populate writes, or what the workload's data is. */
    bool drawn = false;
    if (a->sample_known)
        for (size_t i = 0; i < all->n; i++)
            if (!all->sizes[i]) {
                all->sizes[i] = rb_train_object_bytes(a->seed, all->names[i], a->spo, a->sample_bytes, a->sample_stdev);
                drawn = true;
            }
    if (drawn)
        *source = a->populate ? "populate" : (a->sample_s ? "sample-size" : "workload");
    return 0;
}

/* Sum of the client hosts' memory (result.json "hosts", which the harness gathered). Rank 0. */
static double client_memory_bytes(struct rb_harness *h)
{
    double sum = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(h->result.root, "hosts"))
        sum += cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "memory_bytes"));
    return sum;
}

/* Rank 0: the dataset record, with MLPerf Storage's 5x memory rule checked (a warning, not a failure). */
static cJSON *dataset_json(struct run *R, uint64_t bytes, const char *source)
{
    const struct train_args *a = R->a;
    cJSON *d = cJSON_CreateObject();
    cJSON_AddItemToObject(d, "objects", rb_json_u64(R->all->n));
    cJSON_AddItemToObject(d, "samples_per_object", rb_json_u64(a->spo));
    cJSON_AddItemToObject(d, "samples", rb_json_u64((uint64_t)R->all->n * a->spo));
    double mem = client_memory_bytes(R->h);
    cJSON_AddNumberToObject(d, "client_memory_bytes", mem);
    cJSON_AddNumberToObject(d, "memory_factor", MEMORY_FACTOR);
    if (!source) {
        cJSON_AddNullToObject(d, "bytes");
        cJSON_AddNullToObject(d, "bytes_source");
        cJSON_AddNullToObject(d, "page_cache_may_hide_storage");
        return d;
    }
    cJSON_AddItemToObject(d, "bytes", rb_json_u64(bytes));
    cJSON_AddStringToObject(d, "bytes_source", source);
    bool small = (double)bytes < MEMORY_FACTOR * mem;
    cJSON_AddBoolToObject(d, "page_cache_may_hide_storage", small);
    if (small) {
        char b[32], m[32];
        rb_format_size(b, sizeof b, bytes);
        rb_format_size(m, sizeof m, (uint64_t)mem);
        rb_warn("the data set (%s, %s) is smaller than %d x the client hosts' memory (%d x %s): page caches can "
                "hold it and hide the storage (MLPerf Storage asks for at least %dx)", b, source, MEMORY_FACTOR,
                MEMORY_FACTOR, m, MEMORY_FACTOR);
    }
    return d;
}

/* ---- the report ---- */

static void fmt_ns(char *buf, size_t len, const cJSON *v)
{
    uint64_t ns = 0;
    rb_json_get_u64(v, &ns);
    rb_format_duration_human(buf, len, ns);
}

static void table_epochs(struct rb_buf *b, const struct trial *tr)
{
    rb_buf_printf(b, "| epoch | data | steps | samples | samples/s | MiB/s | AU %% | data wait p50 | data wait p99 |\n"
                     "|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
    const cJSON *e;
    cJSON_ArrayForEach(e, tr->epochs)
    {
        char p50[16], p99[16];
        fmt_ns(p50, sizeof p50, cJSON_GetObjectItemCaseSensitive(e, "data_wait_p50_ns"));
        fmt_ns(p99, sizeof p99, cJSON_GetObjectItemCaseSensitive(e, "data_wait_p99_ns"));
        uint64_t steps = 0, samples = 0;
        rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(e, "steps"), &steps);
        rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(e, "samples"), &samples);
        rb_buf_printf(b, "| %.0f | %s%s | %" PRIu64 " | %" PRIu64 " | %.1f | %.2f | %.1f | %s | %s |\n",
                      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "epoch")),
                      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "cold")) ? "cold" : "warm",
                      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "interrupted")) ? " (interrupted)" : "",
                      steps, samples, cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "samples_per_s")),
                      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "bytes_per_s")) / MIB,
                      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "au_pct")), p50, p99);
    }
}

/* The verdict line, and when AU misses the threshold, what the data wait says about why. */
static void table_verdict(struct rb_buf *b, const struct run *R, const struct trial *tr)
{
    const struct train_args *a = R->a;
    rb_buf_printf(b, "\nAU mean %.1f %% (--au-min %g %%): %s; %.1f samples/s over %" PRIu64 " simulated accelerator(s)\n",
                  tr->au_mean_pct, a->au_min, tr->met ? "PASS" : "FAIL", tr->samples_per_s,
                  tr->accel * (uint64_t)R->h->size);
    if (tr->met || !cJSON_GetArraySize(tr->epochs))
        return;
    /* The epoch with the lowest AU is the one to explain (a cold epoch, when the warm ones are fine). */
    const cJSON *e, *worst = NULL;
    cJSON_ArrayForEach(e, tr->epochs)
        if (!worst || cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "au_pct")) <
                          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(worst, "au_pct")))
            worst = e;
    char p50[16], comp[16];
    fmt_ns(p50, sizeof p50, cJSON_GetObjectItemCaseSensitive(worst, "data_wait_p50_ns"));
    rb_format_duration_human(comp, sizeof comp, a->compute_ns);
    rb_buf_printf(b, "In epoch %.0f (AU %.1f %%) each accelerator waited %s (median) per step for its batch against "
                     "%s of compute: the storage path does not keep it busy.\n",
                  cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(worst, "epoch")),
                  cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(worst, "au_pct")), p50, comp);
}

/* ---- setup and the command ---- */

/* Fetchers and stats for the read threads (kept across epochs: their connections stay open). */
static int loaders_new(struct run *R)
{
    struct rb_harness *h = R->h;
    R->nloaders = (unsigned)R->a->read_threads;
    R->loaders = calloc(R->nloaders, sizeof *R->loaders);
    int bad = !R->loaders;
    for (unsigned i = 0; !bad && i < R->nloaders; i++) {
        struct loader *l = &R->loaders[i];
        l->id = i;
        pthread_mutex_init(&l->mu, NULL);
        l->local = rb_stats_new();
        l->box = rb_stats_new();
        int rc = rb_fetcher_new(&l->f, &R->fetch);
        if (rc)
            rb_error("cannot set up read thread %u: %s", i, strerror(-rc));
        bad = rc || !l->local || !l->box;
    }
    int any = bad;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, h->comm));
    return any ? RB_EXIT_RUNTIME : 0;
}

static void loaders_free(struct run *R)
{
    for (unsigned i = 0; R->loaders && i < R->nloaders; i++) {
        struct loader *l = &R->loaders[i];
        rb_fetcher_free(l->f);
        rb_stats_free(l->local);
        rb_stats_free(l->box);
        pthread_mutex_destroy(&l->mu);
    }
    free(R->loaders);
    R->loaders = NULL;
}

/* PUTs the data set (--populate): every rank its share, sizes drawn from --sample-size. Returns an exit status. */
static int populate(struct run *R, cJSON **record)
{
    struct rb_harness *h = R->h;
    struct rb_objset mine = {0};
    if (rb_objset_partition(R->all, h->rank, h->size, &mine))
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    struct rb_load_opts o = R->fetch;
    o.op = RB_LOAD_PUT;
    o.objects = &mine;
    o.threads = R->nloaders;
    o.pattern = RB_PATTERN_SEQUENTIAL;
    o.verify = false;
    struct rb_load_result res = {0};
    int status = rb_load_run_phase(h, "populate", 0, &o, &res);
    if (h->rank == 0 && res.total) {
        *record = rb_load_summary_json(&res);
        if (!status && res.total->errors) {
            rb_error("--populate: %" PRIu64 " of %" PRIu64 " PUTs failed (see the errors above)", res.total->errors,
                     res.total->ops);
            status = RB_EXIT_RUNTIME;
        }
    }
    if (h->mpi)
        RB_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, h->comm));
    rb_load_result_free(&res);
    rb_objset_free(&mine);
    return status;
}

static cJSON *trial_tried_json(const struct trial *tr, int ranks)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "accelerators", (double)tr->accel * ranks);
    cJSON_AddNumberToObject(o, "accelerators_per_rank", (double)tr->accel);
    cJSON_AddNumberToObject(o, "au_pct", tr->au_mean_pct);
    cJSON_AddNumberToObject(o, "samples_per_s", tr->samples_per_s);
    cJSON_AddNumberToObject(o, "epochs", (double)tr->nfig);
    uint64_t steps = tr->nfig ? tr->fig[0].steps : 0;
    cJSON_AddItemToObject(o, "steps", rb_json_u64(steps));
    cJSON_AddBoolToObject(o, "met", tr->met);
    if (tr->interrupted)
        cJSON_AddBoolToObject(o, "interrupted", true);
    return o;
}

/* Rank 0: the run's summary — the keys `railbench report` reads (train_epochs ... find_max), then the details. */
static cJSON *summary_json(const struct run *R, const struct trial *trials, size_t ntrials, const struct trial *best,
                           const struct rb_train_search *search, bool passed)
{
    const struct train_args *a = R->a;
    const int ranks = R->h->size;
    cJSON *s = cJSON_CreateObject();
    cJSON_AddItemToObject(s, "train_epochs", cJSON_Duplicate(best->epochs, 1));
    cJSON_AddNumberToObject(s, "au_mean_pct", best->au_mean_pct);
    cJSON_AddNumberToObject(s, "samples_per_s", best->samples_per_s);
    cJSON_AddNumberToObject(s, "au_min_pct", a->au_min);
    cJSON_AddBoolToObject(s, "passed", passed);
    cJSON_AddNumberToObject(s, "accelerators", (double)best->accel * ranks);
    if (a->find_max) {
        cJSON *fm = cJSON_AddObjectToObject(s, "find_max");
        cJSON_AddNumberToObject(fm, "max_accelerators", (double)search->lo * ranks);
        cJSON_AddNumberToObject(fm, "max_accelerators_per_rank", (double)search->lo);
        cJSON_AddNumberToObject(fm, "search_limit_per_rank", (double)search->max);
        cJSON_AddStringToObject(fm, "limited_by", search->max < a->max_accel ? "data set (two steps per trial)"
                                                                              : "--max-accelerators-per-rank");
        cJSON_AddBoolToObject(fm, "complete", search->done);
        cJSON *tried = cJSON_AddArrayToObject(fm, "tried");
        for (size_t i = 0; i < ntrials; i++)
            cJSON_AddItemToArray(tried, trial_tried_json(&trials[i], ranks));
    } else {
        cJSON_AddNullToObject(s, "find_max");
    }
    cJSON_AddNumberToObject(s, "accelerators_per_rank", (double)best->accel);
    cJSON_AddNumberToObject(s, "ranks", ranks);
    cJSON *w = cJSON_AddObjectToObject(s, "workload");
    cJSON_AddStringToObject(w, "preset", a->preset ? a->preset->name : "custom");
    cJSON_AddItemToObject(w, "batch_size", rb_json_u64(a->batch));
    cJSON_AddItemToObject(w, "samples_per_object", rb_json_u64(a->spo));
    if (a->sample_known) {
        cJSON_AddItemToObject(w, "sample_bytes", rb_json_u64(a->sample_bytes));
        cJSON_AddItemToObject(w, "sample_stdev_bytes", rb_json_u64(a->sample_stdev));
    }
    cJSON_AddItemToObject(w, "compute_ns", rb_json_u64(a->compute_ns));
    cJSON_AddItemToObject(w, "compute_stdev_ns", rb_json_u64(a->compute_stdev_ns));
    cJSON_AddItemToObject(w, "read_threads", rb_json_u64(a->read_threads));
    cJSON_AddItemToObject(w, "inflight", rb_json_u64(a->inflight));
    cJSON_AddStringToObject(w, "sync", a->grad_bytes ? "allreduce" : "barrier");
    cJSON_AddItemToObject(w, "grad_bytes", rb_json_u64(a->grad_bytes));
    cJSON_AddStringToObject(s, "target", rb_target_name(R->t));
    cJSON_AddItemToObject(s, "requests", rb_json_u64(R->requests));
    cJSON_AddItemToObject(s, "errors", rb_json_u64(R->errors));
    return s;
}

/* Rank 0: the report printed at the end and written to table.md. */
static void report_md(struct rb_buf *b, const struct run *R, const struct trial *trials, size_t ntrials,
                      const struct trial *best, const struct rb_train_search *search, bool small_dataset)
{
    const struct train_args *a = R->a;
    const int ranks = R->h->size;
    char sync[64] = "barrier", comp[32];
    if (a->grad_bytes) {
        char g[32];
        rb_format_size(g, sizeof g, a->grad_bytes);
        snprintf(sync, sizeof sync, "MPI_Allreduce of %s", g);
    }
    rb_format_duration_human(comp, sizeof comp, a->compute_ns);
    rb_buf_printf(b, "\n# railbench load train %s\n\n", rb_target_name(R->t));
    rb_buf_printf(b, "%s: %d rank(s) x %" PRIu64 " accelerator(s); batch %" PRIu64 ", %" PRIu64
                     " sample(s) per object, compute %s%s per step, then %s; %u read thread(s) x %u in flight\n\n",
                  a->preset ? a->preset->name : "custom workload", ranks, best->accel, a->batch, a->spo, comp,
                  a->compute_stdev_ns ? " (mean)" : "", sync, R->nloaders, R->fetch.inflight);
    table_epochs(b, best);
    table_verdict(b, R, best);
    if (a->find_max) {
        rb_buf_printf(b, "\n| accelerators | per rank | steps | AU %% | samples/s | meets --au-min |\n"
                         "|---:|---:|---:|---:|---:|---|\n");
        for (size_t i = 0; i < ntrials; i++)
            rb_buf_printf(b, "| %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %.1f | %.1f | %s |\n",
                          trials[i].accel * (uint64_t)ranks, trials[i].accel, trials[i].nfig ? trials[i].fig[0].steps : 0,
                          trials[i].au_mean_pct, trials[i].samples_per_s, trials[i].met ? "yes" : "no");
        if (search->lo)
            rb_buf_printf(b, "\nMost simulated accelerators with AU >= %g %%: %" PRIu64 " (%" PRIu64
                             " per rank x %d rank(s))%s\n", a->au_min, search->lo * (uint64_t)ranks, search->lo, ranks,
                          search->lo == search->max ? ", the search's limit" : "");
        else
            rb_buf_printf(b, "\nNot even one accelerator per rank keeps AU >= %g %%.\n", a->au_min);
    }
    if (small_dataset)
        rb_buf_printf(b, "\nNote: the data set is smaller than %d x the client hosts' memory; page caches may serve it "
                         "(MLPerf Storage asks for at least %dx).\n", MEMORY_FACTOR, MEMORY_FACTOR);
}

/* Rank 0: the checks asked for (--strict, --max-error-rate) and the search's gauge. */
static void record_checks(struct run *R, const struct trial *best, const struct rb_train_search *search, bool passed)
{
    const struct train_args *a = R->a;
    struct rb_harness *h = R->h;
    if (a->strict) {
        if (a->find_max)
            rb_result_check(&h->result, "au_min", passed, "%" PRIu64 " simulated accelerator(s) keep AU >= %g %%",
                            search->lo * (uint64_t)h->size, a->au_min);
        else
            rb_result_check(&h->result, "au_min", passed, "AU mean %.2f %% against --au-min %g %%", best->au_mean_pct,
                            a->au_min);
    }
    if (a->max_error_pct < 100) {
        double pct = R->requests ? 100.0 * (double)R->errors / (double)R->requests : 0;
        rb_result_check(&h->result, "error_rate", pct <= a->max_error_pct,
                        "%.3f %% of %" PRIu64 " reads failed (--max-error-rate %g %%)", pct, R->requests,
                        a->max_error_pct);
    }
    if (a->find_max) {
        char l[64];
        snprintf(l, sizeof l, "au_min=\"%g\"", a->au_min);
        rb_harness_metric(h, "railbench_train_max_accelerators", "gauge",
                          "Most simulated accelerators that kept AU at or above --au-min.", l,
                          (double)search->lo * h->size);
    }
}

static int run(struct train_args *a, struct rb_cli *cli)
{
    int status = resolve(a, cli);
    if (status)
        return status;
    struct rb_target *t = NULL;
    if ((status = rb_load_target_open(&a->tgt, cli->args[0], &t)) != 0)
        return status;
    char err[1024] = "";
    char prefix[1600];
    snprintf(prefix, sizeof prefix, "%s%s", rb_target_prefix(t), a->prefix ? a->prefix : (a->objects ? "obj-" : ""));
    if (rb_target_probe(t, a->timeout_ns, err, sizeof err) != 0) {
        if (rb_load_first_rank())
            fprintf(stderr, "railbench: error: %s\n", err);
        rb_target_close(t);
        return RB_EXIT_RUNTIME;
    }

    /*
     * The trainer thread synchronises steps over MPI while the main thread
     * runs the harness's interval reductions, each on its own communicator:
     * that needs MPI_THREAD_MULTIPLE.
     */
    struct rb_harness h;
    status = rb_harness_init(&h, "load train", cli, &(struct rb_harness_opts){.mpi = true, .thread_multiple = true});
    if (status) {
        rb_target_close(t);
        return status;
    }
    struct rb_objset all = {0};
    struct run R = {.a = a, .h = &h, .t = t, .all = &all, .comm = MPI_COMM_NULL};
    struct trial *trials = NULL;
    size_t ntrials = 0;
    struct rb_buf table = {0};
    cJSON *populated = NULL, *dataset = NULL;
    const char *source = NULL;
    bool measured_anything = false;

    if ((status = build_objects(&h, a, t, prefix, &all, &source)))
        goto out;
    uint64_t first_accel = a->find_max ? 1 : a->accel, need = a->find_max ? 2 : 1;
    uint64_t steps = rb_train_steps(all.n, h.size, a->spo, first_accel, a->batch, a->max_steps);
    if (steps < need) {
        if (h.rank == 0)
            rb_error("the data set is too small: %zu objects x %" PRIu64 " samples / %d rank(s) gives %" PRIu64
                     " samples per rank; a step takes %" PRIu64 " (%" PRIu64 " accelerator(s) x --batch-size %" PRIu64
                     ")%s", all.n, a->spo, h.size, (uint64_t)(all.n / (size_t)h.size) * a->spo,
                     first_accel * a->batch, first_accel, a->batch,
                     a->find_max ? "; --find-max-accelerators needs two steps per trial" : "");
        status = RB_EXIT_USAGE;
        goto out;
    }
    uint64_t dataset_bytes = 0;
    for (size_t i = 0; i < all.n; i++)
        dataset_bytes += all.sizes[i];
    for (size_t i = 0; source && i < all.n; i++)
        if (!all.sizes[i])
            source = NULL; /* some sizes unknown: estimated after the first epoch */

    R.fetch = (struct rb_load_opts){
        .op = RB_LOAD_GET,
        .target = t,
        .inflight = (unsigned)a->inflight,
        .seed = a->seed,
        .verify = a->verify,
        .timeout_ns = a->timeout_ns,
        .max_redirects = (long)a->max_redirects,
        .cache_header = a->cache_header,
        .rank = h.rank,
        .log_fd = -1,
    };
    if ((status = loaders_new(&R)))
        goto out;
    RB_MPI_CHECK(MPI_Comm_dup(h.comm, &R.comm));
    if (a->grad_bytes) {
        R.grad_count = (int)((a->grad_bytes + sizeof(float) - 1) / sizeof(float));
        R.grad_send = calloc((size_t)R.grad_count, sizeof(float));
        R.grad_recv = calloc((size_t)R.grad_count, sizeof(float));
        if (!R.grad_send || !R.grad_recv)
            rb_harness_fatal(&h, RB_EXIT_RUNTIME, "out of memory for --grad-bytes %" PRIu64, a->grad_bytes);
    }
    if (h.rank == 0) {
        char comp[32], sync[64] = "barrier";
        rb_format_duration_human(comp, sizeof comp, a->compute_ns);
        if (a->grad_bytes) {
            char g[32];
            rb_format_size(g, sizeof g, a->grad_bytes);
            snprintf(sync, sizeof sync, "all-reduce of %s", g);
        }
        rb_info("load train %s: %zu objects x %" PRIu64 " sample(s), %d rank(s), batch %" PRIu64 ", compute %s%s; "
                "%u read thread(s) x %u in flight; sync: %s", rb_target_name(t), all.n, a->spo, h.size, a->batch, comp,
                a->compute_stdev_ns ? " (mean)" : "", R.nloaders, R.fetch.inflight, sync);
        if (a->find_max)
            rb_info("searching 1 to %" PRIu64 " accelerator(s) per rank, %" PRIu64 " epoch(s) per trial", a->max_accel,
                    a->epochs);
        else
            rb_info("%" PRIu64 " accelerator(s) per rank, %" PRIu64 " step(s) per epoch, %" PRIu64 " epoch(s)", a->accel,
                    steps, a->epochs);
    }
    if (a->populate && (status = populate(&R, &populated)))
        goto out;
    if (h.interrupted)
        goto out; /* a signal during --populate: nothing to train on yet, the populate phase is recorded */
    if (h.rank == 0 && source)
        dataset = dataset_json(&R, dataset_bytes, source);

    struct rb_train_search search;
    /* The largest count that still leaves two steps, so every trial has an AU. */
    uint64_t data_max = rb_train_steps(all.n, h.size, a->spo, 1, a->batch, 0) / 2;
    rb_train_search_init(&search, a->max_accel < data_max ? a->max_accel : data_max);
    for (;;) {
        struct trial *grown = realloc(trials, (ntrials + 1) * sizeof *grown);
        if (!grown)
            rb_harness_fatal(&h, RB_EXIT_RUNTIME, "out of memory");
        trials = grown;
        struct trial *tr = &trials[ntrials++];
        memset(tr, 0, sizeof *tr);
        tr->accel = a->find_max ? search.next : a->accel;
        tr->epochs = cJSON_CreateArray();
        status = run_trial(&R, tr);
        measured_anything = true;
        if (h.rank == 0 && !dataset && R.read_objects) {
            /* Sizes were unknown: estimate the data set from what the first epoch read. */
            dataset_bytes = (uint64_t)((double)R.read_bytes / (double)R.read_objects * (double)all.n);
            dataset = dataset_json(&R, dataset_bytes, "measured");
        }
        if (status || h.interrupted || !a->find_max)
            break;
        rb_train_search_record(&search, tr->met);
        if (search.done)
            break;
    }

    if (h.rank == 0) {
        /* The reported epochs: the only trial, or the search's best (its first trial when none met --au-min). */
        const struct trial *best = &trials[0];
        for (size_t i = 0; a->find_max && i < ntrials; i++)
            if (trials[i].accel == search.lo && trials[i].met)
                best = &trials[i];
        bool passed = a->find_max ? search.lo >= 1 : best->met;
        cJSON *s = summary_json(&R, trials, ntrials, best, &search, passed);
        if (dataset)
            cJSON_AddItemToObject(s, "dataset", dataset);
        if (populated)
            cJSON_AddItemToObject(s, "populate", populated);
        bool small = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(dataset, "page_cache_may_hide_storage"));
        dataset = populated = NULL;
        rb_result_set(&h.result, "summary", s);
        report_md(&table, &R, trials, ntrials, best, &search, small);
        record_checks(&R, best, &search, passed);
    }
out:
    /* A run that failed before measuring anything says so in one line, without pointing at an empty result. */
    if (status && !measured_anything && rb_log_get_level() > RB_LOG_WARN)
        rb_log_set_level(RB_LOG_WARN);
    if (R.comm != MPI_COMM_NULL)
        MPI_Comm_free(&R.comm);
    status = rb_harness_finish(&h, table.oom ? NULL : table.s, status);
    rb_buf_free(&table);
    for (size_t i = 0; i < ntrials; i++) {
        cJSON_Delete(trials[i].epochs);
        free(trials[i].fig);
    }
    free(trials);
    cJSON_Delete(populated);
    cJSON_Delete(dataset);
    free(R.grad_send);
    free(R.grad_recv);
    loaders_free(&R);
    rb_objset_free(&all);
    rb_target_close(t);
    return status;
}

/* run() behind the generic signature rb_load_command calls. */
static int run_args(void *a, struct rb_cli *cli)
{
    return run(a, cli);
}

int rb_load_train_main(int argc, char **argv)
{
    struct train_args a = {
        .inflight = 8,
        .accel = 1,
        .epochs = 1,
        .seed = 1,
        .max_accel = 256,
        .timeout_ns = 30 * RB_NS_PER_S,
        .max_redirects = 5,
        .max_error_pct = 100,
    };
    const struct rb_opt opts[] = {
        {"workload", 0, RB_OPT_STR, &a.workload, "NAME",
         "MLPerf Storage preset: resnet50, unet3d or cosmoflow (sample size, batch, compute time, read threads, "
         "--au-min); options given win", NULL},
        {"batch-size", 'b', RB_OPT_STR, &a.batch_s, "N", "samples per batch and accelerator (default 1, or the preset's)",
         NULL},
        {"sample-size", 0, RB_OPT_STR, &a.sample_s, "SIZE[/STDEV]",
         "sample size, fixed or normal mean/stdev: what --populate writes, and the data set's size when not listed",
         NULL},
        {"samples-per-object", 0, RB_OPT_STR, &a.spo_s, "N",
         "samples in one object (sharded data sets); the object is read whole once (default 1, or the preset's)", NULL},
        {"compute-time", 0, RB_OPT_STR, &a.compute_s, "D[/STDEV]",
         "compute per step and accelerator, fixed or normal mean/stdev (required without --workload)", NULL},
        {"read-threads", 't', RB_OPT_STR, &a.threads_s, "N",
         "data loader threads per rank, each with its own connections (default 1, or the preset's)", NULL},
        {"inflight", 'c', RB_OPT_U64, &a.inflight, "N", "requests in flight per read thread", NULL},
        {"prefetch", 0, RB_OPT_U64, &a.prefetch, "N",
         "batches read ahead per rank (0: 2 per read thread or per accelerator, whichever is more)", NULL},
        {"accelerators-per-rank", 0, RB_OPT_U64, &a.accel, "A",
         "simulated accelerators per rank, each taking its own batch every step", NULL},
        {"epochs", 0, RB_OPT_U64, &a.epochs, "N", "epochs; the first is the cold one through a tier", NULL},
        {"steps", 0, RB_OPT_U64, &a.max_steps, "N", "at most N steps per epoch (0: as many as the data set fills)",
         NULL},
        {"grad-bytes", 0, RB_OPT_SIZE, &a.grad_bytes, "SIZE",
         "after each step an MPI_Allreduce of SIZE bytes of gradients (0: a barrier)", NULL},
        {"au-min", 0, RB_OPT_STR, &a.au_min_s, "PCT", "AU threshold in percent (default 90, or the preset's: 70 for "
                                                       "cosmoflow)", NULL},
        {"strict", 0, RB_OPT_FLAG, &a.strict, NULL, "exit 1 when AU is below --au-min", NULL},
        {"find-max-accelerators", 0, RB_OPT_FLAG, &a.find_max, NULL,
         "search the most simulated accelerators that keep AU >= --au-min (doubling, then bisection)", NULL},
        {"max-accelerators-per-rank", 0, RB_OPT_U64, &a.max_accel, "N", "the search's upper bound per rank", NULL},
        {"objects", 'n', RB_OPT_U64, &a.objects, "N", "generated object names <prefix><index>, N of them", NULL},
        {"prefix", 0, RB_OPT_STR, &a.prefix, "P", "object name prefix: obj- with --objects, the listing filter otherwise",
         NULL},
        {"filelist", 0, RB_OPT_STR, &a.filelist, "FILE", "object names, one per line (optional size after a space)",
         NULL},
        {"populate", 0, RB_OPT_FLAG, &a.populate, NULL,
         "PUT the data set first (seeded payloads, sizes from --sample-size), as DLIO generates its data", NULL},
        {"verify", 0, RB_OPT_FLAG, &a.verify, NULL, "compare every byte read with the seeded payload (class checksum)",
         NULL},
        {"seed", 0, RB_OPT_U64, &a.seed, "N", "seed of permutations, payloads, sizes and compute times", NULL},
        {"endpoint", 0, RB_OPT_STRS, &a.tgt.endpoints, "URL",
         "S3/AIStore endpoint http[s]://HOST[:PORT]; repeatable, used round-robin per connection", NULL},
        {"region", 0, RB_OPT_STR, &a.tgt.region, "NAME", "S3 signing region (default $AWS_REGION or us-east-1)", NULL},
        {"virtual-host", 0, RB_OPT_FLAG, &a.tgt.virtual_host, NULL, "S3 virtual-host style (bucket.host) instead of path style",
         NULL},
        {"credentials-file", 0, RB_OPT_STR, &a.tgt.credentials_file, "FILE",
         "S3 credentials file (default $AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials)", NULL},
        {"profile", 0, RB_OPT_STR, &a.tgt.profile, "NAME", "profile in the credentials file (default $AWS_PROFILE or default)",
         NULL},
        {"provider", 0, RB_OPT_STR, &a.tgt.provider, "NAME", "AIStore bucket provider: ais (default), aws, gcp, azure", NULL},
        {"timeout", 0, RB_OPT_DURATION, &a.timeout_ns, "D", "per-request timeout (0: none)", NULL},
        {"max-redirects", 0, RB_OPT_U64, &a.max_redirects, "N", "redirects followed per request (AIStore)", NULL},
        {"max-error-rate", 0, RB_OPT_PERCENT, &a.max_error_pct, "PCT", "exit 1 when more than PCT % of reads fail",
         NULL},
        {"cache-header", 0, RB_OPT_STR, &a.cache_header, "NAME",
         "count HIT/MISS of this response header per epoch (e.g. X-Cache-Status)", NULL},
        {0},
    };
    const struct rb_cmd_spec spec = {
        "railbench load train [options] URL",
        "Emulate data-parallel training on http://HOST:PORT/PATH, s3://BUCKET or ais://BUCKET: each rank's "
        "simulated accelerators read batches, compute, and synchronise; report accelerator utilisation (AU) and "
        "samples/s per epoch, MLPerf Storage style.",
        opts, 1, 1};
    return rb_load_command(&spec, argc, argv, run_args, &a);
}
