/* A GET or PUT phase on the harness, and its warp-like summary (JSON row and markdown report). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwatch_int.h"
#include "multipart_int.h"
#include "phase_int.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "railbench/prom.h"
#include "railbench/result.h"
#include "railbench/units.h"
#include "steady_int.h"


static const char *const extra_names_nocache[] = {"redirects", NULL};
static const char *const no_extra_names[] = {NULL}; /* a ranged GET's parts: no counters beyond the classes */

struct phase_ctx {
    struct rb_engine *e;
    struct rb_hist *unc;  /* this rank's uncorrected latencies over the phase */
    const char *name;
    bool use_steady, steady_by_bytes, steady_now; /* --until-steady: steady_now on every rank once rank 0 says so */
    struct rb_steady steady;                      /* rank 0 */
    uint64_t delay_ns;                            /* po->start_delay_ns */
    uint64_t t0_ns;                               /* this rank's start (before any start delay) */
    bool stop_hopeless, hopeless;                 /* po->stop_hopeless; hopeless on every rank once seen */
    uint64_t refused;                             /* the 403s and 404s, all ranks, when found hopeless */
    double hopeless_s;                            /* when it was found (tick time) */
};

static int ph_start(void *arg)
{
    struct phase_ctx *c = arg;
    c->t0_ns = rb_clock_ns();
    if (c->delay_ns)
        rb_clock_sleep_ns(c->delay_ns, rb_harness_signal_flag());
    int rc = rb_engine_start(c->e);
    if (rc)
        rb_error("cannot start the load threads: %s", strerror(-rc));
    return rc;
}

static void ph_collect(void *arg, struct rb_stats *into)
{
    struct phase_ctx *c = arg;
    rb_engine_collect(c->e, into, c->unc);
}

/* --until-steady: rank 0 feeds the merged interval to the detector and tells every rank when it is steady. */
static void steady_tick(struct phase_ctx *c, struct rb_harness *h, const struct rb_stats *interval, double t_s)
{
    int now = 0;
    if (h->rank == 0 && interval) {
        double amount = c->steady_by_bytes ? (double)interval->bytes : (double)(interval->ops - interval->errors);
        now = rb_steady_add(&c->steady, t_s, amount);
    }
    if (h->mpi)
        RB_MPI_CHECK(MPI_Bcast(&now, 1, MPI_INT, 0, h->comm));
    c->steady_now = now != 0;
}

/*
 * stop_hopeless: the requests every rank recorded so far and those answered
 * 403 or 404, summed; hopeless when at least RB_LOAD_HOPELESS_REQUESTS were
 * made and every one of them was refused, while a rank still has work to do
 * (a phase that ended by itself was not stopped). The same verdict on every rank.
 */
static void hopeless_tick(struct phase_ctx *c, struct rb_harness *h, double t_s)
{
    uint64_t mine[3], all[3];
    rb_engine_refusals(c->e, &mine[0], &mine[1]);
    mine[2] = !rb_engine_done(c->e); /* a phase that ended by itself was not stopped early */
    for (int i = 0; i < 3; i++)
        all[i] = mine[i];
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_SUM, h->comm));
    if (all[2] && all[0] >= RB_LOAD_HOPELESS_REQUESTS && all[1] == all[0]) {
        c->hopeless = true;
        c->refused = all[1];
        c->hopeless_s = t_s;
    }
}

/* The steady-state check, then in-flight requests summed over ranks as a gauge (only when metrics were asked for). */
static void ph_tick(void *arg, struct rb_harness *h, const struct rb_stats *interval, double t_s)
{
    struct phase_ctx *c = arg;
    if (c->use_steady)
        steady_tick(c, h, interval, t_s);
    if (c->stop_hopeless && !c->hopeless)
        hopeless_tick(c, h, t_s);
    if (!h->metrics)
        return;
    unsigned long long mine = rb_engine_inflight(c->e), all = mine;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Reduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, h->comm));
    char phase[256], labels[300];
    rb_prom_escape(phase, sizeof phase, c->name);
    snprintf(labels, sizeof labels, "phase=\"%s\"", phase);
    rb_harness_metric(h, "railbench_inflight_requests", "gauge", "Requests in flight at the last tick, all ranks.",
                      labels, (double)all);
}

static bool ph_done(void *arg)
{
    struct phase_ctx *c = arg;
    /* A target found hopeless, or a stuck file system call (the watchdog), ends the phase too. */
    return c->steady_now || c->hopeless || rb_engine_done(c->e) || rb_fwatch_fired();
}

static void ph_stop(void *arg)
{
    struct phase_ctx *c = arg;
    rb_engine_stop(c->e);
}

/* The until_steady object of a phase record and summary row: what was asked and whether it converged. */
static cJSON *steady_json(const struct rb_load_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "pct", r->steady_pct);
    cJSON_AddNumberToObject(o, "window_s", r->steady_window_s);
    cJSON_AddBoolToObject(o, "converged", r->steady_converged);
    if (r->steady_converged)
        cJSON_AddNumberToObject(o, "converged_at_s", r->steady_at_s);
    else
        cJSON_AddNullToObject(o, "converged_at_s");
    return o;
}

static int add_leftover(const char *name, void *arg)
{
    return rb_objset_add(arg, name, 0);
}

/* load mixed: each op's stats and the live counts summed on rank 0; every rank keeps the names cleanup deletes. */
static void mix_results(struct rb_harness *h, const struct rb_engine *e, const struct rb_load_opts *o,
                        struct rb_load_result *res)
{
    if (!o->mix)
        return;
    for (int op = 0; op < RB_MIX_OPS; op++) {
        struct rb_stats *mine = rb_stats_new(), *all = rb_stats_new();
        if (!mine || !all)
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
        rb_engine_mix_stats(e, (enum rb_load_op)op, mine);
        rb_harness_reduce_stats(h, mine, all);
        rb_stats_free(mine);
        if (h->rank != 0)
            rb_stats_free(all), all = NULL;
        res->mix_ops[op] = all;
    }
    uint64_t mine[3], all[3];
    rb_engine_mix_live(e, &mine[0], &mine[1], &mine[2]);
    memcpy(all, mine, sizeof all);
    if (h->mpi && h->size > 1)
        RB_MPI_CHECK(MPI_Reduce(mine, all, 3, MPI_UINT64_T, MPI_SUM, 0, h->comm));
    res->mix_live = all[0];
    res->mix_unknown = all[1];
    res->mix_dry = all[2];
    if (rb_engine_mix_each_live(e, add_leftover, &res->leftover))
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
}

/* What collect gathers from e's workers, summed over ranks (rank 0; NULL elsewhere). Collective. */
static struct rb_stats *ranks_sum(struct rb_harness *h, const struct rb_engine *e,
                                  void (*collect)(const struct rb_engine *e, struct rb_stats *into))
{
    struct rb_stats *mine = rb_stats_new(), *all = rb_stats_new();
    if (!mine || !all)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    collect(e, mine);
    rb_harness_reduce_stats(h, mine, all);
    rb_stats_free(mine);
    if (h->rank == 0)
        return all;
    rb_stats_free(all);
    return NULL;
}

/*
 * A multipart PUT's or ranged GET's per-part statistics, or a GET's tar samples (o->tar_samples), summed over ranks
 * (rank 0; NULL elsewhere and without either). Collective.
 */
static struct rb_stats *part_stats(struct rb_harness *h, const struct rb_engine *e, const struct rb_load_opts *o)
{
    bool samples = o->tar_samples && o->op == RB_LOAD_GET;
    if (!samples && (!o->part_size || (o->op != RB_LOAD_PUT && o->op != RB_LOAD_GET)))
        return NULL;
    return ranks_sum(h, e, rb_engine_part_stats);
}

/* An https:// endpoint's handshakes on the native engine, summed over ranks (rank 0; NULL elsewhere). Collective. */
static struct rb_stats *tls_stats(struct rb_harness *h, const struct rb_engine *e, const struct rb_load_opts *o,
                                  bool *unmeasured)
{
    bool tls = false;
    for (size_t i = 0; i < o->target->nendpoints; i++)
        tls = tls || rb_target_endpoint_tls(o->target, i);
    *unmeasured = tls && rb_engine_kind(o) != RB_ENGINE_NATIVE;
    return !tls || *unmeasured ? NULL : ranks_sum(h, e, rb_engine_tls_stats);
}

/* The engine's 1-second segments summed over the ranks (collective): rank 0's array is the sum, *n its length. */
static uint64_t *reduce_segments(struct rb_harness *h, const struct rb_engine *e, size_t *n)
{
    size_t nseg = 0;
    const uint64_t *seg = rb_engine_segments(e, &nseg);
    unsigned long long nmine = nseg, nmax = nseg;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&nmine, &nmax, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, h->comm));
    uint64_t *mine = calloc(nmax ? nmax : 1, sizeof *mine), *all = calloc(nmax ? nmax : 1, sizeof *all);
    if (!mine || !all)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    if (seg && nseg)
        memcpy(mine, seg, nseg * sizeof *mine);
    if (h->mpi && h->size > 1 && nmax)
        RB_MPI_CHECK(MPI_Reduce(mine, all, (int)nmax, MPI_UINT64_T, MPI_SUM, 0, h->comm));
    else
        memcpy(all, mine, nmax * sizeof *all);
    free(mine);
    *n = (size_t)nmax;
    return all;
}

/* What a phase reduced over the ranks, for keep_results. */
struct reduced {
    struct rb_hist *unc_all;
    uint64_t *all;
    size_t nmax;
    struct rb_stats *parts, *tls;
    bool tls_unmeasured;
};

/*
 * Rank 0 keeps the phase's reduced figures r in res (owning them from here) and extends the phase record with
 * them; other ranks free them.
 */
static void keep_results(struct rb_harness *h, struct rb_phase *p, const struct phase_ctx *c,
                         const struct rb_load_opts *o, struct rb_load_result *res, const struct reduced *r)
{
    if (h->rank == 0) {
        res->total = p->total;
        p->total = NULL;
        res->uncorrected = r->unc_all;
        res->segments = r->all;
        res->nsegments = r->nmax;
        res->segments_ops = !rb_load_op_moves_bytes(o->op);
        res->parts = r->parts;
        res->tls = r->tls;
        res->tls_unmeasured = r->tls_unmeasured;
        if (p->record && r->parts) {
            cJSON *pr = cJSON_AddObjectToObject(p->record, o->tar_samples ? "samples" : "parts");
            rb_stats_to_json(pr, r->parts,
                             &(struct rb_stats_names){rb_load_err_names,
                                                      o->op == RB_LOAD_PUT ? rb_mp_extra_names : no_extra_names},
                             res->duration_s,
                             true);
        }
        if (p->record) {
            cJSON_AddItemToObject(p->record, "latency_uncorrected_ns", rb_hist_summary_json(r->unc_all));
            cJSON_AddItemToObject(p->record, "latency_uncorrected_hist", rb_hist_to_json(r->unc_all));
            cJSON_AddBoolToObject(p->record, "open_loop", res->open_loop);
            if (c->use_steady)
                cJSON_AddItemToObject(p->record, "until_steady", steady_json(res));
            cJSON *segs = cJSON_AddArrayToObject(p->record, "bytes_per_second");
            for (size_t i = 0; i < res->nsegments; i++)
                cJSON_AddItemToArray(segs, rb_json_u64(r->all[i]));
        }
    } else {
        rb_hist_free(r->unc_all);
        rb_stats_free(r->parts);
        rb_stats_free(r->tls);
        free(r->all);
    }
}

/* The slowest requests become exemplars of the phase's latency histogram: the request behind a bad bucket. */
struct exemplar_ctx {
    struct rb_prom *prom;
    const char *phase, *op;
};

static int slow_exemplar(const char *id, const char *op, uint64_t lat_ns, uint64_t end_wall_ns, void *arg)
{
    const struct exemplar_ctx *x = arg;
    (void)op; /* a mixed phase's requests are of several ops; its histogram is the phase's */
    rb_prom_exemplar(x->prom, x->phase, x->op, (double)lat_ns / 1e9, id, (double)end_wall_ns / 1e9);
    return 0;
}

int rb_load_run_phase(struct rb_harness *h, const char *name, uint64_t duration_ns,
                      const struct rb_load_opts *o, struct rb_load_result *res)
{
    return rb_load_run_phase_with(h, name, duration_ns, o, NULL, res);
}

int rb_load_run_phase_with(struct rb_harness *h, const char *name, uint64_t duration_ns, const struct rb_load_opts *o,
                           const struct rb_load_phase_opts *po, struct rb_load_result *res)
{
    static const struct rb_load_phase_opts plain = {0};
    if (!po)
        po = &plain;
    const struct rb_steady_opts *steady = &po->steady;
    memset(res, 0, sizeof *res);
    res->phase = name;
    res->op = o->mix ? "MIXED" : rb_load_op_name(o->op);
    res->open_loop = o->rate_per_s > 0;
    res->rate_per_s = o->rate_per_s * h->size;
    struct phase_ctx c = {
        .use_steady = steady->pct > 0,
        .steady_by_bytes = o->op == RB_LOAD_GET || o->op == RB_LOAD_PUT,
        .delay_ns = po->start_delay_ns,
        .stop_hopeless = po->stop_hopeless,
    };
    rb_steady_init(&c.steady, steady->pct, steady->window_ns);
    int rc = rb_engine_new(&c.e, o);
    c.unc = rb_hist_new();
    int bad = rc != 0 || !c.unc, any_bad = bad;
    if (rc)
        rb_error("cannot set up the load engine: %s", strerror(-rc));
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, h->comm));
    if (any_bad) {
        rb_engine_free(c.e);
        rb_hist_free(c.unc);
        return RB_EXIT_RUNTIME;
    }

    struct rb_phase p = {
        .name = name,
        .op = res->op,
        .names = {rb_load_err_names, o->cache_header ? rb_load_extra_names : extra_names_nocache},
        .duration_ns = duration_ns,
        .start = ph_start,
        .collect = ph_collect,
        .done = ph_done,
        .stop = ph_stop,
        .on_tick = ph_tick,
        .ctx = &c,
    };
    c.name = name;
    rc = rb_harness_run_phase(h, &p);
    res->duration_s = p.duration_s;
    uint64_t done_ns = rb_engine_done_ns(c.e);
    res->rank_busy_s = (double)((done_ns ? done_ns : rb_clock_ns()) - c.t0_ns) / 1e9;
    res->disk_util_ratio = p.disk_util_ratio;
    res->net_rx_bytes_per_s = p.net_rx_bytes_per_s;
    res->net_tx_bytes_per_s = p.net_tx_bytes_per_s;
    /* A worker whose request loop broke leaves a partial measurement: keep it, but the run failed. */
    int broken = rb_engine_status(c.e) != 0 || rb_fwatch_fired(), any_broken = broken;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&broken, &any_broken, 1, MPI_INT, MPI_MAX, h->comm));
    if (any_broken && !rc)
        rc = RB_EXIT_RUNTIME;
    if (c.hopeless) {
        if (h->rank == 0)
            rb_error("%s: all of the first %" PRIu64 " requests (%.1f s) were answered 403 or 404, none otherwise "
                     "(the warning above names the first): the target cannot serve this load; stopped early",
                     name, c.refused, c.hopeless_s);
        if (!rc)
            rc = RB_EXIT_RUNTIME;
    }

    double window_s = (double)rb_engine_send_window_ns(c.e) / 1e9;
    res->send_window_s = window_s;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&window_s, &res->send_window_s, 1, MPI_DOUBLE, MPI_MAX, h->comm));
    /* The uncorrected histogram and the 1-second segments, summed over ranks on rank 0. */
    struct rb_hist *unc_all = rb_hist_new();
    if (!unc_all)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    rb_harness_reduce_hist(h, c.unc, unc_all);
    size_t nmax;
    uint64_t *all = reduce_segments(h, c.e, &nmax);

    struct rb_stats *parts = part_stats(h, c.e, o);
    bool tls_unmeasured;
    struct rb_stats *tls = tls_stats(h, c.e, o, &tls_unmeasured);
    mix_results(h, c.e, o, res);
    if (o->track_written && (rb_engine_each_written(c.e, add_leftover, &res->leftover) ||
                             rb_engine_each_unknown(c.e, add_leftover, &res->unknown)))
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    if (c.use_steady) {
        res->steady_pct = steady->pct;
        res->steady_window_s = c.steady.window_s;
        res->steady_converged = c.steady.converged || c.steady_now;
        res->steady_at_s = c.steady.converged_at_s;
    }
    keep_results(h, &p, &c, o, res, &(struct reduced){unc_all, all, nmax, parts, tls, tls_unmeasured});
    rb_load_reduce_rphases(h, c.e, o, res, h->rank == 0 ? p.record : NULL);
    if (h->rank == 0 && h->prom && res->slow.n) {
        rb_load_slowest_each(res, slow_exemplar, &(struct exemplar_ctx){h->prom, name, p.op});
        rb_prom_publish(h->prom);
    }
    rb_harness_phase_free(&p);
    rb_steady_free(&c.steady);
    rb_engine_free(c.e);
    rb_hist_free(c.unc);
    return rc;
}

void rb_load_result_free(struct rb_load_result *res)
{
    if (!res)
        return;
    rb_stats_free(res->total);
    rb_stats_free(res->parts);
    res->parts = NULL;
    rb_stats_free(res->tls);
    res->tls = NULL;
    for (int op = 0; op < RB_MIX_OPS; op++) {
        rb_stats_free(res->mix_ops[op]);
        res->mix_ops[op] = NULL;
    }
    rb_objset_free(&res->leftover);
    rb_objset_free(&res->unknown);
    rb_hist_free(res->uncorrected);
    free(res->rph);
    res->rph = NULL;
    for (int op = 0; op < RB_MIX_OPS; op++) {
        free(res->mix_rph[op]);
        res->mix_rph[op] = NULL;
    }
    rb_slow_free(&res->slow);
    free(res->segments);
    res->total = NULL;
    res->uncorrected = NULL;
    res->segments = NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * warp's throughput segments: the run cut into 1-second pieces, reported as
 * the fastest, median and slowest piece. Only whole seconds inside the
 * phase count (a last partial second would read as a slow one); a second
 * in which nothing arrived is a piece of 0 B/s, not a missing one.
 */
static bool segment_stats(const struct rb_load_result *r, double *fast, double *median, double *slow, size_t *n)
{
    size_t whole = (size_t)r->duration_s;
    *n = whole;
    if (!whole || !r->segments) /* no segments kept (a multipart put's part row): none reported */
        return false;
    uint64_t *s = calloc(whole, sizeof *s);
    if (!s)
        return false;
    if (r->segments)
        memcpy(s, r->segments, (whole < r->nsegments ? whole : r->nsegments) * sizeof *s);
    qsort(s, whole, sizeof *s, cmp_u64);
    *slow = (double)s[0];
    *fast = (double)s[whole - 1];
    *median = whole % 2 ? (double)s[whole / 2] : ((double)s[whole / 2 - 1] + (double)s[whole / 2]) / 2;
    free(s);
    return true;
}

cJSON *rb_load_summary_json(const struct rb_load_result *r)
{
    const struct rb_stats *s = r->total;
    cJSON *o = cJSON_CreateObject();
    if (!o || !s)
        return o;
    double d = r->duration_s > 0 ? r->duration_s : 0;
    uint64_t ok = s->ops - s->errors;
    cJSON_AddStringToObject(o, "op", r->op);
    cJSON_AddStringToObject(o, "phase", r->phase);
    cJSON_AddItemToObject(o, "requests", rb_json_u64(s->ops));
    cJSON_AddItemToObject(o, "objects", rb_json_u64(ok));
    cJSON_AddItemToObject(o, "bytes", rb_json_u64(s->bytes));
    cJSON_AddNumberToObject(o, "duration_s", d);
    cJSON_AddNumberToObject(o, "throughput_bytes_per_s", d > 0 ? (double)s->bytes / d : 0);
    cJSON_AddNumberToObject(o, "ops_per_s", d > 0 ? (double)ok / d : 0);
    cJSON_AddBoolToObject(o, "open_loop", r->open_loop);
    if (r->steady_pct > 0)
        cJSON_AddItemToObject(o, "until_steady", steady_json(r));
    cJSON_AddItemToObject(o, "latency_ns", rb_hist_summary_json(&s->lat));
    cJSON_AddItemToObject(o, "ttfb_ns", rb_hist_summary_json(&s->ttfb));
    if (r->uncorrected)
        cJSON_AddItemToObject(o, "latency_uncorrected_ns", rb_hist_summary_json(r->uncorrected));
    double fast, med, slow;
    size_t n;
    if (segment_stats(r, &fast, &med, &slow, &n)) {
        /* HEAD and DELETE move no bytes: their segments are requests per second (warp's obj/s). */
        cJSON *g = cJSON_AddObjectToObject(o, "segments");
        cJSON_AddNumberToObject(g, "seconds", (double)n);
        cJSON_AddNumberToObject(g, r->segments_ops ? "fastest_ops_per_s" : "fastest_bytes_per_s", fast);
        cJSON_AddNumberToObject(g, r->segments_ops ? "median_ops_per_s" : "median_bytes_per_s", med);
        cJSON_AddNumberToObject(g, r->segments_ops ? "slowest_ops_per_s" : "slowest_bytes_per_s", slow);
    } else {
        cJSON_AddNullToObject(o, "segments");
    }
    cJSON *e = cJSON_AddObjectToObject(o, "errors");
    cJSON_AddItemToObject(e, "total", rb_json_u64(s->errors));
    for (int i = 0; i < RB_LERR_COUNT; i++)
        cJSON_AddItemToObject(e, rb_load_err_names[i], rb_json_u64(s->err[i]));
    cJSON *x = cJSON_AddObjectToObject(o, "extra");
    for (int i = 0; i < RB_LX_COUNT; i++)
        cJSON_AddItemToObject(x, rb_load_extra_names[i], rb_json_u64(s->extra[i]));
    if (r->tls) {
        /* Each from its connect to the handshake's end, inside the requests' times too (engine.md). */
        cJSON *t = cJSON_AddObjectToObject(o, "tls");
        cJSON_AddItemToObject(t, "handshakes", rb_json_u64(r->tls->ops));
        cJSON_AddItemToObject(t, "resumed", rb_json_u64(r->tls->extra[RB_TLS_RESUMED]));
        cJSON_AddItemToObject(t, "kernel_tls", rb_json_u64(r->tls->extra[RB_TLS_KTLS]));
        cJSON_AddItemToObject(t, "handshake_ns", rb_hist_summary_json(&r->tls->lat));
    } else if (r->tls_unmeasured) {
        cJSON_AddNullToObject(o, "tls"); /* libcurl ran the handshakes inside the requests: not measured apart */
    }
    rb_load_rphases_json(o, r);
    return o;
}

int rb_load_report_md(const struct rb_load_result *r, char **buf, size_t *len)
{
    const struct rb_stats *s = r->total;
    if (!s)
        return 0;
    double d = r->duration_s;
    uint64_t ok = s->ops - s->errors;
    char bytes[32];
    rb_format_size(bytes, sizeof bytes, s->bytes);
    int rc = rb_load_md_append(buf, len,
                    "\n## %s (phase %s)\n\n"
                    "| requests | objects | bytes | duration | MiB/s | obj/s | errors |\n"
                    "|---:|---:|---:|---:|---:|---:|---:|\n"
                    "| %llu | %llu | %s | %.2f s | %.2f | %.1f | %llu |\n\n"
                    "| latency | avg | p50 | p90 | p99 | p99.9 | max |\n"
                    "|---|---:|---:|---:|---:|---:|---:|\n",
                    r->op, r->phase, (unsigned long long)s->ops, (unsigned long long)ok, bytes, d,
                    d > 0 ? (double)s->bytes / d / (double)RB_MIB : 0, d > 0 ? (double)ok / d : 0,
                    (unsigned long long)s->errors);
    if (!rc)
        rc = rb_load_md_latency_row(buf, len, r->open_loop ? "request, from intended send (corrected)" : "request", &s->lat);
    if (!rc && r->open_loop && r->uncorrected)
        rc = rb_load_md_latency_row(buf, len, "request, from actual send (uncorrected)", r->uncorrected);
    if (!rc)
        rc = rb_load_md_latency_row(buf, len, "time to first byte", &s->ttfb);
    double fast, med, slow;
    size_t n;
    if (!rc && segment_stats(r, &fast, &med, &slow, &n) && r->segments_ops)
        rc = rb_load_md_append(buf, len, "\n1-second segments (%zu of %.2f s): fastest %.0f op/s, median %.0f op/s, slowest %.0f op/s\n",
                    n, d, fast, med, slow);
    else if (!rc && segment_stats(r, &fast, &med, &slow, &n))
        rc = rb_load_md_append(buf, len, "\n1-second segments (%zu of %.2f s): fastest %.2f MiB/s, median %.2f MiB/s, slowest %.2f MiB/s\n",
                    n, d, fast / (double)RB_MIB, med / (double)RB_MIB, slow / (double)RB_MIB);
    if (!rc)
        rc = rb_load_md_append(buf, len, "\nerrors:");
    for (int i = 0; !rc && i < RB_LERR_COUNT; i++)
        if (s->err[i])
            rc = rb_load_md_append(buf, len, " %s %llu", rb_load_err_names[i], (unsigned long long)s->err[i]);
    if (!rc && !s->errors)
        rc = rb_load_md_append(buf, len, " none");
    if (!rc && s->extra[RB_LX_REDIRECTS])
        rc = rb_load_md_append(buf, len, "; redirects followed: %llu", (unsigned long long)s->extra[RB_LX_REDIRECTS]);
    if (!rc && (s->extra[RB_LX_CACHE_HIT] || s->extra[RB_LX_CACHE_MISS] || s->extra[RB_LX_CACHE_OTHER] ||
                s->extra[RB_LX_CACHE_ABSENT]))
        rc = rb_load_md_append(buf, len, "; cache hit %llu, miss %llu, other %llu, absent %llu",
                    (unsigned long long)s->extra[RB_LX_CACHE_HIT], (unsigned long long)s->extra[RB_LX_CACHE_MISS],
                    (unsigned long long)s->extra[RB_LX_CACHE_OTHER],
                    (unsigned long long)s->extra[RB_LX_CACHE_ABSENT]);
    if (!rc)
        rc = rb_load_md_append(buf, len, "\n");
    return rc ? rc : rb_load_rphases_md(r, buf, len);
}

static bool check_errors(struct rb_result *r, const char *what, const char *noun, const uint64_t *err_by_class,
                         uint64_t errors, uint64_t requests, double max_pct, bool say);

bool rb_load_check_errors(struct rb_result *r, const char *what, const char *noun, const uint64_t *err_by_class,
                          uint64_t errors, uint64_t requests, double max_pct)
{
    return check_errors(r, what, noun, err_by_class, errors, requests, max_pct, true);
}

bool rb_load_record_errors(struct rb_result *r, const char *what, const char *noun, const uint64_t *err_by_class,
                           uint64_t errors, uint64_t requests, double max_pct)
{
    return check_errors(r, what, noun, err_by_class, errors, requests, max_pct, false);
}

static bool check_errors(struct rb_result *r, const char *what, const char *noun, const uint64_t *err_by_class,
                         uint64_t errors, uint64_t requests, double max_pct, bool say)
{
    char classes[512] = "", where[300] = "";
    size_t l = 0;
    for (int i = 0; err_by_class && i < RB_LERR_COUNT; i++)
        if (err_by_class[i] && l < sizeof classes)
            l += (size_t)snprintf(classes + l, sizeof classes - l, "%s%s %" PRIu64, l ? ", " : "; ",
                                  rb_load_err_names[i], err_by_class[i]);
    if (what)
        snprintf(where, sizeof where, "%s: ", what);
    if (!requests) {
        rb_result_check(r, "error_rate", false, "%sno %s were made: nothing was measured", where, noun);
        if (say)
            rb_error("%sno %s were made: nothing was measured", where, noun);
        return false;
    }
    double pct = 100.0 * (double)errors / (double)requests;
    bool ok = pct <= max_pct;
    rb_result_check(r, "error_rate", ok, "%s%" PRIu64 " of %" PRIu64 " %s failed (%.3f %%; --max-error-rate %g %%)%s",
                    where, errors, requests, noun, pct, max_pct, classes);
    if (!ok && say)
        rb_error("%s%" PRIu64 " of %" PRIu64 " %s failed (%.3f %%), above --max-error-rate %g %%%s", where, errors,
                 requests, noun, pct, max_pct, classes);
    /* A symbolic link at a name is never a rate to tolerate: the target holds something the run must not touch. */
    uint64_t links = err_by_class ? err_by_class[RB_LERR_SYMLINK] : 0;
    if (links) {
        rb_result_check(r, "no_symlinks", false, "%s%s that met a symbolic link at their name: %" PRIu64
                        " (refused, not followed)", where, noun, links);
        if (say)
            rb_error("%s%s that met a symbolic link at their name: %" PRIu64 " (refused, not followed)", where, noun,
                     links);
        ok = false;
    }
    return ok;
}

bool rb_load_errors_over(uint64_t errors, uint64_t requests, double max_pct)
{
    return !requests || 100.0 * (double)errors / (double)requests > max_pct;
}

double rb_load_achieved_rate(const struct rb_load_result *res)
{
    if (!res->total || !(res->rate_per_s > 0))
        return NAN;
    uint64_t sent = res->total->ops - res->total->err[RB_LERR_ABANDONED];
    if (!sent)
        return 0;
    return res->send_window_s > 0 ? (double)sent / res->send_window_s : NAN;
}

bool rb_load_check_rate(struct rb_result *r, const char *what, double target_per_s, double achieved_per_s)
{
    bool ok = isfinite(achieved_per_s) && achieved_per_s >= RB_LOAD_RATE_MIN_FRACTION * target_per_s;
    char where[300] = "";
    if (what)
        snprintf(where, sizeof where, "%s: ", what);
    rb_result_check(r, "rate", ok, "%sachieved %.6g of the target %.6g requests/s (at least %g %% needed)", where,
                    isfinite(achieved_per_s) ? achieved_per_s : 0, target_per_s, 100 * RB_LOAD_RATE_MIN_FRACTION);
    if (!ok)
        rb_error("%sthe open loop achieved %.6g requests/s, below %g %% of the target %.6g requests/s", where,
                 isfinite(achieved_per_s) ? achieved_per_s : 0, 100 * RB_LOAD_RATE_MIN_FRACTION, target_per_s);
    return ok;
}
