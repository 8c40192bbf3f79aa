/* reduce: the root ends with the reduction of every rank's vector. */
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

/* Only the root's output is defined (as in nccl-tests). */
static uint64_t check(const struct rb_coll_args *a, uint64_t seed)
{
    if (a->world.rank != a->root)
        return 0;
    return rb_coll_data_check_expected(a->recv, a->count, a->type, a->op, a->world.size, 0, seed);
}

static int finish(const struct rb_coll_args *a)
{
    if (a->op == RB_COLL_AVG && a->world.rank == a->root)
        rb_coll_data_avg(a->recv, a->count, a->type, a->world.size);
    return 0;
}

/* The root accumulates into recv; other ranks into scratch, leaving their buffers as MPI and NCCL do. */
static void *acc_vector(const struct rb_coll_args *a)
{
    return a->world.rank == a->root ? a->recv : rb_algo_scratch_work(a);
}

static int run_mpi(const struct rb_coll_args *a)
{
    const void *send = a->in_place && a->world.rank == a->root ? MPI_IN_PLACE : a->send;
    RB_MPI_CHECK(MPI_Reduce(send, a->recv, (int)a->count, a->mpi_type, a->mpi_op, a->root, a->world.comm));
    return finish(a);
}

static int run_ring(const struct rb_coll_args *a)
{
    struct rb_algo_links l;
    rb_algo_chain_links(a->world.rank, a->world.size, a->root, &l);
    rb_pipe_reduce(a, &a->world, a->send, acc_vector(a), a->count, &l);
    return finish(a);
}

static int run_rhd(const struct rb_coll_args *a)
{
    rb_rhd_reduce(a, &a->world, a->send, acc_vector(a), a->count, a->root, rb_algo_scratch_tmp(a));
    return finish(a);
}

static int run_tree(const struct rb_coll_args *a)
{
    struct rb_algo_links l;
    rb_algo_tree_links(a->world.rank, a->world.size, a->root, &l);
    rb_pipe_reduce(a, &a->world, a->send, acc_vector(a), a->count, &l);
    return finish(a);
}

const struct rb_coll_test rb_coll_reduce = {
    .kind = RB_COLL_REDUCE,
    .name = "reduce",
    .counts = counts,
    .init = init,
    .run = {[RB_COLL_ALGO_MPI] = run_mpi, [RB_COLL_ALGO_RING] = run_ring, [RB_COLL_ALGO_RHD] = run_rhd,
            [RB_COLL_ALGO_TREE] = run_tree},
    .not_applicable =
        {
            [RB_COLL_ALGO_RD] = "recursive doubling leaves the result on every rank (that is allreduce); "
                                "rhd and tree reduce to one root",
            [RB_COLL_ALGO_HIER] = "hier is the rail-aware allreduce (node reduce-scatter, rail allreduce, "
                                  "node allgather)",
        },
    .check = check,
};
