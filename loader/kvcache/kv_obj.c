/* load kvcache on object targets (s3://, ais://, http://): each entry one object, PUT, GET and DELETE on the engine. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../engine/engine_int.h"
#include "kvcache_int.h"
#include "railbench/clock.h"
#include "railbench/stats.h"

#define WAIT_NS 100000 /* the waiting thread looks at its request this often */

/*
 * One request (op on the object name of size bytes) on an engine of its own: one thread, one connection, the
 * target's options as the run resolved them. The request's own time (from the engine's latency record) goes to
 * *req_ns. Returns 0, -ENOENT for a 4xx answer (a GET of an object that is not there), or -EIO with the error
 * class in msg.
 */
int rb_kv_obj_request(const struct rb_kv_rank *r, enum rb_load_op op, const char *name, uint64_t size, bool verify,
                      uint64_t *req_ns, char *msg, size_t len)
{
    struct rb_objset set = {0};
    struct rb_stats *st = rb_stats_new();
    struct rb_engine *e = NULL;
    int rc = st ? rb_objset_add(&set, name, size) : -ENOMEM;
    if (rc)
        goto done;
    struct rb_load_opts o = r->obj_opts;
    o.op = op;
    o.objects = &set;
    o.threads = 1;
    o.inflight = 1;
    o.count = 1;
    o.pattern = RB_PATTERN_SEQUENTIAL;
    o.min_size = o.max_size = size;
    o.verify = verify && op == RB_LOAD_GET;
    if ((rc = rb_engine_new(&e, &o)) || (rc = rb_engine_start(e)))
        goto done;
    while (!rb_engine_done(e))
        rb_clock_sleep_ns(WAIT_NS, NULL);
    rb_engine_stop(e);
    rb_engine_collect(e, st, NULL);
    rc = rb_engine_status(e);
    *req_ns = st->lat.sum_ns;
    if (!rc && st->errors) {
        static const char *const names[] = {RB_LOAD_ERR_NAMES};
        unsigned cls = 0;
        while (cls + 1 < sizeof names / sizeof names[0] && !st->err[cls])
            cls++;
        snprintf(msg, len, "%s (%s)", op == RB_LOAD_PUT ? "PUT" : op == RB_LOAD_GET ? "GET" : "DELETE", names[cls]);
        rc = cls == RB_LERR_HTTP_4XX ? -ENOENT : -EIO;
    } else if (!rc && st->ops != 1) {
        snprintf(msg, len, "no answer");
        rc = -EIO;
    }
done:
    if (rc && rc != -ENOENT && rc != -EIO)
        snprintf(msg, len, "%s", strerror(-rc));
    rb_engine_free(e);
    rb_objset_free(&set);
    rb_stats_free(st);
    return rc;
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

/* PUT: the engine's seeded payload of the entry's size; device time = the request, host = the engine's set-up. */
static int obj_write(struct rb_kv_worker *w, struct rb_kv_entry *e, const unsigned char *src)
{
    (void)src; /* the engine makes the bytes from the seed and the name: the CPU tier's copy holds the same */
    char name[320], msg[200] = "";
    rb_kv_entry_name(w, e, name, sizeof name);
    uint64_t t = rb_clock_ns(), req = 0;
    int rc = rb_kv_obj_request(w->rank, RB_LOAD_PUT, name, e->bytes, false, &req, msg, sizeof msg);
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
    int rc = rb_kv_obj_request(w->rank, RB_LOAD_GET, name, e->bytes, w->rank->a->verify, &req, msg, sizeof msg);
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
    int rc = rb_kv_obj_request(w->rank, RB_LOAD_DELETE, name, 0, false, &req, msg, sizeof msg);
    return rc ? obj_fail(w, msg, name) : 0;
}

const struct rb_kv_store rb_kv_obj_store = {obj_write, obj_read, obj_remove};
