/* allreduce: every rank ends with the reduction of every rank's vector. */
#include "algo_int.h"

static void counts(const struct rb_coll_args *a, size_t count, size_t type_bytes, int nranks, bool legacy,
                   struct rb_coll_counts *o)
{
    (void)a;
    (void)type_bytes;
    (void)legacy;
    (void)nranks;
    *o = (struct rb_coll_counts){.send = count, .recv = count, .param = count};
}

static void init(const struct rb_coll_args *a, uint64_t seed)
{
    if (!a->in_place)
        rb_coll_data_poison(a->recv, a->count * a->type_bytes);
    rb_coll_data_fill_input(a->send, a->count, a->type, a->op, a->world.size, a->world.rank, 0, seed);
}

static uint64_t check(const struct rb_coll_args *a, uint64_t seed)
{
    return rb_coll_data_check_expected(a->recv, a->count, a->type, a->op, a->world.size, 0, seed);
}

/* avg is reduced as a sum; divide once at the end, as NCCL does. */
static int finish(const struct rb_coll_args *a)
{
    if (a->op == RB_COLL_AVG)
        rb_coll_data_avg(a->recv, a->count, a->type, a->world.size);
    return 0;
}

static int run_mpi(const struct rb_coll_args *a)
{
    RB_MPI_CHECK(MPI_Allreduce(a->in_place ? MPI_IN_PLACE : a->send, a->recv, (int)a->count, a->mpi_type,
                               a->mpi_op, a->world.comm));
    return finish(a);
}

static int run_ring(const struct rb_coll_args *a)
{
    const struct rb_coll_comm *w = &a->world;
    size_t off[w->size + 1];
    rb_algo_split(a->count, w->size, off);
    rb_ring_reduce_scatter(a, w, a->send, a->recv, rb_algo_at(a, a->recv, off[w->rank]), off,
                           rb_algo_scratch_tmp(a));
    rb_ring_allgather(a, w, a->recv, off);
    return finish(a);
}

static int run_rd(const struct rb_coll_args *a)
{
    rb_rd_allreduce(a, &a->world, a->send, a->recv, a->count, rb_algo_scratch_tmp(a));
    return finish(a);
}

static int run_rhd(const struct rb_coll_args *a)
{
    rb_rhd_allreduce(a, &a->world, a->send, a->recv, a->count, rb_algo_scratch_tmp(a));
    return finish(a);
}

/* Reduce up a binary tree to rank 0, then broadcast down it; both pipelined in chunks. */
static int run_tree(const struct rb_coll_args *a)
{
    struct rb_algo_links l;
    rb_algo_tree_links(a->world.rank, a->world.size, 0, &l);
    rb_pipe_reduce(a, &a->world, a->send, a->recv, a->count, &l);
    rb_pipe_bcast(a, &a->world, a->recv, a->count * a->type_bytes, &l);
    return finish(a);
}

static int run_hier(const struct rb_coll_args *a)
{
    rb_hier_allreduce(a, a->send, a->recv, a->count);
    return finish(a);
}

const struct rb_coll_test rb_coll_allreduce = {
    .kind = RB_COLL_ALLREDUCE,
    .name = "allreduce",
    .counts = counts,
    .init = init,
    .run = {[RB_COLL_ALGO_MPI] = run_mpi, [RB_COLL_ALGO_RING] = run_ring, [RB_COLL_ALGO_RD] = run_rd,
            [RB_COLL_ALGO_RHD] = run_rhd, [RB_COLL_ALGO_TREE] = run_tree, [RB_COLL_ALGO_HIER] = run_hier},
    .check = check,
};
