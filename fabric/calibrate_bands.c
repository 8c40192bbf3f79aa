/* Calibration per message-size band: a piecewise alpha-beta fit, its choice of bands, and physical-range checks. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* A band needs this many distinct sizes: two fix alpha and beta exactly, a third checks them. */
#define MIN_SIZES_PER_BAND 3
/* Another band is taken only when it cuts the mean error by 2 points and by a fifth: no fitting of noise. */
#define BAND_GAIN_ABS 0.02
#define BAND_GAIN_REL 0.8

static int by_size(const void *a, const void *b)
{
    const struct rb_calib_row *x = a, *y = b;
    return (x->size_bytes > y->size_bytes) - (x->size_bytes < y->size_bytes);
}

bool rb_calib_physical(const struct rb_calib *c, char *why, size_t len)
{
    /* Wide on purpose: from a slow Ethernet hop to beyond NVLink 5 (14.4 Tbit/s per GPU). */
    const double lat_lo = 1e-9, lat_hi = 1.0, bw_lo = 1e6 / 8, bw_hi = 100e12 / 8, red_lo = 1e6, red_hi = 1e14;
    for (int k = 0; k < RB_LINK_CLASSES; k++) {
        const char *name = rb_link_class_name((enum rb_link_class)k);
        double lat = c->link[k].lat_s, bw = c->link[k].bw_bytes_per_s;
        if (c->lat_fitted[k] && !(lat >= lat_lo && lat <= lat_hi)) {
            snprintf(why, len, "%s latency %.3g us is outside 0.001 us .. 1 s", name, lat * 1e6);
            return false;
        }
        if (c->bw_fitted[k] && !(bw >= bw_lo && bw <= bw_hi)) {
            snprintf(why, len, "%s bandwidth %.3g Gbit/s is outside 0.001 .. 100000 Gbit/s", name,
                     bw / RB_GBIT_BYTES_PER_S);
            return false;
        }
    }
    if (c->reduce_fitted && !(c->reduce_bytes_per_s >= red_lo && c->reduce_bytes_per_s <= red_hi)) {
        snprintf(why, len, "reduction throughput %.3g GB/s is outside 0.001 .. 100000 GB/s",
                 c->reduce_bytes_per_s / 1e9);
        return false;
    }
    return true;
}

/* Fits rows[first, first + n) as one band into b; its rows get their own default_s and fitted_s. */
static int fit_band(const struct rb_topo *base, bool pxn, struct rb_calib_row *rows, size_t first, size_t n,
                    struct rb_calib_band *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    b->first = first;
    b->n = n;
    b->min_bytes = rows[first].size_bytes;
    b->max_bytes = rows[first + n - 1].size_bytes;
    int rc = rb_calib_fit(base, pxn, rows + first, n, &b->fit, err, errlen);
    if (rc != 0)
        return rc;
    b->physical = rb_calib_physical(&b->fit, b->why, sizeof b->why);
    return 0;
}

/* Sum of |error| of the rows of a fitted band. */
static double band_err_sum(const struct rb_calib_row *rows, const struct rb_calib_band *b)
{
    double e = 0;
    for (size_t i = b->first; i < b->first + b->n; i++)
        e += fabs(rows[i].fitted_s - rows[i].measured_s) / rows[i].measured_s;
    return e;
}

/*
 * The best split of the rows (sorted by size, starts[] the index of each
 * distinct size, ns of them) into exactly nb bands of at least
 * MIN_SIZES_PER_BAND sizes each, all physical. cut[] receives the
 * distinct-size index where each band after the first starts. Returns the
 * summed error, or INFINITY when no split qualifies.
 */
static double best_split(const struct rb_topo *base, bool pxn, struct rb_calib_row *rows, size_t n,
                         const size_t *starts, size_t ns, int nb, size_t *cut, int *rc)
{
    double best = INFINITY;
    size_t c[RB_CALIB_MAX_BANDS + 1] = {0};
    /* Enumerate cuts c[1] < ... < c[nb-1] over distinct sizes (nb <= RB_CALIB_MAX_BANDS, ns small). */
    c[nb] = ns;
    for (int k = 1; k < nb; k++)
        c[k] = (size_t)k * MIN_SIZES_PER_BAND;
    while (nb == 1 || c[nb - 1] + MIN_SIZES_PER_BAND <= ns) {
        double sum = 0;
        bool ok = true;
        for (int k = 0; k < nb && ok; k++) {
            struct rb_calib_band b;
            size_t lo = starts[c[k]], hi = c[k + 1] < ns ? starts[c[k + 1]] : n;
            char err[256];
            int r = fit_band(base, pxn, rows, lo, hi - lo, &b, err, sizeof err);
            if (r == -ENOMEM) {
                *rc = r;
                return INFINITY;
            }
            ok = r == 0 && b.physical;
            if (ok)
                sum += band_err_sum(rows, &b);
        }
        if (ok && sum < best) {
            best = sum;
            memcpy(cut, c, sizeof c);
        }
        /* Next combination: advance the last cut that can move, reset the ones after it. */
        int k = nb - 1;
        while (k >= 1 && c[k] + (size_t)(nb - k) * MIN_SIZES_PER_BAND >= ns)
            k--;
        if (k < 1)
            break;
        c[k]++;
        for (int j = k + 1; j < nb; j++)
            c[j] = c[j - 1] + MIN_SIZES_PER_BAND;
    }
    return best;
}

int rb_calib_fit_bands(const struct rb_topo *base, bool pxn, struct rb_calib_row *rows, size_t n, int max_bands,
                       struct rb_calib_bands *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    qsort(rows, n, sizeof *rows, by_size);
    size_t *starts = calloc(n + 1, sizeof *starts), ns = 0;
    if (!starts)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || rows[i].size_bytes != rows[i - 1].size_bytes)
            starts[ns++] = i;
    int rc = 0;
    if (ns < 2) {
        snprintf(err, errlen, "every row has the same size (%.0f B): latency and bandwidth cannot be told apart; "
                 "measure a range of sizes (e.g. coll -b 8 -e 32M -f 2)", rows[0].size_bytes);
        rc = -EDOM;
        goto done;
    }
    if (max_bands < 1 || max_bands > RB_CALIB_MAX_BANDS)
        max_bands = RB_CALIB_MAX_BANDS;
    double best = INFINITY;
    size_t best_cut[RB_CALIB_MAX_BANDS + 1] = {0};
    for (int nb = 1; nb <= max_bands && (size_t)nb * MIN_SIZES_PER_BAND <= (nb == 1 ? ns * MIN_SIZES_PER_BAND : ns);
         nb++) {
        size_t cut[RB_CALIB_MAX_BANDS + 1] = {0};
        double e = best_split(base, pxn, rows, n, starts, ns, nb, cut, &rc) / (double)n;
        if (rc != 0)
            goto done;
        if (isinf(best) ? isfinite(e) : e < best - BAND_GAIN_ABS && e < BAND_GAIN_REL * best) {
            best = e;
            out->nbands = nb;
            memcpy(best_cut, cut, sizeof cut);
        }
    }
    if (out->nbands == 0) {
        struct rb_calib_band b;
        rc = fit_band(base, pxn, rows, 0, n, &b, err, errlen);
        if (rc == 0)
            snprintf(err, errlen, "the fitted %s", b.why);
        rc = rc == -ENOMEM ? rc : -EDOM;
        goto done;
    }
    double e0 = 0, e1 = 0;
    for (int k = 0; k < out->nbands; k++) {
        size_t lo = starts[best_cut[k]], hi = k + 1 < out->nbands ? starts[best_cut[k + 1]] : n;
        if ((rc = fit_band(base, pxn, rows, lo, hi - lo, &out->band[k], err, errlen)) != 0)
            goto done;
    }
    for (size_t i = 0; i < n; i++) {
        e0 += fabs(rows[i].default_s - rows[i].measured_s) / rows[i].measured_s;
        e1 += fabs(rows[i].fitted_s - rows[i].measured_s) / rows[i].measured_s;
    }
    out->err_default = e0 / (double)n;
    out->err_fitted = e1 / (double)n;
done:
    free(starts);
    return rc;
}
