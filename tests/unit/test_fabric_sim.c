/* Unit tests of fabric/sim.c and fabric/calibrate.c: model times against hand-computed alpha-beta formulas, link
 * sharing on small fabrics, and calibration recovering the parameters that generated the data. */
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

#include <cmocka.h>

#include "sim_int.h"

#ifndef RB_FIXTURES_DIR
#define RB_FIXTURES_DIR "tests/fixtures"
#endif

#define GBIT (1e9 / 8.0)
#define MiB 1048576.0

#define assert_rel(a, b, tol) check_rel((a), (b), (tol), #a, __FILE__, __LINE__)

static void check_rel(double got, double want, double tol, const char *expr, const char *file, int line)
{
    if (!(fabs(got - want) <= tol * fabs(want))) {
        print_error("%s = %.12g, expected %.12g (relative tolerance %g)\n", expr, got, want, tol);
        _fail(file, line);
    }
}

static void set_link(struct rb_topo *t, enum rb_link_class c, double gbit, double lat_us)
{
    t->link[c].bw_bytes_per_s = gbit * GBIT;
    t->link[c].lat_s = lat_us * 1e-6;
}

static struct rb_topo design(enum rb_topo_kind kind, int nodes, int gpus, int nics, int radix, int spines, double over)
{
    struct rb_topo t;
    rb_topo_default(&t);
    t.kind = kind;
    t.nodes = nodes;
    t.gpus_per_node = gpus;
    t.nics_per_node = nics;
    t.rails = kind == RB_TOPO_FAT_TREE ? 1 : nics;
    t.leaf_radix = radix;
    t.spines = spines;
    t.oversubscription = over;
    /* NVLink 100 GB/s, 1 us; PCIe 50 GB/s, 0.5 us; leaf and spine 25 GB/s, 1 us; reduction 1 TB/s. */
    set_link(&t, RB_LINK_NVLINK, 800, 1.0);
    set_link(&t, RB_LINK_PCIE, 400, 0.5);
    set_link(&t, RB_LINK_LEAF, 200, 1.0);
    set_link(&t, RB_LINK_SPINE, 200, 1.0);
    t.reduce_bytes_per_s = 1e12;
    return t;
}

static void finish(struct rb_topo *t)
{
    char err[256];
    if (rb_topo_finish(t, err, sizeof err) != 0)
        fail_msg("topology: %s", err);
}

/* The topology whose model the current test evaluates (for the check of the time split). */
static const struct rb_topo *cur;

static double sim_time(struct rb_sim *s, enum rb_coll_kind k, enum rb_sim_algo a, double n)
{
    double t = -1;
    struct rb_sim_terms x;
    assert_int_equal(rb_sim_time(s, k, a, n, &t, &x), 0);
    /* The split must give back the same time: calibration relies on it. */
    assert_rel(rb_sim_terms_time(&x, cur->link, cur->reduce_bytes_per_s), t, 1e-12);
    return t;
}

/* One node of p GPUs: the textbook alpha-beta-gamma formulas (ANCHORS.md), alpha 2 us, beta 1/100 GB/s, gamma 1/50 GB/s. */
static void test_formulas_one_node(void **state)
{
    (void)state;
    struct rb_topo t = design(RB_TOPO_RAIL_OPTIMIZED, 1, 8, 8, 64, 8, 1.0);
    set_link(&t, RB_LINK_NVLINK, 800, 2.0);
    t.reduce_bytes_per_s = 50e9;
    finish(&t);
    cur = &t;
    struct rb_sim *s;
    assert_int_equal(rb_sim_create(&t, true, &s), 0);
    assert_int_equal(rb_sim_ranks(s), 8);
    const double a = 2e-6, b = 1.0 / 100e9, g = 1.0 / 50e9, n = MiB, p = 8;

    /* allreduce */
    assert_rel(sim_time(s, RB_COLL_ALLREDUCE, RB_SIM_RING, n), 2 * (p - 1) * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * g, 1e-12);
    assert_rel(sim_time(s, RB_COLL_ALLREDUCE, RB_SIM_RD, n), 3 * (a + n * b + n * g), 1e-12);
    assert_rel(sim_time(s, RB_COLL_ALLREDUCE, RB_SIM_RHD, n), 2 * 3 * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * g, 1e-12);
    assert_rel(sim_time(s, RB_COLL_ALLREDUCE, RB_SIM_TREE, n), 6 * (a + n * b) + 3 * n * g, 1e-12);
    /* hier on one node is the intra-node ring */
    assert_rel(sim_time(s, RB_COLL_ALLREDUCE, RB_SIM_HIER, n), sim_time(s, RB_COLL_ALLREDUCE, RB_SIM_RING, n), 1e-12);
    /* allgather and reducescatter: n is the whole array */
    assert_rel(sim_time(s, RB_COLL_ALLGATHER, RB_SIM_RING, n), (p - 1) * a + (p - 1) / p * n * b, 1e-12);
    assert_rel(sim_time(s, RB_COLL_ALLGATHER, RB_SIM_RD, n), 3 * a + (p - 1) / p * n * b, 1e-12);
    assert_rel(sim_time(s, RB_COLL_REDUCESCATTER, RB_SIM_RING, n), (p - 1) * a + (p - 1) / p * n * (b + g), 1e-12);
    assert_rel(sim_time(s, RB_COLL_REDUCESCATTER, RB_SIM_RHD, n), 3 * a + (p - 1) / p * n * (b + g), 1e-12);
    /* broadcast and reduce: 1 MiB is two 512 KiB pipelining chunks, so the chain takes p - 1 + 1 steps */
    assert_rel(sim_time(s, RB_COLL_BROADCAST, RB_SIM_TREE, n), 3 * (a + n * b), 1e-12);
    assert_rel(sim_time(s, RB_COLL_BROADCAST, RB_SIM_RING, n), 8 * (a + n / 2 * b), 1e-12);
    assert_rel(sim_time(s, RB_COLL_BROADCAST, RB_SIM_RHD, n), 3 * a + 7.0 / 8 * n * b + 7 * a + 7.0 / 8 * n * b, 1e-12);
    assert_rel(sim_time(s, RB_COLL_REDUCE, RB_SIM_TREE, n), 3 * (a + n * b + n * g), 1e-12);
    assert_rel(sim_time(s, RB_COLL_REDUCE, RB_SIM_RING, n), 8 * (a + n / 2 * (b + g)), 1e-12);
    assert_rel(sim_time(s, RB_COLL_REDUCE, RB_SIM_RHD, n), 3 * a + 7.0 / 8 * n * (b + g) + 3 * a + 7.0 / 8 * n * b, 1e-12);
    /* alltoall: n is one rank's send buffer */
    assert_rel(sim_time(s, RB_COLL_ALLTOALL, RB_SIM_RING, n), 7 * (a + n / 8 * b), 1e-12);
    assert_rel(sim_time(s, RB_COLL_ALLTOALL, RB_SIM_RD, n), 3 * (a + n / 2 * b), 1e-12);
    assert_rel(sim_time(s, RB_COLL_SENDRECV, RB_SIM_RING, n), a + n * b, 1e-12);
    /* Unsupported pairs and bad sizes. */
    double x;
    assert_int_equal(rb_sim_time(s, RB_COLL_SENDRECV, RB_SIM_TREE, n, &x, NULL), -EINVAL);
    assert_int_equal(rb_sim_time(s, RB_COLL_ALLREDUCE, RB_SIM_RING, -1, &x, NULL), -EINVAL);
    rb_sim_free(s);

    /* Six GPUs: recursive doubling folds the two extra ranks in and out. */
    t = design(RB_TOPO_RAIL_OPTIMIZED, 1, 6, 6, 64, 6, 1.0);
    set_link(&t, RB_LINK_NVLINK, 800, 2.0);
    t.reduce_bytes_per_s = 50e9;
    finish(&t);
    cur = &t;
    assert_int_equal(rb_sim_create(&t, true, &s), 0);
    assert_rel(sim_time(s, RB_COLL_ALLREDUCE, RB_SIM_RD, n), 4 * a + 4 * n * b + 3 * n * g, 1e-12);
    assert_rel(sim_time(s, RB_COLL_ALLREDUCE, RB_SIM_TREE, n), 6 * (a + n * b) + 3 * n * g, 1e-12);
    assert_rel(sim_time(s, RB_COLL_ALLREDUCE, RB_SIM_RING, n), 10 * a + 2 * 5.0 / 6 * n * b + 5.0 / 6 * n * g, 1e-12);
    rb_sim_free(s);
}

/* Ring across two rail-optimised nodes: the cross-rail hop goes through the spine, or over NVLink with PXN. */
static void test_pxn_vs_spine(void **state)
{
    (void)state;
    struct rb_topo t = design(RB_TOPO_RAIL_OPTIMIZED, 2, 2, 2, 8, 2, 1.0);
    finish(&t);
    cur = &t;
    const double n = MiB, g = 1e-12;
    struct rb_sim *off, *on;
    assert_int_equal(rb_sim_create(&t, false, &off), 0);
    assert_int_equal(rb_sim_create(&t, true, &on), 0);
    /*
     * Ranks 1 -> 2 and 3 -> 0 cross nodes and rails. PXN off: PCIe, leaf, spine
     * both ways: 2(0.5) + 2(1) + 2(1) = 5 us; the NIC cable (25 GB/s) is the
     * bottleneck (the leaf's 2 uplinks give 50 GB/s). PXN on: NVLink + PCIe + leaf
     * = 1 + 1 + 2 = 4 us, still 25 GB/s. Six steps of n/4; three reductions of n/4.
     */
    assert_rel(sim_time(off, RB_COLL_ALLREDUCE, RB_SIM_RING, n), 6 * (5e-6 + n / 4 / 25e9) + 3 * n / 4 * g, 1e-12);
    assert_rel(sim_time(on, RB_COLL_ALLREDUCE, RB_SIM_RING, n), 6 * (4e-6 + n / 4 / 25e9) + 3 * n / 4 * g, 1e-12);
    /* Same-rail traffic (hier: GPU l to GPU l) never needs PXN: one leaf, 1 + 2 = 3 us either way. */
    double hier = 2 * (1e-6 + n / 2 / 100e9) + n / 2 * g + 2 * (3e-6 + n / 4 / 25e9) + n / 4 * g;
    assert_rel(sim_time(off, RB_COLL_ALLREDUCE, RB_SIM_HIER, n), hier, 1e-12);
    assert_rel(sim_time(on, RB_COLL_ALLREDUCE, RB_SIM_HIER, n), hier, 1e-12);
    rb_sim_free(off);
    rb_sim_free(on);
}

/* Two GPUs per NIC on a fat-tree: the rail steps of hier share each NIC between two flows. */
static void test_nic_sharing(void **state)
{
    (void)state;
    struct rb_topo t = design(RB_TOPO_FAT_TREE, 2, 4, 2, 8, 1, 1.0);
    finish(&t);
    cur = &t;
    struct rb_sim *s;
    assert_int_equal(rb_sim_create(&t, true, &s), 0);
    const double n = MiB, g = 1e-12;
    double want = 6 * (1e-6 + n / 4 / 100e9) + 3 * n / 4 * g   /* intra-node reduce-scatter and allgather */
                  + 2 * (3e-6 + n / 8 * 2 / 25e9) + n / 8 * g; /* two flows per NIC across nodes */
    assert_rel(sim_time(s, RB_COLL_ALLREDUCE, RB_SIM_HIER, n), want, 1e-12);
    rb_sim_free(s);
}

/* A 2:1 oversubscribed leaf layer: pairwise alltoall's middle step puts two flows on each leaf's one uplink. */
static void test_spine_oversubscription(void **state)
{
    (void)state;
    const double S = 4 * MiB;
    struct rb_topo t = design(RB_TOPO_FAT_TREE, 4, 1, 1, 3, 1, 2.0);
    finish(&t);
    cur = &t;
    assert_int_equal(t.leaves, 2);
    assert_int_equal(rb_topo_leaf_uplinks(&t, 0), 1);
    struct rb_sim *s;
    assert_int_equal(rb_sim_create(&t, false, &s), 0);
    /* Shifts 1 and 3: one flow per uplink; shift 2: two. Every step has a flow through the spine: 5 us. */
    assert_rel(sim_time(s, RB_COLL_ALLTOALL, RB_SIM_RING, S), 3 * 5e-6 + (1 + 2 + 1) * S / 4 / 25e9, 1e-12);
    rb_sim_free(s);

    /* 1:1 on the same switches: one node per leaf, one uplink each, so no flow ever shares one. */
    t = design(RB_TOPO_FAT_TREE, 4, 1, 1, 3, 1, 1.0);
    finish(&t);
    assert_int_equal(t.leaves, 4);
    assert_int_equal(rb_topo_leaf_uplinks(&t, 0), 1);
    assert_int_equal(rb_sim_create(&t, false, &s), 0);
    assert_rel(sim_time(s, RB_COLL_ALLTOALL, RB_SIM_RING, S), 3 * 5e-6 + 3 * S / 4 / 25e9, 1e-12);
    rb_sim_free(s);
}

/* 32,768 GPUs: every algorithm gives a finite, positive time and busbw below the NIC rate. */
static void test_large(void **state)
{
    (void)state;
    struct rb_topo t;
    rb_topo_default(&t);
    t.nodes = 4096;
    finish(&t);
    struct rb_sim *s;
    assert_int_equal(rb_sim_create(&t, true, &s), 0);
    for (int a = 0; a < RB_SIM_ALGOS; a++) {
        double tm;
        assert_int_equal(rb_sim_time(s, RB_COLL_ALLREDUCE, (enum rb_sim_algo)a, 1 << 30, &tm, NULL), 0);
        double busbw = (1 << 30) / tm * rb_coll_busbw_factor(RB_COLL_ALLREDUCE, 32768);
        /* hier runs 8 rails in parallel: at most 8 NICs' worth (8 x 50 GB/s); the others one NIC's. */
        assert_true(tm > 0 && busbw > 0 && busbw < (a == RB_SIM_HIER ? 8 : 1) * 50e9);
    }
    rb_sim_free(s);
    /* Pairwise alltoall above 4,096 ranks samples its shifts: p - 1 steps of at least 3 us still. */
    t.nodes = 1024;
    finish(&t);
    assert_int_equal(rb_sim_create(&t, true, &s), 0);
    double tm;
    assert_int_equal(rb_sim_time(s, RB_COLL_ALLTOALL, RB_SIM_RING, 1 << 20, &tm, NULL), 0);
    assert_true(tm > 8191 * 3e-6 && tm < 8191 * 20e-6);
    rb_sim_free(s);
}

/* The coll fixture was generated with alpha 4 us, 6 GB/s, gamma 1/(12 GB/s) and +-3 % noise. */
static void test_calibrate_fixture(void **state)
{
    (void)state;
    struct rb_calib_row *rows;
    size_t n, skipped;
    char err[512];
    assert_int_equal(rb_calib_read(RB_FIXTURES_DIR "/fabric/coll-run", &rows, &n, &skipped, err, sizeof err), 0);
    assert_int_equal(n, 112);
    assert_int_equal(skipped, 0);
    struct rb_topo base;
    rb_topo_default(&base);
    finish(&base);
    struct rb_calib c;
    assert_int_equal(rb_calib_fit(&base, true, rows, n, &c, err, sizeof err), 0);
    assert_rel(c.link[RB_LINK_NVLINK].lat_s, 4e-6, 0.03);
    assert_rel(c.link[RB_LINK_NVLINK].bw_bytes_per_s, 6e9, 0.03);
    assert_rel(c.reduce_bytes_per_s, 12e9, 0.05);
    assert_true(c.lat_fitted[RB_LINK_NVLINK] && c.bw_fitted[RB_LINK_NVLINK] && c.reduce_fitted);
    assert_false(c.bw_fitted[RB_LINK_LEAF]);
    assert_rel(c.link[RB_LINK_LEAF].bw_bytes_per_s, base.link[RB_LINK_LEAF].bw_bytes_per_s, 1e-12);
    /* Better than the defaults, and within the noise. */
    assert_true(c.err_fitted < c.err_default);
    assert_true(c.err_fitted < 0.03);
    assert_true(c.err_default > 0.5);
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(rows[i].fitted_s - rows[i].measured_s) < 0.08 * rows[i].measured_s);
    free(rows);
}

/* Rows made by the model itself on two nodes: the fit recovers the leaf and NVLink classes it used. */
static void test_calibrate_two_classes(void **state)
{
    (void)state;
    struct rb_topo truth = design(RB_TOPO_RAIL_OPTIMIZED, 2, 2, 2, 8, 2, 1.0);
    set_link(&truth, RB_LINK_NVLINK, 480, 3.0); /* 60 GB/s */
    set_link(&truth, RB_LINK_LEAF, 100, 2.0);   /* 12.5 GB/s */
    truth.reduce_bytes_per_s = 25e9;
    struct rb_topo intra = truth;
    intra.nodes = 1;
    finish(&truth);
    finish(&intra);
    struct rb_sim *s2, *s1;
    assert_int_equal(rb_sim_create(&truth, true, &s2), 0);
    assert_int_equal(rb_sim_create(&intra, true, &s1), 0);
    struct rb_calib_row rows[64];
    size_t n = 0;
    for (double size = 1024; size <= 16 * MiB; size *= 4) {
        const enum rb_sim_algo algos[] = {RB_SIM_RING, RB_SIM_HIER, RB_SIM_RD};
        for (int i = 0; i < 3; i++) {
            struct rb_calib_row r = {.coll = RB_COLL_ALLREDUCE, .algo = (int)algos[i], .size_bytes = size,
                                     .ranks = 4, .ranks_per_node = 2};
            assert_int_equal(rb_sim_time(s2, r.coll, algos[i], size, &r.measured_s, NULL), 0);
            rows[n++] = r;
        }
        struct rb_calib_row r = {.coll = RB_COLL_ALLREDUCE, .algo = RB_SIM_RING, .size_bytes = size, .ranks = 2,
                                 .ranks_per_node = 2};
        assert_int_equal(rb_sim_time(s1, r.coll, RB_SIM_RING, size, &r.measured_s, NULL), 0);
        rows[n++] = r;
    }
    rb_sim_free(s1);
    rb_sim_free(s2);
    struct rb_topo base = design(RB_TOPO_RAIL_OPTIMIZED, 2, 2, 2, 8, 2, 1.0);
    finish(&base);
    struct rb_calib c;
    char err[256];
    assert_int_equal(rb_calib_fit(&base, true, rows, n, &c, err, sizeof err), 0);
    assert_true(c.err_fitted < 1e-3);
    assert_rel(c.link[RB_LINK_LEAF].bw_bytes_per_s, 12.5e9, 0.01);
    assert_rel(c.link[RB_LINK_NVLINK].bw_bytes_per_s, 60e9, 0.01);
    assert_rel(c.link[RB_LINK_NVLINK].lat_s, 3e-6, 0.01);
    /* Only the sum of the inter-node latencies is seen: PCIe and leaf both ways, plus NVLink for PXN. */
    double inter = 2 * c.link[RB_LINK_PCIE].lat_s + 2 * c.link[RB_LINK_LEAF].lat_s;
    assert_rel(inter, 2 * 0.5e-6 + 2 * 2e-6, 0.01);
    assert_rel(c.reduce_bytes_per_s, 25e9, 0.01);
}

/* Allgather rows on one node of 2 ranks made by the model with NVLink at gbit and lat_us, sizes lo..hi (x2). */
static size_t band_rows(struct rb_calib_row *rows, size_t n, double lo, double hi, double gbit, double lat_us)
{
    struct rb_topo t = design(RB_TOPO_RAIL_OPTIMIZED, 1, 2, 2, 8, 2, 1.0);
    set_link(&t, RB_LINK_NVLINK, gbit, lat_us);
    finish(&t);
    struct rb_sim *s;
    assert_int_equal(rb_sim_create(&t, true, &s), 0);
    for (double size = lo; size <= hi; size *= 2) {
        struct rb_calib_row r = {.coll = RB_COLL_ALLGATHER, .algo = RB_SIM_RING, .size_bytes = size, .ranks = 2,
                                 .ranks_per_node = 2};
        snprintf(r.algo_name, sizeof r.algo_name, "ring");
        assert_int_equal(rb_sim_time(s, r.coll, RB_SIM_RING, size, &r.measured_s, NULL), 0);
        rows[n++] = r;
    }
    rb_sim_free(s);
    return n;
}

/* Two regimes (small messages fast, large ones slow, as caches then memory): each band recovers its alpha and beta. */
static void test_calibrate_bands(void **state)
{
    (void)state;
    struct rb_calib_row rows[64];
    size_t n = band_rows(rows, 0, 8 * MiB, 64 * MiB, 20, 40.0); /* given out of order: the fit sorts */
    n = band_rows(rows, n, 1024, 256 * 1024, 400, 2.0);
    struct rb_topo base = design(RB_TOPO_RAIL_OPTIMIZED, 1, 2, 2, 8, 2, 1.0);
    finish(&base);
    struct rb_calib_bands B;
    char err[256];
    assert_int_equal(rb_calib_fit_bands(&base, true, rows, n, 3, &B, err, sizeof err), 0);
    assert_int_equal(B.nbands, 2);
    assert_true(B.band[0].min_bytes == 1024 && B.band[0].max_bytes == 256 * 1024 && B.band[1].min_bytes == 8 * MiB);
    assert_rel(B.band[0].fit.link[RB_LINK_NVLINK].lat_s, 2e-6, 0.01);
    assert_rel(B.band[0].fit.link[RB_LINK_NVLINK].bw_bytes_per_s, 400 * 1e9 / 8, 0.01);
    assert_rel(B.band[1].fit.link[RB_LINK_NVLINK].lat_s, 40e-6, 0.01);
    assert_rel(B.band[1].fit.link[RB_LINK_NVLINK].bw_bytes_per_s, 20 * 1e9 / 8, 0.01);
    assert_true(B.err_fitted < 1e-3);
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(rows[i].fitted_s - rows[i].measured_s) < 1e-3 * rows[i].measured_s);
    /* One band only: a single alpha-beta line cannot follow both regimes. */
    assert_int_equal(rb_calib_fit_bands(&base, true, rows, n, 1, &B, err, sizeof err), 0);
    assert_true(B.nbands == 1 && B.err_fitted > 0.2);
    /* One regime: no second band is taken for nothing. */
    n = band_rows(rows, 0, 1024, 64 * MiB, 100, 5.0);
    assert_int_equal(rb_calib_fit_bands(&base, true, rows, n, 3, &B, err, sizeof err), 0);
    assert_int_equal(B.nbands, 1);
    assert_rel(B.band[0].fit.link[RB_LINK_NVLINK].lat_s, 5e-6, 0.01);
}

/* Degenerate input: every row one size (alpha and beta inseparable) exits with -EDOM and the reason. */
static void test_calibrate_degenerate(void **state)
{
    (void)state;
    struct rb_calib_row rows[8];
    size_t n = 0;
    for (int i = 0; i < 4; i++)
        n = band_rows(rows, n, 1 * MiB, 1 * MiB, 100, 5.0);
    struct rb_topo base = design(RB_TOPO_RAIL_OPTIMIZED, 1, 2, 2, 8, 2, 1.0);
    finish(&base);
    struct rb_calib_bands B;
    char err[256] = "";
    assert_int_equal(rb_calib_fit_bands(&base, true, rows, n, 3, &B, err, sizeof err), -EDOM);
    assert_non_null(strstr(err, "same size"));
    /* Times flat in size: the bandwidth runs to zero cost, and keeps its default instead of an absurd value. */
    n = band_rows(rows, 0, 1024, 16384, 100, 5.0);
    for (size_t i = 0; i < n; i++)
        rows[i].measured_s = 10e-6;
    assert_int_equal(rb_calib_fit_bands(&base, true, rows, n, 1, &B, err, sizeof err), 0);
    assert_true(B.band[0].fit.unbounded == 1 && !B.band[0].fit.bw_fitted[RB_LINK_NVLINK]);
    assert_rel(B.band[0].fit.link[RB_LINK_NVLINK].bw_bytes_per_s, base.link[RB_LINK_NVLINK].bw_bytes_per_s, 1e-9);
    /* An absurd fitted value is named by the physical check. */
    struct rb_calib c = B.band[0].fit;
    char why[160];
    c.bw_fitted[RB_LINK_NVLINK] = true;
    c.link[RB_LINK_NVLINK].bw_bytes_per_s = 3.6e9 * 1e9 / 8;
    assert_false(rb_calib_physical(&c, why, sizeof why));
    assert_non_null(strstr(why, "nvlink bandwidth"));
}

static void test_calibrate_bad_input(void **state)
{
    (void)state;
    struct rb_calib_row *rows = NULL;
    size_t n, skipped;
    char err[512] = "";
    /* A topology file is JSON but not a coll result. */
    assert_int_equal(rb_calib_read(RB_FIXTURES_DIR "/../../fabric/topologies/dgx-h100-su.json", &rows, &n, &skipped,
                                   err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "not a railbench coll result"));
    assert_int_equal(rb_calib_read(RB_FIXTURES_DIR "/fabric/does-not-exist", &rows, &n, &skipped, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "cannot read"));
    assert_null(rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formulas_one_node),
        cmocka_unit_test(test_pxn_vs_spine),
        cmocka_unit_test(test_nic_sharing),
        cmocka_unit_test(test_spine_oversubscription),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_calibrate_fixture),
        cmocka_unit_test(test_calibrate_two_classes),
        cmocka_unit_test(test_calibrate_bands),
        cmocka_unit_test(test_calibrate_degenerate),
        cmocka_unit_test(test_calibrate_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
