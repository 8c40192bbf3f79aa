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
#include "report_int.h"
#include "schema_commands.h"

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

/* The whole output file of the last report (NUL-terminated; free it). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *text = calloc(1, 8 << 20);
    assert_non_null(text);
    size_t len = fread(text, 1, (8 << 20) - 1, f);
    fclose(f);
    text[len] = '\0';
    return text;
}

/* Ids of the tables of a JSON report, joined by ','; asserts the document's shape. */
static void json_tables(const char *text, char *ids, size_t len)
{
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(doc, "schema")), "railbench.report/v1");
    const cJSON *t, *runs = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "tables"), 0);
    /* One run, named after its directory. */
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(runs, "id")), "runs");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(runs, "rows")), 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(runs, "rows"), 0),
                                                                 "run")),
                        "run");
    size_t n = 0;
    ids[0] = '\0';
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(doc, "tables"))
    {
        n += (size_t)snprintf(ids + n, len - n, "%s%s", n ? "," : "", cJSON_GetStringValue(cJSON_GetObjectItem(t, "id")));
        assert_true(n < len);
    }
    cJSON_Delete(doc);
}

/*
 * What every report that succeeds must hold, whatever its input: the document
 * of its format, whole; the HTML page closed and free of elements the input
 * could have injected; never "nan" or "inf" for a figure that is missing.
 */
static void check_output(const char *format, int rc)
{
    /* Something could be reported (0), or nothing (2): never a crash. */
    assert_true(rc == 0 || rc == 2);
    if (rc != 0)
        return;
    char *text = slurp(out), ids[512];
    if (strcmp(format, "json") == 0) {
        json_tables(text, ids, sizeof ids);
        if (strncmp(ids, "runs,", 5) != 0)
            fprintf(stdout, "tables: %s\n", ids);
        assert_true(strncmp(ids, "runs,", 5) == 0);
    } else if (strcmp(format, "md") == 0) {
        assert_true(strncmp(text, "# railbench report\n\n## Runs\n", 28) == 0);
        assert_non_null(strstr(text, "\n| run "));
    } else {
        assert_true(strncmp(text, "# Runs\n", 7) == 0);
    }
    if (strstr(text, "nan"))
        fprintf(stdout, "nan in: %.200s\n", strstr(text, "nan") - 100);
    assert_null(strstr(text, "nan"));
    assert_null(strstr(text, "inf,"));
    free(text);
    char *page = slurp(html);
    assert_true(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    size_t len = strlen(page);
    assert_true(len > 16 && strcmp(page + len - 16, "</body>\n</html>\n") == 0);
    assert_null(strstr(page, "<b>"));
    assert_null(strstr(page, "<script"));
    if (strstr(page, "nan"))
        fprintf(stdout, "nan in: %.200s\n", strstr(page, "nan") - 100);
    assert_null(strstr(page, "nan"));
    assert_null(strstr(page, "NaN"));
    free(page);
}

static cJSON *read_fixture(const char *name)
{
    char path[600];
    snprintf(path, sizeof path, FIX "/%s/result.json", name);
    char *text = slurp(path);
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

/* Each kind, untouched: the tables its users expect, in order, and the headline figure of its HTML. */
static void test_every_kind(void **state)
{
    (void)state;
    static const char *const want[][3] = {
        {"tiers", "runs,tiers,tiers-speedup", "data-plot=\"tiers-bars\""},
        {"sweep", "runs,sweep", "data-plot=\"sweep-knee\""},
        {"train", "runs,train,train-summary", "data-plot=\"au-epoch\""},
        {"coll", "runs,collectives", "data-plot=\"busbw-size\""},
        {"sim", "runs,collectives", "data-plot=\"time-size\""},
        {"sim-cal", "runs,calibration", "data-plot=\"time-size\""},
        {"block", "runs,block", "data-plot=\"iops-latency\""},
        {"get-open", "runs,load", NULL}, /* its figures over time need intervals.jsonl, not copied here */
        {"counters", "runs,counters", NULL},
        {"other", "runs,phases", NULL},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        cJSON *j = read_fixture(want[k][0]);
        write_json(j);
        cJSON_Delete(j);
        assert_int_equal(report("json"), 0);
        check_output("json", 0);
        char *text = slurp(out), ids[512];
        json_tables(text, ids, sizeof ids);
        free(text);
        assert_string_equal(ids, want[k][1]);
        char *page = slurp(html);
        /* The headline comes first: before the first table of the kind. */
        const char *head = strstr(page, "<div class=\"headline\">"), *table = strstr(page, "<table data-table=\"");
        table = table ? strstr(table + 1, "<table data-table=\"") : NULL; /* the runs table comes before */
        assert_non_null(head);
        if (want[k][2]) {
            const char *fig = strstr(page, want[k][2]);
            assert_non_null(fig);
            assert_true(head < fig && (!table || fig < table));
        }
        free(page);
    }
}

static void test_wrong_types_every_kind(void **state)
{
    (void)state;
    static const char *const fixtures[] = {"tiers", "sweep", "train", "coll",     "sim",
                                           "block", "get-open", "counters", "other", "sim-cal"};
    /* Warnings about the broken fields would flood the test log; they are checked by the integration test. */
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    assert_true(saved >= 0 && null >= 0);
    if (!getenv("RB_TEST_STDERR"))
        dup2(null, 2);
    int runs = 0, reported = 0;
    for (size_t f = 0; f < sizeof fixtures / sizeof fixtures[0]; f++) {
        cJSON *orig = read_fixture(fixtures[f]);
        int nodes = count_nodes(orig);
        int stride = nodes / 80 + 1;
        for (int at = 0; at < nodes; at += stride) {
            cJSON *copy = cJSON_Duplicate(orig, 1);
            int n = at;
            replace_nth(copy, &n, replacement(at + runs));
            write_json(copy);
            cJSON_Delete(copy);
            const char *format = runs % 3 == 0 ? "json" : runs % 3 == 1 ? "md" : "csv";
            unlink(out);
            int rc = report(format);
            check_output(format, rc);
            reported += rc == 0;
            runs++;
        }
        cJSON_Delete(orig);
    }
    dup2(saved, 2);
    close(saved);
    close(null);
    assert_true(runs > 400);
    /* A wrong field costs its cell or its table, not the report: nearly every mutation still reports the run. */
    assert_true(reported > runs * 9 / 10);
}

/* The schemas' "x-railbench-commands" pick the kind: the longest command that names it, a kind of that name. */
static void test_kind_by_command(void **state)
{
    (void)state;
    static const char *const want[][3] = {
        {"coll allreduce", "coll", ""},       {"coll", "coll", ""},        {"coll latency", NULL, ""},
        {"coll mbw_mr", NULL, ""},            {"fabric sim", "fabric sim", ""}, {"fabric sim moe", NULL, ""},
        {"load get", "load get|put", "ops"},  {"load meta", "load get|put", "ops"},
        {"load sweep", "load sweep", "sweep_points knee"}, {"block", "block", "block_points"},
        {"load replay", NULL, ""},            {"loadx get", NULL, ""},     {"", NULL, ""},
        {"collx", NULL, ""},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        const char *needs = "unset";
        const struct rb_report_kind *kind = rb_report_kind_named(want[k][0], &needs);
        if (want[k][1]) {
            assert_non_null(kind);
            assert_string_equal(kind->name, want[k][1]);
        } else {
            assert_null(kind);
        }
        assert_string_equal(needs, want[k][2]);
    }
    /* Every kind a schema names is linked in; every kind but phases is named by a schema. */
    static const struct {
        const char *command, *kind, *schema, *needs;
    } all[] = {RB_SCHEMA_COMMANDS};
    size_t nkinds, named = 0;
    const struct rb_report_kind *const *kinds = rb_report_kind_list(&nkinds);
    for (size_t k = 0; k < nkinds; k++) {
        bool found = false;
        for (size_t c = 0; c < sizeof all / sizeof all[0]; c++)
            if (all[c].kind) {
                const struct rb_report_kind *kind = rb_report_kind_named(all[c].command, NULL);
                assert_non_null(kind);
                found |= kind == kinds[k];
            }
        named += found;
        assert_true(found || kinds[k] == &rb_report_kind_phases);
    }
    assert_int_equal(named, nkinds - 1);
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
        cmocka_unit_test(test_every_kind),
        cmocka_unit_test(test_wrong_types_every_kind),
        cmocka_unit_test(test_kind_by_command),
        cmocka_unit_test(test_garbage_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
