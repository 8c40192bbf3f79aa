/* Names resolved beneath a directory without following symbolic links: openat2 where the kernel has it, else a walk. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "railbench/beneath.h"

/* openat2: 0 not yet tried, 1 the kernel has it, -1 it has not (ENOSYS). */
static atomic_int kernel_openat2;
/* rb_beneath_use_openat2(false): the walk even where the kernel has openat2. */
static atomic_bool walk_only;

#define RESOLVE_FLAGS (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* openat2 beneath dir; -ENOSYS (and remembered) where the kernel has none. Returns a descriptor or -errno. */
static int openat2_beneath(int dir, const char *path, int flags, mode_t mode)
{
    if (atomic_load(&walk_only) || atomic_load(&kernel_openat2) < 0)
        return -ENOSYS;
    struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC | O_NOFOLLOW),
                           .mode = (flags & O_CREAT) ? mode : 0,
                           .resolve = RESOLVE_FLAGS};
    for (int tries = 0;; tries++) {
        long fd = syscall(SYS_openat2, dir, path, &how, sizeof how);
        if (fd >= 0) {
            atomic_store(&kernel_openat2, 1);
            return (int)fd;
        }
        int e = errno;
        if (e == ENOSYS) {
            atomic_store(&kernel_openat2, -1);
            return -ENOSYS;
        }
        atomic_store(&kernel_openat2, 1);
        if (e == EAGAIN && tries < 16)
            continue; /* a rename or mount raced the lookup: the kernel asks for another try */
        if (e == EXDEV)
            e = RB_BENEATH_LINK; /* the lookup would have left dir */
        return -e;
    }
}

bool rb_beneath_has_openat2(void)
{
    if (atomic_load(&walk_only))
        return false;
    if (atomic_load(&kernel_openat2) == 0) {
        int fd = openat2_beneath(AT_FDCWD, ".", O_PATH | O_DIRECTORY, 0);
        if (fd >= 0)
            close(fd);
    }
    return atomic_load(&kernel_openat2) > 0;
}

void rb_beneath_use_openat2(bool on)
{
    atomic_store(&walk_only, !on);
}

/*
 * Checks name and finds its last component: *dirlen is the length of what
 * comes before it, leaf the component itself. Returns 0, -ENOENT for a name
 * with no component, -RB_BENEATH_LINK for a leading '/' or a ".."
 * component, -ENAMETOOLONG for a component longer than NAME_MAX.
 */
static int split(const char *name, size_t *dirlen, char leaf[NAME_MAX + 1])
{
    if (name[0] == '/')
        return -RB_BENEATH_LINK;
    const char *last = NULL;
    size_t lastlen = 0;
    for (const char *p = name; *p;) {
        const char *e = strchrnul(p, '/');
        size_t n = (size_t)(e - p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return -RB_BENEATH_LINK;
        if (n > NAME_MAX)
            return -ENAMETOOLONG;
        if (n && !(n == 1 && p[0] == '.')) {
            last = p;
            lastlen = n;
        }
        p = *e ? e + 1 : e;
    }
    if (!last)
        return -ENOENT;
    *dirlen = (size_t)(last - name);
    memcpy(leaf, last, lastlen);
    leaf[lastlen] = '\0';
    return 0;
}

/* Whether leaf in dir is a symbolic link (told apart after an ENOTDIR or EEXIST that may be one). */
static bool is_link(int dir, const char *leaf)
{
    struct stat st;
    return fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

/*
 * The walk: opens the directory name[0, len) beneath root one component at
 * a time (O_PATH | O_DIRECTORY | O_NOFOLLOW), with make creating missing
 * ones. Returns a new descriptor or -errno.
 */
static int walk_dir(int root, const char *name, size_t len, bool make)
{
    int dir = openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return -errno;
    size_t i = 0;
    while (i < len) {
        size_t n = 0;
        while (i + n < len && name[i + n] != '/')
            n++;
        char c[NAME_MAX + 1];
        if (n > NAME_MAX) {
            close(dir);
            return -ENAMETOOLONG;
        }
        memcpy(c, name + i, n);
        c[n] = '\0';
        i += n + 1;
        if (!n || (n == 1 && c[0] == '.'))
            continue;
        if (n == 2 && c[0] == '.' && c[1] == '.') {
            close(dir);
            return -RB_BENEATH_LINK;
        }
        int next = openat(dir, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT && make) {
            if (mkdirat(dir, c, 0755) != 0 && errno != EEXIST) {
                int e = errno;
                close(dir);
                return -e;
            }
            next = openat(dir, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            int e = errno;
            if ((e == ENOTDIR || e == ELOOP) && is_link(dir, c))
                e = RB_BENEATH_LINK;
            close(dir);
            return -e;
        }
        close(dir);
        dir = next;
    }
    return dir;
}

/* The directory name[0, dirlen) beneath root: root itself when that is empty (not to be closed), else a new one. */
static int parent_dir(int root, const char *name, size_t dirlen, bool make)
{
    size_t k = 0;
    while (k < dirlen && (name[k] == '/' || (name[k] == '.' && (k + 1 == dirlen || name[k + 1] == '/'))))
        k++;
    if (k == dirlen)
        return root;
    char dir[PATH_MAX];
    if (dirlen >= sizeof dir)
        return -ENAMETOOLONG;
    memcpy(dir, name, dirlen);
    dir[dirlen] = '\0';
    int fd = openat2_beneath(root, dir, O_PATH | O_DIRECTORY, 0);
    if (fd >= 0 || (fd != -ENOSYS && !(make && fd == -ENOENT)))
        return fd;
    return walk_dir(root, name, dirlen, make);
}

static void put_dir(int root, int dir)
{
    if (dir >= 0 && dir != root)
        close(dir);
}

/* name checked and its directory opened (created with make): the directory (put_dir) with leaf set, or -errno. */
static int leaf_dir(int root, const char *name, bool make, char leaf[NAME_MAX + 1])
{
    size_t dirlen;
    int rc = split(name, &dirlen, leaf);
    return rc ? rc : parent_dir(root, name, dirlen, make);
}

int rb_beneath_root(const char *path)
{
    int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

/* The leaf opened in dir without following it; an EEXIST or ENOTDIR that is a link says so. */
static int open_leaf(int dir, const char *leaf, int flags, mode_t mode)
{
    int fd = openat(dir, leaf, flags | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0)
        return fd;
    int e = errno;
    if (e == ELOOP || ((e == EEXIST || e == ENOTDIR) && is_link(dir, leaf)))
        e = RB_BENEATH_LINK;
    return -e;
}

int rb_beneath_open(int root, const char *name, int flags, mode_t mode)
{
    size_t dirlen;
    char leaf[NAME_MAX + 1];
    int rc = split(name, &dirlen, leaf);
    if (rc)
        return rc;
    int fd = openat2_beneath(root, name, flags, mode);
    if (fd != -ENOSYS) {
        if (fd == -EEXIST || fd == -ENOTDIR) {
            struct stat st;
            if (rb_beneath_stat(root, name, &st) == -RB_BENEATH_LINK)
                fd = -RB_BENEATH_LINK;
        }
        return fd;
    }
    int dir = parent_dir(root, name, dirlen, false);
    if (dir < 0)
        return dir;
    fd = open_leaf(dir, leaf, flags, mode);
    put_dir(root, dir);
    return fd;
}

/* What at_leaf does to name's last component in its parent directory. */
enum leaf_op { LEAF_NONE, LEAF_MKDIR, LEAF_UNLINK, LEAF_RMDIR, LEAF_STAT, LEAF_REPLACE };

/*
 * A regular file at leaf unlinked, so that a new file takes the name: the inode (a hard link's too) is untouched.
 * Anything else there is not an object to replace: a link -RB_BENEATH_LINK, a directory -EISDIR, a FIFO, socket or
 * device -EEXIST (left as it is, never opened).
 */
static int unlink_for_replace(int dir, const char *leaf)
{
    struct stat st;
    if (fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? 0 : -errno;
    if (S_ISLNK(st.st_mode))
        return -RB_BENEATH_LINK;
    if (S_ISDIR(st.st_mode))
        return -EISDIR;
    if (!S_ISREG(st.st_mode))
        return -EEXIST;
    return unlinkat(dir, leaf, 0) == 0 || errno == ENOENT ? 0 : -errno;
}

/*
 * op on name's leaf in its parent directory (made first with LEAF_NONE, mkdir
 * -p). Returns 0 (LEAF_REPLACE: the new file's descriptor) or -errno.
 */
static int at_leaf(int root, const char *name, enum leaf_op op, int flags, mode_t mode, struct stat *st)
{
    char leaf[NAME_MAX + 1];
    int dir = leaf_dir(root, name, op == LEAF_NONE, leaf);
    if (dir < 0)
        return dir;
    int rc = 0;
    struct stat own;
    switch (op) {
    case LEAF_NONE:
        break;
    case LEAF_MKDIR:
        rc = mkdirat(dir, leaf, mode);
        break;
    case LEAF_STAT:
    case LEAF_UNLINK:
        rc = fstatat(dir, leaf, st ? st : &own, AT_SYMLINK_NOFOLLOW);
        if (!rc && S_ISLNK((st ? st : &own)->st_mode)) {
            put_dir(root, dir);
            return -RB_BENEATH_LINK;
        }
        /* unlinkat never follows the leaf: a link placed since the check is what would go, not its target */
        if (!rc && op == LEAF_UNLINK)
            rc = unlinkat(dir, leaf, 0);
        break;
    case LEAF_RMDIR:
        rc = unlinkat(dir, leaf, AT_REMOVEDIR);
        break;
    case LEAF_REPLACE:
        rc = unlink_for_replace(dir, leaf);
        rc = rc ? rc : open_leaf(dir, leaf, O_WRONLY | O_CREAT | O_EXCL | flags, mode);
        put_dir(root, dir);
        return rc;
    }
    if (rc) {
        rc = -errno;
        if (rc == -ENOTDIR && is_link(dir, leaf))
            rc = -RB_BENEATH_LINK;
    }
    put_dir(root, dir);
    return rc;
}

int rb_beneath_replace(int root, const char *name, int flags, mode_t mode)
{
    return at_leaf(root, name, LEAF_REPLACE, flags, mode, NULL);
}

int rb_beneath_mkdirs(int root, const char *name)
{
    return at_leaf(root, name, LEAF_NONE, 0, 0, NULL);
}

int rb_beneath_mkdir(int root, const char *name, mode_t mode)
{
    return at_leaf(root, name, LEAF_MKDIR, 0, mode, NULL);
}

int rb_beneath_unlink(int root, const char *name)
{
    return at_leaf(root, name, LEAF_UNLINK, 0, 0, NULL);
}

int rb_beneath_rmdir(int root, const char *name)
{
    return at_leaf(root, name, LEAF_RMDIR, 0, 0, NULL);
}

int rb_beneath_stat(int root, const char *name, struct stat *st)
{
    return at_leaf(root, name, LEAF_STAT, 0, 0, st);
}

int rb_beneath_rename(int root, const char *from, const char *to, unsigned flags)
{
    char fleaf[NAME_MAX + 1], tleaf[NAME_MAX + 1];
    int rc = 0;
    int fdir = leaf_dir(root, from, false, fleaf);
    if (fdir < 0)
        return fdir;
    int tdir = leaf_dir(root, to, false, tleaf);
    if (tdir < 0) {
        put_dir(root, fdir);
        return tdir;
    }
    if (is_link(fdir, fleaf)) {
        rc = -RB_BENEATH_LINK;
    } else if (renameat2(fdir, fleaf, tdir, tleaf, flags) != 0) {
        rc = -errno;
        if ((flags & RENAME_NOREPLACE) && (rc == -EINVAL || rc == -ENOSYS || rc == -EOPNOTSUPP)) {
            /* no RENAME_NOREPLACE here: a hard link never replaces a name, then the old name goes */
            rc = linkat(fdir, fleaf, tdir, tleaf, 0) == 0 ? 0 : -errno;
            if (!rc)
                unlinkat(fdir, fleaf, 0);
        }
    }
    put_dir(root, fdir);
    put_dir(root, tdir);
    return rc;
}

int rb_beneath_opendir(int root, const char *name, DIR **out)
{
    *out = NULL;
    size_t dirlen;
    char leaf[NAME_MAX + 1];
    int fd = split(name, &dirlen, leaf);
    if (fd == -ENOENT) {
        fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* the root itself */
        if (fd < 0)
            return -errno;
    } else if (fd == 0) {
        fd = rb_beneath_open(root, name, O_RDONLY | O_DIRECTORY, 0);
    }
    if (fd < 0)
        return fd;
    if (!(*out = fdopendir(fd))) {
        int e = errno;
        close(fd);
        return -e;
    }
    return 0;
}
