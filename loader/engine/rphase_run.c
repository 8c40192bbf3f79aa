/* A load phase's request spans and slowest requests: reduced over ranks, in result.json, in the table. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "phase_int.h"
#include "railbench/log.h"
#include "railbench/prom.h"
#include "railbench/result.h"
#include "railbench/units.h"
#include "worker_int.h"

/* This rank's spans (of load mixed's op, or -1 all) summed over ranks into rank 0's *out (allocated there; NULL
 * elsewhere). Collective. */
static void reduce_spans(struct rb_harness *h, const struct rb_engine *e, const struct rb_load_opts *o, int op,
                         struct rb_rphases **out)
{
    struct rb_rphases *mine = calloc(1, sizeof *mine), *all = h->rank == 0 ? calloc(1, sizeof *all) : NULL;
    if (!mine || (h->rank == 0 && !all))
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    const struct rb_transport *tp = rb_transport_for(o, false);
    mine->kind = tp && tp->files ? RB_RPH_FILE : RB_RPH_NET;
    rb_rph_reset(mine);
    rb_engine_rphases(e, op, mine);
    struct rb_hist *tmp = rb_hist_new();
    if (!tmp)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    for (int i = 0; i <= RB_RPH_COUNT; i++) {
        rb_harness_reduce_hist(h, i < RB_RPH_COUNT ? &mine->span[i] : &mine->total, tmp);
        if (all)
            memcpy(i < RB_RPH_COUNT ? &all->span[i] : &all->total, tmp, sizeof *tmp);
    }
    rb_hist_free(tmp);
    size_t nb = sizeof mine->band_count + sizeof mine->band_sum;
    _Static_assert(offsetof(struct rb_rphases, band_sum) ==
                       offsetof(struct rb_rphases, band_count) + sizeof(((struct rb_rphases *)0)->band_count),
                   "the bands are one array");
    if (h->mpi && h->size > 1)
        RB_MPI_CHECK(MPI_Reduce(mine->band_count, all ? all->band_count : NULL, (int)(nb / sizeof(uint64_t)),
                                MPI_UINT64_T, MPI_SUM, 0, h->comm));
    else if (all)
        memcpy(all->band_count, mine->band_count, nb);
    if (all)
        all->kind = mine->kind;
    free(mine);
    *out = all;
}

/* This rank's slowest (its host named) gathered to rank 0, which keeps the o->slowest slowest of all, sorted. */
static void gather_slowest(struct rb_harness *h, const struct rb_engine *e, const struct rb_load_opts *o,
                           struct rb_slowheap *out)
{
    struct rb_slowheap mine;
    if (rb_slow_init(&mine, o->slowest) || rb_slow_init(out, h->rank == 0 ? o->slowest : 0))
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    rb_engine_slowest(e, &mine);
    for (size_t i = 0; i < mine.n; i++)
        snprintf(mine.v[i].host, sizeof mine.v[i].host, "%.*s", RB_SLOW_HOST_MAX - 1, h->host);
    if (!h->mpi || h->size == 1) {
        rb_slow_merge(out, mine.v, mine.n);
    } else {
        int n = (int)(mine.n * sizeof *mine.v), *lens = NULL, *displs = NULL;
        char *buf = NULL;
        if (h->rank == 0 && (!(lens = calloc((size_t)h->size, sizeof *lens)) ||
                             !(displs = calloc((size_t)h->size, sizeof *displs))))
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
        RB_MPI_CHECK(MPI_Gather(&n, 1, MPI_INT, lens, 1, MPI_INT, 0, h->comm));
        size_t total = 0;
        for (int r = 0; h->rank == 0 && r < h->size; r++) {
            displs[r] = (int)total;
            total += (size_t)lens[r];
        }
        if (h->rank == 0 && total && !(buf = malloc(total)))
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
        RB_MPI_CHECK(MPI_Gatherv(mine.v, n, MPI_BYTE, buf, lens, displs, MPI_BYTE, 0, h->comm));
        if (h->rank == 0)
            rb_slow_merge(out, (const struct rb_slow *)buf, total / sizeof *mine.v);
        free(buf);
        free(lens);
        free(displs);
    }
    rb_slow_sort(out);
    rb_slow_free(&mine);
}

/*
 * Rank 0's metrics of the phase's spans of op: each its histogram (railbench_request_step_seconds{op, phase, step});
 * none when no request of op was split (a file's stat or delete).
 */
static void span_metrics(struct rb_harness *h, const char *phase, const char *op, const struct rb_rphases *p)
{
    if (!p->total.count)
        return;
    int idx[RB_RPH_COUNT], n = rb_rph_spans((enum rb_rph_kind)p->kind, idx);
    for (int k = 0; k < n; k++)
        rb_prom_step(h->prom, phase, op, rb_rph_names[idx[k]], &p->span[idx[k]]);
}

void rb_load_reduce_rphases(struct rb_harness *h, const struct rb_engine *e, const struct rb_load_opts *o,
                            struct rb_load_result *res, cJSON *record)
{
    res->inflight = o->inflight;
    if (o->phases) {
        reduce_spans(h, e, o, -1, &res->rph);
        for (int op = 0; o->mix && op < RB_MIX_OPS; op++)
            if (o->mix->weight[op])
                reduce_spans(h, e, o, op, &res->mix_rph[op]);
        if (record && res->rph) {
            cJSON_AddItemToObject(record, "request_phases", rb_rph_json(res->rph, true));
            cJSON *by_op = o->mix ? cJSON_AddObjectToObject(record, "request_phases_by_op") : NULL;
            for (int op = 0; by_op && op < RB_MIX_OPS; op++)
                if (res->mix_rph[op])
                    cJSON_AddItemToObject(by_op, rb_load_op_name((enum rb_load_op)op),
                                          rb_rph_json(res->mix_rph[op], true));
        }
        const char *phase = res->phase ? res->phase : "?";
        if (h->rank == 0 && h->prom && res->rph && !o->mix)
            span_metrics(h, phase, res->op ? res->op : "?", res->rph);
        for (int op = 0; h->rank == 0 && h->prom && op < RB_MIX_OPS; op++) /* load mixed: each op's */
            if (res->mix_rph[op])
                span_metrics(h, phase, rb_load_op_name((enum rb_load_op)op), res->mix_rph[op]);
        if (h->rank == 0 && h->prom && res->rph)
            rb_prom_publish(h->prom);
    }
    if (o->slowest)
        gather_slowest(h, e, o, &res->slow);
    res->target = o->target;
}

static cJSON *slow_json(const struct rb_load_result *res, const struct rb_slow *e)
{
    cJSON *o = cJSON_CreateObject();
    char id[64];
    rb_slow_id(e, res->inflight, id, sizeof id);
    cJSON_AddStringToObject(o, "id", id);
    cJSON_AddStringToObject(o, "op", rb_load_op_name((enum rb_load_op)e->op));
    cJSON_AddStringToObject(o, "object", e->name);
    cJSON_AddItemToObject(o, "latency_ns", rb_json_u64(e->lat_ns));
    cJSON_AddNumberToObject(o, "end_unix_s", (double)e->end_wall_ns / 1e9);
    if (e->status)
        cJSON_AddNumberToObject(o, "status", e->status);
    else
        cJSON_AddNullToObject(o, "status"); /* no answer came */
    if (e->cls >= 0 && e->cls < RB_LERR_COUNT)
        cJSON_AddStringToObject(o, "error", rb_load_err_names[e->cls]);
    else
        cJSON_AddNullToObject(o, "error");
    cJSON_AddNumberToObject(o, "rank", e->rank);
    cJSON_AddStringToObject(o, "host", e->host);
    cJSON_AddNumberToObject(o, "thread", e->thread);
    cJSON_AddNumberToObject(o, "connection", (double)e->thread * res->inflight + e->slot);
    if (res->target && e->ep < res->target->nendpoints)
        cJSON_AddStringToObject(o, "endpoint", res->target->endpoints[e->ep]);
    if (!e->has_spans) {
        cJSON_AddNullToObject(o, "phases_ns"); /* not measured: --phases was off, or a request cut in parts */
        return o;
    }
    cJSON *p = cJSON_AddObjectToObject(o, "phases_ns");
    int idx[RB_RPH_COUNT], n = rb_rph_spans((enum rb_rph_kind)e->kind, idx);
    for (int k = 0; k < n; k++)
        cJSON_AddItemToObject(p, rb_rph_names[idx[k]], rb_json_u64(e->span_ns[idx[k]]));
    return o;
}

void rb_load_rphases_json(cJSON *row, const struct rb_load_result *res)
{
    if (res->rph)
        cJSON_AddItemToObject(row, "request_phases", rb_rph_json(res->rph, false));
    if (!res->slow.cap)
        return;
    cJSON *a = cJSON_AddArrayToObject(row, "slowest");
    for (size_t i = 0; i < res->slow.n; i++)
        cJSON_AddItemToArray(a, slow_json(res, &res->slow.v[i]));
}

int rb_load_slowest_each(const struct rb_load_result *res,
                         int (*fn)(const char *id, const char *op, uint64_t lat_ns, uint64_t end_wall_ns, void *arg),
                         void *arg)
{
    for (size_t i = 0; i < res->slow.n; i++) {
        const struct rb_slow *e = &res->slow.v[i];
        char id[64];
        rb_slow_id(e, res->inflight, id, sizeof id);
        int rc = fn(id, rb_load_op_name((enum rb_load_op)e->op), e->lat_ns, e->end_wall_ns, arg);
        if (rc)
            return rc;
    }
    return 0;
}

/* The spans' table and, per latency percentile, the mean split of the requests in its band. */
static int spans_md(const struct rb_rphases *p, char **buf, size_t *len)
{
    if (!p->total.count)
        return rb_load_md_append(buf, len, "\nrequest phases: no request was split (a file's stat or delete is one "
                                           "call)\n");
    int rc = rb_load_md_append(buf, len, "\n| request phase | avg | p50 | p90 | p99 | p99.9 | max |\n"
                                         "|---|---:|---:|---:|---:|---:|---:|\n");
    int idx[RB_RPH_COUNT], n = rb_rph_spans((enum rb_rph_kind)p->kind, idx);
    for (int k = 0; !rc && k < n; k++)
        rc = rb_load_md_latency_row(buf, len, rb_rph_names[idx[k]], &p->span[idx[k]]);
    if (!rc)
        rc = rb_load_md_latency_row(buf, len, "(their sum: latency)", &p->total);
    if (!rc)
        rc = rb_load_md_append(buf, len, "\nlatency breakdown by percentile (mean of the requests in the "
                                         "percentile's power-of-two band):\n");
    static const double qs[] = {50, 90, 99, 99.9};
    for (size_t q = 0; !rc && q < sizeof qs / sizeof qs[0]; q++) {
        uint64_t v = rb_hist_percentile(&p->total, qs[q]);
        unsigned b = rb_rph_band(v);
        char lat[16];
        rb_format_duration_human(lat, sizeof lat, v);
        rc = rb_load_md_append(buf, len, "p%g %s: the %" PRIu64 " requests of its band split", qs[q], lat,
                               p->band_count[b]);
        for (int k = 0; !rc && k < n; k++) {
            char m[16];
            rb_format_duration_human(m, sizeof m,
                                     (uint64_t)((double)p->band_sum[b][idx[k]] / (double)p->band_count[b]));
            rc = rb_load_md_append(buf, len, "%s %s %s", k ? "," : "", rb_rph_names[idx[k]], m);
        }
        if (!rc)
            rc = rb_load_md_append(buf, len, "\n");
    }
    return rc;
}

/* One row of the slowest table. */
static int slow_md(const struct rb_load_result *res, const struct rb_slow *e, char **buf, size_t *len)
{
    char id[64], lat[16], st[32], ph[400] = "–";
    rb_slow_id(e, res->inflight, id, sizeof id);
    rb_format_duration_human(lat, sizeof lat, e->lat_ns);
    if (e->cls >= 0 && e->cls < RB_LERR_COUNT)
        snprintf(st, sizeof st, "%s", rb_load_err_names[e->cls]);
    else
        snprintf(st, sizeof st, "%d", (int)e->status);
    int idx[RB_RPH_COUNT], n = e->has_spans ? rb_rph_spans((enum rb_rph_kind)e->kind, idx) : 0;
    for (int k = 0, w = 0; k < n && (size_t)w < sizeof ph; k++) {
        char d[16];
        rb_format_duration_human(d, sizeof d, e->span_ns[idx[k]]);
        w += snprintf(ph + w, sizeof ph - (size_t)w, "%s%s %s", k ? ", " : "", rb_rph_names[idx[k]], d);
    }
    bool ep = res->target && e->ep < res->target->nendpoints;
    return rb_load_md_append(buf, len, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", id,
                             rb_load_op_name((enum rb_load_op)e->op), e->name, lat, st,
                             ep ? res->target->endpoints[e->ep] : "–", e->host, ph);
}

int rb_load_rphases_md(const struct rb_load_result *res, char **buf, size_t *len)
{
    int rc = res->rph ? spans_md(res->rph, buf, len) : 0;
    if (rc || !res->slow.n)
        return rc;
    rc = rb_load_md_append(buf, len, "\nslowest %zu requests:\n\n| id | op | object | latency | status | endpoint | "
                                     "host | phases |\n|---|---|---|---:|---|---|---|---|\n", res->slow.n);
    bool unsplit = false, no_ep = false;
    for (size_t i = 0; !rc && i < res->slow.n; i++) {
        const struct rb_slow *e = &res->slow.v[i];
        unsplit = unsplit || !e->has_spans;
        no_ep = no_ep || !res->target || e->ep >= res->target->nendpoints;
        rc = slow_md(res, e, buf, len);
    }
    if (!rc && unsplit)
        rc = rb_load_md_append(buf, len, "\nphases –: not measured (without --phases, or a request cut in parts)\n");
    if (!rc && no_ep)
        rc = rb_load_md_append(buf, len, "%sendpoint –: the target has none (file://)\n", unsplit ? "" : "\n");
    return rc;
}
