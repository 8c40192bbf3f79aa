/*
 * libFuzzer target: arbitrary names given to the beneath resolver (railbench/beneath.h), every operation, on openat2
 * and on the walk, inside a scratch tree holding symbolic links to a sentinel directory outside it. Aborts when
 * anything outside the root is created, changed or removed, or a descriptor it returns names a file outside.
 *
 *   BASE/sentinel/file        outside the root: must keep its bytes, mtime and company
 *   BASE/root/f               a file
 *   BASE/root/a/b/            directories
 *   BASE/root/trap            -> BASE/sentinel        (absolute link to the outside)
 *   BASE/root/a/up            -> ../../sentinel       (relative link to the outside)
 *   BASE/root/a/file          -> BASE/sentinel/file   (link to the file outside)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "railbench/beneath.h"
#include "railbench/file.h"

static char base[64], root_path[96], sentinel[96], sentinel_file[128];
static struct stat sentinel_st;
static int root = -1;

static void must(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_names: %s\n", what);
        abort();
    }
}

/* (Re)builds the root's fixture in an emptied root. */
static void fixture(void)
{
    char p[256];
    must(rb_file_clear_dir(root_path) == 0, "clear the root");
    snprintf(p, sizeof p, "%s/f", root_path);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
    must(fd >= 0 && write(fd, "f", 1) == 1 && close(fd) == 0, "make f");
    snprintf(p, sizeof p, "%s/a", root_path);
    must(mkdir(p, 0755) == 0, "mkdir a");
    snprintf(p, sizeof p, "%s/a/b", root_path);
    must(mkdir(p, 0755) == 0, "mkdir a/b");
    snprintf(p, sizeof p, "%s/trap", root_path);
    must(symlink(sentinel, p) == 0, "link trap");
    snprintf(p, sizeof p, "%s/a/up", root_path);
    must(symlink("../../sentinel", p) == 0, "link a/up");
    snprintf(p, sizeof p, "%s/a/file", root_path);
    must(symlink(sentinel_file, p) == 0, "link a/file");
}

/* The scratch tree goes when the fuzzer ends (a crash leaves it for a look). */
static void remove_base(void)
{
    if (rb_file_clear_dir(base) == 0)
        rmdir(base);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(base, sizeof base, "/tmp/rb-fuzz-names.XXXXXX");
    must(mkdtemp(base) != NULL, "mkdtemp");
    snprintf(root_path, sizeof root_path, "%s/root", base);
    snprintf(sentinel, sizeof sentinel, "%s/sentinel", base);
    snprintf(sentinel_file, sizeof sentinel_file, "%s/file", sentinel);
    must(mkdir(root_path, 0755) == 0 && mkdir(sentinel, 0755) == 0, "mkdir root, sentinel");
    int fd = open(sentinel_file, O_WRONLY | O_CREAT | O_EXCL, 0644);
    must(fd >= 0 && write(fd, "sentinel", 8) == 8 && close(fd) == 0, "make the sentinel file");
    must(stat(sentinel_file, &sentinel_st) == 0, "stat the sentinel file");
    root = rb_beneath_root(root_path);
    must(root >= 0, "open the root");
    atexit(remove_base);
    fixture();
    return 0;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    must(d != NULL, "opendir");
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* Nothing outside the root changed: the sentinel directory holds its one file as it was; BASE holds root, sentinel. */
static void outside_untouched(void)
{
    struct stat st;
    must(lstat(sentinel_file, &st) == 0 && S_ISREG(st.st_mode), "the sentinel file is gone");
    must(st.st_ino == sentinel_st.st_ino && st.st_size == sentinel_st.st_size &&
             st.st_mtim.tv_sec == sentinel_st.st_mtim.tv_sec && st.st_mtim.tv_nsec == sentinel_st.st_mtim.tv_nsec &&
             st.st_nlink == 1,
         "the sentinel file changed");
    must(entries(sentinel) == 1, "something appeared in the sentinel directory");
    must(entries(base) == 2, "something appeared beside the root");
}

/* A descriptor the resolver returned names something beneath the root. */
static void beneath(int fd)
{
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    must(n > 0, "readlink of a returned descriptor");
    target[n] = '\0';
    size_t rl = strlen(root_path);
    must(strncmp(target, root_path, rl) == 0 && (target[rl] == '/' || target[rl] == '\0'),
         "a descriptor names a file outside the root");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 600)
        return 0;
    unsigned op = data[0] % 10;
    rb_beneath_use_openat2(data[0] & 0x80);
    /* the name, and after its first NUL a second one (rename's destination) */
    char name[512] = "", to[512] = "";
    size_t n = size - 1 < sizeof name - 1 ? size - 1 : sizeof name - 1;
    memcpy(name, data + 1, n);
    name[n] = '\0';
    size_t k = strlen(name);
    if (k + 1 < n)
        snprintf(to, sizeof to, "%s", name + k + 1);
    int fd = -1, rc = 0;
    struct stat st;
    DIR *d = NULL;
    switch (op) {
    case 0:
        fd = rb_beneath_open(root, name, O_RDONLY, 0);
        break;
    case 1:
        fd = rb_beneath_open(root, name, O_WRONLY | O_CREAT | O_EXCL, 0644);
        break;
    case 2:
        fd = rb_beneath_open(root, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        break;
    case 3:
        fd = rb_beneath_replace(root, name, 0, 0644);
        break;
    case 4:
        rc = rb_beneath_mkdirs(root, name);
        break;
    case 5:
        rc = rb_beneath_mkdir(root, name, 0755);
        break;
    case 6:
        rc = rb_beneath_unlink(root, name);
        break;
    case 7:
        rc = rb_beneath_rmdir(root, name);
        break;
    case 8:
        rc = rb_beneath_stat(root, name, &st);
        must(rc != 0 || !S_ISLNK(st.st_mode), "stat returned a link");
        break;
    default:
        rc = to[0] ? rb_beneath_rename(root, name, to, data[0] & 0x40 ? RENAME_NOREPLACE : 0)
                   : rb_beneath_opendir(root, name, &d);
        break;
    }
    must(rc <= 0, "a call returned a positive status");
    if (fd >= 0) {
        beneath(fd);
        if (op != 0)
            must(write(fd, "x", 1) == 1, "write to a created file");
        close(fd);
    }
    if (d) {
        beneath(dirfd(d));
        closedir(d);
    }
    outside_untouched();
    if (op != 0 && op != 8)
        fixture();
    return 0;
}
