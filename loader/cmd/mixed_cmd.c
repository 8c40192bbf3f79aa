/* load mixed's phases (prepare, mixed, cleanup) and its report: one row per op, the total, the live set. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup_int.h"
#include "loader_int.h"
#include "mixed_cmd_int.h"
#include "../engine/phase_int.h"
#include "railbench/log.h"
#include "safety_int.h"

/* Every object put once (phase "prepare"); a put that failed leaves the mixed phase without its object: check fails. */
static int prepare(struct rb_harness *h, const struct rb_load_opts *o, struct rb_load_result *res)
{
    struct rb_load_opts p = *o;
    p.mix = NULL;
    p.op = RB_LOAD_PUT;
    p.count = p.bytes = 0;
    p.rate_per_s = 0;
    int status = rb_load_run_phase(h, "prepare", 0, &p, res);
    int bad = 0;
    if (h->rank == 0 && res->total) {
        const uint64_t ops = res->total->ops, ok = ops - res->total->errors;
        bad = ok != ops;
        rb_result_check(&h->result, "prepare", !bad, "%" PRIu64 " of %" PRIu64 " objects put before the mixed phase",
                        ok, ops);
        if (bad)
            rb_error("load mixed: the prepare phase put %" PRIu64 " of %" PRIu64 " objects; the mixed phase needs "
                     "every one (it is not run)", ok, ops);
    }
    if (h->mpi)
        RB_MPI_CHECK(MPI_Bcast(&bad, 1, MPI_INT, 0, h->comm));
    return status ? status : bad ? RB_EXIT_CHECK : 0;
}

/* One op's row (summary.ops[] and a table section: its request phases with --phases) with the weight it was drawn with. */
static cJSON *op_row(const struct rb_load_result *mixed, const struct rb_mix *m, int op, char **table, size_t *tlen)
{
    const struct rb_load_result r = {.phase = mixed->phase, .op = rb_load_op_name((enum rb_load_op)op),
                                     .total = mixed->mix_ops[op], .duration_s = mixed->duration_s,
                                     .rph = mixed->mix_rph[op]};
    cJSON *row = rb_load_summary_json(&r);
    cJSON_AddNumberToObject(row, "weight", m->weight[op]);
    cJSON_AddNumberToObject(row, "weight_pct", 100.0 * m->weight[op] / m->total);
    if (*table)
        rb_load_report_md(&r, table, tlen);
    return row;
}

/* Rank 0: result.json's summary and checks of the run, and its table. */
static char *report(struct rb_harness *h, const struct rb_load_opts *o, const struct rb_mixed_args *m,
                    const struct rb_load_result *prep, const struct rb_load_result *mixed, const struct rb_cleanup *cl)
{
    char head[600];
    snprintf(head, sizeof head, "\n# railbench %s %s\n\n%d rank(s) x %u thread(s) x %u in flight, mix get=%u put=%u "
             "delete=%u stat=%u\n", m->command, m->where, h->size, o->threads, o->inflight, m->mix.weight[RB_LOAD_GET],
             m->mix.weight[RB_LOAD_PUT], m->mix.weight[RB_LOAD_DELETE], m->mix.weight[RB_LOAD_HEAD]);
    char *table = strdup(head);
    size_t tlen = table ? strlen(table) : 0;
    cJSON *summary = cJSON_CreateObject();
    if (prep->total) {
        cJSON_AddItemToObject(summary, "prepare", rb_load_summary_json(prep));
        if (table)
            rb_load_report_md(prep, &table, &tlen);
    }
    if (mixed->total) {
        cJSON *ops = cJSON_AddArrayToObject(summary, "ops");
        for (int op = 0; op < RB_MIX_OPS; op++)
            if (m->mix.weight[op] && mixed->mix_ops[op])
                cJSON_AddItemToArray(ops, op_row(mixed, &m->mix, op, &table, &tlen));
        cJSON_AddItemToObject(summary, "total", rb_load_summary_json(mixed));
        if (table)
            rb_load_report_md(mixed, &table, &tlen);
        cJSON_AddItemToObject(summary, "live_objects", rb_json_u64(mixed->mix_live));
        cJSON_AddItemToObject(summary, "live_unknown", rb_json_u64(mixed->mix_unknown));
        rb_load_check_errors(&h->result, NULL, "requests", mixed->total->err, mixed->total->errors, mixed->total->ops,
                             m->max_error_pct);
        /* A thread that ran dry did not run the load it was asked for (its --count or --duration share). */
        rb_result_check(&h->result, "live_set", mixed->mix_dry == 0, "%" PRIu64 " thread(s) ran out of objects for "
                        "the ops they may draw before their limits", mixed->mix_dry);
        if (mixed->mix_dry)
            rb_error("load mixed: %" PRIu64 " thread(s) ran out of objects before their limits (deletes outpaced "
                     "puts): the run is shorter than asked; give put a weight at least delete's, or more --objects",
                     mixed->mix_dry);
    }
    cJSON_AddItemToObject(summary, "cleanup", rb_cleanup_json(cl));
    cJSON_AddStringToObject(summary, "target", m->target);
    cJSON_AddStringToObject(summary, "engine", rb_engine_name(o));
    if (rb_engine_io_loop_name(o))
        cJSON_AddStringToObject(summary, "io_loop", rb_engine_io_loop_name(o));
    rb_safety_json(summary, m->run_prefix);
    cJSON_AddNumberToObject(summary, "ranks", h->size);
    cJSON_AddNumberToObject(summary, "threads", o->threads);
    cJSON_AddNumberToObject(summary, "inflight", o->inflight);
    rb_result_set(&h->result, "summary", summary);
    return table;
}

int rb_mixed_run(struct rb_harness *h, const struct rb_load_opts *o, const struct rb_mixed_args *m, char **table)
{
    struct rb_load_result prep = {0}, mixed = {0};
    struct rb_cleanup cl = {0};
    int status = m->prepare ? prepare(h, o, &prep) : 0;
    int cstatus;
    if (!status) {
        struct rb_load_opts x = *o;
        x.mix = &m->mix;
        x.op = RB_LOAD_PUT; /* every slot is set up for uploads; mixed.c sets each request's method */
        x.mix_prepared = m->prepare;
        x.part_size = 0;
        status = rb_load_run_phase_with(h, "mixed", m->duration_ns, &x, &(struct rb_load_phase_opts){.steady = m->steady},
                                        &mixed);
        cstatus = rb_cleanup_run(h, o, &mixed.leftover, m->keep, RB_CLEANUP_COUNTED, m->where, &cl);
    } else {
        /* The prepare phase failed part-way: what it wrote is deleted (names it did not write are not there). */
        cstatus = rb_cleanup_run(h, o, o->objects, m->keep, RB_CLEANUP_COUNTED, m->where, &cl);
    }
    if (!status)
        status = cstatus;
    if (h->rank == 0)
        *table = report(h, o, m, &prep, &mixed, &cl);
    rb_load_result_free(&prep);
    rb_load_result_free(&mixed);
    return status;
}
