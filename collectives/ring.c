/* Ring reduce-scatter and allgather over MPI point-to-point (the bandwidth-optimal pattern NCCL's rings use). */
#include <string.h>

#include "algo_int.h"

int rb_ring_reduce_scatter(const struct rb_coll_args *a, const struct rb_coll_comm *c, const void *in,
                           void *work, void *out, const size_t *off, void *tmp)
{
    const int n = c->size, r = c->rank;
    if (n == 1) {
        if (out != in)
            memmove(out, in, rb_algo_block_bytes(a, off, 0));
        return 0;
    }
    const int right = (r + 1) % n, left = (r - 1 + n) % n;
    /*
     * Step s sends block r-s-1 and receives block r-s-2, so the block
     * received last (s = n-2) is block r, complete after n-1 additions.
     * Step 0 sends straight from the input; later steps send what the
     * previous step reduced into work.
     */
    for (int s = 0; s < n - 1; s++) {
        int sb = (r - s - 1 + 2 * n) % n, rb = (r - s - 2 + 2 * n) % n;
        const void *src = s == 0 ? rb_algo_at(a, in, off[sb]) : rb_algo_at(a, work, off[sb]);
        RB_MPI_CHECK(MPI_Sendrecv(src, (int)rb_algo_block_bytes(a, off, sb), MPI_BYTE, right, RB_TAG_RING,
                                  tmp, (int)rb_algo_block_bytes(a, off, rb), MPI_BYTE, left, RB_TAG_RING,
                                  c->comm, MPI_STATUS_IGNORE));
        void *dst = s == n - 2 ? out : rb_algo_at(a, work, off[rb]);
        rb_coll_data_reduce(dst, rb_algo_at(a, in, off[rb]), tmp, off[rb + 1] - off[rb], a->type, a->op);
    }
    return 0;
}

int rb_ring_allgather(const struct rb_coll_args *a, const struct rb_coll_comm *c, void *work,
                      const size_t *off)
{
    const int n = c->size, r = c->rank;
    const int right = (r + 1) % n, left = (r - 1 + n) % n;
    /* Step s forwards block r-s (own block first) and receives block r-s-1 in place. */
    for (int s = 0; s < n - 1; s++) {
        int sb = (r - s + n) % n, rb = (r - s - 1 + n) % n;
        RB_MPI_CHECK(MPI_Sendrecv(rb_algo_at(a, work, off[sb]), (int)rb_algo_block_bytes(a, off, sb), MPI_BYTE,
                                  right, RB_TAG_RING, rb_algo_at(a, work, off[rb]),
                                  (int)rb_algo_block_bytes(a, off, rb), MPI_BYTE, left, RB_TAG_RING, c->comm,
                                  MPI_STATUS_IGNORE));
    }
    return 0;
}
