/* Unit tests for loader/objects.c: generated names, file lists, rank partitions and seeded permutations. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "objset_int.h"

static void test_generate(void **state)
{
    (void)state;
    struct rb_objset s = {0};
    assert_int_equal(rb_objset_generate(&s, "p/obj-", 3), 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.names[0], "p/obj-00000000");
    assert_string_equal(s.names[2], "p/obj-00000002");
    assert_int_equal(s.sizes[1], 0);
    rb_objset_free(&s);
    assert_int_equal(s.n, 0);
    rb_objset_free(NULL);
}

static char *write_tmp(const char *text)
{
    char *path = strdup("/tmp/rb_objects_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_filelist(void **state)
{
    (void)state;
    char err[256] = "";
    struct rb_objset s = {0};
    char *p = write_tmp("# names\n\na 4k\n  b\tc\nc 100\r\nd\n");
    /* "b\tc": the second field must be a size. */
    assert_int_equal(rb_objset_from_file(&s, p, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, ":4: bad size \"c\""));
    unlink(p);
    free(p);
    rb_objset_free(&s);

    p = write_tmp("# names\n\na 4k\n  b\nc 100\r\nd\n");
    assert_int_equal(rb_objset_from_file(&s, p, err, sizeof err), 0);
    assert_int_equal(s.n, 4);
    assert_string_equal(s.names[0], "a");
    assert_int_equal(s.sizes[0], 4096);
    assert_string_equal(s.names[1], "b");
    assert_int_equal(s.sizes[1], 0);
    assert_int_equal(s.sizes[2], 100);
    assert_string_equal(s.names[3], "d");
    unlink(p);
    free(p);
    rb_objset_free(&s);
    assert_int_equal(rb_objset_from_file(&s, "/nonexistent/list", err, sizeof err), -ENOENT);
    assert_non_null(strstr(err, "/nonexistent/list"));
}

static void test_partition(void **state)
{
    (void)state;
    struct rb_objset all = {0}, a = {0}, b = {0}, c = {0};
    assert_int_equal(rb_objset_generate(&all, "", 10), 0);
    assert_int_equal(rb_objset_partition(&all, 0, 3, &a), 0);
    assert_int_equal(rb_objset_partition(&all, 1, 3, &b), 0);
    assert_int_equal(rb_objset_partition(&all, 2, 3, &c), 0);
    assert_int_equal(a.n + b.n + c.n, 10);
    assert_int_equal(a.n, 4);
    assert_string_equal(b.names[0], "00000001");
    assert_string_equal(c.names[2], "00000008");
    assert_int_equal(rb_objset_partition(&all, 3, 3, &c), -EINVAL);
    rb_objset_free(&all);
    rb_objset_free(&a);
    rb_objset_free(&b);
    rb_objset_free(&c);
}

static void test_shuffle(void **state)
{
    (void)state;
    enum { N = 1000 };
    uint32_t x[N], y[N];
    for (uint32_t i = 0; i < N; i++)
        x[i] = y[i] = i;
    rb_objset_shuffle(x, N, 5);
    rb_objset_shuffle(y, N, 5);
    assert_memory_equal(x, y, sizeof x);
    int seen[N] = {0}, moved = 0;
    for (uint32_t i = 0; i < N; i++) {
        seen[x[i]]++;
        moved += x[i] != i;
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(seen[i], 1); /* a permutation: every object exactly once per epoch */
    assert_true(moved > N * 9 / 10);
    for (uint32_t i = 0; i < N; i++)
        y[i] = i;
    rb_objset_shuffle(y, N, 6);
    assert_memory_not_equal(x, y, sizeof x);
    rb_objset_shuffle(y, 0, 1);
    rb_objset_shuffle(y, 1, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generate),
        cmocka_unit_test(test_filelist),
        cmocka_unit_test(test_partition),
        cmocka_unit_test(test_shuffle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
