/* Cleanup: deleting the objects a run wrote (load put, load mixed) as one measured DELETE phase; --keep keeps them. */
#ifndef RB_CLEANUP_INT_H
#define RB_CLEANUP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "../objset/objset_int.h"
#include "../engine/phase_int.h"
#include "../proto/target_int.h"
#include "railbench/harness.h"

/* What a cleanup did, over all ranks (rank 0). */
struct rb_cleanup {
    uint64_t written;   /* objects the run wrote and left: what cleanup deletes, or --keep keeps */
    uint64_t deleted;   /* DELETEs that succeeded */
    uint64_t failed;    /* DELETEs that failed: those objects stay */
    bool kept;          /* --keep: nothing was deleted */
    bool skipped;       /* interrupted by a signal: nothing was deleted, everything written stays */
};

/* rb_cleanup_run's kept argument when names itself counts what was written (load mixed tracks it always). */
#define RB_CLEANUP_COUNTED UINT64_MAX

/*
 * Deletes names (this rank's share of what the run wrote and left) unless
 * keep, as a DELETE phase "cleanup" with o's threads, in-flight requests and
 * timeout; collective. With keep, kept is the count written (a put does not
 * track names it keeps), or RB_CLEANUP_COUNTED to count names. After a
 * signal nothing is deleted (skipped; a warning names what stays). Rank 0 logs "deleted N objects this run wrote (--keep
 * keeps them)", adds summary.cleanup {written, deleted, failed, kept} to
 * summary (may be NULL elsewhere) and records the check "cleanup" (failed
 * when a DELETE failed, naming how many objects were left under prefix).
 * Returns 0, RB_EXIT_CHECK when a DELETE failed, or an exit status.
 */
int rb_cleanup_run(struct rb_harness *h, const struct rb_load_opts *o, const struct rb_objset *names, bool keep,
                   uint64_t kept, const char *where, struct rb_cleanup *out);

/* The file in the run's directory that lists, one a line, what a run left behind (load delete --filelist reads it). */
#define RB_CLEANUP_LIST_NAME "left-behind.txt"

/*
 * Every rank's names to rank 0, written one a line to RB_CLEANUP_LIST_NAME in the run's directory (collective);
 * rank 0 gets its path in path. Returns 0 or -errno (rank 0).
 */
int rb_cleanup_list(struct rb_harness *h, const struct rb_objset *names, char *path, size_t len);

/* The file in the run's directory listing the puts whose outcome was unknown and that may be stored. */
#define RB_PROBE_LIST_NAME "unknown-outcome.txt"
/* How many names of each kind a message names (the rest are in the list). */
#define RB_PROBE_NAMED 10

/*
 * After a put phase (collective): this rank's puts whose outcome is unknown (res->unknown: timed out, reset, in
 * flight at the end) are looked up with HEAD (timeout_ns each, rb_safety_probe). Those found stored join
 * res->leftover, what cleanup deletes (not with keep); res->probed, probed_left and probed_unknown get the counts
 * over ranks (HEAD failed too: unknown). Rank 0 writes the names stored or unknown to RB_PROBE_LIST_NAME in the
 * run's directory (res->probe_list, "" when none), warns naming up to RB_PROBE_NAMED of each, and records the check
 * "unknown_outcome" (failed when any stays unknown).
 */
void rb_cleanup_probe(struct rb_harness *h, const struct rb_target *t, struct rb_load_result *res, uint64_t timeout_ns,
                      bool keep);

/* The summary.cleanup object of c (rank 0). */
cJSON *rb_cleanup_json(const struct rb_cleanup *c);

#endif
