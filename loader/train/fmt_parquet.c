/* Parquet files for load train: the layout written from one template per data set, and the footer read back. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/payload_int.h"
#include "fmt_int.h"

/* Parquet's enums (parquet.thrift): physical types, repetition, encodings, page type, converted type LIST. */
enum { PT_FLOAT = 4, PT_DOUBLE = 5, PT_FLBA = 7 };
enum { REP_REQUIRED = 0, REP_REPEATED = 2 };
enum { ENC_PLAIN = 0, ENC_RLE = 3 };
#define CONVERTED_LIST 3
#define PAGE_TARGET (1u << 20)   /* values per data page: about 1 MiB, as writers default to */
#define MAX_PAGE (1u << 30)      /* a page's size is an i32: one row of a column at most this */

/* A stretch of the file: template bytes (tmpl != UINT64_MAX) or the values of a column from payload byte pay. */
struct seg {
    uint64_t off, len, tmpl, pay;
    uint8_t mask_every;         /* values of 4 or 8 bytes whose top exponent bit is cleared; 0: none */
};

struct col {
    uint64_t width, per_row;    /* bytes of one value; values per row (1: scalar) */
    uint64_t base;              /* payload byte of its row 0 */
};

struct rb_pq_layout {
    struct rb_pq_spec s;
    struct col *col;
    struct seg *seg;
    size_t nseg, segcap;
    struct rb_buf tmpl;
    uint64_t bytes;
};

static int add_seg(struct rb_pq_layout *l, uint64_t len, uint64_t tmpl, uint64_t pay, uint8_t mask)
{
    if (!len)
        return 0;
    if (l->nseg && tmpl != UINT64_MAX && l->seg[l->nseg - 1].tmpl != UINT64_MAX) {
        l->seg[l->nseg - 1].len += len; /* template bytes that follow template bytes: one stretch */
        l->bytes += len;
        return 0;
    }
    if (l->nseg == l->segcap) {
        size_t cap = l->segcap ? 2 * l->segcap : 64;
        struct seg *g = realloc(l->seg, cap * sizeof *g);
        if (!g)
            return -ENOMEM;
        l->seg = g;
        l->segcap = cap;
    }
    l->seg[l->nseg++] = (struct seg){l->bytes, len, tmpl, pay, mask};
    l->bytes += len;
    return 0;
}

/* Appends template bytes at the file's current end. */
static int add_tmpl(struct rb_pq_layout *l, const void *p, size_t n)
{
    uint64_t at = l->tmpl.len;
    if (!n)
        return 0;
    if (rb_buf_append(&l->tmpl, p, n))
        return -ENOMEM;
    return add_seg(l, n, at, 0, 0);
}

static void le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* An RLE run of the hybrid encoding at bit width 1: count, then the value in one byte. */
static void rle_run(struct rb_buf *b, uint64_t count, uint8_t value)
{
    rb_tw_varint(b, count << 1);
    rb_buf_append(b, &value, 1);
}

/* The levels of a page of rows LIST rows of n values: repetition (0 then n - 1 ones per row), definition (all 1). */
static int levels(struct rb_buf *out, uint64_t rows, uint64_t n)
{
    struct rb_buf rep = {0}, def = {0};
    for (uint64_t r = 0; r < rows; r++) {
        rle_run(&rep, 1, 0);
        if (n > 1)
            rle_run(&rep, n - 1, 1);
    }
    rle_run(&def, rows * n, 1);
    uint8_t len[4];
    le32(len, (uint32_t)rep.len);
    rb_buf_append(out, len, 4);
    rb_buf_append(out, rep.s, rep.len);
    le32(len, (uint32_t)def.len);
    rb_buf_append(out, len, 4);
    rb_buf_append(out, def.s, def.len);
    bool oom = rep.oom || def.oom;
    rb_buf_free(&rep);
    rb_buf_free(&def);
    return oom || out->oom ? -ENOMEM : 0;
}

/* One data page of rows rows of column c starting at row r0: its header and levels, then its values. */
static int page(struct rb_pq_layout *l, uint64_t c, uint64_t r0, uint64_t rows)
{
    const struct col *k = &l->col[c];
    struct rb_buf lv = {0};
    if (l->s.kind == RB_PQ_LIST && levels(&lv, rows, k->per_row)) {
        rb_buf_free(&lv);
        return -ENOMEM;
    }
    uint64_t vals = rows * k->per_row * k->width;
    struct rb_tw w = {0};
    rb_tw_i32(&w, 1, 0); /* DATA_PAGE */
    rb_tw_i32(&w, 2, (int32_t)(lv.len + vals));
    rb_tw_i32(&w, 3, (int32_t)(lv.len + vals));
    rb_tw_struct(&w, 5);
    rb_tw_i32(&w, 1, (int32_t)(rows * k->per_row));
    rb_tw_i32(&w, 2, ENC_PLAIN);
    rb_tw_i32(&w, 3, ENC_RLE);
    rb_tw_i32(&w, 4, ENC_RLE);
    rb_tw_end(&w);
    rb_tw_end(&w);
    int rc = w.b.oom || add_tmpl(l, w.b.s, w.b.len) || add_tmpl(l, lv.s, lv.len) ? -ENOMEM : 0;
    uint8_t mask = l->s.kind == RB_PQ_LIST || k->width == 4 ? 4 : k->width == 8 ? 8 : 0;
    if (!rc)
        rc = add_seg(l, vals, UINT64_MAX, k->base + r0 * k->per_row * k->width, mask);
    rb_buf_free(&w.b);
    rb_buf_free(&lv);
    return rc;
}

/* The schema: the root, then each column (a LIST column as its group, its repeated group and its element). */
static void schema(struct rb_tw *w, const struct rb_pq_layout *l)
{
    uint64_t n = l->s.ncols, elems = 1 + (l->s.kind == RB_PQ_LIST ? 3 : 1) * n;
    rb_tw_list(w, 2, RB_TC_STRUCT, elems);
    rb_tw_elem_struct(w);
    rb_tw_string(w, 4, "schema");
    rb_tw_i32(w, 5, (int32_t)n);
    rb_tw_end(w);
    for (uint64_t c = 0; c < n; c++) {
        char name[24];
        uint64_t width = l->col[c].width;
        snprintf(name, sizeof name, "c%" PRIu64, c);
        rb_tw_elem_struct(w);
        if (l->s.kind == RB_PQ_LIST) {
            rb_tw_i32(w, 3, REP_REQUIRED);
            rb_tw_string(w, 4, name);
            rb_tw_i32(w, 5, 1);
            rb_tw_i32(w, 6, CONVERTED_LIST);
            rb_tw_struct(w, 10); /* LogicalType: LIST */
            rb_tw_struct(w, 3);
            rb_tw_end(w);
            rb_tw_end(w);
            rb_tw_end(w);
            rb_tw_elem_struct(w);
            rb_tw_i32(w, 3, REP_REPEATED);
            rb_tw_string(w, 4, "list");
            rb_tw_i32(w, 5, 1);
            rb_tw_end(w);
            rb_tw_elem_struct(w);
            rb_tw_i32(w, 1, PT_FLOAT);
            rb_tw_i32(w, 3, REP_REQUIRED);
            rb_tw_string(w, 4, "element");
        } else {
            rb_tw_i32(w, 1, width == 4 ? PT_FLOAT : width == 8 ? PT_DOUBLE : PT_FLBA);
            if (width != 4 && width != 8)
                rb_tw_i32(w, 2, (int32_t)width);
            rb_tw_i32(w, 3, REP_REQUIRED);
            rb_tw_string(w, 4, name);
        }
        rb_tw_end(w);
    }
}

/* One column chunk's ColumnChunk: where it starts (its first page header) and its bytes. */
static void chunk_meta(struct rb_tw *w, const struct rb_pq_layout *l, uint64_t c, uint64_t start, uint64_t bytes,
                       uint64_t rows)
{
    char name[24];
    snprintf(name, sizeof name, "c%" PRIu64, c);
    bool list = l->s.kind == RB_PQ_LIST;
    uint64_t width = l->col[c].width;
    rb_tw_elem_struct(w);
    rb_tw_i64(w, 2, (int64_t)start);
    rb_tw_struct(w, 3);
    rb_tw_i32(w, 1, list || width == 4 ? PT_FLOAT : width == 8 ? PT_DOUBLE : PT_FLBA);
    rb_tw_list(w, 2, RB_TC_I32, list ? 2 : 1);
    rb_tw_elem_i32(w, ENC_PLAIN);
    if (list)
        rb_tw_elem_i32(w, ENC_RLE);
    rb_tw_list(w, 3, RB_TC_BINARY, list ? 3 : 1);
    rb_tw_elem_string(w, name);
    if (list) {
        rb_tw_elem_string(w, "list");
        rb_tw_elem_string(w, "element");
    }
    rb_tw_i32(w, 4, 0); /* UNCOMPRESSED */
    rb_tw_i64(w, 5, (int64_t)(rows * l->col[c].per_row));
    rb_tw_i64(w, 6, (int64_t)bytes);
    rb_tw_i64(w, 7, (int64_t)bytes);
    rb_tw_i64(w, 9, (int64_t)start);
    rb_tw_end(w);
    rb_tw_end(w);
}

/* The row groups' pages, then the footer that describes them. */
static int build(struct rb_pq_layout *l)
{
    const struct rb_pq_spec *s = &l->s;
    uint64_t nrg = (s->rows + s->rg_rows - 1) / s->rg_rows, n = s->ncols;
    uint64_t *start = calloc(nrg * n, sizeof *start), *bytes = calloc(nrg * n, sizeof *bytes);
    int rc = !start || !bytes ? -ENOMEM : add_tmpl(l, "PAR1", 4);
    for (uint64_t g = 0; !rc && g < nrg; g++) {
        uint64_t r0 = g * s->rg_rows, rows = s->rows - r0 < s->rg_rows ? s->rows - r0 : s->rg_rows;
        for (uint64_t c = 0; !rc && c < n; c++) {
            uint64_t row = l->col[c].width * l->col[c].per_row, per_page = PAGE_TARGET / row ? PAGE_TARGET / row : 1;
            start[g * n + c] = l->bytes;
            for (uint64_t r = 0; !rc && r < rows; r += per_page)
                rc = page(l, c, r0 + r, rows - r < per_page ? rows - r : per_page);
            bytes[g * n + c] = l->bytes - start[g * n + c];
        }
    }
    struct rb_tw w = {0};
    if (!rc) {
        rb_tw_i32(&w, 1, 1);
        schema(&w, l);
        rb_tw_i64(&w, 3, (int64_t)s->rows);
        rb_tw_list(&w, 4, RB_TC_STRUCT, nrg);
        for (uint64_t g = 0; g < nrg; g++) {
            uint64_t rows = s->rows - g * s->rg_rows < s->rg_rows ? s->rows - g * s->rg_rows : s->rg_rows, total = 0;
            rb_tw_elem_struct(&w);
            rb_tw_list(&w, 1, RB_TC_STRUCT, n);
            for (uint64_t c = 0; c < n; c++) {
                chunk_meta(&w, l, c, start[g * n + c], bytes[g * n + c], rows);
                total += bytes[g * n + c];
            }
            rb_tw_i64(&w, 2, (int64_t)total);
            rb_tw_i64(&w, 3, (int64_t)rows);
            rb_tw_i64(&w, 5, (int64_t)start[g * n]);
            rb_tw_i64(&w, 6, (int64_t)total);
            rb_tw_end(&w);
        }
        rb_tw_string(&w, 6, "railbench");
        rb_tw_end(&w);
        uint8_t tail[8];
        le32(tail, (uint32_t)w.b.len);
        memcpy(tail + 4, "PAR1", 4);
        rc = w.b.oom || w.b.len > UINT32_MAX || add_tmpl(l, w.b.s, w.b.len) || add_tmpl(l, tail, 8) ? -ENOMEM : 0;
    }
    rb_buf_free(&w.b);
    free(start);
    free(bytes);
    return rc || l->tmpl.oom ? -ENOMEM : 0;
}

int rb_pq_layout_new(const struct rb_pq_spec *spec, struct rb_pq_layout **out, char *err, size_t errlen)
{
    const struct rb_pq_spec *s = spec;
    uint64_t unit = s->kind == RB_PQ_LIST ? 4 : 1;
    if (!s->ncols || !s->rows || !s->rg_rows || s->ncols > 100000) {
        snprintf(err, errlen, "a file needs 1 to 100000 columns, and rows");
        return -EINVAL;
    }
    if (s->row_bytes % unit || s->row_bytes < s->ncols * unit) {
        snprintf(err, errlen, "%" PRIu64 " bytes a row do not share out over %" PRIu64 " %s column(s)", s->row_bytes,
                 s->ncols, s->kind == RB_PQ_LIST ? "float list (4 bytes a value)" : "scalar (1 byte or more)");
        return -EINVAL;
    }
    uint64_t per = s->row_bytes / unit / s->ncols, extra = s->row_bytes / unit % s->ncols;
    if ((per + 1) * unit > MAX_PAGE) {
        snprintf(err, errlen, "a column of %" PRIu64 " bytes a row is more than a data page holds (1 GiB)", per * unit);
        return -EINVAL;
    }
    struct rb_pq_layout *l = calloc(1, sizeof *l);
    if (!l || !(l->col = calloc(s->ncols, sizeof *l->col))) {
        free(l);
        return -ENOMEM;
    }
    l->s = *s;
    uint64_t base = 0;
    for (uint64_t c = 0; c < s->ncols; c++) {
        uint64_t k = per + (c < extra);
        l->col[c] = s->kind == RB_PQ_LIST ? (struct col){4, k, base} : (struct col){k, 1, base};
        base += s->rows * k * unit;
    }
    if (build(l)) {
        rb_pq_layout_free(l);
        return -ENOMEM;
    }
    *out = l;
    return 0;
}

void rb_pq_layout_free(struct rb_pq_layout *l)
{
    if (!l)
        return;
    free(l->col);
    free(l->seg);
    rb_buf_free(&l->tmpl);
    free(l);
}

uint64_t rb_pq_file_bytes(const struct rb_pq_layout *l)
{
    return l->bytes;
}

void rb_pq_column(const struct rb_pq_layout *l, uint64_t c, char name[24], uint64_t *row_bytes, uint64_t *per_row)
{
    snprintf(name, 24, "c%" PRIu64, c);
    *row_bytes = l->col[c].width * l->col[c].per_row;
    *per_row = l->col[c].per_row;
}

/*
 * Clears the top exponent bit (bit 6 of the high byte, little-endian) of every value of every bytes in [p, p + n),
 * p at byte at of the stretch (values start at its byte 0): byte by byte up to a value boundary, then 8 bytes at a
 * time with a mask laid out as the bytes are (so on any host), then the rest.
 */
static void mask_values(uint8_t *p, size_t n, uint64_t at, unsigned every)
{
    size_t k = 0;
    for (; k < n && (at + k) % every; k++)
        if ((at + k) % every == every - 1)
            p[k] &= 0xbf;
    const uint8_t mb[8] = {0xff, 0xff, 0xff, every == 4 ? 0xbf : 0xff, 0xff, 0xff, 0xff, 0xbf};
    uint64_t m;
    memcpy(&m, mb, 8);
    for (; k + 8 <= n; k += 8) {
        uint64_t w;
        memcpy(&w, p + k, 8);
        w &= m;
        memcpy(p + k, &w, 8);
    }
    for (; k < n; k++)
        if ((at + k) % every == every - 1)
            p[k] &= 0xbf;
}

void rb_pq_fill(const void *layout, uint64_t key, uint64_t offset, void *buf, size_t len)
{
    const struct rb_pq_layout *l = layout;
    uint8_t *out = buf;
    /* The stretch holding offset: the last that starts at or before it. */
    size_t lo = 0, hi = l->nseg;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (l->seg[mid].off <= offset)
            lo = mid;
        else
            hi = mid;
    }
    for (size_t i = lo; len; i++) {
        if (i >= l->nseg) { /* past the file's end: nothing is asked for there; zeros */
            memset(out, 0, len);
            return;
        }
        const struct seg *g = &l->seg[i];
        uint64_t at = offset - g->off, left = g->len - at;
        size_t n = left < len ? (size_t)left : len;
        if (g->tmpl != UINT64_MAX) {
            memcpy(out, l->tmpl.s + g->tmpl + at, n);
        } else {
            rb_payload_plain_fill(key, g->pay + at, out, n);
            if (g->mask_every)
                mask_values(out, n, at, g->mask_every);
        }
        out += n;
        offset += n;
        len -= n;
    }
}
