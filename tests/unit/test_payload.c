/* Unit tests for loader/engine/payload.c and tarshard.c: determinism, seekability, verification, seeded sizes, tar shards. */
#define _POSIX_C_SOURCE 200809L

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

#define LEN 4099 /* not a multiple of 8: tails are exercised */

static void test_deterministic_and_distinct(void **state)
{
    (void)state;
    unsigned char a[LEN], b[LEN];
    uint64_t k = rb_payload_key(1, "obj-00000001");
    assert_int_equal(k, rb_payload_key(1, "obj-00000001"));
    assert_int_not_equal(k, rb_payload_key(2, "obj-00000001"));
    assert_int_not_equal(k, rb_payload_key(1, "obj-00000002"));
    rb_payload_fill(k, 0, a, LEN);
    rb_payload_fill(k, 0, b, LEN);
    assert_memory_equal(a, b, LEN);
    rb_payload_fill(rb_payload_key(1, "obj-00000002"), 0, b, LEN);
    assert_memory_not_equal(a, b, LEN);
    /* Not zeros, and every byte value shows up in 4 KiB of it. */
    int seen[256] = {0}, distinct = 0;
    for (size_t i = 0; i < LEN; i++)
        if (!seen[a[i]]++)
            distinct++;
    assert_true(distinct > 200);
}

/* Any offset and length gives the same bytes as the matching slice of one long fill. */
static void test_seekable(void **state)
{
    (void)state;
    unsigned char whole[LEN], part[LEN];
    uint64_t k = rb_payload_key(42, "x");
    rb_payload_fill(k, 0, whole, LEN);
    for (size_t off = 0; off < 40; off++)
        for (size_t len = 0; len < 40 && off + len <= LEN; len++) {
            memset(part, 0xa5, sizeof part);
            rb_payload_fill(k, off, part, len);
            assert_memory_equal(part, whole + off, len);
            assert_int_equal(part[len], 0xa5); /* never writes past len */
        }
    rb_payload_fill(k, 1001, part, LEN - 1001);
    assert_memory_equal(part, whole + 1001, LEN - 1001);
}

static void test_verify(void **state)
{
    (void)state;
    unsigned char buf[LEN];
    uint64_t k = rb_payload_key(7, "name");
    rb_payload_fill(k, 123, buf, LEN);
    assert_int_equal(rb_payload_verify(k, 123, buf, LEN), LEN);
    /* Split anywhere: the pieces verify at their own offsets (a body arrives in chunks). */
    assert_int_equal(rb_payload_verify(k, 123, buf, 5), 5);
    assert_int_equal(rb_payload_verify(k, 128, buf + 5, LEN - 5), LEN - 5);
    buf[2000] ^= 1;
    assert_int_equal(rb_payload_verify(k, 123, buf, LEN), 2000);
    buf[2000] ^= 1;
    assert_int_equal(rb_payload_verify(k, 124, buf, LEN), 0); /* off by one byte: mismatch at once */
    assert_int_equal(rb_payload_verify(k + 1, 123, buf, LEN) < 8, 1);
}

static void test_sizes(void **state)
{
    (void)state;
    assert_int_equal(rb_payload_size(1, "a", 4096, 4096), 4096);
    assert_int_equal(rb_payload_size(1, "a", 4096, 0), 4096);
    uint64_t lo = UINT64_MAX, hi = 0;
    char name[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(name, sizeof name, "obj-%d", i);
        uint64_t s = rb_payload_size(9, name, 1000, 2000);
        assert_in_range(s, 1000, 2000);
        assert_int_equal(s, rb_payload_size(9, name, 1000, 2000));
        lo = s < lo ? s : lo;
        hi = s > hi ? s : hi;
    }
    assert_true(lo < 1050 && hi > 1950); /* spread over the range */
}

/* A shard of 3 members of 1000 bytes: made in odd pieces equals made whole; headers are ustar; data the plain payload. */
static void test_tar_shard(void **state)
{
    (void)state;
    enum { N = 3, M = 1000 };
    uint64_t key = rb_payload_key(1, "shard-0"), bytes = rb_tar_shard_bytes(N, M);
    assert_int_equal(bytes, N * (512 + 1024) + 1024);
    unsigned char *whole = malloc(bytes), *parts = malloc(bytes), plain[N * M];
    assert_non_null(whole);
    assert_non_null(parts);
    rb_tar_fill(key, N, M, 0, whole, bytes);
    for (uint64_t off = 0, step = 1; off < bytes; step = step * 7 % 1031 + 1) {
        size_t n = off + step > bytes ? (size_t)(bytes - off) : (size_t)step;
        rb_tar_fill(key, N, M, off, parts + off, n);
        off += n;
    }
    assert_memory_equal(whole, parts, bytes);
    char name[32];
    snprintf(name, sizeof name, "%016llx_000001.bin", (unsigned long long)key);
    assert_string_equal((char *)whole + 1536, name);
    assert_memory_equal(whole + 1536 + 257, "ustar\0" "00", 8);
    assert_string_equal((char *)whole + 1536 + 124, "00000001750"); /* 1000 in octal */
    rb_payload_plain_fill(key, 0, plain, sizeof plain);
    for (unsigned i = 0; i < N; i++)
        assert_memory_equal(whole + i * 1536 + 512, plain + i * M, M);
    assert_int_equal(rb_tar_verify(key, N, M, 0, whole, bytes), bytes);
    whole[1536 + 512 + 17] ^= 1;
    assert_int_equal(rb_tar_verify(key, N, M, 100, whole + 100, bytes - 100), 1536 + 512 + 17 - 100);
    whole[1536 + 512 + 17] ^= 1;

    free(whole);
    free(parts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic_and_distinct),
        cmocka_unit_test(test_seekable),
        cmocka_unit_test(test_verify),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_tar_shard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
