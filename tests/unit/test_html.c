/* Unit tests of HTML escaping and the report page: no markup from result files, nothing fetched. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "html_int.h"

static char *escaped(struct rb_buf *b, const char *s, size_t n)
{
    rb_buf_free(b);
    rb_html_escape_n(b, s, n);
    return b->s ? b->s : "";
}

static void test_entities(void **state)
{
    (void)state;
    struct rb_buf b = {0};
    const char *in = "<script>alert('x')</script> & \"q\"";
    assert_string_equal(escaped(&b, in, strlen(in)),
                        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
    /* An attribute cannot be closed from inside: every quote is an entity. */
    in = "x\" onmouseover=\"alert(1)";
    assert_null(strchr(escaped(&b, in, strlen(in)), '"'));
    /* Plain text passes through unchanged, UTF-8 included. */
    in = "rbc-client1 \xC2\xB5s \xE2\x89\xA4 2ms \xF0\x9F\x9A\x80";
    assert_string_equal(escaped(&b, in, strlen(in)), in);
    rb_buf_free(&b);
}

static void test_control_and_invalid_utf8(void **state)
{
    (void)state;
    struct rb_buf b = {0};
    /* Control characters go (tab and newline stay); a NUL inside the length is dropped too. */
    const char in1[] = "a\x01" "b\x1b[31m\tc\nd\x7f" "e\0f";
    assert_string_equal(escaped(&b, in1, sizeof in1 - 1), "ab[31m\tc\ndef");
    /* Bytes that are not UTF-8 become U+FFFD: a lone continuation, a truncated sequence, an overlong '<'. */
    const char in2[] = "x\x80y\xE2\x89z\xC0\xBCw";
    assert_string_equal(escaped(&b, in2, sizeof in2 - 1),
                        "x\xEF\xBF\xBDy\xEF\xBF\xBD\xEF\xBF\xBDz\xEF\xBF\xBD\xEF\xBF\xBDw");
    /* UTF-16 surrogates encoded in UTF-8 and code points past U+10FFFF are rejected. */
    const char in3[] = "\xED\xA0\x80|\xF4\x90\x80\x80";
    const char *out = escaped(&b, in3, sizeof in3 - 1);
    assert_null(strstr(out, "\xED\xA0\x80"));
    assert_null(strstr(out, "\xF4\x90"));
    /* A sequence cut by the length limit is not read past it. */
    const char in4[] = "ab\xE2\x89\xA4";
    assert_string_equal(escaped(&b, in4, 3), "ab\xEF\xBF\xBD");
    rb_html_escape(&b, NULL);
    rb_buf_free(&b);
}

static void test_page(void **state)
{
    (void)state;
    struct rb_buf b = {0};
    rb_html_begin(&b, "report <b>x</b>");
    rb_html_end(&b);
    assert_non_null(b.s);
    assert_non_null(strstr(b.s, "<!DOCTYPE html>"));
    assert_non_null(strstr(b.s, "Content-Security-Policy\" content=\"default-src 'none'"));
    assert_non_null(strstr(b.s, "prefers-color-scheme:dark"));
    assert_non_null(strstr(b.s, "<title>report &lt;b&gt;x&lt;/b&gt;</title>"));
    assert_null(strstr(b.s, "<b>"));
    /* Nothing to fetch: no URLs, imports, external fonts or scripts. */
    assert_null(strstr(b.s, "http://"));
    assert_null(strstr(b.s, "https://"));
    assert_null(strstr(b.s, "url("));
    assert_null(strstr(b.s, "@import"));
    assert_null(strstr(b.s, "<script"));
    assert_non_null(strstr(b.s, "</html>\n"));
    rb_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entities),
        cmocka_unit_test(test_control_and_invalid_utf8),
        cmocka_unit_test(test_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
