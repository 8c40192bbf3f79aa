/* railbench fabric counters: per-host disk, NIC and InfiniBand rates every interval. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"
#include "railbench/clock.h"
#include "railbench/counters.h"
#include "railbench/harness.h"
#include "railbench/log.h"
#include "railbench/units.h"

struct counters_ctx {
    const char *root;
    struct rb_counters_sample prev, cur;
    bool have_prev;
};

static double num(const cJSON *o, const char *k)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* Sums a device array's field over its entries. */
static double sum_field(const cJSON *host, const char *section, const char *field)
{
    double s = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(host, section))
    {
        double v = num(d, field);
        if (v == v)
            s += v;
    }
    return s;
}

static double max_field(const cJSON *host, const char *section, const char *field)
{
    double m = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(host, section))
    {
        double v = num(d, field);
        if (v > m)
            m = v;
    }
    return m;
}

/* Why a cell is "–": the host has no device of that kind to read (bits of host_row's *why). */
enum { NO_DISK = 1, NO_NET = 2, NO_IB = 4 };

/* One cell: v with its width and decimals, or "–" (padded as one column) when the host has no such device. */
static size_t cell(char *buf, size_t len, bool have, int width, int decimals, double v)
{
    int n = have ? snprintf(buf, len, " %*.*f |", width, decimals, v) : snprintf(buf, len, " %*s |", width + 2, "–");
    return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

static void host_row(char *buf, size_t len, const char *label, const cJSON *h, unsigned *why)
{
    const bool disk = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(h, "disk")) > 0;
    const bool net = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(h, "net")) > 0;
    const bool ib = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(h, "ib")) > 0;
    *why |= (disk ? 0 : NO_DISK) | (net ? 0 : NO_NET) | (ib ? 0 : NO_IB);
    int n = snprintf(buf, len, "| %-16s |", label);
    size_t o = n > 0 && (size_t)n < len ? (size_t)n : 0;
    o += cell(buf + o, len - o, disk, 9, 0, sum_field(h, "disk", "read_iops"));
    o += cell(buf + o, len - o, disk, 9, 0, sum_field(h, "disk", "write_iops"));
    o += cell(buf + o, len - o, disk, 8, 2, sum_field(h, "disk", "read_bytes_per_s") / (double)RB_MIB);
    o += cell(buf + o, len - o, disk, 8, 2, sum_field(h, "disk", "write_bytes_per_s") / (double)RB_MIB);
    o += cell(buf + o, len - o, disk, 6, 1, 100.0 * max_field(h, "disk", "util_ratio"));
    o += cell(buf + o, len - o, net, 12, 2, sum_field(h, "net", "rx_bytes_per_s") / (double)RB_MIB);
    o += cell(buf + o, len - o, net, 12, 2, sum_field(h, "net", "tx_bytes_per_s") / (double)RB_MIB);
    o += cell(buf + o, len - o, ib, 11, 2, sum_field(h, "ib", "rx_bytes_per_s") / (double)RB_MIB);
    o += cell(buf + o, len - o, ib, 11, 2, sum_field(h, "ib", "tx_bytes_per_s") / (double)RB_MIB);
    o += cell(buf + o, len - o, true, 5, 1, 100.0 * num(h, "cpu_util_ratio"));
    if (o < len)
        snprintf(buf + o, len - o, "\n");
}

/* The lines under the table that say why a column is "–". Returns the bytes written. */
static size_t why_notes(char *buf, size_t len, unsigned why)
{
    static const struct {
        unsigned bit;
        const char *line;
    } notes[] = {{NO_DISK, "disk –: not measured; no block device to read in /sys/block"},
                 {NO_NET, "net –: not measured; no network interface but lo (lo is left out)"},
                 {NO_IB, "IB –: not measured; no InfiniBand or RoCE port in /sys/class/infiniband"}};
    size_t o = 0;
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++) {
        if (!(why & notes[i].bit))
            continue;
        int n = snprintf(buf + o, len - o, "%s%s\n", o ? "" : "\n", notes[i].line);
        if (n < 0 || (size_t)n >= len - o)
            break;
        o += (size_t)n;
    }
    return o;
}

static const char table_head[] =
    "| host             |  disk r/s |  disk w/s | rd MiB/s | wr MiB/s | util % | net rx MiB/s | net tx MiB/s | IB rx MiB/s | IB tx MiB/s | cpu % |\n"
    "|------------------|----------:|----------:|---------:|---------:|-------:|-------------:|-------------:|------------:|------------:|------:|\n";

static void on_tick(void *arg, struct rb_harness *h, const struct rb_stats *interval, double t_s)
{
    (void)interval;
    struct counters_ctx *c = arg;
    cJSON *mine = NULL;
    if (h->local_rank == 0 && rb_counters_sample(c->root, &c->cur) == 0) {
        if (c->have_prev) {
            struct rb_counters_rates *r = malloc(sizeof *r);
            if (r) {
                rb_counters_rates(&c->prev, &c->cur, r);
                mine = rb_counters_rates_json(r);
                cJSON_AddStringToObject(mine, "host", h->host);
                free(r);
            }
        }
        c->prev = c->cur;
        c->have_prev = true;
    }
    cJSON *all = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    if (h->rank != 0 || !all) {
        cJSON_Delete(all);
        return;
    }
    if (cJSON_GetArraySize(all) > 0 && rb_log_get_level() >= RB_LOG_INFO) {
        printf("t=%.1fs\n", t_s);
        fputs(table_head, stdout);
        const cJSON *host;
        unsigned why = 0; /* the table at the end says why a column is – */
        cJSON_ArrayForEach(host, all)
        {
            char row[512];
            host_row(row, sizeof row, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(host, "host")), host, &why);
            fputs(row, stdout);
        }
        fflush(stdout);
    }
    cJSON *line = cJSON_CreateObject();
    cJSON_AddStringToObject(line, "phase", "counters");
    cJSON_AddNumberToObject(line, "t_s", t_s);
    cJSON_AddItemToObject(line, "hosts", all);
    rb_result_interval(&h->result, line);
}

static bool never_done(void *ctx)
{
    (void)ctx;
    return false;
}

int rb_fabric_counters_main(int argc, char **argv)
{
    uint64_t duration_ns = 10 * RB_NS_PER_S;
    const char *root = "/";
    const struct rb_opt opts[] = {
        {"duration", 0, RB_OPT_DURATION, &duration_ns, "DURATION", "how long to sample", NULL},
        {"root", 0, RB_OPT_STR, &root, "DIR", "root of the proc and sys trees to read", NULL},
        {0},
    };
    const struct rb_cmd_spec spec = {
        "railbench fabric counters [options]",
        "Print per-host disk, NIC and InfiniBand rates every interval (every host under mpirun).",
        opts, 0, 0, false};
    struct rb_cli cli;
    int rc;
    if (!rb_cli_parse_cmd(&cli, &spec, argc, argv, &rc))
        return rc;
    if (duration_ns == 0) {
        rb_cli_free(&cli);
        return rb_cli_usage_error("--duration: must be greater than 0 (e.g. 10s)");
    }
    struct rb_harness h;
    rc = rb_harness_init(&h, "fabric counters", &cli, &(struct rb_harness_opts){.mpi = true});
    if (rc != 0) {
        rb_cli_free(&cli);
        return rc;
    }
    h.counters_root = root;

    struct counters_ctx *c = calloc(1, sizeof *c);
    if (!c)
        rb_harness_fatal(&h, RB_EXIT_RUNTIME, "out of memory");
    c->root = root;
    if (h.local_rank == 0 && rb_counters_sample(root, &c->prev) != 0)
        rb_harness_fatal(&h, RB_EXIT_RUNTIME, "--root %s: cannot read counters there", root);
    c->have_prev = h.local_rank == 0;

    struct rb_phase p = {.name = "counters", .op = "sample", .duration_ns = duration_ns,
                         .done = never_done, .on_tick = on_tick, .ctx = c, .no_stats = true};
    rc = rb_harness_run_phase(&h, &p);

    char *table = NULL;
    if (h.rank == 0 && p.record) {
        /* The whole run per host, from the phase's start and end samples. */
        size_t cap = 4096, len = 0;
        table = malloc(cap);
        len += (size_t)snprintf(table, cap, "\n# railbench fabric counters: %.1f s\n\n", p.duration_s);
        len += (size_t)snprintf(table + len, cap - len, "%s", table_head);
        const cJSON *host;
        unsigned why = 0;
        cJSON_ArrayForEach(host, cJSON_GetObjectItemCaseSensitive(p.record, "counters"))
        {
            char row[512];
            host_row(row, sizeof row, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(host, "host")), host, &why);
            if (len + strlen(row) + 1 > cap) {
                cap *= 2;
                char *t = realloc(table, cap);
                if (!t)
                    break;
                table = t;
            }
            len += (size_t)snprintf(table + len, cap - len, "%s", row);
        }
        char notes[512];
        size_t nl = why_notes(notes, sizeof notes, why);
        char *t = nl && table && len + nl + 1 > cap ? realloc(table, cap = len + nl + 1) : table;
        if (t && nl) {
            table = t;
            len += (size_t)snprintf(table + len, cap - len, "%s", notes);
        }
        rb_result_set(&h.result, "summary", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(p.record, "counters"), 1));
    }
    rc = rb_harness_finish(&h, table, rc);
    free(table);
    free(c);
    rb_harness_phase_free(&p);
    rb_cli_free(&cli);
    return rc;
}
