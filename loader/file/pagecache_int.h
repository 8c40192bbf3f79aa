/* Page-cache control and proof: drop a file's pages, count its resident pages (mincore), the host's Cached bytes. */
#ifndef RB_PAGECACHE_INT_H
#define RB_PAGECACHE_INT_H

#include <stdbool.h>
#include <stdint.h>

/* Thread-safe: no shared state; each call works on the descriptor or path it is given. */

/* How much of a file was in the page cache when it was looked at. */
struct rb_residency {
    uint64_t resident_pages, total_pages;
};

/*
 * Drops fd's cached pages: fdatasync first (DONTNEED leaves dirty pages,
 * so a file written moments ago would stay cached), then posix_fadvise
 * DONTNEED over the whole file. Returns 0 or -errno.
 */
int rb_pagecache_drop_fd(int fd);

/*
 * Counts which of the first size bytes of fd are in the page cache, by
 * mapping the file in windows and asking mincore: nothing is read, no page
 * is faulted in. Returns 0 with *out filled, or -errno (a file system
 * that cannot be mapped).
 */
int rb_pagecache_residency(int fd, uint64_t size, struct rb_residency *out);

/* The residency as the tiers' cache check names it: 1 all pages resident (hit), 0 none (miss), -1 some. Pure. */
int rb_pagecache_verdict(const struct rb_residency *r);

/*
 * The "Cached:" figure of <proc_root>/meminfo in bytes (proc_root NULL:
 * /proc). Returns 0 or -errno (-ENOENT: no such line).
 */
int rb_pagecache_host_cached(const char *proc_root, uint64_t *bytes);

/*
 * Drops the whole page cache of this host: sync, then "3" into
 * /proc/sys/vm/drop_caches (root only). Returns 0, or -EACCES / -EPERM
 * when not allowed, or another -errno.
 */
int rb_pagecache_drop_host(void);

#endif
