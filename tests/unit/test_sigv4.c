/* Unit tests for loader/sigv4.c against AWS's published SigV4 vectors (the aws-sig-v4-test-suite and the S3 examples). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sigv4_int.h"

#define SUITE_AKID "AKIDEXAMPLE"
#define SUITE_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define SUITE_DATE "20150830T123600Z"
#define SUITE_SCOPE "Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
/* The S3 developer guide's examples ("Signature Calculations for the Authorization Header"). */
#define S3_AKID "AKIAIOSFODNN7EXAMPLE"
#define S3_SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define S3_DATE "20130524T000000Z"
#define S3_HOST "examplebucket.s3.amazonaws.com"

#define H(n, v) {n, v, sizeof(v) - 1}

static void sign_expect(struct rb_sigv4 *s, const char *date, const char *method, const char *uri, const char *query,
                        const struct rb_sigv4_hdr *h, size_t nh, const char *payload, const char *want)
{
    char out[512];
    int n = rb_sigv4_sign(s, date, method, uri, strlen(uri), query, strlen(query), h, nh, payload, out, sizeof out);
    assert_int_equal(n, (int)strlen(want));
    assert_string_equal(out, want);
}

/* aws-sig-v4-test-suite: get-vanilla, post-vanilla, post-vanilla-query, post-header-key-sort. */
static void test_suite_vanilla(void **state)
{
    (void)state;
    struct rb_sigv4 s;
    assert_int_equal(rb_sigv4_init(&s, SUITE_AKID, SUITE_SECRET, "us-east-1", "service"), 0);
    const struct rb_sigv4_hdr h[] = {H("host", "example.amazonaws.com"), H("x-amz-date", SUITE_DATE)};
    sign_expect(&s, SUITE_DATE, "GET", "/", "", h, 2, RB_SIGV4_EMPTY_SHA256,
                "AWS4-HMAC-SHA256 " SUITE_SCOPE "SignedHeaders=host;x-amz-date, "
                "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
    sign_expect(&s, SUITE_DATE, "POST", "/", "", h, 2, RB_SIGV4_EMPTY_SHA256,
                "AWS4-HMAC-SHA256 " SUITE_SCOPE "SignedHeaders=host;x-amz-date, "
                "Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
    sign_expect(&s, SUITE_DATE, "POST", "/", "Param1=value1", h, 2, RB_SIGV4_EMPTY_SHA256,
                "AWS4-HMAC-SHA256 " SUITE_SCOPE "SignedHeaders=host;x-amz-date, "
                "Signature=28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11");
    const struct rb_sigv4_hdr h3[] = {H("host", "example.amazonaws.com"), H("my-header1", "value1"),
                                      H("x-amz-date", SUITE_DATE)};
    sign_expect(&s, SUITE_DATE, "POST", "/", "", h3, 3, RB_SIGV4_EMPTY_SHA256,
                "AWS4-HMAC-SHA256 " SUITE_SCOPE "SignedHeaders=host;my-header1;x-amz-date, "
                "Signature=c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c");
    rb_sigv4_wipe(&s);
}

/* post-sts-header-before: a session token signed as x-amz-security-token. */
static void test_suite_session_token(void **state)
{
    (void)state;
    struct rb_sigv4 s;
    assert_int_equal(rb_sigv4_init(&s, SUITE_AKID, SUITE_SECRET, "us-east-1", "service"), 0);
    const struct rb_sigv4_hdr h[] = {
        H("host", "example.amazonaws.com"), H("x-amz-date", SUITE_DATE),
        H("x-amz-security-token",
          "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuw"
          "thAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQc"
          "HNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/"
          "oLxBA==")};
    sign_expect(&s, SUITE_DATE, "POST", "/", "", h, 3, RB_SIGV4_EMPTY_SHA256,
                "AWS4-HMAC-SHA256 " SUITE_SCOPE "SignedHeaders=host;x-amz-date;x-amz-security-token, "
                "Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead");
}

/* S3's examples: GET with Range, PUT with a signed payload (the body's hash), ListObjects with a query. */
static void test_s3_examples(void **state)
{
    (void)state;
    struct rb_sigv4 s;
    assert_int_equal(rb_sigv4_init(&s, S3_AKID, S3_SECRET, "us-east-1", "s3"), 0);
    const char *scope = "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ";
    char want[512];

    const struct rb_sigv4_hdr get[] = {H("host", S3_HOST), H("range", "bytes=0-9"),
                                       H("x-amz-content-sha256", RB_SIGV4_EMPTY_SHA256), H("x-amz-date", S3_DATE)};
    snprintf(want, sizeof want, "%sSignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
             "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41", scope);
    sign_expect(&s, S3_DATE, "GET", "/test.txt", "", get, 4, RB_SIGV4_EMPTY_SHA256, want);

    char body_hash[RB_SIGV4_HEX_BYTES];
    rb_sigv4_sha256_hex("Welcome to Amazon S3.", 21, body_hash);
    assert_string_equal(body_hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
    const struct rb_sigv4_hdr put[] = {
        H("date", "Fri, 24 May 2013 00:00:00 GMT"), H("host", S3_HOST),
        {"x-amz-content-sha256", body_hash, 64}, H("x-amz-date", S3_DATE), H("x-amz-storage-class", "REDUCED_REDUNDANCY")};
    snprintf(want, sizeof want, "%sSignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
             "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd", scope);
    sign_expect(&s, S3_DATE, "PUT", "/test%24file.text", "", put, 5, body_hash, want);

    const struct rb_sigv4_hdr list[] = {H("host", S3_HOST), H("x-amz-content-sha256", RB_SIGV4_EMPTY_SHA256),
                                        H("x-amz-date", S3_DATE)};
    snprintf(want, sizeof want, "%sSignedHeaders=host;x-amz-content-sha256;x-amz-date, "
             "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7", scope);
    sign_expect(&s, S3_DATE, "GET", "/", "max-keys=2&prefix=J", list, 3, RB_SIGV4_EMPTY_SHA256, want);
}

/* The key follows the day: signing on another day and back again gives each day's own signature. */
static void test_day_change(void **state)
{
    (void)state;
    struct rb_sigv4 s;
    assert_int_equal(rb_sigv4_init(&s, SUITE_AKID, SUITE_SECRET, "us-east-1", "service"), 0);
    const struct rb_sigv4_hdr h[] = {H("host", "example.amazonaws.com"), H("x-amz-date", SUITE_DATE)};
    const char *vanilla = "AWS4-HMAC-SHA256 " SUITE_SCOPE "SignedHeaders=host;x-amz-date, "
                          "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31";
    char out[512];
    const struct rb_sigv4_hdr h2[] = {H("host", "example.amazonaws.com"), H("x-amz-date", "20150831T000000Z")};
    assert_true(rb_sigv4_sign(&s, "20150831T000000Z", "GET", "/", 1, "", 0, h2, 2, RB_SIGV4_EMPTY_SHA256, out,
                              sizeof out) > 0);
    assert_non_null(strstr(out, "/20150831/us-east-1/service/aws4_request"));
    assert_null(strstr(out, "5fa00fa3"));
    sign_expect(&s, SUITE_DATE, "GET", "/", "", h, 2, RB_SIGV4_EMPTY_SHA256, vanilla);
    /* Too small a buffer is refused, never overrun. */
    assert_int_equal(rb_sigv4_sign(&s, SUITE_DATE, "GET", "/", 1, "", 0, h, 2, RB_SIGV4_EMPTY_SHA256, out, 100),
                     -ENOSPC);
}

static void test_date_and_limits(void **state)
{
    (void)state;
    char d[RB_SIGV4_DATE_BYTES];
    rb_sigv4_date(1440938160, d); /* 2015-08-30T12:36:00Z */
    assert_string_equal(d, SUITE_DATE);
    rb_sigv4_date(951782400, d);
    assert_string_equal(d, "20000229T000000Z");
    char big[300];
    memset(big, 'k', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    struct rb_sigv4 s;
    assert_int_equal(rb_sigv4_init(&s, big, "secret", "us-east-1", "s3"), -EINVAL);
    assert_int_equal(rb_sigv4_init(&s, "id", big, "us-east-1", "s3"), -EINVAL);
    assert_int_equal(rb_sigv4_init(&s, "id", "secret", "us-east-1", "s3"), 0);
    rb_sigv4_wipe(&s);
    assert_int_equal(s.secret[0], 0);
    rb_sigv4_wipe(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suite_vanilla),
        cmocka_unit_test(test_suite_session_token),
        cmocka_unit_test(test_s3_examples),
        cmocka_unit_test(test_day_change),
        cmocka_unit_test(test_date_and_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
