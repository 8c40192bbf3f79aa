/* Algorithm names, and the block layouts, scratch areas and pipeline topologies the algorithms share. */
#include "algo_int.h"

#include <errno.h>
#include <string.h>

static const char *const algo_names[RB_COLL_ALGOS] = {"mpi", "ring", "rd", "rhd", "tree", "hier"};

const char *rb_coll_algo_name(enum rb_coll_algo a)
{
    return (unsigned)a < RB_COLL_ALGOS ? algo_names[a] : NULL;
}

int rb_coll_algo_parse(const char *s, enum rb_coll_algo *a)
{
    for (int i = 0; i < RB_COLL_ALGOS; i++)
        if (strcmp(s, algo_names[i]) == 0) {
            *a = (enum rb_coll_algo)i;
            return 0;
        }
    return -EINVAL;
}

void rb_algo_split(size_t count, int n, size_t *off)
{
    size_t base = count / (size_t)n, extra = count % (size_t)n;
    off[0] = 0;
    for (int b = 0; b < n; b++)
        off[b + 1] = off[b] + base + ((size_t)b < extra);
}

void rb_algo_blocks(size_t per_block, int n, size_t *off)
{
    for (int b = 0; b <= n; b++)
        off[b] = per_block * (size_t)b;
}

/* The two full-size areas, each the largest buffer rounded up to 64 bytes (RB_COLL_SCRATCH_BYTES), then the slots. */
static size_t full_area(const struct rb_coll_args *a)
{
    size_t slots = 2 * RB_COLL_PIPELINE_DEPTH * a->chunk_bytes;
    size_t rest = a->scratch_bytes > slots ? a->scratch_bytes - slots : 0;
    return rest / 2 / 64 * 64;
}

void *rb_algo_scratch_work(const struct rb_coll_args *a)
{
    return a->scratch;
}

void *rb_algo_scratch_tmp(const struct rb_coll_args *a)
{
    return (char *)a->scratch + full_area(a);
}

void *rb_algo_scratch_slots(const struct rb_coll_args *a)
{
    return (char *)a->scratch + 2 * full_area(a);
}

void rb_algo_tree_links(int rank, int n, int root, struct rb_algo_links *l)
{
    int vr = (rank - root + n) % n;
    l->parent = vr == 0 ? -1 : ((vr - 1) / 2 + root) % n;
    l->nchildren = 0;
    for (int k = 1; k <= 2; k++)
        if (2 * vr + k < n)
            l->children[l->nchildren++] = (2 * vr + k + root) % n;
}

void rb_algo_chain_links(int rank, int n, int root, struct rb_algo_links *l)
{
    int vr = (rank - root + n) % n;
    l->parent = vr == 0 ? -1 : (rank - 1 + n) % n;
    l->nchildren = 0;
    if (vr + 1 < n)
        l->children[l->nchildren++] = (rank + 1) % n;
}
