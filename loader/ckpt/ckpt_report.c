/* load checkpoint results: each checkpoint's record (figures, ranks, hosts, stragglers), the summary and the table. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/phase_int.h"
#include "ckpt_int.h"
#include "railbench/log.h"
#include "railbench/provenance.h"

/* Rank 0: the record of one checkpoint (figures, ranks, hosts, stragglers), logged and added to the list. */
/* A number, or null where it was not measured (NAN). */
static cJSON *num_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

void rb_ckpt_record_point(struct rb_ckpt_run *x, bool write, unsigned step, const struct rb_ckpt_rank *r,
                          const struct rb_load_result *res, const struct rb_ckpt_done *d)
{
    struct rb_ckpt_figures f;
    rb_ckpt_figures(r, (size_t)x->h.size, &f);
    /*
     * A checkpoint cut short (a signal) or with failed requests moved less than its files: its bytes are what moved;
     * it has no throughput, and no rank's own figures (what each rank moved is not known here); the means leave it
     * out.
     */
    const uint64_t errors = res->total ? res->total->errors : 0;
    const bool whole = errors == 0 && d->files_done == d->files; /* a signal after the last file cut nothing */
    if (!whole) {
        f.bytes = res->total ? res->total->bytes : 0;
        f.throughput_bytes_per_s = NAN;
        f.min_rank_bytes_per_s = NAN;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", write ? "write" : "read");
    cJSON_AddNumberToObject(o, "checkpoint", step);
    cJSON_AddBoolToObject(o, "complete", whole);
    cJSON_AddBoolToObject(o, "interrupted", d->interrupted);
    cJSON_AddItemToObject(o, "files", rb_json_u64(d->files));
    cJSON_AddItemToObject(o, "files_done", rb_json_u64(d->files_done));
    cJSON_AddItemToObject(o, "bytes", rb_json_u64(f.bytes));
    cJSON_AddNumberToObject(o, "duration_s", f.duration_s);
    cJSON_AddItemToObject(o, "throughput_bytes_per_s", num_or_null(f.throughput_bytes_per_s));
    cJSON_AddItemToObject(o, "min_rank_throughput_bytes_per_s", num_or_null(f.min_rank_bytes_per_s));
    cJSON_AddNumberToObject(o, "mean_rank_s", f.mean_rank_s);
    cJSON_AddNumberToObject(o, "slowest_rank", f.slowest_rank);
    cJSON_AddNumberToObject(o, "phase_s", res->duration_s);
    cJSON_AddItemToObject(o, "errors", rb_json_u64(errors));
    cJSON *ranks = cJSON_AddArrayToObject(o, "ranks");
    for (int i = 0; i < x->h.size; i++) {
        cJSON *k = cJSON_CreateObject();
        cJSON_AddNumberToObject(k, "rank", i);
        cJSON_AddStringToObject(k, "host", x->hosts[r[i].host]);
        cJSON_AddItemToObject(k, "bytes", whole ? rb_json_u64(r[i].bytes) : cJSON_CreateNull());
        cJSON_AddNumberToObject(k, "time_s", r[i].busy_s);
        cJSON_AddItemToObject(k, "throughput_bytes_per_s",
                              num_or_null(whole && r[i].busy_s > 0 ? r[i].bytes / r[i].busy_s : NAN));
        cJSON_AddItemToArray(ranks, k);
    }
    cJSON *hosts = cJSON_AddArrayToObject(o, "hosts");
    for (int hi = 0; hi < x->nhosts; hi++) {
        uint64_t b = 0;
        double t = 0;
        int n = 0;
        for (int i = 0; i < x->h.size; i++)
            if (r[i].host == hi) {
                b += r[i].bytes;
                t = r[i].busy_s > t ? r[i].busy_s : t;
                n++;
            }
        cJSON *k = cJSON_CreateObject();
        cJSON_AddStringToObject(k, "host", x->hosts[hi]);
        cJSON_AddNumberToObject(k, "ranks", n);
        cJSON_AddItemToObject(k, "bytes", whole ? rb_json_u64(b) : cJSON_CreateNull());
        cJSON_AddNumberToObject(k, "time_s", t);
        cJSON_AddItemToObject(k, "throughput_bytes_per_s", num_or_null(whole && t > 0 ? b / t : NAN));
        cJSON_AddItemToArray(hosts, k);
    }
    /* Stragglers are judged on whole checkpoints only (a cut-short one's per-rank bytes are not known). */
    const char *const *hn = (const char *const *)x->hosts;
    cJSON *st = whole ? rb_ckpt_stragglers(r, (size_t)x->h.size, hn, x->nhosts, false) : cJSON_CreateArray();
    cJSON_AddItemToObject(o, "stragglers", st);
    cJSON_AddItemToObject(o, "straggler_hosts",
                          whole ? rb_ckpt_stragglers(r, (size_t)x->h.size, hn, x->nhosts, true) : cJSON_CreateArray());
    const cJSON *s;
    cJSON_ArrayForEach(s, st)
    {
        rb_warn("straggler: %s %u: rank %d on %s at %.3g MB/s, %.2fx the ranks' median (%.3g MB/s)",
                write ? "write" : "read", step, (int)cJSON_GetNumberValue(cJSON_GetObjectItem(s, "rank")),
                cJSON_GetStringValue(cJSON_GetObjectItem(s, "host")),
                cJSON_GetNumberValue(cJSON_GetObjectItem(s, "throughput_bytes_per_s")) / 1e6,
                cJSON_GetNumberValue(cJSON_GetObjectItem(s, "ratio")),
                cJSON_GetNumberValue(cJSON_GetObjectItem(s, "median_bytes_per_s")) / 1e6);
    }
    cJSON_AddItemToArray(write ? x->writes : x->reads, o);
    if (!whole) {
        rb_warn("checkpoint %s %u %s: %" PRIu64 " of %" PRIu64 " files whole, %.3f GB moved in %.3f s, %" PRIu64
                " error(s); not a checkpoint's figure (left out of the means)", write ? "write" : "read", step,
                d->interrupted ? "interrupted" : "incomplete", d->files_done, d->files, f.bytes / 1e9, f.duration_s,
                errors);
        return;
    }
    rb_info("checkpoint %s %u: %.3f GB in %.3f s (slowest rank %d), %.3f GB/s; slowest rank's own %.3f GB/s",
            write ? "write" : "read", step, f.bytes / 1e9, f.duration_s, f.slowest_rank, f.throughput_bytes_per_s / 1e9,
            f.min_rank_bytes_per_s / 1e9);
    struct rb_ckpt_figures *sum = write ? &x->wsum : &x->rsum;
    sum->bytes += f.bytes;
    sum->duration_s += f.duration_s;
    sum->throughput_bytes_per_s += f.throughput_bytes_per_s;
    sum->min_rank_bytes_per_s += isnan(f.min_rank_bytes_per_s) ? 0 : f.min_rank_bytes_per_s;
    sum->mean_rank_s += f.mean_rank_s;
    *(write ? &x->nw : &x->nr) += 1;
    char labels[64];
    snprintf(labels, sizeof labels, "op=\"%s\"", write ? "write" : "read");
    rb_harness_metric(&x->h, "railbench_checkpoint_duration_seconds", "gauge",
                      "The last checkpoint's duration: its slowest rank's time.", labels, f.duration_s);
    rb_harness_metric(&x->h, "railbench_checkpoint_throughput_bytes_per_second", "gauge",
                      "The last checkpoint's bytes over its duration.", labels, f.throughput_bytes_per_s);
    if (isfinite(f.min_rank_bytes_per_s))
        rb_harness_metric(&x->h, "railbench_checkpoint_min_rank_throughput_bytes_per_second", "gauge",
                          "The last checkpoint's slowest rank's own throughput.", labels, f.min_rank_bytes_per_s);
    rb_harness_metric(&x->h, "railbench_checkpoint_stragglers", "gauge",
                      "Ranks of the last checkpoint below half the ranks' median throughput.", labels,
                      cJSON_GetArraySize(st));
}

/* One mean row of the table and its JSON. */
static cJSON *mean_json(const struct rb_ckpt_figures *s, unsigned n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "checkpoints", n);
    /* No whole checkpoint: nothing was measured, null (never 0). */
    cJSON_AddItemToObject(o, "duration_s", num_or_null(n ? s->duration_s / n : NAN));
    cJSON_AddItemToObject(o, "throughput_bytes_per_s", num_or_null(n ? s->throughput_bytes_per_s / n : NAN));
    cJSON_AddItemToObject(o, "min_rank_throughput_bytes_per_s", num_or_null(n ? s->min_rank_bytes_per_s / n : NAN));
    cJSON_AddItemToObject(o, "bytes", n ? rb_json_u64(s->bytes / n) : cJSON_CreateNull());
    return o;
}

/* A figure for the table: value / scale in a field of width, or "–" where it was not measured (null). */
static void cell(char *out, size_t len, const cJSON *v, double scale, int width)
{
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
        snprintf(out, len, "%*.3f", width, v->valuedouble / scale);
    else
        snprintf(out, len, "%*s–", width - 1, ""); /* "–" is one column wide, three bytes */
}

static void table_row(char **t, size_t *len, const cJSON *p)
{
    char names[200] = "";
    size_t k = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(p, "stragglers"))
        k += (size_t)snprintf(names + k, k < sizeof names ? sizeof names - k : 0, "%srank %d", k ? ", " : "",
                              (int)cJSON_GetNumberValue(cJSON_GetObjectItem(s, "rank")));
    if (!cJSON_IsTrue(cJSON_GetObjectItem(p, "complete")))
        snprintf(names, sizeof names, "%s: %.0f of %.0f files, %.0f error(s); not in the mean",
                 cJSON_IsTrue(cJSON_GetObjectItem(p, "interrupted")) ? "interrupted" : "incomplete",
                 cJSON_GetNumberValue(cJSON_GetObjectItem(p, "files_done")),
                 cJSON_GetNumberValue(cJSON_GetObjectItem(p, "files")),
                 cJSON_GetNumberValue(cJSON_GetObjectItem(p, "errors")));
    char row[600], gbs[32], minr[32], dur[32];
    cell(gbs, sizeof gbs, cJSON_GetObjectItem(p, "throughput_bytes_per_s"), 1e9, 8);
    cell(minr, sizeof minr, cJSON_GetObjectItem(p, "min_rank_throughput_bytes_per_s"), 1e9, 13);
    cell(dur, sizeof dur, cJSON_GetObjectItem(p, "duration_s"), 1, 10);
    int n = snprintf(row, sizeof row, "| %-5s | %4d | %10.3f | %s | %s | %s | %s |\n",
                     cJSON_GetStringValue(cJSON_GetObjectItem(p, "op")),
                     (int)cJSON_GetNumberValue(cJSON_GetObjectItem(p, "checkpoint")),
                     cJSON_GetNumberValue(cJSON_GetObjectItem(p, "bytes")) / 1e9, dur, gbs, minr, names);
    char *nt = realloc(*t, *len + (size_t)n + 1);
    if (!nt)
        return;
    memcpy(nt + *len, row, (size_t)n + 1);
    *t = nt;
    *len += (size_t)n;
}

/* The table's last line: each mean, or "–" where no checkpoint was whole. */
static int mean_line(char *out, size_t len, const struct rb_ckpt_run *x)
{
    char w[64] = "–", r[64] = "–";
    if (x->nw)
        snprintf(w, sizeof w, "%.3f s, %.3f GB/s", x->wsum.duration_s / x->nw, x->wsum.throughput_bytes_per_s / x->nw / 1e9);
    if (x->nr)
        snprintf(r, sizeof r, "%.3f s, %.3f GB/s", x->rsum.duration_s / x->nr, x->rsum.throughput_bytes_per_s / x->nr / 1e9);
    return snprintf(out, len, "\nmean of %u whole write(s): %s; of %u whole read(s): %s (duration: the slowest rank's "
                    "time; throughput: checkpoint bytes over it)\n", x->nw, w, x->nr, r);
}

/* Rank 0: summary (model, per-checkpoint records, means, the cache flush) and the MLPerf-style table. */
char *rb_ckpt_report(struct rb_ckpt_run *x, const struct rb_cleanup *cl)
{
    struct rb_ckpt_args *a = x->a;
    const struct rb_ckpt_model *m = &a->model;
    uint64_t model_b, optim_b, full = rb_ckpt_total_bytes(m, 1, &model_b, &optim_b);
    cJSON *s = cJSON_CreateObject();
    cJSON *mj = cJSON_AddObjectToObject(s, "model");
    cJSON_AddStringToObject(mj, "name", m->name);
    cJSON_AddItemToObject(mj, "params", rb_json_u64(rb_ckpt_params(m)));
    cJSON_AddNumberToObject(mj, "tp", m->tp);
    cJSON_AddNumberToObject(mj, "pp", m->pp);
    cJSON_AddNumberToObject(mj, "dp", m->dp);
    cJSON_AddNumberToObject(mj, "zero", m->zero);
    cJSON_AddNumberToObject(mj, "ranks", (double)rb_ckpt_world(m));
    cJSON_AddItemToObject(mj, "checkpoint_bytes", rb_json_u64(full));
    cJSON_AddItemToObject(mj, "model_bytes", rb_json_u64(model_b));
    cJSON_AddItemToObject(mj, "optimizer_bytes", rb_json_u64(optim_b));
    cJSON_AddStringToObject(s, "target", rb_target_name(x->t));
    cJSON_AddStringToObject(s, "name", a->name);
    cJSON_AddStringToObject(s, "scale", a->scale_s ? a->scale_s : "1");
    cJSON_AddItemToObject(s, "scale_denominator", rb_json_u64(a->scale_den));
    cJSON_AddItemToObject(s, "checkpoint_bytes", rb_json_u64(x->total_bytes));
    cJSON_AddNumberToObject(s, "processes", x->h.size);
    cJSON_AddNumberToObject(s, "model_ranks_per_process", (double)x->mine.count);
    cJSON_AddBoolToObject(s, "subset", a->subset);
    cJSON_AddNumberToObject(s, "recovery_rank_shift", x->shift_by);
    cJSON_AddStringToObject(s, "mode", a->mode == RB_CKPT_MODE_WRITE ? "write" : a->mode == RB_CKPT_MODE_READ ? "read" : "both");
    cJSON_AddStringToObject(s, "cache_flush", a->drop_caches ? "drop_caches" : a->after ? "two_invocations" : "none");
    if (x->write_end_unix_s > 0)
        cJSON_AddNumberToObject(s, "write_end_unix_s", x->write_end_unix_s);
    cJSON_AddItemToObject(s, "writes", x->writes);
    cJSON_AddItemToObject(s, "reads", x->reads);
    x->writes = x->reads = NULL;
    cJSON_AddItemToObject(s, "write_mean", mean_json(&x->wsum, x->nw));
    cJSON_AddItemToObject(s, "read_mean", mean_json(&x->rsum, x->nr));
    cJSON_AddItemToObject(s, "cleanup", rb_cleanup_json(cl));
    if (a->files)
        cJSON_AddItemToObject(s, "dirs_removed", rb_json_u64(x->dirs_removed));
    if (x->cache_drop) {
        cJSON_AddItemToObject(s, "cache_drop", x->cache_drop);
        x->cache_drop = NULL;
    }
    if (a->files)
        rb_file_summary_json(s, &a->file);
    char head[4096];
    snprintf(head, sizeof head,
             "\n# railbench load checkpoint %s %s (%s)\n\n"
             "%s: %.3f B parameters, TP %u x PP %u x DP %u, ZeRO %u: %.1f GiB (model %.1f, optimizer %.1f) in %" PRIu64
             " ranks; scale %s: %.3f GB per checkpoint from %d process(es) x %" PRIu64 " model rank(s)%s\n\n"
             "| op    | ckpt |         GB | duration s |     GB/s | min rank GB/s | stragglers |\n"
             "|-------|-----:|-----------:|-----------:|---------:|--------------:|------------|\n",
             m->name, rb_target_name(x->t), x->a->name, m->name, rb_ckpt_params(m) / 1e9, m->tp, m->pp, m->dp, m->zero,
             full / 1073741824.0, model_b / 1073741824.0, optim_b / 1073741824.0, rb_ckpt_world(m),
             a->scale_s ? a->scale_s : "1", x->total_bytes / 1e9, x->h.size, x->mine.count, a->subset ? " (subset)" : "");
    char *t = strdup(head);
    size_t len = t ? strlen(t) : 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(s, "writes")) table_row(&t, &len, p);
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(s, "reads")) table_row(&t, &len, p);
    char tail[600];
    int n = mean_line(tail, sizeof tail, x);
    char *nt = t ? realloc(t, len + (size_t)n + 1) : NULL;
    if (nt) {
        memcpy(nt + len, tail, (size_t)n + 1);
        t = nt;
    }
    rb_result_set(&x->h.result, "summary", s);
    rb_provenance_write(&x->h.result);
    return t;
}

/* Rank 0: the host names by host index (gathered once). */
void rb_ckpt_gather_hosts(struct rb_ckpt_run *x)
{
    cJSON *mine = cJSON_CreateArray();
    cJSON_AddItemToArray(mine, cJSON_CreateNumber(x->h.host_index));
    cJSON_AddItemToArray(mine, cJSON_CreateString(x->h.host));
    cJSON *all = rb_harness_gather_json(&x->h, mine);
    cJSON_Delete(mine);
    if (x->h.rank != 0)
        return;
    x->nhosts = x->h.host_count > 0 ? x->h.host_count : 1;
    x->hosts = calloc((size_t)x->nhosts, sizeof *x->hosts);
    if (!x->hosts)
        rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "out of memory");
    const cJSON *e;
    cJSON_ArrayForEach(e, all)
    {
        int hi = (int)cJSON_GetNumberValue(cJSON_GetArrayItem(e, 0));
        if (hi >= 0 && hi < x->nhosts && !x->hosts[hi])
            x->hosts[hi] = strdup(cJSON_GetStringValue(cJSON_GetArrayItem(e, 1)));
    }
    for (int i = 0; i < x->nhosts; i++)
        if (!x->hosts[i])
            x->hosts[i] = strdup("?");
    cJSON_Delete(all);
}
