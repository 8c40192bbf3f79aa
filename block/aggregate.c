/* railbench block: one point's figures per rank, their aggregate over ranks, its gauges and its progress line. */
#include "block_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "railbench/log.h"
#include "railbench/result.h"
#include "railbench/units.h"

static cJSON *pct_json(const struct rb_fio_lat *l)
{
    cJSON *o = cJSON_CreateObject();
    if (l->have_pct)
        for (int i = 0; i < RB_FIO_PCTS; i++)
            cJSON_AddNumberToObject(o, rb_fio_pct_key[i], (double)l->pct_ns[i]);
    cJSON_AddNumberToObject(o, "min", (double)l->min_ns);
    cJSON_AddNumberToObject(o, "mean", l->mean_ns);
    cJSON_AddNumberToObject(o, "max", (double)l->max_ns);
    return o;
}

static cJSON *dir_json(const struct rb_fio_dir *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "iops", d->iops);
    cJSON_AddNumberToObject(o, "bw_bytes_per_s", d->bw_bytes_per_s);
    cJSON_AddItemToObject(o, "io_bytes", rb_json_u64(d->io_bytes));
    cJSON_AddItemToObject(o, "total_ios", rb_json_u64(d->total_ios));
    cJSON_AddNumberToObject(o, "runtime_ms", (double)d->runtime_ms);
    cJSON_AddItemToObject(o, "clat_ns", pct_json(&d->clat));
    cJSON_AddItemToObject(o, "lat_ns", pct_json(&d->lat));
    return o;
}

static void add_util(cJSON *o, double pct)
{
    if (pct >= 0)
        cJSON_AddNumberToObject(o, "disk_util_pct", pct);
    else
        cJSON_AddNullToObject(o, "disk_util_pct");
}

cJSON *rb_block_rank_json(const struct rb_harness *h, const struct rb_block_run *r, const struct rb_block_target *t)
{
    const struct rb_fio_result *f = &r->fio;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "rank", h->rank);
    cJSON_AddStringToObject(o, "host", h->host);
    cJSON_AddStringToObject(o, "target", t->path);
    cJSON_AddStringToObject(o, "target_kind", rb_block_target_kind_names[t->kind]);
    if (t->mount_point[0]) {
        cJSON_AddStringToObject(o, "mount_point", t->mount_point);
        cJSON_AddStringToObject(o, "mount_source", t->mount_source);
        cJSON_AddStringToObject(o, "fstype", t->fstype);
    }
    cJSON_AddStringToObject(o, "fio_json", r->json_path);
    cJSON_AddNumberToObject(o, "cpus_allowed", rb_block_cpus_allowed());
    cJSON_AddNumberToObject(o, "iops", f->read.iops + f->write.iops);
    cJSON_AddNumberToObject(o, "bw_bytes_per_s", f->read.bw_bytes_per_s + f->write.bw_bytes_per_s);
    cJSON_AddItemToObject(o, "io_bytes", rb_json_u64(f->read.io_bytes + f->write.io_bytes));
    cJSON_AddItemToObject(o, "total_ios", rb_json_u64(f->read.total_ios + f->write.total_ios));
    /* From this rank's histogram, computed as the aggregate's are, so the two compare like for like. */
    cJSON_AddItemToObject(o, "clat_ns", rb_hist_summary_json(r->clat));
    cJSON_AddItemToObject(o, "lat_ns", rb_hist_summary_json(r->lat));
    add_util(o, f->disk_util_pct);
    if (f->disk[0])
        cJSON_AddStringToObject(o, "disk", f->disk);
    if (r->stopped)
        cJSON_AddBoolToObject(o, "interrupted", true);
    /* fio's own figures, unchanged. */
    cJSON *fo = cJSON_AddObjectToObject(o, "fio");
    cJSON_AddStringToObject(fo, "version", f->version);
    cJSON_AddNumberToObject(fo, "jobs", f->njobs);
    if (f->read.total_ios || f->read.iops > 0 || !f->write.total_ios)
        cJSON_AddItemToObject(fo, "read", dir_json(&f->read));
    if (f->write.total_ios || f->write.iops > 0)
        cJSON_AddItemToObject(fo, "write", dir_json(&f->write));
    cJSON_AddItemToObject(o, "lat_hist", rb_hist_to_json(r->lat));
    return o;
}

static double num(const cJSON *o, const char *k)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* The reported percentiles (rb_fio_pct) of a histogram. */
static void summary_pcts(const struct rb_hist *hist, uint64_t ns[RB_FIO_PCTS])
{
    for (int i = 0; i < RB_FIO_PCTS; i++)
        ns[i] = rb_hist_percentile(hist, rb_fio_pct[i]);
}

/* Sums over the ranks' records. */
struct rank_sum {
    uint64_t io_bytes, ios;
    int nranks;
    bool interrupted;
};

/*
 * Adds every rank's figures into bp and *sum, and merges (then drops) each
 * rank's total-latency histogram into lat (when lat and one, scratch, are not NULL).
 */
static void sum_ranks(cJSON *per_rank, struct rb_block_point *bp, struct rank_sum *sum, struct rb_hist *lat,
                      struct rb_hist *one)
{
    double util = 0;
    int nutil = 0;
    cJSON *it;
    cJSON_ArrayForEach(it, per_rank)
    {
        bp->iops += num(it, "iops");
        bp->bw_bytes_per_s += num(it, "bw_bytes_per_s");
        uint64_t v = 0;
        if (rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(it, "io_bytes"), &v) == 0)
            sum->io_bytes += v;
        if (rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(it, "total_ios"), &v) == 0)
            sum->ios += v;
        double u = num(it, "disk_util_pct");
        if (u == u) {
            util += u;
            nutil++;
        }
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "interrupted")))
            sum->interrupted = true;
        if (lat && one && rb_hist_from_json(cJSON_GetObjectItemCaseSensitive(it, "lat_hist"), one) == 0)
            rb_hist_merge(lat, one);
        cJSON_DeleteItemFromObjectCaseSensitive(it, "lat_hist");
        sum->nranks++;
    }
    bp->disk_util_pct = nutil ? util / nutil : -1;
}

/*
 * One direction ("read" or "write") of a mixed point: IOPS, bandwidth and
 * I/Os summed over the ranks' fio figures; clat percentiles are fio's own
 * per direction, the worst rank's at each percentile (percentiles of
 * different ranks cannot be merged; "ranks" says how many there were).
 */
static cJSON *dir_sum(cJSON *per_rank, const char *dir, double *iops, uint64_t *p99_ns)
{
    double bw = 0, ios = 0, pct[RB_FIO_PCTS] = {0};
    bool have_pct = false;
    int n = 0;
    *iops = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, per_rank)
    {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "fio"), dir);
        if (!d)
            continue;
        n++;
        *iops += num(d, "iops");
        bw += num(d, "bw_bytes_per_s");
        ios += num(d, "total_ios");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(d, "clat_ns");
        for (int i = 0; i < RB_FIO_PCTS; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, rb_fio_pct_key[i]);
            if (cJSON_IsNumber(v)) {
                have_pct = true;
                if (v->valuedouble > pct[i])
                    pct[i] = v->valuedouble;
            }
        }
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "iops", *iops);
    cJSON_AddNumberToObject(o, "bw_bytes_per_s", bw);
    cJSON_AddNumberToObject(o, "total_ios", ios);
    cJSON_AddNumberToObject(o, "ranks", n);
    cJSON *c = cJSON_AddObjectToObject(o, "clat_ns");
    for (int i = 0; i < RB_FIO_PCTS; i++)
        if (have_pct)
            cJSON_AddNumberToObject(c, rb_fio_pct_key[i], pct[i]);
        else
            cJSON_AddNullToObject(c, rb_fio_pct_key[i]);
    *p99_ns = have_pct ? (uint64_t)pct[2] : 0;
    return o;
}

/*
 * IOPS and bandwidth are summed over ranks; latency percentiles come from
 * the merged histograms (every I/O of every rank), never from averaged
 * percentiles.
 */
cJSON *rb_block_aggregate(const struct rb_block_opts *o, const struct rb_block_spec *ps, cJSON *per_rank,
                          const struct rb_stats *total, struct rb_block_point *bp, bool *interrupted)
{
    struct rb_hist *lat = rb_hist_new(), *one = rb_hist_new();
    memset(bp, 0, sizeof *bp);
    bp->bs_bytes = ps->bs;
    bp->iodepth = ps->iodepth;
    bp->numjobs = ps->numjobs;
    struct rank_sum sum = {0};
    sum_ranks(per_rank, bp, &sum, lat, one);
    *interrupted = sum.interrupted;
    summary_pcts(&total->lat, bp->clat_ns);
    if (lat)
        summary_pcts(lat, bp->lat_ns);

    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "name", ps->name);
    cJSON_AddNumberToObject(p, "bs", (double)ps->bs);
    cJSON_AddStringToObject(p, "rw", rb_block_rw_names[o->rw]);
    if (o->rw == RB_BLOCK_RANDRW)
        cJSON_AddNumberToObject(p, "rwmix_read_pct", o->rwmix_pct);
    cJSON_AddNumberToObject(p, "iodepth", (double)ps->iodepth);
    cJSON_AddNumberToObject(p, "numjobs", (double)ps->numjobs);
    cJSON_AddNumberToObject(p, "outstanding", (double)rb_block_outstanding(bp));
    cJSON_AddNumberToObject(p, "ranks", sum.nranks);
    cJSON_AddNumberToObject(p, "iops", bp->iops);
    cJSON_AddNumberToObject(p, "bw_bytes_per_s", bp->bw_bytes_per_s);
    cJSON_AddItemToObject(p, "io_bytes", rb_json_u64(sum.io_bytes));
    cJSON_AddItemToObject(p, "total_ios", rb_json_u64(sum.ios));
    cJSON_AddItemToObject(p, "clat_ns", rb_hist_summary_json(&total->lat));
    cJSON_AddItemToObject(p, "lat_ns", lat ? rb_hist_summary_json(lat) : cJSON_CreateNull());
    add_util(p, bp->disk_util_pct);
    if (o->rw == RB_BLOCK_RANDRW) {
        /* The figures above mix reads and writes; these keep them apart. */
        cJSON_AddItemToObject(p, "read", dir_sum(per_rank, "read", &bp->dir_iops[0], &bp->dir_clat_p99_ns[0]));
        cJSON_AddItemToObject(p, "write", dir_sum(per_rank, "write", &bp->dir_iops[1], &bp->dir_clat_p99_ns[1]));
    }
    if (*interrupted)
        cJSON_AddBoolToObject(p, "interrupted", true);
    cJSON_AddItemToObject(p, "per_rank", per_rank);
    rb_hist_free(lat);
    rb_hist_free(one);
    return p;
}

void rb_block_point_metrics(struct rb_harness *h, const char *rw, const struct rb_block_spec *ps,
                            const struct rb_block_point *bp)
{
    char bs[16], l[256];
    rb_block_bs_label(bs, sizeof bs, ps->bs);
    int n = snprintf(l, sizeof l, "rw=\"%s\",bs=\"%s\",iodepth=\"%" PRIu64 "\",numjobs=\"%" PRIu64 "\"", rw,
                     bs, ps->iodepth, ps->numjobs);
    rb_harness_metric(h, "railbench_block_iops", "gauge", "IOPS of a sweep point, summed over ranks.", l,
                      bp->iops);
    for (int i = 0; i < RB_FIO_PCTS && n > 0 && (size_t)n < sizeof l; i++) {
        char lq[300];
        snprintf(lq, sizeof lq, "%s,percentile=\"%g\"", l, rb_fio_pct[i]);
        rb_harness_metric(h, "railbench_block_latency_seconds", "gauge",
                          "Completion latency percentile of a sweep point, merged over ranks.", lq,
                          (double)bp->clat_ns[i] / 1e9);
    }
}

void rb_block_point_print(size_t k, size_t n, const struct rb_block_spec *ps, const struct rb_block_point *bp,
                          bool interrupted)
{
    char p50[16], p99[16], p999[16];
    rb_format_duration_human(p50, sizeof p50, bp->clat_ns[0]);
    rb_format_duration_human(p99, sizeof p99, bp->clat_ns[2]);
    rb_format_duration_human(p999, sizeof p999, bp->clat_ns[3]);
    printf("[%zu/%zu] %-24s %10.0f IOPS %9.2f MiB/s  clat p50 %s p99 %s p99.9 %s%s\n", k + 1, n, ps->name, bp->iops,
           bp->bw_bytes_per_s / (double)RB_MIB, p50, p99, p999, interrupted ? "  (interrupted)" : "");
    fflush(stdout);
}
