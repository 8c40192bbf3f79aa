/* railbench load train, the data set: its names and sizes, its record (the 5x memory rule), the read threads' fetchers, --populate. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/beneath.h"
#include "railbench/log.h"
#include "railbench/units.h"
#include "../cmd/safety_int.h"
#include "train_cmd_int.h"

/* ---- data set ---- */

int rb_train_build_objects(struct rb_harness *h, const struct train_args *a, const struct rb_target *t,
                           const char *prefix, struct rb_objset *all, const char **source)
{
    uint64_t total = 0;
    int status = rb_load_build_objects(h, t, a->objects, a->filelist, prefix, a->tgt.timeout_ns, (enum rb_engine_kind)a->eng.engine,
                                       "to train on (put some first, or give --objects N --populate)", true, all,
                                       &total);
    if (status)
        return status;
    *source = a->objects ? NULL : a->filelist ? "filelist" : "listing";
    /* Sizes nobody told us follow from the sample size: what --populate writes, or what the workload's data is. */
    bool drawn = false;
    if (a->sample_known && rb_objset_generated(all) && !a->sample_stdev) {
        /* Every object the same size: one number, not one per object. */
        rb_objset_set_common_size(all, rb_train_format_bytes(a, rb_train_object_bytes(a->seed, "", a->spo,
                                                                                       a->sample_bytes, 0)));
        drawn = all->n > 0;
    } else if (a->sample_known) {
        /* --verify: every object must be what --populate writes, its length too (a listed size is what is there). */
        char buf[RB_OBJSET_NAME_BYTES];
        for (uint64_t i = 0; i < all->n; i++)
            if (a->verify || !rb_objset_size(all, i)) {
                uint64_t b = rb_train_format_bytes(a, rb_train_object_bytes(a->seed, rb_objset_name(all, i, buf),
                                                                             a->spo, a->sample_bytes, a->sample_stdev));
                if (rb_objset_set_size(all, i, b))
                    rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory for %" PRIu64 " object sizes", all->n);
                drawn = true;
            }
    }
    /*
     * Only --populate makes the drawn sizes true; from a preset or --sample-size they are a guess about
     * objects that exist already, so the data set's size is measured from what the first epoch reads.
     */
    if (drawn)
        *source = a->populate ? "populate" : NULL;
    /* Listed names (rank 0's, sizes drawn): one copy per host, which its ranks share. */
    if (h->mpi && !rb_objset_generated(all) && rb_objset_share(all, h->comm))
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "cannot hold the object names in memory shared by each host's ranks");
    return 0;
}

/* Sum of the client hosts' memory (result.json "hosts", which the harness gathered). Rank 0. */
static double client_memory_bytes(struct rb_harness *h)
{
    double sum = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(h->result.root, "hosts"))
        sum += cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "memory_bytes"));
    return sum;
}

/* Rank 0: the dataset record, with MLPerf Storage's 5x memory rule checked (a warning, not a failure). */
cJSON *rb_train_dataset_json(struct rb_train_run *R, uint64_t bytes, const char *source)
{
    const struct train_args *a = R->a;
    cJSON *d = cJSON_CreateObject();
    cJSON_AddItemToObject(d, "objects", rb_json_u64(R->all->n));
    cJSON_AddItemToObject(d, "samples_per_object", rb_json_u64(a->spo));
    cJSON_AddItemToObject(d, "samples", rb_json_u64((uint64_t)R->all->n * a->spo));
    cJSON_AddStringToObject(d, "format", a->format == TRAIN_FORMAT_TAR ? "tar" : a->format == TRAIN_FORMAT_PARQUET ? "parquet"
                                           : a->format == TRAIN_FORMAT_NPZ     ? "npz"
                                           : a->format == TRAIN_FORMAT_JPEG    ? "jpeg"
                                                                               : "raw");
    /* A tar shard's samples are its members: sample_bytes each, the shard's bytes add a header per member. */
    if (a->format == TRAIN_FORMAT_TAR && a->sample_known) {
        cJSON_AddItemToObject(d, "member_bytes", rb_json_u64(a->sample_bytes));
        cJSON_AddItemToObject(d, "shard_bytes", rb_json_u64(rb_train_format_bytes(a, 0)));
    }
    /* Listed names as stored (arena, offsets, sizes), once per host when shared; generated names store none. */
    bool gen = rb_objset_generated(R->all);
    cJSON_AddItemToObject(d, "names_bytes", gen ? cJSON_CreateNull() : rb_json_u64(rb_objset_stored_bytes(R->all)));
    cJSON_AddStringToObject(d, "names_held", gen ? "generated" : R->all->shared ? "host" : "rank");
    double mem = client_memory_bytes(R->h);
    cJSON_AddNumberToObject(d, "client_memory_bytes", mem);
    cJSON_AddNumberToObject(d, "memory_factor", MEMORY_FACTOR);
    if (!source) {
        cJSON_AddNullToObject(d, "bytes");
        cJSON_AddNullToObject(d, "bytes_source");
        cJSON_AddNullToObject(d, "page_cache_may_hide_storage");
        return d;
    }
    cJSON_AddItemToObject(d, "bytes", rb_json_u64(bytes));
    cJSON_AddStringToObject(d, "bytes_source", source);
    bool small = (double)bytes < MEMORY_FACTOR * mem;
    cJSON_AddBoolToObject(d, "page_cache_may_hide_storage", small);
    if (small) {
        char b[32], m[32];
        rb_format_size(b, sizeof b, bytes);
        rb_format_size(m, sizeof m, (uint64_t)mem);
        rb_warn("the data set (%s, %s) is smaller than %d x the client hosts' memory (%d x %s): page caches can "
                "hold it and hide the storage (MLPerf Storage asks for at least %dx)", b, source, MEMORY_FACTOR,
                MEMORY_FACTOR, m, MEMORY_FACTOR);
    }
    return d;
}

/*
 * --format tar over shards this run did not write, on a directory: rank 0
 * reads the first shard's headers; a member count other than
 * --samples-per-object would make every sample figure wrong, so it stops
 * the run (exit 2). Over http, s3 and ais the count is taken as given.
 */
int rb_train_check_shards(struct rb_train_run *R)
{
    const struct train_args *a = R->a;
    struct rb_harness *h = R->h;
    if (a->format != TRAIN_FORMAT_TAR || a->populate || !R->all->n || !rb_target_can(R->t, RB_TCAP_FILES))
        return 0;
    int status = 0;
    if (h->rank == 0) {
        char buf[RB_OBJSET_NAME_BYTES], path[PATH_MAX];
        const char *first = rb_objset_name(R->all, 0, buf);
        snprintf(path, sizeof path, "%s/%s", rb_target_file_root(R->t), first);
        uint64_t members = 0, bytes = 0;
        int dir = rb_target_file_dir(R->t);
        int rc = dir < 0 ? dir : rb_file_tar_members(dir, first, &members, &bytes);
        if (rc) {
            rb_error("--format tar: %s: %s", path,
                     rc == -EINVAL             ? "not a tar archive (a header's checksum or size does not hold)"
                     : rc == -RB_BENEATH_LINK ? "a symbolic link (or a way out of the target), not followed"
                                               : strerror(-rc));
            status = rc == -EINVAL ? RB_EXIT_USAGE : RB_EXIT_RUNTIME;
        } else if (members != a->spo) {
            rb_error("--samples-per-object %" PRIu64 ": the shard %s holds %" PRIu64 " members (its tar headers); "
                     "give --samples-per-object %" PRIu64, a->spo, path, members, members);
            status = RB_EXIT_USAGE;
        } else {
            rb_info("--format tar: the first shard holds %" PRIu64 " members, %" PRIu64 " bytes of samples", members,
                    bytes);
        }
    }
    if (h->mpi)
        RB_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, h->comm));
    return status;
}

/* ---- read threads and --populate ---- */

/* Fetchers and stats for the read threads (kept across epochs: their connections stay open). */
int rb_train_loaders_new(struct rb_train_run *R)
{
    struct rb_harness *h = R->h;
    R->nloaders = (unsigned)R->a->read_threads;
    R->loaders = calloc(R->nloaders, sizeof *R->loaders);
    int bad = !R->loaders;
    for (unsigned i = 0; !bad && i < R->nloaders; i++) {
        struct loader *l = &R->loaders[i];
        l->id = i;
        pthread_mutex_init(&l->mu, NULL);
        l->local = rb_stats_new();
        l->box = rb_stats_new();
        /* The read threads' connections spread over the target's endpoints across ranks, as load get's do. */
        size_t ep0 = ((size_t)h->rank * R->nloaders + i) * (size_t)R->fetch.inflight;
        int rc = rb_fetcher_new_at(&l->f, &R->fetch, ep0);
        if (rc)
            rb_error("cannot set up read thread %u: %s", i, strerror(-rc));
        bad = rc || !l->local || !l->box;
    }
    int any = bad;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, h->comm));
    return any ? RB_EXIT_RUNTIME : 0;
}

void rb_train_loaders_free(struct rb_train_run *R)
{
    if (R->abandoned)
        return; /* a read thread left in a stalled file system call may still come back to its loader */
    for (unsigned i = 0; R->loaders && i < R->nloaders; i++) {
        struct loader *l = &R->loaders[i];
        rb_fetcher_free(l->f);
        rb_stats_free(l->local);
        rb_stats_free(l->box);
        pthread_mutex_destroy(&l->mu);
    }
    free(R->loaders);
    R->loaders = NULL;
}

/* PUTs the data set (--populate): every rank its share, sizes drawn from --sample-size. Returns an exit status. */
int rb_train_populate(struct rb_train_run *R, cJSON **record)
{
    struct rb_harness *h = R->h;
    struct rb_objset mine = {0};
    if (rb_objset_partition(R->all, h->rank, h->size, &mine))
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    /* The data set is the user's to keep: names that exist are not written over without --overwrite. */
    int status = rb_safety_check(h, R->t, &mine, R->a->tgt.timeout_ns, (enum rb_engine_kind)R->a->eng.engine, 0, R->a->overwrite, "load train", "--populate", NULL);
    if (status) {
        rb_objset_free(&mine);
        return status;
    }
    struct rb_load_opts o = R->fetch;
    o.op = RB_LOAD_PUT;
    o.objects = &mine;
    o.threads = R->nloaders;
    o.pattern = RB_PATTERN_SEQUENTIAL;
    o.verify = false;
    struct rb_load_result res = {0};
    status = rb_load_run_phase(h, "populate", 0, &o, &res);
    if (h->rank == 0 && res.total) {
        *record = rb_load_summary_json(&res);
        if (!status && res.total->errors) {
            rb_error("--populate: %" PRIu64 " of %" PRIu64 " PUTs failed (see the errors above)", res.total->errors,
                     res.total->ops);
            status = RB_EXIT_RUNTIME;
        }
    }
    if (h->mpi)
        RB_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, h->comm));
    rb_load_result_free(&res);
    rb_objset_free(&mine);
    return status;
}

/* ---- what the first epoch read ---- */

/*
 * Rank 0, once: the sample size the objects read hold, against the one the
 * preset or --sample-size assumed; more than 2x apart is another data set
 * than the one the workload describes, and says so.
 */
static void check_sample_size(struct rb_train_run *R)
{
    const struct train_args *a = R->a;
    /* Parquet reads take the projected columns alone: no sample size to compare. */
    if (R->h->rank != 0 || R->sample_checked || !R->read_objects || !a->sample_bytes || a->populate || R->pqr)
        return;
    R->sample_checked = true;
    /* A tar shard's bytes per sample include its member's header and padding. */
    double read = (double)R->read_bytes / (double)R->read_objects / (double)a->spo,
           assumed = (double)rb_train_format_bytes(a, a->sample_bytes * a->spo) / (double)a->spo;
    if (R->tar)
        assumed = (double)a->sample_bytes; /* ranged reads take the members' bytes alone */
    if (read <= 2 * assumed && assumed <= 2 * read)
        return;
    char r[32], s[32];
    rb_format_size(r, sizeof r, (uint64_t)read);
    rb_format_size(s, sizeof s, a->sample_bytes);
    rb_warn("the objects read hold %s per sample, the %s assumes %s (more than 2x apart): its compute time and "
            "batch describe another data set", r, a->preset ? a->preset->name : "--sample-size", s);
    if (R->dataset)
        cJSON_AddNumberToObject(R->dataset, "sample_bytes_read", read);
}

/* Rank 0, when the listing gave no sizes: the data set estimated from what the first epoch read. */
void rb_train_estimate_dataset(struct rb_train_run *R)
{
    check_sample_size(R);
    if (R->h->rank != 0 || R->dataset || !R->read_objects)
        return;
    if (R->pqr) { /* projected reads say nothing of the files' size: unknown */
        R->dataset = rb_train_dataset_json(R, 0, NULL);
        return;
    }
    R->dataset_bytes = (uint64_t)((double)R->read_bytes / (double)R->read_objects * (double)R->all->n);
    R->dataset = rb_train_dataset_json(R, R->dataset_bytes, "measured");
    if (R->sample_checked)
        cJSON_AddNumberToObject(R->dataset, "sample_bytes_read",
                                (double)R->read_bytes / (double)R->read_objects / (double)R->a->spo);
}
