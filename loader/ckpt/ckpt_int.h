/* load checkpoint internals: one checkpoint's per-rank times turned into MLPerf's figures, and the run's report. */
#ifndef RB_CKPT_INT_H
#define RB_CKPT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

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

/* railbench load checkpoint (ckpt_cmd.c): argv after "checkpoint"; returns the exit status. */
int rb_ckpt_main(int argc, char **argv);

#endif
