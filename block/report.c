/* railbench block: the report after a sweep (table per block size, knee, best point within the SLO, summary). */
#include "block_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "railbench/buf.h"
#include "railbench/result.h"
#include "railbench/units.h"

/* The report under construction: the table text and the summary's parts that every curve adds to. */
struct report {
    const struct rb_block_results *res;
    struct rb_buf t;
    cJSON *summary, *knees, *slo_json, *slo_per_bs;
    /* Only complete points, in sweep order: cp[i] is bp[cidx[i]]. */
    struct rb_block_point *cp;
    int *cidx;
    size_t m;
};

/* One curve: the points of one block size, [a, b) in the sweep, [ca, cb) among the complete ones. */
struct curve {
    size_t a, b, ca, cb;
    int k;       /* the knee's index in cp[ca..cb), or -1 */
    int knee_i;  /* the knee's index in the sweep, or -1 */
    int best_i;  /* the best point within the SLO, index in the sweep, or -1 */
};

static cJSON *point_ref(const struct rb_block_spec *ps, const struct rb_block_point *bp, int index)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "point", ps->name);
    cJSON_AddNumberToObject(o, "index", index);
    cJSON_AddNumberToObject(o, "bs", (double)bp->bs_bytes);
    cJSON_AddNumberToObject(o, "iodepth", (double)bp->iodepth);
    cJSON_AddNumberToObject(o, "numjobs", (double)bp->numjobs);
    cJSON_AddNumberToObject(o, "outstanding", (double)rb_block_outstanding(bp));
    cJSON_AddNumberToObject(o, "iops", bp->iops);
    cJSON_AddNumberToObject(o, "clat_p99_ns", (double)bp->clat_ns[2]);
    return o;
}

/* The lines above the tables: what ran, where, and how to read the figures. */
static void head_text(struct report *R, const struct rb_harness *h)
{
    const struct rb_block_opts *o = R->res->o;
    char rt[32];
    rb_format_duration(rt, sizeof rt, o->runtime_ns);
    rb_buf_printf(&R->t, "\n# railbench block: %s", rb_block_rw_names[o->rw]);
    if (o->rw == RB_BLOCK_RANDRW)
        rb_buf_printf(&R->t, " (%.0f%% reads)", o->rwmix_pct);
    rb_buf_printf(&R->t, " on %d rank%s, %s direct=%d, runtime %s per point\n\ntarget (rank 0): %s", h->size,
                  h->size == 1 ? "" : "s", o->engine, (int)o->direct, rt, R->res->target0);
    const struct rb_block_target *t0 = R->res->t0;
    if (t0 && t0->mount_point[0])
        rb_buf_printf(&R->t, " on %s (%s, mounted at %s)", t0->mount_source, t0->fstype, t0->mount_point);
    rb_buf_printf(&R->t, "\n");
    rb_buf_printf(&R->t, "Outstanding I/O is iodepth x jobs on each rank. IOPS and MiB/s are summed over ranks; "
                         "latencies are completion latencies (clat) of every I/O of every rank.\n");
}

/* result.json's summary before the curves: the sweep's settings, the points, the knee rule, the SLO. */
static void summary_head(struct report *R, cJSON *points)
{
    const struct rb_block_opts *o = R->res->o;
    const struct rb_block_slo *slo = R->res->slo;
    cJSON *summary = R->summary = cJSON_CreateObject();
    cJSON_AddStringToObject(summary, "rw", rb_block_rw_names[o->rw]);
    cJSON_AddStringToObject(summary, "engine", o->engine);
    cJSON_AddNumberToObject(summary, "direct", (double)o->direct);
    cJSON_AddNumberToObject(summary, "runtime_s", (double)o->runtime_ns / 1e9);
    cJSON_AddNumberToObject(summary, "ramp_s", (double)o->ramp_ns / 1e9);
    cJSON_AddStringToObject(summary, "target", R->res->target0);
    if (R->res->t0 && R->res->t0->mount_point[0]) {
        cJSON *m = cJSON_AddObjectToObject(summary, "target_mount");
        cJSON_AddStringToObject(m, "mount_point", R->res->t0->mount_point);
        cJSON_AddStringToObject(m, "source", R->res->t0->mount_source);
        cJSON_AddStringToObject(m, "fstype", R->res->t0->fstype);
    }
    cJSON_AddStringToObject(summary, "fio_version", R->res->fio_version);
    cJSON *extra = cJSON_AddArrayToObject(summary, "fio_opts");
    for (size_t i = 0; extra && i < o->fio_opts.n; i++)
        cJSON_AddItemToArray(extra, cJSON_CreateString(o->fio_opts.v[i]));
    cJSON_AddItemToObject(summary, "block_points", points);
    cJSON *knee = cJSON_AddObjectToObject(summary, "knee");
    char rule[200];
    snprintf(rule, sizeof rule,
             "last point before the first step where IOPS grow < %.0f %% while clat p99 grows > %.0f %%",
             100 * RB_BLOCK_KNEE_MAX_IOPS_GAIN, 100 * RB_BLOCK_KNEE_MIN_P99_GROWTH);
    cJSON_AddStringToObject(knee, "rule", rule);
    R->knees = cJSON_AddArrayToObject(knee, "per_bs");
    if (!slo) {
        cJSON_AddNullToObject(summary, "slo");
        return;
    }
    R->slo_json = cJSON_AddObjectToObject(summary, "slo");
    cJSON_AddStringToObject(R->slo_json, "expr", slo->text);
    cJSON_AddStringToObject(R->slo_json, "latency", slo->kind == RB_BLOCK_LAT ? "lat" : "clat");
    cJSON_AddStringToObject(R->slo_json, "percentile", rb_fio_pct_key[slo->pct]);
    cJSON_AddNumberToObject(R->slo_json, "bound_ns", (double)slo->bound_ns);
    cJSON_AddBoolToObject(R->slo_json, "inclusive", slo->inclusive);
    R->slo_per_bs = cJSON_CreateArray();
}

/*
 * The curve starting at sweep index a: its extent, and its knee and best
 * point among its complete points. False when the sweep stopped before this
 * block size (nothing measured); c->b is set either way.
 */
static bool curve_find(const struct report *R, size_t a, struct curve *c)
{
    const struct rb_block_results *res = R->res;
    c->a = c->b = a;
    while (c->b < res->n && res->ps[c->b].bs == res->ps[a].bs)
        c->b++;
    bool measured = false;
    for (size_t i = c->a; i < c->b; i++)
        measured = measured || res->bp[i].bs_bytes != 0;
    if (!measured)
        return false;
    c->ca = 0;
    while (c->ca < R->m && (size_t)R->cidx[c->ca] < c->a)
        c->ca++;
    for (c->cb = c->ca; c->cb < R->m && (size_t)R->cidx[c->cb] < c->b; c->cb++)
        ;
    c->k = rb_block_knee(R->cp + c->ca, c->cb - c->ca);
    c->knee_i = c->k >= 0 ? R->cidx[c->ca + (size_t)c->k] : -1;
    c->best_i = -1;
    if (res->slo) {
        int s = rb_block_slo_best(res->slo, R->cp + c->ca, c->cb - c->ca);
        c->best_i = s >= 0 ? R->cidx[c->ca + (size_t)s] : -1;
    }
    return true;
}

/* --rw randrw: the curve's reads and writes apart (the table above mixes them). */
static void split_table(struct report *R, const struct curve *c)
{
    const struct rb_block_point *bp = R->res->bp;
    rb_buf_printf(&R->t, "reads and writes apart (clat p99: fio's per direction, worst rank):\n\n"
                         "| outstanding | read IOPS | read clat p99 | write IOPS | write clat p99 |\n"
                         "|------------:|----------:|--------------:|-----------:|---------------:|\n");
    for (size_t i = c->a; i < c->b; i++) {
        if (bp[i].bs_bytes == 0)
            continue;
        char p99[2][16];
        for (int d = 0; d < 2; d++)
            if (bp[i].dir_clat_p99_ns[d])
                rb_format_duration_human(p99[d], sizeof p99[d], bp[i].dir_clat_p99_ns[d]);
            else
                snprintf(p99[d], sizeof p99[d], "–");
        rb_buf_printf(&R->t, "| %11" PRIu64 " | %9.0f | %13s | %10.0f | %14s |\n", rb_block_outstanding(&bp[i]),
                      bp[i].dir_iops[0], p99[0], bp[i].dir_iops[1], p99[1]);
    }
    rb_buf_printf(&R->t, "\n");
}

/* The table of one curve: one row per measured point, the knee and the best point noted. */
static void curve_table(struct report *R, const struct curve *c)
{
    const struct rb_block_point *bp = R->res->bp;
    char size[32];
    rb_format_size(size, sizeof size, R->res->ps[c->a].bs);
    rb_buf_printf(&R->t, "\n## bs %s\n\n", size);
    rb_buf_printf(&R->t, "| outstanding | iodepth | jobs |       IOPS |    MiB/s | clat p50 | clat p99 | clat p99.9 | util %% | note |\n");
    rb_buf_printf(&R->t, "|------------:|--------:|-----:|-----------:|---------:|---------:|---------:|-----------:|-------:|------|\n");
    bool no_util = false;
    for (size_t i = c->a; i < c->b; i++) {
        if (bp[i].bs_bytes == 0) /* not measured (the sweep stopped before it) */
            continue;
        char p50[16], p99[16], p999[16], util[16];
        rb_format_duration_human(p50, sizeof p50, bp[i].clat_ns[0]);
        rb_format_duration_human(p99, sizeof p99, bp[i].clat_ns[2]);
        rb_format_duration_human(p999, sizeof p999, bp[i].clat_ns[3]);
        if (bp[i].disk_util_pct >= 0)
            snprintf(util, sizeof util, "%.1f", bp[i].disk_util_pct);
        else
            no_util = snprintf(util, sizeof util, "–") > 0;
        const char *note = !R->res->complete[i]                     ? "interrupted"
                           : (int)i == c->knee_i && (int)i == c->best_i ? "knee, best within SLO"
                           : (int)i == c->knee_i                     ? "knee"
                           : (int)i == c->best_i                     ? "best within SLO"
                                                                     : "";
        rb_buf_printf(&R->t, "| %11" PRIu64 " | %7" PRIu64 " | %4" PRIu64 " | %10.0f | %8.2f | %8s | %8s | %10s | %*s | %s |\n",
                      rb_block_outstanding(&bp[i]), bp[i].iodepth, bp[i].numjobs, bp[i].iops,
                      bp[i].bw_bytes_per_s / (double)RB_MIB, p50, p99, p999,
                      bp[i].disk_util_pct >= 0 ? 6 : 8 /* "–" is 3 bytes wide, 1 column */, util, note);
    }
    if (no_util)
        rb_buf_printf(&R->t, "\nutil %% –: not measured; fio reported no disk utilisation (it finds none for a "
                             "target it cannot map to a block device in /sys/block, such as a file on tmpfs or "
                             "overlayfs)\n");
    rb_buf_printf(&R->t, "\n");
    if (R->res->o->rw == RB_BLOCK_RANDRW)
        split_table(R, c);
}

/* The knee of one curve: a line under its table and an entry in the summary's knee.per_bs. */
static void curve_knee(struct report *R, const struct curve *c)
{
    const struct rb_block_results *res = R->res;
    cJSON *kj = cJSON_CreateObject();
    cJSON_AddNumberToObject(kj, "bs", (double)res->ps[c->a].bs);
    cJSON_AddStringToObject(kj, "rw", rb_block_rw_names[res->o->rw]);
    if (c->knee_i >= 0) {
        size_t next = c->ca + (size_t)c->k + 1;
        const struct rb_block_point *x = &res->bp[c->knee_i], *y = &R->cp[next];
        double gain = 100 * (y->iops / x->iops - 1);
        double growth = 100 * ((double)y->clat_ns[2] / (double)x->clat_ns[2] - 1);
        cJSON_AddItemToObject(kj, "point", point_ref(&res->ps[c->knee_i], x, c->knee_i));
        cJSON_AddItemToObject(kj, "next", point_ref(&res->ps[R->cidx[next]], y, R->cidx[next]));
        cJSON_AddNumberToObject(kj, "iops_gain_pct", gain);
        cJSON_AddNumberToObject(kj, "p99_growth_pct", growth);
        rb_buf_printf(&R->t, "knee: outstanding %" PRIu64 " (%.0f IOPS); the next step, outstanding %" PRIu64
                             ", changes IOPS by %+.1f %% and clat p99 by %+.0f %%\n",
                      rb_block_outstanding(x), x->iops, rb_block_outstanding(y), gain, growth);
    } else {
        cJSON_AddNullToObject(kj, "point");
        rb_buf_printf(&R->t, "knee: none up to outstanding %" PRIu64 " (no step adds < %.0f %% IOPS for > %.0f %% more clat p99)\n",
                      c->cb > c->ca ? rb_block_outstanding(&R->cp[c->cb - 1]) : 0, 100 * RB_BLOCK_KNEE_MAX_IOPS_GAIN,
                      100 * RB_BLOCK_KNEE_MIN_P99_GROWTH);
    }
    cJSON_AddItemToArray(R->knees, kj);
}

/* The best point within the SLO of one curve: a line and an entry in the summary's slo.per_bs. */
static void curve_slo(struct report *R, const struct curve *c)
{
    const struct rb_block_results *res = R->res;
    cJSON *sj = cJSON_CreateObject();
    cJSON_AddNumberToObject(sj, "bs", (double)res->ps[c->a].bs);
    if (c->best_i >= 0) {
        const struct rb_block_point *b = &res->bp[c->best_i];
        cJSON_AddItemToObject(sj, "best", point_ref(&res->ps[c->best_i], b, c->best_i));
        rb_buf_printf(&R->t, "SLO %s: highest IOPS %.0f at outstanding %" PRIu64 " (iodepth %" PRIu64 ", jobs %" PRIu64 ")\n",
                      res->slo->text, b->iops, rb_block_outstanding(b), b->iodepth, b->numjobs);
    } else {
        cJSON_AddNullToObject(sj, "best");
        rb_buf_printf(&R->t, "SLO %s: no point meets it\n", res->slo->text);
    }
    cJSON_AddItemToArray(R->slo_per_bs, sj);
}

/* The best point within the SLO over every block size: the summary's slo.best and the "slo" check. */
static void slo_overall(struct report *R, struct rb_harness *h, int best_all)
{
    const struct rb_block_results *res = R->res;
    if (best_all >= 0)
        cJSON_AddItemToObject(R->slo_json, "best", point_ref(&res->ps[best_all], &res->bp[best_all], best_all));
    else
        cJSON_AddNullToObject(R->slo_json, "best");
    cJSON_AddItemToObject(R->slo_json, "per_bs", R->slo_per_bs);
    if (best_all >= 0)
        rb_result_check(&h->result, "slo", true, "%s met: %.0f IOPS at %s", res->slo->text, res->bp[best_all].iops,
                        res->ps[best_all].name);
    else
        rb_result_check(&h->result, "slo", false, "%s: no measured point meets it", res->slo->text);
}

char *rb_block_report(struct rb_harness *h, const struct rb_block_results *res, cJSON *points)
{
    struct report R = {.res = res};
    head_text(&R, h);
    summary_head(&R, points);
    size_t n = res->n;
    R.cp = calloc(n ? n : 1, sizeof *R.cp);
    R.cidx = calloc(n ? n : 1, sizeof *R.cidx);
    for (size_t i = 0; R.cp && R.cidx && i < n; i++)
        if (res->complete[i]) {
            R.cp[R.m] = res->bp[i];
            R.cidx[R.m++] = (int)i;
        }
    int best_all = -1;
    struct curve c;
    for (size_t a = 0; a < n; a = c.b) {
        if (!curve_find(&R, a, &c))
            continue;
        if (c.best_i >= 0 && (best_all < 0 || res->bp[c.best_i].iops > res->bp[best_all].iops))
            best_all = c.best_i;
        curve_table(&R, &c);
        curve_knee(&R, &c);
        if (res->slo)
            curve_slo(&R, &c);
    }
    if (res->slo)
        slo_overall(&R, h, best_all);
    free(R.cp);
    free(R.cidx);
    rb_result_set(&h->result, "summary", R.summary);
    if (cJSON_GetArraySize(points) == 0) { /* nothing measured: no table, only the error that said why */
        free(R.t.s);
        return NULL;
    }
    return R.t.s;
}
