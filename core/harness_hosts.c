/* Straggler hosts: a phase's totals per host (reduced over each host's ranks) and the hosts far from the others. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_int.h"
#include "railbench/log.h"
#include "railbench/outlier.h"

/* Sums the ranks of this host into out on its first rank (node_comm), histogram min/max exact. */
static void reduce_host(struct rb_harness *h, const struct rb_stats *in, struct rb_stats *out)
{
    RB_MPI_CHECK(MPI_Reduce(in, out, (int)RB_STATS_U64S, MPI_UINT64_T, MPI_SUM, 0, h->node_comm));
    uint64_t mm[4], mm_all[4];
    rb_stats_minmax_pack(in, mm);
    RB_MPI_CHECK(MPI_Reduce(mm, mm_all, 4, MPI_UINT64_T, MPI_MIN, 0, h->node_comm));
    if (h->local_rank == 0)
        rb_stats_minmax_unpack(out, mm_all);
}

static double num_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

/* One figure of every host against the others; appends the hosts it flags to outliers. */
static void judge(cJSON *hosts, cJSON *outliers, const char *figure, const char *a, const char *b, bool higher)
{
    int n = cJSON_GetArraySize(hosts);
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return;
    for (int i = 0; i < n; i++)
        v[i] = num_at(cJSON_GetArrayItem(hosts, i), a, b);
    struct rb_outlier_fleet f;
    if (rb_outlier_fleet(v, (size_t)n, &f) == 0) {
        for (int i = 0; i < n; i++) {
            if (!rb_outlier_is(&f, v[i], higher, RB_OUTLIER_THRESHOLD, 0))
                continue;
            const cJSON *host = cJSON_GetArrayItem(hosts, i);
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "host", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(host, "host")));
            cJSON_AddStringToObject(o, "figure", figure);
            cJSON_AddNumberToObject(o, "value", v[i]);
            cJSON_AddNumberToObject(o, "median", f.median);
            cJSON_AddNumberToObject(o, "mad", f.mad);
            cJSON_AddNumberToObject(o, "ratio", rb_outlier_ratio(&f, v[i]));
            cJSON_AddItemToArray(outliers, o);
        }
    }
    free(v);
}

/* Rank 0: the per-host table and the outliers in plain words on stdout. */
static void print_hosts(const char *phase, const cJSON *hosts, const cJSON *outliers)
{
    printf("\n# hosts of phase %s (straggler if below %.2fx the median throughput or ops/s, or p99 above 1/%.2fx)\n"
           "| %-20s | %5s | %12s | %10s | %10s | %10s | %8s |\n"
           "|----------------------|------:|-------------:|-----------:|-----------:|-----------:|---------:|\n",
           phase, RB_OUTLIER_THRESHOLD, RB_OUTLIER_THRESHOLD, "host", "ranks", "MiB/s", "ops/s", "p50 ms", "p99 ms",
           "errors");
    const cJSON *x;
    cJSON_ArrayForEach(x, hosts)
    {
        printf("| %-20.20s | %5.0f | %12.2f | %10.1f | %10.3f | %10.3f | %8.0f |\n",
               cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "host")), num_at(x, "ranks", NULL),
               num_at(x, "throughput_bytes_per_s", NULL) / 1048576.0, num_at(x, "ops_per_s", NULL),
               num_at(x, "latency_ns", "p50") / 1e6, num_at(x, "latency_ns", "p99") / 1e6,
               num_at(x, "errors", "total"));
    }
    cJSON_ArrayForEach(x, outliers)
    {
        printf("straggler: %s: %s %.3g is %.2fx the hosts' median (%.3g)\n",
               cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "host")),
               cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "figure")), num_at(x, "value", NULL),
               num_at(x, "ratio", NULL), num_at(x, "median", NULL));
    }
    fflush(stdout);
}

void rb_harness_hosts_record(struct rb_harness *h, struct rb_phase *p, const struct rb_stats *rank_total)
{
    if (!h->mpi || h->host_count < 2 || p->no_stats)
        return;
    struct rb_stats *host = rb_stats_new();
    if (!host)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    reduce_host(h, rank_total, host);
    cJSON *mine = NULL;
    if (h->local_rank == 0) {
        mine = cJSON_CreateObject();
        cJSON_AddStringToObject(mine, "host", h->host);
        cJSON_AddNumberToObject(mine, "ranks", h->local_size);
        rb_stats_to_json(mine, host, &p->names, p->duration_s, false);
        cJSON_DeleteItemFromObjectCaseSensitive(mine, "ttfb_ns");
    }
    rb_stats_free(host);
    cJSON *hosts = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    if (h->rank != 0 || !hosts)
        return;
    cJSON *outliers = cJSON_CreateArray();
    judge(hosts, outliers, "throughput_bytes_per_s", "throughput_bytes_per_s", NULL, true);
    judge(hosts, outliers, "ops_per_s", "ops_per_s", NULL, true);
    judge(hosts, outliers, "latency_p99_ns", "latency_ns", "p99", false);
    if (rb_log_get_level() >= RB_LOG_INFO && !p->no_progress)
        print_hosts(p->name, hosts, outliers);
    if (p->record) {
        cJSON_AddItemToObject(p->record, "hosts", hosts);
        cJSON_AddItemToObject(p->record, "outliers", outliers);
    } else {
        cJSON_Delete(hosts);
        cJSON_Delete(outliers);
    }
}
