/* JPEG files for load train: baseline JPEGs of an exact size, assembled from a pool of independently coded rows. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "railbench/mix.h"
#include "../engine/payload_int.h"
#include "fmt_int.h"
#include "train_int.h"

#define POOL_ROWS 64u           /* MCU rows coded once, from which every file's rows are drawn */
#define MCU 16u                 /* 4:2:0: an MCU is 16 x 16 pixels */
#define QUALITY 90
#define COM_MAX 65537u          /* a COM segment: marker, length (at most 65535, itself included), data */
#define BPP_GUESS_W 256u

struct rb_jpeg_layout {
    struct rb_jpeg_spec s;
    unsigned width;
    unsigned char *head;        /* SOI and APP0: before the COM segments */
    size_t nhead;
    unsigned char *frame;       /* DQT, SOF0 (its height patched per file), DHT, DRI, SOS */
    size_t nframe, height_at;   /* the SOF0 height's offset in frame */
    unsigned char *pool;        /* the rows' entropy-coded bytes, back to back */
    uint64_t row_off[POOL_ROWS + 1];
    uint64_t row_max;
};

/* Codes width x rows x 16 pixels of the payload of key (RGB) with a restart marker after every MCU row. */
static int encode(unsigned width, unsigned rows, uint64_t key, unsigned char **out, unsigned long *len)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr jerr;
    c.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&c);
    *out = NULL;
    *len = 0;
    jpeg_mem_dest(&c, out, len);
    c.image_width = width;
    c.image_height = rows * MCU;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, QUALITY, TRUE);
    c.restart_in_rows = 1;
    unsigned char *line = malloc((size_t)width * 3);
    if (!line) {
        jpeg_destroy_compress(&c);
        return -ENOMEM;
    }
    jpeg_start_compress(&c, TRUE);
    for (uint64_t y = 0; y < c.image_height; y++) {
        rb_payload_plain_fill(key, y * width * 3, line, (size_t)width * 3);
        JSAMPROW r = line;
        jpeg_write_scanlines(&c, &r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(line);
    return 0;
}

/* Splits a coded pool into head, frame and rows (at its restart markers). 0 or -EINVAL. */
static int split(struct rb_jpeg_layout *l, const unsigned char *j, size_t n)
{
    size_t p = 2, sos_end = 0;
    if (n < 4 || j[0] != 0xff || j[1] != 0xd8)
        return -EINVAL;
    while (p + 4 <= n && !sos_end) { /* marker segments up to and including SOS */
        unsigned m = j[p + 1], len = (unsigned)j[p + 2] << 8 | j[p + 3];
        if (j[p] != 0xff)
            return -EINVAL;
        if (m == 0xe0)
            l->nhead = p + 2 + len;
        if (m == 0xc0)
            l->height_at = p + 5; /* relative to the frame's start, fixed below */
        p += 2 + len;
        if (m == 0xda)
            sos_end = p;
    }
    if (!sos_end || !l->nhead || !l->height_at || l->height_at < l->nhead)
        return -EINVAL;
    l->height_at -= l->nhead;
    l->nframe = sos_end - l->nhead;
    l->head = malloc(l->nhead);
    l->frame = malloc(l->nframe);
    l->pool = malloc(n);
    if (!l->head || !l->frame || !l->pool)
        return -ENOMEM;
    memcpy(l->head, j, l->nhead);
    memcpy(l->frame, j + l->nhead, l->nframe);
    /* The rows: entropy-coded bytes between restart markers (FF D0..D7), the last ended by EOI (FF D9). */
    unsigned row = 0;
    uint64_t at = 0;
    l->row_off[0] = 0;
    for (size_t k = sos_end; k + 1 < n && row < POOL_ROWS; k++) {
        if (j[k] == 0xff && (j[k + 1] >= 0xd0 && j[k + 1] <= 0xd9)) {
            l->row_off[++row] = at;
            k++;
            continue;
        }
        l->pool[at++] = j[k];
    }
    if (row != POOL_ROWS)
        return -EINVAL;
    for (unsigned r = 0; r < POOL_ROWS; r++)
        if (l->row_off[r + 1] - l->row_off[r] > l->row_max)
            l->row_max = l->row_off[r + 1] - l->row_off[r];
    return 0;
}

void rb_jpeg_layout_free(struct rb_jpeg_layout *l)
{
    if (!l)
        return;
    free(l->head);
    free(l->frame);
    free(l->pool);
    free(l);
}

/* Bytes besides the rows and COM segments: head, frame, a restart marker between rows, EOI. */
static uint64_t fixed_bytes(const struct rb_jpeg_layout *l, uint64_t rows)
{
    return l->nhead + l->nframe + 2 * (rows - 1) + 2;
}

/* Rows of a file of target bytes: as many as fit even if each is the pool's longest, leaving 4 bytes for a COM. */
static uint64_t file_rows(const struct rb_jpeg_layout *l, uint64_t target)
{
    uint64_t fixed = l->nhead + l->nframe + 2 + 4;
    if (target < fixed + l->row_max)
        return 0;
    uint64_t rows = (target - fixed + 2) / (l->row_max + 2);
    return rows > 65535 / MCU ? 65535 / MCU : rows;
}

int rb_jpeg_layout_new(const struct rb_jpeg_spec *s, struct rb_jpeg_layout **out, char *err, size_t errlen)
{
    /* Bytes a pixel at this quality, from a narrow pool; then the width of a square-ish image of the mean size. */
    unsigned char *j = NULL;
    unsigned long n = 0;
    uint64_t pool_key = rb_mix64(s->seed ^ 0x4a504547ull); /* "JPEG" */
    if (encode(BPP_GUESS_W, 4, pool_key, &j, &n))
        return -ENOMEM;
    double bpp = (double)n / (BPP_GUESS_W * 4 * MCU);
    free(j);
    unsigned width = (unsigned)(sqrt((double)s->mean / bpp) / MCU) * MCU;
    width = width < MCU ? MCU : width > 65520 ? 65520 : width;
    struct rb_jpeg_layout *l = calloc(1, sizeof *l);
    if (!l)
        return -ENOMEM;
    l->s = *s;
    l->width = width;
    int rc = encode(width, POOL_ROWS, pool_key, &j, &n);
    if (!rc)
        rc = split(l, j, n);
    free(j);
    if (rc) {
        rb_jpeg_layout_free(l);
        if (rc == -EINVAL)
            snprintf(err, errlen, "libjpeg's output has not the markers expected");
        return rc;
    }
    if (!file_rows(l, s->mean)) {
        snprintf(err, errlen, "a JPEG of %u pixels a row needs at least %" PRIu64 " bytes (one row of %" PRIu64
                 " and its headers)", width, l->nhead + l->nframe + 6 + l->row_max, l->row_max);
        rb_jpeg_layout_free(l);
        return -EINVAL;
    }
    *out = l;
    return 0;
}

unsigned rb_jpeg_width(const struct rb_jpeg_layout *l)
{
    return l->width;
}

/* A file of key: its size, rows, and the rows' bytes (the pool rows the key draws). */
struct jfile {
    uint64_t target, rows, coded, pad;
};

static uint64_t pick(uint64_t key, uint64_t r)
{
    return rb_mix64(key + (r + 1) * RB_MIX_GOLDEN) % POOL_ROWS;
}

uint64_t rb_jpeg_min_bytes(const struct rb_jpeg_layout *l)
{
    return l->nhead + l->nframe + 2 + 4 + l->row_max;
}

static void jfile_make(const struct rb_jpeg_layout *l, uint64_t key, struct jfile *f)
{
    f->target = rb_train_key_object_bytes(key, 1, l->s.mean, l->s.stdev);
    if (f->target < rb_jpeg_min_bytes(l))
        f->target = rb_jpeg_min_bytes(l); /* a draw below what one row needs: one row's file */
    f->rows = file_rows(l, f->target);
    f->coded = 0;
    for (uint64_t r = 0; r < f->rows; r++) {
        uint64_t p = pick(key, r);
        f->coded += l->row_off[p + 1] - l->row_off[p];
    }
    uint64_t used = fixed_bytes(l, f->rows) + f->coded;
    f->pad = f->target > used + 4 ? f->target - used : 4;
}

uint64_t rb_jpeg_file_bytes(const struct rb_jpeg_layout *l, uint64_t key, uint64_t *rows)
{
    struct jfile f;
    jfile_make(l, key, &f);
    if (rows)
        *rows = f.rows;
    return fixed_bytes(l, f.rows) + f.coded + f.pad;
}

uint64_t rb_jpeg_bytes_of(const struct rb_jpeg_layout *l, uint64_t raw_bytes)
{
    return raw_bytes < rb_jpeg_min_bytes(l) ? rb_jpeg_min_bytes(l) : raw_bytes;
}

/* Copies [from, from + n) of a stretch of bytes at [at, at + len) into out; returns the bytes copied. */
static size_t take(unsigned char *out, uint64_t from, size_t n, uint64_t at, const unsigned char *src, uint64_t len)
{
    if (from < at || from >= at + len)
        return 0;
    size_t k = at + len - from < n ? (size_t)(at + len - from) : n;
    memcpy(out, src + (from - at), k);
    return k;
}

/*
 * The COM segments of pad bytes, from byte o of them, n bytes into out: k segments as equal as they go (the first
 * pad % k one byte longer), each FF FE, its length (data + 2, big-endian), its data: the file's payload, the
 * segments' data back to back from payload byte 0.
 */
static void com_fill(unsigned char *out, uint64_t key, uint64_t pad, uint64_t o, size_t n)
{
    uint64_t k = (pad + COM_MAX - 1) / COM_MAX, base = pad / k, extra = pad % k, first_big = extra * (base + 1);
    while (n) {
        uint64_t i, at, data_before;
        if (o < first_big) {
            i = o / (base + 1);
            at = o % (base + 1);
            data_before = i * (base - 3);
        } else {
            i = extra + (o - first_big) / base;
            at = (o - first_big) % base;
            data_before = extra * (base - 3) + (i - extra) * (base - 4);
        }
        uint64_t size = i < extra ? base + 1 : base, len = size - 2;
        size_t m;
        if (at < 4) {
            unsigned char h[4] = {0xff, 0xfe, (unsigned char)(len >> 8), (unsigned char)len};
            m = 4 - at < n ? (size_t)(4 - at) : n;
            memcpy(out, h + at, m);
        } else {
            m = size - at < n ? (size_t)(size - at) : n;
            rb_payload_plain_fill(key, data_before + at - 4, out, m);
        }
        out += m;
        o += m;
        n -= m;
    }
}

void rb_jpeg_fill(const void *layout, uint64_t key, uint64_t offset, void *buf, size_t len)
{
    const struct rb_jpeg_layout *l = layout;
    static __thread struct jfile f;
    static __thread uint64_t fkey;
    static __thread const void *flayout;
    if (flayout != layout || fkey != key) {
        jfile_make(l, key, &f);
        fkey = key;
        flayout = layout;
    }
    unsigned char *out = buf;
    uint64_t frame_at = l->nhead + f.pad, rows_at = frame_at + l->nframe;
    uint64_t end = rows_at + f.coded + 2 * (f.rows - 1) + 2;
    unsigned char height[2] = {(unsigned char)((f.rows * MCU) >> 8), (unsigned char)(f.rows * MCU)};
    while (len) {
        size_t n = 0;
        if (offset < l->nhead) {
            n = take(out, offset, len, 0, l->head, l->nhead);
        } else if (offset < frame_at) {
            n = frame_at - offset < len ? (size_t)(frame_at - offset) : len;
            com_fill(out, key, f.pad, offset - l->nhead, n);
        } else if (offset < rows_at) {
            n = take(out, offset, len, frame_at, l->frame, l->nframe);
            for (size_t k = 0; k < n; k++)
                if (offset + k - frame_at == l->height_at || offset + k - frame_at == l->height_at + 1)
                    out[k] = height[offset + k - frame_at - l->height_at];
        } else if (offset < end - 2) {
            /* Row r, then its restart marker RST(r mod 8) unless it is the last. */
            uint64_t at = rows_at;
            for (uint64_t r = 0; r < f.rows && !n; r++) {
                uint64_t p = pick(key, r), rl = l->row_off[p + 1] - l->row_off[p];
                n = take(out, offset, len, at, l->pool + l->row_off[p], rl);
                at += rl;
                if (!n && r + 1 < f.rows) {
                    unsigned char rst[2] = {0xff, (unsigned char)(0xd0 + r % 8)};
                    n = take(out, offset, len, at, rst, 2);
                    at += 2;
                }
            }
        } else if (offset < end) {
            static const unsigned char eoi[2] = {0xff, 0xd9};
            n = take(out, offset, len, end - 2, eoi, 2);
        }
        if (!n) {
            memset(out, 0, len); /* past the file's end: nothing is asked for there */
            return;
        }
        out += n;
        offset += n;
        len -= n;
    }
}

/* ---- reading back (--decode) ---- */

struct dec_err {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
    unsigned warnings;
};

static void dec_fail(j_common_ptr c)
{
    longjmp(((struct dec_err *)c->err)->jump, 1);
}

static void dec_warn(j_common_ptr c, int level)
{
    if (level < 0)
        ((struct dec_err *)c->err)->warnings++;
}

int rb_jpeg_decode(const unsigned char *b, size_t n, unsigned *width, unsigned *height)
{
    struct jpeg_decompress_struct d;
    struct dec_err e;
    unsigned char *volatile line = NULL;
    d.err = jpeg_std_error(&e.mgr);
    e.mgr.error_exit = dec_fail;
    e.mgr.emit_message = dec_warn;
    e.warnings = 0;
    jpeg_create_decompress(&d);
    if (setjmp(e.jump)) {
        free(line);
        jpeg_destroy_decompress(&d);
        return -EINVAL;
    }
    jpeg_mem_src(&d, b, (unsigned long)n);
    jpeg_read_header(&d, TRUE);
    jpeg_start_decompress(&d);
    line = malloc((size_t)d.output_width * (size_t)d.output_components);
    if (!line)
        longjmp(e.jump, 1);
    while (d.output_scanline < d.output_height) {
        JSAMPROW r = line;
        jpeg_read_scanlines(&d, &r, 1);
    }
    *width = d.output_width;
    *height = d.output_height;
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    free(line);
    return e.warnings ? -EINVAL : 0;
}
