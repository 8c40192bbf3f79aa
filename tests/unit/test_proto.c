/* Unit tests for the protocols as plug-ins: their registration, their option rows' ownership and capabilities. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "target_int.h"
#include "target_native_int.h"

/* Every protocol registered once, by order, each scheme its own. */
static void test_registered_once(void **state)
{
    (void)state;
    size_t n;
    const struct rb_proto *const *all = rb_proto_list(&n);
    /* These five in this order (a protocol added later may come anywhere). */
    const char *want[] = {"http", "https", "s3", "ais", "file"};
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(all[i]->scheme, all[j]->scheme);
        assert_ptr_equal(rb_proto_named(all[i]->scheme, strlen(all[i]->scheme)), all[i]);
        assert_non_null(all[i]->parse);
        assert_non_null(all[i]->object_url);
        if (w < 5 && strcmp(all[i]->scheme, want[w]) == 0)
            w++;
    }
    assert_int_equal(w, 5);
    assert_null(rb_proto_named("ftp", 3));
    assert_null(rb_proto_named("s", 1));
    /* The native engine's protocols come from the same rows: file:// has neither a native side nor a libcurl set-up. */
    const char *nat = rb_proto_native_only();
    assert_non_null(strstr(nat, "http://, https://, s3://"));
    assert_non_null(strstr(nat, "ais://"));
    assert_null(strstr(nat, "file://"));
    const struct rb_proto *file = rb_proto_named("file", 4);
    assert_null(file->native);
    assert_null(file->setup);
    assert_int_equal(rb_target_url_caps("/data"), RB_TCAP_FILES);
    assert_int_equal(rb_target_url_caps("file:///data"), RB_TCAP_FILES);
    assert_int_equal(rb_target_url_caps("ftp://b"), 0);
}

/* rb_target_options adds each protocol's rows once, their values landing in its own slot of cfg. */
static void test_rows_land_in_their_slot(void **state)
{
    (void)state;
    struct rb_opts t = {0};
    struct rb_target_cfg cfg = {0};
    rb_target_options(&t, &cfg);
    const char *names[] = {"endpoint", "timeout", "insecure", "region", "virtual-host", "credentials-file", "profile",
                           "sign-payload", "provider", "ais-direct"};
    assert_true(t.n >= sizeof names / sizeof names[0]);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        assert_string_equal(t.v[i].name, names[i]);
        if (i >= 3) {
            /* A protocol's row writes into cfg's popts, where rb_target_cfg_opt finds it. */
            assert_true((unsigned char *)t.v[i].dest >= cfg.popts &&
                        (unsigned char *)t.v[i].dest < cfg.popts + sizeof cfg.popts);
            assert_ptr_equal(t.v[i].dest, rb_target_cfg_opt(&cfg, names[i]));
        }
    }
    assert_null(rb_target_cfg_opt(&cfg, "endpoint"));
    /* s3's and ais's options do not share bytes. */
    const unsigned char *s3 = rb_proto_opts(&cfg, rb_proto_named("s3", 2));
    const unsigned char *ais = rb_proto_opts(&cfg, rb_proto_named("ais", 3));
    assert_true(s3 + rb_proto_named("s3", 2)->opts_size <= ais || ais + rb_proto_named("ais", 3)->opts_size <= s3);
}

/* An option another protocol owns: one line naming it and its owner, -EINVAL (a usage error, exit 2), no target. */
static void refused(const char *url, const char *opt, bool flag, const char *want)
{
    struct rb_target_cfg cfg = {.url = url, .endpoints = {1, {"http://127.0.0.1:9"}}};
    if (strstr(url, "file:") == url)
        cfg.endpoints.n = 0;
    if (flag)
        *(bool *)rb_target_cfg_opt(&cfg, opt) = true;
    else
        *(const char **)rb_target_cfg_opt(&cfg, opt) = "aws";
    struct rb_target *t = (struct rb_target *)1;
    char err[300] = "";
    assert_int_equal(rb_target_open(&t, &cfg, err, sizeof err), -EINVAL);
    assert_null(t);
    assert_string_equal(err, want);
    assert_null(strchr(err, '\n'));
}

static void test_foreign_option_refused(void **state)
{
    (void)state;
    refused("file:///tmp", "sign-payload", true, "--sign-payload: only an s3:// target signs its requests' bodies");
    refused("http://127.0.0.1:9/d", "virtual-host", true,
            "--virtual-host: only an s3:// target has virtual-host style (bucket.host)");
    refused("ais://bkt", "virtual-host", true, "--virtual-host: only an s3:// target has virtual-host style (bucket.host)");
    refused("s3://bkt", "ais-direct", true, "--ais-direct: only an ais:// target has a cluster map to place objects by");
    refused("https://127.0.0.1:9/d", "provider", false, "--provider: only an ais:// target has a bucket provider");
    /* Rows without a refusal (credentials, region) are the owner's alone: another protocol's target opens. */
    struct rb_target_cfg cfg = {.url = "ais://bkt", .endpoints = {1, {"http://127.0.0.1:9"}}};
    *(const char **)rb_target_cfg_opt(&cfg, "region") = "eu-west-1";
    *(const char **)rb_target_cfg_opt(&cfg, "profile") = "bench";
    struct rb_target *t = NULL;
    char err[300] = "";
    assert_int_equal(rb_target_open(&t, &cfg, err, sizeof err), 0);
    assert_string_equal(rb_target_scheme(t), "ais");
    rb_target_close(t);
}

/* A command with two targets keeps an option for the one whose protocol owns it. */
static void test_only_for(void **state)
{
    (void)state;
    struct rb_target_cfg cfg = {0};
    *(bool *)rb_target_cfg_opt(&cfg, "virtual-host") = true;
    *(const char **)rb_target_cfg_opt(&cfg, "provider") = "aws";
    struct rb_target_cfg s3 = cfg, ais = cfg, file = cfg;
    rb_target_cfg_only_for(&s3, "s3://b", "virtual-host");
    assert_true(*(bool *)rb_target_cfg_opt(&s3, "virtual-host"));
    rb_target_cfg_only_for(&ais, "ais://b", "virtual-host");
    assert_false(*(bool *)rb_target_cfg_opt(&ais, "virtual-host"));
    assert_string_equal(*(const char **)rb_target_cfg_opt(&ais, "provider"), "aws");
    rb_target_cfg_only_for(&file, "/data", NULL);
    assert_false(*(bool *)rb_target_cfg_opt(&file, "virtual-host"));
    assert_null(*(const char **)rb_target_cfg_opt(&file, "provider"));
}

/* What a target's own options turn on is a capability of that target, not of its protocol. */
static void test_option_caps(void **state)
{
    (void)state;
    setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
    struct rb_target_cfg cfg = {.url = "s3://bkt", .endpoints = {1, {"https://127.0.0.1:9"}}};
    struct rb_target *t = NULL;
    char err[300] = "";
    assert_int_equal(rb_target_open(&t, &cfg, err, sizeof err), 0);
    assert_false(rb_target_can(t, RB_TCAP_SIGNED_BODIES));
    assert_true(rb_target_can(t, RB_TCAP_MULTIPART | RB_TCAP_LISTS));
    assert_true(rb_target_endpoint_tls(t, 0));
    assert_false(rb_target_endpoint_tls(t, 1));
    assert_non_null(rb_target_native(t));
    rb_target_close(t);
    *(bool *)rb_target_cfg_opt(&cfg, "sign-payload") = true;
    assert_int_equal(rb_target_open(&t, &cfg, err, sizeof err), 0);
    assert_true(rb_target_can(t, RB_TCAP_SIGNED_BODIES));
    /* The engine names the option in its messages by asking which row gave the capability. */
    assert_string_equal(rb_target_cap_option(t, RB_TCAP_SIGNED_BODIES), "sign-payload");
    assert_null(rb_target_cap_option(t, RB_TCAP_MULTIPART));
    rb_target_close(t);
    struct rb_target_cfg ac = {.url = "ais://bkt", .endpoints = {1, {"http://127.0.0.1:9"}}};
    *(bool *)rb_target_cfg_opt(&ac, "ais-direct") = true;
    assert_int_equal(rb_target_open(&t, &ac, err, sizeof err), 0);
    assert_true(rb_target_can(t, RB_TCAP_DIRECT | RB_TCAP_REDIRECTS));
    assert_string_equal(rb_target_cap_option(t, RB_TCAP_DIRECT), "ais-direct");
    assert_false(rb_target_endpoint_tls(t, 0));
    rb_target_close(t);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
}

/* The schemes named in a refusal come from the protocols' capabilities, in registration order. */
static void test_schemes_by_cap(void **state)
{
    (void)state;
    char buf[128];
    rb_proto_schemes(RB_TCAP_MULTIPART, true, buf, sizeof buf);
    assert_string_equal(buf, "s3://");
    rb_proto_schemes(RB_TCAP_FILES, false, buf, sizeof buf);
    assert_string_equal(buf, "http://, https://, s3:// and ais://");
    rb_proto_schemes(RB_TCAP_FILES, true, buf, sizeof buf);
    assert_string_equal(buf, "file://");
    rb_proto_schemes(RB_TCAP_FILES, false, buf, 12); /* cut short, still a string */
    assert_int_equal(strlen(buf), 11);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registered_once), cmocka_unit_test(test_rows_land_in_their_slot),
        cmocka_unit_test(test_foreign_option_refused), cmocka_unit_test(test_only_for),
        cmocka_unit_test(test_option_caps), cmocka_unit_test(test_schemes_by_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
