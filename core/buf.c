/* A growing byte/text buffer: tables, HTTP bodies, exposition text. */
#include "railbench/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Makes room for n more bytes plus the NUL. */
static int reserve(struct rb_buf *b, size_t n)
{
    if (b->oom)
        return -ENOMEM;
    if (b->limit && b->len + n > b->limit) {
        b->oom = true;
        return -ENOBUFS;
    }
    if (b->len + n + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = true;
        return -ENOMEM;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

int rb_buf_append(struct rb_buf *b, const void *data, size_t n)
{
    int rc = reserve(b, n);
    if (rc)
        return rc;
    memcpy(b->s + b->len, data, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

void rb_buf_printf(struct rb_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

size_t rb_buf_curl_write(char *data, size_t size, size_t n, void *buf)
{
    return rb_buf_append(buf, data, size * n) == 0 ? size * n : 0;
}

void rb_buf_free(struct rb_buf *b)
{
    if (!b)
        return;
    free(b->s);
    memset(b, 0, sizeof *b);
}
