/* s3:// on the native engine: path- or virtual-host style, every request signed with SigV4 (sigv4.c). */
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA256_*: as sigv4.c, on the stack and without allocation */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sigv4_int.h"
#include "target_native_int.h"
#include "target_s3_int.h"

/*
 * A worker's signer: its own derived key (sigv4.c re-derives it when the
 * day changes), x-amz-date formatted once a second, and the session token
 * (the target's "x-amz-security-token: ..." line) signed with every request.
 */
struct rb_nauth {
    struct rb_sigv4 sig;
    time_t date_s;
    char date[RB_SIGV4_DATE_BYTES];
    const char *token;           /* the token's value, or NULL */
    size_t token_len;
    bool sign_payload;           /* --sign-payload: the body's hash, not UNSIGNED-PAYLOAD */
    char body_hash[RB_SIGV4_HEX_BYTES];
};

/* A SigV4 Authorization line and its x-amz-* lines, the session token apart (it is counted twice: sent and signed). */
#define AUTH_MAX 600

static int s3_shape(const struct rb_target *t, struct rb_nshape *s)
{
    const struct rb_s3 *s3 = rb_s3_of(t);
    int n = s3->virtual_host ? snprintf(s->path, sizeof s->path, "/")
                             : snprintf(s->path, sizeof s->path, "/%s/", s3->bucket);
    if (n < 0 || (size_t)n >= sizeof s->path)
        return -ENAMETOOLONG;
    s->path_len = (size_t)n;
    s->extra = "";
    s->auth_max = AUTH_MAX + 2 * (s3->token_header ? strlen(s3->token_header) : 0);
    char vhost[300] = "";
    if (s3->virtual_host)
        snprintf(vhost, sizeof vhost, "%s.", s3->bucket);
    return rb_nshape_hosts(t, vhost, s);
}

static int s3_auth_new(struct rb_nauth **out, const struct rb_target *t)
{
    *out = NULL;
    const struct rb_s3 *s3 = rb_s3_of(t);
    const char *colon = s3->userpwd ? strchr(s3->userpwd, ':') : NULL;
    if (!colon)
        return -EINVAL;
    struct rb_nauth *a = calloc(1, sizeof *a);
    if (!a)
        return -ENOMEM;
    char akid[128];
    size_t idl = (size_t)(colon - s3->userpwd);
    if (idl < sizeof akid) {
        memcpy(akid, s3->userpwd, idl);
        akid[idl] = '\0';
    }
    if (idl >= sizeof akid || rb_sigv4_init(&a->sig, akid, colon + 1, s3->region, "s3")) {
        free(a);
        return -EINVAL;
    }
    a->sign_payload = rb_target_can(t, RB_TCAP_SIGNED_BODIES);
    if (s3->token_header) {
        const char *v = strchr(s3->token_header, ':');
        v = v ? v + 1 : s3->token_header;
        while (*v == ' ')
            v++;
        a->token = v;
        a->token_len = strlen(v);
    }
    *out = a;
    return 0;
}

static void s3_auth_free(struct rb_nauth *a)
{
    if (!a)
        return;
    rb_sigv4_wipe(&a->sig);
    free(a);
}

/* Appends "name: value\r\n" at p; false when it does not fit. */
static bool line(char **p, char *end, const char *name, size_t nl, const char *v, size_t vl)
{
    if ((size_t)(end - *p) < nl + vl + 4)
        return false;
    memcpy(*p, name, nl);
    (*p)[nl] = ':';
    (*p)[nl + 1] = ' ';
    memcpy(*p + nl + 2, v, vl);
    (*p)[nl + 2 + vl] = '\r';
    (*p)[nl + 3 + vl] = '\n';
    *p += nl + vl + 4;
    return true;
}
#define LINE(p, end, lit, v, vl) line(p, end, lit, sizeof(lit) - 1, v, vl)

/*
 * The signed headers are host, x-amz-content-sha256, x-amz-date and the
 * session token, what S3 requires (AWS S3 API reference, "Signature
 * Calculations for the Authorization Header"); Range and Content-Length go
 * unsigned, as AWS's SDKs send them too.
 */
static int s3_auth(struct rb_nauth *a, const struct rb_nsign *rq, char *p, size_t cap)
{
    time_t now = time(NULL);
    if (now != a->date_s) {
        a->date_s = now;
        rb_sigv4_date(now, a->date);
    }
    const char *ph = rq->payload_hash ? rq->payload_hash : RB_SIGV4_UNSIGNED;
    if (a->sign_payload && !rq->payload_hash) {
        /*
         * The body's SHA-256, made from the seeded payload through the
         * worker's scratch buffer (it is made again as it goes out): a signed
         * PUT costs a pass over its body before it is sent, as in any S3 client.
         */
        ph = RB_SIGV4_EMPTY_SHA256;
        if (rq->sends_body) {
            SHA256_CTX hc;
            unsigned char d[SHA256_DIGEST_LENGTH];
            SHA256_Init(&hc);
            if (rq->body_mem)
                SHA256_Update(&hc, rq->body_mem, rq->body_size);
            for (uint64_t off = 0; !rq->body_mem && off < rq->body_size;) {
                size_t k = rq->body_size - off < rq->scratch_len ? (size_t)(rq->body_size - off) : rq->scratch_len;
                rq->fill(rq->fill_ctx, rq->body_key, rq->body_off + off, rq->scratch, k);
                SHA256_Update(&hc, rq->scratch, k);
                off += k;
            }
            SHA256_Final(d, &hc);
            rb_sigv4_hex(d, sizeof d, a->body_hash);
            ph = a->body_hash;
        }
    }
    const struct rb_sigv4_hdr h[4] = {
        {"host", rq->host, rq->host_len},
        {"x-amz-content-sha256", ph, strlen(ph)},
        {"x-amz-date", a->date, RB_SIGV4_DATE_BYTES - 1},
        {"x-amz-security-token", a->token, a->token_len},
    };
    char *o = p, *end = p + cap;
    if (!LINE(&o, end, "x-amz-date", a->date, RB_SIGV4_DATE_BYTES - 1) ||
        !LINE(&o, end, "x-amz-content-sha256", ph, h[1].value_len) ||
        (a->token && !LINE(&o, end, "x-amz-security-token", a->token, a->token_len)) ||
        (size_t)(end - o) < 32)
        return -ENOSPC;
    memcpy(o, "Authorization: ", 15);
    o += 15;
    int n = rb_sigv4_sign(&a->sig, a->date, rq->method, rq->path, rq->path_len, rq->query, rq->query_len, h,
                          a->token ? 4 : 3, ph, o, (size_t)(end - o) - 2);
    if (n < 0)
        return n;
    o += n;
    *o++ = '\r';
    *o++ = '\n';
    return (int)(o - p);
}

const struct rb_nproto rb_s3_native = {
    .shape = s3_shape, .auth_new = s3_auth_new, .auth = s3_auth, .auth_free = s3_auth_free};
