/* AWS Signature Version 4 header auth: canonical request streamed through SHA-256, signing key derived once a day. */
/*
 * OpenSSL 3 marks the one-shot SHA256_* calls deprecated in favour of EVP,
 * whose contexts are allocated; the plain ones run on the stack, use the
 * CPU's SHA extensions all the same, and let an HMAC's two padded states be
 * computed once and copied per request.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "sigv4_int.h"

static const char hexdig[] = "0123456789abcdef";

void rb_sigv4_hex(const unsigned char *d, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hexdig[d[i] >> 4];
        out[2 * i + 1] = hexdig[d[i] & 15];
    }
    out[2 * n] = '\0';
}

/* The two states of HMAC-SHA256 with key (RFC 2104): inner after key^ipad, outer after key^opad. */
#define hex rb_sigv4_hex

static void hmac_pads(const void *key, size_t klen, SHA256_CTX *inner, SHA256_CTX *outer)
{
    unsigned char k[SHA256_CBLOCK] = {0}, pad[SHA256_CBLOCK];
    if (klen > SHA256_CBLOCK) {
        SHA256(key, klen, k);
    } else {
        memcpy(k, key, klen);
    }
    for (size_t i = 0; i < sizeof pad; i++)
        pad[i] = k[i] ^ 0x36;
    SHA256_Init(inner);
    SHA256_Update(inner, pad, sizeof pad);
    for (size_t i = 0; i < sizeof pad; i++)
        pad[i] = k[i] ^ 0x5c;
    SHA256_Init(outer);
    SHA256_Update(outer, pad, sizeof pad);
    OPENSSL_cleanse(k, sizeof k);
    OPENSSL_cleanse(pad, sizeof pad);
}

/* Ends an HMAC whose inner state has absorbed the message: mac = H(outer || H(inner)). */
static void hmac_end(SHA256_CTX *inner, const SHA256_CTX *outer_pad, unsigned char *mac)
{
    unsigned char ih[SHA256_DIGEST_LENGTH];
    SHA256_Final(ih, inner);
    SHA256_CTX outer = *outer_pad;
    SHA256_Update(&outer, ih, sizeof ih);
    SHA256_Final(mac, &outer);
}

static void hmac(const void *key, size_t klen, const char *msg, unsigned char *mac)
{
    SHA256_CTX in, out;
    hmac_pads(key, klen, &in, &out);
    SHA256_Update(&in, msg, strlen(msg));
    hmac_end(&in, &out, mac);
    OPENSSL_cleanse(&in, sizeof in);
    OPENSSL_cleanse(&out, sizeof out);
}

int rb_sigv4_init(struct rb_sigv4 *s, const char *akid, const char *secret, const char *region, const char *service)
{
    memset(s, 0, sizeof *s);
    if (strlen(akid) >= sizeof s->akid || strlen(secret) + 4 >= sizeof s->secret ||
        strlen(region) >= sizeof s->region || strlen(service) >= sizeof s->service)
        return -EINVAL;
    strcpy(s->akid, akid);
    memcpy(s->secret, "AWS4", 4);
    strcpy(s->secret + 4, secret);
    strcpy(s->region, region);
    strcpy(s->service, service);
    return 0;
}

void rb_sigv4_wipe(struct rb_sigv4 *s)
{
    if (s)
        OPENSSL_cleanse(s, sizeof *s);
}

/* kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request"); its pads kept. */
static void derive(struct rb_sigv4 *s, const char *day)
{
    unsigned char k[SHA256_DIGEST_LENGTH];
    memcpy(s->day, day, 8);
    s->day[8] = '\0';
    hmac(s->secret, strlen(s->secret), s->day, k);
    hmac(k, sizeof k, s->region, k);
    hmac(k, sizeof k, s->service, k);
    hmac(k, sizeof k, "aws4_request", k);
    hmac_pads(k, sizeof k, &s->inner, &s->outer);
    OPENSSL_cleanse(k, sizeof k);
    int n = snprintf(s->scope, sizeof s->scope, "%s/%s/%s/aws4_request", s->day, s->region, s->service);
    s->scope_len = n > 0 && (size_t)n < sizeof s->scope ? (size_t)n : 0;
}

#define UPD(ctx, p, n) SHA256_Update((ctx), (p), (n))
#define UPS(ctx, lit) SHA256_Update((ctx), (lit), sizeof(lit) - 1)

int rb_sigv4_sign(struct rb_sigv4 *s, const char *amz_date, const char *method, const char *uri, size_t uri_len,
                  const char *query, size_t query_len, const struct rb_sigv4_hdr *h, size_t nh,
                  const char *payload_hash, char *out, size_t outlen)
{
    if (memcmp(s->day, amz_date, 8) != 0 || !s->day[0])
        derive(s, amz_date);
    /* The Authorization value up to the signature, with SignedHeaders written once into out. */
    int n = snprintf(out, outlen, "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=", s->akid, s->scope);
    if (n < 0 || (size_t)n >= outlen)
        return -ENOSPC;
    size_t o = (size_t)n, signed_at = o;
    for (size_t i = 0; i < nh; i++) {
        size_t l = strlen(h[i].name);
        if (o + l + 2 >= outlen)
            return -ENOSPC;
        if (i)
            out[o++] = ';';
        memcpy(out + o, h[i].name, l);
        o += l;
    }
    size_t signed_len = o - signed_at;
    static const char sig[] = ", Signature=";
    if (o + sizeof sig - 1 + 2 * SHA256_DIGEST_LENGTH + 1 > outlen)
        return -ENOSPC;

    /* Canonical request (AWS SigV4: method, URI, query, headers, signed header list, payload hash), hashed as it goes. */
    SHA256_CTX c;
    SHA256_Init(&c);
    UPD(&c, method, strlen(method));
    UPS(&c, "\n");
    UPD(&c, uri, uri_len);
    UPS(&c, "\n");
    UPD(&c, query, query_len);
    UPS(&c, "\n");
    for (size_t i = 0; i < nh; i++) {
        UPD(&c, h[i].name, strlen(h[i].name));
        UPS(&c, ":");
        UPD(&c, h[i].value, h[i].value_len);
        UPS(&c, "\n");
    }
    UPS(&c, "\n");
    UPD(&c, out + signed_at, signed_len);
    UPS(&c, "\n");
    UPD(&c, payload_hash, strlen(payload_hash));
    unsigned char d[SHA256_DIGEST_LENGTH];
    char dhex[RB_SIGV4_HEX_BYTES];
    SHA256_Final(d, &c);
    hex(d, sizeof d, dhex);

    /* String to sign, straight into the day's HMAC. */
    SHA256_CTX in = s->inner;
    UPS(&in, "AWS4-HMAC-SHA256\n");
    UPD(&in, amz_date, 16);
    UPS(&in, "\n");
    UPD(&in, s->scope, s->scope_len);
    UPS(&in, "\n");
    UPD(&in, dhex, 2 * SHA256_DIGEST_LENGTH);
    hmac_end(&in, &s->outer, d);

    memcpy(out + o, sig, sizeof sig - 1);
    o += sizeof sig - 1;
    hex(d, sizeof d, out + o);
    return (int)(o + 2 * SHA256_DIGEST_LENGTH);
}

void rb_sigv4_sha256_hex(const void *data, size_t len, char *out)
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256(data, len, d);
    hex(d, sizeof d, out);
}

void rb_sigv4_date(time_t t, char *out)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    if (strftime(out, RB_SIGV4_DATE_BYTES, "%Y%m%dT%H%M%SZ", &tm) == 0)
        out[0] = '\0';
}
