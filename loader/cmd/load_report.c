/* load put|get|delete|stat|mixed: the line announcing the phase, result.json's summary, the checks and the table. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_cmd_int.h"
#include "../engine/multipart_int.h"
#include "railbench/log.h"
#include "railbench/units.h"
#include "safety_int.h"

/* Rank 0: one line on what the phase is about to run. */
void rb_load_cmd_announce(const struct load_args *a, const struct rb_harness *h, const char *command,
                          const struct rb_target *t, uint64_t nobjects, const struct rb_load_opts *o)
{
    char lim[160] = "";
    size_t l = 0;
    if (a->duration_ns) {
        char d[32];
        rb_format_duration(d, sizeof d, a->duration_ns);
        l += (size_t)snprintf(lim + l, sizeof lim - l, " duration %s", d);
    }
    if (a->count)
        l += (size_t)snprintf(lim + l, sizeof lim - l, " count %" PRIu64, a->count);
    if (a->bytes)
        l += (size_t)snprintf(lim + l, sizeof lim - l, " bytes %" PRIu64, a->bytes);
    if (a->epochs)
        snprintf(lim + l, sizeof lim - l, " epochs %" PRIu64, a->epochs);
    rb_info("%s %s: %" PRIu64 " objects, %d rank(s) x %u thread(s) x %u in flight, %s;%s", command, rb_target_name(t),
            nobjects, h->size, o->threads, o->inflight, a->rate > 0 ? "open loop" : "closed loop", lim);
    if (rb_target_can(t, RB_TCAP_DEFAULT_ENDPOINT) && a->tgt.endpoints.n == 0)
        rb_info("%s: no --endpoint: AWS S3 at %s", rb_target_name(t), t->endpoints[0]);
    if (a->run_prefix[0])
        rb_info("names: this run's own prefix \"%s%s%s\" (deleted at the end; --keep writes %s%s<index> instead and keeps "
                "them)", rb_target_prefix(t), a->run_prefix, DEFAULT_PREFIX, rb_target_prefix(t), DEFAULT_PREFIX);
}

/*
 * Rank 0: a --cache-header that no response carried counts nothing and
 * would print nothing; as in load tiers it is a failed check (cache_header)
 * and one error line naming the header.
 */
static void check_cache_header(const struct load_args *a, struct rb_harness *h, const struct rb_stats *s)
{
    if (!a->cache_header)
        return;
    const uint64_t seen = s->extra[RB_LX_CACHE_HIT] + s->extra[RB_LX_CACHE_MISS] + s->extra[RB_LX_CACHE_OTHER];
    const uint64_t answered = s->ops - s->errors;
    rb_result_check(&h->result, "cache_header", seen > 0, "%" PRIu64 " of %" PRIu64 " responses carried %s", seen,
                    s->ops, a->cache_header);
    if (!seen)
        rb_error("--cache-header %s: none of the %" PRIu64 " responses (%" PRIu64 " successful) carried this header; "
                 "name the header the server sends (nginx: add_header X-Cache-Status $upstream_cache_status) or leave "
                 "--cache-header out", a->cache_header, s->ops, answered);
}

/*
 * put: what the run leaves in the target (what it wrote, and what HEAD found
 * stored of the puts whose outcome was unknown, less what cleanup deleted;
 * with --keep all of it, for later gets), in the summary; an interrupted put
 * also says it on stderr. objects_max adds what may be stored: the puts
 * whose HEAD failed too (unknown), and with --keep (puts not tracked) every
 * put in flight when a run is cut short.
 */
static void left_behind(const struct load_args *a, struct rb_harness *h, const struct rb_target *t,
                        const char *prefix, const struct rb_load_result *res, const struct rb_cleanup *cl,
                        cJSON *summary)
{
    uint64_t written = res->total->ops - res->total->errors + res->probed_left;
    uint64_t most = written + res->probed_unknown +
                    (h->interrupted && a->keep ? a->threads * a->inflight * (uint64_t)h->size : 0);
    if (a->objects && most > a->objects)
        most = a->objects;
    written -= cl->deleted < written ? cl->deleted : written;
    most -= cl->deleted < most ? cl->deleted : most;
    cJSON *o = cJSON_AddObjectToObject(summary, "left_behind");
    if (a->filelist)
        cJSON_AddNullToObject(o, "prefix");
    else
        cJSON_AddStringToObject(o, "prefix", prefix);
    cJSON_AddItemToObject(o, "objects", rb_json_u64(written));
    cJSON_AddItemToObject(o, "objects_max", rb_json_u64(most));
    /* The puts whose outcome was unknown, looked up with HEAD after the phase (not with --keep). */
    cJSON_AddItemToObject(o, "unknown_outcome", rb_json_u64(res->probed));
    cJSON_AddItemToObject(o, "unknown_outcome_stored", rb_json_u64(res->probed_left));
    cJSON_AddItemToObject(o, "unknown", rb_json_u64(res->probed_unknown));
    if (res->probe_list[0])
        cJSON_AddStringToObject(o, "unknown_outcome_list", res->probe_list);
    else
        cJSON_AddNullToObject(o, "unknown_outcome_list");
    if (h->interrupted && most)
        rb_harness_kept(h, "%" PRIu64 " to %" PRIu64 " objects written to %s%s%s%s", written, most, rb_target_name(t),
                        a->filelist ? " from " : " under \"", a->filelist ? a->filelist : prefix, a->filelist ? "" : "\"");
    if (h->interrupted && most)
        rb_warn("interrupted: %" PRIu64 " to %" PRIu64 " objects written to %s%s%s%s stay there (railbench load "
                "delete %s %s%s removes them)", written, most, rb_target_name(t), a->filelist ? " from " : " under \"",
                a->filelist ? a->filelist : prefix, a->filelist ? "" : "\"", rb_target_name(t),
                a->filelist ? "--filelist " : "--prefix ", a->filelist ? a->filelist : prefix + strlen(rb_target_prefix(t)));
}

/*
 * A multipart put's second row, "PUT part" (one request per part: latency,
 * bytes, errors), with the uploads aborted and the aborts that failed; an
 * abort that failed leaves parts on the server, a failed check (exit 1).
 * row gets the part stats without their extra counters (those are not the load rows' extras).
 */
static void multipart_summary(struct rb_harness *h, const struct rb_stats *parts, struct rb_stats *row,
                              const struct rb_load_result *pr, cJSON *ops)
{
    *row = *parts;
    memset(row->extra, 0, sizeof row->extra);
    cJSON *o = rb_load_summary_json(pr);
    cJSON_DeleteItemFromObject(o, "extra");
    cJSON *m = cJSON_AddObjectToObject(o, "multipart");
    cJSON_AddItemToObject(m, "uploads_aborted", rb_json_u64(parts->extra[RB_MP_ABORTED]));
    cJSON_AddItemToObject(m, "aborts_failed", rb_json_u64(parts->extra[RB_MP_ABORT_FAILED]));
    cJSON_AddItemToArray(ops, o);
    uint64_t left = parts->extra[RB_MP_ABORT_FAILED];
    rb_result_check(&h->result, "multipart_abort", left == 0, "%" PRIu64 " uploads aborted, %" PRIu64
                    " aborts failed (their parts stay on the server)", parts->extra[RB_MP_ABORTED], left);
    if (left)
        rb_error("%" PRIu64 " multipart uploads could not be aborted: their parts stay on the server (list them "
                 "with ListMultipartUploads, ?uploads on the bucket)", left);
}

/*
 * get --samples tar: the second row, "GET sample" (one record per tar member:
 * its data bytes, its latency from the previous member's end or the request's
 * send), and summary.samples: samples, their bytes, per object, and the
 * objects whose body was not a whole tar archive.
 */
static void samples_summary(const struct rb_stats *samples, struct rb_stats *row, const struct rb_load_result *sr,
                            const struct rb_load_result *res, cJSON *summary, cJSON *ops)
{
    *row = *samples;
    memset(row->extra, 0, sizeof row->extra);
    cJSON *o = rb_load_summary_json(sr);
    cJSON_DeleteItemFromObject(o, "extra");
    cJSON_AddItemToArray(ops, o);
    const uint64_t objects = res->total->ops - res->total->errors, n = samples->ops - samples->errors;
    cJSON *s = cJSON_AddObjectToObject(summary, "samples");
    cJSON_AddStringToObject(s, "format", "tar");
    cJSON_AddItemToObject(s, "objects", rb_json_u64(objects));
    cJSON_AddItemToObject(s, "samples", rb_json_u64(n));
    cJSON_AddItemToObject(s, "sample_bytes", rb_json_u64(samples->bytes));
    if (objects)
        cJSON_AddNumberToObject(s, "samples_per_object", (double)n / (double)objects);
    else
        cJSON_AddNullToObject(s, "samples_per_object");
    cJSON_AddItemToObject(s, "not_tar", rb_json_u64(samples->errors));
}

char *rb_load_cmd_report(const struct load_args *a, struct rb_harness *h, const char *command,
                         const struct rb_target *t, const char *prefix, const struct rb_load_opts *o,
                         const struct rb_load_result *res, const struct rb_cleanup *cl, int status)
{
    cJSON *summary = cJSON_CreateObject();
    cJSON *ops = cJSON_AddArrayToObject(summary, "ops");
    cJSON_AddItemToArray(ops, rb_load_summary_json(res));
    struct rb_stats part_row = {0};
    const struct rb_load_result parts = {.phase = res->phase, .op = o->tar_samples ? "GET sample" : "PUT part",
                                         .total = res->parts ? &part_row : NULL, .duration_s = res->duration_s};
    if (res->parts && o->tar_samples)
        samples_summary(res->parts, &part_row, &parts, res, summary, ops);
    else if (res->parts)
        multipart_summary(h, res->parts, &part_row, &parts, ops);
    cJSON_AddStringToObject(summary, "target", rb_target_name(t));
    rb_safety_json(summary, a->run_prefix[0] ? prefix : NULL);
    cJSON_AddNumberToObject(summary, "ranks", h->size);
    cJSON_AddNumberToObject(summary, "threads", o->threads);
    cJSON_AddNumberToObject(summary, "inflight", o->inflight);
    cJSON_AddStringToObject(summary, "engine", rb_engine_name(o));
    if (rb_engine_io_loop_name(o))
        cJSON_AddStringToObject(summary, "io_loop", rb_engine_io_loop_name(o));
    if (rb_target_can(o->target, RB_TCAP_FILES))
        rb_file_summary_json(summary, &a->file);
    const double achieved = rb_load_achieved_rate(res);
    if (a->rate > 0) {
        cJSON_AddNumberToObject(summary, "rate_per_s", a->rate);
        if (isfinite(achieved))
            cJSON_AddNumberToObject(summary, "achieved_rate_per_s", achieved);
        else
            cJSON_AddNullToObject(summary, "achieved_rate_per_s");
    }
    if (a->op == RB_LOAD_PUT) {
        left_behind(a, h, t, prefix, res, cl, summary);
        cJSON_AddItemToObject(summary, "cleanup", rb_cleanup_json(cl));
    }
    rb_result_set(&h->result, "summary", summary);
    char head[1400], mode[128] = "closed loop";
    if (a->rate > 0)
        snprintf(mode, sizeof mode, "open loop: target %.6g requests/s, achieved %.6g requests/s", a->rate,
                 isfinite(achieved) ? achieved : 0);
    snprintf(head, sizeof head, "\n# railbench %s %s\n\n%d rank(s) x %u thread(s) x %u in flight, %s\n", command,
             rb_target_name(t), h->size, o->threads, o->inflight, mode);
    char *table = strdup(head);
    size_t tlen = table ? strlen(table) : 0;
    if (table)
        rb_load_report_md(res, &table, &tlen);
    if (table && res->parts)
        rb_load_report_md(&parts, &table, &tlen);
    if (a->rate > 0)
        rb_load_check_rate(&h->result, NULL, a->rate, achieved);
    check_cache_header(a, h, res->total);
    if (a->op == RB_LOAD_GET)
        rb_file_check_cold(&h->result, NULL, &a->file, res->total);
    if (a->until_steady) {
        /* The user asked for a steady-state figure: a phase that ran out of time first has none (exit 1). */
        rb_result_check(&h->result, "steady_state", res->steady_converged,
                        res->steady_converged ? "throughput within %g %% over %g s after %.1f s"
                                              : "throughput not within %g %% over %g s before the phase ended",
                        res->steady_pct, res->steady_window_s, res->steady_at_s);
        if (!res->steady_converged)
            rb_error("--until-steady %s: throughput did not settle before the phase ended", a->until_steady);
        else
            rb_info("--until-steady %s: steady after %.1f s", a->until_steady, res->steady_at_s);
    }
    /* A run that stopped on a broken file system said so in its one error line: the rate is recorded, not said again. */
    (status == RB_EXIT_RUNTIME ? rb_load_record_errors : rb_load_check_errors)(
        &h->result, NULL, "requests", res->total->err, res->total->errors, res->total->ops, a->max_error_pct);
    return table;
}
