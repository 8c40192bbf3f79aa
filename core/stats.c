/* Counters and latency histograms of one phase, as one flat block of uint64_t that ranks merge by summing. */
#include "railbench/stats.h"

#include <stdlib.h>
#include <string.h>

#include "railbench/result.h"

_Static_assert(sizeof(struct rb_stats) % sizeof(uint64_t) == 0, "rb_stats must be whole uint64_t");

void rb_stats_reset(struct rb_stats *s)
{
    memset(s, 0, offsetof(struct rb_stats, lat));
    rb_hist_reset(&s->lat);
    rb_hist_reset(&s->ttfb);
}

struct rb_stats *rb_stats_new(void)
{
    struct rb_stats *s = malloc(sizeof *s);
    if (s)
        rb_stats_reset(s);
    return s;
}

void rb_stats_free(struct rb_stats *s)
{
    free(s);
}

void rb_stats_merge(struct rb_stats *dst, const struct rb_stats *src)
{
    dst->ops += src->ops;
    dst->bytes += src->bytes;
    dst->errors += src->errors;
    for (int i = 0; i < RB_STATS_ERR_MAX; i++)
        dst->err[i] += src->err[i];
    for (int i = 0; i < RB_STATS_EXTRA_MAX; i++)
        dst->extra[i] += src->extra[i];
    rb_hist_merge(&dst->lat, &src->lat);
    rb_hist_merge(&dst->ttfb, &src->ttfb);
}

void rb_stats_minmax_pack(const struct rb_stats *s, uint64_t out[4])
{
    out[0] = s->lat.min_ns;
    out[1] = ~s->lat.max_ns;
    out[2] = s->ttfb.min_ns;
    out[3] = ~s->ttfb.max_ns;
}

void rb_stats_minmax_unpack(struct rb_stats *s, const uint64_t in[4])
{
    s->lat.min_ns = in[0];
    s->lat.max_ns = ~in[1];
    s->ttfb.min_ns = in[2];
    s->ttfb.max_ns = ~in[3];
}

static void add_named(cJSON *obj, const char *key, const uint64_t *v, int max,
                      const char *const *names, bool with_total, uint64_t total)
{
    cJSON *o = cJSON_AddObjectToObject(obj, key);
    if (with_total)
        cJSON_AddItemToObject(o, "total", rb_json_u64(total));
    for (int i = 0; names && names[i] && i < max; i++)
        cJSON_AddItemToObject(o, names[i], rb_json_u64(v[i]));
}

void rb_stats_to_json(cJSON *obj, const struct rb_stats *s, const struct rb_stats_names *names,
                      double duration_s, bool full_hist)
{
    cJSON_AddItemToObject(obj, "count", rb_json_u64(s->ops));
    cJSON_AddItemToObject(obj, "bytes", rb_json_u64(s->bytes));
    cJSON_AddNumberToObject(obj, "duration_s", duration_s);
    /* Rates need a duration; without one they were not measured. ops_per_s counts successes only. */
    if (duration_s > 0) {
        cJSON_AddNumberToObject(obj, "throughput_bytes_per_s", (double)s->bytes / duration_s);
        cJSON_AddNumberToObject(obj, "ops_per_s", (double)(s->ops > s->errors ? s->ops - s->errors : 0) / duration_s);
        cJSON_AddNumberToObject(obj, "errors_per_s", (double)s->errors / duration_s);
    } else {
        cJSON_AddNullToObject(obj, "throughput_bytes_per_s");
        cJSON_AddNullToObject(obj, "ops_per_s");
        cJSON_AddNullToObject(obj, "errors_per_s");
    }
    add_named(obj, "errors", s->err, RB_STATS_ERR_MAX, names ? names->err : NULL, true, s->errors);
    if (names && names->extra)
        add_named(obj, "extra", s->extra, RB_STATS_EXTRA_MAX, names->extra, false, 0);
    cJSON_AddItemToObject(obj, "latency_ns", rb_hist_summary_json(&s->lat));
    cJSON_AddItemToObject(obj, "ttfb_ns", rb_hist_summary_json(&s->ttfb));
    if (full_hist) {
        cJSON_AddItemToObject(obj, "latency_hist", rb_hist_to_json(&s->lat));
        cJSON_AddItemToObject(obj, "ttfb_hist", rb_hist_to_json(&s->ttfb));
    }
}
