/* fio job files railbench generates, and the figures it reads from fio's JSON (json+) output. */
#ifndef RB_FIO_H
#define RB_FIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "railbench/hist.h"

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
};

/*
 * Why a value cannot go into a job file, or NULL when it can. fio reads ';'
 * and '#' as the start of a comment, expands "${VAR}" and '$' keywords, and
 * ends a value at a line break, so a path containing any of those (or other
 * control characters, or leading/trailing blanks that fio strips) would not
 * reach fio intact.
 */
const char *rb_fio_value_problem(const char *value);

/*
 * Writes the job file for job into buf (len bytes, NUL-terminated). Returns
 * the length, -EINVAL when a value cannot be written safely (see
 * rb_fio_value_problem; a bad name or engine), or -ENOSPC when buf is too small.
 */
int rb_fio_job_text(const struct rb_fio_job *job, char *buf, size_t len);

/*
 * Parses fio's JSON output text (fio >= 3.0 field names: *_ns latencies,
 * bw_bytes). Lines before the first one that starts with '{' are skipped,
 * because fio writes notes such as "fio: terminating on signal 15" into its
 * --output file ahead of the JSON. Sums iops, bandwidth, bytes and I/Os over
 * jobs[]. When clat or lat is not NULL, the json+ "bins" of that latency kind
 * of both directions are recorded into it (each bin's count at the bin's
 * value). Returns 0, or -EINVAL with one sentence in err (malformed or
 * truncated JSON with the byte offset, a missing field with its path).
 */
int rb_fio_parse(const char *text, struct rb_fio_result *r, struct rb_hist *clat, struct rb_hist *lat,
                 char *err, size_t errlen);

/* rb_fio_parse on the contents of path; -errno with err set when the file cannot be read. */
int rb_fio_parse_file(const char *path, struct rb_fio_result *r, struct rb_hist *clat, struct rb_hist *lat,
                      char *err, size_t errlen);

#endif
