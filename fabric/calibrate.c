/* Calibration of the collective model: fits latency and bandwidth per link class to a railbench coll result. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "railbench/file.h"
#include "railbench/units.h"
#include "sim_int.h"

#define NPARAM (2 * RB_LINK_CLASSES + 1) /* latency and 1/bandwidth per class, then 1/reduce throughput */
#define MAX_ITER 30

static int errf(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int errf(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* The whole file at path (at most 256 MiB), NUL-terminated; NULL after a message in err. Caller frees. */
static char *read_text(const char *path, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t n;
    int rc = rb_file_read(path, 256 * RB_MIB, &buf, &n);
    if (rc == -EFBIG || rc == -ENOMEM || rc == -EISDIR || rc == -EIO)
        errf(err, errlen, "cannot read %s", path); /* opened, but not read whole */
    else if (rc != 0)
        errf(err, errlen, "cannot read %s: %s", path, strerror(-rc));
    return rc == 0 ? buf : NULL;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(it) ? it->valuedouble : NAN;
}

int rb_calib_read(const char *path, struct rb_calib_row **rows, size_t *n, size_t *skipped, char *err,
                  size_t errlen)
{
    char file[4200];
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(file, sizeof file, "%s/result.json", path);
    else
        snprintf(file, sizeof file, "%s", path);
    *rows = NULL;
    *n = *skipped = 0;
    char *text = read_text(file, err, errlen);
    if (!text)
        return -EINVAL;
    cJSON *j = cJSON_Parse(text);
    free(text);
    if (!j)
        return errf(err, errlen, "%s: invalid JSON", file);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "summary"),
                                                         "collective_rows");
    if (!cJSON_IsArray(list)) {
        cJSON_Delete(j);
        return errf(err, errlen, "%s: not a railbench coll result (no summary.collective_rows)", file);
    }
    size_t cap = (size_t)cJSON_GetArraySize(list);
    struct rb_calib_row *out = calloc(cap ? cap : 1, sizeof *out);
    if (!out) {
        cJSON_Delete(j);
        return -ENOMEM;
    }
    size_t k = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, list)
    {
        struct rb_calib_row r = {0};
        const char *coll = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "coll"));
        const char *algo = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "algo"));
        double size = num(it, "size_bytes"), ranks = num(it, "ranks"), rpn = num(it, "ranks_per_node");
        double t_us = num(cJSON_GetObjectItemCaseSensitive(it, "oop"), "time_us");
        if (!(t_us > 0))
            t_us = num(cJSON_GetObjectItemCaseSensitive(it, "ip"), "time_us");
        bool ok = !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "predicted")) && coll && algo &&
                  rb_coll_kind_parse(coll, &r.coll) == 0 && size > 0 && ranks >= 2 && rpn >= 1 &&
                  ranks == floor(ranks) && rpn == floor(rpn) && ranks <= RB_TOPO_MAX_GPUS &&
                  fmod(ranks, rpn) == 0 && t_us > 0;
        if (ok) {
            enum rb_sim_algo a;
            if (strcmp(algo, "mpi") == 0)
                r.algo = RB_CALIB_ALGO_BEST;
            else if (rb_sim_algo_parse(algo, &a) == 0 && rb_sim_supports(r.coll, a))
                r.algo = (int)a;
            else
                ok = false;
        }
        if (!ok) {
            (*skipped)++;
            continue;
        }
        snprintf(r.algo_name, sizeof r.algo_name, "%s", algo);
        r.size_bytes = size;
        r.ranks = (int)ranks;
        r.ranks_per_node = (int)rpn;
        r.measured_s = t_us * 1e-6;
        out[k++] = r;
    }
    cJSON_Delete(j);
    if (k == 0) {
        free(out);
        return errf(err, errlen, "%s: no row the model can use (%zu skipped: predicted, unknown collective or "
                    "algorithm, or missing times)", file, *skipped);
    }
    *rows = out;
    *n = k;
    return 0;
}

/* ---- fitting ---- */

struct group {
    int ranks, rpn;
    struct rb_sim *sim;
};

static void params_to_vec(const struct rb_link *link, double reduce_bw, double *v)
{
    for (int c = 0; c < RB_LINK_CLASSES; c++) {
        v[c] = link[c].lat_s;
        v[RB_LINK_CLASSES + c] = 1.0 / link[c].bw_bytes_per_s;
    }
    v[NPARAM - 1] = 1.0 / reduce_bw;
}

static void vec_to_params(const double *v, struct rb_link *link, double *reduce_bw)
{
    for (int c = 0; c < RB_LINK_CLASSES; c++) {
        link[c].lat_s = v[c];
        link[c].bw_bytes_per_s = 1.0 / v[RB_LINK_CLASSES + c];
    }
    *reduce_bw = 1.0 / v[NPARAM - 1];
}

static void terms_to_vec(const struct rb_sim_terms *x, double *v)
{
    for (int c = 0; c < RB_LINK_CLASSES; c++) {
        v[c] = x->lat[c];
        v[RB_LINK_CLASSES + c] = x->bytes[c];
    }
    v[NPARAM - 1] = x->reduce_bytes;
}

/*
 * The cheapest physical value of parameter j (rb_calib_physical's bounds):
 * 1 ns of latency, 100 Tbit/s of bandwidth, 100 TB/s of reduction.
 */
static double cheapest(int j)
{
    if (j < RB_LINK_CLASSES)
        return 1e-9;
    return j < NPARAM - 1 ? 1.0 / (100e12 / 8) : 1.0 / 1e14;
}

/* Time and split of one row at the sim's current parameters; "mpi" rows take the fastest modelled algorithm. */
static int row_terms(struct rb_sim *sim, const struct rb_calib_row *r, double *t, struct rb_sim_terms *x)
{
    if (r->algo != RB_CALIB_ALGO_BEST)
        return rb_sim_time(sim, r->coll, (enum rb_sim_algo)r->algo, r->size_bytes, t, x);
    int found = -EINVAL;
    for (int a = 0; a < RB_SIM_ALGOS; a++) {
        struct rb_sim_terms y;
        double ty;
        if (!rb_sim_supports(r->coll, (enum rb_sim_algo)a) ||
            rb_sim_time(sim, r->coll, (enum rb_sim_algo)a, r->size_bytes, &ty, &y) != 0)
            continue;
        if (found != 0 || ty < *t) {
            *t = ty;
            *x = y;
            found = 0;
        }
    }
    return found;
}

/* Solves the k x k system A x = b in place (Gaussian elimination, partial pivoting). Returns 0 or -EDOM. */
static int solve(double *A, double *b, int k)
{
    for (int c = 0; c < k; c++) {
        int piv = c;
        for (int r = c + 1; r < k; r++)
            if (fabs(A[r * k + c]) > fabs(A[piv * k + c]))
                piv = r;
        if (!(fabs(A[piv * k + c]) > 1e-300))
            return -EDOM;
        if (piv != c) {
            for (int j = 0; j < k; j++) {
                double tmp = A[c * k + j];
                A[c * k + j] = A[piv * k + j];
                A[piv * k + j] = tmp;
            }
            double tmp = b[c];
            b[c] = b[piv];
            b[piv] = tmp;
        }
        for (int r = c + 1; r < k; r++) {
            double f = A[r * k + c] / A[c * k + c];
            for (int j = c; j < k; j++)
                A[r * k + j] -= f * A[c * k + j];
            b[r] -= f * b[c];
        }
    }
    for (int c = k - 1; c >= 0; c--) {
        double s = b[c];
        for (int j = c + 1; j < k; j++)
            s -= A[c * k + j] * b[j];
        b[c] = s / A[c * k + c];
    }
    return 0;
}

/*
 * Scaled least squares: minimise sum_i (M_i . phi - 1)^2 + lambda sum_j (phi_j - 1)^2
 * over phi >= floor, where phi_j = theta_j / theta0_j and M_ij = coef_ij theta0_j / measured_i,
 * i.e. relative errors, pulled gently towards the defaults so that parameters
 * the rows do not constrain keep their default. Negative solutions are
 * pinned at the floor (pinned[j] set) and the rest solved again (a small active set).
 */
static int fit_scaled(const double *M, size_t n, double *phi, bool *pinned)
{
    const double floor_phi = 1e-6;
    memset(pinned, 0, NPARAM * sizeof *pinned);
    double H[NPARAM * NPARAM], g[NPARAM];
    double scale = 0;
    for (int j = 0; j < NPARAM; j++) {
        double d = 0;
        for (size_t i = 0; i < n; i++)
            d += M[i * NPARAM + j] * M[i * NPARAM + j];
        if (d > scale)
            scale = d;
    }
    double lambda = scale > 0 ? 1e-7 * scale : 1.0;
    for (int round = 0; round <= NPARAM; round++) {
        int idx[NPARAM] = {0}, k = 0;
        for (int j = 0; j < NPARAM; j++)
            if (!pinned[j])
                idx[k++] = j;
        for (int a = 0; a < k; a++) {
            double rhs = lambda;
            for (size_t i = 0; i < n; i++) {
                double resid = 1.0;
                for (int j = 0; j < NPARAM; j++)
                    if (pinned[j])
                        resid -= M[i * NPARAM + j] * floor_phi;
                rhs += M[i * NPARAM + idx[a]] * resid;
            }
            g[a] = rhs;
            for (int b = 0; b < k; b++) {
                double h = a == b ? lambda : 0;
                for (size_t i = 0; i < n; i++)
                    h += M[i * NPARAM + idx[a]] * M[i * NPARAM + idx[b]];
                H[a * k + b] = h;
            }
        }
        if (solve(H, g, k) != 0)
            return -EDOM;
        bool again = false;
        for (int a = 0; a < k; a++) {
            phi[idx[a]] = g[a];
            if (g[a] < floor_phi) {
                pinned[idx[a]] = true;
                again = true;
            }
        }
        for (int j = 0; j < NPARAM; j++)
            if (pinned[j])
                phi[j] = floor_phi;
        if (!again)
            return 0;
    }
    return 0;
}

/* The model of row r's (ranks, ranks per node) among groups[0..ng). */
static struct rb_sim *group_sim(const struct group *groups, size_t ng, const struct rb_calib_row *r)
{
    for (size_t g = 0; g < ng; g++)
        if (groups[g].ranks == r->ranks && groups[g].rpn == r->ranks_per_node)
            return groups[g].sim;
    return NULL;
}

/*
 * One model per (ranks, ranks per node) of the rows: the base design with
 * the run's nodes and GPUs, into groups (n entries), counted in *ng.
 * Returns 0, -EINVAL with a message in err, or -ENOMEM.
 */
static int make_groups(const struct rb_topo *base, bool pxn, const struct rb_calib_row *rows, size_t n,
                       struct group *groups, size_t *ng, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        if (group_sim(groups, *ng, &rows[i]))
            continue;
        struct rb_topo t = *base;
        t.nodes = rows[i].ranks / rows[i].ranks_per_node;
        t.gpus_per_node = rows[i].ranks_per_node;
        if (rb_topo_kind_def(t.kind)->railed && t.nics_per_node < t.gpus_per_node) {
            t.nics_per_node = t.gpus_per_node;
            t.rails = t.gpus_per_node;
        }
        char why[256];
        if (rb_topo_finish(&t, why, sizeof why) != 0)
            return errf(err, errlen, "%d ranks with %d per node do not fit the topology: %s", rows[i].ranks,
                        rows[i].ranks_per_node, why);
        int rc = rb_sim_create(&t, pxn, &groups[*ng].sim);
        if (rc != 0) {
            if (rc == -EINVAL)
                errf(err, errlen, "%d ranks cannot be modelled", rows[i].ranks);
            return rc;
        }
        groups[*ng].ranks = rows[i].ranks;
        groups[*ng].rpn = rows[i].ranks_per_node;
        (*ng)++;
    }
    return 0;
}

int rb_calib_fit(const struct rb_topo *base, bool pxn, struct rb_calib_row *rows, size_t n, struct rb_calib *out,
                 char *err, size_t errlen)
{
    struct group *groups = calloc(n, sizeof *groups);
    double *M = calloc(n * NPARAM, sizeof *M);
    double *coef = calloc(n * NPARAM, sizeof *coef);
    size_t ng = 0;
    int rc = 0;
    if (!groups || !M || !coef) {
        rc = -ENOMEM;
        goto fail;
    }
    memset(out, 0, sizeof *out);

    if ((rc = make_groups(base, pxn, rows, n, groups, &ng, err, errlen)) != 0)
        goto fail;

    double theta0[NPARAM], theta[NPARAM];
    params_to_vec(base->link, base->reduce_bytes_per_s, theta0);
    memcpy(theta, theta0, sizeof theta);

    bool used[NPARAM] = {false}, pinned[NPARAM] = {false};
    for (int iter = 0; iter < MAX_ITER; iter++) {
        struct rb_link link[RB_LINK_CLASSES];
        double reduce_bw;
        vec_to_params(theta, link, &reduce_bw);
        for (size_t g = 0; g < ng; g++)
            rb_sim_set_params(groups[g].sim, link, reduce_bw);
        memset(used, 0, sizeof used);
        for (size_t i = 0; i < n; i++) {
            struct rb_sim_terms x;
            double t;
            if ((rc = row_terms(group_sim(groups, ng, &rows[i]), &rows[i], &t, &x)) != 0)
                goto fail;
            if (iter == 0)
                rows[i].default_s = t;
            terms_to_vec(&x, &coef[i * NPARAM]);
            for (int j = 0; j < NPARAM; j++) {
                M[i * NPARAM + j] = coef[i * NPARAM + j] * theta0[j] / rows[i].measured_s;
                if (coef[i * NPARAM + j] != 0)
                    used[j] = true;
            }
        }
        double phi[NPARAM];
        if (fit_scaled(M, n, phi, pinned) != 0) {
            rc = errf(err, errlen, "the fit is singular");
            goto fail;
        }
        double change = 0;
        for (int j = 0; j < NPARAM; j++) {
            double v = phi[j] * theta0[j];
            double d = fabs(v - theta[j]) / theta0[j];
            if (d > change)
                change = d;
            theta[j] = v;
        }
        out->iterations = iter + 1;
        /* The bottleneck of a step can move with the parameters: refit until it stays put. */
        if (change < 1e-9)
            break;
    }

    vec_to_params(theta, out->link, &out->reduce_bytes_per_s);
    /*
     * A parameter held at the floor, or cheaper than any hardware, is one
     * the times do not grow with (a bandwidth where time stays flat with
     * size): the data bound it to nothing, so it keeps its default rather
     * than an absurd value.
     */
    for (int j = 0; j < NPARAM; j++)
        if (used[j] && (pinned[j] || theta[j] < cheapest(j))) {
            used[j] = false;
            out->unbounded++;
        }
    for (int c = 0; c < RB_LINK_CLASSES; c++) {
        out->lat_fitted[c] = used[c];
        out->bw_fitted[c] = used[RB_LINK_CLASSES + c];
        if (!used[c])
            out->link[c].lat_s = base->link[c].lat_s;
        if (!used[RB_LINK_CLASSES + c])
            out->link[c].bw_bytes_per_s = base->link[c].bw_bytes_per_s;
    }
    out->reduce_fitted = used[NPARAM - 1];
    if (!out->reduce_fitted)
        out->reduce_bytes_per_s = base->reduce_bytes_per_s;
    for (size_t g = 0; g < ng; g++)
        rb_sim_set_params(groups[g].sim, out->link, out->reduce_bytes_per_s);
    double e0 = 0, e1 = 0;
    for (size_t i = 0; i < n; i++) {
        struct rb_sim_terms x;
        if ((rc = row_terms(group_sim(groups, ng, &rows[i]), &rows[i], &rows[i].fitted_s, &x)) != 0)
            goto fail;
        e0 += fabs(rows[i].default_s - rows[i].measured_s) / rows[i].measured_s;
        e1 += fabs(rows[i].fitted_s - rows[i].measured_s) / rows[i].measured_s;
    }
    out->err_default = e0 / (double)n;
    out->err_fitted = e1 / (double)n;
fail:
    for (size_t g = 0; g < ng; g++)
        rb_sim_free(groups[g].sim);
    free(groups);
    free(M);
    free(coef);
    return rc;
}
