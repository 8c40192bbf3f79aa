/* fio job files for railbench block and the parser of fio's JSON (json+) output. */
#define _POSIX_C_SOURCE 200809L
#include "block_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "railbench/file.h"
#include "railbench/units.h"

const double rb_fio_pct[RB_FIO_PCTS] = {50.0, 90.0, 99.0, 99.9, 99.99};
const char *const rb_fio_pct_key[RB_FIO_PCTS] = {"p50", "p90", "p99", "p999", "p9999"};

/* Largest fio output we read: a json+ point is tens of KiB; anything near this is not fio's. */
#define MAX_FIO_JSON_BYTES (64 * RB_MIB)

static void seterr(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t len, const char *fmt, ...)
{
    if (!err || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

const char *rb_fio_value_problem(const char *value)
{
    if (!value || !*value)
        return "is empty";
    size_t n = strlen(value);
    if (value[0] == ' ' || value[0] == '\t' || value[n - 1] == ' ' || value[n - 1] == '\t')
        return "starts or ends with a blank, which fio strips from job file values";
    for (const unsigned char *c = (const unsigned char *)value; *c; c++) {
        if (*c < 0x20 || *c == 0x7f)
            return "contains a control character (a line break ends a job file value)";
        if (*c == ';' || *c == '#')
            return "contains ';' or '#', which fio job files read as the start of a comment";
        if (*c == '$')
            return "contains '$', which fio expands in job files (${VAR}, $ncpus)";
    }
    return NULL;
}

static bool is_word(const char *s, const char *extra)
{
    if (!s || !*s)
        return false;
    for (; *s; s++) {
        bool ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                  *s == '_' || (extra && strchr(extra, *s));
        if (!ok)
            return false;
    }
    return true;
}

/* Appends to buf at *off; false once the text no longer fits. */
static bool vput(char *buf, size_t len, size_t *off, const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));
static bool vput(char *buf, size_t len, size_t *off, const char *fmt, va_list ap)
{
    if (*off >= len)
        return false;
    int n = vsnprintf(buf + *off, len - *off, fmt, ap);
    if (n < 0 || (size_t)n >= len - *off) {
        *off = len;
        return false;
    }
    *off += (size_t)n;
    return true;
}

static bool put(char *buf, size_t len, size_t *off, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool put(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool ok = vput(buf, len, off, fmt, ap);
    va_end(ap);
    return ok;
}

/*
 * Every fio option railbench sets for a point, on fio's command line or in
 * the job file, and what in railbench sets it. The job file and the command
 * line are written from this table only (through put_key and rb_fio_cmdline),
 * so the keys a --fio-opt item may not set are exactly the ones railbench writes.
 */
enum fio_key {
    K_OUTPUT_FORMAT, K_OUTPUT, K_ETA, K_READONLY,                      /* command line */
    K_IOENGINE, K_DIRECT, K_FILENAME, K_SIZE, K_RW, K_RWMIXREAD, K_BS, /* job file */
    K_IODEPTH, K_NUMJOBS, K_GROUP_REPORTING, K_TIME_BASED, K_RUNTIME, K_RAMP_TIME,
    K_CLAT_PERCENTILES, K_LAT_PERCENTILES, K_PERCENTILE_LIST, K_NKEYS
};

static const struct {
    const char *key;
    const char *owner; /* "--opt" when a railbench option sets it, else why railbench needs its own value */
} fio_keys[K_NKEYS] = {
    [K_OUTPUT_FORMAT] = {"output-format", "railbench itself (it reads fio's json+ output)"},
    [K_OUTPUT] = {"output", "railbench itself (points/RANK/POINT.json)"},
    [K_ETA] = {"eta", "railbench itself (fio's output goes to a log)"},
    [K_READONLY] = {"readonly", "--rw"},
    [K_IOENGINE] = {"ioengine", "--engine"},
    [K_DIRECT] = {"direct", "--direct"},
    [K_FILENAME] = {"filename", "--target"},
    [K_SIZE] = {"size", "--size"},
    [K_RW] = {"rw", "--rw"},
    [K_RWMIXREAD] = {"rwmixread", "--rwmix"},
    [K_BS] = {"bs", "--bs"},
    [K_IODEPTH] = {"iodepth", "--iodepth"},
    [K_NUMJOBS] = {"numjobs", "--numjobs"},
    [K_GROUP_REPORTING] = {"group_reporting", "railbench itself (one result per point)"},
    [K_TIME_BASED] = {"time_based", "--runtime"},
    [K_RUNTIME] = {"runtime", "--runtime"},
    [K_RAMP_TIME] = {"ramp_time", "--ramp"},
    [K_CLAT_PERCENTILES] = {"clat_percentiles", "railbench itself (the percentiles it reports)"},
    [K_LAT_PERCENTILES] = {"lat_percentiles", "railbench itself (the percentiles it reports)"},
    [K_PERCENTILE_LIST] = {"percentile_list", "railbench itself (the percentiles it reports)"},
};

const char *rb_fio_key_owner(const char *key, size_t len)
{
    for (int k = 0; k < K_NKEYS; k++)
        if (strlen(fio_keys[k].key) == len && strncmp(fio_keys[k].key, key, len) == 0)
            return fio_keys[k].owner;
    return NULL;
}

/* Appends "KEY=VALUE\n" for a key of the table; false once the text no longer fits. */
static bool put_key(char *buf, size_t len, size_t *off, enum fio_key k, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static bool put_key(char *buf, size_t len, size_t *off, enum fio_key k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool ok = put(buf, len, off, "%s=", fio_keys[k].key) && vput(buf, len, off, fmt, ap) && put(buf, len, off, "\n");
    va_end(ap);
    return ok;
}

/* s for a one-line message: control characters as \xNN. */
static void printable(char *out, size_t len, const char *s)
{
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c && n + 5 < len; c++)
        n += (size_t)snprintf(out + n, len - n, *c < 0x20 || *c == 0x7f ? "\\x%02x" : "%c", *c);
    out[n < len ? n : 0] = '\0';
}

int rb_fio_opt_check(const char *item, char *err, size_t errlen)
{
    size_t klen = strcspn(item, "=");
    const char *why = NULL;
    if (klen == 0)
        why = "has no key (KEY or KEY=VALUE, e.g. cpus_allowed=0-1 or hipri)";
    else if (strpbrk(item, "[]"))
        why = "contains '[' or ']', which start a new section of a fio job file";
    else if (item[klen] == '=' && !item[klen + 1])
        why = "has an empty value; write KEY alone for a flag (e.g. hipri)";
    else if (rb_fio_value_problem(item))
        why = rb_fio_value_problem(item);
    const char *owner = why ? NULL : rb_fio_key_owner(item, klen);
    if (owner && owner[0] == '-')
        seterr(err, errlen, "'%s': railbench sets %.*s from %s; use that option", item, (int)klen, item, owner);
    else if (owner)
        seterr(err, errlen, "'%s': %.*s is set by %s", item, (int)klen, item, owner);
    if (owner)
        return -EEXIST;
    /* After the owner check, so that a command-line key railbench sets (output-format) is named as such. */
    if (!why && strspn(item, "abcdefghijklmnopqrstuvwxyz0123456789_") != klen)
        why = "has a key that is not a fio option name (lower-case letters, digits, '_')";
    if (why) {
        char shown[200];
        printable(shown, sizeof shown, item);
        seterr(err, errlen, "'%s' %s", shown, why);
        return -EINVAL;
    }
    return 0;
}

void rb_fio_cmdline(struct rb_fio_cmdline *c, const char *json_path, const char *job_path, bool readonly)
{
    size_t a = 0;
    snprintf(c->format_arg, sizeof c->format_arg, "--%s=json+", fio_keys[K_OUTPUT_FORMAT].key);
    snprintf(c->output_arg, sizeof c->output_arg, "--%s=%s", fio_keys[K_OUTPUT].key, json_path);
    snprintf(c->eta_arg, sizeof c->eta_arg, "--%s=never", fio_keys[K_ETA].key);
    snprintf(c->readonly_arg, sizeof c->readonly_arg, "--%s", fio_keys[K_READONLY].key);
    snprintf(c->job_path, sizeof c->job_path, "%s", job_path);
    c->argv[a++] = "fio";
    c->argv[a++] = c->format_arg;
    c->argv[a++] = c->output_arg;
    c->argv[a++] = c->eta_arg;
    if (readonly)
        c->argv[a++] = c->readonly_arg;
    c->argv[a++] = c->job_path;
    c->argv[a] = NULL;
}

/* The options railbench writes for the point, in the [global] section. */
static bool put_own_keys(const struct rb_fio_job *job, char *buf, size_t len, size_t *off)
{
    bool ok = put_key(buf, len, off, K_IOENGINE, "%s", job->engine) &&
              put_key(buf, len, off, K_DIRECT, "%d", job->direct ? 1 : 0) &&
              put(buf, len, off, "%s=", fio_keys[K_FILENAME].key);
    /* fio separates several files with ':'; a literal one is written "\:". */
    for (const char *c = job->filename; ok && *c; c++)
        ok = *c == ':' ? put(buf, len, off, "\\:") : put(buf, len, off, "%c", *c);
    ok = ok && put(buf, len, off, "\n");
    if (ok && job->size_bytes)
        ok = put_key(buf, len, off, K_SIZE, "%" PRIu64, job->size_bytes);
    ok = ok && put_key(buf, len, off, K_RW, "%s", job->rw);
    if (ok && strcmp(job->rw, "randrw") == 0)
        ok = put_key(buf, len, off, K_RWMIXREAD, "%u", job->rwmix_read_pct);
    ok = ok && put_key(buf, len, off, K_BS, "%" PRIu64, job->bs_bytes) &&
         put_key(buf, len, off, K_IODEPTH, "%" PRIu64, job->iodepth) &&
         put_key(buf, len, off, K_NUMJOBS, "%" PRIu64, job->numjobs) &&
         put_key(buf, len, off, K_GROUP_REPORTING, "1") && put_key(buf, len, off, K_TIME_BASED, "1") &&
         put_key(buf, len, off, K_RUNTIME, "%" PRIu64 "ms", (job->runtime_ns + 999999) / 1000000);
    if (ok && job->ramp_ns)
        ok = put_key(buf, len, off, K_RAMP_TIME, "%" PRIu64 "ms", (job->ramp_ns + 999999) / 1000000);
    /* Both latency kinds with the same list, so clat and total latency percentiles and bins all appear. */
    return ok && put_key(buf, len, off, K_CLAT_PERCENTILES, "1") && put_key(buf, len, off, K_LAT_PERCENTILES, "1") &&
           put_key(buf, len, off, K_PERCENTILE_LIST, "50:90:99:99.9:99.99");
}

int rb_fio_job_text(const struct rb_fio_job *job, char *buf, size_t len)
{
    if (!is_word(job->name, ".-") || !is_word(job->engine, NULL) || !is_word(job->rw, NULL) ||
        rb_fio_value_problem(job->filename) || job->bs_bytes == 0 || job->iodepth == 0 ||
        job->numjobs == 0 || job->runtime_ns == 0)
        return -EINVAL;
    for (size_t i = 0; i < job->nextra; i++)
        if (rb_fio_opt_check(job->extra[i], NULL, 0) != 0)
            return -EINVAL;
    if (!len)
        return -ENOSPC;
    size_t off = 0;
    bool ok = put(buf, len, &off,
                  "; railbench block point %s (generated). Run by hand with:\n"
                  ";   fio --output-format=json+ --output=%s.json %s.fio\n[global]\n",
                  job->name, job->name, job->name) &&
              put_own_keys(job, buf, len, &off);
    if (ok && job->nextra)
        ok = put(buf, len, &off, "; --fio-opt\n");
    for (size_t i = 0; ok && i < job->nextra; i++)
        ok = put(buf, len, &off, "%s\n", job->extra[i]);
    ok = ok && put(buf, len, &off, "\n[%s]\n", job->name);
    return ok ? (int)off : -ENOSPC;
}

/* Parsing. Every lookup names the path of what is missing, so the error tells which field of which job. */

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* The object o.k, or NULL with err naming its path (and a hint, "" for none). */
static const cJSON *need_obj(const cJSON *o, const char *k, const char *path, const char *hint, char *err,
                             size_t errlen)
{
    const cJSON *v = get(o, k);
    if (!cJSON_IsObject(v)) {
        seterr(err, errlen, "fio JSON has no object %s%s", path, hint);
        return NULL;
    }
    return v;
}

static int need_num(const cJSON *o, const char *path, const char *k, double *out, char *err, size_t errlen)
{
    const cJSON *v = get(o, k);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0) {
        seterr(err, errlen, "fio JSON has no non-negative number %s.%s", path, k);
        return -EINVAL;
    }
    *out = v->valuedouble;
    return 0;
}

/* A count or byte total: a whole number that a double holds exactly. */
static int need_u64(const cJSON *o, const char *path, const char *k, uint64_t *out, char *err, size_t errlen)
{
    double d;
    if (need_num(o, path, k, &d, err, errlen))
        return -EINVAL;
    if (d != floor(d) || d < 0 || d > 9007199254740992.0) {
        seterr(err, errlen, "fio JSON %s.%s is not a whole number >= 0: %.17g", path, k, d);
        return -EINVAL;
    }
    *out = (uint64_t)d;
    return 0;
}

static int parse_u64_text(const char *s, uint64_t *v)
{
    if (!s || *s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    char *end = NULL;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end)
        return -EINVAL;
    *v = (uint64_t)x;
    return 0;
}

/* Reads percentile{} ("99.000000": ns) into pct_ns when every wanted percentile is there. */
static void read_percentiles(const cJSON *pobj, struct rb_fio_lat *l)
{
    bool found[RB_FIO_PCTS] = {false};
    const cJSON *it;
    cJSON_ArrayForEach(it, pobj)
    {
        char *end = NULL;
        double q = strtod(it->string, &end);
        if (end == it->string || !cJSON_IsNumber(it) || !(it->valuedouble >= 0) ||
            it->valuedouble > 9007199254740992.0)
            continue;
        for (int i = 0; i < RB_FIO_PCTS; i++)
            if (fabs(q - rb_fio_pct[i]) < 1e-6) {
                l->pct_ns[i] = (uint64_t)it->valuedouble;
                found[i] = true;
            }
    }
    l->have_pct = true;
    for (int i = 0; i < RB_FIO_PCTS; i++)
        l->have_pct = l->have_pct && found[i];
}

/*
 * One latency object of one job. Several jobs combine: min of mins, max of
 * maxes, mean weighted by I/O count; their percentiles cannot be combined,
 * so those are kept only for a single job.
 */
static int parse_lat(const cJSON *job_dir, const char *path, const char *kind, uint64_t prev_ios, uint64_t ios,
                     bool first_job, struct rb_fio_lat *l, struct rb_hist *h, char *err, size_t errlen)
{
    char p[96];
    snprintf(p, sizeof p, "%s.%s", path, kind);
    const cJSON *o = need_obj(job_dir, kind, p, " (fio >= 3.0 writes latencies in ns)", err, errlen);
    if (!o)
        return -EINVAL;
    uint64_t mn, mx;
    double mean;
    if (need_u64(o, p, "min", &mn, err, errlen) || need_u64(o, p, "max", &mx, err, errlen) ||
        need_num(o, p, "mean", &mean, err, errlen))
        return -EINVAL;
    if (ios > 0) {
        if (prev_ios == 0 || mn < l->min_ns)
            l->min_ns = mn;
        if (mx > l->max_ns)
            l->max_ns = mx;
        l->mean_ns = (l->mean_ns * (double)prev_ios + mean * (double)ios) / (double)(prev_ios + ios);
    }
    if (first_job)
        read_percentiles(get(o, "percentile"), l);
    else
        l->have_pct = false;

    const cJSON *bins = get(o, "bins"), *b;
    uint64_t counted = 0;
    cJSON_ArrayForEach(b, bins)
    {
        uint64_t v;
        if (parse_u64_text(b->string, &v) || !cJSON_IsNumber(b) || !(b->valuedouble >= 0) ||
            b->valuedouble > 9007199254740992.0 || b->valuedouble != floor(b->valuedouble)) {
            seterr(err, errlen, "fio JSON %s.bins has a bad entry \"%s\"", p, b->string ? b->string : "");
            return -EINVAL;
        }
        uint64_t n = (uint64_t)b->valuedouble;
        if (h)
            rb_hist_record_n(h, v, n);
        counted += n;
    }
    l->bins += counted;
    return 0;
}

static int parse_dir(const cJSON *job, int j, const char *name, bool first_job, struct rb_fio_dir *d,
                     struct rb_hist *clat, struct rb_hist *lat, char *err, size_t errlen)
{
    char path[64];
    snprintf(path, sizeof path, "jobs[%d].%s", j, name);
    const cJSON *o = need_obj(job, name, path, "", err, errlen);
    if (!o)
        return -EINVAL;
    double iops, bw;
    uint64_t io_bytes, ios, runtime;
    if (need_num(o, path, "iops", &iops, err, errlen) || need_num(o, path, "bw_bytes", &bw, err, errlen) ||
        need_u64(o, path, "io_bytes", &io_bytes, err, errlen) ||
        need_u64(o, path, "total_ios", &ios, err, errlen) ||
        need_u64(o, path, "runtime", &runtime, err, errlen))
        return -EINVAL;
    uint64_t prev_ios = d->total_ios;
    d->iops += iops;
    d->bw_bytes_per_s += bw;
    d->io_bytes += io_bytes;
    d->total_ios += ios;
    if (runtime > d->runtime_ms)
        d->runtime_ms = runtime;
    if (parse_lat(o, path, "clat_ns", prev_ios, ios, first_job, &d->clat, clat, err, errlen) ||
        parse_lat(o, path, "lat_ns", prev_ios, ios, first_job, &d->lat, lat, err, errlen))
        return -EINVAL;
    return 0;
}

int rb_fio_parse(const char *text, struct rb_fio_result *r, struct rb_hist *clat, struct rb_hist *lat,
                 char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->disk_util_pct = -1;
    const char *start = text;
    while (*start != '{') {
        const char *nl = strchr(start, '\n');
        if (!nl) {
            seterr(err, errlen, "no JSON object in fio output (%zu bytes; empty or not JSON)", strlen(text));
            return -EINVAL;
        }
        start = nl + 1;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(start, &end, 0);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t total = strlen(text);
        size_t off = at && at >= text && at <= text + total ? (size_t)(at - text) : total;
        seterr(err, errlen, "malformed or truncated fio JSON (parse error at byte %zu of %zu)", off, total);
        return -EINVAL;
    }
    int rc = -EINVAL;
    const cJSON *ver = get(root, "fio version");
    if (cJSON_IsString(ver))
        snprintf(r->version, sizeof r->version, "%s", ver->valuestring);
    const cJSON *jobs = get(root, "jobs");
    if (!cJSON_IsArray(jobs) || cJSON_GetArraySize(jobs) == 0) {
        seterr(err, errlen, "fio JSON has no jobs[] (did fio run any job?)");
        goto fail;
    }
    const cJSON *job;
    int j = 0;
    cJSON_ArrayForEach(job, jobs)
    {
        double e = cJSON_GetNumberValue(get(job, "error"));
        if (!r->job_error && e == e && e != 0)
            r->job_error = (e >= 1 && e <= 4095) ? (int)e : -1; /* fio reports an errno; anything else is "failed" */
        if (parse_dir(job, j, "read", j == 0, &r->read, clat, lat, err, errlen) ||
            parse_dir(job, j, "write", j == 0, &r->write, clat, lat, err, errlen))
            goto fail;
        j++;
    }
    r->njobs = j;
    const cJSON *du;
    cJSON_ArrayForEach(du, get(root, "disk_util"))
    {
        double u = cJSON_GetNumberValue(get(du, "util"));
        const cJSON *name = get(du, "name");
        if (u == u && u > r->disk_util_pct) {
            r->disk_util_pct = u;
            snprintf(r->disk, sizeof r->disk, "%s", cJSON_IsString(name) ? name->valuestring : "");
        }
    }
    rc = 0;
fail:
    cJSON_Delete(root);
    return rc;
}

int rb_fio_parse_file(const char *path, struct rb_fio_result *r, struct rb_hist *clat, struct rb_hist *lat,
                      char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    int rc = rb_file_read(path, MAX_FIO_JSON_BYTES, &text, &len);
    if (rc == -EFBIG)
        seterr(err, errlen, "%s: larger than %u MiB, not fio output", path, (unsigned)(MAX_FIO_JSON_BYTES / RB_MIB));
    else if (rc == -ENOMEM)
        seterr(err, errlen, "%s: out of memory", path);
    else if (rc == -EIO || rc == -EISDIR)
        seterr(err, errlen, "cannot read %s", path);
    else if (rc)
        seterr(err, errlen, "cannot open %s: %s", path, strerror(-rc));
    else if (memchr(text, '\0', len)) {
        rc = -EINVAL;
        seterr(err, errlen, "%s: contains NUL bytes, not fio JSON", path);
    } else
        rc = rb_fio_parse(text, r, clat, lat, err, errlen);
    free(text);
    return rc;
}
