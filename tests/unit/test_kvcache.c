/* Unit tests of load kvcache's model and tiers (loader/kvcache/kv_model.c, kv_tier.c): bytes per token, the NumPy
 * header, MLPerf Storage's options, turns, the LRU lists; the objects' payload layout (kv_obj.c). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kvcache_int.h"
#include "payload_int.h"

/* MLPerf Storage's figures: 8b (32, 8, 128) = 131,072 and 70b (80, 8, 128) = 327,680 bytes per token. */
static void test_bytes_per_token(void **state)
{
    (void)state;
    assert_int_equal(rb_kv_bytes_per_token(rb_kv_model_find("llama3.1-8b"), 1), 131072);
    assert_int_equal(rb_kv_bytes_per_token(rb_kv_model_find("llama3.1-70b"), 1), 327680);
    assert_int_equal(rb_kv_bytes_per_token(rb_kv_model_find("llama3.1-70b"), 4), 327680 / 4);
    assert_int_equal(rb_kv_bytes_per_token(rb_kv_model_find("llama3.1-8b"), 3), 0); /* 3 does not divide 8 heads */
    struct rb_kv_model m = {"custom", 2, 3, 4, 2};
    assert_int_equal(rb_kv_bytes_per_token(&m, 1), 2 * 3 * 4 * 2 * 2);
    assert_null(rb_kv_model_find("llama2"));
}

/* The header NumPy 1.0 reads: magic, version 1.0, length 118, the dictionary padded to 128 bytes with a newline. */
static void test_npy_header(void **state)
{
    (void)state;
    unsigned char h[RB_KV_NPY_HEADER];
    assert_int_equal(rb_kv_npy_header(rb_kv_model_find("llama3.1-8b"), 2, 4096, h), 0);
    assert_memory_equal(h, "\x93NUMPY\x01\x00", 8);
    assert_int_equal(h[8] | h[9] << 8, 118);
    const char *want = "{'descr': '<f2', 'fortran_order': False, 'shape': (32, 2, 4096, 4, 128), }";
    assert_memory_equal(h + 10, want, strlen(want));
    for (size_t i = 10 + strlen(want); i < RB_KV_NPY_HEADER - 1; i++)
        assert_int_equal(h[i], ' ');
    assert_int_equal(h[RB_KV_NPY_HEADER - 1], '\n');
    assert_int_equal(rb_kv_npy_header(rb_kv_model_find("llama3.1-8b"), 3, 1, h), -EINVAL);
}

static void test_options(void **state)
{
    (void)state;
    const struct rb_kv_option *o = rb_kv_option_get(1);
    assert_string_equal(o->model, "llama3.1-8b");
    assert_int_equal(o->users, 200);
    assert_int_equal(o->cpu_tier_bytes, 0);
    assert_int_equal(o->inflight, 16);
    assert_int_equal(rb_kv_option_get(2)->cpu_tier_bytes, UINT64_C(4) << 30);
    assert_int_equal(rb_kv_option_get(3)->users, 70);
    assert_string_equal(rb_kv_option_get(3)->model, "llama3.1-70b");
    assert_int_equal(rb_kv_option_get(3)->inflight, 4);
    assert_null(rb_kv_option_get(0));
    assert_null(rb_kv_option_get(4));
}

/* Turns stay in their profile's ranges; a conversation ends by turn 50; about 1 in 5 turns is a last one. */
static void test_turns(void **state)
{
    (void)state;
    for (int k = 0; k < RB_KV_USER_KINDS; k++) {
        const struct rb_kv_user_profile *p = &rb_kv_profiles[k];
        uint64_t rng = 42 + (uint64_t)k, last = 0, n = 20000;
        for (unsigned i = 0; i < n; i++) {
            struct rb_kv_turn t;
            rb_kv_draw_turn((enum rb_kv_user_kind)k, 4, i % 60 + 1, &rng, &t);
            assert_true(t.tokens >= p->ctx_min / 4 && t.tokens <= p->ctx_max / 4);
            assert_true(t.generated >= p->gen_min && t.generated <= p->gen_max);
            assert_true(t.think_ns >= p->think_min_ms * UINT64_C(1000000) &&
                        t.think_ns <= p->think_max_ms * UINT64_C(1000000));
            if (i % 60 + 1 >= RB_KV_MAX_TURNS)
                assert_true(t.last);
            last += t.last;
        }
        /* turns 50 to 60 of each 60 are forced last (11), the other 49 end with probability 0.2: 6,933 expected */
        double want = (double)n * (11.0 / 60 + 49.0 / 60 * 0.2);
        assert_true((double)last > want - 300 && (double)last < want + 300);
    }
    assert_int_equal(rb_kv_decode_reads(31), 1);
    assert_int_equal(rb_kv_decode_reads(32), 2);
    assert_int_equal(rb_kv_decode_reads(200), 7);
}

/* The LRU list: victims in least-recently-used order, a touch saves an entry, fill targets. */
static void test_tier_lru(void **state)
{
    (void)state;
    struct rb_kv_tier t = {.capacity_bytes = 1000};
    struct rb_kv_entry e[4] = {{.bytes = 300}, {.bytes = 300}, {.bytes = 300}, {.bytes = 100}};
    assert_null(rb_kv_tier_victim(&t, 500, 0.8));
    rb_kv_tier_push(&t, &e[0]);
    rb_kv_tier_push(&t, &e[1]);
    assert_int_equal(t.used_bytes, 600);
    assert_null(rb_kv_tier_victim(&t, 200, 0.8));  /* 800 <= 0.8 x 1000 */
    assert_ptr_equal(rb_kv_tier_victim(&t, 201, 0.8), &e[0]);
    assert_null(rb_kv_tier_victim(&t, 300, 1.0));
    rb_kv_tier_touch(&t, &e[0]);                    /* e[1] is now the least recently used */
    assert_ptr_equal(rb_kv_tier_victim(&t, 300, 0.8), &e[1]);
    rb_kv_tier_push(&t, &e[2]);
    rb_kv_tier_unlink(&t, &e[1]);
    assert_int_equal(t.entries, 2);
    assert_ptr_equal(t.lru, &e[0]);
    assert_ptr_equal(t.mru, &e[2]);
    rb_kv_tier_unlink(&t, &e[0]);
    rb_kv_tier_unlink(&t, &e[2]);
    assert_null(t.mru);
    assert_null(t.lru);
    assert_int_equal(t.used_bytes, 0);
    assert_null(rb_kv_tier_victim(&t, 5000, 0.8)); /* empty: nothing to move out */
}

/*
 * The objects' layout: an object's bytes from 128 on are the plain payload from 0 (a file's bytes after its header),
 * at any offset and length; the header of an object no request of this thread is filling is zeros (no file holds
 * that: --verify tells); the plain layout (NULL) beside it still gives the plain payload.
 */
static void test_obj_layout(void **state)
{
    (void)state;
    enum { N = 3 * 4096 + 77 };
    static unsigned char plain[N], got[N + RB_KV_NPY_HEADER];
    const uint64_t key = rb_payload_key(42, "rbkv-x-r0/u0-c0-t1.npy");
    rb_payload_plain_fill(key, 0, plain, N);
    const struct rb_payload_layout npy = rb_kv_obj_layout();
    rb_payload_fill(&npy, key, 0, got, sizeof got);
    for (size_t i = 0; i < RB_KV_NPY_HEADER; i++)
        assert_int_equal(got[i], 0);
    assert_memory_equal(got + RB_KV_NPY_HEADER, plain, N);
    rb_payload_fill(&npy, key, 100, got, 4000); /* across the header's end, unaligned */
    assert_memory_equal(got + RB_KV_NPY_HEADER - 100, plain, 4000 - (RB_KV_NPY_HEADER - 100));
    assert_int_equal(rb_payload_verify(&npy, key, RB_KV_NPY_HEADER + 5, plain + 5, 9000), 9000);
    rb_payload_fill(NULL, key, 0, got, N);
    assert_memory_equal(got, plain, N);
    assert_int_equal(rb_payload_verify(NULL, key, 0, plain, N), N);
    assert_true(rb_payload_verify(&npy, key, 0, plain, N) < RB_KV_NPY_HEADER); /* its header is not plain bytes */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_per_token), cmocka_unit_test(test_npy_header), cmocka_unit_test(test_options),
        cmocka_unit_test(test_turns),           cmocka_unit_test(test_tier_lru),        cmocka_unit_test(test_obj_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
