/* ais:// target: AIStore's native API (/v1/objects, /v1/buckets list action), proxy-to-target redirects followed. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ais_smap_int.h"
#include "evict_int.h"
#include "target_ais_int.h"
#include "target_native_int.h"
#include "railbench/result.h"

/*
 * From AIStore's docs/http_api.md: GET/PUT /v1/objects/<bucket>/<object>
 * with ?provider=<ais|aws|gcp|azure|...> (empty means an ais bucket); the
 * proxy (gateway) answers object requests with a redirect to the target
 * that owns the object, which the client follows (curl -L). Listing is
 * GET /v1/buckets/<bucket> with the JSON body {"action":"list","value":{...}}
 * whose reply carries "entries" [{name, size}], a "continuation_token" and
 * a listing "uuid" to pass back with the next page.
 */

static int ais_parse(struct rb_target *t, const char *rest, const struct rb_target_cfg *cfg, const void *opts,
                     char *err, size_t errlen)
{
    const struct rb_ais_opts *o = opts;
    struct rb_ais *a = calloc(1, sizeof *a);
    if (!a)
        return -ENOMEM;
    t->priv = a;
    int rc = rb_target_bucket_prefix(t, rest, "ais", a->bucket, err, errlen);
    if (rc)
        return rc;
    /* AIStore's providers (docs/providers.md) and their short aliases; anything else would be sent as typed. */
    static const char *const known[] = {"ais", "aws", "s3", "gcp", "gs", "azure", "az", "oci", "ht", NULL};
    const char *prov = o->provider ? o->provider : "ais";
    bool ok = false;
    for (size_t i = 0; known[i] && !ok; i++)
        ok = strcmp(prov, known[i]) == 0;
    if (!ok) {
        char shown[160];
        rb_target_escape(prov, shown, sizeof shown);
        snprintf(err, errlen, "--provider \"%s\": expected ais, aws (s3), gcp (gs), azure (az), oci or ht", shown);
        return -EINVAL;
    }
    snprintf(a->provider, sizeof a->provider, "%s", prov);
    for (size_t i = 0; i < cfg->endpoints.n; i++)
        if ((rc = rb_target_add_endpoint(t, cfg->endpoints.v[i], err, errlen)))
            return rc;
    if (cfg->endpoints.n == 0) {
        const char *env = getenv("AIS_ENDPOINT");
        if (!env || !*env) {
            snprintf(err, errlen, "%s: no AIStore endpoint: give --endpoint http://PROXY:PORT (or set AIS_ENDPOINT)",
                     t->name);
            return -EINVAL;
        }
        if ((rc = rb_target_add_endpoint(t, env, err, errlen)))
            return rc;
    }
    if (o->direct && !(a->smap = rb_ais_smap_new(a->provider, a->bucket)))
        return -ENOMEM;
    const char *token = getenv("AIS_AUTHN_TOKEN");
    if (token && *token) {
        size_t n = strlen(token) + 32;
        a->token_header = malloc(n);
        if (!a->token_header)
            return -ENOMEM;
        snprintf(a->token_header, n, "Authorization: Bearer %s", token);
    }
    return 0;
}

static void ais_close(struct rb_target *t)
{
    struct rb_ais *a = t->priv;
    if (!a)
        return;
    if (a->token_header) {
        memset(a->token_header, 0, strlen(a->token_header));
        free(a->token_header);
    }
    rb_ais_smap_free(a->smap);
    free(a);
}

static int ais_object_url(const struct rb_target *t, size_t ep, const char *name, char *buf, size_t len)
{
    char esc[3 * 1024 + 1];
    if (rb_url_escape(name, true, esc, sizeof esc))
        return -ENAMETOOLONG;
    const struct rb_ais *a = rb_ais_of(t);
    int n = snprintf(buf, len, "%s/v1/objects/%s/%s?provider=%s", t->endpoints[ep % t->nendpoints], a->bucket, esc,
                     a->provider);
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int ais_setup(const struct rb_target *t, CURL *easy, enum rb_load_op op, struct curl_slist **hdrs)
{
    (void)op;
    /* The proxy redirects every object request to the target that holds it (a listing too). */
    RB_CURL_CHECK(curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L));
    const char *token = rb_ais_of(t)->token_header;
    if (token) {
        /* The token has to reach the target the proxy redirects to, a different host:port. */
        RB_CURL_CHECK(curl_easy_setopt(easy, CURLOPT_UNRESTRICTED_AUTH, 1L));
        struct curl_slist *l = curl_slist_append(*hdrs, token);
        if (!l)
            return -ENOMEM;
        *hdrs = l;
    }
    return 0;
}

/* AIStore's list action: GET /v1/buckets/NAME with a JSON body (the api's ListObjects, as its own clients send). */
static int ais_list_spec(const struct rb_target *t, const char *prefix, const char *token, struct rb_list_spec *s)
{
    const struct rb_ais *a = rb_ais_of(t);
    int n = snprintf(s->url, sizeof s->url, "%s/v1/buckets/%s?provider=%s", t->endpoints[0], a->bucket, a->provider);
    if (n < 0 || (size_t)n >= sizeof s->url)
        return -ENAMETOOLONG;
    cJSON *msg = cJSON_CreateObject(), *val = cJSON_AddObjectToObject(msg, "value");
    cJSON_AddStringToObject(msg, "action", "list");
    cJSON_AddStringToObject(val, "props", "name,size");
    if (prefix && *prefix)
        cJSON_AddStringToObject(val, "prefix", prefix);
    if (token) {
        /* Our page token is "<uuid>\n<continuation_token>". */
        const char *nl = strchr(token, '\n');
        if (nl) {
            char uuid[256];
            snprintf(uuid, sizeof uuid, "%.*s", (int)(nl - token > 255 ? 255 : nl - token), token);
            cJSON_AddStringToObject(val, "uuid", uuid);
            cJSON_AddStringToObject(val, "continuation_token", nl + 1);
        }
    }
    s->body = cJSON_PrintUnformatted(msg);
    cJSON_Delete(msg);
    if (!s->body)
        return -ENOMEM;
    s->content_type = "application/json";
    return 0;
}

static int ais_list_parse(const struct rb_target *t, const char *body, size_t len, struct rb_objset *out,
                          char **next, char *err, size_t errlen)
{
    (void)len;
    *next = NULL;
    cJSON *j = cJSON_Parse(body);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        snprintf(err, errlen, "%s: listing: the reply is not AIStore's JSON object", t->name);
        return -EPROTO;
    }
    int rc = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "entries"))
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
        const cJSON *size = cJSON_GetObjectItemCaseSensitive(e, "size");
        if (!name)
            continue;
        uint64_t sz = 0;
        /* AIStore writes sizes as strings in some versions and numbers in others. */
        /* rb_json_get_u64 takes both; anything else (negative, fractional, huge) is "unknown". */
        if (rb_json_get_u64(size, &sz) != 0)
            sz = 0;
        if ((rc = rb_objset_add(out, name, sz)))
            break;
    }
    const char *tok = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "continuation_token"));
    const char *uuid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "uuid"));
    if (!rc && tok && *tok) {
        size_t n = strlen(tok) + (uuid ? strlen(uuid) : 0) + 2;
        *next = malloc(n);
        if (!*next)
            rc = -ENOMEM;
        else
            snprintf(*next, n, "%s\n%s", uuid ? uuid : "", tok);
    }
    cJSON_Delete(j);
    return rc;
}

/* AIStore errors are JSON {"message": ..., "status": ...}. */
static void ais_error_message(const char *body, size_t len, char *out, size_t outlen)
{
    (void)len;
    cJSON *j = cJSON_Parse(body);
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "message"));
    if (m)
        snprintf(out, outlen, "%s", m);
    cJSON_Delete(j);
}

/* The endpoints answer; with --ais-direct the cluster map is loaded from the proxy too (once). */
static int ais_probe(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen)
{
    int rc = rb_target_probe_endpoints(t, timeout_ns, err, errlen);
    return rc || !rb_ais_of(t)->smap ? rc : rb_ais_smap_load(t, timeout_ns, err, errlen);
}

/* On the native engine: /v1/objects/<bucket>/<name>?provider=<p>, the token (when set) on every request. */
static int ais_shape(const struct rb_target *t, struct rb_nshape *s)
{
    const struct rb_ais *a = rb_ais_of(t);
    int n = snprintf(s->query, sizeof s->query, "?provider=%s", a->provider);
    if (n < 0 || (size_t)n >= sizeof s->query)
        return -ENAMETOOLONG;
    s->query_len = (size_t)n;
    s->extra = a->token_header ? a->token_header : "";
    s->extra_len = strlen(s->extra);
    char path[300];
    snprintf(path, sizeof path, "/v1/objects/%s/", a->bucket);
    int rc = rb_nshape_path(s, path, "");
    return rc ? rc : rb_nshape_hosts(t, "", s);
}

static const struct rb_nproto ais_native = {.shape = ais_shape};

/* --ais-direct: the cluster map's targets and the owner of a name (HRW, ais_smap.c). */
static size_t ais_route_count(const struct rb_target *t)
{
    return rb_ais_of(t)->smap->n;
}

static const char *ais_route_node(const struct rb_target *t, size_t i, const char **id)
{
    const struct rb_ais_node *nd = &rb_ais_of(t)->smap->t[i];
    *id = nd->id;
    return nd->url;
}

static size_t ais_route_owner(const struct rb_target *t, const char *name)
{
    return rb_ais_smap_owner(rb_ais_of(t)->smap, name);
}

/* ais's own options: the bucket's provider, requests straight to the targets. */
static const struct rb_proto_opt ais_opts[] = {
    RB_PROTO_OPT(struct rb_ais_opts, provider, "provider", RB_OPT_STR, "NAME",
                 "AIStore bucket provider: ais, aws, gcp, azure (if not given: ais)",
                 "only an ais:// target has a bucket provider"),
    RB_PROTO_FLAG_CAP(struct rb_ais_opts, direct, "ais-direct",
                      "AIStore: each object request straight to the target that owns it (HRW over the proxy's "
                      "cluster map), not through the proxy's redirect (native engine)",
                      "only an ais:// target has a cluster map to place objects by", RB_TCAP_DIRECT),
    {{0}, 0, NULL, 0},
};

RB_PROTO(ais, 40) = {
    .scheme = "ais",
    .form = "ais://BUCKET[/FOLDER]",
    .caps = RB_TCAP_LISTS | RB_TCAP_REDIRECTS,
    .opts = ais_opts,
    .opts_size = sizeof(struct rb_ais_opts),
    .parse = ais_parse,
    .close = ais_close,
    .object_url = ais_object_url,
    .setup = ais_setup,
    .native = &ais_native,
    .list_spec = ais_list_spec,
    .list_parse = ais_list_parse,
    .error_message = ais_error_message,
    .evict = rb_target_ais_evict,
    .probe = ais_probe,
    .route_load = rb_ais_smap_load,
    .route_count = ais_route_count,
    .route_node = ais_route_node,
    .route_owner = ais_route_owner,
};
