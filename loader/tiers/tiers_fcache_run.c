/* railbench load tiers with a file:// tier: the cache directory's checks, counts and clean-up around the phases. */
#define _GNU_SOURCE
#include "tiers_run_int.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../file/file_int.h"
#include "railbench/buf.h"
#include "railbench/log.h"

void rb_tiers_agree_int(struct tiers_run *r, int *v)
{
    if (r->h.mpi)
        RB_MPI_CHECK(MPI_Bcast(v, 1, MPI_INT, 0, r->h.comm));
}

/* Sums n counters of every rank into out on rank 0 (in place when there is no MPI). */
static void sum_to_root(struct tiers_run *r, const uint64_t *in, uint64_t *out, int n)
{
    if (r->h.mpi)
        RB_MPI_CHECK(MPI_Reduce(in, out, n, MPI_UINT64_T, MPI_SUM, 0, r->h.comm));
    else
        memcpy(out, in, (size_t)n * sizeof *in);
}

int rb_tiers_fc_setup(struct tiers_run *r, const struct rb_cli *cli)
{
    struct tiers_args *a = r->a;
    const struct rb_file_opts *fo = &a->file;
    int status = rb_file_opts_check(fo);
    if (status)
        return status;
    if (!rb_target_can(r->tier, RB_TCAP_FILES)) {
        if (a->keep_cache)
            return rb_cli_usage_error("--keep-cache: for a file:// tier (a cache directory); %s is not one",
                                      rb_target_name(r->tier));
        /* The file options are a file:// backend's (its put and direct phases), else nobody's; the tier's phases
           keep --inflight (run_phase takes 1 on a psync file target's). */
        uint64_t inflight = a->inflight;
        return rb_file_opts_target(fo, rb_target_can(r->backend, RB_TCAP_FILES) ? r->backend : r->tier,
                                   cli, &inflight);
    }
    if (a->cache_header)
        return rb_cli_usage_error("--cache-header %s: a file:// tier has no header; railbench itself counts HIT (the "
                                  "cache file was there) and MISS (fetched from the backend)", a->cache_header);
    if (fo->engine != RB_FIO_PSYNC || fo->direct || fo->cold_check || fo->fsync == RB_FSYNC_EACH)
        return rb_cli_usage_error("%s: not for a file:// tier, whose reads and fills go one at a time per thread through "
                                  "the page cache (more at once: --threads; reads from the cache's disk: --drop-cache)",
                                  fo->engine != RB_FIO_PSYNC ? "--io-engine io_uring" : fo->direct ? "--direct"
                                  : fo->cold_check ? "--cold-check" : "--fsync each");
    /* The cache's requests block in each call, as --io-engine psync does: 1 in flight per thread (a warning if -c). */
    if ((status = rb_file_opts_target(fo, r->tier, cli, &a->inflight)) != 0)
        return status;
    a->inflight = 1;
    if (rb_tiers_fcache_new(&r->fc, r->tier, r->backend, (unsigned)a->threads, fo->block_bytes) != 0) {
        fprintf(stderr, "railbench: error: out of memory\n");
        return RB_EXIT_RUNTIME;
    }
    r->fc->drop_files = fo->drop_cache != RB_DROP_NONE;
    r->fc->fsync = fo->fsync == RB_FSYNC_CLOSE;
    return 0;
}

int rb_tiers_fc_existing(struct tiers_run *r, const struct rb_objset *mine)
{
    if (!r->fc)
        return 0;
    uint64_t n = 0, total = 0;
    char first[PATH_MAX + 200] = "";
    int rc = rb_tiers_fcache_existing(r->fc, mine, &n, first, sizeof first);
    int status = rc ? RB_EXIT_RUNTIME : n ? RB_EXIT_USAGE : 0;
    if (rc)
        rb_error("--tier %s: cannot tell whether the cache files exist: %s", rb_target_name(r->tier), first);
    else if (n && r->h.rank != 0)
        rb_error("--tier %s: %" PRIu64 " of this rank's cache file names exist already, e.g. %s",
                 rb_target_name(r->tier), n, first);
    sum_to_root(r, &n, &total, 1);
    if (r->h.mpi)
        RB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, r->h.comm)); /* every rank's the same */
    if (r->h.rank == 0 && total)
        rb_error("--tier %s: %" PRIu64 " of the run's cache file names exist already (e.g. %s); railbench fills the "
                 "cache directory with files of its own and never reads as its own, overwrites or deletes a file it "
                 "did not make: use --fresh for new names, another --tier directory, or remove them",
                 rb_target_name(r->tier), total, first[0] ? first : "on another rank");
    return status;
}

void rb_tiers_fc_phase_done(struct tiers_run *r, struct row *row)
{
    if (!r->fc)
        return;
    uint64_t v[RB_TIERS_FC_COUNTS], sum[RB_TIERS_FC_COUNTS] = {0};
    rb_tiers_fcache_take(r->fc, v);
    sum_to_root(r, v, sum, RB_TIERS_FC_COUNTS);
    if (r->h.rank != 0)
        return;
    r->fct.filled += sum[RB_TIERS_FC_FILLED];
    r->fct.foreign_hits += sum[RB_TIERS_FC_FOREIGN_HITS];
    r->fct.conflicts += sum[RB_TIERS_FC_CONFLICTS];
    if (sum[RB_TIERS_FC_FOREIGN_HITS])
        rb_warn("--tier %s: %" PRIu64 " reads found a cache file this run did not make (it appeared after the run "
                "looked); they were read as HITs and left as they are", rb_target_name(r->tier),
                sum[RB_TIERS_FC_FOREIGN_HITS]);
    if (!row)
        return;
    row->fcache = true;
    row->origin_bytes = sum[RB_TIERS_FC_ORIGIN_BYTES];
    row->cache_bytes = sum[RB_TIERS_FC_CACHE_BYTES];
    if (row->how == RB_TIERS_COLD)
        row->net_local = rb_target_local(r->backend); /* a miss crosses the network to the backend */
}

void rb_tiers_fc_size_done(struct tiers_run *r, const struct rb_objset *mine, uint64_t size, const char *label)
{
    if (!r->fc)
        return;
    uint64_t v[4] = {0}, sum[4] = {0};
    rb_tiers_fcache_on_disk(r->fc, mine, size, &v[0], &v[1], &v[2]);
    if (!r->a->keep_cache)
        v[3] = rb_tiers_fcache_remove(r->fc, mine);
    sum_to_root(r, v, sum, 4);
    if (r->h.rank != 0)
        return;
    r->fct.on_disk += sum[1];
    r->fct.bytes_on_disk += sum[2];
    r->fct.removed += sum[3];
    char check[64];
    snprintf(check, sizeof check, "cache_files_%s", label);
    rb_result_check(&r->h.result, check, sum[1] == sum[0] && sum[2] == sum[0] * size,
                    "%s: %" PRIu64 " cache files filled by this run, %" PRIu64 " on disk whole (%" PRIu64 " bytes by "
                    "stat); %" PRIu64 " removed%s", rb_target_name(r->tier), sum[0], sum[1], sum[2], sum[3],
                    r->a->keep_cache ? " (--keep-cache)" : "");
    if (sum[1] != sum[0])
        rb_error("%s: %" PRIu64 " of the %" PRIu64 " cache files this run filled for %s are missing or not whole",
                 rb_target_name(r->tier), sum[0] - sum[1], sum[0], label);
}

void rb_tiers_fc_summary(const struct tiers_run *r, cJSON *summary, struct rb_buf *table)
{
    if (r->fc || rb_target_can(r->backend, RB_TCAP_FILES))
        rb_file_summary_json(summary, &r->a->file);
    if (!r->fc) {
        cJSON_AddNullToObject(summary, "file_cache");
        return;
    }
    const struct tiers_fc_totals *t = &r->fct;
    cJSON *o = cJSON_AddObjectToObject(summary, "file_cache");
    cJSON_AddStringToObject(o, "dir", rb_target_file_root(r->tier));
    cJSON_AddItemToObject(o, "files_filled", rb_json_u64(t->filled));
    cJSON_AddItemToObject(o, "files_on_disk", rb_json_u64(t->on_disk));
    cJSON_AddItemToObject(o, "bytes_on_disk", rb_json_u64(t->bytes_on_disk));
    cJSON_AddItemToObject(o, "files_removed", rb_json_u64(t->removed));
    cJSON_AddBoolToObject(o, "kept", r->a->keep_cache);
    cJSON_AddItemToObject(o, "foreign_hits", rb_json_u64(t->foreign_hits));
    cJSON_AddItemToObject(o, "fill_conflicts", rb_json_u64(t->conflicts));
    rb_buf_printf(table, "\ncache directory %s (read through by railbench): %" PRIu64 " files filled from the backend, "
                         "%" PRIu64 " of them on disk whole after the warm phase (%" PRIu64 " bytes); %s\n",
                  rb_target_file_root(r->tier), t->filled, t->on_disk, t->bytes_on_disk,
                  r->a->keep_cache ? "kept (--keep-cache)" : "removed again (files this run did not make untouched)");
    for (size_t i = 0; i < r->nrows; i++) {
        const struct row *w = &r->rows[i];
        if (w->fcache)
            rb_buf_printf(table, "%s: %" PRIu64 " bytes from the backend, %" PRIu64 " from cache files\n", w->phase,
                          w->origin_bytes, w->cache_bytes);
    }
}
