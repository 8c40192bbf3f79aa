/*
 * Rail-aware hierarchical allreduce: the pattern of rail-optimised fabrics
 * (NCCL's PXN): reduce-scatter inside the node, then one inter-node
 * allreduce per rail among the ranks that share a NIC index, so no byte
 * crosses rails, then allgather inside the node. Cost (ANCHORS.md):
 * intra-node RS and AG over L ranks, L simultaneous allreduces of n/L bytes
 * over G nodes.
 */
#include "algo_int.h"

/*
 * Up to this many bytes, latency dominates (alpha-beta: the crossover is
 * near alpha/beta, a few KiB on shared memory, tens of KiB on a 100 Gb/s
 * NIC; MPICH switches its allreduce at 2 KiB for the same reason). There
 * hier keeps its two levels but spends lg L + lg G messages instead of
 * 2(L-1) + 2 lg G: recursive doubling inside the node, then recursive
 * doubling along the rail -- still on-rail, now with the whole vector.
 * Above it, the rail allreduce of each rank's block is still recursive
 * doubling while the block is this small.
 */
#define SMALL_BYTES 8192

int rb_hier_allreduce(const struct rb_coll_args *a, const void *in, void *out, size_t count)
{
    const struct rb_coll_comm *node = &a->node, *rail = &a->rail;
    void *tmp = rb_algo_scratch_tmp(a);
    if (count * a->type_bytes <= SMALL_BYTES) {
        rb_rd_allreduce(a, node, in, out, count, tmp);
        rb_rd_allreduce(a, rail, out, out, count, tmp);
        return 0;
    }
    size_t off[node->size + 1];
    rb_algo_split(count, node->size, off);
    void *mine = rb_algo_at(a, out, off[node->rank]);
    size_t mine_count = off[node->rank + 1] - off[node->rank];
    rb_ring_reduce_scatter(a, node, in, out, mine, off, tmp);
    if (mine_count * a->type_bytes <= SMALL_BYTES)
        rb_rd_allreduce(a, rail, mine, mine, mine_count, tmp);
    else
        rb_rhd_allreduce(a, rail, mine, mine, mine_count, tmp);
    rb_ring_allgather(a, node, out, off);
    return 0;
}
