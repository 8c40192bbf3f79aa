/* railbench load train --format parquet: the files' layout, and reading them as a fast loader does (footer, projected chunks). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/log.h"
#include "railbench/units.h"
#include "../engine/payload_int.h"
#include "fmt_int.h"
#include "train_cmd_int.h"

#define MAX_COLUMNS 100000
#define MAX_FOOTER (256u << 20)

struct train_pqcfg {
    struct rb_pq_spec spec;
    struct rb_pq_layout *layout;    /* NULL while the sample size is unknown (reading what exists) */
    char **cols;                    /* --columns, or NULL: every column */
    size_t ncols;
    char schema[32];                /* "scalar:N" or "list:N" */
};

/* Parses --parquet-schema KIND:N. */
static int parse_schema(const char *s, struct rb_pq_spec *spec)
{
    const char *colon = strchr(s, ':');
    uint64_t n;
    if (!colon || rb_parse_u64(colon + 1, &n) || !n || n > MAX_COLUMNS)
        return -EINVAL;
    if ((size_t)(colon - s) == 6 && strncmp(s, "scalar", 6) == 0)
        spec->kind = RB_PQ_SCALAR;
    else if ((size_t)(colon - s) == 4 && strncmp(s, "list", 4) == 0)
        spec->kind = RB_PQ_LIST;
    else
        return -EINVAL;
    spec->ncols = n;
    return 0;
}

/* Splits --columns A,B,... into names (none empty, none twice). */
static int parse_columns(const char *s, char ***out, size_t *n)
{
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    char **v = calloc(cap, sizeof *v);
    if (!v)
        return -ENOMEM;
    size_t got = 0;
    int rc = 0;
    for (const char *p = s; !rc;) {
        size_t len = strcspn(p, ",");
        if (!len || !(v[got] = strndup(p, len))) {
            rc = len ? -ENOMEM : -EINVAL;
            break;
        }
        for (size_t k = 0; k < got && !rc; k++)
            rc = strcmp(v[k], v[got]) == 0 ? -EINVAL : 0;
        got++;
        if (!p[len])
            break;
        p += len + 1;
    }
    if (rc) {
        for (size_t k = 0; k < got; k++)
            free(v[k]);
        free(v);
        return rc;
    }
    *out = v;
    *n = got;
    return 0;
}

int rb_train_workload_resolve(struct train_args *a, struct rb_cli *cli)
{
    const struct rb_train_preset *p = NULL;
    if (a->workload && !(p = rb_train_preset_find(a->workload)))
        return rb_cli_usage_error("--workload \"%s\": expected %s", a->workload, rb_train_preset_list);
    a->preset = p;
    if (a->scale_s) {
        double f;
        if (!p || !p->files)
            return rb_cli_usage_error("--scale: give --workload %s (a preset whose files it scales)",
                                      "unet3d, retinanet, flux or dlrm");
        if (a->objects || a->filelist)
            return rb_cli_usage_error("--scale and --objects/--filelist: give one of them");
        char *end;
        f = strtod(a->scale_s, &end);
        if (end == a->scale_s || *end || !(f > 0) || f > 1000)
            return rb_cli_usage_error("--scale \"%s\": expected a factor above 0, at most 1000 (e.g. 0.001)", a->scale_s);
        a->objects = (uint64_t)llround((double)p->files * f);
        if (!a->objects)
            a->objects = 1;
    }
    /* v3.0's format, unless --format was given. */
    if (p && p->format && !rb_cli_given(cli, "--format"))
        a->format = strcmp(p->format, "npz") == 0 ? TRAIN_FORMAT_NPZ
                    : strcmp(p->format, "jpeg") == 0 ? TRAIN_FORMAT_JPEG : TRAIN_FORMAT_PARQUET;
    return 0;
}

/* --format npz: the files' sizes (no ZIP64: under 4 GiB) and the payload layout. */
static int npz_resolve(struct train_args *a)
{
    if (a->ckpt_every)
        return rb_cli_usage_error("--format npz and --checkpoint-every: give one of them (the run's payloads are npz "
                                  "files, a checkpoint's would be too)");
    if (!a->sample_known)
        return 0;
    double most = (double)a->sample_bytes * (double)a->spo + 8.0 * (double)a->sample_stdev * sqrt((double)a->spo);
    if (most + 1024 + 8.0 * (double)a->spo >= 4294967295.0)
        return rb_cli_usage_error("--format npz: --sample-size x --samples-per-object (and 8 stdevs) must stay under "
                                  "4 GiB a file (no ZIP64)");
    a->npz = (struct rb_npz_spec){a->spo, a->sample_bytes, a->sample_stdev};
    a->payload = (struct rb_payload_layout){rb_npz_fill, &a->npz};
    return 0;
}

/* --format jpeg: one image a file, the pool coded for the sample size, and the payload layout. */
static int jpeg_resolve(struct train_args *a)
{
    if (a->ckpt_every)
        return rb_cli_usage_error("--format jpeg and --checkpoint-every: give one of them (the run's payloads are "
                                  "JPEGs, a checkpoint's would be too)");
    if (a->spo != 1)
        return rb_cli_usage_error("--format jpeg with --samples-per-object %" PRIu64 ": a JPEG holds one image (1)",
                                  a->spo);
    if (!a->sample_known)
        return 0;
    if (a->sample_bytes > (256ull << 20))
        return rb_cli_usage_error("--format jpeg: --sample-size at most 256 MiB an image");
    char err[256];
    struct rb_jpeg_spec s = {a->seed, a->sample_bytes, a->sample_stdev};
    int rc = rb_jpeg_layout_new(&s, &a->jpeg, err, sizeof err);
    if (rc == -ENOMEM)
        return rb_cli_usage_error("out of memory for the JPEG rows");
    if (rc)
        return rb_cli_usage_error("--format jpeg --sample-size %" PRIu64 ": %s", a->sample_bytes, err);
    a->payload = (struct rb_payload_layout){rb_jpeg_fill, a->jpeg};
    return 0;
}

int rb_train_formats_resolve(struct train_args *a)
{
    bool pq_opts = a->columns || a->pq_schema_s || a->rg_rows_s || a->rg_read;
    if (a->decode && a->format != TRAIN_FORMAT_NPZ && a->format != TRAIN_FORMAT_JPEG)
        return rb_cli_usage_error("--decode: give --format npz or jpeg (Parquet chunks are read without decoding)");
    if (a->verify && !a->sample_known && a->format >= TRAIN_FORMAT_PARQUET)
        return rb_cli_usage_error("--format %s --verify: give --sample-size SIZE or --workload (the files' layout the "
                                  "bytes are checked against)", a->format == TRAIN_FORMAT_PARQUET ? "parquet"
                                  : a->format == TRAIN_FORMAT_NPZ ? "npz" : "jpeg");
    if (a->format == TRAIN_FORMAT_NPZ && !pq_opts)
        return npz_resolve(a);
    if (a->format == TRAIN_FORMAT_JPEG && !pq_opts)
        return jpeg_resolve(a);
    if (a->format != TRAIN_FORMAT_PARQUET) {
        if (a->columns || a->pq_schema_s || a->rg_rows_s || a->rg_read)
            return rb_cli_usage_error("--columns, --parquet-schema, --row-group-size, --row-group-read: give "
                                      "--format parquet");
        return 0;
    }
    struct train_pqcfg *c = calloc(1, sizeof *c);
    if (!c)
        return rb_cli_usage_error("out of memory");
    a->pq = c;
    const struct rb_train_preset *p = a->preset;
    const char *schema = a->pq_schema_s ? a->pq_schema_s : p && p->pq_schema ? p->pq_schema : "scalar:1";
    if (parse_schema(schema, &c->spec))
        return rb_cli_usage_error("--parquet-schema \"%s\": expected scalar:N or list:N (N columns, 1 to %d)", schema,
                                  MAX_COLUMNS);
    snprintf(c->schema, sizeof c->schema, "%s", schema);
    uint64_t rg = p && p->pq_rg_rows ? p->pq_rg_rows : a->spo;
    if (a->rg_rows_s && (rb_parse_u64(a->rg_rows_s, &rg) || !rg))
        return rb_cli_usage_error("--row-group-size \"%s\": expected rows, 1 or more", a->rg_rows_s);
    c->spec.rg_rows = rg < a->spo ? rg : a->spo;
    c->spec.rows = a->spo;
    const char *cols = a->columns ? a->columns : p ? p->pq_columns : NULL;
    if (cols && parse_columns(cols, &c->cols, &c->ncols))
        return rb_cli_usage_error("--columns \"%s\": expected column names separated by commas (none empty, none twice)",
                                  cols);
    if (a->ckpt_every)
        return rb_cli_usage_error("--format parquet and --checkpoint-every: give one of them (the run's payloads are "
                                  "Parquet files, a checkpoint's would be too)");
    if (!a->sample_known)
        return 0; /* reading files that exist: the footers say what they hold */
    if (a->sample_stdev)
        return rb_cli_usage_error("--format parquet with --sample-size \"%s\": give a fixed size (every row of a file "
                                  "has the same columns)", a->sample_s ? a->sample_s : p->name);
    c->spec.row_bytes = a->sample_bytes;
    char err[256];
    int rc = rb_pq_layout_new(&c->spec, &c->layout, err, sizeof err);
    if (rc == -ENOMEM)
        return rb_cli_usage_error("out of memory for the Parquet layout");
    if (rc)
        return rb_cli_usage_error("--format parquet --parquet-schema %s --sample-size %" PRIu64 ": %s", schema,
                                  a->sample_bytes, err);
    /* What --populate writes and --verify expects, in every protocol: this layout's files. */
    a->payload = (struct rb_payload_layout){rb_pq_fill, c->layout};
    return 0;
}

uint64_t rb_train_pq_file_bytes(const struct train_args *a)
{
    return a->pq && a->pq->layout ? rb_pq_file_bytes(a->pq->layout) : 0;
}

void rb_train_pq_cfg_free(struct train_args *a)
{
    struct train_pqcfg *c = a->pq;
    a->payload = (struct rb_payload_layout){0}; /* its ctx goes below */
    rb_jpeg_layout_free(a->jpeg);
    a->jpeg = NULL;
    if (!c)
        return;
    rb_pq_layout_free(c->layout);
    for (size_t k = 0; k < c->ncols; k++)
        free(c->cols[k]);
    free(c->cols);
    free(c);
    a->pq = NULL;
}

/* ---- reading ---- */

struct train_pqread {
    struct train_ixcache ix;        /* per file once read: its struct rb_pq_index */
    bool ix_init;
    struct train_reader *rd;
    unsigned nrd;
    atomic_uint_least64_t footers, footer_requests, footer_bytes, chunk_requests, projected_bytes, requested_bytes;
    atomic_flag said;               /* this rank said why a footer could not be used */
};

int rb_train_pq_new(struct rb_train_run *R)
{
    if (R->a->format != TRAIN_FORMAT_PARQUET)
        return 0;
    struct train_pqread *X = calloc(1, sizeof *X);
    if (!X)
        return -ENOMEM;
    R->pqr = X;
    atomic_flag_clear(&X->said);
    X->ix_init = true;
    int bad = rb_train_ixcache_init(&X->ix, R->all->n);
    X->nrd = R->nloaders;
    return bad || rb_train_readers_new(R, X->nrd, 64, &X->rd) ? -ENOMEM : 0;
}

static void index_free(void *p)
{
    rb_pq_index_free(p);
    free(p);
}

void rb_train_pq_free(struct rb_train_run *R)
{
    struct train_pqread *X = R->pqr;
    if (!X || R->abandoned) /* a read thread left in a stalled file system call may still come back to it */
        return;
    if (X->ix_init)
        rb_train_ixcache_free(&X->ix, index_free);
    rb_train_readers_free(X->rd, X->nrd);
    free(X);
    R->pqr = NULL;
}

struct pq_read_ctx {
    struct rb_train_run *R;
    struct train_reader *rd;
};

/* The footer of the object q names: its last 8 bytes, then the footer in one ranged read; parsed into ix. */
static int read_footer(struct rb_train_run *R, struct train_rget *q, struct rb_pq_index *ix, char *err, size_t errlen)
{
    struct train_pqread *X = R->pqr;
    const struct train_pqcfg *c = R->a->pq;
    unsigned char tail[8];
    q->buf = tail;
    int rc = rb_train_rget_read(q, 0, 8, true, err, errlen);
    atomic_fetch_add(&X->footer_requests, 1);
    atomic_fetch_add(&X->footer_bytes, q->got);
    if (rc)
        return rc;
    if (q->total == UINT64_MAX) {
        snprintf(err, errlen, "the server did not say the object's size (no Content-Range in the answer to a Range GET)");
        return -EIO;
    }
    uint64_t flen;
    if (q->got < 8 || q->total < 8) {
        snprintf(err, errlen, "not a Parquet file (%" PRIu64 " bytes: no footer)", q->total);
        return -EINVAL;
    }
    if ((rc = rb_pq_footer_len(tail, q->total, &flen, err, errlen)))
        return rc;
    if (flen > MAX_FOOTER) {
        snprintf(err, errlen, "its footer is %" PRIu64 " bytes, more than %u MiB", flen, MAX_FOOTER >> 20);
        return -EINVAL;
    }
    unsigned char *footer = malloc(flen ? flen : 1);
    if (!footer)
        return -ENOMEM;
    q->buf = footer;
    uint64_t data_end = q->total - 8 - flen;
    rc = flen ? rb_train_rget_read(q, data_end, (size_t)flen, false, err, errlen) : 0;
    atomic_fetch_add(&X->footer_requests, 1);
    atomic_fetch_add(&X->footer_bytes, q->got);
    if (!rc && q->got != flen) {
        snprintf(err, errlen, "its footer came back short (%zu of %" PRIu64 " bytes)", q->got, flen);
        rc = -EIO;
    }
    if (!rc)
        rc = rb_pq_index_parse(footer, (size_t)flen, data_end, (const char *const *)c->cols, c->ncols, ix, err, errlen);
    free(footer);
    if (!rc && ix->rows != R->a->spo) {
        snprintf(err, errlen, "holds %" PRIu64 " rows (its footer), --samples-per-object is %" PRIu64, ix->rows,
                 R->a->spo);
        rb_pq_index_free(ix);
        rc = -EINVAL;
    }
    return rc;
}

/* Reads file i's footer into a new index. Returns 0 or -errno after one error line. */
static int read_index(void *arg, size_t i, void **out)
{
    struct pq_read_ctx *x = arg;
    struct rb_train_run *R = x->R;
    struct train_pqread *X = R->pqr;
    char name[RB_OBJSET_NAME_BYTES], err[512] = "";
    struct train_rget q = {.t = R->t, .name = rb_objset_name(R->all, i, name), .timeout_ns = R->a->tgt.timeout_ns,
                           .easy = x->rd->easy, .watch = x->rd->watch};
    struct rb_pq_index *ix = calloc(1, sizeof *ix);
    if (!ix)
        return -ENOMEM;
    int rc = rb_train_rget_open(&q, err, sizeof err);
    if (!rc)
        rc = read_footer(R, &q, ix, err, sizeof err);
    rb_train_rget_close(&q);
    if (rc) {
        if (!atomic_flag_test_and_set(&X->said))
            rb_error("--format parquet: %s \"%s\": %s", rb_target_name(R->t), q.name, err);
        free(ix);
        return rc;
    }
    atomic_fetch_add(&X->footers, 1);
    *out = ix;
    return 0;
}

/* The row group that starts at row r, or -1 (r is inside one). */
static int64_t group_at(const struct rb_pq_index *ix, uint64_t r)
{
    uint64_t lo = 0, hi = ix->nrg;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (ix->rg_first[mid] < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ix->nrg && ix->rg_first[lo] == r ? (int64_t)lo : -1;
}

/* Adds row group g of file f: its projected chunks, one range each, or one range over them (--row-group-read). */
static int add_group(struct train_pqread *X, struct train_reader *rd, size_t *n, uint32_t f, const struct rb_pq_index *ix,
                     uint64_t g, bool span)
{
    if (rb_train_reader_reserve(rd, *n, ix->nproj))
        return -ENOMEM;
    uint64_t lo = UINT64_MAX, hi = 0, proj = 0;
    for (uint64_t p = 0; p < ix->nproj; p++) {
        uint64_t off = ix->off[g * ix->nproj + p], len = ix->len[g * ix->nproj + p];
        proj += len;
        if (!len)
            continue;
        lo = off < lo ? off : lo;
        hi = off + len > hi ? off + len : hi;
        if (!span) {
            rd->idx[*n] = f;
            rd->off[*n] = off;
            rd->len[(*n)++] = len;
            atomic_fetch_add(&X->requested_bytes, len);
        }
    }
    if (span && hi > lo) {
        rd->idx[*n] = f;
        rd->off[*n] = lo;
        rd->len[(*n)++] = hi - lo;
        atomic_fetch_add(&X->requested_bytes, hi - lo);
    }
    atomic_fetch_add(&X->projected_bytes, proj);
    return 0;
}

int rb_train_pq_fetch(struct rb_train_run *R, struct loader *l, const uint32_t *stream, size_t nnames, uint64_t k,
                      const volatile int *stop)
{
    struct train_pqread *X = R->pqr;
    const struct train_args *a = R->a;
    struct train_reader *rd = &X->rd[l->id];
    rd->watch = rb_fetcher_watch(l->f);
    size_t n = 0;
    /* Batch k takes samples [k b, (k+1) b): sample j is row j % spo of file j / spo; a row group is read by the batch
     * that takes its first row (its other rows come from memory, as a row-group reader holds them). */
    for (uint64_t j = k * a->batch; j < (k + 1) * a->batch && j / a->spo < nnames; j++) {
        uint32_t f = stream[j / a->spo];
        void *p;
        struct pq_read_ctx ctx = {R, rd};
        int rc = rb_train_ixcache_get(&X->ix, f, read_index, &ctx, &p);
        if (rc) /* the reader said why (or the watchdog did); out of memory is the loader's to say */
            return rc == -ENOMEM ? rc : -ECANCELED;
        int64_t g = group_at(p, j % a->spo);
        if (g >= 0 && (rc = add_group(X, rd, &n, f, p, (uint64_t)g, a->rg_read)))
            return rc;
    }
    atomic_fetch_add(&X->chunk_requests, n);
    return rb_fetcher_get_ranges(l->f, R->all, rd->idx, rd->off, rd->len, n, l->local, NULL, stop);
}

/* The first bytes of the data set's first file against what its format starts with; "" when they match. */
static const char *first_bytes_problem(const struct train_args *a, const unsigned char *b, size_t n)
{
    if (a->format == TRAIN_FORMAT_JPEG)
        return n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff ? "" : "not a JPEG (no SOI marker at its start)";
    if (n < 30 || memcmp(b, "PK\x03\x04", 4) != 0)
        return "not an npz file (no zip local header at its start)";
    size_t len = (size_t)b[26] | (size_t)b[27] << 8;
    if (len < 4 || 30 + len > n || memcmp(b + 30 + len - 4, ".npy", 4) != 0)
        return "not an npz file (its first zip member is not a .npy array)";
    return "";
}

int rb_train_check_format(struct rb_train_run *R)
{
    const struct train_args *a = R->a;
    struct rb_harness *h = R->h;
    if ((a->format != TRAIN_FORMAT_NPZ && a->format != TRAIN_FORMAT_JPEG) || a->populate || !R->all->n)
        return 0;
    int status = 0;
    if (h->rank == 0) {
        char name[RB_OBJSET_NAME_BYTES], err[512] = "";
        unsigned char buf[128];
        struct train_rget q = {.t = R->t, .name = rb_objset_name(R->all, 0, name), .timeout_ns = a->tgt.timeout_ns,
                               .buf = buf};
        if (!rb_target_can(R->t, RB_TCAP_FILES) && !(q.easy = curl_easy_init()))
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
        int rc = rb_train_rget_open(&q, err, sizeof err);
        if (!rc)
            rc = rb_train_rget_read(&q, 0, sizeof buf, false, err, sizeof err);
        rb_train_rget_close(&q);
        curl_easy_cleanup(q.easy);
        const char *why = rc ? err : first_bytes_problem(a, buf, q.got);
        if (*why) {
            rb_error("--format %s: %s \"%s\": %s", a->format == TRAIN_FORMAT_JPEG ? "jpeg" : "npz",
                     rb_target_name(R->t), q.name, why);
            status = RB_EXIT_RUNTIME;
        }
    }
    if (h->mpi)
        RB_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, h->comm));
    return status;
}

void rb_train_pq_record(struct rb_train_run *R, cJSON *dataset)
{
    const struct train_args *a = R->a;
    struct rb_harness *h = R->h;
    struct train_pqread *X = R->pqr;
    if (a->format != TRAIN_FORMAT_PARQUET)
        return;
    uint64_t mine[6] = {0}, sum[6];
    if (X) {
        mine[0] = atomic_load(&X->footers);
        mine[1] = atomic_load(&X->footer_requests);
        mine[2] = atomic_load(&X->footer_bytes);
        mine[3] = atomic_load(&X->chunk_requests);
        mine[4] = atomic_load(&X->projected_bytes);
        mine[5] = atomic_load(&X->requested_bytes);
    }
    memcpy(sum, mine, sizeof sum);
    if (h->mpi)
        RB_MPI_CHECK(MPI_Reduce(mine, sum, 6, MPI_UINT64_T, MPI_SUM, 0, h->comm));
    if (h->rank != 0 || !dataset)
        return;
    const struct train_pqcfg *c = a->pq;
    cJSON *q = cJSON_AddObjectToObject(dataset, "parquet");
    cJSON_AddStringToObject(q, "schema", c->schema);
    cJSON_AddItemToObject(q, "row_group_rows", rb_json_u64(c->spec.rg_rows));
    cJSON_AddItemToObject(q, "file_bytes", c->layout ? rb_json_u64(rb_pq_file_bytes(c->layout)) : cJSON_CreateNull());
    if (c->cols)
        cJSON_AddItemToObject(q, "columns", cJSON_CreateStringArray((const char *const *)c->cols, (int)c->ncols));
    else
        cJSON_AddNullToObject(q, "columns");
    cJSON_AddBoolToObject(q, "row_group_read", a->rg_read);
    cJSON_AddItemToObject(q, "footers", rb_json_u64(sum[0]));
    cJSON_AddItemToObject(q, "footer_requests", rb_json_u64(sum[1]));
    cJSON_AddItemToObject(q, "footer_bytes", rb_json_u64(sum[2]));
    cJSON_AddItemToObject(q, "chunk_requests", rb_json_u64(sum[3]));
    cJSON_AddItemToObject(q, "projected_bytes", rb_json_u64(sum[4]));
    cJSON_AddItemToObject(q, "requested_bytes", rb_json_u64(sum[5]));
    cJSON_AddItemToObject(q, "bytes_read", rb_json_u64(R->read_bytes));
    char r[32], p[32];
    rb_format_size(r, sizeof r, R->read_bytes);
    rb_format_size(p, sizeof p, sum[4]);
    rb_info("--format parquet: read %s of column chunks, %s projected (%s); %" PRIu64 " footer(s) in %" PRIu64
            " request(s)", r, p, c->cols ? "the --columns" : "every column", sum[0], sum[1]);
}
