/* railbench load checkpoint: MLPerf Storage's checkpoint benchmark (N writes, cache flush, N reads with ranks shifted). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../cmd/cleanup_int.h"
#include "../cmd/loader_int.h"
#include "../engine/multipart_int.h"
#include "../engine/phase_int.h"
#include "../file/file_int.h"
#include "ckpt_int.h"
#include "railbench/ckpt.h"
#include "railbench/clock.h"
#include "railbench/file.h"
#include "railbench/log.h"
#include "railbench/units.h"

#define DEFAULT_CHECKPOINTS 10 /* MLPerf Storage: 10 writes, then 10 reads */
#define MAX_CHECKPOINTS 1000
#define MAX_SCALE (UINT64_C(1) << 40)

enum ckpt_mode { MODE_BOTH, MODE_WRITE, MODE_READ };

struct ckpt_args {
    struct rb_target_cfg tgt;  /* the target options: --endpoint, --timeout, each protocol's own */
    struct rb_file_opts file;  /* a file:// target's options (the file protocol's group); --fsync default close */
    const char *model_s, *scale_s, *name, *after, *delay_s;
    uint64_t params, tp, pp, dp, zero; /* 0 (zero: UINT64_MAX): the preset's */
    uint64_t writes, reads, threads, inflight, seed, part_size, mp_threshold, read_part_size;
    int mode;
    bool subset, shift, verify, drop_caches, keep;
    /* resolved */
    struct rb_ckpt_model model;
    uint64_t scale_den, delay_rank, delay_ns;
    bool delay, s3, files;
};

/* "1/N" or "1": the fraction of every file's size written. */
static int parse_scale(const char *s, uint64_t *den)
{
    if (!s || strcmp(s, "1") == 0) {
        *den = 1;
        return 0;
    }
    if (strncmp(s, "1/", 2) != 0 || rb_parse_u64(s + 2, den) || *den == 0 || *den > MAX_SCALE)
        return -EINVAL;
    return 0;
}

/* Resolves the model (preset, then --params and the parallelism options) and checks the options. */
static int resolve(struct ckpt_args *a)
{
    const struct rb_ckpt_preset *p = NULL;
    if (a->model_s && !(p = rb_ckpt_preset_find(a->model_s)))
        return rb_cli_usage_error("--model \"%s\": expected %s", a->model_s, rb_ckpt_preset_list);
    if (p && a->params)
        return rb_cli_usage_error("--params %" PRIu64 " with --model %s: give one (a preset has its architecture)",
                                  a->params, a->model_s);
    if (!p && !a->params)
        return rb_cli_usage_error("load checkpoint: give --model %s, or --params N with --tp, --pp, --dp, --zero",
                                  rb_ckpt_preset_list);
    if (p)
        a->model = p->model;
    else
        a->model = (struct rb_ckpt_model){.name = "custom", .params = a->params, .tp = 1, .pp = 1, .dp = 0, .zero = 1};
    if (a->tp)
        a->model.tp = (unsigned)a->tp;
    if (a->pp)
        a->model.pp = (unsigned)a->pp;
    if (a->dp)
        a->model.dp = (unsigned)a->dp;
    if (a->zero != UINT64_MAX) {
        if (a->zero > 3)
            return rb_cli_usage_error("--zero %" PRIu64 ": expected a ZeRO stage 0, 1, 2 or 3", a->zero);
        a->model.zero = (unsigned)a->zero;
    }
    if (a->tp > 65536 || a->pp > 65536 || a->dp > 65536)
        return rb_cli_usage_error("--tp/--pp/--dp: at most 65536 each");
    if (parse_scale(a->scale_s, &a->scale_den))
        return rb_cli_usage_error("--scale \"%s\": expected 1/N (every file N times smaller), N from 1 to 2^40",
                                  a->scale_s);
    if (a->writes > MAX_CHECKPOINTS || a->reads > MAX_CHECKPOINTS)
        return rb_cli_usage_error("--writes/--reads: at most %d checkpoints", MAX_CHECKPOINTS);
    if (a->mode == MODE_READ && !a->name)
        return rb_cli_usage_error("--mode read: give --name NAME, the checkpoints a --mode write run left");
    if (a->mode == MODE_READ && !a->reads)
        return rb_cli_usage_error("--mode read --reads 0: nothing to do");
    if (a->mode == MODE_WRITE && !a->writes)
        return rb_cli_usage_error("--mode write --writes 0: nothing to do");
    if (a->mode != MODE_READ && a->after)
        return rb_cli_usage_error("--after DIR is for --mode read (the write run's result directory)");
    if (a->reads && !a->writes)
        return rb_cli_usage_error("--writes 0: the reads read checkpoints 1..--writes; say how many were written");
    if (a->name && (!a->name[0] || strstr(a->name, "..") || a->name[0] == '/' || strlen(a->name) > 200))
        return rb_cli_usage_error("--name \"%s\": expected a relative name without \"..\", up to 200 bytes", a->name);
    if (a->delay_s) {
        const char *colon = strchr(a->delay_s, ':');
        char r[32];
        if (!colon || (size_t)(colon - a->delay_s) >= sizeof r)
            return rb_cli_usage_error("--delay-rank \"%s\": expected RANK:DURATION (e.g. 1:2s)", a->delay_s);
        memcpy(r, a->delay_s, (size_t)(colon - a->delay_s));
        r[colon - a->delay_s] = '\0';
        if (rb_parse_u64(r, &a->delay_rank) || rb_parse_duration(colon + 1, &a->delay_ns))
            return rb_cli_usage_error("--delay-rank \"%s\": expected RANK:DURATION (e.g. 1:2s)", a->delay_s);
        a->delay = true;
    }
    if (!a->threads || a->threads > 256 || !a->inflight || a->inflight > 4096)
        return rb_cli_usage_error("--threads 1 to 256 and --inflight 1 to 4096");
    return 0;
}

/* The checks that need the number of processes: the model's ranks divide over them (or --subset fits). */
static int precheck(void *ctx, int rank, int size)
{
    struct ckpt_args *a = ctx;
    (void)rank;
    if (!a->model.dp)
        a->model.dp = (unsigned)size; /* --params without --dp: one data-parallel rank per process */
    char err[300];
    if (rb_ckpt_check(&a->model, a->subset ? 0 : (uint64_t)size, err, sizeof err))
        return rb_cli_usage_error("%s", err);
    if (a->subset && (uint64_t)size > rb_ckpt_world(&a->model))
        return rb_cli_usage_error("--subset: %d processes, more than the model's %" PRIu64 " ranks", size,
                                  rb_ckpt_world(&a->model));
    if (a->s3) {
        /* S3's part rules against the largest file any rank writes. */
        struct rb_ckpt_shard *s = malloc(RB_CKPT_MAX_SHARDS_PER_RANK * sizeof *s);
        uint64_t max = 0;
        for (uint64_t r = 0; s && r < rb_ckpt_world(&a->model); r++) {
            int n = rb_ckpt_rank_shards(&a->model, r, a->scale_den, s, RB_CKPT_MAX_SHARDS_PER_RANK);
            for (int i = 0; i < n; i++)
                max = s[i].bytes > max ? s[i].bytes : max;
        }
        free(s);
        int st = rb_mp_check_usage(a->part_size, a->mp_threshold, max);
        if (st)
            return st;
    }
    if (a->delay && a->delay_rank >= (uint64_t)size)
        return rb_cli_usage_error("--delay-rank %" PRIu64 ": there are %d processes (0 to %d)", a->delay_rank, size,
                                  size - 1);
    return 0;
}

/* What one process plays: model ranks [first, first + count). */
struct plan {
    uint64_t first, count;
    char base[1400];     /* "<target prefix><name>/" */
};

static void plan_of(const struct ckpt_args *a, const struct rb_harness *h, int proc, struct plan *p)
{
    p->count = a->subset ? 1 : rb_ckpt_world(&a->model) / (uint64_t)h->size;
    p->first = (uint64_t)proc * p->count;
}

/* Appends process proc's files of checkpoint step to set (sizes from the model); *bytes gets their sum. */
static int add_step(const struct ckpt_args *a, const struct plan *pl, unsigned step, struct rb_objset *set,
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

/* The run: one harness, its target, and everything measured (rank 0 keeps the figures). */
struct run {
    struct ckpt_args *a;
    struct rb_harness h;
    struct rb_target *t;
    struct plan mine, shifted;
    int shift_by;
    struct rb_load_opts o;
    char **hosts;           /* rank 0: host name per host index */
    int nhosts;
    cJSON *writes, *reads;  /* rank 0: one record per checkpoint */
    struct rb_ckpt_figures wsum, rsum; /* rank 0: sums of the figures (for the means) */
    unsigned nw, nr;
    struct rb_objset written;          /* every rank: what its writes left (what cleanup deletes) */
    double write_end_unix_s, read_start_unix_s;
    uint64_t total_bytes;              /* one checkpoint, every process */
    struct rb_objset step_set;
    char where[1500];                  /* the checkpoint folder as the user would write it: URL/NAME/ */
};

static double unix_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Every rank's busy time and bytes of the phase to rank 0 (collective); r (rank 0) gets h->size entries. */
static void gather_ranks(struct run *x, double busy_s, uint64_t bytes, struct rb_ckpt_rank *r)
{
    double mine[3] = {busy_s, (double)bytes, (double)x->h.host_index}, *all = NULL;
    if (x->h.rank == 0 && !(all = malloc(sizeof mine * (size_t)x->h.size)))
        rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "out of memory");
    if (x->h.mpi && x->h.size > 1)
        RB_MPI_CHECK(MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, x->h.comm));
    else if (all)
        memcpy(all, mine, sizeof mine);
    if (x->h.rank != 0)
        return;
    for (int i = 0; i < x->h.size; i++)
        r[i] = (struct rb_ckpt_rank){.busy_s = all[3 * i], .bytes = (uint64_t)all[3 * i + 1], .host = (int)all[3 * i + 2]};
    free(all);
}

/* Rank 0: the record of one checkpoint (figures, ranks, hosts, stragglers), logged and added to the list. */
static void record_point(struct run *x, bool write, unsigned step, const struct rb_ckpt_rank *r,
                         const struct rb_load_result *res)
{
    struct rb_ckpt_figures f;
    rb_ckpt_figures(r, (size_t)x->h.size, &f);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", write ? "write" : "read");
    cJSON_AddNumberToObject(o, "checkpoint", step);
    cJSON_AddItemToObject(o, "bytes", rb_json_u64(f.bytes));
    cJSON_AddNumberToObject(o, "duration_s", f.duration_s);
    cJSON_AddNumberToObject(o, "throughput_bytes_per_s", f.throughput_bytes_per_s);
    cJSON_AddNumberToObject(o, "min_rank_throughput_bytes_per_s", f.min_rank_bytes_per_s);
    cJSON_AddNumberToObject(o, "mean_rank_s", f.mean_rank_s);
    cJSON_AddNumberToObject(o, "slowest_rank", f.slowest_rank);
    cJSON_AddNumberToObject(o, "phase_s", res->duration_s);
    cJSON_AddItemToObject(o, "errors", rb_json_u64(res->total ? res->total->errors : 0));
    cJSON *ranks = cJSON_AddArrayToObject(o, "ranks");
    for (int i = 0; i < x->h.size; i++) {
        cJSON *k = cJSON_CreateObject();
        cJSON_AddNumberToObject(k, "rank", i);
        cJSON_AddStringToObject(k, "host", x->hosts[r[i].host]);
        cJSON_AddItemToObject(k, "bytes", rb_json_u64(r[i].bytes));
        cJSON_AddNumberToObject(k, "time_s", r[i].busy_s);
        cJSON_AddNumberToObject(k, "throughput_bytes_per_s", r[i].busy_s > 0 ? r[i].bytes / r[i].busy_s : 0);
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
        cJSON_AddItemToObject(k, "bytes", rb_json_u64(b));
        cJSON_AddNumberToObject(k, "time_s", t);
        cJSON_AddNumberToObject(k, "throughput_bytes_per_s", t > 0 ? b / t : 0);
        cJSON_AddItemToArray(hosts, k);
    }
    cJSON *st = rb_ckpt_stragglers(r, (size_t)x->h.size, (const char *const *)x->hosts, x->nhosts, false);
    cJSON_AddItemToObject(o, "stragglers", st);
    cJSON_AddItemToObject(o, "straggler_hosts",
                          rb_ckpt_stragglers(r, (size_t)x->h.size, (const char *const *)x->hosts, x->nhosts, true));
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
    rb_info("checkpoint %s %u: %.3f GB in %.3f s (slowest rank %d), %.3f GB/s; slowest rank's own %.3f GB/s",
            write ? "write" : "read", step, f.bytes / 1e9, f.duration_s, f.slowest_rank, f.throughput_bytes_per_s / 1e9,
            f.min_rank_bytes_per_s / 1e9);
    cJSON_AddItemToArray(write ? x->writes : x->reads, o);
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
    rb_harness_metric(&x->h, "railbench_checkpoint_min_rank_throughput_bytes_per_second", "gauge",
                      "The last checkpoint's slowest rank's own throughput.", labels,
                      isnan(f.min_rank_bytes_per_s) ? 0 : f.min_rank_bytes_per_s);
    rb_harness_metric(&x->h, "railbench_checkpoint_stragglers", "gauge",
                      "Ranks of the last checkpoint below half the ranks' median throughput.", labels,
                      cJSON_GetArraySize(st));
}

/*
 * A write that failed part-way (a full file system: ENOSPC) leaves files it did not finish: every file of the step
 * that exists joins what cleanup deletes (the folder was empty before the run, so whatever is in it the run made).
 * Only targets that answer existence locally (file) can leave such files; an S3 upload that fails is aborted.
 */
static void note_partial(struct run *x, const struct rb_objset *done, unsigned step)
{
    if (!x->t->ops->exists)
        return;
    char nb[RB_OBJSET_NAME_BYTES], db[RB_OBJSET_NAME_BYTES], err[512];
    uint64_t found = 0;
    for (uint64_t i = 0; i < x->step_set.n; i++) {
        const char *n = rb_objset_name(&x->step_set, i, nb);
        bool listed = false;
        for (uint64_t j = 0; j < done->n && !listed; j++)
            listed = strcmp(rb_objset_name(done, j, db), n) == 0;
        bool yes = false;
        if (!listed && x->t->ops->exists(x->t, n, &yes, err, sizeof err) == 0 && yes) {
            if (rb_objset_add(&x->written, n, 0))
                rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "out of memory");
            found++;
        }
    }
    unsigned long long all = found;
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, x->h.comm));
    if (x->h.rank == 0 && all)
        rb_error("checkpoint %u under %s was not written whole: %llu partial file(s) %s", step, x->where, all,
                 x->a->keep ? "stay (--keep)" : "are removed with the rest of what this run wrote");
}

/* One checkpoint write or read as a load phase; returns 0 or an exit status. */
static int one_checkpoint(struct run *x, bool write, unsigned step)
{
    struct ckpt_args *a = x->a;
    rb_objset_free(&x->step_set);
    uint64_t bytes = 0;
    /* A read takes the files another process wrote (--recovery-rank-shift): no page cache of its own holds them. */
    const struct plan *pl = write ? &x->mine : &x->shifted;
    int rc = add_step(a, pl, step, &x->step_set, &bytes);
    if (rc)
        rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "checkpoint %u: cannot list this rank's files: %s", step,
                         strerror(-rc));
    struct rb_load_opts o = x->o;
    o.objects = &x->step_set;
    o.op = write ? RB_LOAD_PUT : RB_LOAD_GET;
    o.verify = !write && a->verify;
    o.track_written = write;
    if (!write) {
        /* Each file once: the epoch pattern of one epoch over this rank's files; off file://, files larger than
         * --read-part-size come back as parallel Range GETs of that size (ranged.c). */
        o.part_size = o.multipart_threshold = a->files ? 0 : a->read_part_size;
        o.pattern = RB_PATTERN_EPOCH;
        o.epochs = 1;
    }
    o.start_delay_ns = a->delay && (uint64_t)x->h.rank == a->delay_rank ? a->delay_ns : 0;
    char phase[32];
    snprintf(phase, sizeof phase, "%s-%u", write ? "write" : "read", step);
    struct rb_load_result res = {0};
    if (!write && step == 1)
        x->read_start_unix_s = unix_now_s();
    int status = rb_load_run_phase(&x->h, phase, 0, &o, &res);
    if (write) {
        char nb[RB_OBJSET_NAME_BYTES];
        for (uint64_t i = 0; i < res.leftover.n && !rc; i++)
            rc = rb_objset_add(&x->written, rb_objset_name(&res.leftover, i, nb), 0);
        if (rc)
            rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "out of memory");
        x->write_end_unix_s = unix_now_s();
        if (status || (res.total && res.total->errors) || res.leftover.n < x->step_set.n)
            note_partial(x, &res.leftover, step);
    }
    struct rb_ckpt_rank *r = x->h.rank == 0 ? calloc((size_t)x->h.size, sizeof *r) : NULL;
    if (x->h.rank == 0 && !r)
        rb_harness_fatal(&x->h, RB_EXIT_RUNTIME, "out of memory");
    gather_ranks(x, res.rank_busy_s, bytes, r);
    if (x->h.rank == 0 && res.total) {
        record_point(x, write, step, r, &res);
        char what[64];
        snprintf(what, sizeof what, "%s %u", write ? "write" : "read", step);
        if (!rb_load_check_errors(&x->h.result, what, write ? "writes" : "reads", res.total->err, res.total->errors,
                                  res.total->ops, 0) && !write && res.total->err[RB_LERR_HTTP_4XX] == res.total->errors)
            rb_error("checkpoint %u under %s%s: %" PRIu64 " of %" PRIu64 " files not found: was it written (--writes, "
                     "--name)?", step, x->where, "", res.total->errors, res.total->ops);
    }
    free(r);
    int failed = x->h.rank == 0 && res.total && res.total->errors > 0;
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Bcast(&failed, 1, MPI_INT, 0, x->h.comm));
    rb_load_result_free(&res);
    return status ? status : failed ? RB_EXIT_CHECK : 0;
}

/* --drop-caches: every host's first rank writes back and drops the page cache (root), between writes and reads. */
static int drop_caches(struct run *x)
{
    int bad = 0;
    rb_harness_barrier(&x->h);
    if (x->h.local_rank == 0) {
        sync();
        int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
        if (fd < 0 || write(fd, "3\n", 2) != 2) {
            rb_error("--drop-caches: cannot write /proc/sys/vm/drop_caches on %s: %s (run as root, or use the "
                     "two-invocation form: --mode write, then --mode read --after DIR)", x->h.host, strerror(errno));
            bad = 1;
        }
        if (fd >= 0)
            close(fd);
    }
    int any = bad;
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, x->h.comm));
    return any ? RB_EXIT_RUNTIME : 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Rank 0: names listed under base on the target (count, and whether all of set are among them). */
static int list_under(struct run *x, const char *base, struct rb_objset *out, char *err, size_t errlen)
{
    return rb_target_list(x->t, base, x->a->tgt.timeout_ns, out, err, errlen);
}

/*
 * Before writing: nothing may exist under the checkpoint folder (a run never overwrites data it did not create).
 * Before a --mode read: every file of the checkpoints to read must be there. Rank 0 lists once; exit status to all.
 */
static int check_folder(struct run *x)
{
    int status = 0;
    if (x->h.rank == 0) {
        struct rb_objset listed = {0};
        char err[1024] = "";
        int rc = list_under(x, x->mine.base, &listed, err, sizeof err);
        if (rc) {
            if (x->a->mode == MODE_READ) {
                rb_error("load checkpoint: cannot list %s%s: %s", x->where, "", err);
                status = RB_EXIT_RUNTIME;
            } else {
                rb_warn("load checkpoint: cannot list %s%s (%s): not checked that it is empty", x->where, "", err);
            }
        } else if (x->a->mode != MODE_READ && listed.n) {
            char nb[RB_OBJSET_NAME_BYTES];
            rb_error("--name %s: %" PRIu64 " object(s) exist under %s%s already (first: %s); a run never overwrites "
                     "data it did not create: choose another --name", x->a->name, listed.n, x->where, "", rb_objset_name(&listed, 0, nb));
            status = RB_EXIT_USAGE;
        } else if (x->a->mode == MODE_READ) {
            /* Every process's files of every checkpoint read. */
            uint64_t want = 0, missing = 0;
            char first[RB_OBJSET_NAME_BYTES] = "";
            struct rb_objset need = {0};
            for (int p = 0; p < x->h.size; p++) {
                struct plan pl;
                plan_of(x->a, &x->h, p, &pl);
                memcpy(pl.base, x->mine.base, sizeof pl.base);
                unsigned steps = x->a->reads < x->a->writes ? (unsigned)x->a->reads : (unsigned)x->a->writes;
                for (unsigned s = 1; s <= steps; s++) {
                    uint64_t b = 0;
                    if (add_step(x->a, &pl, s, &need, &b))
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
static int read_write_end(const char *dir, double *end_s)
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

/* One mean row of the table and its JSON. */
static cJSON *mean_json(const struct rb_ckpt_figures *s, unsigned n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "checkpoints", n);
    cJSON_AddNumberToObject(o, "duration_s", n ? s->duration_s / n : 0);
    cJSON_AddNumberToObject(o, "throughput_bytes_per_s", n ? s->throughput_bytes_per_s / n : 0);
    cJSON_AddNumberToObject(o, "min_rank_throughput_bytes_per_s", n ? s->min_rank_bytes_per_s / n : 0);
    cJSON_AddItemToObject(o, "bytes", rb_json_u64(n ? s->bytes / n : 0));
    return o;
}

static void table_row(char **t, size_t *len, const cJSON *p)
{
    const char *st = "";
    char names[200] = "";
    size_t k = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(p, "stragglers"))
        k += (size_t)snprintf(names + k, k < sizeof names ? sizeof names - k : 0, "%srank %d", k ? ", " : "",
                              (int)cJSON_GetNumberValue(cJSON_GetObjectItem(s, "rank")));
    st = names;
    char row[512];
    int n = snprintf(row, sizeof row, "| %-5s | %4d | %10.3f | %10.3f | %8.3f | %14.3f | %s |\n",
                     cJSON_GetStringValue(cJSON_GetObjectItem(p, "op")),
                     (int)cJSON_GetNumberValue(cJSON_GetObjectItem(p, "checkpoint")),
                     cJSON_GetNumberValue(cJSON_GetObjectItem(p, "bytes")) / 1e9,
                     cJSON_GetNumberValue(cJSON_GetObjectItem(p, "duration_s")),
                     cJSON_GetNumberValue(cJSON_GetObjectItem(p, "throughput_bytes_per_s")) / 1e9,
                     cJSON_GetNumberValue(cJSON_GetObjectItem(p, "min_rank_throughput_bytes_per_s")) / 1e9, st);
    char *nt = realloc(*t, *len + (size_t)n + 1);
    if (!nt)
        return;
    memcpy(nt + *len, row, (size_t)n + 1);
    *t = nt;
    *len += (size_t)n;
}

/* Rank 0: summary (model, per-checkpoint records, means, the cache flush) and the MLPerf-style table. */
static char *report(struct run *x, const struct rb_cleanup *cl)
{
    struct ckpt_args *a = x->a;
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
    cJSON_AddStringToObject(s, "mode", a->mode == MODE_WRITE ? "write" : a->mode == MODE_READ ? "read" : "both");
    cJSON_AddStringToObject(s, "cache_flush", a->drop_caches ? "drop_caches" : a->after ? "two_invocations" : "none");
    if (x->nw)
        cJSON_AddNumberToObject(s, "write_end_unix_s", x->write_end_unix_s);
    cJSON_AddItemToObject(s, "writes", x->writes);
    cJSON_AddItemToObject(s, "reads", x->reads);
    x->writes = x->reads = NULL;
    cJSON_AddItemToObject(s, "write_mean", mean_json(&x->wsum, x->nw));
    cJSON_AddItemToObject(s, "read_mean", mean_json(&x->rsum, x->nr));
    cJSON_AddItemToObject(s, "cleanup", rb_cleanup_json(cl));
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
    int n = snprintf(tail, sizeof tail,
                     "\nmean of %u write(s): %.3f s, %.3f GB/s; of %u read(s): %.3f s, %.3f GB/s (duration: the "
                     "slowest rank's time; throughput: checkpoint bytes over it)\n",
                     x->nw, x->nw ? x->wsum.duration_s / x->nw : 0, x->nw ? x->wsum.throughput_bytes_per_s / x->nw / 1e9 : 0,
                     x->nr, x->nr ? x->rsum.duration_s / x->nr : 0, x->nr ? x->rsum.throughput_bytes_per_s / x->nr / 1e9 : 0);
    char *nt = t ? realloc(t, len + (size_t)n + 1) : NULL;
    if (nt) {
        memcpy(nt + len, tail, (size_t)n + 1);
        t = nt;
    }
    rb_result_set(&x->h.result, "summary", s);
    return t;
}

/* Rank 0: the host names by host index (gathered once). */
static void gather_hosts(struct run *x)
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

static int run(struct ckpt_args *a, struct rb_cli *cli)
{
    int status = resolve(a);
    if (status)
        return status;
    struct run x = {.a = a};
    if ((status = rb_load_target_open(&a->tgt, cli->args[0], NULL, &x.t)))
        return status;
    const bool s3 = a->s3 = strcmp(rb_target_scheme(x.t), "s3") == 0;
    a->files = strcmp(rb_target_scheme(x.t), "file") == 0;
    {
        /* --fsync close is the checkpoint's default on files (MLPerf enforces fsync); elsewhere the group's own. */
        struct rb_file_opts fo = a->file;
        if (!a->files && !rb_cli_given(cli, "--fsync"))
            fo.fsync = RB_FSYNC_NONE;
        if ((status = rb_file_opts_check(&fo)) || (status = rb_file_opts_target(&fo, x.t, cli, &a->inflight)))
            goto close;
    }
    if (a->files && rb_cli_given(cli, "--read-part-size")) {
        status = rb_cli_usage_error("--read-part-size: ranged reads are HTTP's (s3://, ais://, http://); %s is a "
                                    "file:// target", rb_target_name(x.t));
        goto close;
    }
    if ((status = rb_load_target_probe(x.t, a->tgt.timeout_ns)))
        goto close;
    status = rb_harness_init(&x.h, "load checkpoint", cli,
                             &(struct rb_harness_opts){.mpi = true, .precheck = precheck, .ctx = a});
    if (status)
        goto close;
    /* The checkpoint folder: --name, or a fresh one (the same on every rank) that nothing else can hold. */
    char name[256];
    if (!a->name) {
        unsigned long long stamp[2] = {(unsigned long long)time(NULL), (unsigned long long)getpid()};
        if (x.h.mpi)
            RB_MPI_CHECK(MPI_Bcast(stamp, 2, MPI_UNSIGNED_LONG_LONG, 0, x.h.comm));
        struct tm tm;
        time_t tt = (time_t)stamp[0];
        gmtime_r(&tt, &tm);
        snprintf(name, sizeof name, "rbckpt-%04d%02d%02dT%02d%02d%02d-%llx", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, stamp[1]);
        a->name = name;
    }
    plan_of(a, &x.h, x.h.rank, &x.mine);
    x.shift_by = a->shift && x.h.size > 1 ? (x.h.host_count > 1 ? x.h.local_size : 1) : 0;
    plan_of(a, &x.h, (x.h.rank + x.shift_by) % x.h.size, &x.shifted);
    snprintf(x.mine.base, sizeof x.mine.base, "%s%s/", rb_target_prefix(x.t), a->name);
    memcpy(x.shifted.base, x.mine.base, sizeof x.shifted.base);
    const char *url = rb_target_name(x.t);
    size_t ul = strlen(url);
    snprintf(x.where, sizeof x.where, "%s%s%s/", url, ul && url[ul - 1] == '/' ? "" : "/", a->name);
    for (int p = 0; p < x.h.size; p++) {
        struct plan pl;
        plan_of(a, &x.h, p, &pl);
        for (uint64_t r = pl.first; r < pl.first + pl.count; r++)
            x.total_bytes += rb_ckpt_rank_bytes(&a->model, r, a->scale_den, NULL, NULL);
    }
    /* Files go up and come back through libcurl (multipart, ranged reads): the engine's group is not this command's. */
    const struct rb_engine_args ea = {.engine = RB_ENGINE_CURL, .max_redirects = RB_ENGINE_MAX_REDIRECTS};
    x.o = rb_load_opts_from(RB_LOAD_GET, x.t, &a->tgt, &ea, x.h.rank);
    x.o.threads = (unsigned)a->threads;
    x.o.inflight = (unsigned)a->inflight;
    x.o.seed = a->seed;
    x.o.part_size = s3 ? a->part_size : 0;
    x.o.multipart_threshold = s3 ? a->mp_threshold : 0;
    x.o.file = a->files ? &a->file : NULL;
    gather_hosts(&x);
    if (x.h.rank == 0) {
        x.writes = cJSON_CreateArray();
        x.reads = cJSON_CreateArray();
        rb_info("load checkpoint %s: %.3f GB per checkpoint under %s%s, %" PRIu64 " write(s) then %" PRIu64
                " read(s)%s", a->model.name, x.total_bytes / 1e9, x.where, "",
                a->mode == MODE_READ ? 0 : a->writes, a->mode == MODE_WRITE ? 0 : a->reads,
                x.shift_by ? ", reads shifted to another rank's files" : "");
    }
    char *table = NULL;
    struct rb_cleanup cl = {0};
    if ((status = check_folder(&x)))
        goto finish;
    if (a->mode != MODE_READ)
        for (unsigned k = 1; k <= a->writes && !status && !rb_harness_any_signalled(&x.h); k++)
            status = one_checkpoint(&x, true, k);
    if (!status && a->mode != MODE_WRITE && a->reads) {
        if (a->drop_caches && a->mode == MODE_BOTH)
            status = drop_caches(&x);
        if (!status && a->after && x.h.rank == 0) {
            double end_s;
            if (read_write_end(a->after, &end_s)) {
                rb_error("--after %s: no write run's result.json with summary.write_end_unix_s there", a->after);
                status = RB_EXIT_USAGE;
            } else {
                double gap = unix_now_s() - end_s;
                rb_result_check(&x.h.result, "read_gap", gap <= RB_CKPT_MAX_READ_GAP_S,
                                "the reads started %.1f s after the writes ended (MLPerf Storage: at most %.0f s)", gap,
                                RB_CKPT_MAX_READ_GAP_S);
                rb_result_set(&x.h.result, "read_gap_s", cJSON_CreateNumber(gap));
            }
        }
        if (x.h.mpi)
            RB_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, x.h.comm));
        for (unsigned k = 1; k <= a->reads && !status && !rb_harness_any_signalled(&x.h); k++)
            status = one_checkpoint(&x, false, (unsigned)((k - 1) % a->writes) + 1);
    }
    /* What this run wrote is deleted at the end unless --keep (or --mode write, whose reads come later). */
    {
        struct rb_load_opts d = x.o;
        char where[1600];
        snprintf(where, sizeof where, "%s", x.where);
        bool keep = a->keep || a->mode == MODE_WRITE;
        int cs = rb_cleanup_run(&x.h, &d, &x.written, keep, RB_CLEANUP_COUNTED, where, &cl);
        if (!status)
            status = cs;
        if (keep && x.h.rank == 0 && x.written.n)
            rb_info("load checkpoint: the checkpoints stay under %s%s (--name %s)", x.where, "",
                    a->name);
    }
finish:
    if (x.h.rank == 0)
        table = report(&x, &cl);
    status = rb_harness_finish(&x.h, table, status);
    free(table);
    for (int i = 0; x.hosts && i < x.nhosts; i++)
        free(x.hosts[i]);
    free(x.hosts);
    cJSON_Delete(x.writes);
    cJSON_Delete(x.reads);
    rb_objset_free(&x.written);
    rb_objset_free(&x.step_set);
close:
    rb_target_close(x.t);
    return status;
}

static int run_args(void *a, struct rb_cli *cli)
{
    return run(a, cli);
}

int rb_ckpt_main(int argc, char **argv)
{
    struct ckpt_args a = {
        .writes = DEFAULT_CHECKPOINTS,
        .reads = DEFAULT_CHECKPOINTS,
        .threads = 1,
        .inflight = 8,
        .seed = 1,
        .part_size = RB_MP_DEFAULT_PART_BYTES,
        .mp_threshold = RB_MP_DEFAULT_THRESHOLD_BYTES,
        .read_part_size = RB_MP_DEFAULT_PART_BYTES,
        .zero = UINT64_MAX,
    };
    rb_load_defaults(&a.tgt, NULL, &a.file); /* the engine's group is not this command's */
    a.tgt.timeout_ns = 120 * RB_NS_PER_S;
    a.file.fsync = RB_FSYNC_CLOSE; /* MLPerf Storage enforces fsync on checkpoint writes */
    const struct rb_opt own[] = {
        {"model", 0, RB_OPT_STR, &a.model_s, "NAME", "MLPerf Storage preset: llama3-8b, llama3-70b, llama3-405b, llama3-1t",
         NULL},
        {"params", 0, RB_OPT_U64, &a.params, "N", "any model: N parameters (instead of --model)", NULL},
        {"tp", 0, RB_OPT_U64, &a.tp, "N", "tensor-parallel ranks (if not given: the preset's, else 1)", NULL},
        {"pp", 0, RB_OPT_U64, &a.pp, "N", "pipeline stages (if not given: the preset's, else 1)", NULL},
        {"dp", 0, RB_OPT_U64, &a.dp, "N", "data-parallel ranks (if not given: the preset's, else the processes)", NULL},
        {"zero", 0, RB_OPT_U64, &a.zero, "STAGE", "ZeRO stage 0 to 3 (if not given: the preset's, else 1)", NULL},
        {"scale", 0, RB_OPT_STR, &a.scale_s, "1/N", "every file N times smaller: the same shape at a size that fits "
         "(if not given: 1, full size)", NULL},
        {"writes", 0, RB_OPT_U64, &a.writes, "N", "checkpoints written (DLIO's num_checkpoints_write)", NULL},
        {"reads", 0, RB_OPT_U64, &a.reads, "N", "checkpoints read back after the writes (num_checkpoints_read)", NULL},
        {"recovery-rank-shift", 0, RB_OPT_FLAG, &a.shift, NULL,
         "each rank reads the files of the rank one host over (one rank over on one host), as DLIO's key", NULL},
        {"subset", 0, RB_OPT_FLAG, &a.subset, NULL,
         "this run's processes play the model's first ranks only (one host's share, MLPerf's subset mode)", NULL},
        {"verify", 0, RB_OPT_FLAG, &a.verify, NULL, "compare every byte read with the seeded payload", NULL},
        {"drop-caches", 0, RB_OPT_FLAG, &a.drop_caches, NULL,
         "between writes and reads every host drops its page cache (root: /proc/sys/vm/drop_caches)", NULL},
        {"mode", 0, RB_OPT_CHOICE, &a.mode, "M",
         "both; write (keeps the checkpoints); read (of --name, after a write run: MLPerf's two invocations)",
         "both|write|read"},
        {"name", 0, RB_OPT_STR, &a.name, "NAME",
         "checkpoint folder under the target (if not given: a fresh rbckpt-<time>-<id>)", NULL},
        {"after", 0, RB_OPT_STR, &a.after, "DIR",
         "--mode read: the write run's result directory; the gap is recorded and checked (at most 30 s)", NULL},
        {"keep", 0, RB_OPT_FLAG, &a.keep, NULL, "leave the checkpoints this run wrote (else deleted at the end)", NULL},
        {"delay-rank", 0, RB_OPT_STR, &a.delay_s, "RANK:D",
         "rank RANK starts each checkpoint D late (a straggler on purpose, to see it named)", NULL},
        {"threads", 't', RB_OPT_U64, &a.threads, "N", "worker threads per rank", NULL},
        {"inflight", 'c', RB_OPT_U64, &a.inflight, "N", "files (or parts) in flight per thread", NULL},
        {"part-size", 0, RB_OPT_SIZE, &a.part_size, "SIZE", "s3:// writes: multipart part size (parts go up in parallel)",
         NULL},
        {"multipart-threshold", 0, RB_OPT_SIZE, &a.mp_threshold, "SIZE", "s3:// writes: files larger than SIZE go up "
         "in parts", NULL},
        {"read-part-size", 0, RB_OPT_SIZE, &a.read_part_size, "SIZE", "reads off file://: a file larger than SIZE "
         "comes back as parallel Range GETs of SIZE (0: one GET per file)", NULL},
        {"seed", 0, RB_OPT_U64, &a.seed, "N", "seed of the payload (--verify recomputes it)", NULL},
        {0},
    };
    struct rb_opts opts = {0};
    rb_opts_add(&opts, own);
    rb_target_options(&opts, &a.tgt);
    /* The file protocol's group after the command's rows. */
    struct rb_opt file[RB_FILE_OPT_ROWS + 1];
    rb_file_options(file, &a.file);
    rb_opts_add(&opts, file);
    const struct rb_cmd_spec spec = {
        "railbench load checkpoint [options] URL",
        "MLPerf Storage's checkpoint benchmark on file:///PATH, s3://BUCKET[/PREFIX], ais://BUCKET or http://HOST/PATH: every rank "
        "writes its shards of the model's checkpoint --writes times, then reads them back (--reads), each "
        "checkpoint's duration the slowest rank's time.",
        opts.v, 1, 1, false};
    return rb_load_command(&spec, argc, argv, run_args, &a);
}
