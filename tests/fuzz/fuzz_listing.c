/* libFuzzer target: S3, AIStore and HTTP listing replies and error bodies from a server never crash the parsers. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "target_int.h"

static struct rb_target *targets[3];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("AWS_ACCESS_KEY_ID", "fuzz", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "fuzz", 1);
    static const char *const urls[3] = {"s3://bucket", "ais://bucket", "http://127.0.0.1:9/data"};
    static const char *const ep[] = {"http://127.0.0.1:9"};
    for (int i = 0; i < 3; i++) {
        struct rb_target_cfg cfg = {.url = urls[i], .endpoints = {i < 2 ? 1 : 0, {ep[0]}}};
        char err[256];
        if (rb_target_open(&targets[i], &cfg, err, sizeof err) != 0)
            abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = malloc(size + 1);
    if (!body)
        return 0;
    memcpy(body, data, size);
    body[size] = '\0';
    for (int i = 0; i < 3; i++) {
        const struct rb_target *t = targets[i];
        struct rb_objset set = {0};
        char *next = NULL, err[256], msg[256];
        (void)t->ops->list_parse(t, body, size, &set, &next, err, sizeof err);
        free(next);
        rb_objset_free(&set);
        if (t->ops->error_message)
            t->ops->error_message(body, size, msg, sizeof msg);
    }
    free(body);
    return 0;
}
