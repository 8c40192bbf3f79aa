/* load train's file formats: the Thrift compact protocol, and Parquet files written from a template and read by footer. */
#ifndef RB_FMT_INT_H
#define RB_FMT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "railbench/buf.h"

/*
 * Thread-safety: a writer or reader is one caller's; a Parquet layout is
 * read-only once built (rb_pq_fill may run on every thread at once).
 */

/* ---- Thrift compact protocol (the encoding of Parquet's footer and page headers) ---- */

/* Compact type codes of a field header or list header. */
enum { RB_TC_STOP = 0, RB_TC_TRUE = 1, RB_TC_FALSE = 2, RB_TC_BYTE = 3, RB_TC_I16 = 4, RB_TC_I32 = 5, RB_TC_I64 = 6,
       RB_TC_DOUBLE = 7, RB_TC_BINARY = 8, RB_TC_LIST = 9, RB_TC_SET = 10, RB_TC_MAP = 11, RB_TC_STRUCT = 12 };

#define RB_TW_DEPTH 16

/* A writer: into b (zero-initialise it); each open struct remembers its last field id (deltas). b.oom on failure. */
struct rb_tw {
    struct rb_buf b;
    int16_t last[RB_TW_DEPTH];
    unsigned depth;
};

/* Unsigned LEB128 varint. */
void rb_tw_varint(struct rb_buf *b, uint64_t v);
/* A field of a scalar type: i32/i64 are zigzag varints; a string is its length then its bytes. */
void rb_tw_i32(struct rb_tw *w, int16_t id, int32_t v);
void rb_tw_i64(struct rb_tw *w, int16_t id, int64_t v);
void rb_tw_string(struct rb_tw *w, int16_t id, const char *s);
/* A struct field: its fields follow, then rb_tw_end. */
void rb_tw_struct(struct rb_tw *w, int16_t id);
/* Ends the innermost struct (its stop byte). */
void rb_tw_end(struct rb_tw *w);
/* A list field of n elements of type etype; then n elements (rb_tw_elem_*). */
void rb_tw_list(struct rb_tw *w, int16_t id, int etype, uint64_t n);
/* A list element: a struct (its fields, then rb_tw_end), an i32, a string. */
void rb_tw_elem_struct(struct rb_tw *w);
void rb_tw_elem_i32(struct rb_tw *w, int32_t v);
void rb_tw_elem_string(struct rb_tw *w, const char *s);

/* A reader over [p, end); bad is set (and stays) on anything malformed or cut short. */
struct rb_tr {
    const uint8_t *p, *end;
    bool bad;
};

/* The next field header of a struct whose last id is *last: its type (RB_TC_STOP at the end, -1 when bad), *id. */
int rb_tr_field(struct rb_tr *r, int16_t *last, int16_t *id);
/* A zigzag varint (i16, i32, i64). */
int64_t rb_tr_int(struct rb_tr *r);
/* A binary or string: *p and *len point into the input. Returns 0 or -1. */
int rb_tr_binary(struct rb_tr *r, const uint8_t **p, uint64_t *len);
/* A list or set header: element type and count. Returns 0 or -1. */
int rb_tr_list(struct rb_tr *r, int *etype, uint64_t *n);
/* Skips a value of type (a struct or list with what it holds). */
void rb_tr_skip(struct rb_tr *r, int type);

/* ---- npz files as load train writes them ---- */

/*
 * A stored (uncompressed) zip of two members, as numpy.savez writes DLIO's
 * npz samples: x.npy, uint8 of shape (d1, d2, spo) with d1 x d2 the file's
 * sample bytes s (d1 the largest divisor of s not above its square root),
 * its data the plain payload of the file's key from byte 0; and y.npy, spo
 * int64 labels, all 0. NumPy format 1.0 headers; local headers, central
 * directory and CRC-32s correct; no ZIP64 (a file under 4 GiB). A file of
 * raw_bytes (rb_train_object_bytes: spo samples) holds s = raw_bytes / spo.
 */
struct rb_npz_spec {
    uint64_t spo, mean, stdev;  /* samples a file; a sample's bytes, mean and stdev (--sample-size) */
};

/* Bytes of the file holding raw_bytes of samples. */
uint64_t rb_npz_file_bytes(const struct rb_npz_spec *s, uint64_t raw_bytes);
/* The len bytes at offset of the file of key (a payload layout; spec a struct rb_npz_spec). Thread-safe. */
void rb_npz_fill(const void *spec, uint64_t key, uint64_t offset, void *buf, size_t len);
/* CRC-32 (zlib's) of the first n bytes of key's plain payload, a 4 KiB block in a few table look-ups. */
uint32_t rb_npz_payload_crc(uint64_t key, uint64_t n);
/* A NumPy format 1.0 header of descr and shape (ndim 1 to 3) into out (at most 128 bytes); its length. */
size_t rb_npy_header(unsigned char *out, const char *descr, const uint64_t *shape, int ndim);

/*
 * What a loader does with an npz it read (--decode): walks the stored zip's local headers, parses each member's npy
 * header (its dtype size and shape) and reads every byte of its array (their sum into *sum). 0, or -EINVAL when
 * b is not a stored zip of whole npy arrays.
 */
int rb_npz_touch(const unsigned char *b, size_t n, uint64_t *arrays, uint64_t *array_bytes, uint64_t *sum);

/* ---- JPEG files as load train writes them ---- */

/*
 * Baseline JPEGs (libjpeg-turbo, quality 90, 4:2:0) of exactly the drawn
 * size, one image a file. A pool of 64 MCU rows of seeded pixels (the plain
 * payload of a key from --seed) is coded once with a restart marker after
 * every row, so each row's entropy-coded bytes stand alone; a file is the
 * coder's headers (its SOF0 height set to its rows), its rows drawn from the
 * pool by its key, restart markers between them, and COM segments that
 * carry the file's own payload and make up the size to the byte. The width
 * makes a square-ish image of the mean size; the rows, as many as fit.
 */
struct rb_jpeg_spec {
    uint64_t seed, mean, stdev; /* the pool's seed; a file's bytes, mean and stdev (--sample-size) */
};
struct rb_jpeg_layout;

/* Codes the pool for spec. 0, -EINVAL with one line in err (a size below one row), or -ENOMEM. */
int rb_jpeg_layout_new(const struct rb_jpeg_spec *s, struct rb_jpeg_layout **out, char *err, size_t errlen);
void rb_jpeg_layout_free(struct rb_jpeg_layout *l);
/* The image's width in pixels. */
unsigned rb_jpeg_width(const struct rb_jpeg_layout *l);
/* Bytes of the file of key (the drawn size, or one row's file when the draw is below it); *rows its MCU rows. */
uint64_t rb_jpeg_file_bytes(const struct rb_jpeg_layout *l, uint64_t key, uint64_t *rows);
/* The least bytes of a file (one row); a file holding raw_bytes is that many, or the least when fewer. */
uint64_t rb_jpeg_min_bytes(const struct rb_jpeg_layout *l);
uint64_t rb_jpeg_bytes_of(const struct rb_jpeg_layout *l, uint64_t raw_bytes);
/* The len bytes at offset of the file of key (a payload layout; layout a struct rb_jpeg_layout). Thread-safe. */
void rb_jpeg_fill(const void *layout, uint64_t key, uint64_t offset, void *buf, size_t len);

/* Decodes a whole JPEG (--decode): its size, or -EINVAL for an error or a corrupt-data warning of libjpeg. */
int rb_jpeg_decode(const unsigned char *b, size_t n, unsigned *width, unsigned *height);

/* ---- Parquet files as load train writes them ---- */

/*
 * A file holds rows rows in row groups of rg_rows (the last may be
 * shorter), each row group one column chunk per column, each chunk data
 * pages v1 of about 1 MiB, PLAIN and uncompressed, the footer FileMetaData
 * in Thrift compact, "PAR1" at both ends. Scalar schema: ncols required
 * columns c0, c1, ... sharing row_bytes (the first row_bytes % ncols one
 * byte wider): 4 bytes FLOAT, 8 DOUBLE, else FIXED_LEN_BYTE_ARRAY. List
 * schema: ncols required LIST<FLOAT> columns c0, ... of a fixed length per
 * row (row_bytes / 4 floats shared out the same way). The values of column
 * c are the plain payload of the file's key from byte base(c) = rows x the
 * row bytes of the columns before c, row after row (a FLOAT's bit 30 and a
 * DOUBLE's bit 62 cleared: never NaN or infinite); everything else is the
 * same in every file of one layout.
 */
enum { RB_PQ_SCALAR, RB_PQ_LIST };

struct rb_pq_spec {
    int kind;                   /* RB_PQ_SCALAR or RB_PQ_LIST */
    uint64_t ncols, row_bytes, rows, rg_rows;
};

struct rb_pq_layout;

/* Builds the layout of spec; one line in err when it cannot be (a column wider than a page, ...). 0 or -errno. */
int rb_pq_layout_new(const struct rb_pq_spec *spec, struct rb_pq_layout **out, char *err, size_t errlen);
void rb_pq_layout_free(struct rb_pq_layout *l);
/* Bytes of every file of the layout. */
uint64_t rb_pq_file_bytes(const struct rb_pq_layout *l);
/* Column c's name ("c<c>"), its bytes per row; its values per row (1 for a scalar). */
void rb_pq_column(const struct rb_pq_layout *l, uint64_t c, char name[24], uint64_t *row_bytes, uint64_t *per_row);
/* The len bytes at offset of the file of key (a payload layout's fill: struct rb_payload_layout). Pure. */
void rb_pq_fill(const void *layout, uint64_t key, uint64_t offset, void *buf, size_t len);

/* The footer length the last 8 bytes of a file of file_bytes state. 0, or -EINVAL with one line in err. */
int rb_pq_footer_len(const uint8_t tail[8], uint64_t file_bytes, uint64_t *len, char *err, size_t errlen);

/*
 * A file's footer, parsed down to what a projected read needs: row groups
 * (their first row and rows), and for each the byte range of each projected
 * column's chunk (all its leaves: a LIST column is one leaf).
 */
struct rb_pq_index {
    uint64_t rows, nrg, nproj;
    uint64_t *rg_first;             /* nrg + 1: row group g holds rows [rg_first[g], rg_first[g + 1]) */
    uint64_t *off, *len;            /* nrg x nproj: the chunk of projected column p in row group g at g * nproj + p */
};

/*
 * Parses footer (len bytes, ending at byte data_end of the file: where the
 * column chunks must end) for the columns cols (ncols names; NULL: every
 * column, in file order). 0, or -EINVAL (not FileMetaData, a column not
 * there, a chunk past data_end) with one line in err, or -ENOMEM.
 */
int rb_pq_index_parse(const uint8_t *footer, size_t len, uint64_t data_end, const char *const *cols, size_t ncols,
                      struct rb_pq_index *out, char *err, size_t errlen);
void rb_pq_index_free(struct rb_pq_index *ix);

#endif
