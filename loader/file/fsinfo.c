/* What a file target is on: /proc/self/mountinfo for its mount, /sys/dev/block for the device and its counters. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fsinfo_int.h"
#include "railbench/result.h"

const char *rb_fsinfo_kind(const char *fstype, unsigned dev_major, const char *name)
{
    static const char *const network[] = {"nfs", "nfs4", "cifs", "smb3", "ceph", "lustre", "gpfs", "glusterfs",
                                          "9p", "beegfs", "wekafs", "orangefs", "afs", NULL};
    if (strncmp(fstype, "fuse", 4) == 0)
        return RB_FS_KIND_FUSE;
    for (const char *const *n = network; *n; n++)
        if (strcmp(fstype, *n) == 0)
            return RB_FS_KIND_NETWORK;
    if (dev_major == 0)
        return RB_FS_KIND_NONE;
    return strncmp(name, "loop", 4) == 0 ? RB_FS_KIND_LOOP : RB_FS_KIND_BLOCK;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo: undone in place. */
static void unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
            *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

/* True when mount point m is path or a directory above it. */
static bool under(const char *path, const char *m)
{
    size_t n = strlen(m);
    if (strcmp(m, "/") == 0)
        return true;
    return strncmp(path, m, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Reads a one-line sysfs file into buf (newline cut). Returns 0 or -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    int rc = fgets(buf, (int)len, f) ? 0 : -EIO;
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return rc;
}

/* The device's read and written bytes so far (/sys/dev/block/M:m/stat: sectors of 512 bytes). */
static int device_io(const char *root, unsigned maj, unsigned min, uint64_t *rd, uint64_t *wr)
{
    char path[512], line[512];
    snprintf(path, sizeof path, "%s/sys/dev/block/%u:%u/stat", root, maj, min);
    int rc = read_line(path, line, sizeof line);
    if (rc)
        return rc;
    uint64_t v[7];
    if (sscanf(line, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &v[0], &v[1],
               &v[2], &v[3], &v[4], &v[5], &v[6]) != 7)
        return -EINVAL;
    *rd = v[2] * 512;
    *wr = v[6] * 512;
    return 0;
}

int rb_fsinfo_probe(const char *path, const char *root, struct rb_fsinfo *fi)
{
    memset(fi, 0, sizeof *fi);
    fi->kind = RB_FS_KIND_NONE;
    root = root ? root : "";
    char real[RB_FSINFO_PATH];
    struct stat st;
    if (!realpath(path, real) || stat(real, &st) != 0)
        return -errno;
    unsigned maj = major(st.st_dev), min = minor(st.st_dev);
    fi->dev_major = maj;
    fi->dev_minor = min;
    char file[512];
    snprintf(file, sizeof file, "%s/proc/self/mountinfo", root);
    FILE *f = fopen(file, "r");
    if (!f)
        return -errno;
    char line[8192];
    size_t best = 0;
    bool found = false;
    while (fgets(line, sizeof line, f)) {
        unsigned lmaj, lmin;
        char mnt[RB_FSINFO_PATH], *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %u:%u %*s %4095s", &lmaj, &lmin, mnt) != 3 || lmaj != maj || lmin != min)
            continue;
        unescape(mnt);
        size_t n = strlen(mnt);
        if (!under(real, mnt) || (found && n <= best))
            continue;
        char type[64], src[256];
        if (sscanf(dash + 3, "%63s %255s", type, src) != 2)
            continue;
        unescape(src);
        snprintf(fi->mount, sizeof fi->mount, "%s", mnt);
        snprintf(fi->fstype, sizeof fi->fstype, "%s", type);
        snprintf(fi->source, sizeof fi->source, "%s", src);
        best = n;
        found = true;
    }
    fclose(f);
    if (!found)
        return -ENOENT;
    if (maj != 0) {
        char link[512], target[RB_FSINFO_PATH];
        snprintf(link, sizeof link, "%s/sys/dev/block/%u:%u", root, maj, min);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k > 0) {
            target[k] = '\0';
            const char *slash = strrchr(target, '/');
            snprintf(fi->device, sizeof fi->device, "%.63s", slash ? slash + 1 : target);
        }
        fi->have_io = device_io(root, maj, min, &fi->read_bytes, &fi->write_bytes) == 0;
    }
    fi->kind = rb_fsinfo_kind(fi->fstype, fi->device[0] ? maj : 0, fi->device);
    if (strcmp(fi->kind, RB_FS_KIND_LOOP) == 0) {
        char p[600];
        snprintf(p, sizeof p, "%s/sys/block/%.64s/loop/backing_file", root, fi->device);
        if (read_line(p, fi->backing, sizeof fi->backing) != 0)
            fi->backing[0] = '\0';
    }
    return 0;
}

cJSON *rb_fsinfo_json(const struct rb_fsinfo *fi, const char *root)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "path", fi->mount);
    cJSON_AddStringToObject(o, "fs_type", fi->fstype);
    cJSON_AddStringToObject(o, "source", fi->source);
    cJSON_AddStringToObject(o, "kind", fi->kind);
    if (fi->device[0])
        cJSON_AddStringToObject(o, "device", fi->device);
    else
        cJSON_AddNullToObject(o, "device");
    if (fi->backing[0])
        cJSON_AddStringToObject(o, "loop_backing_file", fi->backing);
    /* The device's counters again: what it moved while the run ran (other users of the device included). */
    uint64_t rd = 0, wr = 0;
    bool now = fi->have_io && device_io(root ? root : "", fi->dev_major, fi->dev_minor, &rd, &wr) == 0;
    cJSON_AddItemToObject(o, "device_read_bytes", now && rd >= fi->read_bytes ? rb_json_u64(rd - fi->read_bytes)
                                                                               : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "device_write_bytes", now && wr >= fi->write_bytes ? rb_json_u64(wr - fi->write_bytes)
                                                                                 : cJSON_CreateNull());
    return o;
}
