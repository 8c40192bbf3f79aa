/* MPI test of the harness: every rank records known values; rank 0 checks the merged totals. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "railbench/clock.h"
#include "railbench/harness.h"

struct ctx {
    int rank;
    uint64_t n, i, per_collect, burn_ms;
    bool forever;
};

/* Spends ms milliseconds of this thread's CPU. */
static void burn(uint64_t ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    while ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t.tv_nsec - (uint64_t)t0.tv_nsec < ms * 1000000u);
}

/* The phase's start: the CPU the phase's cpu_s must count. */
static int start(void *arg)
{
    burn(((struct ctx *)arg)->burn_ms);
    return 0;
}

/* The value rank r records as its i-th latency; the same formula rebuilds the expected histogram. */
static uint64_t value(int r, uint64_t i)
{
    return (uint64_t)r * 1000 + i % 1000 + 1 + (i % 7 == 0 ? 1000000 * (uint64_t)(r + 1) : 0);
}

static void collect(void *arg, struct rb_stats *into)
{
    struct ctx *c = arg;
    for (uint64_t k = 0; k < c->per_collect && (c->forever || c->i < c->n); k++, c->i++) {
        into->ops++;
        into->bytes += 10;
        rb_hist_record(&into->lat, value(c->rank, c->i));
        if (c->i % 100 == 0)
            rb_stats_error(into, 1);
    }
}

static bool done(void *arg)
{
    struct ctx *c = arg;
    return !c->forever && c->i >= c->n;
}

int main(int argc, char **argv)
{
    bool forever = false;
    uint64_t per_collect = 250, burn_ms = 0, burn_before_ms = 0, stall_rank = UINT64_MAX;
    const struct rb_opt opts[] = {
        {"burn-ms", 0, RB_OPT_U64, &burn_ms, "MS", "CPU each rank spends in the phase", NULL},
        {"burn-before-ms", 0, RB_OPT_U64, &burn_before_ms, "MS", "CPU each rank spends before the phase", NULL},
        {"forever", 0, RB_OPT_FLAG, &forever, NULL, "record until a signal arrives", NULL},
        {"per-collect", 0, RB_OPT_U64, &per_collect, "N", "values recorded per tick", NULL},
        {"stall-rank", 0, RB_OPT_U64, &stall_rank, "R", "after the phase, rank R sleeps 60 s before a barrier the "
         "others wait in (rank 0's record watchdog)", NULL},
        {0},
    };
    const struct rb_cmd_spec spec = {"mpi_harness [options]", "harness test", opts, 0, 0, false};
    struct rb_cli cli;
    if (rb_cli_parse(&cli, &spec, argc, argv) != 0)
        return 2;
    struct rb_harness h;
    if (rb_harness_init(&h, "test harness", &cli, &(struct rb_harness_opts){.mpi = true}) != 0)
        return 3;
    struct ctx c = {.rank = h.rank, .n = (uint64_t)(h.rank + 1) * 1000, .per_collect = per_collect,
                    .burn_ms = burn_ms, .forever = forever};
    burn(burn_before_ms);
    static const char *const errs[] = {"connect", "http_4xx", NULL};
    struct rb_phase p = {.name = "test", .op = "REC", .names = {errs, NULL}, .start = start,
                         .collect = collect, .done = done, .ctx = &c};
    int rc = rb_harness_run_phase(&h, &p);
    if (rc == 0 && h.rank == 0 && !forever) {
        struct rb_hist *want = rb_hist_new();
        uint64_t ops = 0;
        for (int r = 0; r < h.size; r++)
            for (uint64_t i = 0; i < (uint64_t)(r + 1) * 1000; i++, ops++)
                rb_hist_record(want, value(r, i));
        const struct rb_stats *t = p.total;
        bool same = t->ops == ops && t->bytes == 10 * ops && t->err[1] == (ops + 99) / 100 - 0 &&
                    memcmp(want->counts, t->lat.counts, sizeof want->counts) == 0 &&
                    want->count == t->lat.count && want->sum_ns == t->lat.sum_ns &&
                    want->min_ns == t->lat.min_ns && want->max_ns == t->lat.max_ns;
        /* Errors: rank r records one at i = 0, 100, ..., so ceil(n_r / 100) each. */
        uint64_t errs_want = 0;
        for (int r = 0; r < h.size; r++)
            errs_want += ((uint64_t)(r + 1) * 1000 + 99) / 100;
        same = same && t->err[1] == errs_want && t->errors == errs_want;
        rb_result_check(&h.result, "totals", same,
                        "ops %llu (want %llu), errors %llu (want %llu), histogram %s",
                        (unsigned long long)t->ops, (unsigned long long)ops,
                        (unsigned long long)t->errors, (unsigned long long)errs_want,
                        memcmp(want->counts, t->lat.counts, sizeof want->counts) ? "differs" : "equal");
        rb_hist_free(want);
    }
    if (stall_rank < (uint64_t)h.size) {
        if ((uint64_t)h.rank == stall_rank)
            sleep(60);
        RB_MPI_CHECK(MPI_Barrier(h.comm));
    }
    rc = rb_harness_finish(&h, NULL, rc);
    rb_harness_phase_free(&p);
    rb_cli_free(&cli);
    return rc;
}
