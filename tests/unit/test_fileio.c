/* Unit tests for loader/file/fileio.c, pagecache.c and tarprobe.c: both engines move the bytes asked, residency is counted, tar headers read. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "file_int.h"
#include "railbench/beneath.h"
#include "fileio_int.h"
#include "fsinfo_int.h"
#include "pagecache_int.h"
#include "../engine/payload_int.h"
#include "../engine/tarshard_int.h"

#define BLOCK 65536
#define BLOCKS 16

static char path[256];

static int setup(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "%s/rb-fileio-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    return 0;
}

/* Writes BLOCKS blocks of distinct bytes through engine e at depth, then reads them back through it. */
static void round_trip(enum rb_fio_engine e, unsigned depth)
{
    struct rb_fio *q = NULL;
    int rc = rb_fio_new(&q, e, depth);
    assert_int_equal(rc, 0);
    int fd = open(path, O_RDWR | O_TRUNC);
    assert_true(fd >= 0);
    unsigned char *bufs[BLOCKS];
    for (unsigned i = 0; i < BLOCKS; i++) {
        bufs[i] = rb_fio_buffer(BLOCK);
        assert_non_null(bufs[i]);
        assert_int_equal((uintptr_t)bufs[i] % RB_FIO_ALIGN, 0);
        memset(bufs[i], (int)(i + 1), BLOCK);
    }
    /* At most depth in flight: submit, and reap whenever the queue is full. */
    struct rb_fio_io done[BLOCKS];
    unsigned reaped = 0;
    for (unsigned i = 0; i < BLOCKS; i++) {
        while (rb_fio_pending(q) >= depth) {
            int n = rb_fio_reap(q, done, BLOCKS, 1000000000u);
            assert_true(n >= 0);
            for (int k = 0; k < n; k++)
                assert_int_equal(done[k].res, BLOCK);
            reaped += (unsigned)n;
        }
        const struct rb_fio_io io = {.kind = RB_FIO_WRITE, .fd = fd, .buf = bufs[i], .len = BLOCK,
                                     .off = (uint64_t)i * BLOCK, .tag = i};
        assert_int_equal(rb_fio_submit(q, &io), 0);
    }
    while (rb_fio_pending(q)) {
        int n = rb_fio_reap(q, done, BLOCKS, 1000000000u);
        assert_true(n >= 0);
        reaped += (unsigned)n;
    }
    assert_int_equal(reaped, BLOCKS);
    const struct rb_fio_io sync = {.kind = RB_FIO_FSYNC, .fd = fd, .tag = 99};
    assert_int_equal(rb_fio_submit(q, &sync), 0);
    assert_int_equal(rb_fio_reap(q, done, 1, 1000000000u), 1);
    assert_int_equal(done[0].res, 0);
    assert_int_equal(done[0].tag, 99);
    /* Read back in reverse order: each completion carries its tag and its own bytes. */
    for (unsigned i = 0; i < BLOCKS; i++)
        memset(bufs[i], 0, BLOCK);
    for (unsigned i = 0; i < BLOCKS; i++) {
        unsigned b = BLOCKS - 1 - i;
        const struct rb_fio_io io = {.kind = RB_FIO_READ, .fd = fd, .buf = bufs[b], .len = BLOCK,
                                     .off = (uint64_t)b * BLOCK, .tag = b};
        while (rb_fio_pending(q) >= depth) {
            int n = rb_fio_reap(q, done, BLOCKS, 1000000000u);
            for (int k = 0; k < n; k++) {
                assert_int_equal(done[k].res, BLOCK);
                assert_int_equal(((unsigned char *)done[k].buf)[BLOCK - 1], done[k].tag + 1);
            }
        }
        assert_int_equal(rb_fio_submit(q, &io), 0);
    }
    while (rb_fio_pending(q)) {
        int n = rb_fio_reap(q, done, BLOCKS, 1000000000u);
        for (int k = 0; k < n; k++)
            assert_int_equal(((unsigned char *)done[k].buf)[0], done[k].tag + 1);
    }
    /* Past the end: a read of nothing, not an error. */
    const struct rb_fio_io eof = {.kind = RB_FIO_READ, .fd = fd, .buf = bufs[0], .len = BLOCK,
                                  .off = (uint64_t)BLOCKS * BLOCK};
    assert_int_equal(rb_fio_submit(q, &eof), 0);
    assert_int_equal(rb_fio_reap(q, done, 1, 1000000000u), 1);
    assert_int_equal(done[0].res, 0);
    /* A bad descriptor is the I/O's own failure, reported in its res. */
    const struct rb_fio_io bad = {.kind = RB_FIO_READ, .fd = -1, .buf = bufs[0], .len = BLOCK};
    assert_int_equal(rb_fio_submit(q, &bad), 0);
    assert_int_equal(rb_fio_reap(q, done, 1, 1000000000u), 1);
    assert_int_equal(done[0].res, -EBADF);
    for (unsigned i = 0; i < BLOCKS; i++)
        free(bufs[i]);
    close(fd);
    rb_fio_free(q);
}

static void test_psync(void **state)
{
    (void)state;
    round_trip(RB_FIO_PSYNC, 1);
    assert_string_equal(rb_fio_ops_for(RB_FIO_PSYNC)->name, "psync");
}

static void test_io_uring(void **state)
{
    (void)state;
    struct rb_fio *q = NULL;
    int rc = rb_fio_new(&q, RB_FIO_IO_URING, 4);
    rb_fio_free(q);
    if (rc == -ENOSYS || rc == -EPERM)
        skip(); /* a kernel or sandbox without io_uring */
    round_trip(RB_FIO_IO_URING, 4);
    round_trip(RB_FIO_IO_URING, 1);
    assert_string_equal(rb_fio_ops_for(RB_FIO_IO_URING)->name, "io_uring");
}

static void test_fatal(void **state)
{
    (void)state;
    assert_true(rb_fio_fatal(ENOSPC));
    assert_true(rb_fio_fatal(ENOTCONN));
    assert_true(rb_fio_fatal(EDQUOT));
    assert_false(rb_fio_fatal(ENOENT));
    assert_false(rb_fio_fatal(EIO));
}

/* Written and synced pages are resident; after DONTNEED none are (ext4, XFS, tmpfs drop clean pages). */
static void test_residency(void **state)
{
    (void)state;
    int fd = open(path, O_RDWR | O_TRUNC);
    assert_true(fd >= 0);
    static char buf[1 << 20];
    memset(buf, 7, sizeof buf);
    assert_int_equal(write(fd, buf, sizeof buf), (ssize_t)sizeof buf);
    assert_int_equal(fsync(fd), 0);
    struct rb_residency r;
    assert_int_equal(rb_pagecache_residency(fd, sizeof buf, &r), 0);
    assert_int_equal(r.total_pages, (sizeof buf + 4095) / 4096);
    assert_int_equal(rb_pagecache_verdict(&r), 1);
    assert_int_equal(rb_pagecache_drop_fd(fd), 0);
    assert_int_equal(rb_pagecache_residency(fd, sizeof buf, &r), 0);
    if (r.resident_pages) /* tmpfs keeps its pages: they are the file */
        skip();
    assert_int_equal(rb_pagecache_verdict(&r), 0);
    /* Reading one page (no readahead) brings that page back: some pages. */
    posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    assert_int_equal(pread(fd, buf, 4096, 0), 4096);
    assert_int_equal(rb_pagecache_residency(fd, sizeof buf, &r), 0);
    assert_int_equal(rb_pagecache_verdict(&r), -1);
    close(fd);
}

static void test_host_cached(void **state)
{
    (void)state;
    uint64_t b = 0;
    assert_int_equal(rb_pagecache_host_cached(NULL, &b), 0);
    assert_true(b > 0);
    assert_int_equal(rb_pagecache_host_cached("/nonexistent", &b), -ENOENT);
}

static void put_file(const char *name, const char *text)
{
    FILE *f = fopen(name, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A fake /proc and /sys under a temporary root: the directory's device is a loop device over an image file. */
static void test_fsinfo(void **state)
{
    (void)state;
    char root[] = "/tmp/rb-fsinfo-XXXXXX", p[512], q[512], line[1024];
    assert_non_null(mkdtemp(root));
    struct stat st;
    assert_int_equal(stat(root, &st), 0);
    unsigned maj = major(st.st_dev), min = minor(st.st_dev);
    snprintf(p, sizeof p, "mkdir -p %s/proc/self %s/sys/dev/block %s/sys/devices/virtual/block/loop9 %s/sys/block/loop9/loop",
             root, root, root, root);
    assert_int_equal(system(p), 0);
    /* Two mounts of the device: the deeper one whose point is above the directory wins; \040 is a space. */
    snprintf(line, sizeof line,
             "30 1 %u:%u / / rw - ext4 /dev/sda1 rw\n"
             "31 30 %u:%u / /tmp rw shared:1 - xfs /dev/loop9 rw\n"
             "32 30 %u:%u / /tmp/other\\040dir rw - xfs /dev/loop9 rw\n",
             maj, min, maj, min, maj, min);
    snprintf(p, sizeof p, "%s/proc/self/mountinfo", root);
    put_file(p, line);
    snprintf(p, sizeof p, "%s/sys/dev/block/%u:%u", root, maj, min);
    snprintf(q, sizeof q, "../../devices/virtual/block/loop9");
    assert_int_equal(symlink(q, p), 0);
    snprintf(p, sizeof p, "%s/sys/devices/virtual/block/loop9/stat", root);
    put_file(p, "10 0 2048 5 20 0 4096 7 0 12 12\n");
    snprintf(p, sizeof p, "%s/sys/block/loop9/loop/backing_file", root);
    put_file(p, "/images/fs.img\n");

    struct rb_fsinfo fi;
    assert_int_equal(rb_fsinfo_probe(root, root, &fi), 0);
    assert_string_equal(fi.mount, "/tmp");
    assert_string_equal(fi.fstype, "xfs");
    assert_string_equal(fi.source, "/dev/loop9");
    assert_string_equal(fi.kind, RB_FS_KIND_LOOP);
    assert_string_equal(fi.device, "loop9");
    assert_string_equal(fi.backing, "/images/fs.img");
    assert_true(fi.have_io);
    assert_int_equal(fi.read_bytes, 2048 * 512);
    assert_int_equal(fi.write_bytes, 4096 * 512);
    /* The device moved 1 MiB more of each since: the figures are the difference. */
    snprintf(p, sizeof p, "%s/sys/devices/virtual/block/loop9/stat", root);
    put_file(p, "20 0 4096 5 40 0 6144 7 0 12 12\n");
    cJSON *j = rb_fsinfo_json(&fi, root);
    assert_int_equal((uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "device_read_bytes")), 2048 * 512);
    assert_int_equal((uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "device_write_bytes")), 2048 * 512);
    cJSON_Delete(j);

    assert_string_equal(rb_fsinfo_kind("fuse.ceph-fuse", 0, ""), RB_FS_KIND_FUSE);
    assert_string_equal(rb_fsinfo_kind("nfs4", 0, ""), RB_FS_KIND_NETWORK);
    assert_string_equal(rb_fsinfo_kind("ext4", 253, "vda1"), RB_FS_KIND_BLOCK);
    assert_string_equal(rb_fsinfo_kind("tmpfs", 0, ""), RB_FS_KIND_NONE);
    assert_int_equal(rb_fsinfo_probe("/nonexistent/dir", NULL, &fi), -ENOENT);
    snprintf(p, sizeof p, "rm -rf %s", root);
    assert_int_equal(system(p), 0);
}

/* rb_file_tar_members on path: the directory it is in and its name there. */
static int tar_members(const char *file, uint64_t *members, uint64_t *member_bytes)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    assert_non_null(slash);
    *slash = '\0';
    int fd = rb_beneath_root(dir);
    if (fd < 0)
        return fd;
    int rc = rb_file_tar_members(fd, slash + 1, members, member_bytes);
    close(fd);
    return rc;
}

/*
 * A shard of 5 members of 700 bytes: its headers give 5 and 3,500; cut inside a header or not tar: -EINVAL; a
 * link to it: refused (-ELOOP), never followed.
 */
static void test_tar_members(void **state)
{
    (void)state;
    uint64_t bytes = rb_tar_shard_bytes(5, 700), members = 0, member_bytes = 0;
    unsigned char *shard = malloc(bytes);
    assert_non_null(shard);
    rb_tar_fill(rb_payload_key(1, "shard"), 5, 700, 0, shard, bytes);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(shard, 1, bytes, f), bytes);
    fclose(f);
    assert_int_equal(tar_members(path, &members, &member_bytes), 0);
    assert_int_equal(members, 5);
    assert_int_equal(member_bytes, 3500);
    assert_int_equal(truncate(path, 1536 + 100), 0); /* the second header cut short */
    assert_int_equal(tar_members(path, &members, &member_bytes), -EINVAL);
    shard[3] ^= 1; /* the first header's checksum no longer holds */
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(shard, 1, bytes, f), bytes);
    fclose(f);
    assert_int_equal(tar_members(path, &members, &member_bytes), -EINVAL);
    assert_int_equal(tar_members("/nonexistent/rb-shard.tar", &members, &member_bytes), -ENOENT);
    char link[300];
    snprintf(link, sizeof link, "%s.link", path);
    assert_int_equal(symlink(path, link), 0);
    assert_int_equal(tar_members(link, &members, &member_bytes), -RB_BENEATH_LINK);
    unlink(link);
    free(shard);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_psync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_uring, setup, teardown),
        cmocka_unit_test(test_fatal),
        cmocka_unit_test_setup_teardown(test_residency, setup, teardown),
        cmocka_unit_test(test_host_cached),
        cmocka_unit_test(test_fsinfo),
        cmocka_unit_test_setup_teardown(test_tar_members, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
