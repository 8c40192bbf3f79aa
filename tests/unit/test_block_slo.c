/* Unit tests for railbench block's derived figures (block/slo.c): SLO parsing, SLO best point, knee. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../../block/block_int.h"

/*
 * The curve fixtures (tests/fixtures/fio/curve-qd*.json) are fio JSON for a
 * 4k randread sweep whose IOPS flatten after qd8 while clat p99 climbs:
 *   qd  1: 10000 IOPS, p99 100us     qd  8: 60000, 200us
 *   qd  2: 19000,      110us         qd 16: 64000, 450us
 *   qd  4: 36000,      130us         qd 32: 65000, 900us
 */
static const unsigned curve_qd[] = {1, 2, 4, 8, 16, 32};
#define NCURVE (sizeof curve_qd / sizeof curve_qd[0])

/* A point built from fio's own figures in a fixture file, as one rank would report it. */
static void load_point(unsigned qd, struct rb_block_point *p)
{
    char path[512], err[256] = "";
    snprintf(path, sizeof path, RB_FIXTURES_DIR "/fio/curve-qd%u.json", qd);
    struct rb_fio_result r;
    if (rb_fio_parse_file(path, &r, NULL, NULL, err, sizeof err) != 0)
        fail_msg("%s: %s", path, err);
    memset(p, 0, sizeof *p);
    p->bs_bytes = 4096;
    p->iodepth = qd;
    p->numjobs = 1;
    p->iops = r.read.iops + r.write.iops;
    p->bw_bytes_per_s = r.read.bw_bytes_per_s + r.write.bw_bytes_per_s;
    assert_true(r.read.clat.have_pct && r.read.lat.have_pct);
    memcpy(p->clat_ns, r.read.clat.pct_ns, sizeof p->clat_ns);
    memcpy(p->lat_ns, r.read.lat.pct_ns, sizeof p->lat_ns);
    p->disk_util_pct = r.disk_util_pct;
}

static void load_curve(struct rb_block_point *pts)
{
    for (size_t i = 0; i < NCURVE; i++)
        load_point(curve_qd[i], &pts[i]);
    assert_true(pts[3].iops == 60000 && pts[3].clat_ns[2] == 200000);
}

static struct rb_block_slo slo_of(const char *s)
{
    struct rb_block_slo slo;
    char err[256] = "";
    if (rb_block_slo_parse(s, &slo, err, sizeof err) != 0)
        fail_msg("'%s' rejected: %s", s, err);
    return slo;
}

static void test_slo_parse(void **state)
{
    (void)state;
    struct rb_block_slo s = slo_of("p99<=500us");
    assert_int_equal(s.kind, RB_BLOCK_CLAT);
    assert_int_equal(s.pct, 2);
    assert_int_equal(s.bound_ns, 500000);
    assert_true(s.inclusive);
    assert_string_equal(s.text, "clat p99<=500us");

    s = slo_of("p99.9 < 2ms");
    assert_int_equal(s.pct, 3);
    assert_false(s.inclusive);
    assert_int_equal(s.bound_ns, 2000000);
    assert_string_equal(s.text, "clat p99.9<2ms");
    assert_int_equal(slo_of("p999<=1ms").pct, 3);
    assert_int_equal(slo_of("p99.99<=1ms").pct, 4);
    assert_int_equal(slo_of("p9999<=1ms").pct, 4);
    assert_int_equal(slo_of("p50<=1ms").pct, 0);
    assert_int_equal(slo_of("P90<=1ms").pct, 1);
    s = slo_of("lat p99<=1.5ms");
    assert_int_equal(s.kind, RB_BLOCK_LAT);
    assert_int_equal(s.bound_ns, 1500000);
    assert_string_equal(s.text, "lat p99<=1500us");
    assert_int_equal(slo_of("clat p99<=1s").bound_ns, 1000000000);

    static const char *const bad[] = {"", "p99", "p99<=", "p42<=1ms", "p99>=1ms", "99<=1ms", "p99<=1parsec",
                                      "p99<=0us", "p99.999<=1ms", "latency p99<=1ms", "p99=<1ms",
                                      "p99<=500", "clat p99<=1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct rb_block_slo x;
        char err[256] = "";
        assert_int_equal(rb_block_slo_parse(bad[i], &x, err, sizeof err), -EINVAL);
        assert_non_null(strstr(err, "e.g. p99<="));
        assert_non_null(strstr(err, "us"));
    }
}

static void test_slo_met_everywhere(void **state)
{
    (void)state;
    struct rb_block_point pts[NCURVE];
    load_curve(pts);
    struct rb_block_slo s = slo_of("p99<=1ms");
    for (size_t i = 0; i < NCURVE; i++)
        assert_true(rb_block_slo_met(&s, &pts[i]));
    assert_int_equal(rb_block_slo_best(&s, pts, NCURVE), 5); /* the highest IOPS of all: qd32 */
}

static void test_slo_met_nowhere(void **state)
{
    (void)state;
    struct rb_block_point pts[NCURVE];
    load_curve(pts);
    struct rb_block_slo s = slo_of("p99<=50us");
    assert_int_equal(rb_block_slo_best(&s, pts, NCURVE), -1);
    /* The bound equal to the best p99 (100us): "<" excludes it, "<=" includes it. */
    s = slo_of("p99<100us");
    assert_int_equal(rb_block_slo_best(&s, pts, NCURVE), -1);
    s = slo_of("p99<=100us");
    assert_int_equal(rb_block_slo_best(&s, pts, NCURVE), 0);
    assert_int_equal(rb_block_slo_best(&s, pts, 0), -1);
}

static void test_slo_met_in_the_middle(void **state)
{
    (void)state;
    struct rb_block_point pts[NCURVE];
    load_curve(pts);
    struct rb_block_slo s = slo_of("p99<=500us");
    assert_int_equal(rb_block_slo_best(&s, pts, NCURVE), 4); /* qd16: 64000 IOPS at 450us; qd32 misses */
    assert_false(rb_block_slo_met(&s, &pts[5]));
    s = slo_of("p99<200us");
    assert_int_equal(rb_block_slo_best(&s, pts, NCURVE), 2);
    /* Other percentiles and total latency read their own columns (fixture lat = 1.1 x clat). */
    s = slo_of("p50<=100us"); /* p50 = p99 / 2 */
    assert_int_equal(rb_block_slo_best(&s, pts, NCURVE), 3);
    s = slo_of("lat p99<=220us");
    assert_int_equal(rb_block_slo_best(&s, pts, NCURVE), 3);
    s = slo_of("clat p99<=130us");
    assert_int_equal(rb_block_slo_best(&s, pts, NCURVE), 2);
    s = slo_of("lat p99<=130us"); /* qd4's total latency p99 is 143us */
    assert_int_equal(rb_block_slo_best(&s, pts, NCURVE), 1);
    /* Equal IOPS: the point with less outstanding I/O wins. */
    struct rb_block_point two[2];
    two[0] = pts[4];
    two[1] = pts[4];
    two[0].numjobs = 2;
    s = slo_of("p99<=1ms");
    assert_int_equal(rb_block_slo_best(&s, two, 2), 1);
}

static void test_knee(void **state)
{
    (void)state;
    struct rb_block_point pts[NCURVE];
    load_curve(pts);
    /* qd8 -> qd16: +6.7 % IOPS, +125 % p99; earlier steps gain >= 10 % IOPS. */
    assert_int_equal(rb_block_knee(pts, NCURVE), 3);
    /* Up to qd8 the curve still scales: no knee. */
    assert_int_equal(rb_block_knee(pts, 4), -1);
    assert_int_equal(rb_block_knee(pts, 1), -1);
    assert_int_equal(rb_block_knee(pts, 0), -1);
    /* Flat IOPS but flat latency too (p99 +40 %) is not a knee... */
    struct rb_block_point c[2] = {pts[3], pts[3]};
    c[1].iodepth = 16;
    c[1].iops = pts[3].iops * 1.05;
    c[1].clat_ns[2] = pts[3].clat_ns[2] * 14 / 10;
    assert_int_equal(rb_block_knee(c, 2), -1);
    /* ...nor is latency growth that still buys 10 % or more IOPS. */
    c[1].iops = pts[3].iops * 1.10;
    c[1].clat_ns[2] = pts[3].clat_ns[2] * 3;
    assert_int_equal(rb_block_knee(c, 2), -1);
    /* Just under both thresholds' far side: a knee. */
    c[1].iops = pts[3].iops * 1.0999;
    c[1].clat_ns[2] = pts[3].clat_ns[2] * 3 / 2 + 1;
    assert_int_equal(rb_block_knee(c, 2), 0);
    /* Falling IOPS with rising latency is a knee too. */
    c[1].iops = pts[3].iops * 0.8;
    assert_int_equal(rb_block_knee(c, 2), 0);
    assert_int_equal(rb_block_outstanding(&c[1]), 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slo_parse),
        cmocka_unit_test(test_slo_met_everywhere),
        cmocka_unit_test(test_slo_met_nowhere),
        cmocka_unit_test(test_slo_met_in_the_middle),
        cmocka_unit_test(test_knee),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
