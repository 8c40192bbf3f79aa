/* railbench load train (MLPerf Storage-style training emulation): options, presets, validation, the run's steps. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "railbench/buf.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "railbench/objname.h"
#include "railbench/units.h"
#include "../engine/payload_int.h"
#include "../engine/tarshard_int.h"
#include "train_cmd_int.h"

#define MAX_READ_THREADS 256
#define MAX_INFLIGHT 4096
#define MAX_ACCEL 4096
#define MAX_BATCH (1u << 24)
#define MAX_SPO (1u << 24)
#define MAX_SAMPLE_BYTES (64ull << 30)
#define MAX_GRAD_BYTES (4ull << 30)
#define MAX_COMPUTE_NS (3600 * RB_NS_PER_S)
#define MAX_EPOCHS 1000000

/* A whole number option given as text: value from s, or dflt when s is NULL; -EINVAL outside [lo, hi]. */
static int count_opt(const char *s, uint64_t dflt, uint64_t lo, uint64_t hi, uint64_t *v)
{
    if (!s) {
        *v = dflt;
        return 0;
    }
    if (rb_parse_u64(s, v) || *v < lo || *v > hi)
        return -EINVAL;
    return 0;
}

/* Writes the value an option resolved to into the recorded config, as the text --config reads back. */
static void record_config(struct rb_cli *cli, const char *name, const char *value)
{
    cJSON *v = value ? cJSON_CreateString(value) : cJSON_CreateNull();
    if (v && !cJSON_ReplaceItemInObjectCaseSensitive(cli->config, name, v))
        cJSON_Delete(v);
}

/* The run's payloads are tar shards of a->spo members of a->sample_bytes each (a->tar holds the layout). */
static void tar_payload(struct train_args *a)
{
    a->tar = (struct rb_tar_layout){a->spo, a->sample_bytes};
    a->payload = (struct rb_payload_layout){rb_tar_layout_fill, &a->tar};
}

/* Resolves presets and checks the options together; prints one line and returns RB_EXIT_USAGE on the first problem. */
static int resolve(struct train_args *a, struct rb_cli *cli)
{
    int st = rb_train_workload_resolve(a, cli);
    if (st)
        return st;
    const struct rb_train_preset *p = a->preset;
    if (a->ckpt_every && !a->ckpt_bytes)
        return rb_cli_usage_error("--checkpoint-every %" PRIu64 ": give --checkpoint-size SIZE, the bytes each rank "
                                  "writes", a->ckpt_every);
    if (!a->ckpt_every && (a->ckpt_bytes || a->ckpt_async))
        return rb_cli_usage_error("--checkpoint-size/--checkpoint-async: give --checkpoint-every K too");
    if (count_opt(a->batch_s, p ? p->batch_size : 1, 1, MAX_BATCH, &a->batch))
        return rb_cli_usage_error("--batch-size \"%s\": expected a whole number of samples, 1 to %u", a->batch_s, MAX_BATCH);
    if (count_opt(a->spo_s, p ? p->samples_per_object : 1, 1, MAX_SPO, &a->spo))
        return rb_cli_usage_error("--samples-per-object \"%s\": expected a whole number, 1 to %u", a->spo_s, MAX_SPO);
    if (count_opt(a->threads_s, p && p->read_threads ? p->read_threads : 1, 1, MAX_READ_THREADS, &a->read_threads))
        return rb_cli_usage_error("--read-threads \"%s\": expected 1 to %d", a->threads_s, MAX_READ_THREADS);
    if (a->compute_s) {
        if (rb_train_parse_duration_dist(a->compute_s, &a->compute_ns, &a->compute_stdev_ns) ||
            a->compute_ns > MAX_COMPUTE_NS || a->compute_stdev_ns > MAX_COMPUTE_NS)
            return rb_cli_usage_error("--compute-time \"%s\": expected a duration or MEAN/STDEV up to 1h (e.g. 224ms or "
                               "50ms/5ms)", a->compute_s);
    } else if (p && p->compute_ns) {
        a->compute_ns = p->compute_ns;
        a->compute_stdev_ns = 0;
    } else {
        return rb_cli_usage_error("load train: give --compute-time D (per step) or --workload %s", rb_train_preset_list);
    }
    if (a->compute_ns == 0)
        return rb_cli_usage_error("--compute-time \"%s\": must be more than 0 (AU is compute time over wall time)",
                           a->compute_s);
    if (a->sample_s) {
        if (rb_train_parse_size_dist(a->sample_s, &a->sample_bytes, &a->sample_stdev) || !a->sample_bytes ||
            a->sample_bytes > MAX_SAMPLE_BYTES || a->sample_stdev > MAX_SAMPLE_BYTES)
            return rb_cli_usage_error("--sample-size \"%s\": expected SIZE or MEAN/STDEV, 1 B to 64 GiB (e.g. 110KiB or "
                               "146.6MB/68.3MB)", a->sample_s);
        a->sample_known = true;
    } else if (p) {
        a->sample_bytes = p->sample_bytes;
        a->sample_stdev = p->sample_stdev_bytes;
        a->sample_known = true;
    }
    a->au_min = p ? p->au_min_pct : 90;
    if (a->au_min_s && rb_parse_percent(a->au_min_s, &a->au_min))
        return rb_cli_usage_error("--au-min \"%s\": expected a percentage 0 to 100 (e.g. 90 or 90%%)", a->au_min_s);
    if (a->inflight < 1 || a->inflight > MAX_INFLIGHT)
        return rb_cli_usage_error("--inflight %" PRIu64 ": expected 1 to %d", a->inflight, MAX_INFLIGHT);
    if (a->accel < 1 || a->accel > MAX_ACCEL)
        return rb_cli_usage_error("--accelerators-per-rank %" PRIu64 ": expected 1 to %d", a->accel, MAX_ACCEL);
    if (a->max_accel < 1 || a->max_accel > MAX_ACCEL)
        return rb_cli_usage_error("--max-accelerators-per-rank %" PRIu64 ": expected 1 to %d", a->max_accel, MAX_ACCEL);
    if (a->find_max && a->accel != 1)
        return rb_cli_usage_error("--accelerators-per-rank %" PRIu64 " and --find-max-accelerators: the search chooses the "
                           "count (bound it with --max-accelerators-per-rank)", a->accel);
    if (a->epochs < 1 || a->epochs > MAX_EPOCHS)
        return rb_cli_usage_error("--epochs %" PRIu64 ": expected 1 to %d", a->epochs, MAX_EPOCHS);
    if (a->prefetch > (1u << 20))
        return rb_cli_usage_error("--prefetch %" PRIu64 ": expected 0 (automatic) to %u batches", a->prefetch, 1u << 20);
    if (a->overlap && !a->grad_bytes)
        return rb_cli_usage_error("--overlap: give --grad-bytes SIZE (the all-reduce that overlaps the next step's reads)");
    if (a->overlap && a->find_max)
        return rb_cli_usage_error("--overlap and --find-max-accelerators: give one of them");
    if (a->overlap && a->epochs != 1)
        return rb_cli_usage_error("--overlap with --epochs %" PRIu64 ": --overlap runs three one-epoch phases (size them "
                                  "with --steps)", a->epochs);
    if (a->grad_bytes > MAX_GRAD_BYTES)
        return rb_cli_usage_error("--grad-bytes %" PRIu64 ": at most 4 GiB", a->grad_bytes);
    if (a->objects && a->filelist)
        return rb_cli_usage_error("--objects and --filelist: give one of them");
    if (a->objects > UINT32_MAX)
        return rb_cli_usage_error("--objects %" PRIu64 ": at most %u", a->objects, UINT32_MAX);
    if (a->prefix && strlen(a->prefix) > 512)
        return rb_cli_usage_error("--prefix: at most 512 bytes");
    if (rb_objname_check("--prefix", a->prefix, true))
        return RB_EXIT_USAGE;
    if (a->populate && !a->objects && !a->filelist)
        return rb_cli_usage_error("--populate: give --objects N (names <prefix><index>) or --filelist FILE to write");
    if (a->populate && !a->sample_known)
        return rb_cli_usage_error("--populate: give --sample-size SIZE[/STDEV] or --workload (the size of what to write)");
    if (a->format == TRAIN_FORMAT_TAR && a->sample_stdev)
        return rb_cli_usage_error("--format tar with --sample-size \"%s\": give a fixed size (every member of a shard "
                                  "holds one sample of it)", a->sample_s ? a->sample_s : a->preset->name);
    if (a->format == TRAIN_FORMAT_TAR && a->sample_bytes > RB_TAR_MAX_MEMBER_BYTES)
        return rb_cli_usage_error("--format tar: a ustar member holds at most 8 GiB - 1 (--sample-size)");
    if (a->format == TRAIN_FORMAT_TAR && a->ckpt_every)
        return rb_cli_usage_error("--format tar and --checkpoint-every: give one of them (the run's payloads are "
                                  "shards, a checkpoint's would be too)");
    if (a->shard_read == TRAIN_SHARD_RANGED && a->format != TRAIN_FORMAT_TAR)
        return rb_cli_usage_error("--shard-read ranged: give --format tar (ranges are a tar shard's members)");
    if (a->format == TRAIN_FORMAT_TAR && a->verify && !a->sample_known)
        return rb_cli_usage_error("--format tar --verify: give --sample-size SIZE or --workload (the shards' member "
                                  "size the bytes are checked against)");
    if (a->max_error_pct < 0 || a->max_error_pct > 100)
        return rb_cli_usage_error("--max-error-rate %g: expected 0 to 100 (percent)", a->max_error_pct);
    if (a->eng.max_redirects > 100)
        return rb_cli_usage_error("--max-redirects %" PRIu64 ": expected 0 to 100", a->eng.max_redirects);
    if (a->cache_header && (!*a->cache_header || strpbrk(a->cache_header, ": \t\r\n")))
        return rb_cli_usage_error("--cache-header \"%s\": expected a header name such as X-Cache-Status", a->cache_header);

    /* The config records what ran, in the form --config reads back. */
    char v[96], d1[32], d2[32];
    snprintf(v, sizeof v, "%" PRIu64, a->batch);
    record_config(cli, "batch-size", v);
    snprintf(v, sizeof v, "%" PRIu64, a->spo);
    record_config(cli, "samples-per-object", v);
    snprintf(v, sizeof v, "%" PRIu64, a->read_threads);
    record_config(cli, "read-threads", v);
    rb_format_duration(d1, sizeof d1, a->compute_ns);
    rb_format_duration(d2, sizeof d2, a->compute_stdev_ns);
    snprintf(v, sizeof v, a->compute_stdev_ns ? "%s/%s" : "%s", d1, d2);
    record_config(cli, "compute-time", v);
    snprintf(v, sizeof v, a->sample_stdev ? "%" PRIu64 "/%" PRIu64 : "%" PRIu64, a->sample_bytes, a->sample_stdev);
    record_config(cli, "sample-size", a->sample_known ? v : NULL);
    snprintf(v, sizeof v, "%g", a->au_min);
    record_config(cli, "au-min", v);
    /* What --populate writes and --verify expects, in every protocol: shards of spo members (tarshard_int.h). */
    if (a->format == TRAIN_FORMAT_TAR && a->sample_known)
        tar_payload(a);
    return rb_train_formats_resolve(a);
}

uint64_t rb_train_format_bytes(const struct train_args *a, uint64_t raw_bytes)
{
    if (a->format == TRAIN_FORMAT_PARQUET)
        return rb_train_pq_file_bytes(a) ? rb_train_pq_file_bytes(a) : raw_bytes;
    if (a->format == TRAIN_FORMAT_NPZ)
        return a->npz.spo ? rb_npz_file_bytes(&a->npz, raw_bytes) : raw_bytes;
    if (a->format == TRAIN_FORMAT_JPEG)
        return a->jpeg ? rb_jpeg_bytes_of(a->jpeg, raw_bytes) : raw_bytes;
    return a->format == TRAIN_FORMAT_TAR ? rb_tar_shard_bytes(a->spo, a->sample_bytes) : raw_bytes;
}

/* Opens the target and makes one connection to each endpoint; prefix gets the object prefix. Returns 0 or an exit status. */
static int open_target(struct train_args *a, struct rb_cli *cli, struct rb_target **t, char *prefix, size_t plen)
{
    int status = rb_load_target_open(&a->tgt, cli->args[0], NULL, t);
    if (status)
        return status;
    if ((status = rb_engine_check_usage(&a->eng, *t, RB_LOAD_GET, false))) {
        rb_target_close(*t);
        *t = NULL;
        return status;
    }
    snprintf(prefix, plen, "%s%s", rb_target_prefix(*t), a->prefix ? a->prefix : (a->objects ? "obj-" : ""));
    if ((status = rb_file_opts_check(&a->file)) ||
        (status = rb_file_opts_target(&a->file, *t, cli, &a->inflight)) ||
        (status = rb_load_target_probe(*t, a->tgt.timeout_ns)) != 0) {
        rb_target_close(*t);
        *t = NULL;
    }
    return status;
}

/* The data set must give every rank a step (two with --find-max-accelerators); *steps per epoch. Returns 0 or 2. */
static int check_data_set(struct rb_train_run *R, uint64_t *steps)
{
    const struct train_args *a = R->a;
    const struct rb_objset *all = R->all;
    struct rb_harness *h = R->h;
    uint64_t first_accel = a->find_max ? 1 : a->accel, need = a->find_max ? 2 : 1;
    *steps = rb_train_steps(all->n, h->size, a->spo, first_accel, a->batch, a->max_steps);
    if (*steps < need) {
        if (h->rank == 0)
            rb_error("the data set is too small: %" PRIu64 " objects x %" PRIu64 " samples / %d rank(s) gives %" PRIu64
                     " samples per rank; a step takes %" PRIu64 " (%" PRIu64 " accelerator(s) x --batch-size %" PRIu64
                     ")%s", all->n, a->spo, h->size, (uint64_t)(all->n / (size_t)h->size) * a->spo,
                     first_accel * a->batch, first_accel, a->batch,
                     a->find_max ? "; --find-max-accelerators needs two steps per trial" : "");
        return RB_EXIT_USAGE;
    }
    if (!all->sizes) {
        R->dataset_bytes = all->n * all->size_bytes;
        if (!all->size_bytes)
            R->source = NULL;
    }
    for (uint64_t i = 0; all->sizes && i < all->n; i++) {
        uint64_t b = rb_objset_size(all, i);
        R->dataset_bytes += b;
        if (!b)
            R->source = NULL; /* some sizes unknown: estimated after the first epoch */
    }
    return 0;
}

/* Rank 0: what the run is about to do, in two lines. */
static void announce(const struct rb_train_run *R, uint64_t steps)
{
    const struct train_args *a = R->a;
    char comp[32], sync[64] = "barrier";
    rb_format_duration_human(comp, sizeof comp, a->compute_ns);
    if (a->grad_bytes) {
        char g[32];
        rb_format_size(g, sizeof g, a->grad_bytes);
        snprintf(sync, sizeof sync, "all-reduce of %s", g);
    }
    rb_info("load train %s: %zu objects x %" PRIu64 " sample(s), %d rank(s), batch %" PRIu64 ", compute %s%s; "
            "%u read thread(s) x %u in flight; sync: %s", rb_target_name(R->t), R->all->n, a->spo, R->h->size, a->batch,
            comp, a->compute_stdev_ns ? " (mean)" : "", R->nloaders, R->fetch.inflight, sync);
    if (a->find_max)
        rb_info("searching 1 to %" PRIu64 " accelerator(s) per rank, %" PRIu64 " epoch(s) per trial", a->max_accel,
                a->epochs);
    else
        rb_info("%" PRIu64 " accelerator(s) per rank, %" PRIu64 " step(s) per epoch, %" PRIu64 " epoch(s)", a->accel,
                steps, a->epochs);
}

/* The fetchers' options, read threads, the trainers' communicator, gradient buffers. Returns 0 or an exit status. */
static int prepare(struct rb_train_run *R, uint64_t steps)
{
    const struct train_args *a = R->a;
    struct rb_harness *h = R->h;
    R->fetch = rb_load_opts_from(RB_LOAD_GET, R->t, &a->tgt, &a->eng, h->rank);
    R->fetch.inflight = (unsigned)a->inflight;
    R->fetch.seed = a->seed;
    R->fetch.verify = a->verify;
    R->fetch.payload = a->payload; /* --populate's copy of these options too */
    R->fetch.cache_header = a->file.cold_check ? RB_FILE_COLD_CHECK_NAME : a->cache_header;
    R->fetch.file = &a->file;
    R->fetch.body = a->decode ? rb_train_decode_body : NULL;
    int status = rb_train_loaders_new(R);
    if (status)
        return status;
    if (rb_train_tar_new(R) || rb_train_pq_new(R) || rb_train_decode_new(R))
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory for the files' index");
    RB_MPI_CHECK(MPI_Comm_dup(h->comm, &R->comm));
    R->mode = (struct train_mode){true, a->grad_bytes ? TRAIN_SYNC_ALLREDUCE : TRAIN_SYNC_BARRIER};
    if (a->grad_bytes) {
        R->grad_count = (int)((a->grad_bytes + sizeof(float) - 1) / sizeof(float));
        R->grad_send = calloc((size_t)R->grad_count, sizeof(float));
        R->grad_recv = calloc((size_t)R->grad_count, sizeof(float));
        if (!R->grad_send || !R->grad_recv)
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory for --grad-bytes %" PRIu64, a->grad_bytes);
    }
    if (h->rank == 0)
        announce(R, steps);
    return 0;
}

static void run_free(struct rb_train_run *R)
{
    if (R->comm != MPI_COMM_NULL)
        MPI_Comm_free(&R->comm);
    for (size_t i = 0; i < R->ntrials; i++) {
        cJSON_Delete(R->trials[i].epochs);
        free(R->trials[i].fig);
    }
    free(R->trials);
    cJSON_Delete(R->populated);
    cJSON_Delete(R->dataset);
    cJSON_Delete(R->interference);
    cJSON_Delete(R->checkpoint);
    free(R->grad_send);
    free(R->grad_recv);
    rb_train_tar_free(R);
    rb_train_pq_free(R);
    rb_train_decode_free(R);
    rb_train_loaders_free(R);
}

static int run_resolved(struct train_args *a, struct rb_cli *cli);

static int run(struct train_args *a, struct rb_cli *cli)
{
    int status = resolve(a, cli);
    if (!status)
        status = run_resolved(a, cli);
    rb_train_pq_cfg_free(a);
    return status;
}

static int run_resolved(struct train_args *a, struct rb_cli *cli)
{
    int status;
    struct rb_target *t = NULL;
    char prefix[1600];
    if ((status = open_target(a, cli, &t, prefix, sizeof prefix)) != 0)
        return status;

    /*
     * The trainer thread synchronises steps over MPI while the main thread
     * runs the harness's interval reductions, each on its own communicator:
     * that needs MPI_THREAD_MULTIPLE.
     */
    struct rb_harness h;
    status = rb_harness_init(&h, "load train", cli, &(struct rb_harness_opts){.mpi = true, .thread_multiple = true});
    if (status) {
        rb_target_close(t);
        return status;
    }
    struct rb_objset all = {0};
    struct rb_train_run R = {.a = a, .h = &h, .t = t, .all = &all, .comm = MPI_COMM_NULL};
    struct rb_buf table = {0};
    uint64_t steps = 0;

    if ((status = rb_train_build_objects(&h, a, t, prefix, &all, &R.source)) || (status = check_data_set(&R, &steps)) ||
        (status = rb_train_check_shards(&R)) || (status = rb_train_check_format(&R)) ||
        (status = prepare(&R, steps)))
        goto out;
    if (a->populate && (status = rb_train_populate(&R, &R.populated)))
        goto out;
    if (h.interrupted)
        goto out; /* a signal during --populate: nothing to train on yet, the populate phase is recorded */
    if (h.rank == 0 && R.source)
        R.dataset = rb_train_dataset_json(&R, R.dataset_bytes, R.source);
    if ((status = rb_train_ckpt_new(&R, &R.ckpt)))
        goto out;
    status = a->overlap ? rb_train_interference_run(&R) : rb_train_run_trials(&R);
    rb_train_tar_record(&R, R.dataset);
    rb_train_pq_record(&R, R.dataset);
    rb_train_decode_record(&R, R.dataset);
    R.checkpoint = rb_train_ckpt_json(R.ckpt);
    if (h.rank == 0 && R.ntrials)
        rb_train_report(&R, &table);
out:
    {
        int cs = rb_train_ckpt_free(&R, R.ckpt);
        R.ckpt = NULL;
        if (!status)
            status = cs;
    }
    /* A run that failed before measuring anything says so in one line, without pointing at an empty result. */
    if (status && !R.measured_anything && rb_log_get_level() > RB_LOG_WARN)
        rb_log_set_level(RB_LOG_WARN);
    if (R.comm != MPI_COMM_NULL) {
        MPI_Comm_free(&R.comm);
        R.comm = MPI_COMM_NULL;
    }
    status = rb_harness_finish(&h, table.oom ? NULL : table.s, status);
    rb_buf_free(&table);
    run_free(&R);
    rb_objset_free(&all);
    rb_target_close(t);
    return status;
}

/* run() behind the generic signature rb_load_command calls. */
static int run_args(void *a, struct rb_cli *cli)
{
    return run(a, cli);
}

int rb_load_train_main(int argc, char **argv)
{
    struct train_args a = {
        .inflight = 8,
        .accel = 1,
        .epochs = 1,
        .seed = 1,
        .max_accel = 256,
        .max_error_pct = 0,
    };
    rb_load_defaults(&a.tgt, &a.eng, &a.file);
    const struct rb_opt own[] = {
        {"workload", 0, RB_OPT_STR, &a.workload, "NAME",
         "MLPerf Storage preset: resnet50, unet3d, cosmoflow, retinanet, flux or dlrm (sample size, batch, compute time, "
         "read threads, --au-min; v3.0's format and files); options given win",
         "resnet50|unet3d|cosmoflow|retinanet|flux|dlrm"},
        {"scale", 0, RB_OPT_STR, &a.scale_s, "F",
         "--workload: the preset's files times F as --objects (e.g. 0.001), for a data set that fits", NULL},
        {"batch-size", 'b', RB_OPT_STR, &a.batch_s, "N", "samples per batch and accelerator (if not given: 1, or the preset's)",
         NULL},
        {"sample-size", 0, RB_OPT_STR, &a.sample_s, "SIZE[/STDEV]",
         "sample size, fixed or normal mean/stdev: what --populate writes, and the data set's size when not listed",
         NULL},
        {"samples-per-object", 0, RB_OPT_STR, &a.spo_s, "N",
         "samples in one object (sharded data sets); the object is read whole once (if not given: 1, or the preset's)", NULL},
        {"format", 0, RB_OPT_CHOICE, &a.format, "F",
         "how an object holds its samples: raw (back to back), tar (a ustar shard, one member per sample, streamed "
         "whole and in order as WebDataset reads it), parquet (one row per sample; read by footer and projected "
         "column chunks), npz (a zip of x.npy and y.npy as numpy.savez writes them) or jpeg (a baseline JPEG of "
         "the sample size; npz and jpeg read whole)",
         TRAIN_FORMAT_CHOICES},
        {"columns", 0, RB_OPT_STR, &a.columns, "LIST",
         "--format parquet: the columns read, names separated by commas (if not given: every column)", NULL},
        {"decode", 0, RB_OPT_FLAG, &a.decode, NULL,
         "--format npz or jpeg: decode each file read as a loader does (JPEG: libjpeg; npz: the npy headers parsed, "
         "the arrays read) and report the decode CPU time", NULL},
        {"row-group-read", 0, RB_OPT_FLAG, &a.rg_read, NULL,
         "--format parquet: one request per row group over its projected chunks, instead of one per column chunk",
         NULL},
        {"row-group-size", 0, RB_OPT_STR, &a.rg_rows_s, "ROWS",
         "--format parquet --populate: rows per row group (if not given: the whole file)", NULL},
        {"parquet-schema", 0, RB_OPT_STR, &a.pq_schema_s, "KIND:N",
         "--format parquet: scalar:N (N scalar columns) or list:N (N float list columns) sharing the sample size "
         "(if not given: scalar:1)", NULL},
        {"shard-read", 0, RB_OPT_CHOICE, &a.shard_read, "M",
         "--format tar: whole (one read per shard) or ranged (the shard's tar headers once, then one ranged read of "
         "exactly each sample's bytes)", TRAIN_SHARD_READ_CHOICES},
        {"compute-time", 0, RB_OPT_STR, &a.compute_s, "D[/STDEV]",
         "compute per step and accelerator, fixed or normal mean/stdev (required without --workload)", NULL},
        {"read-threads", 't', RB_OPT_STR, &a.threads_s, "N",
         "data loader threads per rank, each with its own connections (if not given: 1, or the preset's)", NULL},
        {"inflight", 'c', RB_OPT_U64, &a.inflight, "N", "requests in flight per read thread", NULL},
        {"prefetch", 0, RB_OPT_U64, &a.prefetch, "N",
         "batches read ahead per rank (0: 2 per read thread or per accelerator, whichever is more)", NULL},
        {"accelerators-per-rank", 0, RB_OPT_U64, &a.accel, "A",
         "simulated accelerators per rank, each taking its own batch every step", NULL},
        {"epochs", 0, RB_OPT_U64, &a.epochs, "N", "epochs; the first is the cold one through a tier", NULL},
        {"steps", 0, RB_OPT_U64, &a.max_steps, "N", "at most N steps per epoch (0: as many as the data set fills)",
         NULL},
        {"grad-bytes", 0, RB_OPT_SIZE, &a.grad_bytes, "SIZE",
         "after each step an MPI_Allreduce of SIZE bytes of gradients (0: a barrier)", NULL},
        {"checkpoint-every", 0, RB_OPT_U64, &a.ckpt_every, "K",
         "write a checkpoint every K steps (each rank --checkpoint-size bytes to the target); 0: none", NULL},
        {"checkpoint-size", 0, RB_OPT_SIZE, &a.ckpt_bytes, "SIZE",
         "bytes each rank writes per checkpoint (load checkpoint --model shows a model's, summary.model)", NULL},
        {"checkpoint-async", 0, RB_OPT_FLAG, &a.ckpt_async, NULL,
         "checkpoint as frameworks do asynchronously: a snapshot copy, then a writer thread while training goes on", NULL},
        {"overlap", 0, RB_OPT_FLAG, &a.overlap, NULL,
         "run the --grad-bytes all-reduce while the next step reads; measure reads alone and the all-reduce alone "
         "first, and report each side's slowdown", NULL},
        {"au-min", 0, RB_OPT_STR, &a.au_min_s, "PCT", "AU threshold in percent (if not given: 90, or the preset's: 70 for "
                                                       "cosmoflow and dlrm, 85 for retinanet)", NULL},
        {"strict", 0, RB_OPT_FLAG, &a.strict, NULL, "exit 1 when AU is below --au-min", NULL},
        {"find-max-accelerators", 0, RB_OPT_FLAG, &a.find_max, NULL,
         "search the most simulated accelerators that keep AU >= --au-min (doubling, then bisection)", NULL},
        {"max-accelerators-per-rank", 0, RB_OPT_U64, &a.max_accel, "N", "the search's upper bound per rank", NULL},
        {"objects", 'n', RB_OPT_U64, &a.objects, "N", "generated object names <prefix><index>, N of them", NULL},
        {"prefix", 0, RB_OPT_STR, &a.prefix, "P", "object name prefix: obj- with --objects, the listing filter otherwise",
         NULL},
        {"filelist", 0, RB_OPT_STR, &a.filelist, "FILE", "object names, one per line (optional size after a space)",
         NULL},
        {"populate", 0, RB_OPT_FLAG, &a.populate, NULL,
         "PUT the data set first (seeded payloads, sizes from --sample-size), as DLIO generates its data; names that "
         "exist already stop the run (exit 2) unless --overwrite", NULL},
        {"overwrite", 0, RB_OPT_FLAG, &a.overwrite, NULL, "--populate: write over objects that exist under those names",
         NULL},
        {"verify", 0, RB_OPT_FLAG, &a.verify, NULL, "compare every byte read with the seeded payload (class checksum)",
         NULL},
        {"seed", 0, RB_OPT_U64, &a.seed, "N", "seed of permutations, payloads, sizes and compute times", NULL},
        {"max-error-rate", 0, RB_OPT_PERCENT, &a.max_error_pct, "PCT", RB_LOAD_MAX_ERROR_HELP, NULL},
        {"cache-header", 0, RB_OPT_STR, &a.cache_header, "NAME",
         "count HIT/MISS of this response header per epoch (e.g. X-Cache-Status)", NULL},
        {0},
    };
    struct rb_opts opts = {0};
    rb_opts_add(&opts, own);
    rb_load_options(&opts, &a.tgt, &a.eng, &a.file);
    const struct rb_cmd_spec spec = {
        "railbench load train [options] URL",
        "Emulate data-parallel training on http://HOST:PORT/PATH, s3://BUCKET, ais://BUCKET or file:///PATH: each rank's "
        "simulated accelerators read batches, compute, and synchronise; report accelerator utilisation (AU) and "
        "samples/s per epoch, MLPerf Storage style.",
        opts.v, 1, 1, false};
    return rb_load_command(&spec, argc, argv, run_args, &a);
}

