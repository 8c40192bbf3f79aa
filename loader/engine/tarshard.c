/* Tar shards: seeded ustar archives of fixed-size members, made at any offset (WebDataset-style data sets). */
#include <errno.h>
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

/* An octal field of a header (leading spaces, NUL or space terminated); -1 when it holds anything else. */
static long long octal(const unsigned char *p, size_t n)
{
    size_t k = 0;
    while (k < n && p[k] == ' ')
        k++;
    long long v = 0;
    size_t digits = 0;
    for (; k < n && p[k] >= '0' && p[k] <= '7' && v < (1ll << 50); k++, digits++)
        v = v * 8 + (p[k] - '0');
    if (!digits || (k < n && p[k] != ' ' && p[k] != '\0'))
        return -1;
    return v;
}

int rb_tar_header(const unsigned char h[512], uint64_t *size, bool *regular)
{
    unsigned sum = 0;
    bool zero = true;
    for (unsigned k = 0; k < BLOCK; k++) {
        sum += (k >= 148 && k < 156) ? ' ' : h[k];
        zero = zero && !h[k];
    }
    if (zero)
        return 1;
    long long stated = octal(h + 148, 8), v = 0;
    if (h[124] & 0x80) { /* GNU's base-256 size, for members of 8 GiB and more */
        for (unsigned k = 125; k < 136 && v < (1ll << 50); k++)
            v = v * 256 + h[k];
        if (v >= (1ll << 50))
            v = -1;
    } else {
        v = octal(h + 124, 12);
    }
    if (stated < 0 || (unsigned)stated != sum || v < 0)
        return -EINVAL;
    *size = (uint64_t)v;
    /* Regular files are the samples; directories, links, pax and GNU long-name records only take space. */
    *regular = h[156] == '0' || h[156] == '\0';
    return 0;
}

uint64_t rb_tar_entry_bytes(uint64_t size)
{
    return BLOCK + padded(size);
}

void rb_tar_stream_start(struct rb_tar_stream *s, uint64_t now_ns)
{
    memset(s, 0, sizeof *s);
    s->last_ns = now_ns;
}

/* A member's last data byte came at now_ns: one sample, its latency from the previous one's end. */
static void sample_done(struct rb_tar_stream *s, uint64_t now_ns, struct rb_stats *samples)
{
    s->members++;
    s->member_bytes += s->size;
    if (samples) {
        samples->ops++;
        samples->bytes += s->size;
        rb_hist_record(&samples->lat, now_ns > s->last_ns ? now_ns - s->last_ns : 0);
    }
    s->last_ns = now_ns;
}

/* A whole header gathered: the next member, the end of the archive, or not tar. */
static int stream_header(struct rb_tar_stream *s, uint64_t now_ns, struct rb_stats *samples)
{
    s->have = 0;
    int rc = rb_tar_header(s->head, &s->size, &s->regular);
    if (rc < 0) {
        s->why = "a header's checksum or size field does not hold: not a tar archive, or a corrupt header";
        return -EBADMSG;
    }
    if (rc == 1) {
        s->ended = true;
        return 0;
    }
    s->data_left = s->size;
    s->pad_left = padded(s->size) - s->size;
    if (!s->data_left && s->regular)
        sample_done(s, now_ns, samples);
    return 0;
}

int rb_tar_stream_feed(struct rb_tar_stream *s, const void *buf, size_t len, uint64_t now_ns,
                       struct rb_stats *samples)
{
    const unsigned char *p = buf;
    while (len && !s->why) {
        size_t n;
        if (s->ended) { /* the end blocks and what pads the archive to its record size: zeros */
            for (n = 0; n < len; n++)
                if (p[n]) {
                    s->why = "bytes that are not zero after the archive's end block";
                    s->bad_at = s->pos + n;
                    return -EBADMSG;
                }
        } else if (s->data_left || s->pad_left) {
            uint64_t left = s->data_left ? s->data_left : s->pad_left;
            n = left < len ? (size_t)left : len;
            if (s->data_left) {
                s->data_left -= n;
                if (!s->data_left && s->regular)
                    sample_done(s, now_ns, samples);
            } else {
                s->pad_left -= n;
            }
        } else {
            n = BLOCK - s->have < len ? BLOCK - s->have : len;
            memcpy(s->head + s->have, p, n);
            s->have += (unsigned)n;
            if (s->have == BLOCK && stream_header(s, now_ns, samples) < 0) {
                s->bad_at = s->pos + n - BLOCK; /* the header's first byte */
                return -EBADMSG;
            }
        }
        p += n;
        len -= n;
        s->pos += n;
    }
    return s->why ? -EBADMSG : 0;
}

int rb_tar_stream_end(struct rb_tar_stream *s)
{
    if (s->why)
        return -EBADMSG;
    /* GNU tar accepts an archive that ends at a header's boundary without its zero blocks; nothing shorter. */
    if (s->ended || (!s->data_left && !s->pad_left && !s->have && s->pos))
        return 0;
    s->bad_at = s->pos;
    s->why = s->pos ? "the body ends inside a member or header: a truncated shard" : "an empty body: not a tar archive";
    return -EBADMSG;
}

void rb_tar_layout_fill(const void *ctx, uint64_t key, uint64_t offset, void *buf, size_t len)
{
    const struct rb_tar_layout *l = ctx;
    rb_tar_fill(key, l->members, l->member_bytes, offset, buf, len);
}
