/* sendrecv: every rank sends its vector to the next rank and receives the previous rank's (nccl-tests' sendrecv_perf). */
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
    rb_coll_data_fill_value(a->send, a->count, a->type, a->world.rank, 0, seed);
}

static uint64_t check(const struct rb_coll_args *a, uint64_t seed)
{
    int prev = (a->world.rank - 1 + a->world.size) % a->world.size;
    return rb_coll_data_check_value(a->recv, a->count, a->type, prev, 0, seed);
}

static int run_mpi(const struct rb_coll_args *a)
{
    const int n = a->world.size, r = a->world.rank, next = (r + 1) % n, prev = (r - 1 + n) % n;
    if (a->in_place)
        RB_MPI_CHECK(MPI_Sendrecv_replace(a->recv, (int)a->count, a->mpi_type, next, 0, prev, 0,
                                          a->world.comm, MPI_STATUS_IGNORE));
    else
        RB_MPI_CHECK(MPI_Sendrecv(a->send, (int)a->count, a->mpi_type, next, 0, a->recv, (int)a->count,
                                  a->mpi_type, prev, 0, a->world.comm, MPI_STATUS_IGNORE));
    return 0;
}

#define ONE_EXCHANGE "one point-to-point exchange with each neighbour; there is no algorithm to choose"

const struct rb_coll_test rb_coll_sendrecv = {
    .kind = RB_COLL_SENDRECV,
    .name = "sendrecv",
    .counts = counts,
    .init = init,
    .run = {[RB_COLL_ALGO_MPI] = run_mpi},
    .not_applicable = {[RB_COLL_ALGO_RING] = ONE_EXCHANGE, [RB_COLL_ALGO_RD] = ONE_EXCHANGE,
                       [RB_COLL_ALGO_RHD] = ONE_EXCHANGE, [RB_COLL_ALGO_TREE] = ONE_EXCHANGE,
                       [RB_COLL_ALGO_HIER] = ONE_EXCHANGE},
    .check = check,
};
