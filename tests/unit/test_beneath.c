/* Unit tests of names resolved beneath a root: links (to files, to directories), "..", hard links; openat2 and the walk. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "railbench/beneath.h"
#include "railbench/file.h"

/*
 * base/out/victim     a file outside the root, which nothing may touch
 * base/root/f         "file f"
 * base/root/sub/g     "file g"
 * base/root/lnk       -> base/out/victim
 * base/root/dlnk      -> base/out (a directory)
 * base/root/hl        a hard link to base/out/victim
 */
static char base[64];
static int root = -1;
static struct stat victim_before;

static const char *at(const char *name)
{
    static char path[4][160];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", base, name);
    return path[k];
}

static void put(const char *name, const char *text)
{
    int fd = open(at(name), O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* The whole of the file at fd (from its start) as a string in buf. */
static const char *text_of(int fd, char *buf, size_t len)
{
    ssize_t n = pread(fd, buf, len - 1, 0);
    assert_true(n >= 0);
    buf[n] = '\0';
    return buf;
}

static int setup(void **state)
{
    const bool *openat2 = *state;
    rb_beneath_use_openat2(*openat2);
    static const char template[] = "/tmp/rb-test-beneath.XXXXXX";
    memcpy(base, template, sizeof template);
    if (!mkdtemp(base))
        return -1;
    if (mkdir(at("out"), 0755) || mkdir(at("root"), 0755) || mkdir(at("root/sub"), 0755))
        return -1;
    put("out/victim", "victim");
    put("root/f", "file f");
    put("root/sub/g", "file g");
    if (symlink(at("out/victim"), at("root/lnk")) || symlink(at("out"), at("root/dlnk")) ||
        link(at("out/victim"), at("root/hl")))
        return -1;
    if (stat(at("out/victim"), &victim_before))
        return -1;
    root = rb_beneath_root(at("root"));
    return root >= 0 ? 0 : -1;
}

/* The file outside is as it was: its bytes, its inode's times; and nothing new appeared beside it. */
static void outside_untouched(void)
{
    int fd = open(at("out/victim"), O_RDONLY);
    assert_true(fd >= 0);
    char buf[64];
    assert_string_equal(text_of(fd, buf, sizeof buf), "victim");
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    close(fd);
    assert_int_equal(st.st_ino, victim_before.st_ino);
    assert_int_equal(st.st_size, victim_before.st_size);
    assert_int_equal(st.st_mtim.tv_sec, victim_before.st_mtim.tv_sec);
    assert_int_equal(st.st_mtim.tv_nsec, victim_before.st_mtim.tv_nsec);
    DIR *d = opendir(at("out"));
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    assert_int_equal(n, 1);
}

static int teardown(void **state)
{
    (void)state;
    outside_untouched();
    close(root);
    rb_beneath_use_openat2(true);
    assert_int_equal(rb_file_clear_dir(base), 0);
    return rmdir(base);
}

static void test_mode(void **state)
{
    const bool *openat2 = *state;
    if (!*openat2)
        assert_false(rb_beneath_has_openat2());
}

static void test_open_read(void **state)
{
    (void)state;
    char buf[64];
    int fd = rb_beneath_open(root, "f", O_RDONLY, 0);
    assert_true(fd >= 0);
    assert_string_equal(text_of(fd, buf, sizeof buf), "file f");
    close(fd);
    fd = rb_beneath_open(root, "./sub//g", O_RDONLY, 0);
    assert_true(fd >= 0);
    assert_string_equal(text_of(fd, buf, sizeof buf), "file g");
    close(fd);
    /* a hard link is a file of the tree: reading it is reading (writing it is not: test_replace) */
    fd = rb_beneath_open(root, "hl", O_RDONLY, 0);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(rb_beneath_open(root, "lnk", O_RDONLY, 0), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_open(root, "dlnk/victim", O_RDONLY, 0), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_open(root, "../out/victim", O_RDONLY, 0), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_open(root, "sub/../f", O_RDONLY, 0), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_open(root, "sub/..", O_RDONLY, 0), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_open(root, "/etc/passwd", O_RDONLY, 0), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_open(root, "missing", O_RDONLY, 0), -ENOENT);
    assert_int_equal(rb_beneath_open(root, "f/x", O_RDONLY, 0), -ENOTDIR);
    assert_int_equal(rb_beneath_open(root, "", O_RDONLY, 0), -ENOENT);
    char big[300];
    memset(big, 'n', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(rb_beneath_open(root, big, O_RDONLY, 0), -ENAMETOOLONG);
}

static void test_open_create(void **state)
{
    (void)state;
    int fd = rb_beneath_open(root, "sub/new", O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    close(fd);
    struct stat st;
    assert_int_equal(stat(at("root/sub/new"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(rb_beneath_open(root, "sub/new", O_WRONLY | O_CREAT | O_EXCL, 0644), -EEXIST);
    /* a link at the name: refused as a link, not as "exists", and never followed (with or without O_EXCL) */
    assert_int_equal(rb_beneath_open(root, "lnk", O_WRONLY | O_CREAT | O_EXCL, 0644), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_open(root, "lnk", O_WRONLY | O_TRUNC, 0), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_open(root, "lnk", O_WRONLY | O_CREAT | O_TRUNC, 0644), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_open(root, "dlnk/new", O_WRONLY | O_CREAT | O_EXCL, 0644), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_open(root, "../out/new", O_WRONLY | O_CREAT | O_EXCL, 0644), -RB_BENEATH_LINK);
}

static void test_replace(void **state)
{
    (void)state;
    char buf[64];
    /* the hard link's name gets a new file; the inode it shared with the file outside keeps its bytes */
    int fd = rb_beneath_replace(root, "hl", 0, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "new", 3), 3);
    close(fd);
    fd = open(at("root/hl"), O_RDONLY);
    assert_string_equal(text_of(fd, buf, sizeof buf), "new");
    close(fd);
    struct stat st;
    assert_int_equal(stat(at("out/victim"), &st), 0);
    assert_int_equal(st.st_nlink, 1);
    int old = open(at("root/f"), O_RDONLY);
    fd = rb_beneath_replace(root, "f", 0, 0644);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(stat(at("root/f"), &st), 0);
    assert_int_equal(st.st_size, 0); /* a new, empty file */
    assert_string_equal(text_of(old, buf, sizeof buf), "file f"); /* the old inode, never truncated */
    close(old);
    fd = rb_beneath_replace(root, "fresh", 0, 0644);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(rb_beneath_replace(root, "lnk", 0, 0644), -RB_BENEATH_LINK);
    assert_int_equal(lstat(at("root/lnk"), &st), 0);
    assert_true(S_ISLNK(st.st_mode)); /* the link stays: it is the user's */
    assert_int_equal(rb_beneath_replace(root, "dlnk/victim", 0, 0644), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_replace(root, "sub", 0, 0644), -EISDIR);
}

static void test_dirs(void **state)
{
    (void)state;
    struct stat st;
    assert_int_equal(rb_beneath_mkdirs(root, "a/b/c/file"), 0);
    assert_int_equal(stat(at("root/a/b/c"), &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(stat(at("root/a/b/c/file"), &st), -1);
    assert_int_equal(rb_beneath_mkdirs(root, "file"), 0);
    assert_int_equal(rb_beneath_mkdirs(root, "dlnk/x/file"), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_mkdirs(root, "lnk/x/file"), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_mkdir(root, "dlnk/n", 0755), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_mkdir(root, "n", 0755), 0);
    assert_int_equal(rb_beneath_mkdir(root, "n", 0755), -EEXIST);
    assert_int_equal(rb_beneath_rmdir(root, "n"), 0);
    assert_int_equal(rb_beneath_rmdir(root, "dlnk"), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_rmdir(root, "sub"), -ENOTEMPTY);
    DIR *d;
    assert_int_equal(rb_beneath_opendir(root, "", &d), 0);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    assert_int_equal(n, 6); /* f sub lnk dlnk hl a */
    assert_int_equal(rb_beneath_opendir(root, "sub", &d), 0);
    closedir(d);
    assert_int_equal(rb_beneath_opendir(root, "dlnk", &d), -RB_BENEATH_LINK);
    assert_null(d);
    assert_int_equal(rb_beneath_opendir(root, "f", &d), -ENOTDIR);
}

static void test_unlink_stat_rename(void **state)
{
    (void)state;
    struct stat st;
    assert_int_equal(rb_beneath_stat(root, "sub/g", &st), 0);
    assert_int_equal(st.st_size, 6);
    assert_int_equal(rb_beneath_stat(root, "lnk", &st), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_stat(root, "dlnk/victim", &st), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_stat(root, "missing", &st), -ENOENT);
    assert_int_equal(rb_beneath_unlink(root, "lnk"), -RB_BENEATH_LINK);
    assert_int_equal(lstat(at("root/lnk"), &st), 0);
    assert_int_equal(rb_beneath_unlink(root, "dlnk/victim"), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_unlink(root, "../out/victim"), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_unlink(root, "f"), 0);
    assert_int_equal(stat(at("root/f"), &st), -1);
    assert_int_equal(rb_beneath_unlink(root, "f"), -ENOENT);
    assert_int_equal(rb_beneath_rename(root, "lnk", "moved", 0), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_rename(root, "sub/g", "dlnk/g", 0), -RB_BENEATH_LINK);
    assert_int_equal(rb_beneath_rename(root, "sub/g", "g2", RENAME_NOREPLACE), 0);
    assert_int_equal(stat(at("root/g2"), &st), 0);
    put("root/g3", "g3");
    assert_int_equal(rb_beneath_rename(root, "g3", "g2", RENAME_NOREPLACE), -EEXIST);
    assert_int_equal(rb_beneath_rename(root, "g3", "g2", 0), 0);
}

#define BOTH(fn) cmocka_unit_test_prestate_setup_teardown(fn, setup, teardown, (void *)&on), \
                 cmocka_unit_test_prestate_setup_teardown(fn, setup, teardown, (void *)&off)

int main(void)
{
    static const bool on = true, off = false;
    const struct CMUnitTest tests[] = {
        BOTH(test_mode), BOTH(test_open_read), BOTH(test_open_create), BOTH(test_replace), BOTH(test_dirs),
        BOTH(test_unlink_stat_rename),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
