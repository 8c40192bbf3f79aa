/* Whole files: read one into memory, write one atomically, make a directory path. */
#define _XOPEN_SOURCE 700
#include "railbench/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rb_file_read(const char *path, size_t max_bytes, char **data, size_t *len)
{
    size_t n = 0, cap = 8192;
    int rc = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            close(fd);
            return -EISDIR;
        }
        /* A regular file's size is the first guess (one read, no regrowth); pipes and /proc grow by doubling. */
        if (st.st_size > 0 && (uint64_t)st.st_size <= max_bytes)
            cap = (size_t)st.st_size + 4096;
    }
    char *buf = malloc(cap + 1);
    if (!buf) {
        rc = -ENOMEM;
        goto fail;
    }
    for (;;) {
        if (cap - n < 4096) {
            cap *= 2;
            char *b = realloc(buf, cap + 1);
            if (!b) {
                rc = -ENOMEM;
                goto fail;
            }
            buf = b;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            goto fail;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n > max_bytes) {
            rc = -EFBIG;
            goto fail;
        }
    }
    close(fd);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
fail:
    close(fd);
    free(buf);
    return rc;
}

/* Writes all of data to fd. 0 or -errno. */
static int write_all(int fd, const char *p, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, p + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        off += (size_t)w;
    }
    return 0;
}

/* Creates a new temporary file beside path, never one that exists (O_EXCL); its name in tmp. fd or -errno. */
static int create_tmp(const char *path, char *tmp, size_t cap)
{
    static unsigned counter;
    for (int tries = 0; tries < 100; tries++) {
        unsigned k = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
        if (snprintf(tmp, cap, "%s.tmp.%ld.%u", path, (long)getpid(), k) >= (int)cap)
            return -ENAMETOOLONG;
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST)
            return fd >= 0 ? fd : -errno;
    }
    return -EEXIST;
}

int rb_file_write_atomic(const char *path, const void *data, size_t len)
{
    char tmp[4200], *real = NULL;
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
        /* A device, FIFO or socket (-o /dev/null): written into, never replaced. */
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        int rc = write_all(fd, data, len);
        if (close(fd) != 0 && rc == 0)
            rc = -errno;
        return rc;
    }
    /* An existing file is replaced where it is: through a link, the file it names, and the link stays. */
    if (exists && (real = realpath(path, NULL)) != NULL)
        path = real;
    int rc, fd = create_tmp(path, tmp, sizeof tmp);
    if (fd < 0) {
        free(real);
        return fd;
    }
    rc = write_all(fd, data, len);
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0)
        unlink(tmp);
    free(real);
    return rc;
}

int rb_file_mkdir_p(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return -ENAMETOOLONG;
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

static int clear_at(int dirfd);

/* Removes the entry name of dirfd (a directory with all it holds) without following a link; a missing one is 0. */
static int remove_at(int dirfd, const char *name)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISDIR(st.st_mode))
        return unlinkat(dirfd, name, 0) == 0 || errno == ENOENT ? 0 : -errno;
    /* O_NOFOLLOW: a directory swapped for a link since fstatat is not entered (ELOOP/ENOTDIR). */
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = clear_at(fd);
    close(fd);
    if (rc == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        rc = -errno;
    return rc;
}

static int clear_at(int dirfd)
{
    int fd = dup(dirfd);
    if (fd < 0)
        return -errno;
    DIR *d = fdopendir(fd);
    if (!d) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    rewinddir(d); /* the dup shares its position with dirfd */
    int rc = 0;
    struct dirent *e;
    errno = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            rc = remove_at(dirfd, e->d_name);
        errno = 0;
    }
    if (rc == 0 && errno)
        rc = -errno;
    closedir(d);
    return rc;
}

int rb_file_clear_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = clear_at(fd);
    close(fd);
    return rc;
}
