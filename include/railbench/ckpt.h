/* Checkpoint sizing: what each rank of a data/tensor/pipeline-parallel LLM writes, MLPerf Storage / DLIO style. */
#ifndef RB_CKPT_H
#define RB_CKPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Every function here is pure (no state, no allocation) and thread-safe.
 *
 * The formula (DLIO's checkpointing, which MLPerf Storage runs; see
 * docs/checkpoint.md). A transformer of hidden size h, L layers, FFN size f,
 * vocabulary V, a heads of which k key/value heads (head size d = h / a,
 * K/V width kv = d x k) has
 *   P = 2 V h + L (2 h + h (h + 2 kv) + h^2 + 3 h f) + h
 * parameters: embedding and LM head, per layer two norms, Q/K/V, the
 * attention output and the gated MLP, and the final norm. Ranks are
 * tp x pp x dp; rank r has tp rank r % tp, pp rank (r / tp) % pp and dp
 * rank r / (tp pp). A checkpoint holds
 *  - the model, 2 bytes (fp16) per parameter: pipeline stage s holds its
 *    share of the layers (stage 0 also the embedding, the last stage the LM
 *    head and final norm); matrices are split over the tp ranks, norms are
 *    not; with ZeRO 3 every tensor is split over the dp ranks too and every
 *    rank writes its piece; below ZeRO 3 only dp rank 0 writes the model;
 *  - the optimizer state, 4 bytes (fp32) x 3 (master weights, Adam m and v)
 *    per parameter plus 3 x 5h for the per-group scalars: with ZeRO >= 1
 *    split over all ranks (every rank writes P / ranks); without ZeRO split
 *    over tp x pp and written by dp rank 0 only;
 *  - no gradients: neither DeepSpeed nor DLIO saves them (recomputed).
 * Integer divisions round down per tensor, as DLIO's do.
 */

#define RB_CKPT_MAX_SHARDS_PER_RANK 512u /* layer files of one pipeline stage: L / pp + 3 */
#define RB_CKPT_NAME_BYTES 96u
#define RB_CKPT_MODEL_BYTES_PER_PARAM 2u /* fp16 */
#define RB_CKPT_OPTIM_BYTES_PER_PARAM 12u /* fp32 master weights, Adam m and v */

/* A model and its parallelism. An architecture (hidden > 0) or a bare parameter count (params > 0, hidden 0). */
struct rb_ckpt_model {
    const char *name;              /* preset name, or "custom" */
    uint64_t hidden, layers, ffn, vocab, heads, kv_heads;
    uint64_t params;               /* with hidden 0: the parameter count (model one file per mp rank) */
    unsigned tp, pp, dp, zero;
};

/* A preset: the model as MLPerf Storage's rules list it, and the checkpoint size the rules print. */
struct rb_ckpt_preset {
    struct rb_ckpt_model model;
    uint64_t table_bytes;          /* the rules' "checkpoint size", in GiB as DLIO reports (1024^3) */
    const char *table_text;        /* as printed: "105 GB" */
};

/* The presets (llama3-8b, llama3-70b, llama3-405b, llama3-1t), n entries. */
const struct rb_ckpt_preset *rb_ckpt_presets(size_t *n);
/* The preset named name, or NULL. */
const struct rb_ckpt_preset *rb_ckpt_preset_find(const char *name);
/* "llama3-8b, llama3-70b, llama3-405b or llama3-1t", for messages. */
extern const char rb_ckpt_preset_list[];

/* The model's parameter count P (see above; m->params when there is no architecture). */
uint64_t rb_ckpt_params(const struct rb_ckpt_model *m);

/* Number of model ranks, tp x pp x dp. */
static inline uint64_t rb_ckpt_world(const struct rb_ckpt_model *m)
{
    return (uint64_t)m->tp * m->pp * m->dp;
}

/*
 * Checks m: parallelism at least 1 each, ZeRO 0 to 3, pp at most the
 * layers, heads dividing the hidden size, and (procs > 0) that the model's
 * ranks split evenly over procs processes. Returns 0, or -EINVAL with one
 * line in err naming the numbers.
 */
int rb_ckpt_check(const struct rb_ckpt_model *m, uint64_t procs, char *err, size_t errlen);

/* One file (or object) of a rank's checkpoint. */
struct rb_ckpt_shard {
    char name[RB_CKPT_NAME_BYTES]; /* "zero_pp_rank_0_mp_rank_00_model_states", "layer_03-model_01_model_states" */
    uint64_t bytes;
    bool optimizer;                /* optimizer state (else model) */
};

/*
 * The files model rank r (< world) writes, each of bytes / scale_den (scale
 * 1/N; 1 for full size), into out[0..max). Returns the number of shards
 * (0 when the rank writes nothing), or -E2BIG when max is too small.
 */
int rb_ckpt_rank_shards(const struct rb_ckpt_model *m, uint64_t r, uint64_t scale_den, struct rb_ckpt_shard *out,
                        size_t max);

/* Bytes rank r writes (sum of its shards) at scale 1/scale_den; *model and *optim (may be NULL) its two parts. */
uint64_t rb_ckpt_rank_bytes(const struct rb_ckpt_model *m, uint64_t r, uint64_t scale_den, uint64_t *model,
                            uint64_t *optim);

/* Bytes of the whole checkpoint (all ranks) at scale 1/scale_den; *model and *optim as above. */
uint64_t rb_ckpt_total_bytes(const struct rb_ckpt_model *m, uint64_t scale_den, uint64_t *model, uint64_t *optim);

#endif
