/* Unit tests of the training model: AU and throughput against hand-computed step timelines, layout, draws, search. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/clock.h"
#include "train_int.h"

#define MS RB_NS_PER_MS

static void assert_close(double got, double want, double tol)
{
    if (fabs(got - want) > tol)
        fail_msg("got %.9f, expected %.9f (tolerance %g)", got, want, tol);
}

/*
 * One accelerator, three steps (times in ms):
 *   step 1: starts 0, batch ready at 100, computes 50 (wakes 150), barrier done 151
 *   step 2: starts 151, batch ready at once, computes 50 (wakes 201), done 202
 *   step 3: starts 202, batch ready at 232, computes 50 (wakes 282), done 283
 * AU leaves step 1 out: (50 + 50) / ((202 - 151) + (283 - 202)) = 100 / 132.
 * Samples/s keeps it: 3 x 8 samples / 0.283 s.
 */
static void test_au_one_accelerator(void **state)
{
    (void)state;
    struct rb_train_tally t = {0};
    struct rb_hist *wait = rb_hist_new();
    uint64_t ready[1], comp[1] = {50 * MS};

    ready[0] = 100 * MS;
    rb_train_step_account(&t, 1, 8, 0, ready, comp, 150 * MS, 151 * MS, wait);
    ready[0] = 151 * MS;
    rb_train_step_account(&t, 1, 8, 151 * MS, ready, comp, 201 * MS, 202 * MS, wait);
    ready[0] = 232 * MS;
    rb_train_step_account(&t, 1, 8, 202 * MS, ready, comp, 282 * MS, 283 * MS, wait);

    assert_int_equal(t.steps, 3);
    assert_int_equal(t.samples, 24);
    assert_int_equal(t.wall_ns, 283 * MS);
    assert_int_equal(t.au_compute_ns, 100 * MS);
    assert_int_equal(t.au_wall_ns, 132 * MS);
    assert_close(rb_train_au_pct(&t), 100.0 * 100 / 132, 1e-9);
    /* With the first step AU would be 150/283 = 53 %: it is left out. */
    assert_true(rb_train_au_pct(&t) > 75);
    assert_close(rb_train_per_s(t.samples, t.wall_ns), 24 / 0.283, 1e-9);

    /* Data waits of steps 2 and 3 only: 0 and 30 ms. */
    assert_int_equal(wait->count, 2);
    assert_int_equal(wait->min_ns, 0);
    assert_int_equal(wait->max_ns, 30 * MS);
    rb_hist_free(wait);

    /* One step has no AU (nothing is left after the first); samples/s is still defined. */
    struct rb_train_tally one = {0};
    ready[0] = 10 * MS;
    rb_train_step_account(&one, 1, 4, 0, ready, comp, 60 * MS, 60 * MS, NULL);
    assert_close(rb_train_au_pct(&one), 0, 0);
    assert_close(rb_train_per_s(one.samples, one.wall_ns), 4 / 0.060, 1e-9);
    assert_close(rb_train_per_s(5, 0), 0, 0);
}

/*
 * Two accelerators sharing a rank's steps; each computes from the moment
 * its batch is ready, the trainer sleeps until the slower one is done, and
 * a late wake is charged to both accelerators' compute (ms):
 *   step 1: start 0, ready {10, 30}, compute {50, 50}: ends at 80, wakes 82, done 83
 *   step 2: start 83, ready {83, 93}, compute {40, 60}: ends at 153, wakes 153, done 160
 *   step 3: start 160, ready {160, 160}, compute {50, 50}: ends at 210, wakes 215 (5 late), done 216
 * Accelerator 0: (40 + 50 + 5) / (77 + 56) = 95/133; accelerator 1: (60 + 55) / 133 = 115/133.
 */
static void test_au_two_accelerators(void **state)
{
    (void)state;
    struct rb_train_tally t[2];
    memset(t, 0, sizeof t);
    struct rb_hist *wait = rb_hist_new();
    uint64_t r1[2] = {10 * MS, 30 * MS}, c1[2] = {50 * MS, 50 * MS};
    uint64_t r2[2] = {83 * MS, 93 * MS}, c2[2] = {40 * MS, 60 * MS};
    uint64_t r3[2] = {160 * MS, 160 * MS}, c3[2] = {50 * MS, 50 * MS};

    assert_int_equal(rb_train_compute_end(r1, c1, 2), 80 * MS);
    assert_int_equal(rb_train_compute_end(r2, c2, 2), 153 * MS);
    rb_train_step_account(t, 2, 3, 0, r1, c1, 82 * MS, 83 * MS, wait);
    rb_train_step_account(t, 2, 3, 83 * MS, r2, c2, 153 * MS, 160 * MS, wait);
    rb_train_step_account(t, 2, 3, 160 * MS, r3, c3, 215 * MS, 216 * MS, wait);

    assert_int_equal(t[0].au_compute_ns, 95 * MS);
    assert_int_equal(t[1].au_compute_ns, 115 * MS);
    assert_int_equal(t[0].au_wall_ns, 133 * MS);
    assert_int_equal(t[1].au_wall_ns, 133 * MS);
    assert_close(rb_train_au_pct(&t[0]), 100.0 * 95 / 133, 1e-9);
    assert_close(rb_train_au_pct(&t[1]), 100.0 * 115 / 133, 1e-9);

    struct rb_train_rank rk;
    rb_train_rank_figures(t, 2, 123456, &rk);
    assert_int_equal(rk.steps, 3);
    assert_int_equal(rk.samples, 2 * 3 * 3);
    assert_int_equal(rk.wall_ns, 216 * MS);
    assert_int_equal(rk.bytes, 123456);
    assert_close(rk.au_pct, (100.0 * 95 / 133 + 100.0 * 115 / 133) / 2, 1e-9);

    /* Steps 2 and 3: waits 0 and 10 ms, then 0 and 0. */
    assert_int_equal(wait->count, 4);
    assert_int_equal(wait->max_ns, 10 * MS);
    rb_hist_free(wait);

    /*
     * Accelerator 1 starved in step 3 (its reads failed: compute 0), the
     * trainer woke 7 ms after accelerator 0's compute ended: the 7 ms are
     * accelerator 0's, none accelerator 1's.
     */
    struct rb_train_tally s[2];
    memset(s, 0, sizeof s);
    uint64_t c3s[2] = {50 * MS, 0};
    rb_train_step_account(s, 2, 3, 0, r1, c1, 82 * MS, 83 * MS, NULL);
    rb_train_step_account(s, 2, 3, 160 * MS, r3, c3s, 217 * MS, 218 * MS, NULL);
    assert_int_equal(s[0].au_compute_ns, 57 * MS);
    assert_int_equal(s[1].au_compute_ns, 0);
    assert_close(rb_train_au_pct(&s[1]), 0, 0);
}

/* An epoch over ranks: samples/s and bytes/s are sums of each rank's rate, AU the mean. */
static void test_epoch_and_run_figures(void **state)
{
    (void)state;
    struct rb_train_rank r[2] = {
        {.steps = 10, .samples = 100, .bytes = 1000, .wall_ns = 2 * RB_NS_PER_S, .au_pct = 90},
        {.steps = 9, .samples = 60, .bytes = 600, .wall_ns = 1500 * MS, .au_pct = 80},
    };
    struct rb_train_figures f;
    rb_train_epoch_figures(r, 2, &f);
    assert_int_equal(f.steps, 9);
    assert_int_equal(f.samples, 160);
    assert_int_equal(f.bytes, 1600);
    assert_close(f.samples_per_s, 50 + 40, 1e-9);
    assert_close(f.bytes_per_s, 500 + 400, 1e-9);
    assert_close(f.au_pct, 85, 1e-12);

    struct rb_train_figures ep[3] = {{.au_pct = 60, .samples_per_s = 10},
                                     {.au_pct = 90, .samples_per_s = 20},
                                     {.au_pct = 96, .samples_per_s = 30}};
    double au, sps;
    rb_train_run_figures(ep, 3, &au, &sps);
    assert_close(au, 82, 1e-12);
    assert_close(sps, 20, 1e-12);
    rb_train_run_figures(ep, 0, &au, &sps);
    assert_close(au, 0, 0);
    rb_train_epoch_figures(r, 0, &f);
    assert_int_equal(f.samples, 0);
}

/* Runs a search against "AU holds up to good accelerators per rank"; returns what it found and the counts tried. */
static uint64_t search(uint64_t max, uint64_t good, uint64_t *tried, size_t *ntried)
{
    struct rb_train_search s;
    rb_train_search_init(&s, max);
    *ntried = 0;
    while (!s.done && *ntried < 64) {
        tried[(*ntried)++] = s.next;
        rb_train_search_record(&s, s.next <= good);
    }
    assert_true(s.done);
    return s.lo;
}

static void test_search(void **state)
{
    (void)state;
    uint64_t t[64];
    size_t n;
    assert_int_equal(search(100, 5, t, &n), 5);
    uint64_t want[] = {1, 2, 4, 8, 6, 5};
    assert_int_equal(n, 6);
    assert_memory_equal(t, want, sizeof want);
    /* Nothing meets it: one trial. */
    assert_int_equal(search(100, 0, t, &n), 0);
    assert_int_equal(n, 1);
    /* Everything meets it: doubling stops at the bound, which is tried itself. */
    assert_int_equal(search(6, 1000, t, &n), 6);
    uint64_t want6[] = {1, 2, 4, 6};
    assert_int_equal(n, 4);
    assert_memory_equal(t, want6, sizeof want6);
    assert_int_equal(search(1, 1000, t, &n), 1);
    assert_int_equal(n, 1);
    /* A boundary just below a power of two. */
    assert_int_equal(search(256, 63, t, &n), 63);
    assert_int_equal(t[n - 1] == 63 || t[n - 1] == 64, 1);
    for (uint64_t good = 1; good <= 40; good++)
        assert_int_equal(search(40, good, t, &n), good);
}

static void test_steps_and_batches(void **state)
{
    (void)state;
    assert_int_equal(rb_train_steps(64, 2, 1, 1, 4, 0), 8);
    assert_int_equal(rb_train_steps(65, 2, 1, 1, 4, 0), 8);  /* the smallest share: 32 objects */
    assert_int_equal(rb_train_steps(64, 2, 1, 2, 4, 0), 4);  /* two accelerators take twice per step */
    assert_int_equal(rb_train_steps(30, 2, 3, 1, 4, 0), 11); /* 15 objects x 3 samples = 45, 4 per step */
    assert_int_equal(rb_train_steps(64, 2, 1, 1, 4, 5), 5);
    assert_int_equal(rb_train_steps(3, 4, 1, 1, 1, 0), 0);   /* fewer objects than ranks */
    assert_int_equal(rb_train_steps(64, 0, 1, 1, 4, 0), 0);

    uint64_t first, count;
    rb_train_batch_objects(3, 4, 1, &first, &count);
    assert_int_equal(first, 12);
    assert_int_equal(count, 4);
    /* 3 samples per object, batches of 4: an object is read by the batch holding its first sample. */
    uint64_t want[][2] = {{0, 2}, {2, 1}, {3, 1}, {4, 2}};
    for (uint64_t k = 0; k < 4; k++) {
        rb_train_batch_objects(k, 4, 3, &first, &count);
        assert_int_equal(first, want[k][0]);
        assert_int_equal(count, want[k][1]);
    }
    /* ResNet-50's shards: 1,251 samples each, batches of 400 — object 1 is read by batch 3 (samples 1200..1599). */
    rb_train_batch_objects(0, 400, 1251, &first, &count);
    assert_int_equal(first, 0);
    assert_int_equal(count, 1);
    rb_train_batch_objects(1, 400, 1251, &first, &count);
    assert_int_equal(count, 0);
    rb_train_batch_objects(3, 400, 1251, &first, &count);
    assert_int_equal(first, 1);
    assert_int_equal(count, 1);
    /* Batches are contiguous and cover every object the consumed samples need, each once. */
    uint64_t next = 0;
    for (uint64_t k = 0; k < 100; k++) {
        rb_train_batch_objects(k, 7, 5, &first, &count);
        assert_int_equal(first, next);
        next += count;
    }
    assert_int_equal(next, (100 * 7 + 4) / 5);
}

static void test_epoch_stream(void **state)
{
    (void)state;
    uint32_t *s[3], *again, *other;
    size_t n[3], na, no;
    int seen[10] = {0};
    for (int r = 0; r < 3; r++) {
        assert_int_equal(rb_train_epoch_stream(10, 7, 1, r, 3, &s[r], &n[r]), 0);
        for (size_t i = 0; i < n[r]; i++)
            seen[s[r][i]]++;
    }
    assert_int_equal(n[0], 4);
    assert_int_equal(n[1], 3);
    assert_int_equal(n[2], 3);
    for (int i = 0; i < 10; i++)
        assert_int_equal(seen[i], 1);
    /* The same on every host for the same seed and epoch; another epoch reorders and reassigns. */
    assert_int_equal(rb_train_epoch_stream(10, 7, 1, 0, 3, &again, &na), 0);
    assert_memory_equal(again, s[0], n[0] * sizeof *again);
    assert_int_equal(rb_train_epoch_stream(10, 7, 2, 0, 3, &other, &no), 0);
    assert_int_equal(no, 4);
    assert_true(memcmp(other, s[0], 4 * sizeof *other) != 0);
    free(other);
    assert_int_equal(rb_train_epoch_stream(10, 7, 1, 3, 3, &other, &no), -EINVAL);
    assert_null(other);
    for (int r = 0; r < 3; r++)
        free(s[r]);
    free(again);
    free(other);
}

static void test_parse(void **state)
{
    (void)state;
    uint64_t m, sd;
    assert_int_equal(rb_train_parse_size_dist("4k", &m, &sd), 0);
    assert_int_equal(m, 4096);
    assert_int_equal(sd, 0);
    assert_int_equal(rb_train_parse_size_dist("146.6MB/68.3MB", &m, &sd), 0);
    assert_int_equal(m, 146600000);
    assert_int_equal(sd, 68300000);
    const char *bad[] = {"", "/4k", "4k/", "4k/1k/1k", "abc", "4k/x", NULL};
    for (int i = 0; bad[i]; i++)
        assert_int_equal(rb_train_parse_size_dist(bad[i], &m, &sd), -EINVAL);
    assert_int_equal(rb_train_parse_duration_dist("50ms/5ms", &m, &sd), 0);
    assert_int_equal(m, 50 * MS);
    assert_int_equal(sd, 5 * MS);
    assert_int_equal(rb_train_parse_duration_dist("0.5", &m, &sd), 0);
    assert_int_equal(m, 500 * MS);
    assert_int_equal(rb_train_parse_duration_dist("fast", &m, &sd), -EINVAL);
    assert_int_equal(rb_train_parse_duration_dist(NULL, &m, &sd), -EINVAL);
}

static void test_draws(void **state)
{
    (void)state;
    /* A standard normal: mean 0, deviation 1 over 20,000 keys (the keys are fixed, so this is exact every run). */
    double sum = 0, sq = 0;
    const int n = 20000;
    for (int i = 0; i < n; i++) {
        double z = rb_train_normal((uint64_t)i);
        sum += z;
        sq += z * z;
    }
    double mean = sum / n, sd = sqrt(sq / n - mean * mean);
    assert_close(mean, 0, 0.03);
    assert_close(sd, 1, 0.03);
    assert_close(rb_train_normal(42), rb_train_normal(42), 0);

    assert_int_equal(rb_train_draw(100, 0, 5, 0), 100);
    assert_int_equal(rb_train_draw(100, 0, 5, 150), 150);
    assert_int_equal(rb_train_draw(10, 1000000, 5, 0) == 0 || rb_train_draw(10, 1000000, 5, 0) > 10, 1);

    /* Object sizes: a fixed sample size times samples per object; with a deviation, seeded and about right. */
    assert_int_equal(rb_train_object_bytes(1, "obj-00000001", 3, 4096, 0), 3 * 4096);
    uint64_t a = rb_train_object_bytes(1, "obj-00000001", 1, 146600628, 68341808);
    assert_int_equal(a, rb_train_object_bytes(1, "obj-00000001", 1, 146600628, 68341808));
    assert_true(a != rb_train_object_bytes(2, "obj-00000001", 1, 146600628, 68341808));
    double total = 0;
    char name[32];
    for (int i = 0; i < 4000; i++) {
        snprintf(name, sizeof name, "obj-%08d", i);
        total += (double)rb_train_object_bytes(9, name, 4, 100000, 20000);
    }
    assert_close(total / 4000, 400000, 400000 * 0.02);
    assert_int_equal(rb_train_object_bytes(1, "x", 1, 1, 1000000) >= 1, 1);

    assert_int_equal(rb_train_compute_ns(50 * MS, 0, 1, 1, 0, 0, 7), 50 * MS);
    uint64_t c1 = rb_train_compute_ns(50 * MS, 5 * MS, 1, 1, 0, 0, 7), c2 = rb_train_compute_ns(50 * MS, 5 * MS, 1, 1, 0, 0, 8);
    assert_int_equal(c1, rb_train_compute_ns(50 * MS, 5 * MS, 1, 1, 0, 0, 7));
    assert_true(c1 != c2);
    assert_true(c1 > 20 * MS && c1 < 80 * MS);
}

static void test_presets(void **state)
{
    (void)state;
    const struct rb_train_preset *p = rb_train_preset_find("resnet50");
    assert_non_null(p);
    assert_int_equal(p->sample_bytes, 114660);
    assert_int_equal(p->batch_size, 400);
    assert_int_equal(p->compute_ns, 224 * MS);
    assert_close(p->au_min_pct, 90, 0);
    p = rb_train_preset_find("unet3d");
    assert_non_null(p);
    assert_int_equal(p->sample_bytes, 146600628);
    assert_int_equal(p->batch_size, 7);
    assert_int_equal(p->compute_ns, 323 * MS);
    p = rb_train_preset_find("cosmoflow");
    assert_non_null(p);
    assert_close(p->au_min_pct, 70, 0);
    assert_null(rb_train_preset_find("bert"));
    assert_null(rb_train_preset_find(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_au_one_accelerator),
        cmocka_unit_test(test_au_two_accelerators),
        cmocka_unit_test(test_epoch_and_run_figures),
        cmocka_unit_test(test_search),
        cmocka_unit_test(test_steps_and_batches),
        cmocka_unit_test(test_epoch_stream),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_draws),
        cmocka_unit_test(test_presets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
