/*
 * Bounded agreements between ranks: a signal reaches every rank at one safe
 * point, and a rank that died (kill -9, a node gone) or stopped answering
 * (SIGSTOP) is named in the record instead of being waited for forever.
 *
 * Each agreement is point to point on h->live_comm: every rank sends its
 * flags to rank 0, which waits for them with a deadline (MPI_Testall and the
 * clock), then answers each rank with the flags' maximum and whether a rank
 * was lost. A blocking collective cannot do this: it never returns when one
 * rank is gone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "railbench/clock.h"
#include "railbench/log.h"

#include "harness_int.h"

#define AGREE_MAX 4                          /* flags an agreement carries */
#define SIGNAL_GRACE_NS (500 * RB_NS_PER_MS) /* how long a rank may be missing once a signal arrived */
#define DEFAULT_RANK_TIMEOUT_NS (10 * RB_NS_PER_S)

struct who {
    int pid;
    char host[64];
};

void rb_harness_live_init(struct rb_harness *h)
{
    h->rank_timeout_ns = DEFAULT_RANK_TIMEOUT_NS;
    if (!h->mpi)
        return;
    RB_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &h->live_comm));
    struct who me = {.pid = (int)getpid()};
    snprintf(me.host, sizeof me.host, "%.63s", h->host);
    struct who *all = NULL;
    if (h->rank == 0 && (!(all = calloc((size_t)h->size, sizeof *all)) ||
                         !(h->rank_pids = calloc((size_t)h->size, sizeof *h->rank_pids)) ||
                         !(h->rank_hosts = calloc((size_t)h->size, sizeof *h->rank_hosts))))
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    RB_MPI_CHECK(MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0, h->live_comm));
    for (int r = 0; all && r < h->size; r++) {
        h->rank_pids[r] = all[r].pid;
        memcpy(h->rank_hosts[r], all[r].host, sizeof h->rank_hosts[r]);
        h->rank_hosts[r][sizeof h->rank_hosts[r] - 1] = '\0';
    }
    free(all);
}

static void watch_stop(void);

void rb_harness_live_free(struct rb_harness *h)
{
    watch_stop();
    if (h->live_comm != MPI_COMM_NULL)
        MPI_Comm_free(&h->live_comm);
    free(h->rank_pids);
    free(h->rank_hosts);
    h->rank_pids = NULL;
    h->rank_hosts = NULL;
}

/* The latest time to wait until: the rank timeout when bounded, 0.5 s after a signal seen here. */
struct deadline {
    uint64_t at;       /* UINT64_MAX: none yet */
    uint64_t grace;    /* how long after a signal */
    bool signal_armed; /* the signal's grace period is in at */
};

static void deadline_update(struct deadline *d, uint64_t now)
{
    if (!d->signal_armed && *rb_harness_signal_flag()) {
        d->signal_armed = true;
        if (now + d->grace < d->at)
            d->at = now + d->grace;
    }
}

/*
 * Waits for n requests until the deadline; true when all completed. Spins for
 * the first millisecond, then sleeps between tests, from 50 us growing to
 * 1 ms: each MPI_Testall runs Open MPI's progress engine (about 12 us of CPU
 * over TCP), and a rank that waits long (at a fabric check's round while a
 * slow pair runs for seconds) would otherwise take 6 % of a core from the
 * ranks at work. The agreement ends at most one sleep, never more than its
 * own wait, late.
 */
static bool wait_all(MPI_Request *reqs, int n, struct deadline *d)
{
    const uint64_t t0 = rb_clock_ns();
    uint64_t nap = 50 * RB_NS_PER_US;
    for (;;) {
        int flag = 0;
        RB_MPI_CHECK(MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE));
        if (flag)
            return true;
        uint64_t now = rb_clock_ns();
        deadline_update(d, now);
        if (now >= d->at)
            return false;
        if (now - t0 > RB_NS_PER_MS) {
            rb_clock_sleep_ns(nap, NULL);
            if (nap < RB_NS_PER_MS)
                nap *= 2;
        }
    }
}

/* Leaves requests that never completed: receives are cancelled, sends dropped (their peer is gone). */
static void abandon(MPI_Request *reqs, int n)
{
    for (int i = 0; i < n; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        int flag = 0;
        MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
        if (!flag) {
            MPI_Cancel(&reqs[i]);
            MPI_Request_free(&reqs[i]);
        }
    }
}

void rb_harness_record_running(struct rb_harness *h)
{
    struct rb_phase *p = h->running;
    if (!p || h->rank != 0 || p->no_stats || !p->total)
        return;
    p->duration_s = (double)(rb_clock_ns() - h->running_t0) / 1e9;
    p->disk_util_ratio = NAN; /* not sampled: the phase did not reach its end */
    rb_harness_record_phase(h, &h->result, p, h->running_wall0, NULL);
    cJSON_AddBoolToObject(p->record, "cut_short", true);
    h->running = NULL;
}

/*
 * Rank 0: result.json as it stands, with the phase in its tick loop as far
 * as its ticks went and the interruption, written at once: mpirun sends
 * SIGKILL 1 s after SIGTERM, and stopping the work (requests in flight, a
 * checkpoint shard's fsync) and the collectives after it may take longer.
 * The end of the run writes the whole record over it.
 */
static const char *signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

/* A figure of a phase record for the early table, "–" when it has none. */
static void cell(FILE *m, const cJSON *ph, const char *key, double scale, int decimals)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ph, key);
    if (cJSON_IsNumber(v) && v->valuedouble == v->valuedouble)
        fprintf(m, " %.*f |", decimals, v->valuedouble / scale);
    else
        fprintf(m, " – |");
}

/*
 * The early table.md: a line per phase of the record so far, unless the
 * command wrote its own already; the command's table replaces it when the
 * run reaches its end.
 */
static void early_table(const struct rb_harness *h, struct rb_result *tmp)
{
    char path[4200], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/table.md", tmp->dir);
    if (access(path, F_OK) == 0)
        return;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return;
    fprintf(m, "# railbench %s: interrupted by %s %s\n", h->command ? h->command : "", signal_name(h->signal_no),
            h->interrupted_at);
    fprintf(m, "# written when the ranks agreed to stop; the run's own table replaces it if the run reaches its end\n\n");
    fprintf(m, "| phase | op | count | bytes | duration (s) | MB/s |\n|:--|:--|--:|--:|--:|--:|\n");
    const cJSON *ph;
    cJSON_ArrayForEach(ph, tmp->phases)
    {
        fprintf(m, "| %s | %s |", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ph, "name")) ?: "?",
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ph, "op")) ?: "");
        cell(m, ph, "count", 1, 0);
        cell(m, ph, "bytes", 1, 0);
        cell(m, ph, "duration_s", 1, 3);
        cell(m, ph, "throughput_bytes_per_s", 1e6, 2);
        fprintf(m, "\n");
    }
    if (fclose(m) == 0 && text)
        rb_result_write_table(tmp, text);
    free(text);
}

void rb_harness_write_early(struct rb_harness *h)
{
    if (h->rank != 0 || !h->result.root)
        return;
    struct rb_result *tmp = malloc(sizeof *tmp);
    if (!tmp)
        return;
    *tmp = h->result;
    tmp->root = cJSON_Duplicate(h->result.root, 1);
    if (!tmp->root) {
        free(tmp);
        return;
    }
    tmp->phases = cJSON_GetObjectItemCaseSensitive(tmp->root, "phases");
    tmp->checks = cJSON_GetObjectItemCaseSensitive(tmp->root, "checks");
    struct rb_phase *p = h->running;
    if (p && !p->no_stats && p->total) {
        const struct rb_phase saved = *p;
        p->duration_s = (double)(rb_clock_ns() - h->running_t0) / 1e9;
        p->disk_util_ratio = NAN; /* not sampled yet */
        rb_harness_record_phase(h, tmp, p, h->running_wall0, NULL);
        cJSON_AddBoolToObject(p->record, "cut_short", true);
        *p = saved;
    }
    if (h->early_summary)
        h->early_summary(h->on_lost_ctx, tmp->root);
    rb_result_check(tmp, "completed", false, "interrupted by a signal; the results cover what ran before it");
    rb_result_set(tmp, "exit_status", cJSON_CreateNumber(RB_EXIT_CHECK));
    if (h->result.intervals)
        fflush(h->result.intervals);
    rb_result_finish(tmp);
    early_table(h, tmp);
    cJSON_Delete(tmp->root);
    free(tmp);
}

/* Rank 0: what rank r's process is, when it runs on this host: "gone", "stopped", or NULL (running, or elsewhere). */
static const char *rank_state(const struct rb_harness *h, int r)
{
    if (!h->rank_pids || !h->rank_hosts || strcmp(h->rank_hosts[r], h->rank_hosts[0]) != 0)
        return NULL;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", h->rank_pids[r]);
    FILE *f = fopen(path, "r");
    if (!f)
        return "gone";
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* "pid (comm) S ...": the state follows the name */
    char st = p && p[1] && p[2] ? p[2] : 'X';
    return st == 'Z' || st == 'X' ? "gone" : st == 'T' || st == 't' ? "stopped" : NULL;
}

/*
 * Rank 0: writes the record of a run that lost ranks (lost[r]; what) and its
 * last lines: the error, result.json with lost_ranks and failed checks, the
 * outcome line. No MPI call.
 */
static void write_lost(struct rb_harness *h, const bool *lost, const char *what, int sig, int status)
{
    char names[1024] = "";
    size_t len = 0;
    int nlost = 0;
    cJSON *arr = cJSON_CreateArray();
    for (int r = 0; r < h->size; r++) {
        if (!lost[r])
            continue;
        nlost++;
        const char *st = status == RB_EXIT_RUNTIME ? rank_state(h, r) : "running";
        if (len < sizeof names)
            len += (size_t)snprintf(names + len, sizeof names - len, "%srank %d (pid %d on %s%s%s)", len ? ", " : "",
                                    r, h->rank_pids ? h->rank_pids[r] : 0, h->rank_hosts ? h->rank_hosts[r] : "?",
                                    st ? ", " : "", st ? st : "");
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", r);
        if (h->rank_pids)
            cJSON_AddNumberToObject(o, "pid", h->rank_pids[r]);
        if (h->rank_hosts)
            cJSON_AddStringToObject(o, "host", h->rank_hosts[r]);
        if (st)
            cJSON_AddStringToObject(o, "state", st);
        cJSON_AddItemToArray(arr, o);
    }
    char why[1400];
    if (nlost)
        snprintf(why, sizeof why, "%s %s", names, what);
    else
        snprintf(why, sizeof why, "%s", what);
    rb_error("%s", why);
    if (h->result.root) {
        rb_harness_record_running(h);
        if (h->on_lost)
            h->on_lost(h->on_lost_ctx);
        rb_result_set(&h->result, "lost_ranks", arr);
        arr = NULL;
        rb_result_check(&h->result, "ranks", false, "%s", why);
        if (sig && nlost)
            rb_result_check(&h->result, "completed", false,
                            "interrupted by %s; the results cover what ran before it; %d rank%s %s",
                            signal_name(sig), nlost, nlost == 1 ? "" : "s",
                            status == RB_EXIT_RUNTIME ? "lost" : "late to stop");
        else if (sig)
            rb_result_check(&h->result, "completed", false, "interrupted by %s; the results cover what ran before it",
                            signal_name(sig));
        else
            rb_result_check(&h->result, "completed", false, "%s (exit %d)", why, status);
        rb_result_set(&h->result, "exit_status", cJSON_CreateNumber(status));
        if (h->result.intervals)
            fflush(h->result.intervals);
        rb_result_finish(&h->result);
        fprintf(stderr, "results: %s\n", h->out_dir);
        if (sig)
            fprintf(stderr, "outcome: interrupted by %s %s, and %s; kept: the results up to then in %s%s%s (exit %d)\n",
                    signal_name(sig), h->interrupted_at, why, h->out_dir, h->kept[0] ? ", and " : "", h->kept, status);
        else
            fprintf(stderr, "outcome: failed: %s; kept: the results up to then in %s%s%s (exit %d)\n", why, h->out_dir,
                    h->kept[0] ? ", and " : "", h->kept, status);
    }
    cJSON_Delete(arr);
    fflush(stdout);
    fflush(stderr);
}

/*
 * Rank 0: the run ends with lost ranks; records them and what was measured, then ends every rank (exit 3). With
 * late set, a signal's grace ran out while every rank missing was alive and running on this host: too slow to stop
 * on a busy machine, not lost; the run ends as interrupted (exit 1), their last interval not in the record.
 */
static void end_lost(struct rb_harness *h, const bool *lost, uint64_t waited_ns, int sig, bool late)
{
    char what[256];
    if (late)
        snprintf(what, sizeof what, "had not stopped %.1f s after the signal, though alive and running on this host "
                 "(a busy machine): their last interval is not in the record", (double)waited_ns / 1e9);
    else
        snprintf(what, sizeof what, "did not answer for %.1f s (died, stopped or cut off)", (double)waited_ns / 1e9);
    int status = late ? RB_EXIT_CHECK : RB_EXIT_RUNTIME;
    write_lost(h, lost, what, sig, status);
    MPI_Abort(MPI_COMM_WORLD, status);
    _exit(status);
}

/* rb_harness_record_stuck; with late_ok, every rank alive and running on this host is an interrupted run (1). */
static int record_stuck(struct rb_harness *h, const char *why, bool late_ok)
{
    bool *lost = calloc((size_t)h->size, sizeof *lost);
    if (!lost)
        return RB_EXIT_RUNTIME;
    int n = 0, elsewhere = 0;
    for (int r = 1; r < h->size; r++) {
        n += lost[r] = rank_state(h, r) != NULL;
        elsewhere += h->rank_hosts && strcmp(h->rank_hosts[r], h->rank_hosts[0]) != 0;
    }
    char what[700];
    snprintf(what, sizeof what, "%s%s", n ? "did not take part: " : "", why);
    if (!n && elsewhere)
        snprintf(what, sizeof what, "%s: a rank on another host died, stopped or was slow to stop", why);
    else if (!n) /* every rank is on this host, alive and running: the machine was too busy for them to stop in time */
        snprintf(what, sizeof what, "%s: every rank is alive on this host, too slow to stop (a busy machine)", why);
    int sig = *rb_harness_signal_flag();
    if (sig && !h->interrupted_at[0])
        snprintf(h->interrupted_at, sizeof h->interrupted_at, "during \"%s\"", h->phase_now);
    int status = late_ok && sig && !n && !elsewhere ? RB_EXIT_CHECK : RB_EXIT_RUNTIME;
    write_lost(h, lost, what, sig, status);
    free(lost);
    return status;
}

void rb_harness_record_stuck(struct rb_harness *h, const char *why)
{
    if (h->rank == 0 && h->size > 1)
        record_stuck(h, why, false);
}

/* ---- the record watchdog: rank 0's main thread inside an MPI call that does not return after a signal ---- */

#define WATCH_CLAIMED ULLONG_MAX                 /* in_mpi once the watchdog has taken over the process */
#define WATCH_STUCK_NS (500 * RB_NS_PER_MS)      /* a call still running this long, this long after a signal */

static _Thread_local bool on_main;                /* this thread is the one the watchdog watches */
static atomic_ullong in_mpi;                      /* the main thread's MPI call number while it is in one; else 0 */
static unsigned long long mpi_seq;                /* main thread only */
static struct {
    pthread_t th;
    bool running;
    atomic_bool quit;
} watch;

void rb_harness_mpi_enter(void)
{
    if (on_main)
        atomic_store_explicit(&in_mpi, ++mpi_seq, memory_order_release);
}

void rb_harness_mpi_leave(void)
{
    if (on_main && atomic_exchange(&in_mpi, 0) == WATCH_CLAIMED)
        for (;;) /* the watchdog is writing the record and ends the process */
            pause();
}

static void *watch_main(void *arg)
{
    struct rb_harness *h = arg;
    const struct timespec tick = {0, 50 * 1000 * 1000};
    uint64_t signal_seen = 0, same_since = 0;
    unsigned long long last = 0;
    while (!atomic_load(&watch.quit)) {
        nanosleep(&tick, NULL);
        uint64_t now = rb_clock_ns();
        if (!signal_seen && *rb_harness_signal_flag())
            signal_seen = now;
        unsigned long long c = atomic_load(&in_mpi);
        if (!c || c != last) {
            last = c;
            same_since = now;
            continue;
        }
        if (!signal_seen || now - signal_seen < WATCH_STUCK_NS || now - same_since < WATCH_STUCK_NS ||
            !atomic_compare_exchange_strong(&in_mpi, &c, WATCH_CLAIMED))
            continue;
        /* The main thread is inside MPI and stays there (rb_harness_mpi_leave): the record is this thread's now. */
        char why[128];
        snprintf(why, sizeof why, "an MPI call did not return %.1f s after the signal", (double)(now - signal_seen) / 1e9);
        _exit(record_stuck(h, why, true));
    }
    return NULL;
}

void rb_harness_watch_start(struct rb_harness *h)
{
    if (h->rank != 0 || h->size < 2 || watch.running)
        return;
    on_main = true;
    atomic_store(&watch.quit, false);
    watch.running = pthread_create(&watch.th, NULL, watch_main, h) == 0;
    if (!watch.running)
        on_main = false; /* no watchdog: the record is the main thread's alone, as without MPI */
}

static void watch_stop(void)
{
    if (!watch.running)
        return;
    atomic_store(&watch.quit, true);
    pthread_join(watch.th, NULL);
    watch.running = false;
    on_main = false;
}

/* A rank other than 0 whose agreement failed: rank 0 is gone, or is ending the run. */
static void end_here(struct rb_harness *h, bool rank0_lost, uint64_t waited_ns)
{
    if (rank0_lost) {
        rb_error("rank 0 did not answer for %.1f s (died, stopped or cut off); its record is not written: "
                 "railbench report %s rebuilds it from intervals.jsonl",
                 (double)waited_ns / 1e9, h->out_dir);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, RB_EXIT_RUNTIME);
    } else {
        /* Rank 0 writes the record and ends every rank; wait for that, not for MPI. */
        struct timespec ts = {30, 0};
        nanosleep(&ts, NULL);
    }
    _exit(RB_EXIT_RUNTIME);
}

void rb_harness_agree(struct rb_harness *h, int *flags, int n, bool bounded)
{
    if (!h->mpi || h->size == 1 || n < 1 || n > AGREE_MAX)
        return;
    const int tag = 1 + (int)(h->live_seq++ % 30000u);
    const uint64_t t0 = rb_clock_ns();
    /* Rank 0 decides who is lost; the others allow it a margin before deciding it is gone itself. */
    const uint64_t margin = h->rank == 0 ? 0 : 2 * RB_NS_PER_S;
    struct deadline d = {.at = bounded ? t0 + h->rank_timeout_ns + margin : UINT64_MAX,
                         .grace = SIGNAL_GRACE_NS + margin};
    deadline_update(&d, t0);
    int msg[AGREE_MAX + 1] = {0}; /* the flags, then "a rank was lost" */
    if (h->rank != 0) {
        MPI_Request reqs[2];
        memcpy(msg, flags, sizeof *flags * (size_t)n);
        RB_MPI_CHECK(MPI_Isend(msg, n, MPI_INT, 0, tag, h->live_comm, &reqs[0]));
        int verdict[AGREE_MAX + 1] = {0};
        RB_MPI_CHECK(MPI_Irecv(verdict, n + 1, MPI_INT, 0, tag, h->live_comm, &reqs[1]));
        if (!wait_all(reqs, 2, &d)) {
            abandon(reqs, 2);
            end_here(h, true, rb_clock_ns() - t0);
        }
        if (verdict[n])
            end_here(h, false, 0);
        memcpy(flags, verdict, sizeof *flags * (size_t)n);
        return;
    }
    int *in = calloc((size_t)h->size * (AGREE_MAX + 1), sizeof *in);
    MPI_Request *reqs = calloc((size_t)h->size, sizeof *reqs);
    bool *lost = calloc((size_t)h->size, sizeof *lost);
    if (!in || !reqs || !lost)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    for (int r = 1; r < h->size; r++)
        RB_MPI_CHECK(MPI_Irecv(in + (size_t)r * (AGREE_MAX + 1), n, MPI_INT, r, tag, h->live_comm, &reqs[r - 1]));
    bool all = wait_all(reqs, h->size - 1, &d);
    int nlost = 0;
    /* Only a signal's grace ran out, not the rank timeout: a missing rank alive and running here is late, not lost. */
    bool late = !all && d.signal_armed && (!bounded || rb_clock_ns() < t0 + h->rank_timeout_ns);
    if (!all) {
        for (int r = 1; r < h->size; r++) {
            int flag = 0;
            MPI_Test(&reqs[r - 1], &flag, MPI_STATUS_IGNORE);
            lost[r] = !flag;
            nlost += !flag;
            late = late && (flag || (strcmp(h->rank_hosts[r], h->rank_hosts[0]) == 0 && !rank_state(h, r)));
        }
        abandon(reqs, h->size - 1);
    }
    memcpy(msg, flags, sizeof *flags * (size_t)n);
    for (int r = 1; r < h->size; r++)
        for (int i = 0; i < n && !lost[r]; i++)
            if (in[(size_t)r * (AGREE_MAX + 1) + i] > msg[i])
                msg[i] = in[(size_t)r * (AGREE_MAX + 1) + i];
    msg[n] = nlost > 0;
    /* The answer: small enough to be sent eagerly, so a lost rank does not hold it up. */
    for (int r = 1; r < h->size; r++) {
        reqs[r - 1] = MPI_REQUEST_NULL;
        if (!lost[r])
            RB_MPI_CHECK(MPI_Isend(msg, n + 1, MPI_INT, r, tag, h->live_comm, &reqs[r - 1]));
    }
    struct deadline dsend = {.at = nlost ? rb_clock_ns() + 100 * RB_NS_PER_MS : UINT64_MAX, .grace = SIGNAL_GRACE_NS};
    if (!wait_all(reqs, h->size - 1, &dsend))
        abandon(reqs, h->size - 1);
    memcpy(flags, msg, sizeof *flags * (size_t)n);
    free(in);
    free(reqs);
    if (nlost) {
        /* The flags' meaning is the caller's: the signal named is rank 0's own (mpirun signals every rank). */
        int sig = h->interrupted ? h->signal_no : *rb_harness_signal_flag();
        if (sig)
            rb_harness_note_interrupted(h, sig, h->running ? (double)(rb_clock_ns() - h->running_t0) / 1e9 : -1);
        end_lost(h, lost, rb_clock_ns() - t0, sig, late && sig);
    }
    free(lost);
}
