/* A seeded bijection on [0, n): the i-th element of a permutation computed per index, in O(1) memory. */
#ifndef RB_PERM_H
#define RB_PERM_H

#include <stdint.h>

#define RB_PERM_ROUNDS 6

/*
 * A keyed permutation of [0, n): a balanced Feistel network on the smallest
 * even number of bits whose domain holds n (at most 4n values), walked until
 * the value falls inside [0, n) (cycle walking keeps it a bijection). The
 * same (n, seed) gives the same permutation on every host. Immutable after
 * rb_perm_init, so any number of threads may call rb_perm_at at once.
 */
struct rb_perm {
    uint64_t n;
    unsigned half_bits;               /* bits of each Feistel half */
    uint64_t half_mask;
    uint64_t keys[RB_PERM_ROUNDS];
};

/* Sets p up for [0, n) and seed. Returns 0, or -EINVAL when n is 0 or above 2^62. */
int rb_perm_init(struct rb_perm *p, uint64_t n, uint64_t seed);

/* The element at position i (i < p->n) of the permutation: a value in [0, n), distinct for distinct i. */
uint64_t rb_perm_at(const struct rb_perm *p, uint64_t i);

#endif
