/* load mixed on a worker: ops drawn by weight per request over the thread's live set; per-op stats. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mixed_int.h"
#include "payload_int.h"
#include "railbench/log.h"
#include "worker_int.h"

/* Draws of an op without an object to take before the refill waits for a completion. */
#define MIX_REDRAWS 64

enum obj_state { OBJ_LIVE, OBJ_ABSENT, OBJ_BUSY, OBJ_UNKNOWN };

static const char *const mix_keys[RB_MIX_OPS] = {
    [RB_LOAD_GET] = "get", [RB_LOAD_PUT] = "put", [RB_LOAD_DELETE] = "delete", [RB_LOAD_HEAD] = "stat"};

/*
 * A thread's objects (thread-local index k is the rank's object thread +
 * k * threads) in two lists, live and absent, with each object's position
 * in its list; an object in flight is in neither (OBJ_BUSY).
 */
struct rb_mixer {
    uint64_t n;
    uint64_t *live, *absent;
    uint64_t nlive, nabsent;
    uint64_t *pos;
    uint8_t *state;
    bool *written;               /* this run wrote it (prepare or a PUT here): cleanup deletes it if live */
    uint64_t *slot_obj;          /* per slot: the object of its request */
    uint8_t *slot_op, *slot_prev;
    bool dry;                    /* stopped because no op it may draw had an object (deletes outpaced puts) */
    rb_mix_issue_fn issue;       /* the engine's: a curl slot's (curl_issue) or the native engine's */
    struct rb_stats *local[RB_MIX_OPS], *total[RB_MIX_OPS];
};

/* w's load mixed state: its driver's (w->drv_state), NULL when w runs another driver. */
static struct rb_mixer *mix_of(const struct rb_worker *w)
{
    return w->drv == &rb_mix_driver ? w->drv_state : NULL;
}

const char *rb_mix_key(enum rb_load_op op)
{
    return (unsigned)op < RB_MIX_OPS ? mix_keys[op] : "?";
}

int rb_mix_parse(const char *s, struct rb_mix *m, char *bad, size_t badlen)
{
    memset(m, 0, sizeof *m);
    bool seen[RB_MIX_OPS] = {false};
    const char *p = s;
    for (;;) {
        size_t n = strcspn(p, ",");
        char item[64];
        snprintf(item, sizeof item, "%.*s", (int)(n < 63 ? n : 63), p);
        const char *eq = memchr(p, '=', n);
        int op = -1;
        for (int i = 0; eq && i < RB_MIX_OPS; i++)
            if ((size_t)(eq - p) == strlen(mix_keys[i]) && strncmp(p, mix_keys[i], (size_t)(eq - p)) == 0)
                op = i;
        char *end = NULL;
        unsigned long v = op >= 0 && eq + 1 < p + n && eq[1] >= '0' && eq[1] <= '9' ? strtoul(eq + 1, &end, 10) : 0;
        if (op < 0 || !end || end != p + n || v > 1000000 || seen[op]) {
            snprintf(bad, badlen, "bad item \"%s\"%s", item, op >= 0 && seen[op] ? " (given twice)" : "");
            return -EINVAL;
        }
        seen[op] = true;
        m->weight[op] = (unsigned)v;
        m->total += (unsigned)v;
        if (!p[n])
            break;
        p += n + 1;
    }
    if (!m->total) {
        snprintf(bad, badlen, "every weight is 0");
        return -EINVAL;
    }
    return 0;
}

/* ---- the live set ---- */

static void list_add(struct rb_mixer *x, uint64_t k, enum obj_state st)
{
    x->state[k] = (uint8_t)st;
    if (st == OBJ_LIVE)
        x->pos[k] = x->nlive, x->live[x->nlive++] = k;
    else if (st == OBJ_ABSENT)
        x->pos[k] = x->nabsent, x->absent[x->nabsent++] = k;
}

/* Takes the object at position i of list (live or absent) out of it; returns it. */
static uint64_t list_take(struct rb_mixer *x, uint64_t *list, uint64_t *n, uint64_t i)
{
    uint64_t k = list[i];
    list[i] = list[--*n];
    x->pos[list[i]] = i;
    x->state[k] = OBJ_BUSY;
    return k;
}

static int curl_issue(struct rb_worker *w, enum rb_load_op op, const char *name, uint64_t size);

/*
 * Sets up w's mixed state for o->mix: the thread's share of the rank's
 * objects (index % threads == thread), all live (prepared), per-op stats.
 * Returns 0 or -ENOMEM.
 */
static int mix_new(struct rb_worker *w)
{
    const struct rb_load_opts *o = w->o;
    struct rb_mixer *x = calloc(1, sizeof *x);
    if (!x)
        return -ENOMEM;
    w->drv_state = x;
    x->issue = w->nat ? rb_native_issue_op : curl_issue;
    uint64_t all = o->objects ? o->objects->n : 0;
    x->n = all > w->id ? (all - w->id + o->threads - 1) / o->threads : 0;
    size_t n = x->n ? (size_t)x->n : 1;
    x->live = malloc(n * sizeof *x->live);
    x->absent = malloc(n * sizeof *x->absent);
    x->pos = malloc(n * sizeof *x->pos);
    x->state = malloc(n);
    x->written = calloc(n, sizeof *x->written);
    x->slot_obj = calloc(w->nreq, sizeof *x->slot_obj);
    x->slot_op = calloc(w->nreq, 1);
    x->slot_prev = calloc(w->nreq, 1);
    if (!x->live || !x->absent || !x->pos || !x->state || !x->written || !x->slot_obj || !x->slot_op || !x->slot_prev)
        return -ENOMEM;
    w->mix_slot_op = x->slot_op;
    for (int i = 0; i < RB_MIX_OPS; i++)
        if (!(x->local[i] = rb_stats_new()) || !(x->total[i] = rb_stats_new()))
            return -ENOMEM;
    /* The objects exist when the phase starts: prepared by this run (written) or named as existing (--no-prepare). */
    for (uint64_t k = 0; k < x->n; k++) {
        list_add(x, k, OBJ_LIVE);
        x->written[k] = o->mix_prepared;
    }
    return 0;
}

/* Frees w's mixed state; safe when there is none. */
static void mix_free(struct rb_worker *w)
{
    struct rb_mixer *x = mix_of(w);
    if (!x)
        return;
    free(x->live);
    free(x->absent);
    free(x->pos);
    free(x->state);
    free(x->written);
    free(x->slot_obj);
    free(x->slot_op);
    free(x->slot_prev);
    for (int i = 0; i < RB_MIX_OPS; i++) {
        rb_stats_free(x->local[i]);
        rb_stats_free(x->total[i]);
    }
    free(x);
    w->drv_state = NULL;
    w->mix_slot_op = NULL;
}

/* ---- issuing ---- */

static enum rb_load_op draw_op(struct rb_worker *w)
{
    const struct rb_mix *m = w->o->mix;
    uint64_t u = rb_picker_rand_below(&w->pick.rng, m->total);
    int op = 0;
    while (u >= m->weight[op])
        u -= m->weight[op++];
    return (enum rb_load_op)op;
}

/*
 * An object for op, taken out of its list, and the state it had (where a
 * failed request leaves it); false when there is none. PUT prefers an
 * absent object (a re-create) and overwrites a live one when none is absent.
 */
static bool take_object(struct rb_worker *w, enum rb_load_op op, uint64_t *k, uint8_t *prev)
{
    struct rb_mixer *x = mix_of(w);
    if (op == RB_LOAD_PUT && x->nabsent) {
        *k = list_take(x, x->absent, &x->nabsent, rb_picker_rand_below(&w->pick.rng, x->nabsent));
        *prev = OBJ_ABSENT;
        return true;
    }
    if (!x->nlive)
        return false;
    *k = list_take(x, x->live, &x->nlive, rb_picker_rand_below(&w->pick.rng, x->nlive));
    *prev = OBJ_LIVE;
    return true;
}

/* The method of op on the slot's handle: every slot was set up for PUT (upload callbacks), the method is per request. */
static int set_method(CURL *c, enum rb_load_op op)
{
    if (curl_easy_setopt(c, CURLOPT_HTTPGET, 1L) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, op == RB_LOAD_DELETE ? "DELETE" : NULL) != CURLE_OK)
        return -EINVAL;
    if (op == RB_LOAD_PUT && curl_easy_setopt(c, CURLOPT_UPLOAD, 1L) != CURLE_OK)
        return -EINVAL;
    if (op == RB_LOAD_HEAD && curl_easy_setopt(c, CURLOPT_NOBODY, 1L) != CURLE_OK)
        return -EINVAL;
    return 0;
}

static bool limits_reached(const struct rb_worker *w)
{
    return (w->count_limit && w->issued >= w->count_limit) || (w->bytes_limit && w->bytes_done >= w->bytes_limit);
}

/* Issues on a curl slot: every slot was set up for uploads, the method is set per request. */
static int curl_issue(struct rb_worker *w, enum rb_load_op op, const char *name, uint64_t size)
{
    int rc = set_method(w->reqs[w->free_slots[w->nfree - 1]].easy, op);
    return rc ? rc : rb_xfer_issue(w, name, size, 0);
}

int rb_mix_refill(struct rb_worker *w, rb_mix_issue_fn issue)
{
    struct rb_mixer *x = mix_of(w);
    const struct rb_load_opts *o = w->o;
    unsigned misses = 0, issued = 0;
    /* At most nreq a call, as rb_worker_refill: a file's stat or delete ends inside issue and frees its slot. */
    while (w->nfree && !w->exhausted && issued < w->nreq) {
        if (limits_reached(w)) {
            w->exhausted = true;
            break;
        }
        enum rb_load_op op = draw_op(w);
        uint64_t k;
        uint8_t prev;
        if (!take_object(w, op, &k, &prev)) {
            if (++misses < MIX_REDRAWS)
                continue;
            if (w->nfree == w->nreq) {
                /* Nothing in flight will bring an object back: no drawn op can ever run again. */
                rb_warn("load mixed: thread %u has no object left for any op it may draw (deletes outpaced puts); "
                        "it stops", w->id);
                w->exhausted = true;
                x->dry = true;
            }
            break;
        }
        unsigned slot = w->free_slots[w->nfree - 1];
        x->slot_obj[slot] = k;
        x->slot_op[slot] = (uint8_t)op;
        x->slot_prev[slot] = prev;
        uint64_t idx = w->id + k * o->threads;
        const char *name = rb_objset_name(o->objects, idx, w->name_buf);
        uint64_t size = rb_objset_size(o->objects, idx);
        if (!size && o->max_size)
            size = rb_payload_size(o->seed, name, o->min_size, o->max_size);
        w->op = rb_xfer_op_for(op);
        int rc = issue(w, op, name, size);
        if (rc)
            return rc;
        issued++;
    }
    return 0;
}

static int mix_refill(struct rb_worker *w)
{
    return rb_mix_refill(w, mix_of(w)->issue);
}

/* ---- completions ---- */

bool rb_mix_slot_overwrites(const struct rb_worker *w, unsigned slot)
{
    return mix_of(w)->slot_op[slot] == RB_LOAD_PUT && mix_of(w)->slot_prev[slot] == OBJ_LIVE;
}

struct rb_stats *rb_mix_slot_stats(struct rb_worker *w, unsigned slot)
{
    enum rb_load_op op = rb_mix_slot_op(w, slot);
    w->op = rb_xfer_op_for(op);
    return mix_of(w)->local[op];
}

void rb_mix_settle(struct rb_worker *w, unsigned slot, bool ok)
{
    struct rb_mixer *x = mix_of(w);
    enum rb_load_op op = rb_mix_slot_op(w, slot);
    uint64_t k = x->slot_obj[slot];
    if (!ok) {
        list_add(x, k, (enum obj_state)x->slot_prev[slot]);
        return;
    }
    if (op == RB_LOAD_PUT)
        x->written[k] = true;
    list_add(x, k, op == RB_LOAD_DELETE ? OBJ_ABSENT : OBJ_LIVE);
}

void rb_mix_abandoned(struct rb_worker *w, unsigned slot)
{
    struct rb_mixer *x = mix_of(w);
    enum rb_load_op op = rb_mix_slot_op(w, slot);
    /* A GET or STAT changed nothing; an abandoned PUT or DELETE may or may not have happened. */
    if (op == RB_LOAD_GET || op == RB_LOAD_HEAD)
        list_add(x, x->slot_obj[slot], OBJ_LIVE);
    else
        x->state[x->slot_obj[slot]] = OBJ_UNKNOWN;
}

/* A finished request of slot is recorded under its op's stats: w->local points there until record_end. */
static struct rb_stats *record_begin(struct rb_worker *w, unsigned slot, uint64_t *errors)
{
    struct rb_stats *keep = w->local;
    w->local = rb_mix_slot_stats(w, slot);
    *errors = w->local->errors;
    return keep;
}

/* w->local back to keep; slot's object moves to live or absent as its request left it. */
static void record_end(struct rb_worker *w, unsigned slot, struct rb_stats *keep, uint64_t errors)
{
    bool ok = w->local->errors == errors;
    w->local = keep;
    rb_mix_settle(w, slot, ok);
}

/* libcurl's completion of slot r. */
static void mix_complete(struct rb_worker *w, struct rb_req *r, CURLcode rc)
{
    unsigned slot = (unsigned)(r - w->reqs);
    uint64_t errors;
    struct rb_stats *keep = record_begin(w, slot, &errors);
    rb_xfer_complete(w, r, rc);
    record_end(w, slot, keep, errors);
}

/* The native engine's completion of slot r (its slot already freed). */
static void mix_done(struct rb_worker *w, struct rb_req *r, CURLcode rc, long status, uint64_t ttfb_ns, uint64_t total_ns,
                     long redirects, uint64_t now_ns)
{
    uint64_t errors;
    struct rb_stats *keep = record_begin(w, r->slot, &errors);
    rb_xfer_record(w, r, rc, status, ttfb_ns, total_ns, redirects, now_ns);
    record_end(w, r->slot, keep, errors);
}

/*
 * After the loop, on either engine: requests still in flight are stopped and
 * counted abandoned under their ops (their objects' state unknown).
 */
static void mix_finish(struct rb_worker *w, uint64_t now_ns)
{
    struct rb_stats *keep = w->local;
    for (unsigned i = 0; i < w->nreq; i++) {
        struct rb_req *r = rb_worker_slot_busy(w, i, true);
        if (!r)
            continue;
        w->local = rb_mix_slot_stats(w, i);
        rb_xfer_abandon(w, NULL, r->name, r->intended_ns, now_ns);
        rb_mix_abandoned(w, i);
    }
    w->local = keep;
}

/* At a handover: folds the per-op stats of the interval into w->local and into the per-op totals. Worker thread. */
static void mix_fold(struct rb_worker *w)
{
    struct rb_mixer *x = mix_of(w);
    for (int i = 0; i < RB_MIX_OPS; i++) {
        rb_stats_merge(w->local, x->local[i]);
        rb_stats_merge(x->total[i], x->local[i]);
        rb_stats_reset(x->local[i]);
    }
}

/* ---- after the phase ---- */

void rb_engine_mix_stats(const struct rb_engine *e, enum rb_load_op op, struct rb_stats *into)
{
    for (unsigned t = 0; e->w && t < e->nw; t++)
        if (mix_of(&e->w[t]))
            rb_stats_merge(into, mix_of(&e->w[t])->total[op]);
}

void rb_engine_mix_live(const struct rb_engine *e, uint64_t *live, uint64_t *unknown, uint64_t *dry)
{
    *live = *unknown = *dry = 0;
    for (unsigned t = 0; e->w && t < e->nw; t++) {
        const struct rb_mixer *x = mix_of(&e->w[t]);
        *dry += x && x->dry;
        for (uint64_t k = 0; x && k < x->n; k++) {
            *live += x->state[k] == OBJ_LIVE;
            *unknown += x->state[k] == OBJ_UNKNOWN;
        }
    }
}

int rb_engine_mix_each_live(const struct rb_engine *e, int (*fn)(const char *name, void *arg), void *arg)
{
    char buf[RB_OBJSET_NAME_BYTES];
    for (unsigned t = 0; e->w && t < e->nw; t++) {
        const struct rb_worker *w = &e->w[t];
        const struct rb_mixer *x = mix_of(w);
        for (uint64_t k = 0; x && k < x->n; k++) {
            /* What this run wrote and did not delete, and what may be there after an abandoned PUT or DELETE. */
            if (!(x->written[k] && x->state[k] == OBJ_LIVE) && x->state[k] != OBJ_UNKNOWN)
                continue;
            int rc = fn(rb_objset_name(w->o->objects, w->id + k * w->o->threads, buf), arg);
            if (rc)
                return rc;
        }
    }
    return 0;
}

const struct rb_worker_driver rb_mix_driver = {
    .name = "mixed",
    .init = mix_new,
    .refill = mix_refill,
    .complete = mix_complete,
    .done = mix_done,
    .finish = mix_finish,
    .fold = mix_fold,
    .free = mix_free,
};
