/* load checkpoint phases: each process's files, one checkpoint write or read, the cache flush, the folder checks. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../engine/fwatch_int.h"
#include "../engine/phase_int.h"
#include "../file/pagecache_int.h"
#include "ckpt_int.h"
#include "railbench/ckpt.h"
#include "railbench/file.h"
#include "railbench/log.h"

void rb_ckpt_plan_of(const struct rb_ckpt_args *a, const struct rb_harness *h, int proc, struct rb_ckpt_plan *p)
{
    p->count = a->subset ? 1 : rb_ckpt_world(&a->model) / (uint64_t)h->size;
    p->first = (uint64_t)proc * p->count;
}

/* Appends process proc's files of checkpoint step to set (sizes from the model); *bytes gets their sum. */
int rb_ckpt_add_step(const struct rb_ckpt_args *a, const struct rb_ckpt_plan *pl, unsigned step, struct rb_objset *set,
                     uint64_t *bytes)
{
    struct rb_ckpt_shard *s = malloc(RB_CKPT_MAX_SHARDS_PER_RANK * sizeof *s);
    if (!s)
        return -ENOMEM;
    int rc = 0;
    for (uint64_t r = pl->first; r < pl->first + pl->count && !rc; r++) {
        int n = rb_ckpt_rank_shards(&a->model, r, a->scale_den, s, RB_CKPT_MAX_SHARDS_PER_RANK);
        for (int i = 0; i < n && !rc; i++) {
            char name[RB_OBJSET_NAME_BYTES];
            if ((size_t)snprintf(name, sizeof name, "%sglobal_step%u/%s", pl->base, step, s[i].name) >= sizeof name)
                rc = -ENAMETOOLONG;
            else if ((rc = rb_objset_add(set, name, s[i].bytes)) == 0)
                *bytes += s[i].bytes;
        }
        if (n < 0)
            rc = n;
    }
    free(s);
    return rc;
}

double rb_ckpt_unix_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Every rank's busy time and bytes of the phase to rank 0 (collective); r (rank 0) gets h->size entries. */
static void gather_ranks(struct rb_ckpt_run *x, double busy_s, uint64_t bytes, struct rb_ckpt_rank *r)
{
    double mine[3] = {busy_s, (double)bytes, (double)x->h.host_index}, *all = NULL;
    if (x->h.rank == 0 && !(all = malloc(sizeof mine * (size_t)x->h.size)))
        rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "out of memory");
    if (x->h.mpi && x->h.size > 1)
        RB_MPI_CHECK(MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, x->h.comm));
    else if (all)
        memcpy(all, mine, sizeof mine);
    if (!all) /* ranks other than 0 */
        return;
    for (int i = 0; i < x->h.size; i++)
        r[i] = (struct rb_ckpt_rank){.busy_s = all[3 * i], .bytes = (uint64_t)all[3 * i + 1], .host = (int)all[3 * i + 2]};
    free(all);
}

/*
 * A write that failed part-way (a full file system: ENOSPC) or was cut short: the file loop removes each file it did
 * not finish; one it could not remove (stuck: the file system went away), or that still exists, joins what cleanup
 * deletes (the folder was empty before the run, so whatever is in it the run made). Only targets that answer
 * existence locally (file) can leave such files; an S3 upload that fails is aborted. Rank 0 says what stays.
 */
static void note_partial(struct rb_ckpt_run *x, const struct rb_objset *done, const struct rb_objset *stuck,
                         unsigned step)
{
    char nb[RB_OBJSET_NAME_BYTES], db[RB_OBJSET_NAME_BYTES], err[512];
    unsigned long long n[3] = {stuck->n, done->n, x->step_set.n};
    for (uint64_t i = 0; i < stuck->n; i++) /* unfinished files the loop could not remove: cleanup tries again */
        if (rb_objset_add(&x->written, rb_objset_name(stuck, i, nb), 0))
            rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "out of memory");
    /* Not on a file system that stopped answering (the watchdog gave up a call): each look would hang as well. */
    for (uint64_t i = 0; x->t->ops->exists && i < x->step_set.n && !rb_fwatch_fired(); i++) {
        const char *name = rb_objset_name(&x->step_set, i, nb);
        bool listed = false;
        for (uint64_t j = 0; j < done->n && !listed; j++)
            listed = strcmp(rb_objset_name(done, j, db), name) == 0;
        for (uint64_t j = 0; j < stuck->n && !listed; j++)
            listed = strcmp(rb_objset_name(stuck, j, db), name) == 0;
        bool yes = false;
        if (!listed && x->t->ops->exists(x->t, name, &yes, err, sizeof err) == 0 && yes) {
            if (rb_objset_add(&x->written, name, 0))
                rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "out of memory");
            n[0]++;
        }
    }
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, n, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, x->h.comm));
    if (x->h.rank != 0)
        return;
    const bool keep = x->a->keep || x->a->mode == RB_CKPT_MODE_WRITE;
    char left[128] = "";
    if (n[0])
        snprintf(left, sizeof left, " except %llu that could not be (cleanup tries again)", n[0]);
    rb_warn("checkpoint %u under %s was not written whole: %llu of %llu files whole, unfinished ones removed%s; what "
            "it wrote %s", step, x->where, n[1], n[2], left,
            keep ? (x->a->keep ? "stays (--keep)" : "stays (--mode write)") : "is removed with the rest of what this run wrote");
}

/*
 * How much of the checkpoint moved (collective; rank 0 gets the sums): the files every rank had to move and, for a
 * write, the files each finished (what its engine noted written); a read's finished files are its requests without
 * an error (rank 0's totals).
 */
static void count_done(struct rb_ckpt_run *x, bool write, const struct rb_load_result *res, struct rb_ckpt_done *d)
{
    unsigned long long n[2] = {x->step_set.n, write ? res->leftover.n : 0}, all[2] = {n[0], n[1]};
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Reduce(n, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, x->h.comm));
    d->files = all[0];
    d->files_done = all[1];
    if (!write && res->total)
        d->files_done = res->total->ops - res->total->errors;
}

/* One checkpoint write or read as a load phase; returns 0 or an exit status. */
int rb_ckpt_one(struct rb_ckpt_run *x, bool write, unsigned step)
{
    struct rb_ckpt_args *a = x->a;
    rb_objset_free(&x->step_set);
    uint64_t bytes = 0;
    /* A read takes the files another process wrote (--recovery-rank-shift): no page cache of its own holds them. */
    const struct rb_ckpt_plan *pl = write ? &x->mine : &x->shifted;
    int rc = rb_ckpt_add_step(a, pl, step, &x->step_set, &bytes);
    if (rc)
        rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "checkpoint %u: cannot list this rank's files: %s", step,
                         strerror(-rc));
    struct rb_load_opts o = x->o;
    o.objects = &x->step_set;
    o.op = write ? RB_LOAD_PUT : RB_LOAD_GET;
    o.verify = !write && a->verify;
    /* --cold-check (file://): each file's pages in the page cache are counted (mincore) before it is read. */
    o.cache_header = !write && a->files && a->file.cold_check ? RB_FILE_COLD_CHECK_NAME : NULL;
    o.track_written = write;
    if (!write) {
        /* Each file once: the epoch pattern of one epoch over this rank's files; off file://, files larger than
         * --read-part-size come back as parallel Range GETs of that size (ranged.c). */
        o.part_size = o.multipart_threshold = a->files ? 0 : a->read_part_size;
        o.pattern = RB_PATTERN_EPOCH;
        o.epochs = 1;
    }
    /* --delay-rank: that rank starts its requests late. */
    const bool late = a->delay && (uint64_t)x->h.rank == a->delay_rank;
    const struct rb_load_phase_opts po = {.start_delay_ns = late ? a->delay_ns : 0};
    char phase[32];
    snprintf(phase, sizeof phase, "%s-%u", write ? "write" : "read", step);
    struct rb_load_result res = {0};
    if (!write && step == 1)
        x->read_start_unix_s = rb_ckpt_unix_now_s();
    int status = rb_load_run_phase_with(&x->h, phase, 0, &o, &po, &res);
    if (write) {
        char nb[RB_OBJSET_NAME_BYTES];
        for (uint64_t i = 0; i < res.leftover.n && !rc; i++)
            rc = rb_objset_add(&x->written, rb_objset_name(&res.leftover, i, nb), 0);
        if (rc)
            rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "out of memory");
        x->write_end_unix_s = rb_ckpt_unix_now_s();
        /* note_partial is collective: every rank takes part when any rank's checkpoint was cut short (a signal
         * stops ranks at different files), or the ranks wait in different collectives for ever. */
        int cut = status || (res.total && res.total->errors) || res.leftover.n < x->step_set.n;
        if (x->h.mpi)
            RB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &cut, 1, MPI_INT, MPI_MAX, x->h.comm));
        if (cut)
            note_partial(x, &res.leftover, &res.unknown, step);
    }
    struct rb_ckpt_rank *r = x->h.rank == 0 ? calloc((size_t)x->h.size, sizeof *r) : NULL;
    if (x->h.rank == 0 && !r)
        rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "out of memory");
    gather_ranks(x, res.rank_busy_s, bytes, r);
    struct rb_ckpt_done done = {.interrupted = x->h.interrupted || rb_harness_any_signalled(&x->h)};
    count_done(x, write, &res, &done);
    if (x->h.rank == 0 && res.total) {
        rb_ckpt_record_point(x, write, step, r, &res, &done);
        char what[64];
        snprintf(what, sizeof what, "%s %u", write ? "write" : "read", step);
        /* A phase that stopped the run (exit 3) has said why: the check is recorded without a second error line. */
        bool (*check)(struct rb_result *, const char *, const char *, const uint64_t *, uint64_t, uint64_t, double) =
            status ? rb_load_record_errors : rb_load_check_errors;
        if (!check(&x->h.result, what, write ? "writes" : "reads", res.total->err, res.total->errors, res.total->ops,
                   0) && !write && res.total->err[RB_LERR_HTTP_4XX] == res.total->errors)
            rb_error("checkpoint %u under %s%s: %" PRIu64 " of %" PRIu64 " files not found: was it written (--writes, "
                     "--name)?", step, x->where, "", res.total->errors, res.total->ops);
        if (o.cache_header) {
            snprintf(what, sizeof what, "read_%u", step);
            rb_file_check_cold(&x->h.result, what, &a->file, res.total); /* the check "read_K_cold" */
        }
    }
    free(r);
    int failed = x->h.rank == 0 && res.total && res.total->errors > 0;
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Bcast(&failed, 1, MPI_INT, 0, x->h.comm));
    rb_load_result_free(&res);
    return status ? status : failed ? RB_EXIT_CHECK : 0;
}

/* --drop-caches: every host's first rank writes back and drops the page cache (root), between writes and reads. */
int rb_ckpt_drop_caches(struct rb_ckpt_run *x)
{
    /* Per process: host index, whether it dropped (its host's first rank), Cached before and after, the errno. */
    double mine[5] = {x->h.host_index, 0, -1, -1, 0}, *all = NULL;
    rb_harness_barrier(&x->h);
    if (x->h.local_rank == 0) {
        uint64_t b = 0, c = 0;
        mine[1] = 1;
        if (rb_pagecache_host_cached(NULL, &b) == 0)
            mine[2] = (double)b;
        int rc = rb_pagecache_drop_host();
        if (rc) {
            rb_error("--drop-caches: cannot write /proc/sys/vm/drop_caches on %s: %s (run as root, or use the "
                     "two-invocation form: --mode write, then --mode read --after DIR)", x->h.host, strerror(-rc));
            mine[4] = -rc;
        }
        if (rb_pagecache_host_cached(NULL, &c) == 0)
            mine[3] = (double)c;
    }
    if (x->h.rank == 0 && !(all = malloc(sizeof mine * (size_t)x->h.size)))
        rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "out of memory");
    if (x->h.mpi && x->h.size > 1)
        RB_MPI_CHECK(MPI_Gather(mine, 5, MPI_DOUBLE, all, 5, MPI_DOUBLE, 0, x->h.comm));
    else if (all)
        memcpy(all, mine, sizeof mine);
    int bad = 0;
    if (x->h.rank == 0) {
        /* Each host once: what /proc/meminfo's Cached said around the drop (null where it could not be read). */
        x->cache_drop = cJSON_CreateArray();
        for (int i = 0; i < x->h.size; i++) {
            const double *v = all + 5 * i;
            if (!v[1])
                continue;
            cJSON *o = cJSON_CreateObject();
            int hi = (int)v[0];
            cJSON_AddStringToObject(o, "host", hi >= 0 && hi < x->nhosts ? x->hosts[hi] : "?");
            cJSON_AddBoolToObject(o, "dropped", v[4] == 0);
            cJSON_AddItemToObject(o, "cached_before_bytes", v[2] >= 0 ? rb_json_u64((uint64_t)v[2]) : cJSON_CreateNull());
            cJSON_AddItemToObject(o, "cached_after_bytes", v[3] >= 0 ? rb_json_u64((uint64_t)v[3]) : cJSON_CreateNull());
            cJSON_AddItemToArray(x->cache_drop, o);
            bad |= v[4] != 0;
        }
    }
    free(all);
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Bcast(&bad, 1, MPI_INT, 0, x->h.comm));
    return bad ? RB_EXIT_RUNTIME : 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Rank 0: names listed under base on the target (count, and whether all of set are among them). */
static int list_under(struct rb_ckpt_run *x, const char *base, struct rb_objset *out, char *err, size_t errlen)
{
    return rb_engine_list(RB_ENGINE_AUTO, x->t, base, x->a->tgt.timeout_ns, out, err, errlen);
}

/*
 * Before writing: nothing may exist under the checkpoint folder (a run never overwrites data it did not create).
 * Before a --mode read: every file of the checkpoints to read must be there. Rank 0 lists once; exit status to all.
 */
int rb_ckpt_check_folder(struct rb_ckpt_run *x)
{
    int status = 0;
    if (x->h.rank == 0) {
        struct rb_objset listed = {0};
        char err[1024] = "";
        int rc = list_under(x, x->mine.base, &listed, err, sizeof err);
        if (rc) {
            if (x->a->mode == RB_CKPT_MODE_READ) {
                rb_error("load checkpoint: cannot list %s%s: %s", x->where, "", err);
                status = RB_EXIT_RUNTIME;
            } else {
                rb_warn("load checkpoint: cannot list %s%s (%s): not checked that it is empty", x->where, "", err);
            }
        } else if (x->a->mode != RB_CKPT_MODE_READ && listed.n) {
            char nb[RB_OBJSET_NAME_BYTES];
            rb_error("--name %s: %" PRIu64 " object(s) exist under %s%s already (first: %s); a run never overwrites "
                     "data it did not create: choose another --name", x->a->name, listed.n, x->where, "", rb_objset_name(&listed, 0, nb));
            status = RB_EXIT_USAGE;
        } else if (x->a->mode == RB_CKPT_MODE_READ) {
            /* Every process's files of every checkpoint read. */
            uint64_t want = 0, missing = 0;
            char first[RB_OBJSET_NAME_BYTES] = "";
            struct rb_objset need = {0};
            for (int p = 0; p < x->h.size; p++) {
                struct rb_ckpt_plan pl;
                rb_ckpt_plan_of(x->a, &x->h, p, &pl);
                memcpy(pl.base, x->mine.base, sizeof pl.base);
                unsigned steps = x->a->reads < x->a->writes ? (unsigned)x->a->reads : (unsigned)x->a->writes;
                for (unsigned s = 1; s <= steps; s++) {
                    uint64_t b = 0;
                    if (rb_ckpt_add_step(x->a, &pl, s, &need, &b))
                        rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "out of memory");
                }
            }
            const char **have = malloc((listed.n ? listed.n : 1) * sizeof *have);
            if (!have)
                rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "out of memory");
            for (uint64_t j = 0; j < listed.n; j++)
                have[j] = rb_objset_name(&listed, j, NULL); /* a listing is a listed set: names in its arena */
            qsort(have, listed.n, sizeof *have, cmp_name);
            char nb[RB_OBJSET_NAME_BYTES];
            for (uint64_t i = 0; i < need.n; i++) {
                const char *n = rb_objset_name(&need, i, nb);
                want++;
                if (!bsearch(&n, have, listed.n, sizeof *have, cmp_name) && !missing++)
                    snprintf(first, sizeof first, "%s", n);
            }
            free(have);
            if (missing) {
                rb_error("load checkpoint --mode read: %" PRIu64 " of %" PRIu64 " checkpoint files missing under %s%s (first: %s): those checkpoints were never written with this model, "
                         "--scale and process count", missing, want, x->where, "", first);
                status = RB_EXIT_RUNTIME;
            }
            rb_objset_free(&need);
        }
        rb_objset_free(&listed);
    }
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, x->h.comm));
    return status;
}

/* --after DIR: the write run's end time from its result.json, for the gap MLPerf bounds at 30 s. */
int rb_ckpt_read_write_end(const char *dir, double *end_s)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/result.json", dir);
    char *text = NULL;
    size_t len = 0;
    if (rb_file_read(path, 64u << 20, &text, &len) != 0)
        return -ENOENT;
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "summary"), "write_end_unix_s");
    int rc = cJSON_IsNumber(v) ? 0 : -EINVAL;
    if (!rc)
        *end_s = v->valuedouble;
    cJSON_Delete(j);
    return rc;
}
