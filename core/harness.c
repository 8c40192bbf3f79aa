/* MPI lifecycle shared by every command: ranks and hosts, phases, interval ticks, signals, results. */
#define _GNU_SOURCE
#include "railbench/harness.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "railbench/clock.h"
#include "railbench/file.h"
#include "railbench/log.h"
#include "railbench/prom.h"
#include "railbench/units.h"

#include "harness_int.h"

#define POLL_NS (5 * RB_NS_PER_MS)

static volatile int signalled;

static void on_signal(int sig)
{
    signalled = sig;
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
    sigaction(SIGHUP, &sa, NULL); /* a closed terminal or ssh session, and what some launchers send */
    signal(SIGPIPE, SIG_IGN);
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

/* Starts MPI at the level the command asked for; 0 or an exit status after saying why. */
static int start_mpi(const char *command, const struct rb_cli *cli, const struct rb_harness_opts *o, int *level)
{
    bool server = cli && (cli->common.prom_listen || cli->common.prom_per_rank_port);
    int provided = 0, inited = 0,
        want = o->thread_multiple ? MPI_THREAD_MULTIPLE
               : o->thread_single && !server ? MPI_THREAD_SINGLE
                                             : MPI_THREAD_FUNNELED;
    MPI_Initialized(&inited);
    if (inited) {
        MPI_Query_thread(&provided);
    } else if (MPI_Init_thread(NULL, NULL, want, &provided) != MPI_SUCCESS) {
        rb_error("MPI_Init_thread failed");
        return RB_EXIT_RUNTIME;
    }
    if (provided < want) {
        if (rb_cli_first_rank())
            rb_error("the MPI library does not provide %s (got level %d), which %s needs",
                     want == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE" : "MPI_THREAD_FUNNELED", provided, command);
        MPI_Finalize();
        return RB_EXIT_RUNTIME;
    }
    *level = provided;
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
    rb_harness_live_init(h);
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
    h->comm = h->tick_comm = h->done_comm = h->node_comm = h->live_comm = MPI_COMM_NULL;
    if (gethostname(h->host, sizeof h->host) != 0)
        snprintf(h->host, sizeof h->host, "unknown");
    h->host[sizeof h->host - 1] = '\0';
    rb_log_set_level(cli && cli->common.quiet ? RB_LOG_WARN : RB_LOG_INFO);

    if (o->mpi) {
        int rc = start_mpi(command, cli, o, &h->thread_level);
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
    if (h->mpi && !o->own_watchdog)
        rb_harness_watch_start(h);

    /* Rank 0 names and opens the result directory; everyone learns the name and the outcome. */
    int status = 0;
    if (h->rank == 0)
        rb_harness_make_run_id(h->run_id, sizeof h->run_id);
    if (h->mpi)
        RB_MPI_CHECK(MPI_Bcast(h->run_id, sizeof h->run_id, MPI_CHAR, 0, h->comm));
    if (h->rank == 0) {
        int rc = 0;
        if (cli && cli->common.out_dir) {
            snprintf(h->out_dir, sizeof h->out_dir, "%s", cli->common.out_dir);
            rb_harness_first_missing(h->out_dir, h->made_dir, sizeof h->made_dir);
        } else if ((rc = rb_harness_default_out_dir(h->out_dir, sizeof h->out_dir, command, h->made_dir, sizeof h->made_dir))) {
            rb_error("cannot create a result directory under railbench-results: %s", strerror(-rc));
            status = RB_EXIT_RUNTIME;
        }
        if (!status)
            status = rb_harness_claim_out_dir(h->out_dir, cli && cli->common.force, h->run_id);
        if (!status)
            status = rb_result_open(&h->result, h->out_dir, command, cli) == 0 ? 0 : RB_EXIT_RUNTIME;
    }
    if (h->mpi) {
        RB_MPI_CHECK(MPI_Bcast(h->out_dir, sizeof h->out_dir, MPI_CHAR, 0, h->comm));
        RB_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, h->comm));
    }
    if (status)
        return status;

    cJSON *mine = h->local_rank == 0 ? rb_harness_host_info(h) : NULL;
    cJSON *hosts = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    if (h->rank == 0) {
        rb_result_set(&h->result, "hosts", hosts);
        cJSON *m = cJSON_CreateObject();
        cJSON_AddBoolToObject(m, "enabled", h->mpi);
        cJSON_AddNumberToObject(m, "size", h->size);
        cJSON_AddNumberToObject(m, "hosts", h->host_count);
        int l = h->thread_level;
        if (h->mpi)
            cJSON_AddStringToObject(m, "thread_level", l == MPI_THREAD_MULTIPLE     ? "multiple"
                                                       : l == MPI_THREAD_SERIALIZED ? "serialized"
                                                       : l == MPI_THREAD_FUNNELED   ? "funneled"
                                                                                    : "single");
        cJSON *rph = cJSON_AddArrayToObject(m, "ranks_per_host");
        cJSON *it;
        cJSON_ArrayForEach(it, hosts)
        {
            cJSON *r = cJSON_GetObjectItemCaseSensitive(it, "ranks");
            cJSON_AddItemToArray(rph, cJSON_CreateNumber(r ? r->valuedouble : 0));
        }
        rb_result_set(&h->result, "mpi", m);
    }
    int rc = cli ? rb_harness_metrics_init(h) : 0;
    /* The directory exists now: a failure from here on is recorded in it. */
    return rc ? rb_harness_finish(h, NULL, rc) : 0;
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

/* Notes the first interruption: which signal, and where it found the run (t_s < 0: between phases). */
void rb_harness_note_interrupted(struct rb_harness *h, int sig, double t_s)
{
    bool first = !h->interrupted;
    h->interrupted = true;
    if (!h->interrupted_at[0]) {
        h->signal_no = sig;
        if (t_s >= 0)
            snprintf(h->interrupted_at, sizeof h->interrupted_at, "during phase \"%s\" (%.1f s in)", h->phase_now, t_s);
        else if (h->phase_now[0])
            snprintf(h->interrupted_at, sizeof h->interrupted_at, "after phase \"%s\"", h->phase_now);
        else
            snprintf(h->interrupted_at, sizeof h->interrupted_at, "before its first phase");
    }
    if (first)
        rb_harness_write_early(h);
}

bool rb_harness_any_signalled(struct rb_harness *h)
{
    int any = signalled;
    rb_harness_agree(h, &any, 1, false);
    if (any)
        rb_harness_note_interrupted(h, any, -1);
    return any != 0;
}

void rb_harness_kept(struct rb_harness *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->kept, sizeof h->kept, fmt, ap);
    va_end(ap);
}

/* Width of the Phase column: the phase's name, at least 10 characters. */
static int phase_width(const char *phase)
{
    size_t n = strlen(phase);
    return n < 10 ? 10 : n > 40 ? 40 : (int)n;
}

void rb_harness_progress_line(char *buf, size_t len, const char *phase, const struct rb_stats *in,
                              const struct rb_stats *total, double interval_s, double t_s)
{
    char bytes[32], lat[5][16];
    rb_format_size(bytes, sizeof bytes, total->bytes);
    double bps = interval_s > 0 ? (double)in->bytes / interval_s : 0;
    double ops = interval_s > 0 ? (double)in->ops / interval_s : 0;
    const struct rb_hist *l = &in->lat;
    const uint64_t v[5] = {l->min_ns, (uint64_t)rb_hist_mean(l), rb_hist_percentile(l, 50),
                           rb_hist_percentile(l, 99), l->max_ns};
    for (int i = 0; i < 5; i++) {
        if (l->count)
            rb_format_duration_human(lat[i], sizeof lat[i], v[i]);
        else
            snprintf(lat[i], sizeof lat[i], "-"); /* no request completed in this interval */
    }
    snprintf(buf, len,
             "%7.1fs | %-*s | %8llu %10llu | %10s | %8s %8s %8s %8s %8s | %8.2f MiB/s %8.0f op/s | "
             "%llu (%llu)",
             t_s, phase_width(phase), phase, (unsigned long long)in->ops, (unsigned long long)total->ops, bytes,
             lat[0], lat[1], lat[2], lat[3], lat[4], bps / (double)RB_MIB, ops, (unsigned long long)in->errors,
             (unsigned long long)total->errors);
}

static void progress_header(const struct rb_harness *h, const char *phase)
{
    if (h->rank != 0 || rb_log_get_level() < RB_LOG_INFO)
        return;
    printf("%8s | %-*s | %8s %10s | %10s | %-44s | %-29s | %s\n", "Time", phase_width(phase), "Phase", "Count",
           "(Total)", "Size (Tot)", "Latency (min, avg, p50, p99, max)", "Throughput", "Errors (Total)");
    fflush(stdout);
}

void rb_harness_reduce_stats(struct rb_harness *h, const struct rb_stats *in, struct rb_stats *out)
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
            /* No block device to read (some containers): not measured, so null, never 0. */
            if (r->ndisk)
                cJSON_AddNumberToObject(mine, "disk_util_ratio", rb_counters_disk_util(r));
            else
                cJSON_AddNullToObject(mine, "disk_util_ratio");
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
            const cJSON *u = cJSON_GetObjectItemCaseSensitive(it, "disk_util_ratio");
            if (cJSON_IsNumber(u)) {
                util += u->valuedouble;
                n++;
            }
            rx += cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "net_rx_bytes_per_s"));
            tx += cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "net_tx_bytes_per_s"));
        }
        p->disk_util_ratio = n ? util / n : NAN; /* NAN: no host had a disk to measure */
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

/* The state of one phase's tick loop. */
struct ticker {
    struct rb_stats *local, *sum, *rank_total; /* this rank's interval, the reduced interval, this rank's total */
    uint64_t t0, t_prev;
    bool verbose;
    bool headed; /* the progress header is out: printed before the first line, so a phase without lines has none */
};

/* One tick: collects this rank's stats, reduces them, writes the interval and progress lines, metrics. */
static void tick(struct rb_harness *h, struct rb_phase *p, struct ticker *k, uint64_t now, bool end)
{
    rb_stats_reset(k->local);
    if (p->collect)
        p->collect(p->ctx, k->local);
    rb_harness_reduce_stats(h, k->local, k->sum);
    double dt = (double)(now - k->t_prev) / 1e9, t_s = (double)(now - k->t0) / 1e9;
    if (h->rank == 0 && !p->no_stats) {
        rb_stats_merge(p->total, k->sum);
        cJSON *line = cJSON_CreateObject();
        cJSON_AddStringToObject(line, "phase", p->name);
        cJSON_AddStringToObject(line, "op", p->op);
        cJSON_AddNumberToObject(line, "t_s", t_s);
        char ts[40];
        rb_clock_iso8601(ts, sizeof ts, rb_clock_wall_ns());
        cJSON_AddStringToObject(line, "ts", ts);
        rb_stats_to_json(line, k->sum, &p->names, dt, false);
        rb_result_interval(&h->result, line);
        if (k->verbose && !p->no_progress && (k->sum->ops || !end) && (k->sum->ops || p->total->ops || k->headed)) {
            char text[512];
            if (!k->headed)
                progress_header(h, p->name);
            k->headed = true;
            rb_harness_progress_line(text, sizeof text, p->name, k->sum, p->total, dt, t_s);
            printf("%s\n", text);
            fflush(stdout);
        }
    }
    rb_stats_merge(k->rank_total, k->local); /* this rank's phase total: per-host records, --prom-per-rank */
    if (h->metrics && !p->no_stats) {
        rb_prom_phase(h->prom, p->name, p->op, &p->names, p->total);
        if (h->prom_rank) {
            rb_prom_phase(h->prom_rank, p->name, p->op, &p->names, k->rank_total);
        }
    }
    if (p->on_tick)
        p->on_tick(p->ctx, h, k->sum, t_s);
    rb_harness_metrics_update(h);
    k->t_prev = now;
}

/*
 * Ticks every interval until every rank is done, the duration has passed or
 * a signal arrived (agreed at a tick), then stops the work. Returns the end time.
 */
static uint64_t tick_loop(struct rb_harness *h, struct rb_phase *p, struct ticker *k)
{
    const uint64_t interval = h->cli ? h->cli->common.interval_ns : RB_NS_PER_S;
    bool posted = false, all_done = false, end = false;
    MPI_Request done_req = MPI_REQUEST_NULL;
    uint64_t next_tick = k->t0 + interval, t_end = k->t0;

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
        bool time_up = p->duration_ns && now - k->t0 >= p->duration_ns;
        if (now < next_tick && !all_done && !time_up && !signalled) {
            uint64_t wait = next_tick - now;
            rb_clock_sleep_ns(wait < POLL_NS ? wait : POLL_NS, &signalled);
            continue;
        }

        /* A tick: agree on whether the phase ends, then collect and reduce. */
        /* Bounded: the ranks tick together, so one that does not answer died or was stopped. */
        int any[2] = {all_done || time_up || signalled, signalled};
        rb_harness_agree(h, any, 2, true);
        end = any[0] != 0;
        if (any[1])
            rb_harness_note_interrupted(h, any[1], (double)(rb_clock_ns() - k->t0) / 1e9);
        if (end) {
            if (p->stop)
                p->stop(p->ctx);
            t_end = rb_clock_ns();
        }
        now = end ? t_end : rb_clock_ns();
        tick(h, p, k, now, end);
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
    return t_end;
}

/* Rank 0: adds the phase record (totals, host counters, interruption) to the record r (h->result's, or a copy). */
void rb_harness_record_phase(struct rb_harness *h, struct rb_result *r, struct rb_phase *p, uint64_t wall0, cJSON *counters)
{
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
    cJSON_AddNumberToObject(rec, "cpu_s", p->cpu_s);
    if (counters)
        cJSON_AddItemToObject(rec, "counters", counters);
    if (h->interrupted)
        cJSON_AddBoolToObject(rec, "interrupted", true);
    rb_result_add_phase(r, rec);
    p->record = rec;
}

/* This process's CPU seconds so far, user + system, every thread (getrusage). */
static double process_cpu_s(void)
{
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) != 0)
        return 0.0;
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int rb_harness_run_phase(struct rb_harness *h, struct rb_phase *p)
{
    struct rb_counters_sample *c0 = NULL, *c1 = NULL;
    struct ticker k = {.local = rb_stats_new(), .sum = rb_stats_new(), .rank_total = rb_stats_new(),
                       .verbose = h->rank == 0 && rb_log_get_level() >= RB_LOG_INFO};
    p->total = rb_stats_new();
    p->record = NULL;
    snprintf(h->phase_now, sizeof h->phase_now, "%s", p->name);
    if (!k.local || !k.sum || !p->total || !k.rank_total)
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

    rb_harness_barrier(h);
    const uint64_t wall0 = rb_clock_wall_ns();
    k.t0 = k.t_prev = rb_clock_ns();
    const double cpu0 = process_cpu_s();
    int bad = p->start ? (p->start(p->ctx) != 0) : 0, any_bad = bad;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, h->comm));
    int status = 0;
    uint64_t t_end = k.t0;
    if (any_bad) {
        status = RB_EXIT_RUNTIME;
        if (p->stop)
            p->stop(p->ctx);
    } else {
        h->running = p;
        h->running_t0 = k.t0;
        h->running_wall0 = wall0;
        t_end = tick_loop(h, p, &k);
        h->running = NULL;
    }
    p->duration_s = (double)(t_end - k.t0) / 1e9;
    double cpu = process_cpu_s() - cpu0;
    p->cpu_s = cpu;
    if (h->mpi) {
        RB_MPI_CHECK(MPI_Bcast(&p->duration_s, 1, MPI_DOUBLE, 0, h->comm));
        RB_MPI_CHECK(MPI_Reduce(&cpu, &p->cpu_s, 1, MPI_DOUBLE, MPI_SUM, 0, h->comm));
    }

    if (c0)
        rb_counters_sample(h->counters_root, c1);
    cJSON *counters = phase_counters(h, p, c0, c1);
    free(c0);
    free(c1);
    if (h->rank == 0)
        rb_harness_record_phase(h, &h->result, p, wall0, counters);
    else
        cJSON_Delete(counters);
    rb_harness_hosts_record(h, p, k.rank_total);
    rb_stats_free(k.local);
    rb_stats_free(k.sum);
    rb_stats_free(k.rank_total);
    return status;
}

/*
 * The job's status is the worst of any rank's (3 > 2 > 1 > 0); when the run
 * could not be carried out, rank 0 also learns the error line of the first
 * rank that failed, for the run record. Collective.
 */
static int agree_status(struct rb_harness *h, int status, char *why, size_t len)
{
    int worst = status;
    rb_log_last_error(why, len);
    if (!h->mpi || h->size == 1)
        return worst;
    RB_MPI_CHECK(MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, h->comm));
    if (worst < RB_EXIT_USAGE)
        return worst;
    int mine = status == worst ? h->rank : h->size, first = mine;
    RB_MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, h->comm));
    RB_MPI_CHECK(MPI_Bcast(why, (int)len, MPI_CHAR, first, h->comm));
    why[len - 1] = '\0';
    return worst;
}

/* "name: detail" of the run record's first failed check into buf; "" when none failed. Rank 0. */
static void first_failed_check(const struct rb_harness *h, char *buf, size_t len)
{
    buf[0] = '\0';
    const cJSON *c;
    cJSON_ArrayForEach(c, h->result.checks)
    {
        if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(c, "passed"))) {
            snprintf(buf, len, "%s: %s", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "name")),
                     cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "detail")));
            return;
        }
    }
}

/*
 * Rank 0: the run's last line, its outcome (completed; completed but a
 * check failed, which; interrupted by which signal where, and what was
 * kept; or failed, why) with the exit status.
 */
static void outcome_line(const struct rb_harness *h, int status, const char *why)
{
    char what[6400], check[1024];
    first_failed_check(h, check, sizeof check);
    if (h->interrupted) {
        char sig[16];
        if (h->signal_no == SIGINT || h->signal_no == SIGTERM || h->signal_no == SIGHUP)
            snprintf(sig, sizeof sig, "%s", h->signal_no == SIGINT    ? "SIGINT"
                                            : h->signal_no == SIGTERM ? "SIGTERM"
                                                                      : "SIGHUP");
        else
            snprintf(sig, sizeof sig, "signal %d", h->signal_no);
        snprintf(what, sizeof what, "interrupted by %s %s; kept: the results up to then in %s%s%s", sig,
                 h->interrupted_at[0] ? h->interrupted_at : "", h->out_dir, h->kept[0] ? ", and " : "", h->kept);
    } else if (status >= RB_EXIT_USAGE) {
        snprintf(what, sizeof what, "failed: %s", why[0] ? why : "the run could not be carried out");
    } else if (status == RB_EXIT_CHECK) {
        snprintf(what, sizeof what, "completed, but a check failed: %s", check[0] ? check : why);
    } else {
        snprintf(what, sizeof what, "completed");
    }
    /* What the run made and could not remove, named however it ended (an interrupted run's is in its "kept"). */
    fprintf(stderr, "outcome: %s%s%s (exit %d)\n", what, !h->interrupted && h->kept[0] ? "; left behind: " : "",
            !h->interrupted ? h->kept : "", status);
}

int rb_harness_finish(struct rb_harness *h, const char *table, int status)
{
    rb_harness_record_rss(h);
    char why[1024];
    status = agree_status(h, status, why, sizeof why);
    /* Refused at its usage check before anything was measured: the run leaves nothing behind. */
    if (h->rank == 0 && h->result.root && status == RB_EXIT_USAGE && !h->interrupted &&
        cJSON_GetArraySize(h->result.phases) == 0) {
        rb_result_close(&h->result);
        rb_harness_unmake_out_dir(h);
    }
    if (h->rank == 0 && h->result.root) {
        if (h->interrupted)
            rb_result_check(&h->result, "completed", false,
                            "interrupted by a signal; the results cover what ran before it");
        else if (status >= RB_EXIT_USAGE)
            rb_result_check(&h->result, "completed", false, "%s (exit %d)",
                            why[0] ? why : "the run could not be carried out", status);
        /* The status the run ends with, a failed check's (an interruption's) included, is in the record. */
        int ends = status ? status : rb_result_failed(&h->result) ? RB_EXIT_CHECK : 0;
        if (ends)
            rb_result_set(&h->result, "exit_status", cJSON_CreateNumber(ends));
        if (table) {
            fputs(table, stdout);
            fflush(stdout);
            rb_result_write_table(&h->result, table);
        }
        if (rb_result_finish(&h->result) != 0 && !status)
            status = RB_EXIT_RUNTIME;
        if (!status && rb_result_failed(&h->result))
            status = RB_EXIT_CHECK;
        /* A run that could not start keeps to its one error line; one that measured something says where.
         * --quiet keeps a completed run silent, and one stopped by an error to its error line; a failed check
         * or a signal (exit 1, no error line) still says how the run ended. */
        bool measured = cJSON_GetArraySize(h->result.phases) > 0;
        bool say = rb_log_get_level() >= RB_LOG_INFO || status == RB_EXIT_CHECK;
        if (say && (status < RB_EXIT_USAGE || measured)) {
            fprintf(stderr, "results: %s\n", h->out_dir);
            outcome_line(h, status, why);
        }
    }
    rb_result_close(&h->result);
    if (h->cli)
        rb_harness_metrics_finish(h);
    if (h->mpi) {
        /* Rank 0 may have found a failed check or failed to write: agree once more. */
        int mine = status;
        MPI_Allreduce(&mine, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Comm *comms[] = {&h->comm, &h->tick_comm, &h->done_comm, &h->node_comm};
        for (size_t i = 0; i < sizeof comms / sizeof comms[0]; i++)
            if (*comms[i] != MPI_COMM_NULL)
                MPI_Comm_free(comms[i]);
        rb_harness_live_free(h);
        MPI_Finalize();
        h->mpi = false;
    }
    return status;
}
