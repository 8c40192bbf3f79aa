/* All-to-all of uneven sizes, given every pair's bytes: the MPI library's, pairwise exchange, and the PXN relay over rails. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "algo_int.h"

/* Offsets of rank me's blocks: to each destination (row me) or from each source (column me), in rank order. */
static void row_offsets(const size_t *m, int n, int me, size_t *off)
{
    off[0] = 0;
    for (int j = 0; j < n; j++)
        off[j + 1] = off[j] + m[(size_t)me * n + j];
}

static void col_offsets(const size_t *m, int n, int me, size_t *off)
{
    off[0] = 0;
    for (int i = 0; i < n; i++)
        off[i + 1] = off[i] + m[(size_t)i * n + me];
}

/* MPI wants int counts and displacements; -EOVERFLOW when a total does not fit. */
static int to_int(const size_t *off, int n, int *cnt, int *disp)
{
    if (off[n] > INT_MAX)
        return -EOVERFLOW;
    for (int j = 0; j < n; j++) {
        cnt[j] = (int)(off[j + 1] - off[j]);
        disp[j] = (int)off[j];
    }
    return 0;
}

int rb_a2av_mpi(const struct rb_coll_args *a, const size_t *m, const void *send, void *recv)
{
    const int n = a->world.size, me = a->world.rank;
    size_t so[n + 1], ro[n + 1];
    int sc[n], sd[n], rc[n], rd[n];
    row_offsets(m, n, me, so);
    col_offsets(m, n, me, ro);
    if (to_int(so, n, sc, sd) || to_int(ro, n, rc, rd))
        return -EOVERFLOW;
    RB_MPI_CHECK(MPI_Alltoallv(send, sc, sd, MPI_BYTE, recv, rc, rd, MPI_BYTE, a->world.comm));
    return 0;
}

int rb_a2av_pairwise(const struct rb_coll_args *a, const size_t *m, const void *send, void *recv, uint64_t *got_from)
{
    const int n = a->world.size, r = a->world.rank;
    size_t so[n + 1], ro[n + 1];
    row_offsets(m, n, r, so);
    col_offsets(m, n, r, ro);
    if (so[n] > INT_MAX || ro[n] > INT_MAX)
        return -EOVERFLOW;
    memcpy((char *)recv + ro[r], (const char *)send + so[r], m[(size_t)r * n + r]);
    if (got_from)
        got_from[r] = m[(size_t)r * n + r];
    for (int k = 1; k < n; k++) {
        int to = (r + k) % n, from = (r - k + n) % n, got = 0;
        MPI_Status st;
        RB_MPI_CHECK(MPI_Sendrecv((const char *)send + so[to], (int)(so[to + 1] - so[to]), MPI_BYTE, to, RB_TAG_A2A,
                                  (char *)recv + ro[from], (int)(ro[from + 1] - ro[from]), MPI_BYTE, from, RB_TAG_A2A,
                                  a->world.comm, &st));
        RB_MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &got));
        if (got_from)
            got_from[from] = (uint64_t)got;
    }
    return 0;
}

/* A buffer that only grows, kept between calls so that the timed loop allocates nothing (one thread per rank). */
static void *grow(int which, size_t bytes)
{
    static void *buf[3];
    static size_t cap[3];
    if (bytes > cap[which]) {
        void *p = realloc(buf[which], bytes);
        if (!p)
            return NULL;
        memset(p, 0, bytes); /* fault the pages in now, not inside a later timed call */
        buf[which] = p;
        cap[which] = bytes;
    }
    return buf[which] ? buf[which] : (buf[which] = malloc(1));
}

/*
 * PXN (NCCL's PCI x NVLink relay) on a rail-optimised fabric: a block from
 * (node a, local i) to (node b, local j) first moves inside node a to
 * (a, j), the local peer whose NIC sits on the destination's rail, and then
 * over rail j to (b, j). Phase 1 is an alltoallv inside the node, phase 2
 * one alltoallv per rail, so no byte crosses rails through the spine.
 * Node ranks are local indices and rail ranks node positions (the
 * harness's split); a->world_of names the world rank of each (b, j).
 */
int rb_a2av_pxn(const struct rb_coll_args *a, const size_t *m, const void *send, void *recv)
{
    const int n = a->world.size, L = a->node.size, G = a->rail.size, me = a->world.rank;
    const int i_me = a->node.rank, a_me = a->rail.rank;
    const int *W = a->world_of;
    if (!W || L * G != n)
        return -EINVAL;
    size_t so[n + 1], ro[n + 1];
    row_offsets(m, n, me, so);
    col_offsets(m, n, me, ro);
    /* Phase 1: to local j, my blocks for (b, j), b in node order. */
    size_t p1s[L + 1], p1r[L + 1];
    p1s[0] = p1r[0] = 0;
    for (int j = 0; j < L; j++) {
        size_t s = 0, r = 0;
        for (int b = 0; b < G; b++) {
            s += m[(size_t)me * n + W[b * L + j]];
            r += m[(size_t)W[a_me * L + j] * n + W[b * L + i_me]];
        }
        p1s[j + 1] = p1s[j] + s;
        p1r[j + 1] = p1r[j] + r;
    }
    /* Phase 2: to (b, my local index), what every local i sent me for it, i in order. */
    size_t p2s[G + 1], p2r[G + 1];
    p2s[0] = p2r[0] = 0;
    for (int b = 0; b < G; b++) {
        size_t s = 0, r = 0;
        for (int i = 0; i < L; i++) {
            s += m[(size_t)W[a_me * L + i] * n + W[b * L + i_me]];
            r += m[(size_t)W[b * L + i] * n + me];
        }
        p2s[b + 1] = p2s[b] + s;
        p2r[b + 1] = p2r[b] + r;
    }
    char *pack = grow(0, p1s[L] + 1), *mid = grow(1, p1r[L] + 1), *out = grow(2, p2r[G] + 1);
    if (!pack || !mid || !out)
        return -ENOMEM;
    for (int j = 0; j < L; j++) {
        size_t at = p1s[j];
        for (int b = 0; b < G; b++) {
            int d = W[b * L + j];
            memcpy(pack + at, (const char *)send + so[d], m[(size_t)me * n + d]);
            at += m[(size_t)me * n + d];
        }
    }
    int c1s[L], d1s[L], c1r[L], d1r[L];
    if (to_int(p1s, L, c1s, d1s) || to_int(p1r, L, c1r, d1r))
        return -EOVERFLOW;
    RB_MPI_CHECK(MPI_Alltoallv(pack, c1s, d1s, MPI_BYTE, mid, c1r, d1r, MPI_BYTE, a->node.comm));
    /* mid holds, per local i, its blocks for (b, i_me) in b order; phase 2 wants them per b, in i order. */
    char *p2 = grow(0, (p2s[G] > p1s[L] ? p2s[G] : p1s[L]) + 1); /* phase 1's send buffer is free again */
    if (!p2)
        return -ENOMEM;
    size_t fill[G];
    for (int b = 0; b < G; b++)
        fill[b] = p2s[b];
    for (int i = 0; i < L; i++) {
        size_t at = p1r[i];
        for (int b = 0; b < G; b++) {
            size_t bytes = m[(size_t)W[a_me * L + i] * n + W[b * L + i_me]];
            memcpy(p2 + fill[b], mid + at, bytes);
            fill[b] += bytes;
            at += bytes;
        }
    }
    int c2s[G], d2s[G], c2r[G], d2r[G];
    if (to_int(p2s, G, c2s, d2s) || to_int(p2r, G, c2r, d2r))
        return -EOVERFLOW;
    RB_MPI_CHECK(MPI_Alltoallv(p2, c2s, d2s, MPI_BYTE, out, c2r, d2r, MPI_BYTE, a->rail.comm));
    /* out holds, per node b, the blocks of (b, i) for i in order: put each at its source's place. */
    for (int b = 0; b < G; b++) {
        size_t at = p2r[b];
        for (int i = 0; i < L; i++) {
            int s = W[b * L + i];
            size_t bytes = m[(size_t)s * n + me];
            memcpy((char *)recv + ro[s], out + at, bytes);
            at += bytes;
        }
    }
    return 0;
}
