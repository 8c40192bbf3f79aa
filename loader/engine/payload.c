/* Seeded payload: every byte is a pure function of (seed, object name, offset), so GET --verify needs no stored copy. */
#include <string.h>

#include "payload_int.h"
#include "railbench/mix.h"

/*
 * The plain layout, in blocks of 4 KiB: byte o of an object is byte o mod 4096 of one fixed random pattern, XORed
 * with byte o mod 8 of the block's word rb_mix64(key + (o / 4096) * golden) (both little-endian). One mix per block
 * and one XOR per 8 bytes, so a payload is made about as fast as it is copied; yet no two blocks are alike (the block
 * word is a function of key and block number), so a byte changed, a block of another object or of another offset,
 * or a block shifted by any number of bytes all differ from what --verify expects.
 */
#define BLOCK_BYTES 4096u
#define BLOCK_WORDS (BLOCK_BYTES / 8)

/* The same bytes on any host: a word's memory holds it little-endian. */
static inline uint64_t le64(uint64_t w)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(w);
#else
    return w;
#endif
}

/* The pattern (SplitMix64's stream from a fixed state, "PATTERN"), little-endian; made before main, read-only after. */
static uint64_t pattern[BLOCK_WORDS];

__attribute__((constructor)) static void make_pattern(void)
{
    uint64_t state = 0x5041545445524eull;
    for (unsigned j = 0; j < BLOCK_WORDS; j++)
        pattern[j] = le64(rb_mix64_next(&state));
}

/* The word of block b of the object of key, as it lies in memory. */
static inline uint64_t block_word(uint64_t key, uint64_t b)
{
    return le64(rb_mix64(key + b * RB_MIX_GOLDEN));
}

/* Word i of a payload (bytes 8i to 8i + 7), as it lies in memory: any offset is reachable without what precedes it. */
static inline uint64_t word_at(uint64_t key, uint64_t i)
{
    return pattern[i % BLOCK_WORDS] ^ block_word(key, i / BLOCK_WORDS);
}

uint64_t rb_payload_plain_word_mask(uint64_t key, uint64_t block)
{
    return block_word(key, block);
}

uint64_t rb_payload_key(uint64_t seed, const char *name)
{
    /* FNV-1a over the name, then mixed with the seed. */
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return rb_mix64(h ^ rb_mix64(seed + RB_MIX_GOLDEN));
}

/* Two words as one 16-byte vector (SSE2 on x86-64; GCC and clang lower it elsewhere): the XOR below, twice as wide. */
typedef uint64_t word2 __attribute__((vector_size(16)));

/* n words of the pattern from word j on, XORed with m, into out (any alignment). */
static void xor_pattern(unsigned char *out, size_t j, size_t n, uint64_t m)
{
    const word2 m2 = {m, m};
    size_t k = 0;
    for (; k + 2 <= n; k += 2) {
        word2 w;
        memcpy(&w, pattern + j + k, sizeof w);
        w ^= m2;
        memcpy(out + 8 * k, &w, sizeof w);
    }
    if (k < n) {
        uint64_t w = pattern[j + k] ^ m;
        memcpy(out + 8 * k, &w, 8);
    }
}

void rb_payload_plain_fill(uint64_t key, uint64_t offset, void *buf, size_t len)
{
    unsigned char *out = buf;
    uint64_t i = offset / 8, w;
    size_t skip = (size_t)(offset % 8), done = 0;
    if (skip && len) {
        w = word_at(key, i++);
        done = 8 - skip < len ? 8 - skip : len;
        memcpy(out, (unsigned char *)&w + skip, done);
    }
    while (len - done >= 8) {
        /* The whole words of one block: its word once, then the pattern XORed with it. */
        uint64_t m = block_word(key, i / BLOCK_WORDS);
        size_t j = (size_t)(i % BLOCK_WORDS), n = BLOCK_WORDS - j;
        if (n > (len - done) / 8)
            n = (len - done) / 8;
        xor_pattern(out + done, j, n, m);
        done += 8 * n;
        i += n;
    }
    if (done < len) {
        w = word_at(key, i);
        memcpy(out + done, &w, len - done);
    }
}

/* Compares with the payload made a chunk at a time; the index of the first differing byte, or len. */
static size_t verify_with(void (*fill)(const void *ctx, uint64_t key, uint64_t offset, void *buf, size_t len),
                          const void *ctx, uint64_t key, uint64_t offset, const void *buf, size_t len)
{
    const unsigned char *in = buf;
    unsigned char want[BLOCK_BYTES];
    for (size_t done = 0; done < len;) {
        size_t n = len - done < sizeof want ? len - done : sizeof want;
        fill(ctx, key, offset + done, want, n);
        if (memcmp(in + done, want, n) != 0)
            for (size_t k = 0; k < n; k++)
                if (in[done + k] != want[k])
                    return done + k;
        done += n;
    }
    return len;
}

/* rb_payload_plain_fill behind the layout's signature. */
static void plain_fill(const void *ctx, uint64_t key, uint64_t offset, void *buf, size_t len)
{
    (void)ctx;
    rb_payload_plain_fill(key, offset, buf, len);
}

void rb_payload_fill(const struct rb_payload_layout *l, uint64_t key, uint64_t offset, void *buf, size_t len)
{
    if (l && l->fill)
        l->fill(l->ctx, key, offset, buf, len);
    else
        rb_payload_plain_fill(key, offset, buf, len);
}

size_t rb_payload_verify(const struct rb_payload_layout *l, uint64_t key, uint64_t offset, const void *buf, size_t len)
{
    if (l && l->fill)
        return verify_with(l->fill, l->ctx, key, offset, buf, len);
    return verify_with(plain_fill, NULL, key, offset, buf, len);
}

uint64_t rb_payload_size(uint64_t seed, const char *name, uint64_t min_bytes, uint64_t max_bytes)
{
    if (max_bytes <= min_bytes)
        return min_bytes;
    uint64_t span = max_bytes - min_bytes + 1;
    uint64_t r = rb_mix64(rb_payload_key(seed, name) ^ 0x5153495a45ull); /* "SIZE": independent of the bytes */
    return span ? min_bytes + r % span : r;
}
