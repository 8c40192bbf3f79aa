/* Unit tests for loader/engine/payload.c and tarshard.c: determinism, seekability, verification, sizes, layouts. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "payload_int.h"
#include "railbench/mix.h"
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
    rb_payload_fill(NULL, k, 0, a, LEN);
    rb_payload_fill(NULL, k, 0, b, LEN);
    assert_memory_equal(a, b, LEN);
    rb_payload_fill(NULL, rb_payload_key(1, "obj-00000002"), 0, b, LEN);
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
    rb_payload_fill(NULL, k, 0, whole, LEN);
    for (size_t off = 0; off < 40; off++)
        for (size_t len = 0; len < 40 && off + len <= LEN; len++) {
            memset(part, 0xa5, sizeof part);
            rb_payload_fill(NULL, k, off, part, len);
            assert_memory_equal(part, whole + off, len);
            assert_int_equal(part[len], 0xa5); /* never writes past len */
        }
    rb_payload_fill(NULL, k, 1001, part, LEN - 1001);
    assert_memory_equal(part, whole + 1001, LEN - 1001);
}

static void test_verify(void **state)
{
    (void)state;
    unsigned char buf[LEN];
    uint64_t k = rb_payload_key(7, "name");
    rb_payload_fill(NULL, k, 123, buf, LEN);
    assert_int_equal(rb_payload_verify(NULL, k, 123, buf, LEN), LEN);
    /* Split anywhere: the pieces verify at their own offsets (a body arrives in chunks). */
    assert_int_equal(rb_payload_verify(NULL, k, 123, buf, 5), 5);
    assert_int_equal(rb_payload_verify(NULL, k, 128, buf + 5, LEN - 5), LEN - 5);
    buf[2000] ^= 1;
    assert_int_equal(rb_payload_verify(NULL, k, 123, buf, LEN), 2000);
    buf[2000] ^= 1;
    assert_int_equal(rb_payload_verify(NULL, k, 124, buf, LEN), 0); /* off by one byte: mismatch at once */
    assert_int_equal(rb_payload_verify(NULL, k + 1, 123, buf, LEN) < 8, 1);
}

/*
 * The documented layout (docs/load.md): each 4 KiB block is one fixed pattern XORed with the block's word
 * rb_mix64(key + block * golden), little-endian; so two blocks of an object differ by the XOR of their words.
 */
static void test_layout(void **state)
{
    (void)state;
    enum { B = 4096 };
    unsigned char a[B], b[B], c[B];
    uint64_t k = rb_payload_key(3, "ckpt/model_states");
    rb_payload_fill(NULL, k, 5 * B, a, B);
    rb_payload_fill(NULL, k, 9 * B, b, B);
    rb_payload_fill(NULL, rb_payload_key(3, "other"), 0, c, B);
    uint64_t d = rb_mix64(k + 5 * RB_MIX_GOLDEN) ^ rb_mix64(k + 9 * RB_MIX_GOLDEN);
    for (size_t i = 0; i < B; i++)
        assert_int_equal(a[i] ^ b[i], (unsigned char)(d >> (8 * (i % 8))));
    /* The pattern itself: SplitMix64's stream from "PATTERN", XORed with the block word of key 0, block 0. */
    rb_payload_fill(NULL, 0, 0, c, B);
    uint64_t st = 0x5041545445524eull, m0 = rb_mix64(0);
    for (size_t w = 0; w < B / 8; w++) {
        uint64_t want = rb_mix64_next(&st) ^ m0;
        for (size_t i = 0; i < 8; i++)
            assert_int_equal(c[8 * w + i], (unsigned char)(want >> (8 * i)));
    }
}

/*
 * What --verify must catch in a checkpoint or object read back: a byte flipped, two blocks swapped, a block of
 * another object at the same offset, a block shifted by a few bytes, a block of zeros; each reported at its first byte.
 */
static void test_verify_catches_misplaced_blocks(void **state)
{
    (void)state;
    enum { B = 4096, N = 64 * B, MIB = 16 * B };
    unsigned char *buf = malloc(N), *other = malloc(N), tmp[B];
    assert_non_null(buf);
    assert_non_null(other);
    uint64_t k = rb_payload_key(1, "global_step1/zero_pp_rank_0_mp_rank_00_optim_states");
    uint64_t ko = rb_payload_key(1, "global_step1/zero_pp_rank_1_mp_rank_00_optim_states");
    rb_payload_fill(NULL, k, 0, buf, N);
    rb_payload_fill(NULL, ko, 0, other, N);
    assert_int_equal(rb_payload_verify(NULL, k, 0, buf, N), N);
    /* A flipped byte. */
    buf[3 * B + 77] ^= 0x10;
    assert_int_equal(rb_payload_verify(NULL, k, 0, buf, N), 3 * B + 77);
    buf[3 * B + 77] ^= 0x10;
    /* Two 4 KiB blocks swapped. */
    memcpy(tmp, buf + 7 * B, B);
    memcpy(buf + 7 * B, buf + 12 * B, B);
    memcpy(buf + 12 * B, tmp, B);
    assert_true(rb_payload_verify(NULL, k, 0, buf, N) - 7 * B < 8);
    assert_true(rb_payload_verify(NULL, k, 12 * B, buf + 12 * B, B) < 8);
    rb_payload_fill(NULL, k, 0, buf, N);
    /* Two 1 MiB-sized write blocks swapped (here 64 KiB: the same at any multiple of 4 KiB). */
    unsigned char *big = malloc(MIB);
    assert_non_null(big);
    memcpy(big, buf, MIB);
    memcpy(buf, buf + 2 * MIB, MIB);
    memcpy(buf + 2 * MIB, big, MIB);
    assert_true(rb_payload_verify(NULL, k, 0, buf, N) < 8);
    assert_true(rb_payload_verify(NULL, k, MIB, buf + MIB, N - MIB) - MIB < 8);
    free(big);
    rb_payload_fill(NULL, k, 0, buf, N);
    /* The block at the same offset of another object (a rank's shard in another's file). */
    memcpy(buf + 20 * B, other + 20 * B, B);
    assert_true(rb_payload_verify(NULL, k, 0, buf, N) - 20 * B < 8);
    rb_payload_fill(NULL, k, 0, buf, N);
    /* A block shifted by 8 bytes (and by 1), the rest in place. */
    memmove(buf + 30 * B + 8, buf + 30 * B, B - 8);
    assert_true(rb_payload_verify(NULL, k, 0, buf, N) - (30 * B + 8) < 8);
    rb_payload_fill(NULL, k, 0, buf, N);
    memmove(buf + 31 * B + 1, buf + 31 * B, B - 1);
    assert_true(rb_payload_verify(NULL, k, 0, buf, N) - (31 * B + 1) < 8);
    rb_payload_fill(NULL, k, 0, buf, N);
    /* A block of zeros (a hole). */
    memset(buf + 40 * B, 0, B);
    assert_true(rb_payload_verify(NULL, k, 0, buf, N) - 40 * B < 8);
    free(buf);
    free(other);
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

    /* The shards as a run's payload layout: what every PUT writes and --verify expects; NULL beside it: plain. */
    const struct rb_tar_layout tl = {N, M};
    const struct rb_payload_layout tar = {rb_tar_layout_fill, &tl}, none = {0};
    rb_payload_fill(&tar, key, 700, parts, bytes - 700);
    assert_memory_equal(parts, whole + 700, bytes - 700);
    assert_int_equal(rb_payload_verify(&tar, key, 0, whole, bytes), bytes);
    whole[512 + 5] ^= 0x40; /* member 0's sixth data byte */
    assert_int_equal(rb_payload_verify(&tar, key, 0, whole, bytes), 512 + 5);
    whole[512 + 5] ^= 0x40;
    rb_payload_fill(NULL, key, 0, parts, M);
    assert_memory_equal(parts, plain, M);
    rb_payload_fill(&none, key, 0, parts, M); /* a layout without fill is plain too */
    assert_memory_equal(parts, plain, M);
    assert_int_equal(rb_payload_verify(NULL, key, 0, plain, sizeof plain), sizeof plain);
    assert_int_equal(rb_payload_verify(&none, key, 0, plain, sizeof plain), sizeof plain);
    assert_true(rb_payload_verify(NULL, key, 0, whole, 1024) < 1024);
    assert_true(rb_payload_verify(&tar, key, 0, plain, sizeof plain) < 512); /* a plain body is no shard */

    free(whole);
    free(parts);
}

/* One thread of test_two_layouts_at_once: its layout's bytes of key made and verified, round after round. */
struct layout_run {
    const struct rb_payload_layout *l; /* NULL: plain */
    uint64_t key;
    const unsigned char *want;         /* what the layout gives, made before the threads start */
    size_t len;
    pthread_barrier_t *start;
    unsigned bad;                      /* rounds whose bytes or verdict were not this layout's */
};

static void *layout_run_main(void *arg)
{
    struct layout_run *r = arg;
    unsigned char *got = malloc(r->len);
    pthread_barrier_wait(r->start);
    for (unsigned i = 0; got && i < 2000; i++) {
        rb_payload_fill(r->l, r->key, (uint64_t)i % 7, got, r->len - 7);
        bool same = memcmp(got, r->want + i % 7, r->len - 7) == 0;
        if (!same || rb_payload_verify(r->l, r->key, 0, r->want, r->len) != r->len)
            r->bad++;
    }
    if (!got)
        r->bad = ~0u;
    free(got);
    return NULL;
}

/*
 * Two runs in one process, each with its own layout at the same time (a tar shard's and the plain one, on two
 * threads): each gets its own bytes and verdicts, in every round, and neither layout's bytes pass for the other's.
 */
static void test_two_layouts_at_once(void **state)
{
    (void)state;
    enum { N = 3, M = 1000 };
    const uint64_t key = rb_payload_key(5, "shard-1"), bytes = rb_tar_shard_bytes(N, M);
    unsigned char *tar_want = malloc(bytes), *plain_want = malloc(bytes);
    assert_non_null(tar_want);
    assert_non_null(plain_want);
    rb_tar_fill(key, N, M, 0, tar_want, bytes);
    rb_payload_plain_fill(key, 0, plain_want, bytes);
    const struct rb_tar_layout tl = {N, M};
    const struct rb_payload_layout tar = {rb_tar_layout_fill, &tl};
    assert_true(rb_payload_verify(&tar, key, 0, plain_want, bytes) < 512);
    assert_true(rb_payload_verify(NULL, key, 0, tar_want, bytes) < 8);
    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, 2), 0);
    struct layout_run runs[2] = {{&tar, key, tar_want, bytes, &start, 0}, {NULL, key, plain_want, bytes, &start, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, layout_run_main, &runs[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    pthread_barrier_destroy(&start);
    assert_int_equal(runs[0].bad, 0);
    assert_int_equal(runs[1].bad, 0);
    free(tar_want);
    free(plain_want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic_and_distinct),
        cmocka_unit_test(test_seekable),
        cmocka_unit_test(test_verify),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_verify_catches_misplaced_blocks),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_tar_shard),
        cmocka_unit_test(test_two_layouts_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
