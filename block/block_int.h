/* railbench block internals: fio job files and JSON, SLO and knee, targets, fio process control, aggregation, report. */
#ifndef RB_BLOCK_INT_H
#define RB_BLOCK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "railbench/cli.h"
#include "railbench/harness.h"
#include "railbench/hist.h"
#include "railbench/log.h"

/*
 * Nothing here is shared between threads: the command runs on the main
 * thread of each rank, and fio runs in child processes. rb_block_main (in
 * railbench/command.h) is the module's only entry point for other modules.
 */

/* ---- fio job files and fio's JSON output (fio.c) ---- */

/* The percentiles asked of fio (percentile_list) and reported: p50 p90 p99 p99.9 p99.99. */
#define RB_FIO_PCTS 5
extern const double rb_fio_pct[RB_FIO_PCTS];
/* Their names in railbench's JSON: "p50" "p90" "p99" "p999" "p9999". */
extern const char *const rb_fio_pct_key[RB_FIO_PCTS];

/* One latency kind (clat_ns or lat_ns) of one direction, as fio reported it. */
struct rb_fio_lat {
    bool have_pct;                   /* every one of rb_fio_pct was in "percentile" */
    uint64_t pct_ns[RB_FIO_PCTS];
    uint64_t min_ns, max_ns;
    double mean_ns;
    uint64_t bins;                   /* I/Os counted in json+ "bins" (0 without json+) */
};

/* One direction (read or write) summed over fio's jobs[]. */
struct rb_fio_dir {
    double iops;
    double bw_bytes_per_s;           /* fio's bw_bytes */
    uint64_t io_bytes, total_ios;
    uint64_t runtime_ms;             /* the longest job's */
    struct rb_fio_lat clat, lat;     /* percentiles only when fio reported one job (group_reporting) */
};

struct rb_fio_result {
    char version[32];                /* "fio-3.33" */
    int njobs;                       /* entries in jobs[] */
    int job_error;                   /* first non-zero jobs[].error (an errno), 0 when none */
    struct rb_fio_dir read, write;
    double disk_util_pct;            /* busiest entry of disk_util[]; -1 when fio reported none */
    char disk[32];                   /* its name */
};

/* One point of a sweep as a fio job. */
struct rb_fio_job {
    const char *name;                /* job section name: [A-Za-z0-9._-]+ */
    const char *filename;            /* file or block device; ':' is escaped for fio */
    uint64_t size_bytes;             /* 0: leave size= out (fio uses the whole device or file) */
    const char *rw;                  /* randread randwrite read write randrw */
    unsigned rwmix_read_pct;         /* written only for randrw */
    uint64_t bs_bytes, iodepth, numjobs;
    uint64_t runtime_ns, ramp_ns;    /* written in milliseconds (fio's "ms" suffix); ramp 0 is left out */
    const char *engine;              /* ioengine=, [A-Za-z0-9_]+ */
    int direct;                      /* 0 or 1 */
    const char *const *extra;        /* --fio-opt items (KEY or KEY=VALUE), written after railbench's keys */
    size_t nextra;
};

/*
 * Why a value cannot go into a job file, or NULL when it can. fio reads ';'
 * and '#' as the start of a comment, expands "${VAR}" and '$' keywords, and
 * ends a value at a line break, so a path containing any of those (or other
 * control characters, or leading/trailing blanks that fio strips) would not
 * reach fio intact. The string returned is static.
 */
const char *rb_fio_value_problem(const char *value);

/*
 * Writes the job file for job into buf (len bytes, NUL-terminated). Returns
 * the length, -EINVAL when a value cannot be written safely (see
 * rb_fio_value_problem; a bad name or engine), or -ENOSPC when buf is too small.
 */
int rb_fio_job_text(const struct rb_fio_job *job, char *buf, size_t len);

/*
 * What sets the fio option key[0..len) when railbench sets it itself ("--bs",
 * or "railbench itself (why)"), or NULL when a --fio-opt item may set it.
 * Read from the one table the job file and the command line are written from.
 */
const char *rb_fio_key_owner(const char *key, size_t len);

/*
 * Checks one --fio-opt item, KEY or KEY=VALUE. Returns 0 when it may go into
 * a job file; -EINVAL when it is malformed (no key, '[' or ']', an empty
 * value, a value fio would misread as for rb_fio_value_problem, a key that is
 * not [a-z0-9_]); -EEXIST when railbench sets the key itself. err (may be
 * NULL) gets one sentence naming the item and, for -EEXIST, what sets it.
 */
int rb_fio_opt_check(const char *item, char *err, size_t errlen);

/* fio's command line for one point; argv points into the struct. */
struct rb_fio_cmdline {
    char format_arg[32], eta_arg[32], readonly_arg[32], output_arg[4500], job_path[4400];
    char *argv[8];
};

/*
 * Fills c with "fio --output-format=json+ --output=JSON --eta=never
 * [--readonly] JOB" from the same key table as the job file.
 */
void rb_fio_cmdline(struct rb_fio_cmdline *c, const char *json_path, const char *job_path, bool readonly);

/*
 * Parses fio's JSON output text (fio >= 3.0 field names: *_ns latencies,
 * bw_bytes). Lines before the first one that starts with '{' are skipped,
 * because fio writes notes such as "fio: terminating on signal 15" into its
 * --output file ahead of the JSON. Sums iops, bandwidth, bytes and I/Os over
 * jobs[]. When clat or lat is not NULL, the json+ "bins" of that latency kind
 * of both directions are recorded into it (each bin's count at the bin's
 * value). Returns 0, or -EINVAL with one sentence in err (malformed or
 * truncated JSON with the byte offset, a missing field with its path).
 * Thread-safe for distinct results and histograms.
 */
int rb_fio_parse(const char *text, struct rb_fio_result *r, struct rb_hist *clat, struct rb_hist *lat,
                 char *err, size_t errlen);

/*
 * rb_fio_parse on the contents of path (read with rb_file_read, at most
 * 64 MiB and no NUL bytes); -errno with err set when the file cannot be read.
 */
int rb_fio_parse_file(const char *path, struct rb_fio_result *r, struct rb_hist *clat, struct rb_hist *lat,
                      char *err, size_t errlen);

/* ---- SLO and knee: the derived figures, each in one function (slo.c) ---- */

/* Which latency an SLO bounds: fio's completion latency (clat) or total latency (lat = slat + clat). */
enum rb_block_lat { RB_BLOCK_CLAT, RB_BLOCK_LAT };

/* A latency bound such as "p99<=500us": percentile index into rb_fio_pct, bound, strictness. */
struct rb_block_slo {
    enum rb_block_lat kind;
    int pct;                 /* index into rb_fio_pct / rb_fio_pct_key */
    uint64_t bound_ns;
    bool inclusive;          /* "<=" rather than "<" */
    char text[64];           /* canonical form, e.g. "clat p99<=500us" */
};

/* One point of a sweep, aggregated over every rank. */
struct rb_block_point {
    uint64_t bs_bytes, iodepth, numjobs;
    double iops, bw_bytes_per_s;
    uint64_t clat_ns[RB_FIO_PCTS];   /* at rb_fio_pct */
    uint64_t lat_ns[RB_FIO_PCTS];
    double disk_util_pct;            /* < 0 when unknown */
    /* --rw randrw: reads and writes apart (IOPS summed over ranks; clat p99 the worst rank's fio figure). */
    double dir_iops[2];              /* [0] read, [1] write */
    uint64_t dir_clat_p99_ns[2];     /* 0 when fio reported no percentile */
};

/* The knee rule's thresholds (rb_block_knee). */
#define RB_BLOCK_KNEE_MAX_IOPS_GAIN 0.10
#define RB_BLOCK_KNEE_MIN_P99_GROWTH 0.50

/*
 * Parses an SLO: [clat|lat] PERCENTILE (<=|<) DURATION, blanks allowed
 * between the parts, e.g. "p99<=500us", "p99.9 < 2ms", "lat p50<=100us".
 * Percentiles: p50 p90 p99 p99.9 (or p999) p99.99 (or p9999); durations as
 * rb_parse_duration (a plain number is seconds). The latency defaults to
 * clat. Returns 0, or -EINVAL with one sentence in err naming the accepted form.
 */
int rb_block_slo_parse(const char *s, struct rb_block_slo *slo, char *err, size_t errlen);

/* Outstanding I/O of a point: iodepth x numjobs (per rank), the x axis of the curve. */
uint64_t rb_block_outstanding(const struct rb_block_point *p);

/* True when the point's latency at the SLO's percentile is within the bound. */
bool rb_block_slo_met(const struct rb_block_slo *slo, const struct rb_block_point *p);

/*
 * Index of the point with the highest IOPS that meets slo among pts[0..n)
 * (on equal IOPS the one with less outstanding I/O), or -1 when none does.
 */
int rb_block_slo_best(const struct rb_block_slo *slo, const struct rb_block_point *pts, size_t n);

/*
 * The knee of one curve, pts[0..n) in increasing outstanding I/O: the last
 * point before the first step that buys less than 10 % more IOPS
 * (RB_BLOCK_KNEE_MAX_IOPS_GAIN) for more than 50 % more clat p99
 * (RB_BLOCK_KNEE_MIN_P99_GROWTH). Returns its index, or -1 when no step does
 * (IOPS still scale, or latency stays flat, up to the last point).
 */
int rb_block_knee(const struct rb_block_point *pts, size_t n);

/* ---- the command's options and sweep points (block_cmd.c) ---- */

enum rb_block_rw { RB_BLOCK_RANDREAD, RB_BLOCK_RANDWRITE, RB_BLOCK_READ, RB_BLOCK_WRITE, RB_BLOCK_RANDRW };
/* fio's rw= names, indexed by enum rb_block_rw. */
extern const char *const rb_block_rw_names[];

struct rb_block_opts {
    const char *target;
    uint64_t size_bytes;
    int rw;                          /* enum rb_block_rw */
    double rwmix_pct;
    struct rb_u64s bs, iodepth, numjobs;
    uint64_t runtime_ns, ramp_ns;
    const char *engine;
    int64_t direct;
    const char *slo;
    bool allow_destructive, keep;
    bool allow_root_fs;              /* a file railbench creates may land on the root file system */
    const char *fio;
    struct rb_strs fio_opts;         /* --fio-opt KEY[=VALUE], checked with rb_fio_opt_check */
};

/* One point of the sweep before it runs: its shape and its name ("4k-randread-qd8-j1"). */
struct rb_block_spec {
    uint64_t bs, iodepth, numjobs;
    char name[64];
};

/* True when rw writes to the target. */
bool rb_block_rw_writes(int rw);

/* Block size as fio users write it into buf: "4k", "8k", "1m", or bytes. */
void rb_block_bs_label(char *buf, size_t len, uint64_t bs);

/* ---- this rank's target (target.c) ---- */

enum rb_block_target_kind { RB_BLOCK_NEW_FILE, RB_BLOCK_OWN_FILE, RB_BLOCK_EXISTING_FILE, RB_BLOCK_DEVICE };
/* "new file", "file in directory", "existing file", "block device", indexed by enum rb_block_target_kind. */
extern const char *const rb_block_target_kind_names[];

struct rb_block_target {
    char path[4096];
    enum rb_block_target_kind kind;
    bool ours;            /* railbench creates it and removes it at the end unless --keep */
    bool created;         /* it exists now because of this run (or a kept earlier one: RB_BLOCK_OWN_FILE) */
    uint64_t size_bytes;  /* size= for fio; 0 lets fio use the whole device */
    uint64_t device_bytes;
    /* A file target: the mount it lands on (/proc/self/mountinfo); empty for a device or when unknown. */
    char mount_point[4096], mount_source[512], fstype[64];
};

/* Logs one error line (rb_error, on the rank it happens on) and yields status: return RB_BLOCK_ERROR(...). */
#define RB_BLOCK_ERROR(status, ...) (rb_error(__VA_ARGS__), (status))

/*
 * Decides what this rank drives (docs/block.md, "Target"): "%r"
 * becomes the rank; a directory gets railbench-block.<rank>.data inside it;
 * a path that does not exist becomes a new file (with ".<rank>" appended
 * under more than one rank when the path has no "%r"); an existing file or
 * block device is used as it is, and writing to it needs --allow-destructive.
 * Fills *t. Returns 0, RB_EXIT_USAGE or RB_EXIT_RUNTIME after one line.
 */
int rb_block_target_resolve(const struct rb_block_opts *o, int rank, int nranks, struct rb_block_target *t);

/*
 * Writes a target railbench owns in full before fio reads it (a file of the
 * right size left by an earlier --keep run is reused). Returns 0,
 * RB_EXIT_CHECK when a signal stopped it, or RB_EXIT_USAGE / RB_EXIT_RUNTIME
 * after one line.
 */
int rb_block_target_prepare(const struct rb_block_opts *o, struct rb_block_target *t);

/* Removes the target when railbench created it and --keep was not given; warns when it cannot. */
void rb_block_target_remove(const struct rb_block_opts *o, const struct rb_block_target *t);

/*
 * Two ranks on one host must not share a target: rank 0 checks every rank's
 * (host, real path) and returns RB_EXIT_USAGE after one line naming both
 * ranks; other ranks return 0. Collective on h->comm.
 */
int rb_block_target_check_distinct(struct rb_harness *h, const struct rb_block_target *t);

/* ---- fio as a child process, one point at a time (fio_run.c) ---- */

/* One point on this rank; the ctx of its harness phase. The caller owns clat and lat. */
struct rb_block_run {
    const struct rb_block_opts *o;
    const char *fio_path;
    const char *name;
    char job_path[4400], json_path[4400], log_path[4400];
    struct rb_fio_cmdline cmd;
    pid_t pid;
    bool reaped, stopped, parsed, ok;
    int wstatus;
    char err[9000];
    struct rb_fio_result fio;
    struct rb_hist *clat, *lat;
};

/*
 * Finds prog in PATH (or checks it, when it has a '/') and writes the path
 * to exec into out. Returns 0 or -ENOENT.
 */
int rb_block_find_program(const char *prog, char *out, size_t len);

/* CPUs this process may run on (fio inherits the set), or -1 when unknown. */
int rb_block_cpus_allowed(void);

/* Rank 0 warns when a rank's CPU binding leaves fewer CPUs than fio jobs (collective on h->comm). */
void rb_block_warn_binding(struct rb_harness *h, const struct rb_block_opts *o);

/* Readies r for the point ps with its files in dir (resets the outcome and both histograms). */
void rb_block_run_reset(struct rb_block_run *r, const char *dir, const struct rb_block_spec *ps);

/* Writes r's job file for point ps on target t; returns 0 or RB_EXIT_RUNTIME after one line. */
int rb_block_run_write_job(const struct rb_block_run *r, const struct rb_block_target *t,
                           const struct rb_block_spec *ps);

/*
 * Fills the harness phase that runs r's fio: start (fork and exec, never a
 * shell), done, stop (SIGTERM, then SIGKILL) and collect (parse the JSON)
 * with r as ctx; the phase ends after watchdog_ns at the latest.
 */
void rb_block_run_phase(struct rb_phase *p, struct rb_block_run *r, uint64_t watchdog_ns);

/*
 * Rank 0, before the sweep: asks fio about the --fio-opt items. An item
 * whose key fio knows as another name of a key railbench sets (blocksize for
 * bs) returns RB_EXIT_USAGE after one line; when fio will not parse point
 * ps's job file (fio --parse-only; it writes the job file into dir), returns
 * RB_EXIT_RUNTIME after one line with fio's own complaint. 0 otherwise.
 */
int rb_block_run_check_opts(struct rb_block_run *r, const char *dir, const struct rb_block_target *t,
                            const struct rb_block_spec *ps);

/*
 * Prints the last lines of fio's log (where its own error messages are) as
 * error lines and appends the first of them to err.
 */
void rb_block_run_log_tail(const char *log_path, char *err, size_t errlen);

/* ---- aggregation over ranks (aggregate.c) ---- */

/* This rank's figures for one point, for rank 0 to gather; the caller frees it. */
cJSON *rb_block_rank_json(const struct rb_harness *h, const struct rb_block_run *r, const struct rb_block_target *t);

/*
 * Rank 0: the aggregate of one point from the ranks' figures (per_rank, the
 * gathered rb_block_rank_json values, whose histograms it consumes and whose
 * ownership it takes) and the harness's merged totals. Fills *bp, sets
 * *interrupted when any rank's fio was stopped, and returns the point's JSON
 * record (the caller owns it).
 */
cJSON *rb_block_aggregate(const struct rb_block_opts *o, const struct rb_block_spec *ps, cJSON *per_rank,
                          const struct rb_stats *total, struct rb_block_point *bp, bool *interrupted);

/* Rank 0: the point's figures as Prometheus gauges (cluster-wide). */
void rb_block_point_metrics(struct rb_harness *h, const char *rw, const struct rb_block_spec *ps,
                            const struct rb_block_point *bp);

/* Rank 0: the progress line of point k of n ("[k/n] name IOPS MiB/s clat ...") on stdout. */
void rb_block_point_print(size_t k, size_t n, const struct rb_block_spec *ps, const struct rb_block_point *bp,
                          bool interrupted);

/* ---- the report (report.c) ---- */

/* What the sweep measured, for the report (rank 0). */
struct rb_block_results {
    const struct rb_block_opts *o;
    const struct rb_block_slo *slo;  /* NULL without --slo */
    const struct rb_block_spec *ps;  /* the sweep's points, n of them */
    const struct rb_block_point *bp; /* their aggregates; bs_bytes 0 when not measured */
    const bool *complete;            /* ran to its end (only those count for the SLO and the knee) */
    size_t n;
    const char *target0;             /* rank 0's target */
    const struct rb_block_target *t0; /* rank 0's target: the mount it lands on */
    const char *fio_version;
};

/*
 * Rank 0, after the sweep: the table per block size, the best point under
 * the SLO, the knee of each curve; sets result.json's summary (taking
 * ownership of points, the points' JSON records) and its "slo" check.
 * Returns the table text (the caller frees it), or NULL when no point was
 * measured or memory ran out.
 */
char *rb_block_report(struct rb_harness *h, const struct rb_block_results *res, cJSON *points);

#endif
