/* ais:// target: AIStore's native API (/v1/objects, /v1/buckets list action), proxy-to-target redirects followed. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ais_smap_int.h"
#include "evict_int.h"
#include "target_int.h"
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

static int ais_parse(struct rb_target *t, const char *rest, const struct rb_target_cfg *cfg, char *err,
                     size_t errlen)
{
    int rc = rb_target_bucket_prefix(t, rest, "ais", err, errlen);
    if (rc)
        return rc;
    /* AIStore's providers (docs/providers.md) and their short aliases; anything else would be sent as typed. */
    static const char *const known[] = {"ais", "aws", "s3", "gcp", "gs", "azure", "az", "oci", "ht", NULL};
    const char *prov = cfg->provider ? cfg->provider : "ais";
    bool ok = false;
    for (size_t i = 0; known[i] && !ok; i++)
        ok = strcmp(prov, known[i]) == 0;
    if (!ok) {
        char shown[160];
        rb_target_escape(prov, shown, sizeof shown);
        snprintf(err, errlen, "--provider \"%s\": expected ais, aws (s3), gcp (gs), azure (az), oci or ht", shown);
        return -EINVAL;
    }
    snprintf(t->provider, sizeof t->provider, "%s", prov);
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
    if (cfg->ais_direct && !(t->smap = rb_ais_smap_new(t->provider, t->bucket)))
        return -ENOMEM;
    const char *token = getenv("AIS_AUTHN_TOKEN");
    if (token && *token) {
        size_t n = strlen(token) + 32;
        t->token_header = malloc(n);
        if (!t->token_header)
            return -ENOMEM;
        snprintf(t->token_header, n, "Authorization: Bearer %s", token);
    }
    return 0;
}

static int ais_object_url(const struct rb_target *t, size_t ep, const char *name, char *buf, size_t len)
{
    char esc[3 * 1024 + 1];
    if (rb_url_escape(name, true, esc, sizeof esc))
        return -ENAMETOOLONG;
    int n = snprintf(buf, len, "%s/v1/objects/%s/%s?provider=%s", t->endpoints[ep % t->nendpoints], t->bucket, esc,
                     t->provider);
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int ais_setup(const struct rb_target *t, CURL *easy, enum rb_load_op op, struct curl_slist **hdrs)
{
    (void)op;
    /* The proxy redirects every object request to the target that holds it (a listing too). */
    RB_CURL_CHECK(curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L));
    if (t->token_header) {
        /* The token has to reach the target the proxy redirects to, a different host:port. */
        RB_CURL_CHECK(curl_easy_setopt(easy, CURLOPT_UNRESTRICTED_AUTH, 1L));
        struct curl_slist *l = curl_slist_append(*hdrs, t->token_header);
        if (!l)
            return -ENOMEM;
        *hdrs = l;
    }
    return 0;
}

/* AIStore's list action: GET /v1/buckets/NAME with a JSON body (the api's ListObjects, as its own clients send). */
static int ais_list_spec(const struct rb_target *t, const char *prefix, const char *token, struct rb_list_spec *s)
{
    int n = snprintf(s->url, sizeof s->url, "%s/v1/buckets/%s?provider=%s", t->endpoints[0], t->bucket, t->provider);
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
    return rc || !t->smap ? rc : rb_ais_smap_load(t, timeout_ns, err, errlen);
}

/* ais's own options: the bucket's provider, requests straight to the targets. */
static void ais_options(struct rb_opts *t, struct rb_target_cfg *cfg)
{
    const struct rb_opt rows[] = {
        {"provider", 0, RB_OPT_STR, &cfg->provider, "NAME",
         "AIStore bucket provider: ais, aws, gcp, azure (if not given: ais)", NULL},
        {"ais-direct", 0, RB_OPT_FLAG, &cfg->ais_direct, NULL,
         "AIStore: each object request straight to the target that owns it (HRW over the proxy's cluster map), "
         "not through the proxy's redirect (native engine)", NULL},
        {0},
    };
    rb_opts_add(t, rows);
}

const struct rb_target_ops rb_target_ais_ops = {
    .scheme = "ais",
    .caps = RB_TCAP_LISTS | RB_TCAP_REDIRECTS,
    .options = ais_options,
    .parse = ais_parse,
    .object_url = ais_object_url,
    .setup = ais_setup,
    .list_spec = ais_list_spec,
    .list_parse = ais_list_parse,
    .error_message = ais_error_message,
    .evict = rb_target_ais_evict,
    .probe = ais_probe,
};
