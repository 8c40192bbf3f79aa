/* railbench load put|get|delete|stat: options, object set, probe, one load phase, and the warp-like report. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "cleanup_int.h"
#include "../file/file_int.h"
#include "load_cmd_int.h"
#include "loader_int.h"
#include "mixed_cmd_int.h"
#include "../engine/multipart_int.h"
#include "../engine/payload_int.h"
#include "../engine/phase_int.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "../engine/steady_int.h"
#include "sweep_int.h"
#include "railbench/units.h"
#include "railbench/objname.h"
#include "safety_int.h"

#define MAX_THREADS 1024
#define MAX_INFLIGHT 65536
#define DEFAULT_DURATION_NS (60 * RB_NS_PER_S) /* aisloader's default run time */
#define PUT_DEFAULT_SIZE (1024 * 1024)

/* The option groups a command takes beside the ones every load command takes (load_cmd composes them). */
enum {
    G_BODY = 1 << 0,      /* object sizes and --bytes: requests that carry a body one way or the other */
    G_ORDER = 1 << 1,     /* --pattern, --epochs: the order reads pick objects in */
    G_READ = 1 << 2,      /* --range, --random-range, --verify, --cache-header: what a GET reads and checks */
    G_MULTIPART = 1 << 3, /* --part-size, --multipart-threshold: how a put goes up to s3:// */
    G_KEEP = 1 << 4,      /* --keep, --overwrite: what a writing run leaves behind and may write over */
    G_MIX = 1 << 5,       /* --mix, --no-prepare: load mixed's weights and working set */
    G_FILE = 1 << 6,      /* the file protocol's group (--io-engine, --direct, ...): file:// loads */
};

/* What differs between the five commands: names, and their option groups. */
struct cmd_kind {
    const char *command, *phase, *usage, *about;
    unsigned groups;
};

static const struct cmd_kind cmd_kinds[] = {
    [RB_LOAD_GET] = {"load get", "get", "railbench load get [options] URL",
                     "GET objects from http://HOST:PORT/PATH, s3://BUCKET, ais://BUCKET or file:///PATH and report throughput, "
                     "latency and TTFB.", G_BODY | G_ORDER | G_READ | G_FILE},
    [RB_LOAD_PUT] = {"load put", "put", "railbench load put [options] URL",
                     "PUT seeded objects to http://HOST:PORT/PATH, s3://BUCKET, ais://BUCKET or file:///PATH and report throughput "
                     "and latency.", G_BODY | G_MULTIPART | G_KEEP | G_FILE},
    [RB_LOAD_DELETE] = {"load delete", "delete", "railbench load delete [options] URL",
                        "DELETE objects (--objects N names, a --filelist, or every object listed under --prefix) "
                        "from http://HOST:PORT/PATH, s3://BUCKET, ais://BUCKET or file:///PATH; each object once.", G_FILE},
    [RB_LOAD_HEAD] = {"load stat", "stat", "railbench load stat [options] URL",
                      "HEAD objects (warp's STAT) on http://HOST:PORT/PATH, s3://BUCKET, ais://BUCKET or file:///PATH and report "
                      "requests/s and latency.", G_ORDER | G_FILE},
    [RB_LOAD_MIXED] = {"load mixed", "mixed", "railbench load mixed [options] URL",
                       "warp-like mixed load on http://HOST:PORT/PATH, s3://BUCKET or file:///PATH: --objects N put first, then each "
                       "request draws GET, PUT, DELETE or STAT by --mix weights over the objects that exist.",
                       G_BODY | G_KEEP | G_MIX | G_FILE},
};



/* "OFF:LEN" with sizes on both sides, LEN > 0. */
static int parse_range(const char *s, uint64_t *off, uint64_t *len)
{
    const char *colon = strchr(s, ':');
    if (!colon || colon == s || !colon[1])
        return -EINVAL;
    char a[64];
    if ((size_t)(colon - s) >= sizeof a)
        return -EINVAL;
    memcpy(a, s, (size_t)(colon - s));
    a[colon - s] = '\0';
    if (rb_parse_size(a, off) || rb_parse_size(colon + 1, len) || *len == 0)
        return -EINVAL;
    return 0;
}

/* Checks the options together; prints one line and returns RB_EXIT_USAGE on the first problem. */
/* load mixed's own rules: a --mix of known ops, a named working set, a closed loop. */
static int validate_mixed(struct load_args *a)
{
    char bad[128];
    if (rb_mix_parse(a->mix, &a->mix_weights, bad, sizeof bad))
        return rb_cli_usage_error("--mix %s: %s; expected OP=WEIGHT,... with OP get, put, delete or stat, "
                                  "each once, weights 0 to 1000000, one above 0 (e.g. %s)", a->mix, bad, RB_MIX_DEFAULT);
    if (!a->objects && !a->filelist)
        return rb_cli_usage_error("load mixed: give --objects N (names <prefix><index>) or --filelist FILE: the "
                                  "working set it puts first and then reads, writes and deletes");
    if (a->rate > 0)
        return rb_cli_usage_error("load mixed --rate: the mixed load runs closed loop (-c requests in flight)");
    if (a->no_prepare && !a->overwrite && (a->mix_weights.weight[RB_LOAD_PUT] || a->mix_weights.weight[RB_LOAD_DELETE]))
        return rb_cli_usage_error("load mixed --no-prepare --mix %s: the objects exist already and this mix would "
                                  "write over or delete them; give a mix of get and stat only, or add --overwrite",
                                  a->mix);
    if (a->file.drop_cache == RB_DROP_HOST)
        return rb_cli_usage_error("load mixed --drop-cache host: reads and writes share one phase, so there is no "
                                  "read phase to drop the page cache before; --drop-cache files drops each file's "
                                  "pages before its GET");
    if (!a->duration_ns && !a->count)
        a->duration_ns = DEFAULT_DURATION_NS;
    return 0;
}

static int validate(struct load_args *a, uint64_t *range_off, uint64_t *range_len)
{
    int status;
    /* get and stat pick objects by pattern and run for a duration by default; put and delete go through the set once. */
    const bool get = a->op == RB_LOAD_GET || a->op == RB_LOAD_HEAD;
    const bool writes = a->op == RB_LOAD_PUT || a->op == RB_LOAD_MIXED;
    /* put's --size defaults to 1 MiB (so a --size 0 given is told apart); --min-size/--max-size replace it. */
    if (writes && a->size == 0)
        return rb_cli_usage_error("--size 0: an object needs at least 1 byte (e.g. --size 4k; default 1 MiB)");
    if (writes && a->size == PUT_DEFAULT_SIZE && (a->min_size || a->max_size))
        a->size = 0;
    if (a->op == RB_LOAD_MIXED && (status = validate_mixed(a)))
        return status;
    if (a->threads < 1 || a->threads > MAX_THREADS)
        return rb_cli_usage_error("--threads %" PRIu64 ": expected 1 to %d", a->threads, MAX_THREADS);
    if (a->inflight < 1 || a->inflight > MAX_INFLIGHT)
        return rb_cli_usage_error("--inflight %" PRIu64 ": expected 1 to %d", a->inflight, MAX_INFLIGHT);
    if (a->threads * a->inflight > MAX_INFLIGHT)
        return rb_cli_usage_error("--threads x --inflight = %" PRIu64 ": at most %d requests in flight per rank",
                           a->threads * a->inflight, MAX_INFLIGHT);
    if (a->objects && a->filelist)
        return rb_cli_usage_error("--objects and --filelist: give one of them");
    if (a->objects > UINT32_MAX)
        return rb_cli_usage_error("--objects %" PRIu64 ": at most %u", a->objects, UINT32_MAX);
    if (writes && !a->objects && !a->filelist)
        return rb_cli_usage_error("load put: give --objects N (names <prefix><index>) or --filelist FILE");
    if (a->size && (a->min_size || a->max_size))
        return rb_cli_usage_error("--size and --min-size/--max-size: give one form");
    if ((a->min_size != 0) != (a->max_size != 0))
        return rb_cli_usage_error("--min-size and --max-size go together (e.g. --min-size 4k --max-size 1M)");
    if (a->min_size > a->max_size)
        return rb_cli_usage_error("--min-size %" PRIu64 " is larger than --max-size %" PRIu64, a->min_size, a->max_size);
    if (a->size) {
        a->min_size = a->max_size = a->size;
    }
    if (a->prefix && strlen(a->prefix) > 512)
        return rb_cli_usage_error("--prefix: at most 512 bytes");
    if (rb_objname_check("--prefix", a->prefix, true))
        return RB_EXIT_USAGE;
    if (a->epochs && a->pattern != RB_PATTERN_EPOCH)
        return rb_cli_usage_error("--epochs %" PRIu64 ": needs --pattern epoch", a->epochs);
    *range_off = *range_len = 0;
    if (a->range && parse_range(a->range, range_off, range_len))
        return rb_cli_usage_error("--range \"%s\": expected OFF:LEN with sizes (e.g. 0:4k), LEN > 0", a->range);
    if (a->range && a->random_range)
        return rb_cli_usage_error("--range and --random-range: give one of them");
    if (a->samples == LOAD_SAMPLES_TAR && (a->range || a->random_range || a->verify))
        return rb_cli_usage_error("--samples tar with %s: a shard's members are counted from its whole body, as it is "
                                  "(drop it)", a->verify ? "--verify" : a->range ? "--range" : "--random-range");
    if (a->slowest > RB_SLOW_MAX)
        return rb_cli_usage_error("--slowest %" PRIu64 ": expected 0 to %d", a->slowest, RB_SLOW_MAX);
    if (a->max_error_pct < 0 || a->max_error_pct > 100)
        return rb_cli_usage_error("--max-error-rate %g: expected 0 to 100 (percent)", a->max_error_pct);
    if (a->eng.max_redirects > 100)
        return rb_cli_usage_error("--max-redirects %" PRIu64 ": expected 0 to 100", a->eng.max_redirects);
    if (a->cache_header && (!*a->cache_header || strpbrk(a->cache_header, ": \t\r\n")))
        return rb_cli_usage_error("--cache-header \"%s\": expected a header name such as X-Cache-Status", a->cache_header);
    if (get && a->pattern == RB_PATTERN_EPOCH && !a->epochs && !a->count && !a->bytes && !a->duration_ns)
        a->epochs = 1;
    if (!a->duration_ns && !a->count && !a->bytes && !(get && a->pattern == RB_PATTERN_EPOCH) && get)
        a->duration_ns = DEFAULT_DURATION_NS;
    if (a->until_steady && rb_steady_parse(a->until_steady, &a->steady.pct, &a->steady.window_ns))
        return rb_cli_usage_error("--until-steady \"%s\": expected PCT/WINDOW, PCT in (0, 100] and WINDOW a duration "
                                  "(e.g. 5/10s: throughput within 5 %% of its mean over the last 10 s)", a->until_steady);
    if (a->until_steady && !a->duration_ns)
        return rb_cli_usage_error("--until-steady: needs --duration D, the longest the phase may run");
    if (a->until_steady && a->steady.window_ns >= a->duration_ns)
        rb_warn("--until-steady window is not shorter than --duration: the run cannot converge");
    return rb_file_opts_check(&a->file);
}

/* This rank's share of the command's object set (rb_load_build_objects), with the sizes the user gave. */
static int build_objects(struct rb_harness *h, const struct load_args *a, const struct rb_target *t,
                         const char *prefix, struct rb_objset *mine, uint64_t *total)
{
    const char *hint = a->op == RB_LOAD_DELETE ? "to delete (nothing is left there)"
                                                : "to read (put some first, or give --objects N / --filelist FILE)";
    int status = rb_load_build_objects(h, t, a->objects, a->filelist, prefix, a->tgt.timeout_ns,
                                       (enum rb_engine_kind)a->eng.engine, hint, false, mine, total);
    if (status)
        return status;
    /*
     * Sizes the user told us (as used for put) let GET check lengths and pick
     * random ranges. Under --verify they are what the objects must be, so
     * they win over a listing (which reports what the objects are now). A
     * generated set stores none: the worker draws each from its name, the same way.
     */
    char buf[RB_OBJSET_NAME_BYTES];
    if (a->max_size && !rb_objset_generated(mine))
        for (uint64_t i = 0; i < mine->n; i++)
            if (!rb_objset_size(mine, i) || a->verify)
                rb_objset_set_size(mine, i, rb_payload_size(a->seed, rb_objset_name(mine, i, buf), a->min_size,
                                                            a->max_size));
    return 0;
}

static uint64_t share(uint64_t total, int n, int i)
{
    return total / (uint64_t)n + ((uint64_t)i < total % (uint64_t)n ? 1 : 0);
}

/* Rank 0 truncates FILE and writes the header; then every rank appends its own whole lines. */
static int open_request_log(struct rb_harness *h, const char *path)
{
    int fd = -1, bad = 0, any;
    if (h->rank == 0) {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
        static const char head[] = "rank,thread,op,object,bytes,start_ns,ttfb_ns,end_ns,status,class,latency_ns\n";
        if (fd < 0 || write(fd, head, sizeof head - 1) != (ssize_t)(sizeof head - 1))
            bad = 1;
    }
    rb_harness_barrier(h);
    if (h->rank != 0) {
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        bad = fd < 0;
    }
    int err = bad ? errno : 0;
    any = bad;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, h->comm));
    if (any) {
        if (bad)
            rb_error("--log-requests %s: %s", path, strerror(err ? err : EIO));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* S3's part rules for objects of up to max_size bytes; multipart off when none is above the threshold. */
static int multipart_sizes(struct load_args *a, uint64_t max_size)
{
    int status = rb_mp_check_usage(a->part_size, a->mp_threshold, max_size);
    if (!status && a->rate > 0 && max_size > a->mp_threshold)
        status = rb_cli_usage_error("--rate with multipart uploads: an object is many requests, so the open loop "
                                    "has no single send time; raise --multipart-threshold above the object size");
    if (status)
        return status;
    if (max_size <= a->mp_threshold)
        a->part_size = 0; /* every object goes up whole: the plain PUT path */
    return 0;
}

/*
 * put: multipart applies to s3:// only (given for another target: exit 2);
 * fills in the defaults and checks S3's part rules (for a --filelist once it
 * is read: multipart_listed). Returns 0 or RB_EXIT_USAGE.
 */
static int multipart_options(struct load_args *a, const struct rb_target *t, const struct rb_cli *cli)
{
    /* The defaults mean nothing off s3://, but a value asked for (on the command line or changed) is refused there. */
    const bool given = a->part_size != RB_MP_DEFAULT_PART_BYTES || a->mp_threshold != RB_MP_DEFAULT_THRESHOLD_BYTES ||
                       rb_cli_given(cli, "--part-size") || rb_cli_given(cli, "--multipart-threshold");
    if (a->op != RB_LOAD_PUT || !rb_target_can(t, RB_TCAP_MULTIPART)) {
        if (given) {
            char mp[128];
            rb_proto_schemes(RB_TCAP_MULTIPART, true, mp, sizeof mp);
            return rb_cli_usage_error("--part-size/--multipart-threshold: multipart uploads are for PUTs to %s "
                                      "targets; %s is not one", mp, rb_target_name(t));
        }
        a->part_size = a->mp_threshold = 0;
        return 0;
    }
    if (a->filelist)
        return 0; /* the list's sizes decide, once it is read: multipart_listed */
    return multipart_sizes(a, a->max_size);
}

/*
 * put --filelist to s3://: a listed file's size (or --size/--max-size for a
 * line without one) decides whether it goes up in parts, as the engine does
 * per object, so the largest size of the whole list (over every rank: the
 * part statistics are collective) is the one S3's rules are checked against.
 */
static int multipart_listed(struct rb_harness *h, struct load_args *a, const struct rb_objset *mine)
{
    if (!a->filelist || !a->part_size)
        return 0;
    uint64_t mx = 0, all;
    for (uint64_t i = 0; i < mine->n; i++)
        if (rb_objset_size(mine, i) > mx)
            mx = rb_objset_size(mine, i);
    all = mx;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&mx, &all, 1, MPI_UINT64_T, MPI_MAX, h->comm));
    return multipart_sizes(a, all);
}

/* A put of --objects N (or --count, --bytes) of at least --size or --min-size each to file:// is refused up front when it cannot fit. */
static int put_room(const struct load_args *a, const struct rb_target *t)
{
    const uint64_t each = a->size ? a->size : a->min_size;
    const uint64_t n = a->count && a->count < a->objects ? a->count : a->objects;
    /* A --duration without --count ends when its time is up: how much it writes is not known before it runs. */
    if (a->op != RB_LOAD_PUT || !n || !each || (a->duration_ns && !a->count))
        return 0;
    uint64_t total = n > UINT64_MAX / each ? UINT64_MAX : n * each;
    if (a->bytes && a->bytes < total)
        total = a->bytes;
    char what[96];
    snprintf(what, sizeof what, "%" PRIu64 " objects of %" PRIu64 " bytes", n, each);
    return rb_file_space_check(t, total, what);
}

/*
 * Opens the target and makes one connection to every endpoint before
 * anything starts: an unreachable one is one line and exit 3, with no
 * result directory (nothing was measured). Every rank probes; the first
 * one speaks. prefix gets the object name prefix. Returns 0 or an exit status.
 */
static int open_target(struct load_args *a, struct rb_cli *cli, struct rb_target **tp, char *prefix, size_t plen)
{
    struct rb_target *t = NULL;
    int status = rb_load_target_open(&a->tgt, cli->args[0], NULL, &t);
    if (status)
        return status;
    if (a->random_range && !a->max_size && (a->objects || a->filelist)) {
        rb_target_close(t);
        return rb_cli_usage_error("--random-range needs object sizes: give --size or --min-size/--max-size, "
                                  "sizes in the --filelist, or let the bucket be listed");
    }
    snprintf(prefix, plen, "%s%s", rb_target_prefix(t), a->prefix ? a->prefix : (a->objects ? DEFAULT_PREFIX : ""));
    if ((status = multipart_options(a, t, cli)) != 0 ||
        (status = rb_file_opts_target(&a->file, t, cli, &a->inflight)) != 0 ||
        (status = rb_load_target_probe(t, a->tgt.timeout_ns)) != 0 || (status = put_room(a, t)) != 0) {
        rb_target_close(t);
        return status;
    }
    *tp = t;
    return 0;
}

/* What this rank's engine runs: a's options with this rank's share of the limits and the rate. */
static struct rb_load_opts rank_opts(const struct load_args *a, const struct rb_harness *h, const struct rb_target *t,
                                     const struct rb_objset *mine, int log_fd, uint64_t range_off, uint64_t range_len)
{
    struct rb_load_opts o = rb_load_opts_from(a->op, t, &a->tgt, &a->eng, h->rank);
    o.objects = mine;
    o.threads = (unsigned)a->threads;
    o.inflight = (unsigned)a->inflight;
    o.pattern = (enum rb_load_pattern)a->pattern;
    o.epochs = a->epochs;
    o.count = a->count ? share(a->count, h->size, h->rank) : 0;
    o.bytes = a->bytes ? share(a->bytes, h->size, h->rank) : 0;
    o.range_off = range_off;
    o.range_len = range_len;
    o.random_range_len = a->random_range;
    o.rate_per_s = a->rate / h->size;
    o.seed = a->seed;
    o.verify = a->verify;
    o.min_size = a->min_size;
    o.max_size = a->max_size;
    o.cache_header = a->file.cold_check ? RB_FILE_COLD_CHECK_NAME : a->cache_header;
    o.file = &a->file;
    o.log_fd = log_fd;
    o.part_size = a->part_size;
    o.multipart_threshold = a->mp_threshold;
    o.tar_samples = a->samples == LOAD_SAMPLES_TAR;
    o.phases = a->phases;
    o.slowest = (unsigned)a->slowest;
    return o;
}

/*
 * This rank's objects in *mine (collective; *total over every rank) and, for a run that writes, the names
 * that already existed in *existing. Data the user owns: what the run deletes itself goes under its own
 * prefix (written into prefix); names the user keeps or named are looked up first and never written over
 * without --overwrite (docs/safety.md). 0 or an exit status.
 */
static int object_set(struct rb_harness *h, struct load_args *a, const struct rb_target *t, char *prefix,
                      size_t plen, const char *command, struct rb_objset *mine, uint64_t *total,
                      struct rb_objset *existing)
{
    const bool writes = a->op == RB_LOAD_PUT || (a->op == RB_LOAD_MIXED && !a->no_prepare);
    if (writes && !a->keep && !a->prefix && !a->filelist) {
        rb_safety_run_prefix(h, a->run_prefix, sizeof a->run_prefix);
        snprintf(prefix, plen, "%s%s%s", rb_target_prefix(t), a->run_prefix, DEFAULT_PREFIX);
    }
    int status = build_objects(h, a, t, prefix, mine, total);
    if (status || (status = multipart_listed(h, a, mine)))
        return status;
    if (writes && !a->run_prefix[0] &&
        (status = rb_safety_check(h, t, mine, a->tgt.timeout_ns, (enum rb_engine_kind)a->eng.engine, a->duration_ns, a->overwrite, command,
                                  a->keep ? "--keep" : a->filelist ? "--filelist" : "--prefix", existing)))
        return status;
    /* A generated set with --random-range has sizes (open_target asked for them); a listed one may lack some. */
    if (a->random_range && !a->max_size) {
        char buf[RB_OBJSET_NAME_BYTES];
        for (uint64_t i = 0; i < mine->n; i++)
            if (!rb_objset_size(mine, i)) {
                rb_harness_fatal(h, RB_EXIT_USAGE,
                                 "--random-range: the size of \"%s\" is unknown (give --size or sizes in the list)",
                                 rb_objset_name(mine, i, buf));
            }
    }
    return 0;
}

static int run(struct load_args *a, struct rb_cli *cli)
{
    uint64_t range_off, range_len;
    int status = validate(a, &range_off, &range_len);
    if (status)
        return status;

    struct rb_target *t = NULL;
    char prefix[1600];
    if ((status = open_target(a, cli, &t, prefix, sizeof prefix)) != 0)
        return status;
    if ((status = rb_engine_check_usage(&a->eng, t, a->op, range_len || a->random_range))) {
        rb_target_close(t);
        return status;
    }
    /* Deleting whatever a bare bucket lists is too easy a mistake: the set must be named. */
    if (a->op == RB_LOAD_DELETE && !a->objects && !a->filelist && !prefix[0]) {
        rb_target_close(t);
        return rb_cli_usage_error("load delete: give --prefix P (deletes what is listed under it), --objects N "
                                  "or --filelist FILE");
    }

    const struct cmd_kind *k = &cmd_kinds[a->op];
    const char *command = k->command;
    struct rb_harness h;
    status = rb_harness_init(&h, command, cli, &(struct rb_harness_opts){.mpi = true});
    if (status) {
        rb_target_close(t);
        return status;
    }
    struct rb_objset mine = {0}, none = {0}, existing = {0};
    uint64_t total = 0;
    int log_fd = -1;
    struct rb_load_result res = {0};
    char *table = NULL;
    if ((status = object_set(&h, a, t, prefix, sizeof prefix, command, &mine, &total, &existing)))
        goto out;
    if (a->log_requests && (log_fd = open_request_log(&h, a->log_requests)) < 0) {
        status = RB_EXIT_USAGE;
        goto out;
    }

    struct rb_load_opts o = rank_opts(a, &h, t, &mine, log_fd, range_off, range_len);
    /* A rank with a count share of zero has nothing to do (fewer requests than ranks). */
    if (a->count && !o.count)
        o.objects = &none;
    /* A put deletes what it wrote at the end (cleanup) unless --keep: its engine notes which objects those are. */
    o.track_written = a->op == RB_LOAD_PUT && !a->keep;
    o.preexisting = &existing;
    if (h.rank == 0)
        rb_load_cmd_announce(a, &h, command, t, total, &o);
    char where[1800];
    snprintf(where, sizeof where, "%s%s%s%s", rb_target_name(t), a->filelist ? " (--filelist " : " (prefix \"",
             a->filelist ? a->filelist : prefix, a->filelist ? ")" : "\")");
    if (a->op == RB_LOAD_MIXED) {
        const struct rb_mixed_args m = {.command = command, .target = rb_target_name(t), .where = where, .mix = a->mix_weights,
                                        .prepare = !a->no_prepare, .keep = a->keep, .duration_ns = a->duration_ns,
                                        .run_prefix = a->run_prefix[0] ? prefix : NULL,
                                        .steady = a->steady, .max_error_pct = a->max_error_pct};
        status = rb_mixed_run(&h, &o, &m, &table);
        if (h.rank == 0 && rb_target_can(t, RB_TCAP_FILES))
            rb_file_summary_json(cJSON_GetObjectItemCaseSensitive(h.result.root, "summary"), &a->file);
        goto out;
    }
    if (a->op == RB_LOAD_GET)
        status = rb_file_drop_host_cache(&h, &a->file, NULL);
    if (!status)
        status = rb_load_run_phase_with(&h, k->phase, a->duration_ns, &o,
                                        &(struct rb_load_phase_opts){.steady = a->steady,
                                                                     .stop_hopeless = a->op != RB_LOAD_DELETE &&
                                                                                      a->max_error_pct < 100},
                                        &res);
    /* --samples tar: an object that was not a whole tar shard stopped the run after one error line (tarsamples.c). */
    int bad_shards = h.rank == 0 && res.parts && o.tar_samples && res.parts->errors;
    if (h.mpi)
        RB_MPI_CHECK(MPI_Bcast(&bad_shards, 1, MPI_INT, 0, h.comm));
    if (bad_shards && !status)
        status = RB_EXIT_RUNTIME;
    struct rb_cleanup cl = {0};
    if (a->op == RB_LOAD_PUT) {
        /* Puts whose outcome is unknown are looked up (HEAD): what the server stored is cleanup's too. */
        if (o.track_written)
            rb_cleanup_probe(&h, t, &res, a->tgt.timeout_ns, a->keep);
        const uint64_t ok = h.rank == 0 && res.total ? res.total->ops - res.total->errors : 0;
        int cs = rb_cleanup_run(&h, &o, &res.leftover, a->keep, ok, where, &cl);
        if (!status)
            status = cs;
    }

    if (h.rank == 0 && res.total)
        table = rb_load_cmd_report(a, &h, command, t, prefix, &o, &res, &cl, status);
out:
    /* A run that failed before measuring anything says so in one line, without pointing at an empty result. */
    if (status && !res.total && rb_log_get_level() > RB_LOG_WARN)
        rb_log_set_level(RB_LOG_WARN);
    status = rb_harness_finish(&h, table, status);
    free(table);
    rb_load_result_free(&res);
    if (log_fd >= 0)
        close(log_fd);
    rb_objset_free(&mine);
    rb_objset_free(&existing);
    rb_target_close(t);
    return status;
}

/* run() behind the generic signature rb_load_command calls. */
static int run_args(void *a, struct rb_cli *cli)
{
    return run(a, cli);
}

static int load_cmd(enum rb_load_op op, int argc, char **argv)
{
    struct load_args a = {
        .op = op,
        .threads = 1,
        .inflight = 8,
        .seed = 1,
        .max_error_pct = 0,
        .size = op == RB_LOAD_PUT || op == RB_LOAD_MIXED ? PUT_DEFAULT_SIZE : 0,
        .part_size = RB_MP_DEFAULT_PART_BYTES,
        .mp_threshold = RB_MP_DEFAULT_THRESHOLD_BYTES,
        .mix = RB_MIX_DEFAULT,
        .slowest = RB_SLOW_DEFAULT,
    };
    rb_load_defaults(&a.tgt, &a.eng, &a.file);
    const bool get = op == RB_LOAD_GET || op == RB_LOAD_HEAD;
    const struct cmd_kind *k = &cmd_kinds[op];
    const struct rb_opt set[] = {
        {"threads", 't', RB_OPT_U64, &a.threads, "N", "worker threads per rank, each with its own connections", NULL},
        {"inflight", 'c', RB_OPT_U64, &a.inflight, "N", "concurrent requests (connections) per thread", NULL},
        {"objects", 'n', RB_OPT_U64, &a.objects, "N", "generated object names <prefix><index>, N of them", NULL},
        {"prefix", 0, RB_OPT_STR, &a.prefix, "P", "object name prefix: obj- with --objects (put and mixed without --keep: rb-<run id>-obj-), the listing filter "
         "otherwise",
         NULL},
        {"filelist", 0, RB_OPT_STR, &a.filelist, "FILE", "object names, one per line (optional size after a space)",
         NULL},
        {0},
    };
    const struct rb_opt body[] = {
        {"size", 's', RB_OPT_SIZE, &a.size, "SIZE", get ? "object size as put, for --verify and --random-range (0: not known)"
                                                        : "object size, at least 1 byte", NULL},
        {"min-size", 0, RB_OPT_SIZE, &a.min_size, "SIZE", "smallest object size (with --max-size)", NULL},
        {"max-size", 0, RB_OPT_SIZE, &a.max_size, "SIZE", "largest object size; each object's size is seeded", NULL},
        {"bytes", 0, RB_OPT_SIZE, &a.bytes, "SIZE", "stop issuing once SIZE bytes moved (all ranks together)", NULL},
        {0},
    };
    const struct rb_opt limits[] = {
        {"duration", 'd', RB_OPT_DURATION, &a.duration_ns, "D",
         get ? "stop after D; 0 with no other limit means 60s" : "stop after D (0: when every object is done once)", NULL},
        {"count", 0, RB_OPT_U64, &a.count, "N", "stop after N requests (all ranks together)", NULL},
        {"until-steady", 0, RB_OPT_STR, &a.until_steady, "PCT/WINDOW",
         "end the phase once throughput stays within PCT % of its mean over WINDOW (needs --duration; exit 1 if never)",
         NULL},
        {"rate", 0, RB_OPT_RATE, &a.rate, "R/s", "open loop: R requests per second in total, latency from the intended send",
         NULL},
        {"seed", 0, RB_OPT_U64, &a.seed, "N", "seed of payloads, sizes, orders (put and get must agree for --verify)",
         NULL},
        {"max-error-rate", 0, RB_OPT_PERCENT, &a.max_error_pct, "PCT", RB_LOAD_MAX_ERROR_HELP, NULL},
        {"log-requests", 0, RB_OPT_STR, &a.log_requests, "FILE", "append one CSV line per request to FILE", NULL},
        {"phases", 0, RB_OPT_FLAG, &a.phases, NULL,
         "cut each request's latency into phases (queue, connect, tls, send, first byte, body; file: open, first and "
         "last I/O, fsync, close), one histogram each", NULL},
        {"slowest", 0, RB_OPT_U64, &a.slowest, "N", "name the N slowest requests of the run (0: none)", NULL},
        {0},
    };
    const struct rb_opt multipart[] = {
        {"part-size", 0, RB_OPT_SIZE, &a.part_size, "SIZE",
         "s3:// put: multipart part size, at least 5 MiB, at most 10000 parts", NULL},
        {"multipart-threshold", 0, RB_OPT_SIZE, &a.mp_threshold, "SIZE",
         "s3:// put: objects larger than SIZE go up in parts (aws-cli's default)", NULL},
        {0},
    };
    const struct rb_opt mix[] = {
        {"mix", 0, RB_OPT_STR, &a.mix, "OP=W,...",
         "mixed: weights of get, put, delete, stat (the default is warp's mix)", NULL},
        {"no-prepare", 0, RB_OPT_FLAG, &a.no_prepare, NULL,
         "mixed: the --objects/--filelist objects exist already: no prepare phase (and they are not deleted)", NULL},
        {0},
    };
    const struct rb_opt keep[] = {
        {"keep", 0, RB_OPT_FLAG, &a.keep, NULL,
         "leave the objects this run wrote, under the names given (<prefix><index>); without it the run writes under "
         "its own prefix rb-<run id>- and deletes them at the end, in a measured cleanup phase", NULL},
        {"overwrite", 0, RB_OPT_FLAG, &a.overwrite, NULL,
         "write over objects that exist under the names given (--keep, --prefix, --filelist); without it the run "
         "refuses (exit 2) naming the first; cleanup never deletes them", NULL},
        {0},
    };
    const struct rb_opt order[] = {
        {"pattern", 0, RB_OPT_CHOICE, &a.pattern, "P", "GET order: random, sequential, or epoch (each object once per epoch)",
         "random|sequential|epoch"},
        {"epochs", 0, RB_OPT_U64, &a.epochs, "N", "with --pattern epoch: stop after N epochs (0 with no other limit: 1)", NULL},
        {0},
    };
    const struct rb_opt read[] = {
        {"range", 0, RB_OPT_STR, &a.range, "OFF:LEN", "GET LEN bytes from offset OFF of each object", NULL},
        {"random-range", 0, RB_OPT_SIZE, &a.random_range, "LEN", "GET LEN bytes at a random offset of each object",
         NULL},
        {"verify", 0, RB_OPT_FLAG, &a.verify, NULL, "compare every byte with the seeded payload (class checksum)", NULL},
        {"cache-header", 0, RB_OPT_STR, &a.cache_header, "NAME",
         "count HIT/MISS of this response header (e.g. X-Cache-Status)", NULL},
        {"samples", 0, RB_OPT_CHOICE, &a.samples, "S",
         "what a sample is: an object, or each regular member of a tar shard read as it streams (tar: a second row, "
         "GET sample, with per-sample latency and samples/s)", "objects|tar"},
        {0},
    };
    /* Every load command: the object set, the limits, the target's and the engine's options; then its own groups. */
    struct rb_opts opts = {0};
    rb_opts_add(&opts, set);
    if (k->groups & G_BODY)
        rb_opts_add(&opts, body);
    rb_opts_add(&opts, limits);
    rb_load_options(&opts, &a.tgt, &a.eng, k->groups & G_FILE ? &a.file : NULL);
    if (k->groups & G_MULTIPART)
        rb_opts_add(&opts, multipart);
    if (k->groups & G_MIX)
        rb_opts_add(&opts, mix);
    if (k->groups & G_KEEP)
        rb_opts_add(&opts, keep);
    if (k->groups & G_ORDER)
        rb_opts_add(&opts, order);
    if (k->groups & G_READ)
        rb_opts_add(&opts, read);
    const struct rb_cmd_spec spec = {k->usage, k->about, opts.v, 1, 1, false};
    return rb_load_command(&spec, argc, argv, run_args, &a);
}

int rb_load_put_main(int argc, char **argv)
{
    return load_cmd(RB_LOAD_PUT, argc, argv);
}

int rb_load_get_main(int argc, char **argv)
{
    return load_cmd(RB_LOAD_GET, argc, argv);
}

int rb_load_delete_main(int argc, char **argv)
{
    return load_cmd(RB_LOAD_DELETE, argc, argv);
}

int rb_load_stat_main(int argc, char **argv)
{
    return load_cmd(RB_LOAD_HEAD, argc, argv);
}

int rb_load_mixed_main(int argc, char **argv)
{
    return load_cmd(RB_LOAD_MIXED, argc, argv);
}
