/* railbench load tiers: direct, cold and warm GETs through a caching tier in one run; verdicts and speed-ups. */
#ifndef RB_TIERS_INT_H
#define RB_TIERS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../objset/objset_int.h"
#include "railbench/buf.h"
#include "../proto/target_int.h"

/* How a phase reads: straight from the backend, the first time through the tier, or again through it. */
enum rb_tiers_how { RB_TIERS_DIRECT, RB_TIERS_COLD, RB_TIERS_WARM };

/* A phase's responses counted by the tier's cache-status header (the engine's cache_* counters). */
struct rb_tiers_cache {
    uint64_t hit, miss, other, absent;
};

enum rb_tiers_verdict {
    RB_TIERS_VERIFIED,   /* the tier's header says the phase was what it claims to be */
    RB_TIERS_UNVERIFIED, /* nothing to judge by: no response carried the header (or a direct phase) */
    RB_TIERS_FAILED,     /* a cold phase saw a HIT, or a warm phase saw a MISS */
};

/*
 * Judges one phase through the tier by its cache-status counts. A cold
 * phase fails on any HIT (the tier already held an object the run had
 * never read through it, so the read was not cold); a warm phase fails on
 * any MISS (the tier did not keep what it fetched). Values other than HIT
 * and MISS (nginx's EXPIRED, STALE, BYPASS, ...) and absent headers do not
 * fail a phase; a phase where no response carried the header is
 * unverified, and so is a direct phase. Writes one sentence on the counts
 * into why (may be NULL). Pure; thread-safe.
 */
enum rb_tiers_verdict rb_tiers_judge(enum rb_tiers_how how, const struct rb_tiers_cache *c, char *why, size_t len);

/*
 * Speed-up of one phase over another as the ratio of their throughputs
 * (warm over direct, warm over cold), the figure the AIStore write-up
 * reads off its table. Returns -1 when slow is not positive (undefined).
 */
double rb_tiers_speedup(double fast_bytes_per_s, double slow_bytes_per_s);

/*
 * A compact label for an object size, used in phase and object names:
 * the largest binary unit that divides it exactly ("1MiB", "256KiB",
 * "1000B"). Writes at most len bytes.
 */
void rb_tiers_size_label(char *buf, size_t len, uint64_t bytes);

/* Why a figure of the table is –: bits of rb_tiers_unmeasured_notes's why. */
enum { RB_TIERS_NET_LOCAL = 1, RB_TIERS_NO_DISK = 2, RB_TIERS_REMOTE_DISK = 4, RB_TIERS_DIRECT_CACHE = 8 };

/*
 * The lines under the table that say, once each, why a figure is – (the
 * bits of why); and, when a row shows a disk util (any_disk), what it is.
 */
void rb_tiers_unmeasured_notes(struct rb_buf *b, unsigned why, bool any_disk);

/* How the tier is emptied before each cold phase: one of AIStore's two evict calls, or a command. */
struct rb_tiers_evict {
    const struct rb_target *tier, *backend;
    bool objects;       /* --evict: the cold phase's objects through AIStore's API */
    bool bucket;        /* --evict-bucket: everything the AIStore tier cached of its bucket */
    char **words;       /* else --evict-cmd, split into words (or sh -c CMD) */
    uint64_t timeout_ns;
};

/*
 * Empties the tier before cold phase `phase` (objects tier_all of size
 * bytes under tier_prefix); an --evict-cmd sees them as RB_TIERS_*
 * variables. *how names the way for messages. Returns 0, -ECANCELED when
 * stop was raised, or another negative errno with one sentence in err.
 */
int rb_tiers_evict_run(const struct rb_tiers_evict *e, const char *phase, uint64_t size,
                       const struct rb_objset *tier_all, const char *tier_prefix, const volatile int *stop,
                       const char **how, char *err, size_t len);

/* Entry point of `railbench load tiers` (argv[0] = "tiers"). Returns an exit status. */
int rb_load_tiers_main(int argc, char **argv);

#endif
