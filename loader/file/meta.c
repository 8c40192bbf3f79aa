/* railbench load meta: mdtest's phases over a tree of directories x files, with a rate and a histogram per operation. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../engine/fwatch_int.h"
#include "../engine/payload_int.h"
#include "../proto/target_int.h"
#include "file_int.h"
#include "file_loop_int.h"
#include "fileio_int.h"
#include "meta_int.h"
#include "railbench/beneath.h"
#include "railbench/buf.h"
#include "railbench/clock.h"
#include "railbench/harness.h"
#include "railbench/log.h"
#include "railbench/objname.h"
#include "railbench/result.h"
#include "railbench/units.h"

/* The phases in the order they run (mdtest's: directories made, files created, stat-ed, read, renamed, removed). */
enum mphase { MP_MKDIR, MP_CREATE, MP_STAT, MP_READ, MP_RENAME, MP_UNLINK, MP_RMDIR, MP_COUNT };
static const char *const phase_names[MP_COUNT] = {"mkdir", "create", "stat", "read", "rename", "unlink", "rmdir"};
static const char *const phase_ops[MP_COUNT] = {"MKDIR", "CREATE", "STAT", "READ", "RENAME", "UNLINK", "RMDIR"};
#define ALL_PHASES ((1u << MP_COUNT) - 1)
#define KEEP_PHASES (ALL_PHASES & ~(1u << MP_UNLINK) & ~(1u << MP_RMDIR))

#define MAX_THREADS 256
#define MAX_DIRS 10000000ull
#define MAX_FILES_TOTAL 1000000000000ull
#define MAX_SIZE (1ull << 30)
/* A file is written and read in pieces of at most this (small files, mdtest's -w/-e, are one piece). */
#define CHUNK (1u << 20)
#define TREE_NAME_MAX 200

/* Error classes of a metadata operation (the phase's names.err). */
enum { ME_MISSING, ME_EXISTS, ME_SHORT, ME_CHECKSUM, ME_SYMLINK, ME_OTHER };
static const char *const err_names[] = {"missing", "exists", "short_read", "checksum", "symlink", "other", NULL};

struct meta_args {
    struct rb_target_cfg tgt;
    const char *phases_s, *tree;
    uint64_t dirs, files, size, threads, seed;
    bool keep, verify;
    unsigned phases; /* bit per enum mphase */
};

struct meta_run;

/* One thread of a rank: its share of a phase's items, its stats (under mu: the main thread collects them). */
struct mworker {
    struct meta_run *run;
    pthread_t th;
    bool started, warned;
    struct rb_fwatch *watch;   /* where the call in progress is published for the watchdog (--timeout), or NULL */
    pthread_mutex_t mu;
    struct rb_stats *local;
    uint64_t lo, hi; /* items [lo, hi) of the phase running */
    unsigned g;      /* the thread's index over all ranks */
    unsigned char *buf;
};

struct meta_run {
    const struct meta_args *a;
    char top[PATH_MAX - 64];   /* the run's tree: <dir>/<tree name> */
    int dir;                   /* <dir> held open: every name is resolved beneath it (railbench/beneath.h) */
    size_t rootlen;            /* strlen(<dir>): a path's name beneath it starts at rootlen + 1 */
    enum mphase ph;
    bool renamed;              /* the rename phase ran: files carry their ".r" names */
    unsigned nworkers;         /* over all ranks */
    atomic_bool stop;
    atomic_uint running;
    atomic_int fatal;          /* errno that ended the phase on this rank (a full or vanished file system); 0 none */
    bool abandoned;            /* a thread was left in a file system call past --timeout: this stays allocated */
    char fatal_what[PATH_MAX + 32];
    pthread_mutex_t fatal_mu;
    struct mworker *w;
    unsigned n;                /* this rank's threads */
};

/* ---- names: item i of a file phase is file i % files in directory i / files; O(1) memory ---- */

static int dir_path(const struct meta_run *r, uint64_t d, char *buf, size_t len)
{
    int k = snprintf(buf, len, "%s/d%07" PRIu64, r->top, d);
    return k < 0 || (size_t)k >= len ? -ENAMETOOLONG : 0;
}

static int file_path(const struct meta_run *r, uint64_t i, bool renamed, char *buf, size_t len, const char **rel)
{
    uint64_t f = r->a->files;
    int k = snprintf(buf, len, "%s/d%07" PRIu64 "/f%09" PRIu64 "%s", r->top, i / f, i % f, renamed ? ".r" : "");
    if (rel)
        *rel = buf + strlen(r->top) + 1;
    return k < 0 || (size_t)k >= len ? -ENAMETOOLONG : 0;
}

static uint64_t phase_items(const struct meta_args *a, enum mphase p)
{
    return p == MP_MKDIR || p == MP_RMDIR ? a->dirs : a->dirs * a->files;
}

/* ---- one operation each ---- */

/*
 * Writes size seeded bytes to fd (the payload of rel, as load put writes it: load meta's files are in the plain
 * layout, NULL below and in read_all). Returns 0 or an errno.
 */
static int write_all(struct mworker *w, int fd, const char *rel)
{
    const struct meta_args *a = w->run->a;
    uint64_t key = rb_payload_key(a->seed, rel);
    for (uint64_t off = 0; off < a->size;) {
        size_t n = (size_t)(a->size - off < CHUNK ? a->size - off : CHUNK);
        rb_payload_fill(NULL, key, off, w->buf, n);
        ssize_t k = pwrite(fd, w->buf, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : EIO;
        off += (uint64_t)k;
    }
    return 0;
}

/* Reads fd to its end: the bytes in *got; a mismatch with the payload sets *bad. Returns 0 or an errno. */
static int read_all(struct mworker *w, int fd, const char *rel, uint64_t *got, bool *bad)
{
    const struct meta_args *a = w->run->a;
    uint64_t key = a->verify ? rb_payload_key(a->seed, rel) : 0;
    *got = 0;
    for (;;) {
        ssize_t k = read(fd, w->buf, CHUNK);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return errno;
        if (k == 0)
            return 0;
        if (a->verify && !*bad && rb_payload_verify(NULL, key, *got, w->buf, (size_t)k) != (size_t)k)
            *bad = true;
        *got += (uint64_t)k;
    }
}

/* Records one finished operation: its latency, or its error class (the first of each thread logged). */
static void record(struct mworker *w, uint64_t t0, int err, int cls, uint64_t bytes, const char *what,
                   const char *path)
{
    uint64_t ns = rb_clock_ns() - t0;
    struct meta_run *r = w->run;
    pthread_mutex_lock(&w->mu);
    w->local->ops++;
    if (err || cls >= 0) {
        if (cls < 0)
            cls = err == ENOENT            ? ME_MISSING
                  : err == EEXIST          ? ME_EXISTS
                  : err == RB_BENEATH_LINK ? ME_SYMLINK
                                           : ME_OTHER;
        rb_stats_error(w->local, (unsigned)cls);
    } else {
        rb_hist_record(&w->local->lat, ns);
        w->local->bytes += bytes;
    }
    pthread_mutex_unlock(&w->mu);
    if (!err && cls < 0)
        return;
    if (err && (rb_fio_fatal(err) || err == EACCES || err == EPERM)) {
        /* Nothing further can work on a full or vanished file system, nor where permission is refused. */
        pthread_mutex_lock(&r->fatal_mu);
        if (!atomic_load(&r->fatal)) {
            snprintf(r->fatal_what, sizeof r->fatal_what, "%s %s", what, path);
            atomic_store(&r->fatal, err);
        }
        pthread_mutex_unlock(&r->fatal_mu);
        atomic_store(&r->stop, true);
        return;
    }
    if (!w->warned) {
        w->warned = true;
        rb_warn("%s %s: %s (first failure of this thread; counted by class)", what, path,
                err == RB_BENEATH_LINK ? "a symbolic link (or a way out of the target), not followed"
                : err                  ? strerror(err)
                : cls == ME_CHECKSUM ? "bytes differ from the payload written"
                                                               : "size differs from the one written");
    }
}

/* Does item i of the running phase. */
static void do_item(struct mworker *w, uint64_t i)
{
    struct meta_run *r = w->run;
    const struct meta_args *a = r->a;
    char path[PATH_MAX], to[PATH_MAX];
    const char *rel = NULL;
    int rc = r->ph == MP_MKDIR || r->ph == MP_RMDIR ? dir_path(r, i, path, sizeof path)
                                                    : file_path(r, i, r->renamed, path, sizeof path, &rel);
    uint64_t t0 = rb_clock_ns();
    if (rc) {
        record(w, t0, ENAMETOOLONG, -1, 0, phase_names[r->ph], r->top);
        return;
    }
    int err = 0, cls = -1, fd;
    uint64_t bytes = 0;
    struct stat st;
    const char *name = path + r->rootlen + 1; /* beneath the target: no link is followed */
    rb_fwatch_enter(w->watch, phase_names[r->ph], path);
    switch (r->ph) {
    case MP_MKDIR:
        err = -rb_beneath_mkdir(r->dir, name, 0755);
        break;
    case MP_CREATE:
        /* O_EXCL: a name that exists is never written over. */
        if ((fd = rb_beneath_open(r->dir, name, O_WRONLY | O_CREAT | O_EXCL, 0644)) < 0) {
            err = -fd;
            break;
        }
        err = a->size ? write_all(w, fd, rel) : 0;
        if (close(fd) != 0 && !err)
            err = errno;
        bytes = a->size;
        break;
    case MP_STAT:
        if ((err = -rb_beneath_stat(r->dir, name, &st)) != 0)
            break;
        else if ((uint64_t)st.st_size != a->size)
            cls = ME_SHORT;
        break;
    case MP_READ: {
        if ((fd = rb_beneath_open(r->dir, name, O_RDONLY, 0)) < 0) {
            err = -fd;
            break;
        }
        bool bad = false;
        err = read_all(w, fd, rel, &bytes, &bad);
        if (close(fd) != 0 && !err)
            err = errno;
        if (!err && bytes != a->size)
            cls = ME_SHORT;
        else if (!err && bad)
            cls = ME_CHECKSUM;
        break;
    }
    case MP_RENAME:
        if (file_path(r, i, true, to, sizeof to, NULL) != 0)
            err = ENAMETOOLONG;
        else
            err = -rb_beneath_rename(r->dir, name, to + r->rootlen + 1, 0);
        break;
    case MP_UNLINK:
        err = -rb_beneath_unlink(r->dir, name);
        break;
    case MP_RMDIR:
        err = -rb_beneath_rmdir(r->dir, name);
        break;
    case MP_COUNT:
        break;
    }
    rb_fwatch_leave(w->watch);
    record(w, t0, err, cls, bytes, phase_names[r->ph], path);
}

static void *worker_main(void *arg)
{
    struct mworker *w = arg;
    struct meta_run *r = w->run;
    for (uint64_t i = w->lo; i < w->hi && !atomic_load(&r->stop) && !rb_harness_signalled() && !rb_fwatch_fired(); i++)
        do_item(w, i);
    atomic_fetch_sub(&r->running, 1);
    return NULL;
}

/* ---- the phase callbacks ---- */

/* Items [lo, hi) of thread g of n over all ranks: contiguous shares, so a thread stays in few directories. */
static void share(uint64_t items, unsigned g, unsigned n, uint64_t *lo, uint64_t *hi)
{
    *lo = (uint64_t)((unsigned __int128)items * g / n);
    *hi = (uint64_t)((unsigned __int128)items * (g + 1) / n);
}

static int ph_start(void *arg)
{
    struct meta_run *r = arg;
    uint64_t items = phase_items(r->a, r->ph);
    for (unsigned i = 0; i < r->n; i++) {
        struct mworker *w = &r->w[i];
        share(items, w->g, r->nworkers, &w->lo, &w->hi);
        w->warned = false;
        atomic_fetch_add(&r->running, 1);
        if (pthread_create(&w->th, NULL, worker_main, w) != 0) {
            atomic_fetch_sub(&r->running, 1);
            return -EAGAIN;
        }
        w->started = true;
    }
    return 0;
}

static void ph_collect(void *arg, struct rb_stats *into)
{
    struct meta_run *r = arg;
    for (unsigned i = 0; i < r->n; i++) {
        pthread_mutex_lock(&r->w[i].mu);
        rb_stats_merge(into, r->w[i].local);
        rb_stats_reset(r->w[i].local);
        pthread_mutex_unlock(&r->w[i].mu);
    }
}

static bool ph_done(void *arg)
{
    struct meta_run *r = arg;
    /* A call past --timeout: the watchdog said which; the phase ends here (exit 3). */
    return atomic_load(&r->running) == 0 || rb_fwatch_fired();
}

static void ph_stop(void *arg)
{
    struct meta_run *r = arg;
    atomic_store(&r->stop, true);
    for (unsigned i = 0; i < r->n; i++)
        if (r->w[i].started) {
            /* One stuck in a stalled file system call is left behind (rb_fwatch_join): it cannot be woken. */
            if (!rb_fwatch_join(r->w[i].th, r->w[i].watch))
                r->abandoned = true;
            r->w[i].started = false;
        }
}

/* ---- the run ---- */

/* One summary row of phase p (rank 0). */
static cJSON *phase_row(const struct rb_phase *p, enum mphase ph)
{
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "op", phase_ops[ph]);
    cJSON_AddStringToObject(row, "phase", phase_names[ph]);
    cJSON_AddItemToObject(row, "requests", rb_json_u64(p->total->ops));
    rb_stats_to_json(row, p->total, &p->names, p->duration_s, false);
    return row;
}

/* One table row of phase p (rank 0). */
static void table_row(struct rb_buf *b, const struct rb_phase *p, enum mphase ph)
{
    const struct rb_stats *s = p->total;
    char lat[4][32];
    uint64_t q[4] = {(uint64_t)rb_hist_mean(&s->lat), rb_hist_percentile(&s->lat, 50),
                     rb_hist_percentile(&s->lat, 99), rb_hist_percentile(&s->lat, 100)};
    for (int i = 0; i < 4; i++) {
        if (s->ops > s->errors)
            rb_format_duration_human(lat[i], sizeof lat[i], q[i]);
        else
            snprintf(lat[i], sizeof lat[i], "–");
    }
    char rate[32] = "–";
    if (p->duration_s > 0)
        snprintf(rate, sizeof rate, "%.0f", (double)(s->ops - s->errors) / p->duration_s);
    rb_buf_printf(b, "| %s | %" PRIu64 " | %s | %s | %s | %s | %s | %" PRIu64 " |\n", phase_names[ph], s->ops, rate,
                  lat[0], lat[1], lat[2], lat[3], s->errors);
}

/*
 * After a phase that stopped short (a full or vanished file system, a
 * signal): removes this rank's share of what the run made (both names of
 * each file; missing ones are fine), then the directories and the tree.
 */
static void remove_share(struct rb_harness *h, struct meta_run *r)
{
    char path[PATH_MAX];
    uint64_t lo, hi, unused;
    unsigned g0 = (unsigned)h->rank * r->n, g1 = g0 + r->n - 1;
    share(phase_items(r->a, MP_CREATE), g0, r->nworkers, &lo, &unused);
    share(phase_items(r->a, MP_CREATE), g1, r->nworkers, &unused, &hi);
    for (uint64_t i = lo; i < hi; i++)
        for (int renamed = 0; renamed < 2; renamed++)
            if (file_path(r, i, renamed, path, sizeof path, NULL) == 0)
                rb_beneath_unlink(r->dir, path + r->rootlen + 1);
    rb_harness_barrier(h);
    share(r->a->dirs, g0, r->nworkers, &lo, &unused);
    share(r->a->dirs, g1, r->nworkers, &unused, &hi);
    for (uint64_t d = lo; d < hi; d++)
        if (dir_path(r, d, path, sizeof path) == 0)
            rb_beneath_rmdir(r->dir, path + r->rootlen + 1);
    rb_harness_barrier(h);
    if (h->local_rank == 0)
        rb_beneath_rmdir(r->dir, r->top + r->rootlen + 1);
}

/*
 * After the phases: the tree (name beneath r->dir) removed unless --keep: by
 * each rank's share after a run cut short, else the empty top. A file system
 * that stopped answering is asked nothing more. Rank 0 lists a tree a cut
 * run leaves.
 */
static void remove_tree(struct rb_harness *h, struct meta_run *r, const char *name, bool cut)
{
    bool stalled = rb_fwatch_fired();
    if (stalled) {
        /* nothing: a call would wait as long as the one the watchdog gave up on */
    } else if (cut && !r->a->keep) {
        remove_share(h, r);
    } else if (!r->a->keep) {
        rb_harness_barrier(h);
        if (h->local_rank == 0)
            rb_beneath_rmdir(r->dir, name); /* the rmdir phase emptied it */
    }
    struct stat st;
    if (h->rank == 0 && cut && (stalled || rb_beneath_stat(r->dir, name, &st) == 0))
        rb_harness_kept(h, "the tree %s (delete it with rm -r)", r->top);
}

/* Makes the tree's top directory: rank 0 first (it must not exist), then one rank on every other host. */
static int make_top(struct rb_harness *h, struct meta_run *r)
{
    int err = 0;
    const char *top = r->top + r->rootlen + 1;
    if (h->rank == 0)
        err = -rb_beneath_mkdir(r->dir, top, 0755);
    RB_MPI_CHECK(MPI_Bcast(&err, 1, MPI_INT, 0, h->comm));
    if (err) {
        if (h->rank == 0)
            rb_error("%s: %s%s", r->top,
                     err == RB_BENEATH_LINK ? "a symbolic link (or a way out of the target), not followed"
                                            : strerror(err),
                     err == EEXIST ? " (a run makes its own tree and never writes into one it did not create)" : "");
        return RB_EXIT_RUNTIME;
    }
    rb_harness_barrier(h);
    struct stat st;
    /* a file system this host does not share with rank 0's: the tree is made here too */
    if (h->local_rank == 0 && h->rank != 0 && rb_beneath_stat(r->dir, top, &st) == -ENOENT)
        rb_beneath_mkdir(r->dir, top, 0755);
    rb_harness_barrier(h);
    return 0;
}

static int meta_phases(struct rb_harness *h, struct meta_run *r, struct rb_buf *table, cJSON *ops, bool *complete,
                       struct rb_buf *counts)
{
    int status = 0;
    for (enum mphase ph = 0; ph < MP_COUNT; ph++) {
        if (!(r->a->phases & (1u << ph)))
            continue;
        r->ph = ph;
        atomic_store(&r->stop, false);
        struct rb_phase p = {
            .name = phase_names[ph],
            .op = phase_ops[ph],
            .names = {err_names, NULL},
            .start = ph_start,
            .collect = ph_collect,
            .done = ph_done,
            .stop = ph_stop,
            .ctx = r,
        };
        status = rb_harness_run_phase(h, &p);
        ph_stop(r);
        if (ph == MP_RENAME)
            r->renamed = true;
        if (h->rank == 0 && p.total) {
            uint64_t want = phase_items(r->a, ph), ok = p.total->ops - p.total->errors;
            cJSON_AddItemToArray(ops, phase_row(&p, ph));
            table_row(table, &p, ph);
            rb_buf_printf(counts, "%s%s %" PRIu64 "/%" PRIu64, counts->len ? ", " : "", phase_names[ph], ok, want);
            *complete = *complete && ok == want;
        }
        rb_harness_phase_free(&p);
        /* The first rank that met a full or vanished file system says so, once for the run (the watchdog said its own). */
        int fatal = atomic_load(&r->fatal), mine = fatal || rb_fwatch_fired() ? h->rank : h->size, first = mine;
        RB_MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, h->comm));
        int worst = first < h->size;
        if (fatal && first == h->rank)
            rb_error("%s: %s (%s); stopping (what was measured so far is kept)", phase_names[ph], strerror(fatal),
                     r->fatal_what);
        if (status || worst || rb_harness_any_signalled(h))
            return status ? status : worst ? RB_EXIT_RUNTIME : 0;
    }
    return 0;
}

static int parse_phases(struct meta_args *a)
{
    if (!a->phases_s) {
        a->phases = a->keep ? KEEP_PHASES : ALL_PHASES;
        return 0;
    }
    a->phases = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", a->phases_s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < MP_COUNT && strcmp(tok, phase_names[k]) != 0)
            k++;
        if (k == MP_COUNT)
            return rb_cli_usage_error("--phases: \"%s\": expected a list of mkdir, create, stat, read, rename, unlink, "
                                      "rmdir", tok);
        a->phases |= 1u << k;
    }
    const unsigned made = (1u << MP_MKDIR) | (1u << MP_CREATE), gone = (1u << MP_UNLINK) | (1u << MP_RMDIR);
    if ((a->phases & made) != made)
        return rb_cli_usage_error("--phases %s: mkdir and create are needed (a run works on a tree it makes)",
                                  a->phases_s);
    if (a->keep && (a->phases & gone))
        return rb_cli_usage_error("--phases %s with --keep: the tree is kept, so unlink and rmdir cannot run",
                                  a->phases_s);
    if (!a->keep && (a->phases & gone) != gone)
        return rb_cli_usage_error("--phases %s: unlink and rmdir remove the run's tree; add them, or --keep to keep "
                                  "it", a->phases_s);
    return 0;
}

static int check_args(struct meta_args *a)
{
    if (a->dirs < 1 || a->dirs > MAX_DIRS)
        return rb_cli_usage_error("--dirs %" PRIu64 ": expected 1 to %llu", a->dirs, MAX_DIRS);
    if (a->files < 1 || a->files > MAX_FILES_TOTAL / a->dirs)
        return rb_cli_usage_error("--files %" PRIu64 ": expected at least 1, and --dirs x --files at most %llu",
                                  a->files, MAX_FILES_TOTAL);
    if (a->size > MAX_SIZE)
        return rb_cli_usage_error("--size %" PRIu64 ": expected at most 1 GiB (metadata runs use small files)",
                                  a->size);
    if (a->threads < 1 || a->threads > MAX_THREADS)
        return rb_cli_usage_error("--threads %" PRIu64 ": expected 1 to %d", a->threads, MAX_THREADS);
    if (rb_objname_check("--tree", a->tree, false))
        return RB_EXIT_USAGE;
    if (a->tree && (!a->tree[0] || strchr(a->tree, '/') || strcmp(a->tree, ".") == 0 || strcmp(a->tree, "..") == 0 ||
                    strlen(a->tree) > TREE_NAME_MAX))
        return rb_cli_usage_error("--tree \"%s\": expected one directory name (no '/'), at most %d bytes", a->tree,
                                  TREE_NAME_MAX);
    return parse_phases(a);
}

/* Whether something (a link included: never written through) is at tree beneath t's directory. */
static bool tree_taken(const struct rb_target *t, const char *tree)
{
    struct stat st;
    int dir = rb_target_file_dir(t), rc = dir < 0 ? dir : rb_beneath_stat(dir, tree, &st);
    return rc == 0 || rc == -RB_BENEATH_LINK;
}

static int meta_run(void *arg, struct rb_cli *cli)
{
    struct meta_args *a = arg;
    int status = check_args(a);
    if (status)
        return status;
    struct rb_target *t = NULL;
    struct rb_target_cfg tc = a->tgt;
    tc.url = cli->args[0];
    char err[1024] = "";
    if (rb_target_open(&t, &tc, err, sizeof err) != 0)
        return rb_cli_usage_error("%s", err);
    if (!rb_target_can(t, RB_TCAP_FILES)) {
        rb_target_close(t);
        return rb_cli_usage_error("%s: load meta works on a directory (file:///PATH or /PATH)", cli->args[0]);
    }
    if (rb_file_target_probe(t, a->tgt.timeout_ns, err, sizeof err) != 0) {
        if (err[0] && rb_cli_first_rank()) /* "": the watchdog's line said it */
            fprintf(stderr, "railbench: error: %s\n", err);
        rb_target_close(t);
        return RB_EXIT_RUNTIME;
    }
    const char *root = rb_target_file_root(t);
    if (a->tree && tree_taken(t, a->tree)) {
        /* The message first: root is the target's, gone with it. */
        status = rb_cli_usage_error("--tree %s: %s/%s exists already (a run makes its own tree and never writes into "
                                    "one it did not create)", a->tree, root, a->tree);
        rb_target_close(t);
        return status;
    }
    struct rb_harness h;
    if ((status = rb_harness_init(&h, "load meta", cli, &(struct rb_harness_opts){.mpi = true}))) {
        rb_target_close(t);
        return status;
    }
    /* On the heap: a thread left in a stalled file system call keeps it (r->abandoned). */
    struct meta_run *r = calloc(1, sizeof *r);
    if (!r || (status = rb_fwatch_start(a->tgt.timeout_ns)) != 0)
        rb_harness_fatal(&h, RB_EXIT_RUNTIME, "cannot set up the run: %s", r ? strerror(-status) : "out of memory");
    *r = (struct meta_run){.a = a, .n = (unsigned)a->threads, .nworkers = (unsigned)a->threads * (unsigned)h.size};
    char name[TREE_NAME_MAX + 64];
    if (a->tree)
        snprintf(name, sizeof name, "%s", a->tree);
    else
        snprintf(name, sizeof name, "rb-%s-meta", h.run_id);
    snprintf(r->top, sizeof r->top, "%s/%s", root, name);
    r->rootlen = strlen(root);
    r->dir = rb_target_file_dir(t); /* open since the probe: the directory is there */
    pthread_mutex_init(&r->fatal_mu, NULL);
    r->w = calloc(r->n, sizeof *r->w);
    bool oom = !r->w;
    for (unsigned i = 0; r->w && i < r->n; i++) {
        r->w[i].run = r;
        r->w[i].watch = rb_fwatch_claim();
        r->w[i].g = (unsigned)h.rank * r->n + i;
        pthread_mutex_init(&r->w[i].mu, NULL);
        oom |= !(r->w[i].local = rb_stats_new()) || !(r->w[i].buf = malloc(CHUNK));
    }
    if (oom)
        rb_harness_fatal(&h, RB_EXIT_RUNTIME, "out of memory");

    struct rb_buf table = {0}, counts = {0};
    cJSON *summary = h.rank == 0 ? cJSON_CreateObject() : NULL, *ops = NULL;
    if (summary)
        ops = cJSON_AddArrayToObject(summary, "ops");
    bool complete = true;
    status = make_top(&h, r);
    if (!status) {
        status = meta_phases(&h, r, &table, ops, &complete, &counts);
        remove_tree(&h, r, name, status || h.interrupted);
    }
    char *text = NULL;
    if (h.rank == 0 && summary) {
        cJSON_AddStringToObject(summary, "target", rb_target_name(t));
        cJSON_AddStringToObject(summary, "tree", r->top);
        cJSON_AddItemToObject(summary, "dirs", rb_json_u64(a->dirs));
        cJSON_AddItemToObject(summary, "files_per_dir", rb_json_u64(a->files));
        cJSON_AddItemToObject(summary, "files", rb_json_u64(a->dirs * a->files));
        cJSON_AddItemToObject(summary, "file_size_bytes", rb_json_u64(a->size));
        cJSON_AddNumberToObject(summary, "ranks", h.size);
        cJSON_AddNumberToObject(summary, "threads", (double)a->threads);
        cJSON_AddBoolToObject(summary, "kept", a->keep);
        rb_result_set(&h.result, "summary", summary);
        if (counts.len)
            rb_result_check(&h.result, "complete", complete, "operations that succeeded, of those each phase has: %s",
                            counts.s);
        char sz[32];
        rb_format_size(sz, sizeof sz, a->size);
        struct rb_buf b = {0};
        rb_buf_printf(&b, "\n# railbench load meta %s\n\ntree %s: %" PRIu64 " directories x %" PRIu64
                          " files of %s; %d rank(s) x %" PRIu64 " thread(s)\n\n"
                          "| phase | operations | per second | latency avg | p50 | p99 | max | errors |\n"
                          "|---|---:|---:|---:|---:|---:|---:|---:|\n%s",
                      rb_target_name(t), r->top, a->dirs, a->files, sz, h.size, a->threads, table.s ? table.s : "");
        text = b.oom ? NULL : b.s;
    }
    status = rb_harness_finish(&h, text, status);
    free(text);
    rb_buf_free(&table);
    rb_buf_free(&counts);
    if (!r->abandoned) {
        for (unsigned i = 0; r->w && i < r->n; i++) {
            rb_fwatch_release(r->w[i].watch);
            rb_stats_free(r->w[i].local);
            free(r->w[i].buf);
            pthread_mutex_destroy(&r->w[i].mu);
        }
        free(r->w);
        pthread_mutex_destroy(&r->fatal_mu);
        free(r);
        rb_target_close(t);
    }
    return status;
}

int rb_load_meta_main(int argc, char **argv)
{
    struct meta_args a = {.dirs = 10, .files = 100, .threads = 1, .seed = 1, .tgt = {.timeout_ns = 30 * RB_NS_PER_S}};
    const struct rb_opt own[] = {
        {"dirs", 0, RB_OPT_U64, &a.dirs, "N", "directories in the tree, all ranks together (mdtest's -b/-z)", NULL},
        {"files", 'n', RB_OPT_U64, &a.files, "N", "files in each directory", NULL},
        {"size", 's', RB_OPT_SIZE, &a.size, "SIZE", "bytes written into each file by create and read back by read "
         "(mdtest's -w/-e)", NULL},
        {"threads", 't', RB_OPT_U64, &a.threads, "N", "threads per rank, each on its own share of the names", NULL},
        {"phases", 0, RB_OPT_STR, &a.phases_s, "LIST",
         "the phases to run, in this order: mkdir, create, stat, read (open, read, close), rename, unlink, rmdir "
         RB_CLI_IF_NOT_GIVEN "all; with --keep all but unlink and rmdir)",
         "mkdir,create,stat,read,rename,unlink,rmdir"},
        {"tree", 0, RB_OPT_STR, &a.tree, "NAME", "the tree's directory under DIR; it must not exist "
         RB_CLI_IF_NOT_GIVEN "rb-<run id>-meta)", NULL},
        {"keep", 0, RB_OPT_FLAG, &a.keep, NULL, "keep the tree (no unlink or rmdir phase)", NULL},
        {"verify", 0, RB_OPT_FLAG, &a.verify, NULL, "read: check every byte against the payload create wrote", NULL},
        {"seed", 0, RB_OPT_U64, &a.seed, "N", "seed of the payload", NULL},
        {"timeout", 0, RB_OPT_DURATION, &a.tgt.timeout_ns, "D", "time limit of each file system call: one that has not "
         "returned by then ends the run, exit 3 (a stalled mount; 0: none) " RB_CLI_IF_NOT_GIVEN "30s)", NULL},
        {0},
    };
    struct rb_opts opts = {0};
    rb_opts_add(&opts, own);
    const struct rb_cmd_spec spec = {
        "railbench load meta [options] DIR",
        "mdtest's metadata phases over a tree of --dirs directories x --files files under DIR (file:///PATH or "
        "/PATH): mkdir, create, stat, read, rename, unlink, rmdir; operations per second and latency per phase.",
        opts.v, 1, 1, false};
    struct rb_cli cli;
    int rc;
    if (!rb_cli_parse_cmd(&cli, &spec, argc, argv, &rc))
        return rc;
    rc = meta_run(&a, &cli);
    rb_cli_free(&cli);
    return rc;
}
