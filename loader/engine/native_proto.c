/* The native engine's protocols: http:// and ais:// request shapes, and the table that picks one by scheme. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "native_int.h"

int rb_nshape_hosts(const struct rb_target *t, const char *prefix, struct rb_nshape *s)
{
    for (size_t e = 0; e < t->nendpoints; e++) {
        const char *hp = strstr(t->endpoints[e], "://");
        hp = hp ? hp + 3 : t->endpoints[e];
        int n = snprintf(s->host[e], sizeof s->host[e], "%s%s", prefix, hp);
        if (n < 0 || (size_t)n >= sizeof s->host[e])
            return -ENAMETOOLONG;
        s->host_len[e] = (size_t)n;
    }
    return 0;
}

static int set_path(struct rb_nshape *s, const char *fmt, const char *a, const char *b)
{
    int n = snprintf(s->path, sizeof s->path, fmt, a, b);
    if (n < 0 || (size_t)n >= sizeof s->path)
        return -ENAMETOOLONG;
    s->path_len = (size_t)n;
    return 0;
}

/* http://host/base: GET /base/<name>. */
static int http_shape(const struct rb_target *t, struct rb_nshape *s)
{
    s->extra = "";
    int rc = set_path(s, "%s%s/", t->base_path, "");
    return rc ? rc : rb_nshape_hosts(t, "", s);
}

/* ais://bucket: /v1/objects/<bucket>/<name>?provider=<p>, the token (when set) on every request. */
static int ais_shape(const struct rb_target *t, struct rb_nshape *s)
{
    int n = snprintf(s->query, sizeof s->query, "?provider=%s", t->provider);
    if (n < 0 || (size_t)n >= sizeof s->query)
        return -ENAMETOOLONG;
    s->query_len = (size_t)n;
    s->extra = t->token_header ? t->token_header : "";
    s->extra_len = strlen(s->extra);
    int rc = set_path(s, "/v1/objects/%s/%s", t->bucket, "");
    return rc ? rc : rb_nshape_hosts(t, "", s);
}

static const struct rb_nproto http_proto = {.scheme = "http", .shape = http_shape};
static const struct rb_nproto https_proto = {.scheme = "https", .shape = http_shape};
static const struct rb_nproto ais_proto = {.scheme = "ais", .shape = ais_shape};
extern const struct rb_nproto rb_nproto_s3;

const struct rb_nproto *rb_nproto_for(const char *scheme)
{
    static const struct rb_nproto *const all[] = {&http_proto, &https_proto, &rb_nproto_s3, &ais_proto};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(all[i]->scheme, scheme) == 0)
            return all[i];
    return NULL;
}
