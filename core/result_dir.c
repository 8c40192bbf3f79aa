/* A result directory is railbench's own: the names it writes there, its marker, claiming one (--out, --force). */
#define _XOPEN_SOURCE 700
#include "railbench/result.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "railbench/file.h"

/*
 * The files railbench writes directly in a result directory: the marker,
 * the record (core/result.c), --prom-textfile's file when it names the
 * result directory (core/prom.c), and the report the documented
 * `railbench report DIR -o DIR/report.md --html DIR/report.html` writes
 * beside it (scripts/demo.sh), and the provenance record of load train and load
 * checkpoint (core/provenance.c). block's per-rank files are under points/.
 */
static const char *const own_files[] = {
    RB_RESULT_MARKER, "result.json", "intervals.jsonl", "table.md", "railbench.prom", "report.md", "report.html",
    "provenance.json",
};
/* What makes a directory without the marker (one an older railbench wrote) a result. */
static const char *const record_files[] = {"result.json", "intervals.jsonl", "table.md"};

/* name is base, or base followed by rb_file_write_atomic's ".tmp.<pid>.<n>" (a run that died while writing it). */
static bool is_name_or_tmp(const char *name, const char *base, size_t blen)
{
    if (strncmp(name, base, blen) != 0)
        return false;
    const char *p = name + blen;
    if (!*p)
        return true;
    if (strncmp(p, ".tmp.", 5) != 0)
        return false;
    p += 5;
    size_t d1 = strspn(p, "0123456789");
    if (!d1 || p[d1] != '.')
        return false;
    p += d1 + 1;
    size_t d2 = strspn(p, "0123456789");
    return d2 && !p[d2];
}

bool rb_result_dir_own_file(const char *name)
{
    for (size_t i = 0; i < sizeof own_files / sizeof own_files[0]; i++)
        if (is_name_or_tmp(name, own_files[i], strlen(own_files[i])))
            return true;
    return false;
}

/* block's point files in points/<rank>/: <point>.fio, <point>.json, <point>.log (or one being written). */
static bool is_point_file(const char *name)
{
    static const char *const ext[] = {".fio", ".json", ".log"};
    for (size_t i = 0; i < 3; i++) {
        const char *x = strstr(name, ext[i]);
        while (x) {
            if (x > name && is_name_or_tmp(x, ext[i], strlen(ext[i])))
                return true;
            x = strstr(x + 1, ext[i]);
        }
    }
    return false;
}

/* Whether the entry n of a directory at depth (0 the result directory, 1 points/, 2 points/<rank>/) is railbench's. */
static bool own_entry(const char *n, const struct stat *st, int depth)
{
    if (depth == 0)
        return S_ISDIR(st->st_mode) ? !strcmp(n, "points") : S_ISREG(st->st_mode) && rb_result_dir_own_file(n);
    if (depth == 1)
        return S_ISDIR(st->st_mode) && n[strspn(n, "0123456789")] == '\0';
    return S_ISREG(st->st_mode) && is_point_file(n);
}

struct walk {
    bool remove;             /* remove railbench's entries (else only look) */
    char foreign[600];       /* the first entry that is not railbench's, its path below the result directory */
    bool marker;             /* the marker is there */
    size_t record;           /* 1 + the index of the first of record_files there; 0: none */
    size_t entries;          /* entries directly in the result directory */
};

/*
 * Walks the directory fd at depth (rel: its path below the result directory)
 * without following a link: entries are looked at with fstatat and
 * directories entered with openat(O_NOFOLLOW). Notes what it finds into w;
 * with w->remove, unlinks railbench's entries (and only those) on the way
 * back. A foreign entry is never entered nor removed.
 * Returns 0 or -errno.
 */
static int walk(int fd, int depth, const char *rel, struct walk *w)
{
    int dfd = dup(fd);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        int rc = -errno;
        if (dfd >= 0)
            close(dfd);
        return rc;
    }
    rewinddir(d); /* the dup shares its position with fd: a second walk starts at the end otherwise */
    int rc = 0;
    struct dirent *e;
    while (!rc && (errno = 0, e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        struct stat st;
        if (!strcmp(n, ".") || !strcmp(n, ".."))
            continue;
        w->entries += depth == 0;
        if (fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = errno == ENOENT ? 0 : -errno;
            continue;
        }
        if (!own_entry(n, &st, depth)) {
            if (!w->foreign[0])
                snprintf(w->foreign, sizeof w->foreign, "%s%s%s%s", rel, *rel ? "/" : "", n,
                         S_ISLNK(st.st_mode) ? " (a symbolic link)" : "");
            continue;
        }
        w->marker |= depth == 0 && !strcmp(n, RB_RESULT_MARKER);
        for (size_t i = 0; depth == 0 && i < sizeof record_files / sizeof record_files[0]; i++)
            if (!strcmp(n, record_files[i]) && (!w->record || i + 1 < w->record))
                w->record = i + 1;
        if (S_ISDIR(st.st_mode)) {
            int sub = openat(fd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) {
                rc = -errno;
                continue;
            }
            char path[512];
            snprintf(path, sizeof path, "%s%s%s", rel, *rel ? "/" : "", n);
            rc = walk(sub, depth + 1, path, w);
            close(sub);
            /* A directory that still holds something (a foreign entry) stays: ENOTEMPTY is not a failure. */
            if (!rc && w->remove && unlinkat(fd, n, AT_REMOVEDIR) != 0 && errno != ENOTEMPTY && errno != EEXIST)
                rc = -errno;
        } else if (w->remove && unlinkat(fd, n, 0) != 0 && errno != ENOENT) {
            rc = -errno;
        }
    }
    if (!rc && errno)
        rc = -errno;
    closedir(d);
    return rc;
}

/* Says which part of dir is there but not a directory (stat follows links: a link to a directory is one). */
static int not_a_directory(const char *dir, char *msg, size_t len)
{
    char full[4096], p[4096];
    if (!*dir) {
        snprintf(msg, len, "--out \"\": give a directory for the results");
        return -ENOTDIR;
    }
    snprintf(full, sizeof full, "%s", dir);
    for (size_t n = strlen(full); n > 1 && full[n - 1] == '/';)
        full[--n] = '\0';
    snprintf(p, sizeof p, "%s", full);
    for (char *s = p + 1;; s++) {
        if (*s && *s != '/')
            continue;
        char c = *s;
        *s = '\0';
        struct stat st;
        if (stat(p, &st) == 0 && !S_ISDIR(st.st_mode)) {
            if (!c)
                snprintf(msg, len, "--out %s: not a directory; give a directory for the results", dir);
            else
                snprintf(msg, len, "--out %s: %s is not a directory; give a directory for the results", dir, p);
            return -ENOTDIR;
        }
        if (!c)
            return 0;
        *s = c;
    }
}

int rb_result_dir_claim(const char *dir, bool force, const char *run_id, char *msg, size_t len)
{
    msg[0] = '\0';
    int rc = not_a_directory(dir, msg, len);
    if (rc)
        return rc;
    if ((rc = rb_file_mkdir_p(dir)) != 0) {
        snprintf(msg, len, "cannot create result directory %s: %s", dir, strerror(-rc));
        return rc;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        snprintf(msg, len, "--out %s: %s", dir, strerror(errno));
        return rc;
    }
    struct walk w = {.remove = false};
    rc = walk(fd, 0, "", &w);
    if (rc)
        snprintf(msg, len, "--out %s: cannot read it: %s", dir, strerror(-rc));
    else if (w.entries && !w.marker && (w.foreign[0] || !w.record)) {
        /* Neither empty nor a result (with the marker, or all railbench's and a record): the user's directory. */
        snprintf(msg, len, "--out %s: not empty and not a railbench result (it holds %s); give a new or empty "
                 "directory", dir, w.foreign[0] ? w.foreign : "no result.json or intervals.jsonl");
        rc = -ENOTEMPTY;
    } else if (w.entries && !force) {
        snprintf(msg, len, "--out %s: holds an earlier result (%s); give a new directory, or add --force to empty "
                 "it first", dir, w.record ? record_files[w.record - 1] : RB_RESULT_MARKER);
        rc = -EEXIST;
    } else if (w.entries && w.foreign[0]) {
        snprintf(msg, len, "--out %s: --force removes only what railbench writes, and %s is not that; move it "
                 "away or give another --out", dir, w.foreign);
        rc = -ENOTEMPTY;
    } else if (w.entries) {
        struct walk rm = {.remove = true};
        if ((rc = walk(fd, 0, "", &rm)) != 0)
            snprintf(msg, len, "--force: cannot empty %s: %s", dir, strerror(-rc));
        else if (rm.foreign[0]) {
            snprintf(msg, len, "--out %s: %s appeared while --force emptied it; it stays, and so does the "
                     "directory", dir, rm.foreign);
            rc = -ENOTEMPTY;
        }
    }
    if (!rc) {
        /* The marker comes first: from here on the directory is a result's. */
        int m = openat(fd, RB_RESULT_MARKER, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        char line[160];
        int n = snprintf(line, sizeof line, "%s\n", run_id);
        ssize_t wrote = m < 0 ? -1 : write(m, line, (size_t)n);
        if (wrote != n)
            rc = wrote < 0 ? -errno : -EIO;
        if (m >= 0 && close(m) != 0 && !rc)
            rc = -errno;
        if (rc)
            snprintf(msg, len, "cannot write %s/%s: %s", dir, RB_RESULT_MARKER, strerror(-rc));
    }
    close(fd);
    return rc;
}
