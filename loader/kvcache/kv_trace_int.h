/* loader/kvcache/kv_trace_int.h */
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
/* Loads PATH (format sniffed: JSON lines -> Mooncake, CSV with a Timestamp header -> BurstGPT).
 * 0, or -errno / -EINVAL with err holding one line "PATH:LINE: what is wrong". */
int rb_kvtrace_load(const char *path, struct rb_kvtrace *t, char *err, size_t errlen);
void rb_kvtrace_free(struct rb_kvtrace *t);
