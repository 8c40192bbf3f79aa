/* One checkpoint's MLPerf figures (duration = slowest rank, throughput, minimum rank throughput) and stragglers. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>

#include "ckpt_int.h"
#include "railbench/outlier.h"

/* MLPerf Storage rules (checkpointing): a checkpoint's duration is the maximum over ranks, its throughput the
 * checkpoint's bytes over that duration; the minimum over ranks of each rank's own throughput is reported beside. */
void rb_ckpt_figures(const struct rb_ckpt_rank *r, size_t n, struct rb_ckpt_figures *f)
{
    *f = (struct rb_ckpt_figures){.min_rank_bytes_per_s = NAN, .slowest_rank = -1};
    double sum_s = 0;
    for (size_t i = 0; i < n; i++) {
        f->bytes += r[i].bytes;
        sum_s += r[i].busy_s;
        if (f->slowest_rank < 0 || r[i].busy_s > f->duration_s) {
            f->duration_s = r[i].busy_s;
            f->slowest_rank = (int)i;
        }
        if (r[i].bytes && r[i].busy_s > 0) {
            double t = (double)r[i].bytes / r[i].busy_s;
            if (isnan(f->min_rank_bytes_per_s) || t < f->min_rank_bytes_per_s)
                f->min_rank_bytes_per_s = t;
        }
    }
    f->mean_rank_s = n ? sum_s / (double)n : NAN;
    f->throughput_bytes_per_s = f->duration_s > 0 ? (double)f->bytes / f->duration_s : NAN;
}

cJSON *rb_ckpt_stragglers(const struct rb_ckpt_rank *r, size_t n, const char *const *hosts, int nhosts, bool by_host)
{
    cJSON *out = cJSON_CreateArray();
    size_t m = by_host ? (size_t)nhosts : n;
    double *v = calloc(m ? m : 1, sizeof *v), *t = calloc(m ? m : 1, sizeof *t);
    uint64_t *b = calloc(m ? m : 1, sizeof *b);
    if (!out || !v || !t || !b)
        goto done;
    for (size_t i = 0; i < n; i++) {
        size_t k = by_host ? (size_t)r[i].host : i;
        if (k >= m)
            continue;
        b[k] += r[i].bytes;
        if (r[i].busy_s > t[k])
            t[k] = r[i].busy_s;
    }
    for (size_t k = 0; k < m; k++)
        v[k] = b[k] && t[k] > 0 ? (double)b[k] / t[k] : NAN;
    struct rb_outlier_fleet fl;
    if (rb_outlier_fleet(v, m, &fl) != 0)
        goto done;
    for (size_t k = 0; k < m; k++) {
        if (!rb_outlier_is(&fl, v[k], true, RB_OUTLIER_THRESHOLD, 0))
            continue;
        cJSON *o = cJSON_CreateObject();
        if (!by_host)
            cJSON_AddNumberToObject(o, "rank", (double)k);
        int hi = by_host ? (int)k : r[k].host;
        if (hosts && hi >= 0 && hi < nhosts)
            cJSON_AddStringToObject(o, "host", hosts[hi]);
        cJSON_AddNumberToObject(o, "throughput_bytes_per_s", v[k]);
        cJSON_AddNumberToObject(o, "time_s", t[k]);
        cJSON_AddNumberToObject(o, "median_bytes_per_s", fl.median);
        cJSON_AddNumberToObject(o, "ratio", rb_outlier_ratio(&fl, v[k]));
        cJSON_AddItemToArray(out, o);
    }
done:
    free(v);
    free(t);
    free(b);
    return out;
}
