/* Object sets between ranks: a listing made on one rank, held once per host in shared memory or scattered in shares. */
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

static uint64_t blocks(uint64_t n)
{
    return (n + (1ull << RB_OBJSET_BLOCK_SHIFT) - 1) >> RB_OBJSET_BLOCK_SHIFT;
}

/* The arrays of a listed set, in the order they travel. */
static int move_set(struct rb_objset *s, int root, int peer, bool sending, MPI_Comm comm)
{
    uint64_t nblk = blocks(s->n);
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
    uint64_t nblk = blocks(n);
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

uint64_t rb_objset_stored_bytes(const struct rb_objset *s)
{
    if (rb_objset_generated(s))
        return 0;
    return s->arena_len + s->n * (sizeof *s->rel_off + sizeof *s->sizes) + blocks(s->n) * sizeof *s->block_off;
}

/* Points v's arrays into a window of rb_objset_stored_bytes at base: 8-byte arrays first, the names last. */
static void window_view(struct rb_objset *v, char *base, uint64_t n, uint64_t arena_len)
{
    v->n = v->cap = n;
    v->arena_len = v->arena_cap = arena_len;
    v->sizes = (uint64_t *)base;
    v->block_off = v->sizes + n;
    v->rel_off = (uint32_t *)(v->block_off + blocks(n));
    v->arena = (char *)(v->rel_off + n);
}

/* Rank 0: its private set into the window view v, each array freed once copied (a lower peak than two whole copies). */
static void copy_in(struct rb_objset *v, struct rb_objset *s)
{
    memcpy(v->sizes, s->sizes, s->n * sizeof *s->sizes);
    free(s->sizes);
    s->sizes = NULL;
    memcpy(v->rel_off, s->rel_off, s->n * sizeof *s->rel_off);
    free(s->rel_off);
    s->rel_off = NULL;
    memcpy(v->block_off, s->block_off, blocks(s->n) * sizeof *s->block_off);
    memcpy(v->arena, s->arena, s->arena_len);
    rb_objset_free(s);
}

/* The host's ranks (node) and, on each host's first rank, the hosts' first ranks (leaders; else MPI_COMM_NULL). */
static int host_comms(MPI_Comm comm, MPI_Comm *node, MPI_Comm *leaders)
{
    int rank, nrank;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
        MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, node) != MPI_SUCCESS)
        return -EIO;
    /* Keyed by rank: comm's rank 0 is rank 0 of its host and of the leaders. */
    if (MPI_Comm_rank(*node, &nrank) != MPI_SUCCESS ||
        MPI_Comm_split(comm, nrank == 0 ? 0 : MPI_UNDEFINED, rank, leaders) != MPI_SUCCESS)
        return -EIO;
    return 0;
}

int rb_objset_share(struct rb_objset *s, MPI_Comm comm)
{
    int rank;
    MPI_Comm node = MPI_COMM_NULL, leaders = MPI_COMM_NULL;
    uint64_t hdr[3] = {s->n, s->arena_len, s->size_bytes};
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Bcast(hdr, 3, MPI_UINT64_T, 0, comm) != MPI_SUCCESS)
        return -EIO;
    int rc = host_comms(comm, &node, &leaders);
    if (any_bad(rc != 0, comm))
        return -EIO;
    struct rb_objset v = {.size_bytes = hdr[2], .shared = true};
    uint64_t bytes = hdr[1] + hdr[0] * (sizeof *v.rel_off + sizeof *v.sizes) + blocks(hdr[0]) * sizeof *v.block_off;
    char *base = NULL;
    MPI_Aint got;
    int unit;
    /* The window's errors return here (a window's default handler aborts the job). */
    MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    rc = MPI_Win_allocate_shared(leaders != MPI_COMM_NULL ? (MPI_Aint)bytes + 8 : 0, 8, MPI_INFO_NULL, node, &base,
                                 &v.win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_shared_query(v.win, 0, &got, &unit, &base);
    if (any_bad(rc != MPI_SUCCESS, comm)) {
        MPI_Comm_free(&node);
        if (leaders != MPI_COMM_NULL)
            MPI_Comm_free(&leaders);
        return -ENOMEM;
    }
    window_view(&v, base, hdr[0], hdr[1]);
    MPI_Win_fence(0, v.win);
    if (rank == 0)
        copy_in(&v, s);
    rc = leaders != MPI_COMM_NULL ? move_set(&v, 0, -1, rank == 0, leaders) : 0;
    MPI_Win_fence(0, v.win); /* the host's first rank has written it: the others may read */
    MPI_Comm_free(&node);
    if (leaders != MPI_COMM_NULL)
        MPI_Comm_free(&leaders);
    *s = v;
    return any_bad(rc != 0, comm) ? -EIO : 0;
}

void rb_objset_unshare(struct rb_objset *s)
{
    int done = 0;
    MPI_Finalized(&done);
    if (s->shared && !done)
        MPI_Win_free(&s->win);
    s->shared = false;
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
