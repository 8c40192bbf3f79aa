/* railbench fabric sim --calibrate: the per-row errors, their mean and each size band's fitted parameters. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"
#include "railbench/cli.h"
#include "sim_int.h"

static void link_row(struct rb_buf *out, cJSON *links, const char *name, double lat0, double lat1, bool lat_fit,
                     double bw0, double bw1, bool bw_fit)
{
    if (lat0 >= 0)
        rb_buf_printf(out, "| %-6s | %9.3f | %9.3f%s | %11.1f | %10.1f%s |\n", name, lat0 * 1e6, lat1 * 1e6,
                      lat_fit ? " " : "*", bw0 / RB_GBIT_BYTES_PER_S, bw1 / RB_GBIT_BYTES_PER_S, bw_fit ? " " : "*");
    else
        rb_buf_printf(out, "| %-6s | %9s | %10s | %11.1f | %10.1f%s |\n", name, "-", "-", bw0 / RB_GBIT_BYTES_PER_S,
                      bw1 / RB_GBIT_BYTES_PER_S, bw_fit ? " " : "*");
    cJSON *l = cJSON_AddObjectToObject(links, name);
    if (lat0 >= 0) {
        cJSON_AddNumberToObject(l, "latency_us_default", lat0 * 1e6);
        cJSON_AddNumberToObject(l, "latency_us", lat1 * 1e6);
        cJSON_AddBoolToObject(l, "latency_fitted", lat_fit);
    }
    cJSON_AddNumberToObject(l, "bandwidth_gbit_per_s_default", bw0 / RB_GBIT_BYTES_PER_S);
    cJSON_AddNumberToObject(l, "bandwidth_gbit_per_s", bw1 / RB_GBIT_BYTES_PER_S);
    cJSON_AddBoolToObject(l, "bandwidth_fitted", bw_fit);
}

/* One band's parameters: the link table printed and as "links" of the JSON object bj. */
static void band_links(struct rb_buf *out, cJSON *bj, const struct rb_topo *base, const struct rb_calib_band *b,
                       int k, const struct rb_calib_row *rows)
{
    const struct rb_calib *c = &b->fit;
    double e = 0;
    for (size_t i = b->first; i < b->first + b->n; i++)
        e += fabs(rows[i].fitted_s - rows[i].measured_s) / rows[i].measured_s;
    e /= (double)b->n;
    rb_buf_printf(out, "#\n# band %d: %.0f .. %.0f B, %zu rows, mean |error| %.1f %%\n", k + 1, b->min_bytes,
                  b->max_bytes, b->n, 100 * e);
    if (c->unbounded)
        rb_buf_printf(out, "# warning: %d parameter%s ran to zero cost here (time does not grow with it): kept at "
                      "the default, marked *\n", c->unbounded, c->unbounded > 1 ? "s" : "");
    rb_buf_printf(out, "| link   | lat (us)  | fitted     | bw (Gbit/s) | fitted      |\n");
    rb_buf_printf(out, "|--------|----------:|-----------:|------------:|------------:|\n");
    cJSON_AddNumberToObject(bj, "min_bytes", b->min_bytes);
    cJSON_AddNumberToObject(bj, "max_bytes", b->max_bytes);
    cJSON_AddNumberToObject(bj, "rows", (double)b->n);
    cJSON_AddNumberToObject(bj, "mean_abs_error_calibrated", e);
    cJSON_AddNumberToObject(bj, "unbounded_parameters", c->unbounded);

    cJSON *links = cJSON_AddObjectToObject(bj, "links");
    for (int l = 0; l < RB_LINK_CLASSES; l++)
        link_row(out, links, rb_link_class_name((enum rb_link_class)l), base->link[l].lat_s, c->link[l].lat_s,
                 c->lat_fitted[l], base->link[l].bw_bytes_per_s, c->link[l].bw_bytes_per_s, c->bw_fitted[l]);
    link_row(out, links, "reduce", -1, -1, false, base->reduce_bytes_per_s, c->reduce_bytes_per_s, c->reduce_fitted);
}

/* The per-row table: measured, default and calibrated times with their errors, and the row's band. */
static void row_table(struct rb_buf *out, cJSON *cj, const struct rb_calib_row *rows, size_t n,
                      const struct rb_calib_bands *B)
{
    rb_buf_printf(out, "#%13s  %5s  %5s  %5s  %12s  %4s  %12s  %12s  %8s  %12s  %8s\n", "coll", "algo", "ranks",
                  "/node", "size(B)", "band", "measured(us)", "default", "err", "calibrated", "err");
    cJSON *rj = cJSON_AddArrayToObject(cj, "rows");
    for (size_t i = 0; i < n; i++) {
        const struct rb_calib_row *r = &rows[i];
        int band = 0;
        while (band + 1 < B->nbands && i >= B->band[band + 1].first)
            band++;
        double e0 = (r->default_s - r->measured_s) / r->measured_s;
        double e1 = (r->fitted_s - r->measured_s) / r->measured_s;
        rb_buf_printf(out, " %13s  %5s  %5d  %5d  %12.0f  %4d  %12.2f  %12.2f  %+7.1f%%  %12.2f  %+7.1f%%\n",
                      rb_coll_kind_name(r->coll), r->algo_name, r->ranks, r->ranks_per_node, r->size_bytes, band + 1,
                      r->measured_s * 1e6, r->default_s * 1e6, 100 * e0, r->fitted_s * 1e6, 100 * e1);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "coll", rb_coll_kind_name(r->coll));
        cJSON_AddStringToObject(o, "algo", r->algo_name);
        cJSON_AddNumberToObject(o, "ranks", r->ranks);
        cJSON_AddNumberToObject(o, "ranks_per_node", r->ranks_per_node);
        cJSON_AddNumberToObject(o, "size_bytes", r->size_bytes);
        cJSON_AddNumberToObject(o, "band", band + 1);
        cJSON_AddNumberToObject(o, "measured_us", r->measured_s * 1e6);
        cJSON_AddNumberToObject(o, "default_us", r->default_s * 1e6);
        cJSON_AddNumberToObject(o, "calibrated_us", r->fitted_s * 1e6);
        cJSON_AddNumberToObject(o, "error_default", e0);
        cJSON_AddNumberToObject(o, "error_calibrated", e1);
        cJSON_AddItemToArray(rj, o);
    }
}

int rb_calib_cmd(const char *path, const struct rb_topo *base, bool pxn, const char *save, int max_bands,
                 struct rb_buf *out, cJSON *summary)
{
    struct rb_calib_row *rows = NULL;
    size_t n = 0, skipped = 0;
    char err[512];
    if (rb_calib_read(path, &rows, &n, &skipped, err, sizeof err) != 0)
        return rb_cli_usage_error("--calibrate: %s", err);
    static struct rb_calib_bands B;
    int rc = rb_calib_fit_bands(base, pxn, rows, n, max_bands, &B, err, sizeof err);
    if (rc != 0) {
        free(rows);
        if (rc == -EINVAL)
            return rb_cli_usage_error("--calibrate %s: %s", path, err);
        fprintf(stderr, "railbench: error: --calibrate %s: %s%s\n", path, rc == -EDOM ? "degenerate fit: " : "",
                rc == -EDOM ? err : "out of memory");
        return rc == -EDOM ? RB_EXIT_CHECK : RB_EXIT_RUNTIME;
    }
    const struct rb_calib_band *last = &B.band[B.nbands - 1];
    cJSON *cj = cJSON_AddObjectToObject(summary, "calibration");
    cJSON_AddStringToObject(cj, "source", path);
    cJSON_AddNumberToObject(cj, "rows_used", (double)n);
    cJSON_AddNumberToObject(cj, "rows_skipped", (double)skipped);
    cJSON_AddNumberToObject(cj, "iterations", last->fit.iterations);
    cJSON_AddNumberToObject(cj, "mean_abs_error_default", B.err_default);
    cJSON_AddNumberToObject(cj, "mean_abs_error_calibrated", B.err_fitted);
    cJSON_AddBoolToObject(cj, "improved", B.err_fitted < B.err_default);
    cJSON_AddNumberToObject(cj, "bands_used", B.nbands);

    rb_buf_printf(out, "# railbench fabric sim --calibrate %s: %zu rows used, %zu skipped, %d size band%s\n# base: ",
                  path, n, skipped, B.nbands, B.nbands > 1 ? "s" : "");
    rb_fabric_design_text(out, base);
    rb_buf_printf(out, "; PXN %s\n#\n", pxn ? "on" : "off");
    row_table(out, cj, rows, n, &B);
    rb_buf_printf(out, "#\n# mean |error|: default %.1f %%, calibrated %.1f %%\n", 100 * B.err_default,
                  100 * B.err_fitted);
    cJSON *bands = cJSON_AddArrayToObject(cj, "bands");
    for (int k = 0; k < B.nbands; k++) {
        cJSON *bj = cJSON_CreateObject();
        band_links(out, bj, base, &B.band[k], k, rows);
        cJSON_AddItemToArray(bands, bj);
    }
    /* "links": the band of the largest sizes, as before bands existed. */
    cJSON_AddItemToObject(cj, "links", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(
                                                           cJSON_GetArrayItem(bands, B.nbands - 1), "links"), true));
    rb_buf_printf(out, "# * not constrained by these rows: kept at the default. nvlink is the intra-node link\n"
                       "#   (shared memory when the ranks are CPU processes); reduce has no latency.\n");
    free(rows);
    if (!save)
        return 0;
    struct rb_topo t = *base;
    memcpy(t.link, last->fit.link, sizeof t.link);
    t.reduce_bytes_per_s = last->fit.reduce_bytes_per_s;
    cJSON *tj = rb_topo_to_json(&t);
    rc = rb_fabric_save_json("--save", save, tj);
    cJSON_Delete(tj);
    if (rc != 0)
        return rc;
    rb_buf_printf(out, "# calibrated topology (band %d, %.0f B and up) written to %s\n", B.nbands, last->min_bytes,
                  save);
    return 0;
}
