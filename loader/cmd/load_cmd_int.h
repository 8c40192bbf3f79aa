/* load put|get|delete|stat|mixed: the parsed arguments, shared by the command (load_cmd.c) and its report
 * (load_report.c). */
#ifndef RB_LOAD_CMD_INT_H
#define RB_LOAD_CMD_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "cleanup_int.h"
#include "../file/file_int.h"
#include "loader_int.h"
#include "mixed_cmd_int.h"
#include "../engine/steady_int.h"

#define DEFAULT_PREFIX "obj-"
/* get --samples: each object one sample, or each regular member of a tar object (read as it streams). */
enum { LOAD_SAMPLES_OBJECTS, LOAD_SAMPLES_TAR };

struct load_args {
    enum rb_load_op op;
    struct rb_target_cfg tgt;  /* the target options: --endpoint, --timeout, each protocol's own */
    struct rb_engine_args eng; /* --engine, --max-redirects */
    uint64_t threads, inflight;
    uint64_t objects;
    const char *prefix, *filelist;
    uint64_t size, min_size, max_size;
    int pattern;
    uint64_t epochs;
    const char *range;
    uint64_t random_range;
    uint64_t duration_ns, count, bytes;
    double rate;
    uint64_t seed;
    bool verify;
    int samples;                      /* get --samples: LOAD_SAMPLES_OBJECTS or _TAR */
    double max_error_pct;
    const char *cache_header, *log_requests;
    bool phases;                      /* --phases: each request's latency cut into spans */
    uint64_t slowest;                 /* --slowest N */
    const char *until_steady;
    struct rb_steady_opts steady;     /* --until-steady, parsed */
    uint64_t part_size, mp_threshold; /* put to s3://: multipart (defaults RB_MP_DEFAULT_*) */
    const char *mix;                  /* mixed: --mix weights */
    struct rb_mix mix_weights;
    bool no_prepare, keep, overwrite;
    char run_prefix[64];              /* put/mixed writing under this run's own prefix: its "rb-<run id>-"; else "" */
    struct rb_file_opts file;         /* a file:// target's options (the file protocol's group) */
};

/* Rank 0: one line on what the phase is about to run. */
void rb_load_cmd_announce(const struct load_args *a, const struct rb_harness *h, const char *command,
                          const struct rb_target *t, uint64_t nobjects, const struct rb_load_opts *o);

/* Rank 0: result.json's summary, the checks (rate, cache header, cold files, steady state, error rate) and
 * the table (returned, malloc'd; NULL without memory). status: the phase's exit status so far. */
char *rb_load_cmd_report(const struct load_args *a, struct rb_harness *h, const char *command,
                         const struct rb_target *t, const char *prefix, const struct rb_load_opts *o,
                         const struct rb_load_result *res, const struct rb_cleanup *cl, int status);

#endif
