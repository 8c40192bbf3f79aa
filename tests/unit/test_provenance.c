/* Unit tests of the provenance record: canonical JSON, its SHA-256 (a vector computed independently), the core
 * configuration drawn from a result record. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/provenance.h"

/*
 * The vector: Python's json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=False) of the same
 * value, and hashlib.sha256 of its UTF-8 bytes.
 */
static const char vector_in[] = "{ \"b\": [1, 2.5, \"x\\ny\\t\\u0001\"], \"a\": null, \"c\": true,\n"
                                "  \"\xc3\xa9\": \"\xc3\xbc\\\"\\\\\", \"n\": -0.1, \"big\": 12345678901234,\n"
                                "  \"z\": {\"y\": 1e-7, \"x\": []} }";
static const char vector_canonical[] = "{\"a\":null,\"b\":[1,2.5,\"x\\ny\\t\\u0001\"],\"big\":12345678901234,"
                                       "\"c\":true,\"n\":-0.1,\"z\":{\"x\":[],\"y\":1e-07},"
                                       "\"\xc3\xa9\":\"\xc3\xbc\\\"\\\\\"}";
static const char vector_sha256[] = "b608782bfa483b236e0b82508bb93518450a9845207f266b3c2b3b6ba02c662d";

static void test_canonical_and_sha256_vector(void **state)
{
    (void)state;
    cJSON *v = cJSON_Parse(vector_in);
    assert_non_null(v);
    struct rb_buf b = {0};
    assert_int_equal(rb_json_canonical(v, &b), 0);
    assert_string_equal(b.s, vector_canonical);
    rb_buf_free(&b);
    char hex[65];
    assert_int_equal(rb_json_sha256(v, hex), 0);
    assert_string_equal(hex, vector_sha256);
    cJSON_Delete(v);
    /* The empty array's hash is SHA-256 of the two bytes "[]". */
    cJSON *empty = cJSON_CreateArray();
    assert_int_equal(rb_json_sha256(empty, hex), 0);
    assert_string_equal(hex, "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945");
    cJSON_Delete(empty);
}

static void test_canonical_refuses_nan(void **state)
{
    (void)state;
    cJSON *v = cJSON_CreateObject();
    cJSON_AddNumberToObject(v, "x", NAN);
    struct rb_buf b = {0};
    assert_int_equal(rb_json_canonical(v, &b), -EINVAL);
    rb_buf_free(&b);
    char hex[65];
    assert_int_equal(rb_json_sha256(v, hex), -EINVAL);
    cJSON_Delete(v);
}

static void test_core_of_train_and_others(void **state)
{
    (void)state;
    cJSON *root = cJSON_Parse("{\"command\": \"load train\", \"config\": {\"format\": \"raw\", \"epochs\": 2, "
                              "\"steps\": 0, \"populate\": true}, \"mpi\": {\"size\": 4, \"hosts\": 2}, "
                              "\"summary\": {\"workload\": {\"preset\": \"unet3d\", \"batch_size\": 7}, "
                              "\"dataset\": {\"bytes\": 1000}}}");
    assert_non_null(root);
    cJSON *core = rb_provenance_core(root);
    assert_non_null(core);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(core, "workload")), "unet3d");
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(core, "batch_size")), 7);
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(core, "epochs")), 2);
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(core, "dataset_bytes")), 1000);
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(core, "ranks")), 4);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(core, "read_threads")));
    assert_null(cJSON_GetObjectItem(core, "populate")); /* not allow-listed */
    char h1[65], h2[65];
    assert_int_equal(rb_json_sha256(core, h1), 0);
    cJSON_Delete(core);
    /* A workload name recorded as a string is taken as it is; a changed option changes the hash. */
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(root, "summary"), "workload", cJSON_CreateString("unet3d"));
    core = rb_provenance_core(root);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(core, "workload")), "unet3d");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(core, "batch_size")));
    assert_int_equal(rb_json_sha256(core, h2), 0);
    assert_string_not_equal(h1, h2);
    cJSON_Delete(core);
    cJSON *p = rb_provenance_build(root);
    assert_non_null(p);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "schema")), RB_PROVENANCE_SCHEMA);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "core_config_sha256")), h2);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "rules_edition")), "v3.0");
    cJSON_Delete(p);
    cJSON_ReplaceItemInObject(root, "command", cJSON_CreateString("load get"));
    assert_null(rb_provenance_core(root));
    assert_null(rb_provenance_build(root));
    cJSON_Delete(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_and_sha256_vector),
        cmocka_unit_test(test_canonical_refuses_nan),
        cmocka_unit_test(test_core_of_train_and_others),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
