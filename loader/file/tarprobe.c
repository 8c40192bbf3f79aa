/* Reads a tar archive's headers on a file system (pread, data skipped): how many samples a shard holds. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "file_int.h"

#define BLOCK 512u

/* An octal field of a ustar header (leading spaces, NUL or space terminated); -1 when it holds anything else. */
static long long octal(const unsigned char *p, size_t n)
{
    size_t k = 0;
    while (k < n && p[k] == ' ')
        k++;
    long long v = 0;
    size_t digits = 0;
    for (; k < n && p[k] >= '0' && p[k] <= '7' && v < (1ll << 40); k++, digits++)
        v = v * 8 + (p[k] - '0');
    if (!digits || (k < n && p[k] != ' ' && p[k] != '\0'))
        return -1;
    return v;
}

int rb_file_tar_members(const char *path, uint64_t *members, uint64_t *member_bytes)
{
    *members = *member_bytes = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
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
        unsigned sum = 0;
        bool zero = true;
        for (unsigned k = 0; k < BLOCK; k++) {
            sum += (k >= 148 && k < 156) ? ' ' : h[k];
            zero = zero && !h[k];
        }
        if (zero)
            break; /* the end of the archive (GNU tar stops at the first zero block as well) */
        long long stated = octal(h + 148, 8), size = octal(h + 124, 12);
        if (stated < 0 || (unsigned)stated != sum || size < 0) {
            rc = -EINVAL;
            break;
        }
        /* Regular files are the samples; directories, links, pax and GNU long-name records only take space. */
        if (h[156] == '0' || h[156] == '\0') {
            ++*members;
            *member_bytes += (uint64_t)size;
        }
        off += BLOCK + (off_t)(((uint64_t)size + BLOCK - 1) / BLOCK * BLOCK);
    }
    close(fd);
    return rc;
}
