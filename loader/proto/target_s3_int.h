/* The s3:// protocol's own options and state, shared by its two files: target_s3.c (libcurl) and target_s3_native.c. */
#ifndef RB_TARGET_S3_INT_H
#define RB_TARGET_S3_INT_H

#include <stdbool.h>

#include "target_int.h"

/* Its option rows' values (struct rb_proto_opt's off), in its slot of struct rb_target_cfg. */
struct rb_s3_opts {
    const char *region;           /* signing region; NULL: $AWS_REGION or us-east-1 */
    bool virtual_host;            /* bucket.host addressing instead of host/bucket */
    bool sign_payload;            /* sign the body's SHA-256 instead of UNSIGNED-PAYLOAD (native engine) */
    const char *credentials_file; /* NULL: $AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials */
    const char *profile;          /* NULL: $AWS_PROFILE or "default" */
};

/* A target's state (its priv), made by its parse. */
struct rb_s3 {
    char bucket[256];
    char region[64];
    bool virtual_host;
    char sigv4[128];              /* "aws:amz:<region>:s3" */
    char *userpwd;                /* "key:secret" (a secret: never logged) */
    char *token_header;           /* "x-amz-security-token: ..." or NULL */
};

static inline const struct rb_s3 *rb_s3_of(const struct rb_target *t)
{
    return (const struct rb_s3 *)t->priv;
}

/* The native engine's side (target_s3_native.c). */
extern const struct rb_nproto rb_s3_native;

#endif
