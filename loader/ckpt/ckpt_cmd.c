/* railbench load checkpoint: MLPerf Storage's checkpoint benchmark (N writes, cache flush, N reads with ranks shifted). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../engine/multipart_int.h"
#include "ckpt_int.h"
#include "railbench/ckpt.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "railbench/objname.h"
#include "railbench/units.h"

#define DEFAULT_CHECKPOINTS 10 /* MLPerf Storage: 10 writes, then 10 reads */
#define MAX_CHECKPOINTS 1000
#define MAX_SCALE (UINT64_C(1) << 40)

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
static int resolve(struct rb_ckpt_args *a)
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
    if (a->mode == RB_CKPT_MODE_READ && !a->name)
        return rb_cli_usage_error("--mode read: give --name NAME, the checkpoints a --mode write run left");
    if (a->mode == RB_CKPT_MODE_READ && !a->reads)
        return rb_cli_usage_error("--mode read --reads 0: nothing to do");
    if (a->mode == RB_CKPT_MODE_WRITE && !a->writes)
        return rb_cli_usage_error("--mode write --writes 0: nothing to do");
    if (a->mode != RB_CKPT_MODE_READ && a->after)
        return rb_cli_usage_error("--after DIR is for --mode read (the write run's result directory)");
    if (a->mode == RB_CKPT_MODE_BOTH && !a->writes && !a->reads)
        return rb_cli_usage_error("--writes 0 --reads 0: nothing to measure");
    if (a->reads && !a->writes)
        return rb_cli_usage_error("--writes 0: the reads read checkpoints 1..--writes; say how many were written");
    if (rb_objname_check("--name", a->name, false))
        return RB_EXIT_USAGE;
    if (a->name && strlen(a->name) > 200)
        return rb_cli_usage_error("--name \"%.60s...\": at most 200 bytes", a->name);
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
    struct rb_ckpt_args *a = ctx;
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

/* The opened target against this command's options: the file group's checks, --read-part-size, a probe. */
static int check_target(struct rb_ckpt_args *a, struct rb_cli *cli, struct rb_ckpt_run *x)
{
    a->s3 = rb_target_can(x->t, RB_TCAP_MULTIPART);
    a->files = rb_target_can(x->t, RB_TCAP_FILES);
    /* --fsync close is the checkpoint's default on files (MLPerf enforces fsync); elsewhere the group's own. */
    struct rb_file_opts fo = a->file;
    if (!a->files && !rb_cli_given(cli, "--fsync"))
        fo.fsync = RB_FSYNC_NONE;
    if (fo.drop_cache == RB_DROP_HOST)
        return rb_cli_usage_error("--drop-cache host: load checkpoint drops every host's page cache between its "
                                  "writes and reads with --drop-caches; --drop-cache files drops each file's pages");
    int status = rb_file_opts_check(&fo);
    if (status || (status = rb_file_opts_target(&fo, x->t, cli, &a->inflight)))
        return status;
    if (a->files && rb_cli_given(cli, "--read-part-size")) {
        char objs[128];
        rb_proto_schemes(RB_TCAP_FILES, false, objs, sizeof objs);
        return rb_cli_usage_error("--read-part-size: ranged reads are for objects (%s); %s is a directory of files",
                                  objs, rb_target_name(x->t));
    }
    return rb_load_target_probe(x->t, a->tgt.timeout_ns);
}

/*
 * After the harness: the checkpoint folder (--name, or a fresh one, the same on every rank, that nothing else can
 * hold: its name in folder), what this process writes and reads, the bytes of one checkpoint, the engine's options.
 */
static void plan(struct rb_ckpt_run *x, char folder[256])
{
    struct rb_ckpt_args *a = x->a;
    if (!a->name) {
        unsigned long long stamp[2] = {(unsigned long long)time(NULL), (unsigned long long)getpid()};
        if (x->h.mpi)
            RB_MPI_CHECK(MPI_Bcast(stamp, 2, MPI_UNSIGNED_LONG_LONG, 0, x->h.comm));
        struct tm tm;
        time_t tt = (time_t)stamp[0];
        gmtime_r(&tt, &tm);
        snprintf(folder, 256, "rbckpt-%04d%02d%02dT%02d%02d%02d-%llx", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, stamp[1]);
        a->name = folder;
    }
    rb_ckpt_plan_of(a, &x->h, x->h.rank, &x->mine);
    x->shift_by = a->shift && x->h.size > 1 ? (x->h.host_count > 1 ? x->h.local_size : 1) : 0;
    rb_ckpt_plan_of(a, &x->h, (x->h.rank + x->shift_by) % x->h.size, &x->shifted);
    snprintf(x->mine.base, sizeof x->mine.base, "%s%s/", rb_target_prefix(x->t), a->name);
    memcpy(x->shifted.base, x->mine.base, sizeof x->shifted.base);
    const char *url = rb_target_name(x->t);
    size_t ul = strlen(url);
    snprintf(x->where, sizeof x->where, "%s%s%s/", url, ul && url[ul - 1] == '/' ? "" : "/", a->name);
    for (int p = 0; p < x->h.size; p++) {
        struct rb_ckpt_plan pl;
        rb_ckpt_plan_of(a, &x->h, p, &pl);
        for (uint64_t r = pl.first; r < pl.first + pl.count; r++)
            x->total_bytes += rb_ckpt_rank_bytes(&a->model, r, a->scale_den, NULL, NULL);
    }
    /* Files go up and come back on the native engine (multipart, ranged reads: engine.md); the engine's group is not
     * this command's. */
    const struct rb_engine_args ea = {.engine = RB_ENGINE_AUTO, .max_redirects = RB_ENGINE_MAX_REDIRECTS};
    x->o = rb_load_opts_from(RB_LOAD_GET, x->t, &a->tgt, &ea, x->h.rank);
    x->o.threads = (unsigned)a->threads;
    x->o.inflight = (unsigned)a->inflight;
    x->o.seed = a->seed;
    x->o.part_size = a->s3 ? a->part_size : 0;
    x->o.multipart_threshold = a->s3 ? a->mp_threshold : 0;
    x->o.file = a->files ? &a->file : NULL;
}

/*
 * file:// on one host: the --writes checkpoints must fit in the file system's free space, or nothing is written
 * (several hosts may each write to their own disk: not judged from here). Collective; 0 or RB_EXIT_RUNTIME.
 */
static int room(struct rb_ckpt_run *x)
{
    int status = 0;
    const uint64_t n = x->a->writes;
    if (x->h.rank == 0 && x->a->files && x->a->mode != RB_CKPT_MODE_READ && x->h.host_count <= 1 && n) {
        char what[96];
        snprintf(what, sizeof what, "%" PRIu64 " checkpoint(s) of %" PRIu64 " bytes", n, x->total_bytes);
        status = rb_file_space_check(x->t, x->total_bytes > UINT64_MAX / n ? UINT64_MAX : x->total_bytes * n, what);
    }
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, x->h.comm));
    return status;
}

/* The reads (collective): the cache drop, --after's gap to the write run, then --reads checkpoints. */
static int read_all(struct rb_ckpt_run *x)
{
    struct rb_ckpt_args *a = x->a;
    int status = 0;
    if (a->drop_caches && a->mode == RB_CKPT_MODE_BOTH)
        status = rb_ckpt_drop_caches(x);
    if (!status && a->after && x->h.rank == 0) {
        double end_s;
        if (rb_ckpt_read_write_end(a->after, &end_s)) {
            rb_error("--after %s: no write run's result.json with summary.write_end_unix_s there", a->after);
            status = RB_EXIT_USAGE;
        } else {
            double gap = rb_ckpt_unix_now_s() - end_s;
            rb_result_check(&x->h.result, "read_gap", gap <= RB_CKPT_MAX_READ_GAP_S,
                            "the reads started %.1f s after the writes ended (MLPerf Storage: at most %.0f s)", gap,
                            RB_CKPT_MAX_READ_GAP_S);
            rb_result_set(&x->h.result, "read_gap_s", cJSON_CreateNumber(gap));
        }
    }
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, x->h.comm));
    for (unsigned k = 1; k <= a->reads && !status && !rb_harness_any_signalled(&x->h); k++)
        status = rb_ckpt_one(x, false, (unsigned)((k - 1) % a->writes) + 1);
    return status;
}

/* What this run wrote is deleted at the end unless --keep (or --mode write, whose reads come later). */
static int clean_up(struct rb_ckpt_run *x, struct rb_cleanup *cl)
{
    struct rb_ckpt_args *a = x->a;
    struct rb_load_opts d = x->o;
    char where[1600];
    snprintf(where, sizeof where, "%s", x->where);
    bool keep = a->keep || a->mode == RB_CKPT_MODE_WRITE;
    int status = rb_cleanup_run(&x->h, &d, &x->written, keep, RB_CLEANUP_COUNTED, where, cl);
    if (!keep)
        rb_ckpt_dirs_remove(x); /* and the directories it made, now empty */
    if (keep && x->h.rank == 0 && x->written.n)
        rb_info("load checkpoint: the checkpoints stay under %s%s (--name %s)", x->where, "", a->name);
    return status;
}

/*
 * Rank 0, a rank lost (no MPI call may follow): what every rank wrote so far stays, and the outcome names where and
 * how to remove it. Nothing is deleted: the lost rank may still be writing, and the others cannot agree on a cleanup.
 */
static void lost_note(void *ctx)
{
    struct rb_ckpt_run *x = ctx;
    if (!x->a->name || x->a->mode == RB_CKPT_MODE_READ)
        return; /* lost before the checkpoint folder was named, or reading one: nothing written */
    char files[1200] = "";
    if (x->a->files)
        snprintf(files, sizeof files, ", then rm -r %s/%s for its directories", rb_target_file_root(x->t), x->a->name);
    rb_harness_kept(&x->h, "what the ranks wrote under %s (a rank was lost: no cleanup; railbench load delete %s "
                    "--prefix %s/ removes the files%s)", x->where, rb_target_name(x->t), x->a->name, files);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "folder", x->where);
    cJSON_AddBoolToObject(o, "removed", false);
    rb_result_set(&x->h.result, "left_behind", o);
}

static void run_free(struct rb_ckpt_run *x)
{
    for (int i = 0; x->hosts && i < x->nhosts; i++)
        free(x->hosts[i]);
    free(x->hosts);
    cJSON_Delete(x->writes);
    cJSON_Delete(x->reads);
    rb_objset_free(&x->written);
    rb_ckpt_dirs_free(x);
    cJSON_Delete(x->cache_drop);
    rb_objset_free(&x->step_set);
}

static int run(struct rb_ckpt_args *a, struct rb_cli *cli)
{
    int status = resolve(a);
    if (status)
        return status;
    struct rb_ckpt_run x = {.a = a};
    if ((status = rb_load_target_open(&a->tgt, cli->args[0], NULL, &x.t)))
        return status;
    if ((status = check_target(a, cli, &x)))
        goto close;
    status = rb_harness_init(&x.h, "load checkpoint", cli,
                             &(struct rb_harness_opts){.mpi = true, .precheck = precheck, .ctx = a});
    if (status)
        goto close;
    x.h.on_lost = lost_note;
    x.h.on_lost_ctx = &x;
    char folder[256];
    plan(&x, folder);
    rb_ckpt_gather_hosts(&x);
    if (x.h.rank == 0) {
        x.writes = cJSON_CreateArray();
        x.reads = cJSON_CreateArray();
        rb_info("load checkpoint %s: %.3f GB per checkpoint under %s%s, %" PRIu64 " write(s) then %" PRIu64
                " read(s)%s", a->model.name, x.total_bytes / 1e9, x.where, "",
                a->mode == RB_CKPT_MODE_READ ? 0 : a->writes, a->mode == RB_CKPT_MODE_WRITE ? 0 : a->reads,
                x.shift_by ? ", reads shifted to another rank's files" : "");
    }
    char *table = NULL;
    struct rb_cleanup cl = {0};
    if ((status = rb_ckpt_check_folder(&x)) || (status = room(&x)) || (status = rb_ckpt_dirs_note(&x)))
        goto finish;
    if (a->mode != RB_CKPT_MODE_READ)
        for (unsigned k = 1; k <= a->writes && !status && !rb_harness_any_signalled(&x.h); k++)
            status = rb_ckpt_one(&x, true, k);
    if (!status && a->mode != RB_CKPT_MODE_WRITE && a->reads)
        status = read_all(&x);
    int cs = clean_up(&x, &cl);
    if (!status)
        status = cs;
finish:
    if (x.h.rank == 0)
        table = rb_ckpt_report(&x, &cl);
    status = rb_harness_finish(&x.h, table, status);
    free(table);
    run_free(&x);
close:
    rb_target_close(x.t);
    return status;
}

static int run_args(void *a, struct rb_cli *cli)
{
    return run(a, cli);
}

int rb_load_checkpoint_main(int argc, char **argv)
{
    struct rb_ckpt_args a = {
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
         "llama3-8b|llama3-70b|llama3-405b|llama3-1t"},
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
    rb_load_options(&opts, &a.tgt, NULL, &a.file); /* the engine's group is not this command's */
    const struct rb_cmd_spec spec = {
        "railbench load checkpoint [options] URL",
        "MLPerf Storage's checkpoint benchmark on file:///PATH, s3://BUCKET[/FOLDER], ais://BUCKET or http://HOST/PATH: every rank "
        "writes its shards of the model's checkpoint --writes times, then reads them back (--reads), each "
        "checkpoint's duration the slowest rank's time.",
        opts.v, 1, 1, false};
    return rb_load_command(&spec, argc, argv, run_args, &a);
}
