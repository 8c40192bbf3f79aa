/* Unit tests of the run record: fields, redaction, intervals flushed line by line, atomic writes. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "railbench/cli.h"
#include "railbench/result.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = calloc(1, (size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

static void test_record_fields_and_redaction(void **state)
{
    (void)state;
    char dir[] = "/tmp/rb_result_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char out[256];
    snprintf(out, sizeof out, "%s/run/nested", dir);

    const char *secret = NULL, *endpoint = NULL;
    const struct rb_opt opts[] = {
        {"secret-key", 0, RB_OPT_STR, &secret, "S", "a secret", NULL},
        {"endpoint", 0, RB_OPT_STR, &endpoint, "URL", "endpoint", NULL},
        {0},
    };
    const struct rb_cmd_spec spec = {"railbench test", "test", opts, 0, 0, false};
    char *argv[] = {"test", "--secret-key", "hunter2-very-secret", "--endpoint", "http://x",
                    "--label", "site=lab", "--out", out, NULL};
    struct rb_cli cli;
    assert_int_equal(rb_cli_parse(&cli, &spec, 9, argv), 0);

    struct rb_result r;
    assert_int_equal(rb_result_open(&r, out, "test", &cli), 0);
    cJSON *line = cJSON_CreateObject();
    cJSON_AddNumberToObject(line, "count", 7);
    assert_int_equal(rb_result_interval(&r, line), 0);
    /* Flushed as written: readable before the run ends. */
    char path[512];
    snprintf(path, sizeof path, "%s/intervals.jsonl", out);
    char *text = slurp(path);
    assert_non_null(text);
    assert_string_equal(text, "{\"count\":7}\n");
    free(text);

    rb_result_check(&r, "ok", true, "fine");
    assert_false(rb_result_failed(&r));
    rb_result_check(&r, "bad", false, "value %d over %d", 5, 3);
    assert_true(rb_result_failed(&r));
    rb_result_set(&r, "summary", cJSON_CreateString("first"));
    rb_result_set(&r, "summary", cJSON_CreateString("second"));
    assert_int_equal(rb_result_write_table(&r, "| a |\n"), 0);
    assert_int_equal(rb_result_finish(&r), 0);
    rb_result_close(&r);
    rb_result_close(&r); /* idempotent */

    snprintf(path, sizeof path, "%s/result.json", out);
    text = slurp(path);
    assert_non_null(text);
    assert_null(strstr(text, "hunter2"));
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_string_equal(cJSON_GetObjectItem(root, "schema")->valuestring, RB_RESULT_SCHEMA);
    assert_string_equal(cJSON_GetObjectItem(root, "command")->valuestring, "test");
    assert_string_equal(cJSON_GetObjectItem(root, "summary")->valuestring, "second");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "labels"), "site")->valuestring, "lab");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "config"), "endpoint")->valuestring, "http://x");
    assert_non_null(cJSON_GetObjectItem(root, "started_at"));
    assert_non_null(cJSON_GetObjectItem(root, "ended_at"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "checks")), 2);
    cJSON_Delete(root);
    free(text);

    snprintf(path, sizeof path, "%s/table.md", out);
    text = slurp(path);
    assert_string_equal(text, "| a |\n");
    free(text);
    glob_t g; /* no temporary file left ("result.json.tmp.PID.N") */
    snprintf(path, sizeof path, "%s/*.tmp*", out);
    assert_int_equal(glob(path, 0, NULL, &g), GLOB_NOMATCH);
    globfree(&g);
    rb_cli_free(&cli);
}

static void test_json_u64(void **state)
{
    (void)state;
    const uint64_t values[] = {0, 1, 1ull << 53, (1ull << 53) + 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        cJSON *j = rb_json_u64(values[i]);
        uint64_t back = 0;
        assert_int_equal(rb_json_get_u64(j, &back), 0);
        assert_true(back == values[i]);
        cJSON_Delete(j);
    }
    uint64_t v;
    cJSON *bad[] = {cJSON_CreateNumber(-1), cJSON_CreateNumber(1.5), cJSON_CreateString("12a"),
                    cJSON_CreateString(""), cJSON_CreateString("99999999999999999999999"),
                    cJSON_CreateTrue()};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(rb_json_get_u64(bad[i], &v), -EINVAL);
        cJSON_Delete(bad[i]);
    }
}

static void test_unwritable_dir(void **state)
{
    (void)state;
    struct rb_result r;
    assert_int_not_equal(rb_result_open(&r, "/proc/railbench-cannot-exist/x", "test", NULL), 0);
    rb_result_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_fields_and_redaction),
        cmocka_unit_test(test_json_u64),
        cmocka_unit_test(test_unwritable_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
