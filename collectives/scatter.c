/* scatter: rank r ends with block r of the root's vector (nccl-tests 2.19's src/scatter.cu). */
#include <string.h>

#include "algo_int.h"

/* nccl-tests: the root sends n aligned shares, each rank receives one; in place, a rank's block sits at its offset. */
static void counts(const struct rb_coll_args *a, size_t count, size_t type_bytes, int nranks, bool legacy,
                   struct rb_coll_counts *o)
{
    (void)a;
    size_t base = rb_coll_per_rank_count(count, nranks, type_bytes, legacy);
    *o = (struct rb_coll_counts){.send = base * (size_t)nranks, .recv = base, .param = base,
                                 .recv_inplace_off = base};
}

/* The root's block j carries rank j's values, so every receiver checks against its own rank. */
static void init(const struct rb_coll_args *a, uint64_t seed)
{
    rb_coll_data_poison(a->recv, a->count * a->type_bytes);
    for (int j = 0; a->world.rank == a->root && j < a->world.size; j++)
        rb_coll_data_fill_value(rb_algo_at(a, a->send, (size_t)j * a->count), a->count, a->type, j, 0, seed);
}

static uint64_t check(const struct rb_coll_args *a, uint64_t seed)
{
    return rb_coll_data_check_value(a->recv, a->count, a->type, a->world.rank, 0, seed);
}

static int run_mpi(const struct rb_coll_args *a)
{
    void *recv = a->in_place && a->world.rank == a->root ? MPI_IN_PLACE : a->recv;
    RB_MPI_CHECK(MPI_Scatter(a->send, (int)a->count, a->mpi_type, recv, (int)a->count, a->mpi_type, a->root,
                             a->world.comm));
    return 0;
}

/* Binomial tree (MPICH's scatter): the root lays its blocks out in virtual order, lg n rounds hand them down. */
static int run_tree(const struct rb_coll_args *a)
{
    const size_t blk = a->count * a->type_bytes;
    const int n = a->world.size;
    char *work = rb_algo_scratch_work(a);
    for (int k = 0; a->world.rank == a->root && k < n; k++)
        memcpy(work + blk * (size_t)k, (const char *)a->send + blk * (size_t)((a->root + k) % n), blk);
    return rb_tree_scatter(&a->world, a->root, a->recv, blk, work);
}

/*
 * Rail-aware: inside the root's node first, each local rank getting the
 * blocks of every rank on its rail, then down each rail (binomial) from
 * the rank on the root's node, so no inter-node byte changes rails.
 */
static int run_hier(const struct rb_coll_args *a)
{
    struct rb_hier_rooted f;
    rb_hier_rooted_init(a, &f);
    if (f.rail->rank == f.br) {
        if (a->world.rank == a->root)
            rb_hier_root_order(a, &f, a->send, true);
        rb_tree_scatter(f.node, f.jr, f.tmp, f.blk * (size_t)f.G, f.work);
        rb_hier_rail_order(&f, f.work, f.tmp, true);
    }
    return rb_tree_scatter(f.rail, f.br, a->recv, f.blk, f.work);
}

const struct rb_coll_test rb_coll_scatter = {
    .kind = RB_COLL_SCATTER,
    .name = "scatter",
    .counts = counts,
    .init = init,
    .run = {[RB_COLL_ALGO_MPI] = run_mpi, [RB_COLL_ALGO_TREE] = run_tree, [RB_COLL_ALGO_HIER] = run_hier},
    .not_applicable =
        {
            [RB_COLL_ALGO_RING] = "a scatter has one sender, so there is no ring to pass blocks around",
            [RB_COLL_ALGO_RD] = "recursive doubling is for collectives where every rank ends with the data",
            [RB_COLL_ALGO_RHD] = "Rabenseifner's algorithm is a reduction",
        },
    .check = check,
};
