/* Fabric topology model: geometry of fat-tree, rail-optimised and rail-only designs, JSON, routes, counts, Graphviz. */
#define _POSIX_C_SOURCE 200809L
#include "topo_int.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/file.h"
#include "railbench/units.h"

#define US 1e-6

static const char *const class_names[RB_LINK_CLASSES] = {"nvlink", "pcie", "leaf", "spine"};

const char *rb_topo_kind_name(enum rb_topo_kind k)
{
    const struct rb_topo_kind_def *d = rb_topo_kind_def(k);
    return d ? d->name : NULL;
}

int rb_topo_kind_parse(const char *s, enum rb_topo_kind *k)
{
    for (int i = 0; i < RB_TOPO_KINDS; i++)
        if (strcmp(s, rb_topo_kind_def((enum rb_topo_kind)i)->name) == 0) {
            *k = (enum rb_topo_kind)i;
            return 0;
        }
    if (strcmp(s, "rail-optimised") == 0) {
        *k = RB_TOPO_RAIL_OPTIMIZED;
        return 0;
    }
    return -EINVAL;
}

const char *rb_link_class_name(enum rb_link_class c)
{
    return (unsigned)c < RB_LINK_CLASSES ? class_names[c] : NULL;
}

int rb_link_class_parse(const char *s, enum rb_link_class *c)
{
    for (int i = 0; i < RB_LINK_CLASSES; i++)
        if (strcmp(s, class_names[i]) == 0) {
            *c = (enum rb_link_class)i;
            return 0;
        }
    return -EINVAL;
}

static void set_link(struct rb_link *l, double gbit_per_s, double lat_us)
{
    l->bw_bytes_per_s = gbit_per_s * RB_GBIT_BYTES_PER_S;
    l->lat_s = lat_us * US;
}

void rb_topo_default(struct rb_topo *t)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "default");
    t->kind = RB_TOPO_RAIL_OPTIMIZED;
    t->nodes = 32;
    t->gpus_per_node = 8;
    t->nics_per_node = 8;
    t->rails = 8;
    t->leaf_radix = 64;
    t->spines = 8;
    t->oversubscription = 1.0;
    /* H100 NVLink 4: 900 GB/s both directions, so 450 GB/s = 3600 Gbit/s each way. */
    set_link(&t->link[RB_LINK_NVLINK], 3600, 0.8);
    /* PCIe Gen5 x16: about 64 GB/s each way. */
    set_link(&t->link[RB_LINK_PCIE], 512, 0.5);
    /* NDR InfiniBand / 400G Ethernet. Latencies are per traversal, software overhead included. */
    set_link(&t->link[RB_LINK_LEAF], 400, 1.0);
    set_link(&t->link[RB_LINK_SPINE], 400, 0.5);
    t->reduce_bytes_per_s = 8000 * RB_GBIT_BYTES_PER_S;
}

static int errf(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int errf(char *err, size_t len, const char *fmt, ...)
{
    if (err && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

static int ceil_div(long long a, long long b)
{
    return (int)((a + b - 1) / b);
}

/* Uplinks a leaf with `down` NIC ports needs: down / oversubscription, spread evenly over the spines. */
static int uplinks_for(const struct rb_topo *t, int down)
{
    if (!t->uses_spines || down <= 0)
        return 0;
    int up = (int)ceil((double)down / t->oversubscription - 1e-9);
    if (up < 1)
        up = 1;
    return ceil_div(up, t->spines) * t->spines;
}

/* Rail-only (Wang et al. 2023): one switch per rail, no spine; cross-rail goes over NVLink. */
static int layout_rail_only(struct rb_topo *t, long long ports, char *err, size_t errlen)
{
    if (t->spines != 0)
        return errf(err, errlen, "rail-only has no spine layer: spines must be 0 (got %d)", t->spines);
    if (ports > t->leaf_radix)
        return errf(err, errlen, "rail-only needs each rail on one switch: %lld ports per rail > leaf_radix %d",
                    ports, t->leaf_radix);
    t->down_per_leaf = t->leaf_radix;
    t->leaves_per_group = 1;
    t->leaves = t->groups;
    t->uses_spines = false;
    return 0;
}

/* Leaves under a spine layer (fat-tree, rail-optimised): as many NIC ports per leaf as its uplinks allow. */
static int layout_leaf_spine(struct rb_topo *t, long long ports, char *err, size_t errlen)
{
    if (t->groups == 1 && ports <= t->leaf_radix) {
        /* Everything on one leaf: no spine carries traffic, whatever spines says. */
        t->down_per_leaf = t->leaf_radix;
        t->leaves_per_group = 1;
        t->leaves = 1;
        t->uses_spines = false;
        return 0;
    }
    if (t->spines < 1)
        return errf(err, errlen, "%s with more than one leaf needs spines >= 1 (got %d)", rb_topo_kind_name(t->kind),
                    t->spines);
    t->uses_spines = true;
    /* Largest downlink count whose uplinks (down/oversubscription, a multiple of spines) still fit the radix. */
    int down = (int)floor(t->leaf_radix * t->oversubscription / (1.0 + t->oversubscription) + 1e-9);
    while (down > 0 && down + uplinks_for(t, down) > t->leaf_radix)
        down--;
    if (down < 1)
        return errf(err, errlen,
                    "leaf_radix %d cannot hold NIC ports plus uplinks to %d spines at oversubscription %g",
                    t->leaf_radix, t->spines, t->oversubscription);
    t->down_per_leaf = down;
    t->leaves_per_group = ceil_div(ports, down);
    t->leaves = t->leaves_per_group * t->groups;
    return 0;
}

const struct rb_topo_kind_def *rb_topo_kind_def(enum rb_topo_kind k)
{
    static const struct rb_topo_kind_def defs[RB_TOPO_KINDS] = {
        [RB_TOPO_FAT_TREE] = {"fat-tree", false, true, layout_leaf_spine},
        [RB_TOPO_RAIL_OPTIMIZED] = {"rail-optimized", true, true, layout_leaf_spine},
        [RB_TOPO_RAIL_ONLY] = {"rail-only", true, false, layout_rail_only},
    };
    return (unsigned)k < RB_TOPO_KINDS ? &defs[k] : NULL;
}

int rb_topo_finish(struct rb_topo *t, char *err, size_t errlen)
{
    const struct rb_topo_kind_def *kd = rb_topo_kind_def(t->kind);
    if (!kd)
        return errf(err, errlen, "kind must be fat-tree, rail-optimized or rail-only");
    if (t->nodes < 1)
        return errf(err, errlen, "nodes must be a whole number >= 1 (got %d)", t->nodes);
    if (t->gpus_per_node < 1)
        return errf(err, errlen, "gpus_per_node must be a whole number >= 1 (got %d)", t->gpus_per_node);
    if (t->nics_per_node < 1)
        return errf(err, errlen, "nics_per_node must be a whole number >= 1 (got %d)", t->nics_per_node);
    if ((long long)t->nodes * t->gpus_per_node > RB_TOPO_MAX_GPUS ||
        (long long)t->nodes * t->nics_per_node > RB_TOPO_MAX_GPUS)
        return errf(err, errlen, "nodes x gpus_per_node (or nics_per_node) must be at most %d", RB_TOPO_MAX_GPUS);
    if (t->leaf_radix < 2)
        return errf(err, errlen, "leaf_radix must be a whole number >= 2 (got %d)", t->leaf_radix);
    if (t->spines < 0)
        return errf(err, errlen, "spines must be a whole number >= 0 (got %d)", t->spines);
    if (!(t->oversubscription >= 1.0) || !isfinite(t->oversubscription))
        return errf(err, errlen, "oversubscription must be a number >= 1 (downlink:uplink), got %g",
                    t->oversubscription);
    for (int c = 0; c < RB_LINK_CLASSES; c++) {
        if (!(t->link[c].bw_bytes_per_s > 0) || !isfinite(t->link[c].bw_bytes_per_s))
            return errf(err, errlen, "links.%s.bandwidth_gbit_per_s must be > 0 (got %g)", class_names[c],
                        t->link[c].bw_bytes_per_s / RB_GBIT_BYTES_PER_S);
        if (!(t->link[c].lat_s >= 0) || !isfinite(t->link[c].lat_s))
            return errf(err, errlen, "links.%s.latency_us must be >= 0 (got %g)", class_names[c],
                        t->link[c].lat_s / US);
    }
    if (!(t->reduce_bytes_per_s > 0) || !isfinite(t->reduce_bytes_per_s))
        return errf(err, errlen, "reduce_bandwidth_gbit_per_s must be > 0 (got %g)", t->reduce_bytes_per_s / RB_GBIT_BYTES_PER_S);

    if (!kd->railed) {
        if (t->rails != 1)
            return errf(err, errlen, "rails: a fat-tree has no rails (omit it or set 1, got %d)", t->rails);
    } else {
        if (t->rails < 1 || t->nics_per_node % t->rails != 0)
            return errf(err, errlen, "rails must divide nics_per_node %d (got %d)", t->nics_per_node, t->rails);
        /* Rail designs pair every GPU with a NIC port of its own (GPU i -> NIC i). */
        if (t->gpus_per_node > t->nics_per_node)
            return errf(err, errlen,
                        "%s needs one NIC port per GPU: gpus_per_node %d > nics_per_node %d", kd->name,
                        t->gpus_per_node, t->nics_per_node);
    }

    t->groups = kd->railed ? t->rails : 1;
    long long ports = (long long)t->nodes * t->nics_per_node / t->groups;
    t->ports_per_group = (int)ports;
    return kd->layout(t, ports, err, errlen);
}

int rb_topo_gpus(const struct rb_topo *t)
{
    return t->nodes * t->gpus_per_node;
}

int rb_topo_gpu_nic(const struct rb_topo *t, int local_gpu)
{
    if (rb_topo_kind_def(t->kind)->railed)
        return local_gpu;
    return (int)((long long)local_gpu * t->nics_per_node / t->gpus_per_node);
}

int rb_topo_nic_rail(const struct rb_topo *t, int local_nic)
{
    return local_nic % t->rails; /* a fat-tree has one rail */
}

int rb_topo_nic_leaf(const struct rb_topo *t, int global_nic)
{
    /* On a fat-tree (one rail, one group) this is global_nic / down_per_leaf. */
    int node = global_nic / t->nics_per_node, local = global_nic % t->nics_per_node;
    int per_node = t->nics_per_node / t->rails;
    int group = local % t->rails;
    int port = node * per_node + local / t->rails;
    return group * t->leaves_per_group + port / t->down_per_leaf;
}

int rb_topo_leaf_down(const struct rb_topo *t, int leaf)
{
    if (leaf < 0 || leaf >= t->leaves)
        return 0;
    int idx = leaf % t->leaves_per_group;
    int left = t->ports_per_group - idx * t->down_per_leaf;
    return left < t->down_per_leaf ? left : t->down_per_leaf;
}

int rb_topo_leaf_uplinks(const struct rb_topo *t, int leaf)
{
    return uplinks_for(t, rb_topo_leaf_down(t, leaf));
}

int rb_topo_route(const struct rb_topo *t, int src, int dst, bool pxn, struct rb_route *r)
{
    memset(r, 0, sizeof *r);
    r->via_gpu = r->src_nic = r->dst_nic = r->src_leaf = r->dst_leaf = -1;
    int p = rb_topo_gpus(t);
    if (src < 0 || src >= p || dst < 0 || dst >= p)
        return -EINVAL;
    int G = t->gpus_per_node;
    int ns = src / G, ls = src % G, nd = dst / G, ld = dst % G;
    r->reachable = true;
    if (src == dst)
        return 0;
    if (ns == nd) {
        r->nvlink_hops = 1;
        r->traversals[RB_LINK_NVLINK] = 1;
        return 0;
    }
    int nic_s = rb_topo_gpu_nic(t, ls), nic_d = rb_topo_gpu_nic(t, ld);
    if (rb_topo_nic_rail(t, nic_s) != rb_topo_nic_rail(t, nic_d)) {
        if (!pxn && !rb_topo_kind_def(t->kind)->spine_layer) {
            r->reachable = false;
            return -EHOSTUNREACH;
        }
        if (pxn) {
            /* PXN: hand the data over NVLink to our GPU whose NIC sits on the destination's rail. */
            r->via_gpu = ns * G + ld;
            r->nvlink_hops = 1;
            r->traversals[RB_LINK_NVLINK] = 1;
            nic_s = nic_d;
        }
    }
    r->src_nic = ns * t->nics_per_node + nic_s;
    r->dst_nic = nd * t->nics_per_node + nic_d;
    r->src_leaf = rb_topo_nic_leaf(t, r->src_nic);
    r->dst_leaf = rb_topo_nic_leaf(t, r->dst_nic);
    r->traversals[RB_LINK_PCIE] = 2;
    r->traversals[RB_LINK_LEAF] = 2;
    if (r->src_leaf == r->dst_leaf) {
        r->switch_hops = 1;
    } else {
        r->switch_hops = 3;
        r->traversals[RB_LINK_SPINE] = 2;
    }
    return 0;
}

void rb_topo_counts(const struct rb_topo *t, struct rb_topo_counts *c)
{
    memset(c, 0, sizeof *c);
    c->gpus = (long long)t->nodes * t->gpus_per_node;
    c->nics = (long long)t->nodes * t->nics_per_node;
    c->leaves = t->leaves;
    c->spines = t->uses_spines ? t->spines : 0;
    c->switches = c->leaves + c->spines;
    c->nic_cables = c->nics;
    for (int l = 0; l < t->leaves; l++)
        c->spine_cables += rb_topo_leaf_uplinks(t, l);
    c->cables = c->nic_cables + c->spine_cables;
    c->nic_ports_per_leaf = rb_topo_leaf_down(t, 0);
    c->uplinks_per_leaf = rb_topo_leaf_uplinks(t, 0);
    c->spine_ports_used = c->spines ? (int)((c->spine_cables + c->spines - 1) / c->spines) : 0;
    /*
     * Bisection: the nodes cut into two halves (leaf-aligned, ECMP spreading
     * perfectly). When a group's ports share one leaf, traffic across the cut
     * stays on that leaf and the NIC ports are the limit; otherwise half of
     * the leaf uplinks carry it too.
     */
    double cut_ports = (double)(t->nodes / 2) * t->nics_per_node;
    double nic_side = cut_ports * t->link[RB_LINK_LEAF].bw_bytes_per_s;
    double spine_side = (double)c->spine_cables / 2.0 * t->link[RB_LINK_SPINE].bw_bytes_per_s;
    c->bisection_bytes_per_s = t->leaves_per_group > 1 && spine_side < nic_side ? spine_side : nic_side;
}

/* ---- JSON ---- */

static const char *json_type(const cJSON *it)
{
    if (cJSON_IsString(it))
        return "a string";
    if (cJSON_IsBool(it))
        return "a boolean";
    if (cJSON_IsNull(it))
        return "null";
    if (cJSON_IsArray(it))
        return "an array";
    if (cJSON_IsObject(it))
        return "an object";
    return "a number";
}

static void describe(char *buf, size_t len, const cJSON *it)
{
    if (cJSON_IsString(it))
        snprintf(buf, len, "\"%.40s\"", it->valuestring);
    else if (cJSON_IsNumber(it))
        snprintf(buf, len, "%g", it->valuedouble);
    else
        snprintf(buf, len, "%s", json_type(it));
}

/* Reads whole number key of o into *v; when missing, required is an error and *v keeps its value. */
static int get_int(const cJSON *o, const char *path, const char *key, bool required, int min, int *v, char *err,
                   size_t len)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it)
        return required ? errf(err, len, "%s%s is missing (a whole number >= %d)", path, key, min) : 0;
    char got[64];
    describe(got, sizeof got, it);
    if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < min ||
        it->valuedouble > RB_TOPO_MAX_GPUS)
        return errf(err, len, "%s%s must be a whole number >= %d, got %s", path, key, min, got);
    *v = (int)it->valuedouble;
    return 0;
}

static int get_num(const cJSON *o, const char *path, const char *key, bool required, double *v, char *err,
                   size_t len)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it)
        return required ? errf(err, len, "%s%s is missing (a number)", path, key) : 0;
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble)) {
        char got[64];
        describe(got, sizeof got, it);
        return errf(err, len, "%s%s must be a number, got %s", path, key, got);
    }
    *v = it->valuedouble;
    return 0;
}

static int check_keys(const cJSON *o, const char *path, const char *const *allowed, char *err, size_t len)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
    {
        bool ok = false;
        for (const char *const *a = allowed; *a; a++)
            if (it->string && strcmp(it->string, *a) == 0)
                ok = true;
        if (!ok)
            return errf(err, len, "%sunknown field \"%s\"", path, it->string ? it->string : "");
    }
    return 0;
}

int rb_topo_from_json(struct rb_topo *t, const cJSON *j, char *err, size_t len)
{
    static const char *const top_keys[] = {"name", "kind", "nodes", "gpus_per_node", "nics_per_node", "rails",
                                           "leaf_radix", "spines", "oversubscription",
                                           "reduce_bandwidth_gbit_per_s", "links", NULL};
    static const char *const link_keys[] = {"bandwidth_gbit_per_s", "latency_us", NULL};
    static const char *const class_keys[] = {"nvlink", "pcie", "leaf", "spine", NULL};
    int rc;

    rb_topo_default(t);
    if (!cJSON_IsObject(j))
        return errf(err, len, "expected a JSON object, got %s", json_type(j));
    if ((rc = check_keys(j, "", top_keys, err, len)) != 0)
        return rc;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
    if (name && !cJSON_IsString(name))
        return errf(err, len, "name must be a string, got %s", json_type(name));
    snprintf(t->name, sizeof t->name, "%s", name ? name->valuestring : "");

    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
    if (!kind)
        return errf(err, len, "kind is missing (fat-tree, rail-optimized or rail-only)");
    if (!cJSON_IsString(kind) || rb_topo_kind_parse(kind->valuestring, &t->kind) != 0) {
        char got[64];
        describe(got, sizeof got, kind);
        return errf(err, len, "kind must be fat-tree, rail-optimized or rail-only, got %s", got);
    }
    if ((rc = get_int(j, "", "nodes", true, 1, &t->nodes, err, len)) ||
        (rc = get_int(j, "", "gpus_per_node", true, 1, &t->gpus_per_node, err, len)) ||
        (rc = get_int(j, "", "nics_per_node", true, 1, &t->nics_per_node, err, len)) ||
        (rc = get_int(j, "", "leaf_radix", true, 2, &t->leaf_radix, err, len)))
        return rc;
    const struct rb_topo_kind_def *kd = rb_topo_kind_def(t->kind);
    t->rails = kd->railed ? t->nics_per_node : 1;
    if ((rc = get_int(j, "", "rails", false, 1, &t->rails, err, len)) != 0)
        return rc;
    t->spines = 0;
    if ((rc = get_int(j, "", "spines", kd->spine_layer, 0, &t->spines, err, len)) != 0)
        return rc;
    t->oversubscription = 1.0;
    if ((rc = get_num(j, "", "oversubscription", false, &t->oversubscription, err, len)) != 0)
        return rc;
    double reduce_gbit = t->reduce_bytes_per_s / RB_GBIT_BYTES_PER_S;
    if ((rc = get_num(j, "", "reduce_bandwidth_gbit_per_s", false, &reduce_gbit, err, len)) != 0)
        return rc;
    t->reduce_bytes_per_s = reduce_gbit * RB_GBIT_BYTES_PER_S;

    const cJSON *links = cJSON_GetObjectItemCaseSensitive(j, "links");
    if (!links)
        return errf(err, len, "links is missing (an object with nvlink, pcie, leaf and spine)");
    if (!cJSON_IsObject(links))
        return errf(err, len, "links must be an object, got %s", json_type(links));
    if ((rc = check_keys(links, "links: ", class_keys, err, len)) != 0)
        return rc;
    for (int c = 0; c < RB_LINK_CLASSES; c++) {
        char path[32];
        snprintf(path, sizeof path, "links.%s.", class_names[c]);
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(links, class_names[c]);
        if (!l)
            return errf(err, len, "links.%s is missing (bandwidth_gbit_per_s and latency_us)", class_names[c]);
        if (!cJSON_IsObject(l))
            return errf(err, len, "links.%s must be an object, got %s", class_names[c], json_type(l));
        if ((rc = check_keys(l, path, link_keys, err, len)) != 0)
            return rc;
        double gbit = 0, us = 0;
        if ((rc = get_num(l, path, "bandwidth_gbit_per_s", true, &gbit, err, len)) ||
            (rc = get_num(l, path, "latency_us", true, &us, err, len)))
            return rc;
        set_link(&t->link[c], gbit, us);
    }
    return rb_topo_finish(t, err, len);
}

int rb_topo_load(struct rb_topo *t, const char *path, char *err, size_t len)
{
    char *buf = NULL;
    size_t n = 0;
    int rc = rb_file_read(path, 16 * RB_MIB, &buf, &n);
    if (rc == -EFBIG)
        return errf(err, len, "file larger than 16 MiB");
    if (rc != 0)
        return errf(err, len, "cannot read: %s", strerror(-rc));
    cJSON *j = cJSON_ParseWithLength(buf, n);
    if (!j) {
        const char *at = cJSON_GetErrorPtr();
        int line = 1;
        for (const char *c = buf; at && c < at && *c; c++)
            line += *c == '\n';
        rc = errf(err, len, "invalid JSON near line %d", line);
    } else {
        rc = rb_topo_from_json(t, j, err, len);
        cJSON_Delete(j);
    }
    free(buf);
    return rc;
}

cJSON *rb_topo_to_json(const struct rb_topo *t)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    if (t->name[0])
        cJSON_AddStringToObject(j, "name", t->name);
    cJSON_AddStringToObject(j, "kind", rb_topo_kind_name(t->kind));
    cJSON_AddNumberToObject(j, "nodes", t->nodes);
    cJSON_AddNumberToObject(j, "gpus_per_node", t->gpus_per_node);
    cJSON_AddNumberToObject(j, "nics_per_node", t->nics_per_node);
    if (rb_topo_kind_def(t->kind)->railed)
        cJSON_AddNumberToObject(j, "rails", t->rails);
    cJSON_AddNumberToObject(j, "leaf_radix", t->leaf_radix);
    cJSON_AddNumberToObject(j, "spines", t->spines);
    cJSON_AddNumberToObject(j, "oversubscription", t->oversubscription);
    cJSON_AddNumberToObject(j, "reduce_bandwidth_gbit_per_s", t->reduce_bytes_per_s / RB_GBIT_BYTES_PER_S);
    cJSON *links = cJSON_AddObjectToObject(j, "links");
    for (int c = 0; c < RB_LINK_CLASSES; c++) {
        cJSON *l = cJSON_AddObjectToObject(links, class_names[c]);
        cJSON_AddNumberToObject(l, "bandwidth_gbit_per_s", t->link[c].bw_bytes_per_s / RB_GBIT_BYTES_PER_S);
        cJSON_AddNumberToObject(l, "latency_us", t->link[c].lat_s / US);
    }
    return j;
}

/* ---- Graphviz ---- */

int rb_topo_write_dot(const struct rb_topo *t, struct rb_buf *f)
{
    rb_buf_printf(f, "// railbench fabric topo: %s, %s\n", t->name[0] ? t->name : "topology", rb_topo_kind_name(t->kind));
    rb_buf_printf(f, "graph fabric {\n");
    rb_buf_printf(f, "  graph [rankdir=BT, ranksep=1.0, nodesep=0.2, fontname=\"Helvetica\"];\n");
    rb_buf_printf(f, "  node [fontname=\"Helvetica\", fontsize=10];\n");
    rb_buf_printf(f, "  edge [color=\"#555555\"];\n");
    if (t->uses_spines) {
        rb_buf_printf(f, "  { rank=same;");
        for (int s = 0; s < t->spines; s++)
            rb_buf_printf(f, " s%d [label=\"spine %d\", shape=box, style=filled, fillcolor=\"#9ecae1\"];", s, s);
        rb_buf_printf(f, " }\n");
    }
    rb_buf_printf(f, "  { rank=same;");
    for (int l = 0; l < t->leaves; l++) {
        if (!rb_topo_kind_def(t->kind)->railed)
            rb_buf_printf(f, " l%d [label=\"leaf %d\", shape=box, style=filled, fillcolor=\"#c6dbef\"];", l, l);
        else
            rb_buf_printf(f, " l%d [label=\"leaf %d\\nrail %d\", shape=box, style=filled, fillcolor=\"#c6dbef\"];", l,
                    l, l / t->leaves_per_group);
    }
    rb_buf_printf(f, " }\n");
    for (int n = 0; n < t->nodes; n++) {
        rb_buf_printf(f, "  subgraph cluster_n%d {\n    label=\"node %d\"; style=rounded;\n", n, n);
        rb_buf_printf(f, "    nv%d [label=\"NVSwitch\", shape=ellipse, style=filled, fillcolor=\"#d9f0d3\"];\n", n);
        for (int g = 0; g < t->gpus_per_node; g++)
            rb_buf_printf(f, "    g%d_%d [label=\"GPU %d\", shape=box, style=filled, fillcolor=\"#a1d99b\"];\n", n, g, g);
        for (int c = 0; c < t->nics_per_node; c++)
            rb_buf_printf(f, "    c%d_%d [label=\"NIC %d\", shape=box, style=filled, fillcolor=\"#fdd0a2\"];\n", n, c, c);
        for (int g = 0; g < t->gpus_per_node; g++) {
            rb_buf_printf(f, "    g%d_%d -- nv%d [color=\"#31a354\"];\n", n, g, n);
            rb_buf_printf(f, "    g%d_%d -- c%d_%d;\n", n, g, n, rb_topo_gpu_nic(t, g));
        }
        rb_buf_printf(f, "  }\n");
        for (int c = 0; c < t->nics_per_node; c++)
            rb_buf_printf(f, "  c%d_%d -- l%d;\n", n, c, rb_topo_nic_leaf(t, n * t->nics_per_node + c));
    }
    for (int l = 0; l < t->leaves && t->uses_spines; l++) {
        int per_spine = rb_topo_leaf_uplinks(t, l) / t->spines;
        for (int s = 0; s < t->spines && per_spine > 0; s++)
            rb_buf_printf(f, "  l%d -- s%d [label=\"x%d\", fontsize=8];\n", l, s, per_spine);
    }
    rb_buf_printf(f, "}\n");
    return f->oom ? -ENOMEM : 0;
}
