/* scatter: rank r ends with block r of the root's vector (nccl-tests 2.19's src/scatter.cu). */
#include "algo_int.h"

/* nccl-tests: the root sends n aligned shares, each rank receives one; in place, a rank's block sits at its offset. */
static void counts(size_t count, size_t type_bytes, int nranks, bool legacy, struct rb_coll_counts *o)
{
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

const struct rb_coll_test rb_coll_scatter = {
    .kind = RB_COLL_SCATTER,
    .name = "scatter",
    .counts = counts,
    .init = init,
    .run = {[RB_COLL_ALGO_MPI] = run_mpi},
    .not_applicable =
        {
            [RB_COLL_ALGO_RING] = "a scatter has one sender, so there is no ring to pass blocks around",
            [RB_COLL_ALGO_RD] = "recursive doubling is for collectives where every rank ends with the data",
            [RB_COLL_ALGO_RHD] = "Rabenseifner's algorithm is a reduction",
            [RB_COLL_ALGO_TREE] = "not implemented here: the MPI library's scatter is the only one timed",
            [RB_COLL_ALGO_HIER] = "every block starts on one root, so there is no per-rail traffic to keep apart",
        },
    .check = check,
};
