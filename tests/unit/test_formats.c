/* Unit tests of load train's formats: Thrift compact, Parquet files built and their footer read, npz files and their CRCs, JPEGs decoded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <zlib.h>

#include "../engine/payload_int.h"
#include "fmt_int.h"
#include "train_int.h"

/* ---- Thrift compact ---- */

/* Bytes worked out by hand from the compact protocol's specification. */
static void test_thrift_bytes(void **state)
{
    (void)state;
    struct rb_tw w = {0};
    rb_tw_i32(&w, 1, 1);        /* delta 1, type i32 (5): 0x15; zigzag(1) = 2 */
    rb_tw_i64(&w, 20, -1);      /* delta 19 > 15: type byte 0x06, zigzag(20) = 40 = 0x28; zigzag(-1) = 1 */
    rb_tw_string(&w, 21, "ab"); /* delta 1, binary (8): 0x18, length 2, "ab" */
    rb_tw_list(&w, 22, RB_TC_I32, 2); /* delta 1, list (9): 0x19; 2 << 4 | 5 = 0x25 */
    rb_tw_elem_i32(&w, 3);      /* 6 */
    rb_tw_elem_i32(&w, -3);     /* 5 */
    rb_tw_struct(&w, 23);       /* 0x1c */
    rb_tw_i32(&w, 1, 300);      /* 0x15; zigzag(300) = 600 = 0xd8 0x04 */
    rb_tw_end(&w);              /* 0x00 */
    rb_tw_end(&w);              /* 0x00 */
    const uint8_t want[] = {0x15, 0x02, 0x06, 0x28, 0x01, 0x18, 0x02, 'a', 'b', 0x19, 0x25, 0x06, 0x05,
                            0x1c, 0x15, 0xd8, 0x04, 0x00, 0x00};
    assert_false(w.b.oom);
    assert_int_equal(w.b.len, sizeof want);
    assert_memory_equal(w.b.s, want, sizeof want);
    rb_buf_free(&w.b);
}

static void test_thrift_round_trip(void **state)
{
    (void)state;
    struct rb_tw w = {0};
    rb_tw_i64(&w, 3, INT64_MIN);
    rb_tw_list(&w, 4, RB_TC_STRUCT, 40); /* 40 elements: the long list header */
    for (int i = 0; i < 40; i++) {
        rb_tw_elem_struct(&w);
        rb_tw_i32(&w, 7, i * 1000);
        rb_tw_end(&w);
    }
    rb_tw_string(&w, 300, "far");
    rb_tw_end(&w);

    struct rb_tr r = {(const uint8_t *)w.b.s, (const uint8_t *)w.b.s + w.b.len, false};
    int16_t last = 0, id;
    assert_int_equal(rb_tr_field(&r, &last, &id), RB_TC_I64);
    assert_int_equal(id, 3);
    assert_true(rb_tr_int(&r) == INT64_MIN);
    assert_int_equal(rb_tr_field(&r, &last, &id), RB_TC_LIST);
    int et;
    uint64_t n;
    assert_int_equal(rb_tr_list(&r, &et, &n), 0);
    assert_int_equal(et, RB_TC_STRUCT);
    assert_int_equal(n, 40);
    for (int i = 0; i < 40; i++) {
        int16_t el = 0, eid;
        assert_int_equal(rb_tr_field(&r, &el, &eid), RB_TC_I32);
        assert_int_equal(eid, 7);
        assert_int_equal(rb_tr_int(&r), i * 1000);
        assert_int_equal(rb_tr_field(&r, &el, &eid), RB_TC_STOP);
    }
    assert_int_equal(rb_tr_field(&r, &last, &id), RB_TC_BINARY);
    assert_int_equal(id, 300);
    const uint8_t *p;
    uint64_t len;
    assert_int_equal(rb_tr_binary(&r, &p, &len), 0);
    assert_int_equal(len, 3);
    assert_memory_equal(p, "far", 3);
    assert_int_equal(rb_tr_field(&r, &last, &id), RB_TC_STOP);
    assert_ptr_equal(r.p, r.end);

    /* Skipping the whole struct lands on its end; every cut-short prefix is bad, never read past. */
    struct rb_tr s = {(const uint8_t *)w.b.s, (const uint8_t *)w.b.s + w.b.len, false};
    rb_tr_skip(&s, RB_TC_STRUCT);
    assert_false(s.bad);
    assert_ptr_equal(s.p, s.end);
    for (size_t cut = 0; cut < w.b.len; cut++) {
        struct rb_tr t = {(const uint8_t *)w.b.s, (const uint8_t *)w.b.s + cut, false};
        rb_tr_skip(&t, RB_TC_STRUCT);
        assert_true(t.bad);
        assert_true(t.p <= t.end);
    }
    rb_buf_free(&w.b);
}

static void test_thrift_malformed(void **state)
{
    (void)state;
    const uint8_t varint[] = {0x15, 0xff, 0xff}; /* a varint that never ends */
    struct rb_tr r = {varint, varint + sizeof varint, false};
    rb_tr_skip(&r, RB_TC_STRUCT);
    assert_true(r.bad);
    const uint8_t list[] = {0x19, 0xf5, 0x80, 0x80, 0x04}; /* a list of 65536 i32 in 0 bytes */
    r = (struct rb_tr){list, list + sizeof list, false};
    rb_tr_skip(&r, RB_TC_STRUCT);
    assert_true(r.bad);
    const uint8_t type[] = {0x1d}; /* type 13: none */
    r = (struct rb_tr){type, type + 1, false};
    int16_t last = 0, id;
    assert_int_equal(rb_tr_field(&r, &last, &id), -1);
}

/* ---- Parquet ---- */

static uint8_t *whole_file(const struct rb_pq_layout *l, uint64_t key)
{
    uint64_t n = rb_pq_file_bytes(l);
    uint8_t *f = malloc(n);
    assert_non_null(f);
    rb_pq_fill(l, key, 0, f, n);
    return f;
}

/* The footer of a built file parsed back: row groups, chunks, projection, the errors. */
static void test_parquet_scalar(void **state)
{
    (void)state;
    /* 10 bytes a row over 3 columns: c0 4 bytes (FLOAT), c1 and c2 3 (FIXED_LEN_BYTE_ARRAY); rows 5 in groups of 2. */
    struct rb_pq_spec s = {RB_PQ_SCALAR, 3, 10, 5, 2};
    struct rb_pq_layout *l;
    char err[256] = "";
    assert_int_equal(rb_pq_layout_new(&s, &l, err, sizeof err), 0);
    char name[24];
    uint64_t rb, per;
    rb_pq_column(l, 1, name, &rb, &per);
    assert_string_equal(name, "c1");
    assert_int_equal(rb, 3);
    assert_int_equal(per, 1);
    uint64_t n = rb_pq_file_bytes(l), key = 0x1234;
    uint8_t *f = whole_file(l, key);
    assert_memory_equal(f, "PAR1", 4);
    assert_memory_equal(f + n - 4, "PAR1", 4);
    uint64_t flen;
    assert_int_equal(rb_pq_footer_len(f + n - 8, n, &flen, err, sizeof err), 0);

    /* Filling any range gives the bytes of the whole file there (seekable, as PUT and --verify need). */
    uint8_t part[64];
    for (uint64_t off = 0; off + 1 < n; off += 7) {
        size_t len = n - off < sizeof part ? (size_t)(n - off) : sizeof part;
        rb_pq_fill(l, key, off, part, len);
        assert_memory_equal(part, f + off, len);
    }
    /* Other keys differ in the values, not in the layout. */
    uint8_t *g = whole_file(l, key + 1);
    assert_memory_equal(g + n - 8 - flen, f + n - 8 - flen, flen + 8);
    assert_memory_not_equal(g, f, n);
    free(g);

    struct rb_pq_index ix;
    uint64_t data_end = n - 8 - flen;
    assert_int_equal(rb_pq_index_parse(f + data_end, flen, data_end, NULL, 0, &ix, err, sizeof err), 0);
    assert_int_equal(ix.rows, 5);
    assert_int_equal(ix.nrg, 3);
    assert_int_equal(ix.nproj, 3);
    assert_int_equal(ix.rg_first[1], 2);
    assert_int_equal(ix.rg_first[2], 4);
    assert_int_equal(ix.rg_first[3], 5);
    /* Chunks tile the data: each starts where the last ended, from byte 4 to the footer. */
    uint64_t at = 4;
    for (uint64_t k = 0; k < ix.nrg * ix.nproj; k++) {
        assert_int_equal(ix.off[k], at);
        at += ix.len[k];
    }
    assert_int_equal(at, data_end);
    /* Row group 1's c0 ends with rows 2 and 3 of c0: the payload at 4 x 2, bit 30 of each float cleared. */
    uint8_t want[8];
    rb_payload_plain_fill(key, 8, want, 8);
    want[3] &= 0xbf;
    want[7] &= 0xbf;
    assert_memory_equal(f + ix.off[3] + ix.len[3] - 8, want, 8);
    /* c2's values start after c0's and c1's of every row: base 5 x 4 + 5 x 3. */
    rb_payload_plain_fill(key, 35, want, 6);
    assert_memory_equal(f + ix.off[2] + ix.len[2] - 6, want, 6);
    rb_pq_index_free(&ix);

    const char *cols[] = {"c2", "c0"};
    assert_int_equal(rb_pq_index_parse(f + data_end, flen, data_end, cols, 2, &ix, err, sizeof err), 0);
    assert_int_equal(ix.nproj, 2);
    /* In the order asked for: c2 of row group 0 lies after its c0, which starts after the magic. */
    assert_int_equal(ix.off[1], 4);
    assert_true(ix.off[0] > ix.off[1] + ix.len[1]);
    assert_int_equal(ix.off[2 * 2] + ix.len[2 * 2], data_end); /* the last row group's c2 ends the data */
    rb_pq_index_free(&ix);
    const char *none[] = {"c0", "nope"};
    assert_int_equal(rb_pq_index_parse(f + data_end, flen, data_end, none, 2, &ix, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "no column \"nope\""));
    /* The chunks past where the data ends (the file cut short before its footer): a row group past the end. */
    assert_int_equal(rb_pq_index_parse(f + data_end, flen, data_end - 10, NULL, 0, &ix, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "past the end"));
    /* A footer cut short, or not Thrift at all. */
    assert_int_equal(rb_pq_index_parse(f + data_end, flen - 5, data_end, NULL, 0, &ix, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "not Parquet FileMetaData"));
    assert_int_equal(rb_pq_footer_len(f + n - 8, flen + 11, &flen, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "truncated footer"));
    const uint8_t notpq[8] = "1234PAR2";
    assert_int_equal(rb_pq_footer_len(notpq, 100, &flen, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "not a Parquet file"));
    free(f);
    rb_pq_layout_free(l);
}

/* A LIST<FLOAT> layout: each chunk's first page header counts rows x list length values; a byte short fails. */
static void test_parquet_list(void **state)
{
    (void)state;
    /* 5 float lists sharing 84 bytes (21 floats): 5 columns of 5, 4, 4, 4, 4; 7 rows in groups of 3. */
    struct rb_pq_spec s = {RB_PQ_LIST, 5, 84, 7, 3};
    struct rb_pq_layout *l;
    char err[256] = "";
    assert_int_equal(rb_pq_layout_new(&s, &l, err, sizeof err), 0);
    uint64_t n = rb_pq_file_bytes(l), flen;
    uint8_t *f = whole_file(l, 99);
    assert_int_equal(rb_pq_footer_len(f + n - 8, n, &flen, err, sizeof err), 0);
    struct rb_pq_index ix;
    const char *cols[] = {"c0"};
    assert_int_equal(rb_pq_index_parse(f + n - 8 - flen, flen, n - 8 - flen, cols, 1, &ix, err, sizeof err), 0);
    assert_int_equal(ix.nrg, 3);
    /* The page header of row group 0's c0: DataPageHeader.num_values (field 5, field 1) = 3 rows x 5. */
    struct rb_tr r = {f + ix.off[0], f + ix.off[0] + ix.len[0], false};
    int16_t last = 0, id;
    int t;
    int64_t num_values = -1;
    while ((t = rb_tr_field(&r, &last, &id)) > 0) {
        if (id == 5 && t == RB_TC_STRUCT) {
            int16_t dl = 0, did;
            assert_int_equal(rb_tr_field(&r, &dl, &did), RB_TC_I32);
            num_values = rb_tr_int(&r);
            rb_tr_skip(&r, RB_TC_STRUCT); /* the rest of it */
        } else {
            rb_tr_skip(&r, t);
        }
    }
    assert_int_equal(num_values, 15);
    /* The last 4 values of the chunk: row 2's c0[1..4], payload bytes 4 x (2 x 5 + 1) on. */
    uint8_t want[16];
    rb_payload_plain_fill(99, 44, want, 16);
    for (int k = 3; k < 16; k += 4)
        want[k] &= 0xbf;
    assert_memory_equal(f + ix.off[0] + ix.len[0] - 16, want, 16);
    rb_pq_index_free(&ix);
    free(f);
    rb_pq_layout_free(l);

    struct rb_pq_spec bad = {RB_PQ_LIST, 5, 82, 7, 3};
    assert_int_equal(rb_pq_layout_new(&bad, &l, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "do not share out"));
}

/* ---- npz ---- */

static uint32_t le32_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The block-wise CRC equals zlib's over the bytes, for whole blocks, partial ones and nothing. */
static void test_npz_payload_crc(void **state)
{
    (void)state;
    const uint64_t sizes[] = {0, 1, 4095, 4096, 4097, 3 * 4096, 100000};
    uint8_t *b = malloc(100000);
    assert_non_null(b);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (uint64_t key = 1; key < 4; key++) {
            rb_payload_plain_fill(key * 0x9e37, 0, b, (size_t)sizes[i]);
            assert_int_equal(rb_npz_payload_crc(key * 0x9e37, sizes[i]), (uint32_t)crc32(0, b, (uInt)sizes[i]));
        }
    free(b);
}

/* NumPy format 1.0: magic, version, length, the dict padded with spaces and a newline to a multiple of 64. */
static void test_npy_header(void **state)
{
    (void)state;
    unsigned char h[128];
    const uint64_t shape[3] = {3, 4, 1}, one[1] = {7};
    size_t n = rb_npy_header(h, "|u1", shape, 3);
    const char want[] = "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 4, 1), }";
    assert_int_equal(n, 128); /* 10 + 64 + 1 is past 64 */
    assert_memory_equal(h, "\x93NUMPY\x01\x00", 8);
    assert_int_equal(h[8] | h[9] << 8, 118);
    assert_memory_equal(h + 10, want, strlen(want));
    for (size_t k = 10 + strlen(want); k < n - 1; k++)
        assert_int_equal(h[k], ' ');
    assert_int_equal(h[n - 1], '\n');
    n = rb_npy_header(h, "<i8", one, 1);
    assert_int_equal(n, 128); /* 10 + 57 + 1 is past 64 too */
    assert_memory_equal(h + 10, "{'descr': '<i8', 'fortran_order': False, 'shape': (7,), }", 46 + 11);
}

/* A file: its size as computed, the zip's records where they belong, its members' CRCs; seekable fill. */
static void test_npz_file(void **state)
{
    (void)state;
    struct rb_npz_spec sp = {2, 5000, 700};
    uint64_t key = 0xabcdef;
    uint64_t raw = rb_train_key_object_bytes(key, sp.spo, sp.mean, sp.stdev), n = rb_npz_file_bytes(&sp, raw);
    uint8_t *f = calloc(1, n + 16);
    assert_non_null(f);
    rb_npz_fill(&sp, key, 0, f, n);
    assert_int_equal(le32_at(f), 0x04034b50);
    assert_memory_equal(f + 30, "x.npy", 5);
    uint32_t xsize = le32_at(f + 18), xcrc = le32_at(f + 14);
    assert_int_equal(xsize, le32_at(f + 22)); /* stored: the same size compressed */
    assert_int_equal((uint32_t)crc32(0, f + 35, xsize), xcrc);
    uint64_t s = raw / sp.spo;
    assert_int_equal(xsize, 128 + s * sp.spo);
    /* x's data: the payload from byte 0. */
    uint8_t want[64];
    rb_payload_plain_fill(key, 0, want, sizeof want);
    assert_memory_equal(f + 35 + 128, want, sizeof want);
    const uint8_t *y = f + 35 + xsize;
    assert_int_equal(le32_at(y), 0x04034b50);
    assert_memory_equal(y + 30, "y.npy", 5);
    assert_int_equal(le32_at(y + 18), 128 + 8 * sp.spo);
    assert_int_equal((uint32_t)crc32(0, y + 35, le32_at(y + 18)), le32_at(y + 14));
    const uint8_t *e = f + n - 22;
    assert_int_equal(le32_at(e), 0x06054b50);
    assert_int_equal(e[8] | e[9] << 8, 2);
    uint32_t cd = le32_at(e + 16);
    assert_int_equal(le32_at(e + 12), 2 * 51);
    assert_int_equal(cd + 2 * 51 + 22, n);
    assert_int_equal(le32_at(f + cd), 0x02014b50);
    assert_int_equal(le32_at(f + cd + 16), xcrc);
    assert_int_equal(le32_at(f + cd + 51 + 42), 35 + xsize); /* y's local header offset */
    /* Read back as --decode does: two arrays, their bytes; a file cut short or another format is not npz. */
    uint64_t arrays, ab, sum;
    assert_int_equal(rb_npz_touch(f, n, &arrays, &ab, &sum), 0);
    assert_int_equal(arrays, 2);
    assert_int_equal(ab, s * sp.spo + 8 * sp.spo);
    assert_int_equal(rb_npz_touch(f, n / 2, &arrays, &ab, &sum), -EINVAL);
    assert_int_equal(rb_npz_touch((const uint8_t *)"PK\x03\x04 not a zip at all, only text", 36, &arrays, &ab, &sum),
                     -EINVAL);
    uint8_t part[97];
    for (uint64_t off = 0; off < n; off += 89) {
        size_t len = n - off < sizeof part ? (size_t)(n - off) : sizeof part;
        rb_npz_fill(&sp, key, off, part, len);
        assert_memory_equal(part, f + off, len);
    }
    free(f);
}

/* ---- JPEG ---- */

static unsigned jpeg_warnings;

static void count_warning(j_common_ptr c, int level)
{
    (void)c;
    if (level < 0)
        jpeg_warnings++; /* libjpeg's corrupt-data warnings (a bad restart marker, data cut short, ...) */
}

/* Decodes with libjpeg: its size, no warning, every COM segment's data back to back into com (*ncom bytes). */
static void decode(const uint8_t *f, uint64_t n, unsigned *w, unsigned *h, uint8_t *com, size_t *ncom)
{
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr jerr;
    d.err = jpeg_std_error(&jerr);
    jerr.emit_message = count_warning;
    jpeg_warnings = 0;
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, f, (unsigned long)n);
    jpeg_save_markers(&d, JPEG_COM, 0xffff);
    assert_int_equal(jpeg_read_header(&d, TRUE), JPEG_HEADER_OK);
    *ncom = 0;
    for (jpeg_saved_marker_ptr m = d.marker_list; m; m = m->next) {
        memcpy(com + *ncom, m->data, m->data_length);
        *ncom += m->data_length;
    }
    jpeg_start_decompress(&d);
    *w = d.output_width;
    *h = d.output_height;
    unsigned char *line = malloc((size_t)d.output_width * d.output_components);
    assert_non_null(line);
    while (d.output_scanline < d.output_height) {
        JSAMPROW r = line;
        jpeg_read_scanlines(&d, &r, 1);
    }
    free(line);
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    assert_int_equal(jpeg_warnings, 0);
}

/* Files of the size asked for, to the byte, that libjpeg decodes without a warning; their COM data the payload. */
static void test_jpeg_files(void **state)
{
    (void)state;
    const uint64_t sizes[] = {322957, 3u << 20}; /* the second needs several COM segments */
    for (size_t i = 0; i < 2; i++) {
        struct rb_jpeg_spec sp = {1, sizes[i], 0};
        struct rb_jpeg_layout *l;
        char err[256] = "";
        assert_int_equal(rb_jpeg_layout_new(&sp, &l, err, sizeof err), 0);
        for (uint64_t key = 5; key < 8; key++) {
            uint64_t rows, n = rb_jpeg_file_bytes(l, key, &rows);
            assert_int_equal(n, sizes[i]);
            uint8_t *f = malloc(n), *com = malloc(n);
            assert_non_null(f);
            assert_non_null(com);
            rb_jpeg_fill(l, key, 0, f, n);
            unsigned w, h;
            size_t ncom;
            decode(f, n, &w, &h, com, &ncom);
            assert_int_equal(w, rb_jpeg_width(l));
            assert_int_equal(h, rows * 16);
            assert_true(ncom > 0 && ncom < n / 10); /* the image is most of the file */
            uint8_t *want = malloc(ncom);
            assert_non_null(want);
            rb_payload_plain_fill(key, 0, want, ncom);
            assert_memory_equal(com, want, ncom);
            free(want);
            /* --decode's decoder: the same size; a file cut short is an error, not a picture. */
            unsigned dw, dh;
            assert_int_equal(rb_jpeg_decode(f, n, &dw, &dh), 0);
            assert_int_equal(dw, w);
            assert_int_equal(dh, h);
            assert_int_equal(rb_jpeg_decode(f, n / 2, &dw, &dh), -EINVAL);
            assert_int_equal(rb_jpeg_decode((const uint8_t *)"not a jpeg", 10, &dw, &dh), -EINVAL);
            /* Any range filled on its own (another key's file filled in between) is the file's bytes there. */
            uint8_t part[4099];
            for (uint64_t off = 0; off < n; off += n / 37 + 1) {
                size_t len = n - off < sizeof part ? (size_t)(n - off) : sizeof part;
                rb_jpeg_fill(l, key + 100, 0, part, 16);
                rb_jpeg_fill(l, key, off, part, len);
                assert_memory_equal(part, f + off, len);
            }
            free(f);
            free(com);
        }
        rb_jpeg_layout_free(l);
    }
    struct rb_jpeg_spec tiny = {1, 600, 0};
    struct rb_jpeg_layout *l;
    char err[256] = "";
    assert_int_equal(rb_jpeg_layout_new(&tiny, &l, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "needs at least"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thrift_bytes),
        cmocka_unit_test(test_thrift_round_trip),
        cmocka_unit_test(test_thrift_malformed),
        cmocka_unit_test(test_parquet_scalar),
        cmocka_unit_test(test_parquet_list),
        cmocka_unit_test(test_npz_payload_crc),
        cmocka_unit_test(test_npy_header),
        cmocka_unit_test(test_npz_file),
        cmocka_unit_test(test_jpeg_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
