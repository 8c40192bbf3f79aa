/* load kvcache internals: the model's KV bytes, MLPerf Storage's options, users and turns, the LRU tiers, the run. */
#ifndef RB_KVCACHE_INT_H
#define RB_KVCACHE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../engine/engine_int.h"
#include "../proto/target_int.h"
#include <cjson/cJSON.h>

#include "railbench/cli.h"
#include "railbench/hist.h"
#include "kv_trace_int.h"

/* ---- the model (kv_model.c, pure) ---- */

struct rb_kv_model {
    const char *name;
    uint32_t layers, kv_heads, head_dim;
    uint32_t dtype_bytes; /* 2: fp16, written as NumPy's '<f2' */
};

/* The presets by name ("llama3.1-8b", ...), or NULL. Pure. */
const struct rb_kv_model *rb_kv_model_find(const char *name);
/* The presets' names joined by ", " (for messages). */
extern const char rb_kv_model_list[];
/*
 * KV bytes of one token: layers × kv_heads × head_dim × 2 (K and V) × dtype bytes, divided by tp (tensor parallelism
 * keeps 1/tp of the KV heads on each GPU: kv_heads must be a multiple of tp). 0 when tp does not divide kv_heads.
 */
uint64_t rb_kv_bytes_per_token(const struct rb_kv_model *m, uint32_t tp);

/* The NumPy format 1.0 header of an entry of tokens tokens, shape (layers, 2, tokens, kv_heads/tp, head_dim), '<f2'. */
#define RB_KV_NPY_HEADER 128 /* bytes: magic, version, length and the dictionary padded to a multiple of 64 */
/* Writes the header into out (RB_KV_NPY_HEADER bytes). Returns 0, or -EINVAL when the dictionary does not fit. */
int rb_kv_npy_header(const struct rb_kv_model *m, uint32_t tp, uint64_t tokens, unsigned char out[RB_KV_NPY_HEADER]);

/* ---- MLPerf Storage's options and users (kv_model.c) ---- */

struct rb_kv_option {
    unsigned number;          /* 1, 2, 3 */
    const char *title;        /* "storage stress" */
    const char *model;        /* the preset */
    uint32_t users;           /* per rank */
    uint64_t cpu_tier_bytes;  /* per rank */
    uint32_t inflight;        /* allocations in flight per rank */
};
/* Option n (1 to 3) of MLPerf Storage v3.0's KV-cache benchmark, or NULL. */
const struct rb_kv_option *rb_kv_option_get(unsigned n);

enum rb_kv_user_kind { RB_KV_CHAT, RB_KV_CODING, RB_KV_DOCUMENT, RB_KV_USER_KINDS };
struct rb_kv_user_profile {
    const char *name;
    uint32_t ctx_min, ctx_max;   /* context tokens of a turn's entry */
    uint32_t gen_min, gen_max;   /* tokens generated */
    uint32_t think_min_ms, think_max_ms;
};
extern const struct rb_kv_user_profile rb_kv_profiles[RB_KV_USER_KINDS];

#define RB_KV_MAX_TURNS 50        /* a conversation's last turn at the latest */
#define RB_KV_END_PER_MILLE 200   /* a conversation ends after a turn with probability 0.2 */
#define RB_KV_DECODE_TOKENS 32    /* decode reads the entry once, then once every 32 generated tokens */

/* One turn as drawn from a user's generator: tokens of its entry (after scale_den), tokens generated, think time. */
struct rb_kv_turn {
    uint32_t tokens, generated;
    uint64_t think_ns;
    bool last; /* the conversation ends after this turn */
};
/*
 * Draws turn number turn (1-based) of a user of kind k from *rng (SplitMix64 state): context tokens uniform in the
 * profile's range divided by scale_den (at least 1), generated tokens and think time uniform, the end of the
 * conversation with probability 0.2 (always at turn RB_KV_MAX_TURNS). Pure but for *rng.
 */
void rb_kv_draw_turn(enum rb_kv_user_kind k, uint64_t scale_den, unsigned turn, uint64_t *rng, struct rb_kv_turn *t);
/* Reads of one entry during the decode of a turn generating generated tokens: 1 + generated / 32. */
static inline uint32_t rb_kv_decode_reads(uint32_t generated)
{
    return 1 + generated / RB_KV_DECODE_TOKENS;
}

/* ---- the tiers (kv_tier.c, pure): LRU lists of entries ---- */

enum rb_kv_where { RB_KV_NOWHERE, RB_KV_IN_CPU, RB_KV_IN_STORAGE };

/* One turn's entry: where it is, its size, its place in its tier's LRU list. */
struct rb_kv_entry {
    uint64_t bytes;              /* file or object bytes: the header and tokens × bytes per token */
    uint32_t tokens;
    uint32_t user, conv, turn;
    bool is_block;               /* a trace's hash block (shared by the ranks): named by block, not user and turn */
    uint64_t block;
    enum rb_kv_where where;
    struct rb_kv_entry *prev, *next; /* in its tier's list, most recently used first */
    unsigned char *mem;          /* in the CPU tier: its bytes */
};

struct rb_kv_tier {
    uint64_t capacity_bytes;     /* 0: the tier is off */
    uint64_t used_bytes;
    struct rb_kv_entry *mru, *lru;
    uint64_t entries;
};

/* Puts e at the head of t (most recently used); e must be in no list. */
void rb_kv_tier_push(struct rb_kv_tier *t, struct rb_kv_entry *e);
/* Takes e out of t. */
void rb_kv_tier_unlink(struct rb_kv_tier *t, struct rb_kv_entry *e);
/* Moves e (in t) to the head: it was used. */
void rb_kv_tier_touch(struct rb_kv_tier *t, struct rb_kv_entry *e);
/*
 * The entry to move out of t before bytes more go in: its least recently used entry while used + bytes would pass
 * fill × capacity (fill 0.8 for the CPU tier, 1 for storage); NULL when they fit (or t is empty).
 */
struct rb_kv_entry *rb_kv_tier_victim(const struct rb_kv_tier *t, uint64_t bytes, double fill);

/* ---- the run (kv_cmd.c: options and trials; kv_run.c: a rank's threads; kv_report.c: figures) ---- */

struct rb_fwatch;
struct rb_kv_worker;

struct rb_kv_args {
    struct rb_target_cfg tgt;            /* the target options: --timeout (each file system call's watchdog) */
    uint64_t option;                     /* --option 1|2|3; 0: none */
    const char *model_s, *scale_s, *trace_path;
    double speedup;                      /* --trace: arrivals this many times faster */
    uint64_t layers, kv_heads, head_dim; /* --layers etc.: a model of its own (0: the preset's) */
    uint64_t tp, users, inflight, cpu_tier_bytes, storage_tier_bytes, trials, seed, block_bytes;
    uint64_t duration_ns, gap_ns, timeout_ns;
    bool verify, keep;
    /* resolved */
    struct rb_kv_model model;
    const struct rb_kv_option *preset;
    uint64_t scale_den, bytes_per_token;
};

/* Counters of a thread, a rank or the run, one flat array (one MPI reduce). */
enum rb_kv_count {
    RB_KV_TURNS, RB_KV_PREFILL_TOKENS, RB_KV_GENERATED_TOKENS, RB_KV_CONVERSATIONS,
    RB_KV_WRITES, RB_KV_BYTES_WRITTEN, RB_KV_TOKENS_WRITTEN,   /* storage writes: every entry file written */
    RB_KV_READS, RB_KV_BYTES_READ, RB_KV_TOKENS_READ,          /* storage reads */
    RB_KV_CPU_WRITES, RB_KV_CPU_READS, RB_KV_CPU_BYTES_READ,   /* the CPU tier */
    RB_KV_CPU_HITS, RB_KV_CPU_MISSES, RB_KV_STORAGE_HITS, RB_KV_STORAGE_MISSES,
    RB_KV_DEMOTIONS, RB_KV_EVICTIONS, RB_KV_DELETES, RB_KV_VERIFY_FAILURES,
    RB_KV_REQUESTS, RB_KV_BLOCKS_READ, RB_KV_BLOCKS_WRITTEN, RB_KV_BLOCK_MISSES, /* --trace */
    RB_KV_BLOCK_REPEATS,                                                         /* an id twice in one request */
    RB_KV_NCOUNTS
};
extern const char *const rb_kv_count_names[RB_KV_NCOUNTS];

/* The latency histograms: device and host time of storage writes and reads; --trace's requests from their intended
 * start (coordinated omission corrected). */
enum rb_kv_hist { RB_KV_DEV_WRITE, RB_KV_DEV_READ, RB_KV_HOST_WRITE, RB_KV_HOST_READ, RB_KV_REQUEST, RB_KV_NHIST };
extern const char *const rb_kv_hist_names[RB_KV_NHIST];

/* The timeline's series: latency by tier and op, one point per interval. */
enum rb_kv_timeline { RB_KV_TL_STORAGE_WRITE, RB_KV_TL_STORAGE_READ, RB_KV_TL_CPU_WRITE, RB_KV_TL_CPU_READ,
                      RB_KV_NTIMELINE };
extern const char *const rb_kv_timeline_names[RB_KV_NTIMELINE];

struct rb_kv_user {
    enum rb_kv_user_kind kind;
    uint64_t rng;
    uint32_t id, conv, turns;
    uint64_t ready_ns;                            /* monotonic: its next turn may start */
    struct rb_kv_entry entry[RB_KV_MAX_TURNS];    /* the conversation's entries, turn by turn */
};

/* One thread of a rank: its users, its share of each tier, its own counters (nothing shared on the request path). */
struct rb_kv_worker {
    struct rb_kv_rank *rank;
    unsigned index;
    pthread_t th;
    bool started;
    struct rb_fwatch *fw;
    struct rb_kv_user *users;
    uint32_t nusers;
    struct rb_kv_tier cpu, storage;
    unsigned char *chunk;                         /* block_bytes of I/O buffer */
    uint64_t count[RB_KV_NCOUNTS];
    struct rb_hist *hist[RB_KV_NHIST];
    pthread_mutex_t mu;                           /* guards since: the harness's interval figures */
    uint64_t since_ops, since_bytes;
    struct rb_hist *since_lat;
    struct rb_hist *since_op[RB_KV_NTIMELINE];    /* the interval's latency by tier and op (the timeline) */
    uint64_t *wrote;                              /* --trace: the hash blocks this thread wrote (to remove) */
    size_t nwrote, capwrote;
    atomic_bool finished;                         /* --trace: its share of the requests is done */
    struct rb_fetcher *fetch[3];                  /* objects: PUT, GET, DELETE, each one connection kept (kv_obj.c) */
    struct rb_stats *obj_st;                      /* objects: the fetchers' requests, as they add up */
    int err;                                      /* -errno that ended this thread (0: none) */
    char errmsg[512];
};

/* Where entries are stored, chosen once per rank: files beneath a directory (kv_run.c) or objects (kv_obj.c). */
struct rb_kv_store {
    /* Stores e (its bytes from src, the CPU tier's copy, or made now); counts it. 0 or -errno (w->err set). */
    int (*write)(struct rb_kv_worker *w, struct rb_kv_entry *e, const unsigned char *src);
    /* Reads e whole; counts it. 0, -ENOENT for a hash block not there (no error), or -errno (w->err set). */
    int (*read)(struct rb_kv_worker *w, struct rb_kv_entry *e);
    /* Removes name (beneath the target). 0 or -errno (w->err set). */
    int (*remove)(struct rb_kv_worker *w, const char *name);
};
extern const struct rb_kv_store rb_kv_obj_store;

/* A rank's part: its directory under the target, its threads. */
struct rb_kv_rank {
    const struct rb_kv_args *a;
    int rank;
    int root;                  /* the target directory (beneath.h) */
    char dir[256];             /* this rank's own directory, beneath root: rbkv-<run id>-r<rank> */
    bool dir_made;
    const struct rb_kv_store *store;
    bool objects;              /* an object target: entries are objects (kv_obj.c), requests on obj_opts */
    struct rb_load_opts obj_opts;
    const struct rb_kvtrace *trace;    /* --trace: the requests (this rank's: index % ranks == rank) */
    int ranks;
    char block_dir[256];       /* --trace: the hash blocks of every rank, beneath root: rbkv-<run id>-blocks */
    unsigned nworkers;
    struct rb_kv_worker *w;
    atomic_bool stop;
    uint64_t t0_ns, t1_ns;     /* the trial's start and its threads' end */
};

/* ---- kv_run.c's storage operations, for kv_replay.c ---- */
/* Writes e to storage (a hash block under a temporary name, renamed into place when whole). 0 or -errno (w->err). */
int rb_kv_write(struct rb_kv_worker *w, struct rb_kv_entry *e);
/* Reads e from storage; a hash block that is not there yet is -ENOENT without an error. 0 or -errno. */
int rb_kv_read(struct rb_kv_worker *w, struct rb_kv_entry *e);
/* Stores a new entry in the highest tier it fits; reads one from the tier holding it; drops one from its tier. */
int rb_kv_put(struct rb_kv_worker *w, struct rb_kv_entry *e);
int rb_kv_get(struct rb_kv_worker *w, struct rb_kv_entry *e);
int rb_kv_drop(struct rb_kv_worker *w, struct rb_kv_entry *e);
/* Records w's first error (err, what it was doing, the name); returns -err. */
int rb_kv_fail(struct rb_kv_worker *w, int err, const char *what, const char *name);
/* Counts one storage write or read of e with its device and host time. */
void rb_kv_account(struct rb_kv_worker *w, bool write, struct rb_kv_entry *e, uint64_t dev_ns, uint64_t host_ns);
/*
 * Objects (kv_obj.c): the payload layout of the objects' options (rb_load_opts.payload): an entry's file bytes (its
 * NumPy header, then the seeded payload), so an object holds what the file would. Pure.
 */
struct rb_payload_layout rb_kv_obj_layout(void);
/* Frees w's fetchers (their connections) and their stats; NULL-safe parts. After w's thread ended. */
void rb_kv_obj_free(struct rb_kv_worker *w);
/* --trace: a replay thread (kv_replay.c): its share of the rank's requests at their arrival times. */
void *rb_kv_replay_main(void *arg);
/* The name of e beneath the target: <rank dir>/u<user>-c<conversation>-t<turn>.npy, or its hash block's. */
void rb_kv_entry_name(const struct rb_kv_worker *w, const struct rb_kv_entry *e, char *out, size_t len);
/* The file name of a hash block beneath the target. */
void rb_kv_block_name(const struct rb_kv_rank *r, uint64_t block, char *out, size_t len);

/* Sets up r's threads and users for a trial (not started). Returns 0 or -ENOMEM. */
int rb_kv_rank_init(struct rb_kv_rank *r, const struct rb_kv_args *a, int rank);
/* Starts the threads; 0 or -errno. */
int rb_kv_rank_start(struct rb_kv_rank *r);
/* Asks the threads to stop and joins them. */
void rb_kv_rank_stop(struct rb_kv_rank *r);
/* Removes every entry the trial left (files, memory); returns the files that could not be removed. remove false
 * (a thread is stuck in a call): nothing is touched, the files there are counted. */
uint64_t rb_kv_rank_clear(struct rb_kv_rank *r, bool remove);
/* Frees the threads' state (after rb_kv_rank_clear). NULL-safe. */
void rb_kv_rank_free(struct rb_kv_rank *r);
/* The first error of a thread (0: none), its line in msg. */
int rb_kv_rank_error(const struct rb_kv_rank *r, char *msg, size_t len);
/* Sums the threads' counters and histograms into count and hist (allocated by the caller). */
void rb_kv_rank_sum(const struct rb_kv_rank *r, uint64_t count[RB_KV_NCOUNTS], struct rb_hist *hist[RB_KV_NHIST]);

/* ---- figures (kv_report.c) ---- */

/* One rank's figures of a trial: its counters, its p95s, its bandwidths over its own elapsed_s. A new object. */
cJSON *rb_kv_rank_json(int rank, const uint64_t count[RB_KV_NCOUNTS], struct rb_hist *const hist[RB_KV_NHIST],
                       double elapsed_s);
/*
 * A trial's record from the ranks' records (ranks, an array of rb_kv_rank_json) and the merged counters and
 * histograms: bandwidths and tokens/s summed over ranks, device p95s as the maximum of the ranks' p95s (MLPerf
 * Storage's aggregation) and exact over the merged histograms beside them. A new object.
 */
cJSON *rb_kv_trial_json(unsigned trial, cJSON *ranks, const uint64_t sum[RB_KV_NCOUNTS],
                        struct rb_hist *const merged[RB_KV_NHIST]);
/* The summary's figures over the trials (means) into summary, and the table (a new string, NULL out of memory). */
char *rb_kv_report(const struct rb_kv_args *a, cJSON *summary, const cJSON *trials);

/* --trace: the replay's record (the trace's hit rate from its hash ids beside the one measured) into summary. */
void rb_kv_replay_json(const struct rb_kv_args *a, const struct rb_kvtrace *t, cJSON *summary, const cJSON *trials);

/* The run (kv_trial.c): harness, target, trials, report; a's options resolved. Returns the exit status. */
int rb_kv_run(struct rb_kv_args *a, struct rb_cli *cli);
/* railbench load kvcache (kv_cmd.c): argv after "kvcache"; returns the exit status. */
int rb_load_kvcache_main(int argc, char **argv);

#endif
