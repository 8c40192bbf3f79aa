/* load kvcache's model: KV bytes per token, the entry's NumPy header, MLPerf Storage's options, users' turns. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kvcache_int.h"
#include "railbench/mix.h"

/* Architectures from the models' published configurations (num_hidden_layers, num_key_value_heads, head_dim). */
static const struct rb_kv_model models[] = {
    {"llama3.1-8b", 32, 8, 128, 2},
    {"llama3.1-70b", 80, 8, 128, 2},
    {"llama3.1-405b", 126, 8, 128, 2},
};
const char rb_kv_model_list[] = "llama3.1-8b, llama3.1-70b, llama3.1-405b";

const struct rb_kv_model *rb_kv_model_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof models / sizeof models[0]; i++)
        if (strcmp(models[i].name, name) == 0)
            return &models[i];
    return NULL;
}

/* MLPerf Storage v3.0 (kv_cache_benchmark): KV bytes = layers × kv_heads × head_dim × 2 (K and V) × dtype bytes. */
uint64_t rb_kv_bytes_per_token(const struct rb_kv_model *m, uint32_t tp)
{
    if (!tp || m->kv_heads % tp)
        return 0;
    return (uint64_t)m->layers * (m->kv_heads / tp) * m->head_dim * 2 * m->dtype_bytes;
}

int rb_kv_npy_header(const struct rb_kv_model *m, uint32_t tp, uint64_t tokens, unsigned char out[RB_KV_NPY_HEADER])
{
    if (!tp || m->kv_heads % tp || m->dtype_bytes != 2)
        return -EINVAL;
    char dict[RB_KV_NPY_HEADER];
    int n = snprintf(dict, sizeof dict, "{'descr': '<f2', 'fortran_order': False, 'shape': (%" PRIu32 ", 2, %" PRIu64
                     ", %" PRIu32 ", %" PRIu32 "), }", m->layers, tokens, m->kv_heads / tp, m->head_dim);
    const size_t pre = 10; /* magic (6), version (2), header length (2) */
    if (n < 0 || pre + (size_t)n + 1 > RB_KV_NPY_HEADER)
        return -EINVAL;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    const uint16_t hl = RB_KV_NPY_HEADER - pre;
    out[8] = (unsigned char)(hl & 0xff);
    out[9] = (unsigned char)(hl >> 8);
    memcpy(out + pre, dict, (size_t)n);
    memset(out + pre + n, ' ', RB_KV_NPY_HEADER - pre - (size_t)n - 1);
    out[RB_KV_NPY_HEADER - 1] = '\n'; /* NumPy: the dictionary padded with spaces, ended by a newline */
    return 0;
}

/* MLPerf Storage v3.0's three options (ANCHORS: users and tiers per rank, allocations in flight). */
static const struct rb_kv_option options[] = {
    {1, "storage stress", "llama3.1-8b", 200, 0, 16},
    {2, "throughput", "llama3.1-8b", 100, UINT64_C(4) << 30, 16},
    {3, "large model", "llama3.1-70b", 70, 0, 4},
};

const struct rb_kv_option *rb_kv_option_get(unsigned n)
{
    return n >= 1 && n <= 3 ? &options[n - 1] : NULL;
}

/* The reference's user kinds: context tokens, generated tokens, think time. */
const struct rb_kv_user_profile rb_kv_profiles[RB_KV_USER_KINDS] = {
    {"chat", 512, 4096, 50, 200, 100, 500},
    {"coding", 4096, 25000, 100, 500, 200, 1000},
    {"document", 4096, 16384, 200, 800, 300, 1500},
};

/* Uniform in [lo, hi] from *rng. */
static uint64_t uniform(uint64_t *rng, uint64_t lo, uint64_t hi)
{
    return lo + rb_mix64_next(rng) % (hi - lo + 1);
}

void rb_kv_draw_turn(enum rb_kv_user_kind k, uint64_t scale_den, unsigned turn, uint64_t *rng, struct rb_kv_turn *t)
{
    const struct rb_kv_user_profile *p = &rb_kv_profiles[k];
    uint64_t ctx = uniform(rng, p->ctx_min, p->ctx_max) / (scale_den ? scale_den : 1);
    t->tokens = (uint32_t)(ctx ? ctx : 1);
    t->generated = (uint32_t)uniform(rng, p->gen_min, p->gen_max);
    t->think_ns = uniform(rng, p->think_min_ms, p->think_max_ms) * UINT64_C(1000000);
    t->last = turn >= RB_KV_MAX_TURNS || rb_mix64_next(rng) % 1000 < RB_KV_END_PER_MILLE;
}
