/* railbench load tiers: per object size, populate the backend, then direct, cold and warm GETs, verified, as one table. */
#define _GNU_SOURCE
#include "tiers_run_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "../cmd/loader_int.h"
#include "../cmd/safety_int.h"
#include "../engine/payload_int.h"
#include "../engine/phase_int.h"
#include "railbench/buf.h"
#include "railbench/clock.h"
#include "../proto/evict_int.h" /* rb_evict_split */
#include "railbench/log.h"
#include "railbench/units.h"
#include "railbench/objname.h"

#define MAX_THREADS 1024
#define MAX_INFLIGHT 65536
#define DEFAULT_PREFIX "obj-"
/* The headers caching proxies answer with: nginx ($upstream_cache_status), Varnish, Squid and CDNs. */
#define DEFAULT_CACHE_HEADERS "X-Cache-Status,X-Cache"

/* ---- The command ---- */

/* Fills row from a finished phase (rank 0). */
static void fill_row(struct row *row, const struct rb_load_result *res, const struct rb_target *t, uint64_t size,
                     enum rb_tiers_how how, uint64_t epochs, bool counted)
{
    const struct rb_stats *s = res->total;
    memset(row, 0, sizeof *row);
    row->size_bytes = size;
    row->how = how;
    snprintf(row->phase, sizeof row->phase, "%s", res->phase);
    row->epochs = epochs;
    row->requests = s->ops;
    row->errors = s->errors;
    row->objects = s->ops - s->errors;
    row->bytes = s->bytes;
    row->duration_s = res->duration_s;
    row->bytes_per_s = res->duration_s > 0 ? (double)s->bytes / res->duration_s : 0;
    row->ops_per_s = res->duration_s > 0 ? (double)row->objects / res->duration_s : 0;
    row->lat_avg_ns = rb_hist_mean(&s->lat);
    row->lat_p99_ns = rb_hist_percentile(&s->lat, 99);
    row->ttfb_p50_ns = rb_hist_percentile(&s->ttfb, 50);
    row->disk_util_ratio = res->disk_util_ratio;
    row->net_bytes_per_s = res->net_rx_bytes_per_s;
    row->net_local = rb_target_local(t);
    row->counted = counted;
    row->cache = (struct rb_tiers_cache){s->extra[RB_LX_CACHE_HIT], s->extra[RB_LX_CACHE_MISS],
                                         s->extra[RB_LX_CACHE_OTHER], s->extra[RB_LX_CACHE_ABSENT]};
    row->verdict = rb_tiers_judge(how, &row->cache, NULL, 0);
}

/*
 * One load phase over this rank's share mine of an object set: PUT (once
 * through the set) or GET in epoch order (each object once per epoch).
 * Sets r->stop (on every rank) when the run must end here. Returns, on
 * rank 0 and with keep_row, the table row it added; NULL otherwise.
 * Collective.
 */
static struct row *run_phase(struct tiers_run *r, const char *name, enum rb_load_op op,
                                   const struct rb_target *t, const struct rb_objset *mine, uint64_t size,
                                   uint64_t epochs, uint64_t duration_ns, const char *cache_headers,
                                   enum rb_tiers_how how, bool keep_row)
{
    struct row *row = NULL;
    struct tiers_args *a = r->a;
    /* --drop-cache host (file targets, root): every host's page cache dropped before each read phase. */
    if (op == RB_LOAD_GET && rb_file_drop_host_cache(&r->h, &a->file, name) != 0) {
        r->stop = true;
        r->status = r->status ? r->status : RB_EXIT_RUNTIME;
        return NULL;
    }
    struct rb_load_opts o = rb_load_opts_from(op, t, &a->tgt, &a->eng, r->h.rank);
    o.objects = mine;
    o.threads = (unsigned)a->threads;
    /* A file:// target's psync reads block: 1 in flight per thread on its phases (file.md), -c on the others. */
    o.inflight = rb_target_can(t, RB_TCAP_FILES) && a->file.engine == RB_FIO_PSYNC ? 1 : (unsigned)a->inflight;
    o.pattern = RB_PATTERN_EPOCH;
    o.epochs = epochs;
    o.seed = a->seed;
    o.verify = a->verify && op == RB_LOAD_GET;
    o.min_size = o.max_size = size;
    o.cache_header = cache_headers;
    o.file = &a->file;
    o.transport = r->fc && t == &r->fc->t ? &rb_tiers_fc_transport : NULL;
    if (op != RB_LOAD_GET)
        o.engine = RB_ENGINE_CURL; /* --engine is the GET phases' */
    struct rb_load_result res = {0};
    int status = rb_load_run_phase(&r->h, name, duration_ns, &o, &res);
    int stop = status != 0 || r->h.interrupted;
    if (r->h.rank == 0 && res.total) {
        const struct rb_stats *s = res.total;
        r->requests_total += s->ops;
        r->last_ok = s->ops - s->errors;
        r->errors_total += s->errors;
        if (keep_row && r->nrows < MAX_ROWS) {
            fill_row(&r->rows[r->nrows], &res, t, size, how, epochs, cache_headers != NULL);
            row = &r->rows[r->nrows++];
        }
        if (rb_load_errors_over(s->errors, s->ops, a->max_error_pct) &&
            !rb_load_check_errors(&r->h.result, name, "requests", s->err, s->errors, s->ops, a->max_error_pct)) {
            rb_error("%s: stopping here, the later phases would measure errors", name);
            r->error_rate_failed = true;
            stop = 1;
        }
    }
    rb_tiers_agree_int(r, &stop);
    if (status && !r->status)
        r->status = status;
    r->stop = r->stop || stop;
    rb_load_result_free(&res);
    return row;
}

/* Rank 0 empties the tier of the cold phase's objects (API or command); every rank learns the outcome. */
static void evict(struct tiers_run *r, const char *phase, uint64_t size, const struct rb_objset *tier_all,
                  const char *tier_prefix)
{
    struct tiers_args *a = r->a;
    if (!a->evict && !a->evict_bucket && !r->evict_words)
        return;
    int rc = 0;
    char err[1024] = "";
    if (r->h.rank == 0) {
        const uint64_t t0 = rb_clock_ns();
        const char *how;
        const struct rb_tiers_evict e = {r->tier, r->backend, a->evict, a->evict_bucket, r->evict_words,
                                         a->evict_timeout_ns};
        rc = rb_tiers_evict_run(&e, phase, size, tier_all, tier_prefix, rb_harness_signal_flag(), &how, err,
                                sizeof err);
        char d[32];
        rb_format_duration_human(d, sizeof d, rb_clock_ns() - t0);
        if (!rc) {
            rb_info("before %s: %s done in %s", phase, how, d);
            rb_result_check(&r->h.result, "evict", true, "before %s: %s done in %s", phase, how, d);
        } else if (rc != -ECANCELED) {
            rb_error("before %s: %s: %s", phase, how, err);
            rb_result_check(&r->h.result, "evict", false, "before %s: %s: %s", phase, how, err);
        }
    }
    rb_tiers_agree_int(r, &rc);
    if (rc == -ECANCELED) {
        rb_harness_any_signalled(&r->h); /* records the interruption (the harness owns the flag) */
        r->stop = true;
    } else if (rc) {
        r->stop = true;
        r->status = RB_EXIT_RUNTIME;
    }
}

/*
 * After a cold or warm phase (row: its figures on rank 0, NULL elsewhere or
 * when it measured nothing): the verdict as a check, and a header the user
 * named but the tier never sent as an error that ends the run. Collective.
 */
static void judge(struct tiers_run *r, const struct row *row)
{
    int stop = 0;
    if (row) {
        char why[512];
        enum rb_tiers_verdict v = rb_tiers_judge(row->how, &row->cache, why, sizeof why);
        const char *check = row->how == RB_TIERS_COLD ? "cold_is_cold" : "warm_is_warm";
        const uint64_t seen = row->cache.hit + row->cache.miss + row->cache.other;
        if (v == RB_TIERS_FAILED) {
            rb_result_check(&r->h.result, check, false, "%s: %s", row->phase, why);
            rb_error("%s: %s%s", row->phase, why,
                     row->how == RB_TIERS_COLD ? " (an earlier run or another client read them through the tier: "
                                                 "use --fresh for new objects, or --evict / --evict-cmd to empty "
                                                 "the tier first)"
                                               : "");
        } else if (v == RB_TIERS_VERIFIED) {
            rb_result_check(&r->h.result, check, true, "%s: %s", row->phase, why);
        } else if (r->a->cache_header && !seen && row->requests) {
            rb_result_check(&r->h.result, "cache_header", false,
                            "%s: the tier answered none of %" PRIu64 " GETs with the header %s", row->phase,
                            row->requests, r->a->cache_header);
            rb_error("--cache-header %s: the tier answered none of the %" PRIu64 " GETs of %s with this header, so "
                     "cold and warm cannot be verified; name the header the tier sends (nginx: add_header "
                     "X-Cache-Status $upstream_cache_status) or leave --cache-header out",
                     r->a->cache_header, row->requests, row->phase);
            stop = 1;
        } else if (!seen && row->requests && !r->warned_unverified) {
            rb_warn("%s: the tier sent neither X-Cache-Status nor X-Cache: cold and warm are measured but not "
                    "verified by the tier's own account (name its header with --cache-header)",
                    row->phase);
            r->warned_unverified = true;
        }
    }
    rb_tiers_agree_int(r, &stop);
    if (stop) {
        r->stop = true;
        r->status = RB_EXIT_USAGE;
    }
}

/* The names of one size's objects as the backend and as the tier know them, and this rank's shares. */
struct size_set {
    char base[1200], backend_prefix[2400], tier_prefix[2400], label[32];
    struct rb_objset backend_all, tier_all, backend_mine, tier_mine;
};

static void size_set_free(struct size_set *s)
{
    rb_objset_free(&s->backend_all);
    rb_objset_free(&s->tier_all);
    rb_objset_free(&s->backend_mine);
    rb_objset_free(&s->tier_mine);
}

static void size_set_build(struct tiers_run *r, struct size_set *s, uint64_t size)
{
    const struct tiers_args *a = r->a;
    memset(s, 0, sizeof *s);
    rb_tiers_size_label(s->label, sizeof s->label, size);
    /* A prefix per size: one name never stands for two sizes; --fresh adds this run's own part. */
    snprintf(s->base, sizeof s->base, "%s%s%s%s-", a->prefix, r->fresh, r->fresh[0] ? "-" : "", s->label);
    snprintf(s->backend_prefix, sizeof s->backend_prefix, "%s%s", rb_target_prefix(r->backend), s->base);
    snprintf(s->tier_prefix, sizeof s->tier_prefix, "%s%s", rb_target_prefix(r->tier), s->base);
    if (rb_objset_generate(&s->backend_all, s->backend_prefix, a->objects) ||
        rb_objset_generate(&s->tier_all, s->tier_prefix, a->objects) ||
        rb_objset_partition(&s->backend_all, r->h.rank, r->h.size, &s->backend_mine) ||
        rb_objset_partition(&s->tier_all, r->h.rank, r->h.size, &s->tier_mine))
        rb_harness_fatal(&r->h, RB_EXIT_RUNTIME, "out of memory for %" PRIu64 " object names", a->objects);
    rb_objset_set_common_size(&s->backend_mine, size);
    rb_objset_set_common_size(&s->tier_mine, size);
}

/*
 * The default names (<prefix><size>-<index>, neither --fresh nor --existing) are looked up in the backend
 * before the first PUT of any size: names that exist stop the run (exit 2) unless --overwrite, as load put
 * --keep does (docs/safety.md). Collective. Returns 0 or an exit status.
 */
static int check_names(struct tiers_run *r)
{
    int status = 0;
    for (size_t i = 0; i < r->a->sizes.n && !status; i++) {
        struct size_set s;
        size_set_build(r, &s, r->a->sizes.v[i]);
        status = rb_safety_check(&r->h, r->backend, &s.backend_mine, r->a->tgt.timeout_ns,
                                 (enum rb_engine_kind)r->a->eng.engine, 0, r->a->overwrite,
                                 "load tiers", strcmp(r->a->prefix, DEFAULT_PREFIX) ? "--prefix" : "(default names)", NULL);
        size_set_free(&s);
    }
    return status;
}

/* A file:// tier: the cache names of every size that exist already stop the run before it writes. Collective. */
static int check_cache(struct tiers_run *r)
{
    int status = 0;
    for (size_t i = 0; r->fc && i < r->a->sizes.n && !status; i++) {
        struct size_set s;
        size_set_build(r, &s, r->a->sizes.v[i]);
        status = rb_tiers_fc_existing(r, &s.tier_mine);
        size_set_free(&s);
    }
    return status;
}

/* Every phase of one object size. */
static void run_size(struct tiers_run *r, uint64_t size)
{
    const struct tiers_args *a = r->a;
    struct size_set s;
    size_set_build(r, &s, size);
    char name[64];
    /* Direct and warm repeat epochs until --duration when it is given; cold reads each object at most once. */
    const uint64_t warm_epochs = a->warm_epochs ? a->warm_epochs : (a->duration_ns ? 0 : 1);
    const uint64_t direct_epochs = a->duration_ns ? 0 : 1;
    /* A file:// tier is read through its cache directory's own loop; other tiers answer GETs themselves. */
    const struct rb_target *tier = r->fc ? &r->fc->t : r->tier;
    /* This size's cache files: none made yet (what size_done checks and removes is this size's alone). */
    if (r->fc && rb_tiers_fcache_objects(r->fc, s.tier_mine.n))
        rb_harness_fatal(&r->h, RB_EXIT_RUNTIME, "out of memory for %" PRIu64 " cache files", s.tier_mine.n);
    if (!a->existing) {
        snprintf(name, sizeof name, "put-%s", s.label);
        r->left_objects += a->objects;
        run_phase(r, name, RB_LOAD_PUT, r->backend, &s.backend_mine, size, 0, 0, NULL, RB_TIERS_DIRECT, false);
    }
    if (!r->stop) {
        snprintf(name, sizeof name, "direct-%s", s.label);
        run_phase(r, name, RB_LOAD_GET, r->backend, &s.backend_mine, size, direct_epochs, a->duration_ns, NULL,
                  RB_TIERS_DIRECT, true);
    }
    snprintf(name, sizeof name, "cold-%s", s.label);
    if (!r->stop)
        evict(r, name, size, &s.tier_all, s.tier_prefix);
    if (!r->stop) {
        struct row *row = run_phase(r, name, RB_LOAD_GET, tier, &s.tier_mine, size, 1, a->duration_ns,
                                    r->cache_headers, RB_TIERS_COLD, true);
        rb_tiers_fc_phase_done(r, row);
        judge(r, row);
    }
    if (!r->stop) {
        snprintf(name, sizeof name, "warm-%s", s.label);
        struct row *row = run_phase(r, name, RB_LOAD_GET, tier, &s.tier_mine, size, warm_epochs,
                                    a->duration_ns, r->cache_headers, RB_TIERS_WARM, true);
        rb_tiers_fc_phase_done(r, row);
        judge(r, row);
    }
    rb_tiers_fc_size_done(r, &s.tier_mine, size, s.label);
    /*
     * --fresh names are this run's alone: nobody reads them again, so they go
     * unless --keep, also after a failed check ended the measuring; only a
     * signal skips this (left_behind then says what stayed).
     */
    if (a->fresh && !a->existing && !a->keep && !r->h.interrupted) {
        bool stopped = r->stop;
        r->stop = false;
        snprintf(name, sizeof name, "cleanup-%s", s.label);
        run_phase(r, name, RB_LOAD_DELETE, r->backend, &s.backend_mine, size, 0, 0, NULL, RB_TIERS_DIRECT, false);
        r->left_objects -= r->left_objects < r->last_ok ? r->left_objects : r->last_ok;
        r->stop = r->stop || stopped;
    }
    size_set_free(&s);
}

/* True when the two targets would serve the same object URL: the tier would be its own backend. */
static bool same_place(const struct rb_target *a, const struct rb_target *b)
{
    char ua[RB_URL_MAX], ub[RB_URL_MAX];
    for (size_t i = 0; i < rb_target_endpoint_count(a); i++)
        for (size_t k = 0; k < rb_target_endpoint_count(b); k++)
            if (rb_target_object_url(a, i, "railbench-probe", ua, sizeof ua) == 0 &&
                rb_target_object_url(b, k, "railbench-probe", ub, sizeof ub) == 0 && strcmp(ua, ub) == 0)
                return true;
    return false;
}

static int validate(struct tiers_args *a)
{
    if (!a->backend)
        return rb_cli_usage_error("--backend URL is required: the origin (http://HOST:PORT/PATH, s3://BUCKET, "
                                   "ais://BUCKET or file:///PATH)");
    if (!a->tier)
        return rb_cli_usage_error("--tier URL is required: the caching tier in front of --backend");
    if (a->threads < 1 || a->threads > MAX_THREADS)
        return rb_cli_usage_error("--threads %" PRIu64 ": expected 1 to %d", a->threads, MAX_THREADS);
    if (a->inflight < 1 || a->inflight > MAX_INFLIGHT || a->threads * a->inflight > MAX_INFLIGHT)
        return rb_cli_usage_error("--inflight %" PRIu64 ": expected 1 to %d requests in flight per rank "
                                   "(threads x inflight)", a->inflight, MAX_INFLIGHT);
    if (a->objects < 1 || a->objects > UINT32_MAX)
        return rb_cli_usage_error("--objects %" PRIu64 ": expected 1 to %u", a->objects, UINT32_MAX);
    for (size_t i = 0; i < a->sizes.n; i++) {
        if (!a->sizes.v[i])
            return rb_cli_usage_error("--sizes: an object size of 0 bytes measures nothing; give e.g. 1MiB,10MiB");
        for (size_t k = 0; k < i; k++)
            if (a->sizes.v[k] == a->sizes.v[i])
                return rb_cli_usage_error("--sizes: %" PRIu64 " bytes is listed twice", a->sizes.v[i]);
    }
    if (a->prefix && (strlen(a->prefix) > 512 || strpbrk(a->prefix, "\r\n")))
        return rb_cli_usage_error("--prefix: at most 512 bytes, no line breaks");
    if (rb_objname_check("--prefix", a->prefix, true))
        return RB_EXIT_USAGE;
    if (a->existing && a->fresh)
        return rb_cli_usage_error("--existing and --fresh: --fresh writes new objects, --existing reads what is "
                                   "there; give one of them");
    if ((a->evict ? 1 : 0) + (a->evict_bucket ? 1 : 0) + (a->evict_cmd ? 1 : 0) > 1)
        return rb_cli_usage_error("--evict, --evict-bucket and --evict-cmd: give one of them");
    if (a->evict_shell && !a->evict_cmd)
        return rb_cli_usage_error("--evict-shell: needs --evict-cmd CMD (the command sh -c runs)");
    if (a->cache_header && (!*a->cache_header || strpbrk(a->cache_header, ":, \t\r\n")))
        return rb_cli_usage_error("--cache-header \"%s\": expected one header name such as X-Cache-Status",
                                   a->cache_header);
    if (a->max_error_pct < 0 || a->max_error_pct > 100)
        return rb_cli_usage_error("--max-error-rate %g: expected 0 to 100 (percent)", a->max_error_pct);
    if (a->eng.max_redirects > 100)
        return rb_cli_usage_error("--max-redirects %" PRIu64 ": expected 0 to 100", a->eng.max_redirects);
    if (!a->evict_timeout_ns)
        return rb_cli_usage_error("--evict-timeout 0: give a time limit, e.g. 5m");
    return 0;
}

/*
 * Opens the backend or the tier with the target options, its own endpoints
 * and provider (when given) in place of --endpoint and --provider; prints
 * one line naming the option when it is malformed.
 */
static int open_target(struct rb_target **t, const char *opt, const char *url, const struct rb_strs *eps,
                       const char *provider, const struct tiers_args *a)
{
    struct rb_target_cfg tc = a->tgt;
    if (eps->n)
        tc.endpoints = *eps;
    if (provider)
        *(const char **)rb_target_cfg_opt(&tc, "provider") = provider;
    /* --virtual-host is for whichever of the two is s3:// (the other may be ais:// or http://). */
    if (url)
        rb_target_cfg_only_for(&tc, url, "virtual-host");
    return rb_load_target_open(&tc, url, opt, t);
}

static int run(struct tiers_args *a, struct rb_cli *cli)
{
    int status = validate(a);
    if (status)
        return status;
    struct tiers_run *r = calloc(1, sizeof *r);
    if (!r) {
        fprintf(stderr, "railbench: error: out of memory\n");
        return RB_EXIT_RUNTIME;
    }
    r->a = a;
    char err[1024] = "";
    if ((status = open_target(&r->backend, "--backend", a->backend, &a->backend_endpoints, a->backend_provider, a)) ||
        (status = open_target(&r->tier, "--tier", a->tier, &a->tier_endpoints, a->tier_provider, a)))
        goto early;
    if (same_place(r->backend, r->tier)) {
        status = rb_cli_usage_error("--tier %s is the same place as --backend %s: every read would be direct; give "
                                     "the caching tier's URL", a->tier, a->backend);
        goto early;
    }
    if ((a->evict || a->evict_bucket) && !rb_target_can_evict(r->tier)) {
        status = rb_cli_usage_error("%s: the tier %s is not an AIStore tier (ais://BUCKET): AIStore's evict API "
                                     "cannot empty it; use --evict-cmd CMD to empty this tier",
                                     a->evict ? "--evict" : "--evict-bucket", a->tier);
        goto early;
    }
    /* A file:// tier's files hold the backend's bytes under the backend's names: nothing to match there. */
    if (a->verify && !rb_target_can(r->tier, RB_TCAP_FILES) &&
        strcmp(rb_target_prefix(r->backend), rb_target_prefix(r->tier)) != 0) {
        status = rb_cli_usage_error("--verify: the backend and the tier name objects with different prefixes "
                                     "(\"%s\", \"%s\"), so the payloads would not match",
                                     rb_target_prefix(r->backend), rb_target_prefix(r->tier));
        goto early;
    }
    if (a->evict_cmd) {
        if (a->evict_shell) {
            /* The user asked for a shell: the command is sh's, quoting and all. */
            const char *sh[] = {"/bin/sh", "-c", a->evict_cmd};
            r->evict_words = calloc(4, sizeof *r->evict_words);
            for (int i = 0; r->evict_words && i < 3; i++)
                r->evict_words[i] = strdup(sh[i]);
            if (!r->evict_words || !r->evict_words[0] || !r->evict_words[1] || !r->evict_words[2]) {
                fprintf(stderr, "railbench: error: out of memory\n");
                status = RB_EXIT_RUNTIME;
                goto early;
            }
        } else if (rb_evict_split(a->evict_cmd, &r->evict_words, err, sizeof err) != 0) {
            status = rb_cli_usage_error("--evict-cmd \"%s\": %s (words are split without a shell; quote with ' "
                                         "or \", or give --evict-shell to run it with sh -c)", a->evict_cmd, err);
            goto early;
        }
    }
    if ((status = rb_tiers_fc_setup(r, cli)) != 0)
        goto early;
    r->cache_headers = r->fc ? "cache file lookup" : a->cache_header ? a->cache_header : DEFAULT_CACHE_HEADERS;

    /* One connection to every endpoint of both before anything is measured: an unreachable one is exit 3. */
    if ((status = rb_engine_check_usage(&a->eng, r->backend, RB_LOAD_GET, false)) != 0 ||
        (status = rb_engine_check_usage(&a->eng, r->tier, RB_LOAD_GET, false)) != 0 ||
        (status = rb_load_target_probe(r->backend, a->tgt.timeout_ns)) != 0 ||
        (status = rb_load_target_probe(r->tier, a->tgt.timeout_ns)) != 0)
        goto early;

    status = rb_harness_init(&r->h, "load tiers", cli, &(struct rb_harness_opts){.mpi = true});
    if (status)
        goto early;
    if (a->fresh) {
        /* This run's part of the names, from rank 0's clock: a new object set nobody has read. */
        if (r->h.rank == 0) {
            uint64_t now = rb_clock_wall_ns();
            char stamp[32];
            rb_clock_stamp(stamp, sizeof stamp, now);
            snprintf(r->fresh, sizeof r->fresh, "%s-%06u", stamp, (unsigned)(now / 1000 % 1000000));
        }
        if (r->h.mpi)
            RB_MPI_CHECK(MPI_Bcast(r->fresh, sizeof r->fresh, MPI_CHAR, 0, r->h.comm));
    }
    if (r->h.rank == 0) {
        char sizes[512] = "";
        size_t l = 0;
        for (size_t i = 0; i < a->sizes.n && l < sizeof sizes; i++) {
            char s[32];
            rb_tiers_size_label(s, sizeof s, a->sizes.v[i]);
            l += (size_t)snprintf(sizes + l, sizeof sizes - l, "%s%s", i ? "," : "", s);
        }
        rb_info("load tiers: backend %s, tier %s; %" PRIu64 " objects of %s; %d rank(s) x %" PRIu64 " thread(s) x %"
                PRIu64 " in flight%s%s",
                rb_target_name(r->backend), rb_target_name(r->tier), a->objects, sizes, r->h.size, a->threads,
                a->inflight, a->existing ? "; existing objects" : "", r->fresh[0] ? "; fresh names" : "");
    }
    if ((status = check_cache(r)) != 0 || (!a->existing && !a->fresh && (status = check_names(r)) != 0)) {
        /* Refused before its first write: that one error line, no result (harness_finish removes the directory). */
        if (rb_log_get_level() > RB_LOG_WARN)
            rb_log_set_level(RB_LOG_WARN);
        status = rb_harness_finish(&r->h, NULL, status);
        goto early;
    }
    for (size_t i = 0; i < a->sizes.n && !r->stop; i++)
        run_size(r, a->sizes.v[i]);

    char *table = NULL;
    if (r->h.rank == 0) {
        if (!r->error_rate_failed)
            rb_load_check_errors(&r->h.result, NULL, "requests", NULL, r->errors_total, r->requests_total,
                                 a->max_error_pct);
        cJSON *summary = cJSON_CreateObject();
        table = rb_tiers_report(r, summary);
        rb_result_set(&r->h.result, "summary", summary);
    }
    status = rb_harness_finish(&r->h, table, r->status);
    free(table);
early:
    rb_target_close(r->backend);
    rb_target_close(r->tier);
    rb_tiers_fcache_free(r->fc);
    rb_evict_words_free(r->evict_words);
    free(r);
    return status;
}

/* run() behind the generic signature rb_load_command calls. */
static int run_args(void *a, struct rb_cli *cli)
{
    return run(a, cli);
}

int rb_load_tiers_main(int argc, char **argv)
{
    struct tiers_args a = {
        .objects = 100,
        .prefix = DEFAULT_PREFIX,
        .sizes = {2, {1024 * 1024, 10 * 1024 * 1024}},
        .threads = 1,
        .inflight = 8,
        .evict_timeout_ns = 5 * 60 * RB_NS_PER_S,
        .seed = 1,
    };
    rb_load_defaults(&a.tgt, &a.eng, &a.file);
    a.tgt.timeout_ns = 60 * RB_NS_PER_S; /* a cold GET waits for the tier to fetch from the backend */
    const struct rb_opt own[] = {
        {"backend", 0, RB_OPT_STR, &a.backend, "URL", "the origin: http://HOST:PORT/PATH, s3://BUCKET[/FOLDER], "
         "ais://BUCKET[/FOLDER] or file:///PATH", NULL},
        {"backend-endpoint", 0, RB_OPT_STRS, &a.backend_endpoints, "URL",
         "S3/AIStore endpoint of the backend http[s]://HOST[:PORT]; repeatable", NULL},
        {"backend-provider", 0, RB_OPT_STR, &a.backend_provider, "NAME", "AIStore provider of an ais:// backend "
         "(if not given: ais)", NULL},
        {"tier", 0, RB_OPT_STR, &a.tier, "URL", "the caching tier in front of the backend (same URL forms)", NULL},
        {"tier-endpoint", 0, RB_OPT_STRS, &a.tier_endpoints, "URL", "S3/AIStore endpoint of the tier; repeatable",
         NULL},
        {"tier-provider", 0, RB_OPT_STR, &a.tier_provider, "NAME",
         "AIStore provider of an ais:// tier's bucket: ais, aws, gcp, azure (if not given: ais)", NULL},
        {"objects", 'n', RB_OPT_U64, &a.objects, "N", "objects per size", NULL},
        {"prefix", 0, RB_OPT_STR, &a.prefix, "P", "object names are <P>[<fresh>-]<size>-<index>", NULL},
        {"sizes", 's', RB_OPT_SIZES, &a.sizes, "LIST", "object sizes, one set of phases each",
         NULL},
        {"warm-epochs", 0, RB_OPT_U64, &a.warm_epochs, "N",
         "warm reads of every object; 0: once, or until --duration ends", NULL},
        {"threads", 't', RB_OPT_U64, &a.threads, "N", "worker threads per rank", NULL},
        {"inflight", 'c', RB_OPT_U64, &a.inflight, "N", "requests in flight per thread", NULL},
        {"duration", 'd', RB_OPT_DURATION, &a.duration_ns, "D",
         "cap every phase at D; direct and warm repeat epochs until D, cold reads each object at most once", NULL},
        {"existing", 0, RB_OPT_FLAG, &a.existing, NULL, "read the objects already in the backend (no PUT)", NULL},
        {"fresh", 0, RB_OPT_FLAG, &a.fresh, NULL,
         "write a new object set with this run's own names (deleted from the backend at the end unless --keep)", NULL},
        {"keep", 0, RB_OPT_FLAG, &a.keep, NULL, "with --fresh: leave this run's objects in the backend", NULL},
        {"keep-cache", 0, RB_OPT_FLAG, &a.keep_cache, NULL,
         "a file:// tier: leave the cache files this run filled (removed at the end otherwise)", NULL},
        {"overwrite", 0, RB_OPT_FLAG, &a.overwrite, NULL,
         "write over objects that exist under the default names (looked up first; without it they stop the run)", NULL},
        {"evict", 0, RB_OPT_FLAG, &a.evict, NULL,
         "evict the cold phase's objects from an AIStore tier through its API first", NULL},
        {"evict-bucket", 0, RB_OPT_FLAG, &a.evict_bucket, NULL,
         "evict everything the AIStore tier cached of its bucket before each cold phase", NULL},
        {"evict-cmd", 0, RB_OPT_STR, &a.evict_cmd, "CMD",
         "run CMD on rank 0 before each cold phase (split into words, no shell)", NULL},
        {"evict-shell", 0, RB_OPT_FLAG, &a.evict_shell, NULL, "run --evict-cmd with /bin/sh -c", NULL},
        {"evict-timeout", 0, RB_OPT_DURATION, &a.evict_timeout_ns, "D", "time limit of one eviction", NULL},
        {"cache-header", 0, RB_OPT_STR, &a.cache_header, "NAME",
         "the tier's cache-status header (if not given: X-Cache-Status, else X-Cache)", NULL},
        {"seed", 0, RB_OPT_U64, &a.seed, "N", "seed of payloads and orders", NULL},
        {"verify", 0, RB_OPT_FLAG, &a.verify, NULL, "compare every byte read with the payload written", NULL},
        {"max-error-rate", 0, RB_OPT_PERCENT, &a.max_error_pct, "PCT",
         RB_LOAD_MAX_ERROR_HELP "; a failing phase ends the run", NULL},
        {0},
    };
    struct rb_opts opts = {0};
    rb_opts_add(&opts, own);
    rb_load_options(&opts, &a.tgt, &a.eng, &a.file);
    const struct rb_cmd_spec spec = {
        "railbench load tiers --backend URL --tier URL [options]",
        "Per object size: populate the backend, then GET every object directly from it (DIRECT), through the tier "
        "for the first time (COLD, verified by the tier's cache-status header) and again (WARM), and print the "
        "table storage vendors publish.",
        opts.v, 0, 0, false};
    return rb_load_command(&spec, argc, argv, run_args, &a);
}
