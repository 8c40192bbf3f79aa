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


size_t rb_coll_alltoallv_pair_bytes(const struct rb_coll_a2av *p, int i, int j, int n, size_t total_bytes)
{
    if (p->matrix)
        return p->matrix[(size_t)i * (size_t)p->dim + (size_t)j];
    if (n == 1)
        return total_bytes & ~(size_t)15;
    int distance = (j - i + n) % n;
    double sum_distances = (double)n * (n - 1) / 2;
    double uniform = (double)total_bytes / n, weighted = distance * (double)total_bytes / sum_distances;
    /* nccl-tests' AlltoAllvGetPeerBytesDistanceWeighted, aligned down to 16 bytes */
    return (size_t)((1.0 - p->spread) * uniform + p->spread * weighted) & ~(size_t)15;
}

/* The n x n pattern (row: source) for total_bytes per rank (generated) or from the matrix; NULL when out of memory. */
static const size_t *pattern(struct rb_coll_a2av *p, int n, size_t total_bytes)
{
    if (p->m && p->m_n == n && (p->matrix || p->m_total == total_bytes))
        return p->m;
    size_t *m = realloc(p->m, (size_t)n * (size_t)n * sizeof *m);
    if (!m)
        return NULL;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            m[(size_t)i * n + j] = rb_coll_alltoallv_pair_bytes(p, i, j, n, total_bytes);
    p->m = m;
    p->m_n = n;
    p->m_total = total_bytes;
    return m;
}

/* Reads a whitespace-separated square matrix of byte counts, scaled and aligned down to 16 (nccl-tests' rules). */
static int read_matrix(struct rb_coll_a2av *pat, const char *path, double scale)
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
    pat->matrix = vals;
    pat->dim = (int)rows;
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

int rb_coll_alltoallv_setup(const struct rb_coll_a2av_opts *o, struct rb_coll_a2av *p)
{
    rb_coll_alltoallv_free(p);
    *p = (struct rb_coll_a2av){0};
    p->spread = o->spread >= 0 ? o->spread : env_double("NCCL_TESTS_ALLTOALLV_SPREAD", 1.0, 0.0, 1.0);
    if (p->spread > 1)
        return rb_cli_usage_error("--spread: %g is out of range (use 0, uniform, to 1, distance-weighted)", o->spread);
    p->scale = o->scale >= 0 ? o->scale : env_double("NCCL_TESTS_ALLTOALLV_MATRIX_SCALE", 1.0, 0.0, 1e18);
    p->path = o->matrix ? o->matrix : getenv("NCCL_TESTS_ALLTOALLV_MATRIX_FILE");
    return p->path ? read_matrix(p, p->path, p->scale) : 0;
}

int rb_coll_alltoallv_check(const struct rb_coll_a2av *p, int nranks, uint64_t minbytes, uint64_t maxbytes)
{
    if (!p->matrix)
        return 0;
    if (nranks > p->dim)
        return rb_cli_usage_error("--matrix %s: %d ranks need a %dx%d matrix, the file has %dx%d", p->path, nranks,
                                  nranks, nranks, p->dim, p->dim);
    if (minbytes != maxbytes)
        return rb_cli_usage_error("--matrix: -b and -e must be equal (the sizes come from the matrix), e.g. -b %llu "
                                  "-e %llu", (unsigned long long)maxbytes, (unsigned long long)maxbytes);
    size_t most = 0;
    for (int i = 0; i < nranks; i++) {
        size_t s = 0, r = 0;
        for (int j = 0; j < nranks; j++) {
            s += p->matrix[(size_t)i * p->dim + j];
            r += p->matrix[(size_t)j * p->dim + i];
        }
        most = s > most ? s : r > most ? r : most;
    }
    if (most > maxbytes)
        return rb_cli_usage_error("--maxbytes: %llu is below the %zu bytes one rank of --matrix %s sends or receives "
                                  "(use -b %zu -e %zu)", (unsigned long long)maxbytes, most, p->path, most, most);
    return 0;
}

void rb_coll_alltoallv_free(struct rb_coll_a2av *p)
{
    free(p->matrix);
    free(p->m);
    free(p->got_from);
    p->matrix = p->m = NULL;
    p->got_from = NULL;
    p->m_n = p->got_n = 0;
    p->got_valid = false;
}

/* The busiest rank's elements sent and received (nccl-tests' AlltoAllvComputeMaxCounts), for total_bytes per rank. */
static void max_counts(const struct rb_coll_a2av *p, int n, size_t total_bytes, size_t tb, size_t *send, size_t *recv)
{
    *send = *recv = 0;
    for (int i = 0; i < n; i++) {
        size_t s = 0, r = 0;
        for (int j = 0; j < n; j++) {
            s += rb_coll_alltoallv_pair_bytes(p, i, j, n, total_bytes) / tb;
            r += rb_coll_alltoallv_pair_bytes(p, j, i, n, total_bytes) / tb;
        }
        *send = s > *send ? s : *send;
        *recv = r > *recv ? r : *recv;
    }
}

/* nccl-tests: the count column is the aligned per-peer share (0 with a matrix); the buffers fit the busiest rank. */
static void counts(const struct rb_coll_args *a, size_t count, size_t type_bytes, int nranks, bool legacy,
                   struct rb_coll_counts *o)
{
    size_t base = a->a2av->matrix ? 0 : rb_coll_per_rank_count(count, nranks, type_bytes, legacy);
    *o = (struct rb_coll_counts){.param = base};
    max_counts(a->a2av, nranks, base * (size_t)nranks * type_bytes, type_bytes, &o->send, &o->recv);
}

static const size_t *pattern_of(const struct rb_coll_args *a)
{
    return pattern(a->a2av, a->world.size, a->count * (size_t)a->world.size * a->type_bytes);
}

/* Rank i's stream is rank i's values, indexed from 0; the receive buffer is poisoned up to the busiest rank's size. */
static void init(const struct rb_coll_args *a, uint64_t seed)
{
    const int n = a->world.size, me = a->world.rank;
    const size_t *m = pattern_of(a);
    size_t sent = 0, most_s, most_r;
    max_counts(a->a2av, n, a->count * (size_t)n * a->type_bytes, a->type_bytes, &most_s, &most_r);
    if (!a->in_place)
        rb_coll_data_poison(a->recv, most_r * a->type_bytes);
    for (int j = 0; m && j < n; j++)
        sent += m[(size_t)me * n + j];
    rb_coll_data_fill_value(a->send, sent / a->type_bytes, a->type, me, 0, seed);
    if (a->in_place) /* the stream sits where the output goes; the tail past it must stay poisoned */
        rb_coll_data_poison((char *)a->recv + sent, most_r * a->type_bytes > sent ? most_r * a->type_bytes - sent : 0);
    a->a2av->got_valid = false;
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
    max_counts(a->a2av, n, a->count * (size_t)n * tb, tb, &most_s, &most_r);
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
    struct rb_coll_a2av *p = a->a2av;
    if (p->got_n != a->world.size) {
        uint64_t *g = realloc(p->got_from, (size_t)a->world.size * sizeof *g);
        if (!g)
            return -ENOMEM;
        p->got_from = g;
        p->got_n = a->world.size;
    }
    int rc = rb_a2av_pairwise(a, m, source(a, m), a->recv, p->got_from);
    p->got_valid = rc == 0;
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
    const struct rb_coll_a2av *p = a->a2av;
    if (!p->got_valid || p->got_n != a->world.size)
        return false;
    memcpy(bytes_from, p->got_from, (size_t)p->got_n * sizeof *bytes_from);
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
