/* railbench load train --overlap: the all-reduce on its own thread, the two baselines, and the interference record. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/buf.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "railbench/units.h"
#include "train_cmd_int.h"

/*
 * Why a thread: the trainer's compute is a sleep and its data wait a
 * condition wait, and a non-blocking all-reduce in OpenMPI only moves
 * while someone calls into MPI. The collective thread starts
 * MPI_Iallreduce and drives it (ar_progress), so it progresses whatever
 * the trainer does and its completion is timed to within one MPI_Test,
 * while it yields the core to any read thread that can run. It uses MPI while
 * the trainer and the harness do, which the train command asks for already
 * (MPI_THREAD_MULTIPLE), each on its own communicator or in turn.
 */
enum ar_state { AR_IDLE, AR_REQUESTED, AR_DONE, AR_QUIT };

struct train_ar {
    struct rb_train_run *R;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    enum ar_state state;
    int vote, any;
    uint64_t t0_ns, t1_ns;
};

/*
 * Drives req to completion: MPI_Test, and between tests sched_yield, so the
 * read threads run whenever they can while the all-reduce moves as fast as a
 * blocking call's spin would move it. Sleeping between tests instead (as the
 * barrier does) lets OpenMPI move one fragment per sleep: on shared memory
 * that made a 4 MiB all-reduce 13x slower than MPI_Allreduce
 * (tests/bench/train_overlap.sh).
 */
static void ar_progress(MPI_Request *req)
{
    for (;;) {
        int done = 0;
        RB_MPI_CHECK(MPI_Test(req, &done, MPI_STATUS_IGNORE));
        if (done)
            return;
        sched_yield();
    }
}

static void *ar_main(void *arg)
{
    struct train_ar *ar = arg;
    struct rb_train_run *R = ar->R;
    pthread_mutex_lock(&ar->mu);
    for (;;) {
        while (ar->state == AR_IDLE || ar->state == AR_DONE)
            pthread_cond_wait(&ar->cv, &ar->mu);
        if (ar->state == AR_QUIT)
            break;
        float vote = ar->vote ? 1.0f : 0.0f;
        pthread_mutex_unlock(&ar->mu);
        uint64_t t0 = rb_clock_ns();
        R->grad_send[0] = vote; /* element 0 carries the stop vote, as the blocking all-reduce's does */
        MPI_Request req;
        RB_MPI_CHECK(MPI_Iallreduce(R->grad_send, R->grad_recv, R->grad_count, MPI_FLOAT, MPI_SUM, R->comm, &req));
        ar_progress(&req);
        uint64_t t1 = rb_clock_ns();
        pthread_mutex_lock(&ar->mu);
        ar->t0_ns = t0;
        ar->t1_ns = t1;
        ar->any = R->grad_recv[0] > 0.5f;
        if (ar->state == AR_REQUESTED)
            ar->state = AR_DONE;
        pthread_cond_broadcast(&ar->cv);
    }
    pthread_mutex_unlock(&ar->mu);
    return NULL;
}

int rb_train_ar_new(struct rb_train_run *R)
{
    struct train_ar *ar = calloc(1, sizeof *ar);
    int bad = !ar;
    if (ar) {
        ar->R = R;
        pthread_mutex_init(&ar->mu, NULL);
        pthread_cond_init(&ar->cv, NULL);
        int rc = pthread_create(&ar->th, NULL, ar_main, ar);
        if (rc) {
            rb_error("cannot start the collective thread: %s", strerror(rc));
            pthread_mutex_destroy(&ar->mu);
            pthread_cond_destroy(&ar->cv);
            free(ar);
            ar = NULL;
            bad = 1;
        }
    }
    R->ar = ar;
    int any = bad;
    if (R->h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, R->h->comm));
    return any ? RB_EXIT_RUNTIME : 0;
}

void rb_train_ar_free(struct train_ar *ar)
{
    if (!ar)
        return;
    pthread_mutex_lock(&ar->mu);
    while (ar->state == AR_REQUESTED) /* an all-reduce every rank started: finish it */
        pthread_cond_wait(&ar->cv, &ar->mu);
    ar->state = AR_QUIT;
    pthread_cond_broadcast(&ar->cv);
    pthread_mutex_unlock(&ar->mu);
    pthread_join(ar->th, NULL);
    pthread_mutex_destroy(&ar->mu);
    pthread_cond_destroy(&ar->cv);
    free(ar);
}

void rb_train_ar_start(struct train_ar *ar, int stop)
{
    pthread_mutex_lock(&ar->mu);
    ar->vote = stop;
    ar->state = AR_REQUESTED;
    pthread_cond_broadcast(&ar->cv);
    pthread_mutex_unlock(&ar->mu);
}

int rb_train_ar_wait(struct train_ar *ar, uint64_t *dur_ns)
{
    pthread_mutex_lock(&ar->mu);
    while (ar->state == AR_REQUESTED)
        pthread_cond_wait(&ar->cv, &ar->mu);
    ar->state = AR_IDLE;
    *dur_ns = ar->t1_ns - ar->t0_ns;
    int any = ar->any;
    pthread_mutex_unlock(&ar->mu);
    return any;
}

bool rb_train_ar_pending(struct train_ar *ar)
{
    pthread_mutex_lock(&ar->mu);
    bool pending = ar->state == AR_REQUESTED || ar->state == AR_DONE;
    pthread_mutex_unlock(&ar->mu);
    return pending;
}

/* ---- the step breakdown ---- */

/* sum / n as a JSON number, or null when nothing was counted (not measured is not 0). */
static cJSON *mean_or_null(double sum, double n)
{
    return n > 0 ? cJSON_CreateNumber(sum / n) : cJSON_CreateNull();
}

cJSON *rb_train_steps_json(const cJSON *ranks_json)
{
    static const char *const keys[] = {"steps", "wait_ns", "compute_ns", "sync_ns", "step_ns", "allreduce_ns",
                                       "allreduces", "fetch_ns", "fetch_bytes", "fetches"};
    enum { STEPS, WAIT, COMPUTE, SYNC, STEP, AR, ARS, FETCH_NS, FETCH_BYTES, FETCHES, NKEYS };
    double sum[NKEYS] = {0};
    const cJSON *it;
    cJSON_ArrayForEach(it, ranks_json)
    {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "step_sums");
        for (int k = 0; k < NKEYS; k++) {
            uint64_t v = 0;
            rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(s, keys[k]), &v);
            sum[k] += (double)v;
        }
    }
    /* Means per step over every rank's steps after the first; the all-reduce per all-reduce. */
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "steps", sum[STEPS]);
    cJSON_AddItemToObject(o, "data_wait_ns", mean_or_null(sum[WAIT], sum[STEPS]));
    cJSON_AddItemToObject(o, "compute_ns", mean_or_null(sum[COMPUTE], sum[STEPS]));
    cJSON_AddItemToObject(o, "sync_wait_ns", mean_or_null(sum[SYNC], sum[STEPS]));
    cJSON_AddItemToObject(o, "step_ns", mean_or_null(sum[STEP], sum[STEPS]));
    cJSON_AddNumberToObject(o, "allreduces", sum[ARS]);
    cJSON_AddItemToObject(o, "allreduce_ns", mean_or_null(sum[AR], sum[ARS]));
    cJSON_AddNumberToObject(o, "fetches", sum[FETCHES]);
    cJSON_AddNumberToObject(o, "fetch_bytes", sum[FETCH_BYTES]);
    /* Bytes over the time the loader spent fetching them: the read throughput while reading. */
    cJSON_AddItemToObject(o, "fetch_bytes_per_s", sum[FETCH_NS] > 0 && sum[FETCH_BYTES] > 0
                                                       ? cJSON_CreateNumber(sum[FETCH_BYTES] * 1e9 / sum[FETCH_NS])
                                                       : cJSON_CreateNull());
    return o;
}

/* ---- the interference record ---- */

static double num(const cJSON *o, const char *k)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static bool has(const cJSON *o, const char *k)
{
    return cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* a / b as JSON, null unless both were measured and b > 0. */
static cJSON *ratio(const cJSON *oa, const char *ka, const cJSON *ob, const char *kb)
{
    if (!has(oa, ka) || !has(ob, kb) || num(ob, kb) <= 0 || num(oa, ka) <= 0)
        return cJSON_CreateNull();
    return cJSON_CreateNumber(num(oa, ka) / num(ob, kb));
}

/* One phase of the experiment: its name, AU, step breakdown and the bytes each interface carried. */
static cJSON *phase_json(const cJSON *entry)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "phase", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(entry, "phase")));
    cJSON_AddNumberToObject(o, "au_pct", num(entry, "au_pct"));
    cJSON_AddNumberToObject(o, "duration_s", num(entry, "duration_s"));
    /* As the epoch table counts them: steps per rank (first included), bytes over the phase's wall time. */
    cJSON_AddNumberToObject(o, "steps", num(entry, "steps"));
    cJSON_AddNumberToObject(o, "bytes_per_s", num(entry, "bytes_per_s"));
    cJSON_AddItemToObject(o, "step", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(entry, "step_time"), 1));
    cJSON_AddItemToObject(o, "net_bytes", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(entry, "net_bytes"), 1));
    return o;
}

/*
 * The AU the two halves allow when neither slows the other: each baseline
 * keeps the step's pace its half sets (the reads with the compute, or the
 * all-reduce with the compute), and overlapped without interference the
 * slower of the two sets the pace, so the lower of their two AUs. Null when
 * a baseline took no step after the first.
 */
static cJSON *au_alone_json(const cJSON *st_e, const cJSON *co_e)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(st_e, "step_time");
    const cJSON *co = cJSON_GetObjectItemCaseSensitive(co_e, "step_time");
    if (!has(st, "step_ns") || !has(co, "step_ns"))
        return cJSON_CreateNull();
    double s = num(st_e, "au_pct"), c = num(co_e, "au_pct");
    return cJSON_CreateNumber(s < c ? s : c);
}

/* Rank 0: summary.interference from the three phases' epoch entries. */
static cJSON *interference_json(const struct rb_train_run *R, const cJSON *st_e, const cJSON *co_e, const cJSON *ov_e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "grad_bytes", rb_json_u64(R->a->grad_bytes));
    cJSON_AddItemToObject(o, "storage_alone", phase_json(st_e));
    cJSON_AddItemToObject(o, "collective_alone", phase_json(co_e));
    cJSON_AddItemToObject(o, "overlapped", phase_json(ov_e));
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(st_e, "step_time");
    const cJSON *co = cJSON_GetObjectItemCaseSensitive(co_e, "step_time");
    const cJSON *ov = cJSON_GetObjectItemCaseSensitive(ov_e, "step_time");
    cJSON *f = cJSON_AddObjectToObject(o, "slowdown");
    /* Storage: read throughput while fetching, alone over overlapped. Collective: all-reduce time overlapped over alone. */
    cJSON_AddItemToObject(f, "storage", ratio(st, "fetch_bytes_per_s", ov, "fetch_bytes_per_s"));
    cJSON_AddItemToObject(f, "collective", ratio(ov, "allreduce_ns", co, "allreduce_ns"));
    cJSON *au = cJSON_AddObjectToObject(o, "au_pct");
    cJSON_AddNumberToObject(au, "overlapped", num(ov_e, "au_pct"));
    cJSON *alone = au_alone_json(st_e, co_e);
    bool known = cJSON_IsNumber(alone);
    double cost = known ? alone->valuedouble - num(ov_e, "au_pct") : 0;
    cJSON_AddItemToObject(au, "halves_alone", alone);
    cJSON_AddItemToObject(au, "cost_points", known ? cJSON_CreateNumber(cost) : cJSON_CreateNull());
    return o;
}

/* Rank 0: the gauges and the check that both factors were measured. */
static void interference_record(struct rb_train_run *R)
{
    struct rb_harness *h = R->h;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(R->interference, "slowdown");
    static const char *const sides[] = {"storage", "collective"};
    bool both = true;
    for (int i = 0; i < 2; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(f, sides[i]);
        if (!cJSON_IsNumber(v)) {
            both = false;
            continue;
        }
        char l[32];
        snprintf(l, sizeof l, "side=\"%s\"", sides[i]);
        rb_harness_metric(h, "railbench_interference_slowdown", "gauge",
                          "Slowdown under --overlap: storage = read throughput alone / overlapped, collective = "
                          "all-reduce time overlapped / alone.", l, v->valuedouble);
    }
    rb_result_check(&h->result, "interference", both, both ? "both slowdown factors measured"
                                                            : "a slowdown factor was not measured (no reads or no "
                                                              "all-reduce after the first step in a phase)");
}

int rb_train_interference_run(struct rb_train_run *R)
{
    struct rb_harness *h = R->h;
    int status = rb_train_ar_new(R);
    if (status)
        return status;
    struct trial base[2];
    memset(base, 0, sizeof base);
    static const char *const names[] = {"storage-alone", "collective-alone"};
    const struct train_mode modes[] = {{true, TRAIN_SYNC_BARRIER}, {false, TRAIN_SYNC_OVERLAP}};
    for (int i = 0; i < 2 && !status && !h->interrupted; i++) {
        base[i].accel = R->a->accel;
        base[i].epochs = cJSON_CreateArray();
        R->mode = modes[i];
        status = rb_train_run_epoch(R, &base[i], 1, names[i]);
        R->measured_anything = true;
    }
    if (!status && !h->interrupted) {
        R->mode = (struct train_mode){true, TRAIN_SYNC_OVERLAP};
        status = rb_train_run_trials(R);
    }
    if (h->rank == 0 && R->ntrials && cJSON_GetArraySize(R->trials[0].epochs) &&
        cJSON_GetArraySize(base[0].epochs) && cJSON_GetArraySize(base[1].epochs)) {
        R->interference = interference_json(R, cJSON_GetArrayItem(base[0].epochs, 0),
                                            cJSON_GetArrayItem(base[1].epochs, 0),
                                            cJSON_GetArrayItem(R->trials[0].epochs, 0));
        interference_record(R);
    }
    for (int i = 0; i < 2; i++) {
        cJSON_Delete(base[i].epochs);
        free(base[i].fig);
    }
    rb_train_ar_free(R->ar);
    R->ar = NULL;
    return status;
}

/* ---- the table ---- */

/* A mean duration from JSON, "–" when not measured. */
static void fmt_mean(char *buf, size_t len, const cJSON *o, const char *k)
{
    if (!has(o, k))
        snprintf(buf, len, "–");
    else
        rb_format_duration_human(buf, len, (uint64_t)num(o, k));
}

static void fmt_factor(char *buf, size_t len, const cJSON *v)
{
    if (cJSON_IsNumber(v))
        snprintf(buf, len, "%.2fx", v->valuedouble);
    else
        snprintf(buf, len, "–");
}

/* Bytes (rx + tx) of host's iface in a phase's net_bytes, or -1 when the phase has no such entry. */
static double iface_bytes(const cJSON *phase, const char *host, const char *iface)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(phase, "net_bytes"))
    {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "host")), host) == 0 &&
            strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "interface")), iface) == 0)
            return num(it, "rx_bytes") + num(it, "tx_bytes");
    }
    return -1;
}

/* Which interface carried how much in each phase: rows of the overlapped phase's interfaces that moved anything. */
static void table_net(struct rb_buf *b, const cJSON *phases[3])
{
    size_t rows = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(phases[2], "net_bytes"))
    {
        const char *host = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "host"));
        const char *ifc = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "interface"));
        double v[3];
        bool any = false;
        for (int i = 0; i < 3; i++) {
            v[i] = iface_bytes(phases[i], host, ifc);
            any |= v[i] >= RB_MIB;
        }
        if (!any) /* under a MiB in every phase: not a path either half took */
            continue;
        if (!rows++)
            rb_buf_printf(b, "\nBytes each interface carried (received + sent; lo is not counted):\n\n"
                             "| host | interface | storage alone | collective alone | overlapped |\n"
                             "|---|---|---:|---:|---:|\n");
        rb_buf_printf(b, "| %s | %s |", host, ifc);
        for (int i = 0; i < 3; i++) {
            char s[32] = "–";
            if (v[i] >= 0)
                rb_format_size(s, sizeof s, (uint64_t)v[i]);
            rb_buf_printf(b, " %s |", s);
        }
        rb_buf_printf(b, "\n");
    }
    if (!rows)
        rb_buf_printf(b, "\nNo interface but lo carried 1 MiB in any phase (both halves ran over loopback).\n");
}

void rb_train_interference_md(struct rb_buf *b, const struct rb_train_run *R, const cJSON *in)
{
    if (!cJSON_IsObject(in))
        return;
    static const char *const keys[] = {"storage_alone", "collective_alone", "overlapped"};
    static const char *const labels[] = {"storage alone", "collective alone", "overlapped"};
    const cJSON *ph[3];
    char g[32];
    rb_format_size(g, sizeof g, R->a->grad_bytes);
    rb_buf_printf(b, "\n## Interference: reads and the all-reduce of %s overlapped (--overlap)\n\n", g);
    rb_buf_printf(b, "| phase | steps | AU %% | MiB/s | data wait | compute | sync wait | all-reduce | step | fetch MiB/s |\n"
                     "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < 3; i++) {
        ph[i] = cJSON_GetObjectItemCaseSensitive(in, keys[i]);
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(ph[i], "step");
        char w[16], c[16], sy[16], ar[16], sp[16], mb[32] = "–", fb[32] = "–";
        fmt_mean(w, sizeof w, st, "data_wait_ns");
        fmt_mean(c, sizeof c, st, "compute_ns");
        fmt_mean(sy, sizeof sy, st, "sync_wait_ns");
        fmt_mean(ar, sizeof ar, st, "allreduce_ns");
        fmt_mean(sp, sizeof sp, st, "step_ns");
        if (num(ph[i], "bytes_per_s") > 0) /* the collective phase reads nothing: no rate, not 0 */
            snprintf(mb, sizeof mb, "%.2f", num(ph[i], "bytes_per_s") / (double)RB_MIB);
        if (has(st, "fetch_bytes_per_s"))
            snprintf(fb, sizeof fb, "%.2f", num(st, "fetch_bytes_per_s") / (double)RB_MIB);
        rb_buf_printf(b, "| %s | %.0f | %.1f | %s | %s | %s | %s | %s | %s | %s |\n", labels[i], num(ph[i], "steps"),
                      num(ph[i], "au_pct"), mb, w, c, sy, ar, sp, fb);
    }
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(in, "slowdown");
    const cJSON *au = cJSON_GetObjectItemCaseSensitive(in, "au_pct");
    char fs[16], fc[16];
    fmt_factor(fs, sizeof fs, cJSON_GetObjectItemCaseSensitive(f, "storage"));
    fmt_factor(fc, sizeof fc, cJSON_GetObjectItemCaseSensitive(f, "collective"));
    rb_buf_printf(b, "\nsteps and MiB/s as in the epoch table (steps per rank, the first included; bytes over the "
                     "phase's wall time, summed over ranks): the overlapped row is the epoch above. The durations are "
                     "means per step over every rank's steps but its first (as AU leaves it out); all-reduce per "
                     "all-reduce. fetch MiB/s: a read thread's batch bytes over the time it spent fetching them, per "
                     "read thread (its reading speed while reading, which the storage slowdown compares), where MiB/s "
                     "is summed over ranks and counts the time the loaders waited for the trainer too. –: not measured (no all-reduce, or no reads, in that phase).\n");
    rb_buf_printf(b, "\nSlowdown under overlap: storage %s (read throughput alone / overlapped), collective %s "
                     "(all-reduce time overlapped / alone)\n", fs, fc);
    if (has(au, "halves_alone"))
        rb_buf_printf(b, "AU overlapped %.1f %% against %.1f %% with each half alone (the slower sets the pace): interference costs %.1f "
                         "points\n", num(au, "overlapped"), num(au, "halves_alone"), num(au, "cost_points"));
    table_net(b, ph);
}
