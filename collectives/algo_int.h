/* Algorithms built on MPI point-to-point, shared by the collectives (internal to collectives/). */
#ifndef RB_COLL_ALGO_INT_H
#define RB_COLL_ALGO_INT_H

#include <stddef.h>

#include "coll_int.h"
#include "railbench/harness.h"

/*
 * Conventions. A block layout off[0..n] splits a vector: block b is
 * elements [off[b], off[b+1]). Blocks are indexed by virtual rank
 * vr = (rank - root + n) % n, so rooted algorithms treat the root as 0 and
 * rootless ones pass root 0. Byte counts fit an int (the harness limits
 * sizes). Reductions use a->op through rb_coll_data_reduce (avg reduces as
 * sum; the caller divides). MPI failures abort through RB_MPI_CHECK, so the
 * functions return 0.
 */

/* Message tags, one per algorithm family, so a mismatch shows in a debugger. */
enum { RB_TAG_RING = 7101, RB_TAG_RHD, RB_TAG_PIPE, RB_TAG_A2A, RB_TAG_HIER, RB_TAG_TREE };

/* off[0..n]: count split into n blocks, the first count % n one element larger. */
void rb_algo_split(size_t count, int n, size_t *off);

/* off[0..n]: n blocks of per_block elements. */
void rb_algo_blocks(size_t per_block, int n, size_t *off);

/* Scratch areas: a full-size work vector, a full-size receive vector, and pipeline slots. */
void *rb_algo_scratch_work(const struct rb_coll_args *a);
void *rb_algo_scratch_tmp(const struct rb_coll_args *a);
void *rb_algo_scratch_slots(const struct rb_coll_args *a);

/* Bytes of elements [off[b], off[b+1]). */
static inline size_t rb_algo_block_bytes(const struct rb_coll_args *a, const size_t *off, int b)
{
    return (off[b + 1] - off[b]) * a->type_bytes;
}

/* Address of element i of buf. */
static inline char *rb_algo_at(const struct rb_coll_args *a, const void *buf, size_t i)
{
    return (char *)buf + i * a->type_bytes;
}

/*
 * Ring reduce-scatter (nccl-tests PERFORMANCE.md; Patarasuk & Yuan 2009):
 * n-1 steps, each sending one block to the right neighbour and reducing the
 * block from the left. in is the input vector (read only, unless it is
 * work), work a full-size vector for partial sums (may be in), out receives
 * this rank's reduced block (may be work + off[rank]). tmp holds one block.
 */
int rb_ring_reduce_scatter(const struct rb_coll_args *a, const struct rb_coll_comm *c, const void *in,
                           void *work, void *out, const size_t *off, void *tmp);

/* Ring allgather: work holds this rank's block at off[rank]; after n-1 steps it holds all. */
int rb_ring_allgather(const struct rb_coll_args *a, const struct rb_coll_comm *c, void *work,
                      const size_t *off);

/*
 * Recursive doubling allreduce of count elements (Thakur, Rabenseifner &
 * Gropp 2005): lg p exchanges of the whole vector. Non-powers of two fold
 * first: of the first 2r ranks (r = n - p2) the odd ones hand their vector
 * to the even neighbour and get the result back at the end. Result in work
 * (which may be in); tmp holds count elements.
 */
int rb_rd_allreduce(const struct rb_coll_args *a, const struct rb_coll_comm *c, const void *in,
                    void *work, size_t count, void *tmp);

/* Rabenseifner allreduce: fold, recursive-halving reduce-scatter, recursive-doubling allgather, unfold. */
int rb_rhd_allreduce(const struct rb_coll_args *a, const struct rb_coll_comm *c, const void *in,
                     void *work, size_t count, void *tmp);

/* Recursive-halving reduce-scatter over layout off (blocks by rank); this rank's block ends in work. */
int rb_rhd_reduce_scatter(const struct rb_coll_args *a, const struct rb_coll_comm *c, const void *in,
                          void *work, const size_t *off, void *tmp);

/* Recursive-doubling allgather over layout off: work holds this rank's block, then all of them. */
int rb_rd_allgather(const struct rb_coll_args *a, const struct rb_coll_comm *c, void *work,
                    const size_t *off);

/* Broadcast by recursive-halving scatter and recursive-doubling allgather (van de Geijn). buf on root holds the data. */
int rb_rhd_bcast(const struct rb_coll_args *a, const struct rb_coll_comm *c, void *buf, size_t count,
                 int root);

/* Reduce by recursive-halving reduce-scatter and binomial gather (Rabenseifner); work on root gets the result. */
int rb_rhd_reduce(const struct rb_coll_args *a, const struct rb_coll_comm *c, const void *in, void *work,
                  size_t count, int root, void *tmp);

/* Links of a pipeline topology: parent (-1 at the root) and up to two children, as ranks of c. */
struct rb_algo_links {
    int parent;
    int children[2];
    int nchildren;
};

/* Binary tree over virtual ranks (children of vr are 2vr+1 and 2vr+2), rooted at root. */
void rb_algo_tree_links(int rank, int n, int root, struct rb_algo_links *l);

/* Chain root -> root+1 -> ... (the ring without its closing link). */
void rb_algo_chain_links(int rank, int n, int root, struct rb_algo_links *l);

/* Pipelined broadcast of bytes in a->chunk_bytes chunks down the links; buf on the root holds the data. */
int rb_pipe_bcast(const struct rb_coll_args *a, const struct rb_coll_comm *c, void *buf, size_t bytes,
                  const struct rb_algo_links *l);

/*
 * Pipelined reduce of count elements up the links: every chunk of in is
 * reduced with the children's chunks into acc (unused on leaves) and sent
 * on to the parent; the root's acc ends with the result.
 */
int rb_pipe_reduce(const struct rb_coll_args *a, const struct rb_coll_comm *c, const void *in, void *acc,
                   size_t count, const struct rb_algo_links *l);

/*
 * Rail-aware allreduce: node-local ring reduce-scatter over a->node, one
 * allreduce per rail of this rank's block over a->rail (Rabenseifner;
 * recursive doubling for small blocks), node-local ring allgather. Vectors
 * of at most 8 KiB take the latency path: recursive doubling in the node,
 * then along the rail. in -> out (may be equal).
 */
int rb_hier_allreduce(const struct rb_coll_args *a, const void *in, void *out, size_t count);

/*
 * Binomial-tree gather over c (MPICH's; lg n rounds) of one blk-byte block
 * per rank from in: the root's work ends with the c->size blocks in virtual
 * order, block k from rank (root + k) % size, for the caller to place.
 * work (scratch, not in) holds c->size blocks on every rank.
 */
int rb_tree_gather(const struct rb_coll_comm *c, int root, const void *in, size_t blk, char *work);

/*
 * Binomial-tree scatter over c: the root's work holds c->size blk-byte
 * blocks in virtual order (block k for rank (root + k) % size) before the
 * call; every rank's out gets its own block. work is scratch of c->size
 * blocks on every rank.
 */
int rb_tree_scatter(const struct rb_coll_comm *c, int root, void *out, size_t blk, char *work);

/* Where world rank world_rank sits in a->world_of: its rail rank (its node's position) and node rank (its rail). */
void rb_hier_place(const struct rb_coll_args *a, int world_rank, int *rail_rank, int *node_rank);

/*
 * The frame of a rooted rail-aware collective (gather, scatter): blocks go
 * along the rails to or from the rank on the root's node (rail rank br),
 * and inside the root's node to or from the root (node rank jr).
 */
struct rb_hier_rooted {
    const struct rb_coll_comm *node, *rail;
    size_t blk;       /* one rank's block */
    int L, G;         /* ranks per node, ranks per rail */
    int br, jr;       /* the root's rail rank and node rank */
    char *work, *tmp; /* a's scratch */
};
void rb_hier_rooted_init(const struct rb_coll_args *a, struct rb_hier_rooted *f);

/*
 * The rail's blocks between rail order (rail rank b's at b, in rail) and
 * the virtual order of a tree rooted at br (block k from rail rank
 * (br + k) % G, in virt); to_virtual says which way.
 */
void rb_hier_rail_order(const struct rb_hier_rooted *f, char *virt, char *rail, bool to_virtual);

/*
 * The root's blocks between vec, in world rank order, and the node tree's
 * virtual order in f->work (slot k x G + b: rail rank b of node rank
 * (jr + k) % L); to_work says which way. Only the root calls it.
 */
void rb_hier_root_order(const struct rb_coll_args *a, const struct rb_hier_rooted *f, char *vec, bool to_work);

/*
 * All-to-all of uneven sizes over a->world: m[i x n + j] is the bytes rank
 * i sends rank j. send holds this rank's blocks in destination order, recv
 * gets the blocks in source order (both packed). Return 0, -EOVERFLOW when a
 * total exceeds an MPI int, -ENOMEM, or -EINVAL (pxn without equal nodes).
 * mpi: MPI_Alltoallv. pairwise: n-1 shifts of MPI_Sendrecv; got_from (may
 * be NULL) gets each source's bytes as MPI_Get_count saw them. pxn: the
 * rail-optimised relay -- inside the node to the peer on the destination's
 * rail, then along that rail (a->world_of; keeps grow-only buffers).
 */
int rb_a2av_mpi(const struct rb_coll_args *a, const size_t *m, const void *send, void *recv);
int rb_a2av_pairwise(const struct rb_coll_args *a, const size_t *m, const void *send, void *recv,
                     uint64_t *got_from);
int rb_a2av_pxn(const struct rb_coll_args *a, const size_t *m, const void *send, void *recv);

#endif
