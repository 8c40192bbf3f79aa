/* Binomial-tree gather and scatter over any communicator (MPICH's algorithms), in blocks of whole bytes. */
#include <string.h>

#include "algo_int.h"

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/*
 * Round k: a virtual rank with bit k set sends what it holds (its subtree's
 * blocks, contiguous from its own) to vr - 2^k and is done; the others take
 * their child vr + 2^k's blocks behind their own. lg n rounds; the root
 * receives n - 1 blocks, every other rank sends once.
 */
int rb_tree_gather(const struct rb_coll_comm *c, int root, const void *in, size_t blk, char *work)
{
    const int n = c->size, vr = (c->rank - root + n) % n;
    int have = 1;
    memcpy(work, in, blk);
    for (int mask = 1; mask < n; mask <<= 1) {
        if (vr & mask) {
            RB_MPI_CHECK(MPI_Send(work, (int)(blk * (size_t)have), MPI_BYTE, (vr - mask + root) % n, RB_TAG_TREE,
                                  c->comm));
            break;
        }
        if (vr + mask < n) {
            int cnt = min_int(mask, n - vr - mask);
            RB_MPI_CHECK(MPI_Recv(work + blk * (size_t)have, (int)(blk * (size_t)cnt), MPI_BYTE,
                                  (vr + mask + root) % n, RB_TAG_TREE, c->comm, MPI_STATUS_IGNORE));
            have += cnt;
        }
    }
    return 0;
}

/*
 * The gather reversed: a rank receives its subtree's blocks from vr - 2^k
 * (k its lowest set bit), then hands the upper halves down to vr + 2^(k-1),
 * vr + 2^(k-2), ... The root starts with all of them.
 */
int rb_tree_scatter(const struct rb_coll_comm *c, int root, void *out, size_t blk, char *work)
{
    const int n = c->size, vr = (c->rank - root + n) % n;
    int mask = 1;
    for (; mask < n; mask <<= 1)
        if (vr & mask) {
            RB_MPI_CHECK(MPI_Recv(work, (int)(blk * (size_t)min_int(mask, n - vr)), MPI_BYTE,
                                  (vr - mask + root) % n, RB_TAG_TREE, c->comm, MPI_STATUS_IGNORE));
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n)
            RB_MPI_CHECK(MPI_Send(work + blk * (size_t)mask, (int)(blk * (size_t)min_int(mask, n - vr - mask)),
                                  MPI_BYTE, (vr + mask + root) % n, RB_TAG_TREE, c->comm));
    memcpy(out, work, blk);
    return 0;
}

void rb_hier_place(const struct rb_coll_args *a, int world_rank, int *rail_rank, int *node_rank)
{
    const int L = a->node.size, n = a->world.size;
    for (int i = 0; i < n; i++)
        if (a->world_of[i] == world_rank) {
            *rail_rank = i / L;
            *node_rank = i % L;
            return;
        }
    *rail_rank = *node_rank = 0; /* not reached: world_of names every rank */
}

void rb_hier_rooted_init(const struct rb_coll_args *a, struct rb_hier_rooted *f)
{
    *f = (struct rb_hier_rooted){.node = &a->node, .rail = &a->rail, .blk = a->count * a->type_bytes,
                                 .L = a->node.size, .G = a->rail.size, .work = rb_algo_scratch_work(a),
                                 .tmp = rb_algo_scratch_tmp(a)};
    rb_hier_place(a, a->root, &f->br, &f->jr);
}

void rb_hier_rail_order(const struct rb_hier_rooted *f, char *virt, char *rail, bool to_virtual)
{
    for (int k = 0; k < f->G; k++) {
        char *v = virt + f->blk * (size_t)k, *r = rail + f->blk * (size_t)((f->br + k) % f->G);
        memcpy(to_virtual ? v : r, to_virtual ? r : v, f->blk);
    }
}

void rb_hier_root_order(const struct rb_coll_args *a, const struct rb_hier_rooted *f, char *vec, bool to_work)
{
    for (int k = 0; k < f->L; k++) {
        int j = (f->jr + k) % f->L;
        for (int b = 0; b < f->G; b++) {
            char *w = f->work + f->blk * ((size_t)k * f->G + b);
            char *v = vec + f->blk * (size_t)a->world_of[b * f->L + j];
            memcpy(to_work ? w : v, to_work ? v : w, f->blk);
        }
    }
}
