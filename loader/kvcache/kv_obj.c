/* load kvcache on object targets (s3://, ais://, http://): each entry one object, PUT, GET and DELETE on the engine. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../engine/engine_int.h"
#include "../engine/payload_int.h"
#include "kvcache_int.h"
#include "railbench/clock.h"
#include "railbench/stats.h"

/*
 * The entry whose request runs on this thread: its payload key and its NumPy header. A worker's fetchers run their
 * requests on the worker's own thread (rb_fetcher_get), so the layout below finds the header of the object it fills
 * here, without a lock.
 */
static _Thread_local struct {
    uint64_t key;
    bool set;
    unsigned char hdr[RB_KV_NPY_HEADER];
} cur;

/*
 * The objects' payload layout (rb_kv_obj_layout): the bytes of the entry's file (kv_run.c), the NumPy header
 * then the plain seeded payload of the name. An object that is not this thread's entry gets a header of zeros: no
 * file holds that, so --verify tells.
 */
static void npy_fill(const void *ctx, uint64_t key, uint64_t off, void *buf, size_t len)
{
    (void)ctx;
    unsigned char *out = buf;
    size_t h = 0;
    if (off < RB_KV_NPY_HEADER) {
        h = RB_KV_NPY_HEADER - off < len ? (size_t)(RB_KV_NPY_HEADER - off) : len;
        if (cur.set && cur.key == key)
            memcpy(out, cur.hdr + off, h);
        else
            memset(out, 0, h);
    }
    if (h < len)
        rb_payload_plain_fill(key, off + h - RB_KV_NPY_HEADER, out + h, len - h);
}

struct rb_payload_layout rb_kv_obj_layout(void)
{
    return (struct rb_payload_layout){npy_fill, NULL};
}

/* The fetcher of op (PUT, GET, DELETE) of w, made on first use: one connection kept from request to request. */
static int fetcher(struct rb_kv_worker *w, enum rb_load_op op, struct rb_fetcher **out)
{
    unsigned k = op == RB_LOAD_PUT ? 0 : op == RB_LOAD_GET ? 1 : 2;
    if (!w->fetch[k]) {
        struct rb_load_opts o = w->rank->obj_opts;
        o.op = op;
        o.threads = 1;
        o.inflight = 1;
        o.pattern = RB_PATTERN_SEQUENTIAL;
        o.verify = op == RB_LOAD_GET && w->rank->a->verify;
        /* The rank's threads spread over the target's endpoints, as load get spreads its connections. */
        size_t ep0 = (size_t)w->rank->rank * w->rank->nworkers + w->index;
        int rc = rb_fetcher_new_at(&w->fetch[k], &o, ep0);
        if (rc)
            return rc;
    }
    *out = w->fetch[k];
    return 0;
}

/*
 * One request (op on the object name of e's size, or of 0 bytes) on w's fetcher of that op. The request's own time
 * (the engine's latency record: from its start to its last byte) goes to *req_ns. Returns 0, -ENOENT for a 4xx
 * answer (a GET of an object that is not there), or -EIO with the error class in msg.
 */
static int request(struct rb_kv_worker *w, enum rb_load_op op, const char *name, const struct rb_kv_entry *e,
                   uint64_t *req_ns, char *msg, size_t len)
{
    const struct rb_kv_args *a = w->rank->a;
    struct rb_objset set = {0};
    struct rb_fetcher *f = NULL;
    int rc = !w->obj_st && !(w->obj_st = rb_stats_new()) ? -ENOMEM : rb_objset_add(&set, name, e ? e->bytes : 0);
    if (!rc)
        rc = fetcher(w, op, &f);
    if (rc)
        goto done;
    if (e) {
        cur.key = rb_payload_key(a->seed, name);
        cur.set = rb_kv_npy_header(&a->model, (uint32_t)a->tp, e->tokens, cur.hdr) == 0;
    }
    struct rb_stats *st = w->obj_st;
    const uint64_t ops0 = st->ops, sum0 = st->lat.sum_ns;
    uint64_t err0[RB_STATS_ERR_MAX];
    memcpy(err0, st->err, sizeof err0);
    const uint32_t idx = 0;
    int failed = rb_fetcher_get(f, &set, &idx, 1, st, NULL, NULL);
    cur.set = false;
    *req_ns = st->lat.sum_ns - sum0;
    if (failed < 0) {
        rc = failed;
    } else if (failed) {
        static const char *const names[] = {RB_LOAD_ERR_NAMES};
        unsigned cls = 0;
        while (cls + 1 < sizeof names / sizeof names[0] && st->err[cls] == err0[cls])
            cls++;
        snprintf(msg, len, "%s (%s)", rb_load_op_name(op), names[cls]);
        rc = cls == RB_LERR_HTTP_4XX ? -ENOENT : -EIO;
    } else if (st->ops - ops0 != 1) {
        snprintf(msg, len, "no answer");
        rc = -EIO;
    }
done:
    if (rc && rc != -ENOENT && rc != -EIO)
        snprintf(msg, len, "%s", strerror(-rc));
    rb_objset_free(&set);
    return rc;
}

void rb_kv_obj_free(struct rb_kv_worker *w)
{
    for (unsigned k = 0; k < sizeof w->fetch / sizeof w->fetch[0]; k++) {
        rb_fetcher_free(w->fetch[k]);
        w->fetch[k] = NULL;
    }
    rb_stats_free(w->obj_st);
    w->obj_st = NULL;
}

/* The object's URL-ish name for messages: the target and the name beneath it. */
static int obj_fail(struct rb_kv_worker *w, const char *msg, const char *name)
{
    if (!w->err) {
        w->err = EIO;
        snprintf(w->errmsg, sizeof w->errmsg, "%s %s: %s", rb_target_name(w->rank->obj_opts.target), name, msg);
    }
    return -EIO;
}

/* PUT: the entry's file bytes (header and seeded payload, made by the layout); device time = the request. */
static int obj_write(struct rb_kv_worker *w, struct rb_kv_entry *e, const unsigned char *src)
{
    (void)src; /* the engine makes the bytes from the seed and the name: the CPU tier's copy holds the same */
    char name[320], msg[200] = "";
    rb_kv_entry_name(w, e, name, sizeof name);
    uint64_t t = rb_clock_ns(), req = 0;
    int rc = request(w, RB_LOAD_PUT, name, e, &req, msg, sizeof msg);
    uint64_t all = rb_clock_ns() - t;
    if (rc)
        return obj_fail(w, msg, name);
    e->where = RB_KV_IN_STORAGE;
    rb_kv_account(w, true, e, req, all > req ? all - req : 0);
    return 0;
}

/* GET (every byte compared with --verify); a hash block not written yet (a 4xx) is -ENOENT, a miss. */
static int obj_read(struct rb_kv_worker *w, struct rb_kv_entry *e)
{
    char name[320], msg[200] = "";
    rb_kv_entry_name(w, e, name, sizeof name);
    uint64_t t = rb_clock_ns(), req = 0;
    int rc = request(w, RB_LOAD_GET, name, e, &req, msg, sizeof msg);
    uint64_t all = rb_clock_ns() - t;
    if (rc == -ENOENT && e->is_block)
        return rc;
    if (rc)
        return obj_fail(w, msg, name);
    rb_kv_account(w, false, e, req, all > req ? all - req : 0);
    return 0;
}

static int obj_remove(struct rb_kv_worker *w, const char *name)
{
    char msg[200] = "";
    uint64_t req = 0;
    int rc = request(w, RB_LOAD_DELETE, name, NULL, &req, msg, sizeof msg);
    return rc ? obj_fail(w, msg, name) : 0;
}

const struct rb_kv_store rb_kv_obj_store = {obj_write, obj_read, obj_remove};
