/*
 * Recursive doubling and Rabenseifner's recursive halving/doubling (Thakur,
 * Rabenseifner & Gropp, "Optimization of Collective Communication Operations
 * in MPICH", 2005), for any number of ranks.
 */
#include <string.h>

#include "algo_int.h"

/*
 * Non-powers of two: with p2 the largest power of two <= n and rem = n - p2,
 * the odd virtual ranks below 2 rem are "extras" that hand their data to the
 * even neighbour and take part only at the start and the end. Survivors are
 * renumbered 0..p2-1 ("groups"); group g stands for virtual ranks
 * [first(g), first(g + 1)): two for g < rem, one after.
 */
struct fold {
    int n, root, p2, rem, vr, group; /* group -1 for an extra */
};

static void fold_init(struct fold *f, const struct rb_coll_comm *c, int root)
{
    f->n = c->size;
    f->root = root;
    f->p2 = 1;
    while (f->p2 * 2 <= f->n)
        f->p2 *= 2;
    f->rem = f->n - f->p2;
    f->vr = (c->rank - root + f->n) % f->n;
    if (f->vr < 2 * f->rem)
        f->group = (f->vr & 1) ? -1 : f->vr / 2;
    else
        f->group = f->vr - f->rem;
}

/* First virtual rank of group g (g = p2 gives n). */
static int first_vr(const struct fold *f, int g)
{
    return g < f->rem ? 2 * g : g + f->rem;
}

/* Rank in the communicator of virtual rank vr. */
static int real(const struct fold *f, int vr)
{
    return (vr + f->root) % f->n;
}

/* Element range [lo, hi) of groups [g0, g1). */
static void groups_range(const struct fold *f, const size_t *off, int g0, int g1, size_t *lo, size_t *hi)
{
    *lo = off[first_vr(f, g0)];
    *hi = off[first_vr(f, g1)];
}

static void send_bytes(const void *buf, size_t bytes, int to, const struct rb_coll_comm *c)
{
    RB_MPI_CHECK(MPI_Send(buf, (int)bytes, MPI_BYTE, to, RB_TAG_RHD, c->comm));
}

static void recv_bytes(void *buf, size_t bytes, int from, const struct rb_coll_comm *c)
{
    RB_MPI_CHECK(MPI_Recv(buf, (int)bytes, MPI_BYTE, from, RB_TAG_RHD, c->comm, MPI_STATUS_IGNORE));
}

static void exchange(const void *sbuf, size_t sbytes, void *rbuf, size_t rbytes, int peer,
                     const struct rb_coll_comm *c)
{
    RB_MPI_CHECK(MPI_Sendrecv(sbuf, (int)sbytes, MPI_BYTE, peer, RB_TAG_RHD, rbuf, (int)rbytes, MPI_BYTE,
                              peer, RB_TAG_RHD, c->comm, MPI_STATUS_IGNORE));
}

/*
 * Extras send their whole input to the even neighbour, which reduces it into
 * work. Returns the vector that holds this rank's current values: work after
 * a reduction, in otherwise.
 */
static const void *fold_reduce(const struct rb_coll_args *a, const struct rb_coll_comm *c,
                               const struct fold *f, const void *in, void *work, size_t count, void *tmp)
{
    if (f->vr >= 2 * f->rem)
        return in;
    if (f->group < 0) {
        send_bytes(in, count * a->type_bytes, real(f, f->vr - 1), c);
        return in;
    }
    recv_bytes(tmp, count * a->type_bytes, real(f, f->vr + 1), c);
    rb_coll_data_reduce(work, in, tmp, count, a->type, a->op);
    return work;
}

/*
 * Recursive halving among the groups: each step keeps half of the current
 * range, sends the other half to the partner and reduces the partner's copy
 * of the kept half. Group g ends with its range fully reduced in work.
 */
static void halving(const struct rb_coll_args *a, const struct rb_coll_comm *c, const struct fold *f,
                    const void *cur, void *work, const size_t *off, void *tmp)
{
    int g0 = 0;
    for (int mask = f->p2 / 2; mask >= 1; mask /= 2) {
        int peer_group = f->group ^ mask, keep0, send0;
        if (f->group < peer_group) {
            keep0 = g0;
            send0 = g0 + mask;
        } else {
            keep0 = g0 + mask;
            send0 = g0;
        }
        size_t klo, khi, slo, shi;
        groups_range(f, off, keep0, keep0 + mask, &klo, &khi);
        groups_range(f, off, send0, send0 + mask, &slo, &shi);
        exchange(rb_algo_at(a, cur, slo), (shi - slo) * a->type_bytes, tmp, (khi - klo) * a->type_bytes,
                 real(f, first_vr(f, peer_group)), c);
        rb_coll_data_reduce(rb_algo_at(a, work, klo), rb_algo_at(a, cur, klo), tmp, khi - klo, a->type, a->op);
        cur = work;
        g0 = keep0;
    }
    if (cur != work) { /* one group only: nothing was reduced */
        size_t lo, hi;
        groups_range(f, off, f->group, f->group + 1, &lo, &hi);
        memmove(rb_algo_at(a, work, lo), rb_algo_at(a, cur, lo), (hi - lo) * a->type_bytes);
    }
}

/* Recursive doubling among the groups: group g's range in work grows until it is the whole vector. */
static void doubling(const struct rb_coll_args *a, const struct rb_coll_comm *c, const struct fold *f,
                     void *work, const size_t *off)
{
    for (int mask = 1; mask < f->p2; mask *= 2) {
        int peer_group = f->group ^ mask;
        int mine0 = f->group & ~(mask - 1), theirs0 = peer_group & ~(mask - 1);
        size_t mlo, mhi, tlo, thi;
        groups_range(f, off, mine0, mine0 + mask, &mlo, &mhi);
        groups_range(f, off, theirs0, theirs0 + mask, &tlo, &thi);
        exchange(rb_algo_at(a, work, mlo), (mhi - mlo) * a->type_bytes, rb_algo_at(a, work, tlo),
                 (thi - tlo) * a->type_bytes, real(f, first_vr(f, peer_group)), c);
    }
}

/* Survivors give their extra the whole vector. */
static void unfold_full(const struct rb_coll_args *a, const struct rb_coll_comm *c, const struct fold *f,
                        void *work, size_t count)
{
    if (f->vr >= 2 * f->rem)
        return;
    if (f->group < 0)
        recv_bytes(work, count * a->type_bytes, real(f, f->vr - 1), c);
    else
        send_bytes(work, count * a->type_bytes, real(f, f->vr + 1), c);
}

int rb_rd_allreduce(const struct rb_coll_args *a, const struct rb_coll_comm *c, const void *in,
                    void *work, size_t count, void *tmp)
{
    struct fold f;
    fold_init(&f, c, 0);
    const void *cur = fold_reduce(a, c, &f, in, work, count, tmp);
    if (f.group >= 0) {
        for (int mask = 1; mask < f.p2; mask *= 2) {
            exchange(cur, count * a->type_bytes, tmp, count * a->type_bytes,
                     real(&f, first_vr(&f, f.group ^ mask)), c);
            rb_coll_data_reduce(work, cur, tmp, count, a->type, a->op);
            cur = work;
        }
        if (cur != work)
            memmove(work, cur, count * a->type_bytes);
    }
    unfold_full(a, c, &f, work, count);
    return 0;
}

int rb_rhd_allreduce(const struct rb_coll_args *a, const struct rb_coll_comm *c, const void *in,
                     void *work, size_t count, void *tmp)
{
    size_t off[c->size + 1];
    struct fold f;
    rb_algo_split(count, c->size, off);
    fold_init(&f, c, 0);
    const void *cur = fold_reduce(a, c, &f, in, work, count, tmp);
    if (f.group >= 0) {
        halving(a, c, &f, cur, work, off, tmp);
        doubling(a, c, &f, work, off);
    }
    unfold_full(a, c, &f, work, count);
    return 0;
}

int rb_rhd_reduce_scatter(const struct rb_coll_args *a, const struct rb_coll_comm *c, const void *in,
                          void *work, const size_t *off, void *tmp)
{
    struct fold f;
    fold_init(&f, c, 0);
    const void *cur = fold_reduce(a, c, &f, in, work, off[c->size], tmp);
    if (f.group >= 0)
        halving(a, c, &f, cur, work, off, tmp);
    /* A survivor that stands for two ranks hands the extra its block. */
    if (f.vr < 2 * f.rem) {
        int ex = f.group < 0 ? f.vr : f.vr + 1;
        void *blk = rb_algo_at(a, work, off[ex]);
        if (f.group < 0)
            recv_bytes(blk, rb_algo_block_bytes(a, off, ex), real(&f, f.vr - 1), c);
        else
            send_bytes(blk, rb_algo_block_bytes(a, off, ex), real(&f, f.vr + 1), c);
    }
    return 0;
}

int rb_rd_allgather(const struct rb_coll_args *a, const struct rb_coll_comm *c, void *work,
                    const size_t *off)
{
    struct fold f;
    fold_init(&f, c, 0);
    /* Extras first hand their block to the survivor that stands for them. */
    if (f.vr < 2 * f.rem) {
        int ex = f.group < 0 ? f.vr : f.vr + 1;
        void *blk = rb_algo_at(a, work, off[ex]);
        if (f.group < 0)
            send_bytes(blk, rb_algo_block_bytes(a, off, ex), real(&f, f.vr - 1), c);
        else
            recv_bytes(blk, rb_algo_block_bytes(a, off, ex), real(&f, f.vr + 1), c);
    }
    if (f.group >= 0)
        doubling(a, c, &f, work, off);
    unfold_full(a, c, &f, work, off[c->size]);
    return 0;
}

int rb_rhd_bcast(const struct rb_coll_args *a, const struct rb_coll_comm *c, void *buf, size_t count,
                 int root)
{
    size_t off[c->size + 1];
    struct fold f;
    rb_algo_split(count, c->size, off);
    fold_init(&f, c, root);
    if (f.group >= 0) {
        /* Binomial scatter from group 0 (the root): group g receives groups [g, g + lowest bit of g). */
        for (int mask = f.p2 / 2; mask >= 1; mask /= 2) {
            size_t lo, hi;
            if (f.group % (2 * mask) == 0) {
                groups_range(&f, off, f.group + mask, f.group + 2 * mask, &lo, &hi);
                send_bytes(rb_algo_at(a, buf, lo), (hi - lo) * a->type_bytes,
                           real(&f, first_vr(&f, f.group + mask)), c);
            } else if (f.group % (2 * mask) == mask) {
                groups_range(&f, off, f.group, f.group + mask, &lo, &hi);
                recv_bytes(rb_algo_at(a, buf, lo), (hi - lo) * a->type_bytes,
                           real(&f, first_vr(&f, f.group - mask)), c);
            }
        }
        doubling(a, c, &f, buf, off);
    }
    unfold_full(a, c, &f, buf, count);
    return 0;
}

int rb_rhd_reduce(const struct rb_coll_args *a, const struct rb_coll_comm *c, const void *in, void *work,
                  size_t count, int root, void *tmp)
{
    size_t off[c->size + 1];
    struct fold f;
    rb_algo_split(count, c->size, off);
    fold_init(&f, c, root);
    const void *cur = fold_reduce(a, c, &f, in, work, count, tmp);
    if (f.group < 0)
        return 0;
    halving(a, c, &f, cur, work, off, tmp);
    /* Binomial gather to group 0: group g collects groups [g, g + 2 mask) before handing them down. */
    for (int mask = 1; mask < f.p2; mask *= 2) {
        size_t lo, hi;
        if (f.group & mask) {
            groups_range(&f, off, f.group, f.group + mask, &lo, &hi);
            send_bytes(rb_algo_at(a, work, lo), (hi - lo) * a->type_bytes,
                       real(&f, first_vr(&f, f.group - mask)), c);
            break;
        }
        groups_range(&f, off, f.group + mask, f.group + 2 * mask, &lo, &hi);
        recv_bytes(rb_algo_at(a, work, lo), (hi - lo) * a->type_bytes, real(&f, first_vr(&f, f.group + mask)),
                   c);
    }
    return 0;
}
