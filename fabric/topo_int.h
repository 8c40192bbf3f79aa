/* Fabric topology model: fat-tree, rail-optimised and rail-only designs, JSON, routes and hops, counts, Graphviz. */
#ifndef RB_FABRIC_TOPO_INT_H
#define RB_FABRIC_TOPO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "railbench/buf.h"

enum rb_topo_kind { RB_TOPO_FAT_TREE, RB_TOPO_RAIL_OPTIMIZED, RB_TOPO_RAIL_ONLY, RB_TOPO_KINDS };

struct rb_topo;

/*
 * What sets one design apart, in one row per kind (rb_topo_kind_def); the
 * rest of the model asks these properties, never the kind.
 */
struct rb_topo_kind_def {
    const char *name;
    /*
     * NIC i of a node is on rail i % rails with leaves of its own, and GPU i
     * uses NIC i. Without rails (fat-tree) rails is 1, every NIC on one set
     * of leaves, and GPUs share the NICs evenly.
     */
    bool railed;
    /* Leaves are joined by spines. Without (rail-only), cross-rail traffic needs PXN: there is no network path. */
    bool spine_layer;
    /*
     * Lays out the leaves of a group holding ports NIC ports: sets
     * down_per_leaf, leaves_per_group and uses_spines of a checked t.
     * Returns 0 or -EINVAL with one sentence in err.
     */
    int (*layout)(struct rb_topo *t, long long ports, char *err, size_t errlen);
};

/* The row of kind k; NULL for an invalid kind. */
const struct rb_topo_kind_def *rb_topo_kind_def(enum rb_topo_kind k);

/* Link classes: GPU-GPU inside a node, GPU-NIC, NIC-leaf cable, leaf-spine cable. */
enum rb_link_class { RB_LINK_NVLINK, RB_LINK_PCIE, RB_LINK_LEAF, RB_LINK_SPINE, RB_LINK_CLASSES };

/* One direction of one link: bandwidth and the latency of one traversal. */
struct rb_link {
    double bw_bytes_per_s;
    double lat_s;
};

/* Bytes per second in one Gbit/s: link speeds are given in Gbit/s (decimal, as vendors quote them). */
#define RB_GBIT_BYTES_PER_S (1e9 / 8.0)

/* Upper bound on GPUs, so that every index fits an int with room to spare. */
#define RB_TOPO_MAX_GPUS (1 << 22)

struct rb_topo {
    char name[64];
    enum rb_topo_kind kind;
    int nodes, gpus_per_node, nics_per_node;
    int rails;                /* NIC i of a node is on rail i % rails; 1 on a fat-tree */
    int leaf_radix;           /* ports per leaf switch */
    int spines;
    double oversubscription;  /* leaf downlink : uplink capacity, >= 1 */
    struct rb_link link[RB_LINK_CLASSES];
    double reduce_bytes_per_s; /* reduction throughput of one GPU (1/gamma of the alpha-beta model) */

    /* Derived by rb_topo_finish; read-only for callers. */
    int groups;           /* sets of leaves: one per rail, or 1 on a fat-tree */
    int ports_per_group;  /* NIC ports cabled to each group's leaves */
    int down_per_leaf;    /* NIC ports one leaf takes at most */
    int leaves_per_group;
    int leaves;
    bool uses_spines;     /* the design has a spine layer that carries traffic */
};

/* Where a message from one GPU to another goes, and what it crosses. */
struct rb_route {
    bool reachable;       /* false: rail-only fabric, different rails, PXN off */
    int via_gpu;          /* PXN: the GPU on the source node that forwards over NVLink, else -1 */
    int src_nic, dst_nic; /* global NIC indices (node * nics_per_node + local), -1 inside a node */
    int src_leaf, dst_leaf;
    int switch_hops;      /* 0 inside a node, 1 through one leaf, 3 leaf-spine-leaf */
    int nvlink_hops;
    int traversals[RB_LINK_CLASSES]; /* links crossed per class; latency is the sum over them */
};

/* Totals of a design. */
struct rb_topo_counts {
    long long gpus, nics, leaves, spines, switches;
    long long nic_cables, spine_cables, cables;
    int nic_ports_per_leaf;               /* on the fullest leaf (the first of each group) */
    int uplinks_per_leaf;                 /* on the fullest leaf */
    int spine_ports_used;                 /* on the busiest spine */
    double bisection_bytes_per_s;
};

/* "fat-tree", "rail-optimized", "rail-only"; NULL for an invalid kind. */
const char *rb_topo_kind_name(enum rb_topo_kind k);
/* Parses a kind name (also "rail-optimised"); returns 0 or -EINVAL. */
int rb_topo_kind_parse(const char *s, enum rb_topo_kind *k);
/* "nvlink", "pcie", "leaf", "spine"; NULL for an invalid class. */
const char *rb_link_class_name(enum rb_link_class c);
/* Parses a link class name; returns 0 or -EINVAL. */
int rb_link_class_parse(const char *s, enum rb_link_class *c);

/*
 * Fills t with the built-in design (not yet finished): one DGX H100-style
 * scalable unit, 32 nodes x 8 GPUs x 8 NICs on 8 rails, 64-port leaves,
 * 8 spines, NVLink 3600 Gbit/s, PCIe Gen5 x16 512 Gbit/s, NDR 400 Gbit/s.
 */
void rb_topo_default(struct rb_topo *t);

/*
 * Checks t and computes the derived fields. Returns 0, or -EINVAL with one
 * sentence in err naming the field, the value and what is accepted.
 */
int rb_topo_finish(struct rb_topo *t, char *err, size_t errlen);

/*
 * Reads a topology from JSON (schema in docs/fabric.md "railbench fabric topo")
 * and finishes it. Unknown fields, missing required fields, wrong types and
 * values out of range are errors. Returns 0 or -EINVAL with a message in err.
 */
int rb_topo_from_json(struct rb_topo *t, const cJSON *j, char *err, size_t errlen);

/* rb_topo_from_json on a file; err also covers unreadable files and bad JSON. */
int rb_topo_load(struct rb_topo *t, const char *path, char *err, size_t errlen);

/* The topology as JSON, readable by rb_topo_from_json; caller frees. NULL when out of memory. */
cJSON *rb_topo_to_json(const struct rb_topo *t);

/* GPUs in the design. */
int rb_topo_gpus(const struct rb_topo *t);
/* The node-local NIC a node-local GPU uses: GPU i -> NIC i on rail designs, shared evenly on a fat-tree. */
int rb_topo_gpu_nic(const struct rb_topo *t, int local_gpu);
/* Rail of a node-local NIC. */
int rb_topo_nic_rail(const struct rb_topo *t, int local_nic);
/* Leaf switch of a global NIC index. */
int rb_topo_nic_leaf(const struct rb_topo *t, int global_nic);
/* NIC ports cabled to a leaf. */
int rb_topo_leaf_down(const struct rb_topo *t, int leaf);
/* Uplinks cabled from a leaf to the spines (0 without a spine layer). */
int rb_topo_leaf_uplinks(const struct rb_topo *t, int leaf);

/*
 * Route from GPU src to GPU dst (global ranks, node-major). With pxn,
 * cross-rail traffic between nodes first moves over NVLink to the source
 * node's GPU on the destination's rail (NCCL's PXN); on a fat-tree PXN
 * changes nothing. Returns 0; -EINVAL for a rank out of range;
 * -EHOSTUNREACH (r->reachable false) on a rail-only fabric across rails
 * without PXN, which has no network path.
 */
int rb_topo_route(const struct rb_topo *t, int src, int dst, bool pxn, struct rb_route *r);

/* Switch, cable and bisection figures of a finished topology. */
void rb_topo_counts(const struct rb_topo *t, struct rb_topo_counts *c);

/* Appends the design as a Graphviz graph to b; returns 0 or -ENOMEM. */
int rb_topo_write_dot(const struct rb_topo *t, struct rb_buf *b);

#endif
