/* Samples disk, network, InfiniBand and CPU counters from /proc and /sys, and turns two samples into rates. */
#define _POSIX_C_SOURCE 200809L

#include "railbench/counters.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "railbench/clock.h"

#define RB_CNT_PATH_MAX 4096
#define RB_CNT_LINE_MAX 1024
#define RB_CNT_VALUE_MAX 128             /* a sysfs value: one number or a short phrase */
#define RB_SECTOR_BYTES 512u             /* /proc/diskstats counts 512-byte sectors whatever the device's block size */
#define RB_IB_DATA_WORD_BYTES 4u         /* port_{xmit,rcv}_data count 4-byte words (IBTA PortCounters) */
/* major minor name + reads rmerged rsect rms writes wmerged wsect wms inflight io_ticks weighted */
#define RB_DISKSTATS_FIELDS 11
/* user nice system idle iowait irq softirq steal: guest and guest_nice are already inside user and nice */
#define RB_STAT_CPU_FIELDS 8

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static const char *skip_space(const char *p)
{
    while (is_space(*p))
        p++;
    return p;
}

/* Parses one unsigned decimal token after optional blanks; it must end at a blank or the end of the string. */
static bool parse_u64(const char **pp, uint64_t *out)
{
    const char *p = skip_space(*pp);
    uint64_t v = 0;

    if (!is_digit(*p))
        return false;
    while (is_digit(*p)) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
        p++;
    }
    if (*p != '\0' && !is_space(*p))
        return false;
    *out = v;
    *pp = p;
    return true;
}

/* A whole value file holding exactly one unsigned number. */
static bool parse_u64_only(const char *s, uint64_t *out)
{
    const char *p = s;
    uint64_t v;

    if (!parse_u64(&p, &v) || *skip_space(p) != '\0')
        return false;
    *out = v;
    return true;
}

/* A whole value file holding exactly one signed number. */
static bool parse_i64_only(const char *s, int64_t *out)
{
    const char *p = skip_space(s);
    bool neg = false;
    uint64_t v;

    if (*p == '-') {
        neg = true;
        p++;
        if (!is_digit(*p))
            return false;
    }
    if (!parse_u64(&p, &v) || *skip_space(p) != '\0')
        return false;
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return false;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX)
            return false;
        *out = (int64_t)v;
    }
    return true;
}

/*
 * Parses the leading "<number> Gb/sec" of an InfiniBand rate file ("100 Gb/sec (4X EDR)",
 * "2.5 Gb/sec (1X SDR)") without strtod, so a process locale with a decimal comma cannot change it.
 */
static double parse_ib_rate_gbps(const char *s)
{
    const char *p = skip_space(s);
    double v = 0.0, scale = 1.0;
    int digits = 0;

    while (is_digit(*p) && digits < 12) {
        v = v * 10.0 + (double)(*p - '0');
        p++;
        digits++;
    }
    if (digits == 0 || is_digit(*p))
        return 0.0;
    if (*p == '.') {
        p++;
        while (is_digit(*p) && digits < 18) {
            scale /= 10.0;
            v += (double)(*p - '0') * scale;
            p++;
            digits++;
        }
        if (is_digit(*p))
            return 0.0;
    }
    p = skip_space(p);
    if (strncmp(p, "Gb/s", 4) != 0)
        return 0.0;
    return v > 0.0 ? v : 0.0;
}

static bool fits(int n, size_t len) { return n >= 0 && (size_t)n < len; }

/* Reads a small file into buf as a string; -EFBIG when it does not fit, so a cut value is never parsed. */
static int read_small(const char *path, char *buf, size_t len)
{
    size_t got = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -errno;
    for (;;) {
        char extra;
        ssize_t n;

        if (got + 1 < len)
            n = read(fd, buf + got, len - 1 - got);
        else
            n = read(fd, &extra, 1);
        if (n < 0) {
            int err = -errno;
            if (errno == EINTR)
                continue;
            close(fd);
            return err;
        }
        if (n == 0)
            break;
        if (got + 1 >= len) {
            close(fd);
            return -EFBIG;
        }
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    return 0;
}

/* Reads dir/name as one unsigned number. */
static bool read_u64_at(const char *dir, const char *name, uint64_t *out)
{
    char path[RB_CNT_PATH_MAX], buf[RB_CNT_VALUE_MAX];

    if (!fits(snprintf(path, sizeof(path), "%s/%s", dir, name), sizeof(path)))
        return false;
    if (read_small(path, buf, sizeof(buf)) != 0)
        return false;
    return parse_u64_only(buf, out);
}

/*
 * Reads one line into buf without its newline. Returns 1 for a line, 0 for a line too long for
 * buf (its rest is consumed so it cannot pose as the next line), -1 at the end of the file.
 */
static int read_line(FILE *f, char *buf, size_t len)
{
    size_t n;

    if (!fgets(buf, (int)len, f))
        return -1;
    n = strlen(buf);
    if (n > 0 && buf[n - 1] == '\n') {
        buf[n - 1] = '\0';
        return 1;
    }
    if (feof(f))
        return 1;
    for (int c = fgetc(f); c != EOF && c != '\n'; c = fgetc(f))
        ;
    return 0;
}

static bool is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_dot(const char *name) { return strcmp(name, ".") == 0 || strcmp(name, "..") == 0; }

/* Copies src into a name field; false when it does not fit, so two long names cannot collide. */
static bool copy_name(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);

    if (n == 0 || n >= len)
        return false;
    memcpy(dst, src, n + 1);
    return true;
}

/* One /proc/diskstats line: "major minor name" then at least RB_DISKSTATS_FIELDS numbers. */
static bool parse_diskstats_line(const char *line, char *name, size_t name_len, uint64_t *f)
{
    const char *p = line, *start;
    uint64_t major, minor;
    size_t n;

    if (!parse_u64(&p, &major) || !parse_u64(&p, &minor))
        return false;
    p = skip_space(p);
    start = p;
    while (*p != '\0' && !is_space(*p))
        p++;
    n = (size_t)(p - start);
    if (n == 0 || n >= name_len)
        return false;
    memcpy(name, start, n);
    name[n] = '\0';
    /* Later kernels append discard and flush fields; they are not needed here. */
    for (int i = 0; i < RB_DISKSTATS_FIELDS; i++)
        if (!parse_u64(&p, &f[i]))
            return false;
    return true;
}

/*
 * Whole disks only: present under sys/block (with '/' spelled '!'), never RAM
 * disks. A loop device counts once it is attached (sys/block/loopN/loop
 * exists: an unattached one has no I/O to show): a file system on a loop
 * device has no other device of its own, and its bytes are the loop
 * device's (the disk under the backing file counts them again, as its own).
 */
static bool keep_disk(const char *root, const char *name, bool have_sysblock)
{
    char sysname[sizeof(((struct rb_disk_stat *)0)->name)];
    char path[RB_CNT_PATH_MAX];

    if (strncmp(name, "ram", 3) == 0 || is_dot(name))
        return false;
    bool loop = strncmp(name, "loop", 4) == 0;
    if (!have_sysblock)
        return !loop;
    if (!copy_name(sysname, sizeof(sysname), name))
        return false;
    for (char *c = sysname; *c; c++)
        if (*c == '/')
            *c = '!';
    if (!fits(snprintf(path, sizeof(path), "%s/sys/block/%s%s", root, sysname, loop ? "/loop" : ""), sizeof(path)))
        return false;
    return access(path, F_OK) == 0;
}

/* Adds the kept devices of one pass over diskstats f: loop devices (loops) or the others. */
static void sample_disk_pass(FILE *f, const char *root, bool have_sysblock, bool loops, struct rb_counters_sample *s)
{
    char line[RB_CNT_LINE_MAX];
    int r;

    while (s->ndisk < RB_COUNTERS_MAX_DEV && (r = read_line(f, line, sizeof(line))) >= 0) {
        struct rb_disk_stat *d = &s->disk[s->ndisk];
        uint64_t v[RB_DISKSTATS_FIELDS];

        if (r == 0 || !parse_diskstats_line(line, d->name, sizeof(d->name), v))
            continue;
        if ((strncmp(d->name, "loop", 4) == 0) != loops || !keep_disk(root, d->name, have_sysblock))
            continue;
        d->reads = v[0];
        d->read_bytes = v[2] * RB_SECTOR_BYTES;
        d->writes = v[4];
        d->write_bytes = v[6] * RB_SECTOR_BYTES;
        d->io_ticks_ms = v[9];
        s->ndisk++;
    }
}

static void sample_disks(const char *root, struct rb_counters_sample *s)
{
    char path[RB_CNT_PATH_MAX];
    bool have_sysblock;
    FILE *f;

    if (!fits(snprintf(path, sizeof(path), "%s/sys/block", root), sizeof(path)))
        return;
    have_sysblock = is_dir(path);
    if (!fits(snprintf(path, sizeof(path), "%s/proc/diskstats", root), sizeof(path)))
        return;
    f = fopen(path, "r");
    if (!f)
        return;
    /* Loop devices after the others, so a host with many attached ones (snaps) never crowds its disks out. */
    sample_disk_pass(f, root, have_sysblock, false, s);
    rewind(f);
    sample_disk_pass(f, root, have_sysblock, true, s);
    fclose(f);
    /* A skipped line may have left a partial name in the next free slot. */
    if (s->ndisk < RB_COUNTERS_MAX_DEV)
        memset(&s->disk[s->ndisk], 0, sizeof(s->disk[0]));
}

/*
 * Link speed in Mb/s, or -1. Down links fail the read with EINVAL, virtual ones print -1, and
 * older kernels print SPEED_UNKNOWN as the unsigned 4294967295.
 */
static int64_t read_speed_mbps(const char *ifdir)
{
    char path[RB_CNT_PATH_MAX], buf[RB_CNT_VALUE_MAX];
    int64_t v;

    if (!fits(snprintf(path, sizeof(path), "%s/speed", ifdir), sizeof(path)))
        return -1;
    if (read_small(path, buf, sizeof(buf)) != 0 || !parse_i64_only(buf, &v))
        return -1;
    if (v <= 0 || v >= (int64_t)UINT32_MAX)
        return -1;
    return v;
}

static int cmp_net(const void *a, const void *b)
{
    return strcmp(((const struct rb_net_stat *)a)->name, ((const struct rb_net_stat *)b)->name);
}

static int cmp_ib(const void *a, const void *b)
{
    return strcmp(((const struct rb_ib_stat *)a)->name, ((const struct rb_ib_stat *)b)->name);
}

/*
 * Byte counters are required and the rest default to 0: a device whose byte counters appear
 * only in a later sample would otherwise show its whole lifetime as one interval's traffic.
 */
static void sample_net(const char *root, struct rb_counters_sample *s)
{
    char dir[RB_CNT_PATH_MAX], ifdir[RB_CNT_PATH_MAX], stats[RB_CNT_PATH_MAX];
    struct dirent *de;
    DIR *d;

    if (!fits(snprintf(dir, sizeof(dir), "%s/sys/class/net", root), sizeof(dir)))
        return;
    d = opendir(dir);
    if (!d)
        return;
    while (s->nnet < RB_COUNTERS_MAX_DEV && (de = readdir(d)) != NULL) {
        struct rb_net_stat *n = &s->net[s->nnet];

        if (is_dot(de->d_name) || strcmp(de->d_name, "lo") == 0)
            continue;
        memset(n, 0, sizeof(*n));
        if (!copy_name(n->name, sizeof(n->name), de->d_name))
            continue;
        /* A plain file such as bonding_masters fails the statistics reads below and is skipped. */
        if (!fits(snprintf(ifdir, sizeof(ifdir), "%s/%s", dir, de->d_name), sizeof(ifdir)))
            continue;
        if (!fits(snprintf(stats, sizeof(stats), "%s/statistics", ifdir), sizeof(stats)))
            continue;
        if (!read_u64_at(stats, "rx_bytes", &n->rx_bytes) || !read_u64_at(stats, "tx_bytes", &n->tx_bytes))
            continue;
        if (!read_u64_at(stats, "rx_packets", &n->rx_packets))
            n->rx_packets = 0;
        if (!read_u64_at(stats, "tx_packets", &n->tx_packets))
            n->tx_packets = 0;
        n->speed_mbps = read_speed_mbps(ifdir);
        s->nnet++;
    }
    closedir(d);
    if (s->nnet < RB_COUNTERS_MAX_DEV)
        memset(&s->net[s->nnet], 0, sizeof(s->net[0]));
    /* readdir order depends on the file system; sorted output is stable across samples and hosts. */
    qsort(s->net, s->nnet, sizeof(s->net[0]), cmp_net);
}

static bool is_number_name(const char *name)
{
    if (!is_digit(*name))
        return false;
    for (; *name; name++)
        if (!is_digit(*name))
            return false;
    return true;
}

/* Reads one port's counters into i (named "<dev>:<port>"); false when its data counters are unreadable. */
static bool sample_ib_port(const char *portdir, const char *dev, const char *port, struct rb_ib_stat *i)
{
    char cnt[RB_CNT_PATH_MAX], path[RB_CNT_PATH_MAX], buf[RB_CNT_VALUE_MAX];
    uint64_t xmit_words, rcv_words;

    memset(i, 0, sizeof(*i));
    if (!fits(snprintf(i->name, sizeof(i->name), "%s:%s", dev, port), sizeof(i->name)))
        return false;
    if (!fits(snprintf(cnt, sizeof(cnt), "%s/counters", portdir), sizeof(cnt)))
        return false;
    if (!read_u64_at(cnt, "port_xmit_data", &xmit_words) || !read_u64_at(cnt, "port_rcv_data", &rcv_words))
        return false;
    i->xmit_bytes = xmit_words * RB_IB_DATA_WORD_BYTES;
    i->rcv_bytes = rcv_words * RB_IB_DATA_WORD_BYTES;
    if (!read_u64_at(cnt, "port_xmit_packets", &i->xmit_packets))
        i->xmit_packets = 0;
    if (!read_u64_at(cnt, "port_rcv_packets", &i->rcv_packets))
        i->rcv_packets = 0;
    if (!read_u64_at(cnt, "port_xmit_wait", &i->xmit_wait))
        i->xmit_wait = 0;
    if (fits(snprintf(path, sizeof(path), "%s/rate", portdir), sizeof(path)) &&
        read_small(path, buf, sizeof(buf)) == 0)
        i->rate_gbps = parse_ib_rate_gbps(buf);
    return true;
}

static void sample_ib_dev(const char *devdir, const char *dev, struct rb_counters_sample *s)
{
    char ports[RB_CNT_PATH_MAX], portdir[RB_CNT_PATH_MAX];
    struct dirent *de;
    DIR *d;

    if (!fits(snprintf(ports, sizeof(ports), "%s/ports", devdir), sizeof(ports)))
        return;
    d = opendir(ports);
    if (!d)
        return;
    while (s->nib < RB_COUNTERS_MAX_DEV && (de = readdir(d)) != NULL) {
        if (!is_number_name(de->d_name))
            continue;
        if (!fits(snprintf(portdir, sizeof(portdir), "%s/%s", ports, de->d_name), sizeof(portdir)))
            continue;
        if (sample_ib_port(portdir, dev, de->d_name, &s->ib[s->nib]))
            s->nib++;
    }
    closedir(d);
}

static void sample_ib(const char *root, struct rb_counters_sample *s)
{
    char dir[RB_CNT_PATH_MAX], devdir[RB_CNT_PATH_MAX];
    struct dirent *de;
    DIR *d;

    if (!fits(snprintf(dir, sizeof(dir), "%s/sys/class/infiniband", root), sizeof(dir)))
        return;
    d = opendir(dir);
    if (!d)
        return;
    while (s->nib < RB_COUNTERS_MAX_DEV && (de = readdir(d)) != NULL) {
        if (is_dot(de->d_name))
            continue;
        if (!fits(snprintf(devdir, sizeof(devdir), "%s/%s", dir, de->d_name), sizeof(devdir)))
            continue;
        sample_ib_dev(devdir, de->d_name, s);
    }
    closedir(d);
    if (s->nib < RB_COUNTERS_MAX_DEV)
        memset(&s->ib[s->nib], 0, sizeof(s->ib[0]));
    qsort(s->ib, s->nib, sizeof(s->ib[0]), cmp_ib);
}

/* The aggregate "cpu " line: busy = total - idle - iowait (iowait is idle time waiting on I/O). */
static void sample_cpu(const char *root, struct rb_counters_sample *s)
{
    char path[RB_CNT_PATH_MAX], line[RB_CNT_LINE_MAX];
    uint64_t v[RB_STAT_CPU_FIELDS] = {0}, total = 0;
    const char *p;
    FILE *f;
    int n = 0, r;

    if (!fits(snprintf(path, sizeof(path), "%s/proc/stat", root), sizeof(path)))
        return;
    f = fopen(path, "r");
    if (!f)
        return;
    while ((r = read_line(f, line, sizeof(line))) >= 0)
        if (r == 1 && strncmp(line, "cpu ", 4) == 0)
            break;
    fclose(f);
    if (r != 1)
        return;
    p = line + 4;
    while (n < RB_STAT_CPU_FIELDS && parse_u64(&p, &v[n]))
        n++;
    /* Kernels before 2.6 have only user, nice, system and idle. */
    if (n < 4)
        return;
    for (int i = 0; i < n; i++) {
        if (total > UINT64_MAX - v[i])
            return;
        total += v[i];
    }
    s->cpu.total_ticks = total;
    s->cpu.busy_ticks = total - v[3] - v[4];
}

int rb_counters_sample(const char *root, struct rb_counters_sample *s)
{
    char base[RB_CNT_PATH_MAX];
    size_t n;
    DIR *d;

    if (!s)
        return -EINVAL;
    memset(s, 0, sizeof(*s));
    if (!root)
        return -EINVAL;
    n = strlen(root);
    if (n >= sizeof(base) - 64)
        return -ENAMETOOLONG;
    /* Paths are built as base + "/proc/..."; "/" and "" both mean the live system. */
    memcpy(base, root, n + 1);
    while (n > 0 && base[n - 1] == '/')
        base[--n] = '\0';
    d = opendir(n ? base : "/");
    if (!d)
        return -errno;
    closedir(d);
    s->t_ns = rb_clock_ns();
    sample_disks(base, s);
    sample_net(base, s);
    sample_ib(base, s);
    sample_cpu(base, s);
    return 0;
}

/* A counter that went backwards was reset or wrapped: the interval's true delta is unknown, so 0. */
static uint64_t delta(uint64_t a, uint64_t b) { return b >= a ? b - a : 0; }

static double per_s(uint64_t d, double dt_s) { return dt_s > 0.0 ? (double)d / dt_s : 0.0; }

static double clamp01(double x) { return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x; }

static const struct rb_disk_stat *find_disk(const struct rb_counters_sample *s, const char *name)
{
    for (size_t i = 0; i < s->ndisk && i < RB_COUNTERS_MAX_DEV; i++)
        if (strcmp(s->disk[i].name, name) == 0)
            return &s->disk[i];
    return NULL;
}

static const struct rb_net_stat *find_net(const struct rb_counters_sample *s, const char *name)
{
    for (size_t i = 0; i < s->nnet && i < RB_COUNTERS_MAX_DEV; i++)
        if (strcmp(s->net[i].name, name) == 0)
            return &s->net[i];
    return NULL;
}

static const struct rb_ib_stat *find_ib(const struct rb_counters_sample *s, const char *name)
{
    for (size_t i = 0; i < s->nib && i < RB_COUNTERS_MAX_DEV; i++)
        if (strcmp(s->ib[i].name, name) == 0)
            return &s->ib[i];
    return NULL;
}

static void set_net_rate(struct rb_net_rate *r, const char *name, uint64_t rx, uint64_t tx, double dt_s,
                         double speed_bytes_per_s)
{
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->rx_bytes = rx;
    r->tx_bytes = tx;
    r->rx_bytes_per_s = per_s(rx, dt_s);
    r->tx_bytes_per_s = per_s(tx, dt_s);
    r->speed_bytes_per_s = speed_bytes_per_s;
}

/*
 * Devices present in b but not in a have no baseline and are left out rather than shown as idle.
 * Names are NUL-terminated within their fields because the samplers write them that way.
 */
void rb_counters_rates(const struct rb_counters_sample *a, const struct rb_counters_sample *b,
                       struct rb_counters_rates *out)
{
    uint64_t dt_ns;
    double dt_s, dt_ms;

    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    if (!a || !b)
        return;
    dt_ns = delta(a->t_ns, b->t_ns);
    dt_s = (double)dt_ns / 1e9;
    dt_ms = (double)dt_ns / 1e6;
    out->duration_s = dt_s;

    for (size_t i = 0; i < b->ndisk && i < RB_COUNTERS_MAX_DEV; i++) {
        const struct rb_disk_stat *y = &b->disk[i], *x = find_disk(a, y->name);
        struct rb_disk_rate *r = &out->disk[out->ndisk];

        if (!x)
            continue;
        snprintf(r->name, sizeof(r->name), "%s", y->name);
        r->read_iops = per_s(delta(x->reads, y->reads), dt_s);
        r->write_iops = per_s(delta(x->writes, y->writes), dt_s);
        r->read_bytes_per_s = per_s(delta(x->read_bytes, y->read_bytes), dt_s);
        r->write_bytes_per_s = per_s(delta(x->write_bytes, y->write_bytes), dt_s);
        r->read_bytes = delta(x->read_bytes, y->read_bytes);
        r->write_bytes = delta(x->write_bytes, y->write_bytes);
        /* Same definition as iostat's %util and fio's disk_util: busy milliseconds over wall milliseconds. */
        r->util_ratio = dt_ms > 0.0 ? clamp01((double)delta(x->io_ticks_ms, y->io_ticks_ms) / dt_ms) : 0.0;
        out->ndisk++;
    }

    for (size_t i = 0; i < b->nnet && i < RB_COUNTERS_MAX_DEV; i++) {
        const struct rb_net_stat *y = &b->net[i], *x = find_net(a, y->name);

        if (!x)
            continue;
        /* Mb/s is decimal: 1 Mb/s = 1e6 bits/s = 1e6 / 8 bytes/s. */
        set_net_rate(&out->net[out->nnet++], y->name, delta(x->rx_bytes, y->rx_bytes),
                     delta(x->tx_bytes, y->tx_bytes), dt_s,
                     y->speed_mbps > 0 ? (double)y->speed_mbps * 1e6 / 8.0 : 0.0);
    }

    for (size_t i = 0; i < b->nib && i < RB_COUNTERS_MAX_DEV; i++) {
        const struct rb_ib_stat *y = &b->ib[i], *x = find_ib(a, y->name);

        if (!x)
            continue;
        set_net_rate(&out->ib[out->nib++], y->name, delta(x->rcv_bytes, y->rcv_bytes),
                     delta(x->xmit_bytes, y->xmit_bytes), dt_s,
                     y->rate_gbps > 0.0 ? y->rate_gbps * 1e9 / 8.0 : 0.0);
    }

    if (dt_ns > 0) {
        uint64_t busy = delta(a->cpu.busy_ticks, b->cpu.busy_ticks);
        uint64_t total = delta(a->cpu.total_ticks, b->cpu.total_ticks);

        /* iowait may go backwards on some kernels, so busy can exceed total by a little. */
        out->cpu_util_ratio = total > 0 ? clamp01((double)busy / (double)total) : 0.0;
    }
}

static bool add_net_rates(cJSON *obj, const char *key, const struct rb_net_rate *r, size_t n)
{
    cJSON *arr = cJSON_AddArrayToObject(obj, key);

    if (!arr)
        return false;
    for (size_t i = 0; i < n && i < RB_COUNTERS_MAX_DEV; i++) {
        cJSON *o = cJSON_CreateObject();

        if (!o)
            return false;
        cJSON_AddItemToArray(arr, o);
        if (!cJSON_AddStringToObject(o, "name", r[i].name) ||
            !cJSON_AddNumberToObject(o, "rx_bytes_per_s", r[i].rx_bytes_per_s) ||
            !cJSON_AddNumberToObject(o, "tx_bytes_per_s", r[i].tx_bytes_per_s) ||
            !cJSON_AddNumberToObject(o, "rx_bytes", (double)r[i].rx_bytes) ||
            !cJSON_AddNumberToObject(o, "tx_bytes", (double)r[i].tx_bytes) ||
            !cJSON_AddNumberToObject(o, "speed_bytes_per_s", r[i].speed_bytes_per_s))
            return false;
    }
    return true;
}

cJSON *rb_counters_rates_json(const struct rb_counters_rates *r)
{
    cJSON *obj, *disks;

    if (!r)
        return NULL;
    obj = cJSON_CreateObject();
    if (!obj)
        return NULL;
    if (!cJSON_AddNumberToObject(obj, "duration_s", r->duration_s) ||
        !cJSON_AddNumberToObject(obj, "cpu_util_ratio", r->cpu_util_ratio))
        goto fail;
    disks = cJSON_AddArrayToObject(obj, "disk");
    if (!disks)
        goto fail;
    for (size_t i = 0; i < r->ndisk && i < RB_COUNTERS_MAX_DEV; i++) {
        const struct rb_disk_rate *d = &r->disk[i];
        cJSON *o = cJSON_CreateObject();

        if (!o)
            goto fail;
        cJSON_AddItemToArray(disks, o);
        if (!cJSON_AddStringToObject(o, "name", d->name) ||
            !cJSON_AddNumberToObject(o, "read_iops", d->read_iops) ||
            !cJSON_AddNumberToObject(o, "write_iops", d->write_iops) ||
            !cJSON_AddNumberToObject(o, "read_bytes_per_s", d->read_bytes_per_s) ||
            !cJSON_AddNumberToObject(o, "write_bytes_per_s", d->write_bytes_per_s) ||
            !cJSON_AddNumberToObject(o, "read_bytes", (double)d->read_bytes) ||
            !cJSON_AddNumberToObject(o, "write_bytes", (double)d->write_bytes) ||
            !cJSON_AddNumberToObject(o, "util_ratio", d->util_ratio))
            goto fail;
    }
    if (!add_net_rates(obj, "net", r->net, r->nnet) || !add_net_rates(obj, "ib", r->ib, r->nib))
        goto fail;
    return obj;
fail:
    cJSON_Delete(obj);
    return NULL;
}

/* Idle devices are left out so one busy disk among many idle ones still shows as busy. */
double rb_counters_disk_util(const struct rb_counters_rates *r)
{
    double sum = 0.0;
    size_t n = 0;

    if (!r)
        return 0.0;
    for (size_t i = 0; i < r->ndisk && i < RB_COUNTERS_MAX_DEV; i++) {
        const struct rb_disk_rate *d = &r->disk[i];

        /* A device with I/O in flight all interval completes none yet is busy, hence util too. */
        if (d->read_iops > 0.0 || d->write_iops > 0.0 || d->util_ratio > 0.0) {
            sum += d->util_ratio;
            n++;
        }
    }
    return n ? sum / (double)n : 0.0;
}
