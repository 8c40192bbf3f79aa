/*
 * The native engine's side of a protocol (struct rb_proto's native): what a
 * target's requests look like on the wire (path, Host, auth). The one
 * interface between a protocol and loader/engine's native engine.
 */
#ifndef RB_TARGET_NATIVE_INT_H
#define RB_TARGET_NATIVE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target_int.h"

/* Room for a request path's fixed parts and a Host value. */
#define RB_NPATH_MAX 1400
#define RB_NHOST_MAX 600

/*
 * The fixed parts of every request to one target, built once per worker:
 * the path before the escaped object name ("/base/", "/bucket/",
 * "/v1/objects/bucket/"), the query after it ("?provider=ais", or ""), the
 * Host value per endpoint (S3's virtual-host style puts the bucket there),
 * and header lines sent as they are (AIStore's bearer token).
 */
struct rb_nshape {
    char path[RB_NPATH_MAX];
    size_t path_len;
    char query[64];
    size_t query_len;
    char host[RB_TARGET_MAX_ENDPOINTS][RB_NHOST_MAX];
    size_t host_len[RB_TARGET_MAX_ENDPOINTS];
    const char *extra;           /* one header line without its CRLF ("Authorization: Bearer ..."), or "" (the target's) */
    size_t extra_len;
    size_t auth_max;             /* the most bytes the auth hook writes per request (0: no hook) */
};

/* What an auth hook signs: one request's method, path (no query), query (no '?'), Host, and the payload's hash. */
struct rb_nsign {
    const char *method;
    const char *path, *query;
    size_t path_len, query_len;
    const char *host;
    size_t host_len;
    const char *payload_hash;    /* NULL: the protocol's default (S3: UNSIGNED-PAYLOAD) */
    /* The body when the protocol signs it: its payload key and size (sends_body), and a scratch buffer to make it in. */
    bool sends_body;
    uint64_t body_key, body_off, body_size; /* the payload of body_key from body_off, or body_mem when not NULL */
    const char *body_mem;
    char *scratch;
    size_t scratch_len;
    /* Makes len bytes of the payload of key from offset into buf (the engine's seeded bodies, in the run's layout). */
    void (*fill)(const void *fill_ctx, uint64_t key, uint64_t offset, void *buf, size_t len);
    const void *fill_ctx;
};

struct rb_nauth;

/*
 * A protocol on the native engine (struct rb_proto's native, rb_target_native):
 * the request loop calls through it and never asks which protocol it speaks.
 * auth_new, auth and auth_free are NULL where requests carry no per-request
 * signature.
 */
struct rb_nproto {
    /* Fills s from t. Returns 0, or -ENAMETOOLONG when a part does not fit. */
    int (*shape)(const struct rb_target *t, struct rb_nshape *s);
    /* The worker's own signing state (a derived key, the date). Returns 0 or -errno. */
    int (*auth_new)(struct rb_nauth **a, const struct rb_target *t);
    /* Writes one request's auth header lines at p (cap bytes). Returns their length, or -ENOSPC. No allocation. */
    int (*auth)(struct rb_nauth *a, const struct rb_nsign *req, char *p, size_t cap);
    /* Wipes and frees a; NULL-safe. */
    void (*auth_free)(struct rb_nauth *a);
};

/* Sets s's Host values: prefix (S3 virtual host: "bucket.") and each endpoint's HOST[:PORT]. Returns 0 or -ENAMETOOLONG. */
int rb_nshape_hosts(const struct rb_target *t, const char *prefix, struct rb_nshape *s);

/* Sets s's path to a then b. Returns 0 or -ENAMETOOLONG. */
int rb_nshape_path(struct rb_nshape *s, const char *a, const char *b);

#endif
