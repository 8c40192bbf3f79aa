/* Emptying a caching tier before a cold read: AIStore's evict-listrange and evict-remote-bck, or the user's command. */
#define _GNU_SOURCE
#include "railbench/evict.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "loader_int.h"
#include "railbench/clock.h"
#include "railbench/units.h"

#define REQUEST_TIMEOUT_NS (30 * RB_NS_PER_S)
#define POLL_NS (100 * RB_NS_PER_MS)
#define KILL_GRACE_NS (2 * RB_NS_PER_S)
#define BODY_LIMIT (1u << 20)

/* ---- AIStore ---- */

/*
 * AIStore's API as its docs/http_api.md and api/ package describe it:
 * multi-object evict is DELETE /v1/buckets/<bucket> with the action
 * "evict-listrange" (apc.ActEvictObjects) and a list-range value
 * ({"objnames":[...]} or {"template":"prefix{0000..0099}"}); the proxy
 * answers with the id of the job (an "xaction") it started. A job's status
 * is GET /v1/cluster?what=status with the JSON body {"id":..,"kind":..}
 * (api.GetOneXactionStatus), answered by {"kind","uuid","err","end_time",
 * "aborted"}: end_time is set once every target has finished.
 */

static uint64_t remaining(uint64_t deadline)
{
    uint64_t now = rb_clock_ns();
    return now < deadline ? deadline - now : 0;
}

/* One request to the proxy; the reply body lands in out. Returns 0 (any HTTP status) or -EIO with err. */
static int ais_call(const struct rb_target *t, const char *method, const char *path_query, const char *body,
                    uint64_t timeout_ns, struct rb_buf *out, long *status, char *err, size_t errlen)
{
    char url[RB_URL_MAX];
    if (snprintf(url, sizeof url, "%s%s", t->endpoints[0], path_query) >= (int)sizeof url) {
        snprintf(err, errlen, "%s: request URL too long", t->name);
        return -EIO;
    }
    CURL *c = curl_easy_init();
    if (!c)
        return -ENOMEM;
    struct curl_slist *hdrs = NULL;
    char ebuf[CURL_ERROR_SIZE] = "";
    int rc = rb_target_setup(t, c, RB_LOAD_GET, &hdrs);
    struct curl_slist *l = rc ? NULL : curl_slist_append(hdrs, "Content-Type: application/json");
    if (!l) {
        curl_slist_free_all(hdrs);
        curl_easy_cleanup(c);
        snprintf(err, errlen, "%s: cannot set up a request", t->name);
        return rc ? rc : -ENOMEM;
    }
    hdrs = l;
    long ms = (long)((timeout_ns < REQUEST_TIMEOUT_NS ? timeout_ns : REQUEST_TIMEOUT_NS) / RB_NS_PER_MS);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms > 0 ? ms : 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, rb_buf_curl_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    CURLcode cc = curl_easy_perform(c);
    *status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);
    if (cc != CURLE_OK) {
        snprintf(err, errlen, "%s: %s %s failed: %s", t->name, method, path_query,
                 ebuf[0] ? ebuf : curl_easy_strerror(cc));
        return -EIO;
    }
    return 0;
}

/* "HTTP 400 <AIStore's message>" for a reply that is not 200. */
static void http_error(const struct rb_target *t, const char *what, long status, const struct rb_buf *b, char *err,
                       size_t errlen)
{
    char msg[400];
    rb_target_error_message(t, b->s ? b->s : "", b->len, msg, sizeof msg);
    /* Not AIStore's JSON: a plain-text reason is shown on one line; an HTML error page is not. */
    if (!msg[0] && b->s && b->s[0] != '<')
        snprintf(msg, sizeof msg, "%.300s", b->s);
    for (char *c = msg; *c; c++)
        if (*c == '\r' || *c == '\n' || *c == '\t')
            *c = ' ';
    snprintf(err, errlen, "%s: %s: HTTP %ld%s%s", t->name, what, status, msg[0] ? " " : "", msg);
}

static bool is_ais(const struct rb_target *t, char *err, size_t errlen)
{
    if (strcmp(rb_target_scheme(t), "ais") == 0)
        return true;
    snprintf(err, errlen, "%s: eviction through the API needs an AIStore tier (ais://BUCKET)", t->name);
    return false;
}

/* The job id in a reply: the body as text, without blanks or JSON quotes. */
static void job_id(const struct rb_buf *b, char *out, size_t len)
{
    const char *s = b->s ? b->s : "";
    size_t n = b->len;
    while (n && (*s == ' ' || *s == '"' || *s == '\n' || *s == '\r' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '"' || s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == '\t'))
        n--;
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), s);
}

/* Polls the job until it ended. Returns 0, -EIO (failed or aborted), -ETIMEDOUT or -ECANCELED. */
static int wait_job(const struct rb_target *t, const char *xid, uint64_t deadline, const volatile int *stop, char *err,
                    size_t errlen)
{
    cJSON *q = cJSON_CreateObject();
    cJSON_AddStringToObject(q, "id", xid);
    cJSON_AddStringToObject(q, "kind", "evict-listrange");
    char *body = cJSON_PrintUnformatted(q);
    cJSON_Delete(q);
    if (!body)
        return -ENOMEM;
    int rc = -ETIMEDOUT;
    long last = 0;
    for (;;) {
        if (stop && *stop) {
            rc = -ECANCELED;
            snprintf(err, errlen, "%s: eviction job %s: interrupted while waiting for it", t->name, xid);
            break;
        }
        struct rb_buf b = {.limit = BODY_LIMIT};
        long status = 0;
        rc = ais_call(t, "GET", "/v1/cluster?what=status", body, remaining(deadline), &b, &status, err, errlen);
        if (rc) {
            rb_buf_free(&b);
            /* A status request cut off by the deadline means the job outlived --evict-timeout. */
            if (!remaining(deadline)) {
                rc = -ETIMEDOUT;
                snprintf(err, errlen, "%s: eviction job %s did not finish in time (last status reply: HTTP %ld)",
                         t->name, xid, last);
            }
            break;
        }
        last = status;
        if (status == 200) {
            cJSON *j = cJSON_Parse(b.s ? b.s : "");
            const cJSON *end = cJSON_GetObjectItemCaseSensitive(j, "end_time");
            const char *jerr = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "err"));
            bool aborted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "aborted"));
            bool ended = cJSON_IsNumber(end) && end->valuedouble > 0;
            if (!cJSON_IsObject(j)) {
                snprintf(err, errlen, "%s: eviction job %s: the status reply is not AIStore's JSON", t->name, xid);
                rc = -EIO;
            } else if (aborted) {
                snprintf(err, errlen, "%s: eviction job %s was aborted", t->name, xid);
                rc = -EIO;
            } else if (jerr && *jerr) {
                snprintf(err, errlen, "%s: eviction job %s failed: %.300s", t->name, xid, jerr);
                rc = -EIO;
            } else {
                rc = ended ? 0 : -EAGAIN;
            }
            cJSON_Delete(j);
        } else if (status == 404) {
            /* A job the gateways have not registered yet: ask again. */
            rc = -EAGAIN;
        } else {
            http_error(t, "eviction job status", status, &b, err, errlen);
            rc = -EIO;
        }
        rb_buf_free(&b);
        if (rc != -EAGAIN)
            break;
        if (!remaining(deadline)) {
            rc = -ETIMEDOUT;
            snprintf(err, errlen, "%s: eviction job %s did not finish in time (last status reply: HTTP %ld)", t->name,
                     xid, last);
            break;
        }
        uint64_t wait = remaining(deadline) < POLL_NS ? remaining(deadline) : POLL_NS;
        rb_clock_sleep_ns(wait, stop);
    }
    free(body);
    return rc;
}

/* Starts one evict-listrange job with value and waits for it. */
static int evict_one(const struct rb_target *t, cJSON *value, uint64_t deadline, const volatile int *stop, char *err,
                     size_t errlen)
{
    cJSON *msg = cJSON_CreateObject();
    cJSON_AddStringToObject(msg, "action", "evict-listrange");
    cJSON_AddItemToObject(msg, "value", value);
    char *body = cJSON_PrintUnformatted(msg);
    cJSON_Delete(msg);
    if (!body)
        return -ENOMEM;
    char path[700];
    snprintf(path, sizeof path, "/v1/buckets/%s?provider=%s", t->bucket, t->provider);
    struct rb_buf b = {.limit = BODY_LIMIT};
    long status = 0;
    int rc = ais_call(t, "DELETE", path, body, remaining(deadline), &b, &status, err, errlen);
    free(body);
    if (!rc && status != 200) {
        http_error(t, "evict-listrange", status, &b, err, errlen);
        rc = -EIO;
    }
    char xid[256] = "";
    if (!rc)
        job_id(&b, xid, sizeof xid);
    rb_buf_free(&b);
    /* No job id: nothing was left to evict, so nothing to wait for. */
    if (!rc && xid[0])
        rc = wait_job(t, xid, deadline, stop, err, errlen);
    return rc;
}

/* Index digits after prefix when name is prefix + digits, else -1; *width gets the number of digits. */
static int64_t index_of(const char *name, const char *prefix, size_t plen, int *width)
{
    if (strncmp(name, prefix, plen) != 0)
        return -1;
    const char *d = name + plen;
    size_t n = strlen(d);
    if (n == 0 || n > 18 || strspn(d, "0123456789") != n)
        return -1;
    *width = (int)n;
    return (int64_t)strtoull(d, NULL, 10);
}

/* True when names are prefix + first, first+1, ... with one digit count, and the prefix is a plain template prefix. */
static bool is_template(const struct rb_objset *names, const char *prefix)
{
    if (!prefix || !names->n || strpbrk(prefix, "{}"))
        return false;
    size_t plen = strlen(prefix);
    int width0 = 0, width = 0;
    int64_t first = index_of(names->names[0], prefix, plen, &width0);
    if (first < 0)
        return false;
    for (size_t i = 1; i < names->n; i++)
        if (index_of(names->names[i], prefix, plen, &width) != first + (int64_t)i || width != width0)
            return false;
    return true;
}

int rb_evict_ais_objects(const struct rb_target *t, const struct rb_objset *names, const char *prefix,
                         uint64_t timeout_ns, const volatile int *stop, char *err, size_t errlen)
{
    if (!is_ais(t, err, errlen))
        return -EINVAL;
    if (!names->n)
        return 0;
    const uint64_t deadline = rb_clock_ns() + timeout_ns;
    if (is_template(names, prefix)) {
        size_t plen = strlen(prefix);
        size_t tlen = plen + 2 * strlen(names->names[0] + plen) + 8;
        char *tmpl = malloc(tlen);
        if (!tmpl)
            return -ENOMEM;
        /* AIStore pads every index to the shorter of the two bounds' digit counts, which are equal here. */
        snprintf(tmpl, tlen, "%s{%s..%s}", prefix, names->names[0] + plen, names->names[names->n - 1] + plen);
        cJSON *value = cJSON_CreateObject();
        cJSON_AddStringToObject(value, "template", tmpl);
        free(tmpl);
        return evict_one(t, value, deadline, stop, err, errlen);
    }
    for (size_t i = 0; i < names->n; i += RB_EVICT_LIST_BATCH) {
        size_t end = i + RB_EVICT_LIST_BATCH < names->n ? i + RB_EVICT_LIST_BATCH : names->n;
        cJSON *value = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(value, "objnames");
        for (size_t k = i; k < end; k++)
            cJSON_AddItemToArray(list, cJSON_CreateString(names->names[k]));
        int rc = evict_one(t, value, deadline, stop, err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

int rb_evict_ais_bucket(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen)
{
    if (!is_ais(t, err, errlen))
        return -EINVAL;
    char path[700];
    snprintf(path, sizeof path, "/v1/buckets/%s?provider=%s&keep_bck_md=true", t->bucket, t->provider);
    struct rb_buf b = {.limit = BODY_LIMIT};
    long status = 0;
    int rc = ais_call(t, "DELETE", path, "{\"action\":\"evict-remote-bck\"}", timeout_ns, &b, &status, err, errlen);
    if (!rc && status != 200) {
        http_error(t, "evict-remote-bck", status, &b, err, errlen);
        rc = -EIO;
    }
    rb_buf_free(&b);
    return rc;
}

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
