/* gather: the root ends with every rank's block, in rank order (nccl-tests 2.19's src/gather.cu). */
#include <string.h>

#include "algo_int.h"

/* nccl-tests: each rank sends its aligned share; the root receives n of them; in place, a block sits at its offset. */
static void counts(const struct rb_coll_args *a, size_t count, size_t type_bytes, int nranks, bool legacy,
                   struct rb_coll_counts *o)
{
    (void)a;
    size_t base = rb_coll_per_rank_count(count, nranks, type_bytes, legacy);
    *o = (struct rb_coll_counts){.send = base, .recv = base * (size_t)nranks, .param = base,
                                 .send_inplace_off = base};
}

static void init(const struct rb_coll_args *a, uint64_t seed)
{
    rb_coll_data_poison(a->recv, a->count * (size_t)a->world.size * a->type_bytes);
    rb_coll_data_fill_value(a->send, a->count, a->type, a->world.rank, 0, seed);
}

/* Only the root receives; elsewhere there is nothing to check. */
static uint64_t check(const struct rb_coll_args *a, uint64_t seed)
{
    uint64_t wrong = 0;
    for (int j = 0; a->world.rank == a->root && j < a->world.size; j++)
        wrong += rb_coll_data_check_value(rb_algo_at(a, a->recv, (size_t)j * a->count), a->count, a->type, j,
                                          0, seed);
    return wrong;
}

static int run_mpi(const struct rb_coll_args *a)
{
    const void *send = a->in_place && a->world.rank == a->root ? MPI_IN_PLACE : a->send;
    RB_MPI_CHECK(MPI_Gather(send, (int)a->count, a->mpi_type, a->recv, (int)a->count, a->mpi_type, a->root,
                            a->world.comm));
    return 0;
}

/* Binomial tree (MPICH's gather): lg n rounds; the root places the blocks from virtual order into rank order. */
static int run_tree(const struct rb_coll_args *a)
{
    const size_t blk = a->count * a->type_bytes;
    const int n = a->world.size;
    char *work = rb_algo_scratch_work(a);
    rb_tree_gather(&a->world, a->root, a->send, blk, work);
    for (int k = 0; a->world.rank == a->root && k < n; k++)
        memcpy((char *)a->recv + blk * (size_t)((a->root + k) % n), work + blk * (size_t)k, blk);
    return 0;
}

/*
 * Rail-aware: along each rail to the rank on the root's node (binomial),
 * so every inter-node byte stays on the rail it started on, then inside
 * the root's node to the root (each local rank brings its rail's blocks).
 * The PXN idea turned round: cross rails only inside the node.
 */
static int run_hier(const struct rb_coll_args *a)
{
    struct rb_hier_rooted f;
    rb_hier_rooted_init(a, &f);
    rb_tree_gather(f.rail, f.br, a->send, f.blk, f.work);
    if (f.rail->rank != f.br)
        return 0;
    rb_hier_rail_order(&f, f.work, f.tmp, false);
    rb_tree_gather(f.node, f.jr, f.tmp, f.blk * (size_t)f.G, f.work);
    if (a->world.rank == a->root)
        rb_hier_root_order(a, &f, a->recv, false);
    return 0;
}

const struct rb_coll_test rb_coll_gather = {
    .kind = RB_COLL_GATHER,
    .name = "gather",
    .counts = counts,
    .init = init,
    .run = {[RB_COLL_ALGO_MPI] = run_mpi, [RB_COLL_ALGO_TREE] = run_tree, [RB_COLL_ALGO_HIER] = run_hier},
    .not_applicable =
        {
            [RB_COLL_ALGO_RING] = "a gather has one receiver, so there is no ring to pass blocks around",
            [RB_COLL_ALGO_RD] = "recursive doubling is for collectives where every rank ends with the data",
            [RB_COLL_ALGO_RHD] = "Rabenseifner's algorithm is a reduction",
        },
    .check = check,
};
