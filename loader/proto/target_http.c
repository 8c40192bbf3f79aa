/* http:// target: objects are <base>/<name> on a plain web server; listing from an nginx autoindex JSON page. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "target_int.h"
#include "target_native_int.h"
#include "railbench/result.h"

/* A target's state: the URL's path, no trailing slash. */
struct http {
    char base_path[1024];
};

static const char *base_path(const struct rb_target *t)
{
    return ((const struct http *)t->priv)->base_path;
}

static int http_parse(struct rb_target *t, const char *rest, const struct rb_target_cfg *cfg, const void *opts,
                      char *err, size_t errlen)
{
    (void)rest;
    (void)opts;
    struct http *h = calloc(1, sizeof *h);
    if (!h)
        return -ENOMEM;
    t->priv = h;
    char scheme[16], hp[512], path[1024];
    if (rb_target_split_url(cfg->url, scheme, sizeof scheme, hp, sizeof hp, path, sizeof path) != 0 ||
        !hp[0]) {
        snprintf(err, errlen, "target \"%.200s\": expected http://HOST[:PORT]/PATH", cfg->url);
        return -EINVAL;
    }
    size_t n = strlen(path);
    while (n && path[n - 1] == '/')
        path[--n] = '\0';
    snprintf(h->base_path, sizeof h->base_path, "%s", path);
    /* The URL's host is checked even when --endpoint replaces it: a typo there is still a typo. */
    char ep[600];
    snprintf(ep, sizeof ep, "%s://%s", scheme, hp);
    int rc = rb_target_add_endpoint(t, ep, err, errlen);
    if (rc) {
        snprintf(err, errlen, "target \"%.200s\": bad host or port \"%.100s\" (expected http://HOST[:PORT]/PATH)",
                 cfg->url, hp);
        return rc;
    }
    if (cfg->endpoints.n) {
        free(t->endpoints[0]);
        t->nendpoints = 0;
    }
    for (size_t i = 0; i < cfg->endpoints.n; i++)
        if ((rc = rb_target_add_endpoint(t, cfg->endpoints.v[i], err, errlen)))
            return rc;
    return 0;
}

static int http_object_url(const struct rb_target *t, size_t ep, const char *name, char *buf, size_t len)
{
    char esc[3 * 1024 + 1];
    if (rb_url_escape(name, true, esc, sizeof esc))
        return -ENAMETOOLONG;
    int n = snprintf(buf, len, "%s%s/%s", t->endpoints[ep % t->nendpoints], base_path(t), esc);
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static void http_close(struct rb_target *t)
{
    free(t->priv);
}

static int http_list_spec(const struct rb_target *t, const char *prefix, const char *token, struct rb_list_spec *s)
{
    (void)prefix;
    (void)token;
    int n = snprintf(s->url, sizeof s->url, "%s%s/", t->endpoints[0], base_path(t));
    return n < 0 || (size_t)n >= sizeof s->url ? -ENAMETOOLONG : 0;
}

/* nginx "autoindex on; autoindex_format json;": [{"name":..,"type":"file","size":N}, ...]. */
static int http_list_parse(const struct rb_target *t, const char *body, size_t len, struct rb_objset *out,
                           char **next, char *err, size_t errlen)
{
    (void)len;
    *next = NULL;
    cJSON *j = cJSON_Parse(body);
    if (!cJSON_IsArray(j)) {
        cJSON_Delete(j);
        snprintf(err, errlen,
                 "%s: the server's index is not an nginx autoindex JSON list (autoindex_format json); "
                 "give --objects N or --filelist FILE",
                 t->name);
        return -EPROTO;
    }
    const cJSON *e;
    int rc = 0;
    cJSON_ArrayForEach(e, j)
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "type"));
        const cJSON *size = cJSON_GetObjectItemCaseSensitive(e, "size");
        if (!name || !type || strcmp(type, "file") != 0)
            continue;
        uint64_t sz = 0;
        if (rb_json_get_u64(size, &sz) != 0)
            sz = 0; /* absent or not a whole number: unknown */
        rc = rb_objset_add(out, name, sz);
        if (rc)
            break;
    }
    cJSON_Delete(j);
    return rc;
}

/* On the native engine: GET /base/<name>. */
static int http_shape(const struct rb_target *t, struct rb_nshape *s)
{
    s->extra = "";
    int rc = rb_nshape_path(s, base_path(t), "/");
    return rc ? rc : rb_nshape_hosts(t, "", s);
}

static const struct rb_nproto http_native = {.shape = http_shape};

/* One protocol under both schemes: libcurl and the native engine pick plain or TLS transport from the endpoint URL. */
#define HTTP_PROTO(scheme_name, url_form)                                                          \
    {                                                                                              \
        .scheme = scheme_name, .form = url_form, .parse = http_parse, .close = http_close, .object_url = http_object_url, \
        .native = &http_native, .list_spec = http_list_spec, .list_parse = http_list_parse,       \
    }

RB_PROTO(http, 10) = HTTP_PROTO("http", "http://HOST[:PORT]/PATH");
RB_PROTO(https, 11) = HTTP_PROTO("https", NULL);
