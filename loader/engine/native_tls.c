/* The native engine's TLS layer: OpenSSL on its non-blocking sockets, certificates verified, sessions resumed. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "native_tls_int.h"

/* The index of the ex_data slot that ties an SSL to its rb_ntls and endpoint. */
static int ex_idx = -1;

struct rb_ntls {
    SSL_CTX *ctx;
    /* The latest session per place and slot (sess[place][slot]), offered again on the slot's next connection
     * there; a place's row is made at its first connection. */
    SSL_SESSION ***sess;
    unsigned nslots, nplaces;
    struct rb_ntls_stats st;
};

/* Where an SSL's new sessions go: its worker's table, under its place and slot. */
struct tls_ref {
    struct rb_ntls *t;
    unsigned place, slot;
};

/*
 * TLS 1.3 sends session tickets after the handshake, so a session worth
 * resuming is the one this callback hands over, not SSL_get1_session right
 * after SSL_connect. Returning 1 keeps the reference. Kept per slot, not per
 * place alone: a server with a session cache takes each TLS 1.3 ticket once
 * (anti-replay), so connections that reopen together must not offer the same
 * one. And per place: a session is offered only to the server that issued it.
 */
static int on_new_session(SSL *ssl, SSL_SESSION *s)
{
    struct tls_ref *ref = SSL_get_ex_data(ssl, ex_idx);
    if (!ref || ref->slot >= ref->t->nslots || ref->place >= ref->t->nplaces || !ref->t->sess[ref->place])
        return 0;
    SSL_SESSION **at = &ref->t->sess[ref->place][ref->slot];
    SSL_SESSION_free(*at);
    *at = s;
    return 1;
}

int rb_ntls_new(struct rb_ntls **out, unsigned nslots, bool insecure, char *err, size_t errlen)
{
    *out = NULL;
    if (ex_idx < 0)
        ex_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL); /* once: the first worker's set-up, before threads run */
    struct rb_ntls *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->nslots = nslots;
    rb_hist_reset(&t->st.hs); /* an empty histogram's min is UINT64_MAX, not 0 */
    t->ctx = SSL_CTX_new(TLS_client_method());
    if (!t->ctx) {
        free(t);
        snprintf(err, errlen, "TLS: %s", ERR_reason_error_string(ERR_get_error()));
        return -ENOMEM;
    }
    SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
    /* Not SSL_MODE_RELEASE_BUFFERS: it frees a connection's buffers when idle and allocates them per request. */
    SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_session_cache_mode(t->ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(t->ctx, on_new_session);
#ifdef SSL_OP_ENABLE_KTLS
    /* The kernel's TLS where it offers it (the tls module): records are then encrypted in send(), not here. */
    SSL_CTX_set_options(t->ctx, SSL_OP_ENABLE_KTLS);
#endif
    if (!insecure) {
        SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
        if (SSL_CTX_set_default_verify_paths(t->ctx) != 1) {
            snprintf(err, errlen, "TLS: cannot load the system's CA certificates");
            rb_ntls_free(t);
            return -EINVAL;
        }
    }
    *out = t;
    return 0;
}

void rb_ntls_free(struct rb_ntls *t)
{
    if (!t)
        return;
    for (unsigned p = 0; p < t->nplaces; p++) {
        for (unsigned i = 0; t->sess[p] && i < t->nslots; i++)
            SSL_SESSION_free(t->sess[p][i]);
        free(t->sess[p]);
    }
    free(t->sess);
    SSL_CTX_free(t->ctx);
    free(t);
}

/* Makes place's row of sessions (and room for it): 0 or -ENOMEM. */
static int place_row(struct rb_ntls *t, unsigned place)
{
    if (place >= t->nplaces) {
        SSL_SESSION ***s = realloc(t->sess, (place + 1) * sizeof *s);
        if (!s)
            return -ENOMEM;
        memset(s + t->nplaces, 0, (place + 1 - t->nplaces) * sizeof *s);
        t->sess = s;
        t->nplaces = place + 1;
    }
    if (!t->sess[place] && !(t->sess[place] = calloc(t->nslots, sizeof *t->sess[place])))
        return -ENOMEM;
    return 0;
}

int rb_ntls_start(struct rb_ntls *t, int fd, const char *host, unsigned place, unsigned slot, struct rb_ntls_conn *c)
{
    if (place_row(t, place))
        return -ENOMEM;
    c->ssl = SSL_new(t->ctx);
    if (!c->ssl)
        return -ENOMEM;
    c->ref = malloc(sizeof(struct tls_ref)); /* per connection, not per request */
    if (!c->ref) {
        SSL_free(c->ssl);
        c->ssl = NULL;
        return -ENOMEM;
    }
    *(struct tls_ref *)c->ref = (struct tls_ref){t, place, slot};
    SSL_set_ex_data(c->ssl, ex_idx, c->ref);
    SSL_set_fd(c->ssl, fd);
    /* SNI and the name the certificate must carry: the host without its port (an IP address checks the SAN's IP). */
    char name[256];
    size_t n = strcspn(host, ":");
    if (host[0] == '[') {
        const char *e = strchr(host, ']');
        n = e ? (size_t)(e - host - 1) : 0;
        host++;
    }
    snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), host);
    ASN1_OCTET_STRING *ip = a2i_IPADDRESS(name);
    if (ip) {
        ASN1_OCTET_STRING_free(ip);
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), name);
    } else {
        SSL_set_tlsext_host_name(c->ssl, name);
        SSL_set1_host(c->ssl, name);
    }
    if (slot < t->nslots && t->sess[place][slot])
        SSL_set_session(c->ssl, t->sess[place][slot]);
    SSL_set_connect_state(c->ssl);
    return 0;
}

int rb_ntls_handshake(struct rb_ntls *t, struct rb_ntls_conn *c, uint64_t took_ns, char *err, size_t errlen)
{
    ERR_clear_error();
    int rc = SSL_connect(c->ssl);
    if (rc == 1) {
        t->st.handshakes++;
        t->st.handshake_ns += took_ns;
        rb_hist_record(&t->st.hs, took_ns);
        if (SSL_session_reused(c->ssl))
            t->st.resumed++;
#ifdef BIO_get_ktls_send
        if (BIO_get_ktls_send(SSL_get_wbio(c->ssl)))
            t->st.ktls++;
#endif
        return 0;
    }
    int e = SSL_get_error(c->ssl, rc);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return -EAGAIN;
    long v = SSL_get_verify_result(c->ssl);
    if (v != X509_V_OK) {
        snprintf(err, errlen, "TLS certificate not verified: %s (--insecure skips the check)",
                 X509_verify_cert_error_string(v));
        return -EACCES;
    }
    unsigned long q = ERR_get_error();
    snprintf(err, errlen, "TLS handshake failed: %s", q ? ERR_reason_error_string(q) : "connection closed");
    return -EPROTO;
}

/* SSL_get_error's want-more as EAGAIN, a clean close as 0, anything else as EIO. */
static ssize_t io_result(SSL *ssl, int rc)
{
    if (rc > 0)
        return rc;
    int e = SSL_get_error(ssl, rc);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        errno = EAGAIN;
        return -1;
    }
    if (e == SSL_ERROR_ZERO_RETURN)
        return 0;
    if (e == SSL_ERROR_SYSCALL && errno)
        return -1;
    errno = EIO;
    return -1;
}

ssize_t rb_ntls_send(struct rb_ntls_conn *c, const void *buf, size_t len)
{
    ERR_clear_error();
    return io_result(c->ssl, SSL_write(c->ssl, buf, (int)(len > INT32_MAX ? INT32_MAX : len)));
}

ssize_t rb_ntls_recv(struct rb_ntls_conn *c, void *buf, size_t len)
{
    ERR_clear_error();
    return io_result(c->ssl, SSL_read(c->ssl, buf, (int)(len > INT32_MAX ? INT32_MAX : len)));
}

void rb_ntls_adopt(struct rb_ntls_conn *c, unsigned slot)
{
    if (c->ref)
        ((struct tls_ref *)c->ref)->slot = slot;
}

void rb_ntls_end(struct rb_ntls_conn *c)
{
    /*
     * Ended without a close_notify exchange (a keep-alive connection the
     * server or we close): marked shut down, or OpenSSL would mark its
     * session not resumable as it frees it, and no new connection would resume.
     */
    if (c->ssl) {
        SSL_set_shutdown(c->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
        SSL_free(c->ssl);
    }
    free(c->ref);
    c->ssl = NULL;
    c->ref = NULL;
}

const struct rb_ntls_stats *rb_ntls_stats(const struct rb_ntls *t)
{
    return &t->st;
}
