/* Targets: the protocols' registry (a linker section) and their option slots, scheme dispatch, endpoints, probe, listing. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "target_int.h"
#include "target_native_int.h"
#include "railbench/buf.h"
#include "railbench/clock.h"

/* The entries RB_PROTO put in section rb_protos, from every protocol's file linked in. */
extern const struct rb_proto_entry __start_rb_protos[], __stop_rb_protos[];

#define PROTO_MAX 16

/* The protocols by order, and each one's slot in rb_target_cfg's popts (protocols sharing rows share one). */
static struct {
    pthread_once_t once;
    const struct rb_proto *list[PROTO_MAX];
    size_t slot[PROTO_MAX];
    size_t n;
    char native_only[200];      /* rb_proto_native_only */
    char schemes[200];          /* "http, s3, ais or file": each protocol's scheme but its aliases' */
    char forms[400];            /* "http://HOST[:PORT]/PATH, s3://BUCKET[/FOLDER], ...": their URLs' forms */
} reg = {.once = PTHREAD_ONCE_INIT};

/* The bytes row r's value takes (a protocol's rows are flags and strings). */
static size_t row_bytes(const struct rb_proto_opt *r)
{
    return r->row.type == RB_OPT_FLAG ? sizeof(bool) : r->row.type == RB_OPT_STR ? sizeof(char *) : 0;
}

static int by_order(const void *a, const void *b)
{
    const struct rb_proto_entry *x = a, *y = b;
    return (x->order > y->order) - (x->order < y->order);
}

/* reg.schemes and reg.forms, from the protocols with a form (an alias, https, has none). */
static void join_forms(void)
{
    size_t nf = 0, k = 0, as = 0, af = 0;
    for (size_t i = 0; i < reg.n; i++)
        nf += reg.list[i]->form != NULL;
    for (size_t i = 0; i < reg.n && as < sizeof reg.schemes && af < sizeof reg.forms; i++) {
        if (!reg.list[i]->form)
            continue;
        const char *sep = k == 0 ? "" : k + 1 == nf ? " or " : ", ";
        k++;
        as += (size_t)snprintf(reg.schemes + as, sizeof reg.schemes - as, "%s%s", sep, reg.list[i]->scheme);
        af += (size_t)snprintf(reg.forms + af, sizeof reg.forms - af, "%s%s", k == 1 ? "" : ", ", reg.list[i]->form);
    }
}

/* Joins into buf "http://, s3:// and ais://": the registered schemes with cap (with) or without it; cap 0: those
   with a native side. Returns the length written, or past len when cut short. */
static size_t join_schemes(char *buf, size_t len, unsigned cap, bool with)
{
    size_t k = 0, at = 0, of = 0;
    for (size_t pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < reg.n; i++) {
            const struct rb_proto *p = reg.list[i];
            if ((cap ? !!(p->caps & cap) : p->native != NULL) != with)
                continue;
            if (!pass)
                of++;
            else if (at < len)
                at += (size_t)snprintf(buf + at, len - at, "%s%s://", k++ == 0 ? "" : k == of ? " and " : ", ",
                                       p->scheme);
        }
    if (!k && len)
        buf[0] = '\0';
    return at;
}

static void reg_init(void)
{
    struct rb_proto_entry e[PROTO_MAX];
    /* The linker's bounds of one section: one array to cppcheck's eyes, two objects. */
    // cppcheck-suppress comparePointers
    size_t m = (size_t)(__stop_rb_protos - __start_rb_protos), used = 0;
    if (m > PROTO_MAX) {
        fprintf(stderr, "railbench: %zu protocols linked in, at most %d\n", m, PROTO_MAX);
        abort();
    }
    memcpy(e, __start_rb_protos, m * sizeof *e);
    qsort(e, m, sizeof *e, by_order);
    for (size_t i = 0; i < m; i++) {
        reg.list[i] = e[i].proto;
        reg.slot[i] = SIZE_MAX;
        for (size_t j = 0; j < i; j++)
            if (e[i].proto->opts && reg.list[j]->opts == e[i].proto->opts)
                reg.slot[i] = reg.slot[j];
        if (reg.slot[i] != SIZE_MAX)
            continue;
        for (const struct rb_proto_opt *r = e[i].proto->opts; r && r->row.name; r++)
            if (!row_bytes(r) || r->off + row_bytes(r) > e[i].proto->opts_size) {
                fprintf(stderr, "railbench: protocol %s: option --%s is not a flag or a string in its struct\n",
                        e[i].proto->scheme, r->row.name);
                abort();
            }
        reg.slot[i] = used;
        used += (e[i].proto->opts_size + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) * _Alignof(max_align_t);
        if (used > RB_PROTO_OPTS_BYTES) {
            fprintf(stderr, "railbench: the protocols' options need more than RB_PROTO_OPTS_BYTES (%d)\n",
                    RB_PROTO_OPTS_BYTES);
            abort();
        }
    }
    reg.n = m;
    size_t at = join_schemes(reg.native_only, sizeof reg.native_only, 0, true);
    if (at < sizeof reg.native_only)
        snprintf(reg.native_only + at, sizeof reg.native_only - at, " targets only");
    join_forms();
}

void rb_proto_schemes(unsigned cap, bool with, char *buf, size_t len)
{
    size_t n;
    rb_proto_list(&n);
    join_schemes(buf, len, cap, with);
}

const char *rb_proto_native_only(void)
{
    size_t n;
    rb_proto_list(&n);
    return reg.native_only;
}

const struct rb_proto *const *rb_proto_list(size_t *n)
{
    pthread_once(&reg.once, reg_init);
    *n = reg.n;
    return reg.list;
}

const struct rb_proto *rb_proto_named(const char *scheme, size_t len)
{
    size_t n;
    const struct rb_proto *const *all = rb_proto_list(&n);
    for (size_t i = 0; i < n; i++)
        if (strlen(all[i]->scheme) == len && strncmp(scheme, all[i]->scheme, len) == 0)
            return all[i];
    return NULL;
}

void *rb_proto_opts(const struct rb_target_cfg *cfg, const struct rb_proto *p)
{
    size_t n;
    rb_proto_list(&n);
    for (size_t i = 0; i < n; i++)
        if (reg.list[i] == p || (p->opts && reg.list[i]->opts == p->opts))
            return (void *)(cfg->popts + reg.slot[i]);
    return NULL;
}

/* Whether option row r holds a value in o (any byte not zero: zero is every row's default). */
static bool given(const struct rb_proto_opt *r, const unsigned char *o)
{
    for (size_t i = 0; i < row_bytes(r); i++)
        if (o[r->off + i])
            return true;
    return false;
}

void *rb_target_cfg_opt(struct rb_target_cfg *cfg, const char *name)
{
    size_t n;
    const struct rb_proto *const *all = rb_proto_list(&n);
    for (size_t i = 0; i < n; i++)
        for (const struct rb_proto_opt *r = all[i]->opts; r && r->row.name; r++)
            if (strcmp(r->row.name, name) == 0)
                return cfg->popts + reg.slot[i] + r->off;
    return NULL;
}

void rb_target_cfg_only_for(struct rb_target_cfg *cfg, const char *url, const char *name)
{
    const char *sep = strstr(url, "://");
    const struct rb_proto *mine = url[0] == '/' ? rb_proto_named("file", 4)
                                  : sep         ? rb_proto_named(url, (size_t)(sep - url))
                                                : NULL;
    size_t n;
    const struct rb_proto *const *all = rb_proto_list(&n);
    for (size_t i = 0; i < n; i++) {
        if (mine && (all[i] == mine || (mine->opts && all[i]->opts == mine->opts)))
            continue;
        for (const struct rb_proto_opt *r = all[i]->opts; r && r->row.name; r++) {
            if (name && strcmp(name, r->row.name) != 0)
                continue;
            memset(cfg->popts + reg.slot[i] + r->off, 0, row_bytes(r));
        }
    }
}

/* The refusal of an option given for a target of another protocol than its owner's (struct rb_proto_opt's elsewhere). */
static int refuse_foreign(const struct rb_proto *mine, const struct rb_target_cfg *cfg, char *err, size_t errlen)
{
    size_t n;
    const struct rb_proto *const *all = rb_proto_list(&n);
    for (size_t i = 0; i < n; i++) {
        if (all[i] == mine || !all[i]->opts || all[i]->opts == mine->opts)
            continue;
        for (const struct rb_proto_opt *r = all[i]->opts; r->row.name; r++)
            if (r->elsewhere && given(r, cfg->popts + reg.slot[i])) {
                snprintf(err, errlen, "--%s: %s", r->row.name, r->elsewhere);
                return -EINVAL;
            }
    }
    return 0;
}

void rb_target_options(struct rb_opts *t, struct rb_target_cfg *cfg)
{
    const struct rb_opt rows[] = {
        {"endpoint", 0, RB_OPT_STRS, &cfg->endpoints, "URL",
         "the server http[s]://HOST[:PORT] (S3, AIStore; for http:// it replaces the URL's host); repeatable, used "
         "round-robin per connection; s3:// without it is AWS, https://s3.<region>.amazonaws.com", NULL},
        {"timeout", 0, RB_OPT_DURATION, &cfg->timeout_ns, "D", "per-request timeout (0: none)", NULL},
        {"insecure", 0, RB_OPT_FLAG, &cfg->insecure, NULL,
         "https: do not verify the server's certificate (recorded in the result's config)", NULL},
        {0},
    };
    rb_opts_add(t, rows);
    /* Each protocol's own rows once (http and https share theirs), their dests in its slot of cfg. */
    size_t n;
    const struct rb_proto *const *all = rb_proto_list(&n);
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen |= all[j]->opts == all[i]->opts;
        if (!all[i]->opts || seen)
            continue;
        struct rb_opt own[16 + 1] = {{0}};
        size_t k = 0;
        for (const struct rb_proto_opt *r = all[i]->opts; r->row.name; r++, k++) {
            if (k == 16) {
                fprintf(stderr, "railbench: protocol %s: more than 16 option rows\n", all[i]->scheme);
                abort();
            }
            own[k] = r->row;
            own[k].dest = cfg->popts + reg.slot[i] + r->off;
        }
        rb_opts_add(t, own);
    }
}

/* host[:port] with a plausible host (letters, digits, '-', '.', '_' or a [v6] literal) and port 1..65535. */
static bool valid_hostport(const char *hp)
{
    if (!*hp)
        return false;
    const char *port = NULL;
    if (hp[0] == '[') {
        const char *end = strchr(hp, ']');
        if (!end || end == hp + 1)
            return false;
        if (end[1] == ':')
            port = end + 2;
        else if (end[1])
            return false;
    } else {
        const char *colon = strchr(hp, ':');
        for (const char *c = hp; *c && c != colon; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                  *c == '-' || *c == '.' || *c == '_'))
                return false;
        if (colon == hp)
            return false;
        port = colon ? colon + 1 : NULL;
    }
    if (port) {
        char *end;
        long v = strtol(port, &end, 10);
        if (!*port || *end || v < 1 || v > 65535)
            return false;
    }
    return true;
}

void rb_target_tls_setup(const struct rb_target *t, CURL *easy)
{
    if (t->insecure) {
        curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
    }
}

int rb_target_add_endpoint(struct rb_target *t, const char *url, char *err, size_t errlen)
{
    char scheme[16], hp[512], path[1024];
    int rc = rb_target_check_url("--endpoint", url, err, errlen);
    if (rc)
        return rc;
    if (rb_target_split_url(url, scheme, sizeof scheme, hp, sizeof hp, path, sizeof path) != 0 ||
        (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) || !valid_hostport(hp) ||
        (path[0] && strcmp(path, "/") != 0)) {
        snprintf(err, errlen, "--endpoint \"%.200s\": expected http[s]://HOST[:PORT]", url);
        return -EINVAL;
    }
    if (t->nendpoints == RB_TARGET_MAX_ENDPOINTS) {
        snprintf(err, errlen, "--endpoint: at most %d endpoints", RB_TARGET_MAX_ENDPOINTS);
        return -EINVAL;
    }
    char *e = malloc(strlen(scheme) + strlen(hp) + 4);
    if (!e)
        return -ENOMEM;
    sprintf(e, "%s://%s", scheme, hp);
    t->endpoints[t->nendpoints++] = e;
    return 0;
}

static int open_file_path(struct rb_target **out, const struct rb_target_cfg *cfg, char *err, size_t errlen);

int rb_target_open(struct rb_target **out, const struct rb_target_cfg *cfg, char *err, size_t errlen)
{
    *out = NULL;
    const char *url = cfg->url ? cfg->url : "";
    int rc = rb_target_check_url("target", url, err, errlen);
    if (rc)
        return rc;
    /* A plain absolute path is a file target, as fio and elbencho take one. */
    const char *sep = url[0] == '/' ? NULL : strstr(url, "://");
    if (url[0] == '/') {
        return open_file_path(out, cfg, err, errlen);
    }
    if (!sep) {
        snprintf(err, errlen,
                 "target \"%.200s\": expected %s or /PATH", url, reg.forms);
        return -EINVAL;
    }
    const struct rb_proto *ops = rb_proto_named(url, (size_t)(sep - url));
    if (!ops) {
        snprintf(err, errlen, "target \"%.200s\": unknown scheme \"%.*s\" (expected %s)", url,
                 (int)(sep - url > 32 ? 32 : sep - url), url, reg.schemes);
        return -EINVAL;
    }
    /* An option another protocol owns is refused rather than silently ignored, where its row says so. */
    if ((rc = refuse_foreign(ops, cfg, err, errlen)))
        return rc;
    struct rb_target *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    static atomic_uint_fast64_t ids;
    t->ops = ops;
    t->caps = ops->caps;
    t->id = atomic_fetch_add(&ids, 1) + 1;
    t->insecure = cfg->insecure;
    snprintf(t->name, sizeof t->name, "%.1000s", url);
    const unsigned char *mine = rb_proto_opts(cfg, ops);
    for (const struct rb_proto_opt *r = ops->opts; r && r->row.name; r++)
        if (r->caps && given(r, mine)) {
            t->caps |= r->caps;
            for (unsigned b = 0; b < 8; b++)
                if (r->caps & (1u << b))
                    t->cap_opts[b] = r->row.name;
        }
    rc = ops->parse(t, sep + 3, cfg, mine, err, errlen);
    if (rc) {
        rb_target_close(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* "/PATH" opened as "file:///PATH". */
static int open_file_path(struct rb_target **out, const struct rb_target_cfg *cfg, char *err, size_t errlen)
{
    size_t n = strlen(cfg->url);
    char *url = malloc(n + 8);
    if (!url)
        return -ENOMEM;
    memcpy(url, "file://", 7);
    memcpy(url + 7, cfg->url, n + 1);
    struct rb_target_cfg c = *cfg;
    c.url = url;
    int rc = rb_target_open(out, &c, err, errlen);
    free(url);
    return rc;
}

void rb_target_close(struct rb_target *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nendpoints; i++)
        free(t->endpoints[i]);
    if (t->ops->close)
        t->ops->close(t);
    free(t);
}

const char *rb_target_scheme(const struct rb_target *t)
{
    return t->ops->scheme;
}

bool rb_target_can(const struct rb_target *t, unsigned caps)
{
    return (t->caps & caps) == caps;
}

const char *rb_target_cap_option(const struct rb_target *t, unsigned cap)
{
    for (unsigned b = 0; b < 8; b++)
        if (cap == 1u << b)
            return t->cap_opts[b];
    return NULL;
}

unsigned rb_target_url_caps(const char *url)
{
    const char *sep = strstr(url, "://");
    const struct rb_proto *p = url[0] == '/' ? rb_proto_named("file", 4)
                               : sep         ? rb_proto_named(url, (size_t)(sep - url))
                                             : NULL;
    return p ? p->caps : 0;
}

bool rb_target_endpoint_tls(const struct rb_target *t, size_t ep)
{
    return ep < t->nendpoints && strncmp(t->endpoints[ep], "https:", 6) == 0;
}

int rb_target_route_load(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen)
{
    if (!(t->caps & RB_TCAP_DIRECT) || !t->ops->route_load) {
        snprintf(err, errlen, "%s: no direct routing", t->name);
        return -EINVAL;
    }
    return t->ops->route_load(t, timeout_ns, err, errlen);
}

size_t rb_target_route_count(const struct rb_target *t)
{
    return t->ops->route_count(t);
}

const char *rb_target_route_node(const struct rb_target *t, size_t i, const char **id)
{
    return t->ops->route_node(t, i, id);
}

size_t rb_target_route_owner(const struct rb_target *t, const char *name)
{
    return t->ops->route_owner(t, name);
}

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

int rb_nshape_path(struct rb_nshape *s, const char *a, const char *b)
{
    int n = snprintf(s->path, sizeof s->path, "%s%s", a, b);
    if (n < 0 || (size_t)n >= sizeof s->path)
        return -ENAMETOOLONG;
    s->path_len = (size_t)n;
    return 0;
}

bool rb_target_can_evict(const struct rb_target *t)
{
    return t->ops->evict != NULL;
}

int rb_target_evict(const struct rb_target *t, const struct rb_objset *names, const char *prefix,
                    uint64_t timeout_ns, const volatile int *stop, char *err, size_t errlen)
{
    if (!t->ops->evict) {
        snprintf(err, errlen, "%s: eviction through the API needs an AIStore tier (ais://BUCKET)", t->name);
        return -EINVAL;
    }
    return t->ops->evict(t, names, prefix, timeout_ns, stop, err, errlen);
}

size_t rb_target_endpoint_count(const struct rb_target *t)
{
    return t->nendpoints;
}

const char *rb_target_name(const struct rb_target *t)
{
    return t->name;
}

const char *rb_target_prefix(const struct rb_target *t)
{
    return t->prefix;
}

bool rb_target_local(const struct rb_target *t)
{
    for (size_t i = 0; i < t->nendpoints; i++) {
        char scheme[16], hostport[512], path[8];
        if (rb_target_split_url(t->endpoints[i], scheme, sizeof scheme, hostport, sizeof hostport, path, sizeof path))
            return false;
        /* The host without its port: 127.0.0.1:8080, localhost:8080, [::1]:8080. */
        char *colon = hostport[0] == '[' ? strchr(hostport, ']') : strrchr(hostport, ':');
        if (colon && hostport[0] == '[')
            colon[1] = '\0';
        else if (colon)
            *colon = '\0';
        if (strncmp(hostport, "127.", 4) != 0 && strcmp(hostport, "localhost") != 0 && strcmp(hostport, "[::1]") != 0)
            return false;
    }
    return true;
}

static long timeout_ms(uint64_t ns)
{
    return ns ? (long)((ns + RB_NS_PER_MS - 1) / RB_NS_PER_MS) : 0;
}

int rb_target_probe(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen)
{
    if (t->ops->probe)
        return t->ops->probe(t, timeout_ns, err, errlen);
    return rb_target_probe_endpoints(t, timeout_ns, err, errlen);
}

int rb_target_probe_endpoints(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen)
{
    for (size_t i = 0; i < t->nendpoints; i++) {
        CURL *c = curl_easy_init();
        if (!c)
            return -ENOMEM;
        char ebuf[CURL_ERROR_SIZE] = "";
        curl_easy_setopt(c, CURLOPT_URL, t->endpoints[i]);
        curl_easy_setopt(c, CURLOPT_CONNECT_ONLY, 1L);
        rb_target_tls_setup(t, c);
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        /* At most 10 s: the probe says whether the endpoint answers at all, not how fast. */
        uint64_t limit = timeout_ns && timeout_ns < 10 * RB_NS_PER_S ? timeout_ns : 10 * RB_NS_PER_S;
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms(limit));
        CURLcode rc = curl_easy_perform(c);
        curl_easy_cleanup(c);
        if (rc != CURLE_OK) {
            snprintf(err, errlen, "%s: cannot connect to endpoint %s: %s", t->name, t->endpoints[i],
                     ebuf[0] ? ebuf : curl_easy_strerror(rc));
            return rc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -ECONNREFUSED;
        }
    }
    return 0;
}

int rb_target_list(const struct rb_target *t, const char *prefix, uint64_t timeout_ns,
                   struct rb_objset *out, char *err, size_t errlen)
{
    return rb_target_list_pages(t, prefix, timeout_ns, out, NULL, NULL, err, errlen);
}

void rb_list_spec_free(struct rb_list_spec *s)
{
    free(s->body);
    s->body = NULL;
}

int rb_target_list_spec(const struct rb_target *t, const char *prefix, const char *token, struct rb_list_spec *s,
                        char *err, size_t errlen)
{
    *s = (struct rb_list_spec){.method = "GET"};
    int rc = t->ops->list_spec(t, prefix, token, s);
    if (rc) {
        rb_list_spec_free(s);
        snprintf(err, errlen, "%s: cannot build a listing request", t->name);
    }
    return rc;
}

int rb_target_list_page(const struct rb_target *t, const char *prefix, CURLcode cc, long status, const char *ebuf,
                        const char *body, size_t len, struct rb_objset *out, char **token, rb_list_page_fn *on_page,
                        void *ctx, uint64_t total_ns, uint64_t ttfb_ns, char *err, size_t errlen)
{
    int rc = 0;
    free(*token);
    *token = NULL;
    if (cc != CURLE_OK) {
        snprintf(err, errlen, "%s: listing failed: %s", t->name, ebuf && ebuf[0] ? ebuf : curl_easy_strerror(cc));
        rc = -EIO;
    } else if (status != 200) {
        char msg[300];
        rb_target_error_message(t, body ? body : "", len, msg, sizeof msg);
        snprintf(err, errlen, "%s: listing failed: HTTP %ld%s%s", t->name, status, msg[0] ? " " : "", msg);
        rc = -EIO;
    } else {
        struct rb_objset page = {0};
        rc = t->ops->list_parse(t, body ? body : "", len, &page, token, err, errlen);
        /* Servers that cannot filter by prefix (a web server's index) are filtered here. */
        size_t plen = prefix ? strlen(prefix) : 0;
        char buf[RB_OBJSET_NAME_BYTES];
        for (uint64_t i = 0; !rc && i < page.n; i++) {
            const char *name = rb_objset_name(&page, i, buf);
            if (!plen || strncmp(name, prefix, plen) == 0)
                rc = rb_objset_add(out, name, rb_objset_size(&page, i));
        }
        rb_objset_free(&page);
        if (rc == -ENAMETOOLONG)
            snprintf(err, errlen, "%s: listing: an object name is longer than %d bytes", t->name, RB_OBJSET_NAME_MAX);
        else if (rc && !err[0])
            snprintf(err, errlen, "%s: listing: %s", t->name, strerror(-rc));
    }
    if (on_page) {
        size_t names = rc == 0 && cc == CURLE_OK && status == 200 ? out->n : 0;
        if (on_page(ctx, cc, status, names, total_ns, ttfb_ns) && !rc) {
            snprintf(err, errlen, "%s: listing stopped", t->name);
            rc = -ECANCELED;
        }
    }
    return rc;
}

/* libcurl's listing: one easy handle, page after page, each through rb_target_list_page. */
int rb_target_list_curl(const struct rb_target *t, const char *prefix, uint64_t timeout_ns, struct rb_objset *out,
                        rb_list_page_fn *on_page, void *ctx, char *err, size_t errlen)
{
    CURL *c = curl_easy_init();
    if (!c)
        return -ENOMEM;
    char *token = NULL;
    int rc = 0;
    struct rb_buf body = {.limit = RB_LIST_BODY_LIMIT};
    for (;;) {
        struct curl_slist *hdrs = NULL;
        struct rb_list_spec spec;
        char ebuf[CURL_ERROR_SIZE] = "", ctype[100];
        body.len = 0; /* the buffer is kept for the next page */
        body.oom = false;
        if (body.s)
            body.s[0] = '\0';
        curl_easy_reset(c);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, rb_buf_curl_write);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms(timeout_ns));
        rc = rb_target_setup(t, c, RB_LOAD_GET, &hdrs);
        if (rc) {
            snprintf(err, errlen, "%s: cannot build a listing request", t->name);
            curl_slist_free_all(hdrs);
            break;
        }
        if ((rc = rb_target_list_spec(t, prefix, token, &spec, err, errlen))) {
            curl_slist_free_all(hdrs);
            break;
        }
        struct curl_slist *l = hdrs;
        if (spec.content_type) {
            snprintf(ctype, sizeof ctype, "Content-Type: %s", spec.content_type);
            l = curl_slist_append(hdrs, ctype);
        }
        if ((spec.content_type && !l) || curl_easy_setopt(c, CURLOPT_URL, spec.url) != CURLE_OK ||
            (spec.body && curl_easy_setopt(c, CURLOPT_POSTFIELDS, spec.body) != CURLE_OK) ||
            curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, spec.method) != CURLE_OK) {
            snprintf(err, errlen, "%s: cannot build a listing request", t->name);
            curl_slist_free_all(l ? l : hdrs);
            rb_list_spec_free(&spec);
            rc = -ENOMEM;
            break;
        }
        hdrs = l;
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
        CURLcode cc = curl_easy_perform(c);
        long status = 0;
        curl_off_t total_us = 0, ttfb_us = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(c, CURLINFO_TOTAL_TIME_T, &total_us);
        curl_easy_getinfo(c, CURLINFO_STARTTRANSFER_TIME_T, &ttfb_us);
        curl_slist_free_all(hdrs);
        rb_list_spec_free(&spec);
        rc = rb_target_list_page(t, prefix, cc, status, ebuf, body.s, body.len, out, &token, on_page, ctx,
                                 (uint64_t)total_us * 1000, (uint64_t)ttfb_us * 1000, err, errlen);
        if (rc || !token)
            break;
    }
    rb_buf_free(&body);
    free(token);
    curl_easy_cleanup(c);
    return rc;
}

int rb_target_list_pages(const struct rb_target *t, const char *prefix, uint64_t timeout_ns, struct rb_objset *out,
                         rb_list_page_fn *on_page, void *ctx, char *err, size_t errlen)
{
    if (t->ops->list) {
        uint64_t t0 = rb_clock_ns();
        int rc = t->ops->list(t, prefix, out, err, errlen);
        uint64_t ns = rb_clock_ns() - t0;
        /* One page: the whole walk (a listing benchmark sees its time as one page's). */
        if (on_page && on_page(ctx, CURLE_OK, rc ? 0 : 200, rc ? 0 : out->n, ns, ns) && !rc) {
            snprintf(err, errlen, "%s: listing stopped", t->name);
            rc = -ECANCELED;
        }
        return rc;
    }
    if (!t->ops->list_spec) {
        snprintf(err, errlen, "%s: this target cannot be listed", t->name);
        return -EOPNOTSUPP;
    }
    return rb_target_list_curl(t, prefix, timeout_ns, out, on_page, ctx, err, errlen);
}
