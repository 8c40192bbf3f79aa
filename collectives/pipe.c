/* Pipelined broadcast and reduce along a binary tree or a chain, in chunks, with a few chunks in flight. */
#include <string.h>

#include "algo_int.h"

#define DEPTH RB_COLL_PIPELINE_DEPTH

static size_t nchunks(size_t bytes, size_t chunk)
{
    return (bytes + chunk - 1) / chunk;
}

int rb_pipe_bcast(const struct rb_coll_args *a, const struct rb_coll_comm *c, void *buf, size_t bytes,
                  const struct rb_algo_links *l)
{
    const size_t chunk = a->chunk_bytes, nch = nchunks(bytes, chunk);
    MPI_Request rreq[DEPTH], sreq[DEPTH][2];
    for (int s = 0; s < DEPTH; s++)
        rreq[s] = sreq[s][0] = sreq[s][1] = MPI_REQUEST_NULL;
    /* Receives run DEPTH chunks ahead, so the parent never waits for this rank to post one. */
    for (size_t k = 0; l->parent >= 0 && k < nch && k < DEPTH; k++) {
        size_t lo = k * chunk, len = bytes - lo < chunk ? bytes - lo : chunk;
        RB_MPI_CHECK(MPI_Irecv((char *)buf + lo, (int)len, MPI_BYTE, l->parent, RB_TAG_PIPE, c->comm,
                               &rreq[k % DEPTH]));
    }
    for (size_t k = 0; k < nch; k++) {
        size_t slot = k % DEPTH, lo = k * chunk, len = bytes - lo < chunk ? bytes - lo : chunk;
        if (l->parent >= 0)
            RB_MPI_CHECK(MPI_Wait(&rreq[slot], MPI_STATUS_IGNORE));
        for (int ch = 0; ch < l->nchildren; ch++) {
            RB_MPI_CHECK(MPI_Wait(&sreq[slot][ch], MPI_STATUS_IGNORE)); /* chunk k - DEPTH is out */
            RB_MPI_CHECK(MPI_Isend((char *)buf + lo, (int)len, MPI_BYTE, l->children[ch], RB_TAG_PIPE,
                                   c->comm, &sreq[slot][ch]));
        }
        size_t next = k + DEPTH;
        if (l->parent >= 0 && next < nch) {
            size_t nlo = next * chunk, nlen = bytes - nlo < chunk ? bytes - nlo : chunk;
            RB_MPI_CHECK(MPI_Irecv((char *)buf + nlo, (int)nlen, MPI_BYTE, l->parent, RB_TAG_PIPE, c->comm,
                                   &rreq[slot]));
        }
    }
    RB_MPI_CHECK(MPI_Waitall(2 * DEPTH, &sreq[0][0], MPI_STATUSES_IGNORE));
    return 0;
}

int rb_pipe_reduce(const struct rb_coll_args *a, const struct rb_coll_comm *c, const void *in, void *acc,
                   size_t count, const struct rb_algo_links *l)
{
    const size_t tb = a->type_bytes;
    size_t elems = a->chunk_bytes / tb;
    if (elems == 0)
        elems = 1;
    const size_t nch = (count + elems - 1) / elems, slot_bytes = elems * tb;
    char *slots = rb_algo_scratch_slots(a);
    MPI_Request rreq[2][DEPTH], sreq[DEPTH];
    for (int s = 0; s < DEPTH; s++)
        rreq[0][s] = rreq[1][s] = sreq[s] = MPI_REQUEST_NULL;
    if (l->parent < 0 && l->nchildren == 0) { /* a single rank */
        if (acc != in)
            memmove(acc, in, count * tb);
        return 0;
    }
#define SLOT(ch, s) (slots + ((size_t)(ch) * DEPTH + (s)) * slot_bytes)
#define CHUNK_LEN(k) ((count - (k) * elems) < elems ? (count - (k) * elems) : elems)
    for (size_t k = 0; k < nch && k < DEPTH; k++)
        for (int ch = 0; ch < l->nchildren; ch++)
            RB_MPI_CHECK(MPI_Irecv(SLOT(ch, k), (int)(CHUNK_LEN(k) * tb), MPI_BYTE, l->children[ch],
                                   RB_TAG_PIPE, c->comm, &rreq[ch][k]));
    for (size_t k = 0; k < nch; k++) {
        size_t slot = k % DEPTH, lo = k * elems, len = CHUNK_LEN(k);
        const void *data = rb_algo_at(a, in, lo);
        for (int ch = 0; ch < l->nchildren; ch++) {
            RB_MPI_CHECK(MPI_Wait(&rreq[ch][slot], MPI_STATUS_IGNORE));
            rb_coll_data_reduce(rb_algo_at(a, acc, lo), data, SLOT(ch, slot), len, a->type, a->op);
            data = rb_algo_at(a, acc, lo);
            size_t next = k + DEPTH;
            if (next < nch) /* the slot is free again: receive chunk k + DEPTH into it */
                RB_MPI_CHECK(MPI_Irecv(SLOT(ch, slot), (int)(CHUNK_LEN(next) * tb), MPI_BYTE,
                                       l->children[ch], RB_TAG_PIPE, c->comm, &rreq[ch][slot]));
        }
        if (l->parent >= 0) {
            RB_MPI_CHECK(MPI_Wait(&sreq[slot], MPI_STATUS_IGNORE));
            RB_MPI_CHECK(MPI_Isend(data, (int)(len * tb), MPI_BYTE, l->parent, RB_TAG_PIPE, c->comm,
                                   &sreq[slot]));
        }
    }
#undef SLOT
#undef CHUNK_LEN
    RB_MPI_CHECK(MPI_Waitall(DEPTH, sreq, MPI_STATUSES_IGNORE));
    return 0;
}
