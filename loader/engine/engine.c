/* The engine's API: one rank's workers started, collected at each tick, stopped and merged; and the fetcher. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fwatch_int.h"
#include "mixed_int.h"
#include "multipart_int.h"
#include "ranged_int.h"
#include "railbench/clock.h"
#include "railbench/harness.h"
#include "railbench/log.h"
#include "worker_int.h"

/* How long collect() waits for a worker to notice a tick before taking what its mailbox has. */
#define HANDOVER_WAIT_NS (200 * RB_NS_PER_MS)

/* Share i of n equal parts of total (the first total % n parts one larger). */
static uint64_t share(uint64_t total, unsigned n, unsigned i)
{
    return total / n + (i < total % n ? 1 : 0);
}

int rb_engine_new(struct rb_engine **out, const struct rb_load_opts *o)
{
    *out = NULL;
    if (!o->target || !o->objects || o->threads == 0 || o->inflight == 0)
        return -EINVAL;
    struct rb_engine *e = calloc(1, sizeof *e);
    if (!e)
        return -ENOMEM;
    e->o = *o;
    e->nw = o->threads;
    for (int i = 0; i < RB_LERR_COUNT; i++)
        atomic_flag_clear(&e->logged[i]);
    e->w = calloc(e->nw, sizeof *e->w);
    if (!e->w) {
        free(e);
        return -ENOMEM;
    }
    int rc = 0;
    for (unsigned t = 0; t < e->nw && !rc; t++) {
        struct rb_worker *w = &e->w[t];
        w->e = e;
        w->logged = e->logged;
        rc = rb_worker_init(w, &e->o, t, (size_t)t * o->inflight + (size_t)o->rank * o->threads * o->inflight);
        if (!rc)
            rc = rb_picker_init(&w->pick, &e->o, t, e->nw);
        if (rc)
            break;
        w->count_limit = o->count ? share(o->count, e->nw, t) : 0;
        w->bytes_limit = o->bytes ? share(o->bytes, e->nw, t) : 0;
        if (o->count && !w->count_limit)
            w->exhausted = true; /* fewer requests than threads: this one has none */
        if (o->rate_per_s > 0)
            w->open.period_ns = (uint64_t)((double)RB_NS_PER_S * e->nw / o->rate_per_s);
        if (o->rate_per_s > 0 && !w->open.period_ns)
            w->open.period_ns = 1;
        w->seg = calloc(64, sizeof *w->seg);
        w->nseg = w->seg ? 64 : 0;
    }
    if (rc) {
        rb_engine_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

int rb_engine_start(struct rb_engine *e)
{
    e->t0_ns = rb_clock_ns();
    for (unsigned t = 0; t < e->nw; t++) {
        struct rb_worker *w = &e->w[t];
        /* Open loop: threads' schedules interleave evenly within one period. */
        w->open.next_ns = e->t0_ns + w->open.period_ns * t / e->nw;
        int rc = pthread_create(&w->th, NULL, rb_worker_main, w);
        if (rc) {
            rb_engine_stop(e);
            return -rc;
        }
        w->started = true;
    }
    e->started = true;
    return 0;
}

void rb_engine_collect(struct rb_engine *e, struct rb_stats *into, struct rb_hist *uncorrected)
{
    unsigned seq = atomic_fetch_add(&e->seq, 1) + 1;
    for (unsigned t = 0; t < e->nw; t++)
        if (e->w[t].started && !atomic_load(&e->w[t].finished))
            rb_worker_wake(&e->w[t]);
    uint64_t deadline = rb_clock_ns() + HANDOVER_WAIT_NS;
    e->inflight = 0;
    e->answered = e->refused = 0;
    for (unsigned t = 0; t < e->nw; t++) {
        struct rb_worker *w = &e->w[t];
        while (w->started && !atomic_load(&w->finished) && atomic_load(&w->acked) != seq &&
               rb_clock_ns() < deadline)
            rb_clock_sleep_ns(100 * RB_NS_PER_US, NULL);
        pthread_mutex_lock(&w->mu);
        rb_stats_merge(into, w->box);
        if (uncorrected)
            rb_hist_merge(uncorrected, w->unc_box);
        rb_stats_reset(w->box);
        rb_hist_reset(w->unc_box);
        if (!atomic_load(&w->finished))
            e->inflight += w->box_inflight;
        e->answered += w->box_answered;
        e->refused += w->box_refused;
        pthread_mutex_unlock(&w->mu);
    }
}

unsigned rb_engine_inflight(const struct rb_engine *e)
{
    return e->inflight;
}

void rb_engine_refusals(const struct rb_engine *e, uint64_t *answered, uint64_t *refused)
{
    *answered = e->answered;
    *refused = e->refused;
}

bool rb_engine_done(struct rb_engine *e)
{
    return atomic_load(&e->nfinished) == e->nw;
}

uint64_t rb_engine_done_ns(struct rb_engine *e)
{
    if (!rb_engine_done(e))
        return 0;
    uint64_t last = 0;
    for (unsigned t = 0; t < e->nw; t++)
        last = e->w[t].done_ns > last ? e->w[t].done_ns : last;
    return last;
}

/*
 * Joins w's thread, unless the file watchdog finds it stuck in a file system call past --timeout meanwhile: that
 * thread cannot be woken, so it is left behind (detached, its memory kept) and 1 returned.
 */
static int join(struct rb_worker *w)
{
    if (rb_fwatch_join(w->th, w->watch))
        return 0;
    w->abandoned = true;
    w->failed = -ETIMEDOUT;
    /* The request it is in counts as one that timed out (the last collect takes it from the box). */
    pthread_mutex_lock(&w->mu);
    w->box->ops++;
    rb_stats_error(w->box, RB_LERR_TIMEOUT);
    pthread_mutex_unlock(&w->mu);
    return 1;
}

void rb_engine_stop(struct rb_engine *e)
{
    if (!e || e->joined)
        return;
    atomic_store(&e->stop, true);
    for (unsigned t = 0; t < e->nw; t++)
        if (e->w[t].started)
            rb_worker_wake(&e->w[t]);
    for (unsigned t = 0; t < e->nw; t++)
        if (e->w[t].started) {
            if (join(&e->w[t]))
                continue;
            if (e->w[t].failed && !e->w[t].failed_logged)
                rb_error("worker %u stopped early: %s", t, strerror(-e->w[t].failed));
        }
    e->joined = true;
    /* Sum the per-second byte counters of every worker (they are private until the join). */
    size_t n = 0;
    for (unsigned t = 0; t < e->nw; t++) {
        size_t last = e->w[t].nseg;
        while (last && !e->w[t].seg[last - 1])
            last--;
        if (last > n)
            n = last;
    }
    free(e->segments);
    e->segments = calloc(n ? n : 1, sizeof *e->segments);
    e->nsegments = e->segments ? n : 0;
    for (unsigned t = 0; t < e->nw && e->segments; t++)
        for (size_t i = 0; i < e->w[t].nseg && i < n; i++)
            e->segments[i] += e->w[t].seg[i];
}

int rb_engine_status(const struct rb_engine *e)
{
    for (unsigned t = 0; t < e->nw; t++)
        if (e->w[t].failed)
            return e->w[t].failed;
    return 0;
}

uint64_t rb_engine_send_window_ns(const struct rb_engine *e)
{
    /* A worker's window: to its last send plus one of its periods (n sends on time span n - 1 periods), or to
     * when it was stopped while it still had sends to make, whichever is later. */
    uint64_t end = 0;
    for (unsigned t = 0; t < e->nw; t++) {
        const struct rb_worker *w = &e->w[t];
        uint64_t we = w->last_issue_ns ? w->last_issue_ns + w->open.period_ns : 0;
        if (w->stop_issue_ns > we)
            we = w->stop_issue_ns;
        if (we > end)
            end = we;
    }
    return end > e->t0_ns ? end - e->t0_ns : 0;
}

const uint64_t *rb_engine_segments(const struct rb_engine *e, size_t *n)
{
    *n = e->nsegments;
    return e->segments;
}

int rb_engine_each_written(const struct rb_engine *e, int (*fn)(const char *name, void *arg), void *arg)
{
    char buf[RB_OBJSET_NAME_BYTES];
    for (unsigned t = 0; e->w && t < e->nw; t++) {
        int rc = rb_written_each(&e->w[t], e->o.objects, buf, fn, arg);
        if (rc)
            return rc;
    }
    return 0;
}

int rb_engine_each_unknown(const struct rb_engine *e, int (*fn)(const char *name, void *arg), void *arg)
{
    for (unsigned t = 0; e->w && t < e->nw; t++) {
        int rc = rb_written_each_unknown(&e->w[t], fn, arg);
        if (rc)
            return rc;
    }
    return 0;
}

void rb_engine_tls_stats(const struct rb_engine *e, struct rb_stats *into)
{
    for (unsigned t = 0; t < e->nw; t++)
        rb_native_tls_collect(&e->w[t], into);
}

void rb_engine_rphases(const struct rb_engine *e, int op, struct rb_rphases *into)
{
    for (unsigned t = 0; t < e->nw; t++) {
        const struct rb_worker *w = &e->w[t];
        if (!w->rph || w->abandoned)
            continue;
        if (!w->o->mix)
            rb_rph_merge(into, &w->rph[0]);
        for (int k = 0; w->o->mix && k < RB_MIX_OPS; k++)
            if (op < 0 || op == k)
                rb_rph_merge(into, &w->rph[k]);
    }
}

void rb_engine_slowest(const struct rb_engine *e, struct rb_slowheap *into)
{
    for (unsigned t = 0; t < e->nw; t++)
        if (!e->w[t].abandoned)
            rb_slow_merge(into, e->w[t].slow.v, e->w[t].slow.n);
}

void rb_engine_part_stats(const struct rb_engine *e, struct rb_stats *into)
{
    for (unsigned t = 0; e->w && t < e->nw; t++) {
        rb_mp_collect_parts(&e->w[t], into);
        rb_rg_collect_parts(&e->w[t], into);
        rb_tar_collect_samples(&e->w[t], into);
    }
}

void rb_engine_free(struct rb_engine *e)
{
    if (!e)
        return;
    rb_engine_stop(e);
    bool left = false;
    for (unsigned t = 0; e->w && t < e->nw; t++) {
        if (e->w[t].abandoned) {
            left = true; /* its thread is still in the kernel and may come back to its memory */
            continue;
        }
        rb_worker_free(&e->w[t]);
    }
    if (!left)
        free(e->w);
    free(e->segments);
    free(e);
}

/* ---- fetcher ---- */

struct rb_fetcher {
    struct rb_load_opts o;
    struct rb_worker w;
    atomic_flag logged[RB_LERR_COUNT];
};

int rb_fetcher_new(struct rb_fetcher **out, const struct rb_load_opts *o)
{
    return rb_fetcher_new_at(out, o, 0);
}

int rb_fetcher_new_at(struct rb_fetcher **out, const struct rb_load_opts *o, size_t ep0)
{
    *out = NULL;
    if (!o->target || (o->op != RB_LOAD_GET && o->op != RB_LOAD_PUT && o->op != RB_LOAD_DELETE) || o->inflight == 0)
        return -EINVAL;
    struct rb_fetcher *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    f->o = *o;
    f->o.objects = NULL;
    f->o.rate_per_s = 0;
    for (int i = 0; i < RB_LERR_COUNT; i++)
        atomic_flag_clear(&f->logged[i]);
    f->w.logged = f->logged;
    int rc = rb_worker_init(&f->w, &f->o, 0, ep0);
    if (rc) {
        rb_fetcher_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int rb_fetcher_get(struct rb_fetcher *f, const struct rb_objset *set, const uint32_t *idx, size_t n,
                   struct rb_stats *stats, struct rb_hist *uncorrected, const volatile int *stop)
{
    return rb_fetcher_get_ranges(f, set, idx, NULL, NULL, n, stats, uncorrected, stop);
}

int rb_fetcher_get_ranges(struct rb_fetcher *f, const struct rb_objset *set, const uint32_t *idx, const uint64_t *off,
                          const uint64_t *len, size_t n, struct rb_stats *stats, struct rb_hist *uncorrected,
                          const volatile int *stop)
{
    struct rb_worker *w = &f->w;
    w->fetch = (struct rb_fetch_list){.set = set, .idx = idx, .off = len ? off : NULL, .len = len, .n = n};
    w->exhausted = false;
    w->issued = 0;
    uint64_t errors0 = w->local->errors;
    int rc = rb_worker_run(w, NULL, stop);
    int failed = (int)(w->local->errors - errors0);
    rb_worker_flush_log(w);
    rb_stats_merge(stats, w->local);
    if (uncorrected)
        rb_hist_merge(uncorrected, w->unc_local);
    rb_stats_reset(w->local);
    rb_hist_reset(w->unc_local);
    w->fetch = (struct rb_fetch_list){0};
    w->part_off = w->part_len = 0;
    return rc ? rc : failed;
}

struct rb_fwatch *rb_fetcher_watch(const struct rb_fetcher *f)
{
    return f->w.watch;
}

void rb_fetcher_free(struct rb_fetcher *f)
{
    if (!f)
        return;
    rb_worker_free(&f->w);
    free(f);
}
