/* load kvcache's tiers: least-recently-used lists of entries with a capacity and a fill target. */
#include "kvcache_int.h"

void rb_kv_tier_push(struct rb_kv_tier *t, struct rb_kv_entry *e)
{
    e->prev = NULL;
    e->next = t->mru;
    if (t->mru)
        t->mru->prev = e;
    t->mru = e;
    if (!t->lru)
        t->lru = e;
    t->used_bytes += e->bytes;
    t->entries++;
}

void rb_kv_tier_unlink(struct rb_kv_tier *t, struct rb_kv_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        t->mru = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        t->lru = e->prev;
    e->prev = e->next = NULL;
    t->used_bytes -= e->bytes;
    t->entries--;
}

void rb_kv_tier_touch(struct rb_kv_tier *t, struct rb_kv_entry *e)
{
    if (t->mru == e)
        return;
    rb_kv_tier_unlink(t, e);
    rb_kv_tier_push(t, e);
}

struct rb_kv_entry *rb_kv_tier_victim(const struct rb_kv_tier *t, uint64_t bytes, double fill)
{
    if (!t->lru)
        return NULL;
    double limit = fill * (double)t->capacity_bytes;
    return (double)(t->used_bytes + bytes) > limit ? t->lru : NULL;
}
