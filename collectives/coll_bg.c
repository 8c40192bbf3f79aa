/* railbench coll --background: the sweep again without and with an object GET load on every rank. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <time.h>

#include "railbench/bgload.h"
#include "railbench/clock.h"
#include "railbench/units.h"
#include "run_int.h"

#define BG_MAX_SIZES 64

void rb_coll_bg_options(struct rb_opts *t, struct rb_coll_bg *bg)
{
    const struct rb_opt rows[] = {
        {"background", 0, RB_OPT_STR, &bg->url, "URL",
         "after the table, the sweep again without and with an object GET load on every rank (http://, s3://, "
         "ais://), out-of-place busbw side by side", NULL},
        {"bg-objects", 0, RB_OPT_U64, &bg->objects, "N", "--background: objects <prefix>obj-<index>, split over ranks",
         NULL},
        {"bg-threads", 0, RB_OPT_U64, &bg->threads, "N", "--background: load threads per rank", NULL},
        {"bg-inflight", 0, RB_OPT_U64, &bg->inflight, "N", "--background: requests in flight per thread (closed loop)",
         NULL},
        {"bg-rate", 0, RB_OPT_RATE, &bg->rate, "R/s", "--background: open loop at R requests/s per rank (0: closed)",
         NULL},
        {"bg-alone", 0, RB_OPT_DURATION, &bg->alone_ns, "D",
         "--background: the load alone this long; each pass repeats the sweep at least this long", NULL},
        {0},
    };
    rb_opts_add(t, rows);
}

/*
 * Rank 0: the mean busbw of each size over sweeps repeated until --bg-alone
 * has passed (on rank 0's clock, so every rank runs as many), so the load's
 * window with the collective is as long as its window alone. Collective.
 */
static void sweep_for(struct rb_coll_run *R, const struct rb_coll_test *t, enum rb_coll_algo algo,
                      struct rb_coll_args *a, const uint64_t *sizes, size_t n, double *busbw)
{
    const uint64_t t0 = rb_clock_ns();
    int more = 1, reps = 0;
    for (size_t i = 0; i < n; i++)
        busbw[i] = 0;
    while (more) {
        for (size_t i = 0; i < n; i++)
            busbw[i] += rb_coll_run_busbw(R, t, algo, a, sizes[i]);
        reps++;
        more = rb_clock_ns() - t0 < R->bg->alone_ns && reps < 10000 && !rb_harness_signalled();
        RB_MPI_CHECK(MPI_Bcast(&more, 1, MPI_INT, 0, R->h->comm));
    }
    for (size_t i = 0; i < n; i++)
        busbw[i] = rb_coll_fig(busbw[i] / reps);
}

/* Every rank's load stats summed on rank 0 (counts and histogram buckets add; min and max reduced apart). */
static void bg_reduce(struct rb_coll_run *R, struct rb_stats *s)
{
    struct rb_stats *sum = rb_stats_new();
    uint64_t mm[4], mm_all[4];
    if (!sum)
        rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "out of memory");
    rb_stats_minmax_pack(s, mm);
    RB_MPI_CHECK(MPI_Reduce(s, sum, (int)RB_STATS_U64S, MPI_UINT64_T, MPI_SUM, 0, R->h->comm));
    RB_MPI_CHECK(MPI_Reduce(mm, mm_all, 4, MPI_UINT64_T, MPI_MIN, 0, R->h->comm));
    if (R->h->rank == 0) {
        *s = *sum;
        rb_stats_minmax_unpack(s, mm_all);
    }
    rb_stats_free(sum);
}

/* The load's figures over a window: requests, errors, bytes/s and latency p99 (null when nothing completed). */
static cJSON *bg_window_json(const struct rb_stats *s, double dur_s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "requests", rb_json_u64(s->ops));
    cJSON_AddItemToObject(o, "errors", rb_json_u64(s->errors));
    cJSON_AddNumberToObject(o, "duration_s", dur_s);
    cJSON_AddItemToObject(o, "bytes_per_s", s->ops && dur_s > 0 ? cJSON_CreateNumber((double)s->bytes / dur_s)
                                                                : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "latency_p99_ns",
                          s->ops ? rb_json_u64(rb_hist_percentile(&s->lat, 99)) : cJSON_CreateNull());
    return o;
}

/* Sleeps d ns (the load runs alone meanwhile). */
static void bg_sleep(uint64_t d)
{
    struct timespec ts = {(time_t)(d / RB_NS_PER_S), (long)(d % RB_NS_PER_S)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !rb_harness_signalled())
        ;
}

/* Rank 0: the per-size rows and the load's windows as text and as summary.background. */
static cJSON *bg_report(struct rb_coll_run *R, const uint64_t *sizes, const double *alone, const double *with, size_t n,
                        const struct rb_stats *s_alone, double alone_s, const struct rb_stats *s_with, double with_s)
{
    const struct rb_coll_bg *bg = R->bg;
    cJSON *o = cJSON_CreateObject(), *rows = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "url", bg->url);
    cJSON_AddNumberToObject(o, "rate_per_s", bg->rate);
    cJSON_AddItemToObject(o, "inflight", rb_json_u64(bg->rate > 0 ? 0 : bg->inflight * bg->threads));
    rb_coll_out_text(&R->out, "#\n# Background load: GET %s on every rank (%s), %s %s, out-of-place busbw (GB/s)\n"
                              "#        size     alone  with load     ratio\n",
                     bg->url, bg->rate > 0 ? "open loop at --bg-rate per rank" : "closed loop",
                     R->tests[0]->name, rb_coll_algo_name(R->algos[0]));
    for (size_t i = 0; i < n; i++) {
        double ratio = alone[i] > 0 ? rb_coll_fig(with[i] / alone[i]) : 0.0;
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToObject(r, "size_bytes", rb_json_u64(sizes[i]));
        cJSON_AddNumberToObject(r, "busbw_gbps", alone[i]);
        cJSON_AddNumberToObject(r, "busbw_with_load_gbps", with[i]);
        cJSON_AddItemToObject(r, "ratio", alone[i] > 0 ? cJSON_CreateNumber(ratio) : cJSON_CreateNull());
        cJSON_AddItemToArray(rows, r);
        rb_coll_out_text(&R->out, "# %12llu  %8.3f  %9.3f  %8.3f\n", (unsigned long long)sizes[i], alone[i], with[i],
                         ratio);
    }
    cJSON_AddItemToObject(o, "rows", rows);
    cJSON *la = bg_window_json(s_alone, alone_s), *lw = bg_window_json(s_with, with_s);
    cJSON_AddItemToObject(o, "load_alone", la);
    cJSON_AddItemToObject(o, "load_with_collective", lw);
    char pa[16] = "-", pw[16] = "-";
    if (s_alone->ops)
        rb_format_duration_human(pa, sizeof pa, rb_hist_percentile(&s_alone->lat, 99));
    if (s_with->ops)
        rb_format_duration_human(pw, sizeof pw, rb_hist_percentile(&s_with->lat, 99));
    rb_coll_out_text(&R->out, "# load alone: %.2f MiB/s, p99 %s (%llu requests in %.2f s); with the collective: "
                              "%.2f MiB/s, p99 %s (%llu requests in %.2f s)\n",
                     alone_s > 0 ? (double)s_alone->bytes / alone_s / (double)RB_MIB : 0.0, pa,
                     (unsigned long long)s_alone->ops, alone_s,
                     with_s > 0 ? (double)s_with->bytes / with_s / (double)RB_MIB : 0.0, pw,
                     (unsigned long long)s_with->ops, with_s);
    return o;
}

/*
 * --background: the sweep once more, out-of-place, without and then with a
 * GET load on every rank; the load alone for --bg-alone before the second
 * pass, then during it. Collective. Returns 0 or an exit status; rank 0's
 * record in *rec.
 */
int rb_coll_bg_pass(struct rb_coll_run *R, cJSON **rec)
{
    const struct rb_coll_test *t = R->tests[0];
    enum rb_coll_algo algo = R->algos[0];
    const struct rb_coll_bg *bg = R->bg;
    struct rb_harness *h = R->h;
    if (!t->run[algo] || (algo == RB_COLL_ALGO_HIER && !R->rl.hier_ok))
        return 0; /* not applicable: said in the table already */
    const struct rb_bgload_opts bo = {bg->url, bg->objects, (unsigned)bg->threads, (unsigned)bg->inflight, bg->rate,
                                      bg->timeout_ns};
    struct rb_bgload *b = NULL;
    int status = rb_bgload_open(h, &bo, &b);
    if (status)
        return status;
    uint64_t sizes[BG_MAX_SIZES];
    double alone[BG_MAX_SIZES], with[BG_MAX_SIZES];
    size_t n = 0;
    for (uint64_t size = R->o->minbytes; n < BG_MAX_SIZES; n++) {
        sizes[n] = size;
        if (!rb_coll_run_next_size(R->o, &size)) {
            n++;
            break;
        }
    }
    struct rb_coll_args a;
    const struct rb_coll_kind_def *kd = rb_coll_kind_def(t->kind);
    rb_coll_run_args(R, &a, R->types[0], kd->reduces ? R->ops[0] : RB_COLL_NONE, kd->rooted ? R->root : -1);
    sweep_for(R, t, algo, &a, sizes, n, alone);
    struct rb_stats *sa = rb_stats_new(), *sw = rb_stats_new();
    if (!sa || !sw || rb_bgload_start(b) != 0)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "--background: cannot start the load");
    uint64_t t0 = rb_clock_ns();
    bg_sleep(bg->alone_ns);
    rb_bgload_take(b, sa);
    uint64_t t1 = rb_clock_ns();
    sweep_for(R, t, algo, &a, sizes, n, with);
    rb_bgload_stop(b);
    uint64_t t2 = rb_clock_ns();
    rb_bgload_take(b, sw);
    rb_bgload_free(b);
    bg_reduce(R, sa);
    bg_reduce(R, sw);
    if (h->rank == 0)
        *rec = bg_report(R, sizes, alone, with, n, sa, (double)(t1 - t0) / 1e9, sw, (double)(t2 - t1) / 1e9);
    rb_stats_free(sa);
    rb_stats_free(sw);
    return 0;
}

/* --background's options: one line and RB_EXIT_USAGE when they do not make a load, else 0 (R->bg set when given). */
int rb_coll_bg_check(struct rb_coll_run *R, const struct rb_coll_bg *bg)
{
    if (!bg->url)
        return 0;
    if (bg->objects < 1 || bg->objects > UINT32_MAX)
        return rb_cli_usage_error("--background: give --bg-objects N, 1 to %u (the objects <prefix>obj-<index> to GET)",
                                  UINT32_MAX);
    if (bg->threads < 1 || bg->threads > 64)
        return rb_cli_usage_error("--bg-threads %llu: expected 1 to 64", (unsigned long long)bg->threads);
    if (bg->inflight < 1 || bg->inflight > 4096)
        return rb_cli_usage_error("--bg-inflight %llu: expected 1 to 4096", (unsigned long long)bg->inflight);
    if (bg->rate < 0)
        return rb_cli_usage_error("--bg-rate %g: expected 0 (closed loop) or more requests/s", bg->rate);
    if (R->ntests != 1 || R->nalgos != 1 || R->ntypes != 1 || R->nops != 1 || R->root_all || R->o->run_cycles != 1)
        return rb_cli_usage_error("--background: give one collective, one --algo, one -d, one -o, one root and -N 1 "
                                  "(the pass repeats one sweep)");
    R->bg = bg;
    return 0;
}
