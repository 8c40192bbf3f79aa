/* Seeded payload: every byte is a pure function of (seed, object name, offset), so GET --verify needs no stored copy. */
#include <string.h>

#include "payload_int.h"
#include "railbench/mix.h"
#include "tarshard_int.h"

/* The layout of every payload in this process (rb_payload_set_tar): plain when members is 0. */
static struct {
    uint64_t members, member_bytes;
} layout;

/* Word i of a payload: counter-based, so any offset is reachable without generating what precedes it. */
static inline uint64_t word_at(uint64_t key, uint64_t i)
{
    return rb_mix64(key + i * RB_MIX_GOLDEN);
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

/* Little-endian bytes of a word, so the byte at offset o is byte o % 8 of word o / 8 on any host. */
static inline void put_le(unsigned char *p, uint64_t w)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(w >> (8 * i));
}

void rb_payload_plain_fill(uint64_t key, uint64_t offset, void *buf, size_t len)
{
    unsigned char *out = buf, tmp[8];
    uint64_t i = offset / 8;
    size_t skip = (size_t)(offset % 8), done = 0;
    if (skip && len) {
        put_le(tmp, word_at(key, i++));
        size_t n = 8 - skip < len ? 8 - skip : len;
        memcpy(out, tmp + skip, n);
        done = n;
    }
    for (; len - done >= 8; done += 8)
        put_le(out + done, word_at(key, i++));
    if (done < len) {
        put_le(tmp, word_at(key, i));
        memcpy(out + done, tmp, len - done);
    }
}

static size_t plain_verify(uint64_t key, uint64_t offset, const void *buf, size_t len)
{
    const unsigned char *in = buf;
    unsigned char tmp[8];
    uint64_t i = offset / 8;
    size_t skip = (size_t)(offset % 8), done = 0;
    while (done < len) {
        put_le(tmp, word_at(key, i++));
        size_t n = 8 - skip < len - done ? 8 - skip : len - done;
        if (memcmp(in + done, tmp + skip, n) != 0) {
            for (size_t k = 0; k < n; k++)
                if (in[done + k] != tmp[skip + k])
                    return done + k;
        }
        done += n;
        skip = 0;
    }
    return len;
}

void rb_payload_set_tar(uint64_t members, uint64_t member_bytes)
{
    layout.members = members;
    layout.member_bytes = member_bytes;
}

void rb_payload_fill(uint64_t key, uint64_t offset, void *buf, size_t len)
{
    if (layout.members)
        rb_tar_fill(key, layout.members, layout.member_bytes, offset, buf, len);
    else
        rb_payload_plain_fill(key, offset, buf, len);
}

size_t rb_payload_verify(uint64_t key, uint64_t offset, const void *buf, size_t len)
{
    if (layout.members)
        return rb_tar_verify(key, layout.members, layout.member_bytes, offset, buf, len);
    return plain_verify(key, offset, buf, len);
}

uint64_t rb_payload_size(uint64_t seed, const char *name, uint64_t min_bytes, uint64_t max_bytes)
{
    if (max_bytes <= min_bytes)
        return min_bytes;
    uint64_t span = max_bytes - min_bytes + 1;
    uint64_t r = rb_mix64(rb_payload_key(seed, name) ^ 0x5153495a45ull); /* "SIZE": independent of the bytes */
    return span ? min_bytes + r % span : r;
}
