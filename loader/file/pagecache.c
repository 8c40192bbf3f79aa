/* Page-cache control and proof: posix_fadvise to drop, mincore to count resident pages, /proc/meminfo for the host. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pagecache_int.h"

/* Files are mapped this much at a time for mincore: its vector stays small (4 KiB of entries per 16 MiB). */
#define WINDOW_BYTES (64ull << 20)

int rb_pagecache_drop_fd(int fd)
{
    /* DONTNEED skips dirty pages: a file written moments ago (--populate, a put) is written back first. */
    if (fdatasync(fd) != 0 && errno != EINVAL && errno != EROFS)
        return -errno;
    int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    return rc ? -rc : 0;
}

int rb_pagecache_residency(int fd, uint64_t size, struct rb_residency *out)
{
    long pg = sysconf(_SC_PAGESIZE);
    uint64_t page = pg > 0 ? (uint64_t)pg : 4096;
    out->resident_pages = out->total_pages = 0;
    unsigned char vec[WINDOW_BYTES / 4096];
    for (uint64_t off = 0; off < size; off += WINDOW_BYTES) {
        size_t len = (size_t)(size - off < WINDOW_BYTES ? size - off : WINDOW_BYTES);
        void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);
        if (p == MAP_FAILED)
            return -errno;
        size_t npages = (size_t)((len + page - 1) / page);
        int rc = mincore(p, len, vec);
        int err = errno;
        munmap(p, len);
        if (rc != 0)
            return -err;
        for (size_t i = 0; i < npages; i++)
            out->resident_pages += vec[i] & 1;
        out->total_pages += npages;
    }
    return 0;
}

int rb_pagecache_verdict(const struct rb_residency *r)
{
    if (r->resident_pages == 0)
        return 0;
    return r->resident_pages == r->total_pages ? 1 : -1;
}

int rb_pagecache_host_cached(const char *proc_root, uint64_t *bytes)
{
    char path[512];
    snprintf(path, sizeof path, "%s/meminfo", proc_root ? proc_root : "/proc");
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    char line[256];
    int rc = -ENOENT;
    while (fgets(line, sizeof line, f)) {
        uint64_t kib;
        if (sscanf(line, "Cached: %" SCNu64 " kB", &kib) == 1) {
            *bytes = kib * 1024;
            rc = 0;
            break;
        }
    }
    fclose(f);
    return rc;
}

int rb_pagecache_drop_host(void)
{
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, "3\n", 2);
    int rc = n == 2 ? 0 : -(n < 0 ? errno : EIO);
    close(fd);
    return rc;
}
