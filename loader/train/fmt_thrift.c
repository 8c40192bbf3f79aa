/* The Thrift compact protocol, as much of it as Parquet's footer and page headers use: a writer and a skipping reader. */
#include <string.h>

#include "fmt_int.h"

/* ---- writer ---- */

void rb_tw_varint(struct rb_buf *b, uint64_t v)
{
    uint8_t out[10];
    size_t n = 0;
    do {
        out[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            out[n] |= 0x80;
        n++;
    } while (v);
    rb_buf_append(b, out, n);
}

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* A field header: the id as a delta from the struct's last when it fits 1..15, else the type then the id. */
static void field(struct rb_tw *w, int16_t id, int type)
{
    int16_t *last = &w->last[w->depth];
    uint8_t h;
    if (id > *last && id - *last <= 15) {
        h = (uint8_t)(((id - *last) << 4) | type);
        rb_buf_append(&w->b, &h, 1);
    } else {
        h = (uint8_t)type;
        rb_buf_append(&w->b, &h, 1);
        rb_tw_varint(&w->b, zigzag(id));
    }
    *last = id;
}

void rb_tw_i32(struct rb_tw *w, int16_t id, int32_t v)
{
    field(w, id, RB_TC_I32);
    rb_tw_varint(&w->b, zigzag(v));
}

void rb_tw_i64(struct rb_tw *w, int16_t id, int64_t v)
{
    field(w, id, RB_TC_I64);
    rb_tw_varint(&w->b, zigzag(v));
}

void rb_tw_elem_string(struct rb_tw *w, const char *s)
{
    size_t n = strlen(s);
    rb_tw_varint(&w->b, n);
    rb_buf_append(&w->b, s, n);
}

void rb_tw_string(struct rb_tw *w, int16_t id, const char *s)
{
    field(w, id, RB_TC_BINARY);
    rb_tw_elem_string(w, s);
}

void rb_tw_elem_struct(struct rb_tw *w)
{
    if (w->depth + 1 >= RB_TW_DEPTH) {
        w->b.oom = true; /* deeper than any Parquet structure */
        return;
    }
    w->last[++w->depth] = 0;
}

void rb_tw_struct(struct rb_tw *w, int16_t id)
{
    field(w, id, RB_TC_STRUCT);
    rb_tw_elem_struct(w);
}

void rb_tw_end(struct rb_tw *w)
{
    uint8_t stop = RB_TC_STOP;
    rb_buf_append(&w->b, &stop, 1);
    if (w->depth)
        w->depth--;
}

void rb_tw_list(struct rb_tw *w, int16_t id, int etype, uint64_t n)
{
    field(w, id, RB_TC_LIST);
    uint8_t h = (uint8_t)((n < 15 ? n << 4 : 0xf0) | (uint64_t)etype);
    rb_buf_append(&w->b, &h, 1);
    if (n >= 15)
        rb_tw_varint(&w->b, n);
}

void rb_tw_elem_i32(struct rb_tw *w, int32_t v)
{
    rb_tw_varint(&w->b, zigzag(v));
}

/* ---- reader ---- */

static uint64_t varint(struct rb_tr *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) {
            r->bad = true;
            return 0;
        }
        uint8_t c = *r->p++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return v;
    }
    r->bad = true;
    return 0;
}

int64_t rb_tr_int(struct rb_tr *r)
{
    uint64_t u = varint(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

int rb_tr_field(struct rb_tr *r, int16_t *last, int16_t *id)
{
    if (r->bad || r->p >= r->end) {
        r->bad = true;
        return -1;
    }
    uint8_t h = *r->p++;
    int type = h & 0x0f;
    if (type == RB_TC_STOP)
        return RB_TC_STOP;
    if (h >> 4)
        *id = (int16_t)(*last + (h >> 4));
    else
        *id = (int16_t)rb_tr_int(r);
    *last = *id;
    if (type > RB_TC_STRUCT)
        r->bad = true;
    return r->bad ? -1 : type;
}

int rb_tr_binary(struct rb_tr *r, const uint8_t **p, uint64_t *len)
{
    uint64_t n = varint(r);
    if (r->bad || n > (uint64_t)(r->end - r->p)) {
        r->bad = true;
        return -1;
    }
    *p = r->p;
    *len = n;
    r->p += n;
    return 0;
}

int rb_tr_list(struct rb_tr *r, int *etype, uint64_t *n)
{
    if (r->bad || r->p >= r->end) {
        r->bad = true;
        return -1;
    }
    uint8_t h = *r->p++;
    *etype = h & 0x0f;
    *n = h >> 4;
    if (*n == 15)
        *n = varint(r);
    /* Every element takes at least one byte (a bool list's too): a count past the input is malformed. */
    if (*n > (uint64_t)(r->end - r->p))
        r->bad = true;
    return r->bad ? -1 : 0;
}

static void skip(struct rb_tr *r, int type, unsigned depth)
{
    const uint8_t *p;
    uint64_t n;
    int etype;
    if (depth > RB_TW_DEPTH * 4) {
        r->bad = true;
        return;
    }
    switch (type) {
    case RB_TC_TRUE:
    case RB_TC_FALSE:
        return; /* a struct field's bool is its header */
    case RB_TC_BYTE:
        if (r->p >= r->end)
            r->bad = true;
        else
            r->p++;
        return;
    case RB_TC_I16:
    case RB_TC_I32:
    case RB_TC_I64:
        varint(r);
        return;
    case RB_TC_DOUBLE:
        if (r->end - r->p < 8)
            r->bad = true;
        else
            r->p += 8;
        return;
    case RB_TC_BINARY:
        rb_tr_binary(r, &p, &n);
        return;
    case RB_TC_LIST:
    case RB_TC_SET:
        if (rb_tr_list(r, &etype, &n))
            return;
        for (uint64_t i = 0; i < n && !r->bad; i++)
            skip(r, etype == RB_TC_TRUE || etype == RB_TC_FALSE ? RB_TC_BYTE : etype, depth + 1);
        return;
    case RB_TC_MAP: {
        n = varint(r);
        if (!n || r->bad)
            return;
        if (r->p >= r->end || n > (uint64_t)(r->end - r->p)) {
            r->bad = true;
            return;
        }
        uint8_t kv = *r->p++;
        for (uint64_t i = 0; i < n && !r->bad; i++) {
            skip(r, kv >> 4, depth + 1);
            skip(r, kv & 0x0f, depth + 1);
        }
        return;
    }
    case RB_TC_STRUCT: {
        int16_t last = 0, id;
        int t;
        while ((t = rb_tr_field(r, &last, &id)) > 0)
            skip(r, t, depth + 1);
        return;
    }
    default:
        r->bad = true;
    }
}

void rb_tr_skip(struct rb_tr *r, int type)
{
    skip(r, type, 0);
}
