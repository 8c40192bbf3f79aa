/* What a run may write: its own per-run prefix, or names the user keeps, looked up before the first write. */
#ifndef RB_SAFETY_INT_H
#define RB_SAFETY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../engine/engine_int.h"
#include "../objset/objset_int.h"
#include "railbench/harness.h"
#include "../proto/target_int.h"

/*
 * The name part that makes a run's own prefix: "rb-<run id>-" (the run id is
 * the harness's, the same on every rank, e.g. rb-20261125T194300Z-3f9a1c-).
 * Writes at most len bytes. Pure.
 */
void rb_safety_run_prefix(const struct rb_harness *h, char *buf, size_t len);

/*
 * Before a run writes names the user keeps (put --keep, a --prefix or
 * --filelist the user named, train --populate): finds which of this rank's
 * names (mine) exist already in t. s3:// and ais:// are listed once by rank
 * 0 under the longest prefix common to every rank's names (on engine, the
 * command's --engine: rb_engine_list); http(s):// gets a
 * HEAD per name from the rank that owns it. When any exists and not
 * overwrite, rank 0 prints one error line naming the first one (and how
 * many), and every rank returns RB_EXIT_USAGE; with overwrite, rank 0 warns
 * and *existing (may be NULL) gets this rank's names that were there, which
 * cleanup then leaves alone. command and option name the run and why its names are the user's
 * in messages ("load put", "--keep").
 * A lookup that fails (HTTP 5xx, 403, unreachable) is RB_EXIT_RUNTIME with
 * one line. A file system answers a generated set by reading the names'
 * directory once (O(its entries)), a listed set by one lstat per name. The
 * lookup stops when limit_ns (the run's time limit; 0: none) has passed or
 * SIGINT/SIGTERM came: then RB_EXIT_RUNTIME with one line saying how many
 * names were looked up (a run writes no name it has not checked). Past its
 * first second rank 0 prints a progress line on stderr once a second
 * (not with --quiet). Collective. Returns 0 or an exit status.
 */
int rb_safety_check(struct rb_harness *h, const struct rb_target *t, const struct rb_objset *mine,
                    uint64_t timeout_ns, enum rb_engine_kind engine, uint64_t limit_ns, bool overwrite, const char *command, const char *option,
                    struct rb_objset *existing);

/*
 * names without the ones in existing (a listed set, may be NULL or empty), as
 * a new listed set in *out. Returns 0 or -ENOMEM. Pure.
 */
int rb_safety_without(const struct rb_objset *names, const struct rb_objset *existing, struct rb_objset *out);

/*
 * After a put: HEADs each of names (this rank's puts whose outcome is unknown: timed out, reset, in flight at the
 * end) with timeout_ns each, HEAD_SLOTS at a time; a file system is asked locally (stat: its unfinished files that
 * could not be removed). A name that exists goes into left, one whose HEAD (or stat) failed too (no answer, or not
 * 2xx/404/410) into unknown; a 404 is not stored. Returns 0 or -errno.
 */
int rb_safety_probe(const struct rb_target *t, const struct rb_objset *names, uint64_t timeout_ns,
                    struct rb_objset *left, struct rb_objset *unknown);

/* Adds "run_prefix" to summary: the run's own prefix (target prefix included), or null when it wrote user names. */
void rb_safety_json(cJSON *summary, const char *run_prefix);

#endif
