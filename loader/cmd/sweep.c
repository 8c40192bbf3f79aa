/* railbench load sweep: one barrier-started GET phase per in-flight or rate step, every point, and the knee. */
#define _POSIX_C_SOURCE 200809L
#include "sweep_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "../file/file_int.h"
#include "loader_int.h"
#include "../engine/payload_int.h"
#include "../engine/phase_int.h"
#include "railbench/buf.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "railbench/objname.h"
#include "railbench/units.h"

#define MAX_THREADS 1024
#define MAX_INFLIGHT 65536
#define DEFAULT_POINT_NS (5 * RB_NS_PER_S)
#define DEFAULT_RATE_INFLIGHT 16 /* connections per thread for an open-loop point: room for the server to lag */

/*
 * The knee as the AIStore benchmark write-up reads its worker sweep: 20
 * workers per client gave most of the throughput at half the latency of
 * 100. Past the knee, more requests in flight only queue: throughput
 * barely moves while every request waits longer. The knee is the last
 * point before the first step that buys less than gain_pct % throughput
 * for more than latency_pct % average latency.
 */
int rb_sweep_knee(const struct rb_sweep_point *pts, size_t n, double gain_pct, double latency_pct)
{
    for (size_t i = 0; i + 1 < n; i++) {
        const struct rb_sweep_point *a = &pts[i], *b = &pts[i + 1];
        if (!(a->throughput_bytes_per_s > 0) || !(a->latency_avg_ns > 0))
            continue;
        /* As ratios, so that a step of exactly +10 % reads as 1.1 on both sides of the comparison. */
        bool flat = b->throughput_bytes_per_s / a->throughput_bytes_per_s < 1.0 + gain_pct / 100.0;
        bool slower = b->latency_avg_ns / a->latency_avg_ns > 1.0 + latency_pct / 100.0;
        if (flat && slower)
            return (int)i;
    }
    return -1;
}

struct sweep_args {
    struct rb_target_cfg tgt;  /* the target options: --endpoint, --timeout, each protocol's own */
    struct rb_engine_args eng; /* --engine, --max-redirects */
    uint64_t threads;
    struct rb_u64s inflight;
    const char *rate;
    uint64_t objects;
    const char *prefix, *filelist;
    uint64_t size;
    int pattern;
    uint64_t duration_ns, count, seed;
    bool verify;
    double max_error_pct, knee_gain_pct, knee_latency_pct;
    struct rb_file_opts file; /* a file:// target's options (the file protocol's group) */
};

/* One point as measured (rank 0). */
struct point {
    char phase[48];
    uint64_t inflight;
    double rate_per_s; /* 0: closed loop */
    uint64_t requests, objects, bytes, errors;
    double duration_s, bytes_per_s, ops_per_s, lat_avg_ns;
    double achieved_rate_per_s;  /* open loop: requests sent per second (NAN without a duration) */
    uint64_t lat_p50_ns, lat_p99_ns, unc_p99_ns;
    bool lat_known;              /* a request completed: the latency figures exist */
    bool failed;                 /* cut short by a runtime error, not a signal */
};

static uint64_t share(uint64_t total, int n, int i)
{
    return total / (uint64_t)n + ((uint64_t)i < total % (uint64_t)n ? 1 : 0);
}

/* "100,200,400/s": rates, each as rb_parse_rate. Returns 0 or prints the usage error. */
static int parse_rates(const char *s, double *out, size_t max, size_t *n)
{
    *n = 0;
    const char *p = s;
    for (;;) {
        size_t len = strcspn(p, ",");
        char item[64];
        if (len == 0 || len >= sizeof item || *n == max)
            return rb_cli_usage_error("--rate \"%s\": expected increasing rates such as 100,200,400 (at most %zu)", s,
                                       max);
        memcpy(item, p, len);
        item[len] = '\0';
        if (rb_parse_rate(item, &out[*n]) != 0)
            return rb_cli_usage_error("--rate \"%s\": \"%s\" is not a rate (use e.g. 1000, 1000/s, 60/m)", s, item);
        (*n)++;
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

static int validate(struct sweep_args *a, double *rates, size_t *nrates)
{
    *nrates = 0;
    if (a->threads < 1 || a->threads > MAX_THREADS)
        return rb_cli_usage_error("--threads %" PRIu64 ": expected 1 to %d", a->threads, MAX_THREADS);
    if (a->rate) {
        int rc = parse_rates(a->rate, rates, RB_LIST_MAX, nrates);
        if (rc)
            return rc;
        for (size_t i = 1; i < *nrates; i++)
            if (!(rates[i] > rates[i - 1]))
                return rb_cli_usage_error("--rate %s: expected increasing rates (each step above the one before)",
                                           a->rate);
        if (a->inflight.n > 1)
            return rb_cli_usage_error("--rate steps run with one --inflight value (the connections per thread), "
                                       "not a list");
        if (!a->inflight.n)
            a->inflight = (struct rb_u64s){1, {DEFAULT_RATE_INFLIGHT}};
    } else if (!a->inflight.n) {
        a->inflight = (struct rb_u64s){6, {1, 2, 4, 8, 16, 32}};
    }
    for (size_t i = 0; i < a->inflight.n; i++) {
        uint64_t v = a->inflight.v[i];
        if (v < 1 || v > MAX_INFLIGHT || a->threads * v > MAX_INFLIGHT)
            return rb_cli_usage_error("--inflight %" PRIu64 ": expected 1 to %d requests in flight per rank "
                                       "(threads x inflight)", v, MAX_INFLIGHT);
        if (i && v <= a->inflight.v[i - 1])
            return rb_cli_usage_error("--inflight: expected increasing values (e.g. 1,2,4,8), got %" PRIu64
                                       " after %" PRIu64, v, a->inflight.v[i - 1]);
    }
    if (a->objects && a->filelist)
        return rb_cli_usage_error("--objects and --filelist: give one of them");
    if (a->objects > UINT32_MAX)
        return rb_cli_usage_error("--objects %" PRIu64 ": at most %u", a->objects, UINT32_MAX);
    if (a->prefix && strlen(a->prefix) > 512)
        return rb_cli_usage_error("--prefix: at most 512 bytes");
    if (rb_objname_check("--prefix", a->prefix, true))
        return RB_EXIT_USAGE;
    if (a->max_error_pct < 0 || a->max_error_pct > 100)
        return rb_cli_usage_error("--max-error-rate %g: expected 0 to 100 (percent)", a->max_error_pct);
    if (a->eng.max_redirects > 100)
        return rb_cli_usage_error("--max-redirects %" PRIu64 ": expected 0 to 100", a->eng.max_redirects);
    if (a->verify && !a->size)
        return rb_cli_usage_error("--verify: give --size, the size the objects were put with");
    if (!a->duration_ns && !a->count)
        a->duration_ns = DEFAULT_POINT_NS;
    return 0;
}

static void fill_point(struct point *p, const struct rb_load_result *res, uint64_t inflight, double rate)
{
    const struct rb_stats *s = res->total;
    memset(p, 0, sizeof *p);
    snprintf(p->phase, sizeof p->phase, "%s", res->phase);
    p->inflight = inflight;
    p->rate_per_s = rate;
    p->requests = s->ops;
    p->errors = s->errors;
    p->objects = s->ops - s->errors;
    p->bytes = s->bytes;
    p->duration_s = res->duration_s;
    p->bytes_per_s = res->duration_s > 0 ? (double)s->bytes / res->duration_s : 0;
    p->ops_per_s = res->duration_s > 0 ? (double)p->objects / res->duration_s : 0;
    p->lat_avg_ns = rb_hist_mean(&s->lat);
    p->lat_p50_ns = rb_hist_percentile(&s->lat, 50);
    p->lat_p99_ns = rb_hist_percentile(&s->lat, 99);
    p->unc_p99_ns = res->uncorrected ? rb_hist_percentile(res->uncorrected, 99) : 0;
    p->lat_known = s->lat.count > 0;
    p->achieved_rate_per_s = rb_load_achieved_rate(res);
}

/* The point of pts[0..n) with the most throughput; -1 when none moved a byte. */
static int peak_point(const struct point *pts, size_t n)
{
    int best = -1;
    for (size_t i = 0; i < n; i++)
        if (pts[i].bytes_per_s > 0 && (best < 0 || pts[i].bytes_per_s > pts[best].bytes_per_s))
            best = (int)i;
    return best;
}

/*
 * The knee (by the rule, said in words) and the peak beside it: the knee is
 * where more load stopped paying, not the most the target gave, and a later
 * point may still be faster. Rank 0; into summary and t.
 */
static void knee_and_peak(const struct sweep_args *a, const struct point *pts, size_t n, int knee, int peak,
                          cJSON *summary, struct rb_buf *t)
{
    char rule[256];
    snprintf(rule, sizeof rule, "the knee is the last point before the first step that adds less than %g %% "
             "throughput for more than %g %% more average latency", a->knee_gain_pct, a->knee_latency_pct);
    cJSON *r = cJSON_AddObjectToObject(summary, "knee_rule");
    cJSON_AddNumberToObject(r, "gain_pct", a->knee_gain_pct);
    cJSON_AddNumberToObject(r, "latency_pct", a->knee_latency_pct);
    cJSON_AddStringToObject(r, "text", rule);
    rb_buf_printf(t, "\nRule: %s.\n", rule);
    if (knee >= 0) {
        const struct point *k = &pts[knee], *next = &pts[knee + 1];
        double gain = 100.0 * (next->bytes_per_s / k->bytes_per_s - 1.0);
        double growth = 100.0 * (next->lat_avg_ns / k->lat_avg_ns - 1.0);
        cJSON *o = cJSON_AddObjectToObject(summary, "knee");
        cJSON_AddNumberToObject(o, "index", knee);
        cJSON_AddItemToObject(o, "inflight", rb_json_u64(k->inflight));
        if (k->rate_per_s > 0)
            cJSON_AddNumberToObject(o, "rate_per_s", k->rate_per_s);
        else
            cJSON_AddNullToObject(o, "rate_per_s");
        cJSON_AddStringToObject(o, "phase", k->phase);
        cJSON_AddNumberToObject(o, "throughput_gain_pct", gain);
        cJSON_AddNumberToObject(o, "latency_growth_pct", growth);
        char avg[16];
        rb_format_duration_human(avg, sizeof avg, (uint64_t)k->lat_avg_ns);
        rb_buf_printf(t, "knee: %s (%.2f MiB/s, %.1f obj/s, latency avg %s); the next point, %s, adds %.1f %% "
                      "throughput for %+.0f %% average latency\n",
                      k->phase, k->bytes_per_s / (double)RB_MIB, k->ops_per_s, avg, next->phase, gain, growth);
    } else {
        cJSON_AddNullToObject(summary, "knee");
        rb_buf_printf(t, "knee: none up to %s\n", n ? pts[n - 1].phase : "-");
    }
    if (peak < 0) {
        cJSON_AddNullToObject(summary, "peak");
        rb_buf_printf(t, "peak: none (no point moved a byte)\n");
        return;
    }
    const struct point *p = &pts[peak];
    cJSON *o = cJSON_AddObjectToObject(summary, "peak");
    cJSON_AddNumberToObject(o, "index", peak);
    cJSON_AddItemToObject(o, "inflight", rb_json_u64(p->inflight));
    cJSON_AddStringToObject(o, "phase", p->phase);
    cJSON_AddNumberToObject(o, "throughput_bytes_per_s", p->bytes_per_s);
    cJSON_AddNumberToObject(o, "ops_per_s", p->ops_per_s);
    char avg[16];
    rb_format_duration_human(avg, sizeof avg, (uint64_t)p->lat_avg_ns);
    rb_buf_printf(t, "peak: %s (%.2f MiB/s, %.1f obj/s, latency avg %s)", p->phase, p->bytes_per_s / (double)RB_MIB,
                  p->ops_per_s, avg);
    if (knee >= 0 && peak != knee)
        rb_buf_printf(t, ", %.1f %% more throughput than the knee", 100.0 * (p->bytes_per_s / pts[knee].bytes_per_s - 1.0));
    rb_buf_printf(t, "\n");
}

/* Summary, table and knee (rank 0). n points ran to their end; more may have been cut short. */
static char *report(const struct sweep_args *a, const struct rb_harness *h, const struct rb_target *tg,
                    const struct point *pts, size_t n, size_t ncut, cJSON *summary)
{
    const char *target = rb_target_name(tg);
    struct rb_sweep_point *sp = calloc(n ? n : 1, sizeof *sp);
    if (!sp)
        return NULL;
    for (size_t i = 0; i < n; i++)
        sp[i] = (struct rb_sweep_point){pts[i].bytes_per_s, pts[i].lat_avg_ns};
    int knee = rb_sweep_knee(sp, n, a->knee_gain_pct, a->knee_latency_pct), peak = peak_point(pts, n);
    free(sp);

    struct rb_buf t = {0};
    rb_buf_printf(&t, "\n# railbench load sweep %s\n\n%d rank(s) x %" PRIu64 " thread(s); %s per point\n\n", target,
                  h->size, a->threads, a->rate ? "open loop, one rate" : "closed loop, one in-flight count");
    rb_buf_printf(&t, "| point | in flight | rate/s | achieved/s | MiB/s | obj/s | latency avg | p50 | p99 | errors | |\n"
                      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    cJSON *arr = cJSON_AddArrayToObject(summary, "sweep_points");
    for (size_t i = 0; i < n + ncut; i++) {
        const struct point *p = &pts[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "inflight", rb_json_u64(p->inflight));
        if (p->rate_per_s > 0)
            cJSON_AddNumberToObject(o, "rate_per_s", p->rate_per_s);
        else
            cJSON_AddNullToObject(o, "rate_per_s");
        cJSON_AddNumberToObject(o, "throughput_bytes_per_s", p->bytes_per_s);
        cJSON_AddNumberToObject(o, "ops_per_s", p->ops_per_s);
        cJSON_AddNumberToObject(o, "latency_avg_ns", p->lat_avg_ns);
        cJSON_AddItemToObject(o, "latency_p50_ns", rb_json_u64(p->lat_p50_ns));
        cJSON_AddItemToObject(o, "latency_p99_ns", rb_json_u64(p->lat_p99_ns));
        if (p->rate_per_s > 0) {
            cJSON_AddItemToObject(o, "latency_uncorrected_p99_ns", rb_json_u64(p->unc_p99_ns));
            if (isfinite(p->achieved_rate_per_s))
                cJSON_AddNumberToObject(o, "achieved_rate_per_s", p->achieved_rate_per_s);
            else
                cJSON_AddNullToObject(o, "achieved_rate_per_s");
        }
        cJSON_AddStringToObject(o, "phase", p->phase);
        cJSON_AddItemToObject(o, "inflight_total", rb_json_u64(p->inflight * a->threads * (uint64_t)h->size));
        cJSON_AddItemToObject(o, "requests", rb_json_u64(p->requests));
        cJSON_AddItemToObject(o, "objects", rb_json_u64(p->objects));
        cJSON_AddItemToObject(o, "bytes", rb_json_u64(p->bytes));
        cJSON_AddItemToObject(o, "errors", rb_json_u64(p->errors));
        cJSON_AddNumberToObject(o, "duration_s", p->duration_s);
        cJSON_AddBoolToObject(o, "interrupted", i >= n && !p->failed);
        cJSON_AddBoolToObject(o, "complete", i < n);
        cJSON_AddItemToArray(arr, o);
        char rate[32] = "-", achieved[32] = "-", avg[16] = "–", p50[16] = "–", p99[16] = "–";
        if (p->rate_per_s > 0) {
            snprintf(rate, sizeof rate, "%.6g", p->rate_per_s);
            if (isfinite(p->achieved_rate_per_s))
                snprintf(achieved, sizeof achieved, "%.6g", p->achieved_rate_per_s);
        }
        if (p->lat_known) {
            rb_format_duration_human(avg, sizeof avg, (uint64_t)p->lat_avg_ns);
            rb_format_duration_human(p50, sizeof p50, p->lat_p50_ns);
            rb_format_duration_human(p99, sizeof p99, p->lat_p99_ns);
        }
        const char *note = i >= n                        ? (p->failed ? "cut short" : "interrupted")
                           : (int)i == knee && (int)i == peak ? "knee, peak"
                           : (int)i == knee                  ? "knee"
                           : (int)i == peak                  ? "peak"
                                                             : "";
        rb_buf_printf(&t, "| %s | %" PRIu64 " | %s | %s | %.2f | %.1f | %s | %s | %s | %" PRIu64 " | %s |\n", p->phase,
                      p->inflight, rate, achieved, p->bytes_per_s / (double)RB_MIB, p->ops_per_s, avg, p50, p99,
                      p->errors, note);
    }
    knee_and_peak(a, pts, n, knee, peak, summary, &t);
    cJSON_AddStringToObject(summary, "target", target);
    cJSON_AddNumberToObject(summary, "ranks", h->size);
    cJSON_AddItemToObject(summary, "threads", rb_json_u64(a->threads));
    cJSON_AddBoolToObject(summary, "open_loop", a->rate != NULL);
    if (rb_target_can(tg, RB_TCAP_FILES))
        rb_file_summary_json(summary, &a->file);
    if (t.oom) {
        rb_buf_free(&t);
        return NULL;
    }
    return t.s;
}

static int run(struct sweep_args *a, struct rb_cli *cli)
{
    double rates[RB_LIST_MAX];
    size_t nrates = 0;
    int status = validate(a, rates, &nrates);
    if (status)
        return status;
    struct rb_target *t = NULL;
    if ((status = rb_load_target_open(&a->tgt, cli->args[0], NULL, &t)) != 0)
        return status;
    uint64_t most = 1;
    for (size_t i = 0; i < a->inflight.n; i++)
        most = a->inflight.v[i] > most ? a->inflight.v[i] : most;
    const uint64_t asked = most;
    if ((status = rb_engine_check_usage(&a->eng, t, RB_LOAD_GET, false)) ||
        (status = rb_file_opts_check(&a->file)) || (status = rb_file_opts_target(&a->file, t, cli, &most)) ||
        (most < asked && (status = rb_cli_usage_error("load sweep %s: --io-engine psync does one I/O at a time per "
                                                      "thread; sweep in-flight I/Os with --io-engine io_uring",
                                                      rb_target_name(t)))) ||
        (status = rb_load_target_probe(t, a->tgt.timeout_ns)) != 0) {
        rb_target_close(t);
        return status;
    }
    char prefix[1600];
    snprintf(prefix, sizeof prefix, "%s%s", rb_target_prefix(t), a->prefix ? a->prefix : (a->objects ? "obj-" : ""));

    struct rb_harness h;
    status = rb_harness_init(&h, "load sweep", cli, &(struct rb_harness_opts){.mpi = true});
    if (status) {
        rb_target_close(t);
        return status;
    }
    struct rb_objset mine = {0}, none = {0};
    uint64_t total = 0;
    const size_t npoints = a->rate ? nrates : a->inflight.n;
    struct point *pts = calloc(npoints, sizeof *pts);
    size_t done = 0, cut = 0;
    uint64_t requests = 0, errors = 0;
    bool failed = false;
    char *table = NULL;
    if (!pts)
        rb_harness_fatal(&h, RB_EXIT_RUNTIME, "out of memory");
    if ((status = rb_load_build_objects(&h, t, a->objects, a->filelist, prefix, a->tgt.timeout_ns, (enum rb_engine_kind)a->eng.engine,
                                         "to read (put some first, or give --objects N / --filelist FILE)", false,
                                         &mine, &total)))
        goto out;
    if (a->size && rb_objset_generated(&mine))
        rb_objset_set_common_size(&mine, a->size);
    else if (a->size)
        for (uint64_t i = 0; i < mine.n; i++)
            if (!rb_objset_size(&mine, i) || a->verify)
                rb_objset_set_size(&mine, i, a->size);
    if (h.rank == 0)
        rb_info("load sweep %s: %" PRIu64 " objects, %zu points of %s, %d rank(s) x %" PRIu64 " thread(s)", rb_target_name(t),
                total, npoints, a->rate ? "rate" : "in-flight requests", h.size, a->threads);

    for (size_t i = 0; i < npoints; i++) {
        const uint64_t inflight = a->rate ? a->inflight.v[0] : a->inflight.v[i];
        const double rate = a->rate ? rates[i] : 0;
        char name[48];
        if (a->rate)
            snprintf(name, sizeof name, "rate-%.6g", rate);
        else
            snprintf(name, sizeof name, "inflight-%" PRIu64, inflight);
        struct rb_load_opts o = rb_load_opts_from(RB_LOAD_GET, t, &a->tgt, &a->eng, h.rank);
        o.file = &a->file;
        if (a->file.cold_check)
            o.cache_header = RB_FILE_COLD_CHECK_NAME;
        o.objects = &mine;
        o.threads = (unsigned)a->threads;
        o.inflight = (unsigned)inflight;
        o.pattern = (enum rb_load_pattern)a->pattern;
        o.count = a->count ? share(a->count, h.size, h.rank) : 0;
        o.rate_per_s = rate / h.size;
        o.seed = a->seed;
        o.verify = a->verify;
        o.min_size = o.max_size = a->size;
        if (a->count && !o.count)
            o.objects = &none;
        struct rb_load_result res = {0};
        if ((status = rb_file_drop_host_cache(&h, &a->file, name)))
            break;
        status = rb_load_run_phase_with(&h, name, a->duration_ns, &o,
                                        &(struct rb_load_phase_opts){.stop_hopeless = a->max_error_pct < 100}, &res);
        if (h.rank == 0 && res.total) {
            fill_point(&pts[done + cut], &res, inflight, rate);
            /* A point a signal or an error cut short is shown, never part of the knee or the peak. */
            pts[done + cut].failed = status && !h.interrupted;
            if (h.interrupted || status)
                cut++;
            else
                done++;
            const struct rb_stats *s = res.total;
            requests += s->ops;
            errors += s->errors;
            if (rb_load_errors_over(s->errors, s->ops, a->max_error_pct))
                failed |= !rb_load_check_errors(&h.result, name, "requests", s->err, s->errors, s->ops,
                                                a->max_error_pct);
        }
        rb_load_result_free(&res);
        if (status || h.interrupted)
            break;
    }
    if (h.rank == 0) {
        if (!failed)
            rb_load_check_errors(&h.result, NULL, "requests", NULL, errors, requests, a->max_error_pct);
        cJSON *summary = cJSON_CreateObject();
        table = report(a, &h, t, pts, done, cut, summary);
        rb_result_set(&h.result, "summary", summary);
    }
out:
    status = rb_harness_finish(&h, table, status);
    free(table);
    free(pts);
    rb_objset_free(&mine);
    rb_target_close(t);
    return status;
}

/* run() behind the generic signature rb_load_command calls. */
static int run_args(void *a, struct rb_cli *cli)
{
    return run(a, cli);
}

int rb_load_sweep_main(int argc, char **argv)
{
    struct sweep_args a = {
        .threads = 1,
        .seed = 1,
        .max_error_pct = 0,
        .knee_gain_pct = RB_SWEEP_KNEE_GAIN_PCT,
        .knee_latency_pct = RB_SWEEP_KNEE_LATENCY_PCT,
    };
    rb_load_defaults(&a.tgt, &a.eng, &a.file);
    const struct rb_opt own[] = {
        {"inflight", 'c', RB_OPT_U64S, &a.inflight, "LIST",
         "requests in flight per thread, one point each; one value with --rate (if not given: 1,2,4,8,16,32; 16 with --rate)",
         NULL},
        {"rate", 0, RB_OPT_STR, &a.rate, "LIST", "open loop: total requests/s per point, e.g. 100,200,400", NULL},
        {"duration", 'd', RB_OPT_DURATION, &a.duration_ns, "D", "length of every point; 0: 5s, or no limit with --count", NULL},
        {"count", 0, RB_OPT_U64, &a.count, "N", "end a point after N requests (all ranks together)", NULL},
        {"knee-gain", 0, RB_OPT_PERCENT, &a.knee_gain_pct, "PCT",
         "knee: the next point adds less throughput than this", NULL},
        {"knee-latency", 0, RB_OPT_PERCENT, &a.knee_latency_pct, "PCT",
         "knee: while its average latency grows by more than this", NULL},
        {"threads", 't', RB_OPT_U64, &a.threads, "N", "worker threads per rank", NULL},
        {"objects", 'n', RB_OPT_U64, &a.objects, "N", "generated object names <prefix><index>, N of them", NULL},
        {"prefix", 0, RB_OPT_STR, &a.prefix, "P", "object name prefix: obj- with --objects, the listing filter otherwise",
         NULL},
        {"filelist", 0, RB_OPT_STR, &a.filelist, "FILE", "object names, one per line (optional size after a space)",
         NULL},
        {"size", 's', RB_OPT_SIZE, &a.size, "SIZE", "object size as put (for --verify)", NULL},
        {"pattern", 0, RB_OPT_CHOICE, &a.pattern, "P", "GET order: random, sequential, or epoch",
         "random|sequential|epoch"},
        {"seed", 0, RB_OPT_U64, &a.seed, "N", "seed of payloads and orders", NULL},
        {"verify", 0, RB_OPT_FLAG, &a.verify, NULL, "compare every byte with the seeded payload", NULL},
        {"max-error-rate", 0, RB_OPT_PERCENT, &a.max_error_pct, "PCT", RB_LOAD_MAX_ERROR_HELP " (per point)", NULL},
        {0},
    };
    struct rb_opts opts = {0};
    rb_opts_add(&opts, own);
    rb_load_options(&opts, &a.tgt, &a.eng, &a.file);
    const struct rb_cmd_spec spec = {
        "railbench load sweep [options] URL",
        "GET objects of http://HOST:PORT/PATH, s3://BUCKET, ais://BUCKET or file:///PATH at growing in-flight counts "
        "(or rates), one barrier-started phase per point; report "
        "throughput and latency of every point and the knee where more load only adds latency.",
        opts.v, 1, 1, false};
    return rb_load_command(&spec, argc, argv, run_args, &a);
}
