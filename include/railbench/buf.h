/* A growing byte/text buffer: tables, HTTP bodies, exposition text. */
#ifndef RB_BUF_H
#define RB_BUF_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Zero-initialise before first use. s is always NUL-terminated once anything
 * was added. limit (0 = none) caps len; going past it, or running out of
 * memory, sets oom and leaves the text truncated. Not thread-safe.
 */
struct rb_buf {
    char *s;
    size_t len, cap, limit;
    bool oom;
};

/* Appends formatted text. */
void rb_buf_printf(struct rb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends n bytes; returns 0, or -ENOBUFS past the limit / -ENOMEM (nothing appended then). */
int rb_buf_append(struct rb_buf *b, const void *data, size_t n);

/* libcurl write callback (CURLOPT_WRITEDATA is the struct rb_buf *): 0 aborts the transfer past the limit. */
size_t rb_buf_curl_write(char *data, size_t size, size_t n, void *buf);

/* Frees the text and zeroes b (keeping nothing); NULL-safe. */
void rb_buf_free(struct rb_buf *b);

#endif
