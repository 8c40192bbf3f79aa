/* Unit tests of the counters module against fixture trees of a fake host, plus one live sample. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <ftw.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "railbench/counters.h"

#ifndef RB_FIXTURES_DIR
#define RB_FIXTURES_DIR "tests/fixtures"
#endif

#define FIX(name) RB_FIXTURES_DIR "/counters/" name
#define NS_PER_S 1000000000ull

/* cmocka's assert_float_equal goes through float, too coarse for byte rates around 1e9. */
#define assert_near(a, b) check_near((a), (b), #a, __FILE__, __LINE__)

static void check_near(double got, double want, const char *expr, const char *file, int line)
{
    double tol = 1e-9 * (fabs(want) > 1.0 ? fabs(want) : 1.0);

    if (!(fabs(got - want) <= tol)) {
        print_error("%s = %.12g, expected %.12g\n", expr, got, want);
        _fail(file, line);
    }
}

/* Samples are about 16 KiB each; keep them off the stack of the cmocka runner. */
static struct rb_counters_sample *sample_at(const char *root, uint64_t t_ns)
{
    struct rb_counters_sample *s = calloc(1, sizeof(*s));

    assert_non_null(s);
    assert_int_equal(rb_counters_sample(root, s), 0);
    s->t_ns = t_ns;
    return s;
}

static const struct rb_disk_stat *disk(const struct rb_counters_sample *s, const char *name)
{
    for (size_t i = 0; i < s->ndisk; i++)
        if (strcmp(s->disk[i].name, name) == 0)
            return &s->disk[i];
    return NULL;
}

static const struct rb_net_stat *net(const struct rb_counters_sample *s, const char *name)
{
    for (size_t i = 0; i < s->nnet; i++)
        if (strcmp(s->net[i].name, name) == 0)
            return &s->net[i];
    return NULL;
}

static const struct rb_disk_rate *disk_rate(const struct rb_counters_rates *r, const char *name)
{
    for (size_t i = 0; i < r->ndisk; i++)
        if (strcmp(r->disk[i].name, name) == 0)
            return &r->disk[i];
    return NULL;
}

static const struct rb_net_rate *net_rate(const struct rb_net_rate *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

static void test_sample_t0(void **state)
{
    struct rb_counters_sample *s = sample_at(FIX("t0"), 0);
    const struct rb_disk_stat *d;
    const struct rb_net_stat *n;

    (void)state;
    /*
     * Whole disks in /proc/diskstats order, then the attached loop1 (listed first there): the partition,
     * the unattached loop0 and ram0 are left out.
     */
    assert_int_equal(s->ndisk, 4);
    assert_string_equal(s->disk[0].name, "nvme0n1");
    assert_string_equal(s->disk[1].name, "sda");
    assert_string_equal(s->disk[2].name, "dm-0");
    assert_string_equal(s->disk[3].name, "loop1");
    assert_int_equal(s->disk[3].write_bytes, 800ull * 512);
    assert_null(disk(s, "nvme0n1p1"));
    assert_null(disk(s, "loop0"));
    assert_null(disk(s, "ram0"));
    d = &s->disk[0];
    assert_int_equal(d->reads, 1000);
    assert_int_equal(d->writes, 2000);
    assert_int_equal(d->read_bytes, 80000ull * 512);
    assert_int_equal(d->write_bytes, 160000ull * 512);
    assert_int_equal(d->io_ticks_ms, 400);
    d = &s->disk[1];
    assert_int_equal(d->reads, 100);
    assert_int_equal(d->writes, 200);
    assert_int_equal(d->read_bytes, 409600);
    assert_int_equal(d->write_bytes, 819200);
    assert_int_equal(d->io_ticks_ms, 100);
    d = &s->disk[2];
    assert_int_equal(d->reads, 500);
    assert_int_equal(d->read_bytes, 2048000);
    assert_int_equal(d->io_ticks_ms, 300);

    /* Sorted by name; lo and the bonding_masters file are left out. */
    assert_int_equal(s->nnet, 2);
    assert_string_equal(s->net[0].name, "eth0");
    assert_string_equal(s->net[1].name, "ib0");
    assert_null(net(s, "lo"));
    n = &s->net[0];
    assert_int_equal(n->rx_bytes, 1000000);
    assert_int_equal(n->tx_bytes, 2000000);
    assert_int_equal(n->rx_packets, 1000);
    assert_int_equal(n->tx_packets, 2000);
    assert_int_equal(n->speed_mbps, 25000);
    n = &s->net[1];
    assert_int_equal(n->rx_bytes, 3000000);
    assert_int_equal(n->tx_packets, 4000);
    assert_true(n->speed_mbps == -1);

    /* port_*_data counts 4-byte words. */
    assert_int_equal(s->nib, 2);
    assert_string_equal(s->ib[0].name, "mlx5_0:1");
    assert_int_equal(s->ib[0].xmit_bytes, 4000000);
    assert_int_equal(s->ib[0].rcv_bytes, 8000000);
    assert_int_equal(s->ib[0].xmit_packets, 1000);
    assert_int_equal(s->ib[0].rcv_packets, 2000);
    assert_int_equal(s->ib[0].xmit_wait, 7);
    assert_near(s->ib[0].rate_gbps, 100.0);
    assert_string_equal(s->ib[1].name, "mlx5_1:1");
    assert_int_equal(s->ib[1].xmit_bytes, 0);
    assert_near(s->ib[1].rate_gbps, 2.5);

    /* cpu  1000 0 500 8000 500 0 0 0 50 0: guest is inside user, so it is not added again. */
    assert_int_equal(s->cpu.total_ticks, 10000);
    assert_int_equal(s->cpu.busy_ticks, 1500);
    free(s);
}

static void test_sample_t1(void **state)
{
    struct rb_counters_sample *s = sample_at(FIX("t1"), 0);

    (void)state;
    assert_int_equal(s->ndisk, 4);
    assert_int_equal(disk(s, "nvme0n1")->reads, 11000);
    assert_int_equal(disk(s, "nvme0n1")->read_bytes, 160000ull * 512);
    assert_int_equal(disk(s, "sda")->io_ticks_ms, 1300);
    assert_int_equal(net(s, "eth0")->rx_bytes, 126000000);
    assert_int_equal(net(s, "eth0")->tx_bytes, 252000000);
    assert_int_equal(s->ib[0].xmit_bytes, 1004000000ull);
    assert_int_equal(s->ib[0].rcv_bytes, 508000000ull);
    assert_int_equal(s->ib[0].xmit_wait, 9);
    assert_int_equal(s->cpu.total_ticks, 11000);
    assert_int_equal(s->cpu.busy_ticks, 1900);
    free(s);
}

static void test_sample_root_spelling(void **state)
{
    struct rb_counters_sample *a = sample_at(FIX("t0"), 0);
    struct rb_counters_sample *b = sample_at(FIX("t0") "//", 0);

    (void)state;
    assert_int_equal(b->ndisk, a->ndisk);
    assert_int_equal(b->nnet, a->nnet);
    assert_int_equal(b->nib, a->nib);
    assert_memory_equal(b->disk, a->disk, sizeof(a->disk));
    free(a);
    free(b);
}

static void test_sample_sets_time(void **state)
{
    struct rb_counters_sample *s = calloc(1, sizeof(*s));

    (void)state;
    assert_non_null(s);
    assert_int_equal(rb_counters_sample(FIX("t0"), s), 0);
    assert_true(s->t_ns > 0);
    free(s);
}

static void test_rates_t0_t1(void **state)
{
    struct rb_counters_sample *a = sample_at(FIX("t0"), 5 * NS_PER_S);
    struct rb_counters_sample *b = sample_at(FIX("t1"), 6 * NS_PER_S);
    struct rb_counters_rates *r = calloc(1, sizeof(*r));
    const struct rb_disk_rate *d;
    const struct rb_net_rate *n;

    (void)state;
    assert_non_null(r);
    rb_counters_rates(a, b, r);
    assert_near(r->duration_s, 1.0);

    assert_int_equal(r->ndisk, 4);
    d = disk_rate(r, "loop1");
    assert_non_null(d);
    assert_int_equal(d->write_bytes, 4000ull * 512); /* a file system on a loop device: its bytes are counted */
    assert_int_equal(d->read_bytes, 0);
    assert_near(d->write_iops, 100.0);
    d = disk_rate(r, "nvme0n1");
    assert_non_null(d);
    assert_near(d->read_iops, 10000.0);
    assert_near(d->write_iops, 5000.0);
    assert_near(d->read_bytes_per_s, 80000.0 * 512);
    assert_near(d->write_bytes_per_s, 20000.0 * 512);
    assert_near(d->util_ratio, 0.5);
    d = disk_rate(r, "sda");
    assert_non_null(d);
    assert_near(d->read_iops, 0.0);
    assert_near(d->write_iops, 100.0);
    assert_near(d->write_bytes_per_s, 409600.0);
    assert_near(d->util_ratio, 1.0); /* 1200 busy ms in 1000 wall ms is clamped */
    d = disk_rate(r, "dm-0");
    assert_non_null(d);
    assert_near(d->read_iops + d->write_iops + d->util_ratio, 0.0);
    /* nvme0n1 at 0.5, sda at 1.0 and loop1 at 0.02; idle dm-0 does not count. */
    assert_near(rb_counters_disk_util(r), (0.5 + 1.0 + 0.02) / 3);

    assert_int_equal(r->nnet, 2);
    n = net_rate(r->net, r->nnet, "eth0");
    assert_non_null(n);
    assert_near(n->rx_bytes_per_s, 125e6);
    assert_near(n->tx_bytes_per_s, 250e6);
    assert_int_equal(n->rx_bytes, 125000000);
    assert_int_equal(n->tx_bytes, 250000000);
    assert_near(n->speed_bytes_per_s, 25000e6 / 8); /* 25 Gb/s = 3.125 GB/s */
    n = net_rate(r->net, r->nnet, "ib0");
    assert_non_null(n);
    assert_near(n->rx_bytes_per_s, 1000.0);
    assert_near(n->tx_bytes_per_s, 2000.0);
    assert_near(n->speed_bytes_per_s, 0.0);
    assert_null(net_rate(r->net, r->nnet, "lo"));

    /* 250e6 words sent and 125e6 received in one second, 4 bytes each; rx is rcv, tx is xmit. */
    assert_int_equal(r->nib, 2);
    n = net_rate(r->ib, r->nib, "mlx5_0:1");
    assert_non_null(n);
    assert_near(n->tx_bytes_per_s, 1e9);
    assert_near(n->rx_bytes_per_s, 5e8);
    assert_int_equal(n->tx_bytes, 1000000000ull);
    assert_int_equal(n->rx_bytes, 500000000ull);
    assert_near(n->speed_bytes_per_s, 12.5e9);
    n = net_rate(r->ib, r->nib, "mlx5_1:1");
    assert_non_null(n);
    assert_near(n->rx_bytes_per_s + n->tx_bytes_per_s, 0.0);
    assert_near(n->speed_bytes_per_s, 2.5e9 / 8);

    /* busy 1500 -> 1900 of total 10000 -> 11000 ticks. */
    assert_near(r->cpu_util_ratio, 0.4);
    free(a);
    free(b);
    free(r);
}

static void test_rates_half_second(void **state)
{
    struct rb_counters_sample *a = sample_at(FIX("t0"), 0);
    struct rb_counters_sample *b = sample_at(FIX("t1"), NS_PER_S / 2);
    struct rb_counters_rates *r = calloc(1, sizeof(*r));

    (void)state;
    assert_non_null(r);
    rb_counters_rates(a, b, r);
    assert_near(r->duration_s, 0.5);
    assert_near(disk_rate(r, "nvme0n1")->read_iops, 20000.0);
    assert_near(disk_rate(r, "nvme0n1")->util_ratio, 1.0);
    assert_near(net_rate(r->net, r->nnet, "eth0")->rx_bytes_per_s, 250e6);
    free(a);
    free(b);
    free(r);
}

static void test_rates_backwards(void **state)
{
    struct rb_counters_sample *a = sample_at(FIX("t1"), 0);
    struct rb_counters_sample *b = sample_at(FIX("t0"), NS_PER_S);
    struct rb_counters_rates *r = calloc(1, sizeof(*r));

    (void)state;
    assert_non_null(r);
    /* Every counter went backwards (a reset): every rate is 0, none is near 2^64. */
    rb_counters_rates(a, b, r);
    assert_int_equal(r->ndisk, 4);
    for (size_t i = 0; i < r->ndisk; i++) {
        assert_near(r->disk[i].read_iops + r->disk[i].write_iops, 0.0);
        assert_near(r->disk[i].read_bytes_per_s + r->disk[i].write_bytes_per_s, 0.0);
        assert_near(r->disk[i].util_ratio, 0.0);
    }
    for (size_t i = 0; i < r->nnet; i++) {
        assert_near(r->net[i].rx_bytes_per_s + r->net[i].tx_bytes_per_s, 0.0);
        assert_int_equal(r->net[i].rx_bytes + r->net[i].tx_bytes, 0);
    }
    for (size_t i = 0; i < r->nib; i++)
        assert_near(r->ib[i].rx_bytes_per_s + r->ib[i].tx_bytes_per_s, 0.0);
    assert_near(r->cpu_util_ratio, 0.0);

    /* One counter wrapping leaves the others alone. */
    free(a);
    free(b);
    a = sample_at(FIX("t0"), 0);
    b = sample_at(FIX("t1"), NS_PER_S);
    b->net[0].rx_bytes = 10;
    b->disk[0].reads = 1;
    rb_counters_rates(a, b, r);
    assert_near(net_rate(r->net, r->nnet, "eth0")->rx_bytes_per_s, 0.0);
    assert_near(net_rate(r->net, r->nnet, "eth0")->tx_bytes_per_s, 250e6);
    assert_near(disk_rate(r, "nvme0n1")->read_iops, 0.0);
    assert_near(disk_rate(r, "nvme0n1")->write_iops, 5000.0);
    free(a);
    free(b);
    free(r);
}

static void test_rates_zero_interval(void **state)
{
    struct rb_counters_sample *a = sample_at(FIX("t0"), 7 * NS_PER_S);
    struct rb_counters_sample *b = sample_at(FIX("t1"), 7 * NS_PER_S);
    struct rb_counters_rates *r = calloc(1, sizeof(*r));

    (void)state;
    assert_non_null(r);
    rb_counters_rates(a, b, r);
    assert_near(r->duration_s, 0.0);
    for (size_t i = 0; i < r->ndisk; i++)
        assert_near(r->disk[i].read_iops + r->disk[i].write_iops + r->disk[i].read_bytes_per_s +
                        r->disk[i].write_bytes_per_s + r->disk[i].util_ratio,
                    0.0);
    for (size_t i = 0; i < r->nnet; i++)
        assert_near(r->net[i].rx_bytes_per_s + r->net[i].tx_bytes_per_s, 0.0);
    for (size_t i = 0; i < r->nib; i++)
        assert_near(r->ib[i].rx_bytes_per_s + r->ib[i].tx_bytes_per_s, 0.0);
    assert_near(r->cpu_util_ratio, 0.0);
    assert_near(rb_counters_disk_util(r), 0.0);

    /* b taken "before" a (swapped arguments) is a zero interval too, not a huge one. */
    a->t_ns = 9 * NS_PER_S;
    rb_counters_rates(a, b, r);
    assert_near(r->duration_s, 0.0);
    assert_near(disk_rate(r, "nvme0n1")->read_iops, 0.0);
    free(a);
    free(b);
    free(r);
}

static void test_rates_unmatched_device(void **state)
{
    struct rb_counters_sample *a = sample_at(FIX("t0"), 0);
    struct rb_counters_sample *b = sample_at(FIX("t1"), NS_PER_S);
    struct rb_counters_rates *r = calloc(1, sizeof(*r));

    (void)state;
    assert_non_null(r);
    /* A device that appeared between samples has no baseline and is left out. */
    snprintf(a->disk[1].name, sizeof(a->disk[1].name), "sdq");
    snprintf(a->net[0].name, sizeof(a->net[0].name), "eth5");
    rb_counters_rates(a, b, r);
    assert_int_equal(r->ndisk, 3);
    assert_null(disk_rate(r, "sda"));
    assert_null(disk_rate(r, "sdq"));
    assert_int_equal(r->nnet, 1);
    assert_string_equal(r->net[0].name, "ib0");
    free(a);
    free(b);
    free(r);
}

static void test_missing_root(void **state)
{
    struct rb_counters_sample *s = calloc(1, sizeof(*s));

    (void)state;
    assert_non_null(s);
    assert_int_equal(rb_counters_sample(FIX("no-such-host"), s), -ENOENT);
    assert_int_equal(s->ndisk + s->nnet + s->nib, 0);
    assert_int_equal(rb_counters_sample(FIX("t0/proc/stat"), s), -ENOTDIR);
    assert_int_equal(rb_counters_sample(NULL, s), -EINVAL);
    assert_int_equal(rb_counters_sample(FIX("t0"), NULL), -EINVAL);
    free(s);
}

static void test_malformed(void **state)
{
    struct rb_counters_sample *s = sample_at(FIX("malformed"), 0);

    (void)state;
    /*
     * Only sdd, sdd1 and dm-1 are well formed (sdi ends in "1x"). There is no sys/block, so the partition
     * stays; the overlong sdz line would parse if it were cut at the buffer's end.
     */
    assert_int_equal(s->ndisk, 3);
    assert_string_equal(s->disk[0].name, "sdd");
    assert_string_equal(s->disk[1].name, "sdd1");
    assert_string_equal(s->disk[2].name, "dm-1");
    assert_int_equal(s->disk[0].reads, 10);
    assert_int_equal(s->disk[0].write_bytes, 160 * 512);
    assert_int_equal(s->disk[0].io_ticks_ms, 7);
    assert_int_equal(s->disk[2].writes, 4);
    assert_int_equal(s->disk[2].io_ticks_ms, 2);

    /* eth9's rx_bytes holds two numbers; eth8 lacks packet counters; neither speed is valid. */
    assert_int_equal(s->nnet, 2);
    assert_string_equal(s->net[0].name, "eth7");
    assert_true(s->net[0].speed_mbps == -1);
    assert_int_equal(s->net[0].tx_packets, 2);
    assert_string_equal(s->net[1].name, "eth8");
    assert_int_equal(s->net[1].rx_bytes, 30);
    assert_int_equal(s->net[1].rx_packets, 0);
    assert_int_equal(s->net[1].tx_packets, 0);
    assert_true(s->net[1].speed_mbps == -1);

    /* A non-numeric port directory is not a port; an unreadable rate is 0. */
    assert_int_equal(s->nib, 1);
    assert_string_equal(s->ib[0].name, "mlx4_0:1");
    assert_int_equal(s->ib[0].xmit_bytes, 20);
    assert_int_equal(s->ib[0].rcv_bytes, 24);
    assert_int_equal(s->ib[0].xmit_wait, 0);
    assert_near(s->ib[0].rate_gbps, 0.0);

    assert_int_equal(s->cpu.total_ticks, 0);
    assert_int_equal(s->cpu.busy_ticks, 0);
    free(s);
}

/* Scratch trees under $TMPDIR, removed after each test. */
static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_tree(const char *dir) { assert_int_equal(nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0); }

static void make_tmp(char *dir, size_t len)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(dir, len, "%s/rb_counters_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(dir));
}

static void mkdir_p(const char *path)
{
    char buf[4096];

    assert_true(strlen(path) < sizeof(buf));
    strcpy(buf, path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        assert_true(mkdir(buf, 0755) == 0 || errno == EEXIST);
        *p = '/';
    }
    assert_true(mkdir(buf, 0755) == 0 || errno == EEXIST);
}

static void write_file(const char *dir, const char *rel, const char *text)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    *strrchr(path, '/') = '\0';
    mkdir_p(path);
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void test_empty_root(void **state)
{
    char dir[4096];
    struct rb_counters_sample *s;

    (void)state;
    make_tmp(dir, sizeof(dir));
    s = sample_at(dir, 0);
    assert_int_equal(s->ndisk + s->nnet + s->nib, 0);
    assert_int_equal(s->cpu.total_ticks, 0);
    free(s);
    rm_tree(dir);
}

static void test_device_limit(void **state)
{
    char dir[4096], rel[128], *diskstats;
    size_t len = 0, cap = 128 * (RB_COUNTERS_MAX_DEV + 10);
    struct rb_counters_sample *s;

    (void)state;
    make_tmp(dir, sizeof(dir));
    diskstats = calloc(1, cap);
    assert_non_null(diskstats);
    for (int i = 0; i < RB_COUNTERS_MAX_DEV + 6; i++) {
        len += (size_t)snprintf(diskstats + len, cap - len, "   8 %d sd%d %d 0 8 1 1 0 8 1 0 1 1\n", i, i, i);
        snprintf(rel, sizeof(rel), "sys/class/net/eth%02d/statistics/rx_bytes", i);
        write_file(dir, rel, "1\n");
        snprintf(rel, sizeof(rel), "sys/class/net/eth%02d/statistics/tx_bytes", i);
        write_file(dir, rel, "2\n");
    }
    write_file(dir, "proc/diskstats", diskstats);
    free(diskstats);
    s = sample_at(dir, 0);
    assert_int_equal(s->ndisk, RB_COUNTERS_MAX_DEV);
    assert_string_equal(s->disk[0].name, "sd0");
    assert_string_equal(s->disk[RB_COUNTERS_MAX_DEV - 1].name, "sd63");
    assert_int_equal(s->disk[RB_COUNTERS_MAX_DEV - 1].reads, RB_COUNTERS_MAX_DEV - 1);
    assert_int_equal(s->nnet, RB_COUNTERS_MAX_DEV);
    assert_int_equal(s->net[RB_COUNTERS_MAX_DEV - 1].tx_bytes, 2);
    free(s);
    rm_tree(dir);
}

static void test_sysfs_bang_name(void **state)
{
    char dir[4096];
    struct rb_counters_sample *s;

    (void)state;
    /* Block names with '/' live in sysfs with '!': cciss/c0d0 is /sys/block/cciss!c0d0. */
    make_tmp(dir, sizeof(dir));
    write_file(dir, "proc/diskstats",
               " 104 0 cciss/c0d0 1 0 8 1 1 0 8 1 0 1 1\n"
               " 104 1 cciss/c0d0p1 1 0 8 1 1 0 8 1 0 1 1\n"
               "   8 0 .. 1 0 8 1 1 0 8 1 0 1 1\n");
    write_file(dir, "sys/block/cciss!c0d0/dev", "104:0\n");
    s = sample_at(dir, 0);
    assert_int_equal(s->ndisk, 1);
    assert_string_equal(s->disk[0].name, "cciss/c0d0");
    free(s);
    rm_tree(dir);
}

static double num(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    assert_non_null(v);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static const char *str(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    assert_non_null(v);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static void test_json(void **state)
{
    struct rb_counters_sample *a = sample_at(FIX("t0"), 0);
    struct rb_counters_sample *b = sample_at(FIX("t1"), NS_PER_S);
    struct rb_counters_rates *r = calloc(1, sizeof(*r));
    const cJSON *arr, *o;
    cJSON *j, *back;
    char *text;

    (void)state;
    assert_non_null(r);
    rb_counters_rates(a, b, r);
    j = rb_counters_rates_json(r);
    assert_non_null(j);
    /* Through text and back, as a reader of the results file would see it. */
    text = cJSON_PrintUnformatted(j);
    assert_non_null(text);
    back = cJSON_Parse(text);
    assert_non_null(back);
    assert_near(num(back, "duration_s"), 1.0);
    assert_near(num(back, "cpu_util_ratio"), 0.4);

    arr = cJSON_GetObjectItemCaseSensitive(back, "disk");
    assert_true(cJSON_IsArray(arr));
    assert_int_equal(cJSON_GetArraySize(arr), 4);
    o = cJSON_GetArrayItem(arr, 0);
    assert_string_equal(str(o, "name"), "nvme0n1");
    assert_near(num(o, "read_bytes"), 40960000.0);
    assert_near(num(o, "write_bytes"), 10240000.0);
    assert_near(num(o, "read_iops"), 10000.0);
    assert_near(num(o, "write_iops"), 5000.0);
    assert_near(num(o, "read_bytes_per_s"), 40960000.0);
    assert_near(num(o, "write_bytes_per_s"), 10240000.0);
    assert_near(num(o, "util_ratio"), 0.5);

    arr = cJSON_GetObjectItemCaseSensitive(back, "net");
    assert_true(cJSON_IsArray(arr));
    assert_int_equal(cJSON_GetArraySize(arr), 2);
    o = cJSON_GetArrayItem(arr, 0);
    assert_string_equal(str(o, "name"), "eth0");
    assert_near(num(o, "rx_bytes_per_s"), 125e6);
    assert_near(num(o, "tx_bytes_per_s"), 250e6);
    assert_near(num(o, "rx_bytes"), 125e6);
    assert_near(num(o, "tx_bytes"), 250e6);
    assert_near(num(o, "speed_bytes_per_s"), 3.125e9);

    arr = cJSON_GetObjectItemCaseSensitive(back, "ib");
    assert_true(cJSON_IsArray(arr));
    assert_int_equal(cJSON_GetArraySize(arr), 2);
    o = cJSON_GetArrayItem(arr, 0);
    assert_string_equal(str(o, "name"), "mlx5_0:1");
    assert_near(num(o, "tx_bytes_per_s"), 1e9);
    assert_near(num(o, "rx_bytes_per_s"), 5e8);
    assert_near(num(o, "speed_bytes_per_s"), 12.5e9);

    cJSON_Delete(back);
    cJSON_free(text);
    cJSON_Delete(j);
    free(a);
    free(b);
    free(r);
}

static void test_json_empty(void **state)
{
    struct rb_counters_rates *r = calloc(1, sizeof(*r));
    cJSON *j;

    (void)state;
    assert_non_null(r);
    j = rb_counters_rates_json(r);
    assert_non_null(j);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "disk")), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "net")), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "ib")), 0);
    assert_null(rb_counters_rates_json(NULL));
    cJSON_Delete(j);
    free(r);
}

static void test_live(void **state)
{
    struct rb_counters_sample *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
    struct rb_counters_rates *r = calloc(1, sizeof(*r));

    (void)state;
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(r);
    assert_int_equal(rb_counters_sample("/", a), 0);
    assert_true(a->cpu.total_ticks > 0);
    assert_true(a->cpu.busy_ticks <= a->cpu.total_ticks);
    assert_true(a->ndisk <= RB_COUNTERS_MAX_DEV);
    for (size_t i = 0; i < a->ndisk; i++) {
        assert_true(strncmp(a->disk[i].name, "ram", 3) != 0);
    }
    for (size_t i = 0; i < a->nnet; i++)
        assert_string_not_equal(a->net[i].name, "lo");
    nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
    assert_int_equal(rb_counters_sample("", b), 0);
    assert_true(b->t_ns > a->t_ns);
    rb_counters_rates(a, b, r);
    assert_true(r->duration_s > 0.0);
    assert_true(r->cpu_util_ratio >= 0.0 && r->cpu_util_ratio <= 1.0);
    for (size_t i = 0; i < r->ndisk; i++)
        assert_true(r->disk[i].util_ratio >= 0.0 && r->disk[i].util_ratio <= 1.0);
    free(a);
    free(b);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_t0),
        cmocka_unit_test(test_sample_t1),
        cmocka_unit_test(test_sample_root_spelling),
        cmocka_unit_test(test_sample_sets_time),
        cmocka_unit_test(test_rates_t0_t1),
        cmocka_unit_test(test_rates_half_second),
        cmocka_unit_test(test_rates_backwards),
        cmocka_unit_test(test_rates_zero_interval),
        cmocka_unit_test(test_rates_unmatched_device),
        cmocka_unit_test(test_missing_root),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_empty_root),
        cmocka_unit_test(test_device_limit),
        cmocka_unit_test(test_sysfs_bang_name),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_json_empty),
        cmocka_unit_test(test_live),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
