/* railbench load tiers: a file:// tier, a cache directory read through in front of the backend (tiers_fcache.c). */
#ifndef RB_TIERS_FCACHE_INT_H
#define RB_TIERS_FCACHE_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../objset/objset_int.h"
#include "../proto/target_int.h"

struct rb_transport;

/*
 * A local cache directory as a tier, read through as data loaders with a
 * local cache read: a GET finds the object's file in the directory (HIT,
 * read to its end) or fetches it from the backend into a file of its own
 * and puts that in place under the object's name (MISS), never over a file
 * that is there. The cold and warm phases read the target t, whose request
 * loop is this one (blocking: one request at a time per thread).
 *
 * Thread-safety: built and sized on the main thread between phases; during
 * a phase each worker thread uses its own th[] entry, and the counters and
 * the created bitmap are atomics.
 */
struct rb_tiers_fc_thread;

/* What rb_tiers_fcache_take hands over, in this order. */
enum { RB_TIERS_FC_ORIGIN_BYTES, RB_TIERS_FC_CACHE_BYTES, RB_TIERS_FC_FILLED, RB_TIERS_FC_FOREIGN_HITS,
       RB_TIERS_FC_CONFLICTS, RB_TIERS_FC_COUNTS };

struct rb_tiers_fcache {
    struct rb_target t;             /* the tier (file://DIR): what cold and warm read, on rb_tiers_fc_transport */
    const struct rb_target *origin; /* the backend a miss fetches from (file://, http, s3, ais) */
    bool origin_file;
    unsigned nthreads;
    uint64_t block_bytes;           /* bytes per read and write system call (--block-size) */
    bool drop_files;                /* --drop-cache: a file's cached pages dropped before it is read (untimed) */
    bool fsync;                     /* --fsync close: a filled cache file is fsync'd before it is put in place */
    struct rb_tiers_fc_thread *th;  /* one per worker thread */
    _Atomic uint64_t *created;      /* bit i: this rank's object i was put in the cache by this run */
    uint64_t nobjects;
    _Atomic uint64_t origin_bytes;  /* bytes fetched from the backend into cache files this phase */
    _Atomic uint64_t cache_bytes;   /* bytes read from cache files (hits) */
    _Atomic uint64_t files_filled;  /* cache files this run put in place */
    _Atomic uint64_t foreign_hits;  /* hits on a file this run did not make (read, never touched) */
    _Atomic uint64_t conflicts;     /* fills that found the name taken meanwhile (served, not cached) */
};

/* The load options' transport of a phase on fc->t: a hit read from the cache file, a miss filled from the origin. */
extern const struct rb_transport rb_tiers_fc_transport;

/*
 * Builds the cache tier over tier (a file:// target) in front of origin,
 * for threads worker threads per rank, reading and writing block_bytes at a
 * time. Borrows both targets. Returns 0 or -ENOMEM.
 */
int rb_tiers_fcache_new(struct rb_tiers_fcache **fc, const struct rb_target *tier, const struct rb_target *origin,
                        unsigned threads, uint64_t block_bytes);
/* Frees fc (NULL-safe); the cache files stay where they are. */
void rb_tiers_fcache_free(struct rb_tiers_fcache *fc);

/* Before the cold phase of an object set of n objects (this rank's): nothing of it created yet. Returns 0 or -ENOMEM. */
int rb_tiers_fcache_objects(struct rb_tiers_fcache *fc, uint64_t n);

/* Moves the phase's counters (RB_TIERS_FC_*) into v and zeroes them. Main thread, between phases. */
void rb_tiers_fcache_take(struct rb_tiers_fcache *fc, uint64_t v[RB_TIERS_FC_COUNTS]);

/*
 * How many of the cache file names of mine exist already (anything at the
 * name: a file the run did not make); *first gets the first one's path.
 * Returns 0, or -errno with the path and the error in first.
 */
int rb_tiers_fcache_existing(const struct rb_tiers_fcache *fc, const struct rb_objset *mine, uint64_t *n,
                             char *first, size_t len);

/*
 * Of mine's cache files this run created (*created_n), those on disk as
 * regular files of size bytes (*files, *bytes: their sizes by stat).
 */
void rb_tiers_fcache_on_disk(const struct rb_tiers_fcache *fc, const struct rb_objset *mine, uint64_t size,
                             uint64_t *created_n, uint64_t *files, uint64_t *bytes);

/* Unlinks the cache files of mine this run created, and no other. Returns how many it removed. */
uint64_t rb_tiers_fcache_remove(struct rb_tiers_fcache *fc, const struct rb_objset *mine);

#endif
