/* Unit tests of fabric/check_plan.c and fabric/check_analyse.c: the round-robin schedule and who gets blamed. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fabcheck_int.h"

/* Every pair exactly once, the pairs of a round disjoint, partner() agreeing with pair(). */
static void check_schedule(int n)
{
    int rounds = rb_check_plan_rounds(n), per = rb_check_plan_pairs(n);
    assert_int_equal(rounds, n % 2 ? n : n - 1);
    assert_int_equal(per, n / 2);
    unsigned char *seen = calloc((size_t)n * (size_t)n, 1);
    int *round_of = malloc((size_t)n * sizeof *round_of);
    assert_non_null(seen);
    assert_non_null(round_of);
    for (int i = 0; i < n; i++)
        round_of[i] = -1;
    long pairs = 0;
    for (int r = 0; r < rounds; r++) {
        int byes = 0;
        for (int i = 0; i < per; i++) {
            int a, b;
            assert_int_equal(rb_check_plan_pair(n, r, i, &a, &b), 0);
            assert_true(0 <= a && a < b && b < n);
            assert_int_not_equal(round_of[a], r); /* disjoint within the round */
            assert_int_not_equal(round_of[b], r);
            round_of[a] = round_of[b] = r;
            assert_int_equal(seen[a * n + b], 0); /* never twice */
            seen[a * n + b] = 1;
            assert_int_equal(rb_check_plan_partner(n, r, a), b);
            assert_int_equal(rb_check_plan_partner(n, r, b), a);
            pairs++;
        }
        for (int h = 0; h < n; h++)
            byes += rb_check_plan_partner(n, r, h) < 0;
        assert_int_equal(byes, n % 2); /* odd n: exactly one host sits each round out */
    }
    assert_int_equal(pairs, (long)n * (n - 1) / 2);
    free(seen);
    free(round_of);
}

static void test_schedule_small(void **state)
{
    (void)state;
    for (int n = 2; n <= 130; n++)
        check_schedule(n);
    assert_int_equal(rb_check_plan_rounds(1), 0);
    assert_int_equal(rb_check_plan_partner(4, 3, 0), -1); /* round out of range */
    int a, b;
    assert_int_equal(rb_check_plan_pair(4, 0, 2, &a, &b), -EINVAL);
    /* The two-host and four-host schedules spelled out. */
    assert_int_equal(rb_check_plan_partner(2, 0, 0), 1);
    int want[3][4] = {{3, 2, 1, 0}, {2, 3, 0, 1}, {1, 0, 3, 2}};
    for (int r = 0; r < 3; r++)
        for (int h = 0; h < 4; h++)
            assert_int_equal(rb_check_plan_partner(4, r, h), want[r][h]);
}

static void test_schedule_1024x8(void **state)
{
    (void)state;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    check_schedule(1024);
    long links = 0;
    for (int r = 0; r < rb_check_plan_rounds(1024); r++)
        for (int i = 0; i < rb_check_plan_pairs(1024); i++) {
            int a, b;
            rb_check_plan_pair(1024, r, i, &a, &b);
            links += 8;
        }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(links, 1024L * 1023 / 2 * 8);
    printf("# 1,024 hosts x 8 rails: %ld links in %d rounds planned and checked in %.3f s\n", links,
           rb_check_plan_rounds(1024), (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

static const char *const names[] = {"node-a", "node-b", "node-c", "node-d"};

/* 4 hosts x 2 rails, every link at bw (both ways, both at once) and 10 us; *n = 12. */
static void fleet(struct rb_check_link *l, size_t *n, double bw)
{
    *n = 0;
    for (int r = 0; r < 2; r++)
        for (int a = 0; a < 4; a++)
            for (int b = a + 1; b < 4; b++)
                l[(*n)++] = (struct rb_check_link){.a = a, .b = b, .rail = r, .status = RB_CHECK_OK,
                                                   .lat_p50_s = 10e-6 * (1 + 0.01 * b), .lat_p99_s = 20e-6,
                                                   .bw_ab_bytes_per_s = bw * (1 + 0.02 * a),
                                                   .bw_ba_bytes_per_s = bw * (1 - 0.02 * b),
                                                   .bw_bidir_bytes_per_s = 2 * bw};
}

static struct rb_check_link *link_of(struct rb_check_link *l, size_t n, int r, int a, int b)
{
    for (size_t i = 0; i < n; i++)
        if (l[i].rail == r && l[i].a == a && l[i].b == b)
            return &l[i];
    fail_msg("no link %d %d-%d", r, a, b);
    return NULL;
}

static void analyse(struct rb_check_link *l, size_t n, const struct rb_check_pred *pred, struct rb_check_analysis *a)
{
    struct rb_check_cfg cfg = {.threshold = 0.5, .lat_threshold = 3, .pred = pred};
    assert_int_equal(rb_check_analyse(l, n, names, 4, 2, &cfg, a), 0);
    for (size_t i = 0; i < a->nfindings; i++)
        printf("#   finding: %s\n", a->findings[i].text);
}

static void test_healthy(void **state)
{
    (void)state;
    struct rb_check_link l[12];
    size_t n;
    fleet(l, &n, 6.2e9);
    struct rb_check_analysis a;
    analyse(l, n, NULL, &a);
    assert_int_equal(a.nfindings, 0);
    assert_true(fabs(a.rails[1].uni.median - 6.2e9) < 0.1e9);
    rb_check_analysis_free(&a);
}

static void test_host_port(void **state)
{
    (void)state;
    struct rb_check_link l[12];
    size_t n;
    fleet(l, &n, 6.2e9);
    /* Every rail-1 link of node-c (host 2) at 5 MB/s both ways: its rail-1 port, nothing else. */
    for (size_t i = 0; i < n; i++)
        if (l[i].rail == 1 && (l[i].a == 2 || l[i].b == 2))
            l[i].bw_ab_bytes_per_s = l[i].bw_ba_bytes_per_s = l[i].bw_bidir_bytes_per_s = 5e6;
    struct rb_check_analysis a;
    analyse(l, n, NULL, &a);
    assert_int_equal(a.nfindings, 1);
    assert_int_equal(a.findings[0].kind, RB_FIND_HOST_RAIL);
    assert_int_equal(a.findings[0].rail, 1);
    assert_int_equal(a.findings[0].host, 2);
    assert_non_null(strstr(a.findings[0].text, "node-c's rail 1"));
    rb_check_analysis_free(&a);
}

static void test_link_asym_latency(void **state)
{
    (void)state;
    struct rb_check_link l[12];
    size_t n;
    fleet(l, &n, 6.2e9);
    struct rb_check_link *bc = link_of(l, n, 1, 1, 2), *ad = link_of(l, n, 0, 0, 3), *ab = link_of(l, n, 0, 0, 1);
    bc->bw_ab_bytes_per_s = bc->bw_ba_bytes_per_s = 1.3e9; /* both ways: the b/c cable */
    ad->bw_ab_bytes_per_s = 1.0e9;                         /* a -> d only */
    ab->lat_p50_s = 80e-6;                                 /* latency only */
    struct rb_check_analysis a;
    analyse(l, n, NULL, &a);
    assert_int_equal(a.nfindings, 3);
    int kinds = 0;
    for (size_t i = 0; i < a.nfindings; i++) {
        const struct rb_check_finding *f = &a.findings[i];
        kinds |= 1 << f->kind;
        if (f->kind == RB_FIND_LINK) {
            assert_true(f->rail == 1 && f->host == 1 && f->peer == 2);
            assert_non_null(strstr(f->text, "rail 1: node-b ⇄ node-c at 0.2"));
            assert_non_null(strstr(f->text, "suspect the node-b/node-c cable or port"));
        }
        if (f->kind == RB_FIND_ASYM)
            assert_non_null(strstr(f->text, "node-a → node-d"));
    }
    assert_int_equal(kinds, (1 << RB_FIND_LINK) | (1 << RB_FIND_ASYM) | (1 << RB_FIND_LATENCY));
    rb_check_analysis_free(&a);
}

static void test_bidir_only(void **state)
{
    (void)state;
    struct rb_check_link l[12];
    size_t n;
    fleet(l, &n, 6.2e9);
    link_of(l, n, 0, 1, 3)->bw_bidir_bytes_per_s = 3e9; /* each way normal, both at once a quarter */
    struct rb_check_analysis a;
    analyse(l, n, NULL, &a);
    assert_int_equal(a.nfindings, 1);
    assert_int_equal(a.findings[0].kind, RB_FIND_LINK);
    assert_non_null(strstr(a.findings[0].text, "rail 0: node-b ⇄ node-d both ways at once at 0.24×"));
    rb_check_analysis_free(&a);
}

static void test_hang_and_host(void **state)
{
    (void)state;
    struct rb_check_link l[12];
    size_t n;
    fleet(l, &n, 6.2e9);
    struct rb_check_link *cd = link_of(l, n, 0, 2, 3);
    cd->status = RB_CHECK_TIMEOUT;
    snprintf(cd->stage, sizeof cd->stage, "connect");
    struct rb_check_analysis a;
    analyse(l, n, NULL, &a);
    assert_int_equal(a.nfindings, 1);
    assert_int_equal(a.findings[0].kind, RB_FIND_TIMEOUT);
    assert_non_null(strstr(a.findings[0].text, "rail 0: node-c ⇄ node-d did not complete within the timeout"));
    rb_check_analysis_free(&a);

    /* node-d slow on every link of every rail: the host, one finding. */
    fleet(l, &n, 6.2e9);
    for (size_t i = 0; i < n; i++)
        if (l[i].b == 3)
            l[i].bw_ab_bytes_per_s = l[i].bw_ba_bytes_per_s = l[i].bw_bidir_bytes_per_s = 1e9;
    analyse(l, n, NULL, &a);
    assert_int_equal(a.nfindings, 1);
    assert_int_equal(a.findings[0].kind, RB_FIND_HOST);
    assert_int_equal(a.findings[0].host, 3);
    rb_check_analysis_free(&a);
}

static void test_model(void **state)
{
    (void)state;
    struct rb_check_link l[12];
    size_t n;
    fleet(l, &n, 6.2e9);
    /* Rail 1 predicted at 50 GB/s: the whole rail is below it (one finding); rail 0 as predicted. */
    const struct rb_check_pred pred[2] = {{1e-6, 6.5e9}, {1e-6, 50e9}};
    struct rb_check_analysis a;
    analyse(l, n, pred, &a);
    assert_int_equal(a.nfindings, 1);
    assert_int_equal(a.findings[0].kind, RB_FIND_MODEL);
    assert_int_equal(a.findings[0].rail, 1);
    rb_check_analysis_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule_small), cmocka_unit_test(test_schedule_1024x8), cmocka_unit_test(test_healthy),
        cmocka_unit_test(test_host_port),      cmocka_unit_test(test_link_asym_latency), cmocka_unit_test(test_hang_and_host),
        cmocka_unit_test(test_bidir_only),
        cmocka_unit_test(test_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
