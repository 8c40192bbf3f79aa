/* Object pickers: which of the rank's objects a worker requests next, one function per op and pattern, chosen once; O(1) memory. */
#include <errno.h>
#include <stdlib.h>

#include "railbench/mix.h"
#include "railbench/perm.h"

#include "worker_int.h"

bool rb_load_op_once(enum rb_load_op op)
{
    return op == RB_LOAD_PUT || op == RB_LOAD_DELETE;
}

static uint64_t next_rand(uint64_t *x)
{
    /* xorshift64* (Vigna 2016). */
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 0x2545f4914f6cdd1dull;
}

uint64_t rb_picker_rand_below(uint64_t *x, uint64_t n)
{
    return n ? (uint64_t)(((unsigned __int128)next_rand(x) * n) >> 64) : 0;
}

/* GET random: any of the rank's objects, drawn with replacement. */
static bool pick_random(struct rb_picker *p, size_t *idx)
{
    if (!p->nobjects)
        return false;
    *idx = (size_t)rb_picker_rand_below(&p->rng, p->nobjects);
    return true;
}

/* The rank's index of the slice's k-th object: the thread's objects are j % threads == thread. */
static size_t slice_at(const struct rb_picker *p, uint64_t k)
{
    return (size_t)(p->thread + k * p->threads);
}

/* PUT and DELETE: the slice once, in order. */
static bool pick_once(struct rb_picker *p, size_t *idx)
{
    if (p->pos == p->nslice)
        return false;
    *idx = slice_at(p, p->pos++);
    return true;
}

/* GET sequential: the slice in order, over and over. */
static bool pick_sequential(struct rb_picker *p, size_t *idx)
{
    if (p->pos == p->nslice) {
        if (!p->nslice)
            return false;
        p->epoch++;
        p->pos = 0;
    }
    *idx = slice_at(p, p->pos++);
    return true;
}

/* The seed of epoch e's permutation of this thread's slice (epoch 0: the seed and salt alone). */
static uint64_t epoch_seed(const struct rb_picker *p, uint64_t e)
{
    return p->seed ^ (e * RB_MIX_GOLDEN) ^ p->salt;
}

/* GET epoch: every object of the slice once per epoch, each epoch in its own seeded permutation, computed per index. */
static bool pick_epoch(struct rb_picker *p, size_t *idx)
{
    if (p->pos == p->nslice) {
        if (!p->nslice)
            return false;
        p->epoch++;
        if (p->epochs && p->epoch >= p->epochs)
            return false;
        rb_perm_init(&p->perm, p->nslice, epoch_seed(p, p->epoch));
        p->pos = 0;
    }
    *idx = slice_at(p, rb_perm_at(&p->perm, p->pos++));
    return true;
}

int rb_picker_init(struct rb_picker *p, const struct rb_load_opts *o, unsigned thread, unsigned threads)
{
    uint64_t all = o->objects->n;
    if (!threads || thread >= threads)
        return -EINVAL;
    p->thread = thread;
    p->threads = threads;
    p->nslice = all / threads + (thread < all % threads ? 1 : 0);
    p->pos = 0;
    p->nobjects = all;
    p->epoch = 0;
    p->epochs = o->epochs;
    p->seed = o->seed;
    p->salt = (uint64_t)o->rank << 32 | thread;
    if (rb_load_op_once(o->op)) {
        p->next = pick_once;
    } else if (o->pattern == RB_PATTERN_RANDOM) {
        p->next = pick_random;
    } else if (o->pattern == RB_PATTERN_EPOCH) {
        p->next = pick_epoch;
        if (p->nslice && rb_perm_init(&p->perm, p->nslice, epoch_seed(p, 0)))
            return -EINVAL; /* above 2^62 objects */
    } else {
        p->next = pick_sequential;
    }
    return 0;
}

void rb_picker_free(struct rb_picker *p)
{
    if (!p)
        return;
    p->nslice = p->pos = 0;
}
