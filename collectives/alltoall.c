/* alltoall: block j of rank r's vector goes to rank j, which stores it as its block r. */
#include <string.h>

#include "algo_int.h"

/* nccl-tests: nranks blocks of the aligned per-rank share each way; the count column is one block. */
static void counts(const struct rb_coll_args *a, size_t count, size_t type_bytes, int nranks, bool legacy,
                   struct rb_coll_counts *o)
{
    (void)a;
    size_t base = rb_coll_per_rank_count(count, nranks, type_bytes, legacy);
    *o = (struct rb_coll_counts){.send = base * (size_t)nranks, .recv = base * (size_t)nranks, .param = base};
}

static void init(const struct rb_coll_args *a, uint64_t seed)
{
    size_t n = (size_t)a->world.size;
    if (!a->in_place)
        rb_coll_data_poison(a->recv, a->count * n * a->type_bytes);
    rb_coll_data_fill_value(a->send, a->count * n, a->type, a->world.rank, 0, seed);
}

/* Block j of the output is block `rank` of rank j's input. */
static uint64_t check(const struct rb_coll_args *a, uint64_t seed)
{
    uint64_t wrong = 0;
    for (int j = 0; j < a->world.size; j++)
        wrong += rb_coll_data_check_value(rb_algo_at(a, a->recv, (size_t)j * a->count), a->count, a->type, j,
                                          (uint64_t)a->world.rank * a->count, seed);
    return wrong;
}

static int run_mpi(const struct rb_coll_args *a)
{
    RB_MPI_CHECK(MPI_Alltoall(a->in_place ? MPI_IN_PLACE : a->send, (int)a->count, a->mpi_type, a->recv,
                              (int)a->count, a->mpi_type, a->world.comm));
    return 0;
}

/*
 * Ring order: in step k every rank sends to rank + k and receives from
 * rank - k, so each step is a shift around the ring. In place the input is
 * first copied aside, since step k overwrites a block sent only later.
 */
static int run_ring(const struct rb_coll_args *a)
{
    const int n = a->world.size, r = a->world.rank;
    const size_t bytes = a->count * a->type_bytes;
    const char *src = a->send;
    if (a->in_place) {
        memcpy(rb_algo_scratch_work(a), a->send, bytes * (size_t)n);
        src = rb_algo_scratch_work(a);
    }
    memcpy((char *)a->recv + (size_t)r * bytes, src + (size_t)r * bytes, bytes);
    for (int k = 1; k < n; k++) {
        int to = (r + k) % n, from = (r - k + n) % n;
        RB_MPI_CHECK(MPI_Sendrecv(src + (size_t)to * bytes, (int)bytes, MPI_BYTE, to, RB_TAG_A2A,
                                  (char *)a->recv + (size_t)from * bytes, (int)bytes, MPI_BYTE, from,
                                  RB_TAG_A2A, a->world.comm, MPI_STATUS_IGNORE));
    }
    return 0;
}

const struct rb_coll_test rb_coll_alltoall = {
    .kind = RB_COLL_ALLTOALL,
    .name = "alltoall",
    .counts = counts,
    .init = init,
    .run = {[RB_COLL_ALGO_MPI] = run_mpi, [RB_COLL_ALGO_RING] = run_ring},
    .not_applicable =
        {
            [RB_COLL_ALGO_RD] = "every pair exchanges distinct data, so there is nothing to double",
            [RB_COLL_ALGO_RHD] = "Rabenseifner's algorithm is a reduction",
            [RB_COLL_ALGO_TREE] = "a tree moves data to or from one root, and alltoall has none",
            [RB_COLL_ALGO_HIER] = "hier is the rail-aware allreduce (node reduce-scatter, rail allreduce, "
                                  "node allgather)",
        },
    .check = check,
};
