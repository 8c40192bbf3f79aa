/* npz files for load train: a stored zip of x.npy and y.npy as numpy.savez writes them, made at any offset. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "../engine/payload_int.h"
#include "fmt_int.h"
#include "train_int.h"

#define BLOCK 4096u
#define LFH 35u                 /* a local file header (30) and its name ("x.npy") */
#define CDH 51u                 /* a central directory header (46) and its name */
#define EOCD 22u

/* ---- CRC-32 of the plain payload, a block at a time ---- */

/*
 * A 4 KiB block of the plain payload is a fixed pattern XORed with its block
 * word repeated (payload.c), and CRC-32 is affine over GF(2): the block's
 * CRC is the pattern block's CRC XOR a linear function of the word, looked
 * up byte by byte (tab). Blocks are chained with zlib's crc32_combine_op.
 */
static struct {
    pthread_once_t once;
    uint32_t pattern_crc;
    uint32_t tab[8][256];
    uLong op;                   /* crc32_combine_gen(BLOCK) */
} crc = {.once = PTHREAD_ONCE_INIT};

static void crc_init(void)
{
    static unsigned char blk[BLOCK], zero[BLOCK];
    uint32_t lin[64];
    /* The pattern block: block 0 of key 0 with its word XORed back out. */
    rb_payload_plain_fill(0, 0, blk, BLOCK);
    uint64_t m0 = rb_payload_plain_word_mask(0, 0);
    for (unsigned k = 0; k < BLOCK; k += 8) {
        uint64_t w;
        memcpy(&w, blk + k, 8);
        w ^= m0;
        memcpy(blk + k, &w, 8);
    }
    crc.pattern_crc = (uint32_t)crc32(0, blk, BLOCK);
    uint32_t zero_crc = (uint32_t)crc32(0, zero, BLOCK);
    for (unsigned j = 0; j < 64; j++) {
        uint64_t m = 1ull << j;
        unsigned char r[BLOCK];
        for (unsigned k = 0; k < BLOCK; k += 8)
            memcpy(r + k, &m, 8);
        lin[j] = (uint32_t)crc32(0, r, BLOCK) ^ zero_crc;
    }
    for (unsigned b = 0; b < 8; b++)
        for (unsigned v = 0; v < 256; v++) {
            uint32_t x = 0;
            for (unsigned bit = 0; bit < 8; bit++)
                if (v >> bit & 1)
                    x ^= lin[8 * b + bit];
            crc.tab[b][v] = x;
        }
    crc.op = crc32_combine_gen(BLOCK);
}

uint32_t rb_npz_payload_crc(uint64_t key, uint64_t n)
{
    pthread_once(&crc.once, crc_init);
    uLong c = crc32(0, NULL, 0);
    uint64_t blocks = n / BLOCK;
    for (uint64_t b = 0; b < blocks; b++) {
        uint64_t m = rb_payload_plain_word_mask(key, b);
        uint32_t x = crc.pattern_crc;
        for (unsigned k = 0; k < 8; k++)
            x ^= crc.tab[k][(m >> (8 * k)) & 0xff]; /* the word's bytes as they lie in memory (little-endian) */
        c = b ? crc32_combine_op(c, x, crc.op) : x;
    }
    if (n % BLOCK) {
        unsigned char tail[BLOCK];
        rb_payload_plain_fill(key, blocks * BLOCK, tail, (size_t)(n % BLOCK));
        c = crc32(c, tail, (uInt)(n % BLOCK));
    }
    return (uint32_t)c;
}

/* ---- npy and zip headers ---- */

size_t rb_npy_header(unsigned char *out, const char *descr, const uint64_t *shape, int ndim)
{
    char dict[160], dims[96] = "";
    size_t k = 0;
    for (int i = 0; i < ndim; i++)
        k += (size_t)snprintf(dims + k, sizeof dims - k, "%" PRIu64 "%s", shape[i], ndim == 1 || i + 1 < ndim ? ", " : "");
    if (ndim == 1)
        dims[k - 1] = '\0'; /* "(n,)" */
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, dims);
    /* Magic, version 1.0, the header's length (little-endian u16), the dict padded with spaces to a total that is
     * a multiple of 64, and a newline: NumPy's format 1.0. */
    size_t total = (10 + (size_t)n + 1 + 63) / 64 * 64, hlen = total - 10;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (unsigned char)(hlen & 0xff);
    out[9] = (unsigned char)(hlen >> 8);
    memcpy(out + 10, dict, (size_t)n);
    memset(out + 10 + n, ' ', total - 10 - (size_t)n - 1);
    out[total - 1] = '\n';
    return total;
}

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* A local file header (central: a central directory header at offset at) of a stored member. */
static size_t zip_header(unsigned char *p, bool central, const char *name, uint32_t crcv, uint64_t size, uint64_t at)
{
    size_t h = central ? 46 : 30, o = central ? 2 : 0;
    memset(p, 0, h);
    put32(p, central ? 0x02014b50 : 0x04034b50);
    if (central)
        put16(p + 4, 0x0314);   /* made by: UNIX, 2.0 */
    put16(p + 4 + o, 20);       /* needed: 2.0 */
    put16(p + 12 + o, 0x21);    /* 1980-01-01 */
    put32(p + 14 + o, crcv);
    put32(p + 18 + o, size);
    put32(p + 22 + o, size);
    put16(p + 26 + o, (unsigned)strlen(name));
    if (central) {
        put32(p + 38, 0100644u << 16);
        put32(p + 42, at);
    }
    memcpy(p + h, name, strlen(name));
    return h + strlen(name);
}

/* ---- one file ---- */

/* A file's layout, the same for every offset: its samples, its headers, where each part starts. */
struct npz_file {
    uint64_t key, s;            /* s: bytes of one sample, x's (d1, d2) */
    unsigned char lfhx[LFH], hx[128], lfhy[LFH], hy[128], cd[2 * CDH + EOCD];
    size_t nhx, nhy;
    uint64_t at[7];             /* lfhx, hx, x data, lfhy, hy, y data, cd+eocd; at[7] would be the end */
    uint64_t end;
};

static void npz_file_make(const struct rb_npz_spec *sp, uint64_t key, struct npz_file *f)
{
    uint64_t spo = sp->spo;
    f->key = key;
    f->s = rb_train_key_object_bytes(key, spo, sp->mean, sp->stdev) / spo;
    if (!f->s)
        f->s = 1;
    /* x: (d1, d2, spo) uint8 with d1 x d2 = s, d1 the largest divisor of s not above its square root. */
    uint64_t d1 = (uint64_t)sqrt((double)f->s);
    while (d1 > 1 && f->s % d1)
        d1--;
    uint64_t shx[3] = {d1, f->s / d1, spo}, shy[1] = {spo};
    f->nhx = rb_npy_header(f->hx, "|u1", shx, 3);
    f->nhy = rb_npy_header(f->hy, "<i8", shy, 1);
    uint64_t xbytes = f->nhx + f->s * spo, ybytes = f->nhy + 8 * spo;
    uLong cx = crc32(0, f->hx, (uInt)f->nhx);
    cx = crc32_combine(cx, rb_npz_payload_crc(key, f->s * spo), (z_off_t)(f->s * spo));
    uLong cy = crc32(0, f->hy, (uInt)f->nhy);
    static const unsigned char zero[4096];
    for (uint64_t left = 8 * spo; left;) {
        uInt n = left < sizeof zero ? (uInt)left : (uInt)sizeof zero;
        cy = crc32(cy, zero, n);
        left -= n;
    }
    f->at[0] = 0;
    f->at[1] = LFH;
    f->at[2] = LFH + f->nhx;
    f->at[3] = LFH + xbytes;
    f->at[4] = f->at[3] + LFH;
    f->at[5] = f->at[4] + f->nhy;
    f->at[6] = f->at[3] + LFH + ybytes;
    f->end = f->at[6] + sizeof f->cd;
    zip_header(f->lfhx, false, "x.npy", (uint32_t)cx, xbytes, 0);
    zip_header(f->lfhy, false, "y.npy", (uint32_t)cy, ybytes, 0);
    zip_header(f->cd, true, "x.npy", (uint32_t)cx, xbytes, 0);
    zip_header(f->cd + CDH, true, "y.npy", (uint32_t)cy, ybytes, f->at[3]);
    unsigned char *e = f->cd + 2 * CDH;
    memset(e, 0, EOCD);
    put32(e, 0x06054b50);
    put16(e + 8, 2);
    put16(e + 10, 2);
    put32(e + 12, 2 * CDH);
    put32(e + 16, f->at[6]);
}

uint64_t rb_npz_file_bytes(const struct rb_npz_spec *sp, uint64_t raw_bytes)
{
    uint64_t s = raw_bytes / sp->spo ? raw_bytes / sp->spo : 1, d1 = (uint64_t)sqrt((double)s);
    while (d1 > 1 && s % d1)
        d1--;
    unsigned char h[128];
    uint64_t shx[3] = {d1, s / d1, sp->spo}, shy[1] = {sp->spo};
    return 2 * LFH + rb_npy_header(h, "|u1", shx, 3) + s * sp->spo + rb_npy_header(h, "<i8", shy, 1) + 8 * sp->spo +
           2 * CDH + EOCD;
}

void rb_npz_fill(const void *spec, uint64_t key, uint64_t offset, void *buf, size_t len)
{
    /* The layout of the file this thread filled last: a PUT fills one file a piece at a time. */
    static __thread struct npz_file last;
    static __thread bool have;
    static __thread const void *last_spec;
    if (!have || last.key != key || last_spec != spec) {
        npz_file_make(spec, key, &last);
        have = true;
        last_spec = spec;
    }
    const struct npz_file *f = &last;
    unsigned char *out = buf;
    while (len) {
        unsigned part = 6;
        while (part > 0 && offset < f->at[part])
            part--;
        uint64_t part_end = part < 6 ? f->at[part + 1] : f->end, at = offset - f->at[part];
        if (offset >= f->end) {
            memset(out, 0, len); /* past the file's end: nothing is asked for there */
            return;
        }
        size_t n = part_end - offset < len ? (size_t)(part_end - offset) : len;
        switch (part) {
        case 0: memcpy(out, f->lfhx + at, n); break;
        case 1: memcpy(out, f->hx + at, n); break;
        case 2: rb_payload_plain_fill(key, at, out, n); break;
        case 3: memcpy(out, f->lfhy + at, n); break;
        case 4: memcpy(out, f->hy + at, n); break;
        case 5: memset(out, 0, n); break;
        default: memcpy(out, f->cd + at, n); break;
        }
        out += n;
        offset += n;
        len -= n;
    }
}

/* ---- reading back (--decode) ---- */

/* The element size and element count an npy header states (descr '<f4', '|u1', ...; shape (a, b, ...)). */
static int npy_dims(const unsigned char *h, size_t n, uint64_t *elem, uint64_t *count, size_t *data_at)
{
    if (n < 10 || memcmp(h, "\x93NUMPY", 6) != 0 || h[6] != 1)
        return -EINVAL;
    size_t hlen = (size_t)h[8] | (size_t)h[9] << 8;
    if (10 + hlen > n)
        return -EINVAL;
    char dict[4096];
    if (hlen >= sizeof dict)
        return -EINVAL;
    memcpy(dict, h + 10, hlen);
    dict[hlen] = '\0';
    const char *d = strstr(dict, "'descr': '"), *sh = strstr(dict, "'shape': (");
    if (!d || !sh)
        return -EINVAL;
    d += 10;
    char *end;
    unsigned long size = strtoul(d + 2, &end, 10); /* '<f4': the byte order, the kind, the size */
    if (end == d + 2 || *end != '\'' || !size)
        return -EINVAL;
    *elem = size;
    *count = 1;
    for (const char *p = sh + 10; *p != ')';) {
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p)
            return -EINVAL;
        *count *= v;
        p = end;
        while (*p == ',' || *p == ' ')
            p++;
    }
    *data_at = 10 + hlen;
    return 0;
}

int rb_npz_touch(const unsigned char *b, size_t n, uint64_t *arrays, uint64_t *array_bytes, uint64_t *sum)
{
    size_t at = 0;
    *arrays = *array_bytes = 0;
    uint64_t s = 0;
    /* The local headers one after another, as a loader walks a stored zip: each member's npy header parsed, its
     * array's bytes read (summed), up to the central directory. */
    while (at + 30 <= n && memcmp(b + at, "PK\x03\x04", 4) == 0) {
        unsigned method = (unsigned)b[at + 8] | (unsigned)b[at + 9] << 8;
        uint64_t size = (uint64_t)b[at + 18] | (uint64_t)b[at + 19] << 8 | (uint64_t)b[at + 20] << 16 |
                        (uint64_t)b[at + 21] << 24;
        size_t name = (size_t)b[at + 26] | (size_t)b[at + 27] << 8, extra = (size_t)b[at + 28] | (size_t)b[at + 29] << 8;
        size_t data = at + 30 + name + extra;
        if (method != 0 || data > n || size > n - data)
            return -EINVAL;
        uint64_t elem, count;
        size_t off;
        if (npy_dims(b + data, (size_t)size, &elem, &count, &off) || off + elem * count != size)
            return -EINVAL;
        for (size_t k = data + off; k + 8 <= data + size; k += 8) {
            uint64_t w;
            memcpy(&w, b + k, 8);
            s += w;
        }
        (*arrays)++;
        *array_bytes += elem * count;
        at = data + (size_t)size;
    }
    *sum = s;
    return *arrays ? 0 : -EINVAL;
}
