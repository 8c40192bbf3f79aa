/* Unit tests for loader/engine/tarshard.c's reading side: header blocks, and a shard read as it streams. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "payload_int.h"
#include "tarshard_int.h"

enum { N = 3, M = 1000 };

static unsigned char *shard(uint64_t *bytes)
{
    *bytes = rb_tar_shard_bytes(N, M);
    unsigned char *b = malloc(*bytes);
    assert_non_null(b);
    rb_tar_fill(rb_payload_key(1, "shard-0"), N, M, 0, b, *bytes);
    return b;
}

/* Each member's header gives its size; the end block is 1; a flipped byte fails the checksum. */
static void test_header(void **state)
{
    (void)state;
    uint64_t bytes, size = 0;
    unsigned char *b = shard(&bytes);
    bool regular = false;
    assert_int_equal(rb_tar_header(b + 1536, &size, &regular), 0);
    assert_int_equal(size, M);
    assert_true(regular);
    assert_int_equal(rb_tar_entry_bytes(M), 1536);
    assert_int_equal(rb_tar_header(b + 3 * 1536, &size, &regular), 1);
    b[1536 + 3] ^= 1;
    assert_int_equal(rb_tar_header(b + 1536, &size, &regular), -EINVAL);
    /* GNU base-256 sizes (8 GiB and more), and a directory entry that is no sample. */
    b[1536 + 3] ^= 1;
    unsigned char h[512];
    memcpy(h, b, 512);
    memset(h + 124, 0, 12);
    h[124] = 0x80;
    h[131] = 2; /* 2 << 32 = 8 GiB */
    h[156] = '5';
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned k = 0; k < 512; k++)
        sum += h[k];
    snprintf((char *)h + 148, 8, "%06o", sum);
    assert_int_equal(rb_tar_header(h, &size, &regular), 0);
    assert_int_equal(size, 8ull << 30);
    assert_false(regular);
    free(b);
}

/* Fed in odd pieces, a shard gives 3 samples of 1000 bytes at the times their last bytes came, and ends well. */
static void test_stream(void **state)
{
    (void)state;
    uint64_t bytes;
    unsigned char *b = shard(&bytes);
    struct rb_stats *st = rb_stats_new();
    struct rb_tar_stream s;
    rb_tar_stream_start(&s, 100);
    uint64_t now = 100;
    for (uint64_t off = 0, step = 1; off < bytes; step = step * 7 % 1031 + 1) {
        size_t n = off + step > bytes ? (size_t)(bytes - off) : (size_t)step;
        now += 10;
        assert_int_equal(rb_tar_stream_feed(&s, b + off, n, now, st), 0);
        off += n;
    }
    assert_int_equal(rb_tar_stream_end(&s), 0);
    assert_int_equal(s.members, N);
    assert_int_equal(s.member_bytes, N * M);
    assert_int_equal(st->ops, N);
    assert_int_equal(st->bytes, N * M);
    assert_int_equal(st->lat.count, N);

    /* Cut inside the second member: a truncated shard, after one sample. */
    rb_tar_stream_start(&s, 0);
    assert_int_equal(rb_tar_stream_feed(&s, b, 1536 + 700, 1, NULL), 0);
    assert_int_equal(rb_tar_stream_end(&s), -EBADMSG);
    assert_int_equal(s.members, 1);
    assert_non_null(strstr(s.why, "truncated"));
    /* Ending at a header's boundary without the end blocks is what GNU tar accepts too. */
    rb_tar_stream_start(&s, 0);
    assert_int_equal(rb_tar_stream_feed(&s, b, 2 * 1536, 1, NULL), 0);
    assert_int_equal(rb_tar_stream_end(&s), 0);
    /* A corrupt second header: found at its first byte. */
    b[1536 + 3] ^= 1;
    rb_tar_stream_start(&s, 0);
    assert_int_equal(rb_tar_stream_feed(&s, b, bytes, 1, NULL), -EBADMSG);
    assert_int_equal(s.bad_at, 1536);
    assert_int_equal(rb_tar_stream_end(&s), -EBADMSG);
    /* Not tar at all, and an empty body. */
    memset(b, 'x', 1024);
    rb_tar_stream_start(&s, 0);
    assert_int_equal(rb_tar_stream_feed(&s, b, 1024, 1, NULL), -EBADMSG);
    rb_tar_stream_start(&s, 0);
    assert_int_equal(rb_tar_stream_end(&s), -EBADMSG);
    rb_stats_free(st);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header),
        cmocka_unit_test(test_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
