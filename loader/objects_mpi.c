/* Object sets between ranks: a listing made on one rank, copied whole or scattered in shares, arena as it is. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "objset_int.h"

/* MPI counts are ints: big buffers go in pieces of at most 1 GiB. */
#define CHUNK_BYTES (1ull << 30)
#define TAG 0x5e7

/* One way to move bytes: bcast (peer < 0: from root), send to peer, or receive from root. */
static int move_bytes(void *buf, uint64_t len, int root, int peer, bool sending, MPI_Comm comm)
{
    for (uint64_t off = 0; off < len; off += CHUNK_BYTES) {
        int n = (int)(len - off < CHUNK_BYTES ? len - off : CHUNK_BYTES);
        char *p = (char *)buf + off;
        int rc = peer < 0 ? MPI_Bcast(p, n, MPI_BYTE, root, comm)
                 : sending ? MPI_Send(p, n, MPI_BYTE, peer, TAG, comm)
                           : MPI_Recv(p, n, MPI_BYTE, root, TAG, comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return -EIO;
    }
    return 0;
}

/* The arrays of a listed set, in the order they travel. */
static int move_set(struct rb_objset *s, int root, int peer, bool sending, MPI_Comm comm)
{
    uint64_t nblk = (s->n + (1ull << RB_OBJSET_BLOCK_SHIFT) - 1) >> RB_OBJSET_BLOCK_SHIFT;
    int rc = move_bytes(s->arena, s->arena_len, root, peer, sending, comm);
    if (!rc)
        rc = move_bytes(s->rel_off, s->n * sizeof *s->rel_off, root, peer, sending, comm);
    if (!rc)
        rc = move_bytes(s->block_off, nblk * sizeof *s->block_off, root, peer, sending, comm);
    if (!rc)
        rc = move_bytes(s->sizes, s->n * sizeof *s->sizes, root, peer, sending, comm);
    return rc;
}

/* Allocates an empty listed set's arrays for n objects and len arena bytes. Returns 0 or -ENOMEM. */
static int alloc_set(struct rb_objset *s, uint64_t n, uint64_t len, uint64_t common)
{
    uint64_t nblk = (n + (1ull << RB_OBJSET_BLOCK_SHIFT) - 1) >> RB_OBJSET_BLOCK_SHIFT;
    s->arena = malloc(len ? len : 1);
    s->rel_off = malloc(n ? n * sizeof *s->rel_off : 1);
    s->block_off = malloc(nblk ? nblk * sizeof *s->block_off : 1);
    s->sizes = malloc(n ? n * sizeof *s->sizes : 1);
    if (!s->arena || !s->rel_off || !s->block_off || !s->sizes) {
        rb_objset_free(s);
        return -ENOMEM;
    }
    s->n = s->cap = n;
    s->arena_len = s->arena_cap = len;
    s->size_bytes = common;
    return 0;
}

/* True on every rank when any rank passes bad (or MPI fails). */
static bool any_bad(bool bad, MPI_Comm comm)
{
    int mine = bad, any = 1;
    if (MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return true;
    return any != 0;
}

int rb_objset_bcast(struct rb_objset *s, int root, MPI_Comm comm)
{
    int rank, size;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return -EIO;
    if (size == 1)
        return 0;
    uint64_t hdr[3] = {s->n, s->arena_len, s->size_bytes};
    if (MPI_Bcast(hdr, 3, MPI_UINT64_T, root, comm) != MPI_SUCCESS)
        return -EIO;
    bool bad = rank != root && alloc_set(s, hdr[0], hdr[1], hdr[2]) != 0;
    if (any_bad(bad, comm))
        return -ENOMEM;
    return any_bad(move_set(s, root, -1, rank == root, comm) != 0, comm) ? -EIO : 0;
}

/* Root: the objects and arena bytes of every rank's share, into n[size] and len[size]. */
static void share_sizes(const struct rb_objset *s, int size, uint64_t *n, uint64_t *len)
{
    char unused[RB_OBJSET_NAME_BYTES];
    for (uint64_t i = 0; i < s->n; i++) {
        n[i % (uint64_t)size]++;
        len[i % (uint64_t)size] += strlen(rb_objset_name(s, i, unused)) + 1;
    }
}

/* Root: builds each other rank's share in turn and sends it, then keeps its own. Returns 0 or -errno. */
static int send_shares(struct rb_objset *s, int root, int size, MPI_Comm comm)
{
    int rc = 0;
    for (int r = 0; r < size && !rc; r++) {
        if (r == root)
            continue;
        struct rb_objset part = {0};
        rc = rb_objset_partition(s, r, size, &part);
        if (!rc)
            rc = move_set(&part, root, r, true, comm);
        rb_objset_free(&part);
    }
    struct rb_objset own = {0};
    if (!rc)
        rc = rb_objset_partition(s, root, size, &own);
    rb_objset_free(s);
    *s = own;
    return rc;
}

int rb_objset_scatter(struct rb_objset *s, int root, MPI_Comm comm, uint64_t *total)
{
    int rank, size;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return -EIO;
    uint64_t hdr[3] = {s->n, 0, 0}; /* total, then this rank's objects and arena bytes */
    if (MPI_Bcast(hdr, 1, MPI_UINT64_T, root, comm) != MPI_SUCCESS)
        return -EIO;
    *total = hdr[0];
    if (size == 1)
        return 0;
    uint64_t *n = NULL, *len = NULL, *pairs = NULL;
    bool bad = false;
    if (rank == root) {
        n = calloc((size_t)size, sizeof *n);
        len = calloc((size_t)size, sizeof *len);
        pairs = malloc((size_t)size * 2 * sizeof *pairs);
        if (n && len && pairs) {
            share_sizes(s, size, n, len);
            for (int r = 0; r < size; r++) {
                pairs[2 * r] = n[r];
                pairs[2 * r + 1] = len[r];
            }
        } else {
            bad = true;
        }
    }
    int rc = any_bad(bad, comm) ? -ENOMEM : 0;
    if (!rc && MPI_Scatter(pairs, 2, MPI_UINT64_T, hdr + 1, 2, MPI_UINT64_T, root, comm) != MPI_SUCCESS)
        rc = -EIO;
    free(n);
    free(len);
    free(pairs);
    if (rc)
        return rc;
    if (any_bad(rank != root && alloc_set(s, hdr[1], hdr[2], 0) != 0, comm))
        return -ENOMEM;
    uint64_t common = s->size_bytes;
    rc = rank == root ? send_shares(s, root, size, comm) : move_set(s, root, rank, false, comm);
    if (MPI_Bcast(&common, 1, MPI_UINT64_T, root, comm) != MPI_SUCCESS)
        rc = -EIO;
    s->size_bytes = common;
    return any_bad(rc != 0, comm) ? -EIO : 0;
}
