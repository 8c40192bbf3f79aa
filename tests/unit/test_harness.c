/*
 * Unit tests for the harness on one process without MPI (core/harness.c, harness_dir.c, harness_live.c's
 * record written at a signal): the result directory and its marker, a phase's ticks into intervals.jsonl and
 * its record, the progress line, the outcome line of each ending, and what an interrupted run leaves.
 */
#define _GNU_SOURCE

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/harness_int.h"
#include "railbench/clock.h"
#include "railbench/file.h"
#include "railbench/log.h"
#include "railbench/units.h"

#define OP_BYTES 1000

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void rm_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_tmp(char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/rb-test-harness-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static cJSON *read_json(const char *dir, const char *file)
{
    char path[4300], *buf = NULL;
    size_t len;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    assert_int_equal(rb_file_read(path, 64 << 20, &buf, &len), 0);
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    assert_non_null(j);
    return j;
}

static char *read_text(const char *path)
{
    char *buf = NULL;
    size_t len;
    assert_int_equal(rb_file_read(path, 64 << 20, &buf, &len), 0);
    return buf;
}

/* stderr into a file while the harness writes its lines; stop returns what was written (caller frees). */
struct err_file {
    char path[4300];
    int saved;
};

static void err_begin(struct err_file *e, const char *dir)
{
    fflush(stderr);
    snprintf(e->path, sizeof e->path, "%s.stderr", dir);
    int fd = open(e->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    e->saved = dup(STDERR_FILENO);
    assert_true(dup2(fd, STDERR_FILENO) >= 0);
    close(fd);
}

static char *err_end(struct err_file *e)
{
    fflush(stderr);
    dup2(e->saved, STDERR_FILENO);
    close(e->saved);
    char *text = read_text(e->path);
    unlink(e->path);
    return text;
}

/* The last line of text (without its newline) into buf. */
static void last_line(const char *text, char *buf, size_t len)
{
    size_t n = strlen(text);
    while (n && text[n - 1] == '\n')
        n--;
    size_t start = n;
    while (start && text[start - 1] != '\n')
        start--;
    snprintf(buf, len, "%.*s", (int)(n - start), text + start);
}

/* ---- a command line with the common options only ---- */

static const struct rb_opt no_opts[] = {{0}};
static const struct rb_cmd_spec spec = {"railbench unit [options]", "A harness under test.", no_opts, 0, 0, false};

#define ARGV(...) ((char *[]){"unit", __VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){"unit", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(cli, ...) rb_cli_parse((cli), &spec, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

/* A run of "unit harness" writing into <new directory>/sub, ticking every interval; label and --quiet if given. */
struct run {
    char tmp[64], out[128];
    struct rb_cli cli;
    struct rb_harness h;
};

static void run_begin(struct run *r, const char *sub, const char *interval, bool quiet, const char *label)
{
    make_tmp(r->tmp, sizeof r->tmp);
    snprintf(r->out, sizeof r->out, "%s/%s", r->tmp, sub);
    char *argv[10] = {"unit", "--out", r->out};
    int argc = 3;
    if (interval)
        argv[argc++] = "--interval", argv[argc++] = (char *)interval;
    if (quiet)
        argv[argc++] = "--quiet";
    if (label)
        argv[argc++] = "--label", argv[argc++] = (char *)label;
    assert_int_equal(rb_cli_parse(&r->cli, &spec, argc, argv), 0);
    assert_int_equal(rb_harness_init(&r->h, "unit harness", &r->cli, NULL), 0);
}

/* ---- a phase of made-up work: OPS_PER_COLLECT operations per collect, done after run_ns ---- */

#define OPS_PER_COLLECT 5

struct synth {
    uint64_t t0, run_ns;
    unsigned starts, stops, collects, ticks;
    int raise_at;     /* raise this signal at the collect numbered raise_after (0: none) */
    unsigned raise_after;
    int fail_start;   /* start returns this */
};

static int synth_start(void *arg)
{
    struct synth *s = arg;
    s->starts++;
    s->t0 = rb_clock_ns();
    return s->fail_start;
}

static void synth_collect(void *arg, struct rb_stats *into)
{
    struct synth *s = arg;
    s->collects++;
    for (int i = 0; i < OPS_PER_COLLECT; i++) {
        into->ops++;
        into->bytes += OP_BYTES;
        rb_hist_record(&into->lat, 1000000 + 1000 * (uint64_t)i);
    }
    into->err[1]++; /* one error of the second class per collect */
    into->errors++;
    if (s->raise_at && s->collects == s->raise_after)
        raise(s->raise_at);
}

static bool synth_done(void *arg)
{
    struct synth *s = arg;
    return rb_clock_ns() - s->t0 >= s->run_ns;
}

static void synth_stop(void *arg)
{
    ((struct synth *)arg)->stops++;
}

static void synth_tick(void *arg, struct rb_harness *h, const struct rb_stats *interval, double t_s)
{
    (void)h, (void)interval, (void)t_s;
    ((struct synth *)arg)->ticks++;
}

static const char *const err_names[] = {"first", "second", NULL};
static const char *const extra_names[] = {NULL};

static struct rb_phase synth_phase(struct synth *s, const char *name)
{
    return (struct rb_phase){
        .name = name, .op = "SYNTH", .names = {err_names, extra_names}, .start = synth_start,
        .collect = synth_collect, .done = synth_done, .stop = synth_stop, .on_tick = synth_tick, .ctx = s,
    };
}

static unsigned count_lines(const char *text)
{
    unsigned n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    return n;
}

/* A run: its directory claimed with the marker, a phase's ticks every --interval, its record, the outcome. */
static void test_phase_ticks_and_record(void **state)
{
    (void)state;
    struct run R;
    run_begin(&R, "a/run", "100ms", true, "team=io");
    assert_false(R.h.mpi);
    assert_int_equal(R.h.rank, 0);
    assert_int_equal(R.h.size, 1);
    assert_string_equal(R.h.out_dir, R.out);
    char made[128];
    snprintf(made, sizeof made, "%s/a", R.tmp);
    assert_string_equal(R.h.made_dir, made); /* the shallowest directory the run created */
    /* The marker holds the run's id: "<UTC stamp>-<6 hex digits>". */
    char marker[4300];
    snprintf(marker, sizeof marker, "%s/" RB_RESULT_MARKER, R.out);
    char *m = read_text(marker);
    assert_non_null(strstr(m, R.h.run_id));
    free(m);
    size_t idlen = strlen(R.h.run_id);
    assert_true(idlen > 7 && R.h.run_id[idlen - 7] == '-');
    assert_int_equal(strspn(R.h.run_id + idlen - 6, "0123456789abcdef"), 6);

    struct synth s = {.run_ns = 450 * RB_NS_PER_MS};
    struct rb_phase p = synth_phase(&s, "load");
    assert_int_equal(rb_harness_run_phase(&R.h, &p), 0);
    assert_int_equal(s.starts, 1);
    assert_int_equal(s.stops, 1);
    assert_int_equal(s.ticks, s.collects); /* on_tick after each tick's collect */
    /* 450 ms at 100 ms: four ticks inside the phase and the last one at its end (fewer when this machine is busy). */
    assert_in_range(s.collects, 2, 5);
    assert_true(p.duration_s >= 0.45 && p.duration_s < 5);
    assert_int_equal(p.total->ops, OPS_PER_COLLECT * s.collects);
    assert_int_equal(p.total->errors, s.collects);
    assert_non_null(p.record);
    assert_string_equal(R.h.phase_now, "load");

    /* intervals.jsonl: one line per tick, its t_s rising, its counts summing to the phase's. */
    char path[4300];
    snprintf(path, sizeof path, "%s/intervals.jsonl", R.out);
    fflush(R.h.result.intervals);
    char *lines = read_text(path);
    assert_int_equal(count_lines(lines), s.collects);
    double t_prev = -1;
    uint64_t ops = 0, bytes = 0;
    for (char *line = strtok(lines, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *j = cJSON_Parse(line);
        assert_non_null(j);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "phase")), "load");
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "op")), "SYNTH");
        double t = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "t_s"));
        assert_true(t > t_prev);
        t_prev = t;
        ops += (uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "count"));
        bytes += (uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "bytes"));
        const cJSON *errs = cJSON_GetObjectItem(j, "errors");
        assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(errs, "second")), 1);
        assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(errs, "first")), 0);
        cJSON_Delete(j);
    }
    free(lines);
    assert_int_equal(ops, OPS_PER_COLLECT * s.collects);
    assert_int_equal(bytes, (uint64_t)OP_BYTES * OPS_PER_COLLECT * s.collects);
    rb_harness_phase_free(&p);
    assert_null(p.total);

    struct err_file e;
    err_begin(&e, R.tmp);
    int status = rb_harness_finish(&R.h, "| table |\n", 0);
    char *err = err_end(&e);
    assert_int_equal(status, 0);
    assert_string_equal(err, ""); /* --quiet: a completed run says nothing */
    free(err);

    cJSON *r = read_json(R.out, "result.json");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(r, "command")), "unit harness");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "labels"), "team")), "io");
    assert_null(cJSON_GetObjectItem(r, "exit_status")); /* 0: not written */
    const cJSON *mpi = cJSON_GetObjectItem(r, "mpi");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(mpi, "enabled")));
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(mpi, "size")), 1);
    const cJSON *ph = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "phases"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ph, "name")), "load");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ph, "op")), "SYNTH");
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(ph, "ranks")), 1);
    assert_int_equal((uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(ph, "count")), ops);
    assert_int_equal((uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(ph, "bytes")), bytes);
    assert_null(cJSON_GetObjectItem(ph, "interrupted"));
    cJSON_Delete(r);
    char *table = read_text((snprintf(path, sizeof path, "%s/table.md", R.out), path));
    assert_string_equal(table, "| table |\n");
    free(table);
    rb_cli_free(&R.cli);
    rm_tree(R.tmp);
}

/* The progress line: the interval's and the total's counts, latency figures, rates and errors; "-" without latency. */
static void test_progress_line(void **state)
{
    (void)state;
    struct rb_stats *in = rb_stats_new(), *total = rb_stats_new();
    in->ops = 20;
    in->bytes = 20 * RB_MIB;
    in->errors = 2;
    total->ops = 50;
    total->bytes = 50 * RB_MIB;
    total->errors = 3;
    for (int i = 0; i < 20; i++)
        rb_hist_record(&in->lat, 2 * RB_NS_PER_MS);
    char line[512];
    rb_harness_progress_line(line, sizeof line, "get", in, total, 2.0, 4.0);
    assert_non_null(strstr(line, "    4.0s | get        |       20         50 |"));
    assert_non_null(strstr(line, "10.00 MiB/s       10 op/s | 2 (3)"));
    assert_null(strstr(line, " - ")); /* every latency figure is there */
    rb_stats_reset(in);
    rb_harness_progress_line(line, sizeof line, "a-long-phase-name", in, total, 1.0, 5.0);
    assert_non_null(strstr(line, "| a-long-phase-name |        0         50 |"));
    assert_non_null(strstr(line, "|        -        -        -        -        - |")); /* nothing completed */
    rb_stats_free(in);
    rb_stats_free(total);
}

/* A failed check: exit 1, the record's exit_status, and the outcome line naming the check (even with --quiet). */
static void test_failed_check_outcome(void **state)
{
    (void)state;
    struct run R;
    run_begin(&R, "run", "50ms", true, NULL);
    struct synth s = {.run_ns = 60 * RB_NS_PER_MS};
    struct rb_phase p = synth_phase(&s, "load");
    assert_int_equal(rb_harness_run_phase(&R.h, &p), 0);
    rb_harness_phase_free(&p);
    rb_result_check(&R.h.result, "error_rate", false, "3 of 10 requests failed");
    rb_harness_kept(&R.h, "7 objects under %s", "file:///x");
    struct err_file e;
    err_begin(&e, R.tmp);
    int status = rb_harness_finish(&R.h, NULL, 0);
    char *err = err_end(&e);
    assert_int_equal(status, RB_EXIT_CHECK);
    char want[512], got[512];
    snprintf(want, sizeof want, "results: %s\n", R.out);
    assert_non_null(strstr(err, want));
    last_line(err, got, sizeof got);
    assert_string_equal(got, "outcome: completed, but a check failed: error_rate: 3 of 10 requests failed; "
                             "left behind: 7 objects under file:///x (exit 1)");
    free(err);
    cJSON *r = read_json(R.out, "result.json");
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(r, "exit_status")), RB_EXIT_CHECK);
    cJSON_Delete(r);
    rb_cli_free(&R.cli);
    rm_tree(R.tmp);
}

/* A run that fails after measuring: exit 3, a failed "completed" check with the error line, "failed: ..." last. */
static void test_runtime_failure_outcome(void **state)
{
    (void)state;
    struct run R;
    run_begin(&R, "run", "50ms", false, NULL);
    struct synth s = {.run_ns = 10 * RB_NS_PER_MS};
    struct rb_phase p = synth_phase(&s, "load");
    struct err_file e;
    err_begin(&e, R.tmp);
    assert_int_equal(rb_harness_run_phase(&R.h, &p), 0);
    rb_harness_phase_free(&p);
    /* A start that fails: the phase is exit 3 and its work is stopped without a tick. */
    struct synth s2 = {.run_ns = 10 * RB_NS_PER_MS, .fail_start = -EIO};
    struct rb_phase p2 = synth_phase(&s2, "second");
    assert_int_equal(rb_harness_run_phase(&R.h, &p2), RB_EXIT_RUNTIME);
    assert_int_equal(s2.stops, 1);
    assert_int_equal(s2.collects, 0);
    rb_harness_phase_free(&p2);
    rb_error("the target went away");
    int status = rb_harness_finish(&R.h, NULL, RB_EXIT_RUNTIME);
    char *err = err_end(&e);
    assert_int_equal(status, RB_EXIT_RUNTIME);
    char got[512];
    last_line(err, got, sizeof got);
    assert_string_equal(got, "outcome: failed: the target went away (exit 3)");
    free(err);
    cJSON *r = read_json(R.out, "result.json");
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(r, "exit_status")), RB_EXIT_RUNTIME);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r, "phases")), 2);
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "checks"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), "completed");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(c, "passed")));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "detail")), "the target went away (exit 3)");
    cJSON_Delete(r);
    rb_cli_free(&R.cli);
    rm_tree(R.tmp);
}

/* Refused at its usage check before measuring (exit 2): the directories the run made are gone; no outcome line. */
static void test_usage_refusal_leaves_nothing(void **state)
{
    (void)state;
    struct run R;
    run_begin(&R, "x/y/run", NULL, false, NULL);
    assert_int_equal(access(R.out, F_OK), 0);
    struct err_file e;
    err_begin(&e, R.tmp);
    int status = rb_harness_finish(&R.h, NULL, RB_EXIT_USAGE);
    char *err = err_end(&e);
    assert_int_equal(status, RB_EXIT_USAGE);
    assert_string_equal(err, "");
    free(err);
    char x[128];
    snprintf(x, sizeof x, "%s/x", R.tmp);
    assert_int_equal(access(x, F_OK), -1); /* the first directory it made, and all below it */
    assert_int_equal(access(R.tmp, F_OK), 0); /* what was there before stays */
    rb_cli_free(&R.cli);
    rm_tree(R.tmp);
}

/* --out naming a user's directory: refused with one line and exit 2, the directory untouched. */
static void test_foreign_out_dir_refused(void **state)
{
    (void)state;
    char tmp[64], keep[128];
    make_tmp(tmp, sizeof tmp);
    snprintf(keep, sizeof keep, "%s/notes.txt", tmp);
    FILE *f = fopen(keep, "w");
    assert_non_null(f);
    fputs("mine\n", f);
    fclose(f);
    struct rb_cli cli;
    assert_int_equal(PARSE(&cli, "--out", tmp, "--force"), 0);
    struct rb_harness h;
    struct err_file e;
    err_begin(&e, tmp);
    int status = rb_harness_init(&h, "unit harness", &cli, NULL);
    char *err = err_end(&e);
    assert_int_equal(status, RB_EXIT_USAGE);
    assert_int_equal(count_lines(err), 1);
    assert_non_null(strstr(err, "error: "));
    assert_non_null(strstr(err, tmp));
    free(err);
    char *text = read_text(keep);
    assert_string_equal(text, "mine\n");
    free(text);
    char marker[4300];
    snprintf(marker, sizeof marker, "%s/" RB_RESULT_MARKER, tmp);
    assert_int_equal(access(marker, F_OK), -1);
    rb_cli_free(&cli);
    rm_tree(tmp);
}

/* Without --out: railbench-results/<UTC stamp>-<command with dashes>, and "-2" for a second run in that second. */
static void test_default_out_dir(void **state)
{
    (void)state;
    char tmp[64], cwd[4096];
    make_tmp(tmp, sizeof tmp);
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(tmp), 0);
    char a[600], b[600], made_a[600], made_b[600];
    assert_int_equal(rb_harness_default_out_dir(a, sizeof a, "load get", made_a, sizeof made_a), 0);
    assert_int_equal(rb_harness_default_out_dir(b, sizeof b, "load get", made_b, sizeof made_b), 0);
    assert_int_equal(strncmp(a, "railbench-results/", 18), 0);
    size_t la = strlen(a);
    assert_string_equal(a + la - 9, "-load-get");
    assert_string_equal(made_a, "railbench-results"); /* the first run made the parent too */
    struct stat st;
    assert_int_equal(stat(a, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    /* The second: the same name with -2, unless the clock's second turned in between. */
    if (strncmp(a, b, la) == 0)
        assert_string_equal(b + la, "-2");
    assert_string_equal(made_b, b); /* the parent was there: only its own directory is new */
    assert_int_equal(chdir(cwd), 0);
    rm_tree(tmp);
}

static void test_first_missing(void **state)
{
    (void)state;
    char tmp[64], path[256], made[256];
    make_tmp(tmp, sizeof tmp);
    snprintf(path, sizeof path, "%s/a/b/c/", tmp);
    rb_harness_first_missing(path, made, sizeof made);
    char want[256];
    snprintf(want, sizeof want, "%s/a", tmp);
    assert_string_equal(made, want);
    rb_harness_first_missing(tmp, made, sizeof made);
    assert_string_equal(made, "");
    rm_tree(tmp);
}

/*
 * Runs child(out, errpath, arg) in a child process (the harness's signal flag is the process's) with out a run
 * directory in a new tmp and errpath its stderr; returns its exit status. It ends with exit, not _exit, so that a
 * coverage build writes the child's counts too.
 */
static int run_child(int (*child)(char *out, const char *errpath, int arg), int arg, char tmp[64], char out[128],
                     char errpath[160])
{
    make_tmp(tmp, 64);
    snprintf(out, 128, "%s/run", tmp);
    snprintf(errpath, 160, "%s/stderr", tmp);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        exit(child(out, errpath, arg));
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    return WEXITSTATUS(ws);
}

/*
 * A run a signal interrupts (in a child process: the harness's signal flag is the process's): the phase ends
 * at the next tick, result.json is written at once with the phase cut short, and the end of the run records
 * the interruption and says where it came. The child's exit status is rb_harness_finish's.
 */
static int interrupted_child(char *out, const char *errpath, int sig)
{
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
        return 100;
    struct rb_cli cli;
    if (PARSE(&cli, "--out", out, "--interval", "50ms", "--quiet") != 0)
        return 101;
    struct rb_harness h;
    if (rb_harness_init(&h, "unit harness", &cli, NULL) != 0)
        return 102;
    struct synth s = {.run_ns = 20 * RB_NS_PER_S, .raise_at = sig, .raise_after = 3};
    struct rb_phase p = synth_phase(&s, "load");
    if (rb_harness_run_phase(&h, &p) != 0 || !h.interrupted || h.signal_no != sig || s.stops != 1)
        return 103;
    if (p.duration_s > 10) /* the phase did not end at the signal */
        return 104;
    /* The record written at the signal is there before the run's end. */
    char path[4300], *buf = NULL;
    size_t len;
    snprintf(path, sizeof path, "%s/result.json", out);
    if (rb_file_read(path, 1 << 26, &buf, &len) != 0)
        return 105;
    cJSON *early = cJSON_Parse(buf);
    free(buf);
    const cJSON *ph = cJSON_GetArrayItem(cJSON_GetObjectItem(early, "phases"), 0);
    bool cut = cJSON_IsTrue(cJSON_GetObjectItem(ph, "cut_short")) && cJSON_IsTrue(cJSON_GetObjectItem(ph, "interrupted"));
    cJSON_Delete(early);
    if (!cut)
        return 105;
    rb_harness_phase_free(&p);
    bool again = rb_harness_any_signalled(&h); /* between phases the flag still stands: agreed on, noted once */
    if (!again || strncmp(h.interrupted_at, "during phase \"load\" (", 21) != 0)
        return 106;
    int status = rb_harness_finish(&h, NULL, 0);
    rb_cli_free(&cli);
    return status;
}

static void test_signal_interrupts_phase(void **state)
{
    (void)state;
    char tmp[64], out[128], errpath[160];
    /* An interruption is a failed check, "completed". */
    assert_int_equal(run_child(interrupted_child, SIGTERM, tmp, out, errpath), RB_EXIT_CHECK);

    char *err = read_text(errpath), line[1024], want[1024];
    last_line(err, line, sizeof line);
    snprintf(want, sizeof want, "; kept: the results up to then in %s (exit 1)", out);
    assert_int_equal(strncmp(line, "outcome: interrupted by SIGTERM during phase \"load\" (", 53), 0);
    assert_non_null(strstr(line, want));
    free(err);

    cJSON *r = read_json(out, "result.json");
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(r, "exit_status")), RB_EXIT_CHECK);
    const cJSON *ph = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "phases"), 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(ph, "interrupted")));
    assert_null(cJSON_GetObjectItem(ph, "cut_short")); /* the end's record is the whole phase, not the early one */
    /* Three collects before the signal's tick, the signal's tick, and the last: at least 3 x 5 operations. */
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(ph, "count")) >= 3 * OPS_PER_COLLECT);
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "checks"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), "completed");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(c, "passed")));
    cJSON_Delete(r);
    /* The early table written at the signal: the run's header and the phase's row. */
    char path[4300];
    snprintf(path, sizeof path, "%s/table.md", out);
    char *table = read_text(path);
    assert_non_null(strstr(table, "# railbench unit harness: interrupted by SIGTERM during phase \"load\""));
    assert_non_null(strstr(table, "| load | SYNTH |"));
    free(table);
    rm_tree(tmp);
}

/*
 * A signal outside a phase: one run phase and then SIGINT (after_phase), or SIGHUP before any phase; the next
 * agreement (rb_harness_any_signalled) notes it and where. The child's exit status is rb_harness_finish's.
 */
static int between_child(char *out, const char *errpath, int after_phase)
{
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
        return 100;
    struct rb_cli cli;
    struct rb_harness h;
    if (PARSE(&cli, "--out", out, "--interval", "50ms") != 0 || rb_harness_init(&h, "unit harness", &cli, NULL) != 0)
        return 101;
    if (after_phase) {
        struct synth s = {.run_ns = 20 * RB_NS_PER_MS};
        struct rb_phase p = synth_phase(&s, "first");
        if (rb_harness_run_phase(&h, &p) != 0 || h.interrupted)
            return 102;
        rb_harness_phase_free(&p);
    }
    if (rb_harness_any_signalled(&h)) /* nothing yet */
        return 103;
    raise(after_phase ? SIGINT : SIGHUP);
    if (!rb_harness_signalled() || !rb_harness_any_signalled(&h) || !h.interrupted)
        return 104;
    rb_harness_kept(&h, "%d objects", 3);
    int status = rb_harness_finish(&h, NULL, 0);
    rb_cli_free(&cli);
    return status;
}

static void test_signal_between_phases(void **state)
{
    (void)state;
    const char *wants[2] = {"outcome: interrupted by SIGHUP before its first phase; kept: the results up to then in %s, "
                            "and 3 objects (exit 1)",
                            "outcome: interrupted by SIGINT after phase \"first\"; kept: the results up to then in %s, "
                            "and 3 objects (exit 1)"};
    for (int after = 0; after < 2; after++) {
        char tmp[64], out[128], errpath[160];
        assert_int_equal(run_child(between_child, after, tmp, out, errpath), RB_EXIT_CHECK);
        char *err = read_text(errpath), line[1024], want[1024];
        last_line(err, line, sizeof line);
        snprintf(want, sizeof want, wants[after], out);
        assert_string_equal(line, want);
        free(err);
        cJSON *r = read_json(out, "result.json");
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r, "phases")), after);
        const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "checks"), 0);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), "completed");
        assert_true(cJSON_IsFalse(cJSON_GetObjectItem(c, "passed")));
        cJSON_Delete(r);
        rm_tree(tmp);
    }
}

static int refuse_two_ranks(void *ctx, int rank, int size)
{
    int *seen = ctx;
    seen[0] = rank, seen[1] = size;
    return size < 2 ? rb_cli_usage_error("needs at least 2 ranks, got %d", size) : 0;
}

/* A precheck that refuses: its status, before any result directory exists. */
static void test_precheck_refuses_first(void **state)
{
    (void)state;
    char tmp[64], out[128];
    make_tmp(tmp, sizeof tmp);
    snprintf(out, sizeof out, "%s/run", tmp);
    struct rb_cli cli;
    assert_int_equal(PARSE(&cli, "--out", out), 0);
    int seen[2] = {-1, -1};
    struct rb_harness_opts o = {.precheck = refuse_two_ranks, .ctx = seen};
    struct rb_harness h;
    struct err_file e;
    err_begin(&e, tmp);
    int status = rb_harness_init(&h, "unit harness", &cli, &o);
    char *err = err_end(&e);
    assert_int_equal(status, RB_EXIT_USAGE);
    assert_int_equal(seen[0], 0);
    assert_int_equal(seen[1], 1);
    assert_non_null(strstr(err, "needs at least 2 ranks, got 1"));
    assert_int_equal(count_lines(err), 1);
    free(err);
    assert_int_equal(access(out, F_OK), -1);
    rb_cli_free(&cli);
    rm_tree(tmp);
}

/* The harness with MPI as a singleton (in a child: MPI starts once per process): ranks, the record's mpi object. */
static int mpi_child(char *out, const char *errpath, int unused)
{
    (void)unused;
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
        return 100;
    struct rb_cli cli;
    struct rb_harness h;
    struct rb_harness_opts o = {.mpi = true};
    if (PARSE(&cli, "--out", out, "--interval", "50ms", "--quiet") != 0 || rb_harness_init(&h, "unit harness", &cli, &o) != 0)
        return 101;
    if (!h.mpi || h.rank != 0 || h.size != 1 || h.local_size != 1 || h.host_count != 1 || h.comm == MPI_COMM_NULL)
        return 102;
    struct synth s = {.run_ns = 120 * RB_NS_PER_MS};
    struct rb_phase p = synth_phase(&s, "load");
    if (rb_harness_run_phase(&h, &p) != 0 || p.total->ops != OPS_PER_COLLECT * s.collects)
        return 103;
    rb_harness_phase_free(&p);
    cJSON *mine = cJSON_CreateString("x");
    cJSON *all = rb_harness_gather_json(&h, mine);
    bool one = cJSON_GetArraySize(all) == 1 && strcmp(cJSON_GetStringValue(cJSON_GetArrayItem(all, 0)), "x") == 0;
    cJSON_Delete(mine);
    cJSON_Delete(all);
    if (!one)
        return 104;
    rb_harness_barrier(&h);
    if (rb_harness_any_signalled(&h))
        return 105;
    int status = rb_harness_finish(&h, NULL, 0);
    rb_cli_free(&cli);
#ifdef __SANITIZE_ADDRESS__
    /* Open MPI keeps allocations of its own to the end of the process, which LeakSanitizer would count at exit. */
    _exit(status);
#endif
    return status;
}

static void test_mpi_singleton(void **state)
{
    (void)state;
    char tmp[64], out[128], errpath[160];
    int status = run_child(mpi_child, 0, tmp, out, errpath);
    if (status) {
        char *err = read_text(errpath), msg[2048];
        snprintf(msg, sizeof msg, "%s", err);
        free(err);
        fail_msg("child status %d, stderr: %s", status, msg);
    }
    cJSON *r = read_json(out, "result.json");
    const cJSON *mpi = cJSON_GetObjectItem(r, "mpi");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(mpi, "enabled")));
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(mpi, "size")), 1);
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(mpi, "hosts")), 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(mpi, "thread_level")), "funneled");
    const cJSON *rph = cJSON_GetObjectItem(mpi, "ranks_per_host");
    assert_int_equal(cJSON_GetArraySize(rph), 1);
    assert_int_equal((int)cJSON_GetArrayItem(rph, 0)->valuedouble, 1);
    const cJSON *ph = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "phases"), 0);
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(ph, "ranks")), 1);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(ph, "count")) >= OPS_PER_COLLECT);
    cJSON_Delete(r);
    rm_tree(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phase_ticks_and_record),
        cmocka_unit_test(test_progress_line),
        cmocka_unit_test(test_failed_check_outcome),
        cmocka_unit_test(test_runtime_failure_outcome),
        cmocka_unit_test(test_usage_refusal_leaves_nothing),
        cmocka_unit_test(test_foreign_out_dir_refused),
        cmocka_unit_test(test_default_out_dir),
        cmocka_unit_test(test_first_missing),
        cmocka_unit_test(test_signal_interrupts_phase),
        cmocka_unit_test(test_signal_between_phases),
        cmocka_unit_test(test_precheck_refuses_first),
        cmocka_unit_test(test_mpi_singleton),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
