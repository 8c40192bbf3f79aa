/* Checkpoint sizing: the presets and the per-rank files of DLIO's checkpoint formula (see include/railbench/ckpt.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "railbench/ckpt.h"

/*
 * MLPerf Storage v2.0 submission guidelines, table 2 (mlcommons/storage Submission_guidelines.md): hidden size,
 * layers, FFN size, vocabulary, heads, K/V heads, TP x PP x DP, ZeRO, and the printed checkpoint size. The sizes
 * are GiB as DLIO logs them (bytes / 1024^3). llama3-1t prints 18 TB, but mlpstorage's own config.py
 * (LLM_SIZE_BY_RANK, "these need to be updated") adds a model 2,571 GB to an "optimizer" 15,426 GB that is already
 * the whole checkpoint by DLIO's formula; table_bytes keeps the formula's 15,426 GiB and the text says so.
 */
#define GIB (UINT64_C(1) << 30)
static const struct rb_ckpt_preset presets[] = {
    {{"llama3-8b", 4096, 32, 14336, 128256, 32, 8, 0, 1, 1, 8, 3}, 105 * GIB, "105 GB"},
    {{"llama3-70b", 8192, 80, 28672, 128256, 128, 8, 0, 8, 1, 8, 3}, 912 * GIB, "912 GB"},
    {{"llama3-405b", 16384, 126, 53248, 128256, 128, 8, 0, 8, 32, 2, 1}, 5290 * GIB, "5.29 TB"},
    {{"llama3-1t", 25872, 128, 98304, 128256, 192, 32, 0, 8, 64, 2, 1}, 15426 * GIB,
     "18 TB (15,426 GB model + optimizer; see docs/checkpoint.md)"},
};

const char rb_ckpt_preset_list[] = "llama3-8b, llama3-70b, llama3-405b or llama3-1t";

const struct rb_ckpt_preset *rb_ckpt_presets(size_t *n)
{
    *n = sizeof presets / sizeof presets[0];
    return presets;
}

const struct rb_ckpt_preset *rb_ckpt_preset_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(presets[i].model.name, name) == 0)
            return &presets[i];
    return NULL;
}

/* K/V width: head size (h / heads, rounded down as DLIO does: llama3-1t has 25872 / 192) times the K/V heads; h when the heads are not given (plain attention). */
static uint64_t kv_width(const struct rb_ckpt_model *m)
{
    if (!m->heads)
        return m->hidden;
    return m->hidden / m->heads * (m->kv_heads ? m->kv_heads : m->heads);
}

uint64_t rb_ckpt_params(const struct rb_ckpt_model *m)
{
    if (!m->hidden)
        return m->params;
    uint64_t h = m->hidden, f = m->ffn, kv = kv_width(m);
    uint64_t layer = 2 * h + h * (h + 2 * kv) + h * h + 3 * h * f;
    return 2 * m->vocab * h + m->layers * layer + h;
}

int rb_ckpt_check(const struct rb_ckpt_model *m, uint64_t procs, char *err, size_t errlen)
{
    if (!m->tp || !m->pp || !m->dp) {
        snprintf(err, errlen, "--tp %u --pp %u --dp %u: each must be at least 1", m->tp, m->pp, m->dp);
        return -EINVAL;
    }
    if (m->zero > 3) {
        snprintf(err, errlen, "--zero %u: expected a ZeRO stage 0, 1, 2 or 3", m->zero);
        return -EINVAL;
    }
    if (!m->hidden && !m->params) {
        snprintf(err, errlen, "no model: give --model %s or --params N", rb_ckpt_preset_list);
        return -EINVAL;
    }
    if (m->hidden && m->layers < m->pp) {
        snprintf(err, errlen, "--pp %u: more pipeline stages than the model's %" PRIu64 " layers", m->pp, m->layers);
        return -EINVAL;
    }
    if (m->hidden && m->heads && m->kv_heads > m->heads) {
        snprintf(err, errlen, "--kv-heads %" PRIu64 ": more than the %" PRIu64 " heads", m->kv_heads, m->heads);
        return -EINVAL;
    }
    if (m->hidden && m->zero < 3 && m->pp > 1 && m->layers / m->pp + 4 > RB_CKPT_MAX_SHARDS_PER_RANK) {
        snprintf(err, errlen, "--pp %u: %" PRIu64 " layers per stage is more files than a rank may write (%u)", m->pp,
                 m->layers / m->pp + 3, RB_CKPT_MAX_SHARDS_PER_RANK);
        return -EINVAL;
    }
    uint64_t w = rb_ckpt_world(m);
    if (procs && w % procs) {
        snprintf(err, errlen,
                 "%s: its %" PRIu64 " ranks (TP %u x PP %u x DP %u) do not divide over %" PRIu64
                 " processes; run a number of processes that divides %" PRIu64,
                 m->name ? m->name : "model", w, m->tp, m->pp, m->dp, procs, w);
        return -EINVAL;
    }
    return 0;
}

/* Element counts of layer i's tensors (0: embedding, 1..L transformer layers, L+1: LM head, L+2: final norm). */
static size_t layer_tensors(const struct rb_ckpt_model *m, uint64_t i, uint64_t out[6])
{
    uint64_t h = m->hidden, f = m->ffn, L = m->layers, tp = m->tp, sf = m->zero == 3 ? m->dp : 1;
    if (i == 0 || i == L + 1) {
        out[0] = h * m->vocab / tp / sf;
        return 1;
    }
    if (i == L + 2) {
        out[0] = h / sf;
        return 1;
    }
    uint64_t kv = kv_width(m);
    out[0] = h / sf;                        /* input norm (not split over tp) */
    out[1] = h * (h + 2 * kv) / tp / sf;    /* Q, K, V */
    out[2] = h * h / tp / sf;               /* attention output */
    out[3] = h / sf;                        /* post-attention norm */
    out[4] = 2 * h * f / tp / sf;           /* gated MLP up (two matrices) */
    out[5] = h * f / tp / sf;               /* MLP down */
    return 6;
}

static uint64_t layer_bytes(const struct rb_ckpt_model *m, uint64_t i)
{
    uint64_t t[6], b = 0;
    size_t n = layer_tensors(m, i, t);
    for (size_t k = 0; k < n; k++)
        b += t[k] * RB_CKPT_MODEL_BYTES_PER_PARAM;
    return b;
}

/* The layers [*first, *last] of pipeline stage s: transformer layers split as evenly as they go, the first ones
 * one longer; stage 0 also holds the embedding (layer 0), the last stage the LM head and final norm. */
static void stage_layers(const struct rb_ckpt_model *m, uint64_t s, uint64_t *first, uint64_t *last)
{
    uint64_t per = m->layers / m->pp, rem = m->layers % m->pp;
    if (s < rem) {
        *first = s * (per + 1) + 1;
        *last = *first + per;
    } else {
        *first = rem * (per + 1) + (s - rem) * per + 1;
        *last = *first + per - 1;
    }
    if (s == m->pp - 1)
        *last = m->layers + 2;
    if (s == 0)
        *first = 0;
}

static int add(struct rb_ckpt_shard *out, size_t max, size_t *n, uint64_t bytes, bool optim, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Appends one shard named by fmt to out; -E2BIG when out is full. */
static int add(struct rb_ckpt_shard *out, size_t max, size_t *n, uint64_t bytes, bool optim, const char *fmt, ...)
{
    if (*n >= max)
        return -E2BIG;
    struct rb_ckpt_shard *s = &out[(*n)++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->name, sizeof s->name, fmt, ap);
    va_end(ap);
    s->bytes = bytes;
    s->optimizer = optim;
    return 0;
}

int rb_ckpt_rank_shards(const struct rb_ckpt_model *m, uint64_t r, uint64_t scale_den, struct rb_ckpt_shard *out,
                        size_t max)
{
    uint64_t mp_size = (uint64_t)m->tp * m->pp, world = rb_ckpt_world(m);
    uint64_t stage = (r / m->tp) % m->pp, dpr = r / mp_size, mpr = r % mp_size, den = scale_den ? scale_den : 1;
    size_t n = 0;
    int rc = 0;
    bool writes_model = m->zero == 3 || dpr == 0;
    if (writes_model && !m->hidden) {
        uint64_t b = rb_ckpt_params(m) / mp_size / (m->zero == 3 ? m->dp : 1) * RB_CKPT_MODEL_BYTES_PER_PARAM;
        if (m->zero == 3)
            rc = add(out, max, &n, b / den, false, "zero_pp_rank_%" PRIu64 "_mp_rank_%02" PRIu64 "_model_states",
                     dpr, mpr);
        else
            rc = add(out, max, &n, b / den, false, "model_%02" PRIu64 "_model_states", mpr);
    } else if (writes_model) {
        uint64_t first, last, b = 0;
        stage_layers(m, stage, &first, &last);
        if (m->zero == 3 || m->pp == 1) {
            for (uint64_t i = first; i <= last; i++)
                b += layer_bytes(m, i);
            if (m->zero == 3)
                rc = add(out, max, &n, b / den, false,
                         "zero_pp_rank_%" PRIu64 "_mp_rank_%02" PRIu64 "_model_states", dpr, mpr);
            else
                rc = add(out, max, &n, b / den, false, "model_%02" PRIu64 "_model_states", mpr);
        } else {
            for (uint64_t i = first; i <= last && !rc; i++)
                rc = add(out, max, &n, layer_bytes(m, i) / den, false,
                         "layer_%02" PRIu64 "-model_%02" PRIu64 "_model_states", i, mpr);
        }
    }
    if (rc)
        return rc;
    if (m->zero > 0 || dpr == 0) {
        uint64_t np = rb_ckpt_params(m) / (m->zero > 0 ? world : mp_size);
        uint64_t b = 4 * 3 * (np + 5 * m->hidden);
        rc = add(out, max, &n, b / den, true, "zero_pp_rank_%" PRIu64 "_mp_rank_%02" PRIu64 "_optim_states", dpr, mpr);
    }
    return rc ? rc : (int)n;
}

uint64_t rb_ckpt_rank_bytes(const struct rb_ckpt_model *m, uint64_t r, uint64_t scale_den, uint64_t *model,
                            uint64_t *optim)
{
    struct rb_ckpt_shard s[RB_CKPT_MAX_SHARDS_PER_RANK];
    int n = rb_ckpt_rank_shards(m, r, scale_den, s, RB_CKPT_MAX_SHARDS_PER_RANK);
    uint64_t mb = 0, ob = 0;
    for (int i = 0; i < n; i++)
        *(s[i].optimizer ? &ob : &mb) += s[i].bytes;
    if (model)
        *model = mb;
    if (optim)
        *optim = ob;
    return mb + ob;
}

uint64_t rb_ckpt_total_bytes(const struct rb_ckpt_model *m, uint64_t scale_den, uint64_t *model, uint64_t *optim)
{
    uint64_t mb = 0, ob = 0, w = rb_ckpt_world(m);
    for (uint64_t r = 0; r < w; r++) {
        uint64_t a, b;
        rb_ckpt_rank_bytes(m, r, scale_den, &a, &b);
        mb += a;
        ob += b;
    }
    if (model)
        *model = mb;
    if (optim)
        *optim = ob;
    return mb + ob;
}
