/* railbench block: which file or device each rank drives, writing it before the sweep, removing it after. */
#define _GNU_SOURCE
#include "block_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "railbench/mix.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "railbench/units.h"

/* What railbench writes when it creates the target and --size is 0; and how much per write. */
#define DEFAULT_FILE_SIZE RB_GIB
#define PREP_CHUNK RB_MIB

const char *const rb_block_target_kind_names[] = {"new file", "file in directory", "existing file", "block device"};

/* Replaces every "%r" in tmpl with rank; false when the result does not fit. */
static bool expand_rank(const char *tmpl, int rank, char *out, size_t len)
{
    size_t o = 0;
    for (const char *c = tmpl; *c; c++) {
        int n = (c[0] == '%' && c[1] == 'r') ? snprintf(out + o, len - o, "%d", rank)
                                              : snprintf(out + o, len - o, "%c", *c);
        if (n < 0 || (size_t)n >= len - o)
            return false;
        o += (size_t)n;
        if (c[0] == '%' && c[1] == 'r')
            c++;
    }
    if (o == 0 && len)
        out[0] = '\0';
    return true;
}

/* The one message for a filesystem without O_DIRECT, with what to do instead. */
static int direct_refused(const char *path)
{
    return RB_BLOCK_ERROR(RB_EXIT_USAGE,
                          "--target %s: its filesystem refuses O_DIRECT; use a file on ext4 or xfs, a block device, "
                          "or --direct 0 to measure through the page cache",
                          path);
}

/* Can the existing target be opened with O_DIRECT? */
static int check_direct(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    if (errno == EINVAL)
        return direct_refused(path);
    return RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "--target %s: cannot open: %s", path, strerror(errno));
}

/* The directory part of path into dir (len bytes); false when path has no '/' (the current directory). */
static bool parent_dir(const char *path, char *dir, size_t len)
{
    snprintf(dir, len, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    return slash != NULL;
}

/*
 * t->path from --target: absolute, "%r" expanded, a directory's own file
 * inside it (RB_BLOCK_OWN_FILE), ".<rank>" after a new path shared by
 * several ranks. Returns 0 or RB_EXIT_USAGE after one line.
 */
static int target_path(const struct rb_block_opts *o, int rank, int nranks, struct rb_block_target *t)
{
    char base[4096], cwd[2048] = "";
    /* Absolute, so that the job files kept in the result directory also run by hand from anywhere. */
    if (o->target[0] != '/' && (!getcwd(cwd, sizeof cwd - 1) || strlen(cwd) + strlen(o->target) + 2 > sizeof base))
        return RB_BLOCK_ERROR(RB_EXIT_USAGE, "--target %s: path too long", o->target);
    if (cwd[0] && strcmp(cwd, "/") != 0)
        strcat(cwd, "/");
    size_t cl = strlen(cwd);
    memcpy(base, cwd, cl);
    if (!expand_rank(o->target, rank, base + cl, sizeof base - cl))
        return RB_BLOCK_ERROR(RB_EXIT_USAGE, "--target %s: path too long", o->target);
    const bool has_r = strstr(o->target, "%r") != NULL;
    struct stat st;
    int n = snprintf(t->path, sizeof t->path, "%s", base);
    if (stat(base, &st) == 0 && S_ISDIR(st.st_mode)) {
        n = snprintf(t->path, sizeof t->path, "%s/railbench-block.%d.data", base, rank);
        t->kind = RB_BLOCK_OWN_FILE;
    } else if (stat(base, &st) != 0 && errno == ENOENT && nranks > 1 && !has_r) {
        n = snprintf(t->path, sizeof t->path, "%s.%d", base, rank);
    }
    if (n < 0 || (size_t)n >= sizeof t->path)
        return RB_BLOCK_ERROR(RB_EXIT_USAGE, "--target %s: path too long", o->target);
    return 0;
}

/* A target that does not exist yet: railbench creates it, in a directory that must exist. */
static int target_new(const struct rb_block_opts *o, struct rb_block_target *t)
{
    char dir[4096];
    bool has_dir = parent_dir(t->path, dir, sizeof dir);
    struct stat ds;
    if (stat(has_dir ? dir : ".", &ds) != 0 || !S_ISDIR(ds.st_mode))
        return RB_BLOCK_ERROR(RB_EXIT_USAGE, "--target %s: no such file, and its directory %s does not exist",
                              t->path, has_dir ? dir : ".");
    if (t->kind != RB_BLOCK_OWN_FILE)
        t->kind = RB_BLOCK_NEW_FILE;
    t->ours = true;
    t->size_bytes = o->size_bytes ? o->size_bytes : DEFAULT_FILE_SIZE;
    return 0;
}

/* An existing regular file that is not railbench's: read as it is; written only with --allow-destructive. */
static int target_existing_file(const struct rb_block_opts *o, struct rb_block_target *t, const struct stat *st)
{
    t->kind = RB_BLOCK_EXISTING_FILE;
    if (rb_block_rw_writes(o->rw) && !o->allow_destructive)
        return RB_BLOCK_ERROR(RB_EXIT_USAGE,
                              "--target %s: is an existing file and --rw %s overwrites it; add --allow-destructive, "
                              "or give a directory or a new file name",
                              t->path, rb_block_rw_names[o->rw]);
    if (st->st_size == 0)
        return RB_BLOCK_ERROR(RB_EXIT_USAGE, "--target %s: is an empty file; remove it or give a new file name",
                              t->path);
    if (o->size_bytes > (uint64_t)st->st_size)
        return RB_BLOCK_ERROR(RB_EXIT_USAGE,
                              "--size %" PRIu64 ": larger than the existing file %s (%" PRIu64 " bytes)",
                              o->size_bytes, t->path, (uint64_t)st->st_size);
    t->size_bytes = o->size_bytes ? o->size_bytes : (uint64_t)st->st_size;
    return 0;
}

/* A block device: its size from the kernel; written only with --allow-destructive and when nothing holds it. */
static int target_device(const struct rb_block_opts *o, struct rb_block_target *t)
{
    const bool writes = rb_block_rw_writes(o->rw);
    t->kind = RB_BLOCK_DEVICE;
    if (writes && !o->allow_destructive)
        return RB_BLOCK_ERROR(RB_EXIT_USAGE,
                              "--target %s: is a block device and --rw %s writes to it, destroying its data; "
                              "add --allow-destructive to do that",
                              t->path, rb_block_rw_names[o->rw]);
    int fd = open(t->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "--target %s: cannot open: %s", t->path, strerror(errno));
    if (ioctl(fd, BLKGETSIZE64, &t->device_bytes) != 0)
        t->device_bytes = 0;
    close(fd);
    if (o->size_bytes && t->device_bytes && o->size_bytes > t->device_bytes)
        return RB_BLOCK_ERROR(RB_EXIT_USAGE, "--size %" PRIu64 ": larger than the device %s (%" PRIu64 " bytes)",
                              o->size_bytes, t->path, t->device_bytes);
    t->size_bytes = o->size_bytes;
    if (writes) {
        /* O_EXCL on a block device fails with EBUSY while it is mounted or held (md, dm, swap). */
        fd = open(t->path, O_WRONLY | O_EXCL | O_CLOEXEC);
        if (fd < 0 && errno == EBUSY)
            return RB_BLOCK_ERROR(RB_EXIT_USAGE, "--target %s: is in use (mounted, swap, or part of md/dm); "
                                                 "refusing to write to it", t->path);
        if (fd < 0)
            return RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "--target %s: cannot open for writing: %s", t->path,
                                  strerror(errno));
        close(fd);
    }
    return 0;
}

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void mountinfo_unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
            *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 3;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
}

/*
 * The mount t->path lands on: the longest mount point of /proc/self/mountinfo
 * that holds the real path of its deepest existing ancestor. Leaves the
 * fields empty when it cannot tell.
 */
static void target_mount(struct rb_block_target *t)
{
    char dir[4096], real[4096];
    snprintf(dir, sizeof dir, "%s", t->path);
    while (!realpath(dir, real)) {
        char *slash = strrchr(dir, '/');
        if (!slash)
            return;
        if (slash == dir) {
            snprintf(real, sizeof real, "/");
            break;
        }
        *slash = '\0';
    }
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return;
    char line[8192];
    size_t best = 0;
    while (fgets(line, sizeof line, f)) {
        /* "id parent maj:min root mountpoint options [optional...] - fstype source superoptions" */
        char mp[4096], fs[64], src[512];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1 || sscanf(dash + 3, "%63s %511s", fs, src) != 2)
            continue;
        mountinfo_unescape(mp);
        size_t n = strlen(mp);
        bool holds = strcmp(mp, "/") == 0 || (strncmp(real, mp, n) == 0 && (real[n] == '/' || real[n] == '\0'));
        if (holds && n >= best) {
            best = n;
            snprintf(t->mount_point, sizeof t->mount_point, "%s", mp);
            snprintf(t->fstype, sizeof t->fstype, "%s", fs);
            snprintf(t->mount_source, sizeof t->mount_source, "%s", src);
        }
    }
    fclose(f);
}

/*
 * A file railbench creates lands on whatever is mounted above it: on the
 * root file system that is the system disk, not the device the user meant
 * ("/mnt/nvme" with nothing mounted there). Refused unless --allow-root-fs.
 */
static int check_root_fs(const struct rb_block_opts *o, struct rb_block_target *t)
{
    target_mount(t);
    if (!t->ours || strcmp(t->mount_point, "/") != 0 || o->allow_root_fs)
        return 0;
    return RB_BLOCK_ERROR(RB_EXIT_USAGE,
                          "--target %s: lands on the root file system (%s, %s, mounted at /), not on a mount of its "
                          "own; mount the device to measure there, or add --allow-root-fs to measure the root disk",
                          t->path, t->mount_source, t->fstype);
}

int rb_block_target_resolve(const struct rb_block_opts *o, int rank, int nranks, struct rb_block_target *t)
{
    memset(t, 0, sizeof *t);
    int status = target_path(o, rank, nranks, t);
    if (status)
        return status;
    struct stat st;
    if (stat(t->path, &st) != 0) {
        if (errno != ENOENT)
            return RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "--target %s: %s", t->path, strerror(errno));
        status = target_new(o, t);
    } else if (S_ISREG(st.st_mode) && t->kind == RB_BLOCK_OWN_FILE) {
        /* Left by an earlier run with --keep: still railbench's own file, rewritten if the size differs. */
        t->ours = true;
        t->size_bytes = o->size_bytes ? o->size_bytes : DEFAULT_FILE_SIZE;
    } else if (S_ISREG(st.st_mode)) {
        status = target_existing_file(o, t, &st);
    } else if (S_ISBLK(st.st_mode)) {
        status = target_device(o, t);
    } else {
        return RB_BLOCK_ERROR(RB_EXIT_USAGE, "--target %s: is neither a file, a directory nor a block device",
                              t->path);
    }
    if (status || (t->kind != RB_BLOCK_DEVICE && (status = check_root_fs(o, t)) != 0))
        return status;
    const char *why = rb_fio_value_problem(t->path);
    if (why)
        return RB_BLOCK_ERROR(RB_EXIT_USAGE, "--target %s: %s", t->path, why);
    if (!t->ours && o->direct)
        return check_direct(t->path);
    return 0;
}


/* Does the target fit in the free space of its filesystem? 0, or RB_EXIT_RUNTIME after one line. */
static int check_space(const struct rb_block_target *t)
{
    struct statvfs vfs;
    char dir[4096];
    bool has_dir = parent_dir(t->path, dir, sizeof dir);
    if (statvfs(has_dir ? dir : ".", &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < t->size_bytes)
        return RB_BLOCK_ERROR(RB_EXIT_RUNTIME,
                              "--target %s: --size %" PRIu64 " does not fit; %" PRIu64 " bytes free there", t->path,
                              t->size_bytes, (uint64_t)vfs.f_bavail * vfs.f_frsize);
    return 0;
}

/*
 * Writes the whole file before fio reads it: reads of never-written (sparse
 * or fallocated) ext4/xfs blocks return zeros without touching the disk and
 * would report the page allocator's IOPS. With O_DIRECT when direct=1, which
 * also checks that the filesystem allows it.
 */
int rb_block_target_prepare(const struct rb_block_opts *o, struct rb_block_target *t)
{
    if (!t->ours)
        return 0;
    struct stat st;
    if (stat(t->path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == t->size_bytes) {
        t->created = true;
        return o->direct ? check_direct(t->path) : 0;
    }
    int status = check_space(t);
    if (status)
        return status;
    int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (o->direct ? O_DIRECT : 0);
    int fd = open(t->path, flags, 0644);
    if (fd < 0 && errno == EINVAL && o->direct) {
        unlink(t->path);
        return direct_refused(t->path);
    }
    if (fd < 0)
        return RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "--target %s: cannot create: %s", t->path, strerror(errno));
    t->created = true;
    void *buf = NULL;
    if (posix_memalign(&buf, 4096, PREP_CHUNK) != 0) {
        buf = NULL;
        status = RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "out of memory");
        goto fail;
    }
    uint64_t seed = (uint64_t)getpid() ^ rb_clock_ns();
    for (size_t i = 0; i < PREP_CHUNK / 8; i++)
        ((uint64_t *)buf)[i] = rb_mix64_next(&seed); /* distinct bytes: nothing below can dedupe or compress them */
    for (uint64_t off = 0; off < t->size_bytes; off += PREP_CHUNK) {
        if (rb_harness_signalled()) {
            status = RB_EXIT_CHECK;
            goto fail;
        }
        size_t len = t->size_bytes - off < PREP_CHUNK ? (size_t)(t->size_bytes - off) : PREP_CHUNK;
        ((uint64_t *)buf)[0] = off ^ seed; /* every MiB differs */
        ssize_t w = pwrite(fd, buf, len, (off_t)off);
        if (w != (ssize_t)len) {
            status = RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "--target %s: writing %zu bytes at %" PRIu64 ": %s", t->path,
                                    len, off, w < 0 ? strerror(errno) : "short write");
            goto fail;
        }
    }
    if (fsync(fd) != 0)
        status = RB_BLOCK_ERROR(RB_EXIT_RUNTIME, "--target %s: fsync: %s", t->path, strerror(errno));
fail:
    free(buf);
    close(fd);
    return status;
}

void rb_block_target_remove(const struct rb_block_opts *o, const struct rb_block_target *t)
{
    if (t->ours && t->created && !o->keep && unlink(t->path) != 0 && errno != ENOENT)
        rb_warn("cannot remove %s: %s", t->path, strerror(errno));
}

int rb_block_target_check_distinct(struct rb_harness *h, const struct rb_block_target *t)
{
    cJSON *mine = cJSON_CreateObject();
    char real[4096];
    cJSON_AddStringToObject(mine, "host", h->host);
    cJSON_AddStringToObject(mine, "path", realpath(t->path, real) ? real : t->path);
    cJSON *all = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    int status = 0;
    int n = h->rank == 0 ? cJSON_GetArraySize(all) : 0;
    for (int i = 0; i < n && !status; i++)
        for (int j = i + 1; j < n && !status; j++) {
            cJSON *a = cJSON_GetArrayItem(all, i), *b = cJSON_GetArrayItem(all, j);
            const char *ha = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "host"));
            const char *hb = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "host"));
            const char *pa = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "path"));
            const char *pb = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "path"));
            if (ha && hb && pa && pb && strcmp(ha, hb) == 0 && strcmp(pa, pb) == 0)
                status = RB_BLOCK_ERROR(RB_EXIT_USAGE,
                                        "--target: ranks %d and %d on %s would both use %s; put %%r (the rank) in "
                                        "--target so that each rank has its own",
                                        i, j, ha, pa);
        }
    cJSON_Delete(all);
    return status;
}
