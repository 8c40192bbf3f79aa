/* reducescatter: rank r ends with block r of the reduction of every rank's vector. */
#include <string.h>

#include "algo_int.h"

/* nccl-tests: the input is nranks blocks of the aligned per-rank share; in place, the result is the rank's own block. */
static void counts(const struct rb_coll_args *a, size_t count, size_t type_bytes, int nranks, bool legacy,
                   struct rb_coll_counts *o)
{
    (void)a;
    size_t base = rb_coll_per_rank_count(count, nranks, type_bytes, legacy);
    *o = (struct rb_coll_counts){.send = base * (size_t)nranks, .recv = base, .param = base,
                                 .recv_inplace_off = base};
}

static void init(const struct rb_coll_args *a, uint64_t seed)
{
    if (!a->in_place)
        rb_coll_data_poison(a->recv, a->count * a->type_bytes);
    rb_coll_data_fill_input(a->send, a->count * (size_t)a->world.size, a->type, a->op, a->world.size,
                            a->world.rank, 0, seed);
}

static uint64_t check(const struct rb_coll_args *a, uint64_t seed)
{
    return rb_coll_data_check_expected(a->recv, a->count, a->type, a->op, a->world.size,
                                       (uint64_t)a->world.rank * a->count, seed);
}

static int finish(const struct rb_coll_args *a)
{
    if (a->op == RB_COLL_AVG)
        rb_coll_data_avg(a->recv, a->count, a->type, a->world.size);
    return 0;
}

static int run_mpi(const struct rb_coll_args *a)
{
    if (!a->in_place) {
        RB_MPI_CHECK(MPI_Reduce_scatter_block(a->send, a->recv, (int)a->count, a->mpi_type, a->mpi_op,
                                              a->world.comm));
    } else {
        /* MPI's in-place result lands at the start of the buffer; NCCL's at the rank's own block. */
        RB_MPI_CHECK(MPI_Reduce_scatter_block(MPI_IN_PLACE, a->send, (int)a->count, a->mpi_type, a->mpi_op,
                                              a->world.comm));
        if (a->recv != a->send)
            memmove(a->recv, a->send, a->count * a->type_bytes);
    }
    return finish(a);
}

/* In place the input vector is also the work vector; out of place the partial sums go to scratch. */
static void *work_vector(const struct rb_coll_args *a)
{
    return a->in_place ? a->send : rb_algo_scratch_work(a);
}

static int run_ring(const struct rb_coll_args *a)
{
    size_t off[a->world.size + 1];
    rb_algo_blocks(a->count, a->world.size, off);
    rb_ring_reduce_scatter(a, &a->world, a->send, work_vector(a), a->recv, off, rb_algo_scratch_tmp(a));
    return finish(a);
}

static int run_rhd(const struct rb_coll_args *a)
{
    size_t off[a->world.size + 1];
    void *work = work_vector(a);
    rb_algo_blocks(a->count, a->world.size, off);
    rb_rhd_reduce_scatter(a, &a->world, a->send, work, off, rb_algo_scratch_tmp(a));
    void *mine = rb_algo_at(a, work, off[a->world.rank]);
    if (mine != a->recv)
        memcpy(a->recv, mine, a->count * a->type_bytes);
    return finish(a);
}

const struct rb_coll_test rb_coll_reducescatter = {
    .kind = RB_COLL_REDUCESCATTER,
    .name = "reducescatter",
    .counts = counts,
    .init = init,
    .run = {[RB_COLL_ALGO_MPI] = run_mpi, [RB_COLL_ALGO_RING] = run_ring, [RB_COLL_ALGO_RHD] = run_rhd},
    .not_applicable =
        {
            [RB_COLL_ALGO_RD] = "recursive doubling exchanges whole vectors; its reduce-scatter form is "
                                "rhd's recursive halving",
            [RB_COLL_ALGO_TREE] = "a tree reduces to one root, and reducescatter leaves a block on every rank",
            [RB_COLL_ALGO_HIER] = "hier is the rail-aware allreduce (node reduce-scatter, rail allreduce, "
                                  "node allgather)",
        },
    .check = check,
};
