/* railbench coll: nccl-tests-compatible collective benchmark with MPI's own and rail-aware algorithms side by side. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll_int.h"
#include "railbench/bgload.h"
#include "railbench/clock.h"
#include "railbench/command.h"
#include "railbench/units.h"

/* -o and -d choices, in nccl-tests' order; the aliases of -d map to the type named by alias_type. */
#define OP_CHOICES "sum|prod|max|min|avg|all"
#define DTYPE_CHOICES "int8|uint8|int32|uint32|int64|uint64|half|float|double|bfloat16|float16|float32|float64|all"
static const enum rb_coll_dtype alias_type[] = {RB_COLL_HALF, RB_COLL_FLOAT, RB_COLL_DOUBLE};
#define DTYPE_ALL (RB_COLL_DTYPES + 3)

/* coll --background: a GET load on every rank during a second pass of the sweep. */
struct coll_bg {
    const char *url;
    uint64_t objects, threads, inflight, alone_ns, timeout_ns;
    double rate;
};

struct run {
    struct rb_harness *h;
    const struct rb_coll_opts *o;
    const char *which; /* the collective argument */
    const struct rb_coll_test *tests[RB_COLL_KINDS];
    enum rb_coll_kind kinds[RB_COLL_KINDS];
    int ntests;
    enum rb_coll_algo algos[RB_COLL_ALGOS];
    int nalgos;
    enum rb_coll_dtype types[RB_COLL_DTYPES];
    int ntypes;
    enum rb_coll_redop ops[RB_COLL_REDOPS];
    int nops;
    int root_all; /* -r all */
    int root;
    struct rb_coll_rails rl; /* this rank's group, node and rail */
    const char *split_expr, *split_mask; /* --split or NCCL_TESTS_SPLIT; NCCL_TESTS_SPLIT_MASK */
    const char *split_desc;              /* how the groups were made, for the output; NULL: no split */
    char *sendbuf, *recvbuf, *scratch;
    size_t buf_bytes, scratch_bytes;
    double *times; /* per-rank times, rank 0 */
    double *iter_us; /* -I: this rank's time per operation of each -n iteration */
    bool stop;
    struct rb_coll_out out;
    const struct coll_bg *bg; /* --background, or NULL */
};

const struct rb_coll_test *rb_coll_test_get(enum rb_coll_kind k)
{
    static const struct rb_coll_test *const all[RB_COLL_KINDS] = {
#define RB_COLL_TEST_ROW(K, name, ...) [RB_COLL_##K] = &rb_coll_##name,
        RB_COLL_KIND_LIST(RB_COLL_TEST_ROW)
#undef RB_COLL_TEST_ROW
    };
    return (unsigned)k < RB_COLL_KINDS ? all[k] : NULL;
}

/* ---- options ---- */

/* Parses --algo: a comma-separated list of names, or "all". Returns 0 or -EINVAL after one line. */
static int parse_algos(const char *s, enum rb_coll_algo *out, int *n)
{
    char buf[256];
    bool seen[RB_COLL_ALGOS] = {false};
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        enum rb_coll_algo a;
        if (strcmp(tok, "all") == 0) {
            for (int i = 0; i < RB_COLL_ALGOS; i++)
                seen[i] = true;
            continue;
        }
        if (rb_coll_algo_parse(tok, &a) != 0) {
            rb_cli_usage_error("--algo: \"%s\" is not an algorithm (use mpi, ring, rd, rhd, tree, hier or all, "
                               "or a comma-separated list)",
                               tok);
            return -EINVAL;
        }
        seen[a] = true;
    }
    for (int i = 0; i < RB_COLL_ALGOS; i++)
        if (seen[i])
            out[(*n)++] = (enum rb_coll_algo)i;
    if (*n == 0) {
        rb_cli_usage_error("--algo: \"%s\" names no algorithm (use e.g. mpi or ring,hier)", s);
        return -EINVAL;
    }
    return 0;
}

/* Parses -r: a rank or "all"; the range is checked once the number of ranks is known. */
static int parse_root(const char *s, int *root, int *all)
{
    *all = strcmp(s, "all") == 0;
    if (*all) {
        *root = 0;
        return 0;
    }
    int64_t v;
    if (rb_parse_i64(s, &v) != 0 || v < 0 || v > INT_MAX) {
        rb_cli_usage_error("--root: \"%s\" is not a rank (use 0 to the number of ranks - 1, or all)", s);
        return -EINVAL;
    }
    *root = (int)v;
    return 0;
}

/* Checks what does not depend on the number of ranks; one line and RB_EXIT_USAGE on a mistake, else 0. */
static int check_opts(const struct rb_coll_opts *o)
{
    char a[32], b[32];
    if (o->minbytes > o->maxbytes) {
        rb_format_size(a, sizeof a, o->minbytes);
        rb_format_size(b, sizeof b, o->maxbytes);
        return rb_cli_usage_error("--minbytes: %s is larger than --maxbytes %s (use -b <= -e)", a, b);
    }
    if (o->maxbytes > INT_MAX) {
        rb_format_size(b, sizeof b, o->maxbytes);
        return rb_cli_usage_error("--maxbytes: %s is too large (at most 2147483647 bytes: MPI counts are int)", b);
    }
    if (o->iters == 0 || o->iters > INT_MAX)
        return rb_cli_usage_error("--iters: %llu is out of range (use 1 or more, e.g. -n 20)",
                                  (unsigned long long)o->iters);
    if (o->stepfactor == 0)
        return rb_cli_usage_error("--stepfactor: 0 is not a factor (use 2 or more, or 1 to step by -i)");
    if (o->stepfactor > 1 && o->minbytes == 0)
        return rb_cli_usage_error("--minbytes: 0 never grows by a factor (use -b 1 or more with -f)");
    if (o->stepfactor <= 1 && o->stepbytes == 0)
        return rb_cli_usage_error("--stepbytes: 0 never reaches --maxbytes (use a size > 0, or -f 2)");
    if (o->chunk == 0 || o->chunk > 64 * RB_MIB)
        return rb_cli_usage_error("--chunk: %llu is out of range (use 1 byte to 64MiB, e.g. 128k)",
                                  (unsigned long long)o->chunk);
    return rb_coll_flags_check(o);
}

/* Creates the -J file without replacing one (like nccl-tests: FILE, then FILE.0, FILE.1, ...). */
static int reserve_json(const char *path, char *used, size_t len)
{
    for (int i = -1; i < 1000; i++) {
        if (i < 0)
            snprintf(used, len, "%s", path);
        else
            snprintf(used, len, "%s.%d", path, i);
        int fd = open(used, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) {
            close(fd);
            return 0;
        }
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

/* ---- communicators ---- */

static void comm_of(MPI_Comm c, struct rb_coll_comm *out)
{
    out->comm = c;
    RB_MPI_CHECK(MPI_Comm_rank(c, &out->rank));
    RB_MPI_CHECK(MPI_Comm_size(c, &out->size));
}

/*
 * Nodes and rails. A node is the ranks of one host (MPI_Comm_split_type
 * SHARED, as the harness found them), or with --ranks-per-node L the ranks
 * r with the same r / L. A rail is the ranks with the same local index on
 * every node: in a rail-optimised cluster, the GPUs whose NIC sits on the
 * same leaf switch.
 */
void rb_coll_rails_place(struct rb_harness *h, uint64_t ranks_per_node, struct rb_coll_rails *r)
{
    memset(r, 0, sizeof *r);
    if (ranks_per_node) {
        int L = (int)ranks_per_node;
        r->node_index = h->rank / L;
        r->local = h->rank % L;
        r->ranks_per_node = L;
    } else {
        r->node_index = h->host_index;
        r->local = h->local_rank;
        r->ranks_per_node = h->local_size;
    }
}

void rb_coll_rails_build(struct rb_harness *h, MPI_Comm group, struct rb_coll_rails *r)
{
    MPI_Comm node, rail;
    RB_MPI_CHECK(MPI_Comm_split(group, r->node_index, h->rank, &node));
    RB_MPI_CHECK(MPI_Comm_split(group, r->local, r->node_index, &rail));
    comm_of(group, &r->world);
    comm_of(node, &r->node);
    comm_of(rail, &r->rail);
    /* Rails need as many ranks of a group on every node. */
    int mm[2] = {r->node.size, -r->node.size};
    RB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_INT, MPI_MAX, h->comm));
    r->hier_ok = mm[0] == -mm[1] && r->node.size * r->rail.size == r->world.size;
    snprintf(r->hier_why, sizeof r->hier_why,
             "nodes hold between %d and %d ranks of a group; rails need the same number on every node "
             "(see --ranks-per-node)",
             -mm[1], mm[0]);
    /* Who sits where: (rail rank = node position, node rank = local index) of every rank. */
    int n = r->world.size, mine[2] = {r->rail.rank, r->node.rank}, *all = malloc(2 * sizeof(int) * (size_t)n);
    r->world_of = malloc(sizeof(int) * (size_t)n);
    if (!all || !r->world_of)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    RB_MPI_CHECK(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, r->world.comm));
    for (int i = 0; i < n && r->hier_ok; i++)
        r->world_of[all[2 * i] * r->node.size + all[2 * i + 1]] = i;
    free(all);
}

void rb_coll_rails_free(struct rb_harness *h, struct rb_coll_rails *r)
{
    if (r->node.comm != MPI_COMM_NULL && r->node.comm)
        RB_MPI_CHECK(MPI_Comm_free(&r->node.comm));
    if (r->rail.comm != MPI_COMM_NULL && r->rail.comm)
        RB_MPI_CHECK(MPI_Comm_free(&r->rail.comm));
    if (r->world.comm && r->world.comm != h->comm)
        RB_MPI_CHECK(MPI_Comm_free(&r->world.comm));
    free(r->world_of);
    r->world_of = NULL;
}

/* Places this rank, splits its group off (--split, --per-rail; every rank when there is none), and its rails. */
static void setup_comms(struct run *R)
{
    struct rb_harness *h = R->h;
    rb_coll_rails_place(h, R->o->ranks_per_node, &R->rl);
    int color = 0;
    if (R->o->per_rail)
        color = R->rl.local;
    else if (R->split_expr && rb_coll_split_color(R->split_expr, h->rank, &color) != 0)
        rb_harness_fatal(h, RB_EXIT_USAGE, "--split %s: not a split expression", R->split_expr);
    else if (R->split_mask && rb_coll_split_mask_color(R->split_mask, h->rank, &color) != 0)
        rb_harness_fatal(h, RB_EXIT_USAGE, "NCCL_TESTS_SPLIT_MASK %s: not a hex mask", R->split_mask);
    R->out.group = color;
    MPI_Comm group = h->comm;
    if (R->split_expr || R->split_mask || R->o->per_rail)
        RB_MPI_CHECK(MPI_Comm_split(h->comm, color, h->rank, &group));
    rb_coll_rails_build(h, group, &R->rl);
    R->out.group_size = R->rl.world.size;
    int *colors = malloc(sizeof(int) * (size_t)h->size);
    if (!colors)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    RB_MPI_CHECK(MPI_Allgather(&color, 1, MPI_INT, colors, 1, MPI_INT, h->comm));
    R->out.ngroups = 0;
    for (int r = 0; r < h->size; r++) {
        bool seen = false;
        for (int q = 0; q < r && !seen; q++)
            seen = colors[q] == colors[r];
        R->out.ngroups += !seen;
    }
    free(colors);
}

/* ---- buffers ---- */

static void *alloc_touched(struct run *R, size_t bytes)
{
    size_t rounded = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (!p)
        rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "cannot allocate %zu bytes for buffers (lower -e)", bytes);
    memset(p, 0, rounded ? rounded : 64); /* fault the pages in before anything is timed */
    return p;
}

static void setup_buffers(struct run *R)
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

static void call(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo,
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
static void point(struct run *R, struct rb_coll_args *a, const struct rb_coll_counts *cn, bool in_place)
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
static double time_ops(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo, struct rb_coll_args *a,
                       double *iter_us)
{
    const struct rb_coll_opts *o = R->o;
    MPI_Comm comm = R->h->comm;
    uint64_t total_ns = 0, start = rb_clock_ns();
    for (uint64_t i = 0; i < o->iters; i++) {
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
    }
    return (double)total_ns / 1e3 / (double)(o->iters * o->agg_iters);
}

static void combine_times(struct run *R, const struct rb_coll_test *t, double s_bytes, double mine_us,
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
static void gather_received(struct run *R, const struct rb_coll_test *t, const struct rb_coll_args *a,
                            struct rb_coll_half *res)
{
    const int n = R->rl.world.size; /* rank 0's group */
    uint64_t *mine = calloc((size_t)n + 1, sizeof *mine), *all = NULL;
    if (!mine || (R->rl.world.rank == 0 && !(all = calloc((size_t)n * (n + 1), sizeof *all))))
        rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "out of memory");
    mine[0] = t->received(a, mine + 1);
    RB_MPI_CHECK(MPI_Gather(mine, n + 1, MPI_UINT64_T, all, n + 1, MPI_UINT64_T, 0, R->rl.world.comm));
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
static void run_half(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo,
                     struct rb_coll_args *a, const struct rb_coll_counts *cn, bool in_place, struct rb_coll_half *res)
{
    struct rb_harness *h = R->h;
    point(R, a, cn, in_place);
    t->init(a, 0);
    call(R, t, algo, a);
    RB_MPI_CHECK(MPI_Barrier(h->comm));
    combine_times(R, t, (double)row_bytes(cn, a->type_bytes), time_ops(R, t, algo, a, R->iter_us), res);
    if (R->iter_us)
        rb_coll_iter_gather(h, R->iter_us, R->o->iters, R->o->per_iter_skip, res);
    res->wrong = -1;
    for (uint64_t c = 1; c <= R->o->check; c++) {
        t->init(a, c);
        call(R, t, algo, a);
        uint64_t mine = t->check(a, c), all = 0;
        RB_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, h->comm));
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
static void combine_times(struct run *R, const struct rb_coll_test *t, double s_bytes, double mine_us,
                          struct rb_coll_half *res)
{
    struct rb_harness *h = R->h;
    const double mine[4] = {mine_us, s_bytes, R->rl.world.size, R->out.group};
    double *all = h->rank == 0 ? malloc(4 * sizeof(double) * (size_t)h->size) : NULL;
    if (h->rank == 0 && !all)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    RB_MPI_CHECK(MPI_Gather(mine, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, h->comm));
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
static void args_for(struct run *R, struct rb_coll_args *a, enum rb_coll_dtype type, enum rb_coll_redop op,
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
static void warm_up(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo, struct rb_coll_args *a)
{
    uint64_t sizes[66];
    size_t n = R->o->warmup ? rb_coll_warmup_sizes(R->o->minbytes, R->o->maxbytes, sizes, 66) : 0;
    for (size_t s = 0; s < n; s++) {
        struct rb_coll_counts cn;
        t->counts(sizes[s] / a->type_bytes, a->type_bytes, R->rl.world.size, R->o->count_rule == RB_COLL_COUNT_LEGACY,
                  &cn);
        a->count = cn.param;
        point(R, a, &cn, false);
        t->init(a, 0);
        for (uint64_t i = 0; i < R->o->warmup; i++)
            call(R, t, algo, a);
    }
}

/* One row: both halves of one size, then its output; the phase is named by what varies (and -N's cycle). */
static void run_size(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo, struct rb_coll_args *a,
                     uint64_t size, bool multi, uint64_t cycle)
{
    const struct rb_coll_opts *o = R->o;
    struct rb_coll_counts cn;
    t->counts(size / a->type_bytes, a->type_bytes, R->rl.world.size, o->count_rule == RB_COLL_COUNT_LEGACY, &cn);
    a->count = cn.param;
    struct rb_coll_row w = {.kind = t->kind, .algo = algo, .type = a->type, .op = a->op, .root = a->root,
                            .size_bytes = row_bytes(&cn, a->type_bytes), .count = cn.param};
    run_half(R, t, algo, a, &cn, false, &w.half[0]);
    run_half(R, t, algo, a, &cn, true, &w.half[1]);
    if (R->h->rank != 0)
        return;
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
    rb_coll_out_row(&R->out, &w, name);
}

/* The size after *size in the sweep (-f's factor or -i's step); false past -e. */
static bool next_size(const struct rb_coll_opts *o, uint64_t *size)
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
static void run_sizes(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo, enum rb_coll_dtype type,
                      enum rb_coll_redop op, int root, bool multi)
{
    struct rb_coll_args a;
    args_for(R, &a, type, op, root);
    warm_up(R, t, algo, &a);
    const struct rb_coll_opts *o = R->o;
    for (uint64_t cycle = 1; (o->run_cycles == 0 || cycle <= o->run_cycles) && !R->stop; cycle++)
        for (uint64_t size = o->minbytes; size <= o->maxbytes && !R->stop;) {
            run_size(R, t, algo, &a, size, multi, cycle);
            rb_harness_metrics_update(R->h); /* collective: every rank, after every size */
            if (rb_harness_any_signalled(R->h))
                R->stop = true;
            if (!next_size(o, &size))
                break;
        }
}

static void run_table(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo)
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

/* ---- --background ---- */

#define BG_MAX_SIZES 64

/* Rank 0: the busbw (GB/s) of one size, out-of-place, timed as the table times it. Collective. */
static double size_busbw(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo, struct rb_coll_args *a,
                         uint64_t size)
{
    struct rb_coll_counts cn;
    t->counts(size / a->type_bytes, a->type_bytes, R->rl.world.size, R->o->count_rule == RB_COLL_COUNT_LEGACY, &cn);
    a->count = cn.param;
    point(R, a, &cn, false);
    t->init(a, 0);
    call(R, t, algo, a);
    RB_MPI_CHECK(MPI_Barrier(R->h->comm));
    struct rb_coll_half res = {0};
    combine_times(R, t, (double)row_bytes(&cn, a->type_bytes), time_ops(R, t, algo, a, NULL), &res);
    return res.busbw;
}

/*
 * Rank 0: the mean busbw of each size over sweeps repeated until --bg-alone
 * has passed (on rank 0's clock, so every rank runs as many), so the load's
 * window with the collective is as long as its window alone. Collective.
 */
static void sweep_for(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo, struct rb_coll_args *a,
                      const uint64_t *sizes, size_t n, double *busbw)
{
    const uint64_t t0 = rb_clock_ns();
    int more = 1, reps = 0;
    for (size_t i = 0; i < n; i++)
        busbw[i] = 0;
    while (more) {
        for (size_t i = 0; i < n; i++)
            busbw[i] += size_busbw(R, t, algo, a, sizes[i]);
        reps++;
        more = rb_clock_ns() - t0 < R->bg->alone_ns && reps < 10000 && !rb_harness_signalled();
        RB_MPI_CHECK(MPI_Bcast(&more, 1, MPI_INT, 0, R->h->comm));
    }
    for (size_t i = 0; i < n; i++)
        busbw[i] /= reps;
}

/* Every rank's load stats summed on rank 0 (counts and histogram buckets add; min and max reduced apart). */
static void bg_reduce(struct run *R, struct rb_stats *s)
{
    struct rb_stats *sum = rb_stats_new();
    uint64_t mm[4], mm_all[4];
    if (!sum)
        rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "out of memory");
    rb_stats_minmax_pack(s, mm);
    RB_MPI_CHECK(MPI_Reduce(s, sum, (int)RB_STATS_U64S, MPI_UINT64_T, MPI_SUM, 0, R->h->comm));
    RB_MPI_CHECK(MPI_Reduce(mm, mm_all, 4, MPI_UINT64_T, MPI_MIN, 0, R->h->comm));
    if (R->h->rank == 0) {
        *s = *sum;
        rb_stats_minmax_unpack(s, mm_all);
    }
    rb_stats_free(sum);
}

/* The load's figures over a window: requests, errors, bytes/s and latency p99 (null when nothing completed). */
static cJSON *bg_window_json(const struct rb_stats *s, double dur_s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "requests", rb_json_u64(s->ops));
    cJSON_AddItemToObject(o, "errors", rb_json_u64(s->errors));
    cJSON_AddNumberToObject(o, "duration_s", dur_s);
    cJSON_AddItemToObject(o, "bytes_per_s", s->ops && dur_s > 0 ? cJSON_CreateNumber((double)s->bytes / dur_s)
                                                                : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "latency_p99_ns",
                          s->ops ? rb_json_u64(rb_hist_percentile(&s->lat, 99)) : cJSON_CreateNull());
    return o;
}

/* Sleeps d ns (the load runs alone meanwhile). */
static void bg_sleep(uint64_t d)
{
    struct timespec ts = {(time_t)(d / RB_NS_PER_S), (long)(d % RB_NS_PER_S)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !rb_harness_signalled())
        ;
}

/* Rank 0: the per-size rows and the load's windows as text and as summary.background. */
static cJSON *bg_report(struct run *R, const uint64_t *sizes, const double *alone, const double *with, size_t n,
                        const struct rb_stats *s_alone, double alone_s, const struct rb_stats *s_with, double with_s)
{
    const struct coll_bg *bg = R->bg;
    cJSON *o = cJSON_CreateObject(), *rows = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "url", bg->url);
    cJSON_AddNumberToObject(o, "rate_per_s", bg->rate);
    cJSON_AddItemToObject(o, "inflight", rb_json_u64(bg->rate > 0 ? 0 : bg->inflight * bg->threads));
    rb_coll_out_text(&R->out, "#\n# Background load: GET %s on every rank (%s), %s %s, out-of-place busbw (GB/s)\n"
                              "#        size     alone  with load     ratio\n",
                     bg->url, bg->rate > 0 ? "open loop at --bg-rate per rank" : "closed loop",
                     R->tests[0]->name, rb_coll_algo_name(R->algos[0]));
    for (size_t i = 0; i < n; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToObject(r, "size_bytes", rb_json_u64(sizes[i]));
        cJSON_AddNumberToObject(r, "busbw_gbps", alone[i]);
        cJSON_AddNumberToObject(r, "busbw_with_load_gbps", with[i]);
        cJSON_AddItemToObject(r, "ratio", alone[i] > 0 ? cJSON_CreateNumber(with[i] / alone[i]) : cJSON_CreateNull());
        cJSON_AddItemToArray(rows, r);
        rb_coll_out_text(&R->out, "# %12llu  %8.3f  %9.3f  %8.3f\n", (unsigned long long)sizes[i], alone[i], with[i],
                         alone[i] > 0 ? with[i] / alone[i] : 0.0);
    }
    cJSON_AddItemToObject(o, "rows", rows);
    cJSON *la = bg_window_json(s_alone, alone_s), *lw = bg_window_json(s_with, with_s);
    cJSON_AddItemToObject(o, "load_alone", la);
    cJSON_AddItemToObject(o, "load_with_collective", lw);
    char pa[16] = "-", pw[16] = "-";
    if (s_alone->ops)
        rb_format_duration_human(pa, sizeof pa, rb_hist_percentile(&s_alone->lat, 99));
    if (s_with->ops)
        rb_format_duration_human(pw, sizeof pw, rb_hist_percentile(&s_with->lat, 99));
    rb_coll_out_text(&R->out, "# load alone: %.2f MiB/s, p99 %s (%llu requests in %.2f s); with the collective: "
                              "%.2f MiB/s, p99 %s (%llu requests in %.2f s)\n",
                     alone_s > 0 ? (double)s_alone->bytes / alone_s / (double)RB_MIB : 0.0, pa,
                     (unsigned long long)s_alone->ops, alone_s,
                     with_s > 0 ? (double)s_with->bytes / with_s / (double)RB_MIB : 0.0, pw,
                     (unsigned long long)s_with->ops, with_s);
    return o;
}

/*
 * --background: the sweep once more, out-of-place, without and then with a
 * GET load on every rank; the load alone for --bg-alone before the second
 * pass, then during it. Collective. Returns 0 or an exit status; rank 0's
 * record in *rec.
 */
static int background_pass(struct run *R, cJSON **rec)
{
    const struct rb_coll_test *t = R->tests[0];
    enum rb_coll_algo algo = R->algos[0];
    const struct coll_bg *bg = R->bg;
    struct rb_harness *h = R->h;
    if (!t->run[algo] || (algo == RB_COLL_ALGO_HIER && !R->rl.hier_ok))
        return 0; /* not applicable: said in the table already */
    const struct rb_bgload_opts bo = {bg->url, bg->objects, (unsigned)bg->threads, (unsigned)bg->inflight, bg->rate,
                                      bg->timeout_ns};
    struct rb_bgload *b = NULL;
    int status = rb_bgload_open(h, &bo, &b);
    if (status)
        return status;
    uint64_t sizes[BG_MAX_SIZES];
    double alone[BG_MAX_SIZES], with[BG_MAX_SIZES];
    size_t n = 0;
    for (uint64_t size = R->o->minbytes; n < BG_MAX_SIZES; n++) {
        sizes[n] = size;
        if (!next_size(R->o, &size)) {
            n++;
            break;
        }
    }
    struct rb_coll_args a;
    const struct rb_coll_kind_def *kd = rb_coll_kind_def(t->kind);
    args_for(R, &a, R->types[0], kd->reduces ? R->ops[0] : RB_COLL_NONE, kd->rooted ? R->root : -1);
    sweep_for(R, t, algo, &a, sizes, n, alone);
    struct rb_stats *sa = rb_stats_new(), *sw = rb_stats_new();
    if (!sa || !sw || rb_bgload_start(b) != 0)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "--background: cannot start the load");
    uint64_t t0 = rb_clock_ns();
    bg_sleep(bg->alone_ns);
    rb_bgload_take(b, sa);
    uint64_t t1 = rb_clock_ns();
    sweep_for(R, t, algo, &a, sizes, n, with);
    rb_bgload_stop(b);
    uint64_t t2 = rb_clock_ns();
    rb_bgload_take(b, sw);
    rb_bgload_free(b);
    bg_reduce(R, sa);
    bg_reduce(R, sw);
    if (h->rank == 0)
        *rec = bg_report(R, sizes, alone, with, n, sa, (double)(t1 - t0) / 1e9, sw, (double)(t2 - t1) / 1e9);
    rb_stats_free(sa);
    rb_stats_free(sw);
    return 0;
}

/* --background's options: one line and RB_EXIT_USAGE when they do not make a load, else 0 (R->bg set when given). */
static int check_bg(struct run *R, const struct coll_bg *bg)
{
    if (!bg->url)
        return 0;
    if (bg->objects < 1 || bg->objects > UINT32_MAX)
        return rb_cli_usage_error("--background: give --bg-objects N, 1 to %u (the objects <prefix>obj-<index> to GET)",
                                  UINT32_MAX);
    if (bg->threads < 1 || bg->threads > 64)
        return rb_cli_usage_error("--bg-threads %llu: expected 1 to 64", (unsigned long long)bg->threads);
    if (bg->inflight < 1 || bg->inflight > 4096)
        return rb_cli_usage_error("--bg-inflight %llu: expected 1 to 4096", (unsigned long long)bg->inflight);
    if (bg->rate < 0)
        return rb_cli_usage_error("--bg-rate %g: expected 0 (closed loop) or more requests/s", bg->rate);
    if (R->ntests != 1 || R->nalgos != 1 || R->ntypes != 1 || R->nops != 1 || R->root_all || R->o->run_cycles != 1)
        return rb_cli_usage_error("--background: give one collective, one --algo, one -d, one -o, one root and -N 1 "
                                  "(the pass repeats one sweep)");
    R->bg = bg;
    return 0;
}

/* What the harness checks once the number of ranks is known, before the result directory exists. */
struct precheck {
    const struct rb_coll_opts *o;
    bool alltoallv; /* among the collectives: its matrix must fit the ranks */
    int root, root_all;
    char *json_path;
    size_t json_len;
};

static int precheck(void *ctx, int rank, int size)
{
    const struct precheck *c = ctx;
    const struct rb_coll_opts *o = c->o;
    if (!c->root_all && c->root >= size)
        return rank == 0 ? rb_cli_usage_error("--root: %d is out of range for %d ranks (use 0 to %d, or all)",
                                              c->root, size, size - 1)
                         : RB_EXIT_USAGE;
    if (o->ranks_per_node && (o->ranks_per_node > (uint64_t)size || size % (int)o->ranks_per_node))
        return rank == 0 ? rb_cli_usage_error("--ranks-per-node: %llu does not divide the %d ranks (use a divisor of %d)",
                                              (unsigned long long)o->ranks_per_node, size, size)
                         : RB_EXIT_USAGE;
    if (c->alltoallv) {
        int arc = rb_coll_alltoallv_check(size, o->minbytes, o->maxbytes);
        if (arc)
            return arc;
    }
    if (o->json && rank == 0) {
        int jrc = reserve_json(o->json, c->json_path, c->json_len);
        if (jrc)
            return rb_cli_usage_error("--output_json: cannot create \"%s\": %s (give a writable path)", o->json,
                                      strerror(-jrc));
    }
    return 0;
}

/* The lists the options name: collectives, reduction ops, types, algorithms, root. Returns 0 or RB_EXIT_USAGE. */
static int resolve(struct run *R, const struct rb_coll_opts *o, const char *which)
{
    enum rb_coll_kind kind;
    if (strcmp(which, "all") == 0) {
        for (int k = 0; k < RB_COLL_KINDS; k++)
            R->kinds[R->ntests++] = (enum rb_coll_kind)k;
    } else if (rb_coll_kind_parse(which, &kind) == 0) {
        R->kinds[R->ntests++] = kind;
    } else {
        char names[256];
        return rb_cli_usage_error("coll: unknown collective \"%s\" (use %s or all)", which,
                                  rb_coll_kind_names(names, sizeof names, ", ", NULL));
    }
    for (int i = 0; i < R->ntests; i++)
        R->tests[i] = rb_coll_test_get(R->kinds[i]);
    if (o->op == RB_COLL_REDOPS) {
        for (int i = 0; i < RB_COLL_REDOPS; i++)
            R->ops[R->nops++] = (enum rb_coll_redop)i;
    } else {
        R->ops[R->nops++] = (enum rb_coll_redop)o->op;
    }
    if (o->dtype == DTYPE_ALL) {
        for (int i = 0; i < RB_COLL_DTYPES; i++)
            R->types[R->ntypes++] = (enum rb_coll_dtype)i;
    } else {
        R->types[R->ntypes++] =
            o->dtype < RB_COLL_DTYPES ? (enum rb_coll_dtype)o->dtype : alias_type[o->dtype - RB_COLL_DTYPES];
    }
    if (parse_algos(o->algo, R->algos, &R->nalgos) != 0 || parse_root(o->root, &R->root, &R->root_all) != 0)
        return RB_EXIT_USAGE;
    /* Split groups: --per-rail, --split, else nccl-tests' NCCL_TESTS_SPLIT_MASK, then NCCL_TESTS_SPLIT. */
    int color;
    const char *mask = o->split || o->per_rail ? NULL : getenv("NCCL_TESTS_SPLIT_MASK");
    R->split_expr = o->split ? o->split : mask || o->per_rail ? NULL : getenv("NCCL_TESTS_SPLIT");
    R->split_mask = mask && *mask ? mask : NULL;
    if (R->split_expr && !*R->split_expr)
        R->split_expr = NULL;
    if (o->split && o->per_rail)
        return rb_cli_usage_error("--split: give either --split or --per-rail (--per-rail is one group per rail)");
    if (R->split_expr && rb_coll_split_color(R->split_expr, 0, &color) != 0)
        return rb_cli_usage_error("%s: \"%s\" is not a split (use AND n, OR n, MOD n or DIV n, n > 0 for MOD and DIV, "
                                  "e.g. 'AND 0x7')",
                                  o->split ? "--split" : "NCCL_TESTS_SPLIT", R->split_expr);
    if (R->split_mask && rb_coll_split_mask_color(R->split_mask, 0, &color) != 0)
        return rb_cli_usage_error("NCCL_TESTS_SPLIT_MASK: \"%s\" is not a hex mask (e.g. 0x7)", R->split_mask);
    R->split_desc = o->per_rail ? "--per-rail" : R->split_expr ? R->split_expr : R->split_mask;
    return check_opts(o);
}

/* Communicators, buffers, MPI types and the output with its preamble; collective. */
static void start(struct run *R, const char *json_path, int argc, char **argv)
{
    rb_coll_out_init(&R->out, R->h, R->o, json_path);
    R->out.split = R->split_desc;
    rb_coll_mpi_types_create();
    setup_comms(R);
    R->out.ranks_per_node = R->rl.ranks_per_node;
    setup_buffers(R);
    int wrc = rb_coll_watchdog_start(R->o->timeout_s, R->h->host);
    if (wrc != 0)
        rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "--timeout: cannot start the watchdog: %s", strerror(-wrc));
    char algos[128] = "";
    for (int i = 0, n = 0; i < R->nalgos; i++)
        n += snprintf(algos + n, sizeof algos - (size_t)n, "%s%s", i ? " " : "", rb_coll_algo_name(R->algos[i]));
    rb_coll_out_preamble(&R->out, R->which, algos, R->rl.node_index, R->rl.local, argc, argv);
    if (R->o->memory)
        rb_coll_out_text(&R->out, "# memory: %zu bytes per rank (send %zu, receive %zu, algorithms' scratch %zu)\n",
                         2 * R->buf_bytes + R->scratch_bytes, R->buf_bytes, R->buf_bytes, R->scratch_bytes);
}

/* Releases what start made; collective. */
static void stop(struct run *R)
{
    rb_coll_watchdog_stop();
    rb_coll_mpi_types_free();
    rb_coll_rails_free(R->h, &R->rl);
    free(R->sendbuf);
    free(R->recvbuf);
    free(R->scratch);
    free(R->times);
    free(R->iter_us);
    rb_coll_alltoallv_free();
    rb_coll_out_free(&R->out);
}

int rb_coll_main(int argc, char **argv)
{
    /* OSU's point-to-point tests take OSU's flags (-m, -i, -x, -W mean other things to nccl-tests). */
    if (argc >= 2 && rb_coll_p2p_is(argv[1]))
        return rb_coll_p2p_main(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "moe") == 0)
        return rb_coll_moe_main(argc - 1, argv + 1);
    struct rb_coll_opts o = {.minbytes = 32 * RB_MIB, .maxbytes = 32 * RB_MIB, .stepbytes = RB_MIB,
                             .stepfactor = 1, .iters = 20, .warmup = 5, .check = 1, .chunk = 128 * RB_KIB,
                             .op = RB_COLL_SUM, .dtype = RB_COLL_FLOAT, .average = RB_COLL_AVG_MEAN, .root = "0",
                             .algo = "mpi", .agg_iters = 1, .run_cycles = 1, .nthreads = 1, .ngpus = 1,
                             .device_cta = 16, .cta_policy = -1};
    struct rb_coll_a2av_opts a2av = {.spread = -1, .scale = -1};
    struct coll_bg bg = {.threads = 1, .inflight = 4, .alone_ns = 2 * RB_NS_PER_S, .timeout_ns = 30 * RB_NS_PER_S};
    const struct rb_opt opts[] = {
        {"minbytes", 'b', RB_OPT_SIZE, &o.minbytes, "SIZE", "smallest size", NULL},
        {"maxbytes", 'e', RB_OPT_SIZE, &o.maxbytes, "SIZE", "largest size", NULL},
        {"stepbytes", 'i', RB_OPT_SIZE, &o.stepbytes, "SIZE", "fixed increment between sizes (without -f)", NULL},
        {"stepfactor", 'f', RB_OPT_U64, &o.stepfactor, "N", "multiply the size by N (1: step by -i)", NULL},
        {"iters", 'n', RB_OPT_U64, &o.iters, "N", "timed iterations per size", NULL},
        {"warmup_iters", 'w', RB_OPT_U64, &o.warmup, "N", "untimed iterations at every size (doubling from -b to -e)",
         NULL},
        {"check", 'c', RB_OPT_U64, &o.check, "N", "check iterations per size; 0 disables (#wrong N/A)", NULL},
        {"op", 'o', RB_OPT_CHOICE, &o.op, "OP", "reduction", OP_CHOICES},
        {"datatype", 'd', RB_OPT_CHOICE, &o.dtype, "TYPE", "element type", DTYPE_CHOICES},
        {"root", 'r', RB_OPT_STR, &o.root, "RANK", "root of broadcast and reduce, or all", NULL},
        {"average", 'a', RB_OPT_CHOICE, &o.average, "0|1|2|3",
         "reported time across ranks: 0 rank 0, 1 mean, 2 min, 3 max", "0|1|2|3"},
        {"output_json", 'J', RB_OPT_STR, &o.json, "FILE", "also write nccl-tests' JSON results to FILE", NULL},
        {"algo", 0, RB_OPT_STR, &o.algo, "LIST", "mpi, ring, rd, rhd, tree, hier, all, or a comma-separated list",
         "mpi|ring|rd|rhd|tree|hier|all"},
        {"ranks-per-node", 0, RB_OPT_U64, &o.ranks_per_node, "L",
         "treat each L consecutive ranks as one node (0: one node per host)", NULL},
        {"chunk", 0, RB_OPT_SIZE, &o.chunk, "SIZE", "pipeline chunk of the tree and chain algorithms", NULL},
        {"count-rule", 0, RB_OPT_CHOICE, &o.count_rule, "aligned|legacy",
         "per-rank share of allgather, reducescatter, alltoall: aligned to 16 bytes as nccl-tests v2.13.12+, "
         "or count / ranks as before", "aligned|legacy"},
        RB_COLL_NCCL_OPTS(o),
        {"split", 0, RB_OPT_STR, &o.split, "EXPR",
         "split the ranks into groups that run side by side: AND n, OR n, MOD n, DIV n (or & | % /) of the rank, "
         "e.g. 'AND 0x7' (if not given: NCCL_TESTS_SPLIT)", NULL},
        {"per-rail", 0, RB_OPT_FLAG, &o.per_rail, NULL,
         "one group per rail: the ranks with the same local index on every node", NULL},
        {"spread", 0, RB_OPT_DOUBLE, &a2av.spread, "F",
         "alltoallv: 0 uniform to 1 distance-weighted per-peer sizes (if not given: NCCL_TESTS_ALLTOALLV_SPREAD "
         "or 1)", NULL},
        {"matrix", 0, RB_OPT_STR, &a2av.matrix, "FILE",
         "alltoallv: bytes rank i sends rank j, a square whitespace-separated matrix; needs -b = -e (if not given: "
         "NCCL_TESTS_ALLTOALLV_MATRIX_FILE)", NULL},
        {"matrix-scale", 0, RB_OPT_DOUBLE, &a2av.scale, "F",
         "alltoallv: multiply the matrix's values by F (if not given: NCCL_TESTS_ALLTOALLV_MATRIX_SCALE or 1)",
         NULL},
        {"background", 0, RB_OPT_STR, &bg.url, "URL",
         "after the table, the sweep again without and with an object GET load on every rank (http://, s3://, "
         "ais://), out-of-place busbw side by side", NULL},
        {"bg-objects", 0, RB_OPT_U64, &bg.objects, "N", "--background: objects <prefix>obj-<index>, split over ranks",
         NULL},
        {"bg-threads", 0, RB_OPT_U64, &bg.threads, "N", "--background: load threads per rank", NULL},
        {"bg-inflight", 0, RB_OPT_U64, &bg.inflight, "N", "--background: requests in flight per thread (closed loop)",
         NULL},
        {"bg-rate", 0, RB_OPT_RATE, &bg.rate, "R/s", "--background: open loop at R requests/s per rank (0: closed)",
         NULL},
        {"bg-alone", 0, RB_OPT_DURATION, &bg.alone_ns, "D",
         "--background: the load alone this long; each pass repeats the sweep at least this long", NULL},
        {0},
    };
    char names[256], usage[320];
    snprintf(usage, sizeof usage, "railbench coll %s|all [options]", rb_coll_kind_names(names, sizeof names, "|", NULL));
    const struct rb_cmd_spec spec = {
        usage,
        "Time collectives over the MPI ranks with nccl-tests' flags and table, MPI's own algorithm and "
        "ring, recursive doubling, Rabenseifner, tree and rail-aware hierarchical ones.\n"
        "Inside coll, nccl-tests' letters win: -c is check (not in-flight), -n iterations (not objects),\n"
        "-d datatype (not duration). Every nccl-tests flag is taken; those meaningless on CPU ranks\n"
        "(-G, -y, -R, -x, -V, -p) are noted in the output, -t and -g take 1 only, -D 0 only.\n"
        "OSU's point-to-point tests: railbench coll latency|bw|bibw|mbw_mr (see railbench coll latency --help).\n"
        "A mixture-of-experts layer's dispatch and combine: railbench coll moe (see railbench coll moe --help).",
        opts, 1, 1, false};
    struct rb_cli cli;
    int rc;
    if (!rb_cli_parse_cmd(&cli, &spec, argc, argv, &rc))
        return rb_coll_usage_exit(rc);

    static struct run R;
    memset(&R, 0, sizeof R);
    R.o = &o;
    R.which = cli.args[0];
    if ((rc = resolve(&R, &o, R.which)) != 0 || (rc = check_bg(&R, &bg)) != 0 ||
        (rc = rb_coll_alltoallv_setup(&a2av)) != 0) {
        rb_cli_free(&cli);
        return rb_coll_usage_exit(rc);
    }
    char json_path[4096] = "", command[64];
    bool any_a2av = false;
    for (int i = 0; i < R.ntests; i++)
        any_a2av = any_a2av || R.kinds[i] == RB_COLL_ALLTOALLV;
    struct precheck pc = {.o = &o, .alltoallv = any_a2av, .root = R.root, .root_all = R.root_all, .json_path = json_path,
                          .json_len = sizeof json_path};
    snprintf(command, sizeof command, "coll %s", R.which);
    struct rb_harness h;
    rc = rb_harness_init(&h, rb_cli_strdup(&cli, command), &cli,
                         &(struct rb_harness_opts){.mpi = true, .precheck = precheck, .ctx = &pc});
    if (rc != 0) {
        rb_cli_free(&cli);
        return rb_coll_usage_exit(rc);
    }
    R.h = &h;
    start(&R, json_path, argc, argv);
    for (int ti = 0; ti < R.ntests && !R.stop; ti++)
        for (int ai = 0; ai < R.nalgos && !R.stop; ai++)
            run_table(&R, R.tests[ti], R.algos[ai]);
    cJSON *bg_rec = NULL;
    int status = R.bg && !R.stop ? background_pass(&R, &bg_rec) : 0;
    rb_coll_out_finish(&R.out, R.which, R.kinds, R.ntests, R.algos, R.nalgos);
    if (bg_rec) /* beside the rows of the summary the output wrote */
        cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(h.result.root, "summary"), "background", bg_rec);
    stop(&R);
    rc = rb_harness_finish(&h, NULL, status);
    rb_cli_free(&cli);
    return rc;
}
