/* Targets: the protocols (struct rb_proto, one plug-in per scheme), object URLs, per-handle setup, listing, eviction. */
#ifndef RB_TARGET_INT_H
#define RB_TARGET_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <errno.h>

#include <curl/curl.h>

#include "../objset/objset_int.h"
#include "railbench/cli.h"
#include "railbench/log.h"

/*
 * Thread-safety: a target is built by rb_target_open on the main thread and
 * is read-only afterwards, so worker threads may call rb_target_object_url,
 * rb_target_setup, rb_target_error_message, rb_target_name and the other
 * getters on one target at the same time. Listing, probing and eviction
 * perform blocking requests and are called from the main thread.
 */

#define RB_URL_MAX 4096
#define RB_TARGET_MAX_ENDPOINTS 64

/* What a request does; the target sets up auth and headers per op once per connection slot. */
/* RB_LOAD_MIXED names the command load mixed; its requests are the other four, drawn per request (mixed.c). */
enum rb_load_op { RB_LOAD_GET, RB_LOAD_PUT, RB_LOAD_DELETE, RB_LOAD_HEAD, RB_LOAD_MIXED };

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

/* Room for every protocol's private options in one struct rb_target_cfg (rb_proto_opts_size: their sum). */
#define RB_PROTO_OPTS_BYTES 256

/*
 * How to open a target: the URL, then what the target options fill in
 * (rb_target_options: --endpoint, --timeout and --insecure, then each
 * protocol's own rows). A protocol's own options are a struct private to its
 * file: its rows give their offsets in it (struct rb_proto_opt) and the
 * values land in this cfg's popts, at the protocol's slot; zero bytes are
 * every row's default. Copying a cfg copies every protocol's options.
 */
struct rb_target_cfg {
    const char *url;              /* http://host:port/path, s3://bucket[/prefix], ais://bucket[/prefix] */
    struct rb_strs endpoints;     /* --endpoint URLs (s3, ais; http: replace the URL's host) */
    uint64_t timeout_ns;          /* --timeout: per request, listing page and probe; 0: none */
    bool insecure;                /* https: do not verify the server's certificate (--insecure) */
    _Alignas(max_align_t) unsigned char popts[RB_PROTO_OPTS_BYTES]; /* each protocol's options (rb_proto_opts) */
};

struct rb_target;

/*
 * Parses cfg into a target (the scheme picks the protocol, struct rb_proto) and
 * loads credentials for s3 from the environment or the credentials file.
 * Returns 0; -EINVAL for a malformed URL, unknown scheme, bad endpoint or an
 * option another protocol owns whose row refuses it elsewhere, or
 * -EACCES when s3 credentials are missing, with one line in err (both are
 * usage errors, exit 2). Free with rb_target_close (NULL-safe). Secrets
 * never appear in err.
 */
int rb_target_open(struct rb_target **t, const struct rb_target_cfg *cfg, char *err, size_t errlen);
/*
 * Adds the target options to t, their dests in cfg: --endpoint and --timeout,
 * then each protocol's own rows (s3's credentials, ais's provider), in the
 * order of the protocols (RB_PROTO's order). Every command that opens a target takes this
 * group; the value in cfg before parsing is each row's default. Main thread.
 */
void rb_target_options(struct rb_opts *t, struct rb_target_cfg *cfg);

/* Frees t (NULL-safe); credentials are wiped from memory first. */
void rb_target_close(struct rb_target *t);

/* The scheme of t's protocol: "http", "https", "s3", "ais" or "file". */
const char *rb_target_scheme(const struct rb_target *t);

/* Number of endpoints requests go to round-robin per connection (at least 1). */
size_t rb_target_endpoint_count(const struct rb_target *t);

/* The target as a user wrote it, for messages ("s3://bucket"). */
const char *rb_target_name(const struct rb_target *t);

/*
 * True when t's requests cross no interface the host counters count: every
 * endpoint on loopback (127.0.0.0/8, localhost, [::1]; the counters leave lo
 * out), or no network at all (file://). Pure.
 */
bool rb_target_local(const struct rb_target *t);

/* The object prefix given in the URL's path (s3://bucket/prefix/), "" when none. */
const char *rb_target_prefix(const struct rb_target *t);

/* rb_target_probe's default: one TCP connection to every endpoint. Returns 0 or -errno with err. */
int rb_target_probe_endpoints(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen);
/*
 * Opens one TCP connection to every endpoint (no request). Returns 0, or a
 * negative errno with one line in err naming the endpoint and the reason.
 */
int rb_target_probe(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen);

/*
 * Lists the objects under prefix (s3: ListObjectsV2 with pagination; ais: the
 * list action with continuation tokens; http: an nginx autoindex JSON page)
 * and appends them with their sizes to out. Returns 0, or -EIO/-EPROTO with
 * one line in err (the HTTP status and the server's message). HTTP targets
 * list through libcurl here; the commands list through the engine's
 * rb_engine_list, which takes the native engine unless they chose curl.
 */
int rb_target_list(const struct rb_target *t, const char *prefix, uint64_t timeout_ns,
                   struct rb_objset *out, char *err, size_t errlen);

/*
 * Called after each listing page with libcurl's result, the HTTP status,
 * the names listed so far (in out, after prefix filtering), and the page's
 * total and first-byte times. A non-zero return stops the listing
 * (rb_target_list_pages then returns -ECANCELED).
 */
typedef int rb_list_page_fn(void *ctx, CURLcode cc, long status, size_t names_so_far, uint64_t total_ns,
                            uint64_t ttfb_ns);

/* rb_target_list that calls on_page (may be NULL) after every page request, for listing benchmarks. */
int rb_target_list_pages(const struct rb_target *t, const char *prefix, uint64_t timeout_ns, struct rb_objset *out,
                         rb_list_page_fn *on_page, void *ctx, char *err, size_t errlen);

/* The most a listing page's body may hold (a bigger one is an error). */
#define RB_LIST_BODY_LIMIT (256u << 20)

/*
 * One listing page's request, the same for either engine: the method, the
 * URL at the first endpoint (its path and query as sent and signed), a body
 * with its Content-Type, or none. The protocol's list_spec fills it.
 */
struct rb_list_spec {
    const char *method;
    char url[RB_URL_MAX];
    char *body;                  /* malloc'd (rb_list_spec_free), or NULL */
    const char *content_type;    /* the body's, or NULL */
};
/* Frees s's body; idempotent. */
void rb_list_spec_free(struct rb_list_spec *s);
/* Fills s for t's next page after token (NULL: the first). Returns 0, or -errno with one line in err. */
int rb_target_list_spec(const struct rb_target *t, const char *prefix, const char *token, struct rb_list_spec *s,
                        char *err, size_t errlen);

/*
 * One listing page answered (either engine): rc and the status (0 none),
 * ebuf the engine's error words, the body; on success its names (filtered by
 * prefix) are appended to out and *token becomes the next page's (malloc'd)
 * or NULL at the end. Calls on_page (may be NULL) with the page's times.
 * Returns 0, -ECANCELED when on_page stops the listing, or -errno with err.
 */
int rb_target_list_page(const struct rb_target *t, const char *prefix, CURLcode rc, long status, const char *ebuf,
                        const char *body, size_t len, struct rb_objset *out, char **token, rb_list_page_fn *on_page,
                        void *ctx, uint64_t total_ns, uint64_t ttfb_ns, char *err, size_t errlen);

/* rb_target_list_pages on libcurl: one easy handle, page after page. */
int rb_target_list_curl(const struct rb_target *t, const char *prefix, uint64_t timeout_ns, struct rb_objset *out,
                        rb_list_page_fn *on_page, void *ctx, char *err, size_t errlen);

/* True when t's kind can empty a caching tier through its own API (AIStore's evict). */
bool rb_target_can_evict(const struct rb_target *t);

/*
 * Evicts names (prefix: their common prefix, may be NULL) from the tier t,
 * or, when names is NULL, everything t cached of its bucket (see
 * evict_int.h for AIStore's requests). Gives up after timeout_ns, or when
 * *stop becomes non-zero (stop may be NULL). Returns 0; -EINVAL with one
 * line in err when t's kind cannot evict; else what the protocol's evict
 * returns (-EIO, -ETIMEDOUT, -ECANCELED with err). Main thread only.
 */
int rb_target_evict(const struct rb_target *t, const struct rb_objset *names, const char *prefix,
                    uint64_t timeout_ns, const volatile int *stop, char *err, size_t errlen);

/* Whether t's kind has every capability in caps (enum rb_target_cap). Pure. */
bool rb_target_can(const struct rb_target *t, unsigned caps);
/* "sign-payload": the option that gave t the capability cap, for messages; NULL when its protocol has it anyway. */
const char *rb_target_cap_option(const struct rb_target *t, unsigned cap);
/* The capabilities of the kind of target url names, before it is opened (0: no kind known). Pure. */
unsigned rb_target_url_caps(const char *url);

/* The directory of a file target (no trailing slash); "" for a target without RB_TCAP_FILES. Pure. */
const char *rb_target_file_root(const struct rb_target *t);

/*
 * The directory of a file target held open (include/railbench/beneath.h:
 * every name of a run is resolved beneath it, never through a symbolic
 * link). Opened once, by the target's probe (or at the first call after
 * the directory appeared); the target closes it. Returns the descriptor or
 * -errno (-ENOTDIR for a target without RB_TCAP_FILES). Thread-safe.
 */
int rb_target_file_dir(const struct rb_target *t);

/*
 * What a kind of target can do, for the code outside proto/ that must know: it asks for a capability, never
 * for a scheme's name. A protocol declares its own (struct rb_proto's caps); a flag row adds the ones it
 * turns on for one target (RB_TCAP_SIGNED_BODIES, RB_TCAP_DIRECT: struct rb_proto_opt's caps).
 */
enum rb_target_cap {
    RB_TCAP_FILES = 1u << 0,            /* objects are files in a directory of this host (file://) */
    RB_TCAP_MULTIPART = 1u << 1,        /* multipart upload (--part-size, --multipart-threshold: S3) */
    RB_TCAP_LISTS = 1u << 2,            /* one bucket listing answers for every name, rather than a HEAD per name */
    RB_TCAP_REDIRECTS = 1u << 3,        /* the service redirects every request (AIStore's proxy): always followed */
    RB_TCAP_DEFAULT_ENDPOINT = 1u << 4, /* without --endpoint it goes to a public service (AWS S3) */
    RB_TCAP_SIGNED_BODIES = 1u << 5,    /* requests sign their bodies' hash (s3 --sign-payload): native engine only */
    RB_TCAP_DIRECT = 1u << 6,           /* requests go straight to the node owning the object (ais --ais-direct):
                                         * the route calls; native engine only */
};

/*
 * One option row of a protocol: the row as --help and the parser see it
 * (row.dest unused) and where its value lands, off bytes into the
 * protocol's private options struct (offsetof). elsewhere says what a value
 * given for a target of another protocol means: NULL, nothing (a command
 * with two targets hands the options to both; each reads its own); else the
 * run is refused with "--NAME: " and this text. caps: what the row, given,
 * adds to its target's (enum rb_target_cap; rb_target_cap_option names it).
 */
struct rb_proto_opt {
    struct rb_opt row;
    size_t off;
    const char *elsewhere;
    unsigned caps;
};
#define RB_PROTO_OPT(st, field, name, type, metavar, help, elsewhere)                              \
    {{name, 0, type, NULL, metavar, help, NULL}, offsetof(st, field), elsewhere, 0}
/* A flag row that turns on caps for its target (--sign-payload: RB_TCAP_SIGNED_BODIES). */
#define RB_PROTO_FLAG_CAP(st, field, name, help, elsewhere, caps)                                  \
    {{name, 0, RB_OPT_FLAG, NULL, NULL, help, NULL}, offsetof(st, field), elsewhere, caps}

/*
 * One protocol: the one plug-in a scheme brings (as fio's engines), chosen
 * once by the URL's scheme; the engines and commands call through it and
 * never ask which it is. Registered by RB_PROTO in its own file (a linker
 * section, as the report kinds): adding a protocol changes no other file.
 * Optional members are NULL.
 */
struct rb_nproto;

struct rb_proto {
    const char *scheme;
    const char *form;                   /* its URLs' form for messages, "s3://BUCKET[/FOLDER]"; NULL: an alias's */
    unsigned caps;                      /* enum rb_target_cap */
    /* Its option rows ending with {0} (NULL: none) and the size of the private struct they fill. */
    const struct rb_proto_opt *opts;
    size_t opts_size;
    /*
     * Parses what follows "scheme://" plus cfg (opts: this protocol's
     * options struct, read-only) into t: endpoints, the prefix, t->priv (its
     * private state, freed by close), extra caps. Main thread.
     */
    int (*parse)(struct rb_target *t, const char *rest, const struct rb_target_cfg *cfg, const void *opts,
                 char *err, size_t errlen);
    /* Frees t->priv (wiping secrets); NULL when parse allocates nothing. */
    void (*close)(struct rb_target *t);
    /* Writes the URL of object name at endpoint ep. Returns 0 or -ENAMETOOLONG. */
    int (*object_url)(const struct rb_target *t, size_t ep, const char *name, char *buf, size_t len);
    /* Sets what every request of this target needs on a fresh libcurl handle (auth, redirects); appends headers. */
    int (*setup)(const struct rb_target *t, CURL *easy, enum rb_load_op op, struct curl_slist **hdrs);
    /* The native engine's side: request shapes and signing (target_native_int.h); NULL: curl only. */
    const struct rb_nproto *native;
    /* Describes one listing request continuing after token (NULL for the first page). Returns 0 or -errno. */
    int (*list_spec)(const struct rb_target *t, const char *prefix, const char *token, struct rb_list_spec *s);
    /* Parses a listing page into out; *next gets a malloc'd token for the next page or NULL at the end. */
    int (*list_parse)(const struct rb_target *t, const char *body, size_t len, struct rb_objset *out,
                      char **next, char *err, size_t errlen);
    /* The server's error message in an error body ("InvalidAccessKeyId: ..."), for logs. */
    void (*error_message)(const char *body, size_t len, char *out, size_t outlen);
    /*
     * Empties the tier of names (their common prefix, or NULL), or of
     * everything it cached of the bucket when names is NULL; NULL when
     * this kind of target cannot evict (see rb_target_evict).
     */
    int (*evict)(const struct rb_target *t, const struct rb_objset *names, const char *prefix, uint64_t timeout_ns,
                 const volatile int *stop, char *err, size_t errlen);
    /* Checks that the target can be used at all (file: the directory exists); NULL: connect to every endpoint. */
    int (*probe)(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen);
    /* Lists the objects under prefix in one go (file: a directory walk); NULL: paginated HTTP listing requests. */
    int (*list)(const struct rb_target *t, const char *prefix, struct rb_objset *out, char *err, size_t errlen);
    /*
     * Whether object name exists, answered locally (file: a stat) rather than
     * by a HEAD per name. Returns 0 with *yes set, or -errno with one line in err.
     */
    int (*exists)(const struct rb_target *t, const char *name, bool *yes, char *err, size_t errlen);
    /*
     * Direct routing (RB_TCAP_DIRECT): loads the placement map once (any
     * thread; 0 or -errno with err), then the nodes (their count, each
     * one's id and "http[s]://HOST:PORT") and the node owning a name.
     */
    int (*route_load)(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen);
    size_t (*route_count)(const struct rb_target *t);
    const char *(*route_node)(const struct rb_target *t, size_t i, const char **id);
    size_t (*route_owner)(const struct rb_target *t, const char *name);
};

/* A protocol's registration, in its own file: RB_PROTO(s3, 30) = {.scheme = "s3", ...}; order: --help's. */
struct rb_proto_entry {
    int order;
    const struct rb_proto *proto;
};
#define RB_PROTO(name, order)                                                                      \
    static const struct rb_proto rb_proto_##name;                                                  \
    static const struct rb_proto_entry rb_proto_entry_##name                                       \
        __attribute__((used, section("rb_protos"), aligned(sizeof(void *)))) = {order, &rb_proto_##name}; \
    static const struct rb_proto rb_proto_##name

/* Every protocol linked in, by order; *n gets their count. Pure after the first call (thread-safe). */
const struct rb_proto *const *rb_proto_list(size_t *n);
/* The protocol of scheme (case as written), or NULL. */
const struct rb_proto *rb_proto_named(const char *scheme, size_t len);
/* Where p's options are in cfg (its slot in popts); p's opts_size bytes. */
void *rb_proto_opts(const struct rb_target_cfg *cfg, const struct rb_proto *p);
/* The storage of option name ("provider") in cfg, to set it as a command line would; NULL: no protocol has it. */
void *rb_target_cfg_opt(struct rb_target_cfg *cfg, const char *name);
/* Clears option name (NULL: every one) in cfg unless url's protocol owns it (a command opening two targets). */
void rb_target_cfg_only_for(struct rb_target_cfg *cfg, const char *url, const char *name);
/* "s3://" or "http://, https://, s3:// and ais://": the schemes whose protocols have cap (with) or lack it. Pure. */
void rb_proto_schemes(unsigned cap, bool with, char *buf, size_t len);
/* "http://, https://, s3:// and ais:// targets only": the schemes with a native side, for a refusal. Pure. */
const char *rb_proto_native_only(void);

struct rb_target {
    const struct rb_proto *ops;
    char name[1100];                    /* "s3://bucket", "http://host:port/path" */
    char prefix[1024];                  /* path after the bucket in the URL, ending in "/"; "" when none */
    char *endpoints[RB_TARGET_MAX_ENDPOINTS]; /* base URLs, no trailing slash */
    size_t nendpoints;
    bool insecure;                      /* https: certificates are not verified (--insecure) */
    unsigned caps;                      /* ops->caps and what this target's options add */
    const char *cap_opts[8];            /* per bit of the caps options add: the row's name (rb_target_cap_option) */
    uint64_t id;                        /* unique in the process: which target a kept worker serves */
    void *priv;                         /* the protocol's own state (its parse's; its close frees it) */
};

/* The native engine's side of t's protocol (target_native_int.h), or NULL when it has none. Pure. */
static inline const struct rb_nproto *rb_target_native(const struct rb_target *t)
{
    return t->ops->native;
}
/* Whether t's endpoint ep speaks TLS (an https:// endpoint). Pure. */
bool rb_target_endpoint_tls(const struct rb_target *t, size_t ep);
/* t's direct routing (RB_TCAP_DIRECT; see struct rb_proto's route calls). */
int rb_target_route_load(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen);
size_t rb_target_route_count(const struct rb_target *t);
const char *rb_target_route_node(const struct rb_target *t, size_t i, const char **id);
size_t rb_target_route_owner(const struct rb_target *t, const char *name);

/* Shared helpers of the protocols (target.c). */
/* Copies s into out (len bytes, always terminated) with CR, LF, tab as \r \n \t and other control bytes as \xNN. */
void rb_target_escape(const char *s, char *out, size_t len);
/*
 * Checks a URL before use: no credentials ("user:pass@" in the authority:
 * refused, and the message shows "***" in their place) and no space or
 * control character (the message shows the URL escaped). what names it in
 * the message ("target", "--endpoint"). Returns 0 or -EINVAL with err set.
 */
int rb_target_check_url(const char *what, const char *url, char *err, size_t errlen);
int rb_target_split_url(const char *url, char *scheme, size_t slen, char *hostport, size_t hlen,
                        char *path, size_t plen);
/* Splits "bucket[/path]" into bucket (256 bytes) and t->prefix "path/" (a folder; s3 and ais bucket naming). */
int rb_target_bucket_prefix(struct rb_target *t, const char *rest, const char *scheme, char *bucket, char *err,
                            size_t errlen);
/* Appends endpoint url (http[s]://HOST[:PORT], no path) to t. Returns 0, or -EINVAL/-ENOMEM with one line in err. */
int rb_target_add_endpoint(struct rb_target *t, const char *url, char *err, size_t errlen);
/* With --insecure, tells libcurl not to verify t's certificates (the native engine: native_tls.c); else nothing. */
void rb_target_tls_setup(const struct rb_target *t, CURL *easy);
/* Percent-encodes s into out keeping RFC 3986 unreserved characters (and '/' when keep_slash). */
int rb_url_escape(const char *s, bool keep_slash, char *out, size_t outlen);

/* Object URL and per-handle setup through the target's protocol. */
static inline int rb_target_object_url(const struct rb_target *t, size_t ep, const char *name, char *buf,
                                       size_t len)
{
    return t->ops->object_url(t, ep, name, buf, len);
}
static inline int rb_target_setup(const struct rb_target *t, CURL *easy, enum rb_load_op op,
                                  struct curl_slist **hdrs)
{
    rb_target_tls_setup(t, easy);
    return t->ops->setup ? t->ops->setup(t, easy, op, hdrs) : 0;
}
static inline void rb_target_error_message(const struct rb_target *t, const char *body, size_t len,
                                           char *out, size_t outlen)
{
    out[0] = '\0';
    if (t->ops->error_message)
        t->ops->error_message(body, len, out, outlen);
}

#endif
