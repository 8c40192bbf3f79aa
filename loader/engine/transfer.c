/* One request slot and one request: libcurl options and callbacks, the GET and PUT rows, classification, accounting. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "payload_int.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "worker_int.h"

#define ERRBODY_BYTES 2048

const char *const rb_load_err_names[RB_LERR_COUNT + 1] = {RB_LOAD_ERR_NAMES NULL};
const char *const rb_load_extra_names[RB_LX_COUNT + 1] = {"redirects", "cache_hit", "cache_miss",
                                                          "cache_other", "cache_absent", NULL};

/* ---- libcurl callbacks ---- */

void rb_xfer_cache_header(struct rb_req *r, const char *p, size_t len)
{
    const char *name = r->w->o->cache_header;
    /* A list "A,B": the value of the earliest name in the list that the response carries counts. */
    size_t nl = 0;
    unsigned pos = 0;
    for (; *name; pos++) {
        nl = strcspn(name, ",");
        if (nl && len > nl + 1 && p[nl] == ':' && strncasecmp(p, name, nl) == 0)
            break;
        name += nl + (name[nl] == ',');
    }
    if (*name && pos < r->cache_pos) {
        r->cache_pos = pos;
        const char *v = p + nl + 1, *end = p + len;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        size_t vl = (size_t)(end - v);
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
            vl--;
        /* nginx's $upstream_cache_status is HIT or MISS; Varnish/CDNs write "HIT from ...". */
        if (vl >= 3 && strncasecmp(v, "HIT", 3) == 0)
            r->cache = RB_LX_CACHE_HIT;
        else if (vl >= 4 && strncasecmp(v, "MISS", 4) == 0)
            r->cache = RB_LX_CACHE_MISS;
        else
            r->cache = RB_LX_CACHE_OTHER;
    }
}

bool rb_xfer_status_line(struct rb_req *r, const char *p, size_t len)
{
    if (len < 5 || memcmp(p, "HTTP/", 5) != 0)
        return false;
    const char *code = memchr(p, ' ', len);
    if (!code || code + 1 >= p + len || code[1] != '1')
        r->response_ns = rb_clock_ns();
    return true;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    struct rb_req *r = arg;
    size_t len = size * n;
    if (rb_xfer_status_line(r, p, len)) {
        /* A new response (after a redirect, or 100 Continue): start over. */
        r->status_known = false;
        r->cache = RB_LX_CACHE_ABSENT;
        r->cache_pos = UINT_MAX;
        return len;
    }
    if (r->w->o->cache_header)
        rb_xfer_cache_header(r, p, len);
    return len;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct rb_req *r = arg;
    size_t len = size * n;
    if (!r->status_known) {
        long status = 0;
        curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
        r->err_status = status >= 300;
        r->status_known = true;
        if (status == 200 && r->ranged) {
            /* The server ignored Range and sends the whole object: verify it from its start. */
            r->off = 0;
            r->expect_len = r->size;
        }
    }
    if (r->err_status) {
        if (r->errbody.len < ERRBODY_BYTES)
            rb_buf_append(&r->errbody, p,
                          len < ERRBODY_BYTES - r->errbody.len ? len : ERRBODY_BYTES - r->errbody.len);
        return len;
    }
    if (r->w->o->verify && !r->mismatch && rb_payload_verify(&r->w->o->payload, r->key, r->off, p, len) != len)
        r->mismatch = true;
    if (r->w->tars)
        rb_tar_body(r, p, len);
    if (r->w->o->body)
        r->w->o->body(r->name, r->off, p, len);
    r->off += len;
    r->body += len;
    return len;
}

static size_t on_read(char *buf, size_t size, size_t n, void *arg)
{
    struct rb_req *r = arg;
    size_t len = size * n;
    uint64_t left = r->put_size - r->put_pos;
    if (len > left)
        len = (size_t)left;
    rb_payload_fill(&r->w->o->payload, r->key, r->put_pos, buf, len);
    r->put_pos += len;
    return len;
}

/* The payload is seekable, so a PUT redirected by an AIStore proxy can be sent again from the start. */
static int on_seek(void *arg, curl_off_t offset, int origin)
{
    struct rb_req *r = arg;
    if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > r->put_size)
        return CURL_SEEKFUNC_CANTSEEK;
    r->put_pos = (uint64_t)offset;
    return CURL_SEEKFUNC_OK;
}

/* ---- op rows ---- */

static int put_slot_setup(struct rb_req *r)
{
    CURL *c = r->easy;
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_UPLOAD, 1L));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_READDATA, r));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, on_seek));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_SEEKDATA, r));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, 256L * 1024));
    /* No 100-continue round trip before each body: a benchmark measures the transfer, not the handshake. */
    r->hdrs = curl_slist_append(r->hdrs, "Expect:");
    if (!r->hdrs)
        return -ENOMEM;
    return 0;
}

static void put_prepare(struct rb_worker *w, struct rb_req *r, const char *name, uint64_t size)
{
    r->key = rb_payload_key(w->o->seed, name);
    r->put_size = size;
    r->put_pos = 0;
    curl_easy_setopt(r->easy, CURLOPT_INFILESIZE_LARGE, (curl_off_t)size);
}

static uint64_t put_bytes(const struct rb_req *r)
{
    return r->put_size;
}

void rb_xfer_get_range(struct rb_worker *w, struct rb_req *r, const char *name, uint64_t size, uint64_t *off_out,
                       uint64_t *len_out)
{
    const struct rb_load_opts *o = w->o;
    r->key = o->verify ? rb_payload_key(o->seed, name) : 0;
    uint64_t off = 0, len = 0;
    if (w->part_len) {
        off = w->part_off; /* a ranged read's part (ranged.c) */
        len = w->part_len;
    } else if (o->random_range_len) {
        len = o->random_range_len;
        if (size > len)
            off = rb_picker_rand_below(&w->pick.rng, size - len + 1);
        else
            len = size;
    } else if (o->range_len) {
        off = o->range_off;
        len = o->range_len;
    }
    r->off = off;
    r->size = size;
    r->ranged = len != 0;
    /* With known sizes a verified GET also checks the length: fewer bytes are a short read. */
    r->expect_len = 0;
    if (size)
        r->expect_len = len ? (off < size ? (size - off < len ? size - off : len) : 0) : size;
    /* A fetcher's range (a tar member) is exactly its bytes, verified or not. */
    r->exact_len = w->part_len && w->fetch.len;
    if (r->exact_len)
        r->expect_len = len;
    *off_out = off;
    *len_out = len;
}

/* A whole object, a fixed range, or a random range in it; with --verify the body is checked as it streams. */
static void get_prepare(struct rb_worker *w, struct rb_req *r, const char *name, uint64_t size)
{
    uint64_t off, len;
    rb_xfer_get_range(w, r, name, size, &off, &len);
    char range[64];
    if (len) {
        snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, off, off + len - 1);
        curl_easy_setopt(r->easy, CURLOPT_RANGE, range);
    } else {
        curl_easy_setopt(r->easy, CURLOPT_RANGE, NULL);
    }
}

static uint64_t get_bytes(const struct rb_req *r)
{
    return r->body;
}

static const struct rb_xfer_op get_op = {.name = "GET", .slot_setup = NULL, .prepare = get_prepare, .bytes = get_bytes};
static const struct rb_xfer_op put_op = {.name = "PUT", .slot_setup = put_slot_setup, .prepare = put_prepare,
                                         .ttfb_from_response = true, .bytes = put_bytes};

/* DELETE and HEAD are rows of ops_meta.c. */
static const struct rb_xfer_op *const xfer_ops[] = {
    [RB_LOAD_GET] = &get_op,
    [RB_LOAD_PUT] = &put_op,
    [RB_LOAD_DELETE] = &rb_xfer_delete_op,
    [RB_LOAD_HEAD] = &rb_xfer_head_op,
};

const struct rb_xfer_op *rb_xfer_op_for(enum rb_load_op op)
{
    if ((size_t)op >= sizeof xfer_ops / sizeof xfer_ops[0])
        return NULL;
    return xfer_ops[op];
}

const char *rb_load_op_name(enum rb_load_op op)
{
    const struct rb_xfer_op *row = rb_xfer_op_for(op);
    return row ? row->name : "?";
}

bool rb_load_op_moves_bytes(enum rb_load_op op)
{
    const struct rb_xfer_op *row = rb_xfer_op_for(op);
    return !row || !row->no_body;
}

/* ---- slots ---- */

int rb_xfer_slot_init(struct rb_worker *w, struct rb_req *r, size_t ep)
{
    const struct rb_load_opts *o = w->o;
    r->w = w;
    r->ep = ep;
    r->errbody.limit = ERRBODY_BYTES + 1;
    r->easy = curl_easy_init();
    if (!r->easy)
        return -ENOMEM;
    CURL *c = r->easy;
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_PRIVATE, r));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_ERRORBUFFER, r->ebuf));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_WRITEDATA, r));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_HEADERDATA, r));
    /*
     * 64 KiB, not 256: libcurl 7.88 allocates and frees the receive buffer
     * per transfer, and one above glibc's 128 KiB mmap threshold halved the
     * 1 KiB GET rate (BENCHMARKS.md).
     */
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 64L * 1024));
    /*
     * Requests go straight to the endpoints: a load generator must not route
     * through whatever http_proxy the environment names (and libcurl would
     * otherwise look the variables up on every request).
     */
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_PROXY, ""));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, o->max_redirects > 0 ? 1L : 0L));
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_MAXREDIRS, o->max_redirects));
    /* A redirect keeps the endpoint's scheme, as on the native engine: one to another is refused (class other). */
    const bool tls = rb_target_endpoint_tls(o->target, ep % o->target->nendpoints);
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, tls ? "https" : "http"));
    if (o->timeout_ns)
        RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)((o->timeout_ns + RB_NS_PER_MS - 1) / RB_NS_PER_MS)));
    int rc = w->op->slot_setup ? w->op->slot_setup(r) : 0;
    if (rc)
        return rc;
    rc = rb_target_setup(o->target, c, o->op, &r->hdrs);
    if (rc)
        return rc;
    RB_CURL_CHECK(curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->hdrs));
    return 0;
}

void rb_xfer_slot_free(struct rb_req *r)
{
    if (r->easy)
        curl_easy_cleanup(r->easy);
    curl_slist_free_all(r->hdrs);
    rb_buf_free(&r->errbody);
}
/* ---- one request ---- */

int rb_xfer_issue(struct rb_worker *w, const char *name, uint64_t size, uint64_t intended_ns)
{
    const struct rb_load_opts *o = w->o;
    struct rb_req *r = &w->reqs[w->free_slots[--w->nfree]];
    char url[RB_URL_MAX];
    int rc = rb_target_object_url(o->target, r->ep, name, url, sizeof url);
    if (rc) {
        w->nfree++;
        return rc;
    }
    /* The name may live in the worker's one buffer: the slot keeps its own copy for the completion. */
    size_t nlen = strnlen(name, RB_OBJSET_NAME_MAX);
    memcpy(r->name_buf, name, nlen);
    r->name_buf[nlen] = '\0';
    r->name = r->name_buf;
    r->body = 0;
    r->mismatch = r->status_known = r->err_status = r->resent = false;
    r->cache = RB_LX_CACHE_ABSENT;
    r->cache_pos = UINT_MAX;
    r->errbody.len = 0;
    r->ebuf[0] = '\0';
    r->response_ns = 0;
    if (curl_easy_setopt(r->easy, CURLOPT_URL, url) != CURLE_OK) {
        w->nfree++;
        return -ENOMEM;
    }
    w->op->prepare(w, r, name, size);
    r->start_ns = rb_clock_ns();
    /* Closed loop (0): a request is due when it is sent. */
    r->intended_ns = intended_ns ? intended_ns : r->start_ns;
    if (o->log_fd >= 0)
        r->start_wall_ns = rb_clock_wall_ns(); /* only --log-requests prints it */
    CURLMcode mc = curl_multi_add_handle(r->sh->multi, r->easy);
    if (mc != CURLM_OK) {
        rb_error("curl_multi_add_handle: %s", curl_multi_strerror(mc));
        w->nfree++;
        return -EIO;
    }
    r->busy = true;
    w->issued++;
    w->last_issue_ns = r->start_ns;
    return 0;
}

/* The class of a transfer libcurl failed. */
static int curl_class(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return RB_LERR_CONNECT;
    case CURLE_OPERATION_TIMEDOUT:
        return RB_LERR_TIMEOUT;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
        return RB_LERR_RESET;
    case CURLE_PARTIAL_FILE:
        return RB_LERR_SHORT_READ;
    case CURLE_TOO_MANY_REDIRECTS:
        return RB_LERR_REDIRECTS;
    default:
        return RB_LERR_OTHER;
    }
}


int rb_engine_classify(CURLcode rc, long status, bool mismatch, bool wrong_length)
{
    if (rc != CURLE_OK)
        return curl_class(rc);
    if (status >= 600)
        return RB_LERR_OTHER; /* not an HTTP status class at all (RFC 9110 defines 100-599) */
    if (status >= 500)
        return RB_LERR_HTTP_5XX;
    if (status >= 400)
        return RB_LERR_HTTP_4XX;
    if (status >= 300 || status < 200)
        return RB_LERR_OTHER; /* a redirect we were not told to follow, or no HTTP status */
    if (mismatch)
        return RB_LERR_CHECKSUM;
    if (wrong_length)
        return RB_LERR_SHORT_READ;
    return -1;
}
/* The first error of each class is logged once per rank, with the server's own words when it gave some. */
static void log_first_error(struct rb_worker *w, struct rb_req *r, int cls, CURLcode rc, long status)
{
    if (atomic_flag_test_and_set(&w->logged[cls]))
        return;
    const char *op = w->op->name;
    char msg[400] = "";
    if (rc != CURLE_OK) {
        snprintf(msg, sizeof msg, "%s", r->ebuf[0] ? r->ebuf : curl_easy_strerror(rc));
    } else if (status >= 300) {
        char server[300];
        rb_target_error_message(w->o->target, r->errbody.s ? r->errbody.s : "", r->errbody.len, server,
                                sizeof server);
        snprintf(msg, sizeof msg, "HTTP %ld%s%s", status, server[0] ? " " : "", server);
    } else if (cls == RB_LERR_CHECKSUM) {
        snprintf(msg, sizeof msg, "the body differs from the payload written with --seed %" PRIu64, w->o->seed);
    } else {
        snprintf(msg, sizeof msg, "%" PRIu64 " body bytes, expected %" PRIu64, r->body, r->expect_len);
    }
    rb_warn("%s \"%s\" (%s): %s (first %s error; all are counted by class)", op, r->name,
            rb_target_name(w->o->target), msg, rb_load_err_names[cls]);
}

void rb_worker_flush_log(struct rb_worker *w)
{
    if (w->log.buf && w->log.len) {
        if (write(w->o->log_fd, w->log.buf, w->log.len) < 0)
            rb_warn("--log-requests: write failed: %s", strerror(errno));
        w->log.len = 0;
    }
}

/* One --log-requests line (CSV) into w's buffer, written out first when it is nearly full. */
static void log_request(struct rb_worker *w, const struct rb_req *r, long status, int cls, uint64_t bytes,
                        uint64_t ttfb_ns, uint64_t total_ns, uint64_t lat_ns)
{
    if (w->log.len + 2400 > RB_LOG_BUF_BYTES)
        rb_worker_flush_log(w);
    /* CSV (RFC 4180): a name with a comma, quote or line break is quoted, its quotes doubled. */
    char name[2100];
    if (strpbrk(r->name, ",\"\r\n")) {
        size_t o = 0;
        name[o++] = '"';
        for (const char *c = r->name; *c && o + 3 < sizeof name; c++) {
            if (*c == '"')
                name[o++] = '"';
            name[o++] = *c;
        }
        name[o++] = '"';
        name[o] = '\0';
    } else {
        snprintf(name, sizeof name, "%s", r->name);
    }
    int n = snprintf(w->log.buf + w->log.len, RB_LOG_BUF_BYTES - w->log.len,
                     "%d,%u,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%ld,%s,%" PRIu64 "\n",
                     w->o->rank, w->id, w->op->name, name, bytes,
                     r->start_wall_ns, ttfb_ns, r->start_wall_ns + total_ns, status,
                     cls >= 0 ? rb_load_err_names[cls] : "ok", lat_ns);
    if (n > 0 && (size_t)n < RB_LOG_BUF_BYTES - w->log.len)
        w->log.len += (size_t)n;
}

void rb_xfer_complete(struct rb_worker *w, struct rb_req *r, CURLcode rc)
{
    long status = 0, redirects = 0;
    curl_off_t total_us = 0, ttfb_us = 0;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(r->easy, CURLINFO_TOTAL_TIME_T, &total_us);
    curl_easy_getinfo(r->easy, CURLINFO_STARTTRANSFER_TIME_T, &ttfb_us);
    curl_easy_getinfo(r->easy, CURLINFO_REDIRECT_COUNT, &redirects);
    if (w->rph) {
        /* libcurl's own times from the start: connect (its name look-up in it), TLS, pretransfer (the request is
         * about to go: libcurl 7.88 has no time for it all out), starttransfer (its first byte). */
        curl_off_t conn_us = 0, app_us = 0, pre_us = 0;
        curl_easy_getinfo(r->easy, CURLINFO_CONNECT_TIME_T, &conn_us);
        curl_easy_getinfo(r->easy, CURLINFO_APPCONNECT_TIME_T, &app_us);
        curl_easy_getinfo(r->easy, CURLINFO_PRETRANSFER_TIME_T, &pre_us);
        const curl_off_t t[RB_RPH_MARKS] = {conn_us, app_us, pre_us, ttfb_us};
        for (int i = 0; i < RB_RPH_MARKS; i++)
            r->ph_ns[i] = t[i] > 0 ? r->start_ns + (uint64_t)t[i] * RB_NS_PER_US : 0;
        r->ph_marked = true;
    }
    curl_multi_remove_handle(r->sh->multi, r->easy);
    r->busy = false;
    w->free_slots[w->nfree++] = (unsigned)(r - w->reqs);
    rb_xfer_record(w, r, rc, status, (uint64_t)ttfb_us * RB_NS_PER_US, (uint64_t)total_us * RB_NS_PER_US,
                   redirects, rb_clock_ns());
}

void rb_xfer_release(struct rb_worker *w, struct rb_req *r, long *status, uint64_t *total_ns)
{
    curl_off_t total_us = 0;
    *status = 0;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, status);
    curl_easy_getinfo(r->easy, CURLINFO_TOTAL_TIME_T, &total_us);
    curl_multi_remove_handle(r->sh->multi, r->easy);
    r->busy = false;
    w->free_slots[w->nfree++] = r->slot;
    *total_ns = (uint64_t)total_us * RB_NS_PER_US;
}

void rb_xfer_record(struct rb_worker *w, struct rb_req *r, CURLcode rc, long status, uint64_t ttfb_ns,
                    uint64_t total_ns, long redirects, uint64_t now)
{
    const struct rb_load_opts *o = w->o;
    /*
     * expect_len is set only by ops that read a body they can check (a verified GET, a fetcher's exact range:
     * there a 200, the whole object for a Range, is the wrong length whatever its size).
     */
    bool wrong_length = (o->verify || r->exact_len) && r->expect_len && r->body != r->expect_len;
    wrong_length = wrong_length || (r->exact_len && status == 200 && !w->tp->files); /* a file read says 200 whatever its length */
    int cls = r->link && rc != CURLE_OK ? RB_LERR_SYMLINK : rb_engine_classify(rc, status, r->mismatch, wrong_length);
    if (w->tars && cls < 0)
        rb_tar_request_end(w, r);

    struct rb_stats *s = w->local;
    if (w->op->ttfb_from_response)
        ttfb_ns = r->response_ns > r->start_ns && r->response_ns - r->start_ns < total_ns ? r->response_ns - r->start_ns
                                                                                   : total_ns;
    /* Coordinated omission: the request was due at intended_ns; any wait for a free slot is latency too. */
    uint64_t lat_ns = (r->start_ns - r->intended_ns) + total_ns;
    if (w->rph || rb_slow_wants(&w->slow, lat_ns)) /* off: a comparison, no call */
        rb_rph_note(w, r, cls, status, total_ns, lat_ns);
    uint64_t bytes = w->op->bytes(r);
    s->ops++;
    w->answered++;
    w->refused += status == 403 || status == 404;
    s->extra[RB_LX_REDIRECTS] += (uint64_t)redirects;
    if (o->cache_header)
        s->extra[r->cache]++;
    if (cls >= 0) {
        rb_stats_error(s, (unsigned)cls);
        log_first_error(w, r, cls, rc, status);
        bytes = 0;
        /* Sent, no answer: the server may have stored it (a file put removes its own unfinished file instead). */
        if (!w->tp->files && (cls == RB_LERR_TIMEOUT || cls == RB_LERR_RESET || (r->resent && rc != CURLE_OK)))
            rb_written_unknown(w, r->name);
    } else {
        s->bytes += bytes;
        w->bytes_done += bytes;
        rb_hist_record(&s->lat, lat_ns);
        rb_hist_record(&s->ttfb, ttfb_ns);
        rb_hist_record(w->unc_local, total_ns);
        if (w->seg) {
            size_t sec = now > w->e->t0_ns ? (size_t)((now - w->e->t0_ns) / RB_NS_PER_S) : 0;
            if (sec >= w->nseg) {
                size_t n = w->nseg ? w->nseg : 64;
                while (n <= sec)
                    n *= 2;
                uint64_t *seg = realloc(w->seg, n * sizeof *seg);
                if (seg) {
                    memset(seg + w->nseg, 0, (n - w->nseg) * sizeof *seg);
                    w->seg = seg;
                    w->nseg = n;
                }
            }
            if (sec < w->nseg)
                w->seg[sec] += w->op->no_body ? 1 : bytes; /* HEAD, DELETE: requests per second */
        }
    }
    if (o->log_fd >= 0 && w->log.buf)
        log_request(w, r, status, cls, bytes, ttfb_ns, total_ns, lat_ns);
}

void rb_xfer_abandon(struct rb_worker *w, struct rb_req *r, const char *name, uint64_t intended_ns, uint64_t now_ns)
{
    struct rb_req due;
    if (r) {
        curl_multi_remove_handle(r->sh->multi, r->easy);
        r->busy = false;
        w->free_slots[w->nfree++] = (unsigned)(r - w->reqs);
        intended_ns = r->intended_ns;
        due = *r;
    } else {
        /* Never sent: its log line starts at its intended moment on the wall clock. */
        due = (struct rb_req){.name = name, .start_wall_ns = rb_clock_wall_ns() - (now_ns - intended_ns)};
    }
    uint64_t lat_ns = now_ns > intended_ns ? now_ns - intended_ns : 0;
    w->local->ops++;
    rb_stats_error(w->local, RB_LERR_ABANDONED);
    if (w->o->log_fd >= 0 && w->log.buf)
        log_request(w, &due, 0, RB_LERR_ABANDONED, 0, 0, lat_ns, lat_ns);
}
