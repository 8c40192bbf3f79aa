/* Inference request traces for load kvcache: Mooncake JSON lines and BurstGPT CSV, loaded into one arena. */
#ifndef RB_KV_TRACE_INT_H
#define RB_KV_TRACE_INT_H

#include <stddef.h>
#include <stdint.h>

enum rb_kvtrace_fmt { RB_KVTRACE_MOONCAKE, RB_KVTRACE_BURSTGPT };

struct rb_kvtrace_req {
    double t_s;              /* arrival, seconds after the trace's first request */
    uint32_t input_tokens;
    uint32_t output_tokens;
    uint32_t n_blocks;       /* Mooncake hash_ids; 0 for BurstGPT */
    const uint64_t *blocks;  /* n_blocks ids, in the trace's arena */
    const uint8_t *seen;     /* n_blocks flags: 1 when the id appeared in an earlier request (in trace order) */
};

struct rb_kvtrace {
    enum rb_kvtrace_fmt fmt;
    uint32_t block_tokens;   /* tokens per hash block: 512 for Mooncake, 0 for BurstGPT */
    size_t n;                /* requests, in arrival order */
    struct rb_kvtrace_req *req;
    uint64_t blocks_total, blocks_seen; /* hit rate = blocks_seen / blocks_total (Mooncake) */
    void *arena_;            /* private */
};

/* The longest line a trace may hold (bytes, without its newline), and the largest trace file. */
#define RB_KVTRACE_LINE_MAX (1u << 20)
#define RB_KVTRACE_FILE_MAX ((size_t)1 << 30)

/*
 * Loads PATH (format sniffed: JSON lines -> Mooncake, CSV with a Timestamp header -> BurstGPT).
 * 0, or -errno / -EINVAL with err holding one line "PATH:LINE: what is wrong".
 *
 * A file that cannot be read gives its -errno (-ENOENT, -EISDIR, -EFBIG past
 * RB_KVTRACE_FILE_MAX) and "PATH: cannot read: REASON" (no line to name).
 * Every malformed input gives -EINVAL; *t is then zeroed and owns nothing.
 * On success *t owns its requests and one arena for every request's ids and
 * flags (blocks and seen are NULL when n_blocks is 0 in a BurstGPT trace);
 * release them with rb_kvtrace_free. Requests are in the file's order, which
 * must be the arrival order (a timestamp lower than the one before is an
 * error). BurstGPT rows with 0 response tokens (its failed requests) are
 * left out and counted (rb_kvtrace_skipped). Thread-safe (no shared state).
 */
int rb_kvtrace_load(const char *path, struct rb_kvtrace *t, char *err, size_t errlen);

/* Releases what rb_kvtrace_load gave *t and zeroes it; accepts NULL and a zeroed *t. */
void rb_kvtrace_free(struct rb_kvtrace *t);

/* The rows left out of a loaded trace: BurstGPT's failed requests (0 response tokens); 0 for Mooncake. */
size_t rb_kvtrace_skipped(const struct rb_kvtrace *t);

#endif
