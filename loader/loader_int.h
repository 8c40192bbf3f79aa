/* Loader internals shared by engine.c, the target tables and load_cmd.c (not part of the public API). */
#ifndef RB_LOADER_INT_H
#define RB_LOADER_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <errno.h>

#include <curl/curl.h>

#include "railbench/buf.h"
#include "railbench/cli.h"
#include "railbench/loader.h"
#include "railbench/log.h"

#define RB_URL_MAX 4096
#define RB_TARGET_MAX_ENDPOINTS 64

/*
 * Checks a libcurl easy call that returns CURLcode; on failure logs file,
 * line, the call and libcurl's own message (the log adds host and rank)
 * and returns -EINVAL from the calling function.
 */
#define RB_CURL_CHECK(call)                                                                        \
    do {                                                                                           \
        CURLcode rb_cc_ = (call);                                                                  \
        if (rb_cc_ != CURLE_OK) {                                                                  \
            rb_error("%s:%d: %s failed: %s", __FILE__, __LINE__, #call, curl_easy_strerror(rb_cc_)); \
            return -EINVAL;                                                                        \
        }                                                                                          \
    } while (0)

/* A response body collected into memory (listings, error messages). */
/*
 * One kind of target, chosen once by the URL's scheme (like wrk's plain/TLS
 * socket tables): the engine calls through it and never asks which kind it has.
 */
struct rb_target_ops {
    const char *scheme;
    /* Parses what follows "scheme://" plus cfg into t (bucket, prefix, endpoints, credentials). */
    int (*parse)(struct rb_target *t, const char *rest, const struct rb_target_cfg *cfg, char *err,
                 size_t errlen);
    /* Writes the URL of object name at endpoint ep. Returns 0 or -ENAMETOOLONG. */
    int (*object_url)(const struct rb_target *t, size_t ep, const char *name, char *buf, size_t len);
    /* Sets what every request of this target needs on a fresh easy handle (auth, redirects); appends headers. */
    int (*setup)(const struct rb_target *t, CURL *easy, enum rb_load_op op, struct curl_slist **hdrs);
    /* Prepares one listing request (URL, method, body) continuing after token (NULL for the first page). */
    int (*list_request)(const struct rb_target *t, const char *prefix, const char *token, CURL *easy,
                        struct curl_slist **hdrs, char **body_owned);
    /* Parses a listing page into out; *next gets a malloc'd token for the next page or NULL at the end. */
    int (*list_parse)(const struct rb_target *t, const char *body, size_t len, struct rb_objset *out,
                      char **next, char *err, size_t errlen);
    /* The server's error message in an error body ("InvalidAccessKeyId: ..."), for logs; may be NULL. */
    void (*error_message)(const char *body, size_t len, char *out, size_t outlen);
};

struct rb_target {
    const struct rb_target_ops *ops;
    char name[1100];                    /* "s3://bucket", "http://host:port/path" */
    char bucket[256];
    char prefix[1024];                  /* path after the bucket in the URL, "" when none */
    char *endpoints[RB_TARGET_MAX_ENDPOINTS]; /* base URLs, no trailing slash */
    size_t nendpoints;
    char base_path[1024];               /* http: the URL's path, no trailing slash */
    char region[64];
    bool virtual_host;
    char provider[32];
    char sigv4[128];                    /* "aws:amz:<region>:s3" */
    char *userpwd;                      /* s3 "key:secret" (a secret: never logged) */
    char *token_header;                 /* "x-amz-security-token: ..." or AIS "Authorization: Bearer ..." */
};

extern const struct rb_target_ops rb_target_http_ops, rb_target_s3_ops, rb_target_ais_ops;

/* Shared helpers of the target tables (target.c). */
int rb_target_split_url(const char *url, char *scheme, size_t slen, char *hostport, size_t hlen,
                        char *path, size_t plen);
/* Splits "bucket[/prefix]" into t->bucket and t->prefix (s3 and ais bucket naming). */
int rb_target_bucket_prefix(struct rb_target *t, const char *rest, const char *scheme, char *err, size_t errlen);
int rb_target_add_endpoint(struct rb_target *t, const char *url, char *err, size_t errlen);
/* Percent-encodes s into out keeping RFC 3986 unreserved characters (and '/' when keep_slash). */
int rb_url_escape(const char *s, bool keep_slash, char *out, size_t outlen);
/* Collects a body into b (write callback); stops past b->limit. */

/* Object URL and per-handle setup through the target's table. */
static inline int rb_target_object_url(const struct rb_target *t, size_t ep, const char *name, char *buf,
                                       size_t len)
{
    return t->ops->object_url(t, ep, name, buf, len);
}
static inline int rb_target_setup(const struct rb_target *t, CURL *easy, enum rb_load_op op,
                                  struct curl_slist **hdrs)
{
    return t->ops->setup(t, easy, op, hdrs);
}
static inline void rb_target_error_message(const struct rb_target *t, const char *body, size_t len,
                                           char *out, size_t outlen)
{
    out[0] = '\0';
    if (t->ops->error_message)
        t->ops->error_message(body, len, out, outlen);
}

/* ---- Shared by the load subcommands (load_cmd.c, tiers.c, sweep.c) ---- */

/* True on the rank that prints usage errors (the launcher's rank 0, or no launcher), before MPI starts. */
bool rb_load_first_rank(void);

/*
 * The shape of every load subcommand: parses argv against spec, sets up
 * libcurl, calls run(args, cli) and cleans up. Returns the exit status
 * (0 after --help, 2 for a usage error, else run's).
 */
int rb_load_command(const struct rb_cmd_spec *spec, int argc, char **argv,
                    int (*run)(void *args, struct rb_cli *cli), void *args);

/* The target options load get, sweep and train share (--endpoint, --region, --virtual-host, ...). */
struct rb_target_args {
    struct rb_strs endpoints;
    const char *region, *provider, *credentials_file, *profile;
    bool virtual_host;
};

/* Opens url with ta's options. Returns 0, or RB_EXIT_USAGE after the first rank printed the one-line reason. */
int rb_load_target_open(const struct rb_target_args *ta, const char *url, struct rb_target **t);

/* Prints "railbench: MESSAGE" once (on the first rank) and returns RB_EXIT_USAGE. */
int rb_load_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Builds the whole object set on every rank (collective): count generated names
 * "<prefix><index>", the names in filelist, or (count == 0 and no filelist)
 * rank 0's listing of t under prefix, broadcast to every rank. Returns 0
 * or an exit status after rank 0 logged why.
 */
int rb_load_build_objects(struct rb_harness *h, const struct rb_target *t, uint64_t count, const char *filelist,
                          const char *prefix, uint64_t timeout_ns, struct rb_objset *all);

#endif
