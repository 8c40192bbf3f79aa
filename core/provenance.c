/* provenance.json: what a run of load train or load checkpoint was, fixed by a hash of its core configuration. */
#define _POSIX_C_SOURCE 200809L
#include "railbench/provenance.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "railbench/clock.h"
#include "railbench/file.h"
#include "railbench/log.h"
#include "railbench/result.h"

#ifndef RB_GIT_COMMIT
#define RB_GIT_COMMIT "unknown"
#endif

static void put_string(struct rb_buf *b, const char *s)
{
    rb_buf_append(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        static const char short_esc[] = {['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'};
        if (*p == '"' || *p == '\\')
            rb_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20 && *p < sizeof short_esc && short_esc[*p])
            rb_buf_printf(b, "\\%c", short_esc[*p]);
        else if (*p < 0x20)
            rb_buf_printf(b, "\\u%04x", *p);
        else
            rb_buf_append(b, p, 1);
    }
    rb_buf_append(b, "\"", 1);
}

static int put_number(struct rb_buf *b, double v)
{
    if (!isfinite(v))
        return -EINVAL;
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        rb_buf_printf(b, "%.0f", v == 0 ? 0.0 : v);
        return 0;
    }
    char s[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, v);
        if (strtod(s, NULL) == v)
            break;
    }
    rb_buf_printf(b, "%s", s);
    return 0;
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

static int put_object(const cJSON *v, struct rb_buf *b)
{
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    const cJSON **kids = n ? malloc(n * sizeof *kids) : NULL;
    if (n && !kids)
        return -ENOMEM;
    const cJSON *c;
    cJSON_ArrayForEach(c, v) kids[i++] = c;
    qsort(kids, n, sizeof *kids, key_cmp);
    int rc = 0;
    rb_buf_append(b, "{", 1);
    for (i = 0; i < n && !rc; i++) {
        if (i)
            rb_buf_append(b, ",", 1);
        put_string(b, kids[i]->string);
        rb_buf_append(b, ":", 1);
        rc = rb_json_canonical(kids[i], b);
    }
    rb_buf_append(b, "}", 1);
    free(kids);
    return rc;
}

int rb_json_canonical(const cJSON *v, struct rb_buf *b)
{
    int rc = 0;
    if (cJSON_IsNull(v))
        rb_buf_printf(b, "null");
    else if (cJSON_IsBool(v))
        rb_buf_printf(b, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNumber(v))
        rc = put_number(b, v->valuedouble);
    else if (cJSON_IsString(v))
        put_string(b, v->valuestring);
    else if (cJSON_IsArray(v)) {
        rb_buf_append(b, "[", 1);
        const cJSON *c;
        bool first = true;
        cJSON_ArrayForEach(c, v)
        {
            if (!first)
                rb_buf_append(b, ",", 1);
            first = false;
            if ((rc = rb_json_canonical(c, b)) != 0)
                break;
        }
        rb_buf_append(b, "]", 1);
    } else if (cJSON_IsObject(v))
        rc = put_object(v, b);
    else
        rc = -EINVAL;
    return rc ? rc : b->oom ? -ENOMEM : 0;
}

int rb_json_sha256(const cJSON *v, char hex[65])
{
    struct rb_buf b = {0};
    int rc = rb_json_canonical(v, &b);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!rc && !EVP_Digest(b.s ? b.s : "", b.len, md, &mdlen, EVP_sha256(), NULL))
        rc = -ENOMEM;
    rb_buf_free(&b);
    if (rc)
        return rc;
    for (unsigned int i = 0; i < mdlen && i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    hex[64] = '\0';
    return 0;
}

/*
 * The allow-listed core configuration, the one list: for each command the
 * options MLPerf Storage's closed rules fix, each a key of the core record
 * and where the result record holds its resolved value ("a.b.c"; a '|'
 * separates places tried in turn, the first holding a value winning).
 */
static const struct core_key {
    const char *command, *key, *path;
} core_keys[] = {
    {"load train", "workload", "summary.workload.preset|summary.workload"},
    {"load train", "format", "config.format"},
    {"load train", "sample_bytes", "summary.workload.sample_bytes"},
    {"load train", "sample_stdev_bytes", "summary.workload.sample_stdev_bytes"},
    {"load train", "samples_per_object", "summary.workload.samples_per_object"},
    {"load train", "batch_size", "summary.workload.batch_size"},
    {"load train", "compute_ns", "summary.workload.compute_ns"},
    {"load train", "compute_stdev_ns", "summary.workload.compute_stdev_ns"},
    {"load train", "read_threads", "summary.workload.read_threads"},
    {"load train", "accelerators_per_rank", "summary.accelerators_per_rank"},
    {"load train", "epochs", "config.epochs"},
    {"load train", "steps", "config.steps"},
    {"load train", "dataset_objects", "summary.dataset.objects"},
    {"load train", "dataset_samples", "summary.dataset.samples"},
    {"load train", "dataset_bytes", "summary.dataset.bytes"},
    {"load train", "au_min_pct", "summary.au_min_pct"},
    {"load train", "grad_bytes", "summary.workload.grad_bytes"},
    {"load train", "checkpoint_every", "config.checkpoint-every"},
    {"load train", "checkpoint_size", "config.checkpoint-size"},
    {"load train", "ranks", "mpi.size"},
    {"load train", "hosts", "mpi.hosts"},
    {"load checkpoint", "model", "summary.model.name"},
    {"load checkpoint", "params", "summary.model.params"},
    {"load checkpoint", "tp", "summary.model.tp"},
    {"load checkpoint", "pp", "summary.model.pp"},
    {"load checkpoint", "dp", "summary.model.dp"},
    {"load checkpoint", "zero", "summary.model.zero"},
    {"load checkpoint", "model_ranks", "summary.model.ranks"},
    {"load checkpoint", "checkpoint_bytes", "summary.checkpoint_bytes"},
    {"load checkpoint", "scale", "summary.scale"},
    {"load checkpoint", "subset", "summary.subset"},
    {"load checkpoint", "mode", "summary.mode"},
    {"load checkpoint", "writes", "config.writes"},
    {"load checkpoint", "reads", "config.reads"},
    {"load checkpoint", "recovery_rank_shift", "summary.recovery_rank_shift"},
    {"load checkpoint", "fsync", "summary.file.fsync"},
    {"load checkpoint", "ranks", "mpi.size"},
    {"load checkpoint", "hosts", "mpi.hosts"},
};

/* The leaf (not an object or array) at one dotted path of root, or NULL. */
static const cJSON *leaf_at(const cJSON *root, const char *path, size_t len)
{
    const cJSON *at = root;
    while (len && at) {
        const char *dot = memchr(path, '.', len);
        size_t n = dot ? (size_t)(dot - path) : len;
        char key[64];
        if (n >= sizeof key || !cJSON_IsObject(at))
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        at = cJSON_GetObjectItemCaseSensitive(at, key);
        path += n + (dot ? 1 : 0);
        len -= n + (dot ? 1 : 0);
    }
    return at && !cJSON_IsObject(at) && !cJSON_IsArray(at) && !cJSON_IsNull(at) ? at : NULL;
}

cJSON *rb_provenance_core(const cJSON *root)
{
    const char *command = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "command"));
    if (!command)
        return NULL;
    cJSON *core = NULL;
    for (size_t i = 0; i < sizeof core_keys / sizeof core_keys[0]; i++) {
        if (strcmp(core_keys[i].command, command) != 0)
            continue;
        if (!core && !(core = cJSON_CreateObject()))
            return NULL;
        const cJSON *v = NULL;
        for (const char *p = core_keys[i].path; *p && !v;) {
            size_t n = strcspn(p, "|");
            v = leaf_at(root, p, n);
            p += n + (p[n] == '|');
        }
        cJSON *item = v ? cJSON_Duplicate(v, 0) : cJSON_CreateNull();
        if (!item || !cJSON_AddItemToObject(core, core_keys[i].key, item)) {
            cJSON_Delete(item);
            cJSON_Delete(core);
            return NULL;
        }
    }
    if (core)
        cJSON_AddStringToObject(core, "command", command);
    return core;
}

/* How the page cache was kept from serving reads: the checkpoint's flush, or file://'s --drop-cache. */
static void add_cache(cJSON *p, const cJSON *root)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "summary");
    const char *flush = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "cache_flush"));
    const char *files = cJSON_GetStringValue(leaf_at(root, "summary.file.drop_cache", 23));
    bool dropped = false;
    const char *how = "none";
    if (flush && strcmp(flush, "drop_caches") == 0) {
        how = flush;
        dropped = true;
        const cJSON *h;
        cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(s, "cache_drop")) dropped &=
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(h, "dropped"));
    } else if (flush) {
        how = flush;
    } else if (files && strcmp(files, "none") != 0) {
        how = strcmp(files, "host") == 0 ? "host" : "files";
        dropped = true;
    }
    cJSON_AddStringToObject(p, "cache_drop", how);
    cJSON_AddBoolToObject(p, "caches_dropped", dropped);
}

static void add_hosts(cJSON *p, const cJSON *root)
{
    cJSON *hosts = cJSON_AddArrayToObject(p, "hosts");
    double total = 0;
    bool known = true;
    const cJSON *h;
    cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(root, "hosts"))
    {
        cJSON *o = cJSON_CreateObject();
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(h, "name"));
        const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(h, "ranks");
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(h, "memory_bytes");
        cJSON_AddStringToObject(o, "name", name ? name : "?");
        cJSON_AddItemToObject(o, "ranks", cJSON_IsNumber(ranks) ? cJSON_CreateNumber(ranks->valuedouble)
                                                                 : cJSON_CreateNull());
        bool mem_ok = cJSON_IsNumber(mem) && mem->valuedouble > 0;
        cJSON_AddItemToObject(o, "memory_bytes", mem_ok ? cJSON_CreateNumber(mem->valuedouble) : cJSON_CreateNull());
        total += mem_ok ? mem->valuedouble : 0;
        known &= mem_ok;
        cJSON_AddItemToArray(hosts, o);
    }
    known &= cJSON_GetArraySize(hosts) > 0;
    cJSON_AddItemToObject(p, "client_memory_bytes", known ? cJSON_CreateNumber(total) : cJSON_CreateNull());
    const cJSON *size = leaf_at(root, "mpi.size", 8);
    cJSON_AddItemToObject(p, "ranks", size ? cJSON_CreateNumber(size->valuedouble) : cJSON_CreateNull());
}

cJSON *rb_provenance_build(const cJSON *root)
{
    cJSON *core = rb_provenance_core(root);
    char hex[65];
    if (!core || rb_json_sha256(core, hex) != 0) {
        cJSON_Delete(core);
        return NULL;
    }
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "schema", RB_PROVENANCE_SCHEMA);
    cJSON *tool = cJSON_AddObjectToObject(p, "tool");
    cJSON_AddStringToObject(tool, "name", "railbench");
    cJSON_AddStringToObject(tool, "version", rb_version());
    cJSON_AddItemToObject(tool, "git_commit", strcmp(RB_GIT_COMMIT, "unknown") != 0
                                                  ? cJSON_CreateString(RB_GIT_COMMIT) : cJSON_CreateNull());
    cJSON_AddStringToObject(p, "rules_edition", RB_PROVENANCE_RULES);
    cJSON_AddStringToObject(p, "command", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "command")));
    cJSON_AddStringToObject(p, "result", "result.json");
    cJSON_AddItemToObject(p, "core_config", core);
    cJSON_AddStringToObject(p, "core_config_sha256", hex);
    add_hosts(p, root);
    const char *start = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "started_at"));
    cJSON_AddItemToObject(p, "started_at", start ? cJSON_CreateString(start) : cJSON_CreateNull());
    char ts[40];
    rb_clock_iso8601(ts, sizeof ts, rb_clock_wall_ns());
    cJSON_AddStringToObject(p, "ended_at", ts);
    add_cache(p, root);
    return p;
}

int rb_provenance_write(const struct rb_result *r)
{
    if (!r->root)
        return 0;
    cJSON *p = rb_provenance_build(r->root);
    if (!p)
        return 0;
    char *text = cJSON_Print(p);
    cJSON_Delete(p);
    if (!text)
        return -ENOMEM;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", r->dir, RB_PROVENANCE_FILE);
    struct rb_buf b = {0};
    rb_buf_printf(&b, "%s\n", text);
    free(text);
    int rc = b.oom ? -ENOMEM : rb_file_write_atomic(path, b.s, b.len);
    rb_buf_free(&b);
    if (rc < 0)
        rb_warn("cannot write %s: %s; the run goes on without its provenance record", path, strerror(-rc));
    return rc;
}
