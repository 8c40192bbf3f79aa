/* AIStore's cluster map and HRW placement (see ais_smap_int.h): XXH64, xoshiro256's hash, the map's JSON, its load. */
#define _GNU_SOURCE
#include "ais_smap_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "evict_int.h"
#include "railbench/buf.h"
#include "railbench/clock.h"
#include "railbench/result.h"
#include "target_ais_int.h"
#include "target_int.h"

/* ---- XXH64 (xxHash's doc/xxhash_spec.md) ---- */

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static uint64_t rotl(uint64_t x, unsigned r)
{
    return (x << r) | (x >> (64 - r));
}

/* Little-endian loads, whatever the alignment. */
static uint64_t le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t round64(uint64_t acc, uint64_t lane)
{
    return rotl(acc + lane * P2, 31) * P1;
}

static uint64_t merge64(uint64_t acc, uint64_t v)
{
    return (acc ^ round64(0, v)) * P1 + P4;
}

uint64_t rb_xxh64(const void *data, size_t n, uint64_t seed)
{
    const unsigned char *p = data, *end = p + n;
    uint64_t acc;
    if (n >= 32) {
        uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        for (; end - p >= 32; p += 32) {
            v1 = round64(v1, le64(p));
            v2 = round64(v2, le64(p + 8));
            v3 = round64(v3, le64(p + 16));
            v4 = round64(v4, le64(p + 24));
        }
        acc = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
        acc = merge64(merge64(merge64(merge64(acc, v1), v2), v3), v4);
    } else {
        acc = seed + P5;
    }
    acc += n;
    for (; end - p >= 8; p += 8)
        acc = rotl(acc ^ round64(0, le64(p)), 27) * P1 + P4;
    if (end - p >= 4) {
        acc = rotl(acc ^ (uint64_t)le32(p) * P1, 23) * P2 + P3;
        p += 4;
    }
    for (; p < end; p++)
        acc = rotl(acc ^ *p * P5, 11) * P1;
    acc ^= acc >> 33;
    acc *= P2;
    acc ^= acc >> 29;
    acc *= P3;
    return acc ^ (acc >> 32);
}

/* ---- AIStore's placement ---- */

static uint64_t splitmix64(uint64_t x)
{
    uint64_t z = x + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t rb_ais_xoshiro_hash(uint64_t seed)
{
    return rotl(splitmix64(splitmix64(seed)) * 5, 7) * 9;
}

size_t rb_ais_smap_owner(const struct rb_ais_smap *m, const char *name)
{
    char uname[sizeof m->prefix + RB_OBJSET_NAME_BYTES];
    size_t nl = strnlen(name, RB_OBJSET_NAME_BYTES - 1);
    memcpy(uname, m->prefix, m->prefix_len);
    memcpy(uname + m->prefix_len, name, nl);
    uint64_t digest = rb_xxh64(uname, m->prefix_len + nl, RB_AIS_MLCG32);
    size_t best = 0;
    uint64_t max = 0;
    for (size_t i = 0; i < m->n; i++) {
        uint64_t h = rb_ais_xoshiro_hash(m->t[i].digest ^ digest);
        if (h >= max) {
            max = h;
            best = i;
        }
    }
    return best;
}

/* ---- the map ---- */

struct rb_ais_smap *rb_ais_smap_new(const char *provider, const char *bucket)
{
    static const char *const alias[][2] = {{"s3", "aws"}, {"gs", "gcp"}, {"az", "azure"}};
    struct rb_ais_smap *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (strcmp(provider, alias[i][0]) == 0)
            provider = alias[i][1];
    /* "@#": the global namespace's uname (cmn.NsGlobalUname); a bucket name has at most 64 characters. */
    int k = snprintf(m->prefix, sizeof m->prefix, "%s/@#/%s/", provider, bucket);
    m->prefix_len = k > 0 && (size_t)k < sizeof m->prefix ? (size_t)k : 0;
    pthread_mutex_init(&m->mu, NULL);
    return m;
}

void rb_ais_smap_free(struct rb_ais_smap *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m->t);
    free(m);
}

static int by_id(const void *a, const void *b)
{
    return strcmp(((const struct rb_ais_node *)a)->id, ((const struct rb_ais_node *)b)->id);
}

/* One tmap entry into node; 1 when it is skipped (maintenance, decommission), 0, or -EPROTO with err. */
static int parse_node(const cJSON *e, struct rb_ais_node *node, char *err, size_t errlen)
{
    const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "daemon_id"));
    if (!id || !*id)
        id = e->string; /* the map's key is the id too */
    const cJSON *net = cJSON_GetObjectItemCaseSensitive(e, "public_net");
    const char *url = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(net, "direct_url"));
    uint64_t flags = 0;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(e, "flags");
    if (f && rb_json_get_u64(f, &flags) != 0)
        flags = 0;
    if (flags & (4 | 8))
        return 1; /* SnodeMaint | SnodeDecomm: AIStore places nothing there */
    if (!id || !*id || strlen(id) >= RB_AIS_ID_MAX) {
        snprintf(err, errlen, "a target without a daemon_id (or one too long)");
        return -EPROTO;
    }
    size_t scheme = url && strncmp(url, "http://", 7) == 0 ? 7 : url && strncmp(url, "https://", 8) == 0 ? 8 : 0;
    if (!scheme || strlen(url) <= scheme || strlen(url) >= RB_AIS_URL_MAX || strchr(url + scheme, '/')) {
        char shown[100];
        rb_target_escape(url ? url : "(none)", shown, sizeof shown);
        snprintf(err, errlen, "target %.60s: public_net.direct_url \"%s\" is not http[s]://HOST:PORT", id, shown);
        return -EPROTO;
    }
    snprintf(node->id, sizeof node->id, "%s", id);
    snprintf(node->url, sizeof node->url, "%s", url);
    node->digest = rb_xxh64(id, strlen(id), RB_AIS_MLCG32);
    return 0;
}

int rb_ais_smap_parse(struct rb_ais_smap *m, const char *json, char *err, size_t errlen)
{
    cJSON *j = cJSON_Parse(json);
    const cJSON *tmap = cJSON_GetObjectItemCaseSensitive(j, "tmap");
    if (!cJSON_IsObject(tmap)) {
        cJSON_Delete(j);
        snprintf(err, errlen, "the reply is not AIStore's cluster map (no \"tmap\" object)");
        return -EPROTO;
    }
    int count = cJSON_GetArraySize(tmap), rc = 0;
    free(m->t);
    m->n = 0;
    m->t = calloc(count ? (size_t)count : 1, sizeof *m->t);
    if (!m->t) {
        cJSON_Delete(j);
        return -ENOMEM;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, tmap)
    {
        int k = parse_node(e, &m->t[m->n], err, errlen);
        if (k < 0) {
            rc = k;
            break;
        }
        m->n += k == 0;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "version");
    snprintf(m->version, sizeof m->version, "%s", cJSON_IsString(v) ? v->valuestring : "?");
    cJSON_Delete(j);
    if (!rc && !m->n) {
        snprintf(err, errlen, "the cluster map has no active target");
        rc = -EPROTO;
    }
    if (rc)
        return rc;
    qsort(m->t, m->n, sizeof *m->t, by_id);
    return 0;
}

int rb_ais_smap_load(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen)
{
    struct rb_ais_smap *m = rb_ais_of(t)->smap;
    if (!m)
        return -EINVAL;
    pthread_mutex_lock(&m->mu);
    int rc = 0;
    if (!m->loaded) {
        struct rb_buf b = {.limit = 64u << 20};
        long status = 0;
        char why[300] = "";
        uint64_t limit = timeout_ns && timeout_ns < 30 * RB_NS_PER_S ? timeout_ns : 30 * RB_NS_PER_S;
        rc = rb_ais_call(t, "GET", "/v1/daemon?what=smap", NULL, limit, &b, &status, err, errlen);
        if (!rc && status != 200) {
            rb_ais_http_error(t, "--ais-direct: the cluster map (GET /v1/daemon?what=smap)", status, &b, err, errlen);
            rc = -EIO;
        } else if (!rc && (rc = rb_ais_smap_parse(m, b.s ? b.s : "", why, sizeof why))) {
            snprintf(err, errlen, "%s: --ais-direct: the cluster map from %s: %s", t->name, t->endpoints[0], why);
        }
        /* The targets are reached over the proxy's scheme (one TLS set-up for the run). */
        size_t sl = strncmp(t->endpoints[0], "https://", 8) == 0 ? 8 : 7;
        for (size_t i = 0; !rc && i < m->n; i++)
            if (strncmp(m->t[i].url, t->endpoints[0], sl) != 0) {
                snprintf(err, errlen, "%s: --ais-direct: target %s is at %s, not at %.*s like the proxy %s", t->name,
                         m->t[i].id, m->t[i].url, (int)sl, t->endpoints[0], t->endpoints[0]);
                rc = -EPROTO;
            }
        rb_buf_free(&b);
        m->loaded = rc == 0;
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}
