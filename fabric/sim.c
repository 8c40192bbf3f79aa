/* Alpha-beta model of every collective and algorithm on a topology, with the sharing of links along each path. */
#define _POSIX_C_SOURCE 200809L
#include "sim_int.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * The model. A collective is a schedule of steps; in a step every active
 * rank sends one message to a peer given by a pattern (shift by k, xor k,
 * binomial tree level m, ...) over all ranks, the GPUs of each node, or the
 * GPUs of each rail. A message's cost is alpha + bytes * beta where alpha
 * sums the latency of each link it crosses (rb_topo_route) and beta is
 * 1 / (its bandwidth), its bandwidth being the smallest share it gets of a
 * resource it crosses: NVLink out of and into a GPU, PCIe between GPU and
 * NIC, the NIC-leaf cable each way, and a leaf's uplinks to the spines
 * each way (ECMP spreading flows evenly), each shared equally by the flows
 * on it. A step lasts as long as its slowest message plus the reduction of
 * what was received (gamma per byte); steps run one after another. With a
 * single uncontended class this is exactly the textbook alpha-beta-gamma
 * cost (ANCHORS.md; Thakur, Rabenseifner and Gropp 2005), e.g. ring
 * allreduce 2(p-1)alpha + 2(p-1)/p n beta + (p-1)/p n gamma.
 *
 * A pattern's messages are summarised once per parameter set as the few
 * (alpha, beta) pairs no other message beats on both: the step time for
 * any size is then the maximum over those lines, so a sweep of sizes costs
 * one pass over the ranks per distinct pattern.
 */

#define MAX_TERMS 16

enum pat_type { P_SHIFT, P_CHAIN, P_XOR, P_FOLD_IN, P_FOLD_OUT, P_TREE_UP, P_TREE_DOWN };
enum pat_group { G_ALL, G_NODE, G_RAIL };

struct term {
    double a, b;                        /* seconds; seconds per byte */
    unsigned char tr[RB_LINK_CLASSES];  /* link traversals: a = sum tr[c] * lat[c] */
    unsigned char cls;                  /* class whose share sets b */
    double share;                       /* b = share / bw[cls] */
};

struct pattern {
    uint64_t key; /* 0: empty slot */
    int nterms;   /* 0: no rank sends */
    struct term terms[MAX_TERMS];
};

struct flow {
    int src, dst, via, nic_s, nic_d, leaf_s, leaf_d;
    unsigned char tr[RB_LINK_CLASSES];
};

struct rb_sim {
    struct rb_topo t;
    bool pxn;
    bool oom;
    int p, nnics;
    uint32_t *nv_out, *nv_in;       /* per GPU */
    uint32_t *pcie_out, *pcie_in;   /* per NIC: GPU -> NIC and NIC -> GPU */
    uint32_t *nic_out, *nic_in;     /* per NIC: NIC -> leaf and leaf -> NIC */
    uint32_t *up, *down;            /* per leaf: to the spines and from them */
    int *uplinks;                   /* per leaf */
    struct flow *flows;
    struct pattern *cache;
    size_t cap, used;
};

static const char *const algo_names[RB_SIM_ALGOS] = {"ring", "rd", "rhd", "tree", "hier"};

const char *rb_sim_algo_name(enum rb_sim_algo a)
{
    return (unsigned)a < RB_SIM_ALGOS ? algo_names[a] : NULL;
}

int rb_sim_algo_parse(const char *s, enum rb_sim_algo *a)
{
    for (int i = 0; i < RB_SIM_ALGOS; i++)
        if (strcmp(s, algo_names[i]) == 0) {
            *a = (enum rb_sim_algo)i;
            return 0;
        }
    return -EINVAL;
}

void rb_sim_free(struct rb_sim *s)
{
    if (!s)
        return;
    free(s->nv_out);
    free(s->nv_in);
    free(s->pcie_out);
    free(s->pcie_in);
    free(s->nic_out);
    free(s->nic_in);
    free(s->up);
    free(s->down);
    free(s->uplinks);
    free(s->flows);
    free(s->cache);
    free(s);
}

int rb_sim_create(const struct rb_topo *t, bool pxn, struct rb_sim **out)
{
    *out = NULL;
    if (rb_topo_gpus(t) < 2 || t->leaves < 1)
        return -EINVAL;
    struct rb_sim *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->t = *t;
    s->pxn = pxn || !rb_topo_kind_def(t->kind)->spine_layer;
    s->p = rb_topo_gpus(t);
    s->nnics = t->nodes * t->nics_per_node;
    size_t P = (size_t)s->p, N = (size_t)s->nnics, L = (size_t)t->leaves;
    s->nv_out = calloc(P, sizeof(uint32_t));
    s->nv_in = calloc(P, sizeof(uint32_t));
    s->pcie_out = calloc(N, sizeof(uint32_t));
    s->pcie_in = calloc(N, sizeof(uint32_t));
    s->nic_out = calloc(N, sizeof(uint32_t));
    s->nic_in = calloc(N, sizeof(uint32_t));
    s->up = calloc(L, sizeof(uint32_t));
    s->down = calloc(L, sizeof(uint32_t));
    s->uplinks = calloc(L, sizeof(int));
    s->flows = calloc(P, sizeof(struct flow));
    s->cap = 64;
    s->cache = calloc(s->cap, sizeof(struct pattern));
    if (!s->nv_out || !s->nv_in || !s->pcie_out || !s->pcie_in || !s->nic_out || !s->nic_in || !s->up || !s->down ||
        !s->uplinks || !s->flows || !s->cache) {
        rb_sim_free(s);
        return -ENOMEM;
    }
    for (int l = 0; l < t->leaves; l++)
        s->uplinks[l] = rb_topo_leaf_uplinks(t, l);
    *out = s;
    return 0;
}

int rb_sim_ranks(const struct rb_sim *s)
{
    return s->p;
}

void rb_sim_set_params(struct rb_sim *s, const struct rb_link link[RB_LINK_CLASSES], double reduce_bytes_per_s)
{
    memcpy(s->t.link, link, sizeof s->t.link);
    s->t.reduce_bytes_per_s = reduce_bytes_per_s;
    /* Every cached summary depends on the parameters (which message is slowest). */
    memset(s->cache, 0, s->cap * sizeof *s->cache);
    s->used = 0;
}

double rb_sim_terms_time(const struct rb_sim_terms *x, const struct rb_link link[RB_LINK_CLASSES],
                         double reduce_bytes_per_s)
{
    double t = x->reduce_bytes / reduce_bytes_per_s;
    for (int c = 0; c < RB_LINK_CLASSES; c++)
        t += x->lat[c] * link[c].lat_s + x->bytes[c] / link[c].bw_bytes_per_s;
    return t;
}

/* ---- patterns ---- */

static int group_size(const struct rb_sim *s, int group)
{
    return group == G_ALL ? s->p : group == G_NODE ? s->t.gpus_per_node : s->t.nodes;
}

static int floor_pow2(int x)
{
    int p = 1;
    while (p <= x / 2)
        p *= 2;
    return p;
}

/* Peer of rank r in a pattern, or -1 when r sends nothing. */
static int pattern_dst(const struct rb_sim *s, int type, int group, int param, int r)
{
    int G = s->t.gpus_per_node;
    int q = group_size(s, group), pos, d;
    switch (group) {
    case G_NODE: pos = r % G; break;
    case G_RAIL: pos = r / G; break;
    default: pos = r; break;
    }
    int pof2 = floor_pow2(q);
    switch (type) {
    case P_SHIFT: d = (int)(((long long)pos + param) % q); break;
    case P_CHAIN: d = pos + 1 < q ? pos + 1 : -1; break;
    case P_XOR: d = pos < pof2 ? pos ^ param : -1; break;
    case P_FOLD_IN: d = pos >= pof2 ? pos - pof2 : -1; break;
    case P_FOLD_OUT: d = pos < q - pof2 ? pos + pof2 : -1; break;
    case P_TREE_UP: d = pos % (2 * param) == param ? pos - param : -1; break;
    case P_TREE_DOWN: d = pos % (2 * param) == 0 && pos + param < q ? pos + param : -1; break;
    default: d = -1; break;
    }
    if (d < 0 || d == pos)
        return -1;
    switch (group) {
    case G_NODE: return (r / G) * G + d;
    case G_RAIL: return d * G + r % G;
    default: return d;
    }
}

/* Adds a message's (a, b) unless another beats it on both; drops those it beats. */
static void add_term(struct pattern *pt, const struct term *x)
{
    for (int i = 0; i < pt->nterms; i++)
        if (pt->terms[i].a >= x->a && pt->terms[i].b >= x->b)
            return;
    int k = 0;
    for (int i = 0; i < pt->nterms; i++)
        if (!(x->a >= pt->terms[i].a && x->b >= pt->terms[i].b))
            pt->terms[k++] = pt->terms[i];
    pt->nterms = k;
    if (k < MAX_TERMS) {
        pt->terms[pt->nterms++] = *x;
        return;
    }
    /* Full (never seen in practice): replace the line lowest at one pipelining chunk. */
    int lo = 0;
    for (int i = 1; i < k; i++)
        if (pt->terms[i].a + pt->terms[i].b * RB_SIM_CHUNK_BYTES < pt->terms[lo].a + pt->terms[lo].b * RB_SIM_CHUNK_BYTES)
            lo = i;
    if (x->a + x->b * RB_SIM_CHUNK_BYTES > pt->terms[lo].a + pt->terms[lo].b * RB_SIM_CHUNK_BYTES)
        pt->terms[lo] = *x;
}

/*
 * The pattern's messages as lines time = a + b x bytes, each charged to its
 * bottleneck among the links the pattern's flows share. pt gets the lines
 * no other beats; line_a and line_b (may be NULL), indexed by sender, each
 * sender's own (untouched for ranks that send nothing).
 */
static void evaluate(struct rb_sim *s, int type, int group, int param, struct pattern *pt, double *line_a,
                     double *line_b)
{
    const struct rb_topo *t = &s->t;
    int nf = 0;
    for (int r = 0; r < s->p; r++) {
        int d = pattern_dst(s, type, group, param, r);
        if (d < 0)
            continue;
        struct rb_route rt;
        if (rb_topo_route(t, r, d, s->pxn, &rt) != 0)
            continue;
        struct flow *f = &s->flows[nf++];
        f->src = r;
        f->dst = d;
        f->via = rt.via_gpu;
        f->nic_s = rt.src_nic;
        f->nic_d = rt.dst_nic;
        f->leaf_s = rt.src_leaf;
        f->leaf_d = rt.dst_leaf;
        for (int c = 0; c < RB_LINK_CLASSES; c++)
            f->tr[c] = (unsigned char)rt.traversals[c];
        if (f->nic_s < 0) {
            s->nv_out[r]++;
            s->nv_in[d]++;
            continue;
        }
        if (f->via >= 0) {
            s->nv_out[r]++;
            s->nv_in[f->via]++;
        }
        s->pcie_out[f->nic_s]++;
        s->nic_out[f->nic_s]++;
        s->nic_in[f->nic_d]++;
        s->pcie_in[f->nic_d]++;
        if (f->leaf_s != f->leaf_d) {
            s->up[f->leaf_s]++;
            s->down[f->leaf_d]++;
        }
    }
    const struct rb_link *L = t->link;
    for (int i = 0; i < nf; i++) {
        const struct flow *f = &s->flows[i];
        struct term x = {0};
        double worst = 0;
#define RESOURCE(bw, klass, sh)                                                                                \
    do {                                                                                                       \
        double v_ = (sh) / (bw);                                                                               \
        if (v_ > worst) {                                                                                      \
            worst = v_;                                                                                        \
            x.cls = (unsigned char)(klass);                                                                    \
            x.share = (sh);                                                                                    \
        }                                                                                                      \
    } while (0)
        if (f->nic_s < 0 || f->via >= 0) {
            int into = f->nic_s < 0 ? f->dst : f->via;
            RESOURCE(L[RB_LINK_NVLINK].bw_bytes_per_s, RB_LINK_NVLINK, (double)s->nv_out[f->src]);
            RESOURCE(L[RB_LINK_NVLINK].bw_bytes_per_s, RB_LINK_NVLINK, (double)s->nv_in[into]);
        }
        if (f->nic_s >= 0) {
            RESOURCE(L[RB_LINK_PCIE].bw_bytes_per_s, RB_LINK_PCIE, (double)s->pcie_out[f->nic_s]);
            RESOURCE(L[RB_LINK_PCIE].bw_bytes_per_s, RB_LINK_PCIE, (double)s->pcie_in[f->nic_d]);
            RESOURCE(L[RB_LINK_LEAF].bw_bytes_per_s, RB_LINK_LEAF, (double)s->nic_out[f->nic_s]);
            RESOURCE(L[RB_LINK_LEAF].bw_bytes_per_s, RB_LINK_LEAF, (double)s->nic_in[f->nic_d]);
            if (f->leaf_s != f->leaf_d) {
                RESOURCE(L[RB_LINK_SPINE].bw_bytes_per_s, RB_LINK_SPINE,
                         (double)s->up[f->leaf_s] / s->uplinks[f->leaf_s]);
                RESOURCE(L[RB_LINK_SPINE].bw_bytes_per_s, RB_LINK_SPINE,
                         (double)s->down[f->leaf_d] / s->uplinks[f->leaf_d]);
            }
        }
#undef RESOURCE
        x.b = worst;
        for (int c = 0; c < RB_LINK_CLASSES; c++) {
            x.tr[c] = f->tr[c];
            x.a += f->tr[c] * L[c].lat_s;
        }
        add_term(pt, &x);
        if (line_a) {
            line_a[f->src] = x.a;
            line_b[f->src] = x.b;
        }
    }
    /* Only what this pattern touched is non-zero: clear it for the next one. */
    for (int i = 0; i < nf; i++) {
        const struct flow *f = &s->flows[i];
        s->nv_out[f->src] = 0;
        s->nv_in[f->dst] = 0;
        if (f->via >= 0)
            s->nv_in[f->via] = 0;
        if (f->nic_s >= 0) {
            s->pcie_out[f->nic_s] = s->nic_out[f->nic_s] = 0;
            s->pcie_in[f->nic_d] = s->nic_in[f->nic_d] = 0;
            s->up[f->leaf_s] = s->down[f->leaf_d] = 0;
        }
    }
}

static uint64_t pattern_key(int type, int group, int param)
{
    return (uint64_t)(type + 1) | (uint64_t)group << 4 | (uint64_t)(uint32_t)param << 8;
}

static size_t slot_of(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static int cache_grow(struct rb_sim *s)
{
    size_t cap = s->cap * 2;
    struct pattern *c = calloc(cap, sizeof *c);
    if (!c)
        return -ENOMEM;
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->cache[i].key)
            continue;
        size_t j = slot_of(s->cache[i].key, cap);
        while (c[j].key)
            j = (j + 1) & (cap - 1);
        c[j] = s->cache[i];
    }
    free(s->cache);
    s->cache = c;
    s->cap = cap;
    return 0;
}

static const struct pattern *get_pattern(struct rb_sim *s, int type, int group, int param)
{
    uint64_t key = pattern_key(type, group, param);
    size_t j = slot_of(key, s->cap);
    while (s->cache[j].key) {
        if (s->cache[j].key == key)
            return &s->cache[j];
        j = (j + 1) & (s->cap - 1);
    }
    if (2 * (s->used + 1) > s->cap) {
        if (cache_grow(s) != 0) {
            s->oom = true;
            return NULL;
        }
        j = slot_of(key, s->cap);
        while (s->cache[j].key)
            j = (j + 1) & (s->cap - 1);
    }
    struct pattern *pt = &s->cache[j];
    pt->key = key;
    pt->nterms = 0;
    s->used++;
    evaluate(s, type, group, param, pt, NULL, NULL);
    return pt;
}

/* ---- schedules ---- */

struct acc {
    double t;
    struct rb_sim_terms *terms;
};

/* repeat steps of a pattern, each moving bytes per message and reducing reduce bytes. */
static void step(struct rb_sim *s, struct acc *ac, int type, int group, int param, double bytes, double reduce,
                 double repeat)
{
    if (repeat <= 0)
        return;
    const struct pattern *pt = get_pattern(s, type, group, param);
    if (!pt || pt->nterms == 0)
        return;
    int bi = 0;
    double best = -1;
    for (int i = 0; i < pt->nterms; i++) {
        double v = pt->terms[i].a + pt->terms[i].b * bytes;
        if (v > best) {
            best = v;
            bi = i;
        }
    }
    ac->t += repeat * (best + reduce / s->t.reduce_bytes_per_s);
    if (ac->terms) {
        const struct term *x = &pt->terms[bi];
        for (int c = 0; c < RB_LINK_CLASSES; c++)
            ac->terms->lat[c] += repeat * x->tr[c];
        ac->terms->bytes[x->cls] += repeat * bytes * x->share;
        ac->terms->reduce_bytes += repeat * reduce;
    }
}

static void ring_allreduce(struct rb_sim *s, struct acc *ac, int g, double n)
{
    int q = group_size(s, g);
    if (q < 2)
        return;
    step(s, ac, P_SHIFT, g, 1, n / q, n / q, q - 1); /* reduce-scatter */
    step(s, ac, P_SHIFT, g, 1, n / q, 0, q - 1);     /* allgather */
}

/* Non-power-of-two groups: the extra ranks hand their data to a partner first and get the result last. */
static void fold_in(struct rb_sim *s, struct acc *ac, int g, double bytes, double reduce)
{
    int q = group_size(s, g);
    if (q > floor_pow2(q))
        step(s, ac, P_FOLD_IN, g, 0, bytes, reduce, 1);
}

static void fold_out(struct rb_sim *s, struct acc *ac, int g, double bytes)
{
    int q = group_size(s, g);
    if (q > floor_pow2(q))
        step(s, ac, P_FOLD_OUT, g, 0, bytes, 0, 1);
}

static void rd_allreduce(struct rb_sim *s, struct acc *ac, int g, double n)
{
    int pof2 = floor_pow2(group_size(s, g));
    fold_in(s, ac, g, n, n);
    for (int m = 1; m < pof2; m *= 2)
        step(s, ac, P_XOR, g, m, n, n, 1);
    fold_out(s, ac, g, n);
}

/* Recursive halving reduce-scatter; leaves n / pof2 per rank. */
static void halving(struct rb_sim *s, struct acc *ac, int g, double n)
{
    int pof2 = floor_pow2(group_size(s, g));
    double part = n;
    for (int m = pof2 / 2; m >= 1; m /= 2) {
        part /= 2;
        step(s, ac, P_XOR, g, m, part, part, 1);
    }
}

static void rhd_allreduce(struct rb_sim *s, struct acc *ac, int g, double n)
{
    int pof2 = floor_pow2(group_size(s, g));
    fold_in(s, ac, g, n, n);
    halving(s, ac, g, n);
    double part = n / pof2;
    for (int m = 1; m < pof2; m *= 2) {
        step(s, ac, P_XOR, g, m, part, 0, 1);
        part *= 2;
    }
    fold_out(s, ac, g, n);
}

static void tree_up(struct rb_sim *s, struct acc *ac, int g, double n, bool reduce)
{
    int q = group_size(s, g);
    for (int m = 1; m < q; m *= 2)
        step(s, ac, P_TREE_UP, g, m, n, reduce ? n : 0, 1);
}

static void tree_down(struct rb_sim *s, struct acc *ac, int g, double n)
{
    int q = group_size(s, g);
    for (int m = floor_pow2(q - 1); m >= 1 && q > 1; m /= 2)
        step(s, ac, P_TREE_DOWN, g, m, n, 0, 1);
}

/* ---- one schedule per (collective, algorithm) ---- */

static void allreduce_ring(struct rb_sim *s, struct acc *ac, double n)
{
    ring_allreduce(s, ac, G_ALL, n);
}

static void allreduce_rd(struct rb_sim *s, struct acc *ac, double n)
{
    rd_allreduce(s, ac, G_ALL, n);
}

static void allreduce_rhd(struct rb_sim *s, struct acc *ac, double n)
{
    rhd_allreduce(s, ac, G_ALL, n);
}

static void allreduce_tree(struct rb_sim *s, struct acc *ac, double n)
{
    tree_up(s, ac, G_ALL, n, true);
    tree_down(s, ac, G_ALL, n);
}

/* Intra-node reduce-scatter, one allreduce of n/G per rail across nodes, intra-node allgather. */
static void allreduce_hier(struct rb_sim *s, struct acc *ac, double n)
{
    int G = s->t.gpus_per_node;
    if (G > 1)
        step(s, ac, P_SHIFT, G_NODE, 1, n / G, n / G, G - 1);
    ring_allreduce(s, ac, G_RAIL, n / G);
    if (G > 1)
        step(s, ac, P_SHIFT, G_NODE, 1, n / G, 0, G - 1);
}

static void allgather_ring(struct rb_sim *s, struct acc *ac, double n)
{
    step(s, ac, P_SHIFT, G_ALL, 1, n / s->p, 0, s->p - 1);
}

static void allgather_rd(struct rb_sim *s, struct acc *ac, double n)
{
    int pof2 = floor_pow2(s->p);
    fold_in(s, ac, G_ALL, n / s->p, 0);
    for (int m = 1; m < pof2; m *= 2)
        step(s, ac, P_XOR, G_ALL, m, n / pof2 * m, 0, 1);
    fold_out(s, ac, G_ALL, n);
}

static void allgather_hier(struct rb_sim *s, struct acc *ac, double n)
{
    int G = s->t.gpus_per_node;
    step(s, ac, P_SHIFT, G_RAIL, 1, n / s->p, 0, s->t.nodes - 1);
    step(s, ac, P_SHIFT, G_NODE, 1, n / G, 0, G - 1);
}

static void reducescatter_ring(struct rb_sim *s, struct acc *ac, double n)
{
    step(s, ac, P_SHIFT, G_ALL, 1, n / s->p, n / s->p, s->p - 1);
}

static void reducescatter_rhd(struct rb_sim *s, struct acc *ac, double n)
{
    fold_in(s, ac, G_ALL, n, n);
    halving(s, ac, G_ALL, n);
    fold_out(s, ac, G_ALL, n / s->p);
}

static void reducescatter_hier(struct rb_sim *s, struct acc *ac, double n)
{
    int G = s->t.gpus_per_node;
    step(s, ac, P_SHIFT, G_NODE, 1, n / G, n / G, G - 1);
    step(s, ac, P_SHIFT, G_RAIL, 1, n / s->p, n / s->p, s->t.nodes - 1);
}

/* Pipelined chain from the root: p - 1 + chunks - 1 steps of one chunk, reducing on the way when red. */
static void chain(struct rb_sim *s, struct acc *ac, double n, bool red)
{
    double chunks = n > RB_SIM_CHUNK_BYTES ? ceil(n / RB_SIM_CHUNK_BYTES) : 1;
    step(s, ac, P_CHAIN, G_ALL, 0, n / chunks, red ? n / chunks : 0, s->p - 1 + chunks - 1);
}

static void broadcast_ring(struct rb_sim *s, struct acc *ac, double n)
{
    chain(s, ac, n, false);
}

static void broadcast_tree(struct rb_sim *s, struct acc *ac, double n)
{
    tree_down(s, ac, G_ALL, n);
}

/* van de Geijn's broadcast: binomial scatter, then a ring allgather. */
static void broadcast_rhd(struct rb_sim *s, struct acc *ac, double n)
{
    int p = s->p;
    for (int m = floor_pow2(p - 1); m >= 1; m /= 2)
        step(s, ac, P_TREE_DOWN, G_ALL, m, n * m / p, 0, 1);
    step(s, ac, P_SHIFT, G_ALL, 1, n / p, 0, p - 1);
}

static void reduce_ring(struct rb_sim *s, struct acc *ac, double n)
{
    chain(s, ac, n, true);
}

static void reduce_tree(struct rb_sim *s, struct acc *ac, double n)
{
    tree_up(s, ac, G_ALL, n, true);
}

/* Rabenseifner's reduce: reduce-scatter by halving, then a binomial gather. */
static void reduce_rhd(struct rb_sim *s, struct acc *ac, double n)
{
    int pof2 = floor_pow2(s->p);
    fold_in(s, ac, G_ALL, n, n);
    halving(s, ac, G_ALL, n);
    for (int m = 1; m < pof2; m *= 2)
        step(s, ac, P_TREE_UP, G_ALL, m, n * m / pof2, 0, 1);
}

/* Pairwise exchange: in step k rank i sends its block for i + k. */
static void alltoall_ring(struct rb_sim *s, struct acc *ac, double n)
{
    int p = s->p;
    if (p <= RB_SIM_ALLTOALL_EXACT_RANKS) {
        for (int sh = 1; sh < p; sh++)
            step(s, ac, P_SHIFT, G_ALL, sh, n / p, 0, 1);
        return;
    }
    double weight = (double)(p - 1) / RB_SIM_ALLTOALL_SAMPLES;
    for (int i = 0; i < RB_SIM_ALLTOALL_SAMPLES; i++)
        step(s, ac, P_SHIFT, G_ALL, 1 + (int)((long long)i * (p - 1) / RB_SIM_ALLTOALL_SAMPLES), n / p, 0, weight);
}

/* Bruck: ceil(lg p) steps, each moving about half of the send buffer. */
static void alltoall_rd(struct rb_sim *s, struct acc *ac, double n)
{
    for (int m = 1; m < s->p; m *= 2)
        step(s, ac, P_SHIFT, G_ALL, m, n / 2, 0, 1);
}

static void sendrecv_ring(struct rb_sim *s, struct acc *ac, double n)
{
    step(s, ac, P_SHIFT, G_ALL, 1, n, 0, 1);
}

/* The schedules the model knows; NULL where it has none (docs/fabric.md lists them). */
typedef void (*plan_fn)(struct rb_sim *s, struct acc *ac, double n);
static const plan_fn plans[RB_COLL_KINDS][RB_SIM_ALGOS] = {
    [RB_COLL_ALLREDUCE] = {[RB_SIM_RING] = allreduce_ring, [RB_SIM_RD] = allreduce_rd, [RB_SIM_RHD] = allreduce_rhd,
                           [RB_SIM_TREE] = allreduce_tree, [RB_SIM_HIER] = allreduce_hier},
    [RB_COLL_ALLGATHER] = {[RB_SIM_RING] = allgather_ring, [RB_SIM_RD] = allgather_rd,
                           [RB_SIM_HIER] = allgather_hier},
    [RB_COLL_REDUCESCATTER] = {[RB_SIM_RING] = reducescatter_ring, [RB_SIM_RHD] = reducescatter_rhd,
                               [RB_SIM_HIER] = reducescatter_hier},
    [RB_COLL_BROADCAST] = {[RB_SIM_RING] = broadcast_ring, [RB_SIM_TREE] = broadcast_tree,
                           [RB_SIM_RHD] = broadcast_rhd},
    [RB_COLL_REDUCE] = {[RB_SIM_RING] = reduce_ring, [RB_SIM_TREE] = reduce_tree, [RB_SIM_RHD] = reduce_rhd},
    [RB_COLL_ALLTOALL] = {[RB_SIM_RING] = alltoall_ring, [RB_SIM_RD] = alltoall_rd},
    [RB_COLL_SENDRECV] = {[RB_SIM_RING] = sendrecv_ring},
};

bool rb_sim_supports(enum rb_coll_kind k, enum rb_sim_algo a)
{
    return (unsigned)k < RB_COLL_KINDS && (unsigned)a < RB_SIM_ALGOS && plans[k][a];
}

int rb_sim_alltoallv_time(struct rb_sim *s, const double *m, double *time_s)
{
    const int p = s->p;
    if (p > RB_SIM_ALLTOALL_EXACT_RANKS)
        return -EINVAL;
    double *a = malloc(sizeof(double) * (size_t)p), *b = malloc(sizeof(double) * (size_t)p);
    struct pattern *pt = calloc(1, sizeof *pt);
    if (!a || !b || !pt) {
        free(a);
        free(b);
        free(pt);
        return -ENOMEM;
    }
    /* Pairwise exchange: in shift k rank r sends m[r][r + k]; the shift lasts as long as its slowest message. */
    double t = 0;
    for (int k = 1; k < p; k++) {
        for (int r = 0; r < p; r++)
            a[r] = -1;
        pt->nterms = 0;
        evaluate(s, P_SHIFT, G_ALL, k, pt, a, b);
        double worst = 0;
        for (int r = 0; r < p; r++) {
            double bytes = m[(size_t)r * p + (size_t)((r + k) % p)];
            if (a[r] >= 0 && bytes > 0 && a[r] + b[r] * bytes > worst)
                worst = a[r] + b[r] * bytes;
        }
        t += worst;
    }
    free(a);
    free(b);
    free(pt);
    *time_s = t;
    return 0;
}

int rb_sim_time(struct rb_sim *s, enum rb_coll_kind k, enum rb_sim_algo a, double size_bytes, double *time_s,
                struct rb_sim_terms *terms)
{
    if (!rb_sim_supports(k, a) || !(size_bytes >= 0))
        return -EINVAL;
    if (terms)
        memset(terms, 0, sizeof *terms);
    struct acc ac = {0, terms};
    plans[k][a](s, &ac, size_bytes);
    if (s->oom)
        return -ENOMEM;
    *time_s = ac.t;
    return 0;
}
