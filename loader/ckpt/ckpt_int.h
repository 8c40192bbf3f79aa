/* load checkpoint internals: one checkpoint's per-rank times turned into MLPerf's figures, and the run's report. */
#ifndef RB_CKPT_INT_H
#define RB_CKPT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "../cmd/cleanup_int.h"
#include "../cmd/loader_int.h"
#include "../file/file_int.h"
#include "railbench/ckpt.h"

/* The MLPerf Storage rule: a read starts at most this long after the write ended (two-invocation form). */
#define RB_CKPT_MAX_READ_GAP_S 30.0

/* One process's part of one checkpoint write or read. */
struct rb_ckpt_rank {
    double busy_s;      /* from the phase start to its last completion */
    uint64_t bytes;     /* what it wrote or read */
    int host;           /* host index */
};

/* One checkpoint's figures over n processes (rank 0), as MLPerf Storage defines them. */
struct rb_ckpt_figures {
    uint64_t bytes;                  /* all ranks */
    double duration_s;               /* the slowest rank's time: the checkpoint's duration */
    double throughput_bytes_per_s;   /* bytes / duration */
    double min_rank_bytes_per_s;     /* the slowest rank's own throughput (bytes / its time) */
    double mean_rank_s;
    int slowest_rank;
};

/*
 * Figures of r[0..n) (n >= 1): duration is the maximum busy time over ranks,
 * throughput the total bytes over it, the minimum per-rank throughput each
 * rank's bytes over its own time (ranks without bytes left out). Pure.
 */
void rb_ckpt_figures(const struct rb_ckpt_rank *r, size_t n, struct rb_ckpt_figures *f);

/*
 * The stragglers of r[0..n) by the shared outlier rule (core/outlier.c,
 * RB_OUTLIER_THRESHOLD on per-rank throughput, higher is better): a JSON
 * array of {rank, host, throughput_bytes_per_s, median, ratio}; hosts (n
 * names, may be NULL) names them. by_host judges per host instead (bytes
 * summed, time the slowest rank's). Returns a new array (empty when none).
 */
cJSON *rb_ckpt_stragglers(const struct rb_ckpt_rank *r, size_t n, const char *const *hosts, int nhosts, bool by_host);

/* ---- the command's state, shared by ckpt_cmd.c (options, the run), ckpt_phase.c and ckpt_report.c ---- */

enum rb_ckpt_mode { RB_CKPT_MODE_BOTH, RB_CKPT_MODE_WRITE, RB_CKPT_MODE_READ };

struct rb_ckpt_args {
    struct rb_target_cfg tgt;  /* the target options: --endpoint, --timeout, each protocol's own */
    struct rb_file_opts file;  /* a file:// target's options (the file protocol's group); --fsync default close */
    const char *model_s, *scale_s, *name, *after, *delay_s;
    uint64_t params, tp, pp, dp, zero; /* 0 (zero: UINT64_MAX): the preset's */
    uint64_t writes, reads, threads, inflight, seed, part_size, mp_threshold, read_part_size;
    int mode;
    bool subset, shift, verify, drop_caches, keep;
    /* resolved */
    struct rb_ckpt_model model;
    uint64_t scale_den, delay_rank, delay_ns;
    bool delay, s3, files;
};

/* What one process plays: model ranks [first, first + count). */
struct rb_ckpt_plan {
    uint64_t first, count;
    char base[1400];     /* "<target prefix><name>/" */
};

/* The run: one harness, its target, and everything measured (rank 0 keeps the figures). */
struct rb_ckpt_run {
    struct rb_ckpt_args *a;
    struct rb_harness h;
    struct rb_target *t;
    struct rb_ckpt_plan mine, shifted;
    int shift_by;
    struct rb_load_opts o;
    char **hosts;           /* rank 0: host name per host index */
    int nhosts;
    cJSON *writes, *reads;  /* rank 0: one record per checkpoint */
    struct rb_ckpt_figures wsum, rsum; /* rank 0: sums of the figures (for the means) */
    unsigned nw, nr;
    struct rb_objset written;          /* every rank: what its writes left (what cleanup deletes) */
    double write_end_unix_s, read_start_unix_s;
    uint64_t total_bytes;              /* one checkpoint, every process */
    struct rb_objset step_set;
    char where[1500];                  /* the checkpoint folder as the user would write it: URL/NAME/ */
    cJSON *cache_drop;                 /* rank 0, --drop-caches: per host, /proc/meminfo's Cached around the drop */
    char **made_dirs;                  /* file://, each host's first rank: missing dirs (names beneath the root) */
    unsigned nmade;
    uint64_t dirs_removed;             /* rank 0: directories the run made and removed at the end, every host */
};

/* What process proc of h plays (model ranks; the base is the caller's). Pure. */
void rb_ckpt_plan_of(const struct rb_ckpt_args *a, const struct rb_harness *h, int proc, struct rb_ckpt_plan *p);
/* Appends pl's files of checkpoint step to set (sizes from the model); *bytes gets their sum. 0 or -errno. */
int rb_ckpt_add_step(const struct rb_ckpt_args *a, const struct rb_ckpt_plan *pl, unsigned step, struct rb_objset *set,
                     uint64_t *bytes);
/* The wall clock in seconds since the epoch (the gap between a write run and a read run). */
double rb_ckpt_unix_now_s(void);
/* One checkpoint write or read as a load phase on every rank (collective); returns 0 or an exit status. */
int rb_ckpt_one(struct rb_ckpt_run *x, bool write, unsigned step);
/* --drop-caches: every host's first rank writes back and drops its page cache (collective); 0 or RB_EXIT_RUNTIME. */
int rb_ckpt_drop_caches(struct rb_ckpt_run *x);
/*
 * file:// targets, before the writes: each host's first rank notes which directories of the checkpoint folder
 * (NAME's own and each global_stepK) do not exist yet: the run makes them (collective). 0 or RB_EXIT_RUNTIME.
 */
int rb_ckpt_dirs_note(struct rb_ckpt_run *x);
/*
 * After the cleanup: each host's first rank removes the directories it noted, deepest first, each only when empty
 * (a directory that holds anything, or existed before, stays); rank 0 gets the count (collective).
 */
void rb_ckpt_dirs_remove(struct rb_ckpt_run *x);
/* Frees what rb_ckpt_dirs_note noted. */
void rb_ckpt_dirs_free(struct rb_ckpt_run *x);
/*
 * Before writing: nothing may exist under the checkpoint folder; before a --mode read: every file of the
 * checkpoints to read must be there. Rank 0 lists once (collective); 0 or an exit status on every rank.
 */
int rb_ckpt_check_folder(struct rb_ckpt_run *x);
/* --after DIR: the write run's end time from DIR/result.json (summary.write_end_unix_s); 0 or -errno. */
int rb_ckpt_read_write_end(const char *dir, double *end_s);
/* How much of one checkpoint moved (rank 0: over every rank). */
struct rb_ckpt_done {
    uint64_t files, files_done; /* the checkpoint's files; those written or read whole */
    bool interrupted;           /* a signal cut the phase short */
};
/*
 * Rank 0: the record of one checkpoint from every rank's r (figures, ranks, hosts, stragglers, gauges). A
 * checkpoint is complete when every file moved whole without an error (a signal before the last one cut it short);
 * one that is not is recorded with complete false, what moved, no throughput, and is left out of the means.
 */
void rb_ckpt_record_point(struct rb_ckpt_run *x, bool write, unsigned step, const struct rb_ckpt_rank *r,
                          const struct rb_load_result *res, const struct rb_ckpt_done *d);
/* Rank 0: the summary into the result and the MLPerf-style table (a new string, or NULL out of memory). */
char *rb_ckpt_report(struct rb_ckpt_run *x, const struct rb_cleanup *cl);
/* The host names by host index to rank 0 (collective; x->hosts, x->nhosts on rank 0). */
void rb_ckpt_gather_hosts(struct rb_ckpt_run *x);

/* railbench load checkpoint (ckpt_cmd.c): argv after "checkpoint"; returns the exit status. */
int rb_load_checkpoint_main(int argc, char **argv);

#endif
