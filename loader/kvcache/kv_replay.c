/* load kvcache --trace: a rank's share of a Mooncake or BurstGPT trace, open loop at the trace's pace or faster. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "../engine/fwatch_int.h"
#include "kvcache_int.h"
#include "railbench/clock.h"

/* Notes a hash block this thread wrote (removed at the end). */
static int note_written(struct rb_kv_worker *w, uint64_t block)
{
    if (w->nwrote == w->capwrote) {
        size_t cap = w->capwrote ? 2 * w->capwrote : 256;
        uint64_t *p = realloc(w->wrote, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        w->wrote = p;
        w->capwrote = cap;
    }
    w->wrote[w->nwrote++] = block;
    return 0;
}

/* Whether block b of q repeats an id that came before it in the same request. */
static bool repeated(const struct rb_kvtrace_req *q, uint32_t b)
{
    for (uint32_t k = 0; k < b; k++)
        if (q->blocks[k] == q->blocks[b])
            return true;
    return false;
}

/*
 * A Mooncake request: each hash block is read when its id appeared in an earlier request (a prefix hit; a block whose
 * writer has not finished yet is a miss), written otherwise, as Mooncake's own replayer does. An id new to the trace
 * that comes twice in one request is written once: the second is a repeat (no I/O; not a hit, as the trace counts it).
 */
static int mooncake(struct rb_kv_worker *w, const struct rb_kvtrace_req *q, uint32_t block_tokens)
{
    const struct rb_kv_args *a = w->rank->a;
    for (uint32_t b = 0; b < q->n_blocks && !atomic_load(&w->rank->stop); b++) {
        uint64_t tokens = block_tokens / a->scale_den ? block_tokens / a->scale_den : 1;
        struct rb_kv_entry e = {.is_block = true, .block = q->blocks[b], .tokens = (uint32_t)tokens,
                                .bytes = RB_KV_NPY_HEADER + tokens * a->bytes_per_token};
        int rc;
        if (q->seen[b]) {
            rc = rb_kv_read(w, &e);
            if (rc == -ENOENT) {
                w->count[RB_KV_BLOCK_MISSES]++;
                continue;
            }
            if (!rc)
                w->count[RB_KV_BLOCKS_READ]++;
        } else if (repeated(q, b)) {
            w->count[RB_KV_BLOCK_REPEATS]++;
            continue;
        } else if (!(rc = rb_kv_write(w, &e))) {
            w->count[RB_KV_BLOCKS_WRITTEN]++;
            rc = note_written(w, e.block);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* A BurstGPT request (no prefix information): one turn, its entry written, read while decoding, then dropped. */
static int burst(struct rb_kv_worker *w, const struct rb_kvtrace_req *q, size_t i)
{
    const struct rb_kv_args *a = w->rank->a;
    uint64_t tokens = q->input_tokens / a->scale_den ? q->input_tokens / a->scale_den : 1;
    struct rb_kv_entry e = {.tokens = (uint32_t)tokens, .bytes = RB_KV_NPY_HEADER + tokens * a->bytes_per_token,
                            .user = (uint32_t)i, .turn = 1};
    int rc = rb_kv_put(w, &e);
    for (uint32_t k = 0; !rc && k < rb_kv_decode_reads(q->output_tokens) && !atomic_load(&w->rank->stop); k++)
        rc = rb_kv_get(w, &e);
    int rd = rb_kv_drop(w, &e);
    return rc ? rc : rd;
}

/*
 * Thread j of rank r plays requests i with i % ranks == r, the k-th of those when k % threads == j, each at its
 * arrival time: open loop, so a request that starts late is measured from when it should have started (the
 * correction for coordinated omission).
 */
void *rb_kv_replay_main(void *arg)
{
    struct rb_kv_worker *w = arg;
    struct rb_kv_rank *r = w->rank;
    const struct rb_kvtrace *t = r->trace;
    const double speedup = r->a->speedup > 0 ? r->a->speedup : 1;
    w->fw = rb_fwatch_claim();
    size_t k = 0;
    for (size_t i = (size_t)r->rank; i < t->n && !atomic_load(&r->stop) && !rb_fwatch_fired(); i += (size_t)r->ranks) {
        if (k++ % r->nworkers != w->index)
            continue;
        const struct rb_kvtrace_req *q = &t->req[i];
        uint64_t due = r->t0_ns + (uint64_t)(q->t_s / speedup * 1e9);
        while (rb_clock_ns() < due && !atomic_load(&r->stop)) {
            uint64_t left = due - rb_clock_ns();
            rb_clock_sleep_ns(left < 20000000 ? left : 20000000, NULL);
        }
        if (atomic_load(&r->stop))
            break;
        int rc = t->fmt == RB_KVTRACE_MOONCAKE ? mooncake(w, q, t->block_tokens) : burst(w, q, i);
        if (rc)
            break;
        if (atomic_load(&r->stop))
            break; /* cut short: not a whole request */
        rb_hist_record(w->hist[RB_KV_REQUEST], rb_clock_ns() - due);
        w->count[RB_KV_REQUESTS]++;
        w->count[RB_KV_PREFILL_TOKENS] += q->input_tokens;
        w->count[RB_KV_GENERATED_TOKENS] += q->output_tokens;
    }
    atomic_store(&w->finished, true);
    return NULL;
}
