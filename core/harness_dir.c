/* The result directory of a run: its id, the default name, claiming it (--force), removing what a refused run made. */
#define _GNU_SOURCE
#include "railbench/harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "railbench/clock.h"
#include "railbench/file.h"
#include "railbench/log.h"
#include "railbench/result.h"

#include "harness_int.h"

/* Rank 0: this run's id, the start time and 24 random bits (two runs in one second still differ). */
void rb_harness_make_run_id(char *buf, size_t len)
{
    char stamp[32];
    rb_clock_stamp(stamp, sizeof stamp, rb_clock_wall_ns());
    uint32_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (uint32_t)(rb_clock_ns() ^ (uint64_t)getpid() << 16);
    snprintf(buf, len, "%s-%06x", stamp, (unsigned)(r & 0xffffff));
}

/* The shallowest directory of path (itself included) that does not exist yet into made; "" when path exists. */
void rb_harness_first_missing(const char *path, char *made, size_t len)
{
    made[0] = '\0';
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (;;) {
        if (access(p, F_OK) != 0)
            snprintf(made, len, "%s", p);
        else
            return;
        char *slash = strrchr(p, '/');
        while (slash && slash > p && slash[1] == '\0') /* "a/b/" */
            *slash = '\0', slash = strrchr(p, '/');
        if (!slash || slash == p)
            return;
        *slash = '\0';
    }
}

/*
 * Rank 0: railbench-results/<UTC time>-<command>, made here with mkdir so
 * that two runs started in the same second (even at once) get two
 * directories: the later one adds -2, -3, ... Returns 0 or -errno.
 */
int rb_harness_default_out_dir(char *buf, size_t len, const char *command, char *made, size_t made_len)
{
    char stamp[32], base[600];
    rb_clock_stamp(stamp, sizeof stamp, rb_clock_wall_ns());
    int n = snprintf(base, sizeof base, "railbench-results/%s-", stamp);
    for (const char *c = command; *c && (size_t)n + 1 < sizeof base; c++)
        base[n++] = (*c == ' ') ? '-' : *c;
    base[n] = '\0';
    rb_harness_first_missing("railbench-results", made, made_len);
    int rc = rb_file_mkdir_p("railbench-results");
    for (unsigned i = 1; !rc; i++) {
        snprintf(buf, len, i == 1 ? "%s" : "%s-%u", base, i);
        if (mkdir(buf, 0777) == 0) {
            if (!made[0])
                snprintf(made, made_len, "%s", buf);
            return 0;
        }
        rc = errno == EEXIST && i < 10000 ? 0 : -errno;
    }
    return rc;
}

/*
 * Rank 0, for a run refused at its usage check (exit 2, nothing measured):
 * removes what it wrote (intervals.jsonl, the marker) and the directories it made, so
 * it leaves nothing behind.
 */
void rb_harness_unmake_out_dir(const struct rb_harness *h)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/intervals.jsonl", h->out_dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/" RB_RESULT_MARKER, h->out_dir);
    unlink(p);
    if (!h->made_dir[0])
        return;
    snprintf(p, sizeof p, "%s", h->out_dir);
    size_t top = strlen(h->made_dir);
    for (;;) {
        if (rmdir(p) != 0 || strlen(p) <= top)
            return;
        char *slash = strrchr(p, '/');
        if (!slash)
            return;
        *slash = '\0';
    }
}


/*
 * Rank 0: the result directory is railbench's own (core/result_dir.c). A
 * file, a user's directory or an earlier result without --force is a usage
 * error (exit 2, one line); a failure to make it or empty it, exit 3.
 */
int rb_harness_claim_out_dir(const char *dir, bool force, const char *run_id)
{
    char msg[5000];
    int rc = rb_result_dir_claim(dir, force, run_id, msg, sizeof msg);
    if (rc == -ENOTDIR || rc == -EEXIST || rc == -ENOTEMPTY)
        return rb_cli_usage_error("%s", msg);
    if (rc) {
        rb_error("%s", msg);
        return RB_EXIT_RUNTIME;
    }
    return 0;
}
