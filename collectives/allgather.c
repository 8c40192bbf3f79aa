/* allgather: every rank ends with every rank's block, in rank order. */
#include <string.h>

#include "algo_int.h"

/* nccl-tests: each rank contributes its aligned share of count (rb_coll_per_rank_count); in place, its block sits at its offset. */
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

static uint64_t check(const struct rb_coll_args *a, uint64_t seed)
{
    uint64_t wrong = 0;
    for (int j = 0; j < a->world.size; j++)
        wrong += rb_coll_data_check_value(rb_algo_at(a, a->recv, (size_t)j * a->count), a->count, a->type, j,
                                          0, seed);
    return wrong;
}

/* Out of place, the algorithms start from this rank's block copied into its place in recv. */
static void place_own(const struct rb_coll_args *a)
{
    void *own = rb_algo_at(a, a->recv, (size_t)a->world.rank * a->count);
    if (own != a->send)
        memcpy(own, a->send, a->count * a->type_bytes);
}

static int run_mpi(const struct rb_coll_args *a)
{
    RB_MPI_CHECK(MPI_Allgather(a->in_place ? MPI_IN_PLACE : a->send, (int)a->count, a->mpi_type, a->recv,
                               (int)a->count, a->mpi_type, a->world.comm));
    return 0;
}

static int run_ring(const struct rb_coll_args *a)
{
    size_t off[a->world.size + 1];
    rb_algo_blocks(a->count, a->world.size, off);
    place_own(a);
    return rb_ring_allgather(a, &a->world, a->recv, off);
}

static int run_rd(const struct rb_coll_args *a)
{
    size_t off[a->world.size + 1];
    rb_algo_blocks(a->count, a->world.size, off);
    place_own(a);
    return rb_rd_allgather(a, &a->world, a->recv, off);
}

const struct rb_coll_test rb_coll_allgather = {
    .kind = RB_COLL_ALLGATHER,
    .name = "allgather",
    .counts = counts,
    .init = init,
    .run = {[RB_COLL_ALGO_MPI] = run_mpi, [RB_COLL_ALGO_RING] = run_ring, [RB_COLL_ALGO_RD] = run_rd},
    .not_applicable =
        {
            [RB_COLL_ALGO_RHD] = "Rabenseifner's algorithm is a reduction; its allgather half is rd",
            [RB_COLL_ALGO_TREE] = "a tree moves data to or from one root, and allgather has none",
            [RB_COLL_ALGO_HIER] = "hier is the rail-aware allreduce (node reduce-scatter, rail allreduce, "
                                  "node allgather)",
        },
    .check = check,
};
