/* The native engine's TLS layer (native_tls.c): OpenSSL on non-blocking sockets, one context per worker. */
#ifndef RB_NATIVE_TLS_INT_H
#define RB_NATIVE_TLS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../proto/target_int.h"
#include "railbench/hist.h"

/*
 * Thread-safety: an rb_ntls and its connections belong to one worker
 * thread. rb_ntls_new must first run before any worker thread starts (it
 * reserves OpenSSL's ex_data index once).
 */

typedef struct ssl_st SSL;

struct rb_ntls;

/* One connection's TLS state; zeroed = none. */
struct rb_ntls_conn {
    SSL *ssl;
    void *ref;                 /* what ties its new sessions to its worker and endpoint */
};

/* A worker's TLS figures: handshakes done, of which resumed, of which on kernel TLS, their time in total and each. */
struct rb_ntls_stats {
    uint64_t handshakes, resumed, ktls, handshake_ns;
    struct rb_hist hs;         /* each handshake's time from the connect (ns) */
};

/*
 * A client context: TLS 1.2 or later, the system's CA certificates and the
 * host's name (or IP address) checked unless insecure, sessions kept per
 * place (a server: the caller numbers them) and slot (of nslots) for
 * resumption, kernel TLS asked for where OpenSSL has it.
 * Returns 0, -ENOMEM, or -EINVAL with one line in err. Free with rb_ntls_free (NULL-safe).
 */
int rb_ntls_new(struct rb_ntls **t, unsigned nslots, bool insecure, char *err, size_t errlen);
void rb_ntls_free(struct rb_ntls *t);

/*
 * Readies TLS on connected socket fd to host ("HOST[:PORT]", the server
 * numbered place) for slot, offering the last session of that slot there.
 * 0 or -ENOMEM.
 */
int rb_ntls_start(struct rb_ntls *t, int fd, const char *host, unsigned place, unsigned slot, struct rb_ntls_conn *c);

/*
 * Drives c's handshake: 0 done (counted, with took_ns: the time since the
 * connect began), -EAGAIN when it waits for the socket, -EACCES when the
 * certificate did not verify, -EPROTO otherwise (one line in err each).
 */
int rb_ntls_handshake(struct rb_ntls *t, struct rb_ntls_conn *c, uint64_t took_ns, char *err, size_t errlen);

/* As send(2) and recv(2) on a non-blocking socket: bytes, 0 at a close (recv), -1 with errno (EAGAIN: wait). */
ssize_t rb_ntls_send(struct rb_ntls_conn *c, const void *buf, size_t len);
ssize_t rb_ntls_recv(struct rb_ntls_conn *c, void *buf, size_t len);

/* c (a kept-alive connection) now serves slot: the sessions its server sends later go to that slot. */
void rb_ntls_adopt(struct rb_ntls_conn *c, unsigned slot);

/* Frees c's TLS state (the socket is the caller's); safe on a zeroed c. */
void rb_ntls_end(struct rb_ntls_conn *c);

/* t's figures so far. */
const struct rb_ntls_stats *rb_ntls_stats(const struct rb_ntls *t);

#endif
