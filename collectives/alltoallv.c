/*
 * alltoallv: rank i sends rank j the bytes of a traffic pattern and rank j
 * keeps what it receives in source order (nccl-tests 2.19's
 * src/alltoallv.cu): the distance-weighted pattern blended with the
 * uniform one by --spread, or a traffic-matrix file.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo_int.h"
#include "railbench/cli.h"
#include "railbench/file.h"

static struct {
    double spread;      /* 0 uniform .. 1 distance-weighted */
    size_t *matrix;     /* dim x dim bytes, each aligned down to 16; NULL: the generated pattern */
    int dim;
    const char *path;
    double scale;
    size_t *m;          /* the n x n pattern of the last (n, total) asked for */
    int m_n;
    size_t m_total;
    uint64_t *got_from; /* bytes from each source in the last pairwise call (MPI_Get_count) */
    int got_n;
    bool got_valid;
} st = {.spread = 1.0, .scale = 1.0};

size_t rb_coll_alltoallv_pair_bytes(int i, int j, int n, size_t total_bytes)
{
    if (st.matrix)
        return st.matrix[(size_t)i * (size_t)st.dim + (size_t)j];
    if (n == 1)
        return total_bytes & ~(size_t)15;
    int distance = (j - i + n) % n;
    double sum_distances = (double)n * (n - 1) / 2;
    double uniform = (double)total_bytes / n, weighted = distance * (double)total_bytes / sum_distances;
    /* nccl-tests' AlltoAllvGetPeerBytesDistanceWeighted, aligned down to 16 bytes */
    return (size_t)((1.0 - st.spread) * uniform + st.spread * weighted) & ~(size_t)15;
}

/* The n x n pattern (row: source) for total_bytes per rank (generated) or from the matrix; NULL when out of memory. */
static const size_t *pattern(int n, size_t total_bytes)
{
    if (st.m && st.m_n == n && (st.matrix || st.m_total == total_bytes))
        return st.m;
    size_t *m = realloc(st.m, (size_t)n * (size_t)n * sizeof *m);
    if (!m)
        return NULL;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            m[(size_t)i * n + j] = rb_coll_alltoallv_pair_bytes(i, j, n, total_bytes);
    st.m = m;
    st.m_n = n;
    st.m_total = total_bytes;
    return m;
}

/* Reads a whitespace-separated square matrix of byte counts, scaled and aligned down to 16 (nccl-tests' rules). */
static int read_matrix(const char *path, double scale)
{
    char *text = NULL;
    size_t len = 0;
    int rc = rb_file_read(path, 64u << 20, &text, &len);
    if (rc)
        return rb_cli_usage_error("--matrix: cannot read \"%s\": %s (give a file of whitespace-separated byte counts)",
                                  path, strerror(-rc));
    size_t rows = 0, cols = 0, in_row = 0, nvals = 0, cap = 0;
    size_t *vals = NULL;
    for (char *p = text;;) {
        while (*p && isspace((unsigned char)*p) && *p != '\n')
            p++;
        if (*p == '\n' || !*p) {
            if (in_row) {
                if (rows && in_row != cols) {
                    rc = rb_cli_usage_error("--matrix %s: row %zu has %zu values, row 1 has %zu (give a square matrix)",
                                            path, rows + 1, in_row, cols);
                    goto fail;
                }
                cols = in_row;
                rows++;
                in_row = 0;
            }
            if (!*p++)
                break;
            continue;
        }
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno == ERANGE || (*end && !isspace((unsigned char)*end)) || !(v >= 0) ||
            v * scale > 9e18) {
            rc = rb_cli_usage_error("--matrix %s: row %zu value %zu is not a byte count (give numbers >= 0)", path,
                                    rows + 1, in_row + 1);
            goto fail;
        }
        if (nvals == cap) {
            cap = cap ? 2 * cap : 64;
            size_t *nv = realloc(vals, cap * sizeof *nv);
            if (!nv) {
                rc = rb_cli_usage_error("--matrix %s: out of memory", path);
                goto fail;
            }
            vals = nv;
        }
        vals[nvals++] = (size_t)(v * scale) & ~(size_t)15;
        in_row++;
        p = end;
    }
    if (rows == 0 || rows != cols) {
        rc = rb_cli_usage_error("--matrix %s: %zu rows of %zu values (give a square matrix, one row per rank)", path,
                                rows, cols);
        goto fail;
    }
    free(text);
    st.matrix = vals;
    st.dim = (int)rows;
    return 0;
fail:
    free(text);
    free(vals);
    return rc;
}

/* An environment variable as a number in [lo, hi], or def when unset or unparsable (nccl-tests' rules). */
static double env_double(const char *name, double def, double lo, double hi)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return def;
    double v = strtod(s, &end);
    if (*end)
        return def;
    return v < lo ? lo : v > hi ? hi : v;
}

int rb_coll_alltoallv_setup(const struct rb_coll_a2av_opts *o)
{
    st.spread = o->spread >= 0 ? o->spread : env_double("NCCL_TESTS_ALLTOALLV_SPREAD", 1.0, 0.0, 1.0);
    if (st.spread > 1)
        return rb_cli_usage_error("--spread: %g is out of range (use 0, uniform, to 1, distance-weighted)", o->spread);
    st.scale = o->scale >= 0 ? o->scale : env_double("NCCL_TESTS_ALLTOALLV_MATRIX_SCALE", 1.0, 0.0, 1e18);
    st.path = o->matrix ? o->matrix : getenv("NCCL_TESTS_ALLTOALLV_MATRIX_FILE");
    return st.path ? read_matrix(st.path, st.scale) : 0;
}

int rb_coll_alltoallv_check(int nranks, uint64_t minbytes, uint64_t maxbytes)
{
    if (!st.matrix)
        return 0;
    if (nranks > st.dim)
        return rb_cli_usage_error("--matrix %s: %d ranks need a %dx%d matrix, the file has %dx%d", st.path, nranks,
                                  nranks, nranks, st.dim, st.dim);
    if (minbytes != maxbytes)
        return rb_cli_usage_error("--matrix: -b and -e must be equal (the sizes come from the matrix), e.g. -b %llu "
                                  "-e %llu", (unsigned long long)maxbytes, (unsigned long long)maxbytes);
    size_t most = 0;
    for (int i = 0; i < nranks; i++) {
        size_t s = 0, r = 0;
        for (int j = 0; j < nranks; j++) {
            s += st.matrix[(size_t)i * st.dim + j];
            r += st.matrix[(size_t)j * st.dim + i];
        }
        most = s > most ? s : r > most ? r : most;
    }
    if (most > maxbytes)
        return rb_cli_usage_error("--maxbytes: %llu is below the %zu bytes one rank of --matrix %s sends or receives "
                                  "(use -b %zu -e %zu)", (unsigned long long)maxbytes, most, st.path, most, most);
    return 0;
}

void rb_coll_alltoallv_free(void)
{
    free(st.matrix);
    free(st.m);
    free(st.got_from);
    st.matrix = st.m = NULL;
    st.got_from = NULL;
    st.m_n = st.got_n = 0;
}

/* The busiest rank's elements sent and received (nccl-tests' AlltoAllvComputeMaxCounts), for total_bytes per rank. */
static void max_counts(int n, size_t total_bytes, size_t tb, size_t *send, size_t *recv)
{
    *send = *recv = 0;
    for (int i = 0; i < n; i++) {
        size_t s = 0, r = 0;
        for (int j = 0; j < n; j++) {
            s += rb_coll_alltoallv_pair_bytes(i, j, n, total_bytes) / tb;
            r += rb_coll_alltoallv_pair_bytes(j, i, n, total_bytes) / tb;
        }
        *send = s > *send ? s : *send;
        *recv = r > *recv ? r : *recv;
    }
}

/* nccl-tests: the count column is the aligned per-peer share (0 with a matrix); the buffers fit the busiest rank. */
static void counts(size_t count, size_t type_bytes, int nranks, bool legacy, struct rb_coll_counts *o)
{
    size_t base = st.matrix ? 0 : rb_coll_per_rank_count(count, nranks, type_bytes, legacy);
    *o = (struct rb_coll_counts){.param = base};
    max_counts(nranks, base * (size_t)nranks * type_bytes, type_bytes, &o->send, &o->recv);
}

static const size_t *pattern_of(const struct rb_coll_args *a)
{
    return pattern(a->world.size, a->count * (size_t)a->world.size * a->type_bytes);
}

/* Rank i's stream is rank i's values, indexed from 0; the receive buffer is poisoned up to the busiest rank's size. */
static void init(const struct rb_coll_args *a, uint64_t seed)
{
    const int n = a->world.size, me = a->world.rank;
    const size_t *m = pattern_of(a);
    size_t sent = 0, most_s, most_r;
    max_counts(n, a->count * (size_t)n * a->type_bytes, a->type_bytes, &most_s, &most_r);
    if (!a->in_place)
        rb_coll_data_poison(a->recv, most_r * a->type_bytes);
    for (int j = 0; m && j < n; j++)
        sent += m[(size_t)me * n + j];
    rb_coll_data_fill_value(a->send, sent / a->type_bytes, a->type, me, 0, seed);
    if (a->in_place) /* the stream sits where the output goes; the tail past it must stay poisoned */
        rb_coll_data_poison((char *)a->recv + sent, most_r * a->type_bytes > sent ? most_r * a->type_bytes - sent : 0);
    st.got_valid = false;
}

/* Block from source i holds source i's values from where its blocks for ranks before me end; the tail stays poison. */
static uint64_t check(const struct rb_coll_args *a, uint64_t seed)
{
    const int n = a->world.size, me = a->world.rank;
    const size_t *m = pattern_of(a), tb = a->type_bytes;
    if (!m)
        return 1;
    uint64_t wrong = 0;
    size_t at = 0, most_s, most_r;
    for (int i = 0; i < n; i++) {
        size_t skip = 0, bytes = m[(size_t)i * n + me];
        for (int k = 0; k < me; k++)
            skip += m[(size_t)i * n + k];
        wrong += rb_coll_data_check_value((const char *)a->recv + at, bytes / tb, a->type, i, skip / tb, seed);
        at += bytes;
    }
    max_counts(n, a->count * (size_t)n * tb, tb, &most_s, &most_r);
    if (a->in_place) { /* in place, my own stream may reach past my blocks and stays there */
        size_t sent = 0;
        for (int j = 0; j < n; j++)
            sent += m[(size_t)me * n + j];
        at = sent > at ? sent : at;
    }
    for (size_t e = at / tb; e < most_r; e++) { /* an element past my blocks that is not poison was written */
        const unsigned char *x = (const unsigned char *)a->recv + e * tb;
        for (size_t b = 0; b < tb; b++)
            if (x[b] != 0xa5) {
                wrong++;
                break;
            }
    }
    return wrong;
}

/* In place, the stream is copied aside first: the blocks that arrive overwrite it. */
static const void *source(const struct rb_coll_args *a, const size_t *m)
{
    if (!a->in_place)
        return a->send;
    size_t sent = 0;
    for (int j = 0; j < a->world.size; j++)
        sent += m[(size_t)a->world.rank * a->world.size + j];
    memcpy(rb_algo_scratch_work(a), a->send, sent);
    return rb_algo_scratch_work(a);
}

static int run_mpi(const struct rb_coll_args *a)
{
    const size_t *m = pattern_of(a);
    return m ? rb_a2av_mpi(a, m, source(a, m), a->recv) : -ENOMEM;
}

static int run_ring(const struct rb_coll_args *a)
{
    const size_t *m = pattern_of(a);
    if (!m)
        return -ENOMEM;
    if (st.got_n != a->world.size) {
        uint64_t *g = realloc(st.got_from, (size_t)a->world.size * sizeof *g);
        if (!g)
            return -ENOMEM;
        st.got_from = g;
        st.got_n = a->world.size;
    }
    int rc = rb_a2av_pairwise(a, m, source(a, m), a->recv, st.got_from);
    st.got_valid = rc == 0;
    return rc;
}

static int run_hier(const struct rb_coll_args *a)
{
    const size_t *m = pattern_of(a);
    return m ? rb_a2av_pxn(a, m, source(a, m), a->recv) : -ENOMEM;
}

/* The pairwise exchange counts what arrived from each source (MPI_Get_count); the others cannot say. */
static bool received(const struct rb_coll_args *a, uint64_t *bytes_from)
{
    if (!st.got_valid || st.got_n != a->world.size)
        return false;
    memcpy(bytes_from, st.got_from, (size_t)st.got_n * sizeof *bytes_from);
    return true;
}

const struct rb_coll_test rb_coll_alltoallv = {
    .kind = RB_COLL_ALLTOALLV,
    .name = "alltoallv",
    .counts = counts,
    .init = init,
    .run = {[RB_COLL_ALGO_MPI] = run_mpi, [RB_COLL_ALGO_RING] = run_ring, [RB_COLL_ALGO_HIER] = run_hier},
    .not_applicable =
        {
            [RB_COLL_ALGO_RD] = "every pair exchanges distinct data, so there is nothing to double",
            [RB_COLL_ALGO_RHD] = "Rabenseifner's algorithm is a reduction",
            [RB_COLL_ALGO_TREE] = "a tree moves data to or from one root, and alltoallv has none",
        },
    .check = check,
    .received = received,
};
