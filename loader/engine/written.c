/* Which objects a put wrote (o->track_written): what cleanup deletes, noted on either engine and by the file loop. */
#include <errno.h>
#include <stdlib.h>

#include "railbench/log.h"
#include "worker_int.h"

/* The indices of the objects a worker wrote, and per slot the object its put in flight writes (tracked.c). */
struct rb_written {
    uint64_t *idx;
    size_t n, cap;
    uint64_t *slot_idx;
    struct rb_objset unknown;  /* puts whose outcome is not known: timed out, reset, or in flight at the end */
};

int rb_written_new(struct rb_worker *w)
{
    if (!(w->written = calloc(1, sizeof *w->written)) ||
        !(w->written->slot_idx = calloc(w->nreq, sizeof *w->written->slot_idx)))
        return -ENOMEM;
    return 0;
}

void rb_written_free(struct rb_worker *w)
{
    if (!w->written)
        return;
    free(w->written->idx);
    free(w->written->slot_idx);
    rb_objset_free(&w->written->unknown);
    free(w->written);
    w->written = NULL;
}

void rb_worker_wrote(struct rb_worker *w, uint64_t idx)
{
    struct rb_written *x = w->written;
    if (!x)
        return;
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 1024;
        uint64_t *n = realloc(x->idx, cap * sizeof *n);
        if (!n) {
            rb_warn("out of memory noting what this run wrote: cleanup will miss objects");
            return;
        }
        x->idx = n;
        x->cap = cap;
    }
    x->idx[x->n++] = idx;
}

void rb_written_unknown(struct rb_worker *w, const char *name)
{
    if (!w->written)
        return;
    if (rb_objset_add(&w->written->unknown, name, 0))
        rb_warn("out of memory noting a put whose outcome is unknown: %s is not looked up", name);
}

int rb_written_each_unknown(const struct rb_worker *w, int (*fn)(const char *name, void *arg), void *arg)
{
    char buf[RB_OBJSET_NAME_BYTES];
    for (uint64_t i = 0; w->written && i < w->written->unknown.n; i++) {
        int rc = fn(rb_objset_name(&w->written->unknown, i, buf), arg);
        if (rc)
            return rc;
    }
    return 0;
}

int rb_written_each(const struct rb_worker *w, const struct rb_objset *set, char *buf,
                    int (*fn)(const char *name, void *arg), void *arg)
{
    for (size_t i = 0; w->written && i < w->written->n; i++) {
        int rc = fn(rb_objset_name(set, w->written->idx[i], buf), arg);
        if (rc)
            return rc;
    }
    return 0;
}

void rb_written_slot_put(struct rb_worker *w, unsigned slot, uint64_t idx)
{
    w->written->slot_idx[slot] = idx;
}

void rb_written_slot_stored(struct rb_worker *w, unsigned slot)
{
    rb_worker_wrote(w, w->written->slot_idx[slot]);
}
