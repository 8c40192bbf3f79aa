/* railbench coll's harness for one table: warm-up, timing, checks, per-rank times combined (nccl-tests' BenchTime). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/clock.h"
#include "run_int.h"

static void *alloc_touched(struct rb_coll_run *R, size_t bytes)
{
    size_t rounded = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (!p)
        rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "cannot allocate %zu bytes for buffers (lower -e)", bytes);
    memset(p, 0, rounded ? rounded : 64); /* fault the pages in before anything is timed */
    return p;
}

void rb_coll_run_buffers(struct rb_coll_run *R)
{
    R->buf_bytes = R->o->maxbytes + 8 * R->o->unalign; /* -u: room for the shift of the largest type */
    R->scratch_bytes = RB_COLL_SCRATCH_BYTES(R->buf_bytes, R->o->chunk);
    R->sendbuf = alloc_touched(R, R->buf_bytes);
    R->recvbuf = alloc_touched(R, R->buf_bytes);
    R->scratch = alloc_touched(R, R->scratch_bytes);
    if (R->h->rank == 0) {
        R->times = calloc((size_t)R->h->size, sizeof *R->times);
        if (!R->times)
            rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "out of memory");
    }
    if (R->o->per_iter_timing && !(R->iter_us = calloc(R->o->iters, sizeof *R->iter_us)))
        rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "out of memory");
}

/* ---- one row ---- */

/* A blocking MPI call between operations, under the watchdog as operations are (-T, a signal). */
#define WATCHED(call)                                                                                             \
    do {                                                                                                          \
        rb_coll_watchdog_arm();                                                                                   \
        RB_MPI_CHECK(call);                                                                                       \
        rb_coll_watchdog_disarm();                                                                                \
    } while (0)

/* How often ranks agree on a signal inside a half, in timed operations' time (mpirun kills 1 s after SIGTERM). */
#define STOP_CHECK_NS (100 * RB_NS_PER_MS)

/*
 * At a safe point (every rank between operations): true on every rank when
 * any rank was signalled, and then the run is marked interrupted at the row
 * (row_t0: when it started; 0: after it). flags[1] (may be NULL) is maxed over ranks too.
 * Collective.
 */
static bool agree_stop(struct rb_coll_run *R, int *also, uint64_t row_t0)
{
    int f[2] = {rb_harness_signalled() ? *rb_harness_signal_flag() : 0, also ? *also : 0};
    rb_harness_agree(R->h, f, 2, R->o->timeout_s > 0); /* -T bounds the wait for a rank, as it bounds operations */
    if (also)
        *also = f[1];
    if (!f[0])
        return false;
    rb_harness_note_interrupted(R->h, f[0], row_t0 ? (double)(rb_clock_ns() - row_t0) / 1e9 : -1);
    R->stop = true;
    return true;
}

static void call(struct rb_coll_run *R, const struct rb_coll_test *t, enum rb_coll_algo algo,
                 const struct rb_coll_args *a)
{
    rb_coll_watchdog_arm();
    int rc = t->run[algo](a);
    rb_coll_watchdog_disarm();
    if (rc != 0)
        rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "%s with %s failed: %s", t->name, rb_coll_algo_name(algo),
                         strerror(-rc));
}

/* Points send and recv at the buffers, in place per nccl-tests' offsets. */
static void point(struct rb_coll_run *R, struct rb_coll_args *a, const struct rb_coll_counts *cn, bool in_place)
{
    size_t r = (size_t)a->world.rank, tb = a->type_bytes, shift = R->o->unalign * tb; /* -u */
    a->in_place = in_place;
    if (in_place) {
        a->send = R->recvbuf + shift + cn->send_inplace_off * r * tb;
        a->recv = R->recvbuf + shift + cn->recv_inplace_off * r * tb;
    } else {
        a->send = R->sendbuf + shift;
        a->recv = R->recvbuf + shift;
    }
}

/*
 * The time of one operation on this rank, in microseconds: -n iterations
 * of -m back-to-back operations, with -z's barriers (nccl-tests' BenchTime:
 * -z 1 a barrier after each operation, inside the time; -z 3 one after each
 * iteration, outside it). With iter_us (-I), each iteration's time per
 * operation too; they add up to the total, so their mean is the result.
 */
static double time_ops(struct rb_coll_run *R, const struct rb_coll_test *t, enum rb_coll_algo algo,
                       struct rb_coll_args *a, double *iter_us, uint64_t check_every, uint64_t row_t0, uint64_t *done)
{
    const struct rb_coll_opts *o = R->o;
    MPI_Comm comm = R->h->comm;
    uint64_t total_ns = 0, start = rb_clock_ns(), i;
    for (i = 0; i < o->iters; i++) {
        for (uint64_t m = 0; m < o->agg_iters; m++) {
            call(R, t, algo, a);
            if (o->blocking == 1)
                RB_MPI_CHECK(MPI_Barrier(comm));
        }
        uint64_t end = rb_clock_ns();
        total_ns += end - start;
        if (iter_us)
            iter_us[i] = (double)(end - start) / 1e3 / (double)o->agg_iters;
        if (o->blocking == 3) {
            RB_MPI_CHECK(MPI_Barrier(comm));
            end = rb_clock_ns();
        }
        start = end;
        /* A signal ends the half at the same iteration on every rank; the check is outside the time. */
        if (check_every && (i + 1) % check_every == 0 && i + 1 < o->iters) {
            if (agree_stop(R, NULL, row_t0)) {
                i++;
                break;
            }
            start = rb_clock_ns();
        }
    }
    if (done)
        *done = i;
    return i ? (double)total_ns / 1e3 / (double)(i * o->agg_iters) : 0;
}

static void combine_times(struct rb_coll_run *R, const struct rb_coll_test *t, double s_bytes, double mine_us,
                          struct rb_coll_half *res);

/* The row's size: max(send, receive) bytes (nccl-tests' TimeTest), also the S of algbw for every collective. */
static size_t row_bytes(const struct rb_coll_counts *cn, size_t type_bytes)
{
    return (cn->send > cn->recv ? cn->send : cn->recv) * type_bytes;
}

/*
 * With a collective that counts what arrived (t->received): rank 0 gets
 * res->pair_bytes of its group, n x n, [source][destination], or NULL when
 * the algorithm could not count. Collective.
 */
static void gather_received(struct rb_coll_run *R, const struct rb_coll_test *t, const struct rb_coll_args *a,
                            struct rb_coll_half *res)
{
    const int n = R->rl.world.size; /* rank 0's group */
    uint64_t *mine = calloc((size_t)n + 1, sizeof *mine), *all = NULL;
    if (!mine || (R->rl.world.rank == 0 && !(all = calloc((size_t)n * (n + 1), sizeof *all))))
        rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "out of memory");
    mine[0] = t->received(a, mine + 1);
    WATCHED(MPI_Gather(mine, n + 1, MPI_UINT64_T, all, n + 1, MPI_UINT64_T, 0, R->rl.world.comm));
    free(mine);
    if (R->h->rank != 0) {
        free(all);
        return;
    }
    bool known = true;
    for (int d = 0; d < n; d++)
        known = known && all[(size_t)d * (n + 1)];
    if (known && (res->pair_bytes = malloc((size_t)n * n * sizeof *res->pair_bytes)))
        for (int d = 0; d < n; d++)
            for (int s = 0; s < n; s++)
                res->pair_bytes[(size_t)s * n + d] = all[(size_t)d * (n + 1) + 1 + s];
    free(all);
}

/*
 * Times -n back-to-back operations after one untimed one (nccl-tests'
 * BenchTime), combines the per-rank times per -a, and checks -c fresh
 * runs, summing wrong elements over ranks.
 */
static void run_half(struct rb_coll_run *R, const struct rb_coll_test *t, enum rb_coll_algo algo,
                     struct rb_coll_args *a, const struct rb_coll_counts *cn, bool in_place, struct rb_coll_half *res,
                     uint64_t row_t0)
{
    struct rb_harness *h = R->h;
    point(R, a, cn, in_place);
    t->init(a, 0);
    uint64_t u0 = rb_clock_ns();
    call(R, t, algo, a);
    /* Agreed: a signal before the half, and the slowest rank's untimed operation, which sets how often to check. */
    uint64_t one_us = (rb_clock_ns() - u0) / 1000;
    int slowest_us = one_us > INT32_MAX ? INT32_MAX : (int)one_us;
    res->iters_done = 0;
    if (agree_stop(R, &slowest_us, row_t0))
        return;
    uint64_t per_op_ns = (uint64_t)(slowest_us > 0 ? slowest_us : 1) * 1000 * R->o->agg_iters,
             check_every = STOP_CHECK_NS / per_op_ns ? STOP_CHECK_NS / per_op_ns : 1;
    rb_coll_watchdog_expect(per_op_ns);
    WATCHED(MPI_Barrier(h->comm));
    double mine_us = time_ops(R, t, algo, a, R->iter_us, check_every, row_t0, &res->iters_done);
    if (res->iters_done == 0)
        return;
    combine_times(R, t, (double)row_bytes(cn, a->type_bytes), mine_us, res);
    res->wrong = -1;
    if (R->stop) { /* cut short: its figures cover iters_done iterations; not checked */
        if (h->rank == 0)
            rb_coll_half_figs(res, R->out.ngroups);
        return;
    }
    if (R->iter_us)
        rb_coll_iter_gather(h, R->iter_us, R->o->iters, R->o->per_iter_skip, res);
    if (h->rank == 0)
        rb_coll_half_figs(res, R->out.ngroups);
    for (uint64_t c = 1; c <= R->o->check; c++) {
        t->init(a, c);
        call(R, t, algo, a);
        uint64_t mine = t->check(a, c), all = 0;
        WATCHED(MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, h->comm));
        res->wrong = (long long)all;
        if (all)
            break;
    }
    if (t->received)
        gather_received(R, t, a, res);
}

/* The -a combination of n times: rank 0's (the first), mean, min or max; min, mean and max into the others. */
static double by_average(int average, const double *t, int n, double *mn, double *avg, double *mx)
{
    double sum = 0;
    *mn = *mx = t[0];
    for (int i = 0; i < n; i++) {
        *mn = t[i] < *mn ? t[i] : *mn;
        *mx = t[i] > *mx ? t[i] : *mx;
        sum += t[i];
    }
    *avg = sum / n;
    const double by_a[] = {[RB_COLL_AVG_RANK0] = t[0], [RB_COLL_AVG_MEAN] = *avg, [RB_COLL_AVG_MIN] = *mn,
                           [RB_COLL_AVG_MAX] = *mx};
    return by_a[average];
}

/*
 * Rank 0: the per-rank times of one half (gathered) combined per -a over
 * every rank, as nccl-tests does with split groups too, and its algbw
 * (s_bytes, the row's size: max(send, receive) bytes, which is nccl-tests'
 * S for every collective) and busbw for rank 0's group. With several
 * groups, each group's own figures in res->groups. Collective.
 */
static void combine_times(struct rb_coll_run *R, const struct rb_coll_test *t, double s_bytes, double mine_us,
                          struct rb_coll_half *res)
{
    struct rb_harness *h = R->h;
    const double mine[4] = {mine_us, s_bytes, R->rl.world.size, R->out.group};
    double *all = h->rank == 0 ? malloc(4 * sizeof(double) * (size_t)h->size) : NULL;
    if (h->rank == 0 && !all)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    WATCHED(MPI_Gather(mine, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, h->comm));
    if (h->rank != 0)
        return;
    for (int i = 0; i < h->size; i++)
        R->times[i] = all[4 * i];
    res->time_us = by_average(R->o->average, R->times, h->size, &res->min_us, &res->avg_us, &res->max_us);
    res->cpu_us = R->times[0]; /* -C: nccl-tests prints rank 0's own loop time, not combined */
    res->algbw = rb_coll_algbw_gbps(s_bytes, res->time_us);
    res->busbw = rb_coll_busbw_gbps(t->kind, R->rl.world.size, res->algbw);
    if (R->out.ngroups > 1 && (res->groups = calloc((size_t)R->out.ngroups, sizeof *res->groups))) {
        /* Groups in the order of their first rank; each one's times per -a, its S and its own factor. */
        int ng = 0;
        double *tg = malloc(sizeof(double) * (size_t)h->size);
        for (int i = 0; tg && i < h->size; i++) {
            bool seen = false;
            for (int q = 0; q < i && !seen; q++)
                seen = all[4 * q + 3] == all[4 * i + 3];
            if (seen || ng == R->out.ngroups)
                continue;
            int k = 0;
            for (int j = i; j < h->size; j++)
                if (all[4 * j + 3] == all[4 * i + 3])
                    tg[k++] = all[4 * j];
            struct rb_coll_group_fig *g = &res->groups[ng++];
            double mn, avg, mx;
            g->group = (int)all[4 * i + 3];
            g->ranks = (int)all[4 * i + 2];
            g->time_us = by_average(R->o->average, tg, k, &mn, &avg, &mx);
            g->algbw = rb_coll_algbw_gbps(all[4 * i + 1], g->time_us);
            g->busbw = rb_coll_busbw_gbps(t->kind, g->ranks, g->algbw);
        }
        free(tg);
    }
    free(all);
}

/* The args shared by every call of one (collective, type, op, root). */
void rb_coll_run_args(struct rb_coll_run *R, struct rb_coll_args *a, enum rb_coll_dtype type, enum rb_coll_redop op,
                     int root)
{
    memset(a, 0, sizeof *a);
    a->world = R->rl.world;
    a->node = R->rl.node;
    a->rail = R->rl.rail;
    a->world_of = R->rl.hier_ok ? R->rl.world_of : NULL;
    a->type = type;
    a->type_bytes = rb_coll_dtype_bytes(type);
    a->op = op;
    a->root = root;
    a->scratch = R->scratch;
    a->scratch_bytes = R->scratch_bytes;
    a->chunk_bytes = R->o->chunk;
    a->mpi_type = rb_coll_mpi_type(type);
    a->mpi_op = rb_coll_mpi_op(op, type);
    a->a2av = &R->a2av;
}

size_t rb_coll_warmup_sizes(uint64_t minbytes, uint64_t maxbytes, uint64_t *out, size_t cap)
{
    size_t n = 0;
    for (uint64_t size = minbytes; size <= maxbytes && n < cap; size = size ? 2 * size : 1) {
        out[n++] = size;
        if (size > UINT64_MAX / 2)
            break;
    }
    return n;
}

/* -w: -w operations at each of rb_coll_warmup_sizes' sizes. */
static void warm_up(struct rb_coll_run *R, const struct rb_coll_test *t, enum rb_coll_algo algo, struct rb_coll_args *a)
{
    uint64_t sizes[66];
    size_t n = R->o->warmup ? rb_coll_warmup_sizes(R->o->minbytes, R->o->maxbytes, sizes, 66) : 0;
    for (size_t s = 0; s < n; s++) {
        struct rb_coll_counts cn;
        t->counts(a, sizes[s] / a->type_bytes, a->type_bytes, R->rl.world.size, R->o->count_rule == RB_COLL_COUNT_LEGACY,
                  &cn);
        a->count = cn.param;
        point(R, a, &cn, false);
        t->init(a, 0);
        for (uint64_t i = 0; i < R->o->warmup; i++)
            call(R, t, algo, a);
    }
}

/* One row: both halves of one size, then its output; the phase is named by what varies (and -N's cycle). */
static void run_size(struct rb_coll_run *R, const struct rb_coll_test *t, enum rb_coll_algo algo,
                     struct rb_coll_args *a, uint64_t size, bool multi, uint64_t cycle)
{
    const struct rb_coll_opts *o = R->o;
    struct rb_coll_counts cn;
    t->counts(a, size / a->type_bytes, a->type_bytes, R->rl.world.size, o->count_rule == RB_COLL_COUNT_LEGACY, &cn);
    a->count = cn.param;
    struct rb_coll_row w = {.kind = t->kind, .algo = algo, .type = a->type, .op = a->op, .root = a->root,
                            .size_bytes = row_bytes(&cn, a->type_bytes), .count = cn.param};
    char name[192], rootpart[24] = "", cyclepart[32] = "";
    if (rb_coll_kind_def(t->kind)->rooted && R->root_all)
        snprintf(rootpart, sizeof rootpart, "/root%d", a->root);
    if (o->run_cycles != 1)
        snprintf(cyclepart, sizeof cyclepart, "/cycle%llu", (unsigned long long)cycle);
    if (multi)
        snprintf(name, sizeof name, "%s/%s/%s/%s%s/%zu%s", t->name, rb_coll_algo_name(algo),
                 rb_coll_dtype_name(a->type), rb_coll_redop_name(a->op), rootpart, w.size_bytes, cyclepart);
    else
        snprintf(name, sizeof name, "%s/%s%s/%zu%s", t->name, rb_coll_algo_name(algo), rootpart, w.size_bytes,
                 cyclepart);
    snprintf(R->h->phase_now, sizeof R->h->phase_now, "%.63s", name); /* where a signal finds the run */
    const uint64_t row_t0 = rb_clock_ns();
    run_half(R, t, algo, a, &cn, false, &w.half[0], row_t0);
    if (!R->stop)
        run_half(R, t, algo, a, &cn, true, &w.half[1], row_t0);
    if (R->h->rank != 0)
        return;
    if (R->stop)
        rb_coll_out_partial(&R->out, &w, name);
    else
        rb_coll_out_row(&R->out, &w, name);
}

/* The size after *size in the sweep (-f's factor or -i's step); false past -e. */
bool rb_coll_run_next_size(const struct rb_coll_opts *o, uint64_t *size)
{
    if (o->stepfactor > 1) {
        if (*size > o->maxbytes / o->stepfactor)
            return false;
        *size *= o->stepfactor;
    } else {
        if (o->maxbytes - *size < o->stepbytes)
            return false;
        *size += o->stepbytes;
    }
    return true;
}

/* The sweep from -b to -e, -N times (0: until a signal), after the warm-up. */
static void run_sizes(struct rb_coll_run *R, const struct rb_coll_test *t, enum rb_coll_algo algo,
                      enum rb_coll_dtype type, enum rb_coll_redop op, int root, bool multi)
{
    struct rb_coll_args a;
    rb_coll_run_args(R, &a, type, op, root);
    warm_up(R, t, algo, &a);
    const struct rb_coll_opts *o = R->o;
    for (uint64_t cycle = 1; (o->run_cycles == 0 || cycle <= o->run_cycles) && !R->stop; cycle++)
        for (uint64_t size = o->minbytes; size <= o->maxbytes && !R->stop;) {
            run_size(R, t, algo, &a, size, multi, cycle);
            rb_harness_metrics_update(R->h); /* collective: every rank, after every size */
            if (agree_stop(R, NULL, 0))
                break;
            if (!rb_coll_run_next_size(o, &size))
                break;
        }
}

void rb_coll_run_table(struct rb_coll_run *R, const struct rb_coll_test *t, enum rb_coll_algo algo)
{
    if (!t->run[algo]) {
        rb_coll_out_not_applicable(&R->out, t->name, algo, t->not_applicable[algo]);
        return;
    }
    if (algo == RB_COLL_ALGO_HIER && !R->rl.hier_ok) {
        rb_coll_out_not_applicable(&R->out, t->name, algo, R->rl.hier_why);
        return;
    }
    rb_coll_out_table_header(&R->out, t->name, algo);
    const struct rb_coll_kind_def *kd = rb_coll_kind_def(t->kind);
    int nops = kd->reduces ? R->nops : 1, r0 = R->root_all ? 0 : R->root,
        r1 = kd->rooted ? (R->root_all ? R->rl.world.size - 1 : R->root) : r0;
    bool multi = R->ntypes > 1 || nops > 1;
    for (int ti = 0; ti < R->ntypes && !R->stop; ti++)
        for (int oi = 0; oi < nops && !R->stop; oi++)
            for (int root = r0; root <= r1 && !R->stop; root++)
                run_sizes(R, t, algo, R->types[ti], kd->reduces ? R->ops[oi] : RB_COLL_NONE, kd->rooted ? root : -1,
                          multi);
}

/* Rank 0: the busbw (GB/s) of one size, out-of-place, timed as the table times it. Collective. */
double rb_coll_run_busbw(struct rb_coll_run *R, const struct rb_coll_test *t, enum rb_coll_algo algo,
                         struct rb_coll_args *a, uint64_t size)
{
    struct rb_coll_counts cn;
    t->counts(a, size / a->type_bytes, a->type_bytes, R->rl.world.size, R->o->count_rule == RB_COLL_COUNT_LEGACY, &cn);
    a->count = cn.param;
    point(R, a, &cn, false);
    t->init(a, 0);
    call(R, t, algo, a);
    RB_MPI_CHECK(MPI_Barrier(R->h->comm));
    struct rb_coll_half res = {0};
    combine_times(R, t, (double)row_bytes(&cn, a->type_bytes), time_ops(R, t, algo, a, NULL, 0, 0, NULL), &res);
    return res.busbw;
}
