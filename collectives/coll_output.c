/* What railbench coll reports: nccl-tests' table and -J file, the result's phases, intervals and summary, the busbw gauge. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll_int.h"
#include "railbench/clock.h"
#include "railbench/file.h"
#include "railbench/log.h"

void rb_coll_out_init(struct rb_coll_out *out, struct rb_harness *h, const struct rb_coll_opts *o,
                      const char *json_path)
{
    memset(out, 0, sizeof *out);
    out->h = h;
    out->o = o;
    out->t0_ns = rb_clock_ns();
    out->json_path = json_path;
    if (h->rank == 0) {
        out->coll_rows = cJSON_CreateArray();
        out->not_applicable = cJSON_CreateArray();
    }
}

void rb_coll_out_text(struct rb_coll_out *out, const char *fmt, ...)
{
    if (out->h->rank != 0)
        return;
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (out->text_len + len + 1 > out->text_cap) {
        size_t cap = out->text_cap ? out->text_cap * 2 : 16384;
        while (cap < out->text_len + len + 1)
            cap *= 2;
        char *p = realloc(out->text, cap);
        if (!p)
            rb_harness_fatal(out->h, RB_EXIT_RUNTIME, "out of memory");
        out->text = p;
        out->text_cap = cap;
    }
    memcpy(out->text + out->text_len, line, len + 1);
    out->text_len += len;
    /*
     * After a signal, mpirun is tearing the job down and stops reading our
     * stdout; a blocked write would keep result.json from being written
     * before the kill that follows. The rest goes to table.md only.
     */
    if (!out->h->interrupted) {
        fputs(line, stdout);
        fflush(stdout);
    }
}

/* ---- the preamble ---- */

/* The "# Using devices" lines: one per rank, with its node and rail. Collective; the list on rank 0. */
static cJSON *print_devices(struct rb_coll_out *out, int node_index, int local)
{
    struct rb_harness *h = out->h;
    cJSON *mine = cJSON_CreateObject();
    cJSON_AddNumberToObject(mine, "rank", h->rank);
    cJSON_AddNumberToObject(mine, "pid", (double)getpid());
    cJSON_AddStringToObject(mine, "hostname", h->host);
    cJSON_AddNumberToObject(mine, "node", node_index);
    cJSON_AddNumberToObject(mine, "rail", local);
    cJSON_AddNumberToObject(mine, "group", out->group);
    cJSON *all = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    rb_coll_out_text(out, "#\n# Using devices\n");
    const cJSON *d;
    cJSON_ArrayForEach(d, all)
    {
        int rail = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "rail"));
        rb_coll_out_text(out, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [node %d rail %d] cpu\n",
                         (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "rank")),
                         (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "group")),
                         (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "pid")),
                         cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "hostname")), rail,
                         (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "node")), rail);
    }
    return all;
}

/* nccl-tests' own time format (TIME_STRING_FORMAT in src/util.cu), local time. */
static void local_time(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    strftime(buf, len, "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
}

/*
 * nccl-tests 2.19's -J document, keys in its order (version 3; yes/no
 * values are the strings "true" and "false", as its jsonBool writes them).
 * The environment is left out: it may hold secrets. railbench's own keys
 * carry a railbench_ prefix.
 */
static cJSON *json_doc_start(struct rb_coll_out *out, int argc, char **argv, const cJSON *devices)
{
    const struct rb_coll_opts *o = out->o;
    cJSON *doc = cJSON_CreateObject();
    char ts[40];
    cJSON_AddNumberToObject(doc, "version", RB_COLL_NCCL_JSON_VERSION);
    local_time(ts, sizeof ts);
    cJSON_AddStringToObject(doc, "start_time", ts);
    cJSON *args = cJSON_AddArrayToObject(doc, "args");
    cJSON_AddItemToArray(args, cJSON_CreateString("railbench"));
    for (int i = 0; i < argc; i++)
        cJSON_AddItemToArray(args, cJSON_CreateString(argv[i]));
    cJSON_AddNumberToObject(doc, "nccl_version", 0); /* no NCCL library: MPI moves the data */
    cJSON_AddStringToObject(doc, "railbench_version", rb_version());
    cJSON *cfg = cJSON_AddObjectToObject(doc, "config");
    cJSON_AddNumberToObject(cfg, "nthreads", 1);
    cJSON_AddNumberToObject(cfg, "ngpus", 1);
    cJSON_AddNumberToObject(cfg, "minimum_bytes", (double)o->minbytes);
    cJSON_AddNumberToObject(cfg, "maximum_bytes", (double)o->maxbytes);
    if (o->stepfactor > 1)
        cJSON_AddNumberToObject(cfg, "step_factor", (double)o->stepfactor);
    else
        cJSON_AddNumberToObject(cfg, "step_bytes", (double)o->stepbytes);
    cJSON_AddNumberToObject(cfg, "warmup_iters", (double)o->warmup);
    cJSON_AddNumberToObject(cfg, "iterations", (double)o->iters);
    cJSON_AddNumberToObject(cfg, "aggregated_iterations", (double)o->agg_iters);
    cJSON_AddNumberToObject(cfg, "validation", (double)o->check);
    cJSON_AddNumberToObject(cfg, "graph", 0);
    cJSON_AddStringToObject(cfg, "blocking_collectives", o->blocking ? "true" : "false");
    cJSON_AddStringToObject(cfg, "per_iter_timing", o->per_iter_timing ? "true" : "false");
    cJSON_AddNumberToObject(cfg, "per_iter_skip", (double)o->per_iter_skip);
    cJSON_AddStringToObject(cfg, "parallel_init", o->parallel_init ? "true" : "false");
    cJSON *devs = cJSON_AddArrayToObject(cfg, "devices");
    const cJSON *d;
    cJSON_ArrayForEach(d, devices)
    {
        cJSON *x = cJSON_CreateObject();
        int rail = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "rail"));
        char hex[48];
        snprintf(hex, sizeof hex, "node %d rail %d",
                 (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "node")), rail);
        cJSON_AddNumberToObject(x, "rank", cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "rank")));
        cJSON_AddNumberToObject(x, "group", cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "group")));
        cJSON_AddNumberToObject(x, "pid", cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "pid")));
        cJSON_AddStringToObject(x, "hostname", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "hostname")));
        cJSON_AddNumberToObject(x, "device", rail);
        cJSON_AddStringToObject(x, "device_hex", hex);
        cJSON_AddStringToObject(x, "device_info", "cpu");
        cJSON_AddItemToArray(devs, x);
    }
    out->json_results = cJSON_AddArrayToObject(doc, "results");
    return doc;
}

void rb_coll_out_preamble(struct rb_coll_out *out, const char *which, const char *algos, int node_index,
                          int local, int argc, char **argv)
{
    const struct rb_coll_opts *o = out->o;
    struct rb_harness *h = out->h;
    /* nccl-tests 2.19's writeDeviceReport: version, program, parameters, then the devices. */
    if (out->json_path[0])
        rb_coll_out_text(out, "# Writing JSON output to %s\n", out->json_path);
    rb_coll_out_text(out, "# nccl-tests version %s nccl-headers=0 nccl-library=0\n", RB_COLL_NCCL_TESTS_VERSION);
    rb_coll_out_text(out, "# Collective test starting: railbench coll %s\n", which);
    rb_coll_out_text(out,
                     "# nThread 1 nGpus 1 minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %llu iters: %llu "
                     "agg iters: %llu validation: %llu graph: 0 unalign: %llu\n",
                     (unsigned long long)o->minbytes, (unsigned long long)o->maxbytes,
                     (unsigned long long)(o->stepfactor > 1 ? o->stepfactor : o->stepbytes),
                     o->stepfactor > 1 ? "factor" : "bytes", (unsigned long long)o->warmup,
                     (unsigned long long)o->iters, (unsigned long long)o->agg_iters, (unsigned long long)o->check,
                     (unsigned long long)o->unalign);
    rb_coll_flags_notes(out);
    rb_coll_out_text(out, "# railbench %s coll %s: %d ranks on %d hosts, %d ranks per node%s, algorithms: %s\n",
                     rb_version(), which, h->size, h->host_count, out->ranks_per_node,
                     o->ranks_per_node ? " (--ranks-per-node)" : "", algos);
    if (out->ngroups > 1)
        rb_coll_out_text(out, "# split %s: %d groups, each running the collectives in its own communicator\n",
                         out->split ? out->split : "", out->ngroups);
    cJSON *devices = print_devices(out, node_index, local);
    if (out->json_path[0] && h->rank == 0)
        out->json_doc = json_doc_start(out, argc, argv, devices);
    cJSON_Delete(devices);
}

/* ---- the table's header ---- */

void rb_coll_out_table_header(struct rb_coll_out *out, const char *name, enum rb_coll_algo algo)
{
    const struct rb_coll_opts *o = out->o;
    char head[1024];
    rb_coll_table_header_str(head, sizeof head, o->cputime, o->per_iter_timing, o->timestamps);
    rb_coll_out_text(out, "#\n# railbench table: %s, algorithm %s\n%s", name, rb_coll_algo_name(algo), head);
}

/* ---- one row ---- */

double rb_coll_fig(double v)
{
    char s[32];
    if (!isfinite(v))
        return v;
    snprintf(s, sizeof s, "%.15g", v);
    return strtod(s, NULL);
}

void rb_coll_half_figs(struct rb_coll_half *r, int ngroups)
{
    double *f[] = {&r->time_us, &r->algbw, &r->busbw, &r->min_us, &r->avg_us, &r->max_us, &r->cpu_us,
                   &r->iter.min_us, &r->iter.max_us, &r->iter.avg_us, &r->iter.p50_us, &r->iter.p95_us,
                   &r->iter.p99_us, &r->iter.stdev_us, &r->iter.cv_pct};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        *f[i] = rb_coll_fig(*f[i]);
    for (int g = 0; r->groups && g < ngroups; g++) {
        r->groups[g].time_us = rb_coll_fig(r->groups[g].time_us);
        r->groups[g].algbw = rb_coll_fig(r->groups[g].algbw);
        r->groups[g].busbw = rb_coll_fig(r->groups[g].busbw);
    }
}

/* With split groups: each group's figures and their sum (the groups run side by side). */
static void groups_json(cJSON *j, const struct rb_coll_half *r, int ngroups)
{
    if (!r->groups)
        return;
    cJSON *gs = cJSON_AddArrayToObject(j, "groups");
    double sum = 0;
    for (int i = 0; i < ngroups; i++) {
        cJSON *g = cJSON_CreateObject();
        cJSON_AddNumberToObject(g, "group", r->groups[i].group);
        cJSON_AddNumberToObject(g, "ranks", r->groups[i].ranks);
        cJSON_AddNumberToObject(g, "time_us", r->groups[i].time_us);
        cJSON_AddNumberToObject(g, "algbw_gbps", r->groups[i].algbw);
        cJSON_AddNumberToObject(g, "busbw_gbps", r->groups[i].busbw);
        cJSON_AddItemToArray(gs, g);
        sum += r->groups[i].busbw;
    }
    cJSON_AddNumberToObject(j, "aggregate_busbw_gbps", rb_coll_fig(sum));
}

static cJSON *half_json(const struct rb_coll_opts *o, const struct rb_coll_half *r)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "time_us", r->time_us);
    if (o->cputime)
        cJSON_AddNumberToObject(j, "cputime_us", r->cpu_us);
    cJSON_AddNumberToObject(j, "algbw_gbps", r->algbw);
    cJSON_AddNumberToObject(j, "busbw_gbps", r->busbw);
    if (r->wrong < 0)
        cJSON_AddNullToObject(j, "wrong");
    else
        cJSON_AddNumberToObject(j, "wrong", (double)r->wrong);
    if (r->iter.have) {
        cJSON *it = cJSON_AddObjectToObject(j, "per_iter");
        cJSON_AddNumberToObject(it, "skipped", (double)r->iter.skipped);
        cJSON_AddNumberToObject(it, "min_us", r->iter.min_us);
        cJSON_AddNumberToObject(it, "max_us", r->iter.max_us);
        cJSON_AddNumberToObject(it, "avg_us", r->iter.avg_us);
        cJSON_AddNumberToObject(it, "p50_us", r->iter.p50_us);
        cJSON_AddNumberToObject(it, "p95_us", r->iter.p95_us);
        cJSON_AddNumberToObject(it, "p99_us", r->iter.p99_us);
        cJSON_AddNumberToObject(it, "stdev_us", r->iter.stdev_us);
        cJSON_AddNumberToObject(it, "cv_pct", r->iter.cv_pct);
    }
    return j;
}

/* nccl-tests' -J record of one half ("cpu_time" instead of "time" with -C, as nccl-tests writes it). */
static cJSON *half_nccl_json(const struct rb_coll_opts *o, const struct rb_coll_half *r)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, o->cputime ? "cpu_time" : "time", o->cputime ? r->cpu_us : r->time_us);
    cJSON_AddNumberToObject(j, "alg_bw", r->algbw);
    cJSON_AddNumberToObject(j, "bus_bw", r->busbw);
    if (r->wrong < 0)
        cJSON_AddNullToObject(j, "nwrong");
    else
        cJSON_AddNumberToObject(j, "nwrong", (double)r->wrong);
    return j;
}

/* The table line, and the row kept for the comparison table and the footer. */
static void row_table(struct rb_coll_out *out, const struct rb_coll_row *w)
{
    const struct rb_coll_opts *o = out->o;
    char line[768];
    int n = rb_coll_table_row_start(line, sizeof line, w->size_bytes, w->count, rb_coll_dtype_name(w->type),
                                    rb_coll_redop_name(w->op), w->root);
    for (int i = 0; i < 2; i++) {
        const struct rb_coll_half *h = &w->half[i];
        n += rb_coll_table_half(line + n, sizeof line - (size_t)n, o->cputime ? h->cpu_us : h->time_us, h->algbw,
                                h->busbw, h->wrong);
        if (o->per_iter_timing) { /* nccl-tests' writePerIterReport: four figures 7 wide */
            const double f[4] = {h->iter.min_us, h->iter.max_us, h->iter.p99_us, h->iter.cv_pct};
            for (int k = 0; k < 4; k++) {
                char v[16];
                rb_coll_table_float(v, sizeof v, f[k], 7);
                n += snprintf(line + n, sizeof line - (size_t)n, "  %7s", v);
            }
        }
    }
    if (o->timestamps) { /* -S: nccl-tests' writeTimestamp, "%21s" of TIME_STRING_FORMAT in local time */
        char ts[32];
        time_t now = time(NULL);
        struct tm tm;
        strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
        snprintf(line + n, sizeof line - (size_t)n, "%21s", ts);
    }
    rb_coll_out_text(out, "%s\n", line);

    if (out->nrows == out->caprows) {
        size_t cap = out->caprows ? 2 * out->caprows : 64;
        struct rb_coll_row *p = realloc(out->rows, cap * sizeof *p);
        if (!p)
            rb_harness_fatal(out->h, RB_EXIT_RUNTIME, "out of memory");
        out->rows = p;
        out->caprows = cap;
    }
    out->rows[out->nrows] = *w;
    for (int i = 0; i < 2; i++) { /* not owned here */
        out->rows[out->nrows].half[i].iter_json = NULL;
        out->rows[out->nrows].half[i].pair_bytes = NULL;
    }
    out->nrows++;
    for (int i = 0; i < 2; i++) {
        out->bw_sum += w->half[i].busbw;
        out->bw_n++;
        if (w->half[i].wrong > 0)
            out->wrong_total += w->half[i].wrong;
    }
}

/* The summary's collective_rows entry. */
static void row_summary(struct rb_coll_out *out, const struct rb_coll_row *w)
{
    cJSON *cr = cJSON_CreateObject();
    cJSON_AddStringToObject(cr, "coll", rb_coll_kind_name(w->kind));
    cJSON_AddStringToObject(cr, "algo", rb_coll_algo_name(w->algo));
    cJSON_AddNumberToObject(cr, "size_bytes", (double)w->size_bytes);
    cJSON_AddNumberToObject(cr, "count", (double)w->count);
    cJSON_AddStringToObject(cr, "type", rb_coll_dtype_name(w->type));
    cJSON_AddStringToObject(cr, "redop", rb_coll_redop_name(w->op));
    cJSON_AddNumberToObject(cr, "root", w->root);
    cJSON_AddNumberToObject(cr, "ranks", out->h->size);
    cJSON_AddNumberToObject(cr, "ranks_per_node", out->ranks_per_node);
    cJSON_AddItemToObject(cr, "oop", half_json(out->o, &w->half[0]));
    cJSON_AddItemToObject(cr, "ip", half_json(out->o, &w->half[1]));
    groups_json(cJSON_GetObjectItemCaseSensitive(cr, "oop"), &w->half[0], out->ngroups);
    groups_json(cJSON_GetObjectItemCaseSensitive(cr, "ip"), &w->half[1], out->ngroups);
    for (int i = 0; i < 2; i++) {
        const uint64_t *pb = w->half[i].pair_bytes;
        if (!pb)
            continue;
        cJSON *m = cJSON_CreateArray();
        for (int src = 0; src < out->group_size; src++) {
            cJSON *row = cJSON_CreateArray();
            for (int dst = 0; dst < out->group_size; dst++)
                cJSON_AddItemToArray(row, rb_json_u64(pb[(size_t)src * out->group_size + dst]));
            cJSON_AddItemToArray(m, row);
        }
        cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(cr, i ? "ip" : "oop"), "pair_bytes", m);
    }
    cJSON *osu = cJSON_AddObjectToObject(cr, "osu");
    cJSON_AddNumberToObject(osu, "min_us", w->half[0].min_us);
    cJSON_AddNumberToObject(osu, "avg_us", w->half[0].avg_us);
    cJSON_AddNumberToObject(osu, "max_us", w->half[0].max_us);
    cJSON_AddItemToArray(out->coll_rows, cr);
}

/* A phase per row, so reports can plot busbw against size. */
static void row_phase(struct rb_coll_out *out, const struct rb_coll_row *w, const char *phase_name)
{
    struct rb_harness *h = out->h;
    const struct rb_coll_half *oop = &w->half[0];
    double iters = (double)out->o->iters * (double)out->o->agg_iters; /* operations timed */
    double bytes = (double)w->size_bytes; /* nccl-tests' S */
    cJSON *ph = cJSON_CreateObject();
    cJSON_AddStringToObject(ph, "name", phase_name);
    cJSON_AddStringToObject(ph, "op", rb_coll_kind_name(w->kind));
    cJSON_AddStringToObject(ph, "algo", rb_coll_algo_name(w->algo));
    cJSON_AddStringToObject(ph, "type", rb_coll_dtype_name(w->type));
    cJSON_AddStringToObject(ph, "redop", rb_coll_redop_name(w->op));
    cJSON_AddNumberToObject(ph, "root", w->root);
    cJSON_AddNumberToObject(ph, "ranks", h->size);
    cJSON_AddNumberToObject(ph, "size_bytes", (double)w->size_bytes);
    cJSON_AddNumberToObject(ph, "elements", (double)w->count);
    cJSON_AddNumberToObject(ph, "count", iters);
    cJSON_AddNumberToObject(ph, "bytes", bytes * iters);
    cJSON_AddNumberToObject(ph, "duration_s", oop->time_us * iters / 1e6);
    cJSON_AddNumberToObject(ph, "throughput_bytes_per_s", oop->algbw * 1e9);
    cJSON_AddNumberToObject(ph, "ops_per_s", oop->time_us > 0 ? 1e6 / oop->time_us : 0);
    cJSON_AddNumberToObject(ph, "time_us", oop->time_us);
    cJSON_AddNumberToObject(ph, "algbw_gbps", oop->algbw);
    cJSON_AddNumberToObject(ph, "busbw_gbps", oop->busbw);
    cJSON_AddItemToObject(ph, "in_place", half_json(out->o, &w->half[1]));
    cJSON *errs = cJSON_AddObjectToObject(ph, "errors");
    cJSON_AddNumberToObject(errs, "total", (double)((oop->wrong > 0 ? oop->wrong : 0) +
                                                    (w->half[1].wrong > 0 ? w->half[1].wrong : 0)));
    rb_result_add_phase(&h->result, ph);
}

/* The intervals.jsonl line and the busbw gauge. */
static void row_live(struct rb_coll_out *out, const struct rb_coll_row *w, const char *phase_name)
{
    struct rb_harness *h = out->h;
    const struct rb_coll_half *oop = &w->half[0];
    const char *coll = rb_coll_kind_name(w->kind), *algo = rb_coll_algo_name(w->algo);
    cJSON *iv = cJSON_CreateObject();
    char ts[40];
    rb_clock_iso8601(ts, sizeof ts, rb_clock_wall_ns());
    cJSON_AddStringToObject(iv, "phase", phase_name);
    cJSON_AddStringToObject(iv, "op", coll);
    cJSON_AddNumberToObject(iv, "t_s", (double)(rb_clock_ns() - out->t0_ns) / 1e9);
    cJSON_AddStringToObject(iv, "ts", ts);
    cJSON_AddNumberToObject(iv, "time_us", oop->time_us);
    cJSON_AddNumberToObject(iv, "algbw_gbps", oop->algbw);
    cJSON_AddNumberToObject(iv, "busbw_gbps", oop->busbw);
    rb_result_interval(&h->result, iv);

    char labels[256];
    snprintf(labels, sizeof labels, "coll=\"%s\",algo=\"%s\",dtype=\"%s\",redop=\"%s\",size=\"%zu\"", coll, algo,
             rb_coll_dtype_name(w->type), rb_coll_redop_name(w->op), w->size_bytes);
    rb_harness_metric(h, "railbench_coll_busbw_bytes_per_second", "gauge",
                      "Bus bandwidth (nccl-tests' busbw) of the out-of-place run, bytes per second.", labels,
                      oop->busbw * 1e9);
}

/* nccl-tests' -J record of the row; it takes the halves' -I records. */
static void row_nccl_json(struct rb_coll_out *out, const struct rb_coll_row *w)
{
    const char *coll = rb_coll_kind_name(w->kind), *algo = rb_coll_algo_name(w->algo);
    char root[16], name[64];
    cJSON *j = cJSON_CreateObject();
    snprintf(root, sizeof root, "%6d", w->root);
    cJSON_AddNumberToObject(j, "size", (double)w->size_bytes);
    cJSON_AddNumberToObject(j, "count", (double)w->count);
    cJSON_AddStringToObject(j, "type", rb_coll_dtype_name(w->type));
    cJSON_AddStringToObject(j, "redop", rb_coll_redop_name(w->op));
    cJSON_AddStringToObject(j, "root", root);
    cJSON_AddItemToObject(j, "out_of_place", half_nccl_json(out->o, &w->half[0]));
    if (w->half[0].iter_json)
        cJSON_AddItemToObject(j, "out_of_place_per_iter", w->half[0].iter_json);
    cJSON_AddItemToObject(j, "in_place", half_nccl_json(out->o, &w->half[1]));
    if (w->half[1].iter_json)
        cJSON_AddItemToObject(j, "in_place_per_iter", w->half[1].iter_json);
    cJSON_AddNumberToObject(j, "actual_iterations", (double)out->o->iters);
    cJSON_AddStringToObject(j, "experiment_name", ""); /* what nccl-tests' TimeTest writes */
    snprintf(name, sizeof name, "%s/%s", coll, algo);
    cJSON_AddStringToObject(j, "railbench_experiment", name);
    cJSON_AddStringToObject(j, "railbench_collective", coll);
    cJSON_AddStringToObject(j, "railbench_algorithm", algo);
    cJSON_AddItemToArray(out->json_results, j);
}

void rb_coll_out_row(struct rb_coll_out *out, const struct rb_coll_row *w, const char *phase_name)
{
    if (out->h->rank != 0)
        return;
    row_table(out, w);
    row_summary(out, w);
    row_phase(out, w, phase_name);
    row_live(out, w, phase_name);
    if (out->json_results) {
        row_nccl_json(out, w);
    } else {
        cJSON_Delete(w->half[0].iter_json);
        cJSON_Delete(w->half[1].iter_json);
    }
    free(w->half[0].pair_bytes);
    free(w->half[1].pair_bytes);
}

void rb_coll_out_partial(struct rb_coll_out *out, const struct rb_coll_row *w, const char *phase_name)
{
    if (out->h->rank != 0)
        return;
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "phase", phase_name);
    cJSON_AddStringToObject(p, "coll", rb_coll_kind_name(w->kind));
    cJSON_AddStringToObject(p, "algo", rb_coll_algo_name(w->algo));
    cJSON_AddNumberToObject(p, "size_bytes", (double)w->size_bytes);
    cJSON_AddNumberToObject(p, "iterations", (double)out->o->iters);
    for (int i = 0; i < 2; i++) {
        const struct rb_coll_half *hf = &w->half[i];
        if (!hf->iters_done) { /* not timed: no figure */
            cJSON_AddNullToObject(p, i ? "ip" : "oop");
            continue;
        }
        cJSON *j = half_json(out->o, hf);
        cJSON_AddNumberToObject(j, "iterations_timed", (double)hf->iters_done);
        cJSON_AddItemToObject(p, i ? "ip" : "oop", j);
    }
    const struct rb_coll_half *cut = w->half[1].iters_done ? &w->half[1] : &w->half[0];
    rb_coll_out_text(out, "#  cut short by a signal: %zu B, %s half, %llu of %llu iterations timed%s\n", w->size_bytes,
                     cut == &w->half[1] ? "in-place" : "out-of-place", (unsigned long long)cut->iters_done,
                     (unsigned long long)out->o->iters, cut->iters_done ? "" : " (nothing measured)");
    cJSON_Delete(out->partial_row);
    out->partial_row = p;
    cJSON_Delete(w->half[0].iter_json);
    cJSON_Delete(w->half[1].iter_json);
    free(w->half[0].pair_bytes);
    free(w->half[1].pair_bytes);
    free(w->half[0].groups);
    free(w->half[1].groups);
}

void rb_coll_out_not_applicable(struct rb_coll_out *out, const char *name, enum rb_coll_algo algo, const char *why)
{
    rb_coll_out_text(out, "#\n# %s: not applicable to %s: %s\n", rb_coll_algo_name(algo), name, why);
    if (out->h->rank == 0) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "coll", name);
        cJSON_AddStringToObject(o, "algo", rb_coll_algo_name(algo));
        cJSON_AddStringToObject(o, "why", why);
        cJSON_AddItemToArray(out->not_applicable, o);
    }
}

/* ---- the end ---- */

/* busbw per size with one column per algorithm, for --algo lists. */
static void comparison(struct rb_coll_out *out, enum rb_coll_kind kind, const enum rb_coll_algo *algos, int nalgos)
{
    size_t first = SIZE_MAX;
    for (size_t i = 0; i < out->nrows; i++)
        if (out->rows[i].kind == kind) {
            first = i;
            break;
        }
    if (first == SIZE_MAX || nalgos < 2)
        return;
    char line[1024];
    int n = snprintf(line, sizeof line, "#%12s  %8s  %6s  %6s", "size", "type", "redop", "root");
    for (int k = 0; k < nalgos; k++)
        n += snprintf(line + n, sizeof line - (size_t)n, "  %7s", rb_coll_algo_name(algos[k]));
    rb_coll_out_text(out, "#\n# %s: busbw (GB/s, out-of-place) by algorithm\n%s\n", rb_coll_kind_name(kind), line);
    /* Keys in order of first appearance, from the first algorithm that ran. */
    enum rb_coll_algo key_algo = out->rows[first].algo;
    for (size_t i = first; i < out->nrows; i++) {
        const struct rb_coll_row *k = &out->rows[i];
        if (k->kind != kind || k->algo != key_algo)
            continue;
        n = snprintf(line, sizeof line, " %12zu  %8s  %6s  %6d", k->size_bytes, rb_coll_dtype_name(k->type),
                     rb_coll_redop_name(k->op), k->root);
        for (int a = 0; a < nalgos; a++) {
            const struct rb_coll_row *m = NULL;
            for (size_t j = 0; j < out->nrows && !m; j++) {
                const struct rb_coll_row *c = &out->rows[j];
                if (c->kind == k->kind && c->algo == algos[a] && c->type == k->type && c->op == k->op &&
                    c->root == k->root && c->size_bytes == k->size_bytes)
                    m = c;
            }
            if (m)
                n += snprintf(line + n, sizeof line - (size_t)n, "  %7.2f", m->half[0].busbw);
            else
                n += snprintf(line + n, sizeof line - (size_t)n, "  %7s", "-");
        }
        rb_coll_out_text(out, "#%s\n", line + 1);
    }
}

/* With split groups: out-of-place busbw per row and group, and their sum (the groups ran side by side). */
static void split_table(struct rb_coll_out *out)
{
    if (out->ngroups < 2 || out->nrows == 0 || !out->rows[0].half[0].groups)
        return;
    char line[2048];
    int n = snprintf(line, sizeof line, "#%12s  %-10s  %-6s", "size", "coll", "algo");
    for (int g = 0; g < out->ngroups; g++) {
        char name[16];
        snprintf(name, sizeof name, "g%d", out->rows[0].half[0].groups[g].group);
        n += snprintf(line + n, sizeof line - (size_t)n, "  %7s", name);
    }
    rb_coll_out_text(out, "#\n# split %s: %d groups side by side; the table above is rank 0's group (%d ranks), times "
                          "per -a over every rank as nccl-tests; busbw (GB/s, out-of-place) by group and their sum\n"
                          "%s  %7s\n",
                     out->split ? out->split : "", out->ngroups, out->rows[0].half[0].groups[0].ranks, line, "sum");
    for (size_t i = 0; i < out->nrows; i++) {
        const struct rb_coll_row *w = &out->rows[i];
        if (!w->half[0].groups)
            continue;
        double sum = 0;
        n = snprintf(line, sizeof line, "#%12zu  %-10s  %-6s", w->size_bytes, rb_coll_kind_name(w->kind),
                     rb_coll_algo_name(w->algo));
        for (int g = 0; g < out->ngroups; g++) {
            n += snprintf(line + n, sizeof line - (size_t)n, "  %7.2f", w->half[0].groups[g].busbw);
            sum += w->half[0].groups[g].busbw;
        }
        rb_coll_out_text(out, "%s  %7.2f\n", line, rb_coll_fig(sum));
    }
}

static void json_doc_finish(struct rb_coll_out *out, double avg_bw)
{
    cJSON *doc = out->json_doc;
    char ts[40];
    cJSON *oob = cJSON_AddObjectToObject(doc, "out_of_bounds");
    cJSON_AddNumberToObject(oob, "count", (double)out->wrong_total);
    cJSON_AddStringToObject(oob, "okay", out->wrong_total ? "false" : "true");
    cJSON *abw = cJSON_AddObjectToObject(doc, "average_bus_bandwidth");
    cJSON_AddNumberToObject(abw, "bandwidth", avg_bw);
    cJSON_AddStringToObject(abw, "okay", "unchecked");
    cJSON_AddArrayToObject(doc, "errors");
    local_time(ts, sizeof ts);
    cJSON_AddStringToObject(doc, "end_time", ts);
    char *s = cJSON_Print(doc);
    if (!s || rb_file_write_atomic(out->json_path, s, strlen(s)) != 0)
        rb_error("--output_json %s: cannot write the JSON output", out->json_path);
    free(s);
}

void rb_coll_out_finish(struct rb_coll_out *out, const char *which, const enum rb_coll_kind *kinds, int nkinds,
                        const enum rb_coll_algo *algos, int nalgos)
{
    struct rb_harness *h = out->h;
    if (h->rank != 0)
        return;
    double avg_bw = out->bw_n ? rb_coll_fig(out->bw_sum / (double)out->bw_n) : 0;
    for (int k = 0; k < nkinds; k++)
        comparison(out, kinds[k], algos, nalgos);
    split_table(out);
    char foot[256];
    rb_coll_table_footer(foot, sizeof foot, out->wrong_total, avg_bw);
    /* nccl-tests 2.19: footer, "concluded", finalizeFooter's "#", and writeErrors' empty line when there is no error. */
    rb_coll_out_text(out, "%s# Collective test concluded: railbench coll %s\n#\n\n", foot, which);

    cJSON *summary = cJSON_CreateObject();
    cJSON_AddItemToObject(summary, "collective_rows", out->coll_rows);
    cJSON_AddNumberToObject(summary, "avg_busbw_gbps", avg_bw);
    cJSON_AddNumberToObject(summary, "wrong_total", (double)out->wrong_total);
    cJSON_AddItemToObject(summary, "not_applicable", out->not_applicable);
    cJSON_AddNumberToObject(summary, "ranks", h->size);
    cJSON_AddNumberToObject(summary, "ranks_per_node", out->ranks_per_node);
    if (out->ngroups > 1) {
        cJSON *sp = cJSON_AddObjectToObject(summary, "split");
        cJSON_AddStringToObject(sp, "how", out->split ? out->split : "");
        cJSON_AddNumberToObject(sp, "groups", out->ngroups);
    }
    if (out->partial_row)
        cJSON_AddItemToObject(summary, "partial_row", out->partial_row);
    out->coll_rows = out->not_applicable = out->partial_row = NULL; /* the summary owns them now */
    rb_result_set(&h->result, "summary", summary);
    if (out->o->check)
        rb_result_check(&h->result, "wrong", out->wrong_total == 0, "%lld wrong elements in %zu rows",
                        out->wrong_total, out->nrows);
    rb_result_write_table(&h->result, out->text ? out->text : "");
    if (out->json_doc)
        json_doc_finish(out, avg_bw);
}

void rb_coll_out_free(struct rb_coll_out *out)
{
    for (size_t i = 0; i < out->nrows; i++) {
        free(out->rows[i].half[0].groups);
        free(out->rows[i].half[1].groups);
    }
    cJSON_Delete(out->json_doc);
    cJSON_Delete(out->coll_rows);
    cJSON_Delete(out->not_applicable);
    cJSON_Delete(out->partial_row);
    free(out->rows);
    free(out->text);
    memset(out, 0, sizeof *out);
}
