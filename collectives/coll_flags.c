/* nccl-tests' flags that railbench coll takes beyond the common ones: their checks, their notes and -T's watchdog. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
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
        {"unalign", o->unalign, 0, 1024, "is out of range (use 0 to 1024 elements)"},
        {"timeout", o->timeout_s, 0, 86400 * 365, "seconds is out of range (use 0, no limit, to 31536000)"},
    };
    for (size_t i = 0; i < sizeof range / sizeof range[0]; i++)
        if (range[i].v < range[i].lo || range[i].v > range[i].hi)
            return rb_cli_usage_error("--%s: %llu %s", range[i].name, (unsigned long long)range[i].v, range[i].why);
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
    if (o->parallel_init)
        note(out, "-p", (long long)o->parallel_init, "one thread per rank, so there is nothing to initialise in parallel");
    if (o->stream_null)
        note(out, "-y", (long long)o->stream_null, "CUDA streams do not apply to CPU ranks; ignored");
    if (o->cudagraph)
        note(out, "-G", (long long)o->cudagraph,
             "CUDA graphs do not apply to CPU ranks; each operation is a call (graph: 0 below)");
    if (o->cputime)
        note(out, "-C", (long long)o->cputime,
             "times are taken on the CPU already, and every call returns complete, so cputime is the time");
    if (o->local_register)
        note(out, "-R", (long long)o->local_register, "buffer registration is the MPI library's business here; ignored");
    if (o->cta_policy >= 0)
        note(out, "-x", (long long)o->cta_policy, "CTA policies do not apply to CPU ranks; ignored");
    if (o->device_cta != 16)
        note(out, "-V", (long long)o->device_cta, "device CTAs do not apply to CPU ranks; ignored");
    if (o->per_iter_timing)
        note(out, "-I", (long long)o->per_iter_timing,
             "per-iteration timing is not implemented: the table keeps the mean of -n iterations");
    if (o->per_iter_skip)
        note(out, "-K", (long long)o->per_iter_skip, "only with -I, which is not implemented; ignored");
    if (o->blocking == 0 || o->blocking == 2)
        return;
    rb_coll_out_text(out, "# blocking -z %llu: %s\n", (unsigned long long)o->blocking,
                     o->blocking == 1 ? "a barrier after each operation, inside the time"
                                      : "a barrier after each -n iteration, outside the time");
}

/* ---- -T: a watchdog that ends the rank when one operation takes longer than the timeout ---- */

static struct {
    pthread_t thread;
    bool running;
    atomic_ullong started_ns; /* when the current operation began; 0 between operations */
    atomic_bool quit;
    uint64_t timeout_ns;
    char host[256];
} wd;

static void *watch(void *arg)
{
    (void)arg;
    const struct timespec tick = {0, 50 * 1000 * 1000};
    while (!atomic_load(&wd.quit)) {
        nanosleep(&tick, NULL);
        unsigned long long t0 = atomic_load(&wd.started_ns);
        if (t0 && rb_clock_ns() - t0 > wd.timeout_ns) {
            /* nccl-tests' words; mpirun ends the other ranks once this one exits. */
            char line[512];
            int n = snprintf(line, sizeof line, "%s: Test timeout (%llus): railbench coll\n", wd.host,
                             (unsigned long long)(wd.timeout_ns / 1000000000ull));
            if (n > 0 && write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0)
                n = 0;
            _exit(RB_EXIT_RUNTIME);
        }
    }
    return NULL;
}

int rb_coll_watchdog_start(uint64_t timeout_s, const char *host)
{
    if (timeout_s == 0)
        return 0;
    wd.timeout_ns = timeout_s * 1000000000ull;
    snprintf(wd.host, sizeof wd.host, "%s", host);
    atomic_store(&wd.started_ns, 0);
    atomic_store(&wd.quit, false);
    int rc = pthread_create(&wd.thread, NULL, watch, NULL);
    if (rc != 0)
        return -rc;
    wd.running = true;
    return 0;
}

void rb_coll_watchdog_arm(void)
{
    if (wd.running)
        atomic_store(&wd.started_ns, rb_clock_ns());
}

void rb_coll_watchdog_disarm(void)
{
    if (wd.running)
        atomic_store(&wd.started_ns, 0);
}

void rb_coll_watchdog_stop(void)
{
    if (!wd.running)
        return;
    atomic_store(&wd.quit, true);
    pthread_join(wd.thread, NULL);
    wd.running = false;
}
