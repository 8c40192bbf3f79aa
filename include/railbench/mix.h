/* The one seeded mixer: SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014). */
#ifndef RB_MIX_H
#define RB_MIX_H

#include <stdint.h>

/* SplitMix64's gamma, 2^64 / the golden ratio: the step between states, and a constant to spread keys by. */
#define RB_MIX_GOLDEN 0x9e3779b97f4a7c15ull

/*
 * SplitMix64's finaliser: a 64-bit bijection with full avalanche, so nearby
 * keys give unrelated values. Inline: payloads call it once per 4 KiB block.
 * Pure; thread-safe.
 */
static inline uint64_t rb_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* SplitMix64's generator: advances *state by RB_MIX_GOLDEN and returns the mix of the new state. */
static inline uint64_t rb_mix64_next(uint64_t *state)
{
    return rb_mix64(*state += RB_MIX_GOLDEN);
}

#endif
