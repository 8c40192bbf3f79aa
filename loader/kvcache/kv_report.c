/* load kvcache's figures: each rank's, each trial's (MLPerf Storage's aggregation and the exact one), the summary. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvcache_int.h"
#include "railbench/buf.h"
#include "railbench/result.h"

/* The 95th percentile of h in ns, or NaN when h is empty (nothing measured is null, never 0). */
static double p95(const struct rb_hist *h)
{
    return h->count ? (double)rb_hist_percentile(h, 95) : NAN;
}

static double per_s(uint64_t v, double s)
{
    return s > 0 ? (double)v / s : NAN;
}

/* Host time over device time, every storage operation (NaN when no device time was measured). */
static double host_ratio(struct rb_hist *const hist[RB_KV_NHIST])
{
    double dev = (double)hist[RB_KV_DEV_WRITE]->sum_ns + (double)hist[RB_KV_DEV_READ]->sum_ns;
    double host = (double)hist[RB_KV_HOST_WRITE]->sum_ns + (double)hist[RB_KV_HOST_READ]->sum_ns;
    return dev > 0 ? host / dev : NAN;
}

static cJSON *counts_json(const uint64_t count[RB_KV_NCOUNTS])
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < RB_KV_NCOUNTS; i++)
        cJSON_AddItemToObject(o, rb_kv_count_names[i], rb_json_u64(count[i]));
    return o;
}

cJSON *rb_kv_rank_json(int rank, const uint64_t count[RB_KV_NCOUNTS], struct rb_hist *const hist[RB_KV_NHIST],
                       double elapsed_s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "rank", rank);
    cJSON_AddItemToObject(o, "elapsed_s", rb_json_number(elapsed_s));
    cJSON_AddItemToObject(o, "read_bytes_per_s", rb_json_number(per_s(count[RB_KV_BYTES_READ], elapsed_s)));
    cJSON_AddItemToObject(o, "write_bytes_per_s", rb_json_number(per_s(count[RB_KV_BYTES_WRITTEN], elapsed_s)));
    cJSON_AddItemToObject(o, "tokens_per_s", rb_json_number(per_s(count[RB_KV_PREFILL_TOKENS] +
                                                                   count[RB_KV_GENERATED_TOKENS], elapsed_s)));
    cJSON_AddItemToObject(o, "device_read_p95_ns", rb_json_number(p95(hist[RB_KV_DEV_READ])));
    cJSON_AddItemToObject(o, "device_write_p95_ns", rb_json_number(p95(hist[RB_KV_DEV_WRITE])));
    cJSON_AddItemToObject(o, "host_device_ratio", rb_json_number(host_ratio(hist)));
    cJSON_AddItemToObject(o, "counts", counts_json(count));
    return o;
}

/* The sum of key over the ranks, or NaN when a rank has none (it measured nothing). */
static double sum_ranks(const cJSON *ranks, const char *key)
{
    double s = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, ranks)
    {
        const cJSON *v = cJSON_GetObjectItem(r, key);
        if (!cJSON_IsNumber(v))
            return NAN;
        s += v->valuedouble;
    }
    return s;
}

/* MLPerf Storage's device p95: the largest of the ranks' p95s (ranks without the operation left out). */
static double max_ranks(const cJSON *ranks, const char *key)
{
    double m = NAN;
    const cJSON *r;
    cJSON_ArrayForEach(r, ranks)
    {
        const cJSON *v = cJSON_GetObjectItem(r, key);
        if (cJSON_IsNumber(v) && (isnan(m) || v->valuedouble > m))
            m = v->valuedouble;
    }
    return m;
}

static cJSON *latency_json(struct rb_hist *const merged[RB_KV_NHIST])
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < RB_KV_NHIST; i++) {
        cJSON *l = cJSON_AddObjectToObject(o, rb_kv_hist_names[i]);
        cJSON_AddItemToObject(l, "count", rb_json_u64(merged[i]->count));
        cJSON_AddItemToObject(l, "sum_ns", rb_json_u64(merged[i]->sum_ns));
        cJSON_AddItemToObject(l, "summary", rb_hist_summary_json(merged[i]));
        cJSON_AddItemToObject(l, "hist", rb_hist_to_json(merged[i]));
    }
    return o;
}

cJSON *rb_kv_trial_json(unsigned trial, cJSON *ranks, const uint64_t sum[RB_KV_NCOUNTS],
                        struct rb_hist *const merged[RB_KV_NHIST])
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "trial", trial);
    cJSON_AddItemToObject(o, "read_bytes_per_s", rb_json_number(sum_ranks(ranks, "read_bytes_per_s")));
    cJSON_AddItemToObject(o, "write_bytes_per_s", rb_json_number(sum_ranks(ranks, "write_bytes_per_s")));
    cJSON_AddItemToObject(o, "tokens_per_s", rb_json_number(sum_ranks(ranks, "tokens_per_s")));
    cJSON_AddItemToObject(o, "device_read_p95_ns", rb_json_number(max_ranks(ranks, "device_read_p95_ns")));
    cJSON_AddItemToObject(o, "device_write_p95_ns", rb_json_number(max_ranks(ranks, "device_write_p95_ns")));
    cJSON_AddItemToObject(o, "device_read_p95_merged_ns", rb_json_number(p95(merged[RB_KV_DEV_READ])));
    cJSON_AddItemToObject(o, "device_write_p95_merged_ns", rb_json_number(p95(merged[RB_KV_DEV_WRITE])));
    cJSON_AddItemToObject(o, "host_device_ratio", rb_json_number(host_ratio(merged)));
    cJSON_AddItemToObject(o, "counts", counts_json(sum));
    cJSON_AddItemToObject(o, "latency", latency_json(merged));
    cJSON_AddItemToObject(o, "ranks", ranks);
    return o;
}

/* The mean of key over the trials (NaN when a trial has none). */
static double mean_trials(const cJSON *trials, const char *key)
{
    double s = 0;
    int n = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, trials)
    {
        const cJSON *v = cJSON_GetObjectItem(t, key);
        if (!cJSON_IsNumber(v))
            return NAN;
        s += v->valuedouble;
        n++;
    }
    return n ? s / n : NAN;
}

static const char *const mean_keys[] = {"read_bytes_per_s", "write_bytes_per_s", "tokens_per_s",
                                        "device_read_p95_ns", "device_write_p95_ns", "device_read_p95_merged_ns",
                                        "device_write_p95_merged_ns", "host_device_ratio"};

static void model_json(const struct rb_kv_args *a, cJSON *summary)
{
    cJSON *m = cJSON_AddObjectToObject(summary, "model");
    cJSON_AddStringToObject(m, "name", a->model.name);
    cJSON_AddNumberToObject(m, "layers", a->model.layers);
    cJSON_AddNumberToObject(m, "kv_heads", a->model.kv_heads);
    cJSON_AddNumberToObject(m, "head_dim", a->model.head_dim);
    cJSON_AddStringToObject(m, "dtype", "<f2");
    cJSON_AddItemToObject(m, "tp", rb_json_u64(a->tp));
    cJSON_AddItemToObject(m, "bytes_per_token", rb_json_u64(a->bytes_per_token));
    if (a->preset)
        cJSON_AddNumberToObject(summary, "option", a->preset->number);
    else
        cJSON_AddNullToObject(summary, "option");
    cJSON_AddItemToObject(summary, "users_per_rank", rb_json_u64(a->users));
    cJSON_AddItemToObject(summary, "inflight_per_rank", rb_json_u64(a->inflight));
    cJSON_AddItemToObject(summary, "cpu_tier_bytes", rb_json_u64(a->cpu_tier_bytes));
    cJSON_AddItemToObject(summary, "storage_tier_bytes", rb_json_u64(a->storage_tier_bytes));
    char scale[32];
    snprintf(scale, sizeof scale, a->scale_den == 1 ? "1" : "1/%" PRIu64, a->scale_den);
    cJSON_AddStringToObject(summary, "scale", scale);
    cJSON_AddItemToObject(summary, "duration_s", rb_json_number((double)a->duration_ns / 1e9));
    cJSON_AddItemToObject(summary, "seed", rb_json_u64(a->seed));
    cJSON_AddNumberToObject(summary, "npy_header_bytes", RB_KV_NPY_HEADER);
}

/* key of o as a number, NaN when it is null or absent. */
static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* v scaled and printed with fmt, or "–" where nothing was measured (never nan). */
static const char *cell(char *out, size_t len, const char *fmt, double v, double scale)
{
    if (isfinite(v))
        snprintf(out, len, fmt, v * scale);
    else
        snprintf(out, len, "–");
    return out;
}

/* One row of the table: a trial's figures, or their means (label "mean"). */
static void row(struct rb_buf *b, const char *label, const cJSON *t)
{
    char c[8][32];
    rb_buf_printf(b, "| %s | %s | %s | %s | %s / %s | %s / %s | %s |\n", label,
                  cell(c[0], 32, "%.3f", num(t, "read_bytes_per_s"), 1e-9),
                  cell(c[1], 32, "%.3f", num(t, "write_bytes_per_s"), 1e-9),
                  cell(c[2], 32, "%.0f", num(t, "tokens_per_s"), 1),
                  cell(c[3], 32, "%.2f ms", num(t, "device_read_p95_ns"), 1e-6),
                  cell(c[4], 32, "%.2f ms", num(t, "device_read_p95_merged_ns"), 1e-6),
                  cell(c[5], 32, "%.2f ms", num(t, "device_write_p95_ns"), 1e-6),
                  cell(c[6], 32, "%.2f ms", num(t, "device_write_p95_merged_ns"), 1e-6),
                  cell(c[7], 32, "%.4f", num(t, "host_device_ratio"), 1));
}

char *rb_kv_report(const struct rb_kv_args *a, cJSON *summary, const cJSON *trials)
{
    model_json(a, summary);
    cJSON *mean = cJSON_AddObjectToObject(summary, "mean");
    for (size_t i = 0; i < sizeof mean_keys / sizeof mean_keys[0]; i++)
        cJSON_AddItemToObject(mean, mean_keys[i], rb_json_number(mean_trials(trials, mean_keys[i])));
    cJSON_AddItemToObject(summary, "trials", cJSON_Duplicate(trials, true));
    struct rb_buf b = {0};
    char opt[64] = "(no option)";
    if (a->preset)
        snprintf(opt, sizeof opt, "option %u (%s)", a->preset->number, a->preset->title);
    rb_buf_printf(&b, "KV-cache offload, MLPerf Storage v3.0 %s: %s, %" PRIu64 " bytes per token, %" PRIu64
                  " users and %" PRIu64 " in flight per rank, scale %s\n\n", opt, a->model.name, a->bytes_per_token,
                  a->users, a->inflight, cJSON_GetObjectItem(summary, "scale")->valuestring);
    rb_buf_printf(&b, "| trial | read GB/s | write GB/s | tokens/s | device read p95 (max rank / merged) | device "
                  "write p95 (max rank / merged) | host/device |\n|---|---|---|---|---|---|---|\n");
    const cJSON *t;
    cJSON_ArrayForEach(t, trials)
    {
        char label[16];
        snprintf(label, sizeof label, "%d", (int)num(t, "trial"));
        row(&b, label, t);
    }
    if (cJSON_GetArraySize(trials) > 1)
        row(&b, "mean", mean);
    const cJSON *rp = cJSON_GetObjectItem(summary, "replay");
    if (rp) {
        char h1[32], h2[32], hits[128] = "no prefix information";
        if (isfinite(num(rp, "trace_hit_rate")))
            snprintf(hits, sizeof hits, "prefix hit rate %s (from the trace's hash ids: %s)",
                     cell(h1, sizeof h1, "%.4f", num(rp, "hit_rate"), 1),
                     cell(h2, sizeof h2, "%.4f", num(rp, "trace_hit_rate"), 1));
        rb_buf_printf(&b, "\ntrace %s (%s, x%g): %.0f of %.0f requests; %s\n",
                      cJSON_GetObjectItem(rp, "trace")->valuestring, cJSON_GetObjectItem(rp, "format")->valuestring,
                      a->speedup, num(rp, "requests_done"), num(rp, "requests"), hits);
    }
    rb_buf_printf(&b, "\nGB/s and tokens/s: summed over ranks; p95: the largest rank's (MLPerf Storage) and over "
                  "every operation; device: the file system's calls or the object request; host: the rest (making, "
                  "checking the bytes)\n");
    return b.oom ? NULL : b.s;
}

void rb_kv_replay_json(const struct rb_kv_args *a, const struct rb_kvtrace *t, cJSON *summary, const cJSON *trials)
{
    const cJSON *last = cJSON_GetArrayItem(trials, cJSON_GetArraySize(trials) - 1);
    const cJSON *c = cJSON_GetObjectItem(last, "counts");
    cJSON *o = cJSON_AddObjectToObject(summary, "replay");
    cJSON_AddStringToObject(o, "trace", a->trace_path);
    cJSON_AddStringToObject(o, "format", t->fmt == RB_KVTRACE_MOONCAKE ? "mooncake" : "burstgpt");
    cJSON_AddItemToObject(o, "speedup", rb_json_number(a->speedup));
    cJSON_AddItemToObject(o, "requests", rb_json_u64(t->n));
    cJSON_AddItemToObject(o, "requests_done", rb_json_number(num(c, "requests")));
    if (t->fmt != RB_KVTRACE_MOONCAKE) {
        cJSON_AddNullToObject(o, "trace_hit_rate");
        cJSON_AddNullToObject(o, "hit_rate");
        return;
    }
    cJSON_AddItemToObject(o, "block_tokens", rb_json_u64(t->block_tokens));
    cJSON_AddItemToObject(o, "blocks_total", rb_json_u64(t->blocks_total));
    cJSON_AddItemToObject(o, "blocks_seen", rb_json_u64(t->blocks_seen));
    /* Mooncake's replayer: hit rate = blocks read / blocks; from the trace's ids, and as this run found them */
    cJSON_AddItemToObject(o, "trace_hit_rate",
                          rb_json_number(t->blocks_total ? (double)t->blocks_seen / (double)t->blocks_total : NAN));
    double rd = num(c, "blocks_read"), all = rd + num(c, "blocks_written") + num(c, "block_misses") +
                                             num(c, "block_repeats");
    cJSON_AddItemToObject(o, "hit_rate", rb_json_number(all > 0 ? rd / all : NAN));
}
