/* Reads a tar archive's headers on a file system (pread, data skipped): how many samples a shard holds. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "file_int.h"
#include "railbench/beneath.h"
#include "../engine/tarshard_int.h"

#define BLOCK 512u

int rb_file_tar_members(int dir, const char *name, uint64_t *members, uint64_t *member_bytes)
{
    *members = *member_bytes = 0;
    int fd = rb_beneath_open(dir, name, O_RDONLY, 0);
    if (fd < 0)
        return fd;
    unsigned char h[BLOCK];
    int rc = 0;
    for (off_t off = 0;;) {
        ssize_t n = pread(fd, h, BLOCK, off);
        if (n < 0) {
            rc = -errno;
            break;
        }
        if (n < (ssize_t)BLOCK) {
            rc = n ? -EINVAL : 0; /* a header cut short is no tar; the end without zero blocks GNU tar accepts */
            break;
        }
        uint64_t size = 0;
        bool regular = false;
        int hr = rb_tar_header(h, &size, &regular);
        if (hr == 1)
            break; /* the end of the archive (GNU tar stops at the first zero block as well) */
        if (hr < 0) {
            rc = -EINVAL;
            break;
        }
        if (regular) {
            ++*members;
            *member_bytes += size;
        }
        off += (off_t)rb_tar_entry_bytes(size);
    }
    close(fd);
    return rc;
}
