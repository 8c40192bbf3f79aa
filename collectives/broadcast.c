/* broadcast: every rank ends with the root's vector. */
#include <string.h>

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

/* The root's data is the pattern of the root; other ranks hold their own pattern, so data from the wrong rank is caught. */
static void init(const struct rb_coll_args *a, uint64_t seed)
{
    int me = a->world.rank;
    if (!a->in_place) {
        rb_coll_data_poison(a->recv, a->count * a->type_bytes);
        rb_coll_data_fill_value(a->send, a->count, a->type, me, 0, seed);
    } else if (me == a->root) {
        rb_coll_data_fill_value(a->recv, a->count, a->type, me, 0, seed);
    } else {
        rb_coll_data_poison(a->recv, a->count * a->type_bytes);
    }
}

static uint64_t check(const struct rb_coll_args *a, uint64_t seed)
{
    return rb_coll_data_check_value(a->recv, a->count, a->type, a->root, 0, seed);
}

/* NCCL's out-of-place broadcast: the root reads send and writes recv like everyone else. */
static void root_copy(const struct rb_coll_args *a)
{
    if (a->world.rank == a->root && a->send != a->recv)
        memcpy(a->recv, a->send, a->count * a->type_bytes);
}

static int run_mpi(const struct rb_coll_args *a)
{
    root_copy(a);
    RB_MPI_CHECK(MPI_Bcast(a->recv, (int)a->count, a->mpi_type, a->root, a->world.comm));
    return 0;
}

static int run_ring(const struct rb_coll_args *a)
{
    struct rb_algo_links l;
    rb_algo_chain_links(a->world.rank, a->world.size, a->root, &l);
    root_copy(a);
    return rb_pipe_bcast(a, &a->world, a->recv, a->count * a->type_bytes, &l);
}

static int run_rhd(const struct rb_coll_args *a)
{
    root_copy(a);
    return rb_rhd_bcast(a, &a->world, a->recv, a->count, a->root);
}

static int run_tree(const struct rb_coll_args *a)
{
    struct rb_algo_links l;
    rb_algo_tree_links(a->world.rank, a->world.size, a->root, &l);
    root_copy(a);
    return rb_pipe_bcast(a, &a->world, a->recv, a->count * a->type_bytes, &l);
}

const struct rb_coll_test rb_coll_broadcast = {
    .kind = RB_COLL_BROADCAST,
    .name = "broadcast",
    .counts = counts,
    .init = init,
    .run = {[RB_COLL_ALGO_MPI] = run_mpi, [RB_COLL_ALGO_RING] = run_ring, [RB_COLL_ALGO_RHD] = run_rhd,
            [RB_COLL_ALGO_TREE] = run_tree},
    .not_applicable =
        {
            [RB_COLL_ALGO_RD] = "recursive doubling needs data on every rank at the start; rhd scatters "
                                "first, then doubles",
            [RB_COLL_ALGO_HIER] = "hier is the rail-aware allreduce (node reduce-scatter, rail allreduce, "
                                  "node allgather)",
        },
    .check = check,
};
