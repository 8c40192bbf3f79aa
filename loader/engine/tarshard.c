/* Tar shards: seeded ustar archives of fixed-size members, made at any offset (WebDataset-style data sets). */
#include <stdio.h>
#include <string.h>

#include "payload_int.h"
#include "tarshard_int.h"

#define BLOCK 512u

static uint64_t padded(uint64_t n)
{
    return (n + BLOCK - 1) / BLOCK * BLOCK;
}

uint64_t rb_tar_shard_bytes(uint64_t members, uint64_t member_bytes)
{
    return members * (BLOCK + padded(member_bytes)) + 2 * BLOCK;
}

/* Member i's header (POSIX ustar: name, mode, uid, gid, size, mtime, checksum, typeflag, magic "ustar\0" "00"). */
static void header(uint64_t key, uint64_t i, uint64_t member_bytes, unsigned char h[BLOCK])
{
    memset(h, 0, BLOCK);
    snprintf((char *)h, 100, "%016llx_%06llu.bin", (unsigned long long)key, (unsigned long long)i);
    memcpy(h + 100, "0000644", 8);
    memcpy(h + 108, "0000000", 8);
    memcpy(h + 116, "0000000", 8);
    snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)member_bytes);
    memcpy(h + 136, "00000000000", 12);
    h[156] = '0';
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    memcpy(h + 265, "railbench", 10);
    memcpy(h + 297, "railbench", 10);
    /* The checksum: the sum of the header's bytes with its own field taken as eight spaces. */
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned k = 0; k < BLOCK; k++)
        sum += h[k];
    snprintf((char *)h + 148, 7, "%06o", sum);
    h[154] = '\0';
    h[155] = ' ';
}

void rb_tar_fill(uint64_t key, uint64_t members, uint64_t member_bytes, uint64_t offset, void *buf, size_t len)
{
    unsigned char *out = buf, h[BLOCK];
    uint64_t entry = BLOCK + padded(member_bytes), body = members * entry;
    while (len) {
        size_t n;
        if (offset >= body) { /* the end blocks (and nothing past them is asked for) */
            n = len;
            memset(out, 0, n);
        } else {
            uint64_t i = offset / entry, at = offset % entry;
            if (at < BLOCK) {
                header(key, i, member_bytes, h);
                n = (size_t)(BLOCK - at) < len ? (size_t)(BLOCK - at) : len;
                memcpy(out, h + at, n);
            } else if (at - BLOCK < member_bytes) {
                uint64_t left = member_bytes - (at - BLOCK);
                n = left < len ? (size_t)left : len;
                rb_payload_plain_fill(key, i * member_bytes + (at - BLOCK), out, n);
            } else {
                uint64_t left = entry - at;
                n = left < len ? (size_t)left : len;
                memset(out, 0, n);
            }
        }
        out += n;
        offset += n;
        len -= n;
    }
}

size_t rb_tar_verify(uint64_t key, uint64_t members, uint64_t member_bytes, uint64_t offset, const void *buf,
                     size_t len)
{
    const unsigned char *in = buf;
    unsigned char want[4096];
    size_t done = 0;
    while (done < len) {
        size_t n = len - done < sizeof want ? len - done : sizeof want;
        rb_tar_fill(key, members, member_bytes, offset + done, want, n);
        if (memcmp(in + done, want, n))
            for (size_t k = 0; k < n; k++)
                if (in[done + k] != want[k])
                    return done + k;
        done += n;
    }
    return len;
}
