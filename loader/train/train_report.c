/* railbench load train, the report: the epochs table, the verdict, result.json's summary and checks. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "railbench/buf.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "railbench/provenance.h"
#include "railbench/units.h"
#include "train_cmd_int.h"

/*
 * The bytes each host's interfaces carried during the phase (the harness's
 * per-host counters around it): [{host, interface, rx_bytes, tx_bytes}],
 * so a reader sees which rail or network each half's traffic took.
 */
static cJSON *net_bytes_json(const cJSON *record)
{
    cJSON *out = cJSON_CreateArray();
    const cJSON *host;
    cJSON_ArrayForEach(host, cJSON_GetObjectItemCaseSensitive(record, "counters"))
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(host, "host"));
        const cJSON *n;
        cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(host, "net"))
        {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "host", name ? name : "");
            cJSON_AddStringToObject(o, "interface", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(n, "name")));
            cJSON_AddNumberToObject(o, "rx_bytes", cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(n, "rx_bytes")));
            cJSON_AddNumberToObject(o, "tx_bytes", cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(n, "tx_bytes")));
            cJSON_AddItemToArray(out, o);
        }
    }
    return out;
}

void rb_train_epoch_cache(cJSON *e, bool configured_cold, const struct rb_stats *counted)
{
    uint64_t hit = 0, part = 0, miss = 0;
    if (counted) {
        hit = counted->extra[RB_LX_CACHE_HIT];
        part = counted->extra[RB_LX_CACHE_OTHER];
        miss = counted->extra[RB_LX_CACHE_MISS];
    }
    const char *cache = configured_cold ? "cold" : "warm", *basis = "configured";
    if (hit + part + miss > 0) {
        /* The rule of the check "<epoch>_cold" (rb_file_check_cold): cold only when no read found a cached page. */
        cache = hit + part == 0 ? "cold" : miss == 0 ? "warm" : "mixed";
        basis = "measured";
    }
    cJSON_DeleteItemFromObjectCaseSensitive(e, "cold");
    cJSON_DeleteItemFromObjectCaseSensitive(e, "cache");
    cJSON_DeleteItemFromObjectCaseSensitive(e, "cache_basis");
    cJSON_AddBoolToObject(e, "cold", strcmp(cache, "cold") == 0);
    cJSON_AddStringToObject(e, "cache", cache);
    cJSON_AddStringToObject(e, "cache_basis", basis);
}

cJSON *rb_train_epoch_entry(struct rb_train_run *R, const cJSON *ranks_json, uint64_t epoch_no, bool cold,
                            unsigned accel, const struct rb_phase *p, const struct rb_hist *wait, const struct rb_hist *sync,
                            struct rb_train_figures *fig)
{
    const struct rb_harness *h = R->h;
    size_t n = (size_t)cJSON_GetArraySize(ranks_json);
    struct rb_train_rank *rk = calloc(n ? n : 1, sizeof *rk);
    cJSON *e = cJSON_CreateObject();
    if (!rk || !e) {
        free(rk);
        cJSON_Delete(e);
        return NULL;
    }
    const cJSON *it;
    size_t i = 0;
    cJSON *ranks = cJSON_CreateArray();
    bool interrupted = false;
    cJSON_ArrayForEach(it, ranks_json)
    {
        struct rb_train_rank *r = &rk[i++];
        rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(it, "steps"), &r->steps);
        rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(it, "samples"), &r->samples);
        rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(it, "bytes"), &r->bytes);
        rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(it, "wall_ns"), &r->wall_ns);
        r->au_pct = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "au_pct"));
        interrupted |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "cut"));
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "rank")));
        cJSON_AddItemToObject(o, "steps", rb_json_u64(r->steps));
        cJSON_AddItemToObject(o, "samples", rb_json_u64(r->samples));
        cJSON_AddItemToObject(o, "bytes", rb_json_u64(r->bytes));
        cJSON_AddNumberToObject(o, "duration_s", (double)r->wall_ns / 1e9);
        cJSON_AddNumberToObject(o, "samples_per_s", rb_train_per_s(r->samples, r->wall_ns));
        cJSON_AddNumberToObject(o, "bytes_per_s", rb_train_per_s(r->bytes, r->wall_ns));
        cJSON_AddNumberToObject(o, "au_pct", r->au_pct);
        cJSON_AddItemToArray(ranks, o);
    }
    rb_train_epoch_figures(rk, n, fig);
    free(rk);

    cJSON_AddNumberToObject(e, "epoch", (double)epoch_no);
    cJSON_AddStringToObject(e, "phase", p->name);
    rb_train_epoch_cache(e, cold, (R->a->cache_header || R->a->file.cold_check) ? p->total : NULL);
    cJSON_AddNumberToObject(e, "accelerators", (double)accel * h->size);
    cJSON_AddNumberToObject(e, "accelerators_per_rank", accel);
    cJSON_AddItemToObject(e, "steps", rb_json_u64(fig->steps));
    cJSON_AddItemToObject(e, "samples", rb_json_u64(fig->samples));
    cJSON_AddItemToObject(e, "bytes", rb_json_u64(fig->bytes));
    cJSON_AddNumberToObject(e, "duration_s", p->duration_s);
    cJSON_AddNumberToObject(e, "samples_per_s", fig->samples_per_s);
    cJSON_AddNumberToObject(e, "bytes_per_s", fig->bytes_per_s);
    cJSON_AddNumberToObject(e, "au_pct", fig->au_pct);
    cJSON_AddItemToObject(e, "data_wait_p50_ns", rb_json_u64(rb_hist_percentile(wait, 50)));
    cJSON_AddItemToObject(e, "data_wait_p99_ns", rb_json_u64(rb_hist_percentile(wait, 99)));
    cJSON_AddItemToObject(e, "data_wait_ns", rb_hist_summary_json(wait));
    /* The step's barrier or --grad-bytes all-reduce: waiting for the other ranks, not for storage. */
    cJSON_AddItemToObject(e, "sync_ns", rb_hist_summary_json(sync));
    cJSON_AddItemToObject(e, "step_time", rb_train_steps_json(ranks_json));
    cJSON_AddItemToObject(e, "net_bytes", net_bytes_json(p->record));
    cJSON_AddItemToObject(e, "requests", rb_json_u64(p->total ? p->total->ops : 0));
    cJSON_AddItemToObject(e, "errors", rb_json_u64(p->total ? p->total->errors : 0));
    if ((R->a->cache_header || R->a->file.cold_check) && p->total) { /* --cold-check counts page-cache residency */
        cJSON_AddItemToObject(e, "cache_hit", rb_json_u64(p->total->extra[RB_LX_CACHE_HIT]));
        cJSON_AddItemToObject(e, "cache_miss", rb_json_u64(p->total->extra[RB_LX_CACHE_MISS]));
    }
    if (interrupted)
        cJSON_AddBoolToObject(e, "interrupted", true);
    cJSON_AddItemToObject(e, "ranks", ranks);
    return e;
}

/* ---- the report ---- */

/* A duration in ns from JSON (a whole or fractional number); "–" when it is null or absent (not measured). */
static void fmt_ns(char *buf, size_t len, const cJSON *v)
{
    uint64_t ns = 0;
    if (cJSON_IsNumber(v) && v->valuedouble >= 0)
        ns = (uint64_t)v->valuedouble;
    else if (rb_json_get_u64(v, &ns) != 0) {
        snprintf(buf, len, "–");
        return;
    }
    rb_format_duration_human(buf, len, ns);
}

static void table_epochs(struct rb_buf *b, const struct rb_train_run *R, const struct trial *tr)
{
    rb_buf_printf(b, "| epoch | data | steps | samples | samples/s | MiB/s | AU %% | data wait p50 | data wait p99 |\n"
                     "|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
    const cJSON *e;
    cJSON_ArrayForEach(e, tr->epochs)
    {
        char p50[16], p99[16];
        fmt_ns(p50, sizeof p50, cJSON_GetObjectItemCaseSensitive(e, "data_wait_p50_ns"));
        fmt_ns(p99, sizeof p99, cJSON_GetObjectItemCaseSensitive(e, "data_wait_p99_ns"));
        uint64_t steps = 0, samples = 0;
        rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(e, "steps"), &steps);
        rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(e, "samples"), &samples);
        const char *cache = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "cache"));
        const char *basis = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "cache_basis"));
        rb_buf_printf(b, "| %.0f%s | %s%s%s | %" PRIu64 " | %" PRIu64 " | %.1f | %.2f | %.1f | %s | %s |\n",
                      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "epoch")), R->a->overlap ? " (overlapped)" : "",
                      cache ? cache : "–", basis && strcmp(basis, "configured") == 0 ? " (configured)" : "",
                      cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(e, "complete"))
                          ? (R->h->interrupted ? " (interrupted)" : " (cut short)") : "",
                      steps, samples, cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "samples_per_s")),
                      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "bytes_per_s")) / (double)RB_MIB,
                      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "au_pct")), p50, p99);
    }
    if (R->a->overlap)
        rb_buf_printf(b, "\nWith --overlap the epoch above is the overlapped phase, the last row of the interference "
                         "table below: the data's second read in this run (the storage-alone phase read it first), "
                         "hence warm. MiB/s: bytes over the epoch's wall time.\n");
}

/* The verdict line, and when AU misses the threshold, what the data wait says about why. */
static void table_verdict(struct rb_buf *b, const struct rb_train_run *R, const struct trial *tr)
{
    const struct train_args *a = R->a;
    if (!tr->nfig) {
        rb_buf_printf(b, "\nAU mean – (--au-min %g %%): FAIL; no epoch ran to its end over %" PRIu64
                         " simulated accelerator(s)\n", a->au_min, tr->accel * (uint64_t)R->h->size);
        return;
    }
    rb_buf_printf(b, "\nAU mean %.1f %% (--au-min %g %%): %s; %.1f samples/s over %" PRIu64 " simulated accelerator(s)%s\n",
                  tr->au_mean_pct, a->au_min, tr->met ? "PASS" : "FAIL", tr->samples_per_s,
                  tr->accel * (uint64_t)R->h->size,
                  (size_t)cJSON_GetArraySize(tr->epochs) > tr->nfig ? " (epochs that ran to their end)" : "");
    if (tr->met || !cJSON_GetArraySize(tr->epochs))
        return;
    /* The epoch with the lowest AU is the one to explain (a cold epoch, when the warm ones are fine). */
    const cJSON *e, *worst = NULL;
    cJSON_ArrayForEach(e, tr->epochs)
        if (!worst || cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "au_pct")) <
                          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(worst, "au_pct")))
            worst = e;
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(worst, "data_wait_ns");
    const cJSON *sy = cJSON_GetObjectItemCaseSensitive(worst, "sync_ns");
    char mean[16], p99[16], comp[16], sync[16];
    fmt_ns(mean, sizeof mean, cJSON_GetObjectItemCaseSensitive(w, "mean"));
    fmt_ns(p99, sizeof p99, cJSON_GetObjectItemCaseSensitive(w, "p99"));
    fmt_ns(sync, sizeof sync, cJSON_GetObjectItemCaseSensitive(sy, "mean"));
    rb_format_duration_human(comp, sizeof comp, a->compute_ns);
    rb_buf_printf(b, "In epoch %.0f (AU %.1f %%) each accelerator waited %s on average (p99 %s) per step for its batch "
                     "against %s of compute; the step's %s took %s on average (waiting for the other ranks, "
                     "not for storage).\n",
                  cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(worst, "epoch")),
                  cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(worst, "au_pct")), mean, p99, comp,
                  a->grad_bytes ? "all-reduce of --grad-bytes" : "barrier", sync);
    uint64_t req = 0, err = 0;
    rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(worst, "requests"), &req);
    rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(worst, "errors"), &err);
    if (err)
        rb_buf_printf(b, "%" PRIu64 " of %" PRIu64 " reads failed in that epoch: their batches delivered no samples "
                         "and their accelerators computed nothing.\n", err, req);
}

static cJSON *trial_tried_json(const struct trial *tr, int ranks)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "accelerators", (double)tr->accel * ranks);
    cJSON_AddNumberToObject(o, "accelerators_per_rank", (double)tr->accel);
    cJSON_AddItemToObject(o, "au_pct", rb_json_number(tr->au_mean_pct));
    cJSON_AddItemToObject(o, "samples_per_s", rb_json_number(tr->samples_per_s));
    cJSON_AddNumberToObject(o, "epochs", (double)tr->nfig);
    uint64_t steps = tr->nfig ? tr->fig[0].steps : 0;
    cJSON_AddItemToObject(o, "steps", rb_json_u64(steps));
    cJSON_AddBoolToObject(o, "met", tr->met);
    if (tr->interrupted)
        cJSON_AddBoolToObject(o, "interrupted", true);
    return o;
}

/* Rank 0: the run's summary — the keys `railbench report` reads (train_epochs ... find_max), then the details. */
static cJSON *summary_json(const struct rb_train_run *R, const struct trial *trials, size_t ntrials,
                           const struct trial *best, const struct rb_train_search *search, bool passed)
{
    const struct train_args *a = R->a;
    const int ranks = R->h->size;
    cJSON *s = cJSON_CreateObject();
    cJSON_AddItemToObject(s, "train_epochs", cJSON_Duplicate(best->epochs, 1));
    cJSON_AddItemToObject(s, "au_mean_pct", rb_json_number(best->au_mean_pct)); /* null: no epoch ran to its end */
    cJSON_AddItemToObject(s, "samples_per_s", rb_json_number(best->samples_per_s));
    cJSON_AddNumberToObject(s, "au_min_pct", a->au_min);
    cJSON_AddNumberToObject(s, "au_threshold", a->au_min / 100); /* the same as a fraction, as MLPerf Storage states it */
    cJSON_AddBoolToObject(s, "passed", passed);
    cJSON_AddNumberToObject(s, "accelerators", (double)best->accel * ranks);
    if (a->find_max) {
        cJSON *fm = cJSON_AddObjectToObject(s, "find_max");
        cJSON_AddNumberToObject(fm, "max_accelerators", (double)search->lo * ranks);
        cJSON_AddNumberToObject(fm, "max_accelerators_per_rank", (double)search->lo);
        cJSON_AddNumberToObject(fm, "search_limit_per_rank", (double)search->max);
        cJSON_AddStringToObject(fm, "limited_by", search->max < a->max_accel ? "data set (two steps per trial)"
                                                                              : "--max-accelerators-per-rank");
        cJSON_AddBoolToObject(fm, "complete", search->done);
        cJSON *tried = cJSON_AddArrayToObject(fm, "tried");
        for (size_t i = 0; i < ntrials; i++)
            cJSON_AddItemToArray(tried, trial_tried_json(&trials[i], ranks));
    } else {
        cJSON_AddNullToObject(s, "find_max");
    }
    cJSON_AddNumberToObject(s, "accelerators_per_rank", (double)best->accel);
    cJSON_AddNumberToObject(s, "ranks", ranks);
    cJSON *w = cJSON_AddObjectToObject(s, "workload");
    cJSON_AddStringToObject(w, "preset", a->preset ? a->preset->name : "custom");
    cJSON_AddItemToObject(w, "batch_size", rb_json_u64(a->batch));
    cJSON_AddItemToObject(w, "samples_per_object", rb_json_u64(a->spo));
    if (a->sample_known) {
        cJSON_AddItemToObject(w, "sample_bytes", rb_json_u64(a->sample_bytes));
        cJSON_AddItemToObject(w, "sample_stdev_bytes", rb_json_u64(a->sample_stdev));
    }
    cJSON_AddItemToObject(w, "compute_ns", rb_json_u64(a->compute_ns));
    cJSON_AddItemToObject(w, "compute_stdev_ns", rb_json_u64(a->compute_stdev_ns));
    cJSON_AddItemToObject(w, "read_threads", rb_json_u64(a->read_threads));
    cJSON_AddItemToObject(w, "inflight", rb_json_u64(a->inflight));
    cJSON_AddStringToObject(w, "sync", a->grad_bytes ? "allreduce" : "barrier");
    cJSON_AddItemToObject(w, "grad_bytes", rb_json_u64(a->grad_bytes));
    cJSON_AddStringToObject(s, "target", rb_target_name(R->t));
    cJSON_AddStringToObject(s, "engine", rb_engine_name(&R->fetch));
    if (rb_target_can(R->fetch.target, RB_TCAP_FILES))
        rb_file_summary_json(s, &R->a->file);
    cJSON_AddItemToObject(s, "requests", rb_json_u64(R->requests));
    cJSON_AddItemToObject(s, "errors", rb_json_u64(R->errors));
    return s;
}

/* Rank 0: the report printed at the end and written to table.md. */
static void report_md(struct rb_buf *b, const struct rb_train_run *R, const struct trial *trials, size_t ntrials,
                      const struct trial *best, const struct rb_train_search *search, bool small_dataset,
                      const cJSON *interference)
{
    const struct train_args *a = R->a;
    const int ranks = R->h->size;
    char sync[64] = "barrier", comp[32];
    if (a->grad_bytes) {
        char g[32];
        rb_format_size(g, sizeof g, a->grad_bytes);
        snprintf(sync, sizeof sync, "MPI_Allreduce of %s", g);
    }
    rb_format_duration_human(comp, sizeof comp, a->compute_ns);
    rb_buf_printf(b, "\n# railbench load train %s\n\n", rb_target_name(R->t));
    rb_buf_printf(b, "%s: %d rank(s) x %" PRIu64 " accelerator(s); batch %" PRIu64 ", %" PRIu64
                     " sample(s) per object, compute %s%s per step, then %s; %u read thread(s) x %u in flight\n\n",
                  a->preset ? a->preset->name : "custom workload", ranks, best->accel, a->batch, a->spo, comp,
                  a->compute_stdev_ns ? " (mean)" : "", sync, R->nloaders, R->fetch.inflight);
    table_epochs(b, R, best);
    table_verdict(b, R, best);
    rb_train_interference_md(b, R, interference);
    if (a->find_max) {
        rb_buf_printf(b, "\n| accelerators | per rank | steps | AU %% | samples/s | meets --au-min |\n"
                         "|---:|---:|---:|---:|---:|---|\n");
        for (size_t i = 0; i < ntrials; i++) {
            char au[24] = "–", sps[24] = "–";
            if (trials[i].nfig) {
                snprintf(au, sizeof au, "%.1f", trials[i].au_mean_pct);
                snprintf(sps, sizeof sps, "%.1f", trials[i].samples_per_s);
            }
            rb_buf_printf(b, "| %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %s | %s | %s |\n",
                          trials[i].accel * (uint64_t)ranks, trials[i].accel, trials[i].nfig ? trials[i].fig[0].steps : 0,
                          au, sps, trials[i].met ? "yes" : "no");
        }
        if (search->lo)
            rb_buf_printf(b, "\nMost simulated accelerators with AU >= %g %%: %" PRIu64 " (%" PRIu64
                             " per rank x %d rank(s))%s\n", a->au_min, search->lo * (uint64_t)ranks, search->lo, ranks,
                          search->lo == search->max ? ", the search's limit" : "");
        else
            rb_buf_printf(b, "\nNot even one accelerator per rank keeps AU >= %g %%.\n", a->au_min);
    }
    if (small_dataset)
        rb_buf_printf(b, "\nNote: the data set is smaller than %d x the client hosts' memory; page caches may serve it "
                         "(MLPerf Storage asks for at least %dx).\n", MEMORY_FACTOR, MEMORY_FACTOR);
}

/* Rank 0: the checks asked for (--strict, --max-error-rate) and the search's gauge. */
static void record_checks(struct rb_train_run *R, const struct trial *best, const struct rb_train_search *search,
                          bool passed)
{
    const struct train_args *a = R->a;
    struct rb_harness *h = R->h;
    if (a->strict) {
        if (a->find_max)
            rb_result_check(&h->result, "au_min", passed, "%" PRIu64 " simulated accelerator(s) keep AU >= %g %%",
                            search->lo * (uint64_t)h->size, a->au_min);
        else if (!best->nfig)
            rb_result_check(&h->result, "au_min", false, "AU mean not measured (no epoch ran to its end) against "
                            "--au-min %g %%", a->au_min);
        else
            rb_result_check(&h->result, "au_min", passed, "AU mean %.2f %% against --au-min %g %%", best->au_mean_pct,
                            a->au_min);
    }
    /* A run whose read thread stopped said why in its one error line: the error rate is recorded, not said again. */
    (R->broken ? rb_load_record_errors : rb_load_check_errors)(&h->result, NULL, "reads", NULL, R->errors, R->requests,
                                                               a->max_error_pct);
    if (a->find_max) {
        char l[64];
        snprintf(l, sizeof l, "au_min=\"%g\"", a->au_min);
        rb_harness_metric(h, "railbench_train_max_accelerators", "gauge",
                          "Most simulated accelerators that kept AU at or above --au-min.", l,
                          (double)search->lo * h->size);
    }
}


void rb_train_report(struct rb_train_run *R, struct rb_buf *table)
{
    /* The reported epochs: the only trial, or the search's best (its first trial when none met --au-min). */
    const struct trial *best = &R->trials[0];
    for (size_t i = 0; R->a->find_max && i < R->ntrials; i++)
        if (R->trials[i].accel == R->search.lo && R->trials[i].met)
            best = &R->trials[i];
    bool passed = R->a->find_max ? R->search.lo >= 1 : best->met;
    cJSON *s = summary_json(R, R->trials, R->ntrials, best, &R->search, passed);
    if (R->dataset)
        cJSON_AddItemToObject(s, "dataset", R->dataset);
    if (R->populated)
        cJSON_AddItemToObject(s, "populate", R->populated);
    cJSON_AddItemToObject(s, "interference", R->interference ? R->interference : cJSON_CreateNull());
    cJSON_AddItemToObject(s, "checkpoint", R->checkpoint ? R->checkpoint : cJSON_CreateNull());
    R->checkpoint = NULL;
    bool small = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(R->dataset, "page_cache_may_hide_storage"));
    R->dataset = R->populated = R->interference = NULL;
    rb_result_set(&R->h->result, "summary", s);
    rb_provenance_write(&R->h->result);
    report_md(table, R, R->trials, R->ntrials, best, &R->search, small,
              cJSON_GetObjectItemCaseSensitive(s, "interference"));
    record_checks(R, best, &R->search, passed);
}
