/* Unit tests for loader/proto/ais_smap.c: XXH64 against libxxhash's values, AIStore's HRW placement, the map's JSON. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ais_smap_int.h"

/* Values libxxhash 0.8.1's XXH64() gives (checked once with it; the library is not a build dependency). */
static void test_xxh64(void **state)
{
    (void)state;
    assert_true(rb_xxh64("", 0, 0) == 0xEF46DB3751D8E999ull);
    assert_true(rb_xxh64("a", 1, 0) == 0xD24EC4F1A98C6E5Bull);
    assert_true(rb_xxh64("abc", 3, 0) == 0x44BC2CF5AD770999ull);
    const char *s = "Nobody inspects the spammish repetition"; /* 39 bytes: the 32-byte stripes, then 7 */
    assert_true(rb_xxh64(s, strlen(s), 0) == 0xFBCEA83C8A378BF1ull);
    assert_true(rb_xxh64("t1", 2, RB_AIS_MLCG32) == 0xC5444CB0FA9287ADull);
    s = "ais/@#/bkt/obj-00000007";
    assert_true(rb_xxh64(s, strlen(s), RB_AIS_MLCG32) == 0x03C8A6E70EAD5B37ull);
    char x[100];
    memset(x, 'x', sizeof x);
    assert_true(rb_xxh64(x, sizeof x, RB_AIS_MLCG32) == 0x6E4CFC33D6A1DF09ull);
    s = "ais/@#/mix/a1/rb-20261126T053000Z-0123abcd-obj-00000012";
    assert_true(rb_xxh64(s, strlen(s), RB_AIS_MLCG32) == 0x7AD3EE3D1FACF193ull);
}

static void test_xoshiro(void **state)
{
    (void)state;
    /* splitmix64 twice, * 5, rotl 7, * 9 (AIStore's cmn/xoshiro256.Hash), as tests/servers/peer.py computes it. */
    assert_true(rb_ais_xoshiro_hash(0) == 0x1A70A846BD9CC2A9ull);
    assert_true(rb_ais_xoshiro_hash(0x03C8A6E70EAD5B37ull) == 0x11545C44B675221Eull);
}

#define NODE(id, port, flags)                                                                                          \
    "\"" id "\":{\"daemon_id\":\"" id "\",\"daemon_type\":\"target\",\"flags\":" #flags ",\"public_net\":"              \
    "{\"node_ip_addr\":\"127.0.0.1\",\"daemon_port\":\"" #port "\",\"direct_url\":\"http://127.0.0.1:" #port "\"}}"

/* Three active targets (and one in maintenance, one being decommissioned): owners as peer.py's HRW gives them. */
static void test_owner(void **state)
{
    (void)state;
    const char *json = "{\"version\":\"7\",\"tmap\":{" NODE("t-gamma", 3, 0) "," NODE("t-maint", 9, 4) ","
                       NODE("t-alpha", 1, 0) "," NODE("t-decomm", 8, 8) "," NODE("t-beta", 2, 0) "}}";
    struct rb_ais_smap *m = rb_ais_smap_new("ais", "bkt");
    char err[200] = "";
    assert_int_equal(rb_ais_smap_parse(m, json, err, sizeof err), 0);
    assert_int_equal((int)m->n, 3);
    assert_string_equal(m->version, "7");
    assert_string_equal(m->t[0].id, "t-alpha"); /* sorted by id */
    assert_string_equal(m->t[2].url, "http://127.0.0.1:3");
    assert_string_equal(m->prefix, "ais/@#/bkt/");
    static const char *const want[] = {"t-alpha", "t-alpha", "t-gamma", "t-gamma", "t-beta", "t-alpha",
                                       "t-alpha", "t-beta",  "t-gamma", "t-beta",  "t-alpha", "t-alpha"};
    char name[32];
    for (int i = 0; i < 12; i++) {
        snprintf(name, sizeof name, "obj-%08d", i);
        assert_string_equal(m->t[rb_ais_smap_owner(m, name)].id, want[i]);
    }
    rb_ais_smap_free(m);
    /* The provider alias s3 is AIStore's aws in the uname: other owners. */
    m = rb_ais_smap_new("s3", "bkt");
    assert_int_equal(rb_ais_smap_parse(m, json, err, sizeof err), 0);
    assert_string_equal(m->prefix, "aws/@#/bkt/");
    static const char *const want_aws[] = {"t-alpha", "t-gamma", "t-beta", "t-gamma", "t-alpha", "t-gamma"};
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "obj-%08d", i);
        assert_string_equal(m->t[rb_ais_smap_owner(m, name)].id, want_aws[i]);
    }
    rb_ais_smap_free(m);
}

static void bad(const char *json, const char *msg)
{
    struct rb_ais_smap *m = rb_ais_smap_new("ais", "bkt");
    char err[200] = "";
    assert_int_equal(rb_ais_smap_parse(m, json, err, sizeof err), -EPROTO);
    if (!strstr(err, msg))
        fail_msg("\"%s\" lacks \"%s\"", err, msg);
    rb_ais_smap_free(m);
}

static void test_bad_maps(void **state)
{
    (void)state;
    bad("not json", "not AIStore's cluster map");
    bad("{\"tmap\":[]}", "not AIStore's cluster map");
    bad("{\"tmap\":{}}", "no active target");
    bad("{\"tmap\":{" NODE("t-maint", 9, 4) "}}", "no active target");
    bad("{\"tmap\":{\"t1\":{\"public_net\":{\"direct_url\":\"ftp://h:1\"}}}}", "is not http[s]://HOST:PORT");
    bad("{\"tmap\":{\"t1\":{\"public_net\":{\"direct_url\":\"http://h:1/path\"}}}}", "is not http[s]://HOST:PORT");
    bad("{\"tmap\":{\"t1\":{\"public_net\":{\"direct_url\":\"http://\"}}}}", "is not http[s]://HOST:PORT");
    bad("{\"tmap\":{\"t1\":{}}}", "is not http[s]://HOST:PORT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xxh64),
        cmocka_unit_test(test_xoshiro),
        cmocka_unit_test(test_owner),
        cmocka_unit_test(test_bad_maps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
