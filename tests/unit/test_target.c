/* Unit tests for the loader's targets: URL parsing, object URLs, credentials and listing pages. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "railbench/clock.h"
#include "target_ais_int.h"
#include "target_int.h"
#include "target_s3_int.h"

static const char *const EP[] = {"http://127.0.0.1:9000", "http://localhost:9001/"};

/* Sets a protocol's option in cfg as the command line would. */
static void set_str(struct rb_target_cfg *cfg, const char *name, const char *v)
{
    const char **dest = rb_target_cfg_opt(cfg, name);
    assert_non_null(dest);
    *dest = v;
}

static void set_flag(struct rb_target_cfg *cfg, const char *name, bool v)
{
    bool *dest = rb_target_cfg_opt(cfg, name);
    assert_non_null(dest);
    *dest = v;
}

static struct rb_target *open_ok(const struct rb_target_cfg *cfg)
{
    char err[512] = "";
    struct rb_target *t = NULL;
    int rc = rb_target_open(&t, cfg, err, sizeof err);
    if (rc)
        fail_msg("%s: rc %d: %s", cfg->url, rc, err);
    return t;
}

static void open_fails(const char *url, int want, const char *needle)
{
    char err[512] = "";
    struct rb_target *t = NULL;
    struct rb_target_cfg cfg = {.url = url, .endpoints = {1, {EP[0]}}};
    int rc = rb_target_open(&t, &cfg, err, sizeof err);
    if (rc != want || !strstr(err, needle))
        fail_msg("%s: rc %d (want %d), message \"%s\" lacks \"%s\"", url, rc, want, err, needle);
    assert_null(t);
}

static void test_http_urls(void **state)
{
    (void)state;
    struct rb_target_cfg cfg = {.url = "http://127.0.0.1:8080/data/"};
    struct rb_target *t = open_ok(&cfg);
    char url[RB_URL_MAX];
    assert_string_equal(rb_target_scheme(t), "http");
    assert_int_equal(rb_target_endpoint_count(t), 1);
    assert_int_equal(rb_target_object_url(t, 0, "a b/c%d", url, sizeof url), 0);
    assert_string_equal(url, "http://127.0.0.1:8080/data/a%20b/c%25d");
    rb_target_close(t);
    /* --endpoint replaces the host, keeps the path; requests go round-robin. */
    cfg.endpoints = (struct rb_strs){2, {EP[0], EP[1]}};
    t = open_ok(&cfg);
    assert_int_equal(rb_target_endpoint_count(t), 2);
    assert_int_equal(rb_target_object_url(t, 3, "o", url, sizeof url), 0);
    assert_string_equal(url, "http://localhost:9001/data/o");
    rb_target_close(t);
    rb_target_close(NULL);

    open_fails("http//127.0.0.1/x", -EINVAL, "expected http://HOST");
    open_fails("gopher://h/x", -EINVAL, "unknown scheme \"gopher\"");
    open_fails("http://127.0.0.1:0/x", -EINVAL, "bad host or port");
    open_fails("http://:80/x", -EINVAL, "bad host or port");
    open_fails("http://h/x?q=1", -EINVAL, "expected http://HOST");
}

/* https is its own table row: same requests, TLS from the URL; only a kind with .evict can empty a tier. */
static void test_https_row_and_evict(void **state)
{
    (void)state;
    struct rb_target_cfg cfg = {.url = "https://127.0.0.1:8443/data"};
    struct rb_target *t = open_ok(&cfg);
    char url[RB_URL_MAX], err[256] = "";
    assert_string_equal(rb_target_scheme(t), "https");
    assert_int_equal(rb_target_object_url(t, 0, "o", url, sizeof url), 0);
    assert_string_equal(url, "https://127.0.0.1:8443/data/o");
    assert_false(rb_target_can_evict(t));
    assert_int_equal(rb_target_evict(t, NULL, NULL, RB_NS_PER_S, NULL, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "needs an AIStore tier"));
    rb_target_close(t);

    cfg.url = "ais://bench";
    cfg.endpoints = (struct rb_strs){1, {EP[0]}};
    t = open_ok(&cfg);
    assert_string_equal(rb_target_scheme(t), "ais");
    assert_true(rb_target_can_evict(t));
    rb_target_close(t);
}

static void test_s3_urls(void **state)
{
    (void)state;
    setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
    unsetenv("AWS_SESSION_TOKEN");
    struct rb_target_cfg cfg = {.url = "s3://my-bucket/some/prefix/", .endpoints = {1, {EP[0]}}};
    set_str(&cfg, "region", "eu-west-1");
    struct rb_target *t = open_ok(&cfg);
    char url[RB_URL_MAX];
    assert_string_equal(rb_target_prefix(t), "some/prefix/");
    assert_string_equal(rb_s3_of(t)->sigv4, "aws:amz:eu-west-1:s3");
    assert_null(rb_s3_of(t)->token_header);
    assert_int_equal(rb_target_object_url(t, 0, "k+1", url, sizeof url), 0);
    assert_string_equal(url, "http://127.0.0.1:9000/my-bucket/k%2B1");
    rb_target_close(t);
    set_flag(&cfg, "virtual-host", true);
    setenv("AWS_SESSION_TOKEN", "tok", 1);
    t = open_ok(&cfg);
    assert_int_equal(rb_target_object_url(t, 0, "k", url, sizeof url), 0);
    assert_string_equal(url, "http://my-bucket.127.0.0.1:9000/k");
    assert_string_equal(rb_s3_of(t)->token_header, "x-amz-security-token: tok");
    rb_target_close(t);
    unsetenv("AWS_SESSION_TOKEN");
    /* The URL's path names a folder, with or without its "/": keys ck/NAME, as file:// and http:// make. */
    static const char *const folders[][2] = {{"s3://my-bucket/ck", "ck/"}, {"s3://my-bucket/ck/", "ck/"},
                                             {"s3://my-bucket/a/b", "a/b/"}, {"s3://my-bucket", ""},
                                             {"s3://my-bucket/", ""}};
    for (size_t i = 0; i < sizeof folders / sizeof folders[0]; i++) {
        struct rb_target_cfg f = {.url = folders[i][0], .endpoints = {1, {EP[0]}}};
        t = open_ok(&f);
        assert_string_equal(rb_target_prefix(t), folders[i][1]);
        rb_target_close(t);
    }
    /* Without endpoints: AWS's regional endpoint. */
    cfg.endpoints.n = 0;
    set_flag(&cfg, "virtual-host", false);
    t = open_ok(&cfg);
    assert_string_equal(t->endpoints[0], "https://s3.eu-west-1.amazonaws.com");
    rb_target_close(t);

    open_fails("s3://UPPER", -EINVAL, "bad bucket name");
    open_fails("s3://ab", -EINVAL, "bad bucket name");
    open_fails("s3://-abc", -EINVAL, "bad bucket name");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    open_fails("s3://abc", -EACCES, "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
    unsetenv("AWS_ACCESS_KEY_ID");
}

static void test_s3_credentials_file(void **state)
{
    (void)state;
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    char path[] = "/tmp/rb_creds_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "[default]\naws_access_key_id=D\naws_secret_access_key=dsecret\n"
                       "[profile bench]\n  aws_access_key_id = B \naws_secret_access_key = bsecret\n"
                       "aws_session_token = btok\n[empty]\naws_access_key_id = E\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    struct rb_target_cfg cfg = {.url = "s3://abc", .endpoints = {1, {EP[0]}}};
    set_str(&cfg, "credentials-file", path);
    struct rb_target *t = open_ok(&cfg);
    assert_string_equal(rb_s3_of(t)->userpwd, "D:dsecret");
    rb_target_close(t);
    set_str(&cfg, "profile", "bench");
    t = open_ok(&cfg);
    assert_string_equal(rb_s3_of(t)->userpwd, "B:bsecret");
    assert_string_equal(rb_s3_of(t)->token_header, "x-amz-security-token: btok");
    rb_target_close(t);
    char err[512];
    set_str(&cfg, "profile", "empty");
    assert_int_equal(rb_target_open(&t, &cfg, err, sizeof err), -EACCES);
    assert_non_null(strstr(err, "lacks aws_access_key_id or aws_secret_access_key"));
    set_str(&cfg, "profile", "none");
    assert_int_equal(rb_target_open(&t, &cfg, err, sizeof err), -EACCES);
    assert_non_null(strstr(err, "profile \"none\" not found"));
    assert_null(strstr(err, "secret"));
    unlink(path);
    assert_int_equal(rb_target_open(&t, &cfg, err, sizeof err), -EACCES);
    assert_non_null(strstr(err, "--credentials-file"));
}

/* The headers handed to libcurl (which signs every one of them) are the headers it sends. */
static void test_s3_setup_signs_what_is_sent(void **state)
{
    (void)state;
    setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
    struct rb_target_cfg cfg = {.url = "s3://abc", .endpoints = {1, {EP[0]}}};
    struct rb_target *t = open_ok(&cfg);
    CURL *easy = curl_easy_init();
    assert_non_null(easy);
    /* "Expect:" and "X-Gone:  " remove a header (nothing is sent); "X-Empty;" sends an empty one. */
    struct curl_slist *h = NULL;
    h = curl_slist_append(h, "Expect:");
    h = curl_slist_append(h, "X-Keep: v");
    h = curl_slist_append(h, "X-Gone:  ");
    h = curl_slist_append(h, "X-Empty;");
    assert_non_null(h);
    assert_int_equal(rb_target_setup(t, easy, RB_LOAD_PUT, &h), 0);
    const char *want[] = {"X-Keep: v", "X-Empty;", "x-amz-content-sha256: UNSIGNED-PAYLOAD"};
    size_t n = 0;
    for (const struct curl_slist *l = h; l; l = l->next, n++) {
        assert_true(n < sizeof want / sizeof want[0]);
        assert_string_equal(l->data, want[n]);
    }
    assert_int_equal(n, sizeof want / sizeof want[0]);
    curl_slist_free_all(h);
    curl_easy_cleanup(easy);
    rb_target_close(t);
}

static void test_s3_list_parse(void **state)
{
    (void)state;
    setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
    struct rb_target_cfg cfg = {.url = "s3://abc", .endpoints = {1, {EP[0]}}};
    struct rb_target *t = open_ok(&cfg);
    const char *page = "<?xml version=\"1.0\"?><ListBucketResult><Name>abc</Name>"
                       "<Contents><Key>a&amp;b &lt;1&gt; &#233;</Key><Size>10</Size></Contents>"
                       "<Contents><Key>c</Key><LastModified>x</LastModified><Size>2048</Size></Contents>"
                       "<IsTruncated>true</IsTruncated><NextContinuationToken>t+/=</NextContinuationToken>"
                       "</ListBucketResult>";
    struct rb_objset s = {0};
    char *next = NULL, err[256];
    assert_int_equal(t->ops->list_parse(t, page, strlen(page), &s, &next, err, sizeof err), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(rb_objset_name(&s, 0, NULL), "a&b <1> \xc3\xa9");
    assert_int_equal(rb_objset_size(&s, 0), 10);
    assert_int_equal(rb_objset_size(&s, 1), 2048);
    assert_string_equal(next, "t+/=");
    free(next);
    const char *bad = "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>";
    assert_int_equal(t->ops->list_parse(t, bad, strlen(bad), &s, &next, err, sizeof err), -EPROTO);
    assert_non_null(strstr(err, "NextContinuationToken"));
    const char *html = "<html>nope</html>";
    assert_int_equal(t->ops->list_parse(t, html, strlen(html), &s, &next, err, sizeof err), -EPROTO);
    char msg[256];
    const char *e = "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>";
    rb_target_error_message(t, e, strlen(e), msg, sizeof msg);
    assert_string_equal(msg, "AccessDenied: Access Denied");
    rb_objset_free(&s);
    rb_target_close(t);
}

static void test_ais(void **state)
{
    (void)state;
    struct rb_target_cfg cfg = {.url = "ais://train/shards/", .endpoints = {1, {EP[0]}}};
    set_str(&cfg, "provider", "aws");
    struct rb_target *t = open_ok(&cfg);
    char url[RB_URL_MAX];
    assert_int_equal(rb_target_object_url(t, 0, "shards/0001.tar", url, sizeof url), 0);
    assert_string_equal(url, "http://127.0.0.1:9000/v1/objects/train/shards/0001.tar?provider=aws");
    rb_target_close(t);
    cfg.url = "ais://train/shards"; /* a folder without its "/" too */
    t = open_ok(&cfg);
    assert_string_equal(rb_target_prefix(t), "shards/");
    const char *page = "{\"uuid\":\"U1\",\"continuation_token\":\"shards/0003\",\"entries\":["
                       "{\"name\":\"shards/0001.tar\",\"size\":\"1075\"},{\"name\":\"shards/0002.tar\",\"size\":4096}]}";
    struct rb_objset s = {0};
    char *next = NULL, err[256];
    assert_int_equal(t->ops->list_parse(t, page, strlen(page), &s, &next, err, sizeof err), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(rb_objset_size(&s, 0), 1075);
    assert_int_equal(rb_objset_size(&s, 1), 4096);
    assert_string_equal(next, "U1\nshards/0003");
    free(next);
    const char *last = "{\"uuid\":\"U1\",\"continuation_token\":\"\",\"entries\":null}";
    assert_int_equal(t->ops->list_parse(t, last, strlen(last), &s, &next, err, sizeof err), 0);
    assert_null(next);
    char msg[128];
    const char *e = "{\"message\":\"bucket \\\"ais://x\\\" does not exist\",\"status\":404}";
    rb_target_error_message(t, e, strlen(e), msg, sizeof msg);
    assert_string_equal(msg, "bucket \"ais://x\" does not exist");
    rb_objset_free(&s);
    rb_target_close(t);
    set_str(&cfg, "provider", "Bad!");
    char err2[256];
    assert_int_equal(rb_target_open(&t, &cfg, err2, sizeof err2), -EINVAL);
    assert_non_null(strstr(err2, "--provider"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_urls),    cmocka_unit_test(test_https_row_and_evict),    cmocka_unit_test(test_s3_urls),
        cmocka_unit_test(test_s3_credentials_file), cmocka_unit_test(test_s3_setup_signs_what_is_sent),
        cmocka_unit_test(test_s3_list_parse),
        cmocka_unit_test(test_ais),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
