/* The MoE token router: Zipf-skewed, seeded top-k expert choice per token, and its even baseline. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/moe.h"
#include "railbench/perm.h"

int rb_moe_check(const struct rb_moe_cfg *c)
{
    if (c->ranks < 1 || c->experts < 1 || c->experts % c->ranks || c->top_k < 1 || c->top_k > c->experts ||
        !(c->skew >= 0 && c->skew <= 16))
        return -EINVAL;
    return 0;
}

/* Uniform in [0, 1): the keyed permutation of [0, 2^62) at index i, scaled. */
static double draw(const struct rb_perm *p, uint64_t i)
{
    return (double)rb_perm_at(p, i & ((1ull << 62) - 1)) / 4611686018427387904.0;
}

int rb_moe_route(const struct rb_moe_cfg *c, uint64_t step, uint64_t *tokens_to, uint64_t *expert_load)
{
    if (rb_moe_check(c))
        return -EINVAL;
    const int E = c->experts, per = c->experts / c->ranks, K = c->top_k;
    double *cdf = malloc(sizeof(double) * (size_t)E);
    char *taken = calloc((size_t)E, 1);
    struct rb_perm p;
    if (!cdf || !taken || rb_perm_init(&p, 1ull << 62, c->seed) != 0) {
        free(cdf);
        free(taken);
        return -ENOMEM;
    }
    double sum = 0;
    for (int e = 0; e < E; e++)
        cdf[e] = sum += pow(e + 1.0, -c->skew);
    memset(tokens_to, 0, sizeof(uint64_t) * (size_t)c->ranks * (size_t)c->ranks);
    if (expert_load)
        memset(expert_load, 0, sizeof(uint64_t) * (size_t)E);
    /* 64 draws per token: K distinct experts by redrawing repeats; past 64, the next free expert. */
    for (int r = 0; r < c->ranks; r++)
        for (uint64_t t = 0; t < c->tokens; t++) {
            uint64_t base = ((step * (uint64_t)c->ranks + (uint64_t)r) * c->tokens + t) * 64;
            int chosen[K], nchosen = 0;
            for (uint64_t d = 0; nchosen < K; d++) {
                int e;
                if (d < 64) {
                    double u = draw(&p, base + d) * sum;
                    int lo = 0, hi = E - 1;
                    while (lo < hi) { /* the first expert whose cumulative weight exceeds u */
                        int mid = (lo + hi) / 2;
                        if (cdf[mid] > u)
                            hi = mid;
                        else
                            lo = mid + 1;
                    }
                    e = lo;
                } else {
                    for (e = 0; taken[e]; e++)
                        ;
                }
                if (taken[e])
                    continue;
                taken[e] = 1;
                chosen[nchosen++] = e;
            }
            for (int k = 0; k < K; k++) {
                taken[chosen[k]] = 0;
                tokens_to[(size_t)r * c->ranks + (size_t)(chosen[k] / per)]++;
                if (expert_load)
                    expert_load[chosen[k]]++;
            }
        }
    free(cdf);
    free(taken);
    return 0;
}

int rb_moe_route_balanced(const struct rb_moe_cfg *c, uint64_t *tokens_to, uint64_t *expert_load)
{
    if (rb_moe_check(c))
        return -EINVAL;
    const int E = c->experts, per = c->experts / c->ranks, K = c->top_k;
    memset(tokens_to, 0, sizeof(uint64_t) * (size_t)c->ranks * (size_t)c->ranks);
    if (expert_load)
        memset(expert_load, 0, sizeof(uint64_t) * (size_t)E);
    for (int r = 0; r < c->ranks; r++)
        for (uint64_t t = 0; t < c->tokens; t++)
            for (int k = 0; k < K; k++) {
                int e = (int)((((uint64_t)r * c->tokens + t) * (uint64_t)K + (uint64_t)k) % (uint64_t)E);
                tokens_to[(size_t)r * c->ranks + (size_t)(e / per)]++;
                if (expert_load)
                    expert_load[e]++;
            }
    return 0;
}

double rb_moe_imbalance(const uint64_t *load, int n)
{
    uint64_t mx = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        mx = load[i] > mx ? load[i] : mx;
        sum += (double)load[i];
    }
    return sum > 0 ? (double)mx / (sum / n) : 1.0;
}
