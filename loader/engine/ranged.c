/* Ranged GET in parts on a worker's slots: each large object read as parallel Range requests, counted once. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "multipart_int.h"
#include "ranged_int.h"
#include "railbench/clock.h"
#include "worker_int.h"

/* One object being read in parts; open from its first part's send until its last part came back. */
struct rg_read {
    bool open, failed;
    char name[RB_OBJSET_NAME_BYTES];
    uint64_t size, nparts;
    uint64_t next, done, inflight;  /* parts sent, finished well, in flight */
    uint64_t body;                  /* body bytes of the parts that finished well */
    uint64_t start_ns, first_response_ns;
    /* The first failure, for the object's record: what libcurl said, the status, the server's words. */
    CURLcode fail_rc;
    long fail_status;
    bool fail_mismatch;
    struct rb_buf fail_body;
    char fail_ebuf[CURL_ERROR_SIZE];
};

struct rb_rg {
    struct rg_read *reads;
    unsigned nreads;
    struct rg_read **slot_read;     /* per slot: the object its part belongs to; NULL for a whole GET */
    struct rb_stats *parts;         /* one record per part */
    bool no_more;                   /* the worker's objects ran out */
};

/* w's ranged-read state: its driver's (w->drv_state), NULL when w runs another driver. */
static struct rb_rg *rg_of(const struct rb_worker *w)
{
    return w->drv == &rb_rg_driver ? w->drv_state : NULL;
}

/* Sets up w's ranged-read state. Returns 0 or -ENOMEM. Before the worker's thread starts. */
static int rg_new(struct rb_worker *w)
{
    struct rb_rg *g = calloc(1, sizeof *g);
    if (!g)
        return -ENOMEM;
    w->drv_state = g;
    g->nreads = w->nreq;
    g->reads = calloc(g->nreads, sizeof *g->reads);
    g->slot_read = calloc(w->nreq, sizeof *g->slot_read);
    g->parts = rb_stats_new();
    return g->reads && g->slot_read && g->parts ? 0 : -ENOMEM;
}

static void read_close(struct rg_read *rd)
{
    rb_buf_free(&rd->fail_body);
    memset(rd, 0, sizeof *rd);
}

/* Frees w's ranged-read state; safe when there is none. */
static void rg_free(struct rb_worker *w)
{
    struct rb_rg *g = rg_of(w);
    if (!g)
        return;
    for (unsigned i = 0; g->reads && i < g->nreads; i++)
        read_close(&g->reads[i]);
    rb_stats_free(g->parts);
    free(g->reads);
    free(g->slot_read);
    free(g);
    w->drv_state = NULL;
}

void rb_rg_collect_parts(const struct rb_worker *w, struct rb_stats *into)
{
    const struct rb_rg *g = rg_of(w);
    if (g && g->parts)
        rb_stats_merge(into, g->parts);
}

/* ---- sending ---- */

/* The next part of rd on a free slot: the GET path's request with this part's Range (rb_xfer_get_range). */
/* One GET of the op row on the run's engine (the native engine may end it before this returns: a failed connect). */
static int issue(struct rb_worker *w, const char *name, uint64_t size)
{
    return w->nat ? rb_native_issue(w, name, size, 0) : rb_xfer_issue(w, name, size, 0);
}

static int send_part(struct rb_worker *w, struct rg_read *rd)
{
    const uint64_t part = w->o->part_size, off = rd->next * part;
    unsigned slot = w->free_slots[w->nfree - 1]; /* the slot the issue takes */
    w->part_off = off;
    w->part_len = rd->size - off < part ? rd->size - off : part;
    /* The slot's read and the counts first: its end may be accounted within the issue. */
    rg_of(w)->slot_read[slot] = rd;
    rd->next++;
    rd->inflight++;
    int rc = issue(w, rd->name, rd->size);
    w->part_len = 0;
    if (rc) {
        rg_of(w)->slot_read[slot] = NULL;
        rd->next--;
        rd->inflight--;
    }
    return rc;
}

/* The next object: one plain GET up to the threshold (or of unknown size), else a new read in parts. */
static int send_object(struct rb_worker *w, const char *name, uint64_t size)
{
    struct rb_rg *g = rg_of(w);
    if (!size || size <= w->o->multipart_threshold) {
        g->slot_read[w->free_slots[w->nfree - 1]] = NULL;
        return issue(w, name, size);
    }
    struct rg_read *rd = NULL;
    for (unsigned i = 0; i < g->nreads && !rd; i++)
        if (!g->reads[i].open)
            rd = &g->reads[i];
    if (!rd)
        return -EAGAIN; /* cannot happen: an open read holds a slot or has a part to send first (rg_refill) */
    rd->open = true;
    snprintf(rd->name, sizeof rd->name, "%s", name);
    rd->size = size;
    rd->nparts = rb_mp_parts(size, w->o->part_size);
    rd->start_ns = rb_clock_ns();
    rd->fail_body.limit = 2048 + 1;
    int rc = send_part(w, rd);
    if (rc)
        read_close(rd);
    return rc;
}

static bool reads_open(const struct rb_worker *w)
{
    const struct rb_rg *g = rg_of(w);
    for (unsigned i = 0; i < g->nreads; i++)
        if (g->reads[i].open)
            return true;
    return false;
}

/* The next part of a read under way (the first found: reads are few, at most one per slot). */
static int send_pending(struct rb_worker *w)
{
    struct rb_rg *g = rg_of(w);
    for (unsigned i = 0; i < g->nreads; i++)
        if (g->reads[i].open && !g->reads[i].failed && g->reads[i].next < g->reads[i].nparts)
            return send_part(w, &g->reads[i]);
    return 1;
}

/*
 * Issues requests on w's free slots: the next parts of objects under way
 * first, then the next object. Sets w->exhausted once no object is left and
 * every object under way is finished. Returns 0 or -errno. Worker thread.
 *
 * An open read either has a part in flight (a busy slot) or a part to send,
 * which is sent first; so when a slot is free there is also a free read for a
 * new object (nreads = nreq). Told to stop: no new object; parts of open reads
 * go on while the drain lasts, and rg_finish counts what is left abandoned.
 */
static int rg_refill(struct rb_worker *w)
{
    return rb_worker_refill_split(w, &rg_of(w)->no_more, send_pending, send_object, reads_open);
}

/* ---- finishing ---- */

/* The first failure of rd's parts, kept for the object's record. */
static void fail_read(struct rg_read *rd, const struct rb_req *r, CURLcode rc, long status, bool mismatch)
{
    if (rd->failed)
        return;
    rd->failed = true;
    rd->fail_rc = rc;
    rd->fail_status = status;
    rd->fail_mismatch = mismatch;
    if (r->errbody.len)
        rb_buf_append(&rd->fail_body, r->errbody.s, r->errbody.len);
    memcpy(rd->fail_ebuf, r->ebuf, sizeof rd->fail_ebuf);
}

/* The object's one GET record, as rb_xfer_record makes it for a whole GET: from its first send to its last part. */
static void record_object(struct rb_worker *w, const struct rb_req *r, struct rg_read *rd, uint64_t now)
{
    struct rb_req obj = *r;
    obj.name = rd->name;
    obj.start_ns = obj.intended_ns = rd->start_ns;
    obj.ph_marked = false; /* an object read in parts is not split into phases (--phases) */
    obj.body = rd->body;
    obj.expect_len = rd->size;
    obj.mismatch = rd->fail_mismatch;
    obj.response_ns = rd->first_response_ns;
    CURLcode rc = CURLE_OK;
    long status = 206;
    if (rd->failed) {
        obj.errbody = rd->fail_body;
        memcpy(obj.ebuf, rd->fail_ebuf, sizeof obj.ebuf);
        rc = rd->fail_rc;
        status = rd->fail_status;
    }
    uint64_t total = now - rd->start_ns;
    uint64_t ttfb = rd->first_response_ns > rd->start_ns ? rd->first_response_ns - rd->start_ns : total;
    rb_xfer_record(w, &obj, rc, status, ttfb < total ? ttfb : total, total, 0, now);
}

/* Accounts the finished part on slot r, its slot freed; either engine. Worker thread. */
static void part_done(struct rb_worker *w, struct rb_req *r, struct rg_read *rd, CURLcode rc, long status,
                      uint64_t total_ns, uint64_t now)
{
    struct rb_rg *g = rg_of(w);
    rd->inflight--;
    /* A part is exactly its range: 206 with its bytes. A 200 is the whole object: the server ignored the Range. */
    if (rc == CURLE_OK && status == 200)
        rc = CURLE_RANGE_ERROR;
    else if (rc == CURLE_OK && status == 206 && r->body != r->expect_len)
        rc = CURLE_PARTIAL_FILE;
    int cls = rb_engine_classify(rc, status, r->mismatch, false);
    rb_mp_record_part(g->parts, r, cls, r->body, total_ns);
    if (cls >= 0) {
        fail_read(rd, r, rc, status, r->mismatch);
    } else {
        rd->body += r->body;
        rd->done++;
        if (r->response_ns && (!rd->first_response_ns || r->response_ns < rd->first_response_ns))
            rd->first_response_ns = r->response_ns;
    }
    if (!rd->inflight && (rd->failed || rd->done == rd->nparts)) {
        record_object(w, r, rd, now);
        read_close(rd);
    }
}

/* libcurl: accounts the finished request on slot r (a whole GET or a part) and frees the slot. Worker thread. */
static void rg_complete(struct rb_worker *w, struct rb_req *r, CURLcode rc)
{
    struct rg_read *rd = rg_of(w)->slot_read[r->slot];
    if (!rd) {
        rb_xfer_complete(w, r, rc);
        return;
    }
    rg_of(w)->slot_read[r->slot] = NULL;
    long status;
    uint64_t total_ns;
    rb_xfer_release(w, r, &status, &total_ns);
    part_done(w, r, rd, rc, status, total_ns, rb_clock_ns());
}

/* The native engine's completion (its slot freed): a whole GET recorded as the engine records one, or a part. */
static void rg_done(struct rb_worker *w, struct rb_req *r, CURLcode rc, long status, uint64_t ttfb_ns, uint64_t total_ns,
                    long redirects, uint64_t now)
{
    struct rg_read *rd = rg_of(w)->slot_read[r->slot];
    if (!rd) {
        rb_xfer_record(w, r, rc, status, ttfb_ns, total_ns, redirects, now);
        return;
    }
    rg_of(w)->slot_read[r->slot] = NULL;
    part_done(w, r, rd, rc, status, total_ns, now);
}

/* After the loop: parts in flight and objects under way are counted abandoned. Worker thread. */
static void rg_finish(struct rb_worker *w, uint64_t now_ns)
{
    struct rb_rg *g = rg_of(w);
    for (unsigned i = 0; i < w->nreq; i++) {
        /* A whole GET in flight (no read on its slot) is left: the loop counts it abandoned. */
        if (!g->slot_read[i] || !rb_worker_slot_busy(w, i, true))
            continue;
        g->slot_read[i] = NULL;
        g->parts->ops++;
        rb_stats_error(g->parts, RB_LERR_ABANDONED);
    }
    for (unsigned i = 0; i < g->nreads; i++)
        if (g->reads[i].open) {
            rb_xfer_abandon(w, NULL, g->reads[i].name, g->reads[i].start_ns, now_ns);
            read_close(&g->reads[i]);
        }
}

const struct rb_worker_driver rb_rg_driver = {
    .name = "ranged",
    .init = rg_new,
    .refill = rg_refill,
    .complete = rg_complete,
    .done = rg_done,
    .finish = rg_finish,
    .free = rg_free,
};
