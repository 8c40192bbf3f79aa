/* Unit tests for the inference trace loader (loader/kvcache/kv_trace.c): both formats, seen flags, hit rate, errors. */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "kv_trace_int.h"

#define TRACES RB_FIXTURES_DIR "/traces/"
#define MOONCAKE TRACES "mooncake_sample.jsonl"
#define BURSTGPT TRACES "burstgpt_sample.csv"

/* A temporary file holding len bytes of text; the caller unlinks path. */
static void write_trace(char *path, const char *text, size_t len)
{
    strcpy(path, "/tmp/rb_test_kvtrace_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
}

/* Loads text as a trace; returns the load's code, err its message. */
static int load_text(const char *text, struct rb_kvtrace *t, char *err, size_t errlen)
{
    char path[64];
    write_trace(path, text, strlen(text));
    int rc = rb_kvtrace_load(path, t, err, errlen);
    unlink(path);
    return rc;
}

/* text must fail with -EINVAL and the one line "PATH:LINE: <something containing what>". */
static void expect_error(const char *text, size_t line, const char *what)
{
    char path[64], err[512], want[128];
    write_trace(path, text, strlen(text));
    struct rb_kvtrace t;
    int rc = rb_kvtrace_load(path, &t, err, sizeof err);
    unlink(path);
    if (rc != -EINVAL)
        fail_msg("got %d (%s), wanted -EINVAL for line %zu: %s", rc, err, line, what);
    snprintf(want, sizeof want, "%s:%zu: ", path, line);
    if (strncmp(err, want, strlen(want)) != 0 || !strstr(err, what) || strchr(err, '\n'))
        fail_msg("error \"%s\" is not \"%s...%s...\"", err, want, what);
    assert_int_equal(t.n, 0);
    assert_null(t.req);
    assert_null(t.arena_);
}

static void assert_ids(const struct rb_kvtrace_req *r, const uint64_t *ids, const uint8_t *seen, uint32_t n)
{
    assert_int_equal(r->n_blocks, n);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(r->blocks[i], ids[i]);
        assert_int_equal(r->seen[i], seen[i]);
    }
}

/* ---- the sample traces (tests/fixtures/traces/make_traces.py); values read off the files ---- */

static void test_mooncake_sample(void **state)
{
    (void)state;
    struct rb_kvtrace t;
    char err[512] = "x";
    assert_int_equal(rb_kvtrace_load(MOONCAKE, &t, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_int_equal(t.fmt, RB_KVTRACE_MOONCAKE);
    assert_int_equal(t.block_tokens, 512);
    assert_int_equal(t.n, 375);
    assert_int_equal(rb_kvtrace_skipped(&t), 0);
    /* {"timestamp": 0, "input_length": 1024, "output_length": 84, "hash_ids": [0, 1]} */
    assert_true(t.req[0].t_s == 0.0);
    assert_int_equal(t.req[0].input_tokens, 1024);
    assert_int_equal(t.req[0].output_tokens, 84);
    assert_ids(&t.req[0], (const uint64_t[]){0, 1}, (const uint8_t[]){0, 0}, 2);
    /* {"timestamp": 692, "input_length": 719, "output_length": 138, "hash_ids": [0, 2]}: the shared system block */
    assert_true(t.req[1].t_s == 0.692);
    assert_int_equal(t.req[1].input_tokens, 719);
    assert_int_equal(t.req[1].output_tokens, 138);
    assert_ids(&t.req[1], (const uint64_t[]){0, 2}, (const uint8_t[]){1, 0}, 2);
    assert_true(t.req[2].t_s == 0.870);
    assert_ids(&t.req[2], (const uint64_t[]){3, 4, 5, 6}, (const uint8_t[]){0, 0, 0, 0}, 4);
    /* The last line: 475142 ms, 5485 and 183 tokens, a later turn of a conversation. */
    const struct rb_kvtrace_req *last = &t.req[374];
    assert_true(last->t_s == 475.142);
    assert_int_equal(last->input_tokens, 5485);
    assert_int_equal(last->output_tokens, 183);
    assert_ids(last, (const uint64_t[]){3, 4, 994, 995, 1019, 1073, 1074, 1087, 1088, 1089, 1090},
               (const uint8_t[]){1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, 11);
    assert_int_equal(t.blocks_total, 3715);
    assert_int_equal(t.blocks_seen, 2624);
    /* Ids and flags lie in one arena, request after request; arrivals never go back. */
    for (size_t i = 1; i < t.n; i++) {
        assert_ptr_equal(t.req[i].blocks, t.req[i - 1].blocks + t.req[i - 1].n_blocks);
        assert_ptr_equal(t.req[i].seen, t.req[i - 1].seen + t.req[i - 1].n_blocks);
        assert_true(t.req[i].t_s >= t.req[i - 1].t_s);
        assert_int_equal(t.req[i].n_blocks, (t.req[i].input_tokens + 511) / 512);
    }
    rb_kvtrace_free(&t);
    assert_null(t.req);
    assert_int_equal(t.n, 0);
    rb_kvtrace_free(&t); /* twice, and NULL: no-ops */
    rb_kvtrace_free(NULL);
}

/* Every seen flag against a direct search of the earlier requests (quadratic, independent of the hash set). */
static void test_seen_flags_brute_force(void **state)
{
    (void)state;
    struct rb_kvtrace t;
    char err[512];
    assert_int_equal(rb_kvtrace_load(MOONCAKE, &t, err, sizeof err), 0);
    uint64_t seen = 0, total = 0;
    for (size_t r = 0; r < t.n; r++) {
        for (uint32_t j = 0; j < t.req[r].n_blocks; j++) {
            uint8_t want = 0;
            for (size_t e = 0; e < r && !want; e++)
                for (uint32_t k = 0; k < t.req[e].n_blocks && !want; k++)
                    want = t.req[e].blocks[k] == t.req[r].blocks[j];
            if (t.req[r].seen[j] != want)
                fail_msg("request %zu block %u (id %llu): seen %u, wanted %u", r, j,
                         (unsigned long long)t.req[r].blocks[j], t.req[r].seen[j], want);
            seen += want;
            total++;
        }
    }
    assert_int_equal(t.blocks_total, total);
    assert_int_equal(t.blocks_seen, seen);
    rb_kvtrace_free(&t);
}

/* The hit rate against tests/kvtrace_hits.py, which reads the trace with Python's json module. */
static void test_hit_rate_independent(void **state)
{
    (void)state;
    FILE *p = popen("python3 " RB_FIXTURES_DIR "/../kvtrace_hits.py " MOONCAKE, "r");
    assert_non_null(p);
    char out[512] = "";
    size_t len = fread(out, 1, sizeof out - 1, p);
    out[len] = '\0';
    assert_int_equal(pclose(p), 0);
    cJSON *j = cJSON_Parse(out);
    assert_non_null(j);
    struct rb_kvtrace t;
    char err[512];
    assert_int_equal(rb_kvtrace_load(MOONCAKE, &t, err, sizeof err), 0);
    assert_true(cJSON_GetObjectItem(j, "requests")->valuedouble == (double)t.n);
    assert_true(cJSON_GetObjectItem(j, "blocks_total")->valuedouble == (double)t.blocks_total);
    assert_true(cJSON_GetObjectItem(j, "blocks_seen")->valuedouble == (double)t.blocks_seen);
    assert_true(cJSON_GetObjectItem(j, "hit_rate")->valuedouble == (double)t.blocks_seen / (double)t.blocks_total);
    cJSON_Delete(j);
    rb_kvtrace_free(&t);
}

static void test_burstgpt_sample(void **state)
{
    (void)state;
    struct rb_kvtrace t;
    char err[512];
    assert_int_equal(rb_kvtrace_load(BURSTGPT, &t, err, sizeof err), 0);
    assert_int_equal(t.fmt, RB_KVTRACE_BURSTGPT);
    assert_int_equal(t.block_tokens, 0);
    /* 200 rows, 14 of them failures (0 response tokens), left out */
    assert_int_equal(t.n, 186);
    assert_int_equal(rb_kvtrace_skipped(&t), 14);
    /* 31.558,ChatGPT,477,145,622,API log */
    assert_true(t.req[0].t_s == 0.0);
    assert_int_equal(t.req[0].input_tokens, 477);
    assert_int_equal(t.req[0].output_tokens, 145);
    assert_int_equal(t.req[0].n_blocks, 0);
    assert_null(t.req[0].blocks);
    assert_null(t.req[0].seen);
    /* 31.638,GPT-4,339,0,339,API log is a failure; next 31.705,ChatGPT,257,1431,1688,API log */
    assert_true(t.req[1].t_s == 31.705 - 31.558);
    assert_int_equal(t.req[1].input_tokens, 257);
    assert_int_equal(t.req[1].output_tokens, 1431);
    /* 1354.517,ChatGPT,129,110,239,Conversation log */
    assert_true(t.req[185].t_s == 1354.517 - 31.558);
    assert_int_equal(t.req[185].input_tokens, 129);
    assert_int_equal(t.req[185].output_tokens, 110);
    assert_int_equal(t.blocks_total, 0);
    assert_int_equal(t.blocks_seen, 0);
    rb_kvtrace_free(&t);
}

/* ---- what the formats allow ---- */

static void test_mooncake_variants(void **state)
{
    (void)state;
    /* A byte order mark, CRLF, blank lines, unknown keys in any order, a fractional timestamp not starting at
     * 0, equal timestamps, an empty hash_ids, and an id twice in one request (seen only from earlier ones). */
    const char *text = "\xEF\xBB\xBF{\"hash_ids\": [7, 8], \"timestamp\": 1000.5, \"input_length\": 600, "
                       "\"output_length\": 3, \"model\": {\"name\": \"x\", \"tags\": [1, 2]}}\r\n"
                       "\r\n   \n"
                       "{\"timestamp\":1000.5,\"input_length\":0,\"output_length\":0,\"hash_ids\":[]}\n"
                       "\t{\"timestamp\": 3000, \"input_length\": 2000, \"output_length\": 4294967295, "
                       "\"hash_ids\": [9, 9, 8, 9007199254740991]}   ";
    struct rb_kvtrace t;
    char err[512];
    assert_int_equal(load_text(text, &t, err, sizeof err), 0);
    assert_int_equal(t.fmt, RB_KVTRACE_MOONCAKE);
    assert_int_equal(t.n, 3);
    assert_true(t.req[0].t_s == 0.0);
    assert_int_equal(t.req[0].input_tokens, 600);
    assert_ids(&t.req[0], (const uint64_t[]){7, 8}, (const uint8_t[]){0, 0}, 2);
    assert_true(t.req[1].t_s == 0.0);
    assert_int_equal(t.req[1].n_blocks, 0);
    assert_true(t.req[2].t_s == 1.9995);
    assert_int_equal(t.req[2].output_tokens, UINT32_MAX);
    assert_ids(&t.req[2], (const uint64_t[]){9, 9, 8, 9007199254740991ull}, (const uint8_t[]){0, 0, 1, 0}, 4);
    assert_int_equal(t.blocks_total, 6);
    assert_int_equal(t.blocks_seen, 1);
    rb_kvtrace_free(&t);
}

static void test_burstgpt_variants(void **state)
{
    (void)state;
    /* Columns in another order, quoted fields (a comma and a doubled quote inside), blanks around values,
     * CRLF, integer and exponent timestamps, a failure row first: times count from the first request kept. */
    const char *text = "Log Type,\"Response tokens\",Model,Timestamp,Request tokens,Total tokens\r\n"
                       "API log,0,ChatGPT,2,10,10\r\n"
                       "\"Conversation log, \"\"web\"\"\", 7 ,\"GPT-4\",2.5,\"20\",27\r\n"
                       "API log,4294967295,ChatGPT,  4e1 ,0,4294967295\r\n";
    struct rb_kvtrace t;
    char err[512];
    assert_int_equal(load_text(text, &t, err, sizeof err), 0);
    assert_int_equal(t.fmt, RB_KVTRACE_BURSTGPT);
    assert_int_equal(t.n, 2);
    assert_int_equal(rb_kvtrace_skipped(&t), 1);
    assert_true(t.req[0].t_s == 0.0);
    assert_int_equal(t.req[0].input_tokens, 20);
    assert_int_equal(t.req[0].output_tokens, 7);
    assert_true(t.req[1].t_s == 37.5);
    assert_int_equal(t.req[1].input_tokens, 0);
    assert_int_equal(t.req[1].output_tokens, UINT32_MAX);
    rb_kvtrace_free(&t);
}

static void test_unreadable(void **state)
{
    (void)state;
    struct rb_kvtrace t;
    char err[512];
    assert_int_equal(rb_kvtrace_load("/nonexistent/trace.jsonl", &t, err, sizeof err), -ENOENT);
    assert_string_equal(err, "/nonexistent/trace.jsonl: cannot read: No such file or directory");
    assert_int_equal(rb_kvtrace_load(RB_FIXTURES_DIR "/traces", &t, err, sizeof err), -EISDIR);
    assert_null(t.req);
    /* No room for a message is allowed. */
    assert_int_equal(rb_kvtrace_load("/nonexistent/trace.jsonl", &t, NULL, 0), -ENOENT);
}

/* ---- malformed input: -EINVAL and the line ---- */

#define MC(ts, in, out, ids) "{\"timestamp\": " ts ", \"input_length\": " in ", \"output_length\": " out \
                             ", \"hash_ids\": " ids "}\n"
#define GOOD MC("0", "100", "5", "[1]")

static void test_mooncake_errors(void **state)
{
    (void)state;
    expect_error(GOOD GOOD "{oops\n", 3, "not JSON");
    expect_error(GOOD "\n" "{\"timestamp\": 1, \"input_length\": 2, \"hash_ids\": []}\n", 3, "no \"output_length\"");
    expect_error(GOOD "{\"input_length\": 2, \"output_length\": 1, \"hash_ids\": []}\n", 2, "no \"timestamp\"");
    expect_error(GOOD "{\"timestamp\": 1, \"input_length\": 2, \"output_length\": 1}\n", 2, "no \"hash_ids\"");
    expect_error(GOOD MC("1", "-1", "5", "[]"), 2, "\"input_length\" is not an integer from 0 to 4294967295");
    expect_error(GOOD MC("1", "1.5", "5", "[]"), 2, "\"input_length\" is not an integer");
    expect_error(GOOD MC("1", "4294967296", "5", "[]"), 2, "\"input_length\" is not an integer");
    expect_error(GOOD MC("1", "\"12\"", "5", "[]"), 2, "\"input_length\" is not an integer");
    expect_error(GOOD MC("1", "12", "1e999", "[]"), 2, "\"output_length\" is not an integer");
    expect_error(GOOD MC("1", "12", "5", "5"), 2, "\"hash_ids\" is not an array");
    expect_error(GOOD MC("1", "12", "5", "{}"), 2, "\"hash_ids\" is not an array");
    expect_error(GOOD MC("1", "12", "5", "[1, -2]"), 2, "hash_ids[1] is not an integer");
    expect_error(GOOD MC("1", "12", "5", "[1, 2, 0.5]"), 2, "hash_ids[2] is not an integer");
    expect_error(GOOD MC("1", "12", "5", "[\"a\"]"), 2, "hash_ids[0] is not an integer");
    expect_error(GOOD MC("1", "12", "5", "[9007199254740992]"), 2, "hash_ids[0] is not an integer");
    expect_error(GOOD MC("1", "12", "5", "[null]"), 2, "hash_ids[0] is not an integer");
    expect_error(GOOD MC("-1", "12", "5", "[]"), 2, "\"timestamp\" is not a number of milliseconds");
    expect_error(GOOD MC("\"5\"", "12", "5", "[]"), 2, "\"timestamp\" is not a number");
    expect_error(MC("10", "1", "1", "[]") MC("20", "1", "1", "[]") MC("19.5", "1", "1", "[]"), 3,
                 "\"timestamp\" 19.5 is before the previous request's 20");
    expect_error(GOOD "{\"timestamp\": 1} x\n", 2, "text after the JSON object (column 18)");
    expect_error(GOOD "[1, 2]\n", 2, "not a JSON object");
    expect_error(GOOD "\n\n{\"timestamp\": 1,\n", 4, "not JSON");
    /* Integers are digits only; a key read twice is refused; unknown values are still JSON, 64 levels deep. */
    expect_error(GOOD MC("1", "1.0", "5", "[]"), 2, "\"input_length\" is not an integer");
    expect_error(GOOD MC("1", "1e3", "5", "[]"), 2, "\"input_length\" is not an integer");
    expect_error(GOOD MC("1", "-0", "5", "[]"), 2, "\"input_length\" is not an integer");
    expect_error(GOOD MC("1", "12", "5", "[1e0]"), 2, "hash_ids[0] is not an integer");
    expect_error(GOOD MC("1", "12", "5", "[01]"), 2, "not JSON (column 72)");
    expect_error(GOOD "{\"timestamp\": 1, \"timestamp\": 2}\n", 2, "\"timestamp\" twice");
    expect_error(GOOD "{\"x\": \"\\q\", \"timestamp\": 1}\n", 2, "not JSON");
    expect_error(GOOD "{\"x\": tru}\n", 2, "not JSON (column 7)");
    char deep[256];
    for (int levels = 63; levels <= 64; levels++) {
        strcpy(deep, "{\"x\": ");
        for (int i = 0; i < 2 * levels; i++)
            strcat(deep, i < levels ? "[" : "]");
        strcat(deep, ", \"timestamp\": 1, \"input_length\": 2, \"output_length\": 3, \"hash_ids\": [4]}\n");
        if (levels == 64) {
            expect_error(deep, 1, "not JSON (column 70)");
        } else {
            struct rb_kvtrace t;
            char err[512];
            assert_int_equal(load_text(deep, &t, err, sizeof err), 0);
            assert_int_equal(t.req[0].blocks[0], 4);
            rb_kvtrace_free(&t);
        }
    }
}

static void test_burstgpt_errors(void **state)
{
    (void)state;
#define HDR "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
#define ROW "1.5,ChatGPT,10,5,15,API log\n"
    expect_error(HDR ROW ROW "2,ChatGPT,10,5,15\n", 4, "5 fields where the header has 6");
    expect_error(HDR ROW "2,ChatGPT,10,5,15,API log,x\n", 3, "7 fields where the header has 6");
    expect_error(HDR "abc,ChatGPT,10,5,15,API log\n", 2, "\"Timestamp\" is not a number of seconds");
    expect_error(HDR "-1,ChatGPT,10,5,15,API log\n", 2, "\"Timestamp\" is not a number");
    expect_error(HDR "nan,ChatGPT,10,5,15,API log\n", 2, "\"Timestamp\" is not a number");
    expect_error(HDR "0x10,ChatGPT,10,5,15,API log\n", 2, "\"Timestamp\" is not a number");
    expect_error(HDR "1e999,ChatGPT,10,5,15,API log\n", 2, "\"Timestamp\" is not a number");
    expect_error(HDR ",ChatGPT,10,5,15,API log\n", 2, "\"Timestamp\" is not a number");
    expect_error(HDR ROW "2,ChatGPT,12.5,5,15,API log\n", 3, "\"Request tokens\" is not an integer");
    expect_error(HDR ROW "2,ChatGPT,,5,15,API log\n", 3, "\"Request tokens\" is not an integer");
    expect_error(HDR ROW "2,ChatGPT,10,-5,15,API log\n", 3, "\"Response tokens\" is not an integer");
    expect_error(HDR ROW "2,ChatGPT,10,4294967296,15,API log\n", 3, "\"Response tokens\" is not an integer");
    expect_error(HDR ROW "2,\"ChatGPT,10,5,15,API log\n", 3, "a quoted field has no closing quote on its line");
    expect_error(HDR ROW "2,\"Chat\"GPT,10,5,15,API log\n", 3, "text after a quoted field's closing quote");
    expect_error(HDR ROW "2,Chat\"GPT,10,5,15,API log\n", 3, "a quote inside an unquoted field");
    expect_error(HDR ROW "1.4,ChatGPT,10,5,15,API log\n", 3, "\"Timestamp\" 1.4 is before the previous");
    expect_error("Timestamp,Model,Request tokens,Total tokens\n" ROW, 1, "the header has no \"Response tokens\"");
    expect_error("Timestamp,Request tokens,Response tokens,Timestamp\n", 1, "column \"Timestamp\" twice");
    expect_error(HDR, 2, "no requests after the header");
    expect_error(HDR "\n", 3, "no requests after the header");
    expect_error(HDR "1,ChatGPT,10,0,10,API log\n", 3, "every row has 0 response tokens");
#undef HDR
#undef ROW
}

static void test_neither_format(void **state)
{
    (void)state;
    expect_error("", 1, "no requests: the file is empty");
    expect_error("\n  \n\r\n", 4, "no requests: the file is empty");
    expect_error("\n" "hello, world\n", 2, "neither a Mooncake JSON object nor a BurstGPT CSV header");
    expect_error("[{\"timestamp\": 0}]\n", 1, "neither a Mooncake JSON object nor a BurstGPT CSV header");
    expect_error("time,\"Timestamp\n", 1, "neither a Mooncake JSON object nor a BurstGPT CSV header");
}

static void test_limits(void **state)
{
    (void)state;
    /* A line one byte over the limit, then one at it (which is not JSON: the limit is not what fails). */
    size_t n = RB_KVTRACE_LINE_MAX + 1;
    char *text = malloc(strlen(GOOD) + n + 2);
    assert_non_null(text);
    strcpy(text, GOOD);
    memset(text + strlen(GOOD), ' ', n);
    text[strlen(GOOD)] = '{';
    strcpy(text + strlen(GOOD) + n, "\n");
    expect_error(text, 2, "line longer than 1048576 bytes");
    text[strlen(GOOD) + n - 1] = '\n';
    expect_error(text, 2, "not JSON");
    free(text);
    /* A NUL byte inside a line */
    char path[64], err[512];
    static const char nul[] = GOOD "{\"timestamp\": 1\0}\n";
    write_trace(path, nul, sizeof nul - 1);
    struct rb_kvtrace t;
    assert_int_equal(rb_kvtrace_load(path, &t, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, ":2: a NUL byte"));
    /* A message cut to fit err stays NUL-terminated. */
    char small[12];
    assert_int_equal(rb_kvtrace_load(path, &t, small, sizeof small), -EINVAL);
    assert_int_equal(strlen(small), sizeof small - 1);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mooncake_sample),
        cmocka_unit_test(test_seen_flags_brute_force),
        cmocka_unit_test(test_hit_rate_independent),
        cmocka_unit_test(test_burstgpt_sample),
        cmocka_unit_test(test_mooncake_variants),
        cmocka_unit_test(test_burstgpt_variants),
        cmocka_unit_test(test_unreadable),
        cmocka_unit_test(test_mooncake_errors),
        cmocka_unit_test(test_burstgpt_errors),
        cmocka_unit_test(test_neither_format),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
