/* Unit tests of whole-file writes: a new file, a replaced one, a link, a FIFO, /dev/null and a user's "path.tmp". */
#define _XOPEN_SOURCE 700
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

#include "railbench/file.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    static const char template[] = "/tmp/rb-test-file.XXXXXX"; /* mkdtemp fills in the X's */
    memcpy(dir, template, sizeof template);
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(rb_file_clear_dir(dir), 0);
    return rmdir(dir);
}

static const char *at(const char *name)
{
    static char path[4][128];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

/* The whole file at path, as a string (the caller frees). */
static char *slurp(const char *path)
{
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(rb_file_read(path, 1 << 20, &data, &len), 0);
    return data;
}

/* The number of entries in the test's directory, "." and ".." aside. */
static int entries(void)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void test_new_and_replaced(void **state)
{
    (void)state;
    const char *p = at("out.json");
    assert_int_equal(rb_file_write_atomic(p, "first", 5), 0);
    char *s = slurp(p);
    assert_string_equal(s, "first");
    free(s);
    assert_int_equal(rb_file_write_atomic(p, "second", 6), 0);
    s = slurp(p);
    assert_string_equal(s, "second");
    free(s);
    assert_int_equal(entries(), 1); /* no temporary file left */
}

/* A file named like the old temporary file ("path.tmp") is the user's: left as it was. */
static void test_users_tmp_untouched(void **state)
{
    (void)state;
    const char *p = at("r.json"), *user = at("r.json.tmp");
    assert_int_equal(rb_file_write_atomic(user, "mine", 4), 0);
    assert_int_equal(rb_file_write_atomic(p, "result", 6), 0);
    char *s = slurp(user);
    assert_string_equal(s, "mine");
    free(s);
    assert_int_equal(entries(), 2);
}

/* A link to a regular file: the file gets the data, the link stays a link. */
static void test_link_kept(void **state)
{
    (void)state;
    const char *target = at("target.txt"), *link = at("link.txt");
    assert_int_equal(rb_file_write_atomic(target, "old", 3), 0);
    assert_int_equal(symlink("target.txt", link), 0);
    assert_int_equal(rb_file_write_atomic(link, "new", 3), 0);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    char *s = slurp(target);
    assert_string_equal(s, "new");
    free(s);
    assert_int_equal(entries(), 2);
}

/* A FIFO is written into, not replaced by a regular file. */
static void test_fifo_written_into(void **state)
{
    (void)state;
    const char *p = at("fifo");
    assert_int_equal(mkfifo(p, 0600), 0);
    int r = open(p, O_RDONLY | O_NONBLOCK);
    assert_true(r >= 0);
    assert_int_equal(rb_file_write_atomic(p, "through", 7), 0);
    char buf[16] = {0};
    assert_int_equal(read(r, buf, sizeof buf - 1), 7);
    assert_string_equal(buf, "through");
    close(r);
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(entries(), 1);
}

/* -o /dev/null: written into; /dev/null stays a character device (a rename made it a regular file). */
static void test_dev_null_stays(void **state)
{
    (void)state;
    struct stat st;
    if (stat("/dev/null", &st) != 0 || !S_ISCHR(st.st_mode))
        skip(); /* not a device here: nothing to keep */
    assert_int_equal(rb_file_write_atomic("/dev/null", "x", 1), 0);
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

static void test_errors(void **state)
{
    (void)state;
    assert_int_equal(mkdir(at("d"), 0700), 0);
    assert_int_equal(rb_file_write_atomic(at("d"), "x", 1), -EISDIR);
    assert_int_equal(rb_file_write_atomic(at("missing/out.json"), "x", 1), -ENOENT);
    assert_int_equal(entries(), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_new_and_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_users_tmp_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_link_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_written_into, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dev_null_stays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
