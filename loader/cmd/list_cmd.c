/* railbench load list: listing throughput and latency per page (ListObjectsV2 pages, AIStore list pages, autoindex). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/engine_int.h"
#include "../engine/phase_int.h"
#include "loader_int.h"
#include "railbench/buf.h"
#include "railbench/clock.h"
#include "railbench/command.h"
#include "railbench/log.h"
#include "railbench/objname.h"
#include "railbench/result.h"
#include "railbench/units.h"

/* Extra counters of a list phase. */
enum { LX_NAMES, LX_LISTINGS, LX_COUNT };
static const char *const list_extra_names[] = {"names", "listings", NULL};

struct list_args {
    struct rb_target_cfg tgt; /* the target options: --endpoint, --timeout (per page), each protocol's own */
    const char *prefix;
    uint64_t threads, count, duration_ns;
    struct rb_engine_args eng; /* --engine: the listing's (native_list.c) */
};

/* One lister thread: whole listings back to back; each page recorded into its stats, handed over under mu. */
struct lister {
    struct list_run *run;
    pthread_t th;
    bool started;
    struct rb_stats *local;      /* guarded by run->mu: a page is seconds of work, a lock per page costs nothing */
    uint64_t names_before;       /* names of the current listing already counted */
};

struct list_run {
    const struct rb_target *t;
    const char *prefix;
    uint64_t timeout_ns, listings_left; /* listings this rank still starts; UINT64_MAX = until stopped */
    enum rb_engine_kind engine;         /* --engine: the listings' (rb_engine_list_pages) */
    pthread_mutex_t mu;
    atomic_bool stop;
    atomic_uint running;
    struct lister *l;
    unsigned n;
};

static int on_page(void *ctx, CURLcode cc, long status, size_t names_so_far, uint64_t total_ns, uint64_t ttfb_ns)
{
    struct lister *l = ctx;
    struct list_run *r = l->run;
    int cls = rb_engine_classify(cc, status, false, false);
    pthread_mutex_lock(&r->mu);
    l->local->ops++;
    if (cls >= 0) {
        rb_stats_error(l->local, (unsigned)cls);
    } else {
        rb_hist_record(&l->local->lat, total_ns);
        rb_hist_record(&l->local->ttfb, ttfb_ns);
        l->local->extra[LX_NAMES] += names_so_far - l->names_before;
        l->names_before = names_so_far;
    }
    pthread_mutex_unlock(&r->mu);
    return atomic_load(&r->stop) ? 1 : 0;
}

/* Takes one listing from the rank's budget; false when none is left. */
static bool take_listing(struct list_run *r)
{
    pthread_mutex_lock(&r->mu);
    bool ok = r->listings_left > 0;
    if (ok && r->listings_left != UINT64_MAX)
        r->listings_left--;
    pthread_mutex_unlock(&r->mu);
    return ok;
}

static void *lister_main(void *arg)
{
    struct lister *l = arg;
    struct list_run *r = l->run;
    bool warned = false;
    while (!atomic_load(&r->stop) && take_listing(r)) {
        struct rb_objset out = {0};
        char err[1024] = "";
        l->names_before = 0;
        int rc = rb_engine_list_pages(r->engine, r->t, r->prefix, r->timeout_ns, &out, on_page, l, err, sizeof err);
        rb_objset_free(&out);
        if (rc == 0) {
            pthread_mutex_lock(&r->mu);
            l->local->extra[LX_LISTINGS]++;
            pthread_mutex_unlock(&r->mu);
        } else if (rc != -ECANCELED && !warned) {
            rb_warn("%s (first failed listing of this thread; pages are counted by class)", err);
            warned = true;
        }
    }
    atomic_fetch_sub(&r->running, 1);
    return NULL;
}

static int lr_start(void *arg)
{
    struct list_run *r = arg;
    for (unsigned i = 0; i < r->n; i++) {
        atomic_fetch_add(&r->running, 1);
        if (pthread_create(&r->l[i].th, NULL, lister_main, &r->l[i]) != 0) {
            atomic_fetch_sub(&r->running, 1);
            return -EAGAIN;
        }
        r->l[i].started = true;
    }
    return 0;
}

static void lr_collect(void *arg, struct rb_stats *into)
{
    struct list_run *r = arg;
    pthread_mutex_lock(&r->mu);
    for (unsigned i = 0; i < r->n; i++) {
        rb_stats_merge(into, r->l[i].local);
        rb_stats_reset(r->l[i].local);
    }
    pthread_mutex_unlock(&r->mu);
}

static bool lr_done(void *arg)
{
    struct list_run *r = arg;
    return atomic_load(&r->running) == 0;
}

static void lr_stop(void *arg)
{
    struct list_run *r = arg;
    atomic_store(&r->stop, true);
    for (unsigned i = 0; i < r->n; i++)
        if (r->l[i].started) {
            pthread_join(r->l[i].th, NULL);
            r->l[i].started = false;
        }
}

/* Rank 0: the summary row and the table of the list phase p. Returns the table (malloc'd) or NULL. */
static char *list_report(struct rb_harness *h, const struct rb_target *t, const char *prefix, const struct rb_phase *p,
                         unsigned threads)
{
    const struct rb_stats *s = p->total;
    double d = p->duration_s > 0 ? p->duration_s : 0;
    uint64_t pages = s->ops - s->errors, names = s->extra[LX_NAMES], listings = s->extra[LX_LISTINGS];
    cJSON *summary = cJSON_CreateObject();
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "op", "LIST");
    cJSON_AddStringToObject(row, "phase", "list");
    cJSON_AddItemToObject(row, "requests", rb_json_u64(s->ops));
    cJSON_AddItemToObject(row, "pages", rb_json_u64(pages));
    cJSON_AddItemToObject(row, "names", rb_json_u64(names));
    cJSON_AddItemToObject(row, "listings", rb_json_u64(listings));
    cJSON_AddNumberToObject(row, "duration_s", d);
    cJSON_AddNumberToObject(row, "pages_per_s", d > 0 ? (double)pages / d : 0);
    cJSON_AddNumberToObject(row, "names_per_s", d > 0 ? (double)names / d : 0);
    cJSON_AddItemToObject(row, "latency_ns", rb_hist_summary_json(&s->lat));
    cJSON_AddItemToObject(row, "ttfb_ns", rb_hist_summary_json(&s->ttfb));
    cJSON *e = cJSON_AddObjectToObject(row, "errors");
    cJSON_AddItemToObject(e, "total", rb_json_u64(s->errors));
    for (int i = 0; i < RB_LERR_COUNT; i++)
        cJSON_AddItemToObject(e, rb_load_err_names[i], rb_json_u64(s->err[i]));
    cJSON_AddItemToArray(cJSON_AddArrayToObject(summary, "ops"), row);
    cJSON_AddStringToObject(summary, "target", rb_target_name(t));
    cJSON_AddStringToObject(summary, "prefix", prefix);
    cJSON_AddNumberToObject(summary, "ranks", h->size);
    cJSON_AddNumberToObject(summary, "threads", threads);
    rb_result_set(&h->result, "summary", summary);
    char lat[4][32];
    uint64_t q[4] = {(uint64_t)rb_hist_mean(&s->lat), rb_hist_percentile(&s->lat, 50), rb_hist_percentile(&s->lat, 99),
                     rb_hist_percentile(&s->lat, 100)};
    for (int i = 0; i < 4; i++)
        rb_format_duration_human(lat[i], sizeof lat[i], q[i]);
    struct rb_buf b = {0};
    rb_buf_printf(&b, "\n# railbench load list %s (prefix \"%s\")\n\n%d rank(s) x %u thread(s)\n\n"
                      "| op | listings | pages | names | pages/s | names/s | page latency avg | p50 | p99 | max | errors |\n"
                      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
                  rb_target_name(t), prefix, h->size, threads);
    rb_buf_printf(&b, "| LIST | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %.1f | %.0f | %s | %s | %s | %s | %" PRIu64 " |\n",
                  listings, pages, names, d > 0 ? (double)pages / d : 0, d > 0 ? (double)names / d : 0, lat[0], lat[1],
                  lat[2], lat[3], s->errors);
    /* A page that failed fails the run (exit 1), as a failed request does in every load command. */
    rb_load_check_errors(&h->result, NULL, "pages", s->err, s->errors, s->ops, 0);
    if (b.oom) {
        rb_buf_free(&b);
        return NULL;
    }
    return b.s;
}

/* One list phase on every rank (collective); rank 0 reports. Returns an exit status. */
static int list_phase(struct rb_harness *h, const struct list_args *a, const struct rb_target *t, const char *prefix,
                      char **table)
{
    struct list_run r = {.t = t, .prefix = prefix, .timeout_ns = a->tgt.timeout_ns, .n = (unsigned)a->threads,
                         .engine = (enum rb_engine_kind)a->eng.engine};
    /* --count is whole listings over all ranks; without it, listings go on until --duration. */
    r.listings_left = a->count ? a->count / (uint64_t)h->size + ((uint64_t)h->rank < a->count % (uint64_t)h->size)
                               : UINT64_MAX;
    pthread_mutex_init(&r.mu, NULL);
    r.l = calloc(r.n, sizeof *r.l);
    int bad = !r.l;
    for (unsigned i = 0; r.l && i < r.n; i++) {
        r.l[i].run = &r;
        bad |= !(r.l[i].local = rb_stats_new());
    }
    if (bad)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    struct rb_phase p = {
        .name = "list",
        .op = "LIST",
        .names = {rb_load_err_names, list_extra_names},
        .duration_ns = a->duration_ns,
        .start = lr_start,
        .collect = lr_collect,
        .done = lr_done,
        .stop = lr_stop,
        .ctx = &r,
    };
    int status = rb_harness_run_phase(h, &p);
    lr_stop(&r);
    if (h->rank == 0 && p.total)
        *table = list_report(h, t, prefix, &p, r.n);
    if (a->count && h->rank == 0 && p.total && p.total->extra[LX_LISTINGS] < a->count && !status)
        rb_warn("%" PRIu64 " of %" PRIu64 " listings completed", p.total->extra[LX_LISTINGS], a->count);
    rb_harness_phase_free(&p);
    for (unsigned i = 0; i < r.n; i++)
        rb_stats_free(r.l[i].local);
    free(r.l);
    pthread_mutex_destroy(&r.mu);
    return status;
}

static int list_run(void *arg, struct rb_cli *cli)
{
    struct list_args *a = arg;
    if (a->threads < 1 || a->threads > 64)
        return rb_cli_usage_error("--threads %" PRIu64 ": expected 1 to 64", a->threads);
    if (rb_objname_check("--prefix", a->prefix, true))
        return RB_EXIT_USAGE;
    if (!a->count && !a->duration_ns)
        a->count = 1;
    struct rb_target *t = NULL;
    int status = rb_load_target_open(&a->tgt, cli->args[0], NULL, &t);
    if (status)
        return status;
    char prefix[1600];
    snprintf(prefix, sizeof prefix, "%s%s", rb_target_prefix(t), a->prefix ? a->prefix : "");
    if ((status = rb_load_target_probe(t, a->tgt.timeout_ns)) != 0) {
        rb_target_close(t);
        return status;
    }
    struct rb_harness h;
    status = rb_harness_init(&h, "load list", cli, &(struct rb_harness_opts){.mpi = true});
    if (status) {
        rb_target_close(t);
        return status;
    }
    char *table = NULL;
    status = list_phase(&h, a, t, prefix, &table);
    status = rb_harness_finish(&h, table, status);
    free(table);
    rb_target_close(t);
    return status;
}

int rb_load_list_main(int argc, char **argv)
{
    struct list_args a = {.threads = 1, .tgt = {.timeout_ns = 30 * RB_NS_PER_S}};
    const struct rb_opt own[] = {
        {"prefix", 0, RB_OPT_STR, &a.prefix, "P", "list the names under P (after the URL's own prefix)", NULL},
        {"threads", 't', RB_OPT_U64, &a.threads, "N", "listings running at once per rank, each page after page", NULL},
        {"count", 0, RB_OPT_U64, &a.count, "N", "whole listings, all ranks together (if not given: 1 without --duration)",
         NULL},
        {"duration", 'd', RB_OPT_DURATION, &a.duration_ns, "D", "list again and again for D", NULL},
        {0},
    };
    struct rb_opts opts = {0};
    rb_opts_add(&opts, own);
    rb_load_options(&opts, &a.tgt, NULL, NULL);
    rb_engine_list_options(&opts, &a.eng); /* the listing engine alone (engine.md) */
    const struct rb_cmd_spec spec = {
        "railbench load list [options] URL",
        "List s3://BUCKET (ListObjectsV2 pages of 1,000), ais://BUCKET (list pages), http://HOST:PORT/PATH/ "
        "(one nginx autoindex JSON page) or file:///PATH (the tree walked) and report pages/s, names/s and latency per page.",
        opts.v, 1, 1, false};
    return rb_load_command(&spec, argc, argv, list_run, &a);
}
