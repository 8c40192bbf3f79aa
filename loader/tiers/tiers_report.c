/* railbench load tiers: the report: the table, the speed-ups, summary.tiers_rows and what the run left behind. */
#include "tiers_run_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "railbench/buf.h"
#include "railbench/log.h"
#include "railbench/units.h"

static const char *const how_names[] = {"direct", "cold", "warm"};
static const char *const how_labels[] = {"DIRECT", "COLD through tier", "WARM through tier"};


/* What the run left in the backend: --fresh's in the summary and one stderr line; an interrupted run's outcome. */
static void left_behind(struct tiers_run *r, cJSON *summary)
{
    if (!r->fresh[0]) { /* the default names stay after every run; the outcome line of a cut-short one says so */
        if (r->h.interrupted && r->left_objects)
            rb_harness_kept(&r->h, "up to %" PRIu64 " objects under its default names in %s", r->left_objects,
                            rb_target_name(r->backend));
        return;
    }
    char prefix[1200];
    snprintf(prefix, sizeof prefix, "%s%s%s-", rb_target_prefix(r->backend), r->a->prefix, r->fresh);
    cJSON *o = cJSON_AddObjectToObject(summary, "left_behind");
    cJSON_AddStringToObject(o, "prefix", prefix);
    cJSON_AddItemToObject(o, "objects", rb_json_u64(r->left_objects));
    if (r->left_objects && r->h.interrupted)
        rb_harness_kept(&r->h, "up to %" PRIu64 " objects in %s under \"%s\"", r->left_objects,
                        rb_target_name(r->backend), prefix);
    if (r->left_objects)
        rb_warn("left up to %" PRIu64 " objects in %s under \"%s\"%s (railbench load delete %s --prefix %s "
                "removes them)", r->left_objects, rb_target_name(r->backend), prefix,
                r->a->keep ? " (--keep)" : "", rb_target_name(r->backend), prefix + strlen(rb_target_prefix(r->backend)));
}

/* The row of (size, how), or NULL. */
static const struct row *find_row(const struct tiers_run *r, uint64_t size, enum rb_tiers_how how)
{
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].size_bytes == size && r->rows[i].how == how)
            return &r->rows[i];
    return NULL;
}

static cJSON *ratio_json(double v)
{
    return v >= 0 ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *row_json(const struct row *w, bool file_tier)
{
    char label[32];
    rb_tiers_size_label(label, sizeof label, w->size_bytes);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "size_bytes", rb_json_u64(w->size_bytes));
    cJSON_AddStringToObject(o, "how", how_names[w->how]);
    cJSON_AddStringToObject(o, "label", how_labels[w->how]);
    cJSON_AddStringToObject(o, "phase", w->phase);
    cJSON_AddItemToObject(o, "objects", rb_json_u64(w->objects));
    cJSON_AddItemToObject(o, "bytes", rb_json_u64(w->bytes));
    cJSON_AddNumberToObject(o, "throughput_bytes_per_s", w->bytes_per_s);
    cJSON_AddNumberToObject(o, "ops_per_s", w->ops_per_s);
    cJSON_AddNumberToObject(o, "latency_avg_ns", w->lat_avg_ns);
    cJSON_AddItemToObject(o, "latency_p99_ns", rb_json_u64(w->lat_p99_ns));
    cJSON_AddItemToObject(o, "ttfb_p50_ns", rb_json_u64(w->ttfb_p50_ns));
    if (w->net_local && isfinite(w->disk_util_ratio)) /* else null: a remote storage's disks, or no disk here */
        cJSON_AddNumberToObject(o, "disk_util_ratio", w->disk_util_ratio);
    else
        cJSON_AddNullToObject(o, "disk_util_ratio");
    if (w->net_local)
        cJSON_AddNullToObject(o, "net_bytes_per_s"); /* not measured: the traffic went over loopback */
    else
        cJSON_AddNumberToObject(o, "net_bytes_per_s", w->net_bytes_per_s);
    const bool seen = w->counted && (w->cache.hit + w->cache.miss + w->cache.other) > 0;
    cJSON_AddItemToObject(o, "cache_hit", seen ? rb_json_u64(w->cache.hit) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "cache_miss", seen ? rb_json_u64(w->cache.miss) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "cache_other", seen ? rb_json_u64(w->cache.other) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "cache_absent", w->counted ? rb_json_u64(w->cache.absent) : cJSON_CreateNull());
    static const char *const verdicts[] = {"verified", "unverified", "failed"};
    if (w->how == RB_TIERS_DIRECT)
        cJSON_AddNullToObject(o, "verdict");
    else
        cJSON_AddStringToObject(o, "verdict", verdicts[w->verdict]);
    cJSON_AddItemToObject(o, "requests", rb_json_u64(w->requests));
    cJSON_AddItemToObject(o, "errors", rb_json_u64(w->errors));
    cJSON_AddNumberToObject(o, "duration_s", w->duration_s);
    cJSON_AddItemToObject(o, "epochs", rb_json_u64(w->epochs));
    /* A file:// tier's split of the bytes; a direct row's all came from the backend. Other tiers: not measured. */
    const bool split = w->fcache || (w->how == RB_TIERS_DIRECT && file_tier);
    cJSON_AddItemToObject(o, "bytes_from_origin",
                          !split ? cJSON_CreateNull() : rb_json_u64(w->fcache ? w->origin_bytes : w->bytes));
    cJSON_AddItemToObject(o, "bytes_from_cache", !split ? cJSON_CreateNull() : rb_json_u64(w->fcache ? w->cache_bytes : 0));
    return o;
}

/* The summary, the table and the verdict of the whole run (rank 0). */
char *rb_tiers_report(struct tiers_run *r, cJSON *summary)
{
    const struct tiers_args *a = r->a;
    struct rb_buf t = {0};
    char name_b[1200], name_t[1200];
    rb_cli_redact_url(name_b, sizeof name_b, rb_target_name(r->backend));
    rb_cli_redact_url(name_t, sizeof name_t, rb_target_name(r->tier));
    rb_buf_printf(&t, "\n# railbench load tiers\n\nbackend %s, tier %s; %" PRIu64 " objects per size; %d rank(s) x %"
                  PRIu64 " thread(s) x %" PRIu64 " in flight\n\n",
                  name_b, name_t, a->objects, r->h.size, a->threads, a->inflight);
    rb_buf_printf(&t, "| GET from/how | object size | throughput GiB/s | obj/s | latency avg ms | p99 ms | TTFB p50 ms "
                      "| avg disk util %% | network GiB/s | cache hit/miss |\n"
                      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    cJSON *rows = cJSON_AddArrayToObject(summary, "tiers_rows");
    bool any_disk = false;
    unsigned why = 0; /* RB_TIERS_*: why a figure is – */
    for (size_t i = 0; i < r->nrows; i++) {
        const struct row *w = &r->rows[i];
        cJSON_AddItemToArray(rows, row_json(w, r->fc != NULL));
        char size[32], cache[64] = "–", net[32] = "–", disk[32] = "–";
        rb_format_size(size, sizeof size, w->size_bytes);
        if (w->counted && w->cache.hit + w->cache.miss + w->cache.other)
            snprintf(cache, sizeof cache, "%" PRIu64 "/%" PRIu64 "%s", w->cache.hit, w->cache.miss,
                     w->cache.other ? " (+other)" : "");
        else if (w->counted)
            snprintf(cache, sizeof cache, "no header");
        else
            why |= RB_TIERS_DIRECT_CACHE;
        if (!w->net_local)
            snprintf(net, sizeof net, "%.4f", w->net_bytes_per_s / (double)RB_GIB);
        else
            why |= RB_TIERS_NET_LOCAL;
        if (w->net_local && isfinite(w->disk_util_ratio))
            any_disk = snprintf(disk, sizeof disk, "%.1f", 100 * w->disk_util_ratio) > 0;
        else
            why |= w->net_local ? RB_TIERS_NO_DISK : RB_TIERS_REMOTE_DISK;
        rb_buf_printf(&t, "| %s | %s | %.4f | %.1f | %.2f | %.2f | %.2f | %s | %s | %s |\n", how_labels[w->how],
                      size, w->bytes_per_s / (double)RB_GIB, w->ops_per_s, w->lat_avg_ns / 1e6, (double)w->lat_p99_ns / 1e6,
                      (double)w->ttfb_p50_ns / 1e6, disk, net, cache);
    }
    rb_tiers_unmeasured_notes(&t, why, any_disk);
    cJSON *speedups = cJSON_AddArrayToObject(summary, "speedups");
    bool any = false;
    for (size_t k = 0; k < a->sizes.n; k++) {
        const struct row *d = find_row(r, a->sizes.v[k], RB_TIERS_DIRECT), *c = find_row(r, a->sizes.v[k], RB_TIERS_COLD),
                         *w = find_row(r, a->sizes.v[k], RB_TIERS_WARM);
        if (!w)
            continue;
        double wd = d ? rb_tiers_speedup(w->bytes_per_s, d->bytes_per_s) : -1;
        double wc = c ? rb_tiers_speedup(w->bytes_per_s, c->bytes_per_s) : -1;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "size_bytes", rb_json_u64(a->sizes.v[k]));
        cJSON_AddItemToObject(o, "warm_over_direct", ratio_json(wd));
        cJSON_AddItemToObject(o, "warm_over_cold", ratio_json(wc));
        cJSON_AddItemToArray(speedups, o);
        char size[32], sd[32] = "– (no direct row)", sc[32] = "– (no cold row)";
        rb_format_size(size, sizeof size, a->sizes.v[k]);
        if (wd >= 0)
            snprintf(sd, sizeof sd, "%.2fx", wd);
        if (wc >= 0)
            snprintf(sc, sizeof sc, "%.2fx", wc);
        rb_buf_printf(&t, "%s%s: warm/direct %s, warm/cold %s", any ? "; " : "\nspeed-ups: ", size, sd, sc);
        any = true;
    }
    if (any)
        rb_buf_printf(&t, "\n");
    const bool passed = !rb_result_failed(&r->h.result) && !r->h.interrupted && !r->status;
    cJSON_AddBoolToObject(summary, "checks_passed", passed);
    bool verified = false, tiered = false;
    for (size_t i = 0; i < r->nrows; i++) {
        verified = verified || (r->rows[i].how != RB_TIERS_DIRECT && r->rows[i].verdict != RB_TIERS_UNVERIFIED);
        tiered = tiered || r->rows[i].how != RB_TIERS_DIRECT;
    }
    cJSON_AddBoolToObject(summary, "cache_verified", verified);
    cJSON_AddStringToObject(summary, "backend", name_b);
    cJSON_AddStringToObject(summary, "tier", name_t);
    cJSON_AddItemToObject(summary, "objects", rb_json_u64(a->objects));
    cJSON_AddNumberToObject(summary, "ranks", r->h.size);
    cJSON_AddItemToObject(summary, "threads", rb_json_u64(a->threads));
    cJSON_AddItemToObject(summary, "inflight", rb_json_u64(a->inflight));
    cJSON_AddStringToObject(summary, "cache_header", r->cache_headers);
    cJSON_AddStringToObject(summary, "names_prefix", a->prefix);
    if (r->fresh[0])
        cJSON_AddStringToObject(summary, "fresh", r->fresh);
    else
        cJSON_AddNullToObject(summary, "fresh");
    left_behind(r, summary);
    rb_tiers_fc_summary(r, summary, &t);

    rb_buf_printf(&t, "\ncache status: %s; checks: %s\n",
                  r->fc && verified ? "counted by railbench's cache file lookup"
                  : verified ? "counted from the tier's header"
                  : tiered ? "not reported by the tier (not verified)"
                            : "no read through the tier was measured",
                  passed ? "passed" : "FAILED (see result.json checks)");
    if (t.oom) {
        rb_buf_free(&t);
        return NULL;
    }
    return t.s;
}
