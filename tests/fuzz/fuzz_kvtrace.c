/* libFuzzer target: any file given to rb_kvtrace_load gives 0 and a consistent trace, or an error and one line. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kv_trace_int.h"

/* What a loaded trace promises (kv_trace_int.h), checked field by field. */
static void check_trace(const struct rb_kvtrace *t)
{
    uint64_t total = 0, seen = 0;
    if (t->n == 0 || !t->req || !t->arena_ || t->req[0].t_s != 0.0)
        abort();
    for (size_t r = 0; r < t->n; r++) {
        const struct rb_kvtrace_req *q = &t->req[r];
        if (!(q->t_s >= 0) || (r > 0 && q->t_s < t->req[r - 1].t_s))
            abort();
        if (t->fmt == RB_KVTRACE_BURSTGPT && (q->n_blocks || q->blocks || q->seen || q->output_tokens == 0))
            abort();
        for (uint32_t j = 0; j < q->n_blocks; j++) {
            if (q->seen[j] > 1 || q->blocks[j] > 9007199254740991ull)
                abort();
            seen += q->seen[j];
        }
        total += q->n_blocks;
    }
    if (total != t->blocks_total || seen != t->blocks_seen)
        abort();
    if (t->block_tokens != (t->fmt == RB_KVTRACE_MOONCAKE ? 512u : 0u))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* One file in memory for the whole run, rewritten for each input, opened by its /proc/self/fd path. */
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("rb-fuzz-kvtrace", MFD_CLOEXEC);
        if (fd < 0)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    struct rb_kvtrace t;
    char err[512];
    int rc = rb_kvtrace_load(path, &t, err, sizeof err);
    if (rc == 0) {
        check_trace(&t);
    } else {
        /* -EINVAL with "PATH:LINE: ..." on one line; nothing left owned */
        size_t pl = strlen(path);
        if (rc != -EINVAL || strncmp(err, path, pl) != 0 || err[pl] != ':' || strchr(err, '\n') || t.req || t.arena_)
            abort();
    }
    rb_kvtrace_free(&t);
    return 0;
}
