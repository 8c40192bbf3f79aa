/* Unit tests of fabric/topo.c: geometry, routes and hop counts, counts and bisection on hand-checked designs; JSON errors. */
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

#include "topo_int.h"

#define GBIT (1e9 / 8.0)

#define assert_near(a, b) check_near((a), (b), #a, __FILE__, __LINE__)

static void check_near(double got, double want, const char *expr, const char *file, int line)
{
    if (!(fabs(got - want) <= 1e-9 * (fabs(want) > 1.0 ? fabs(want) : 1.0))) {
        print_error("%s = %.12g, expected %.12g\n", expr, got, want);
        _fail(file, line);
    }
}

/* A design with the default links, finished; fails the test when it does not validate. */
static struct rb_topo design(enum rb_topo_kind kind, int nodes, int gpus, int nics, int radix, int spines, double over)
{
    struct rb_topo t;
    char err[256] = "";
    rb_topo_default(&t);
    t.kind = kind;
    t.nodes = nodes;
    t.gpus_per_node = gpus;
    t.nics_per_node = nics;
    t.rails = kind == RB_TOPO_FAT_TREE ? 1 : nics;
    t.leaf_radix = radix;
    t.spines = spines;
    t.oversubscription = over;
    if (rb_topo_finish(&t, err, sizeof err) != 0)
        fail_msg("design does not validate: %s", err);
    return t;
}

static void route(const struct rb_topo *t, int src, int dst, bool pxn, int want_rc, int switch_hops, int nvlink_hops,
                  int via)
{
    struct rb_route r;
    int rc = rb_topo_route(t, src, dst, pxn, &r);
    if (rc != want_rc || (rc == 0 && (r.switch_hops != switch_hops || r.nvlink_hops != nvlink_hops || r.via_gpu != via)))
        fail_msg("route %d -> %d pxn %d: rc %d switch %d nvlink %d via %d; want rc %d switch %d nvlink %d via %d", src,
                 dst, pxn, rc, r.switch_hops, r.nvlink_hops, r.via_gpu, want_rc, switch_hops, nvlink_hops, via);
}

/* Rail-optimised, 2 nodes x 4 GPUs x 4 NICs, 8-port leaves, 2 spines: one leaf per rail. */
static void test_rail_optimized_small(void **state)
{
    (void)state;
    struct rb_topo t = design(RB_TOPO_RAIL_OPTIMIZED, 2, 4, 4, 8, 2, 1.0);
    /* 8 ports at 1:1 -> 4 down + 4 up; each rail has 2 ports -> 1 leaf per rail, 4 leaves. */
    assert_int_equal(t.down_per_leaf, 4);
    assert_int_equal(t.leaves_per_group, 1);
    assert_int_equal(t.leaves, 4);
    assert_true(t.uses_spines);
    /* NIC 1 of both nodes on leaf 1. */
    assert_int_equal(rb_topo_nic_leaf(&t, 1), 1);
    assert_int_equal(rb_topo_nic_leaf(&t, 5), 1);

    route(&t, 1, 5, false, 0, 1, 0, -1);  /* same rail: one switch */
    route(&t, 1, 5, true, 0, 1, 0, -1);   /* PXN changes nothing on-rail */
    route(&t, 3, 4, false, 0, 3, 0, -1);  /* rail 3 -> rail 0: leaf-spine-leaf */
    route(&t, 3, 4, true, 0, 1, 1, 0);    /* PXN: NVLink to GPU 0:0, then rail 0 */
    route(&t, 0, 3, false, 0, 0, 1, -1);  /* same node: NVLink */
    route(&t, 2, 2, false, 0, 0, 0, -1);
    route(&t, 0, 8, false, -EINVAL, 0, 0, -1);

    struct rb_route r;
    assert_int_equal(rb_topo_route(&t, 3, 4, false, &r), 0);
    assert_int_equal(r.traversals[RB_LINK_PCIE], 2);
    assert_int_equal(r.traversals[RB_LINK_LEAF], 2);
    assert_int_equal(r.traversals[RB_LINK_SPINE], 2);
    assert_int_equal(r.traversals[RB_LINK_NVLINK], 0);
    assert_int_equal(r.src_leaf, 3);
    assert_int_equal(r.dst_leaf, 0);
    assert_int_equal(rb_topo_route(&t, 3, 4, true, &r), 0);
    assert_int_equal(r.traversals[RB_LINK_SPINE], 0);
    assert_int_equal(r.traversals[RB_LINK_NVLINK], 1);
    assert_int_equal(r.src_nic, 0); /* node 0's NIC 0 */
    assert_int_equal(r.dst_nic, 4); /* node 1's NIC 0 */

    struct rb_topo_counts c;
    rb_topo_counts(&t, &c);
    assert_int_equal(c.gpus, 8);
    assert_int_equal(c.leaves, 4);
    assert_int_equal(c.spines, 2);
    assert_int_equal(c.switches, 6);
    assert_int_equal(c.nic_cables, 8);
    /* Each leaf has 2 NIC ports -> 2 uplinks (a multiple of the 2 spines). */
    assert_int_equal(c.uplinks_per_leaf, 2);
    assert_int_equal(c.spine_cables, 8);
    assert_int_equal(c.cables, 16);
    assert_int_equal(c.spine_ports_used, 4);
    /* One node on each side: its 4 NICs at 400 Gbit/s, all on single-leaf rails. */
    assert_near(c.bisection_bytes_per_s / GBIT, 1600);
}

/* Fat-tree, 4 nodes x 8 GPUs x 8 NICs, 16-port leaves, 4 spines: one node per leaf. */
static void test_fat_tree(void **state)
{
    (void)state;
    struct rb_topo t = design(RB_TOPO_FAT_TREE, 4, 8, 8, 16, 4, 1.0);
    assert_int_equal(t.down_per_leaf, 8);
    assert_int_equal(t.leaves, 4);
    route(&t, 7, 8, false, 0, 3, 0, -1);  /* node 0 -> node 1: different leaves */
    route(&t, 7, 8, true, 0, 3, 0, -1);   /* PXN has no rails to use on a fat-tree */
    route(&t, 0, 5, false, 0, 0, 1, -1);
    struct rb_topo_counts c;
    rb_topo_counts(&t, &c);
    assert_int_equal(c.switches, 8);
    assert_int_equal(c.nic_cables, 32);
    assert_int_equal(c.spine_cables, 32);
    /* 16 NIC ports per half at 50 GB/s = 800 GB/s; half of 32 uplinks at 50 GB/s = 800 GB/s. */
    assert_near(c.bisection_bytes_per_s, 800e9);

    /* 2:1 oversubscribed: 10 down + 5 up would need 8 uplinks with 4 spines; 8 down + 4 up fits. */
    struct rb_topo o = design(RB_TOPO_FAT_TREE, 4, 8, 8, 16, 4, 2.0);
    assert_int_equal(o.down_per_leaf, 8);
    assert_int_equal(rb_topo_leaf_uplinks(&o, 0), 4);
    rb_topo_counts(&o, &c);
    assert_int_equal(c.spine_cables, 16);
    /* The spine side is the limit now: 8 uplinks x 50 GB/s. */
    assert_near(c.bisection_bytes_per_s, 400e9);

    /* GPUs share NICs on a fat-tree: 8 GPUs over 4 NICs, two each. */
    struct rb_topo s = design(RB_TOPO_FAT_TREE, 2, 8, 4, 16, 1, 1.0);
    assert_int_equal(rb_topo_gpu_nic(&s, 0), 0);
    assert_int_equal(rb_topo_gpu_nic(&s, 1), 0);
    assert_int_equal(rb_topo_gpu_nic(&s, 7), 3);
    /* 8 ports fit one leaf: no spine needed. */
    assert_int_equal(s.leaves, 1);
    assert_false(s.uses_spines);
    route(&s, 7, 8, false, 0, 1, 0, -1);
}

/* Rail-only, 4 nodes x 8 GPUs: one 8-port switch per rail, no spines. */
static void test_rail_only(void **state)
{
    (void)state;
    struct rb_topo t = design(RB_TOPO_RAIL_ONLY, 4, 8, 8, 8, 0, 1.0);
    assert_int_equal(t.leaves, 8);
    assert_false(t.uses_spines);
    route(&t, 7, 8, false, -EHOSTUNREACH, 0, 0, -1); /* cross-rail without PXN: no path */
    route(&t, 7, 8, true, 0, 1, 1, 0);
    route(&t, 2, 26, false, 0, 1, 0, -1);           /* 0:2 -> 3:2, same rail */
    struct rb_topo_counts c;
    rb_topo_counts(&t, &c);
    assert_int_equal(c.switches, 8);
    assert_int_equal(c.spine_cables, 0);
    assert_int_equal(c.cables, 32);
}

/* Rail-optimised with two leaves per rail: 4 nodes x 2 GPUs x 2 NICs, 4-port leaves, 1 spine. */
static void test_rail_optimized_two_leaves_per_rail(void **state)
{
    (void)state;
    struct rb_topo t = design(RB_TOPO_RAIL_OPTIMIZED, 4, 2, 2, 4, 1, 1.0);
    assert_int_equal(t.down_per_leaf, 2);
    assert_int_equal(t.leaves_per_group, 2);
    assert_int_equal(t.leaves, 4);
    route(&t, 0, 2, false, 0, 1, 0, -1);  /* 0:0 -> 1:0, rail 0, both on leaf 0 */
    route(&t, 0, 4, false, 0, 3, 0, -1);  /* 0:0 -> 2:0, rail 0, leaf 0 -> leaf 1 */
    route(&t, 1, 4, true, 0, 3, 1, 0);    /* PXN to rail 0, still two leaves apart */
    route(&t, 1, 2, true, 0, 1, 1, 0);    /* 0:1 -> 1:0 with PXN: rail 0, one leaf */
    route(&t, 1, 2, false, 0, 3, 0, -1);
}

static struct rb_topo parse(const char *json, int want_rc, const char *want_in_err)
{
    struct rb_topo t;
    char err[256] = "";
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    int rc = rb_topo_from_json(&t, j, err, sizeof err);
    cJSON_Delete(j);
    if (rc != want_rc || (want_in_err && !strstr(err, want_in_err)))
        fail_msg("%s: rc %d err \"%s\"; want rc %d and \"%s\"", json, rc, err, want_rc, want_in_err ? want_in_err : "");
    return t;
}

#define LINKS                                                                                                  \
    "\"links\": {\"nvlink\": {\"bandwidth_gbit_per_s\": 3600, \"latency_us\": 0.8},"                           \
    "\"pcie\": {\"bandwidth_gbit_per_s\": 512, \"latency_us\": 0.5},"                                          \
    "\"leaf\": {\"bandwidth_gbit_per_s\": 400, \"latency_us\": 1},"                                            \
    "\"spine\": {\"bandwidth_gbit_per_s\": 400, \"latency_us\": 0.5}}"

static void test_json(void **state)
{
    (void)state;
    struct rb_topo t = parse("{\"name\": \"su\", \"kind\": \"rail-optimized\", \"nodes\": 32, \"gpus_per_node\": 8, "
                             "\"nics_per_node\": 8, \"leaf_radix\": 64, \"spines\": 8, " LINKS "}",
                             0, NULL);
    assert_int_equal(t.rails, 8);
    assert_near(t.oversubscription, 1.0);
    assert_near(t.link[RB_LINK_LEAF].bw_bytes_per_s, 50e9);
    assert_near(t.link[RB_LINK_NVLINK].lat_s, 0.8e-6);
    assert_int_equal(t.leaves, 8);

    /* Round trip. */
    cJSON *j = rb_topo_to_json(&t);
    struct rb_topo u;
    char err[256];
    assert_int_equal(rb_topo_from_json(&u, j, err, sizeof err), 0);
    cJSON_Delete(j);
    assert_string_equal(u.name, "su");
    assert_int_equal(u.kind, t.kind);
    assert_int_equal(u.nodes, 32);
    assert_int_equal(u.leaves, t.leaves);
    for (int c = 0; c < RB_LINK_CLASSES; c++) {
        assert_near(u.link[c].bw_bytes_per_s, t.link[c].bw_bytes_per_s);
        assert_near(u.link[c].lat_s, t.link[c].lat_s);
    }

    /* Bad input: each names the field. */
    parse("{\"kind\": \"rail-optimized\", \"gpus_per_node\": 8, \"nics_per_node\": 8, \"leaf_radix\": 64, "
          "\"spines\": 8, " LINKS "}", -EINVAL, "nodes is missing");
    parse("{\"kind\": \"rail-optimized\", \"nodes\": \"8x\", \"gpus_per_node\": 8, \"nics_per_node\": 8, "
          "\"leaf_radix\": 64, \"spines\": 8, " LINKS "}", -EINVAL, "nodes must be a whole number");
    parse("{\"kind\": \"rail-optimized\", \"nodes\": 2.5, \"gpus_per_node\": 8, \"nics_per_node\": 8, "
          "\"leaf_radix\": 64, \"spines\": 8, " LINKS "}", -EINVAL, "got 2.5");
    parse("{\"kind\": \"rail-optimized\", \"nodes\": 4, \"gpus_per_node\": 8, \"nics_per_node\": 4, "
          "\"leaf_radix\": 64, \"spines\": 8, " LINKS "}", -EINVAL, "one NIC port per GPU");
    parse("{\"kind\": \"fat-tree\", \"nodes\": 4, \"gpus_per_node\": 8, \"nics_per_node\": 4, \"leaf_radix\": 64, "
          "\"spines\": 8, \"links\": {\"nvlink\": {\"bandwidth_gbit_per_s\": 3600, \"latency_us\": 0.8},"
          "\"pcie\": {\"bandwidth_gbit_per_s\": 512, \"latency_us\": 0.5},"
          "\"leaf\": {\"bandwidth_gbit_per_s\": 0, \"latency_us\": 1},"
          "\"spine\": {\"bandwidth_gbit_per_s\": 400, \"latency_us\": 0.5}}}",
          -EINVAL, "links.leaf.bandwidth_gbit_per_s must be > 0");
    parse("{\"kind\": \"fat-tree\", \"nodes\": 4, \"gpus_per_node\": 8, \"nics_per_node\": 4, \"leaf_radix\": 64, "
          "\"spines\": 8, \"links\": {\"nvlink\": {\"bandwidth_gbit_per_s\": 3600, \"latency_us\": 0.8}}}",
          -EINVAL, "links.pcie is missing");
    parse("{\"kind\": \"fat-tree\", \"nodes\": 4, \"gpus_per_node\": 8, \"nics_per_node\": 4, \"leaf_radix\": 64, "
          "\"spines\": 8, \"switches\": 3, " LINKS "}", -EINVAL, "unknown field \"switches\"");
    parse("{\"kind\": \"torus\", \"nodes\": 4}", -EINVAL, "kind must be");
    parse("{\"kind\": \"rail-only\", \"nodes\": 4, \"gpus_per_node\": 8, \"nics_per_node\": 8, \"leaf_radix\": 64, "
          "\"spines\": 2, " LINKS "}", -EINVAL, "spines must be 0");
    parse("{\"kind\": \"rail-only\", \"nodes\": 128, \"gpus_per_node\": 8, \"nics_per_node\": 8, \"leaf_radix\": 64, "
          LINKS "}", -EINVAL, "each rail on one switch");
    parse("{\"kind\": \"rail-optimized\", \"nodes\": 4, \"gpus_per_node\": 4, \"nics_per_node\": 8, \"rails\": 3, "
          "\"leaf_radix\": 64, \"spines\": 8, " LINKS "}", -EINVAL, "rails must divide");
    parse("{\"kind\": \"fat-tree\", \"nodes\": 64, \"gpus_per_node\": 8, \"nics_per_node\": 8, \"leaf_radix\": 8, "
          "\"spines\": 8, " LINKS "}", -EINVAL, "cannot hold");
    parse("{\"kind\": \"fat-tree\", \"nodes\": 64, \"gpus_per_node\": 8, \"nics_per_node\": 8, \"leaf_radix\": 64, "
          "\"spines\": 0, " LINKS "}", -EINVAL, "needs spines");
    parse("{\"kind\": \"fat-tree\", \"nodes\": 4, \"gpus_per_node\": 8, \"nics_per_node\": 8, \"leaf_radix\": 64, "
          "\"spines\": 4, \"oversubscription\": 0.5, " LINKS "}", -EINVAL, "oversubscription must be");
    parse("[1, 2]", -EINVAL, "expected a JSON object");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rail_optimized_small),
        cmocka_unit_test(test_fat_tree),
        cmocka_unit_test(test_rail_only),
        cmocka_unit_test(test_rail_optimized_two_leaves_per_rail),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
