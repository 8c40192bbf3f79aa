/* What a file target's directory is on: its mount, file-system type, and the device under it (a loop device, FUSE). */
#ifndef RB_FSINFO_INT_H
#define RB_FSINFO_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* Thread-safety: plain data; filled and read on one thread. */

/* How the data reach the directory: a block device, a loop device over a file, FUSE, a network file system, none. */
#define RB_FS_KIND_BLOCK "block"
#define RB_FS_KIND_LOOP "loop"
#define RB_FS_KIND_FUSE "fuse"
#define RB_FS_KIND_NETWORK "network"
#define RB_FS_KIND_NONE "none"

/* Longest path kept (PATH_MAX on Linux). */
#define RB_FSINFO_PATH 4096

struct rb_fsinfo {
    char mount[RB_FSINFO_PATH];      /* the mount point the directory is under */
    char fstype[64];           /* "ext4", "xfs", "fuse.ceph-fuse", "nfs4" */
    char source[256];          /* "/dev/loop3", "ceph-fuse", "server:/export" */
    const char *kind;          /* RB_FS_KIND_* */
    char device[64];           /* its block device's name ("loop3", "vda1"); "" none */
    char backing[RB_FSINFO_PATH];    /* a loop device's backing file; "" otherwise */
    unsigned dev_major, dev_minor; /* the directory's device numbers */
    bool have_io;              /* the device's I/O counters were read when probed */
    uint64_t read_bytes, write_bytes; /* the device's counters when probed (sectors x 512) */
};

/* The kind of fstype on a device of major number dev_major (0: none), named name. Pure. */
const char *rb_fsinfo_kind(const char *fstype, unsigned dev_major, const char *name);

/*
 * Fills fi for the directory path from <root>/proc/self/mountinfo and
 * <root>/sys/dev/block (root NULL: "/"): the mount whose device is path's
 * and whose mount point is the longest prefix of path. Returns 0 or -errno
 * (-ENOENT: no mount found).
 */
int rb_fsinfo_probe(const char *path, const char *root, struct rb_fsinfo *fi);

/*
 * A JSON object of fi: path, fs_type, source, kind, device (null: none),
 * loop_backing_file (loop only), and the bytes the device read and wrote
 * since fi was probed (null without a device). Returns NULL on OOM.
 */
cJSON *rb_fsinfo_json(const struct rb_fsinfo *fi, const char *root);

#endif
