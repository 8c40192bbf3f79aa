/* The native engine's request heads: request line, Host, Range, length, the protocol's fixed and auth lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "native_conn_int.h"
#include "payload_int.h"

/* Writes v in decimal at p; returns the end. */
static char *put_u64(char *p, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

#define PUT_LIT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) += sizeof(lit) - 1)

/* rb_payload_fill behind the signing hook's fill (struct rb_nsign): ctx is the run's layout (rb_load_opts.payload). */
static void body_fill(const void *ctx, uint64_t key, uint64_t offset, void *buf, size_t len)
{
    rb_payload_fill(ctx, key, offset, buf, len);
}

/*
 * Writes the head's rest at p, after c's request line ("METHOD path[?query]"
 * whose path and query are given for signing): the version, Host, Range, a
 * PUT's length, the shape's fixed line, the protocol's auth lines, the
 * blank line. Returns 0 or the auth hook's -ENOSPC.
 */
int rb_nhead_rest(struct rb_worker *w, struct rb_nconn *c, char *p, const char *path, size_t path_len, const char *query,
                     size_t query_len, const char *host, size_t host_len)
{
    struct rb_native *n = w->nat;
    const struct rb_nshape *sh = &n->shape;
    char *end = c->wbuf + n->wbuf_bytes;
    PUT_LIT(p, " HTTP/1.1\r\nHost: ");
    memcpy(p, host, host_len);
    p += host_len;
    PUT_LIT(p, "\r\n");
    if (c->range_len) {
        PUT_LIT(p, "Range: bytes=");
        p = put_u64(p, c->range_off);
        *p++ = '-';
        p = put_u64(p, c->range_off + c->range_len - 1);
        PUT_LIT(p, "\r\n");
    }
    if (c->sends_body) {
        PUT_LIT(p, "Content-Length: ");
        p = put_u64(p, c->r.put_size);
        PUT_LIT(p, "\r\n");
    }
    if (sh->extra_len) {
        memcpy(p, sh->extra, sh->extra_len);
        p += sh->extra_len;
        PUT_LIT(p, "\r\n");
    }
    if (c->extra_hdr) {
        size_t l = strlen(c->extra_hdr);
        memcpy(p, c->extra_hdr, l);
        p += l;
        PUT_LIT(p, "\r\n");
    }
    if (n->auth) {
        const struct rb_nsign sg = {.method = c->method, .path = path, .path_len = path_len, .query = query,
                                    .query_len = query_len, .host = host, .host_len = host_len,
                                    .sends_body = c->sends_body, .body_key = c->r.key, .body_off = c->body_off,
                                    .body_size = c->r.put_size, .body_mem = c->body_mem,
                                    .scratch = n->rbuf, .scratch_len = n->rbuf_bytes, .fill = body_fill,
                                    .fill_ctx = &w->o->payload};
        int k = n->proto->auth(n->auth, &sg, p, (size_t)(end - p) - 2);
        if (k < 0)
            return k;
        p += k;
    }
    PUT_LIT(p, "\r\n");
    c->wlen = (size_t)(p - c->wbuf);
    c->woff = 0;
    return 0;
}

/*
 * Writes the head of one request of name on c into c->wbuf: request line
 * (the shape's path, the escaped name, its query and extra_query), Host, a
 * GET's Range, a body's length, the shape's fixed line, the protocol's auth
 * lines. c->method and c->sends_body are set. Returns 0, -ENAMETOOLONG or -ENOSPC.
 */
int rb_nhead_line(struct rb_worker *w, struct rb_nconn *c, const char *name, const char *extra_query)
{
    struct rb_native *n = w->nat;
    const struct rb_nshape *sh = &n->shape;
    char *p = c->wbuf;
    size_t ml = strlen(c->method);
    memcpy(p, c->method, ml);
    p += ml;
    *p++ = ' ';
    char *path = p;
    memcpy(p, sh->path, sh->path_len);
    p += sh->path_len;
    if (rb_url_escape(name, true, p, RB_NREQ_NAME_MAX))
        return -ENAMETOOLONG;
    p += strlen(p);
    size_t path_len = (size_t)(p - path);
    char *query = p;
    memcpy(p, sh->query, sh->query_len);
    p += sh->query_len;
    if (extra_query && *extra_query) {
        size_t ql = strlen(extra_query);
        if (ql > RB_NQUERY_MAX)
            return -ENAMETOOLONG;
        char sep = p == query ? '?' : '&';
        *p++ = sep;
        memcpy(p, extra_query, ql);
        p += ql;
    }
    size_t query_len = (size_t)(p - query);
    /* A request sent straight to an AIStore target (--ais-direct) names the target's host. */
    const char *host = c->leg ? c->leg->hostport : sh->host[c->ep];
    size_t host_len = c->leg ? c->leg->hostport_len : sh->host_len[c->ep];
    return rb_nhead_rest(w, c, p, path, path_len, query_len ? query + 1 : "", query_len ? query_len - 1 : 0, host,
                         host_len);
}

int rb_nhead_path(struct rb_worker *w, struct rb_nconn *c, const char *path)
{
    struct rb_native *n = w->nat;
    size_t ml = strlen(c->method), pl = strlen(path);
    if (pl > RB_NREQ_NAME_MAX + RB_NQUERY_MAX)
        return -ENAMETOOLONG;
    char *p = c->wbuf;
    memcpy(p, c->method, ml);
    p += ml;
    *p++ = ' ';
    memcpy(p, path, pl);
    const char *q = memchr(p, '?', pl);
    size_t path_len = q ? (size_t)(q - p) : pl;
    p += pl;
    return rb_nhead_rest(w, c, p, p - pl, path_len, q ? q + 1 : "", q ? pl - path_len - 1 : 0, n->shape.host[c->ep],
                         n->shape.host_len[c->ep]);
}

/* Op row op's request of name (size bytes): c->r readied through it, then its head (rb_nhead_line). */
int rb_nhead_build(struct rb_worker *w, struct rb_nconn *c, const struct rb_nop *op, const char *name, uint64_t size)
{
    c->method = op->method;
    c->sends_body = op->sends_body;
    c->keep_body = false;
    c->body_off = 0;
    c->body_mem = NULL;
    c->extra_hdr = NULL;
    op->ready(w, &c->r, name, size, &c->range_off, &c->range_len);
    return rb_nhead_line(w, c, name, NULL);
}
