/* The common response's head read in one pass, without the general parser (http_parser reads every other one). */
#ifndef RB_NATIVE_RESP_INT_H
#define RB_NATIVE_RESP_INT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Reads the head at the start of buf (k bytes) when it is the common
 * answer to a GET or PUT, and the whole head is in buf and at most 8 KiB:
 *
 *     HTTP/1.1 200|201|204|206 reason CRLF
 *     header lines (name ":" value CRLF), no folded line
 *     exactly one Content-Length (204: none), no Transfer-Encoding,
 *     no Connection other than "keep-alive"
 *     CRLF
 *
 * Returns the head's length (the body starts there) and sets *status and
 * *length; returns 0, having set nothing, for any other head, a malformed
 * one or one not all in buf: the general parser then reads it from its
 * first byte. A head taken here is one http_parser takes with the same
 * status and length, is kept alive by it, and ends where it would begin
 * the body (tests/fuzz/fuzz_resp_head.c checks it against http_parser).
 * Pure: no allocation, thread-safe.
 */
size_t rb_nresp_head(const char *buf, size_t k, unsigned *status, uint64_t *length);

#endif
