/* nccl-tests' flags that railbench coll takes beyond the common ones: their checks, their notes and -T's watchdog. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <strings.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll_int.h"
#include "railbench/cli.h"
#include "railbench/clock.h"

int rb_coll_flags_check(const struct rb_coll_opts *o)
{
    /* Flags whose value must stay inside [lo, hi], with what to use instead. */
    const struct {
        const char *name;
        uint64_t v, lo, hi;
        const char *why;
    } range[] = {
        {"nthreads", o->nthreads, 1, 1, "threads per rank: use -t 1, and more ranks for more workers"},
        {"ngpus", o->ngpus, 1, 1, "devices per rank: use -g 1 (each rank drives one device, here its CPU), "
                                  "and more ranks"},
        {"device_implementation", o->device_impl, 0, 0, "names a GPU kernel, and CPU ranks have none (use -D 0)"},
        {"agg_iters", o->agg_iters, 1, 1000000, "is out of range (use 1 to 1000000, e.g. -m 1)"},
        {"blocking", o->blocking, 0, 3, "is not a mode (use 0, 1 barrier after each operation, 2 no barrier, 3 "
                                        "barrier after each -n iteration, outside the time)"},
        {"per_iter_timing", o->per_iter_timing, 0, 1, "is not 0 or 1"},
        {"report_cputime", o->cputime, 0, 1, "is not 0 or 1"},
        {"report_timestamps", o->timestamps, 0, 1, "is not 0 or 1"},
        {"unalign", o->unalign, 0, 1024, "is out of range (use 0 to 1024 elements)"},
        {"timeout", o->timeout_s, 0, 86400 * 365, "seconds is out of range (use 0, no limit, to 31536000)"},
    };
    for (size_t i = 0; i < sizeof range / sizeof range[0]; i++)
        if (range[i].v < range[i].lo || range[i].v > range[i].hi)
            return rb_cli_usage_error("--%s: %llu %s", range[i].name, (unsigned long long)range[i].v, range[i].why);
    /* nccl-tests warns and drops such a -K; here it is a usage error, never a silent change. */
    if (o->per_iter_skip && !o->per_iter_timing)
        return rb_cli_usage_error("--per_iter_skip: %llu needs per-iteration timing (-I 1)",
                                  (unsigned long long)o->per_iter_skip);
    if (o->per_iter_skip >= o->iters && o->per_iter_skip)
        return rb_cli_usage_error("--per_iter_skip: %llu leaves no iteration of -n %llu (use 0 to %llu)",
                                  (unsigned long long)o->per_iter_skip, (unsigned long long)o->iters,
                                  (unsigned long long)(o->iters ? o->iters - 1 : 0));
    return 0;
}

int rb_coll_usage_exit(int status)
{
    if (status == RB_EXIT_USAGE && !rb_cli_first_rank()) {
        const struct timespec wait = {3, 0};
        nanosleep(&wait, NULL); /* mpirun ends this rank once rank 0 has exited */
    }
    return status;
}

/* One "# -X V: why" line for a flag given a value that means nothing on CPU ranks. */
static void note(struct rb_coll_out *out, const char *flag, long long v, const char *why)
{
    rb_coll_out_text(out, "# note: %s %lld: %s\n", flag, v, why);
}

void rb_coll_flags_notes(struct rb_coll_out *out)
{
    const struct rb_coll_opts *o = out->o;
    /* nccl-tests 2.19's lines first, in its words and order (writeDeviceReport). */
    static const char *const blocking[4] = {
        NULL, "wait and barrier after each inner iteration (-m) ", "wait after each inner iteration (-m), no barrier ",
        "wait and barrier after each outer iteration (-n); time excludes barrier "};
    if (o->blocking >= 1 && o->blocking <= 3)
        rb_coll_out_text(out, "# Blocking Enabled: %s\n", blocking[o->blocking]);
    if (o->per_iter_timing) { /* with the clock it uses here */
        rb_coll_out_text(out, "# Per-Iteration Report: CPU clock timing; i_* uses max over process rows");
        if (o->per_iter_skip)
            rb_coll_out_text(out, "; summary skips first %llu iterations", (unsigned long long)o->per_iter_skip);
        rb_coll_out_text(out, " \n");
    }
    if (o->parallel_init)
        note(out, "-p", (long long)o->parallel_init, "one thread per rank, so there is nothing to initialise in parallel");
    if (o->stream_null)
        note(out, "-y", (long long)o->stream_null, "CUDA streams do not apply to CPU ranks; ignored");
    if (o->cudagraph)
        note(out, "-G", (long long)o->cudagraph,
             "CUDA graphs do not apply to CPU ranks; each operation is a call (graph: 0 below)");
    if (o->local_register)
        note(out, "-R", (long long)o->local_register, "buffer registration is the MPI library's business here; ignored");
    if (o->cta_policy >= 0)
        note(out, "-x", (long long)o->cta_policy, "CTA policies do not apply to CPU ranks; ignored");
    if (o->device_cta != 16)
        note(out, "-V", (long long)o->device_cta, "device CTAs do not apply to CPU ranks; ignored");
}

/* ---- NCCL_TESTS_SPLIT: ranks split into groups that run the collective in parallel ---- */

/* nccl-tests' parseInt: leading blanks, then 0b binary or strtoul's base 0; here the rest must be blank too. */
static int split_int(const char *s, long *v)
{
    char *end;
    while (isspace((unsigned char)*s))
        s++;
    int base = strncasecmp(s, "0b", 2) == 0 ? 2 : 0;
    if (base)
        s += 2;
    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    unsigned long u = strtoul(s, &end, base);
    while (isspace((unsigned char)*end))
        end++;
    if (errno || *end || u > INT_MAX)
        return -EINVAL;
    *v = (long)u;
    return 0;
}

int rb_coll_split_color(const char *expr, int rank, int *color)
{
    /* nccl-tests' words and symbols, case-insensitive (src/common.cu run()). */
    static const struct {
        const char *word, *sym;
        char op;
    } ops[] = {{"AND", "&", '&'}, {"OR", "|", '|'}, {"MOD", "%", '%'}, {"DIV", "/", '/'}};
    while (isspace((unsigned char)*expr))
        expr++;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        size_t wl = strlen(ops[i].word);
        const char *rest = strncasecmp(expr, ops[i].word, wl) == 0 ? expr + wl
                           : strncmp(expr, ops[i].sym, 1) == 0  ? expr + 1
                                                                : NULL;
        long v;
        if (!rest || split_int(rest, &v) != 0)
            continue;
        if ((ops[i].op == '%' || ops[i].op == '/') && v == 0)
            return -EINVAL;
        *color = ops[i].op == '&'   ? (int)(rank & v)
                 : ops[i].op == '|' ? (int)(rank | v)
                 : ops[i].op == '%' ? (int)(rank % v)
                                    : (int)(rank / v);
        return 0;
    }
    return -EINVAL;
}

int rb_coll_split_mask_color(const char *hex, int rank, int *color)
{
    char *end;
    errno = 0;
    unsigned long m = strtoul(hex, &end, 16);
    if (errno || end == hex || *end)
        return -EINVAL;
    *color = (int)((unsigned long)rank & m);
    return 0;
}

/* ---- -I: per-iteration figures (nccl-tests' computeIterStats and per-iteration report) ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* nccl-tests' percentileIndex: the p-th percentile of n sorted values is at this index. */
static size_t pct_index(size_t n, unsigned p)
{
    size_t i = (n * p + 99) / 100 - 1;
    return i < n - 1 ? i : n - 1;
}

void rb_coll_iter_stats(const double *t, size_t n, struct rb_coll_iter_stats *s)
{
    double *sorted = malloc(n * sizeof *sorted);
    if (!sorted || n == 0) {
        free(sorted);
        s->have = false;
        return;
    }
    memcpy(sorted, t, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    double sum = 0, var = 0;
    for (size_t i = 0; i < n; i++)
        sum += sorted[i];
    s->avg_us = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        var += (sorted[i] - s->avg_us) * (sorted[i] - s->avg_us);
    s->min_us = sorted[0];
    s->max_us = sorted[n - 1];
    s->p50_us = sorted[n / 2];
    s->p95_us = sorted[pct_index(n, 95)];
    s->p99_us = sorted[pct_index(n, 99)];
    s->stdev_us = sqrt(var / (double)n);
    s->cv_pct = s->avg_us > 0 ? s->stdev_us / s->avg_us * 100.0 : 0.0;
    s->have = true;
    free(sorted);
}

/* nccl-tests' *_per_iter record: the figures, every iteration's time and, with several ranks, each rank's. */
static cJSON *iter_json(const struct rb_coll_iter_stats *s, const double *times, const double *all, uint64_t n,
                        int ranks)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "skipped_iterations", (double)s->skipped);
    const struct {
        const char *key;
        double v;
    } f[] = {{"min_us", s->min_us}, {"max_us", s->max_us}, {"avg_us", s->avg_us}, {"p50_us", s->p50_us},
             {"p95_us", s->p95_us}, {"p99_us", s->p99_us}, {"stdev_us", s->stdev_us}, {"cv_pct", s->cv_pct}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        cJSON_AddNumberToObject(o, f[i].key, f[i].v);
    cJSON_AddItemToObject(o, "times_us", cJSON_CreateDoubleArray(times, (int)n));
    if (ranks > 1) {
        cJSON *rows = cJSON_AddArrayToObject(o, "per_process_max_times_us");
        for (int r = 0; r < ranks; r++)
            cJSON_AddItemToArray(rows, cJSON_CreateDoubleArray(all + (size_t)r * n, (int)n));
    }
    return o;
}

void rb_coll_iter_gather(struct rb_harness *h, const double *iter_us, uint64_t n, uint64_t skip,
                         struct rb_coll_half *res)
{
    double *all = h->rank == 0 ? malloc((size_t)h->size * n * sizeof *all) : NULL;
    double *times = h->rank == 0 ? malloc(n * sizeof *times) : NULL;
    if (h->rank == 0 && (!all || !times))
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    RB_MPI_CHECK(MPI_Gather(iter_us, (int)n, MPI_DOUBLE, all, (int)n, MPI_DOUBLE, 0, h->comm));
    if (h->rank == 0) {
        for (uint64_t i = 0; i < n; i++) {
            times[i] = all[i];
            for (int r = 1; r < h->size; r++)
                times[i] = all[(size_t)r * n + i] > times[i] ? all[(size_t)r * n + i] : times[i];
        }
        rb_coll_iter_stats(times + skip, (size_t)(n - skip), &res->iter);
        res->iter.skipped = skip;
        res->iter_json = iter_json(&res->iter, times, all, n, h->size);
    }
    free(all);
    free(times);
}

/* ---- the watchdog: -T, and an operation that never returns after a signal ---- */

#define WD_CLAIMED ULLONG_MAX                    /* started_ns once the watchdog has taken over the process */
#define WD_SIGNAL_STUCK_NS (400ull * 1000 * 1000) /* an operation still running this long after a signal */

static struct {
    pthread_t thread;
    bool running;
    atomic_ullong started_ns; /* when the current operation began; 0 between operations */
    atomic_ullong expect_ns;  /* how long one operation of the row takes (the slowest rank's untimed one) */
    atomic_bool quit;
    uint64_t timeout_ns;      /* -T; 0: none */
    char host[256];
    void (*last_record)(void *ctx, const char *why);
    void *ctx;
} wd;

static void *watch(void *arg)
{
    (void)arg;
    const struct timespec tick = {0, 50 * 1000 * 1000};
    uint64_t signal_seen = 0;
    while (!atomic_load(&wd.quit)) {
        nanosleep(&tick, NULL);
        unsigned long long t0 = atomic_load(&wd.started_ns);
        uint64_t now = rb_clock_ns();
        if (!signal_seen && rb_harness_signalled())
            signal_seen = now;
        bool timed_out = wd.timeout_ns && t0 && now - t0 > wd.timeout_ns;
        /* After a signal the ranks agree between operations; one that does not come back (0.4 s, or 4 times what
         * an operation of the row takes) is waiting for a rank that died or stopped, and mpirun sends SIGKILL 1 s
         * after SIGTERM. Only the rank that writes the record (rank 0: last_record) acts on it. */
        uint64_t bound = 4 * atomic_load(&wd.expect_ns);
        bound = bound > WD_SIGNAL_STUCK_NS ? bound : WD_SIGNAL_STUCK_NS;
        bool stuck = wd.last_record && signal_seen && t0 && now - signal_seen > WD_SIGNAL_STUCK_NS && now - t0 > bound;
        if (!(timed_out || stuck) || !atomic_compare_exchange_strong(&wd.started_ns, &t0, WD_CLAIMED))
            continue;
        /* The main thread is inside the operation and will not touch the record again (disarm waits). */
        char why[512];
        if (timed_out)
            snprintf(why, sizeof why, "an operation took longer than -T %llus", (unsigned long long)(wd.timeout_ns / 1000000000ull));
        else
            snprintf(why, sizeof why, "an operation did not return %.1f s after a signal", (double)(now - t0) / 1e9);
        if (timed_out) { /* nccl-tests' words; mpirun ends the other ranks once this one exits. */
            char line[512];
            int n = snprintf(line, sizeof line, "%s: Test timeout (%llus): railbench coll\n", wd.host,
                             (unsigned long long)(wd.timeout_ns / 1000000000ull));
            if (n > 0 && write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0)
                n = 0;
        }
        if (wd.last_record)
            wd.last_record(wd.ctx, why);
        _exit(RB_EXIT_RUNTIME);
    }
    return NULL;
}

int rb_coll_watchdog_start(uint64_t timeout_s, const char *host, void (*last_record)(void *ctx, const char *why),
                           void *ctx)
{
    wd.timeout_ns = timeout_s * 1000000000ull;
    snprintf(wd.host, sizeof wd.host, "%s", host);
    wd.last_record = last_record;
    wd.ctx = ctx;
    atomic_store(&wd.started_ns, 0);
    atomic_store(&wd.quit, false);
    int rc = pthread_create(&wd.thread, NULL, watch, NULL);
    if (rc != 0)
        return -rc;
    wd.running = true;
    return 0;
}

void rb_coll_watchdog_expect(uint64_t op_ns)
{
    atomic_store(&wd.expect_ns, op_ns);
}

void rb_coll_watchdog_arm(void)
{
    if (wd.running)
        atomic_store(&wd.started_ns, rb_clock_ns());
}

void rb_coll_watchdog_disarm(void)
{
    if (wd.running && atomic_exchange(&wd.started_ns, 0) == WD_CLAIMED)
        for (;;) /* the watchdog is writing the record and ends the process */
            pause();
}

void rb_coll_watchdog_stop(void)
{
    if (!wd.running)
        return;
    atomic_store(&wd.quit, true);
    pthread_join(wd.thread, NULL);
    wd.running = false;
}
