/* load kvcache's run: the harness, the rank's own directory, one phase per trial, the figures, the clean-up. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cmd/loader_int.h"
#include "../cmd/safety_int.h"
#include "../engine/fwatch_int.h"
#include "kvcache_int.h"
#include "railbench/beneath.h"
#include "railbench/clock.h"
#include "railbench/harness.h"
#include "railbench/log.h"
#include "railbench/stats.h"

struct kv_run {
    struct rb_kv_args *a;
    struct rb_harness h;
    struct rb_target *t;
    struct rb_kv_rank r;
    cJSON *trials;          /* rank 0 */
    uint64_t left;          /* rank 0: files that could not be removed, every rank */
    bool kept;              /* --keep: the last trial's entries stay */
    struct rb_kvtrace trace;  /* --trace */
    bool traced, block_dir_made;
    cJSON *timeline;          /* rank 0: the trial's points, one per interval */
};

/* ---- the phase's callbacks ---- */

static int phase_start(void *ctx)
{
    return rb_kv_rank_start(&((struct kv_run *)ctx)->r);
}

static void phase_collect(void *ctx, struct rb_stats *into)
{
    struct kv_run *x = ctx;
    for (unsigned i = 0; i < x->r.nworkers; i++) {
        struct rb_kv_worker *w = &x->r.w[i];
        pthread_mutex_lock(&w->mu);
        into->ops += w->since_ops;
        into->bytes += w->since_bytes;
        rb_hist_merge(&into->lat, w->since_lat);
        w->since_ops = w->since_bytes = 0;
        rb_hist_reset(w->since_lat);
        pthread_mutex_unlock(&w->mu);
    }
}

/* A rank whose thread failed has nothing more to do (the error ends the run after the phase). */
static bool phase_done(void *ctx)
{
    struct kv_run *x = ctx;
    bool all = x->r.trace != NULL;
    for (unsigned i = 0; i < x->r.nworkers; i++) {
        if (x->r.w[i].err)
            return true;
        all = all && atomic_load(&x->r.w[i].finished);
    }
    return all || rb_fwatch_fired();
}

/*
 * Every interval: latency by tier and op over every rank (collective), a point of the trial's timeline on rank 0
 * and its gauges for Prometheus (railbench_kvcache_latency_seconds{tier, op, quantile}).
 */
static void phase_tick(void *ctx, struct rb_harness *h, const struct rb_stats *interval, double t_s)
{
    struct kv_run *x = ctx;
    (void)interval;
    struct rb_hist *mine = rb_hist_new(), *all = rb_hist_new();
    cJSON *point = h->rank == 0 ? cJSON_CreateObject() : NULL;
    if (point)
        cJSON_AddItemToObject(point, "t_s", rb_json_number(t_s));
    for (int k = 0; k < RB_KV_NTIMELINE && mine && all; k++) {
        rb_hist_reset(mine);
        rb_hist_reset(all);
        for (unsigned i = 0; i < x->r.nworkers; i++) {
            struct rb_kv_worker *w = &x->r.w[i];
            pthread_mutex_lock(&w->mu);
            rb_hist_merge(mine, w->since_op[k]);
            rb_hist_reset(w->since_op[k]);
            pthread_mutex_unlock(&w->mu);
        }
        if (h->mpi)
            rb_harness_reduce_hist(h, mine, all);
        else
            rb_hist_merge(all, mine);
        if (!point)
            continue;
        cJSON *o = cJSON_AddObjectToObject(point, rb_kv_timeline_names[k]);
        cJSON_AddItemToObject(o, "count", rb_json_u64(all->count));
        double p50 = all->count ? (double)rb_hist_percentile(all, 50) : NAN;
        double p95 = all->count ? (double)rb_hist_percentile(all, 95) : NAN;
        cJSON_AddItemToObject(o, "p50_ns", rb_json_number(p50));
        cJSON_AddItemToObject(o, "p95_ns", rb_json_number(p95));
        char labels[96];
        const char *name = rb_kv_timeline_names[k], *us = strchr(name, '_');
        snprintf(labels, sizeof labels, "tier=\"%.*s\",op=\"%s\",quantile=\"0.95\"", (int)(us - name), name, us + 1);
        if (all->count)
            rb_harness_metric(h, "railbench_kvcache_latency_seconds", "gauge",
                              "load kvcache: latency of the last interval's operations by tier and op", labels,
                              p95 / 1e9);
    }
    if (point)
        cJSON_AddItemToArray(x->timeline, point);
    rb_hist_free(mine);
    rb_hist_free(all);
}

static void phase_stop(void *ctx)
{
    rb_kv_rank_stop(&((struct kv_run *)ctx)->r);
}

/* ---- a trial ---- */

/* The trial's figures: every rank's own record to rank 0, the counters and histograms merged there (collective). */
static void trial_record(struct kv_run *x, unsigned k)
{
    uint64_t count[RB_KV_NCOUNTS], sum[RB_KV_NCOUNTS] = {0};
    struct rb_hist *hist[RB_KV_NHIST], *merged[RB_KV_NHIST];
    for (int i = 0; i < RB_KV_NHIST; i++) {
        hist[i] = rb_hist_new();
        merged[i] = rb_hist_new();
        if (!hist[i] || !merged[i]) {
            rb_error("out of memory");
            abort();
        }
    }
    rb_kv_rank_sum(&x->r, count, hist);
    double elapsed_s = (double)(x->r.t1_ns - x->r.t0_ns) / 1e9;
    cJSON *mine = rb_kv_rank_json(x->h.rank, count, hist, elapsed_s);
    cJSON *ranks = x->h.mpi ? rb_harness_gather_json(&x->h, mine) : cJSON_CreateArray();
    if (!x->h.mpi)
        cJSON_AddItemToArray(ranks, cJSON_Duplicate(mine, true));
    cJSON_Delete(mine);
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Reduce(count, sum, RB_KV_NCOUNTS, MPI_UINT64_T, MPI_SUM, 0, x->h.comm));
    else
        memcpy(sum, count, sizeof sum);
    for (int i = 0; i < RB_KV_NHIST; i++) {
        if (x->h.mpi)
            rb_harness_reduce_hist(&x->h, hist[i], merged[i]);
        else
            rb_hist_merge(merged[i], hist[i]);
    }
    if (x->h.rank == 0)
        cJSON_AddItemToArray(x->trials, rb_kv_trial_json(k, ranks, sum, merged));
    else
        cJSON_Delete(ranks);
    for (int i = 0; i < RB_KV_NHIST; i++) {
        rb_hist_free(hist[i]);
        rb_hist_free(merged[i]);
    }
}

/* Every rank's status combined (the worst); collective. */
static int agree(struct kv_run *x, int status)
{
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, x->h.comm));
    return status;
}

/* The entries a trial left removed (files and memory); the count of files that stay summed on rank 0. */
static void trial_clear(struct kv_run *x, bool stuck)
{
    uint64_t left = rb_kv_rank_clear(&x->r, !stuck), sum = left;
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Reduce(&left, &sum, 1, MPI_UINT64_T, MPI_SUM, 0, x->h.comm));
    x->left += sum;
}

/* Trial k (1-based) as one phase on every rank; 0 or an exit status. The last trial's entries stay with --keep. */
static int trial(struct kv_run *x, unsigned k)
{
    int status = rb_kv_rank_init(&x->r, x->a, x->h.rank) ? RB_EXIT_RUNTIME : 0;
    if (status)
        rb_error("load kvcache: out of memory for %" PRIu64 " users", x->a->users);
    if ((status = agree(x, status)))
        return status;
    char name[32];
    snprintf(name, sizeof name, "trial-%u", k);
    struct rb_phase p = {.name = name, .op = "kvcache", .duration_ns = x->a->duration_ns, .start = phase_start,
                         .collect = phase_collect, .done = phase_done, .stop = phase_stop, .on_tick = phase_tick,
                         .ctx = x};
    if (x->h.rank == 0)
        x->timeline = cJSON_CreateArray();
    status = rb_harness_run_phase(&x->h, &p);
    rb_kv_rank_stop(&x->r);
    rb_harness_phase_free(&p);
    char msg[600];
    int err = rb_kv_rank_error(&x->r, msg, sizeof msg);
    if (err)
        rb_error("load kvcache: %s", msg);
    /* A thread given up by the file watchdog may still be inside its call: what it uses stays allocated and its files
       stay (counted as left); every rank still takes part in the record and the clean-up (collective). */
    bool stuck = rb_fwatch_fired();
    if (stuck)
        err = ETIMEDOUT;
    status = agree(x, status ? status : err ? RB_EXIT_RUNTIME : 0);
    trial_record(x, k);
    if (x->h.rank == 0) {
        cJSON *last = cJSON_GetArrayItem(x->trials, cJSON_GetArraySize(x->trials) - 1);
        if (last && (int)cJSON_GetNumberValue(cJSON_GetObjectItem(last, "trial")) == (int)k)
            cJSON_AddItemToObject(last, "timeline", x->timeline);
        else
            cJSON_Delete(x->timeline);
        x->timeline = NULL;
    }
    if (!x->a->keep || (k < x->a->trials && !status))
        trial_clear(x, stuck);
    else
        x->kept = true;
    if (!stuck)
        rb_kv_rank_free(&x->r);
    return status;
}

/*
 * This rank's own directory, new, beneath the target: rbkv-<run id>-r<rank>; with --trace also the hash blocks' (rank
 * 0 makes it). On an object target the same names are prefixes, nothing to make. Collective; 0 or an exit status.
 */
static int make_dir(struct kv_run *x)
{
    snprintf(x->r.dir, sizeof x->r.dir, "%srbkv-%s-r%d", rb_target_prefix(x->t), x->h.run_id, x->h.rank);
    snprintf(x->r.block_dir, sizeof x->r.block_dir, "%srbkv-%s-blocks", rb_target_prefix(x->t), x->h.run_id);
    if (x->r.objects) {
        /* The look-up before the first write (rank 0 lists the bucket once): no name of the run may be there, and a
           bucket that is not there ends the run before it starts (one line). */
        struct rb_objset first = {0};
        char name[320];
        snprintf(name, sizeof name, "%s/u0-c0-t1.npy", x->r.dir);
        int st = rb_objset_add(&first, name, 0) ? RB_EXIT_RUNTIME
                 : rb_safety_check(&x->h, x->t, &first, x->a->tgt.timeout_ns, RB_ENGINE_AUTO, 0, false, "load kvcache", "its entries",
                                   NULL);
        rb_objset_free(&first);
        return st;
    }
    int root = rb_target_file_dir(x->t);
    x->r.root = root;
    int rc = root < 0 ? root : rb_beneath_mkdir(root, x->r.dir, 0755);
    if (rc)
        rb_error("load kvcache: cannot make %s/%s: %s", rb_target_file_root(x->t), x->r.dir, strerror(-rc));
    x->r.dir_made = rc == 0;
    int status = agree(x, rc ? RB_EXIT_RUNTIME : 0);
    if (status || !x->traced)
        return status;
    rc = 0;
    if (x->h.rank == 0 && (rc = rb_beneath_mkdir(root, x->r.block_dir, 0755)) != 0)
        rb_error("load kvcache: cannot make %s/%s: %s", rb_target_file_root(x->t), x->r.block_dir, strerror(-rc));
    x->block_dir_made = x->h.rank == 0 && rc == 0;
    return agree(x, rc ? RB_EXIT_RUNTIME : 0);
}

/* The run's directories removed (each only when empty: an entry that could not be removed keeps its directory). */
static void remove_dir(struct kv_run *x)
{
    if (x->kept)
        return;
    rb_harness_barrier(&x->h); /* every rank has removed the hash blocks it wrote */
    if (x->block_dir_made && rb_beneath_rmdir(x->r.root, x->r.block_dir) != 0)
        rb_warn("load kvcache: %s/%s stays (not empty)", rb_target_file_root(x->t), x->r.block_dir);
    if (x->r.dir_made && rb_beneath_rmdir(x->r.root, x->r.dir) != 0)
        rb_warn("load kvcache: %s/%s stays (not empty)", rb_target_file_root(x->t), x->r.dir);
}

static int trials(struct kv_run *x)
{
    int status = 0;
    for (unsigned k = 1; k <= x->a->trials && !status; k++) {
        if (k > 1 && x->a->gap_ns) {
            rb_clock_sleep_ns(x->a->gap_ns, rb_harness_signal_flag());
            rb_harness_barrier(&x->h);
        }
        if (rb_harness_any_signalled(&x->h))
            break;
        status = trial(x, k);
    }
    return status;
}

static int checked_target(struct kv_run *x, struct rb_cli *cli)
{
    int status = rb_load_target_open(&x->a->tgt, cli->args[0], NULL, &x->t);
    if (status)
        return status;
    x->r.objects = !rb_target_can(x->t, RB_TCAP_FILES);
    if ((status = rb_load_target_probe(x->t, x->a->tgt.timeout_ns)))
        return status;
    if (x->a->trace_path) {
        char err[600];
        int rc = rb_kvtrace_load(x->a->trace_path, &x->trace, err, sizeof err);
        if (rc)
            return rb_cli_usage_error("--trace %s", err);
        if (!x->trace.n)
            return rb_cli_usage_error("--trace %s: no request", x->a->trace_path);
        x->traced = true;
        x->r.trace = &x->trace;
    }
    if (rb_target_can(x->t, RB_TCAP_FILES) && rb_fwatch_start(x->a->tgt.timeout_ns)) {
        rb_error("load kvcache: cannot start the file watchdog");
        return RB_EXIT_RUNTIME;
    }
    return 0;
}

int rb_kv_run(struct rb_kv_args *a, struct rb_cli *cli)
{
    struct kv_run x = {.a = a};
    int status = checked_target(&x, cli);
    if (status)
        goto close;
    if ((status = rb_harness_init(&x.h, "load kvcache", cli, &(struct rb_harness_opts){.mpi = true})))
        goto close;
    x.r.ranks = x.h.size;
    if (x.r.objects) {
        /* PUT, GET and DELETE of one object at a time on the native engine where it applies (docs/engine.md) */
        const struct rb_engine_args ea = {.engine = RB_ENGINE_AUTO, .max_redirects = RB_ENGINE_MAX_REDIRECTS};
        x.r.obj_opts = rb_load_opts_from(RB_LOAD_PUT, x.t, &a->tgt, &ea, x.h.rank);
        x.r.obj_opts.seed = a->seed;
        x.r.obj_opts.payload = rb_kv_obj_layout(); /* an object holds the entry's file bytes */
    }
    if (x.h.rank == 0)
        x.trials = cJSON_CreateArray();
    if (!(status = make_dir(&x))) {
        if (x.h.rank == 0)
            rb_info("load kvcache %s: %" PRIu64 " users and %" PRIu64 " in flight per rank, %" PRIu64 " bytes per "
                    "token, %" PRIu64 " trial(s) under %s", a->model.name, a->users, a->inflight, a->bytes_per_token,
                    a->trials, rb_target_name(x.t));
        status = trials(&x);
    }
    remove_dir(&x);
    char *table = NULL;
    if (x.h.rank == 0) {
        cJSON *summary = cJSON_CreateObject();
        cJSON_AddStringToObject(summary, "target", rb_target_name(x.t));
        if (x.r.objects)
            cJSON_AddStringToObject(summary, "engine", rb_engine_name(&x.r.obj_opts));
        else
            cJSON_AddNullToObject(summary, "engine");
        cJSON_AddItemToObject(summary, "files_left", rb_json_u64(x.left));
        cJSON_AddBoolToObject(summary, "kept", x.kept);
        char dirs[96];
        snprintf(dirs, sizeof dirs, "%srbkv-%s-r", rb_target_prefix(x.t), x.h.run_id);
        cJSON_AddStringToObject(summary, "entry_dir_prefix", dirs); /* + the rank */
        if (x.kept)
            rb_info("load kvcache: --keep: the last trial's entries stay under %s in rbkv-%s-r<rank>/",
                    rb_target_name(x.t), x.h.run_id);
        rb_result_check(&x.h.result, "entries_removed", x.left == 0, "%" PRIu64 " entry file(s) the run made could "
                        "not be removed", x.left);
        if (x.left)
            rb_harness_kept(&x.h, "%" PRIu64 " entry file(s) under %s (rbkv-%s-r*)", x.left, rb_target_name(x.t),
                            x.h.run_id);
        if (x.traced)
            rb_kv_replay_json(a, &x.trace, summary, x.trials);
        table = rb_kv_report(a, summary, x.trials);
        if (!cJSON_GetArraySize(x.trials)) {
            free(table); /* nothing measured: the error line says it all */
            table = NULL;
        }
        rb_result_set(&x.h.result, "summary", summary);
    }
    status = rb_harness_finish(&x.h, table, status);
    free(table);
    cJSON_Delete(x.trials);
close:
    if (x.traced)
        rb_kvtrace_free(&x.trace);
    rb_target_close(x.t);
    return status;
}
