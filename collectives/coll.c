/* railbench coll: nccl-tests-compatible collective benchmark with MPI's own and rail-aware algorithms side by side. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo.h"
#include "railbench/file.h"
#include "railbench/clock.h"
#include "railbench/command.h"
#include "railbench/log.h"
#include "railbench/units.h"

#define MIB (1024ull * 1024ull)

/* -o and -d choices, in nccl-tests' order; the aliases of -d map to the type named by alias_type. */
#define OP_CHOICES "sum|prod|max|min|avg|all"
#define DTYPE_CHOICES "int8|uint8|int32|uint32|int64|uint64|half|float|double|bfloat16|float16|float32|float64|all"
static const enum rb_coll_dtype alias_type[] = {RB_COLL_HALF, RB_COLL_FLOAT, RB_COLL_DOUBLE};
#define DTYPE_ALL (RB_COLL_DTYPES + 3)

/* -a: how per-rank times combine into the reported time (nccl-tests). */
enum { AVG_RANK0, AVG_MEAN, AVG_MIN, AVG_MAX };

struct coll_opts {
    uint64_t minbytes, maxbytes, stepbytes, stepfactor, iters, warmup, check, ranks_per_node, chunk;
    int op, dtype, average;
    const char *root, *algo, *json;
};

/* One half (out-of-place or in-place) of a row, as reported. */
struct half_res {
    double time_us, algbw, busbw;
    long long wrong; /* -1: not checked */
    double min_us, avg_us, max_us;
};

/* One table row, kept on rank 0 for the comparison table. */
struct row {
    enum rb_coll_kind kind;
    enum rb_coll_algo algo;
    enum rb_coll_dtype type;
    enum rb_coll_redop op;
    int root;
    size_t size_bytes, count;
    struct half_res half[2];
};

/* Text printed as it is produced and kept for table.md (rank 0 only). */
struct text {
    char *p;
    size_t len, cap;
};

struct run {
    struct rb_harness *h;
    const struct coll_opts *o;
    const struct rb_coll_test *tests[RB_COLL_KINDS];
    int ntests;
    enum rb_coll_algo algos[RB_COLL_ALGOS];
    int nalgos;
    enum rb_coll_dtype types[RB_COLL_DTYPES];
    int ntypes;
    enum rb_coll_redop ops[RB_COLL_REDOPS];
    int nops;
    int root_all; /* -r all */
    int root;
    int ranks_per_node; /* as used: the override, or ranks on this host */
    bool hier_ok;
    char hier_why[160];
    struct rb_coll_comm world, node, rail;
    char *sendbuf, *recvbuf, *scratch;
    size_t buf_bytes, scratch_bytes;
    double *times; /* per-rank times, rank 0 */
    uint64_t t0_ns;
    bool stop;
    /* rank 0 */
    struct text out;
    struct row *rows;
    size_t nrows, caprows;
    double bw_sum;
    long bw_n;
    long long wrong_total;
    cJSON *coll_rows, *not_applicable, *json_results;
    const char *json_path;
};

/* ---- MPI types for the mpi baseline ---- */

static MPI_Datatype type16[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL}; /* half, bfloat16 */
static MPI_Op ops16[RB_COLL_REDOPS] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};

/* MPI has no 16-bit floating types: they travel as two bytes and reduce through our kernel. */
static void op16(void *in, void *inout, const int *len, const MPI_Datatype *dt, enum rb_coll_redop op)
{
    enum rb_coll_dtype t = *dt == type16[1] ? RB_COLL_BFLOAT16 : RB_COLL_HALF;
    rb_coll_data_reduce(inout, inout, in, (size_t)*len, t, op);
}
static void op16_sum(void *in, void *inout, int *len, MPI_Datatype *dt) { op16(in, inout, len, dt, RB_COLL_SUM); }
static void op16_prod(void *in, void *inout, int *len, MPI_Datatype *dt) { op16(in, inout, len, dt, RB_COLL_PROD); }
static void op16_max(void *in, void *inout, int *len, MPI_Datatype *dt) { op16(in, inout, len, dt, RB_COLL_MAX); }
static void op16_min(void *in, void *inout, int *len, MPI_Datatype *dt) { op16(in, inout, len, dt, RB_COLL_MIN); }

static void mpi_types_create(void)
{
    for (int i = 0; i < 2; i++) {
        RB_MPI_CHECK(MPI_Type_contiguous(2, MPI_BYTE, &type16[i]));
        RB_MPI_CHECK(MPI_Type_commit(&type16[i]));
    }
    MPI_User_function *fns[RB_COLL_REDOPS] = {op16_sum, op16_prod, op16_max, op16_min, op16_sum};
    for (int i = 0; i < RB_COLL_AVG; i++)
        RB_MPI_CHECK(MPI_Op_create(fns[i], 1, &ops16[i]));
    ops16[RB_COLL_AVG] = ops16[RB_COLL_SUM];
}

static void mpi_types_free(void)
{
    for (int i = 0; i < 2; i++)
        if (type16[i] != MPI_DATATYPE_NULL)
            RB_MPI_CHECK(MPI_Type_free(&type16[i]));
    for (int i = 0; i < RB_COLL_AVG; i++)
        if (ops16[i] != MPI_OP_NULL)
            RB_MPI_CHECK(MPI_Op_free(&ops16[i]));
    ops16[RB_COLL_AVG] = MPI_OP_NULL;
}

static MPI_Datatype mpi_type(enum rb_coll_dtype t)
{
    switch (t) {
    case RB_COLL_INT8: return MPI_INT8_T;
    case RB_COLL_UINT8: return MPI_UINT8_T;
    case RB_COLL_INT32: return MPI_INT32_T;
    case RB_COLL_UINT32: return MPI_UINT32_T;
    case RB_COLL_INT64: return MPI_INT64_T;
    case RB_COLL_UINT64: return MPI_UINT64_T;
    case RB_COLL_HALF: return type16[0];
    case RB_COLL_FLOAT: return MPI_FLOAT;
    case RB_COLL_DOUBLE: return MPI_DOUBLE;
    case RB_COLL_BFLOAT16: return type16[1];
    default: return MPI_DATATYPE_NULL;
    }
}

/* avg has no MPI op: it runs as MPI_SUM and the collective divides, as NCCL defines ncclAvg. */
static MPI_Op mpi_op(enum rb_coll_redop op, enum rb_coll_dtype t)
{
    if (op == RB_COLL_NONE)
        return MPI_OP_NULL;
    if (t == RB_COLL_HALF || t == RB_COLL_BFLOAT16)
        return ops16[op];
    switch (op) {
    case RB_COLL_PROD: return MPI_PROD;
    case RB_COLL_MAX: return MPI_MAX;
    case RB_COLL_MIN: return MPI_MIN;
    default: return MPI_SUM;
    }
}

const struct rb_coll_test *rb_coll_test_get(enum rb_coll_kind k)
{
    static const struct rb_coll_test *const all[RB_COLL_KINDS] = {
        [RB_COLL_ALLREDUCE] = &rb_coll_allreduce, [RB_COLL_ALLGATHER] = &rb_coll_allgather,
        [RB_COLL_REDUCESCATTER] = &rb_coll_reducescatter, [RB_COLL_BROADCAST] = &rb_coll_broadcast,
        [RB_COLL_REDUCE] = &rb_coll_reduce, [RB_COLL_ALLTOALL] = &rb_coll_alltoall,
        [RB_COLL_SENDRECV] = &rb_coll_sendrecv,
    };
    return (unsigned)k < RB_COLL_KINDS ? all[k] : NULL;
}

/* ---- text ---- */

static void text_add(struct run *R, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(struct run *R, const char *fmt, ...)
{
    if (R->h->rank != 0)
        return;
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (R->out.len + len + 1 > R->out.cap) {
        size_t cap = R->out.cap ? R->out.cap * 2 : 16384;
        while (cap < R->out.len + len + 1)
            cap *= 2;
        char *p = realloc(R->out.p, cap);
        if (!p)
            rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "out of memory");
        R->out.p = p;
        R->out.cap = cap;
    }
    memcpy(R->out.p + R->out.len, line, len + 1);
    R->out.len += len;
    /*
     * After a signal, mpirun is tearing the job down and stops reading our
     * stdout; a blocked write would keep result.json from being written
     * before the kill that follows. The rest goes to table.md only.
     */
    if (!R->h->interrupted) {
        fputs(line, stdout);
        fflush(stdout);
    }
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
            fprintf(stderr,
                    "railbench: --algo: \"%s\" is not an algorithm (use mpi, ring, rd, rhd, tree, hier or all, "
                    "or a comma-separated list)\n",
                    tok);
            return -EINVAL;
        }
        seen[a] = true;
    }
    for (int i = 0; i < RB_COLL_ALGOS; i++)
        if (seen[i])
            out[(*n)++] = (enum rb_coll_algo)i;
    if (*n == 0) {
        fprintf(stderr, "railbench: --algo: \"%s\" names no algorithm (use e.g. mpi or ring,hier)\n", s);
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
        fprintf(stderr, "railbench: --root: \"%s\" is not a rank (use 0 to the number of ranks - 1, or all)\n", s);
        return -EINVAL;
    }
    *root = (int)v;
    return 0;
}

/* Checks what does not depend on the number of ranks; one line and -EINVAL on a mistake. */
static int check_opts(const struct coll_opts *o)
{
    char a[32], b[32];
    if (o->minbytes > o->maxbytes) {
        rb_format_size(a, sizeof a, o->minbytes);
        rb_format_size(b, sizeof b, o->maxbytes);
        fprintf(stderr, "railbench: --minbytes: %s is larger than --maxbytes %s (use -b <= -e)\n", a, b);
        return -EINVAL;
    }
    if (o->maxbytes > INT_MAX) {
        rb_format_size(b, sizeof b, o->maxbytes);
        fprintf(stderr,
                "railbench: --maxbytes: %s is too large (at most 2147483647 bytes: MPI counts are int)\n", b);
        return -EINVAL;
    }
    if (o->iters == 0 || o->iters > INT_MAX) {
        fprintf(stderr, "railbench: --iters: %llu is out of range (use 1 or more, e.g. -n 20)\n",
                (unsigned long long)o->iters);
        return -EINVAL;
    }
    if (o->stepfactor == 0) {
        fprintf(stderr, "railbench: --stepfactor: 0 is not a factor (use 2 or more, or 1 to step by -i)\n");
        return -EINVAL;
    }
    if (o->stepfactor > 1 && o->minbytes == 0) {
        fprintf(stderr, "railbench: --minbytes: 0 never grows by a factor (use -b 1 or more with -f)\n");
        return -EINVAL;
    }
    if (o->stepfactor <= 1 && o->stepbytes == 0) {
        fprintf(stderr, "railbench: --stepbytes: 0 never reaches --maxbytes (use a size > 0, or -f 2)\n");
        return -EINVAL;
    }
    if (o->chunk == 0 || o->chunk > 64 * MIB) {
        fprintf(stderr, "railbench: --chunk: %llu is out of range (use 1 byte to 64MiB, e.g. 128k)\n",
                (unsigned long long)o->chunk);
        return -EINVAL;
    }
    return 0;
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
static void setup_comms(struct run *R)
{
    struct rb_harness *h = R->h;
    int node_color, local, node_index;
    if (R->o->ranks_per_node) {
        int L = (int)R->o->ranks_per_node;
        node_index = h->rank / L;
        local = h->rank % L;
        node_color = node_index;
        R->ranks_per_node = L;
        R->hier_ok = true;
    } else {
        node_index = h->host_index;
        local = h->local_rank;
        node_color = h->host_index;
        R->ranks_per_node = h->local_size;
        int mm[2] = {h->local_size, -h->local_size};
        RB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_INT, MPI_MAX, h->comm));
        R->hier_ok = mm[0] == -mm[1];
        snprintf(R->hier_why, sizeof R->hier_why,
                 "hosts run between %d and %d ranks; rails need the same number on every node "
                 "(see --ranks-per-node)",
                 -mm[1], mm[0]);
    }
    MPI_Comm node, rail;
    RB_MPI_CHECK(MPI_Comm_split(h->comm, node_color, h->rank, &node));
    RB_MPI_CHECK(MPI_Comm_split(h->comm, local, node_index, &rail));
    comm_of(h->comm, &R->world);
    comm_of(node, &R->node);
    comm_of(rail, &R->rail);
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
    R->buf_bytes = R->o->maxbytes;
    R->scratch_bytes = RB_COLL_SCRATCH_BYTES(R->buf_bytes, R->o->chunk);
    R->sendbuf = alloc_touched(R, R->buf_bytes);
    R->recvbuf = alloc_touched(R, R->buf_bytes);
    R->scratch = alloc_touched(R, R->scratch_bytes);
    if (R->h->rank == 0) {
        R->times = calloc((size_t)R->h->size, sizeof *R->times);
        if (!R->times)
            rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "out of memory");
    }
}

/* ---- one row ---- */

static void call(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo,
                 const struct rb_coll_args *a)
{
    int rc = t->run[algo](a);
    if (rc != 0)
        rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "%s with %s failed: %s", t->name, rb_coll_algo_name(algo),
                         strerror(-rc));
}

/* Points send and recv at the buffers, in place per nccl-tests' offsets. */
static void point(struct run *R, struct rb_coll_args *a, const struct rb_coll_counts *cn, bool in_place)
{
    size_t r = (size_t)a->world.rank, tb = a->type_bytes;
    a->in_place = in_place;
    if (in_place) {
        a->send = R->recvbuf + cn->send_inplace_off * r * tb;
        a->recv = R->recvbuf + cn->recv_inplace_off * r * tb;
    } else {
        a->send = R->sendbuf;
        a->recv = R->recvbuf;
    }
}

/*
 * Times -n back-to-back operations after one untimed one (nccl-tests'
 * BenchTime), combines the per-rank times per -a, and checks -c fresh
 * runs, summing wrong elements over ranks.
 */
static void run_half(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo,
                     struct rb_coll_args *a, const struct rb_coll_counts *cn, bool in_place, struct half_res *res)
{
    struct rb_harness *h = R->h;
    point(R, a, cn, in_place);
    t->init(a, 0);
    call(R, t, algo, a);
    RB_MPI_CHECK(MPI_Barrier(h->comm));
    uint64_t t0 = rb_clock_ns();
    for (uint64_t i = 0; i < R->o->iters; i++)
        call(R, t, algo, a);
    double mine_us = (double)(rb_clock_ns() - t0) / 1e3 / (double)R->o->iters;
    RB_MPI_CHECK(MPI_Gather(&mine_us, 1, MPI_DOUBLE, R->times, 1, MPI_DOUBLE, 0, h->comm));
    if (h->rank == 0) {
        double mn = R->times[0], mx = R->times[0], sum = 0;
        for (int i = 0; i < h->size; i++) {
            mn = R->times[i] < mn ? R->times[i] : mn;
            mx = R->times[i] > mx ? R->times[i] : mx;
            sum += R->times[i];
        }
        res->min_us = mn;
        res->max_us = mx;
        res->avg_us = sum / h->size;
        const double by_a[] = {[AVG_RANK0] = R->times[0], [AVG_MEAN] = res->avg_us, [AVG_MIN] = mn,
                               [AVG_MAX] = mx};
        res->time_us = by_a[R->o->average];
        res->algbw = rb_coll_algbw_gbps(rb_coll_algbw_bytes(t->kind, a->count, a->type_bytes, h->size),
                                        res->time_us);
        res->busbw = res->algbw * t->busbw_factor(h->size);
    }
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
}

static cJSON *half_json(const struct half_res *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "time_us", r->time_us);
    cJSON_AddNumberToObject(o, "algbw_gbps", r->algbw);
    cJSON_AddNumberToObject(o, "busbw_gbps", r->busbw);
    if (r->wrong < 0)
        cJSON_AddNullToObject(o, "wrong");
    else
        cJSON_AddNumberToObject(o, "wrong", (double)r->wrong);
    return o;
}

/* nccl-tests' -J record of one half. */
static cJSON *half_nccl_json(const struct half_res *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "time", r->time_us);
    cJSON_AddNumberToObject(o, "alg_bw", r->algbw);
    cJSON_AddNumberToObject(o, "bus_bw", r->busbw);
    if (r->wrong < 0)
        cJSON_AddNullToObject(o, "nwrong");
    else
        cJSON_AddNumberToObject(o, "nwrong", (double)r->wrong);
    return o;
}

/* Records a finished row on rank 0: table line, rows, phase, interval line, -J record. */
static void record_row(struct run *R, const struct row *w, const char *phase_name)
{
    struct rb_harness *h = R->h;
    char line[512];
    int n = rb_coll_table_row_start(line, sizeof line, w->size_bytes, w->count, rb_coll_dtype_name(w->type),
                                    rb_coll_redop_name(w->op), w->root);
    for (int i = 0; i < 2; i++)
        n += rb_coll_table_half(line + n, sizeof line - (size_t)n, w->half[i].time_us, w->half[i].algbw,
                                w->half[i].busbw, w->half[i].wrong);
    text_add(R, "%s\n", line);

    if (R->nrows == R->caprows) {
        size_t cap = R->caprows ? 2 * R->caprows : 64;
        struct row *p = realloc(R->rows, cap * sizeof *p);
        if (!p)
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
        R->rows = p;
        R->caprows = cap;
    }
    R->rows[R->nrows++] = *w;
    for (int i = 0; i < 2; i++) {
        R->bw_sum += w->half[i].busbw;
        R->bw_n++;
        if (w->half[i].wrong > 0)
            R->wrong_total += w->half[i].wrong;
    }

    const char *coll = rb_coll_kind_name(w->kind), *algo = rb_coll_algo_name(w->algo);
    cJSON *cr = cJSON_CreateObject();
    cJSON_AddStringToObject(cr, "coll", coll);
    cJSON_AddStringToObject(cr, "algo", algo);
    cJSON_AddNumberToObject(cr, "size_bytes", (double)w->size_bytes);
    cJSON_AddNumberToObject(cr, "count", (double)w->count);
    cJSON_AddStringToObject(cr, "type", rb_coll_dtype_name(w->type));
    cJSON_AddStringToObject(cr, "redop", rb_coll_redop_name(w->op));
    cJSON_AddNumberToObject(cr, "root", w->root);
    cJSON_AddNumberToObject(cr, "ranks", h->size);
    cJSON_AddNumberToObject(cr, "ranks_per_node", R->ranks_per_node);
    cJSON_AddItemToObject(cr, "oop", half_json(&w->half[0]));
    cJSON_AddItemToObject(cr, "ip", half_json(&w->half[1]));
    cJSON *osu = cJSON_AddObjectToObject(cr, "osu");
    cJSON_AddNumberToObject(osu, "min_us", w->half[0].min_us);
    cJSON_AddNumberToObject(osu, "avg_us", w->half[0].avg_us);
    cJSON_AddNumberToObject(osu, "max_us", w->half[0].max_us);
    cJSON_AddItemToArray(R->coll_rows, cr);

    /* A phase per row, so reports can plot busbw against size. */
    const struct half_res *oop = &w->half[0];
    double bytes = rb_coll_algbw_bytes(w->kind, w->count, rb_coll_dtype_bytes(w->type), h->size);
    cJSON *ph = cJSON_CreateObject();
    cJSON_AddStringToObject(ph, "name", phase_name);
    cJSON_AddStringToObject(ph, "op", coll);
    cJSON_AddStringToObject(ph, "algo", algo);
    cJSON_AddStringToObject(ph, "type", rb_coll_dtype_name(w->type));
    cJSON_AddStringToObject(ph, "redop", rb_coll_redop_name(w->op));
    cJSON_AddNumberToObject(ph, "root", w->root);
    cJSON_AddNumberToObject(ph, "ranks", h->size);
    cJSON_AddNumberToObject(ph, "size_bytes", (double)w->size_bytes);
    cJSON_AddNumberToObject(ph, "elements", (double)w->count);
    cJSON_AddNumberToObject(ph, "count", (double)R->o->iters);
    cJSON_AddNumberToObject(ph, "bytes", bytes * (double)R->o->iters);
    cJSON_AddNumberToObject(ph, "duration_s", oop->time_us * (double)R->o->iters / 1e6);
    cJSON_AddNumberToObject(ph, "throughput_bytes_per_s", oop->algbw * 1e9);
    cJSON_AddNumberToObject(ph, "ops_per_s", oop->time_us > 0 ? 1e6 / oop->time_us : 0);
    cJSON_AddNumberToObject(ph, "time_us", oop->time_us);
    cJSON_AddNumberToObject(ph, "algbw_gbps", oop->algbw);
    cJSON_AddNumberToObject(ph, "busbw_gbps", oop->busbw);
    cJSON_AddItemToObject(ph, "in_place", half_json(&w->half[1]));
    cJSON *errs = cJSON_AddObjectToObject(ph, "errors");
    cJSON_AddNumberToObject(errs, "total", (double)((oop->wrong > 0 ? oop->wrong : 0) +
                                                    (w->half[1].wrong > 0 ? w->half[1].wrong : 0)));
    rb_result_add_phase(&h->result, ph);

    cJSON *iv = cJSON_CreateObject();
    char ts[40];
    rb_clock_iso8601(ts, sizeof ts, rb_clock_wall_ns());
    cJSON_AddStringToObject(iv, "phase", phase_name);
    cJSON_AddStringToObject(iv, "op", coll);
    cJSON_AddNumberToObject(iv, "t_s", (double)(rb_clock_ns() - R->t0_ns) / 1e9);
    cJSON_AddStringToObject(iv, "ts", ts);
    cJSON_AddNumberToObject(iv, "time_us", oop->time_us);
    cJSON_AddNumberToObject(iv, "algbw_gbps", oop->algbw);
    cJSON_AddNumberToObject(iv, "busbw_gbps", oop->busbw);
    rb_result_interval(&h->result, iv);

    char labels[256];
    snprintf(labels, sizeof labels, "coll=\"%s\",algo=\"%s\",dtype=\"%s\",redop=\"%s\",size=\"%zu\"", coll, algo,
             rb_coll_dtype_name(w->type), rb_coll_redop_name(w->op), w->size_bytes);
    rb_harness_metric(h, "railbench_coll_busbw_bytes_per_second", "gauge",
                      "Bus bandwidth (nccl-tests' busbw) of the out-of-place run, bytes per second.", labels,
                      oop->busbw * 1e9);

    if (R->json_results) {
        char root[16];
        cJSON *j = cJSON_CreateObject();
        snprintf(root, sizeof root, "%6d", w->root);
        cJSON_AddNumberToObject(j, "size", (double)w->size_bytes);
        cJSON_AddNumberToObject(j, "count", (double)w->count);
        cJSON_AddStringToObject(j, "type", rb_coll_dtype_name(w->type));
        cJSON_AddStringToObject(j, "redop", rb_coll_redop_name(w->op));
        cJSON_AddStringToObject(j, "root", root);
        cJSON_AddItemToObject(j, "out_of_place", half_nccl_json(&w->half[0]));
        cJSON_AddItemToObject(j, "in_place", half_nccl_json(&w->half[1]));
        cJSON_AddNumberToObject(j, "actual_iterations", (double)R->o->iters);
        char name[64];
        snprintf(name, sizeof name, "%s/%s", coll, algo);
        cJSON_AddStringToObject(j, "experiment_name", name);
        cJSON_AddStringToObject(j, "algorithm", algo);
        cJSON_AddItemToArray(R->json_results, j);
    }
}

/* The args shared by every call of one (collective, type, op, root). */
static void args_for(struct run *R, struct rb_coll_args *a, enum rb_coll_dtype type, enum rb_coll_redop op,
                     int root)
{
    memset(a, 0, sizeof *a);
    a->world = R->world;
    a->node = R->node;
    a->rail = R->rail;
    a->type = type;
    a->type_bytes = rb_coll_dtype_bytes(type);
    a->op = op;
    a->root = root;
    a->scratch = R->scratch;
    a->scratch_bytes = R->scratch_bytes;
    a->chunk_bytes = R->o->chunk;
    a->mpi_type = mpi_type(type);
    a->mpi_op = mpi_op(op, type);
}

/* nccl-tests warms up at the largest and the smallest size before the sweep. */
static void warm_up(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo, struct rb_coll_args *a)
{
    const uint64_t sizes[2] = {R->o->maxbytes, R->o->minbytes};
    for (int s = 0; s < 2 && R->o->warmup; s++) {
        struct rb_coll_counts cn;
        t->counts(sizes[s] / a->type_bytes, R->world.size, &cn);
        a->count = cn.param;
        point(R, a, &cn, false);
        t->init(a, 0);
        for (uint64_t i = 0; i < R->o->warmup; i++)
            call(R, t, algo, a);
    }
}

static void run_sizes(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo, enum rb_coll_dtype type,
                      enum rb_coll_redop op, int root, bool multi)
{
    struct rb_coll_args a;
    args_for(R, &a, type, op, root);
    warm_up(R, t, algo, &a);
    const struct coll_opts *o = R->o;
    for (uint64_t size = o->minbytes; size <= o->maxbytes && !R->stop;) {
        struct rb_coll_counts cn;
        t->counts(size / a.type_bytes, R->world.size, &cn);
        a.count = cn.param;
        struct row w = {.kind = t->kind, .algo = algo, .type = type, .op = op, .root = root,
                        .size_bytes = (cn.send > cn.recv ? cn.send : cn.recv) * a.type_bytes, .count = cn.param};
        run_half(R, t, algo, &a, &cn, false, &w.half[0]);
        run_half(R, t, algo, &a, &cn, true, &w.half[1]);
        if (R->h->rank == 0) {
            char name[160], rootpart[24] = "";
            if (t->rooted && R->root_all)
                snprintf(rootpart, sizeof rootpart, "/root%d", root);
            if (multi)
                snprintf(name, sizeof name, "%s/%s/%s/%s%s/%zu", t->name, rb_coll_algo_name(algo),
                         rb_coll_dtype_name(type), rb_coll_redop_name(op), rootpart, w.size_bytes);
            else
                snprintf(name, sizeof name, "%s/%s%s/%zu", t->name, rb_coll_algo_name(algo), rootpart,
                         w.size_bytes);
            record_row(R, &w, name);
        }
        rb_harness_metrics_update(R->h); /* collective: every rank, after every size */
        if (rb_harness_any_signalled(R->h))
            R->stop = true;
        if (o->stepfactor > 1) {
            if (size > o->maxbytes / o->stepfactor)
                break;
            size *= o->stepfactor;
        } else {
            if (o->maxbytes - size < o->stepbytes)
                break;
            size += o->stepbytes;
        }
    }
}

static void not_applicable(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo, const char *why)
{
    text_add(R, "#\n# %s: not applicable to %s: %s\n", rb_coll_algo_name(algo), t->name, why);
    if (R->h->rank == 0) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "coll", t->name);
        cJSON_AddStringToObject(o, "algo", rb_coll_algo_name(algo));
        cJSON_AddStringToObject(o, "why", why);
        cJSON_AddItemToArray(R->not_applicable, o);
    }
}

static void run_table(struct run *R, const struct rb_coll_test *t, enum rb_coll_algo algo)
{
    if (!t->run[algo]) {
        not_applicable(R, t, algo, t->not_applicable[algo]);
        return;
    }
    if (algo == RB_COLL_ALGO_HIER && !R->hier_ok) {
        not_applicable(R, t, algo, R->hier_why);
        return;
    }
    char head[512];
    rb_coll_table_header_str(head, sizeof head);
    text_add(R, "#\n# Collective test starting: %s, algorithm %s\n#\n%s", t->name, rb_coll_algo_name(algo), head);
    int nops = t->reduces ? R->nops : 1, r0 = R->root_all ? 0 : R->root,
        r1 = t->rooted ? (R->root_all ? R->world.size - 1 : R->root) : r0;
    bool multi = R->ntypes > 1 || nops > 1;
    for (int ti = 0; ti < R->ntypes && !R->stop; ti++)
        for (int oi = 0; oi < nops && !R->stop; oi++)
            for (int root = r0; root <= r1 && !R->stop; root++)
                run_sizes(R, t, algo, R->types[ti], t->reduces ? R->ops[oi] : RB_COLL_NONE,
                          t->rooted ? root : -1, multi);
}

/* busbw per size with one column per algorithm, for --algo lists (rank 0). */
static void comparison(struct run *R, const struct rb_coll_test *t)
{
    size_t first = SIZE_MAX;
    for (size_t i = 0; i < R->nrows; i++)
        if (R->rows[i].kind == t->kind) {
            first = i;
            break;
        }
    if (first == SIZE_MAX || R->nalgos < 2)
        return;
    char line[1024];
    int n = snprintf(line, sizeof line, "#%12s  %8s  %6s  %6s", "size", "type", "redop", "root");
    for (int k = 0; k < R->nalgos; k++)
        n += snprintf(line + n, sizeof line - (size_t)n, "  %7s", rb_coll_algo_name(R->algos[k]));
    text_add(R, "#\n# %s: busbw (GB/s, out-of-place) by algorithm\n%s\n", t->name, line);
    /* Keys in order of first appearance, from the first algorithm that ran. */
    enum rb_coll_algo key_algo = R->rows[first].algo;
    for (size_t i = first; i < R->nrows; i++) {
        const struct row *k = &R->rows[i];
        if (k->kind != t->kind || k->algo != key_algo)
            continue;
        n = snprintf(line, sizeof line, " %12zu  %8s  %6s  %6d", k->size_bytes, rb_coll_dtype_name(k->type),
                     rb_coll_redop_name(k->op), k->root);
        for (int a = 0; a < R->nalgos; a++) {
            const struct row *m = NULL;
            for (size_t j = 0; j < R->nrows && !m; j++) {
                const struct row *c = &R->rows[j];
                if (c->kind == k->kind && c->algo == R->algos[a] && c->type == k->type && c->op == k->op &&
                    c->root == k->root && c->size_bytes == k->size_bytes)
                    m = c;
            }
            if (m)
                n += snprintf(line + n, sizeof line - (size_t)n, "  %7.2f", m->half[0].busbw);
            else
                n += snprintf(line + n, sizeof line - (size_t)n, "  %7s", "-");
        }
        text_add(R, "#%s\n", line + 1);
    }
}

/* The "# Using devices" lines: one per rank, with its node and rail. */
static cJSON *print_devices(struct run *R, int node_index, int local)
{
    struct rb_harness *h = R->h;
    cJSON *mine = cJSON_CreateObject();
    cJSON_AddNumberToObject(mine, "rank", h->rank);
    cJSON_AddNumberToObject(mine, "pid", (double)getpid());
    cJSON_AddStringToObject(mine, "hostname", h->host);
    cJSON_AddNumberToObject(mine, "node", node_index);
    cJSON_AddNumberToObject(mine, "rail", local);
    cJSON *all = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    text_add(R, "#\n# Using devices\n");
    const cJSON *d;
    cJSON_ArrayForEach(d, all)
    {
        int rail = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "rail"));
        text_add(R, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [node %d rail %d] cpu\n",
                 (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "rank")),
                 (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "pid")),
                 cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "hostname")), rail,
                 (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "node")), rail);
    }
    return all;
}

/* nccl-tests' -J document (version 2 layout; the environment is left out, it may hold secrets). */
static cJSON *json_doc_start(struct run *R, int argc, char **argv, cJSON *devices)
{
    const struct coll_opts *o = R->o;
    cJSON *doc = cJSON_CreateObject();
    char ts[40];
    cJSON_AddNumberToObject(doc, "version", 2);
    rb_clock_iso8601(ts, sizeof ts, rb_clock_wall_ns());
    cJSON_AddStringToObject(doc, "start_time", ts);
    cJSON *args = cJSON_AddArrayToObject(doc, "args");
    cJSON_AddItemToArray(args, cJSON_CreateString("railbench"));
    for (int i = 0; i < argc; i++)
        cJSON_AddItemToArray(args, cJSON_CreateString(argv[i]));
    cJSON_AddStringToObject(doc, "railbench_version", rb_version());
    cJSON *cfg = cJSON_AddObjectToObject(doc, "config");
    cJSON_AddNumberToObject(cfg, "nthreads", 1);
    cJSON_AddNumberToObject(cfg, "ngpus", 1);
    cJSON_AddNumberToObject(cfg, "minimum_bytes", (double)o->minbytes);
    cJSON_AddNumberToObject(cfg, "maximum_bytes", (double)o->maxbytes);
    if (o->stepfactor > 1)
        cJSON_AddNumberToObject(cfg, "step_factor", (double)o->stepfactor);
    else
        cJSON_AddNumberToObject(cfg, "step_bytes", (double)o->stepbytes);
    cJSON_AddNumberToObject(cfg, "warmup_iters", (double)o->warmup);
    cJSON_AddNumberToObject(cfg, "iterations", (double)o->iters);
    cJSON_AddNumberToObject(cfg, "aggregated_iterations", 1);
    cJSON_AddNumberToObject(cfg, "validation", (double)o->check);
    cJSON_AddNumberToObject(cfg, "graph", 0);
    cJSON *devs = cJSON_AddArrayToObject(cfg, "devices");
    const cJSON *d;
    cJSON_ArrayForEach(d, devices)
    {
        cJSON *x = cJSON_CreateObject();
        int rail = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "rail"));
        char hex[48];
        snprintf(hex, sizeof hex, "node %d rail %d",
                 (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "node")), rail);
        cJSON_AddNumberToObject(x, "rank", cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "rank")));
        cJSON_AddNumberToObject(x, "group", 0);
        cJSON_AddNumberToObject(x, "pid", cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "pid")));
        cJSON_AddStringToObject(x, "hostname", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "hostname")));
        cJSON_AddNumberToObject(x, "device", rail);
        cJSON_AddStringToObject(x, "device_hex", hex);
        cJSON_AddStringToObject(x, "device_info", "cpu");
        cJSON_AddItemToArray(devs, x);
    }
    R->json_results = cJSON_AddArrayToObject(doc, "results");
    return doc;
}

static void json_doc_finish(struct run *R, cJSON *doc, double avg_bw)
{
    char ts[40];
    cJSON *oob = cJSON_AddObjectToObject(doc, "out_of_bounds");
    cJSON_AddNumberToObject(oob, "count", (double)R->wrong_total);
    cJSON_AddStringToObject(oob, "okay", R->wrong_total ? "false" : "true");
    cJSON *abw = cJSON_AddObjectToObject(doc, "average_bus_bandwidth");
    cJSON_AddNumberToObject(abw, "bandwidth", avg_bw);
    cJSON_AddStringToObject(abw, "okay", "unchecked");
    cJSON_AddArrayToObject(doc, "errors");
    rb_clock_iso8601(ts, sizeof ts, rb_clock_wall_ns());
    cJSON_AddStringToObject(doc, "end_time", ts);
    char *s = cJSON_Print(doc);
    if (!s || rb_file_write_atomic(R->json_path, s, strlen(s)) != 0)
        rb_error("--output_json %s: cannot write the JSON output", R->json_path);
    free(s);
}

/* ---- the command ---- */

/* What the harness checks once the number of ranks is known, before the result directory exists. */
struct precheck {
    const struct coll_opts *o;
    int root, root_all;
    char *json_path;
    size_t json_len;
};

static int precheck(void *ctx, int rank, int size)
{
    const struct precheck *c = ctx;
    const struct coll_opts *o = c->o;
    if (!c->root_all && c->root >= size)
        return rank == 0 ? rb_cli_usage_error("--root: %d is out of range for %d ranks (use 0 to %d, or all)",
                                              c->root, size, size - 1)
                         : RB_EXIT_USAGE;
    if (o->ranks_per_node && (o->ranks_per_node > (uint64_t)size || size % (int)o->ranks_per_node))
        return rank == 0 ? rb_cli_usage_error("--ranks-per-node: %llu does not divide the %d ranks (use a divisor of %d)",
                                              (unsigned long long)o->ranks_per_node, size, size)
                         : RB_EXIT_USAGE;
    if (o->json && rank == 0) {
        int jrc = reserve_json(o->json, c->json_path, c->json_len);
        if (jrc)
            return rb_cli_usage_error("--output_json: cannot create \"%s\": %s (give a writable path)", o->json,
                                      strerror(-jrc));
    }
    return 0;
}

int rb_coll_main(int argc, char **argv)
{
    struct coll_opts o = {.minbytes = 32 * MIB, .maxbytes = 32 * MIB, .stepbytes = MIB, .stepfactor = 1,
                          .iters = 20, .warmup = 5, .check = 1, .chunk = 128 * 1024, .op = RB_COLL_SUM,
                          .dtype = RB_COLL_FLOAT, .average = AVG_MEAN, .root = "0", .algo = "mpi"};
    const struct rb_opt opts[] = {
        {"minbytes", 'b', RB_OPT_SIZE, &o.minbytes, "SIZE", "smallest size", NULL},
        {"maxbytes", 'e', RB_OPT_SIZE, &o.maxbytes, "SIZE", "largest size", NULL},
        {"stepbytes", 'i', RB_OPT_SIZE, &o.stepbytes, "SIZE", "fixed increment between sizes (without -f)", NULL},
        {"stepfactor", 'f', RB_OPT_U64, &o.stepfactor, "N", "multiply the size by N (1: step by -i)", NULL},
        {"iters", 'n', RB_OPT_U64, &o.iters, "N", "timed iterations per size", NULL},
        {"warmup_iters", 'w', RB_OPT_U64, &o.warmup, "N", "untimed iterations at the largest and smallest size",
         NULL},
        {"check", 'c', RB_OPT_U64, &o.check, "N", "check iterations per size; 0 disables (#wrong N/A)", NULL},
        {"op", 'o', RB_OPT_CHOICE, &o.op, "OP", "reduction", OP_CHOICES},
        {"datatype", 'd', RB_OPT_CHOICE, &o.dtype, "TYPE", "element type", DTYPE_CHOICES},
        {"root", 'r', RB_OPT_STR, &o.root, "RANK", "root of broadcast and reduce, or all", NULL},
        {"average", 'a', RB_OPT_CHOICE, &o.average, "0|1|2|3",
         "reported time across ranks: 0 rank 0, 1 mean, 2 min, 3 max", "0|1|2|3"},
        {"output_json", 'J', RB_OPT_STR, &o.json, "FILE", "also write nccl-tests' JSON results to FILE", NULL},
        {"algo", 0, RB_OPT_STR, &o.algo, "LIST", "mpi, ring, rd, rhd, tree, hier, all, or a comma-separated list",
         NULL},
        {"ranks-per-node", 0, RB_OPT_U64, &o.ranks_per_node, "L",
         "treat each L consecutive ranks as one node (0: one node per host)", NULL},
        {"chunk", 0, RB_OPT_SIZE, &o.chunk, "SIZE", "pipeline chunk of the tree and chain algorithms", NULL},
        {0},
    };
    const struct rb_cmd_spec spec = {
        "railbench coll allreduce|allgather|reducescatter|broadcast|reduce|alltoall|sendrecv|all [options]",
        "Time collectives over the MPI ranks with nccl-tests' flags and table, MPI's own algorithm and "
        "ring, recursive doubling, Rabenseifner, tree and rail-aware hierarchical ones.",
        opts, 1, 1};
    struct rb_cli cli;
    int rc = rb_cli_parse(&cli, &spec, argc, argv);
    if (rc != 0) {
        rb_cli_free(&cli);
        return rc == RB_CLI_HELP ? RB_EXIT_OK : RB_EXIT_USAGE;
    }

    static struct run R;
    memset(&R, 0, sizeof R);
    R.o = &o;
    const char *which = cli.args[0];
    enum rb_coll_kind kind;
    if (strcmp(which, "all") == 0) {
        for (int k = 0; k < RB_COLL_KINDS; k++)
            R.tests[R.ntests++] = rb_coll_test_get((enum rb_coll_kind)k);
    } else if (rb_coll_kind_parse(which, &kind) == 0) {
        R.tests[R.ntests++] = rb_coll_test_get(kind);
    } else {
        fprintf(stderr,
                "railbench: coll: unknown collective \"%s\" (use allreduce, allgather, reducescatter, broadcast, "
                "reduce, alltoall, sendrecv or all)\n",
                which);
        rb_cli_free(&cli);
        return RB_EXIT_USAGE;
    }
    if (o.op == RB_COLL_REDOPS) {
        for (int i = 0; i < RB_COLL_REDOPS; i++)
            R.ops[R.nops++] = (enum rb_coll_redop)i;
    } else {
        R.ops[R.nops++] = (enum rb_coll_redop)o.op;
    }
    if (o.dtype == DTYPE_ALL) {
        for (int i = 0; i < RB_COLL_DTYPES; i++)
            R.types[R.ntypes++] = (enum rb_coll_dtype)i;
    } else {
        R.types[R.ntypes++] = o.dtype < RB_COLL_DTYPES ? (enum rb_coll_dtype)o.dtype : alias_type[o.dtype - RB_COLL_DTYPES];
    }
    if (parse_algos(o.algo, R.algos, &R.nalgos) != 0 || parse_root(o.root, &R.root, &R.root_all) != 0 ||
        check_opts(&o) != 0) {
        rb_cli_free(&cli);
        return RB_EXIT_USAGE;
    }

    char json_path[4096] = "";
    struct precheck pc = {.o = &o, .root = R.root, .root_all = R.root_all, .json_path = json_path,
                          .json_len = sizeof json_path};
    char command[64];
    snprintf(command, sizeof command, "coll %s", which);
    struct rb_harness h;
    rc = rb_harness_init(&h, rb_cli_strdup(&cli, command), &cli,
                         &(struct rb_harness_opts){.mpi = true, .precheck = precheck, .ctx = &pc});
    if (rc != 0) {
        rb_cli_free(&cli);
        return rc;
    }
    R.h = &h;
    R.t0_ns = rb_clock_ns();
    if (h.rank == 0) {
        R.coll_rows = cJSON_CreateArray();
        R.not_applicable = cJSON_CreateArray();
        R.json_path = json_path;
    }
    mpi_types_create();
    setup_comms(&R);
    setup_buffers(&R);

    /* Preamble, in nccl-tests' words. */
    char algos[128] = "";
    for (int i = 0, n = 0; i < R.nalgos; i++)
        n += snprintf(algos + n, sizeof algos - (size_t)n, "%s%s", i ? " " : "", rb_coll_algo_name(R.algos[i]));
    if (json_path[0])
        text_add(&R, "# Writing JSON output to %s\n", json_path);
    text_add(&R, "# railbench %s coll %s: %d ranks on %d hosts, %d ranks per node%s, algorithms: %s\n",
             rb_version(), which, h.size, h.host_count, R.ranks_per_node,
             o.ranks_per_node ? " (--ranks-per-node)" : "", algos);
    text_add(&R,
             "# nThread 1 nGpus 1 minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %llu iters: %llu "
             "agg iters: 1 validation: %llu graph: 0\n",
             (unsigned long long)o.minbytes, (unsigned long long)o.maxbytes,
             (unsigned long long)(o.stepfactor > 1 ? o.stepfactor : o.stepbytes),
             o.stepfactor > 1 ? "factor" : "bytes", (unsigned long long)o.warmup, (unsigned long long)o.iters,
             (unsigned long long)o.check);
    int node_index = o.ranks_per_node ? h.rank / (int)o.ranks_per_node : h.host_index;
    int local = o.ranks_per_node ? h.rank % (int)o.ranks_per_node : h.local_rank;
    cJSON *devices = print_devices(&R, node_index, local);
    cJSON *doc = json_path[0] && h.rank == 0 ? json_doc_start(&R, argc, argv, devices) : NULL;
    cJSON_Delete(devices);

    for (int ti = 0; ti < R.ntests && !R.stop; ti++)
        for (int ai = 0; ai < R.nalgos && !R.stop; ai++)
            run_table(&R, R.tests[ti], R.algos[ai]);

    double avg_bw = R.bw_n ? R.bw_sum / (double)R.bw_n : 0;
    if (h.rank == 0) {
        for (int ti = 0; ti < R.ntests; ti++)
            comparison(&R, R.tests[ti]);
        char foot[256];
        rb_coll_table_footer(foot, sizeof foot, R.wrong_total, avg_bw);
        text_add(&R, "%s# Collective test concluded: railbench coll %s\n", foot, which);

        cJSON *summary = cJSON_CreateObject();
        cJSON_AddItemToObject(summary, "collective_rows", R.coll_rows);
        cJSON_AddNumberToObject(summary, "avg_busbw_gbps", avg_bw);
        cJSON_AddNumberToObject(summary, "wrong_total", (double)R.wrong_total);
        cJSON_AddItemToObject(summary, "not_applicable", R.not_applicable);
        cJSON_AddNumberToObject(summary, "ranks", h.size);
        cJSON_AddNumberToObject(summary, "ranks_per_node", R.ranks_per_node);
        rb_result_set(&h.result, "summary", summary);
        if (o.check)
            rb_result_check(&h.result, "wrong", R.wrong_total == 0, "%lld wrong elements in %zu rows",
                            R.wrong_total, R.nrows);
        rb_result_write_table(&h.result, R.out.p ? R.out.p : "");
        if (doc) {
            json_doc_finish(&R, doc, avg_bw);
            cJSON_Delete(doc);
        }
    }

    mpi_types_free();
    RB_MPI_CHECK(MPI_Comm_free(&R.node.comm));
    RB_MPI_CHECK(MPI_Comm_free(&R.rail.comm));
    free(R.sendbuf);
    free(R.recvbuf);
    free(R.scratch);
    free(R.times);
    free(R.rows);
    free(R.out.p);
    rc = rb_harness_finish(&h, NULL, 0);
    rb_cli_free(&cli);
    return rc;
}
