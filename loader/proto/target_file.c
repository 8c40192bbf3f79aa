/* file:// target: objects are files under a directory (file:///path or a plain absolute path); listing walks the tree. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "railbench/beneath.h"
#include "target_int.h"

/* Directories deeper than this under the root are not listed (a loop of bind mounts must end). */
#define LIST_MAX_DEPTH 64

/* A target's state: its directory's path, and the directory held open (rb_target_file_dir), -errno until it is. */
struct file {
    char base_path[1024];
    atomic_int root_fd;
};

static struct file *file_of(const struct rb_target *t)
{
    return (struct file *)t->priv;
}

static int file_parse(struct rb_target *t, const char *rest, const struct rb_target_cfg *cfg, const void *opts,
                      char *err, size_t errlen)
{
    (void)opts;
    struct file *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    t->priv = f;
    atomic_init(&f->root_fd, -EBADF);
    if (cfg->endpoints.n) {
        snprintf(err, errlen, "--endpoint: a file:// target is a directory on this host and has no endpoints");
        return -EINVAL;
    }
    if (rest[0] != '/') {
        snprintf(err, errlen, "target \"%.200s\": expected file:///ABSOLUTE/PATH or /ABSOLUTE/PATH", cfg->url);
        return -EINVAL;
    }
    size_t n = strlen(rest);
    if (n >= sizeof f->base_path) {
        snprintf(err, errlen, "target \"%.200s...\": a path of at most %zu bytes", cfg->url, sizeof f->base_path - 1);
        return -ENAMETOOLONG;
    }
    memcpy(f->base_path, rest, n + 1);
    while (n > 1 && f->base_path[n - 1] == '/')
        f->base_path[--n] = '\0';
    snprintf(t->name, sizeof t->name, "file://%s", f->base_path);
    return 0; /* the root is opened by the probe, a call the file watchdog bounds (rb_target_file_dir) */
}

static void file_close(struct rb_target *t)
{
    struct file *f = file_of(t);
    if (f && atomic_load(&f->root_fd) >= 0)
        close(atomic_load(&f->root_fd));
    free(f);
}

static int file_object_url(const struct rb_target *t, size_t ep, const char *name, char *buf, size_t len)
{
    (void)ep;
    int n = snprintf(buf, len, "file://%s/%s", file_of(t)->base_path, name);
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The root must be a directory this process can search and read: anything else ends the run before it starts. */
static int file_probe(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen)
{
    (void)timeout_ns;
    const char *root = file_of(t)->base_path;
    struct stat st;
    if (stat(root, &st) != 0) {
        int e = errno;
        snprintf(err, errlen, "%s: %s%s", t->name, strerror(e),
                 e == ENOENT ? " (the directory must exist; create it first)" : "");
        return -e;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a directory (a file target names the directory its files are in)", t->name);
        return -ENOTDIR;
    }
    if (access(root, R_OK | X_OK) != 0) {
        int e = errno;
        snprintf(err, errlen, "%s: %s (the directory must be readable and searchable)", t->name, strerror(e));
        return -e;
    }
    /* The root is resolved once, as the user gave it (links in it are theirs); names beneath it never follow one. */
    int fd = rb_target_file_dir(t);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", t->name, strerror(-fd));
        return fd;
    }
    return 0;
}

/* Appends the regular files under dir (rel: its path below the root, "" at the root) whose names start with prefix. */
static int walk(int fd, const char *rel, const char *prefix, size_t plen, int depth, struct rb_objset *out,
                char *err, size_t errlen, const char *root)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -errno;
    }
    int rc = 0;
    struct dirent *e;
    char name[RB_OBJSET_NAME_BYTES + 256];
    while (!rc && (errno = 0, e = readdir(d))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        int k = snprintf(name, sizeof name, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        if (k < 0 || (size_t)k > RB_OBJSET_NAME_MAX) {
            snprintf(err, errlen, "file://%s: listing: a path under it is longer than %d bytes", root,
                     RB_OBJSET_NAME_MAX);
            rc = -ENAMETOOLONG;
            break;
        }
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* gone since readdir: not ours to list */
        if (S_ISDIR(st.st_mode)) {
            /* A directory can hold matching files when its path is a prefix of the prefix, or the prefix of it. */
            size_t nl = (size_t)k;
            if (plen && strncmp(name, prefix, nl < plen ? nl : plen) != 0)
                continue;
            if (depth >= LIST_MAX_DEPTH)
                continue;
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0)
                continue;
            rc = walk(sub, name, prefix, plen, depth + 1, out, err, errlen, root);
        } else if (S_ISREG(st.st_mode) && (!plen || strncmp(name, prefix, plen) == 0)) {
            rc = rb_objset_add(out, name, (uint64_t)st.st_size);
        }
    }
    if (!rc && errno)
        rc = -errno;
    closedir(d);
    return rc;
}

/* Lists the regular files under the root (recursively), each with its size, as "dir/.../file" names. */
static int file_list(const struct rb_target *t, const char *prefix, struct rb_objset *out, char *err, size_t errlen)
{
    int root = rb_target_file_dir(t);
    int fd = root < 0 ? root : openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int e = fd == -1 ? errno : -fd;
        snprintf(err, errlen, "%s: listing: %s", t->name, strerror(e));
        return -e;
    }
    int rc = walk(fd, "", prefix ? prefix : "", prefix ? strlen(prefix) : 0, 0, out, err, errlen, file_of(t)->base_path);
    if (rc && !err[0])
        snprintf(err, errlen, "%s: listing: %s", t->name, strerror(-rc));
    return rc;
}

/* A name exists when anything is there (a file, a directory, a link): a put must not take its place. */
static int file_exists(const struct rb_target *t, const char *name, bool *yes, char *err, size_t errlen)
{
    int root = rb_target_file_dir(t);
    struct stat st;
    int rc = root < 0 ? root : rb_beneath_stat(root, name, &st);
    if (rc == 0 || rc == -RB_BENEATH_LINK) {
        *yes = true; /* a link at the name (or a name leading outside) is never written through */
        return 0;
    }
    if (rc == -ENOENT || rc == -ENOTDIR) {
        *yes = false;
        return 0;
    }
    snprintf(err, errlen, "%s: cannot tell whether %s exists: %s", t->name, name, strerror(-rc));
    return rc;
}

RB_PROTO(file, 50) = {
    .scheme = "file",
    .form = "file:///PATH",
    .caps = RB_TCAP_FILES,
    .parse = file_parse,
    .close = file_close,
    .object_url = file_object_url,
    .probe = file_probe,
    .list = file_list,
    .exists = file_exists,
};

const char *rb_target_file_root(const struct rb_target *t)
{
    return rb_target_can(t, RB_TCAP_FILES) ? file_of(t)->base_path : "";
}

int rb_target_file_dir(const struct rb_target *t)
{
    if (!rb_target_can(t, RB_TCAP_FILES))
        return -ENOTDIR;
    struct file *f = file_of(t); /* the descriptor is set once, atomically: the target stays shared */
    int fd = atomic_load(&f->root_fd);
    if (fd >= 0)
        return fd;
    int mine = rb_beneath_root(f->base_path);
    if (mine < 0)
        return mine;
    if (!atomic_compare_exchange_strong(&f->root_fd, &fd, mine))
        close(mine); /* another thread's came first */
    return atomic_load(&f->root_fd);
}
