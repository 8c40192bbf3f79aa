/* Unit tests for loader/proto/evict.c: --evict-cmd's word splitting (no shell) and running a real program. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "railbench/clock.h"
#include "evict_int.h"

static void expect_words(const char *cmd, const char *const *want, size_t n)
{
    char **w = NULL, err[128] = "";
    assert_int_equal(rb_evict_split(cmd, &w, err, sizeof err), 0);
    size_t i = 0;
    for (; w[i]; i++) {
        assert_true(i < n);
        assert_string_equal(w[i], want[i]);
    }
    assert_int_equal(i, n);
    rb_evict_words_free(w);
}

static void test_split(void **state)
{
    (void)state;
    expect_words("ais evict s3://bench", (const char *[]){"ais", "evict", "s3://bench"}, 3);
    expect_words("  a\t b\n", (const char *[]){"a", "b"}, 2);
    expect_words("rm 'a b' \"c d\"", (const char *[]){"rm", "a b", "c d"}, 3);
    expect_words("x 'it''s' \"q\\\"uote\\\\\"", (const char *[]){"x", "its", "q\"uote\\"}, 3);
    expect_words("a\\ b c\\'d", (const char *[]){"a b", "c'd"}, 2);
    expect_words("x ''", (const char *[]){"x", ""}, 2);
    /* No shell: variables, globs, separators and substitutions are plain characters. */
    expect_words("echo $HOME;rm * `id` $(id) a|b >f", (const char *[]){"echo", "$HOME;rm", "*", "`id`", "$(id)",
                                                                        "a|b", ">f"}, 7);
    /* Inside double quotes a backslash escapes only " and \. */
    expect_words("\"a\\nb\"", (const char *[]){"a\\nb"}, 1);
}

static void test_split_errors(void **state)
{
    (void)state;
    char **w = (char **)1, err[128];
    assert_int_equal(rb_evict_split("rm 'x", &w, err, sizeof err), -EINVAL);
    assert_null(w);
    assert_non_null(strstr(err, "unterminated '"));
    assert_int_equal(rb_evict_split("rm \"x", &w, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "unterminated \""));
    assert_int_equal(rb_evict_split("rm x\\", &w, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "backslash"));
    assert_int_equal(rb_evict_split("  \t ", &w, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "empty"));
    rb_evict_words_free(NULL);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Runs printf (from PATH) with our words and an added variable: arguments arrive exactly, no shell between. */
static void test_run(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/rb_evict_XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    close(fd);
    char script[] = "/tmp/rb_evict_sh_XXXXXX";
    fd = mkstemp(script);
    assert_true(fd >= 0);
    char body[512];
    int len = snprintf(body, sizeof body, "#!/bin/sh\nfor a in \"$@\"; do printf '[%%s]' \"$a\"; done > %s\n"
                       "printf ' %%s' \"$RB_TEST_VAR\" >> %s\n", tmpl, tmpl);
    assert_int_equal(write(fd, body, (size_t)len), len);
    close(fd);
    assert_int_equal(chmod(script, 0700), 0);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "%s 'a b' '$HOME;x' \"*\"", script);
    char **w = NULL, err[256] = "";
    assert_int_equal(rb_evict_split(cmd, &w, err, sizeof err), 0);
    char *env[] = {"RB_TEST_VAR=set by railbench", NULL};
    assert_int_equal(rb_evict_run(w, env, 10 * RB_NS_PER_S, NULL, err, sizeof err), 0);
    assert_string_equal(slurp(tmpl), "[a b][$HOME;x][*] set by railbench");
    rb_evict_words_free(w);
    unlink(script);
    unlink(tmpl);
}

static void test_run_failures(void **state)
{
    (void)state;
    char err[256] = "";
    char *missing[] = {"/nonexistent/railbench-evict", NULL};
    assert_int_equal(rb_evict_run(missing, NULL, RB_NS_PER_S, NULL, err, sizeof err), -ENOENT);
    assert_non_null(strstr(err, "cannot run \"/nonexistent/railbench-evict\""));
    char *fails[] = {"sh", "-c", "exit 7", NULL};
    assert_int_equal(rb_evict_run(fails, NULL, 10 * RB_NS_PER_S, NULL, err, sizeof err), -EIO);
    assert_non_null(strstr(err, "exited with status 7"));
    /* A command that outlives its limit is stopped, with whatever it started (its process group). */
    char *slow[] = {"sh", "-c", "sleep 30 & sleep 30", NULL};
    uint64_t t0 = rb_clock_ns();
    assert_int_equal(rb_evict_run(slow, NULL, 200 * RB_NS_PER_MS, NULL, err, sizeof err), -ETIMEDOUT);
    assert_true(rb_clock_ns() - t0 < 10 * RB_NS_PER_S);
    assert_non_null(strstr(err, "still running"));
    /* A stop request (the run was interrupted) ends it too. */
    volatile int stop = 1;
    assert_int_equal(rb_evict_run(slow, NULL, 0, &stop, err, sizeof err), -ECANCELED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_split_errors),
        cmocka_unit_test(test_run),
        cmocka_unit_test(test_run_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
