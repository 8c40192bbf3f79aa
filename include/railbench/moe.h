/* A mixture-of-experts token router, seeded and shared by railbench coll moe (measured) and fabric sim (predicted). */
#ifndef RB_MOE_H
#define RB_MOE_H

#include <stdint.h>

/* One MoE layer's routing: ranks hold experts / ranks experts each, expert e on rank e / (experts / ranks). */
struct rb_moe_cfg {
    int ranks;
    uint64_t tokens; /* per rank and step */
    int experts;     /* a multiple of ranks */
    int top_k;       /* distinct experts per token, 1 .. experts */
    double skew;     /* 0: every expert equally likely; s > 0: Zipf, expert e drawn with weight 1 / (e + 1)^s */
    uint64_t seed;
};

/* 0, or -EINVAL (with nothing written) when c does not make a layer: ranks, experts, top_k or skew out of range. */
int rb_moe_check(const struct rb_moe_cfg *c);

/*
 * Routes every rank's tokens of one step: each token draws top_k distinct
 * experts (from a keyed permutation of (seed, step, rank, token, draw), so
 * every rank computes the same routing for every rank), and
 * tokens_to[src x ranks + dst] counts the token copies rank src sends to
 * rank dst; expert_load[e] (may be NULL) the tokens expert e receives.
 * Returns 0, -EINVAL for a bad c, -ENOMEM. Pure apart from the outputs.
 */
int rb_moe_route(const struct rb_moe_cfg *c, uint64_t step, uint64_t *tokens_to, uint64_t *expert_load);

/*
 * The same volume routed evenly: token t of rank r takes experts
 * (r x tokens + t) x top_k + k mod experts, so every expert rank receives
 * the same number of token copies (when ranks x tokens x top_k divides by
 * experts). The baseline against which imbalance costs time.
 */
int rb_moe_route_balanced(const struct rb_moe_cfg *c, uint64_t *tokens_to, uint64_t *expert_load);

/* max / mean of the n loads (1 when all are equal or all zero). */
double rb_moe_imbalance(const uint64_t *load, int n);

#endif
