/*
 * S3 multipart PUT on a worker's slots, on either engine: initiate, parts in
 * parallel, complete with the ETags; abort what failed. libcurl aborts with a
 * blocking DELETE of its own; the native engine sends the abort on a slot like
 * any other request, and after the loop runs the aborts left to their answers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "multipart_int.h"
#include "payload_int.h"
#include "railbench/cli.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "worker_int.h"

#define MP_ID_MAX 512     /* an UploadId; RGW's are ~35 characters, AWS's ~90 */
#define MP_ETAG_MAX RB_ETAG_MAX
#define MP_ABORT_MIN_NS (10 * RB_NS_PER_S) /* an abort is cleanup: a short --timeout meant for the parts must not leave them */
#define MP_BODY_MAX 2048  /* response bodies kept: initiate and complete results, error documents */

const char *const rb_mp_extra_names[RB_MP_EXTRA_COUNT + 1] = {"uploads_aborted", "aborts_failed", NULL};

enum mp_kind { MP_SINGLE, MP_INIT, MP_PART, MP_COMPLETE, MP_ABORT };

/* One object on its way up in parts; open from its initiate until it is completed or aborted. */
struct mp_upload {
    bool open, failed;
    bool recorded;               /* the object's record is made (a failed one waits for its abort) */
    bool abort_due;              /* native engine: its abort goes out on the next free slot */
    char name[RB_OBJSET_NAME_BYTES];
    char id[MP_ID_MAX];          /* UploadId; "" until the initiate answered */
    uint64_t key, size, nparts, idx; /* idx: the object's index in the worker's set */
    uint64_t next, done, inflight; /* parts sent (1-based next = next + 1), finished, in flight */
    uint64_t start_ns;
    char (*etag)[MP_ETAG_MAX];   /* per part, in order, for the completion */
    /* The first failure, for the object's record: libcurl's result, the status, and the server's words. */
    CURLcode fail_rc;
    long fail_status;
    struct rb_buf fail_body;
    char fail_ebuf[CURL_ERROR_SIZE];
};

/* What a slot carries (tasks[i] belongs to w->reqs[i]). */
struct mp_task {
    enum mp_kind kind;
    struct mp_upload *up;        /* NULL for a single PUT */
    uint64_t part, off;          /* part number (1-based) and its offset in the object */
    uint64_t idx;                /* a single PUT: the object's index in the worker's set */
    struct rb_buf xml;           /* a completion's request body */
};

struct rb_mp {
    struct mp_upload *ups;
    unsigned nups;
    struct mp_task *tasks;
    struct rb_stats *parts;      /* one record per part PUT; extras count aborts */
    CURL *abort_easy;            /* blocking aborts, made lazily */
    struct curl_slist *abort_hdrs;
    bool no_more;                /* the worker's objects ran out */
    bool native;                 /* the native engine sends the requests (aborts too) */
};

/* w's multipart state: its driver's (w->drv_state), NULL when w runs another driver. */
static struct rb_mp *mp_of(const struct rb_worker *w)
{
    return w->drv == &rb_mp_driver ? w->drv_state : NULL;
}

uint64_t rb_mp_parts(uint64_t size, uint64_t part_bytes)
{
    return part_bytes ? (size + part_bytes - 1) / part_bytes : 0;
}

int rb_mp_check_usage(uint64_t part_bytes, uint64_t threshold_bytes, uint64_t max_size)
{
    if (part_bytes < RB_MP_MIN_PART_BYTES)
        return rb_cli_usage_error("--part-size %" PRIu64 ": S3 parts are at least 5 MiB (all but the last), e.g. "
                                  "--part-size 8M", part_bytes);
    if (max_size > threshold_bytes && rb_mp_parts(max_size, part_bytes) > RB_MP_MAX_PARTS)
        return rb_cli_usage_error("--part-size %" PRIu64 ": an object of %" PRIu64 " bytes would take %" PRIu64
                                  " parts, S3 allows at most 10000 (give a larger --part-size)",
                                  part_bytes, max_size, rb_mp_parts(max_size, part_bytes));
    return 0;
}

/* ---- callbacks (the slot's struct rb_req is their data; the task is found by the slot's index) ---- */

static struct mp_task *task_of(const struct rb_req *r)
{
    return &mp_of(r->w)->tasks[r->slot];
}

static size_t mp_read(char *buf, size_t size, size_t n, void *arg)
{
    struct rb_req *r = arg;
    struct mp_task *t = task_of(r);
    size_t len = size * n;
    uint64_t left = r->put_size - r->put_pos;
    if (len > left)
        len = (size_t)left;
    if (t->kind == MP_COMPLETE)
        memcpy(buf, t->xml.s + r->put_pos, len);
    else
        rb_payload_fill(&r->w->o->payload, r->key, t->off + r->put_pos, buf, len);
    r->put_pos += len;
    return len;
}

/* Keeps the start of every response body: the initiate's UploadId, the completion's result, an error document. */
static size_t mp_write(char *p, size_t size, size_t n, void *arg)
{
    struct rb_req *r = arg;
    size_t len = size * n, room = MP_BODY_MAX - r->errbody.len;
    if (r->errbody.len < MP_BODY_MAX)
        rb_buf_append(&r->errbody, p, len < room ? len : room);
    return len;
}

static size_t mp_header(char *p, size_t size, size_t n, void *arg)
{
    struct rb_req *r = arg;
    size_t len = size * n;
    if (rb_xfer_status_line(r, p, len))
        return len;
    if (len > 5 && strncasecmp(p, "ETag:", 5) == 0) {
        const char *v = p + 5, *end = p + len;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
            end--;
        size_t vl = (size_t)(end - v) < MP_ETAG_MAX - 1 ? (size_t)(end - v) : MP_ETAG_MAX - 1;
        memcpy(r->etag, v, vl);
        r->etag[vl] = '\0';
    }
    return len;
}

/* ---- state ---- */

/* Sets up w's multipart state (o->part_size > 0 asks for it). Returns 0 or -ENOMEM. Before the worker's thread starts. */
static int mp_new(struct rb_worker *w)
{
    struct rb_mp *mp = calloc(1, sizeof *mp);
    if (!mp)
        return -ENOMEM;
    w->drv_state = mp;
    mp->nups = w->nreq;
    mp->ups = calloc(mp->nups, sizeof *mp->ups);
    mp->tasks = calloc(w->nreq, sizeof *mp->tasks);
    mp->parts = rb_stats_new();
    mp->native = w->nat != NULL;
    return mp->ups && mp->tasks && mp->parts ? 0 : -ENOMEM;
}

static void upload_close(struct mp_upload *up)
{
    free(up->etag);
    rb_buf_free(&up->fail_body);
    memset(up, 0, sizeof *up);
}

/* Frees w's multipart state; safe when there is none. */
static void mp_free(struct rb_worker *w)
{
    struct rb_mp *mp = mp_of(w);
    if (!mp)
        return;
    for (unsigned i = 0; mp->ups && i < mp->nups; i++)
        upload_close(&mp->ups[i]);
    for (unsigned i = 0; mp->tasks && i < w->nreq; i++)
        rb_buf_free(&mp->tasks[i].xml);
    if (mp->abort_easy)
        curl_easy_cleanup(mp->abort_easy);
    curl_slist_free_all(mp->abort_hdrs);
    rb_stats_free(mp->parts);
    free(mp->ups);
    free(mp->tasks);
    free(mp);
    w->drv_state = NULL;
}

void rb_mp_collect_parts(const struct rb_worker *w, struct rb_stats *into)
{
    const struct rb_mp *mp = mp_of(w);
    if (mp && mp->parts)
        rb_stats_merge(into, mp->parts);
}

/* ---- sending ---- */

/* The object's URL with a query ("uploads=", "partNumber=N&uploadId=ID"); query NULL: the object itself. */
static int mp_url(const struct rb_worker *w, const struct rb_req *r, const char *name, const char *query, char *url,
                  size_t len)
{
    int rc = rb_target_object_url(w->o->target, r->ep, name, url, len);
    if (rc)
        return rc;
    size_t l = strlen(url);
    if (query && (size_t)snprintf(url + l, len - l, "?%s", query) >= len - l)
        return -ENAMETOOLONG;
    return 0;
}

/* libcurl: t's request on slot r's easy handle, to url. */
static int send_curl(struct rb_worker *w, struct rb_req *r, const char *url, const char *method, uint64_t body_len)
{
    CURL *c = r->easy;
    if (curl_easy_setopt(c, CURLOPT_URL, url) != CURLE_OK || curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method) ||
        curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)body_len) ||
        curl_easy_setopt(c, CURLOPT_READFUNCTION, mp_read) || curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, mp_write) ||
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, mp_header))
        return -ENOMEM;
    r->put_size = body_len;
    r->put_pos = 0;
    r->errbody.len = 0;
    r->ebuf[0] = '\0';
    r->etag[0] = '\0';
    r->response_ns = 0;
    r->mismatch = false;
    r->expect_len = 0;
    r->start_ns = r->intended_ns = rb_clock_ns();
    if (w->o->log_fd >= 0)
        r->start_wall_ns = rb_clock_wall_ns();
    CURLMcode mc = curl_multi_add_handle(r->sh->multi, c);
    if (mc != CURLM_OK) {
        rb_error("curl_multi_add_handle: %s", curl_multi_strerror(mc));
        return -EIO;
    }
    w->nfree--;
    r->busy = true;
    return 0;
}

/*
 * Sends one request on a free slot: method (NULL = PUT) on name?query with a
 * body of body_len bytes (payload from key at t->off, or the task's XML; an
 * abort none), through the run's engine.
 */
static int mp_send(struct rb_worker *w, const struct mp_task *tmpl, const char *name, const char *query,
                   const char *method, uint64_t key, uint64_t body_len)
{
    unsigned slot = w->free_slots[w->nfree - 1];
    struct mp_task *t = &mp_of(w)->tasks[slot];
    struct rb_buf xml = t->xml;
    *t = *tmpl;
    if (tmpl->kind != MP_COMPLETE)
        t->xml = xml; /* a completion brings its own body; other tasks keep the slot's buffer for later */
    if (mp_of(w)->native) {
        const struct rb_nreq q = {.method = method ? method : "PUT", .name = name, .query = query,
                                  .sends_body = t->kind != MP_ABORT,
                                  .keep_body = t->kind == MP_INIT || t->kind == MP_COMPLETE || t->kind == MP_ABORT,
                                  .key = key, .body_off = t->off, .body_len = body_len,
                                  .body_mem = t->kind == MP_COMPLETE ? t->xml.s : NULL};
        return rb_native_send(w, &q);
    }
    struct rb_req *r = &w->reqs[slot];
    char url[RB_URL_MAX];
    int rc = mp_url(w, r, name, query, url, sizeof url);
    if (rc)
        return rc;
    size_t nlen = strnlen(name, RB_OBJSET_NAME_MAX);
    memcpy(r->name_buf, name, nlen);
    r->name_buf[nlen] = '\0';
    r->name = r->name_buf;
    r->key = key;
    return send_curl(w, r, url, method, body_len);
}

static int send_part(struct rb_worker *w, struct mp_upload *up)
{
    uint64_t part = up->next + 1, off = up->next * w->o->part_size;
    uint64_t len = up->size - off < w->o->part_size ? up->size - off : w->o->part_size;
    char q[MP_ID_MAX * 3 + 64], id[MP_ID_MAX * 3];
    if (rb_url_escape(up->id, false, id, sizeof id))
        return -ENAMETOOLONG;
    snprintf(q, sizeof q, "partNumber=%" PRIu64 "&uploadId=%s", part, id);
    struct mp_task t = {.kind = MP_PART, .up = up, .part = part, .off = off};
    int rc = mp_send(w, &t, up->name, q, NULL, up->key, len);
    if (!rc) {
        up->next++;
        up->inflight++;
    }
    return rc;
}

/* CompleteMultipartUpload: the parts in order with the ETags their PUTs answered. */
static int send_complete(struct rb_worker *w, struct mp_upload *up)
{
    struct mp_task t = {.kind = MP_COMPLETE, .up = up};
    struct rb_req *r = &w->reqs[w->free_slots[w->nfree - 1]];
    t.xml = task_of(r)->xml;
    t.xml.len = 0;
    rb_buf_printf(&t.xml, "<CompleteMultipartUpload>");
    for (uint64_t i = 0; i < up->nparts; i++)
        rb_buf_printf(&t.xml, "<Part><PartNumber>%" PRIu64 "</PartNumber><ETag>%s</ETag></Part>", i + 1, up->etag[i]);
    rb_buf_printf(&t.xml, "</CompleteMultipartUpload>");
    task_of(r)->xml = t.xml;
    if (t.xml.oom)
        return -ENOMEM;
    char q[MP_ID_MAX * 3 + 16], id[MP_ID_MAX * 3];
    if (rb_url_escape(up->id, false, id, sizeof id))
        return -ENAMETOOLONG;
    snprintf(q, sizeof q, "uploadId=%s", id);
    int rc = mp_send(w, &t, up->name, q, "POST", 0, t.xml.len);
    if (!rc)
        up->inflight++;
    return rc;
}

/* AbortMultipartUpload on a slot (native engine): DELETE ?uploadId=ID, answered 204, or 404 when it is gone already. */
static int send_abort(struct rb_worker *w, struct mp_upload *up)
{
    char q[MP_ID_MAX * 3 + 16], id[MP_ID_MAX * 3];
    if (rb_url_escape(up->id, false, id, sizeof id))
        return -ENAMETOOLONG;
    snprintf(q, sizeof q, "uploadId=%s", id);
    struct mp_task t = {.kind = MP_ABORT, .up = up};
    up->abort_due = false;
    up->inflight++;
    int rc = mp_send(w, &t, up->name, q, "DELETE", 0, 0);
    if (rc)
        up->inflight--;
    return rc;
}

/* The next object: a plain PUT up to the threshold, else a new upload and its initiate. */
static int send_object(struct rb_worker *w, const char *name, uint64_t size)
{
    const struct rb_load_opts *o = w->o;
    uint64_t key = rb_payload_key(o->seed, name);
    w->issued++;
    w->last_issue_ns = rb_clock_ns();
    if (size <= o->multipart_threshold) {
        struct mp_task t = {.kind = MP_SINGLE, .idx = w->cur_idx};
        return mp_send(w, &t, name, NULL, NULL, key, size);
    }
    struct rb_mp *mp = mp_of(w);
    struct mp_upload *up = NULL;
    for (unsigned i = 0; i < mp->nups && !up; i++)
        if (!mp->ups[i].open)
            up = &mp->ups[i];
    if (!up)
        return -EAGAIN; /* cannot happen: an open upload holds a slot (see mp_refill) */
    up->nparts = rb_mp_parts(size, o->part_size);
    up->etag = calloc(up->nparts, sizeof *up->etag);
    if (!up->etag)
        return -ENOMEM;
    up->open = true;
    snprintf(up->name, sizeof up->name, "%s", name);
    up->key = key;
    up->size = size;
    up->idx = w->cur_idx;
    up->start_ns = rb_clock_ns();
    struct mp_task t = {.kind = MP_INIT, .up = up};
    /* "uploads=", not "uploads": libcurl 7.88 signs the query as written, and SigV4's canonical form has the "=". */
    int rc = mp_send(w, &t, name, "uploads=", "POST", key, 0);
    if (rc)
        upload_close(up);
    else
        up->inflight++;
    return rc;
}

static bool uploads_open(const struct rb_worker *w)
{
    const struct rb_mp *mp = mp_of(w);
    for (unsigned i = 0; i < mp->nups; i++)
        if (mp->ups[i].open)
            return true;
    return false;
}

/* The next request of an upload under way: a part to send, or its completion once every part came back (0 sent, 1 none). */
static int send_pending(struct rb_worker *w)
{
    struct rb_mp *mp = mp_of(w);
    for (unsigned i = 0; i < mp->nups; i++) {
        struct mp_upload *u = &mp->ups[i];
        if (u->open && u->abort_due && !u->inflight)
            return send_abort(w, u);
        if (!u->open || u->failed || !u->id[0])
            continue;
        if (u->next < u->nparts)
            return send_part(w, u);
        if (u->done == u->nparts && !u->inflight)
            return send_complete(w, u);
    }
    return 1;
}

/*
 * Issues requests on w's free slots: parts of open uploads first, then
 * completions, then the next object (a plain PUT up to the threshold, an
 * initiate above it). Sets w->exhausted once no object is left and every
 * upload is finished. Returns 0 or -errno.
 *
 * Every upload open here holds a slot while it waits for a response, or has
 * parts to send or a completion due, which this loop sends first; so when a
 * slot is free there is also a free upload for a new object (nups = nreq).
 * Told to stop (rb_worker_stop_issuing set exhausted): no new object, but the
 * uploads under way go on to their completion while the drain lasts, as a
 * plain PUT in flight may finish; mp_finish aborts what is left.
 */
static int mp_refill(struct rb_worker *w)
{
    return rb_worker_refill_split(w, &mp_of(w)->no_more, send_pending, send_object, uploads_open);
}

/* ---- finishing ---- */

/* An abort's answer counted (aborted: 2xx, or 404 when the upload is gone already; else failed, with a warning). */
static bool abort_answered(struct rb_worker *w, const struct mp_upload *up, CURLcode rc, long status, const char *why)
{
    bool ok = rc == CURLE_OK && ((status >= 200 && status < 300) || status == 404);
    if (!ok)
        rb_warn("PUT \"%s\": AbortMultipartUpload failed (%s, HTTP %ld): upload %s stays on %s", up->name, why, status,
                up->id, rb_target_name(w->o->target));
    mp_of(w)->parts->extra[ok ? RB_MP_ABORTED : RB_MP_ABORT_FAILED]++;
    return ok;
}

/* AbortMultipartUpload, blocking, on the worker's own handle (libcurl): 204, or 404 when the upload is gone already. */
static bool abort_upload(struct rb_worker *w, struct mp_upload *up)
{
    struct rb_mp *mp = mp_of(w);
    const struct rb_load_opts *o = w->o;
    if (!mp->abort_easy) {
        if (!(mp->abort_easy = curl_easy_init()) ||
            rb_target_setup(o->target, mp->abort_easy, RB_LOAD_DELETE, &mp->abort_hdrs) ||
            curl_easy_setopt(mp->abort_easy, CURLOPT_HTTPHEADER, mp->abort_hdrs) ||
            curl_easy_setopt(mp->abort_easy, CURLOPT_NOSIGNAL, 1L) || curl_easy_setopt(mp->abort_easy, CURLOPT_PROXY, "") ||
            curl_easy_setopt(mp->abort_easy, CURLOPT_CUSTOMREQUEST, "DELETE") ||
            curl_easy_setopt(mp->abort_easy, CURLOPT_WRITEFUNCTION, mp_write))
            return false;
    }
    char q[MP_ID_MAX * 3 + 16], id[MP_ID_MAX * 3], url[RB_URL_MAX];
    struct rb_req scratch = {.w = w, .ep = 0};
    if (rb_url_escape(up->id, false, id, sizeof id))
        return false;
    snprintf(q, sizeof q, "uploadId=%s", id);
    if (mp_url(w, &scratch, up->name, q, url, sizeof url))
        return false;
    uint64_t ns = o->timeout_ns > MP_ABORT_MIN_NS ? o->timeout_ns : MP_ABORT_MIN_NS;
    curl_easy_setopt(mp->abort_easy, CURLOPT_TIMEOUT_MS, (long)(ns / RB_NS_PER_MS));
    curl_easy_setopt(mp->abort_easy, CURLOPT_URL, url);
    curl_easy_setopt(mp->abort_easy, CURLOPT_WRITEDATA, &scratch);
    CURLcode rc = curl_easy_perform(mp->abort_easy);
    long status = 0;
    curl_easy_getinfo(mp->abort_easy, CURLINFO_RESPONSE_CODE, &status);
    rb_buf_free(&scratch.errbody);
    return abort_answered(w, up, rc, status, rc != CURLE_OK ? curl_easy_strerror(rc) : "answered");
}

/*
 * The object's one PUT record, as rb_xfer_record makes it for a plain PUT:
 * latency from its initiate to the completion's answer, bytes the whole
 * object; r is the last request's slot, copied with the upload's times.
 */
static void record_object(struct rb_worker *w, const struct rb_req *r, const struct mp_upload *up, CURLcode rc, long status,
                          uint64_t now)
{
    struct rb_req obj = *r;
    obj.start_ns = obj.intended_ns = up->start_ns;
    obj.ph_marked = false; /* an object put in parts is not split into phases (--phases) */
    obj.put_size = up->size;
    obj.name = up->name;
    if (up->failed) {
        obj.errbody = up->fail_body;
        memcpy(obj.ebuf, up->fail_ebuf, sizeof obj.ebuf);
        rc = up->fail_rc;
        status = up->fail_status;
    }
    rb_xfer_record(w, &obj, rc, status, 0, now - up->start_ns, 0, now);
}

/* The upload failed at r (rc, status): keeps the first failure's words for the object's record. */
static void fail_upload(struct mp_upload *up, const struct rb_req *r, CURLcode rc, long status)
{
    if (up->failed)
        return;
    up->failed = true;
    up->fail_rc = rc;
    /* A 2xx that did not carry what it must (an ETag, an UploadId, a completion result) counts as the server's error. */
    up->fail_status = rc == CURLE_OK && status < 300 ? 500 : status;
    up->fail_body.limit = MP_BODY_MAX + 1;
    if (r->errbody.len)
        rb_buf_append(&up->fail_body, r->errbody.s, r->errbody.len);
    memcpy(up->fail_ebuf, r->ebuf, sizeof up->fail_ebuf);
}

/*
 * A failed upload whose last request came back: the object counted failed,
 * the upload aborted and freed (native engine: its abort is due on the next
 * free slot, and the upload stays open until it is answered).
 */
static void settle_failed(struct rb_worker *w, const struct rb_req *r, struct mp_upload *up, uint64_t now)
{
    record_object(w, r, up, CURLE_OK, 0, now);
    up->recorded = true;
    if (up->id[0] && mp_of(w)->native) {
        up->abort_due = true;
        return;
    }
    if (up->id[0])
        abort_upload(w, up);
    upload_close(up);
}

/* The text of element tag in body (first occurrence) into out; false when absent or too long. */
static bool xml_value(const char *body, const char *tag, char *out, size_t outlen)
{
    char open[64], close[64];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    const char *a = body ? strstr(body, open) : NULL;
    const char *b = a ? strstr(a, close) : NULL;
    if (!b)
        return false;
    a += strlen(open);
    if ((size_t)(b - a) >= outlen || b == a)
        return false;
    memcpy(out, a, (size_t)(b - a));
    out[b - a] = '\0';
    return true;
}

void rb_mp_record_part(struct rb_stats *s, const struct rb_req *r, int cls, uint64_t bytes, uint64_t total_ns)
{
    s->ops++;
    if (cls >= 0) {
        rb_stats_error(s, (unsigned)cls);
        return;
    }
    s->bytes += bytes;
    rb_hist_record(&s->lat, total_ns);
    uint64_t ttfb = r->response_ns > r->start_ns ? r->response_ns - r->start_ns : total_ns;
    rb_hist_record(&s->ttfb, ttfb < total_ns ? ttfb : total_ns);
}

/* Accounts the finished request on slot r (an object's PUT, a part, or an upload step), its slot freed; either engine. */
static void mp_done(struct rb_worker *w, struct rb_req *r, CURLcode rc, long status, uint64_t ttfb_ns, uint64_t total_ns,
                    long redirects, uint64_t now)
{
    (void)ttfb_ns;   /* a PUT's is from its response (ttfb_from_response) */
    (void)redirects; /* S3 answers where it was asked */
    struct mp_task *t = task_of(r);
    struct mp_upload *up = t->up;
    int cls = rb_engine_classify(rc, status, false, false);
    if (t->kind == MP_SINGLE) {
        rb_xfer_record(w, r, rc, status, 0, total_ns, 0, now);
        if (cls < 0 && w->o->track_written)
            rb_worker_wrote(w, t->idx);
        return;
    }
    up->inflight--;
    if (t->kind == MP_ABORT) {
        abort_answered(w, up, rc, status, rc != CURLE_OK ? r->ebuf : "answered");
        upload_close(up);
        return;
    }
    if (t->kind == MP_PART) {
        rb_mp_record_part(mp_of(w)->parts, r, cls, r->put_size, total_ns);
        if (cls >= 0 || !r->etag[0])
            fail_upload(up, r, rc, status);
        else
            snprintf(up->etag[t->part - 1], MP_ETAG_MAX, "%s", r->etag), up->done++;
    } else if (t->kind == MP_INIT) {
        if (cls >= 0 || !xml_value(r->errbody.s, "UploadId", up->id, sizeof up->id))
            fail_upload(up, r, rc, status);
    } else if (cls >= 0 || !r->errbody.s || !strstr(r->errbody.s, "<CompleteMultipartUploadResult")) {
        /* S3 may answer 200 and put an <Error> in the body of a completion that failed. */
        fail_upload(up, r, rc, status);
    } else {
        record_object(w, r, up, rc, status, now);
        if (w->o->track_written)
            rb_worker_wrote(w, up->idx);
        upload_close(up);
        return;
    }
    if (up->failed && !up->inflight)
        settle_failed(w, r, up, now);
}

/* libcurl's completion on slot r: its status and time, the slot freed, then mp_done. */
static void mp_complete(struct rb_worker *w, struct rb_req *r, CURLcode rc)
{
    long status;
    uint64_t total_ns;
    rb_xfer_release(w, r, &status, &total_ns);
    mp_done(w, r, rc, status, 0, total_ns, 0, rb_clock_ns());
}

/*
 * The native engine's aborts after the loop: each open upload's abort on a
 * slot of its own (every slot is free by now, and there are as many uploads),
 * answered within --timeout or 10 s, whichever is longer; one unanswered
 * counts as failed.
 */
static void abort_native(struct rb_worker *w)
{
    struct rb_mp *mp = mp_of(w);
    for (unsigned i = 0; i < mp->nups && w->nfree; i++) {
        struct mp_upload *up = &mp->ups[i];
        if (up->open && up->id[0] && !up->inflight && send_abort(w, up))
            abort_answered(w, up, CURLE_OK, 0, "its request does not fit");
    }
    uint64_t ns = w->o->timeout_ns > MP_ABORT_MIN_NS ? w->o->timeout_ns : MP_ABORT_MIN_NS;
    rb_native_pump(w, rb_clock_ns() + ns);
    for (unsigned i = 0; i < w->nreq; i++)
        if (rb_native_busy(w, i)) {
            rb_native_drop(w, i);
            abort_answered(w, mp->tasks[i].up, CURLE_OPERATION_TIMEDOUT, 0, "no answer");
        }
}

/*
 * After the loop: objects whose requests are still in flight are counted
 * abandoned, and every upload still open is aborted (libcurl: one blocking
 * DELETE each; native: all on the slots at once), so nothing is left on the
 * server. Worker thread.
 */
static void mp_finish(struct rb_worker *w, uint64_t now_ns)
{
    struct rb_mp *mp = mp_of(w);
    for (unsigned i = 0; i < w->nreq; i++) {
        struct rb_req *r = rb_worker_slot_busy(w, i, true);
        if (!r)
            continue;
        /* A plain PUT counts as one abandoned request; an upload's object is counted once, below; an abort is sent again. */
        struct mp_task *t = &mp->tasks[i];
        if (t->kind == MP_SINGLE)
            rb_xfer_abandon(w, NULL, r->name, r->start_ns, now_ns);
        else if (t->kind != MP_ABORT)
            mp->parts->ops++, rb_stats_error(mp->parts, RB_LERR_ABANDONED);
        if (t->kind != MP_SINGLE)
            t->up->inflight--;
    }
    for (unsigned i = 0; i < mp->nups; i++) {
        struct mp_upload *up = &mp->ups[i];
        if (!up->open)
            continue;
        if (!up->recorded)
            rb_xfer_abandon(w, NULL, up->name, up->start_ns, now_ns);
        up->recorded = true;
        if (up->id[0] && !mp->native)
            abort_upload(w, up);
        if (!mp->native || !up->id[0])
            upload_close(up);
    }
    if (mp->native)
        abort_native(w);
    for (unsigned i = 0; i < mp->nups; i++)
        if (mp->ups[i].open)
            upload_close(&mp->ups[i]); /* an abort that could not be sent (counted failed) */
}

const struct rb_worker_driver rb_mp_driver = {
    .name = "multipart",
    .init = mp_new,
    .refill = mp_refill,
    .complete = mp_complete,
    .done = mp_done,
    .finish = mp_finish,
    .free = mp_free,
};
