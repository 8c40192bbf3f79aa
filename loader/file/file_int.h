/* The file protocol: file:///path targets, their options, and the request loop that reads and writes files. */
#ifndef RB_FILE_INT_H
#define RB_FILE_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fileio_int.h"
#include <cjson/cJSON.h>

#include "railbench/cli.h"
#include "railbench/result.h"
#include "railbench/stats.h"

/*
 * Thread-safety: options are set on the main thread before workers start
 * and read-only afterwards; a worker's loop state is its own thread's.
 */

/* --drop-cache: none; each file's pages before it is read (posix_fadvise); and the whole host's between phases (root). */
enum rb_file_drop { RB_DROP_NONE, RB_DROP_FILES, RB_DROP_HOST };
#define RB_FILE_DROP_CHOICES "none|files|host"

/* Transfer size when --block-size is not given: large enough that a request is not its system calls. */
#define RB_FILE_DEFAULT_BLOCK (1024u * 1024u)

/* The file protocol's options (its option group); every command that opens a file:// target reads them. */
struct rb_file_opts {
    int engine;               /* enum rb_fio_engine (--io-engine) */
    bool direct;              /* --direct: O_DIRECT, aligned buffers, offsets and sizes */
    uint64_t block_bytes;     /* --block-size: bytes per read or write system call (or io_uring I/O) */
    int fsync;                /* enum rb_fio_fsync (--fsync): writers' durability */
    int drop_cache;           /* enum rb_file_drop (--drop-cache) */
    bool cold_check;          /* --cold-check: count each read file's resident pages before it is read (mincore) */
};

/* The defaults (psync, buffered, 1 MiB blocks, no fsync, no drop, no check). */
#define RB_FILE_OPTS_DEFAULT                                                                                         \
    {                                                                                                              \
        .engine = RB_FIO_PSYNC, .block_bytes = RB_FILE_DEFAULT_BLOCK, .fsync = RB_FSYNC_NONE,                        \
        .drop_cache = RB_DROP_NONE                                                                                 \
    }



/*
 * Adds the file protocol's option group to t, their values in fo (its
 * current values are the defaults --help shows). Commands take it through
 * rb_load_options (loader/cmd), never row by row. Main thread.
 */
void rb_file_options(struct rb_opts *t, struct rb_file_opts *fo);

struct rb_cli;
struct rb_target;

/*
 * The file options against the target they go with: a file option changed
 * from its default for a target that is not file:// is a usage error (its
 * default given explicitly is not: a rerun's --config gives every value). On a file target with psync, *inflight becomes
 * 1 (one I/O at a time per thread; a warning when --inflight was given).
 * Returns 0 or RB_EXIT_USAGE after one line.
 */
/*
 * A file:// target's room for what a run will write: need bytes (at least) against the free space of the file system
 * under its directory (statvfs, as an unprivileged user sees it; local file systems that report a size only, not
 * FUSE or network ones, as probed by rb_file_opts_target). More than that, or a file system mounted read-only,
 * is one `error:` line naming both (or EROFS), and RB_EXIT_RUNTIME, before anything is written; 0 when it fits, the
 * target is not file://, or statvfs fails.
 */
int rb_file_space_check(const struct rb_target *t, uint64_t need, const char *what);

/*
 * rb_target_probe of any target; a file:// target's (its directory's stat, access and open) on a thread the file
 * watchdog bounds with timeout_ns, like every later call: a stalled mount ends the run before it starts. Returns 0,
 * or -errno with one line in err ("" when the watchdog's line said which call did not return).
 */
int rb_file_target_probe(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen);

int rb_file_opts_target(const struct rb_file_opts *fo, const struct rb_target *t, const struct rb_cli *cli,
                        uint64_t *inflight);

/* The name the page-cache residency check goes by where a cache header's would (the phase's cache_* counters). */
#define RB_FILE_COLD_CHECK_NAME "page-cache residency (mincore)"

/* Adds "file": the options a file run used (engine, direct, block size, fsync, drop, check) to summary. */
void rb_file_summary_json(cJSON *summary, const struct rb_file_opts *fo);

/*
 * With --cold-check, records the check "[what_]cold" on r from the read
 * phase's stats s (its cache_* counters): passed when every file read had
 * no page cached before it was read. Logs an error when it fails after
 * --drop-cache. Returns whether it passed (true without --cold-check).
 */
bool rb_file_check_cold(struct rb_result *r, const char *what, const struct rb_file_opts *fo, const struct rb_stats *s);

struct rb_harness;

/*
 * Before a read phase: with --drop-cache host, one rank on every host
 * syncs and drops the host's whole page cache (/proc/sys/vm/drop_caches),
 * reading /proc/meminfo's Cached before and after; rank 0 records them per
 * host under result.json's "page_cache_drops" and the check
 * "[phase_]host_cache_dropped". Collective (every rank calls it; a no-op
 * without --drop-cache host). Returns 0, or RB_EXIT_RUNTIME after one
 * `error:` line when a host could not drop. Main thread.
 */
int rb_file_drop_host_cache(struct rb_harness *h, const struct rb_file_opts *fo, const char *phase);

/*
 * Checks fo for use (main thread, before anything runs): a --direct
 * --block-size must be a multiple of RB_FIO_ALIGN; --drop-cache host needs
 * root. Returns 0 or
 * RB_EXIT_USAGE after the one-line usage error.
 */
int rb_file_opts_check(const struct rb_file_opts *fo);

/*
 * Reads the headers of the tar archive name beneath the directory dir
 * (include/railbench/beneath.h: a symbolic link is -ELOOP, never followed;
 * ustar or GNU; data skipped, each header's checksum checked) up to its end
 * block: the regular-file members (a WebDataset shard's samples) and their
 * bytes. Returns 0, -EINVAL when a header is not tar, or -errno from open or
 * read.
 */
int rb_file_tar_members(int dir, const char *name, uint64_t *members, uint64_t *member_bytes);

#endif
