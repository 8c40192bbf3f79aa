/* railbench block: the command — options, the sweep's points, and the sequence (targets, one phase per point, report). */
#define _POSIX_C_SOURCE 200809L
#include "block_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "railbench/clock.h"
#include "railbench/command.h"
#include "railbench/file.h"
#include "railbench/log.h"
#include "railbench/units.h"

/* A point still running this long past its runtime + ramp (times two) is treated as hung. */
#define WATCHDOG_GRACE_NS (60 * RB_NS_PER_S)

const char *const rb_block_rw_names[] = {"randread", "randwrite", "read", "write", "randrw"};

bool rb_block_rw_writes(int rw)
{
    return rw == RB_BLOCK_RANDWRITE || rw == RB_BLOCK_WRITE || rw == RB_BLOCK_RANDRW;
}

/* ---- options ---- */

/* --bs, --iodepth, --numjobs and --size against each other; 0 or RB_EXIT_USAGE after one line. */
static int validate_lists(const struct rb_block_opts *o)
{
    uint64_t max_bs = 0;
    for (size_t i = 0; i < o->bs.n; i++) {
        uint64_t b = o->bs.v[i];
        if (b == 0 || (o->direct && b % 512) || b > RB_GIB)
            return rb_cli_usage_error("--bs: %" PRIu64 " is not a block size for %s I/O (%s, at most 1 GiB)", b,
                                      o->direct ? "direct" : "buffered",
                                      o->direct ? "a multiple of 512" : "at least 1 byte");
        if (b > max_bs)
            max_bs = b;
    }
    for (size_t i = 0; i < o->iodepth.n; i++)
        if (o->iodepth.v[i] < 1 || o->iodepth.v[i] > 65536)
            return rb_cli_usage_error("--iodepth: %" PRIu64 " is out of range (1 to 65536)", o->iodepth.v[i]);
    for (size_t i = 0; i < o->numjobs.n; i++)
        if (o->numjobs.v[i] < 1 || o->numjobs.v[i] > 4096)
            return rb_cli_usage_error("--numjobs: %" PRIu64 " is out of range (1 to 4096)", o->numjobs.v[i]);
    if (!o->bs.n || !o->iodepth.n || !o->numjobs.n)
        return rb_cli_usage_error("--%s: needs at least one value",
                                  !o->bs.n ? "bs" : !o->iodepth.n ? "iodepth" : "numjobs");
    if (o->size_bytes && (o->size_bytes % (4 * RB_KIB) || o->size_bytes < max_bs))
        return rb_cli_usage_error("--size: %" PRIu64 " must be a multiple of 4 KiB and at least the largest --bs "
                                  "(%" PRIu64 ")",
                                  o->size_bytes, max_bs);
    if (o->bs.n * o->iodepth.n * o->numjobs.n > 4096)
        return rb_cli_usage_error("--bs: the sweep has more than 4096 points; use fewer --bs, --iodepth or --numjobs "
                                  "values");
    return 0;
}

/* Checks what can be checked without touching the system; returns 0 or RB_EXIT_USAGE after one line. */
static int validate(const struct rb_block_opts *o, struct rb_block_slo *slo, bool *have_slo)
{
    const char *why;
    if (!o->target || !*o->target)
        return rb_cli_usage_error("--target: required: a file, a directory or a block device (e.g. --target /mnt/nvme)");
    if ((why = rb_fio_value_problem(o->target)))
        return rb_cli_usage_error("--target: '%s' %s; use another path or a symlink", o->target, why);
    if (o->direct != 0 && o->direct != 1)
        return rb_cli_usage_error("--direct: %" PRId64 " is not 0 or 1 (fio's direct=)", o->direct);
    if (!o->engine || !*o->engine || strspn(o->engine, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(o->engine))
        return rb_cli_usage_error("--engine: '%s' is not a fio ioengine name (lower-case letters, digits, '_'; "
                                  "e.g. libaio, io_uring, psync)",
                                  o->engine ? o->engine : "");
    if (o->runtime_ns < RB_NS_PER_MS)
        return rb_cli_usage_error("--runtime: must be at least 1ms (e.g. 30s)");
    if (o->ramp_ns % RB_NS_PER_MS || o->runtime_ns % RB_NS_PER_MS)
        return rb_cli_usage_error("--%s: fio takes whole milliseconds (e.g. 1500ms, 2s)",
                                  o->ramp_ns % RB_NS_PER_MS ? "ramp" : "runtime");
    if (o->rwmix_pct != (double)(unsigned)o->rwmix_pct)
        return rb_cli_usage_error("--rwmix: %g is not a whole percentage of reads (fio's rwmixread=, e.g. 70)",
                                  o->rwmix_pct);
    int rc = validate_lists(o);
    if (rc)
        return rc;
    for (size_t i = 0; i < o->fio_opts.n; i++) {
        char err[300];
        if (rb_fio_opt_check(o->fio_opts.v[i], err, sizeof err) != 0)
            return rb_cli_usage_error("--fio-opt %s", err);
    }
    *have_slo = o->slo && *o->slo;
    if (*have_slo) {
        char err[256];
        if (rb_block_slo_parse(o->slo, slo, err, sizeof err) != 0)
            return rb_cli_usage_error("--slo: %s", err);
    }
    return 0;
}

/*
 * Parses the command line into *o (defaults first). Returns true when the
 * sweep should run (the caller frees cli), else false with *status the exit
 * status to return now (after --help, or after a usage error's one line; cli freed).
 */
static bool parse(struct rb_block_opts *o, struct rb_cli *cli, int argc, char **argv, int *status)
{
    static const uint64_t qd[] = {1, 2, 4, 8, 16, 32, 64};
    *o = (struct rb_block_opts){
        .rw = RB_BLOCK_RANDREAD, .rwmix_pct = 50, .runtime_ns = 30 * RB_NS_PER_S, .engine = "libaio",
        .direct = 1, .fio = "fio", .bs = {.n = 1, .v = {4 * RB_KIB}}, .numjobs = {.n = 1, .v = {1}},
    };
    o->iodepth.n = sizeof qd / sizeof qd[0];
    memcpy(o->iodepth.v, qd, sizeof qd);
    const struct rb_opt opts[] = {
        {"target", 0, RB_OPT_STR, &o->target, "PATH",
         "file, directory or block device; %r is replaced by the rank", NULL},
        {"size", 0, RB_OPT_SIZE, &o->size_bytes, "SIZE",
         "bytes of the target to use; 0: 1GiB for a file railbench creates, all of an existing file or device", NULL},
        {"rw", 0, RB_OPT_CHOICE, &o->rw, "RW", "I/O pattern (fio's rw=)", "randread|randwrite|read|write|randrw"},
        {"rwmix", 0, RB_OPT_PERCENT, &o->rwmix_pct, "PCT", "reads in percent for --rw randrw (fio's rwmixread=)", NULL},
        {"bs", 0, RB_OPT_SIZES, &o->bs, "SIZES", "block sizes, e.g. 4k,8k", NULL},
        {"iodepth", 0, RB_OPT_U64S, &o->iodepth, "N,...", "queue depths per job, e.g. 1,2,4,8", NULL},
        {"numjobs", 0, RB_OPT_U64S, &o->numjobs, "N,...", "jobs (processes) per rank, e.g. 1,2,4", NULL},
        {"runtime", 0, RB_OPT_DURATION, &o->runtime_ns, "DURATION", "measured time per point", NULL},
        {"ramp", 0, RB_OPT_DURATION, &o->ramp_ns, "DURATION", "unmeasured warm-up per point (fio's ramp_time)", NULL},
        {"engine", 0, RB_OPT_STR, &o->engine, "NAME", "fio ioengine", NULL},
        {"direct", 0, RB_OPT_INT, &o->direct, "0|1", "O_DIRECT (fio's direct=)", NULL},
        {"slo", 0, RB_OPT_STR, &o->slo, "EXPR", "latency bound, e.g. p99<=500us, p99.9<2ms, lat p99<=1ms", NULL},
        {"allow-destructive", 0, RB_OPT_FLAG, &o->allow_destructive, NULL,
         "allow writing to a block device or an existing file", NULL},
        {"allow-root-fs", 0, RB_OPT_FLAG, &o->allow_root_fs, NULL,
         "allow creating the target file on the root file system (not a mount of its own)", NULL},
        {"keep", 0, RB_OPT_FLAG, &o->keep, NULL, "keep the file railbench created as target", NULL},
        {"fio", 0, RB_OPT_STR, &o->fio, "PROG", "fio program (looked up in PATH)", NULL},
        {"fio-opt", 0, RB_OPT_STRS, &o->fio_opts, "KEY[=VALUE]",
         "fio option written into every job file (repeatable), e.g. cpus_allowed=0-1, hipri", NULL},
        {0},
    };
    const struct rb_cmd_spec spec = {
        "railbench block --target PATH [options]",
        "Sweep fio over block size x iodepth x numjobs on every rank at once; report the IOPS-vs-latency "
        "curve, the highest IOPS within --slo, and the knee.",
        opts, 0, 0, false};
    return rb_cli_parse_cmd(cli, &spec, argc, argv, status);
}

/* ---- the sweep's points ---- */

void rb_block_bs_label(char *buf, size_t len, uint64_t bs)
{
    if (bs % RB_MIB == 0)
        snprintf(buf, len, "%" PRIu64 "m", bs / RB_MIB);
    else if (bs % RB_KIB == 0)
        snprintf(buf, len, "%" PRIu64 "k", bs / RB_KIB);
    else
        snprintf(buf, len, "%" PRIu64, bs);
}

static int cmp_point(const void *a, const void *b)
{
    const struct rb_block_spec *x = a, *y = b;
    uint64_t ox = x->iodepth * x->numjobs, oy = y->iodepth * y->numjobs;
    if (ox != oy)
        return ox < oy ? -1 : 1;
    return (x->numjobs > y->numjobs) - (x->numjobs < y->numjobs);
}

/* Every block size in the order given; within one, combinations by growing outstanding I/O (fewer jobs first). */
static struct rb_block_spec *make_points(const struct rb_block_opts *o, size_t *n)
{
    size_t per_bs = o->iodepth.n * o->numjobs.n;
    struct rb_block_spec *p = calloc(o->bs.n * per_bs, sizeof *p);
    if (!p)
        return NULL;
    size_t k = 0;
    for (size_t b = 0; b < o->bs.n; b++) {
        size_t first = k;
        for (size_t j = 0; j < o->numjobs.n; j++)
            for (size_t d = 0; d < o->iodepth.n; d++, k++) {
                p[k].bs = o->bs.v[b];
                p[k].numjobs = o->numjobs.v[j];
                p[k].iodepth = o->iodepth.v[d];
            }
        qsort(p + first, per_bs, sizeof *p, cmp_point);
    }
    for (size_t i = 0; i < k; i++) {
        char bs[24];
        rb_block_bs_label(bs, sizeof bs, p[i].bs);
        snprintf(p[i].name, sizeof p[i].name, "%s-%s-qd%" PRIu64 "-j%" PRIu64, bs, rb_block_rw_names[o->rw],
                 p[i].iodepth, p[i].numjobs);
    }
    *n = k;
    return p;
}

/* ---- the sequence ---- */

/* One run of the command on this rank. */
struct sweep {
    struct rb_harness h;
    struct rb_block_opts o;
    struct rb_block_slo slo;
    bool have_slo;
    struct rb_block_spec *ps;     /* the points, npoints of them */
    size_t npoints;
    struct rb_block_target t;
    char fio_path[4096];
    char dir[4200];               /* this rank's job files, fio JSON and logs: OUT/points/<rank> */
    struct rb_block_run r;
    uint64_t watchdog_ns;
    /* rank 0 */
    struct rb_block_point *bp;    /* aggregates, one per point */
    bool *complete;               /* the point ran to its end */
    cJSON *points;                /* the points' records */
    char fio_version[32];
};

/* The worst status any rank has (collective on h->comm). */
static int agree(struct rb_harness *h, int status)
{
    int all = status;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&status, &all, 1, MPI_INT, MPI_MAX, h->comm));
    return all;
}

/* fio on every rank; a usable and distinct target on every rank; where the points' files go. Collective. */
static int setup_targets(struct sweep *s)
{
    struct rb_harness *h = &s->h;
    int status = 0;
    if (rb_block_find_program(s->o.fio, s->fio_path, sizeof s->fio_path) != 0) {
        if (strcmp(s->o.fio, "fio") == 0)
            status = RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "fio not found in PATH; install it with: apt-get install fio");
        else
            status = RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "--fio %s: not found or not executable (install fio with: "
                                                     "apt-get install fio)", s->o.fio);
    }
    if ((status = agree(h, status)) != 0)
        return status;
    status = rb_block_target_resolve(&s->o, h->rank, h->size, &s->t);
    if ((status = agree(h, status)) != 0)
        return status;
    if ((status = agree(h, rb_block_target_check_distinct(h, &s->t))) != 0)
        return status;
    rb_block_warn_binding(h, &s->o);
    snprintf(s->dir, sizeof s->dir, "%s/points/%d", h->out_dir, h->rank);
    int rc = rb_file_mkdir_p(s->dir);
    if (rc != 0)
        status = RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "cannot create %s: %s", s->dir, strerror(-rc));
    if (!status && (!s->r.clat || !s->r.lat))
        status = RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "out of memory");
    if ((status = agree(h, status)) != 0 || !s->o.fio_opts.n)
        return status;
    /* The items are the same on every rank: rank 0 asks its fio about them once. */
    return agree(h, h->rank ? 0 : rb_block_run_check_opts(&s->r, s->dir, &s->t, &s->ps[0]));
}

/* Writes the targets railbench owns on every rank before the first point. Collective. */
static int prepare_targets(struct sweep *s)
{
    struct rb_block_target *t = &s->t;
    if (s->h.rank == 0 && rb_log_get_level() >= RB_LOG_INFO && t->ours && !(t->size_bytes && access(t->path, F_OK) == 0))
        rb_info("writing %" PRIu64 " bytes to %s on every rank before the sweep", t->size_bytes, t->path);
    int status = agree(&s->h, rb_block_target_prepare(&s->o, t));
    if (status == RB_EXIT_CHECK)
        rb_harness_any_signalled(&s->h); /* a signal stopped the preparation: records the interruption */
    return status;
}

/* Rank 0 records why the sweep stopped as a failed check, with the first failing rank's message (collective). */
static void record_failure(struct rb_harness *h, const char *point, const char *err)
{
    cJSON *mine = NULL;
    if (err) {
        mine = cJSON_CreateObject();
        cJSON_AddNumberToObject(mine, "rank", h->rank);
        cJSON_AddStringToObject(mine, "error", err[0] ? err : "fio failed");
    }
    cJSON *all = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    if (h->rank == 0) {
        cJSON *first = cJSON_GetArrayItem(all, 0);
        if (first)
            rb_result_check(&h->result, "sweep", false, "rank %d: %s",
                            (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(first, "rank")),
                            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(first, "error")));
        else
            rb_result_check(&h->result, "sweep", false, "stopped at point %s", point);
    }
    cJSON_Delete(all);
}

/*
 * How the point went on this rank after its phase returned prc: the status
 * it ends the sweep with (0 when it went well), after one error line; *lost
 * when a signal cut fio short before it wrote results (not an error).
 */
static int point_outcome(struct sweep *s, int prc, bool *lost)
{
    struct rb_block_run *r = &s->r;
    *lost = false;
    /* A failed start was logged by the rank it failed on; everyone else just stops. */
    if (prc != 0)
        return prc;
    if (r->ok)
        return 0;
    if (r->stopped && s->h.interrupted) {
        *lost = true;
        return 0;
    }
    if (r->stopped) {
        char w[32];
        rb_format_duration(w, sizeof w, s->watchdog_ns);
        snprintf(r->err, sizeof r->err, "point %s: fio had not finished after %s; stopped it (see %s)", r->name, w,
                 r->log_path);
        rb_error("%s", r->err);
        return RB_EXIT_RUNTIME;
    }
    rb_error("%s", r->err[0] ? r->err : "fio failed");
    if (strstr(r->err, "last output"))
        rb_block_run_log_tail(r->log_path, r->err, sizeof r->err);
    return RB_EXIT_RUNTIME;
}

/* Gathers every rank's figures of point k; rank 0 aggregates them, records, publishes and prints them. */
static void point_gather(struct sweep *s, size_t k, const struct rb_phase *p)
{
    struct rb_harness *h = &s->h;
    cJSON *mine = rb_block_rank_json(h, &s->r, &s->t);
    cJSON *per_rank = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    if (h->rank != 0)
        return;
    bool cut = false;
    cJSON *pj = rb_block_aggregate(&s->o, &s->ps[k], per_rank, p->total, &s->bp[k], &cut);
    s->complete[k] = !cut;
    cJSON_AddItemToArray(s->points, pj);
    if (!s->fio_version[0])
        snprintf(s->fio_version, sizeof s->fio_version, "%s", s->r.fio.version);
    rb_block_point_metrics(h, rb_block_rw_names[s->o.rw], &s->ps[k], &s->bp[k]);
    if (rb_log_get_level() >= RB_LOG_INFO)
        rb_block_point_print(k, s->npoints, &s->ps[k], &s->bp[k], cut);
}

/*
 * Runs point k on every rank as one harness phase. Returns 0 to go on, or
 * the status that ends the sweep (recorded as a failed "sweep" check).
 * Collective.
 */
static int sweep_point(struct sweep *s, size_t k)
{
    struct rb_harness *h = &s->h;
    rb_block_run_reset(&s->r, s->dir, &s->ps[k]);
    int status = agree(h, rb_block_run_write_job(&s->r, &s->t, &s->ps[k]));
    if (status)
        return status;
    struct rb_phase p;
    rb_block_run_phase(&p, &s->r, s->watchdog_ns);
    int prc = rb_harness_run_phase(h, &p);
    bool lost;
    int flags[2] = {point_outcome(s, prc, &lost), lost}, any[2] = {flags[0], flags[1]};
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(flags, any, 2, MPI_INT, MPI_MAX, h->comm));
    if (any[0])
        record_failure(h, s->ps[k].name, s->r.err[0] ? s->r.err : NULL);
    else if (!any[1])
        point_gather(s, k, &p);
    else if (h->rank == 0)
        rb_warn("point %s: interrupted before every rank's fio wrote its results; not reported", s->ps[k].name);
    rb_harness_phase_free(&p);
    return any[0];
}

/* Every point in order, until one fails or a signal arrives. Collective. */
static int sweep_run(struct sweep *s)
{
    s->bp = calloc(s->npoints, sizeof *s->bp);
    s->complete = calloc(s->npoints, sizeof *s->complete);
    if (!s->bp || !s->complete)
        rb_harness_fatal(&s->h, RB_EXIT_RUNTIME, "out of memory");
    s->watchdog_ns = 2 * (s->o.runtime_ns + s->o.ramp_ns) + WATCHDOG_GRACE_NS;
    for (size_t k = 0; k < s->npoints; k++) {
        if (rb_harness_any_signalled(&s->h))
            break;
        int status = sweep_point(s, k);
        if (status)
            return status;
        if (s->h.interrupted)
            break;
    }
    return 0;
}

/* Removes the targets, reports (rank 0) and ends the run; returns the exit status. Collective. */
static int sweep_finish(struct sweep *s, int status)
{
    rb_block_target_remove(&s->o, &s->t);
    char *table = NULL;
    if (s->h.rank == 0 && s->points) {
        if (s->bp && s->complete) {
            const struct rb_block_results res = {
                .o = &s->o, .slo = s->have_slo ? &s->slo : NULL, .ps = s->ps, .bp = s->bp,
                .complete = s->complete, .n = s->npoints, .target0 = s->t.path, .t0 = &s->t, .fio_version = s->fio_version,
            };
            table = rb_block_report(&s->h, &res, s->points);
        } else {
            cJSON_Delete(s->points);
        }
    }
    int rc = rb_harness_finish(&s->h, table, status);
    free(table);
    return rc;
}

int rb_block_main(int argc, char **argv)
{
    struct sweep sw = {0};
    struct sweep *s = &sw;
    struct rb_cli cli;
    int rc;
    if (!parse(&s->o, &cli, argc, argv, &rc)) /* --help (exit 0) or a usage error: cli is freed */
        return rc;
    if ((rc = validate(&s->o, &s->slo, &s->have_slo)) != 0)
        goto fail;
    s->ps = make_points(&s->o, &s->npoints);
    if (!s->ps) {
        fprintf(stderr, "railbench: error: out of memory\n");
        rc = RB_EXIT_RUNTIME;
        goto fail;
    }
    if ((rc = rb_harness_init(&s->h, "block", &cli, &(struct rb_harness_opts){.mpi = true})) != 0)
        goto fail;
    s->points = s->h.rank == 0 ? cJSON_CreateArray() : NULL;
    s->r.o = &s->o;
    s->r.fio_path = s->fio_path;
    s->r.clat = rb_hist_new();
    s->r.lat = rb_hist_new();
    int status = setup_targets(s);
    if (!status)
        status = prepare_targets(s);
    if (!status)
        status = sweep_run(s);
    rc = sweep_finish(s, status);
    free(s->bp);
    free(s->complete);
    rb_hist_free(s->r.clat);
    rb_hist_free(s->r.lat);
fail:
    free(s->ps);
    rb_cli_free(&cli);
    return rc;
}
