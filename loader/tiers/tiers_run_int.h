/* railbench load tiers: the command's state, shared by its run (tiers.c), its report (tiers_report.c) and its file cache tier. */
#ifndef RB_TIERS_RUN_INT_H
#define RB_TIERS_RUN_INT_H

#include <cjson/cJSON.h>

#include "tiers_fcache_int.h"
#include "tiers_int.h"
#include "../cmd/loader_int.h"
#include "../file/file_int.h"
#include "../engine/phase_int.h"

#define MAX_ROWS (3 * RB_LIST_MAX)

/* The command line (rb_load_tiers_main). */
struct tiers_args {
    const char *backend, *tier;
    struct rb_strs backend_endpoints, tier_endpoints;
    const char *backend_provider, *tier_provider;
    uint64_t objects;
    const char *prefix;
    struct rb_u64s sizes;
    uint64_t warm_epochs;
    uint64_t threads, inflight;
    uint64_t duration_ns;
    bool existing, fresh, keep, evict, evict_bucket, evict_shell, verify, overwrite;
    bool keep_cache;           /* a file:// tier: leave the cache files this run made */
    const char *evict_cmd, *cache_header;
    uint64_t evict_timeout_ns;
    uint64_t seed;
    double max_error_pct;
    /* The target options of both targets (--backend-X and --tier-X replace --endpoint and --provider for one). */
    struct rb_target_cfg tgt;
    struct rb_engine_args eng; /* --engine of the GET phases (puts: curl), --max-redirects */
    struct rb_file_opts file;  /* the file options: a file:// backend's phases, a file:// tier's reads and fills */
};

/* One table row (rank 0). */
struct row {
    uint64_t size_bytes;
    enum rb_tiers_how how;
    char phase[64];
    uint64_t epochs, requests, objects, bytes, errors;
    double duration_s, bytes_per_s, ops_per_s, lat_avg_ns, disk_util_ratio, net_bytes_per_s;
    bool net_local;               /* the phase's target is on loopback: net_bytes_per_s measures other traffic */
    uint64_t lat_p99_ns, ttfb_p50_ns;
    bool counted; /* the cache header was counted in this phase */
    struct rb_tiers_cache cache;
    enum rb_tiers_verdict verdict;
    bool fcache;                  /* a file:// tier's row: the two byte counts below are measured */
    uint64_t origin_bytes, cache_bytes; /* bytes fetched from the backend / read from cache files */
};

/* A file:// tier's cache files over the whole run (rank 0's sums of every rank's). */
struct tiers_fc_totals {
    uint64_t filled, on_disk, bytes_on_disk, removed, foreign_hits, conflicts;
};

/* One run: the harness, the targets, the rows measured, and how it ends. */
struct tiers_run {
    struct rb_harness h;
    struct tiers_args *a;
    struct rb_target *backend, *tier;
    const char *cache_headers; /* what the engine counts through the tier */
    char **evict_words;        /* --evict-cmd split into words (or sh -c CMD) */
    char fresh[48];            /* --fresh: this run's part of the object names */
    struct row rows[MAX_ROWS];
    size_t nrows;
    uint64_t requests_total, errors_total;
    bool stop;                 /* a phase decided that the run ends here (same on every rank) */
    bool error_rate_failed;
    int status;
    bool warned_unverified;
    uint64_t left_objects;     /* --fresh: objects put and not deleted again (rank 0) */
    uint64_t last_ok;          /* successful requests of the last phase (rank 0) */
    struct rb_tiers_fcache *fc; /* a file:// tier: the cache directory read through (NULL for other tiers) */
    struct tiers_fc_totals fct;
};

/* Rank 0's decision, on every rank. */
void rb_tiers_agree_int(struct tiers_run *r, int *v);

/*
 * A file:// tier (tiers_fcache_run.c): what it refuses, and its cache tier
 * built over r->tier in front of r->backend (r->fc; NULL for other tiers),
 * before the harness starts. Returns 0 or an exit status after one line.
 */
int rb_tiers_fc_setup(struct tiers_run *r, const struct rb_cli *cli);
/*
 * Before anything is written: the cache names of this rank's objects mine
 * that exist already stop the run (exit 2, one line on rank 0): the run
 * never reads as its own, overwrites or deletes a file it did not make.
 * Collective. Returns 0 or an exit status.
 */
int rb_tiers_fc_existing(struct tiers_run *r, const struct rb_objset *mine);
/* After a cold or warm phase: the phase's byte counts summed into row (rank 0; NULL elsewhere). Collective. */
void rb_tiers_fc_phase_done(struct tiers_run *r, struct row *row);
/*
 * After the last phase of a size (label): the cache files the run made are
 * counted on disk against the fills (check cache_files_<label>), then
 * removed unless --keep-cache. Collective.
 */
void rb_tiers_fc_size_done(struct tiers_run *r, const struct rb_objset *mine, uint64_t size, const char *label);
/* summary.file_cache: the cache directory's counts (null for other tiers). Rank 0. */
void rb_tiers_fc_summary(const struct tiers_run *r, cJSON *summary, struct rb_buf *table);

/* The summary, the table and the verdict of the whole run (rank 0): the table as a malloc'd string, NULL out of memory. */
char *rb_tiers_report(struct tiers_run *r, cJSON *summary);

#endif
