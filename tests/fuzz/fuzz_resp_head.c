/*
 * libFuzzer target: the native engine's one-pass response head reader (rb_nresp_head) against http_parser, the
 * general parser it stands in for. Every head it takes, http_parser must take the same way: the same status and
 * length, kept alive, its head ending at the same byte (not one byte sooner), and a body of no bytes complete there.
 * Each input is tried as it is and after a status line (so the mutations reach the header lines).
 */
#include <http_parser.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "native_resp_int.h"

struct seen {
    int headers, complete;
    uint64_t length;
};

static int on_headers_complete(http_parser *p)
{
    struct seen *s = p->data;
    s->headers++;
    s->length = p->content_length;
    return 0;
}

static int on_message_complete(http_parser *p)
{
    ((struct seen *)p->data)->complete++;
    return 0;
}

/* http_parser over buf's first n bytes: what it saw, and whether it read them all without an error. */
static int general(const char *buf, size_t n, http_parser *p, struct seen *s)
{
    http_parser_settings set;
    http_parser_settings_init(&set);
    set.on_headers_complete = on_headers_complete;
    set.on_message_complete = on_message_complete;
    http_parser_init(p, HTTP_RESPONSE);
    *s = (struct seen){0};
    p->data = s;
    return http_parser_execute(p, &set, buf, n) == n && HTTP_PARSER_ERRNO(p) == HPE_OK;
}

static void one(const char *buf, size_t k)
{
    unsigned status = 0;
    uint64_t length = 0;
    size_t head = rb_nresp_head(buf, k, &status, &length);
    if (!head)
        return;
    if (head > k)
        abort();
    http_parser p;
    struct seen s;
    if (!general(buf, head, &p, &s) || s.headers != 1 || p.status_code != status || !http_should_keep_alive(&p))
        abort(); /* a head taken here that http_parser reads otherwise */
    if (length ? s.complete != 0 || s.length != length : s.complete != 1)
        abort(); /* another length */
    if (general(buf, head - 1, &p, &s) && s.headers != 0)
        abort(); /* http_parser's head ends sooner */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char line[] = "HTTP/1.1 200 OK\r\n";
    char *buf = malloc(sizeof line - 1 + size);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    one(buf, size);
    memcpy(buf, line, sizeof line - 1);
    memcpy(buf + sizeof line - 1, data, size);
    one(buf, sizeof line - 1 + size);
    free(buf);
    return 0;
}
