/* Data the user owns: a run's own prefix, and the lookup that keeps a run from overwriting names that exist. */
#define _GNU_SOURCE
#include "safety_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "../engine/fwatch_int.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "railbench/units.h"

#define HEAD_SLOTS 16 /* HEADs in flight per rank while looking names up */

/*
 * How far a lookup may go and how far it got: it stops when the run's time
 * limit has passed or a signal came (the run cannot write names it has not
 * checked), and past its first second rank 0 says how far it is, once a second.
 */
struct lookup {
    uint64_t start_ns, until_ns; /* until_ns 0: no time limit */
    uint64_t checked, names;     /* this rank's names looked up, of names */
    uint64_t line_ns;            /* when the next progress line is due */
    bool talk;                   /* rank 0, not --quiet */
    bool ranks;                  /* more than one rank: the line counts rank 0's share */
    int ended;                   /* LOOKUP_TIME or LOOKUP_SIGNAL once it stopped early */
    bool given_up;               /* a call on the file system did not return: its thread was left (the watchdog said) */
    struct rb_fwatch *watch;     /* a file system's look-ups: the call in progress, for the watchdog (or NULL) */
    bool to_end;                 /* not stopped by a signal: the probe of what a run wrote after its phase */
};
enum { LOOKUP_TIME = 1, LOOKUP_SIGNAL };

/* Whether the lookup may go on (false once the time limit passed or a signal came); prints the progress line. */
static bool lookup_on(struct lookup *k)
{
    if (k->ended)
        return false;
    if (!k->to_end && rb_harness_signalled()) {
        k->ended = LOOKUP_SIGNAL;
        return false;
    }
    uint64_t now = rb_clock_ns();
    if (k->until_ns && now >= k->until_ns) {
        k->ended = LOOKUP_TIME;
        return false;
    }
    if (k->talk && now >= k->line_ns) {
        fprintf(stderr, "%7.1fs | %-10s | %" PRIu64 " of %" PRIu64 " names checked%s (%.1f %%)\n",
                (double)(now - k->start_ns) / 1e9, "lookup", k->checked, k->names, k->ranks ? " on rank 0" : "",
                k->names ? 100.0 * (double)k->checked / (double)k->names : 100.0);
        fflush(stderr);
        k->line_ns = now + RB_NS_PER_S;
    }
    return true;
}

void rb_safety_run_prefix(const struct rb_harness *h, char *buf, size_t len)
{
    snprintf(buf, len, "rb-%s-", h->run_id);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names of a listed set as a sorted array of pointers into it (*out malloc'd; NULL when empty). */
static int sorted_names(const struct rb_objset *s, const char ***out)
{
    *out = NULL;
    if (!s || !s->n)
        return 0;
    const char **v = malloc(s->n * sizeof *v);
    if (!v)
        return -ENOMEM;
    for (uint64_t i = 0; i < s->n; i++)
        v[i] = rb_objset_name(s, i, NULL);
    qsort(v, s->n, sizeof *v, cmp_str);
    *out = v;
    return 0;
}

static bool in_sorted(const char **v, uint64_t n, const char *name)
{
    return n && bsearch(&name, v, n, sizeof *v, cmp_str) != NULL;
}

int rb_safety_without(const struct rb_objset *names, const struct rb_objset *existing, struct rb_objset *out)
{
    memset(out, 0, sizeof *out);
    const char **v;
    if (sorted_names(existing, &v))
        return -ENOMEM;
    const uint64_t nv = existing ? existing->n : 0;
    char buf[RB_OBJSET_NAME_BYTES];
    int rc = 0;
    for (uint64_t i = 0; i < names->n && !rc; i++) {
        const char *name = rb_objset_name(names, i, buf);
        if (!in_sorted(v, nv, name))
            rc = rb_objset_add(out, name, rb_objset_size(names, i));
    }
    free(v);
    if (rc)
        rb_objset_free(out);
    return rc;
}

/* The longest prefix every name of s shares ("" for an empty set). */
static void common_prefix(const struct rb_objset *s, char *out, size_t len)
{
    out[0] = '\0';
    if (!s->n)
        return;
    if (rb_objset_generated(s) && s->n > 1) {
        snprintf(out, len, "%s", s->prefix);
        return;
    }
    char buf[RB_OBJSET_NAME_BYTES];
    snprintf(out, len, "%s", rb_objset_name(s, 0, buf));
    for (uint64_t i = 1; i < s->n && out[0]; i++) {
        const char *name = rb_objset_name(s, i, buf);
        size_t k = 0;
        while (out[k] && out[k] == name[k])
            k++;
        out[k] = '\0';
    }
}

/* Every rank's common prefix, then theirs: what one listing must cover. Rank 0 gets it. Collective. */
static void job_prefix(struct rb_harness *h, const struct rb_objset *mine, char *out, size_t len)
{
    common_prefix(mine, out, len);
    if (!h->mpi || h->size == 1)
        return;
    cJSON *me = mine->n ? cJSON_CreateString(out) : NULL;
    cJSON *all = rb_harness_gather_json(h, me);
    cJSON_Delete(me);
    if (h->rank == 0) {
        bool first = true;
        const cJSON *it;
        cJSON_ArrayForEach(it, all)
        {
            const char *p = cJSON_GetStringValue(it);
            if (!p)
                continue;
            if (first) {
                snprintf(out, len, "%s", p);
                first = false;
                continue;
            }
            size_t k = 0;
            while (out[k] && out[k] == p[k])
                k++;
            out[k] = '\0';
        }
    }
    cJSON_Delete(all);
}

/* Rank 0's listing on every rank, as "name\0name\0..." (*blob malloc'd, *blen bytes). Collective. */
static int share_listing(struct rb_harness *h, const struct rb_objset *listed, char **blob, uint64_t *blen)
{
    *blob = NULL;
    *blen = 0;
    if (h->rank == 0) {
        for (uint64_t i = 0; i < listed->n; i++)
            *blen += strlen(rb_objset_name(listed, i, NULL)) + 1;
    }
    if (h->mpi && h->size > 1)
        RB_MPI_CHECK(MPI_Bcast(blen, 1, MPI_UINT64_T, 0, h->comm));
    if (!*blen)
        return 0;
    *blob = malloc(*blen);
    if (!*blob)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory for a listing of %" PRIu64 " bytes", *blen);
    if (h->rank == 0) {
        size_t off = 0;
        for (uint64_t i = 0; i < listed->n; i++) {
            const char *n = rb_objset_name(listed, i, NULL);
            size_t l = strlen(n) + 1;
            memcpy(*blob + off, n, l);
            off += l;
        }
    }
    if (h->mpi && h->size > 1)
        for (uint64_t off = 0; off < *blen; off += 1u << 30) {
            uint64_t n = *blen - off < (1u << 30) ? *blen - off : (1u << 30);
            RB_MPI_CHECK(MPI_Bcast(*blob + off, (int)n, MPI_CHAR, 0, h->comm));
        }
    return 0;
}

/* mine's names found in the listing blob go to *existing; *first gets the index of the first. */
static int match_listing(const char *blob, uint64_t blen, const struct rb_objset *mine, struct rb_objset *existing,
                         uint64_t *first, struct lookup *lk)
{
    uint64_t n = 0;
    for (uint64_t off = 0; off < blen; off += strlen(blob + off) + 1)
        n++;
    const char **v = n ? malloc(n * sizeof *v) : NULL;
    if (n && !v)
        return -ENOMEM;
    uint64_t k = 0;
    for (uint64_t off = 0; off < blen; off += strlen(blob + off) + 1)
        v[k++] = blob + off;
    if (n) /* an empty listing: no array (qsort's first argument must not be NULL) */
        qsort(v, n, sizeof *v, cmp_str);
    char buf[RB_OBJSET_NAME_BYTES];
    int rc = 0;
    for (uint64_t i = 0; i < mine->n && !rc && lookup_on(lk); i++, lk->checked++) {
        const char *name = rb_objset_name(mine, i, buf);
        if (!in_sorted(v, n, name))
            continue;
        if (*first == UINT64_MAX)
            *first = i;
        rc = rb_objset_add(existing, name, 0);
    }
    free(v);
    return rc;
}

struct head_slot {
    CURL *easy;
    struct curl_slist *hdrs;
    uint64_t idx;
    bool busy;
    bool get; /* the server does not do HEAD (405, 501): a GET of the first byte asks the same */
};

static size_t discard(char *p, size_t size, size_t n, void *arg)
{
    (void)p;
    (void)arg;
    return size * n;
}

/* One HEAD (or one-byte GET, s->get) of mine's object i on slot s, added to m. */
static int head_start(const struct rb_target *t, CURLM *m, struct head_slot *s, size_t ep, const struct rb_objset *mine,
                      uint64_t i, uint64_t timeout_ns)
{
    char buf[RB_OBJSET_NAME_BYTES], url[RB_URL_MAX];
    if (rb_target_object_url(t, ep, rb_objset_name(mine, i, buf), url, sizeof url))
        return -ENAMETOOLONG;
    if (curl_easy_setopt(s->easy, CURLOPT_URL, url) != CURLE_OK ||
        curl_easy_setopt(s->easy, CURLOPT_NOBODY, s->get ? 0L : 1L) != CURLE_OK ||
        (s->get && curl_easy_setopt(s->easy, CURLOPT_HTTPGET, 1L) != CURLE_OK) ||
        curl_easy_setopt(s->easy, CURLOPT_RANGE, s->get ? "0-0" : NULL) != CURLE_OK ||
        curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, discard) != CURLE_OK ||
        curl_easy_setopt(s->easy, CURLOPT_TIMEOUT_MS, (long)(timeout_ns / 1000000)) != CURLE_OK ||
        curl_easy_setopt(s->easy, CURLOPT_PRIVATE, (char *)s) != CURLE_OK ||
        curl_multi_add_handle(m, s->easy) != CURLM_OK)
        return -EIO;
    s->idx = i;
    s->busy = true;
    return 0;
}

/*
 * HEADs every name of mine (HEAD_SLOTS at a time); 2xx: it exists (into
 * *existing, *first the lowest index), 404/410: it does not. Anything else is
 * -EIO with one line in err: the run cannot tell, so it does not write; with
 * unknown, such a name goes there instead and the others are still asked.
 */
static int head_all(const struct rb_target *t, const struct rb_objset *mine, uint64_t timeout_ns,
                    struct rb_objset *existing, uint64_t *first, struct lookup *lk, char *err, size_t errlen,
                    struct rb_objset *unknown)
{
    struct head_slot slots[HEAD_SLOTS] = {{0}};
    CURLM *m = curl_multi_init();
    int rc = m ? 0 : -ENOMEM;
    for (size_t s = 0; s < HEAD_SLOTS && !rc; s++) {
        slots[s].easy = curl_easy_init();
        if (!slots[s].easy || rb_target_setup(t, slots[s].easy, RB_LOAD_HEAD, &slots[s].hdrs) ||
            curl_easy_setopt(slots[s].easy, CURLOPT_HTTPHEADER, slots[s].hdrs) != CURLE_OK)
            rc = -ENOMEM;
    }
    uint64_t next = 0;
    int active = 0;
    char buf[RB_OBJSET_NAME_BYTES];
    while (!rc && (next < mine->n || active) && lookup_on(lk)) {
        for (size_t s = 0; s < HEAD_SLOTS && next < mine->n && !rc; s++)
            if (!slots[s].busy && !(rc = head_start(t, m, &slots[s], s, mine, next, timeout_ns))) {
                next++;
                active++;
            }
        int running;
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int queued;
        while (!rc && (msg = curl_multi_info_read(m, &queued))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            struct head_slot *s;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            long code = 0;
            curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
            const char *name = rb_objset_name(mine, s->idx, buf);
            curl_multi_remove_handle(m, s->easy);
            s->busy = false;
            if (msg->data.result == CURLE_OK && !s->get && (code == 405 || code == 501)) {
                s->get = true; /* the same name again as a GET of its first byte, and so the slot's later ones */
                if ((rc = head_start(t, m, s, (size_t)(s - slots), mine, s->idx, timeout_ns)))
                    snprintf(err, errlen, "%s: cannot look %s up", rb_target_name(t), name);
                continue;
            }
            active--;
            lk->checked++;
            const bool answered = msg->data.result == CURLE_OK && ((code >= 200 && code < 300) ||
                                                                  (s->get && code == 416) || code == 404 || code == 410);
            if (unknown && !answered)
                rc = rb_objset_add(unknown, name, 0);
            else if (msg->data.result != CURLE_OK)
                rc = -EIO, snprintf(err, errlen, "%s: HEAD %s to see whether it exists: %s", rb_target_name(t), name,
                                    curl_easy_strerror(msg->data.result));
            else if ((code >= 200 && code < 300) || (s->get && code == 416)) { /* 416: an empty object */
                if (*first == UINT64_MAX || s->idx < *first)
                    *first = s->idx;
                rc = rb_objset_add(existing, name, 0);
            } else if (code != 404 && code != 410)
                rc = -EIO, snprintf(err, errlen, "%s: HEAD %s to see whether it exists: HTTP %ld (expected 200 or "
                                    "404)", rb_target_name(t), name, code);
        }
        if (!rc && active)
            curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    for (size_t s = 0; s < HEAD_SLOTS; s++) {
        if (slots[s].busy)
            curl_multi_remove_handle(m, slots[s].easy);
        if (slots[s].easy)
            curl_easy_cleanup(slots[s].easy);
        curl_slist_free_all(slots[s].hdrs);
    }
    curl_multi_cleanup(m);
    if (rc == -ENOMEM)
        snprintf(err, errlen, "out of memory while looking names up");
    return rc;
}

/* This rank's names that exist, asked of the target itself (a file system: one stat each, no request). */
static int exists_all(const struct rb_target *t, const struct rb_objset *mine, struct rb_objset *existing,
                      uint64_t *first, struct lookup *lk, char *err, size_t errlen)
{
    char buf[RB_OBJSET_NAME_BYTES];
    for (uint64_t i = 0; i < mine->n && lookup_on(lk); i++, lk->checked++) {
        const char *name = rb_objset_name(mine, i, buf);
        bool yes = false;
        if (lk->watch) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/%s", rb_target_file_root(t), name);
            rb_fwatch_enter(lk->watch, "stat", path);
        }
        int rc = t->ops->exists(t, name, &yes, err, errlen);
        rb_fwatch_leave(lk->watch);
        if (!rc && yes) {
            if (*first == UINT64_MAX)
                *first = i;
            rc = rb_objset_add(existing, name, 0);
            if (rc)
                snprintf(err, errlen, "out of memory while looking names up");
        }
        if (rc)
            return rc;
    }
    return 0;
}

/*
 * The index of mine whose name is "<dir part of the prefix>/entry", or UINT64_MAX: entry must be the prefix's
 * last part, then digits that format back to exactly that name (width, base and stride of this rank's share).
 */
static uint64_t generated_index(const struct rb_objset *mine, const char *base, size_t blen, const char *entry)
{
    if (strncmp(entry, base, blen) != 0 || !entry[blen])
        return UINT64_MAX;
    uint64_t idx = 0;
    for (const char *c = entry + blen; *c; c++) {
        if (*c < '0' || *c > '9' || idx > (UINT64_MAX - 9) / 10)
            return UINT64_MAX;
        idx = idx * 10 + (uint64_t)(*c - '0');
    }
    if (idx < mine->base || (idx - mine->base) % mine->stride)
        return UINT64_MAX;
    uint64_t i = (idx - mine->base) / mine->stride;
    char buf[RB_OBJSET_NAME_BYTES];
    const char *name = i < mine->n ? rb_objset_name(mine, i, buf) : NULL;
    return name && strcmp(name + (mine->prefix_len - blen), entry) == 0 ? i : UINT64_MAX;
}

/*
 * A generated set on a file system: its names all lie in one directory (the prefix's), so that directory is
 * read once, in O(its entries) rather than one stat per name: an entry that is one of mine's names exists
 * (whatever it is, as with lstat), and a directory that is not there holds none. Returns 0, -errno with one
 * line in err, or 1 when this cannot answer (a listed set, a directory that cannot be read): look each name up.
 */
static int dir_all(const struct rb_target *t, const struct rb_objset *mine, struct rb_objset *existing,
                   uint64_t *first, struct lookup *lk, char *err, size_t errlen)
{
    if (!rb_objset_generated(mine) || !mine->n || !rb_target_can(t, RB_TCAP_FILES) || !mine->stride)
        return 1;
    const char *slash = strrchr(mine->prefix, '/');
    const char *base = slash ? slash + 1 : mine->prefix;
    char dir[PATH_MAX];
    int k = snprintf(dir, sizeof dir, "%s/%.*s", rb_target_file_root(t), slash ? (int)(slash - mine->prefix) : 0,
                     mine->prefix);
    if (k < 0 || (size_t)k >= sizeof dir)
        return 1;
    rb_fwatch_enter(lk->watch, "open", dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    rb_fwatch_leave(lk->watch);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? 0 : 1; /* not there: none of the names is */
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return 1;
    }
    int rc = 0;
    uint64_t lowest = UINT64_MAX, entries = 0;
    while (!rc && (entries++ % 4096 || lookup_on(lk))) {
        errno = 0;
        rb_fwatch_enter(lk->watch, "readdir", dir);
        struct dirent *e = readdir(d);
        rb_fwatch_leave(lk->watch);
        if (!e) {
            if (errno) {
                rc = -errno;
                snprintf(err, errlen, "%s: cannot read %.900s to see which names exist: %s", rb_target_name(t), dir,
                         strerror(errno));
            }
            break;
        }
        uint64_t i = generated_index(mine, base, strlen(base), e->d_name);
        if (i == UINT64_MAX)
            continue;
        char buf[RB_OBJSET_NAME_BYTES];
        if ((rc = rb_objset_add(existing, rb_objset_name(mine, i, buf), 0)))
            snprintf(err, errlen, "out of memory while looking names up");
        lowest = i < lowest ? i : lowest;
    }
    closedir(d);
    if (!lk->ended)
        lk->checked = mine->n; /* every name answered by one read of the directory */
    if (lowest != UINT64_MAX && (*first == UINT64_MAX || lowest < *first))
        *first = lowest;
    return rc;
}

/* A file system's look-ups on a thread of their own: what it was given and what it found. */
struct fs_job {
    const struct rb_target *t;
    const struct rb_objset *mine;
    struct lookup lk;
    struct rb_objset found;
    uint64_t first;
    int rc;
    char err[1400];
};

static void *fs_job_main(void *arg)
{
    struct fs_job *q = arg;
    q->rc = dir_all(q->t, q->mine, &q->found, &q->first, &q->lk, q->err, sizeof q->err);
    if (q->rc == 1)
        q->rc = exists_all(q->t, q->mine, &q->found, &q->first, &q->lk, q->err, sizeof q->err);
    return NULL;
}

/*
 * dir_all, else exists_all, on a thread the file watchdog watches (--timeout per call), while this one waits: a
 * file system that stops answering leaves that thread in the kernel, and this one ends the run (the watchdog's
 * line, or after a signal a call older than a second given up). Its job stays allocated then: the thread may
 * still come back to it. Returns 0 or -errno (err: one line, or "" when the watchdog said it).
 */
static int fs_lookup(const struct rb_target *t, const struct rb_objset *mine, uint64_t timeout_ns, struct lookup *lk,
                     struct rb_objset *found, uint64_t *first, char *err, size_t errlen)
{
    struct fs_job *q = calloc(1, sizeof *q);
    if (!q || rb_fwatch_start(timeout_ns)) {
        free(q);
        snprintf(err, errlen, "cannot start the look-up of which names exist");
        return -ENOMEM;
    }
    *q = (struct fs_job){.t = t, .mine = mine, .lk = *lk, .first = UINT64_MAX};
    q->lk.watch = rb_fwatch_claim();
    pthread_t th;
    if (pthread_create(&th, NULL, fs_job_main, q) != 0) {
        fs_job_main(q); /* no thread to spare: here, unwatched */
        th = pthread_self();
    }
    if (!pthread_equal(th, pthread_self()) && !rb_fwatch_join(th, q->lk.watch)) {
        lk->checked = q->lk.checked;
        lk->ended = rb_harness_signalled() ? LOOKUP_SIGNAL : 0;
        lk->given_up = !lk->ended;
        err[0] = '\0';
        return -ETIMEDOUT;
    }
    rb_fwatch_release(q->lk.watch);
    q->lk.watch = NULL;
    *lk = q->lk;
    *found = q->found;
    *first = q->first;
    snprintf(err, errlen, "%s", q->err);
    int rc = q->rc;
    free(q);
    return rc;
}

/* Whether t's kind lists a bucket (one LIST answers for every name) rather than answering HEAD per name. */
static bool lists(const struct rb_target *t)
{
    return rb_target_can(t, RB_TCAP_LISTS);
}

/* The line of a lookup that stopped early: how far it got, and why the run writes nothing. */
static void cut_short(struct rb_harness *h, const struct lookup *lk, const char *command, const char *option,
                      uint64_t limit_ns, char *err, size_t errlen)
{
    char why[64] = "a signal came";
    if (lk->ended == LOOKUP_TIME) {
        char lim[32];
        rb_format_duration_human(lim, sizeof lim, limit_ns);
        snprintf(why, sizeof why, "--duration %s passed", lim);
    }
    snprintf(err, errlen, "%s %s: %s while looking up which names exist, after %" PRIu64 " of %" PRIu64 " names%s "
             "(%.1f s): a run writes no name it has not checked, so it wrote nothing", command, option, why,
             lk->checked, lk->names, h->size > 1 ? " of this rank" : "", (double)(rb_clock_ns() - lk->start_ns) / 1e9);
}

int rb_safety_check(struct rb_harness *h, const struct rb_target *t, const struct rb_objset *mine,
                    uint64_t timeout_ns, enum rb_engine_kind engine, uint64_t limit_ns, bool overwrite, const char *command, const char *option,
                    struct rb_objset *existing)
{
    struct rb_objset found = {0};
    uint64_t first = UINT64_MAX;
    char err[1400] = "";
    int bad = 0;
    struct lookup lk = {.start_ns = rb_clock_ns(), .names = mine->n, .talk = h->rank == 0 && rb_log_get_level() >= RB_LOG_INFO,
                        .ranks = h->size > 1};
    lk.until_ns = limit_ns ? lk.start_ns + limit_ns : 0;
    lk.line_ns = lk.start_ns + RB_NS_PER_S;
    if (lists(t)) {
        char prefix[RB_OBJSET_NAME_BYTES];
        job_prefix(h, mine, prefix, sizeof prefix);
        struct rb_objset listed = {0};
        if (h->rank == 0 && rb_engine_list(engine, t, prefix, timeout_ns, &listed, err, sizeof err))
            bad = 1;
        if (h->mpi && h->size > 1)
            RB_MPI_CHECK(MPI_Bcast(&bad, 1, MPI_INT, 0, h->comm));
        if (!bad) {
            char *blob;
            uint64_t blen;
            share_listing(h, &listed, &blob, &blen);
            bad = match_listing(blob, blen, mine, &found, &first, &lk) != 0;
            if (bad)
                snprintf(err, sizeof err, "out of memory while looking names up");
            free(blob);
        }
        rb_objset_free(&listed);
    } else if (t->ops->exists) {
        bad = fs_lookup(t, mine, timeout_ns, &lk, &found, &first, err, sizeof err) != 0;
    } else {
        bad = head_all(t, mine, timeout_ns, &found, &first, &lk, err, sizeof err, NULL) != 0;
    }
    if ((bad = bad || lk.ended) && !err[0] && !lk.given_up)
        cut_short(h, &lk, command, option, limit_ns, err, sizeof err);
    /* The job's outcome: any rank that could not tell, how many exist, and the first of them (rank 0). */
    int any_bad = bad;
    uint64_t n = found.n, total = n, names = mine->n, all_names = names;
    if (h->mpi && h->size > 1) {
        RB_MPI_CHECK(MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, h->comm));
        RB_MPI_CHECK(MPI_Allreduce(&n, &total, 1, MPI_UINT64_T, MPI_SUM, h->comm));
        RB_MPI_CHECK(MPI_Allreduce(&names, &all_names, 1, MPI_UINT64_T, MPI_SUM, h->comm));
    }
    if (any_bad) {
        if (bad && err[0])
            rb_error("%s", err);
        rb_harness_any_signalled(h); /* a signal that stopped the lookup: the record says interrupted */
        rb_objset_free(&found);
        return RB_EXIT_RUNTIME;
    }
    char buf[RB_OBJSET_NAME_BYTES];
    cJSON *me = first != UINT64_MAX ? cJSON_CreateString(rb_objset_name(mine, first, buf)) : NULL;
    cJSON *firsts = total ? rb_harness_gather_json(h, me) : NULL;
    cJSON_Delete(me);
    const char *name = cJSON_GetStringValue(cJSON_GetArrayItem(firsts, 0));
    int status = 0;
    /* What else the user can do: train on what is there, or let the run write under its own prefix. */
    const char *instead = strcmp(option, "--populate") == 0 ? "leave out --populate to read what is there"
                          : strcmp(command, "load tiers") == 0
                              ? "add --fresh (names of this run's own, deleted at the end) or --existing (read "
                                "them, write nothing)"
                              : "leave it out (the run then writes under its own prefix and deletes what it wrote)";
    if (h->rank == 0 && total && !overwrite)
        rb_error("%s %s: %s holds \"%s\" already (%" PRIu64 " of the %" PRIu64 " names this run would write exist); a "
                 "run never overwrites what it did not create: choose other names, %s, or add --overwrite to replace "
                 "them", command, option, rb_target_name(t), name ? name : "?", total, all_names, instead);
    else if (h->rank == 0 && total)
        rb_warn("--overwrite: %" PRIu64 " of the %" PRIu64 " names exist in %s (first \"%s\"): this run replaces "
                "them and never deletes them", total, all_names, rb_target_name(t), name ? name : "?");
    cJSON_Delete(firsts);
    if (total && !overwrite)
        status = RB_EXIT_USAGE;
    if (existing && !status)
        *existing = found;
    else
        rb_objset_free(&found);
    return status;
}

int rb_safety_probe(const struct rb_target *t, const struct rb_objset *names, uint64_t timeout_ns,
                    struct rb_objset *left, struct rb_objset *unknown)
{
    if (!names->n)
        return 0;
    uint64_t first = UINT64_MAX;
    char err[600] = "", nb[RB_OBJSET_NAME_BYTES];
    int rc = 0;
    if (!t->ops->exists)
        rc = head_all(t, names, timeout_ns, left, &first, &(struct lookup){.to_end = true, .names = names->n}, err,
                      sizeof err, unknown);
    for (uint64_t i = 0; t->ops->exists && i < names->n && !rc; i++) {
        /* A file system answers locally (stat): there, there not, or it cannot tell (gone: ENOTCONN). */
        const char *name = rb_objset_name(names, i, nb);
        bool yes = false;
        if (t->ops->exists(t, name, &yes, err, sizeof err))
            rc = rb_objset_add(unknown, name, 0);
        else if (yes)
            rc = rb_objset_add(left, name, 0);
    }
    if (rc == -ENOMEM)
        rb_warn("out of memory while looking up the puts whose outcome is unknown");
    return rc;
}

void rb_safety_json(cJSON *summary, const char *run_prefix)
{
    if (run_prefix)
        cJSON_AddStringToObject(summary, "run_prefix", run_prefix);
    else
        cJSON_AddNullToObject(summary, "run_prefix");
}
