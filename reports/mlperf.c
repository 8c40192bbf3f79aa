/* report --mlperf: whether a set of load train and load checkpoint results meets MLPerf Storage's closed rules. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "railbench/buf.h"
#include "railbench/cli.h"
#include "railbench/file.h"
#include "railbench/log.h"
#include "railbench/provenance.h"
#include "railbench/units.h"
#include "report_int.h"

#define DOC_MAX_BYTES (256u << 20)
#define MEASURED_RUNS 5            /* the closed rules: 1 warm-up, then 5 runs; the figure is their mean */
#define DATASET_RAM_FACTOR 5       /* the data set is at least 5 x the clients' total memory */
#define STEPS_PER_EPOCH_MIN 500
#define CKPT_RAM_FACTOR 3          /* checkpoint writes above 3 x the clients' memory, or a flushed cache */
#define CKPT_READ_GAP_MAX_S 30.0   /* two invocations: the reads start at most 30 s after the writes end */

/* AU thresholds of MLPerf Storage's training workloads, in percent. */
static const struct {
    const char *name;
    double au_pct;
} au_thresholds[] = {
    {"resnet50", 90}, {"unet3d", 90}, {"cosmoflow", 70}, {"retinanet", 85}, {"flux", 90}, {"dlrm", 70},
};

enum role { ROLE_WARMUP, ROLE_MEASURED, ROLE_EXTRA, ROLE_OTHER, ROLE_CKPT };
static const char *const role_names[] = {"warm-up", "measured", "extra", "other workload", "checkpoint"};

struct mrun {
    char *dir;
    cJSON *result, *prov;
    const char *command, *workload;
    bool train;
    double start_s, end_s;
    const char *started_at, *ended_at;
    char hash[65];               /* of the core configuration drawn from result.json now */
    double samples_per_s, bytes_per_s, au_pct; /* NAN when not measured */
    enum role role;
};

struct mcheck {
    struct mrun *runs;
    size_t n;
    uint64_t client_ram;         /* --mlperf-client-ram, 0: each run's provenance */
    const char *workload;        /* the training workload judged, or NULL */
    struct mrun **w;             /* its runs in start order */
    size_t nw;
    cJSON *rules;                /* [{rule, applies_to, run?, passed, detail}] */
    bool failed;
};

static const char *str_or(const char *s, const char *other)
{
    return s ? s : other;
}

static const cJSON *item(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = item(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* "2026-11-29T09:16:52.470Z" as seconds since 1970; NAN when it is not that form. */
static double iso_seconds(const char *s)
{
    struct tm tm = {0};
    int ms = 0, used = 0;
    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                     &tm.tm_min, &tm.tm_sec, &ms, &used) != 7 || s[used])
        return NAN;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (double)timegm(&tm) + ms / 1000.0;
}

static cJSON *read_json(const char *dir, const char *name, char *why, size_t len)
{
    char path[4200], *text = NULL;
    size_t n = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = rb_file_read(path, DOC_MAX_BYTES, &text, &n);
    if (rc) {
        snprintf(why, len, "%s: %s", path, strerror(-rc));
        return NULL;
    }
    cJSON *v = cJSON_ParseWithLength(text, n);
    free(text);
    if (!cJSON_IsObject(v)) {
        snprintf(why, len, "%s: not a JSON object", path);
        cJSON_Delete(v);
        return NULL;
    }
    return v;
}

/* A train run's figures: the result's AU and samples/s, and the mean of its whole epochs' bytes/s. */
static void train_figures(struct mrun *r)
{
    const cJSON *s = item(r->result, "summary");
    r->au_pct = num(s, "au_mean_pct");
    r->samples_per_s = num(s, "samples_per_s");
    double sum = 0;
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, item(s, "train_epochs")) if (cJSON_IsTrue(item(e, "complete")) &&
                                                      isfinite(num(e, "bytes_per_s")))
    {
        sum += num(e, "bytes_per_s");
        n++;
    }
    r->bytes_per_s = n ? sum / n : NAN;
}

/* Reads one result directory into r. Returns 0, or -EINVAL after one error line. */
static int load_run(struct mrun *r, const char *dir)
{
    char why[4400];
    if (!(r->dir = strdup(dir)))
        return -ENOMEM;
    r->samples_per_s = r->bytes_per_s = r->au_pct = NAN;
    if (!(r->result = read_json(dir, "result.json", why, sizeof why))) {
        rb_error("report --mlperf: %s is not a result directory (%s)", dir, why);
        return -EINVAL;
    }
    r->command = cJSON_GetStringValue(item(r->result, "command"));
    r->train = r->command && strcmp(r->command, "load train") == 0;
    if (!r->command || (!r->train && strcmp(r->command, "load checkpoint") != 0)) {
        rb_error("report --mlperf: %s is a result of %s; the rules judge load train and load checkpoint", dir,
                 r->command ? r->command : "an unknown command");
        return -EINVAL;
    }
    if (!cJSON_IsObject(item(r->result, "summary"))) {
        rb_error("report --mlperf: %s: its run recorded no summary (it ended before measuring)", dir);
        return -EINVAL;
    }
    if (!(r->prov = read_json(dir, RB_PROVENANCE_FILE, why, sizeof why)) ||
        strcmp(str_or(cJSON_GetStringValue(item(r->prov, "schema")), ""), RB_PROVENANCE_SCHEMA) != 0) {
        rb_error("report --mlperf: %s has no provenance record (%s)", dir,
                 r->prov ? "provenance.json is not " RB_PROVENANCE_SCHEMA : why);
        return -EINVAL;
    }
    r->started_at = cJSON_GetStringValue(item(r->result, "started_at"));
    r->ended_at = cJSON_GetStringValue(item(r->result, "ended_at"));
    r->start_s = iso_seconds(r->started_at);
    r->end_s = iso_seconds(r->ended_at);
    cJSON *core = rb_provenance_core(r->result);
    int rc = core ? rb_json_sha256(core, r->hash) : -ENOMEM;
    const cJSON *w = item(item(r->result, "summary"), "workload");
    r->workload = cJSON_IsString(w) ? w->valuestring : cJSON_GetStringValue(item(w, "preset"));
    if (!r->train) /* a checkpoint's "workload" is its model */
        r->workload = cJSON_GetStringValue(item(item(item(r->result, "summary"), "model"), "name"));
    cJSON_Delete(core);
    if (rc || isnan(r->start_s) || isnan(r->end_s)) {
        rb_error("report --mlperf: %s: result.json lacks %s", dir,
                 rc ? "a configuration that can be hashed" : "its start or end time");
        return -EINVAL;
    }
    r->role = ROLE_CKPT;
    if (r->train)
        train_figures(r);
    return 0;
}

static void add_rule(struct mcheck *c, const char *rule, bool train, const struct mrun *run, bool passed,
                     const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void add_rule(struct mcheck *c, const char *rule, bool train, const struct mrun *run, bool passed,
                     const char *fmt, ...)
{
    char detail[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "rule", rule);
    cJSON_AddStringToObject(o, "applies_to", train ? "train" : "checkpoint");
    if (run)
        cJSON_AddStringToObject(o, "run", run->dir);
    cJSON_AddBoolToObject(o, "passed", passed);
    cJSON_AddStringToObject(o, "detail", detail);
    cJSON_AddItemToArray(c->rules, o);
    c->failed |= !passed;
}

static const char *base(const struct mrun *r)
{
    const char *s = strrchr(r->dir, '/');
    return s ? s + 1 : r->dir;
}

/* The clients' total memory the rules compare with: --mlperf-client-ram, else the run's provenance. */
static double client_ram(const struct mcheck *c, const struct mrun *r)
{
    return c->client_ram ? (double)c->client_ram : num(r->prov, "client_memory_bytes");
}

/* v by fmt into buf, or "–" when it was not measured (never "nan"). */
static const char *fig(char buf[40], const char *fmt, double v)
{
    if (isfinite(v))
        snprintf(buf, 40, fmt, v);
    else
        snprintf(buf, 40, "–");
    return buf;
}

static void size_text(char *buf, size_t len, double bytes)
{
    if (isfinite(bytes) && bytes >= 0)
        rb_format_size(buf, len, (uint64_t)bytes);
    else
        snprintf(buf, len, "–");
}

/* provenance: the record's hash is its own core configuration's and the one result.json gives now. */
static void rule_provenance(struct mcheck *c, struct mrun *const *runs, size_t n, bool train)
{
    for (size_t i = 0; i < n; i++) {
        const char *ph = cJSON_GetStringValue(item(runs[i]->prov, "core_config_sha256"));
        char own[65] = "";
        const cJSON *core = item(runs[i]->prov, "core_config");
        if (!core || rb_json_sha256(core, own) != 0)
            own[0] = '\0';
        const char *edition = cJSON_GetStringValue(item(runs[i]->prov, "rules_edition"));
        if (!ph || strcmp(ph, own) != 0 || strcmp(ph, runs[i]->hash) != 0 || !edition ||
            strcmp(edition, RB_PROVENANCE_RULES) != 0) {
            add_rule(c, "provenance", train, runs[i], false,
                     "%s: provenance.json's hash %.12s does not match %s (%.12s of its core_config, %.12s of "
                     "result.json's configuration; rules edition %s)",
                     base(runs[i]), ph ? ph : "(none)", strcmp(ph ? ph : "", own) ? "its own record" : "the result",
                     own[0] ? own : "(none)", runs[i]->hash, edition ? edition : "(none)");
            return;
        }
    }
    char who[64];
    if (train)
        snprintf(who, sizeof who, "%zu run(s)", n);
    else
        snprintf(who, sizeof who, "%s", base(runs[0]));
    add_rule(c, "provenance", train, train ? NULL : runs[0], true,
             "%s: provenance.json present, rules edition %s, hash%s matching the result's configuration", who,
             RB_PROVENANCE_RULES, n == 1 ? "" : " of each");
}

/* runs: 1 warm-up + 5 measured runs of the workload. */
static void rule_runs(struct mcheck *c)
{
    add_rule(c, "runs", true, NULL, c->nw == 1 + MEASURED_RUNS,
             "%zu run(s) of %s; the rules take 1 warm-up + %d measured runs", c->nw, c->workload, MEASURED_RUNS);
}

/* consecutive: one after another (none starts before the previous ended), no other workload's run between. */
static void rule_consecutive(struct mcheck *c)
{
    for (size_t i = 1; i < c->nw; i++)
        if (c->w[i]->start_s < c->w[i - 1]->end_s) {
            add_rule(c, "consecutive", true, NULL, false, "%s started at %s, before %s ended (%s)", base(c->w[i]),
                     c->w[i]->started_at, base(c->w[i - 1]), c->w[i - 1]->ended_at);
            return;
        }
    for (size_t i = 0; i < c->n && c->nw; i++) {
        const struct mrun *o = &c->runs[i];
        if (o->role != ROLE_OTHER || o->end_s < c->w[0]->start_s || o->start_s > c->w[c->nw - 1]->end_s)
            continue;
        add_rule(c, "consecutive", true, NULL, false, "%s (workload %s, %s to %s) ran between the runs of %s",
                 base(o), o->workload ? o->workload : "?", o->started_at, o->ended_at, c->workload);
        return;
    }
    add_rule(c, "consecutive", true, NULL, true, "%zu run(s) one after another from %s to %s, no other run between",
             c->nw, c->nw ? c->w[0]->started_at : "–", c->nw ? c->w[c->nw - 1]->ended_at : "–");
}

/* config_hash: every run of the set has the warm-up's allow-listed configuration. */
static void rule_config_hash(struct mcheck *c)
{
    for (size_t i = 1; i < c->nw; i++)
        if (strcmp(c->w[i]->hash, c->w[0]->hash) != 0) {
            add_rule(c, "config_hash", true, NULL, false, "%s: configuration %.12s differs from %s's %.12s",
                     base(c->w[i]), c->w[i]->hash, base(c->w[0]), c->w[0]->hash);
            return;
        }
    add_rule(c, "config_hash", true, NULL, true, "%zu run(s) with configuration %.12s", c->nw, c->w[0]->hash);
}

/* dataset_size: the data set at least 5 x the clients' total memory, in every run. */
static void rule_dataset(struct mcheck *c)
{
    const struct mrun *worst = NULL;
    double worst_ratio = INFINITY;
    for (size_t i = 0; i < c->nw; i++) {
        double bytes = num(item(item(c->w[i]->result, "summary"), "dataset"), "bytes");
        double ratio = bytes / client_ram(c, c->w[i]);
        if (!(ratio >= worst_ratio)) {
            worst_ratio = ratio;
            worst = c->w[i];
        }
    }
    double bytes = num(item(item(worst->result, "summary"), "dataset"), "bytes");
    char b[32], m[32], r[40];
    size_text(b, sizeof b, bytes);
    size_text(m, sizeof m, client_ram(c, worst));
    add_rule(c, "dataset_size", true, NULL, worst_ratio >= DATASET_RAM_FACTOR,
             "data set %s against %d x %s of client memory (%s%s): %s x", b, DATASET_RAM_FACTOR, m,
             c->client_ram ? "--mlperf-client-ram" : "provenance", c->nw > 1 ? ", the smallest ratio of the runs" : "",
             fig(r, "%.3g", worst_ratio));
}

/* steps_per_epoch: every epoch of every run took at least 500 steps. */
static void rule_steps(struct mcheck *c)
{
    double fewest = INFINITY;
    const struct mrun *at = NULL;
    double epoch = NAN;
    for (size_t i = 0; i < c->nw; i++) {
        const cJSON *e;
        cJSON_ArrayForEach(e, item(item(c->w[i]->result, "summary"), "train_epochs"))
        {
            double steps = num(e, "steps");
            if (!(steps >= fewest)) {
                fewest = steps;
                at = c->w[i];
                epoch = num(e, "epoch");
            }
        }
    }
    if (!at) {
        add_rule(c, "steps_per_epoch", true, NULL, false, "no epoch recorded");
        return;
    }
    char f[40], e[40];
    add_rule(c, "steps_per_epoch", true, NULL, fewest >= STEPS_PER_EPOCH_MIN,
             "fewest steps in an epoch: %s (%s, epoch %s); the rules take at least %d", fig(f, "%.0f", fewest),
             base(at), fig(e, "%.0f", epoch), STEPS_PER_EPOCH_MIN);
}

/* The AU threshold of a run in percent: the result's own (au_threshold), the workload's, else --au-min. */
static double au_threshold(const struct mrun *r)
{
    const cJSON *s = item(r->result, "summary");
    double t = num(s, "au_threshold");
    if (isfinite(t))
        return t <= 1 ? t * 100 : t;
    for (size_t i = 0; r->workload && i < sizeof au_thresholds / sizeof au_thresholds[0]; i++)
        if (strcmp(au_thresholds[i].name, r->workload) == 0)
            return au_thresholds[i].au_pct;
    return num(s, "au_min_pct");
}

/* au: every measured run's AU (first step left out, as load train computes it) at or above the threshold. */
static void rule_au(struct mcheck *c)
{
    struct rb_buf b = {0};
    bool ok = c->nw > 1;
    for (size_t i = 1; i < c->nw; i++) {
        double t = au_threshold(c->w[i]), au = c->w[i]->au_pct;
        bool met = isfinite(au) && isfinite(t) && au >= t;
        ok &= met;
        if (isfinite(au))
            rb_buf_printf(&b, "%s%.2f%s", i > 1 ? ", " : "", au, met ? "" : " (below)");
        else
            rb_buf_printf(&b, "%s– (not measured)", i > 1 ? ", " : "");
    }
    char t[40];
    add_rule(c, "au", true, NULL, ok, "AU %% of the measured runs: %s; threshold %s %%", b.s ? b.s : "none",
             fig(t, "%.4g", c->nw > 1 ? au_threshold(c->w[1]) : NAN));
    rb_buf_free(&b);
}

static double mean_of(struct mrun **w, size_t n, size_t off)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double v = *(const double *)((const char *)w[i] + off);
        if (!isfinite(v))
            return NAN;
        sum += v;
    }
    return n ? sum / (double)n : NAN;
}

static cJSON *num_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

/* mean_of_5: the reported figure, the mean of the 5 measured runs; passes when all 5 measured it. */
static cJSON *rule_figure(struct mcheck *c)
{
    size_t n = c->nw > 1 ? c->nw - 1 : 0;
    n = n > MEASURED_RUNS ? MEASURED_RUNS : n;
    struct mrun **m = c->w + 1;
    double sps = mean_of(m, n, offsetof(struct mrun, samples_per_s));
    double bps = mean_of(m, n, offsetof(struct mrun, bytes_per_s));
    double au = mean_of(m, n, offsetof(struct mrun, au_pct));
    struct rb_buf b = {0};
    char f1[40], f2[40], f3[40];
    for (size_t i = 0; i < n; i++)
        rb_buf_printf(&b, "%s%s", i ? ", " : "", fig(f1, "%.1f", m[i]->samples_per_s));
    add_rule(c, "mean_of_5", true, NULL, n == MEASURED_RUNS && isfinite(sps) && isfinite(bps) && isfinite(au),
             "mean of %zu measured run(s): %s samples/s (%s), %s MiB/s, AU %s %%", n, fig(f1, "%.1f", sps),
             b.s ? b.s : "none", fig(f2, "%.3f", bps / 1048576.0), fig(f3, "%.2f", au));
    rb_buf_free(&b);
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "workload", c->workload);
    cJSON_AddNumberToObject(f, "runs", (double)n);
    cJSON_AddItemToObject(f, "samples_per_s_mean", num_or_null(sps));
    cJSON_AddItemToObject(f, "bytes_per_s_mean", num_or_null(bps));
    cJSON_AddItemToObject(f, "au_pct_mean", num_or_null(au));
    return f;
}

/* The checkpoint rules of one result: the page cache kept from serving reads, the read gap, subset, fsync. */
static void rules_ckpt(struct mcheck *c, struct mrun *r)
{
    const cJSON *s = item(r->result, "summary");
    const char *flush = str_or(cJSON_GetStringValue(item(s, "cache_flush")), "none");
    const char *model = str_or(cJSON_GetStringValue(item(item(s, "model"), "name")), "?");
    double written = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, item(s, "writes")) written += isfinite(num(e, "bytes")) ? num(e, "bytes") : 0;
    if (cJSON_GetArraySize(item(s, "reads")) > 0) {
        double ram = client_ram(c, r);
        bool dropped = strcmp(flush, "drop_caches") == 0 && cJSON_IsTrue(item(r->prov, "caches_dropped"));
        bool two = strcmp(flush, "two_invocations") == 0;
        bool big = written >= CKPT_RAM_FACTOR * ram;
        char w[32], m[32];
        size_text(w, sizeof w, written);
        size_text(m, sizeof m, ram);
        add_rule(c, "ckpt_page_cache", false, r, dropped || two || big,
                 "%s: cache %s%s; %s written against %d x %s of client memory", base(r), flush,
                 strcmp(flush, "drop_caches") == 0 && !dropped ? " (not on every host)" : "", w, CKPT_RAM_FACTOR, m);
        if (two) {
            double gap = num(r->result, "read_gap_s");
            char g[40];
            add_rule(c, "ckpt_read_gap", false, r, gap <= CKPT_READ_GAP_MAX_S,
                     "%s: reads started %s s after the writes ended (at most %.0f s)", base(r), fig(g, "%.1f", gap),
                     CKPT_READ_GAP_MAX_S);
        }
    }
    if (cJSON_IsTrue(item(s, "subset")))
        add_rule(c, "ckpt_subset", false, r, strcmp(model, "llama3-8b") == 0,
                 "%s: subset mode with %s (allowed for llama3-8b only)", base(r), model);
    const char *fsync = cJSON_GetStringValue(item(item(s, "file"), "fsync"));
    if (fsync && written > 0)
        add_rule(c, "ckpt_fsync", false, r, strcmp(fsync, "none") != 0, "%s: --fsync %s (the rules enforce fsync)",
                 base(r), fsync);
    struct mrun *one[] = {r};
    rule_provenance(c, one, 1, false);
}

static int cmp_start(const void *a, const void *b)
{
    const struct mrun *x = a, *y = b;
    return x->start_s < y->start_s ? -1 : x->start_s > y->start_s ? 1 : strcmp(x->dir, y->dir);
}

/* The training workload judged: the one with most runs; an error line when another has as many. */
static int pick_workload(struct mcheck *c)
{
    size_t best = 0;
    const char *rival = NULL;
    for (size_t i = 0; i < c->n; i++) {
        if (!c->runs[i].train)
            continue;
        const char *wi = str_or(c->runs[i].workload, "");
        size_t k = 0;
        for (size_t j = 0; j < c->n; j++)
            k += c->runs[j].train && strcmp(str_or(c->runs[j].workload, ""), wi) == 0;
        if (k > best) {
            best = k;
            c->workload = wi;
            rival = NULL;
        } else if (k == best && strcmp(c->workload, wi) != 0) {
            rival = wi;
        }
    }
    if (rival) {
        rb_error("report --mlperf: mixed workloads: %zu run(s) of %s and as many of %s; give one workload's runs",
                 best, c->workload, rival);
        return -EINVAL;
    }
    return 0;
}

static void judge(struct mcheck *c, cJSON **figure)
{
    *figure = NULL;
    for (size_t i = 0; i < c->n; i++) {
        struct mrun *r = &c->runs[i];
        if (!r->train)
            continue;
        if (strcmp(str_or(r->workload, ""), c->workload) != 0) {
            r->role = ROLE_OTHER;
            continue;
        }
        r->role = c->nw == 0 ? ROLE_WARMUP : c->nw <= MEASURED_RUNS ? ROLE_MEASURED : ROLE_EXTRA;
        c->w[c->nw++] = r;
    }
    if (c->nw) {
        rule_runs(c);
        rule_consecutive(c);
        rule_config_hash(c);
        rule_dataset(c);
        rule_steps(c);
        rule_au(c);
        *figure = rule_figure(c);
        rule_provenance(c, c->w, c->nw, true);
    }
    for (size_t i = 0; i < c->n; i++)
        if (!c->runs[i].train)
            rules_ckpt(c, &c->runs[i]);
}

static cJSON *runs_json(const struct mcheck *c)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < c->n; i++) {
        const struct mrun *r = &c->runs[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "dir", r->dir);
        cJSON_AddStringToObject(o, "command", r->command);
        cJSON_AddItemToObject(o, "workload", r->workload ? cJSON_CreateString(r->workload) : cJSON_CreateNull());
        cJSON_AddStringToObject(o, "role", role_names[r->role]);
        cJSON_AddStringToObject(o, "started_at", r->started_at);
        cJSON_AddStringToObject(o, "ended_at", r->ended_at);
        cJSON_AddStringToObject(o, "core_config_sha256", r->hash);
        cJSON_AddItemToObject(o, "samples_per_s", num_or_null(r->samples_per_s));
        cJSON_AddItemToObject(o, "bytes_per_s", num_or_null(r->bytes_per_s));
        cJSON_AddItemToObject(o, "au_pct", num_or_null(r->au_pct));
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static void cell(struct rb_buf *b, double v, const char *fmt)
{
    if (isfinite(v))
        rb_buf_printf(b, fmt, v);
    else
        rb_buf_printf(b, " – |");
}

static void render_md(const struct mcheck *c, struct rb_buf *b)
{
    size_t nck = 0;
    for (size_t i = 0; i < c->n; i++)
        nck += !c->runs[i].train;
    rb_buf_printf(b, "# MLPerf Storage %s closed rules: %zu training run(s)%s%s, %zu checkpoint result(s)\n\n",
                  RB_PROVENANCE_RULES, c->nw, c->workload ? " of " : "", c->workload ? c->workload : "", nck);
    rb_buf_printf(b, "| # | run | command | workload or model | role | started | samples/s | MiB/s | AU %% | config |\n"
                     "|---:|---|---|---|---|---|---:|---:|---:|---|\n");
    for (size_t i = 0; i < c->n; i++) {
        const struct mrun *r = &c->runs[i];
        rb_buf_printf(b, "| %zu | %s | %s | %s | %s | %s |", i + 1, base(r), r->command,
                      r->workload ? r->workload : "–", role_names[r->role], r->started_at);
        cell(b, r->samples_per_s, " %.1f |");
        cell(b, r->bytes_per_s / 1048576.0, " %.3f |");
        cell(b, r->au_pct, " %.2f |");
        rb_buf_printf(b, " %.12s |\n", r->hash);
    }
    rb_buf_printf(b, "\n| rule | applies to | verdict | figures |\n|---|---|---|---|\n");
    const cJSON *o;
    cJSON_ArrayForEach(o, c->rules)
    {
        rb_buf_printf(b, "| %s | %s | %s | %s |\n", cJSON_GetStringValue(item(o, "rule")),
                      cJSON_GetStringValue(item(o, "applies_to")), cJSON_IsTrue(item(o, "passed")) ? "PASS" : "FAIL",
                      cJSON_GetStringValue(item(o, "detail")));
    }
    rb_buf_printf(b, "\nverdict: %s", c->failed ? "FAIL (" : "PASS: every rule applying holds\n");
    bool first = true;
    cJSON_ArrayForEach(o, c->rules) if (!cJSON_IsTrue(item(o, "passed")))
    {
        rb_buf_printf(b, "%s%s", first ? "" : ", ", cJSON_GetStringValue(item(o, "rule")));
        first = false;
    }
    if (c->failed)
        rb_buf_printf(b, " broken)\n");
}

/* Expands the arguments (a directory of result directories stands for them) and reads every run. */
static int load_runs(struct mcheck *c, const char *const *args, size_t nargs)
{
    size_t cap = 0;
    for (size_t a = 0; a < nargs; a++) {
        char **kids = NULL;
        size_t nk = 0;
        struct stat st;
        if (stat(args[a], &st) == 0 && S_ISDIR(st.st_mode) && !rb_rundir_is_result(args[a]) &&
            rb_rundir_children(args[a], &kids, &nk) == -ENOMEM)
            return -ENOMEM;
        const char *one[] = {args[a]};
        const char *const *list = nk ? (const char *const *)kids : one;
        size_t nl = nk ? nk : 1;
        int rc = 0;
        for (size_t i = 0; i < nl && !rc; i++) {
            if (c->n == cap) {
                cap = cap ? 2 * cap : 16;
                struct mrun *v = realloc(c->runs, cap * sizeof *v);
                if (!v) {
                    rc = -ENOMEM;
                    break;
                }
                c->runs = v;
            }
            memset(&c->runs[c->n], 0, sizeof c->runs[c->n]);
            rc = load_run(&c->runs[c->n++], list[i]);
        }
        for (size_t i = 0; i < nk; i++)
            free(kids[i]);
        free(kids);
        if (rc)
            return rc;
    }
    return 0;
}

static void free_check(struct mcheck *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->runs[i].dir);
        cJSON_Delete(c->runs[i].result);
        cJSON_Delete(c->runs[i].prov);
    }
    free(c->runs);
    free(c->w);
    cJSON_Delete(c->rules);
}

static int write_doc(const char *out, const struct rb_buf *b)
{
    if (!out) {
        fwrite(b->s ? b->s : "", 1, b->len, stdout);
        return fflush(stdout) == 0 ? 0 : -EIO;
    }
    int rc = rb_file_write_atomic(out, b->s ? b->s : "", b->len);
    if (rc)
        rb_error("report --mlperf: cannot write --out %s: %s", out, strerror(-rc));
    return rc;
}

int rb_report_mlperf(const char *const *args, size_t nargs, bool json, const char *out, uint64_t client_ram)
{
    struct mcheck c = {.client_ram = client_ram, .rules = cJSON_CreateArray()};
    int status = RB_EXIT_OK;
    int rc = c.rules ? load_runs(&c, args, nargs) : -ENOMEM;
    if (!rc) {
        qsort(c.runs, c.n, sizeof *c.runs, cmp_start);
        c.w = calloc(c.n ? c.n : 1, sizeof *c.w);
        rc = c.w ? pick_workload(&c) : -ENOMEM;
    }
    if (rc) {
        if (rc == -ENOMEM)
            rb_error("report --mlperf: out of memory");
        free_check(&c);
        return rc == -ENOMEM ? RB_EXIT_RUNTIME : RB_EXIT_USAGE;
    }
    cJSON *figure;
    judge(&c, &figure);
    struct rb_buf b = {0};
    if (json) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "schema", "railbench.mlperf-check/1");
        cJSON_AddStringToObject(doc, "rules_edition", RB_PROVENANCE_RULES);
        cJSON_AddBoolToObject(doc, "passed", !c.failed);
        cJSON_AddItemToObject(doc, "workload", c.workload ? cJSON_CreateString(c.workload) : cJSON_CreateNull());
        cJSON_AddItemToObject(doc, "client_memory_bytes",
                              client_ram ? cJSON_CreateNumber((double)client_ram) : cJSON_CreateNull());
        cJSON_AddStringToObject(doc, "client_memory_source", client_ram ? "--mlperf-client-ram" : "provenance");
        cJSON_AddItemToObject(doc, "runs", runs_json(&c));
        cJSON_AddItemToObject(doc, "rules", c.rules);
        c.rules = NULL;
        cJSON_AddItemToObject(doc, "figure", figure ? figure : cJSON_CreateNull());
        char *text = cJSON_Print(doc);
        cJSON_Delete(doc);
        if (text)
            rb_buf_printf(&b, "%s\n", text);
        else
            b.oom = true;
        free(text);
    } else {
        cJSON_Delete(figure);
        render_md(&c, &b);
    }
    if (b.oom) {
        rb_error("report --mlperf: out of memory");
        status = RB_EXIT_RUNTIME;
    } else if (write_doc(out, &b) != 0) {
        status = RB_EXIT_RUNTIME;
    } else if (c.failed) {
        status = RB_EXIT_CHECK;
    }
    rb_buf_free(&b);
    free_check(&c);
    return status;
}
