/* Reads result directories back for reports: result.json, else intervals.jsonl; histograms become curves. */
#define _POSIX_C_SOURCE 200809L
#include "rundir_int.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "railbench/file.h"
#include "railbench/hist.h"
#include "railbench/result.h"

/* A result.json this large is not one railbench wrote (a few MB with many phases). */
#define RESULT_MAX_BYTES (256u << 20)
/* Points of a latency curve: p50, then x = 1/(1-q) from 10^0.4 to 10^6 in steps of 10^0.1. */
#define CURVE_STEPS_PER_DECADE 10
#define CURVE_MAX_DECADES 6
/* A parse that fails this close to the end of unbalanced text failed because the text stops. */
#define TRUNCATED_TAIL_BYTES 4096

static void warn(struct rb_rundir *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct rb_rundir *r, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char **w = realloc(r->warnings, (r->nwarnings + 1) * sizeof *w);
    if (!w)
        return;
    r->warnings = w;
    w[r->nwarnings] = strdup(line);
    if (w[r->nwarnings])
        r->nwarnings++;
}

/* Adds to the last warning, so that one directory's trouble reads as one line. */
static void warn_more(struct rb_rundir *r, const char *more)
{
    if (!r->nwarnings)
        return;
    char *w = r->warnings[r->nwarnings - 1];
    size_t n = strlen(w);
    char *nw = realloc(w, n + strlen(more) + 1);
    if (!nw)
        return;
    strcpy(nw + n, more);
    r->warnings[r->nwarnings - 1] = nw;
}

/* Walks a dotted path ("latency_ns.p99") through objects. */
static const cJSON *at_path(const cJSON *o, const char *path)
{
    char key[128];
    while (o && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof key || !cJSON_IsObject(o))
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        o = cJSON_GetObjectItemCaseSensitive(o, key);
        path += n + (path[n] == '.');
    }
    return o;
}

double rb_rundir_num(const cJSON *o, const char *path)
{
    const cJSON *v = at_path(o, path);
    if (cJSON_IsNumber(v))
        return isfinite(v->valuedouble) ? v->valuedouble : NAN;
    uint64_t u;
    if (cJSON_IsString(v) && rb_json_get_u64(v, &u) == 0)
        return (double)u;
    return NAN;
}

const char *rb_rundir_str(const cJSON *o, const char *path)
{
    const cJSON *v = at_path(o, path);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *rb_rundir_array(const cJSON *o, const char *path)
{
    const cJSON *v = at_path(o, path);
    return cJSON_IsArray(v) ? v : NULL;
}

const char *rb_rundir_label(const struct rb_rundir *r, const char *key)
{
    return r ? rb_rundir_str(r->labels, key) : NULL;
}

static bool is_file(const char *dir, const char *name)
{
    char p[4200];
    struct stat st;
    if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, name) >= sizeof p)
        return false;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

bool rb_rundir_is_result(const char *dir)
{
    return is_file(dir, "result.json") || is_file(dir, "intervals.jsonl");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int rb_rundir_children(const char *dir, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    char **v = NULL;
    size_t cnt = 0, cap = 0;
    int rc = 0;
    const struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[4200];
        struct stat st;
        if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= sizeof p)
            continue;
        if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode) || !rb_rundir_is_result(p))
            continue;
        if (cnt == cap) {
            cap = cap ? 2 * cap : 64;
            char **nv = realloc(v, cap * sizeof *nv);
            if (!nv) {
                rc = -ENOMEM;
                goto fail;
            }
            v = nv;
        }
        if (!(v[cnt] = strdup(p))) {
            rc = -ENOMEM;
            goto fail;
        }
        cnt++;
    }
    closedir(d);
    if (cnt)
        qsort(v, cnt, sizeof *v, cmp_str);
    *out = v;
    *n = cnt;
    return 0;
fail:
    closedir(d);
    for (size_t i = 0; i < cnt; i++)
        free(v[i]);
    free(v);
    return rc;
}

/*
 * Why a parse failed, for the message: text that stops inside a string or
 * with brackets still open was cut short (a run killed while writing, a full
 * disk); anything else is invalid where the parser stopped.
 */
static void parse_problem(char *out, size_t outlen, const char *buf, size_t len, const char *end)
{
    long depth = 0;
    bool in_string = false, escaped = false;
    int lines = 1;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        lines += c == '\n';
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    if (!end || end < buf || end > buf + len)
        end = buf + len;
    /* Garbage has brackets too: only a parse that got near the end counts as cut short. */
    size_t tail = (size_t)(buf + len - end);
    if ((in_string || depth > 0) && tail <= TRUNCATED_TAIL_BYTES && 4 * tail <= len) {
        snprintf(out, outlen, "it ends early at line %d (truncated?)", lines);
        return;
    }
    int line = 1;
    for (const char *c = buf; c < end; c++)
        line += *c == '\n';
    snprintf(out, outlen, "invalid JSON at line %d", line);
}

/*
 * Names to slots, so that a run with thousands of phases (a collective per
 * size and algorithm) is read in one pass, not one scan per interval line.
 * Keys are borrowed and must outlive the index.
 */
struct name_index {
    const char **keys;
    size_t *vals;
    size_t cap, n;
};

static size_t name_hash(const char *s)
{
    size_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool index_get(const struct name_index *x, const char *key, size_t *val)
{
    if (!x->cap)
        return false;
    for (size_t i = name_hash(key) & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
        if (!x->keys[i])
            return false;
        if (strcmp(x->keys[i], key) == 0) {
            *val = x->vals[i];
            return true;
        }
    }
}

static int index_put(struct name_index *x, const char *key, size_t val)
{
    if (2 * (x->n + 1) > x->cap) {
        struct name_index g = {0};
        g.cap = x->cap ? 2 * x->cap : 64;
        g.keys = calloc(g.cap, sizeof *g.keys);
        g.vals = calloc(g.cap, sizeof *g.vals);
        if (!g.keys || !g.vals) {
            free(g.keys);
            free(g.vals);
            return -ENOMEM;
        }
        for (size_t i = 0; i < x->cap; i++)
            if (x->keys[i])
                index_put(&g, x->keys[i], x->vals[i]);
        free(x->keys);
        free(x->vals);
        *x = g;
    }
    size_t i = name_hash(key) & (x->cap - 1);
    while (x->keys[i])
        i = (i + 1) & (x->cap - 1);
    x->keys[i] = key;
    x->vals[i] = val;
    x->n++;
    return 0;
}

static void index_free(struct name_index *x)
{
    free(x->keys);
    free(x->vals);
    memset(x, 0, sizeof *x);
}

/* What reading intervals.jsonl keeps between lines. */
struct reader {
    struct rb_rundir *r;
    unsigned flags;
    cJSON *rebuilt;          /* phases rebuilt from the lines, or NULL when result.json had them */
    cJSON *rebuilt_root;     /* the record they go into (summary.collective_rows from coll's lines) */
    struct name_index series, phases;
    cJSON **phase_v;         /* rebuilt phases by index */
    size_t nphase;
};

static struct rb_series *series_for(struct reader *rd, const char *name)
{
    struct rb_rundir *r = rd->r;
    size_t k;
    if (index_get(&rd->series, name, &k))
        return &r->series[k];
    struct rb_series *v = realloc(r->series, (r->nseries + 1) * sizeof *v);
    if (!v)
        return NULL;
    r->series = v;
    struct rb_series *s = &v[r->nseries];
    memset(s, 0, sizeof *s);
    if (!(s->name = strdup(name)))
        return NULL;
    if (index_put(&rd->series, s->name, r->nseries) != 0) {
        free(s->name);
        return NULL;
    }
    r->nseries++;
    return s;
}

/* Seconds since 1970 of an ISO 8601 UTC time ("2026-11-22T03:43:50.063Z"); NAN when it is not one. */
static double iso_seconds(const char *ts)
{
    int y, mo, d, h, mi;
    double sec;
    if (!ts || sscanf(ts, "%d-%d-%dT%d:%d:%lfZ", &y, &mo, &d, &h, &mi, &sec) != 6 || mo < 1 || mo > 12 || d < 1 ||
        d > 31 || y < 1970 || y > 9999)
        return NAN;
    /* Days from the civil date (the proleptic Gregorian calendar, March-based years). */
    y -= mo <= 2;
    long era = y / 400, yoe = y - era * 400, doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
    return (double)days * 86400 + h * 3600 + mi * 60 + sec;
}

/* Appends one interval's figures {t_s, bytes_per_s, at_s, p50_ns, p99_ns} to the series called name. */
static void series_add(struct reader *rd, const char *name, const double v[5])
{
    if (!isfinite(v[0]) || !isfinite(v[1]))
        return;
    struct rb_series *s = series_for(rd, name);
    if (!s)
        return;
    double **cols[5] = {&s->t_s, &s->bytes_per_s, &s->at_s, &s->p50_ns, &s->p99_ns};
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        for (size_t k = 0; k < 5; k++) {
            double *nv = realloc(*cols[k], cap * sizeof *nv);
            if (!nv)
                return;
            *cols[k] = nv;
        }
        s->cap = cap;
    }
    for (size_t k = 0; k < 5; k++)
        (*cols[k])[s->n] = v[k];
    s->n++;
}

/* Sums a field over the entries of a host's device array. */
static double host_sum(const cJSON *host, const char *section, const char *field)
{
    double s = 0;
    const cJSON *d;
    const cJSON *arr = rb_rundir_array(host, section);
    cJSON_ArrayForEach(d, arr)
    {
        double v = rb_rundir_num(d, field);
        if (isfinite(v))
            s += v;
    }
    return s;
}

/* A phase rebuilt from interval lines: sums of what every line counted. */
static cJSON *rebuilt_phase(struct reader *rd, const char *name, const char *op)
{
    size_t k;
    if (index_get(&rd->phases, name, &k))
        return rd->phase_v[k];
    cJSON **v = realloc(rd->phase_v, (rd->nphase + 1) * sizeof *v);
    if (!v)
        return NULL;
    rd->phase_v = v;
    cJSON *ph = cJSON_CreateObject();
    if (!ph)
        return NULL;
    cJSON_AddItemToArray(rd->rebuilt, ph);
    cJSON *n = cJSON_AddStringToObject(ph, "name", name);
    if (op)
        cJSON_AddStringToObject(ph, "op", op);
    cJSON_AddNumberToObject(ph, "count", 0);
    cJSON_AddNumberToObject(ph, "bytes", 0);
    cJSON_AddNumberToObject(ph, "duration_s", 0);
    cJSON *e = cJSON_AddObjectToObject(ph, "errors");
    cJSON_AddNumberToObject(e, "total", 0);
    cJSON_AddNumberToObject(ph, "interval_lines", 0);
    if (!n || index_put(&rd->phases, n->valuestring, rd->nphase) != 0)
        return NULL;
    v[rd->nphase++] = ph;
    return ph;
}

static void add_to(cJSON *o, const char *path, double v)
{
    cJSON *it = (cJSON *)at_path(o, path);
    if (cJSON_IsNumber(it) && isfinite(v))
        cJSON_SetNumberHelper(it, it->valuedouble + v);
}

/*
 * A coll row's line ("allreduce/ring/4096", "allreduce/ring/float/sum/4096/cycle2": the size is the last number)
 * holds the out-of-place half's time_us, algbw_gbps and busbw_gbps: its phase gets them, and so does a
 * summary.collective_rows entry (the in-place half and #wrong are not in the line: null).
 */
static void coll_line(struct reader *rd, cJSON *ph, const char *phase, const cJSON *line)
{
    static const char *const figs[] = {"time_us", "algbw_gbps", "busbw_gbps"};
    cJSON *summary = cJSON_GetObjectItemCaseSensitive(rd->rebuilt_root, "summary");
    if (!summary)
        summary = cJSON_AddObjectToObject(rd->rebuilt_root, "summary");
    cJSON *rows = cJSON_GetObjectItemCaseSensitive(summary, "collective_rows");
    if (!rows)
        rows = cJSON_AddArrayToObject(summary, "collective_rows");
    char algo[64] = "", tok[64];
    double size = NAN;
    for (const char *p = strchr(phase, '/'); p && *p;) {
        size_t n = strcspn(++p, "/");
        snprintf(tok, sizeof tok, "%.*s", (int)(n < sizeof tok ? n : sizeof tok - 1), p);
        if (!algo[0])
            snprintf(algo, sizeof algo, "%s", tok);
        else if (tok[0] && strspn(tok, "0123456789") == strlen(tok))
            size = strtod(tok, NULL);
        p += n;
    }
    cJSON *row = cJSON_CreateObject(), *oop = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "coll", rb_rundir_str(line, "op") ? rb_rundir_str(line, "op") : "?");
    cJSON_AddStringToObject(row, "algo", algo);
    cJSON_AddNumberToObject(row, "size_bytes", size);
    for (size_t k = 0; k < sizeof figs / sizeof *figs; k++) {
        cJSON_DeleteItemFromObjectCaseSensitive(ph, figs[k]);
        cJSON_AddNumberToObject(ph, figs[k], rb_rundir_num(line, figs[k]));
        cJSON_AddNumberToObject(oop, figs[k], rb_rundir_num(line, figs[k]));
    }
    cJSON_AddNullToObject(oop, "wrong");
    cJSON_AddItemToObject(row, "oop", oop);
    cJSON_AddNullToObject(row, "ip");
    cJSON_AddItemToArray(rows, row);
}

/* One well-formed interval line: a point of the phase's series; a rebuilt phase when rebuilding. */
static void interval_line(struct reader *rd, const cJSON *line)
{
    const char *phase = rb_rundir_str(line, "phase");
    if (!phase)
        phase = "(unnamed)";
    double v[5] = {rb_rundir_num(line, "t_s"), NAN, iso_seconds(rb_rundir_str(line, "ts")), NAN, NAN};
    const cJSON *hosts = rb_rundir_array(line, "hosts");
    if (rd->flags & RB_RUNDIR_SERIES) {
        const cJSON *h;
        char name[300];
        cJSON_ArrayForEach(h, hosts)
        {
            const char *host = rb_rundir_str(h, "host");
            snprintf(name, sizeof name, "%s net rx+tx", host ? host : "?");
            v[1] = host_sum(h, "net", "rx_bytes_per_s") + host_sum(h, "net", "tx_bytes_per_s") +
                   host_sum(h, "ib", "rx_bytes_per_s") + host_sum(h, "ib", "tx_bytes_per_s");
            series_add(rd, name, v);
            snprintf(name, sizeof name, "%s disk r+w", host ? host : "?");
            v[1] = host_sum(h, "disk", "read_bytes_per_s") + host_sum(h, "disk", "write_bytes_per_s");
            series_add(rd, name, v);
        }
        if (!hosts) {
            v[1] = rb_rundir_num(line, "throughput_bytes_per_s");
            /* An interval that completed no request has no latency, not a latency of 0. */
            bool any = rb_rundir_num(line, "count") > 0;
            v[3] = any ? rb_rundir_num(line, "latency_ns.p50") : NAN;
            v[4] = any ? rb_rundir_num(line, "latency_ns.p99") : NAN;
            series_add(rd, phase, v);
        }
    }
    if (rd->rebuilt && !hosts) {
        cJSON *ph = rebuilt_phase(rd, phase, rb_rundir_str(line, "op"));
        if (!ph)
            return;
        add_to(ph, "count", rb_rundir_num(line, "count"));
        add_to(ph, "bytes", rb_rundir_num(line, "bytes"));
        add_to(ph, "duration_s", rb_rundir_num(line, "duration_s"));
        add_to(ph, "errors.total", rb_rundir_num(line, "errors.total"));
        add_to(ph, "interval_lines", 1);
        if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(line, "busbw_gbps")) && rd->rebuilt_root)
            coll_line(rd, ph, phase, line);
    }
}

/*
 * Reads intervals.jsonl line by line. A line that is not a JSON object is
 * skipped with one warning per file (a killed run leaves at most its last line
 * half written). Returns 0, or -ENOENT when there is no such file.
 */
static int read_intervals(struct rb_rundir *r, unsigned flags, cJSON *rebuilt_root)
{
    struct reader rd = {.r = r, .flags = flags, .rebuilt_root = rebuilt_root,
                        .rebuilt = cJSON_GetObjectItemCaseSensitive(rebuilt_root, "phases")};
    char path[4200];
    snprintf(path, sizeof path, "%s/intervals.jsonl", r->path);
    FILE *f = fopen(path, "rb");
    if (!f) {
        int rc = -errno;
        if (rc != -ENOENT)
            warn(r, "%s: cannot read: %s", path, strerror(-rc));
        return rc;
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0, bad = 0, first_bad = 0;
    bool bad_last_unterminated = false;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        bool terminated = len > 0 && line[len - 1] == '\n';
        size_t n = (size_t)len;
        while (n > 0 && strchr(" \t\r\n", line[n - 1]))
            n--;
        if (n == 0)
            continue;
        cJSON *j = cJSON_ParseWithLength(line, n);
        if (!cJSON_IsObject(j)) {
            cJSON_Delete(j);
            if (!bad++)
                first_bad = lineno;
            bad_last_unterminated = !terminated;
            continue;
        }
        r->interval_lines++;
        interval_line(&rd, j);
        cJSON_Delete(j);
    }
    free(line);
    index_free(&rd.series);
    index_free(&rd.phases);
    free(rd.phase_v);
    bool read_error = ferror(f) != 0;
    fclose(f);
    if (read_error)
        warn(r, "%s: read error after line %zu; the lines before it are used", path, lineno);
    if (bad == 1 && first_bad == lineno && bad_last_unterminated)
        warn(r, "%s: the last line (%zu) is truncated (run killed?); skipped", path, lineno);
    else if (bad)
        warn(r, "%s: %zu of %zu lines are not JSON objects (first: line %zu); skipped", path, bad, lineno,
             first_bad);
    return 0;
}

/* Percentile points of a histogram: p50, then 1/(1-q) = 10^(k/10) while the samples reach that far. */
static int add_curve(struct rb_rundir *r, const char *phase, const struct rb_hist *h)
{
    if (h->count < 2)
        return 0;
    size_t maxn = 2 + CURVE_STEPS_PER_DECADE * CURVE_MAX_DECADES;
    struct rb_curve c = {0};
    c.q_pct = malloc(maxn * sizeof *c.q_pct);
    c.lat_ns = malloc(maxn * sizeof *c.lat_ns);
    c.phase = strdup(phase);
    c.count = h->count;
    if (!c.q_pct || !c.lat_ns || !c.phase)
        goto fail;
    c.q_pct[c.n] = 50;
    c.lat_ns[c.n++] = (double)rb_hist_percentile(h, 50);
    /* k = 4 is x ~ 2.5 (p60); k = 10 p90, 20 p99, 30 p99.9, 40 p99.99. */
    for (int k = 4; k <= CURVE_STEPS_PER_DECADE * CURVE_MAX_DECADES && c.n < maxn; k++) {
        double x = pow(10.0, (double)k / CURVE_STEPS_PER_DECADE);
        if (x > (double)h->count * 1.0000001)
            break;
        double q = 100.0 * (1.0 - 1.0 / x);
        c.q_pct[c.n] = q;
        c.lat_ns[c.n++] = (double)rb_hist_percentile(h, q);
    }
    struct rb_curve *v = realloc(r->curves, (r->ncurves + 1) * sizeof *v);
    if (!v)
        goto fail;
    r->curves = v;
    v[r->ncurves++] = c;
    return 0;
fail:
    free(c.q_pct);
    free(c.lat_ns);
    free(c.phase);
    return -ENOMEM;
}

/* Drops what tables never read (histograms, per-host and per-rank detail), keeping curves when asked. */
static int prune(struct rb_rundir *r, unsigned flags)
{
    struct rb_hist *h = NULL;
    int rc = 0;
    cJSON *ph;
    size_t i = 0;
    cJSON_ArrayForEach(ph, (cJSON *)r->phases)
    {
        i++;
        if (!cJSON_IsObject(ph))
            continue;
        const cJSON *lh = cJSON_GetObjectItemCaseSensitive(ph, "latency_hist");
        if ((flags & RB_RUNDIR_CURVES) && lh && !cJSON_IsNull(lh)) {
            const char *name = rb_rundir_str(ph, "name");
            char fallback[32];
            if (!name) {
                snprintf(fallback, sizeof fallback, "phase %zu", i);
                name = fallback;
            }
            if (!h && !(h = rb_hist_new())) {
                rc = -ENOMEM;
                break;
            }
            if (rb_hist_from_json(lh, h) != 0)
                warn(r, "%s/result.json: phase \"%.100s\": latency_hist is malformed; no percentile curve", r->path,
                     name);
            else if ((rc = add_curve(r, name, h)) != 0)
                break;
        }
        static const char *const drop[] = {"latency_hist", "ttfb_hist", "latency_uncorrected_hist", "counters"};
        for (size_t k = 0; k < sizeof drop / sizeof drop[0]; k++)
            cJSON_DeleteItemFromObjectCaseSensitive(ph, drop[k]);
    }
    rb_hist_free(h);
    cJSON *p;
    cJSON_ArrayForEach(p, (cJSON *)rb_rundir_array(r->summary, "block_points"))
    {
        if (cJSON_IsObject(p))
            cJSON_DeleteItemFromObjectCaseSensitive(p, "per_rank");
    }
    return rc;
}

/* Parses result.json into r->root. Returns 0, -ENOENT (no file) or another -errno after a warning. */
static int read_result(struct rb_rundir *r)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/result.json", r->path);
    char *buf = NULL;
    size_t len = 0;
    int rc = rb_file_read(path, RESULT_MAX_BYTES, &buf, &len);
    if (rc == -ENOENT)
        return rc;
    if (rc == -EFBIG) {
        warn(r, "%s: larger than %u MiB; not a railbench result", path, RESULT_MAX_BYTES >> 20);
        return rc;
    }
    if (rc) {
        warn(r, "%s: cannot read: %s", path, strerror(-rc));
        return rc;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
    if (!root) {
        char where[96];
        parse_problem(where, sizeof where, buf, len, end);
        warn(r, "%s: %s", path, len ? where : "empty file");
        free(buf);
        return -EINVAL;
    }
    free(buf);
    if (!cJSON_IsObject(root)) {
        warn(r, "%s: not a JSON object", path);
        cJSON_Delete(root);
        return -EINVAL;
    }
    const char *schema = rb_rundir_str(root, "schema");
    if (!schema)
        warn(r, "%s: no \"schema\"; reading it as " RB_RESULT_SCHEMA, path);
    else if (strcmp(schema, RB_RESULT_SCHEMA) != 0)
        warn(r, "%s: schema \"%.80s\" is not " RB_RESULT_SCHEMA "; reading what matches", path, schema);
    const cJSON *phases = cJSON_GetObjectItemCaseSensitive(root, "phases");
    if (phases && !cJSON_IsArray(phases))
        warn(r, "%s: \"phases\" is not an array; ignored", path);
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(root, "labels");
    if (labels && !cJSON_IsObject(labels) && !cJSON_IsNull(labels))
        warn(r, "%s: \"labels\" is not an object; ignored", path);
    const char *cmd = rb_rundir_str(root, "command");
    if (!cmd)
        warn(r, "%s: no \"command\"; shown as phases only", path);
    r->root = root;
    r->phases = cJSON_IsArray(phases) ? phases : NULL;
    r->labels = cJSON_IsObject(labels) ? labels : NULL;
    r->summary = cJSON_GetObjectItemCaseSensitive(root, "summary");
    free(r->command);
    r->command = strdup(cmd ? cmd : "");
    return r->command ? 0 : -ENOMEM;
}

int rb_rundir_load(struct rb_rundir *r, const char *dir, unsigned flags)
{
    memset(r, 0, sizeof *r);
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    r->path = strndup(dir, len);
    if (!r->path)
        return -ENOMEM;
    const char *slash = strrchr(r->path, '/');
    r->name = strdup(slash && slash[1] ? slash + 1 : r->path);
    r->command = strdup("");
    if (!r->name || !r->command)
        return -ENOMEM;
    struct stat st;
    if (stat(r->path, &st) != 0)
        return -errno;
    if (!S_ISDIR(st.st_mode))
        return -ENOTDIR;

    int rc = read_result(r);
    if (rc == -ENOMEM)
        return rc;
    if (rc == 0) {
        if ((rc = prune(r, flags)) != 0)
            return rc;
        if (flags & RB_RUNDIR_SERIES)
            read_intervals(r, flags, NULL);
        return 0;
    }

    /* No usable result.json: what the intervals counted is still worth a row. */
    bool had_result = rc != -ENOENT;
    cJSON *root = cJSON_CreateObject();
    cJSON *phases = root ? cJSON_AddArrayToObject(root, "phases") : NULL;
    if (!phases) {
        cJSON_Delete(root);
        return -ENOMEM;
    }
    rc = read_intervals(r, flags, root);
    if (rc || cJSON_GetArraySize(phases) == 0) {
        cJSON_Delete(root);
        if (rc == -ENOENT && !had_result)
            warn(r, "%s: no result.json or intervals.jsonl; not a result directory", r->path);
        else if (rc == -ENOENT)
            warn_more(r, "; no intervals.jsonl to fall back on, so nothing to report");
        else
            warn(r, "%s/intervals.jsonl: no phase lines; nothing to report", r->path);
        return -ENODATA;
    }
    cJSON *ph;
    cJSON_ArrayForEach(ph, phases)
    {
        double d = rb_rundir_num(ph, "duration_s"), b = rb_rundir_num(ph, "bytes"), n = rb_rundir_num(ph, "count");
        cJSON_AddNumberToObject(ph, "throughput_bytes_per_s", d > 0 ? b / d : NAN); /* no duration: not measured */
        cJSON_AddNumberToObject(ph, "ops_per_s", d > 0 ? n / d : NAN);
    }
    cJSON_AddBoolToObject(root, "partial", true);
    cJSON_AddBoolToObject(root, "rebuilt", true);
    /* coll's rows name their collective: the run was "coll <it>", and its report draws them. */
    const cJSON *first = cJSON_GetArrayItem(rb_rundir_array(cJSON_GetObjectItemCaseSensitive(root, "summary"),
                                                            "collective_rows"), 0);
    if (first) {
        char cmd[96];
        snprintf(cmd, sizeof cmd, "coll %s", rb_rundir_str(first, "coll"));
        char *c = strdup(cmd);
        if (c) {
            free(r->command);
            r->command = c;
            cJSON_AddStringToObject(root, "command", cmd);
        }
    }
    r->summary = cJSON_GetObjectItemCaseSensitive(root, "summary");
    r->root = root;
    r->phases = phases;
    r->partial = true;
    warn(r, "%s: %s; %zu phase(s) rebuilt from %zu interval lines (latency percentiles not available)", r->path,
         had_result ? "result.json unusable" : "no result.json (run killed or still running?)",
         (size_t)cJSON_GetArraySize(phases), r->interval_lines);
    return 0;
}

void rb_rundir_free(struct rb_rundir *r)
{
    if (!r)
        return;
    free(r->path);
    free(r->name);
    free(r->command);
    cJSON_Delete(r->root);
    for (size_t i = 0; i < r->nseries; i++) {
        free(r->series[i].name);
        free(r->series[i].t_s);
        free(r->series[i].bytes_per_s);
        free(r->series[i].at_s);
        free(r->series[i].p50_ns);
        free(r->series[i].p99_ns);
    }
    free(r->series);
    for (size_t i = 0; i < r->ncurves; i++) {
        free(r->curves[i].phase);
        free(r->curves[i].q_pct);
        free(r->curves[i].lat_ns);
    }
    free(r->curves);
    for (size_t i = 0; i < r->nwarnings; i++)
        free(r->warnings[i]);
    free(r->warnings);
    memset(r, 0, sizeof *r);
}
