/* MPI lifecycle shared by every command: ranks and hosts, phases, interval ticks, signals, results. */
#define _GNU_SOURCE
#include "railbench/harness.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "railbench/clock.h"
#include "railbench/log.h"
#include "railbench/prom.h"
#include "railbench/units.h"

#define POLL_NS (5 * RB_NS_PER_MS)

static volatile int signalled;

static void on_signal(int sig)
{
    (void)sig;
    signalled = 1;
}

bool rb_harness_signalled(void)
{
    return signalled != 0;
}

const volatile int *rb_harness_signal_flag(void)
{
    return &signalled;
}

void rb_harness_mpi_fail(int rc, const char *call, const char *file, int line)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    rb_error("%s:%d: %s failed: %s", file, line, call, msg);
    MPI_Abort(MPI_COMM_WORLD, RB_EXIT_RUNTIME);
    exit(RB_EXIT_RUNTIME);
}

void rb_harness_fatal(struct rb_harness *h, int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rb_error("%s", msg);
    if (h && h->mpi && h->size > 1)
        MPI_Abort(MPI_COMM_WORLD, status);
    exit(status);
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* Reads the first line of path that starts with key, returning what follows ':' (trimmed). */
static void read_proc_field(const char *path, const char *key, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[512];
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        char *v = strchr(line, ':');
        if (!v)
            continue;
        for (v++; *v == ' ' || *v == '\t'; v++)
            ;
        v[strcspn(v, "\n")] = '\0';
        snprintf(out, len, "%s", v);
        break;
    }
    fclose(f);
}

static cJSON *host_info(const struct rb_harness *h)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", h->host);
    cJSON_AddNumberToObject(o, "ranks", h->local_size);
    struct utsname u;
    if (uname(&u) == 0) {
        cJSON_AddStringToObject(o, "kernel", u.release);
        cJSON_AddStringToObject(o, "arch", u.machine);
    }
    char buf[256];
    read_proc_field("/proc/cpuinfo", "model name", buf, sizeof buf);
    cJSON_AddStringToObject(o, "cpu", buf);
    cJSON_AddNumberToObject(o, "cpus", (double)sysconf(_SC_NPROCESSORS_ONLN));
    read_proc_field("/proc/meminfo", "MemTotal", buf, sizeof buf);
    cJSON_AddNumberToObject(o, "memory_bytes", strtod(buf, NULL) * 1024.0);
    return o;
}

cJSON *rb_harness_gather_json(struct rb_harness *h, const cJSON *mine)
{
    char *text = mine ? cJSON_PrintUnformatted(mine) : NULL;
    int len = text ? (int)strlen(text) + 1 : 0;
    cJSON *all = NULL;
    if (!h->mpi || h->size == 1) {
        all = cJSON_CreateArray();
        if (mine)
            cJSON_AddItemToArray(all, cJSON_Duplicate(mine, 1));
        free(text);
        return all;
    }
    int *lens = NULL, *displs = NULL;
    char *buf = NULL;
    if (h->rank == 0) {
        lens = calloc((size_t)h->size, sizeof *lens);
        displs = calloc((size_t)h->size, sizeof *displs);
    }
    RB_MPI_CHECK(MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, h->comm));
    int total = 0;
    if (h->rank == 0) {
        for (int i = 0; i < h->size; i++) {
            displs[i] = total;
            total += lens[i];
        }
        buf = malloc((size_t)total + 1);
    }
    RB_MPI_CHECK(MPI_Gatherv(text, len, MPI_CHAR, buf, lens, displs, MPI_CHAR, 0, h->comm));
    if (h->rank == 0) {
        all = cJSON_CreateArray();
        for (int i = 0; i < h->size; i++) {
            if (lens[i] == 0)
                continue;
            cJSON *item = cJSON_Parse(buf + displs[i]);
            if (item)
                cJSON_AddItemToArray(all, item);
        }
    }
    free(buf);
    free(lens);
    free(displs);
    free(text);
    return all;
}

static void default_out_dir(char *buf, size_t len, const char *command)
{
    char stamp[32];
    rb_clock_stamp(stamp, sizeof stamp, rb_clock_wall_ns());
    int n = snprintf(buf, len, "railbench-results/%s-", stamp);
    for (const char *c = command; *c && (size_t)n + 1 < len; c++)
        buf[n++] = (*c == ' ') ? '-' : *c;
    buf[n] = '\0';
}


/* Every series carries the run's --label pairs. */
static void const_labels(const struct rb_cli *cli, char *out, size_t len)
{
    size_t o = 0;
    out[0] = '\0';
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

/* Starts the exporters asked for; returns an exit status agreed by every rank. */
static int metrics_init(struct rb_harness *h)
{
    const struct rb_common *c = &h->cli->common;
    h->metrics = c->prom_listen || c->prom_textfile || c->pushgateway || c->prom_per_rank_port;
    if (!h->metrics)
        return 0;
    char labels[2048], msg[512];
    const_labels(h->cli, labels, sizeof labels);
    int status = 0;
    if (h->rank == 0) {
        h->prom = rb_prom_new(labels);
        if (!h->prom)
            status = RB_EXIT_RUNTIME;
        else if (c->prom_listen) {
            int rc = rb_prom_listen(h->prom, c->prom_listen, msg, sizeof msg);
            if (rc == -EINVAL) {
                fprintf(stderr, "railbench: --prom-listen: %s\n", msg);
                status = RB_EXIT_USAGE;
            } else if (rc) {
                rb_error("--prom-listen: %s", msg);
                status = RB_EXIT_RUNTIME;
            }
        }
        const char *run = strrchr(h->out_dir, '/');
        char cmd[128], ver[128], runv[512], l[1024];
        rb_prom_escape(cmd, sizeof cmd, h->command);
        rb_prom_escape(ver, sizeof ver, rb_version());
        rb_prom_escape(runv, sizeof runv, run ? run + 1 : h->out_dir);
        snprintf(l, sizeof l, "command=\"%s\",version=\"%s\",run=\"%s\"", cmd, ver, runv);
        rb_prom_set(h->prom, "railbench_run_info", "gauge", "The run: command, version and run id.",
                    l, 1);
    }
    if (!status && c->prom_per_rank_port) {
        uint64_t port = c->prom_per_rank_port + (uint64_t)h->rank;
        h->prom_rank = rb_prom_new(labels);
        char spec[32];
        snprintf(spec, sizeof spec, "127.0.0.1:%llu", (unsigned long long)port);
        int rc = port > 65535 ? -EINVAL : rb_prom_listen(h->prom_rank, spec, msg, sizeof msg);
        if (rc == -EINVAL) {
            fprintf(stderr, "railbench: --prom-per-rank: %llu + rank %d is not a port 1-65535\n",
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
static void metrics_finish(struct rb_harness *h)
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
            rb_clock_sleep_ns(c->prom_linger_ns, &signalled);
    }
    rb_prom_free(h->prom);
    rb_prom_free(h->prom_rank);
    h->prom = h->prom_rank = NULL;
    free(h->prom_c0);
    free(h->prom_cprev);
    h->prom_c0 = h->prom_cprev = NULL;
}

/* Starts MPI at the level the command asked for; 0 or an exit status after saying why. */
static int start_mpi(const char *command, const struct rb_harness_opts *o)
{
    int provided = 0, inited = 0, want = o->thread_multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED;
    MPI_Initialized(&inited);
    if (inited) {
        MPI_Query_thread(&provided);
    } else if (MPI_Init_thread(NULL, NULL, want, &provided) != MPI_SUCCESS) {
        rb_error("MPI_Init_thread failed");
        return RB_EXIT_RUNTIME;
    }
    if (provided < want) {
        if (rb_cli_first_rank())
            rb_error("the MPI library does not provide MPI_THREAD_MULTIPLE (got level %d), which %s needs",
                     provided, command);
        MPI_Finalize();
        return RB_EXIT_RUNTIME;
    }
    return 0;
}

/* Learns rank, size, this host's ranks and its index among the hosts. */
static void discover_ranks(struct rb_harness *h)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    RB_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &h->rank));
    RB_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &h->size));
    RB_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &h->comm));
    RB_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &h->tick_comm));
    RB_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &h->done_comm));
    RB_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, h->rank,
                                     MPI_INFO_NULL, &h->node_comm));
    RB_MPI_CHECK(MPI_Comm_rank(h->node_comm, &h->local_rank));
    RB_MPI_CHECK(MPI_Comm_size(h->node_comm, &h->local_size));
    /* Host index: rank of this host's first rank among all hosts' first ranks. */
    MPI_Comm leaders;
    RB_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, h->local_rank == 0 ? 0 : MPI_UNDEFINED,
                                h->rank, &leaders));
    int idx_count[2] = {0, 0};
    if (leaders != MPI_COMM_NULL) {
        RB_MPI_CHECK(MPI_Comm_rank(leaders, &idx_count[0]));
        RB_MPI_CHECK(MPI_Comm_size(leaders, &idx_count[1]));
        MPI_Comm_free(&leaders);
    }
    RB_MPI_CHECK(MPI_Bcast(idx_count, 2, MPI_INT, 0, h->node_comm));
    h->host_index = idx_count[0];
    h->host_count = idx_count[1];
    if (h->size > 1)
        rb_log_set_identity(h->host, h->rank);
}

int rb_harness_init(struct rb_harness *h, const char *command, struct rb_cli *cli,
                    const struct rb_harness_opts *opts)
{
    static const struct rb_harness_opts no_mpi = {0};
    const struct rb_harness_opts *o = opts ? opts : &no_mpi;
    memset(h, 0, sizeof *h);
    h->command = command;
    h->cli = cli;
    h->size = h->local_size = h->host_count = 1;
    h->counters_root = "/";
    h->comm = h->tick_comm = h->done_comm = h->node_comm = MPI_COMM_NULL;
    if (gethostname(h->host, sizeof h->host) != 0)
        snprintf(h->host, sizeof h->host, "unknown");
    h->host[sizeof h->host - 1] = '\0';
    rb_log_set_level(cli && cli->common.quiet ? RB_LOG_WARN : RB_LOG_INFO);

    if (o->mpi) {
        int rc = start_mpi(command, o);
        if (rc)
            return rc;
        h->mpi = true;
        discover_ranks(h);
    }
    if (o->precheck) {
        /* Checks that need the number of ranks come before any result directory exists. */
        int rc = o->precheck(o->ctx, h->rank, h->size), worst = rc;
        if (h->mpi)
            RB_MPI_CHECK(MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, h->comm));
        if (worst) {
            if (h->mpi)
                MPI_Finalize();
            h->mpi = false;
            return worst;
        }
    }
    install_signals();

    /* Rank 0 names and opens the result directory; everyone learns the name and the outcome. */
    int status = 0;
    if (h->rank == 0) {
        if (cli && cli->common.out_dir)
            snprintf(h->out_dir, sizeof h->out_dir, "%s", cli->common.out_dir);
        else
            default_out_dir(h->out_dir, sizeof h->out_dir, command);
        status = rb_result_open(&h->result, h->out_dir, command, cli) == 0 ? 0 : RB_EXIT_RUNTIME;
    }
    if (h->mpi) {
        RB_MPI_CHECK(MPI_Bcast(h->out_dir, sizeof h->out_dir, MPI_CHAR, 0, h->comm));
        RB_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, h->comm));
    }
    if (status)
        return status;

    cJSON *mine = h->local_rank == 0 ? host_info(h) : NULL;
    cJSON *hosts = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    if (h->rank == 0) {
        rb_result_set(&h->result, "hosts", hosts);
        cJSON *m = cJSON_CreateObject();
        cJSON_AddBoolToObject(m, "enabled", h->mpi);
        cJSON_AddNumberToObject(m, "size", h->size);
        cJSON_AddNumberToObject(m, "hosts", h->host_count);
        cJSON *rph = cJSON_AddArrayToObject(m, "ranks_per_host");
        cJSON *it;
        cJSON_ArrayForEach(it, hosts)
        {
            cJSON *r = cJSON_GetObjectItemCaseSensitive(it, "ranks");
            cJSON_AddItemToArray(rph, cJSON_CreateNumber(r ? r->valuedouble : 0));
        }
        rb_result_set(&h->result, "mpi", m);
    }
    return cli ? metrics_init(h) : 0;
}

void rb_harness_reduce_hist(struct rb_harness *h, const struct rb_hist *in, struct rb_hist *out)
{
    if (!h->mpi || h->size == 1) {
        memcpy(out, in, sizeof *out);
        return;
    }
    RB_MPI_CHECK(MPI_Reduce(in->counts, out->counts, (int)RB_HIST_U64S, MPI_UINT64_T, MPI_SUM, 0, h->comm));
    RB_MPI_CHECK(MPI_Reduce(&in->min_ns, &out->min_ns, 1, MPI_UINT64_T, MPI_MIN, 0, h->comm));
    RB_MPI_CHECK(MPI_Reduce(&in->max_ns, &out->max_ns, 1, MPI_UINT64_T, MPI_MAX, 0, h->comm));
}

void rb_harness_barrier(struct rb_harness *h)
{
    if (h->mpi)
        RB_MPI_CHECK(MPI_Barrier(h->comm));
}

bool rb_harness_any_signalled(struct rb_harness *h)
{
    int mine = signalled, any = mine;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, h->comm));
    if (any)
        h->interrupted = true;
    return any != 0;
}

void rb_harness_progress_line(char *buf, size_t len, const char *phase, const struct rb_stats *in,
                              const struct rb_stats *total, double interval_s, double t_s)
{
    char bytes[32], min[16], avg[16], p50[16], p99[16], max[16];
    rb_format_size(bytes, sizeof bytes, total->bytes);
    double bps = interval_s > 0 ? (double)in->bytes / interval_s : 0;
    double ops = interval_s > 0 ? (double)in->ops / interval_s : 0;
    const struct rb_hist *l = &in->lat;
    rb_format_duration_human(min, sizeof min, l->count ? l->min_ns : 0);
    rb_format_duration_human(avg, sizeof avg, (uint64_t)rb_hist_mean(l));
    rb_format_duration_human(p50, sizeof p50, rb_hist_percentile(l, 50));
    rb_format_duration_human(p99, sizeof p99, rb_hist_percentile(l, 99));
    rb_format_duration_human(max, sizeof max, l->max_ns);
    snprintf(buf, len,
             "%7.1fs | %-10s | %8llu (%llu) | %10s | %s %s %s %s %s | %8.2f MiB/s %8.0f op/s | "
             "%llu (%llu)",
             t_s, phase, (unsigned long long)in->ops, (unsigned long long)total->ops, bytes, min,
             avg, p50, p99, max, bps / (1024.0 * 1024.0), ops, (unsigned long long)in->errors,
             (unsigned long long)total->errors);
}

static void progress_header(const struct rb_harness *h)
{
    if (h->rank != 0 || rb_log_get_level() < RB_LOG_INFO)
        return;
    printf("%8s | %-10s | %-14s | %10s | %-34s | %-29s | %s\n", "Time", "Phase", "Count (Total)",
           "Size (Tot)", "Latency (min, avg, p50, p99, max)", "Throughput", "Errors (Total)");
    fflush(stdout);
}

/* Sums every rank's stats into out on rank 0 (one sum-reduce, one min-reduce). */
static void reduce_stats(struct rb_harness *h, const struct rb_stats *in, struct rb_stats *out)
{
    if (!h->mpi || h->size == 1) {
        memcpy(out, in, sizeof *out);
        return;
    }
    RB_MPI_CHECK(MPI_Reduce(in, out, (int)RB_STATS_U64S, MPI_UINT64_T, MPI_SUM, 0, h->tick_comm));
    uint64_t mm[4], mm_all[4];
    rb_stats_minmax_pack(in, mm);
    RB_MPI_CHECK(MPI_Reduce(mm, mm_all, 4, MPI_UINT64_T, MPI_MIN, 0, h->tick_comm));
    if (h->rank == 0)
        rb_stats_minmax_unpack(out, mm_all);
}

/* Per-host counter rates over the phase, gathered to rank 0; also sets the phase's averages. */
static cJSON *phase_counters(struct rb_harness *h, struct rb_phase *p,
                             const struct rb_counters_sample *a, const struct rb_counters_sample *b)
{
    cJSON *mine = NULL;
    if (a && b) {
        struct rb_counters_rates *r = malloc(sizeof *r);
        if (r) {
            rb_counters_rates(a, b, r);
            mine = rb_counters_rates_json(r);
            cJSON_AddStringToObject(mine, "host", h->host);
            cJSON_AddNumberToObject(mine, "disk_util_ratio", rb_counters_disk_util(r));
            double rx = 0, tx = 0;
            for (size_t i = 0; i < r->nnet; i++) {
                rx += r->net[i].rx_bytes_per_s;
                tx += r->net[i].tx_bytes_per_s;
            }
            for (size_t i = 0; i < r->nib; i++) {
                rx += r->ib[i].rx_bytes_per_s;
                tx += r->ib[i].tx_bytes_per_s;
            }
            cJSON_AddNumberToObject(mine, "net_rx_bytes_per_s", rx);
            cJSON_AddNumberToObject(mine, "net_tx_bytes_per_s", tx);
            free(r);
        }
    }
    cJSON *all = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    if (all) {
        double util = 0, rx = 0, tx = 0;
        int n = 0;
        cJSON *it;
        cJSON_ArrayForEach(it, all)
        {
            util += cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "disk_util_ratio"));
            rx += cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "net_rx_bytes_per_s"));
            tx += cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "net_tx_bytes_per_s"));
            n++;
        }
        p->disk_util_ratio = n ? util / n : 0;
        p->net_rx_bytes_per_s = rx;
        p->net_tx_bytes_per_s = tx;
    }
    return all;
}

void rb_harness_phase_free(struct rb_phase *p)
{
    if (!p)
        return;
    rb_stats_free(p->total);
    p->total = NULL;
}

int rb_harness_run_phase(struct rb_harness *h, struct rb_phase *p)
{
    const uint64_t interval = h->cli ? h->cli->common.interval_ns : RB_NS_PER_S;
    const bool verbose = h->rank == 0 && rb_log_get_level() >= RB_LOG_INFO;
    struct rb_counters_sample *c0 = NULL, *c1 = NULL;
    struct rb_stats *local = rb_stats_new(), *sum = rb_stats_new(), *rank_total = rb_stats_new();
    p->total = rb_stats_new();
    p->record = NULL;
    if (!local || !sum || !p->total || !rank_total)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    if (h->local_rank == 0) {
        c0 = malloc(sizeof *c0);
        c1 = malloc(sizeof *c1);
        if (!c0 || !c1 || rb_counters_sample(h->counters_root, c0) != 0) {
            free(c0);
            free(c1);
            c0 = c1 = NULL;
        }
    }
    if (!p->no_stats && !p->no_progress)
        progress_header(h);

    rb_harness_barrier(h);
    const uint64_t wall0 = rb_clock_wall_ns();
    const uint64_t t0 = rb_clock_ns();
    int bad = p->start ? (p->start(p->ctx) != 0) : 0, any_bad = bad;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, h->comm));
    int status = 0;
    bool posted = false, all_done = false, end = any_bad != 0;
    MPI_Request done_req = MPI_REQUEST_NULL;
    uint64_t next_tick = t0 + interval, t_prev = t0, t_end = t0;
    if (end) {
        status = RB_EXIT_RUNTIME;
        if (p->stop)
            p->stop(p->ctx);
    }

    while (!end) {
        uint64_t now = rb_clock_ns();
        bool local_done = p->done ? p->done(p->ctx) : false;
        if (h->mpi && h->size > 1) {
            if (local_done && !posted) {
                RB_MPI_CHECK(MPI_Ibarrier(h->done_comm, &done_req));
                posted = true;
            }
            if (posted && !all_done) {
                int flag = 0;
                RB_MPI_CHECK(MPI_Test(&done_req, &flag, MPI_STATUS_IGNORE));
                all_done = flag != 0;
            }
        } else {
            all_done = local_done;
        }
        bool time_up = p->duration_ns && now - t0 >= p->duration_ns;
        if (now < next_tick && !all_done && !time_up && !signalled) {
            uint64_t wait = next_tick - now;
            rb_clock_sleep_ns(wait < POLL_NS ? wait : POLL_NS, &signalled);
            continue;
        }

        /* A tick: agree on whether the phase ends, then collect and reduce. */
        int flags[2] = {all_done || time_up || signalled, signalled}, any[2];
        memcpy(any, flags, sizeof any);
        if (h->mpi && h->size > 1)
            RB_MPI_CHECK(MPI_Allreduce(flags, any, 2, MPI_INT, MPI_MAX, h->tick_comm));
        end = any[0] != 0;
        if (any[1])
            h->interrupted = true;
        if (end) {
            if (p->stop)
                p->stop(p->ctx);
            t_end = rb_clock_ns();
        }
        now = end ? t_end : rb_clock_ns();
        rb_stats_reset(local);
        if (p->collect)
            p->collect(p->ctx, local);
        reduce_stats(h, local, sum);
        double dt = (double)(now - t_prev) / 1e9, t_s = (double)(now - t0) / 1e9;
        if (h->rank == 0 && !p->no_stats) {
            rb_stats_merge(p->total, sum);
            cJSON *line = cJSON_CreateObject();
            cJSON_AddStringToObject(line, "phase", p->name);
            cJSON_AddStringToObject(line, "op", p->op);
            cJSON_AddNumberToObject(line, "t_s", t_s);
            char ts[40];
            rb_clock_iso8601(ts, sizeof ts, rb_clock_wall_ns());
            cJSON_AddStringToObject(line, "ts", ts);
            rb_stats_to_json(line, sum, &p->names, dt, false);
            rb_result_interval(&h->result, line);
            if (verbose && !p->no_progress && (sum->ops || !end)) {
                char text[512];
                rb_harness_progress_line(text, sizeof text, p->name, sum, p->total, dt, t_s);
                printf("%s\n", text);
                fflush(stdout);
            }
        }
        if (h->metrics && !p->no_stats) {
            rb_prom_phase(h->prom, p->name, p->op, &p->names, p->total);
            if (h->prom_rank) {
                rb_stats_merge(rank_total, local);
                rb_prom_phase(h->prom_rank, p->name, p->op, &p->names, rank_total);
            }
        }
        if (p->on_tick)
            p->on_tick(p->ctx, h, sum, t_s);
        rb_harness_metrics_update(h);
        t_prev = now;
        next_tick += interval;
        if (next_tick <= now)
            next_tick = now + interval;
    }

    /* Every rank is done now; complete the done-barrier so the next phase starts clean. */
    if (h->mpi && h->size > 1) {
        if (!posted)
            RB_MPI_CHECK(MPI_Ibarrier(h->done_comm, &done_req));
        if (!all_done)
            RB_MPI_CHECK(MPI_Wait(&done_req, MPI_STATUS_IGNORE));
    }
    p->duration_s = (double)(t_end - t0) / 1e9;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Bcast(&p->duration_s, 1, MPI_DOUBLE, 0, h->comm));

    if (c0)
        rb_counters_sample(h->counters_root, c1);
    cJSON *counters = phase_counters(h, p, c0, c1);
    free(c0);
    free(c1);

    if (h->rank == 0) {
        cJSON *rec = cJSON_CreateObject();
        cJSON_AddStringToObject(rec, "name", p->name);
        cJSON_AddStringToObject(rec, "op", p->op);
        char ts[40];
        rb_clock_iso8601(ts, sizeof ts, wall0);
        cJSON_AddStringToObject(rec, "started_at", ts);
        cJSON_AddNumberToObject(rec, "ranks", h->size);
        rb_stats_to_json(rec, p->total, &p->names, p->duration_s, true);
        cJSON_AddNumberToObject(rec, "disk_util_ratio", p->disk_util_ratio);
        cJSON_AddNumberToObject(rec, "net_rx_bytes_per_s", p->net_rx_bytes_per_s);
        cJSON_AddNumberToObject(rec, "net_tx_bytes_per_s", p->net_tx_bytes_per_s);
        if (counters)
            cJSON_AddItemToObject(rec, "counters", counters);
        counters = NULL;
        if (h->interrupted)
            cJSON_AddBoolToObject(rec, "interrupted", true);
        rb_result_add_phase(&h->result, rec);
        p->record = rec;
    }
    cJSON_Delete(counters);
    rb_stats_free(local);
    rb_stats_free(sum);
    rb_stats_free(rank_total);
    return status;
}

int rb_harness_finish(struct rb_harness *h, const char *table, int status)
{
    if (h->rank == 0 && h->result.root) {
        if (h->interrupted)
            rb_result_check(&h->result, "completed", false,
                            "interrupted by a signal; the results cover what ran before it");
        if (table) {
            fputs(table, stdout);
            fflush(stdout);
            rb_result_write_table(&h->result, table);
        }
        if (rb_result_finish(&h->result) != 0 && !status)
            status = RB_EXIT_RUNTIME;
        if (!status && rb_result_failed(&h->result))
            status = RB_EXIT_CHECK;
        if (rb_log_get_level() >= RB_LOG_INFO)
            fprintf(stderr, "results: %s\n", h->out_dir);
    }
    rb_result_close(&h->result);
    if (h->cli)
        metrics_finish(h);
    if (h->mpi) {
        /* The job's status is the worst of any rank's (3 > 2 > 1 > 0). */
        int mine = status;
        MPI_Allreduce(&mine, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Comm *comms[] = {&h->comm, &h->tick_comm, &h->done_comm, &h->node_comm};
        for (size_t i = 0; i < sizeof comms / sizeof comms[0]; i++)
            if (*comms[i] != MPI_COMM_NULL)
                MPI_Comm_free(comms[i]);
        MPI_Finalize();
        h->mpi = false;
    }
    return status;
}
