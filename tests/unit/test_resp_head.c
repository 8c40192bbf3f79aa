/* Unit tests for loader/engine/native_resp.c: the heads it reads in one pass, and every head it leaves to http_parser. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "native_resp_int.h"

/* nginx 1.22's answer to a GET of a 1 KiB file, and Ceph RGW's to a ranged GET (their header lines as sent). */
#define NGINX                                                                                                         \
    "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Thu, 26 Nov 2026 18:00:00 GMT\r\n"                              \
    "Content-Type: application/octet-stream\r\nContent-Length: 1024\r\n"                                              \
    "Last-Modified: Thu, 26 Nov 2026 17:59:00 GMT\r\nConnection: keep-alive\r\nETag: \"6a2c5f0c-400\"\r\n"           \
    "Accept-Ranges: bytes\r\n\r\n"
#define RGW_RANGE                                                                                                     \
    "HTTP/1.1 206 Partial Content\r\nContent-Length: 10\r\nAccept-Ranges: bytes\r\n"                                  \
    "Content-Range: bytes 0-9/1024\r\nx-rgw-object-type: Normal\r\nETag: \"0f343b0931126a20f133d67c2b018a3b\"\r\n"    \
    "Content-Type: binary/octet-stream\r\nConnection: Keep-Alive\r\n\r\n"

static size_t head_of(const char *s, unsigned *status, uint64_t *len)
{
    *status = 0;
    *len = UINT64_MAX;
    return rb_nresp_head(s, strlen(s), status, len);
}

static void test_common_heads(void **state)
{
    (void)state;
    unsigned st;
    uint64_t len;
    /* The body that follows in the same read is not the head's. */
    assert_int_equal(head_of(NGINX "0123456789", &st, &len), strlen(NGINX));
    assert_int_equal(st, 200);
    assert_int_equal(len, 1024);
    assert_int_equal(head_of(RGW_RANGE, &st, &len), strlen(RGW_RANGE));
    assert_int_equal(st, 206);
    assert_int_equal(len, 10);
    /* A PUT's answers: RGW's 200 and nginx WebDAV's 201 with no body; a 204, which says no length. */
    static const char put[] = "HTTP/1.1 201 Created\r\nContent-Length:  0  \r\nLocation: http://h/x\r\n\r\n";
    assert_int_equal(head_of(put, &st, &len), sizeof put - 1);
    assert_int_equal(st, 201);
    assert_int_equal(len, 0);
    static const char none[] = "HTTP/1.1 204 \r\n\r\n";
    assert_int_equal(head_of(none, &st, &len), sizeof none - 1);
    assert_int_equal(st, 204);
    assert_int_equal(len, 0);
    /* Names in any case, a tab before the value, the largest length taken here (18 digits). */
    static const char big[] = "HTTP/1.1 200 OK\r\ncontent-length:\t999999999999999999\r\nCONNECTION: KEEP-ALIVE\r\n\r\n";
    assert_int_equal(head_of(big, &st, &len), sizeof big - 1);
    assert_int_equal(len, 999999999999999999ull);
}

/* Every one of these is left to http_parser: 0, and nothing set. */
static void test_left_to_the_general_parser(void **state)
{
    (void)state;
    static const char *const other[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 1024\r\n",                           /* the head not all here */
        "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\n",                           /* another version */
        "HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\n",                    /* an error: its body is kept */
        "HTTP/1.1 307 Temporary Redirect\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 100 Continue\r\n\r\n",
        "HTTP/1.1 2000 OK\r\nContent-Length: 5\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-EncodingX: y\r\n\r\n", /* http_parser 2.9 reads a TE */
        "HTTP/1.1 200 OK\r\n\r\n",                                                /* no length: read to the close */
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5 \t\r\n\r\n",                        /* http_parser refuses it */
        "HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456789\r\n\r\n",         /* 19 digits */
        "HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive, close\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nProxy-Connection: close\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nUpgrade: h2c\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Folded: a\r\n b\r\n\r\n",      /* obs-fold */
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nBad Name: a\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nNoColon\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX: a\nb\r\n\r\n",                /* a LF alone */
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX: a\rb\r\n\r\n",                /* a CR alone */
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX: a\x01\r\n\r\n",
        "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n",                   /* a 204 that says a length */
        "HTTP/1.1 200 OK\n\n",
    };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        unsigned st;
        uint64_t len;
        if (head_of(other[i], &st, &len) != 0 || st != 0 || len != UINT64_MAX)
            fail_msg("taken here: %s", other[i]);
    }
    /* A head of more than 8 KiB. */
    static char big[9000];
    strcpy(big, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX: ");
    size_t n = strlen(big);
    memset(big + n, 'a', sizeof big - n - 5);
    memcpy(big + sizeof big - 5, "\r\n\r\n", 5);
    unsigned st;
    uint64_t len;
    assert_int_equal(head_of(big, &st, &len), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_common_heads),
        cmocka_unit_test(test_left_to_the_general_parser),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
