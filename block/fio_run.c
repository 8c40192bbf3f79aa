/* railbench block: fio as a child process for one point (job file, fork/exec, watch, stop, parse) and its CPUs. */
#define _GNU_SOURCE
#include "block_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "railbench/clock.h"
#include "railbench/file.h"
#include "railbench/log.h"

#define STOP_WAIT_NS (10 * RB_NS_PER_S)
#define FIO_TAIL_LINES 5

int rb_block_find_program(const char *prog, char *out, size_t len)
{
    if (strchr(prog, '/')) {
        snprintf(out, len, "%s", prog);
        return access(out, X_OK) == 0 ? 0 : -ENOENT;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        int w = snprintf(out, len, "%.*s/%s", (int)n, n ? p : ".", prog);
        struct stat st;
        if (w > 0 && (size_t)w < len && stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 0;
        p += n;
        if (*p == ':')
            p++;
    }
    return -ENOENT;
}

/* fio inherits the set (and mpirun binds ranks, by default to one core when np <= 2). */
int rb_block_cpus_allowed(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

void rb_block_warn_binding(struct rb_harness *h, const struct rb_block_opts *o)
{
    int mine = rb_block_cpus_allowed(), least = mine;
    if (mine < 0)
        mine = least = INT_MAX;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&mine, &least, 1, MPI_INT, MPI_MIN, h->comm));
    uint64_t jobs = 0;
    for (size_t i = 0; i < o->numjobs.n; i++)
        if (o->numjobs.v[i] > jobs)
            jobs = o->numjobs.v[i];
    if (h->rank == 0 && (uint64_t)least < jobs)
        rb_warn("a rank may run on only %d CPU(s) while up to %" PRIu64 " fio jobs share them (fio inherits the "
                "rank's CPU binding); consider mpirun --bind-to none or --bind-to socket",
                least, jobs);
}

void rb_block_run_reset(struct rb_block_run *r, const char *dir, const struct rb_block_spec *ps)
{
    r->name = ps->name;
    r->pid = 0;
    r->wstatus = 0;
    r->reaped = r->stopped = r->parsed = r->ok = false;
    r->err[0] = '\0';
    rb_hist_reset(r->clat);
    rb_hist_reset(r->lat);
    snprintf(r->job_path, sizeof r->job_path, "%s/%s.fio", dir, ps->name);
    snprintf(r->json_path, sizeof r->json_path, "%s/%s.json", dir, ps->name);
    snprintf(r->log_path, sizeof r->log_path, "%s/%s.log", dir, ps->name);
    rb_fio_cmdline(&r->cmd, r->json_path, r->job_path, !rb_block_rw_writes(r->o->rw));
}

int rb_block_run_write_job(const struct rb_block_run *r, const struct rb_block_target *t,
                           const struct rb_block_spec *ps)
{
    const struct rb_block_opts *o = r->o;
    struct rb_fio_job job = {
        .name = ps->name, .filename = t->path, .size_bytes = t->size_bytes, .rw = rb_block_rw_names[o->rw],
        .rwmix_read_pct = (unsigned)o->rwmix_pct, .bs_bytes = ps->bs, .iodepth = ps->iodepth,
        .numjobs = ps->numjobs, .runtime_ns = o->runtime_ns, .ramp_ns = o->ramp_ns, .engine = o->engine,
        .direct = (int)o->direct, .extra = o->fio_opts.v, .nextra = o->fio_opts.n,
    };
    char text[8192];
    int len = rb_fio_job_text(&job, text, sizeof text);
    if (len < 0)
        return RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "point %s: cannot write a job file for target %s", ps->name,
                              t->path);
    int rc = rb_file_write_atomic(r->job_path, text, (size_t)len);
    if (rc)
        return RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "point %s: cannot write %s: %s", ps->name, r->job_path,
                              strerror(-rc));
    return 0;
}

void rb_block_run_log_tail(const char *log_path, char *err, size_t errlen)
{
    FILE *f = fopen(log_path, "r");
    if (!f)
        return;
    char lines[FIO_TAIL_LINES][512];
    size_t n = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        snprintf(lines[n % FIO_TAIL_LINES], sizeof lines[0], "%s", line);
        n++;
    }
    fclose(f);
    size_t first = n > FIO_TAIL_LINES ? n - FIO_TAIL_LINES : 0;
    for (size_t i = first; i < n; i++)
        rb_error("  %s", lines[i % FIO_TAIL_LINES]);
    size_t len = strlen(err);
    if (n > first && len < errlen)
        snprintf(err + len, errlen - len, " %s", lines[first % FIO_TAIL_LINES]);
}

/*
 * The child after fork: only async-signal-safe calls until execv. Its own
 * process group (a terminal's ^C reaches railbench, which then stops fio so
 * that fio still writes its results); it dies with railbench; execv's errno
 * goes to the parent through errfd.
 */
static void exec_child(const char *prog, char *const argv[], pid_t parent, int nullfd, int logfd, int errfd)
    __attribute__((noreturn));
static void exec_child(const char *prog, char *const argv[], pid_t parent, int nullfd, int logfd, int errfd)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(127);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    dup2(nullfd, STDIN_FILENO);
    dup2(logfd, STDOUT_FILENO);
    dup2(logfd, STDERR_FILENO);
    execv(prog, argv);
    int e = errno;
    ssize_t w = write(errfd, &e, sizeof e);
    (void)w;
    _exit(127);
}

/*
 * Starts fio on this rank's job file: fork and execv with an argument
 * vector, never a shell. A close-on-exec pipe tells the parent whether execv
 * itself failed.
 */
static int run_start(void *arg)
{
    struct rb_block_run *r = arg;
    char **argv = r->cmd.argv;
    unlink(r->json_path);
    int logfd = open(r->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int pfd[2] = {-1, -1};
    int rc = 0;
    if (logfd < 0 || nullfd < 0 || pipe2(pfd, O_CLOEXEC) != 0) {
        rc = -errno;
        snprintf(r->err, sizeof r->err, "point %s: cannot set up fio's output (%s): %s", r->name, r->log_path,
                 strerror(errno));
        goto fail;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        rc = -errno;
        snprintf(r->err, sizeof r->err, "point %s: fork: %s", r->name, strerror(errno));
        goto fail;
    }
    if (pid == 0)
        exec_child(r->fio_path, argv, parent, nullfd, logfd, pfd[1]);
    r->pid = pid;
    setpgid(pid, pid); /* also here, so that the group exists before run_stop could signal it */
    close(pfd[1]);
    pfd[1] = -1;
    int e = 0;
    ssize_t got;
    do
        got = read(pfd[0], &e, sizeof e);
    while (got < 0 && errno == EINTR);
    if (got == (ssize_t)sizeof e) {
        waitpid(pid, &r->wstatus, 0);
        r->reaped = true;
        rc = -e;
        snprintf(r->err, sizeof r->err, "point %s: cannot run %s: %s", r->name, r->fio_path, strerror(e));
    }
fail:
    if (logfd >= 0)
        close(logfd);
    if (nullfd >= 0)
        close(nullfd);
    if (pfd[0] >= 0)
        close(pfd[0]);
    if (pfd[1] >= 0)
        close(pfd[1]);
    if (rc)
        rb_error("%s", r->err);
    return rc;
}

/* The longest fio may take to answer --cmdhelp or --parse-only before it is killed. */
#define ASK_WAIT_NS (30 * RB_NS_PER_S)

/* Reads the child's output from fd into out until EOF or the deadline; false when the deadline passed. */
static bool read_until(int fd, char *out, size_t len, uint64_t deadline_ns)
{
    size_t n = 0;
    for (;;) {
        uint64_t now = rb_clock_ns();
        if (now >= deadline_ns)
            break;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int pr = poll(&p, 1, (int)((deadline_ns - now) / RB_NS_PER_MS) + 1);
        if (pr <= 0)
            continue; /* EINTR or a timeout: the deadline decides */
        char tmp[512];
        ssize_t got = read(fd, tmp, sizeof tmp);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            out[n] = '\0';
            return true;
        }
        size_t keep = (size_t)got < len - 1 - n ? (size_t)got : len - 1 - n;
        memcpy(out + n, tmp, keep);
        n += keep;
    }
    out[n] = '\0';
    return false;
}

/*
 * Runs fio with argv (no shell) and puts what it printed on stdout and
 * stderr into out (len > 0, truncated, NUL-terminated). Returns its exit
 * status, -errno when it could not start, or -ETIMEDOUT after killing a fio
 * that had not finished within ASK_WAIT_NS.
 */
static int ask_fio(const char *fio_path, char *const argv[], char *out, size_t len)
{
    int pfd[2] = {-1, -1};
    int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nullfd < 0 || pipe2(pfd, O_CLOEXEC) != 0) {
        int e = errno;
        if (nullfd >= 0)
            close(nullfd);
        return -e;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    int e = errno;
    if (pid == 0)
        exec_child(fio_path, argv, parent, nullfd, pfd[1], -1); /* an execv failure shows as status 127 */
    close(pfd[1]);
    close(nullfd);
    if (pid < 0) {
        close(pfd[0]);
        return -e;
    }
    bool done = read_until(pfd[0], out, len, rb_clock_ns() + ASK_WAIT_NS);
    close(pfd[0]);
    if (!done) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    int st = 0;
    pid_t w;
    while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
        ;
    if (!done)
        return -ETIMEDOUT;
    if (w < 0) /* reaped by someone else: what it printed decides */
        return out[0] ? 1 : 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* fio's output as one line: its non-blank lines joined with "; ", in place. */
static void one_line(char *s)
{
    char *w = s;
    char *save = NULL;
    for (char *line = strtok_r(s, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        line += strspn(line, " \t");
        if (!*line)
            continue;
        if (w != s) {
            memmove(w + 2, line, strlen(line) + 1);
            memcpy(w, "; ", 2);
            w += 2;
        } else {
            memmove(w, line, strlen(line) + 1);
        }
        w += strlen(w);
    }
    *w = '\0';
}

/*
 * The name fio itself gives key (fio --cmdhelp=KEY prints "NAME: summary"
 * first, NAME the option an alias stands for) into canon; false when fio has
 * no such job option (an engine's options are not listed there).
 */
static bool fio_canonical(const char *fio_path, const char *key, char *canon, size_t len)
{
    char arg[160], out[4096];
    snprintf(arg, sizeof arg, "--cmdhelp=%s", key);
    char *argv[] = {"fio", arg, NULL};
    if (ask_fio(fio_path, argv, out, sizeof out) != 0 || strncmp(out, "No such", 7) == 0)
        return false;
    const char *p = out + strspn(out, " \t");
    size_t n = strcspn(p, ": \n");
    if (!n || p[n] != ':' || n >= len)
        return false;
    snprintf(canon, len, "%.*s", (int)n, p);
    return true;
}

int rb_block_run_check_opts(struct rb_block_run *r, const char *dir, const struct rb_block_target *t,
                            const struct rb_block_spec *ps)
{
    const struct rb_strs *items = &r->o->fio_opts;
    for (size_t i = 0; i < items->n; i++) {
        char key[128], canon[128];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(items->v[i], "="), items->v[i]);
        const char *owner;
        if (fio_canonical(r->fio_path, key, canon, sizeof canon) && strcmp(canon, key) != 0 &&
            (owner = rb_fio_key_owner(canon, strlen(canon))))
            return rb_cli_usage_error("--fio-opt '%s': %s is fio's other name for %s, which %s sets; use that%s",
                                      items->v[i], key, canon, owner, owner[0] == '-' ? " option" : " only");
    }
    rb_block_run_reset(r, dir, ps);
    int status = rb_block_run_write_job(r, t, ps);
    if (status)
        return status;
    char out[2048];
    char *argv[] = {"fio", "--parse-only", r->job_path, NULL};
    int rc = ask_fio(r->fio_path, argv, out, sizeof out);
    if (rc == 0)
        return 0;
    if (rc < 0)
        return RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "--fio-opt: cannot ask %s to parse %s: %s", r->fio_path, r->job_path,
                              strerror(-rc));
    /* Name the item fio complains about when its text shows in fio's words ("Bad option <hipri>"). */
    const char *named = NULL;
    for (size_t i = 0; i < items->n && !named; i++)
        if (strstr(out, items->v[i]))
            named = items->v[i];
    one_line(out);
    return RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "--fio-opt %s: fio rejects the job file (%s): %s", named ? named : "",
                          r->job_path, out[0] ? out : "no message");
}

/*
 * True once fio has exited. ECHILD means someone else reaped it (a library's
 * SIGCHLD handler): its status is lost, so the JSON it left decides.
 */
static bool run_done(void *arg)
{
    struct rb_block_run *r = arg;
    if (r->reaped || r->pid <= 0)
        return true;
    pid_t w = waitpid(r->pid, &r->wstatus, WNOHANG);
    if (w == r->pid)
        r->reaped = true;
    else if (w < 0 && errno == ECHILD) {
        r->reaped = true;
        r->wstatus = 0;
    }
    return r->reaped;
}

/* Waits up to ns for fio to exit; true when it did. */
static bool run_wait(struct rb_block_run *r, uint64_t ns)
{
    uint64_t t0 = rb_clock_ns();
    while (!run_done(r) && rb_clock_ns() - t0 < ns)
        rb_clock_sleep_ns(10 * RB_NS_PER_MS, NULL);
    return r->reaped;
}

/* SIGTERM makes fio stop its jobs and still write the JSON of what ran; SIGKILL the group if it lingers. */
static void run_stop(void *arg)
{
    struct rb_block_run *r = arg;
    if (run_done(r))
        return;
    r->stopped = true;
    kill(r->pid, SIGTERM);
    if (run_wait(r, STOP_WAIT_NS))
        return;
    kill(-r->pid, SIGKILL);
    kill(r->pid, SIGKILL);
    /* A process stuck in uninterruptible I/O ignores even SIGKILL; leave it rather than hang the run. */
    if (!run_wait(r, STOP_WAIT_NS)) {
        rb_warn("point %s: fio (pid %d) does not exit even after SIGKILL; leaving it", r->name, (int)r->pid);
        r->reaped = true;
        r->wstatus = 0;
    }
}

/* Once fio has exited: checks how, parses its JSON, and hands the figures to the harness. */
static void run_collect(void *arg, struct rb_stats *into)
{
    struct rb_block_run *r = arg;
    if (!r->reaped || r->parsed)
        return;
    r->parsed = true;
    if (!r->stopped) {
        if (WIFSIGNALED(r->wstatus)) {
            snprintf(r->err, sizeof r->err, "point %s: fio was killed by signal %d; its last output (%s):", r->name,
                     WTERMSIG(r->wstatus), r->log_path);
            return;
        }
        if (WEXITSTATUS(r->wstatus) != 0) {
            snprintf(r->err, sizeof r->err, "point %s: fio exited with status %d; its last output (%s):", r->name,
                     WEXITSTATUS(r->wstatus), r->log_path);
            return;
        }
    }
    char why[300];
    if (rb_fio_parse_file(r->json_path, &r->fio, r->clat, r->lat, why, sizeof why) != 0) {
        snprintf(r->err, sizeof r->err, "point %s: %s: %s", r->name, r->json_path, why);
        return;
    }
    if (r->fio.job_error) {
        snprintf(r->err, sizeof r->err, "point %s: fio reported error %d (%s) in %s; its last output (%s):", r->name,
                 r->fio.job_error, strerror(r->fio.job_error), r->json_path, r->log_path);
        return;
    }
    uint64_t ios = r->fio.read.total_ios + r->fio.write.total_ios;
    if (ios > 0 && r->clat->count == 0) {
        snprintf(r->err, sizeof r->err, "point %s: %s has no clat_ns bins (fio's json+ output is needed)", r->name,
                 r->json_path);
        return;
    }
    r->ok = true;
    into->ops += ios;
    into->bytes += r->fio.read.io_bytes + r->fio.write.io_bytes;
    rb_hist_merge(&into->lat, r->clat);
}

void rb_block_run_phase(struct rb_phase *p, struct rb_block_run *r, uint64_t watchdog_ns)
{
    *p = (struct rb_phase){
        .name = r->name, .op = rb_block_rw_names[r->o->rw], .duration_ns = watchdog_ns, .start = run_start,
        .collect = run_collect, .done = run_done, .stop = run_stop, .ctx = r, .no_progress = true,
    };
}
