/* Unit tests for loader/objset/objects.c: generated names, file lists, arenas, rank partitions. */
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
    char buf[RB_OBJSET_NAME_BYTES];
    assert_int_equal(rb_objset_generate(&s, "p/obj-", 3), 0);
    assert_int_equal(s.n, 3);
    assert_true(rb_objset_generated(&s));
    assert_string_equal(rb_objset_name(&s, 0, buf), "p/obj-00000000");
    assert_string_equal(rb_objset_name(&s, 2, buf), "p/obj-00000002");
    assert_int_equal(rb_objset_size(&s, 1), 0);
    rb_objset_set_common_size(&s, 4096);
    assert_int_equal(rb_objset_size(&s, 1), 4096);
    assert_int_equal(rb_objset_set_size(&s, 2, 7), 0);
    assert_int_equal(rb_objset_size(&s, 2), 7);
    assert_int_equal(rb_objset_size(&s, 0), 4096);
    rb_objset_free(&s);
    assert_int_equal(s.n, 0);
    rb_objset_free(NULL);
}

/* The name function: "<prefix><index>", zero-padded to 8 digits or to the width of n - 1, in O(1) memory. */
static void test_name_function(void **state)
{
    (void)state;
    struct rb_objset s = {0};
    char buf[RB_OBJSET_NAME_BYTES];
    assert_int_equal(rb_objset_generate(&s, "", 100000000), 0);
    assert_string_equal(rb_objset_name(&s, 99999999, buf), "99999999");
    assert_int_equal(rb_objset_generate(&s, "x-", 100000001), 0);
    assert_string_equal(rb_objset_name(&s, 0, buf), "x-000000000");
    assert_string_equal(rb_objset_name(&s, 100000000, buf), "x-100000000");
    /* A billion objects: nothing per object is stored. */
    assert_int_equal(rb_objset_generate(&s, "obj-", 1000000000ull), 0);
    assert_null(s.arena);
    assert_null(s.sizes);
    assert_string_equal(rb_objset_name(&s, 123456789, buf), "obj-123456789");
    assert_int_equal(rb_objset_generate(&s, "big-", 10000000000000ull), 0);
    assert_string_equal(rb_objset_name(&s, 42, buf), "big-0000000000042");
    /* The same as the old strdup'd names, for every index of a small set. */
    assert_int_equal(rb_objset_generate(&s, "p/", 1000), 0);
    for (uint64_t i = 0; i < 1000; i++) {
        char want[64];
        snprintf(want, sizeof want, "p/%08llu", (unsigned long long)i);
        assert_string_equal(rb_objset_name(&s, i, buf), want);
    }
    char prefix[1002];
    memset(prefix, 'a', sizeof prefix - 1);
    prefix[sizeof prefix - 1] = '\0';
    assert_int_equal(rb_objset_generate(&s, prefix, 1), -ENAMETOOLONG);
    rb_objset_free(&s);
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
    uint64_t total = 0;
    char *p = write_tmp("a 4096\n\nx 12zz\n");
    struct rb_objset s = {0};
    assert_int_equal(rb_objset_from_file(&s, p, 0, 1, &total, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, ":3: bad size"));
    unlink(p);
    free(p);
    rb_objset_free(&s);
    p = write_tmp("# comment\na 4096\n  b\t\nc\t100\r\nd\n");
    assert_int_equal(rb_objset_from_file(&s, p, 0, 1, &total, err, sizeof err), 0);
    assert_int_equal(s.n, 4);
    assert_int_equal(total, 4);
    assert_false(rb_objset_generated(&s));
    assert_string_equal(rb_objset_name(&s, 0, NULL), "a");
    assert_int_equal(rb_objset_size(&s, 0), 4096);
    assert_string_equal(rb_objset_name(&s, 1, NULL), "b");
    assert_int_equal(rb_objset_size(&s, 1), 0);
    assert_int_equal(rb_objset_size(&s, 2), 100);
    assert_string_equal(rb_objset_name(&s, 3, NULL), "d");
    rb_objset_free(&s);
    /* Rank 1 of 3 stores only its share: the names k with k % 3 == 1. */
    assert_int_equal(rb_objset_from_file(&s, p, 1, 3, &total, err, sizeof err), 0);
    assert_int_equal(total, 4);
    assert_int_equal(s.n, 1);
    assert_string_equal(rb_objset_name(&s, 0, NULL), "b");
    rb_objset_free(&s);
    unlink(p);
    free(p);
    /* A name that would leave the target is refused on every rank, the line it is on wherever the rank's share is. */
    p = write_tmp("a\nb 10\n../outside 10\n");
    for (int r = 0; r < 3; r++) {
        assert_int_equal(rb_objset_from_file(&s, p, r, 3, &total, err, sizeof err), -EINVAL);
        assert_non_null(strstr(err, ":3: \"../outside\" has a \"..\" component"));
        rb_objset_free(&s);
    }
    unlink(p);
    free(p);
    p = write_tmp("/etc/passwd\n");
    assert_int_equal(rb_objset_from_file(&s, p, 0, 1, &total, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, ":1: \"/etc/passwd\" starts with \"/\""));
    rb_objset_free(&s);
    unlink(p);
    free(p);
    assert_int_equal(rb_objset_from_file(&s, "/nonexistent/list", 0, 1, &total, err, sizeof err), -ENOENT);
    assert_int_equal(rb_objset_from_file(&s, "/nonexistent/list", 3, 3, &total, err, sizeof err), -EINVAL);
}

/* Listed names live once in an arena: at most name length + 16 bytes per object, across block boundaries. */
static void test_arena(void **state)
{
    (void)state;
    struct rb_objset s = {0};
    enum { N = 3 * 65536 + 5 };
    char name[64], buf[RB_OBJSET_NAME_BYTES];
    uint64_t name_bytes = 0;
    for (uint64_t i = 0; i < N; i++) {
        snprintf(name, sizeof name, "dir/%llx/object", (unsigned long long)(i * 2654435761u));
        name_bytes += strlen(name);
        assert_int_equal(rb_objset_add(&s, name, i), 0);
    }
    for (uint64_t i = 0; i < N; i += 997) {
        snprintf(name, sizeof name, "dir/%llx/object", (unsigned long long)(i * 2654435761u));
        assert_string_equal(rb_objset_name(&s, i, buf), name);
        assert_int_equal(rb_objset_size(&s, i), i);
    }
    /* Stored bytes, counting what is used (capacities grow by doubling; trimmed sets are exact). */
    uint64_t used = s.arena_len + N * sizeof *s.rel_off + N * sizeof *s.sizes +
                    ((N + 65535) / 65536) * sizeof *s.block_off;
    assert_true(used <= name_bytes + 16ull * N);
    assert_int_equal(rb_objset_stored_bytes(&s), used);
    assert_int_equal(rb_objset_stored_bytes(&s), name_bytes + 13ull * N + 4 * 8);
    char longname[RB_OBJSET_NAME_MAX + 2];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(rb_objset_add(&s, longname, 0), -ENAMETOOLONG);
    longname[RB_OBJSET_NAME_MAX] = '\0';
    assert_int_equal(rb_objset_add(&s, longname, 0), 0);
    assert_string_equal(rb_objset_name(&s, N, buf), longname);
    struct rb_objset g = {0};
    assert_int_equal(rb_objset_generate(&g, "x", 1), 0);
    assert_int_equal(rb_objset_add(&g, "y", 0), -EINVAL);
    assert_int_equal(rb_objset_stored_bytes(&g), 0);
    rb_objset_free(&g);
    rb_objset_free(&s);
}

/* Rank partitions: disjoint and covering, in order, generated ones still generated (no per-object memory). */
static void test_partition(void **state)
{
    (void)state;
    char buf[RB_OBJSET_NAME_BYTES], want[32];
    for (int listed = 0; listed < 2; listed++) {
        struct rb_objset all = {0}, part[3] = {{0}};
        if (listed) {
            for (int i = 0; i < 10; i++) {
                snprintf(want, sizeof want, "%08d", i);
                assert_int_equal(rb_objset_add(&all, want, (uint64_t)i + 1), 0);
            }
        } else {
            assert_int_equal(rb_objset_generate(&all, "", 10), 0);
        }
        for (int r = 0; r < 3; r++) {
            assert_int_equal(rb_objset_partition(&all, r, 3, &part[r]), 0);
            assert_int_equal(rb_objset_generated(&part[r]), !listed);
        }
        assert_int_equal(part[0].n + part[1].n + part[2].n, 10);
        assert_int_equal(part[0].n, 4);
        for (int r = 0; r < 3; r++)
            for (uint64_t j = 0; j < part[r].n; j++) {
                snprintf(want, sizeof want, "%08llu", (unsigned long long)(r + 3 * j));
                assert_string_equal(rb_objset_name(&part[r], j, buf), want);
                if (listed)
                    assert_int_equal(rb_objset_size(&part[r], j), r + 3 * j + 1);
            }
        /* A share of a share: rank 1 of 2 within rank 2 of 3 holds 5 (index 2 + 3 x 1). */
        struct rb_objset sub = {0};
        assert_int_equal(rb_objset_partition(&part[2], 1, 2, &sub), 0);
        assert_int_equal(sub.n, 1);
        assert_string_equal(rb_objset_name(&sub, 0, buf), "00000005");
        assert_int_equal(rb_objset_partition(&all, 3, 3, &sub), -EINVAL);
        rb_objset_free(&sub);
        for (int r = 0; r < 3; r++)
            rb_objset_free(&part[r]);
        rb_objset_free(&all);
    }
    /* A billion objects over 1,000 ranks: every share O(1), the last rank's last name the last index. */
    struct rb_objset all = {0}, mine = {0};
    assert_int_equal(rb_objset_generate(&all, "o", 1000000000ull), 0);
    assert_int_equal(rb_objset_partition(&all, 999, 1000, &mine), 0);
    assert_int_equal(mine.n, 1000000);
    assert_string_equal(rb_objset_name(&mine, mine.n - 1, buf), "o999999999");
    rb_objset_free(&mine);
    rb_objset_free(&all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generate),
        cmocka_unit_test(test_name_function),
        cmocka_unit_test(test_filelist),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_partition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
