/* Parquet's footer read back: the row groups and the byte ranges of the projected columns' chunks. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt_int.h"

int rb_pq_footer_len(const uint8_t tail[8], uint64_t file_bytes, uint64_t *len, char *err, size_t errlen)
{
    if (file_bytes < 12 || memcmp(tail + 4, "PAR1", 4) != 0) {
        snprintf(err, errlen, "not a Parquet file (no \"PAR1\" at its end)");
        return -EINVAL;
    }
    *len = (uint64_t)tail[0] | (uint64_t)tail[1] << 8 | (uint64_t)tail[2] << 16 | (uint64_t)tail[3] << 24;
    if (*len + 12 > file_bytes) {
        snprintf(err, errlen, "its footer (%" PRIu64 " bytes, the last 8 bytes say) is longer than the file (%" PRIu64
                 " bytes): a truncated footer", *len, file_bytes);
        return -EINVAL;
    }
    return 0;
}

/* A leaf column chunk as the footer states it. */
struct leaf {
    uint64_t rg;
    const uint8_t *name;        /* path_in_schema[0]: the top-level column */
    uint64_t name_len, start, bytes;
};

struct parse {
    struct rb_tr r;
    uint64_t rows, nrg;
    uint64_t *rg_rows;
    struct leaf *leaf;
    size_t nleaf, cap;
};

static int add_leaf(struct parse *P, const struct leaf *f)
{
    if (P->nleaf == P->cap) {
        size_t cap = P->cap ? 2 * P->cap : 256;
        struct leaf *g = realloc(P->leaf, cap * sizeof *g);
        if (!g)
            return -ENOMEM;
        P->leaf = g;
        P->cap = cap;
    }
    P->leaf[P->nleaf++] = *f;
    return 0;
}

/* ColumnMetaData: the first path element, the pages' start and the chunk's bytes. */
static void column_meta(struct parse *P, struct leaf *f)
{
    struct rb_tr *r = &P->r;
    int16_t last = 0, id;
    int t;
    int64_t data = -1, dict = -1, size = -1;
    while ((t = rb_tr_field(r, &last, &id)) > 0) {
        if (id == 3 && t == RB_TC_LIST) {
            int et;
            uint64_t n;
            if (rb_tr_list(r, &et, &n) || et != RB_TC_BINARY || !n) {
                r->bad = true;
                return;
            }
            for (uint64_t i = 0; i < n && !r->bad; i++) {
                const uint8_t *p;
                uint64_t len;
                if (!rb_tr_binary(r, &p, &len) && i == 0) {
                    f->name = p;
                    f->name_len = len;
                }
            }
        } else if ((id == 7 || id == 9 || id == 11) && t == RB_TC_I64) {
            int64_t v = rb_tr_int(r);
            *(id == 7 ? &size : id == 9 ? &data : &dict) = v;
        } else {
            rb_tr_skip(r, t);
        }
    }
    if (data < 0 || size < 0 || !f->name)
        r->bad = true;
    f->start = (uint64_t)(dict >= 0 && dict < data ? dict : data);
    f->bytes = (uint64_t)size;
}

/* RowGroup: its column chunks (ColumnChunk.meta_data) and rows. */
static int row_group(struct parse *P)
{
    struct rb_tr *r = &P->r;
    int16_t last = 0, id;
    int t;
    int64_t rows = -1;
    size_t first = P->nleaf;
    while ((t = rb_tr_field(r, &last, &id)) > 0) {
        if (id == 1 && t == RB_TC_LIST) {
            int et;
            uint64_t n;
            if (rb_tr_list(r, &et, &n) || et != RB_TC_STRUCT)
                return -EINVAL;
            for (uint64_t i = 0; i < n && !r->bad; i++) {
                struct leaf f = {.rg = P->nrg};
                int16_t cl = 0, cid;
                int ct;
                bool meta = false;
                while ((ct = rb_tr_field(r, &cl, &cid)) > 0) {
                    if (cid == 3 && ct == RB_TC_STRUCT) {
                        column_meta(P, &f);
                        meta = true;
                    } else {
                        rb_tr_skip(r, ct);
                    }
                }
                if (!meta)
                    r->bad = true; /* a chunk in another file (file_path) has no metadata here */
                if (!r->bad && add_leaf(P, &f))
                    return -ENOMEM;
            }
        } else if (id == 3 && t == RB_TC_I64) {
            rows = rb_tr_int(r);
        } else {
            rb_tr_skip(r, t);
        }
    }
    if (r->bad || rows < 0 || P->nleaf == first)
        return -EINVAL;
    P->rg_rows[P->nrg++] = (uint64_t)rows;
    return 0;
}

/* FileMetaData: num_rows and the row groups (the schema is what the chunks' paths say). */
static int file_meta(struct parse *P)
{
    struct rb_tr *r = &P->r;
    int16_t last = 0, id;
    int t, rc = 0;
    bool have_rows = false;
    while (!rc && (t = rb_tr_field(r, &last, &id)) > 0) {
        if (id == 3 && t == RB_TC_I64) {
            P->rows = (uint64_t)rb_tr_int(r);
            have_rows = true;
        } else if (id == 4 && t == RB_TC_LIST) {
            int et;
            uint64_t n;
            if (P->rg_rows || rb_tr_list(r, &et, &n) || et != RB_TC_STRUCT || !(P->rg_rows = calloc(n ? n : 1, sizeof *P->rg_rows)))
                return r->bad || P->rg_rows ? -EINVAL : -ENOMEM;
            for (uint64_t i = 0; i < n && !rc; i++)
                rc = row_group(P);
        } else {
            rb_tr_skip(r, t);
        }
    }
    return rc ? rc : r->bad || !have_rows || !P->rg_rows ? -EINVAL : 0;
}

static bool name_is(const struct leaf *f, const char *name)
{
    return strlen(name) == f->name_len && memcmp(name, f->name, f->name_len) == 0;
}

/* The projected columns: cols, or every top-level column of row group 0 in file order (pointers into the footer). */
static int projection(const struct parse *P, const char *const *cols, size_t ncols, char ***out, size_t *n)
{
    char **names = calloc(P->nleaf ? P->nleaf : 1, sizeof *names);
    if (!names)
        return -ENOMEM;
    *n = 0;
    for (size_t i = 0; cols && i < ncols; i++)
        names[(*n)++] = (char *)cols[i];
    for (size_t i = 0; !cols && i < P->nleaf && P->leaf[i].rg == 0; i++) {
        bool seen = *n && P->leaf[i].name_len == strlen(names[*n - 1]) &&
                    memcmp(names[*n - 1], P->leaf[i].name, P->leaf[i].name_len) == 0;
        if (seen)
            continue;
        if (!(names[*n] = strndup((const char *)P->leaf[i].name, P->leaf[i].name_len))) {
            for (size_t k = 0; k < *n; k++)
                free(names[k]);
            free(names);
            return -ENOMEM;
        }
        (*n)++;
    }
    *out = names;
    return 0;
}

/* Fills ix's ranges from the leaves: each projected column's span in each row group. */
static int project(const struct parse *P, char *const *names, uint64_t data_end, struct rb_pq_index *ix, char *err,
                   size_t errlen)
{
    for (uint64_t k = 0; k < ix->nrg * ix->nproj; k++)
        ix->off[k] = UINT64_MAX;
    for (size_t i = 0; i < P->nleaf; i++) {
        const struct leaf *f = &P->leaf[i];
        for (uint64_t p = 0; p < ix->nproj; p++) {
            if (!name_is(f, names[p]))
                continue;
            uint64_t *o = &ix->off[f->rg * ix->nproj + p], *l = &ix->len[f->rg * ix->nproj + p];
            if (f->bytes > data_end || f->start > data_end - f->bytes) {
                snprintf(err, errlen, "row group %" PRIu64 "'s column \"%s\" (bytes %" PRIu64 " to %" PRIu64 ") lies "
                         "past the column data's end (byte %" PRIu64 "): a row group past the end of the file",
                         f->rg, names[p], f->start, f->start + f->bytes, data_end);
                return -EINVAL;
            }
            uint64_t end = *o == UINT64_MAX ? 0 : *o + *l;
            if (*o == UINT64_MAX || f->start < *o)
                *o = f->start;
            if (f->start + f->bytes > end)
                end = f->start + f->bytes;
            *l = end - *o;
        }
    }
    for (uint64_t k = 0; k < ix->nrg * ix->nproj; k++)
        if (ix->off[k] == UINT64_MAX) {
            snprintf(err, errlen, "no column \"%s\"%s", names[k % ix->nproj],
                     k / ix->nproj ? " in every row group" : " (the footer's schema has no such top-level column)");
            return -EINVAL;
        }
    return 0;
}

int rb_pq_index_parse(const uint8_t *footer, size_t len, uint64_t data_end, const char *const *cols, size_t ncols,
                      struct rb_pq_index *out, char *err, size_t errlen)
{
    struct parse P = {.r = {footer, footer + len, false}};
    memset(out, 0, sizeof *out);
    int rc = file_meta(&P);
    if (rc == -EINVAL)
        snprintf(err, errlen, "its footer is not Parquet FileMetaData (Thrift compact) with row groups");
    uint64_t sum = 0;
    for (uint64_t g = 0; !rc && g < P.nrg; g++)
        sum += P.rg_rows[g];
    if (!rc && sum != P.rows) {
        snprintf(err, errlen, "its row groups hold %" PRIu64 " rows, its footer says %" PRIu64, sum, P.rows);
        rc = -EINVAL;
    }
    char **names = NULL;
    size_t nproj = 0;
    if (!rc)
        rc = projection(&P, cols, ncols, &names, &nproj);
    if (!rc) {
        out->rows = P.rows;
        out->nrg = P.nrg;
        out->nproj = nproj;
        out->rg_first = calloc(P.nrg + 1, sizeof *out->rg_first);
        size_t cells = P.nrg * nproj > 0 ? P.nrg * nproj : 1;
        out->off = calloc(cells, sizeof *out->off);
        out->len = calloc(cells, sizeof *out->len);
        rc = !out->rg_first || !out->off || !out->len ? -ENOMEM : 0;
        for (uint64_t g = 0; !rc && g < P.nrg; g++)
            out->rg_first[g + 1] = out->rg_first[g] + P.rg_rows[g];
        if (!rc)
            rc = project(&P, names, data_end, out, err, errlen);
    }
    for (size_t k = 0; !cols && names && k < nproj; k++)
        free(names[k]);
    free(names);
    free(P.rg_rows);
    free(P.leaf);
    if (rc)
        rb_pq_index_free(out);
    return rc;
}

void rb_pq_index_free(struct rb_pq_index *ix)
{
    free(ix->rg_first);
    free(ix->off);
    free(ix->len);
    memset(ix, 0, sizeof *ix);
}
