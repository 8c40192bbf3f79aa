/* Unit tests of railbench report as a whole, in process: every kind through md, CSV, JSON and HTML, fields of the wrong type. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "railbench/command.h"

#define FIX RB_FIXTURES_DIR "/report"

static char tmp[] = "/tmp/rb_report_XXXXXX";
static char dir[600], out[600], html[600];

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmp))
        return -1;
    snprintf(dir, sizeof dir, "%s/run", tmp);
    snprintf(out, sizeof out, "%s/report.out", tmp);
    snprintf(html, sizeof html, "%s/report.html", tmp);
    return mkdir(dir, 0755);
}

static int teardown(void **state)
{
    (void)state;
    char p[700];
    snprintf(p, sizeof p, "%s/result.json", dir);
    unlink(p);
    unlink(out);
    unlink(html);
    rmdir(dir);
    rmdir(tmp);
    return 0;
}

static int report(const char *format)
{
    char *argv[] = {"report", dir, "--format", (char *)format, "-o", out, "--html", html, "--quiet", NULL};
    return rb_report_main(9, argv);
}

/* Replaces the n-th node (depth first, not descending into histogram buckets) with repl. */
static bool replace_nth(cJSON *node, int *n, cJSON *repl)
{
    cJSON *child = node->child;
    while (child) {
        cJSON *next = child->next;
        if ((*n)-- == 0) {
            if (child->string) {
                char *key = strdup(child->string);
                cJSON_ReplaceItemInObjectCaseSensitive(node, key, repl);
                free(key);
            } else {
                cJSON_ReplaceItemViaPointer(node, child, repl);
            }
            return true;
        }
        bool buckets = child->string && strcmp(child->string, "buckets") == 0;
        if (!buckets && (cJSON_IsObject(child) || cJSON_IsArray(child)) && replace_nth(child, n, repl))
            return true;
        child = next;
    }
    return false;
}

static int count_nodes(const cJSON *node)
{
    int n = 0;
    for (const cJSON *c = node->child; c; c = c->next) {
        n++;
        if (!(c->string && strcmp(c->string, "buckets") == 0))
            n += count_nodes(c);
    }
    return n;
}

static cJSON *replacement(int k)
{
    switch (k % 6) {
    case 0: return cJSON_CreateString("<b>x</b>");
    case 1: return cJSON_CreateNumber(-1e308);
    case 2: return cJSON_CreateNull();
    case 3: return cJSON_CreateArray();
    case 4: return cJSON_CreateObject();
    default: return cJSON_Parse("[{\"a\":1},\"s\",2,null]");
    }
}

static void write_json(const cJSON *j)
{
    char p[700], *text = cJSON_PrintUnformatted(j);
    snprintf(p, sizeof p, "%s/result.json", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(text);
}

static void test_wrong_types_every_kind(void **state)
{
    (void)state;
    static const char *const fixtures[] = {"tiers", "sweep", "train", "coll",     "sim",
                                           "block", "get-open", "counters", "other"};
    /* Warnings about the broken fields would flood the test log; they are checked by the integration test. */
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    assert_true(saved >= 0 && null >= 0);
    dup2(null, 2);
    int runs = 0;
    for (size_t f = 0; f < sizeof fixtures / sizeof fixtures[0]; f++) {
        char path[600];
        snprintf(path, sizeof path, FIX "/%s/result.json", fixtures[f]);
        FILE *fp = fopen(path, "r");
        assert_non_null(fp);
        char *text = calloc(1, 1 << 20);
        size_t len = fread(text, 1, (1 << 20) - 1, fp);
        fclose(fp);
        text[len] = '\0';
        cJSON *orig = cJSON_Parse(text);
        free(text);
        assert_non_null(orig);
        int nodes = count_nodes(orig);
        int stride = nodes / 80 + 1;
        for (int at = 0; at < nodes; at += stride) {
            cJSON *copy = cJSON_Duplicate(orig, 1);
            int n = at;
            replace_nth(copy, &n, replacement(at + runs));
            write_json(copy);
            cJSON_Delete(copy);
            int rc = report(runs % 3 == 0 ? "json" : runs % 3 == 1 ? "md" : "csv");
            /* Something could be reported (0), or nothing (2): never a crash. */
            assert_true(rc == 0 || rc == 2);
            runs++;
        }
        cJSON_Delete(orig);
    }
    dup2(saved, 2);
    close(saved);
    close(null);
    assert_true(runs > 400);
}

static void test_garbage_file(void **state)
{
    (void)state;
    char p[700];
    snprintf(p, sizeof p, "%s/result.json", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    for (int i = 0; i < 5000; i++)
        fputc((i * 7919) % 256, f);
    fclose(f);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    int rc = report("md");
    dup2(saved, 2);
    close(saved);
    close(null);
    assert_int_equal(rc, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrong_types_every_kind),
        cmocka_unit_test(test_garbage_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
