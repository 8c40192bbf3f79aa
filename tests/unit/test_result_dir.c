/*
 * Unit tests of claiming a result directory: new, empty, a user's (refused with or without --force), an earlier
 * result (refused without --force; with it, only railbench's files go), links never followed, a file as --out.
 */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "railbench/file.h"
#include "railbench/result.h"

static char dir[64];
static char msg[5000];

static int setup(void **state)
{
    (void)state;
    static const char template[] = "/tmp/rb-test-resdir.XXXXXX";
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
    static char path[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

static void put(const char *name, const char *text)
{
    FILE *f = fopen(at(name), "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static bool exists(const char *name)
{
    struct stat st;
    return lstat(at(name), &st) == 0;
}

static char *slurp(const char *name)
{
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(rb_file_read(at(name), 1 << 20, &data, &len), 0);
    return data;
}

static void test_own_names(void **state)
{
    (void)state;
    static const char *const own[] = {".railbench-result", "result.json", "intervals.jsonl", "table.md",
                                      "railbench.prom", "report.html", "report.md", "result.json.tmp.123.0"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (!rb_result_dir_own_file(own[i]))
            fail_msg("%s is railbench's", own[i]);
    static const char *const user[] = {"README", "src", ".git", "result.json.bak", "result.json.tmp.", "table.md.tmp.1",
                                       "points", "intervals.jsonl~"};
    for (size_t i = 0; i < sizeof user / sizeof user[0]; i++)
        if (rb_result_dir_own_file(user[i]))
            fail_msg("%s is not railbench's", user[i]);
}

/* A new directory (and its parents) and an empty one are taken; the marker holds the run id. */
static void test_new_and_empty(void **state)
{
    (void)state;
    assert_int_equal(rb_result_dir_claim(at("a/b"), false, "RUN1", msg, sizeof msg), 0);
    char *m = slurp("a/b/.railbench-result");
    assert_string_equal(m, "RUN1\n");
    free(m);
    assert_int_equal(mkdir(at("empty"), 0755), 0);
    assert_int_equal(rb_result_dir_claim(at("empty"), false, "RUN2", msg, sizeof msg), 0);
    assert_true(exists("empty/.railbench-result"));
}

/* The reported case: --out . in a project. Refused with and without --force; nothing in it changes. */
static void test_users_directory(void **state)
{
    (void)state;
    put("README", "mine\n");
    assert_int_equal(mkdir(at("src"), 0755), 0);
    put("src/main.c", "int main;\n");
    put("result.json", "{}\n"); /* a user's file of that name does not make it a result */
    for (int force = 0; force < 2; force++) {
        assert_int_equal(rb_result_dir_claim(dir, force, "RUN", msg, sizeof msg), -ENOTEMPTY);
        assert_non_null(strstr(msg, "not empty and not a railbench result"));
        assert_null(strchr(msg, '\n'));
    }
    assert_true(exists("README") && exists("src/main.c") && exists("result.json"));
    assert_false(exists(".railbench-result"));
}

/* An earlier result: exit 2 without --force; with it, emptied and claimed again, when it holds only railbench's. */
static void test_earlier_result(void **state)
{
    (void)state;
    assert_int_equal(rb_result_dir_claim(dir, false, "RUN1", msg, sizeof msg), 0);
    put("result.json", "{}\n");
    put("intervals.jsonl", "{}\n");
    assert_int_equal(mkdir(at("points"), 0755), 0);
    assert_int_equal(mkdir(at("points/0"), 0755), 0);
    put("points/0/4k-randread-qd1-j1.fio", "[job]\n");
    assert_int_equal(rb_result_dir_claim(dir, false, "RUN2", msg, sizeof msg), -EEXIST);
    assert_non_null(strstr(msg, "holds an earlier result (result.json)"));
    assert_int_equal(rb_result_dir_claim(dir, true, "RUN2", msg, sizeof msg), 0);
    assert_false(exists("result.json") || exists("intervals.jsonl") || exists("points"));
    char *m = slurp(".railbench-result");
    assert_string_equal(m, "RUN2\n");
    free(m);
}

/* A result with a user's file in it: --force refuses naming it, and removes nothing. */
static void test_force_refuses_foreign(void **state)
{
    (void)state;
    assert_int_equal(rb_result_dir_claim(dir, false, "RUN1", msg, sizeof msg), 0);
    put("result.json", "{}\n");
    put("notes.txt", "mine\n");
    assert_int_equal(rb_result_dir_claim(dir, true, "RUN2", msg, sizeof msg), -ENOTEMPTY);
    assert_non_null(strstr(msg, "notes.txt is not that"));
    assert_true(exists("notes.txt") && exists("result.json") && exists(".railbench-result"));
    /* Deep in points/: named with its path. */
    assert_int_equal(unlink(at("notes.txt")), 0);
    assert_int_equal(mkdir(at("points"), 0755), 0);
    assert_int_equal(mkdir(at("points/3"), 0755), 0);
    put("points/3/keep.txt", "mine\n");
    assert_int_equal(rb_result_dir_claim(dir, true, "RUN2", msg, sizeof msg), -ENOTEMPTY);
    assert_non_null(strstr(msg, "points/3/keep.txt is not that"));
    assert_true(exists("points/3/keep.txt") && exists("result.json"));
}

/* Links inside are never followed: a link is foreign, and the directory it names keeps its files. */
static void test_links_not_followed(void **state)
{
    (void)state;
    assert_int_equal(mkdir(at("elsewhere"), 0755), 0);
    put("elsewhere/result.json", "{\"user\": 1}\n");
    assert_int_equal(mkdir(at("r"), 0755), 0);
    assert_int_equal(rb_result_dir_claim(at("r"), false, "RUN1", msg, sizeof msg), 0);
    put("r/result.json", "{}\n");
    assert_int_equal(symlink(at("elsewhere"), at("r/points")), 0);
    assert_int_equal(rb_result_dir_claim(at("r"), true, "RUN2", msg, sizeof msg), -ENOTEMPTY);
    assert_non_null(strstr(msg, "points (a symbolic link)"));
    assert_true(exists("elsewhere/result.json") && exists("r/points") && exists("r/result.json"));
    /* rb_file_clear_dir unlinks the link, never what it names. */
    assert_int_equal(rb_file_clear_dir(at("r")), 0);
    assert_false(exists("r/points"));
    assert_true(exists("elsewhere/result.json"));
}

/* A result from a railbench without the marker: a result when it holds only railbench's files and a record. */
static void test_older_result(void **state)
{
    (void)state;
    put("intervals.jsonl", "{}\n");
    put("table.md", "|\n");
    assert_int_equal(rb_result_dir_claim(dir, false, "RUN", msg, sizeof msg), -EEXIST);
    assert_non_null(strstr(msg, "(intervals.jsonl)"));
    assert_int_equal(rb_result_dir_claim(dir, true, "RUN", msg, sizeof msg), 0);
    assert_false(exists("intervals.jsonl") || exists("table.md"));
}

/* --out naming a file, or a path through one: -ENOTDIR, one line naming --out. */
static void test_not_a_directory(void **state)
{
    (void)state;
    put("file", "mine\n");
    assert_int_equal(rb_result_dir_claim(at("file"), false, "RUN", msg, sizeof msg), -ENOTDIR);
    assert_non_null(strstr(msg, "--out "));
    assert_non_null(strstr(msg, "file: not a directory"));
    assert_int_equal(rb_result_dir_claim(at("file/sub"), true, "RUN", msg, sizeof msg), -ENOTDIR);
    assert_non_null(strstr(msg, "file is not a directory"));
    assert_int_equal(rb_result_dir_claim("", false, "RUN", msg, sizeof msg), -ENOTDIR);
    assert_string_equal(msg, "--out \"\": give a directory for the results");
    char *m = slurp("file");
    assert_string_equal(m, "mine\n");
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_names),
        cmocka_unit_test_setup_teardown(test_new_and_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_users_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_earlier_result, setup, teardown),
        cmocka_unit_test_setup_teardown(test_force_refuses_foreign, setup, teardown),
        cmocka_unit_test_setup_teardown(test_links_not_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_older_result, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_directory, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
