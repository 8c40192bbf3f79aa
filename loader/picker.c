/* Object pickers: which of the rank's objects a worker requests next, one function per op and pattern, chosen once. */
#include <errno.h>
#include <stdlib.h>

#include "worker_int.h"

#define GOLDEN 0x9e3779b97f4a7c15ull

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

/* PUT and DELETE: the slice once, in order. */
static bool pick_once(struct rb_picker *p, size_t *idx)
{
    if (p->pos == p->nslice)
        return false;
    *idx = p->slice[p->pos++];
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
    *idx = p->slice[p->pos++];
    return true;
}

/* GET epoch: every object of the slice once per epoch, each epoch in its own seeded permutation. */
static bool pick_epoch(struct rb_picker *p, size_t *idx)
{
    if (p->pos == p->nslice) {
        if (!p->nslice)
            return false;
        p->epoch++;
        if (p->epochs && p->epoch >= p->epochs)
            return false;
        rb_objset_shuffle(p->slice, p->nslice, p->seed ^ (p->epoch * GOLDEN) ^ p->salt);
        p->pos = 0;
    }
    *idx = p->slice[p->pos++];
    return true;
}

int rb_picker_init(struct rb_picker *p, const struct rb_load_opts *o, unsigned thread, unsigned threads)
{
    size_t all = o->objects->n;
    size_t n = all / threads + (thread < all % threads ? 1 : 0);
    p->slice = malloc((n ? n : 1) * sizeof *p->slice);
    if (!p->slice)
        return -ENOMEM;
    for (size_t j = thread, k = 0; j < all; j += threads)
        p->slice[k++] = (uint32_t)j;
    p->nslice = n;
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
        rb_objset_shuffle(p->slice, n, o->seed ^ p->salt);
    } else {
        p->next = pick_sequential;
    }
    return 0;
}

void rb_picker_free(struct rb_picker *p)
{
    if (!p)
        return;
    free(p->slice);
    p->slice = NULL;
    p->nslice = p->pos = 0;
}
