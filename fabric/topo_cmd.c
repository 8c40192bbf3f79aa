/* railbench fabric topo: generate or read a topology; counts, bisection, hops between two GPUs, Graphviz. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"
#include "railbench/file.h"
#include "railbench/units.h"

/* GPU named as a global rank "12" or as "node:gpu" ("1:4"); returns 0 or -EINVAL. */
static int parse_gpu(const struct rb_topo *t, const char *s, int *rank)
{
    const char *colon = strchr(s, ':');
    uint64_t a, b;
    if (!colon) {
        if (rb_parse_u64(s, &a) != 0 || a >= (uint64_t)rb_topo_gpus(t))
            return -EINVAL;
        *rank = (int)a;
        return 0;
    }
    char node[32];
    size_t n = (size_t)(colon - s);
    if (n == 0 || n >= sizeof node)
        return -EINVAL;
    memcpy(node, s, n);
    node[n] = '\0';
    if (rb_parse_u64(node, &a) != 0 || rb_parse_u64(colon + 1, &b) != 0 || a >= (uint64_t)t->nodes ||
        b >= (uint64_t)t->gpus_per_node)
        return -EINVAL;
    *rank = (int)(a * (uint64_t)t->gpus_per_node + b);
    return 0;
}

static void gpu_label(char *buf, size_t len, const struct rb_topo *t, int rank)
{
    snprintf(buf, len, "GPU %d:%d", rank / t->gpus_per_node, rank % t->gpus_per_node);
}

/* The path as text ("GPU 0:7 > NIC 0:7 > leaf 7 > spine > leaf 0 > NIC 1:0 > GPU 1:0") and as a JSON array. */
static void describe_path(const struct rb_topo *t, int src, int dst, const struct rb_route *r, char *buf,
                          size_t len, cJSON *arr)
{
    char item[64];
    size_t n = 0;
#define STEP(...)                                                                                              \
    do {                                                                                                       \
        snprintf(item, sizeof item, __VA_ARGS__);                                                              \
        n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? " > " : "", item);                  \
        cJSON_AddItemToArray(arr, cJSON_CreateString(item));                                                   \
    } while (0)
    char first[32];
    buf[0] = '\0';
    gpu_label(first, sizeof first, t, src);
    STEP("%s", first);
    if (r->via_gpu >= 0) {
        STEP("NVLink");
        char via[32];
        gpu_label(via, sizeof via, t, r->via_gpu);
        STEP("%s", via);
    }
    if (r->src_nic < 0) {
        if (src != dst)
            STEP("NVLink");
    } else {
        STEP("NIC %d:%d", r->src_nic / t->nics_per_node, r->src_nic % t->nics_per_node);
        STEP("leaf %d", r->src_leaf);
        if (r->src_leaf != r->dst_leaf) {
            STEP("spine");
            STEP("leaf %d", r->dst_leaf);
        }
        STEP("NIC %d:%d", r->dst_nic / t->nics_per_node, r->dst_nic % t->nics_per_node);
    }
    if (src != dst) {
        char d[32];
        gpu_label(d, sizeof d, t, dst);
        STEP("%s", d);
    }
#undef STEP
}

static cJSON *route_json(const struct rb_topo *t, int src, int dst, bool pxn, struct rb_buf *out)
{
    struct rb_route r;
    cJSON *o = cJSON_CreateObject();
    int rc = rb_topo_route(t, src, dst, pxn, &r);
    cJSON_AddBoolToObject(o, "reachable", rc == 0);
    if (rc != 0) {
        rb_buf_printf(out, "  PXN %-3s: no path: a rail-only fabric has no spine, cross-rail traffic needs PXN\n",
                      pxn ? "on" : "off");
        return o;
    }
    char text[512];
    cJSON *path = cJSON_CreateArray();
    describe_path(t, src, dst, &r, text, sizeof text, path);
    cJSON_AddNumberToObject(o, "switch_hops", r.switch_hops);
    cJSON_AddNumberToObject(o, "nvlink_hops", r.nvlink_hops);
    cJSON_AddBoolToObject(o, "via_spine", r.src_leaf != r.dst_leaf);
    cJSON_AddItemToObject(o, "path", path);
    rb_buf_printf(out, "  PXN %-3s: %d switch hop%s, %d NVLink hop%s: %s\n", pxn ? "on" : "off", r.switch_hops,
                  r.switch_hops == 1 ? "" : "s", r.nvlink_hops, r.nvlink_hops == 1 ? "" : "s", text);
    return o;
}

/* GPUs A and B of --path A B (or --path A,B); src and dst stay -1 without --path. Returns 0 or RB_EXIT_USAGE. */
static int parse_path(const struct rb_topo *t, const char *path, const struct rb_cli *cli, int *src, int *dst)
{
    *src = *dst = -1;
    if (!path && cli->nargs == 0)
        return 0;
    char a[64] = "", b[64] = "";
    const char *comma = path ? strchr(path, ',') : NULL;
    if (path && comma && cli->nargs == 0 && (size_t)(comma - path) < sizeof a) {
        snprintf(a, sizeof a, "%.*s", (int)(comma - path), path);
        snprintf(b, sizeof b, "%s", comma + 1);
    } else if (path && cli->nargs == 1) {
        snprintf(a, sizeof a, "%s", path);
        snprintf(b, sizeof b, "%s", cli->args[0]);
    } else {
        return rb_cli_usage_error("--path: expected two GPUs, --path A B (e.g. --path 0:7 1:0)");
    }
    if (parse_gpu(t, a, src) != 0 || parse_gpu(t, b, dst) != 0)
        return rb_cli_usage_error("--path: expected GPUs as rank 0..%d or node:gpu (0..%d:0..%d), got \"%s\" \"%s\"",
                                  rb_topo_gpus(t) - 1, t->nodes - 1, t->gpus_per_node - 1, a, b);
    return 0;
}

/* The counts as JSON (summary.counts). */
static void counts_json(cJSON *summary, const struct rb_topo *t, const struct rb_topo_counts *c)
{
    cJSON *cj = cJSON_AddObjectToObject(summary, "counts");
    cJSON_AddNumberToObject(cj, "gpus", (double)c->gpus);
    cJSON_AddNumberToObject(cj, "nics", (double)c->nics);
    cJSON_AddNumberToObject(cj, "leaves", (double)c->leaves);
    if (rb_topo_kind_def(t->kind)->railed)
        cJSON_AddNumberToObject(cj, "leaves_per_rail", t->leaves_per_group);
    cJSON_AddNumberToObject(cj, "spines", (double)c->spines);
    cJSON_AddNumberToObject(cj, "switches", (double)c->switches);
    cJSON_AddNumberToObject(cj, "nic_cables", (double)c->nic_cables);
    cJSON_AddNumberToObject(cj, "spine_cables", (double)c->spine_cables);
    cJSON_AddNumberToObject(cj, "cables", (double)c->cables);
    cJSON_AddNumberToObject(cj, "nic_ports_per_leaf", c->nic_ports_per_leaf);
    cJSON_AddNumberToObject(cj, "nic_ports_per_leaf_max", t->down_per_leaf);
    cJSON_AddNumberToObject(cj, "uplinks_per_leaf", c->uplinks_per_leaf);
    cJSON_AddNumberToObject(cj, "spine_ports_used", c->spine_ports_used);
    cJSON_AddNumberToObject(cj, "bisection_gbit_per_s", c->bisection_bytes_per_s / RB_GBIT_BYTES_PER_S);
}

/* The counts as the table's rows. */
static void counts_table(struct rb_buf *b, const struct rb_topo *t, const struct rb_topo_counts *c)
{
    const struct rb_topo_kind_def *kd = rb_topo_kind_def(t->kind);
    rb_buf_printf(b, "# railbench fabric topo: ");
    rb_fabric_design_text(b, t);
    rb_buf_printf(b, "\n\n| item | count |\n|---|---:|\n");
    rb_buf_printf(b, "| GPUs | %lld |\n| NIC ports | %lld |\n", c->gpus, c->nics);
    if (kd->railed)
        rb_buf_printf(b, "| leaf switches | %lld (%d per rail) |\n", c->leaves, t->leaves_per_group);
    else
        rb_buf_printf(b, "| leaf switches | %lld |\n", c->leaves);
    rb_buf_printf(b, "| spine switches | %lld%s |\n", c->spines,
                  t->uses_spines ? "" : (!kd->spine_layer ? " (rail-only)" : " (one leaf, none needed)"));
    rb_buf_printf(b, "| switches | %lld |\n", c->switches);
    rb_buf_printf(b, "| NIC-leaf cables | %lld |\n| leaf-spine cables | %lld |\n| cables | %lld |\n", c->nic_cables,
                  c->spine_cables, c->cables);
    rb_buf_printf(b, "| NIC ports on the fullest leaf | %d of %d |\n| uplinks of the fullest leaf | %d |\n",
                  c->nic_ports_per_leaf, t->down_per_leaf, c->uplinks_per_leaf);
    if (c->spines)
        rb_buf_printf(b, "| ports used per spine | %d%s |\n", c->spine_ports_used,
                      c->spine_ports_used > t->leaf_radix
                          ? " (more than the leaf radix: the spine layer must itself be a Clos)"
                          : "");
    rb_buf_printf(b, "| bisection bandwidth | %.0f Gbit/s (%.2f TB/s) |\n", c->bisection_bytes_per_s / RB_GBIT_BYTES_PER_S,
                  c->bisection_bytes_per_s / 1e12);
}

/* The hops from GPU src to GPU dst with PXN off and on, as text and as summary.path. */
static void path_section(struct rb_buf *b, cJSON *summary, const struct rb_topo *t, int src, int dst)
{
    char la[32], lb[32];
    gpu_label(la, sizeof la, t, src);
    gpu_label(lb, sizeof lb, t, dst);
    rb_buf_printf(b, "\npath %s (rank %d) -> %s (rank %d)", la, src, lb, dst);
    if (rb_topo_kind_def(t->kind)->railed)
        rb_buf_printf(b, ", rail %d -> rail %d", rb_topo_nic_rail(t, rb_topo_gpu_nic(t, src % t->gpus_per_node)),
                      rb_topo_nic_rail(t, rb_topo_gpu_nic(t, dst % t->gpus_per_node)));
    rb_buf_printf(b, ":\n");
    cJSON *pj = cJSON_AddObjectToObject(summary, "path");
    cJSON_AddNumberToObject(pj, "src", src);
    cJSON_AddNumberToObject(pj, "dst", dst);
    cJSON_AddItemToObject(pj, "pxn_off", route_json(t, src, dst, false, b));
    cJSON_AddItemToObject(pj, "pxn_on", route_json(t, src, dst, true, b));
}

/* --save (the topology as JSON) and --dot (Graphviz), each written atomically. Returns 0 or RB_EXIT_RUNTIME. */
static int write_files(const struct rb_topo *t, const char *save, const char *dot)
{
    if (save) {
        cJSON *tj = rb_topo_to_json(t);
        int rc = rb_fabric_save_json("--save", save, tj);
        cJSON_Delete(tj);
        if (rc != 0)
            return rc;
    }
    if (dot) {
        struct rb_buf g = {0};
        int rc = rb_topo_write_dot(t, &g);
        if (rc == 0)
            rc = rb_file_write_atomic(dot, g.s, g.len);
        rb_buf_free(&g);
        if (rc != 0) {
            fprintf(stderr, "railbench: error: --dot %s: cannot write: %s\n", dot, strerror(-rc));
            return RB_EXIT_RUNTIME;
        }
    }
    return 0;
}

int rb_fabric_topo_main(int argc, char **argv)
{
    struct rb_topo_opts to = {0};
    const char *save = NULL, *dot = NULL, *path = NULL;
    bool json = false;
    const struct rb_opt opts[] = {
        RB_TOPO_OPTS(to),
        {"path", 0, RB_OPT_STR, &path, "A", "hops from GPU A to GPU B (the argument); GPUs as rank or node:gpu", NULL},
        {"save", 0, RB_OPT_STR, &save, "FILE", "write the topology as JSON", NULL},
        {"dot", 0, RB_OPT_STR, &dot, "FILE", "write a Graphviz picture of the fabric", NULL},
        {"json", 0, RB_OPT_FLAG, &json, NULL, "print the summary as JSON instead of the table", NULL},
        {0},
    };
    const struct rb_cmd_spec spec = {
        "railbench fabric topo [options] [--path A B]",
        "Generate or read a fabric topology; print switch and cable counts, bisection bandwidth, and the hops\n"
        "between two GPUs with PXN off and on.",
        opts, 0, 1, false};
    struct rb_cli cli;
    int rc;
    if (!rb_cli_parse_cmd(&cli, &spec, argc, argv, &rc))
        return rc;
    struct rb_topo t;
    struct rb_buf b = {0};
    cJSON *summary = NULL;
    int src, dst;
    if ((rc = rb_fabric_topo_resolve(&to, &t)) != 0 || (rc = parse_path(&t, path, &cli, &src, &dst)) != 0)
        goto fail;
    struct rb_topo_counts c;
    rb_topo_counts(&t, &c);
    summary = cJSON_CreateObject();
    cJSON_AddItemToObject(summary, "topology", rb_topo_to_json(&t));
    counts_json(summary, &t, &c);
    counts_table(&b, &t, &c);
    if (src >= 0)
        path_section(&b, summary, &t, src, dst);
    if ((rc = write_files(&t, save, dot)) != 0)
        goto fail;
    rc = rb_fabric_emit("fabric topo", &cli, b.s, summary, json);
    summary = NULL;
fail:
    cJSON_Delete(summary);
    rb_buf_free(&b);
    rb_cli_free(&cli);
    return rc;
}
