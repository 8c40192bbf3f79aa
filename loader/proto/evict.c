/* Emptying a caching tier with the user's own command: shell-like word splitting, fork/exec with a time limit. */
#define _GNU_SOURCE
#include "evict_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "railbench/clock.h"
#include "railbench/units.h"

#define KILL_GRACE_NS (2 * RB_NS_PER_S)

/* ---- The user's command ---- */

/* Appends one word to a NULL-terminated array. */
static int push_word(char ***words, size_t *n, const char *w, size_t len)
{
    char **grown = realloc(*words, (*n + 2) * sizeof *grown);
    if (!grown)
        return -ENOMEM;
    *words = grown;
    char *copy = strndup(w, len);
    if (!copy)
        return -ENOMEM;
    grown[(*n)++] = copy;
    grown[*n] = NULL;
    return 0;
}

int rb_evict_split(const char *cmd, char ***out, char *err, size_t errlen)
{
    *out = NULL;
    size_t n = 0, cap = strlen(cmd) + 1;
    char **words = NULL, *cur = malloc(cap);
    if (!cur)
        return -ENOMEM;
    size_t len = 0;
    bool in_word = false;
    int rc = 0;
    for (const char *p = cmd; *p && !rc; p++) {
        if (*p == ' ' || *p == '\t' || *p == '\n') {
            if (in_word)
                rc = push_word(&words, &n, cur, len);
            in_word = false;
            len = 0;
        } else if (*p == '\'') {
            const char *end = strchr(p + 1, '\'');
            if (!end) {
                snprintf(err, errlen, "unterminated ' quote");
                rc = -EINVAL;
                break;
            }
            memcpy(cur + len, p + 1, (size_t)(end - p - 1));
            len += (size_t)(end - p - 1);
            in_word = true;
            p = end;
        } else if (*p == '"') {
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
                    p++;
                cur[len++] = *p;
            }
            if (!*p) {
                snprintf(err, errlen, "unterminated \" quote");
                rc = -EINVAL;
                break;
            }
            in_word = true;
        } else if (*p == '\\') {
            if (!p[1]) {
                snprintf(err, errlen, "a backslash at the end escapes nothing");
                rc = -EINVAL;
                break;
            }
            cur[len++] = *++p;
            in_word = true;
        } else {
            cur[len++] = *p;
            in_word = true;
        }
    }
    if (!rc && in_word)
        rc = push_word(&words, &n, cur, len);
    free(cur);
    if (!rc && n == 0) {
        snprintf(err, errlen, "the command is empty");
        rc = -EINVAL;
    }
    if (rc) {
        rb_evict_words_free(words);
        return rc;
    }
    *out = words;
    return 0;
}

void rb_evict_words_free(char **words)
{
    if (!words)
        return;
    for (char **w = words; *w; w++)
        free(*w);
    free(words);
}

extern char **environ;

/* The caller's environment with env's names replaced or added; the strings are borrowed. */
static char **merged_env(char *const *env)
{
    size_t n = 0, k = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    for (char *const *e = env; e && *e; e++)
        k++;
    char **out = calloc(n + k + 1, sizeof *out);
    if (!out)
        return NULL;
    size_t o = 0;
    for (char **e = environ; e && *e; e++) {
        bool replaced = false;
        for (char *const *x = env; x && *x && !replaced; x++) {
            size_t nl = strcspn(*x, "=");
            replaced = strncmp(*e, *x, nl) == 0 && (*e)[nl] == '=';
        }
        if (!replaced)
            out[o++] = *e;
    }
    for (char *const *x = env; x && *x; x++)
        out[o++] = *x;
    return out;
}

/* Ends the process group the child leads: SIGTERM, then SIGKILL after the grace time; reaps it. */
static void end_child(pid_t pid)
{
    kill(-pid, SIGTERM);
    uint64_t until = rb_clock_ns() + KILL_GRACE_NS;
    int st;
    while (rb_clock_ns() < until) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return;
        rb_clock_sleep_ns(20 * RB_NS_PER_MS, NULL);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, &st, 0);
}

int rb_evict_run(char *const *argv, char *const *env, uint64_t timeout_ns, const volatile int *stop, char *err,
                 size_t errlen)
{
    /* Everything the child needs is prepared here: after fork it only calls async-signal-safe functions. */
    char **envp = merged_env(env);
    int pfd[2];
    if (!envp)
        return -ENOMEM;
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        int e = errno;
        free(envp);
        snprintf(err, errlen, "cannot create a pipe: %s", strerror(e));
        return -e;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(pfd[0]);
        close(pfd[1]);
        free(envp);
        snprintf(err, errlen, "cannot fork: %s", strerror(e));
        return -e;
    }
    if (pid == 0) {
        /* Its own process group, so that a timeout ends whatever it started and nothing else. */
        setpgid(0, 0);
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(SIGINT, &dfl, NULL);
        sigaction(SIGTERM, &dfl, NULL);
        sigaction(SIGPIPE, &dfl, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0 && devnull != STDIN_FILENO) {
            dup2(devnull, STDIN_FILENO);
            close(devnull);
        }
        environ = envp;
        execvp(argv[0], argv);
        int e = errno;
        ssize_t w = write(pfd[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    /* Also here: a kill before the child got to its own setpgid must still reach its group. */
    setpgid(pid, pid);
    close(pfd[1]);
    free(envp);
    int child_errno = 0;
    ssize_t r;
    do
        r = read(pfd[0], &child_errno, sizeof child_errno);
    while (r < 0 && errno == EINTR);
    close(pfd[0]);
    if (r == (ssize_t)sizeof child_errno) {
        int st;
        waitpid(pid, &st, 0);
        snprintf(err, errlen, "cannot run \"%s\": %s", argv[0], strerror(child_errno));
        return -child_errno;
    }

    const uint64_t t0 = rb_clock_ns();
    for (;;) {
        int st = 0;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
                return 0;
            if (WIFEXITED(st))
                snprintf(err, errlen, "\"%s\" exited with status %d", argv[0], WEXITSTATUS(st));
            else
                snprintf(err, errlen, "\"%s\" was ended by signal %d (%s)", argv[0], WTERMSIG(st),
                         strsignal(WTERMSIG(st)));
            return -EIO;
        }
        if (w < 0 && errno != EINTR) {
            int e = errno;
            snprintf(err, errlen, "waiting for \"%s\": %s", argv[0], strerror(e));
            return -e;
        }
        if (stop && *stop) {
            end_child(pid);
            snprintf(err, errlen, "\"%s\" was stopped: the run was interrupted", argv[0]);
            return -ECANCELED;
        }
        if (timeout_ns && rb_clock_ns() - t0 >= timeout_ns) {
            end_child(pid);
            char d[32];
            rb_format_duration_human(d, sizeof d, timeout_ns);
            snprintf(err, errlen, "\"%s\" was still running after %s (--evict-timeout) and was stopped", argv[0], d);
            return -ETIMEDOUT;
        }
        rb_clock_sleep_ns(20 * RB_NS_PER_MS, stop);
    }
}
