/* A seeded bijection on [0, n): Feistel network with cycle walking, O(1) memory and per-index. */
#include "railbench/perm.h"

#include <errno.h>

#include "railbench/mix.h"

/* SplitMix64: the key's state advanced once, mixed. */
static uint64_t mix64(uint64_t x)
{
    return rb_mix64_next(&x);
}

int rb_perm_init(struct rb_perm *p, uint64_t n, uint64_t seed)
{
    if (n == 0 || n > (1ull << 62))
        return -EINVAL;
    unsigned bits = 2; /* the domain 2^bits >= n, bits even and at least 2 */
    while (bits < 64 && (1ull << bits) < n)
        bits += 2;
    p->n = n;
    p->half_bits = bits / 2;
    p->half_mask = (1ull << p->half_bits) - 1;
    uint64_t k = seed;
    for (int r = 0; r < RB_PERM_ROUNDS; r++) {
        k = mix64(k + (uint64_t)r);
        p->keys[r] = k;
    }
    return 0;
}

/* One pass of the Feistel network over the 2*half_bits domain: a bijection of that domain. */
static uint64_t feistel(const struct rb_perm *p, uint64_t x)
{
    uint64_t l = x >> p->half_bits, r = x & p->half_mask;
    for (int i = 0; i < RB_PERM_ROUNDS; i++) {
        uint64_t f = mix64(r ^ p->keys[i]) & p->half_mask;
        uint64_t t = l ^ f;
        l = r;
        r = t;
    }
    return (l << p->half_bits) | r;
}

uint64_t rb_perm_at(const struct rb_perm *p, uint64_t i)
{
    /* Cycle walking: values outside [0, n) are fed back in; the domain is under 4n, so few passes. */
    uint64_t x = feistel(p, i);
    while (x >= p->n)
        x = feistel(p, x);
    return x;
}
