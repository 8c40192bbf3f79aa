/* AWS Signature Version 4 (header auth) for the native engine: a key derived once per day, no allocation per request. */
#ifndef RB_SIGV4_INT_H
#define RB_SIGV4_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <openssl/sha.h>

/* Bytes of a lowercase hex SHA-256 and its terminator. */
#define RB_SIGV4_HEX_BYTES 65
/* "YYYYMMDDTHHMMSSZ" and its terminator. */
#define RB_SIGV4_DATE_BYTES 17
/* The hash S3 signs for a request without a body, and the value that signs none. */
#define RB_SIGV4_EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define RB_SIGV4_UNSIGNED "UNSIGNED-PAYLOAD"

/*
 * Thread-safety: a signer is owned by one worker thread (each derives its
 * own key); rb_sigv4_sign updates the key when the day changes, so two
 * threads must not share one. The helpers below are pure.
 */
struct rb_sigv4 {
    char akid[128];
    char secret[4 + 128];            /* "AWS4" + the secret: the first HMAC key (wiped by rb_sigv4_wipe) */
    char region[64], service[32];
    char day[9];                     /* YYYYMMDD the key below was derived for; "" none yet */
    char scope[128];                 /* "YYYYMMDD/region/service/aws4_request" */
    size_t scope_len;
    SHA256_CTX inner, outer;         /* HMAC(kSigning, .) with its two pads already absorbed */
};

/* One signed header: lowercase name, value already trimmed; a request's list is sorted by name. */
struct rb_sigv4_hdr {
    const char *name;
    const char *value;
    size_t value_len;
};

/*
 * Sets s up for access key akid and secret in region for service ("s3").
 * Returns 0, or -EINVAL when a string does not fit (no secret in any
 * message). Allocates nothing; rb_sigv4_wipe clears the secret.
 */
int rb_sigv4_init(struct rb_sigv4 *s, const char *akid, const char *secret, const char *region, const char *service);

/* Overwrites s's secret and derived key; NULL-safe. */
void rb_sigv4_wipe(struct rb_sigv4 *s);

/*
 * Writes the Authorization header's value for one request into out:
 * "AWS4-HMAC-SHA256 Credential=AKID/scope, SignedHeaders=a;b, Signature=hex".
 * amz_date is the request's x-amz-date (its first 8 characters pick the
 * day's key, derived again only when the day changes); uri the canonical
 * URI as sent (already percent-encoded, S3 style: no second encoding);
 * query the canonical query string (sorted, encoded; "" none); h the signed
 * headers (sorted by lowercase name), payload_hash the hex SHA-256 of the
 * body or UNSIGNED-PAYLOAD. Streams everything through SHA-256, no copy.
 * Returns the value's length, or -ENOSPC when out is too small.
 */
int rb_sigv4_sign(struct rb_sigv4 *s, const char *amz_date, const char *method, const char *uri, size_t uri_len,
                  const char *query, size_t query_len, const struct rb_sigv4_hdr *h, size_t nh,
                  const char *payload_hash, char *out, size_t outlen);

/* d[0..n) as lowercase hex into out (2n + 1 bytes). Pure. */
void rb_sigv4_hex(const unsigned char *d, size_t n, char *out);

/* The lowercase hex SHA-256 of data[0..len) into out (RB_SIGV4_HEX_BYTES). Pure. */
void rb_sigv4_sha256_hex(const void *data, size_t len, char *out);

/* t as x-amz-date ("YYYYMMDDTHHMMSSZ", UTC) into out (RB_SIGV4_DATE_BYTES). Pure. */
void rb_sigv4_date(time_t t, char *out);

#endif
