/* s3:// target: SigV4 through libcurl (CURLOPT_AWS_SIGV4), path- or virtual-host style, ListObjectsV2 pages. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target_s3_int.h"

/*
 * libcurl 7.88 signs the value of a caller-supplied x-amz-content-sha256
 * header as the payload hash and adds no such header itself (S3 requires
 * one); it hashes only CURLOPT_POSTFIELDS, never an upload read callback.
 * So every request carries UNSIGNED-PAYLOAD, which S3 accepts for any
 * request (AWS S3 API reference, "Authenticating Requests: Using the
 * Authorization Header"), and PUT bodies stream without being hashed first.
 * libcurl also signs the query string as written, so listing parameters are
 * written already sorted and RFC 3986-encoded.
 */
#define PAYLOAD_HDR "x-amz-content-sha256: UNSIGNED-PAYLOAD"

/* Bucket names per the S3 rules: 3-63 of [a-z0-9.-], starting and ending with a letter or digit. */
static bool valid_bucket(const char *b, size_t n)
{
    if (n < 3 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = b[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && ((c != '.' && c != '-') || i == 0 || i == n - 1))
            return false;
    }
    return true;
}

/* Splits "bucket[/prefix]"; shared with ais:// (whose bucket names follow the same shape). */
int rb_target_bucket_prefix(struct rb_target *t, const char *rest, const char *scheme, char *bucket, char *err,
                            size_t errlen)
{
    size_t n = strcspn(rest, "/");
    if (!valid_bucket(rest, n)) {
        snprintf(err, errlen, "target \"%.200s\": bad bucket name \"%.*s\" (expected %s://BUCKET[/FOLDER], "
                 "BUCKET 3-63 of a-z 0-9 . -)", t->name, (int)(n > 80 ? 80 : n), rest, scheme);
        return -EINVAL;
    }
    memcpy(bucket, rest, n);
    bucket[n] = '\0';
    const char *p = rest + n;
    if (*p == '/')
        p++;
    /* The path names a folder, as file:// and http:// do: s3://b/ck is the prefix "ck/" (keys ck/NAME). */
    size_t pl = strlen(p);
    bool slash = pl && p[pl - 1] != '/';
    if (pl + slash >= sizeof t->prefix || strpbrk(p, "?#")) {
        snprintf(err, errlen, "target \"%.200s\": bad object prefix", t->name);
        return -EINVAL;
    }
    snprintf(t->prefix, sizeof t->prefix, "%s%s", p, slash ? "/" : "");
    return 0;
}

/* Value of key in the [profile] section of an AWS credentials file (INI); malloc'd or NULL. */
static char *ini_value(const char *path, const char *profile, const char *key, bool *found_profile)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char line[4096], *val = NULL;
    bool in = false;
    while (fgets(line, sizeof line, f)) {
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        s[strcspn(s, "\r\n")] = '\0';
        if (*s == '#' || *s == ';' || !*s)
            continue;
        if (*s == '[') {
            char *end = strchr(s, ']');
            if (!end)
                continue;
            *end = '\0';
            char *name = s + 1;
            while (*name == ' ')
                name++;
            if (strncmp(name, "profile ", 8) == 0) /* the ~/.aws/config spelling */
                name += 8;
            size_t nl = strlen(name);
            while (nl && name[nl - 1] == ' ')
                name[--nl] = '\0';
            in = strcmp(name, profile) == 0;
            if (in)
                *found_profile = true;
            continue;
        }
        if (!in)
            continue;
        char *eq = strchr(s, '=');
        if (!eq)
            continue;
        char *k = s, *ke = eq;
        while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
            ke--;
        if ((size_t)(ke - k) != strlen(key) || strncmp(k, key, strlen(key)) != 0)
            continue;
        char *v = eq + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t vl = strlen(v);
        while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
            v[--vl] = '\0';
        free(val);
        val = strdup(v);
    }
    /* The line buffer held a secret. */
    memset(line, 0, sizeof line);
    fclose(f);
    return val;
}

static int set_credentials(struct rb_s3 *t, const char *id, const char *secret, const char *token)
{
    size_t n = strlen(id) + strlen(secret) + 2;
    t->userpwd = malloc(n);
    if (!t->userpwd)
        return -ENOMEM;
    snprintf(t->userpwd, n, "%s:%s", id, secret);
    if (token && *token) {
        n = strlen(token) + 32;
        t->token_header = malloc(n);
        if (!t->token_header)
            return -ENOMEM;
        snprintf(t->token_header, n, "x-amz-security-token: %s", token);
    }
    return 0;
}

/* Credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY[/AWS_SESSION_TOKEN], else the credentials file's profile. */
static int load_credentials(struct rb_s3 *s3, const struct rb_target *t, const struct rb_s3_opts *cfg, char *err,
                            size_t errlen)
{
    const char *id = getenv("AWS_ACCESS_KEY_ID"), *secret = getenv("AWS_SECRET_ACCESS_KEY");
    bool have_id = id && *id, have_secret = secret && *secret;
    if (have_id != have_secret) {
        snprintf(err, errlen, "%s: %s is set but %s is not; set both (or neither, to use a credentials file)",
                 t->name, have_id ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                 have_id ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
        return -EACCES;
    }
    if (have_id && !cfg->credentials_file)
        return set_credentials(s3, id, secret, getenv("AWS_SESSION_TOKEN"));

    char path[4096];
    const char *explicit_file = cfg->credentials_file;
    if (explicit_file)
        snprintf(path, sizeof path, "%s", explicit_file);
    else if (getenv("AWS_SHARED_CREDENTIALS_FILE") && *getenv("AWS_SHARED_CREDENTIALS_FILE"))
        snprintf(path, sizeof path, "%s", getenv("AWS_SHARED_CREDENTIALS_FILE"));
    else
        snprintf(path, sizeof path, "%s/.aws/credentials", getenv("HOME") ? getenv("HOME") : "");
    const char *profile = cfg->profile ? cfg->profile : getenv("AWS_PROFILE");
    if (!profile || !*profile)
        profile = "default";

    FILE *probe = fopen(path, "r");
    if (!probe) {
        if (explicit_file)
            snprintf(err, errlen, "--credentials-file %s: %s", path, strerror(errno));
        else
            snprintf(err, errlen,
                     "%s: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give "
                     "--credentials-file FILE [--profile NAME] (no %s)",
                     t->name, path);
        return -EACCES;
    }
    fclose(probe);
    bool found = false;
    char *fid = ini_value(path, profile, "aws_access_key_id", &found);
    char *fsecret = ini_value(path, profile, "aws_secret_access_key", &found);
    char *ftoken = ini_value(path, profile, "aws_session_token", &found);
    int rc = 0;
    if (!found) {
        snprintf(err, errlen, "%s: profile \"%s\" not found in %s (--profile NAME or AWS_PROFILE)", t->name,
                 profile, path);
        rc = -EACCES;
    } else if (!fid || !*fid || !fsecret || !*fsecret) {
        snprintf(err, errlen, "%s: profile \"%s\" in %s lacks aws_access_key_id or aws_secret_access_key",
                 t->name, profile, path);
        rc = -EACCES;
    } else {
        rc = set_credentials(s3, fid, fsecret, ftoken);
    }
    if (fsecret)
        memset(fsecret, 0, strlen(fsecret));
    if (ftoken)
        memset(ftoken, 0, strlen(ftoken));
    free(fid);
    free(fsecret);
    free(ftoken);
    return rc;
}

static int s3_parse(struct rb_target *t, const char *rest, const struct rb_target_cfg *cfg, const void *opts,
                    char *err, size_t errlen)
{
    const struct rb_s3_opts *o = opts;
    struct rb_s3 *s3 = calloc(1, sizeof *s3);
    if (!s3)
        return -ENOMEM;
    t->priv = s3;
    int rc = rb_target_bucket_prefix(t, rest, "s3", s3->bucket, err, errlen);
    if (rc)
        return rc;
    const char *region = o->region ? o->region : getenv("AWS_REGION");
    if (!region || !*region)
        region = "us-east-1";
    if (strlen(region) >= sizeof s3->region || strchr(region, ':')) {
        snprintf(err, errlen, "--region \"%.80s\": expected a region name such as us-east-1", region);
        return -EINVAL;
    }
    snprintf(s3->region, sizeof s3->region, "%s", region);
    snprintf(s3->sigv4, sizeof s3->sigv4, "aws:amz:%s:s3", s3->region);
    s3->virtual_host = o->virtual_host;
    for (size_t i = 0; i < cfg->endpoints.n; i++)
        if ((rc = rb_target_add_endpoint(t, cfg->endpoints.v[i], err, errlen)))
            return rc;
    if (cfg->endpoints.n == 0) {
        char ep[160];
        snprintf(ep, sizeof ep, "https://s3.%s.amazonaws.com", s3->region);
        if ((rc = rb_target_add_endpoint(t, ep, err, errlen)))
            return rc;
    }
    return load_credentials(s3, t, o, err, errlen);
}

/* The secrets leave memory with the target. */
static void s3_close(struct rb_target *t)
{
    struct rb_s3 *s3 = t->priv;
    if (!s3)
        return;
    if (s3->userpwd) {
        memset(s3->userpwd, 0, strlen(s3->userpwd));
        free(s3->userpwd);
    }
    if (s3->token_header) {
        memset(s3->token_header, 0, strlen(s3->token_header));
        free(s3->token_header);
    }
    free(s3);
}

/* The endpoint's base URL for this bucket: http://host:port/bucket, or http://bucket.host:port (virtual host). */
static int bucket_base(const struct rb_target *t, size_t ep, char *buf, size_t len)
{
    const struct rb_s3 *s3 = rb_s3_of(t);
    const char *e = t->endpoints[ep % t->nendpoints];
    int n;
    if (s3->virtual_host) {
        const char *hp = strstr(e, "://") + 3;
        n = snprintf(buf, len, "%.*s%s.%s", (int)(hp - e), e, s3->bucket, hp);
    } else {
        n = snprintf(buf, len, "%s/%s", e, s3->bucket);
    }
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int s3_object_url(const struct rb_target *t, size_t ep, const char *name, char *buf, size_t len)
{
    char base[1024], esc[3 * 1024 + 1];
    if (bucket_base(t, ep, base, sizeof base) || rb_url_escape(name, true, esc, sizeof esc))
        return -ENAMETOOLONG;
    int n = snprintf(buf, len, "%s/%s", base, esc);
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* True for "Name:" with nothing after the colon: libcurl's way to remove a header it would add itself. */
static bool removal_entry(const char *h)
{
    const char *colon = strchr(h, ':');
    if (!colon)
        return false;
    for (const char *v = colon + 1; *v; v++)
        if (*v != ' ' && *v != '\t')
            return false;
    return true;
}

/*
 * libcurl 7.88's SigV4 signs every entry of CURLOPT_HTTPHEADER, removal
 * entries included: the engine's "Expect:" (no 100-continue wait before a
 * PUT body) went into SignedHeaders as "expect;" but never onto the wire,
 * and a server that checks signatures (Ceph RGW) answers 403
 * SignatureDoesNotMatch. So the list handed to libcurl keeps only headers
 * that are sent, and the 100-continue wait is switched off instead by a zero
 * wait (CURLOPT_EXPECT_100_TIMEOUT_MS): libcurl then sends its own
 * "Expect: 100-continue", unsigned (SigV4 only requires host and x-amz-*),
 * and the body straight after the headers.
 */
static int drop_removal_entries(struct curl_slist **hdrs, bool *dropped)
{
    struct curl_slist *kept = NULL;
    *dropped = false;
    for (const struct curl_slist *h = *hdrs; h; h = h->next) {
        if (removal_entry(h->data)) {
            *dropped = true;
            continue;
        }
        struct curl_slist *l = curl_slist_append(kept, h->data);
        if (!l) {
            curl_slist_free_all(kept);
            return -ENOMEM;
        }
        kept = l;
    }
    curl_slist_free_all(*hdrs);
    *hdrs = kept;
    return 0;
}

static int s3_setup(const struct rb_target *t, CURL *easy, enum rb_load_op op, struct curl_slist **hdrs)
{
    (void)op;
    const struct rb_s3 *s3 = rb_s3_of(t);
    bool dropped;
    int rc = drop_removal_entries(hdrs, &dropped);
    if (rc)
        return rc;
    if (dropped)
        RB_CURL_CHECK(curl_easy_setopt(easy, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L));
    RB_CURL_CHECK(curl_easy_setopt(easy, CURLOPT_AWS_SIGV4, s3->sigv4));
    RB_CURL_CHECK(curl_easy_setopt(easy, CURLOPT_USERPWD, s3->userpwd));
    struct curl_slist *l = curl_slist_append(*hdrs, PAYLOAD_HDR);
    if (!l)
        return -ENOMEM;
    *hdrs = l;
    if (s3->token_header) {
        l = curl_slist_append(*hdrs, s3->token_header);
        if (!l)
            return -ENOMEM;
        *hdrs = l;
    }
    return 0;
}

static int s3_list_spec(const struct rb_target *t, const char *prefix, const char *token, struct rb_list_spec *s)
{
    char base[1024], etok[2048] = "", epre[3 * 1024 + 1] = "";
    if (bucket_base(t, 0, base, sizeof base))
        return -ENAMETOOLONG;
    if ((token && rb_url_escape(token, false, etok, sizeof etok)) ||
        (prefix && rb_url_escape(prefix, false, epre, sizeof epre)))
        return -ENAMETOOLONG;
    /* Parameters in byte order: SigV4's canonical query string is sorted and libcurl signs it as written. */
    int n = snprintf(s->url, sizeof s->url, "%s%s?%s%s%slist-type=2&max-keys=1000%s%s", base,
                     rb_s3_of(t)->virtual_host ? "/" : "", token ? "continuation-token=" : "", etok, token ? "&" : "",
                     epre[0] ? "&prefix=" : "", epre);
    return n < 0 || (size_t)n >= sizeof s->url ? -ENAMETOOLONG : 0;
}

/* Text of the first <tag>...</tag> in [p, end), XML entities decoded, into out; returns a pointer past it or NULL. */
static const char *xml_text(const char *p, const char *end, const char *tag, char *out, size_t outlen)
{
    /* "<tag>" and "</tag>" made by hand: a page of 1,000 keys asks for 2,000 of them (snprintf showed in the profile). */
    char open[64], close[64];
    size_t tl = strlen(tag);
    if (tl > sizeof open - 4)
        return NULL;
    open[0] = close[0] = '<';
    close[1] = '/';
    memcpy(open + 1, tag, tl);
    memcpy(close + 2, tag, tl);
    open[tl + 1] = close[tl + 2] = '>';
    open[tl + 2] = close[tl + 3] = '\0';
    size_t ol = tl + 2;
    const char *s = p;
    for (;;) {
        s = memchr(s, '<', (size_t)(end - s));
        if (!s || (size_t)(end - s) < ol)
            return NULL;
        if (s[1] == open[1] && memcmp(s, open, ol) == 0) /* the second byte first: most tags differ there */
            break;
        s++;
    }
    s += ol;
    const char *e = s;
    size_t cl = tl + 3;
    for (;;) {
        e = memchr(e, '<', (size_t)(end - e));
        if (!e || (size_t)(end - e) < cl)
            return NULL;
        if (memcmp(e, close, cl) == 0)
            break;
        e++;
    }
    size_t o = 0;
    for (const char *c = s; c < e && o + 1 < outlen;) {
        if (*c != '&') {
            out[o++] = *c++;
            continue;
        }
        static const struct { const char *ent; char ch; } ents[] = {
            {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
        bool done = false;
        for (size_t i = 0; i < sizeof ents / sizeof ents[0] && !done; i++) {
            size_t el = strlen(ents[i].ent);
            if ((size_t)(e - c) >= el && memcmp(c, ents[i].ent, el) == 0) {
                out[o++] = ents[i].ch;
                c += el;
                done = true;
            }
        }
        if (!done && c + 2 < e && c[1] == '#') {
            char *q;
            unsigned long cp = c[2] == 'x' ? strtoul(c + 3, &q, 16) : strtoul(c + 2, &q, 10);
            if (q < e && *q == ';' && cp > 0 && cp < 0x110000) {
                /* UTF-8 encode the code point. */
                unsigned char u[4];
                size_t ul;
                if (cp < 0x80) { u[0] = (unsigned char)cp; ul = 1; }
                else if (cp < 0x800) { u[0] = (unsigned char)(0xc0 | (cp >> 6)); u[1] = (unsigned char)(0x80 | (cp & 0x3f)); ul = 2; }
                else if (cp < 0x10000) { u[0] = (unsigned char)(0xe0 | (cp >> 12)); u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f)); u[2] = (unsigned char)(0x80 | (cp & 0x3f)); ul = 3; }
                else { u[0] = (unsigned char)(0xf0 | (cp >> 18)); u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f)); u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f)); u[3] = (unsigned char)(0x80 | (cp & 0x3f)); ul = 4; }
                for (size_t k = 0; k < ul && o + 1 < outlen; k++)
                    out[o++] = (char)u[k];
                c = q + 1;
                done = true;
            }
        }
        if (!done)
            out[o++] = *c++;
    }
    out[o] = '\0';
    return e + cl;
}

static int s3_list_parse(const struct rb_target *t, const char *body, size_t len, struct rb_objset *out,
                         char **next, char *err, size_t errlen)
{
    *next = NULL;
    const char *end = body + len;
    if (!strstr(body, "<ListBucketResult")) {
        snprintf(err, errlen, "%s: listing: the reply is not a ListBucketResult", t->name);
        return -EPROTO;
    }
    char key[2048], size[64];
    const char *p = body, *first = end; /* the page's <Contents> run from first to p */
    for (;;) {
        const char *c = strstr(p, "<Contents>");
        if (!c)
            break;
        if (first == end)
            first = c;
        const char *ce = strstr(c, "</Contents>");
        if (!ce) {
            snprintf(err, errlen, "%s: listing: truncated <Contents>", t->name);
            return -EPROTO;
        }
        if (!xml_text(c, ce, "Key", key, sizeof key)) {
            snprintf(err, errlen, "%s: listing: <Contents> without <Key>", t->name);
            return -EPROTO;
        }
        uint64_t sz = 0;
        if (xml_text(c, ce, "Size", size, sizeof size))
            sz = strtoull(size, NULL, 10);
        int rc = rb_objset_add(out, key, sz);
        if (rc)
            return rc;
        p = ce + 11;
    }
    /* IsTruncated and NextContinuationToken are the keys' siblings: looked for before and after them only. */
    char truncated[16] = "", tok[1024] = "";
    if (!xml_text(body, first, "IsTruncated", truncated, sizeof truncated))
        xml_text(p, end, "IsTruncated", truncated, sizeof truncated);
    if (strcmp(truncated, "true") == 0) {
        if (!xml_text(body, first, "NextContinuationToken", tok, sizeof tok))
            xml_text(p, end, "NextContinuationToken", tok, sizeof tok);
        if (!tok[0]) {
            snprintf(err, errlen, "%s: listing: truncated page without NextContinuationToken", t->name);
            return -EPROTO;
        }
        *next = strdup(tok);
        if (!*next)
            return -ENOMEM;
    }
    return 0;
}

/* "<Code>: <Message>" of an S3 <Error> body. */
static void s3_error_message(const char *body, size_t len, char *out, size_t outlen)
{
    char code[128] = "", msg[256] = "";
    const char *end = body + len;
    xml_text(body, end, "Code", code, sizeof code);
    xml_text(body, end, "Message", msg, sizeof msg);
    if (code[0])
        snprintf(out, outlen, "%s%s%s", code, msg[0] ? ": " : "", msg);
}

/* s3's own options: signing region, addressing style, where the credentials come from, signed bodies. */
static const struct rb_proto_opt s3_opts[] = {
    RB_PROTO_OPT(struct rb_s3_opts, region, "region", RB_OPT_STR, "NAME",
                 "S3 signing region (if not given: $AWS_REGION, else us-east-1)", NULL),
    RB_PROTO_OPT(struct rb_s3_opts, virtual_host, "virtual-host", RB_OPT_FLAG, NULL,
                 "S3 virtual-host style (bucket.host) instead of path style",
                 "only an s3:// target has virtual-host style (bucket.host)"),
    RB_PROTO_OPT(struct rb_s3_opts, credentials_file, "credentials-file", RB_OPT_STR, "FILE",
                 "S3 credentials file (if not given: $AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials)", NULL),
    RB_PROTO_OPT(struct rb_s3_opts, profile, "profile", RB_OPT_STR, "NAME",
                 "profile in the credentials file (if not given: $AWS_PROFILE, else default)", NULL),
    RB_PROTO_FLAG_CAP(struct rb_s3_opts, sign_payload, "sign-payload",
                      "s3: sign each body's SHA-256 (x-amz-content-sha256) instead of UNSIGNED-PAYLOAD; native engine "
                      "only",
                      "only an s3:// target signs its requests' bodies", RB_TCAP_SIGNED_BODIES),
    {{0}, 0, NULL, 0},
};

RB_PROTO(s3, 30) = {
    .scheme = "s3",
    .form = "s3://BUCKET[/FOLDER]",
    .caps = RB_TCAP_MULTIPART | RB_TCAP_LISTS | RB_TCAP_DEFAULT_ENDPOINT,
    .opts = s3_opts,
    .opts_size = sizeof(struct rb_s3_opts),
    .parse = s3_parse,
    .close = s3_close,
    .object_url = s3_object_url,
    .setup = s3_setup,
    .native = &rb_s3_native,
    .list_spec = s3_list_spec,
    .list_parse = s3_list_parse,
    .error_message = s3_error_message,
};
