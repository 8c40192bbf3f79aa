/* The harness's Prometheus side: exporters started with the run, per-host metrics each tick, final outputs. */
#define _GNU_SOURCE
#include "railbench/harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/clock.h"
#include "railbench/log.h"
#include "railbench/prom.h"
#include "railbench/units.h"

#include "harness_int.h"

/* Appends the run's --label pairs to out (o bytes used), each after a comma when something precedes it. */
static void append_labels(const struct rb_cli *cli, char *out, size_t len, size_t o)
{
    for (size_t i = 0; cli && i < cli->common.labels.n; i++) {
        const char *kv = cli->common.labels.v[i], *eq = strchr(kv, '=');
        char val[512];
        rb_prom_escape(val, sizeof val, eq + 1);
        int n = snprintf(out + o, len - o, "%s%.*s=\"%s\"", o ? "," : "", (int)(eq - kv), kv, val);
        if (n < 0 || (size_t)n >= len - o) {
            out[o] = '\0';
            break;
        }
        o += (size_t)n;
    }
}

/* Every series carries the run's --label pairs and run="<the result directory's name>" unless a --label
 * names the run: a dashboard selects a run by its own label, even when several runs shared one port. */
static void const_labels(const struct rb_harness *h, char *out, size_t len)
{
    const struct rb_cli *cli = h->cli;
    for (size_t i = 0; cli && i < cli->common.labels.n; i++) {
        if (strncmp(cli->common.labels.v[i], "run=", 4) == 0) {
            out[0] = '\0';
            append_labels(cli, out, len, 0);
            return;
        }
    }
    size_t end = strlen(h->out_dir), start;
    while (end > 1 && h->out_dir[end - 1] == '/')
        end--;
    for (start = end; start > 0 && h->out_dir[start - 1] != '/'; start--)
        ;
    char name[512], val[512];
    snprintf(name, sizeof name, "%.*s", (int)(end - start), h->out_dir + start);
    rb_prom_escape(val, sizeof val, name);
    int n = snprintf(out, len, "run=\"%s\"", val);
    size_t o = n > 0 && (size_t)n < len ? (size_t)n : 0;
    out[o] = '\0';
    append_labels(cli, out, len, o);
}

/* Starts the exporters asked for; returns an exit status agreed by every rank. */
int rb_harness_metrics_init(struct rb_harness *h)
{
    const struct rb_common *c = &h->cli->common;
    h->metrics = c->prom_listen || c->prom_textfile || c->pushgateway || c->prom_per_rank_port;
    if (!h->metrics)
        return 0;
    char labels[2048], msg[512];
    const_labels(h, labels, sizeof labels);
    int status = 0;
    if (h->rank == 0) {
        h->prom = rb_prom_new(labels);
        if (!h->prom)
            status = RB_EXIT_RUNTIME;
        else if (c->prom_listen) {
            int rc = rb_prom_listen(h->prom, c->prom_listen, msg, sizeof msg);
            if (rc == -EINVAL) {
                fprintf(stderr, "railbench: error: --prom-listen: %s\n", msg);
                status = RB_EXIT_USAGE;
            } else if (rc) {
                rb_error("--prom-listen: %s", msg);
                status = RB_EXIT_RUNTIME;
            }
        }
        char cmd[128], ver[128], l[300];
        rb_prom_escape(cmd, sizeof cmd, h->command);
        rb_prom_escape(ver, sizeof ver, rb_version());
        snprintf(l, sizeof l, "command=\"%s\",version=\"%s\"", cmd, ver);
        rb_prom_set(h->prom, "railbench_run_info", "gauge", "The run: command and version (and run id).",
                    l, 1);
    }
    if (!status && c->prom_per_rank_port) {
        uint64_t port = c->prom_per_rank_port + (uint64_t)h->rank;
        h->prom_rank = rb_prom_new(labels);
        char spec[32];
        snprintf(spec, sizeof spec, "127.0.0.1:%llu", (unsigned long long)port);
        int rc = port > 65535 ? -EINVAL : rb_prom_listen(h->prom_rank, spec, msg, sizeof msg);
        if (rc == -EINVAL) {
            fprintf(stderr, "railbench: error: --prom-per-rank: %llu + rank %d is not a port 1-65535\n",
                    (unsigned long long)c->prom_per_rank_port, h->rank);
            status = RB_EXIT_USAGE;
        } else if (rc) {
            rb_error("--prom-per-rank: %s", msg);
            status = RB_EXIT_RUNTIME;
        }
    }
    if (h->mpi) {
        int mine = status;
        RB_MPI_CHECK(MPI_Allreduce(&mine, &status, 1, MPI_INT, MPI_MAX, h->comm));
    }
    return status;
}

void rb_harness_metric(struct rb_harness *h, const char *name, const char *type, const char *help,
                       const char *labels, double value)
{
    rb_prom_set(h->prom, name, type, help, labels, value);
}

/* This host's disk utilisation over the last tick and network bytes since the run started. */
static cJSON *host_metrics(struct rb_harness *h)
{
    struct rb_counters_sample *cur = malloc(sizeof *cur);
    struct rb_counters_rates *r = malloc(sizeof *r);
    cJSON *o = NULL;
    if (!cur || !r || rb_counters_sample(h->counters_root, cur) != 0)
        goto out;
    if (!h->prom_c0) {
        h->prom_c0 = malloc(sizeof *h->prom_c0);
        h->prom_cprev = malloc(sizeof *h->prom_cprev);
        if (!h->prom_c0 || !h->prom_cprev)
            goto out;
        *h->prom_c0 = *cur;
        *h->prom_cprev = *cur;
    }
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "host", h->host);
    rb_counters_rates(h->prom_cprev, cur, r);
    cJSON *disk = cJSON_AddArrayToObject(o, "disk");
    for (size_t i = 0; i < r->ndisk; i++) {
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "name", r->disk[i].name);
        cJSON_AddNumberToObject(d, "util", r->disk[i].util_ratio);
        cJSON_AddItemToArray(disk, d);
    }
    rb_counters_rates(h->prom_c0, cur, r);
    cJSON *net = cJSON_AddArrayToObject(o, "net");
    for (size_t i = 0; i < r->nnet + r->nib; i++) {
        const struct rb_net_rate *n = i < r->nnet ? &r->net[i] : &r->ib[i - r->nnet];
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "name", n->name);
        cJSON_AddNumberToObject(d, "rx", (double)n->rx_bytes);
        cJSON_AddNumberToObject(d, "tx", (double)n->tx_bytes);
        cJSON_AddItemToArray(net, d);
    }
    *h->prom_cprev = *cur;
out:
    free(cur);
    free(r);
    return o;
}

void rb_harness_metrics_update(struct rb_harness *h)
{
    if (!h->metrics)
        return;
    cJSON *mine = h->local_rank == 0 ? host_metrics(h) : NULL;
    cJSON *all = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    if (h->prom && all) {
        const cJSON *host, *d;
        cJSON_ArrayForEach(host, all)
        {
            char hn[300], dn[128], l[600];
            rb_prom_escape(hn, sizeof hn, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(host, "host")));
            cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(host, "disk"))
            {
                rb_prom_escape(dn, sizeof dn, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "name")));
                snprintf(l, sizeof l, "host=\"%s\",device=\"%s\"", hn, dn);
                rb_prom_set(h->prom, "railbench_disk_utilization_ratio", "gauge",
                            "Share of the last interval the device had I/O in flight.", l,
                            cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "util")));
            }
            cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(host, "net"))
            {
                rb_prom_escape(dn, sizeof dn, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "name")));
                static const char *const dir[] = {"rx", "tx"};
                for (int k = 0; k < 2; k++) {
                    snprintf(l, sizeof l, "host=\"%s\",device=\"%s\",direction=\"%s\"", hn, dn, dir[k]);
                    rb_prom_set(h->prom, "railbench_network_bytes_total", "counter",
                                "Bytes through the interface (Ethernet or InfiniBand port) since the run started.",
                                l, cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, dir[k])));
                }
            }
        }
    }
    cJSON_Delete(all);
    rb_prom_publish(h->prom);
    rb_prom_publish(h->prom_rank);
}

/* Final metrics: last publish, textfile, Pushgateway, then linger for a last scrape. */
void rb_harness_metrics_finish(struct rb_harness *h)
{
    const struct rb_common *c = &h->cli->common;
    if (h->prom) {
        rb_prom_publish(h->prom);
        if (c->prom_textfile) {
            int rc = rb_prom_write_textfile(h->prom, c->prom_textfile);
            if (rc)
                rb_error("--prom-textfile %s: %s", c->prom_textfile, strerror(-rc));
        }
        if (c->pushgateway) {
            char msg[512];
            if (rb_prom_push(h->prom, c->pushgateway, h->host, msg, sizeof msg) != 0)
                rb_error("--pushgateway: %s", msg);
        }
        if (c->prom_listen && c->prom_linger_ns)
            rb_clock_sleep_ns(c->prom_linger_ns, rb_harness_signal_flag());
    }
    rb_prom_free(h->prom);
    rb_prom_free(h->prom_rank);
    h->prom = h->prom_rank = NULL;
    free(h->prom_c0);
    free(h->prom_cprev);
    h->prom_c0 = h->prom_cprev = NULL;
}

