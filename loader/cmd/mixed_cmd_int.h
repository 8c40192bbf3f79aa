/* load mixed's phases (mixed_cmd.c): prepare, the mixed phase, cleanup, and the summary; load_cmd.c runs them. */
#ifndef RB_MIXED_CMD_INT_H
#define RB_MIXED_CMD_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "../engine/mixed_int.h"
#include "../engine/steady_int.h"
#include "railbench/harness.h"

/* Main thread only; collective. */

struct rb_load_opts;

/* What load mixed runs beyond the engine's options. */
struct rb_mixed_args {
    const char *command;          /* "load mixed" */
    const char *target;           /* the target's name (summary.target) */
    const char *where;            /* the target and prefix, for log lines */
    struct rb_mix mix;
    bool prepare;                 /* put every object first (phase "prepare"); false: --no-prepare */
    bool keep;                    /* --keep: leave what the run wrote */
    const char *run_prefix;       /* the run's own prefix its names are under, or NULL (names the user gave) */
    uint64_t duration_ns;
    struct rb_steady_opts steady; /* --until-steady of the mixed phase */
    double max_error_pct;
};

/*
 * Runs load mixed on every rank: the prepare phase (a PUT of each of the
 * rank's objects), the mixed phase of o with m's weights, then cleanup of
 * what the run wrote and left (unless --keep). Rank 0 sets result.json's
 * summary (ops[]: one row per op of non-zero weight; total; prepare;
 * live_objects; cleanup) and the checks, and returns the table in *table
 * (malloc'd). Returns 0 or an exit status.
 */
int rb_mixed_run(struct rb_harness *h, const struct rb_load_opts *o, const struct rb_mixed_args *m, char **table);

#endif
