/* Unit tests of the checkpoint sizing model (loader/ckpt/ckpt_model.c): presets against MLPerf's table, per-rank files. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "railbench/ckpt.h"

/* Every preset's total (all ranks, full size) is within 1 % of the size MLPerf Storage's rules print. */
static void test_presets_match_table(void **state)
{
    (void)state;
    size_t n;
    const struct rb_ckpt_preset *p = rb_ckpt_presets(&n);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
        uint64_t model, optim, total = rb_ckpt_total_bytes(&p[i].model, 1, &model, &optim);
        double err = (double)total / (double)p[i].table_bytes - 1;
        printf("%-12s P=%.3fB model %.1f GiB optimizer %.1f GiB total %.1f GiB, table %s, %+.2f %%\n",
               p[i].model.name, rb_ckpt_params(&p[i].model) / 1e9, model / 1073741824.0, optim / 1073741824.0,
               total / 1073741824.0, p[i].table_text, err * 100);
        assert_true(fabs(err) < 0.01);
        assert_int_equal(model + optim, total);
        char e[256];
        assert_int_equal(rb_ckpt_check(&p[i].model, rb_ckpt_world(&p[i].model), e, sizeof e), 0);
    }
    /* Parameter counts as the models are known: 8.03 B, 70.6 B (here 69.9 B: 128 heads of 64 as the rules list), 405.9 B. */
    assert_true(fabs(rb_ckpt_params(&rb_ckpt_preset_find("llama3-8b")->model) / 1e9 - 8.030) < 0.001);
    assert_true(fabs(rb_ckpt_params(&rb_ckpt_preset_find("llama3-405b")->model) / 1e9 - 405.853) < 0.001);
    /* llama3-1t: the rules print 18 TB = mlpstorage's 2,571 + 15,426; the formula's total is the 15,426 alone. */
    const struct rb_ckpt_model *t = &rb_ckpt_preset_find("llama3-1t")->model;
    double t_gib = rb_ckpt_total_bytes(t, 1, NULL, NULL) / 1073741824.0;
    assert_true(fabs(t_gib - 15426) < 15426 * 0.001);
    assert_null(rb_ckpt_preset_find("llama3-7b"));
}

/* A tiny model worked by hand: h 8, 4 layers, f 16, V 32, 2 heads of 4, 1 K/V head (kv width 4). */
static const struct rb_ckpt_model tiny = {"tiny", 8, 4, 16, 32, 2, 1, 0, 2, 2, 2, 1};

static void test_tiny_by_hand(void **state)
{
    (void)state;
    /* Per layer: norms 2x8, QKV 8x(8+8) = 128, out 64, MLP 3x8x16 = 384 -> 592; P = 2x32x8 + 4x592 + 8 = 2888. */
    assert_int_equal(rb_ckpt_params(&tiny), 2888);
    /* Rank 0: tp 0, stage 0 (layers 0..2: embedding 8x32/2 = 128, two layers of 8+64+32+8+128+64 = 304 each),
     * dp 0 under ZeRO 1 writes one file per layer (pp > 1), fp16; optimizer 12 x (2888/8 + 5x8) = 12 x 401. */
    struct rb_ckpt_shard s[16];
    int n = rb_ckpt_rank_shards(&tiny, 0, 1, s, 16);
    assert_int_equal(n, 4);
    assert_string_equal(s[0].name, "layer_00-model_00_model_states");
    assert_int_equal(s[0].bytes, 2 * 128);
    assert_string_equal(s[1].name, "layer_01-model_00_model_states");
    assert_int_equal(s[1].bytes, 2 * 304);
    assert_int_equal(s[2].bytes, 2 * 304);
    assert_string_equal(s[3].name, "zero_pp_rank_0_mp_rank_00_optim_states");
    assert_true(s[3].optimizer);
    assert_int_equal(s[3].bytes, 12 * 401);
    /* Rank 3: tp 1, stage 1: layers 3, 4, LM head (128), final norm (8). */
    n = rb_ckpt_rank_shards(&tiny, 3, 1, s, 16);
    assert_int_equal(n, 5);
    assert_string_equal(s[2].name, "layer_05-model_03_model_states");
    assert_int_equal(s[2].bytes, 2 * 128);
    assert_int_equal(s[3].bytes, 2 * 8);
    /* Rank 4 is dp rank 1: below ZeRO 3 it writes its optimizer share only. */
    n = rb_ckpt_rank_shards(&tiny, 4, 1, s, 16);
    assert_int_equal(n, 1);
    assert_string_equal(s[0].name, "zero_pp_rank_1_mp_rank_00_optim_states");
    /* Scale 1/4: every file a quarter, rounded down. */
    n = rb_ckpt_rank_shards(&tiny, 0, 4, s, 16);
    assert_int_equal(s[0].bytes, 2 * 128 / 4);
    assert_int_equal(s[3].bytes, 12 * 401 / 4);
    assert_int_equal(rb_ckpt_rank_shards(&tiny, 0, 1, s, 2), -E2BIG);
}

static void test_zero_stages(void **state)
{
    (void)state;
    struct rb_ckpt_model m = tiny;
    m.pp = 1;
    m.zero = 3;
    /* ZeRO 3: every rank one model file of its 1/dp piece, and its optimizer share. */
    struct rb_ckpt_shard s[16];
    assert_int_equal(rb_ckpt_rank_shards(&m, 3, 1, s, 16), 2);
    assert_string_equal(s[0].name, "zero_pp_rank_1_mp_rank_01_model_states");
    uint64_t model3, optim3, tot3 = rb_ckpt_total_bytes(&m, 1, &model3, &optim3);
    /* ZeRO 0: the optimizer is split over tp x pp only and dp rank 0 writes it (as it writes the model). */
    m.zero = 0;
    uint64_t model0, optim0;
    rb_ckpt_total_bytes(&m, 1, &model0, &optim0);
    assert_int_equal(rb_ckpt_rank_shards(&m, 2, 1, s, 16), 0);
    assert_true(optim0 >= optim3 - 12 * 5 * 8 * 4 && optim0 <= optim3 + 12 * 5 * 8 * 4);
    assert_true(tot3 > 0 && model0 >= model3);
    /* Parameter count alone: 2 bytes per parameter over the mp ranks, 12 over all ranks. */
    struct rb_ckpt_model c = {.name = "custom", .params = 1000000, .tp = 2, .pp = 1, .dp = 4, .zero = 1};
    uint64_t mb, ob;
    assert_int_equal(rb_ckpt_total_bytes(&c, 1, &mb, &ob), 2000000 + 12000000);
    assert_int_equal(mb, 2000000);
    assert_int_equal(ob, 12000000);
}

static void test_check(void **state)
{
    (void)state;
    char e[256];
    const struct rb_ckpt_model *m = &rb_ckpt_preset_find("llama3-70b")->model;
    assert_int_equal(rb_ckpt_check(m, 2, e, sizeof e), 0);
    assert_int_equal(rb_ckpt_check(m, 3, e, sizeof e), -EINVAL);
    assert_non_null(strstr(e, "64 ranks"));
    assert_non_null(strstr(e, "over 3 processes"));
    struct rb_ckpt_model b = *m;
    b.zero = 4;
    assert_int_equal(rb_ckpt_check(&b, 0, e, sizeof e), -EINVAL);
    assert_non_null(strstr(e, "--zero 4"));
    b = *m;
    b.pp = 81;
    assert_int_equal(rb_ckpt_check(&b, 0, e, sizeof e), -EINVAL);
    b = *m;
    b.tp = 0;
    assert_int_equal(rb_ckpt_check(&b, 0, e, sizeof e), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets_match_table),
        cmocka_unit_test(test_tiny_by_hand),
        cmocka_unit_test(test_zero_stages),
        cmocka_unit_test(test_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
