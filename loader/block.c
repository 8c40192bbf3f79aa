/* railbench block: fio sweeps (block size x iodepth x numjobs) on every rank at once, latency SLO, knee, aggregate. */
#define _GNU_SOURCE
#include "railbench/block.h"
#include "railbench/file.h"
#include "railbench/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "railbench/cli.h"
#include "railbench/clock.h"
#include "railbench/command.h"
#include "railbench/harness.h"
#include "railbench/log.h"
#include "railbench/result.h"
#include "railbench/units.h"

/* ---- SLO and knee: the derived figures, each in one function ---- */

static const char *const pct_label[RB_FIO_PCTS] = {"p50", "p90", "p99", "p99.9", "p99.99"};

static void slo_error(char *err, size_t errlen, const char *s)
{
    snprintf(err, errlen,
             "'%s' is not an SLO; expected [clat|lat] PERCENTILE<=DURATION with PERCENTILE one of "
             "p50 p90 p99 p99.9 p99.99 and \"<=\" or \"<\", e.g. p99<=500us",
             s);
}

int rb_block_slo_parse(const char *s, struct rb_block_slo *slo, char *err, size_t errlen)
{
    memset(slo, 0, sizeof *slo);
    const char *p = s;
    while (*p == ' ')
        p++;
    slo->kind = RB_BLOCK_CLAT;
    if (strncmp(p, "clat", 4) == 0)
        p += 4;
    else if (strncmp(p, "lat", 3) == 0) {
        slo->kind = RB_BLOCK_LAT;
        p += 3;
    }
    while (*p == ' ')
        p++;
    if (*p != 'p' && *p != 'P')
        goto bad;
    p++;
    size_t n = strspn(p, "0123456789.");
    static const char *const forms[][2] = {{"50", ""}, {"90", ""}, {"99", ""}, {"99.9", "999"}, {"99.99", "9999"}};
    slo->pct = -1;
    for (int i = 0; i < RB_FIO_PCTS; i++)
        for (int f = 0; f < 2; f++)
            if (*forms[i][f] && strlen(forms[i][f]) == n && strncmp(p, forms[i][f], n) == 0)
                slo->pct = i;
    if (slo->pct < 0)
        goto bad;
    p += n;
    while (*p == ' ')
        p++;
    if (p[0] != '<')
        goto bad;
    slo->inclusive = p[1] == '=';
    p += slo->inclusive ? 2 : 1;
    while (*p == ' ')
        p++;
    char dur[32];
    size_t dl = strlen(p);
    while (dl && p[dl - 1] == ' ')
        dl--;
    if (dl == 0 || dl >= sizeof dur)
        goto bad;
    memcpy(dur, p, dl);
    dur[dl] = '\0';
    if (rb_parse_duration(dur, &slo->bound_ns) != 0 || slo->bound_ns == 0)
        goto bad;
    char shown[32];
    rb_format_duration(shown, sizeof shown, slo->bound_ns);
    snprintf(slo->text, sizeof slo->text, "%s %s%s%s", slo->kind == RB_BLOCK_LAT ? "lat" : "clat",
             pct_label[slo->pct], slo->inclusive ? "<=" : "<", shown);
    return 0;
bad:
    slo_error(err, errlen, s);
    return -EINVAL;
}

uint64_t rb_block_outstanding(const struct rb_block_point *p)
{
    return p->iodepth * p->numjobs;
}

bool rb_block_slo_met(const struct rb_block_slo *slo, const struct rb_block_point *p)
{
    uint64_t v = slo->kind == RB_BLOCK_LAT ? p->lat_ns[slo->pct] : p->clat_ns[slo->pct];
    return slo->inclusive ? v <= slo->bound_ns : v < slo->bound_ns;
}

int rb_block_slo_best(const struct rb_block_slo *slo, const struct rb_block_point *pts, size_t n)
{
    int best = -1;
    for (size_t i = 0; i < n; i++) {
        if (!rb_block_slo_met(slo, &pts[i]))
            continue;
        if (best < 0 || pts[i].iops > pts[best].iops ||
            (pts[i].iops == pts[best].iops && rb_block_outstanding(&pts[i]) < rb_block_outstanding(&pts[best])))
            best = (int)i;
    }
    return best;
}

/*
 * The usual reading of an IOPS-vs-latency curve (Lightbits/Ceph style
 * sweeps): past the knee, more outstanding I/O only queues. A step that adds
 * under 10 % IOPS while p99 grows by more than half marks it.
 */
int rb_block_knee(const struct rb_block_point *pts, size_t n)
{
    const int p99 = 2; /* rb_fio_pct[2] == 99 */
    for (size_t i = 1; i < n; i++) {
        const struct rb_block_point *a = &pts[i - 1], *b = &pts[i];
        if (a->iops <= 0 || a->clat_ns[p99] == 0)
            continue;
        bool flat_iops = b->iops < a->iops * (1.0 + RB_BLOCK_KNEE_MAX_IOPS_GAIN);
        bool p99_up = (double)b->clat_ns[p99] > (double)a->clat_ns[p99] * (1.0 + RB_BLOCK_KNEE_MIN_P99_GROWTH);
        if (flat_iops && p99_up)
            return (int)(i - 1);
    }
    return -1;
}

/* ---- options ---- */

enum { RW_RANDREAD, RW_RANDWRITE, RW_READ, RW_WRITE, RW_RANDRW };
static const char *const rw_names[] = {"randread", "randwrite", "read", "write", "randrw"};

#define DEFAULT_FILE_SIZE (UINT64_C(1) << 30)
#define PREP_CHUNK (UINT64_C(1) << 20)
/* A point still running this long past its runtime + ramp (times two) is treated as hung. */
#define WATCHDOG_GRACE_NS (60 * RB_NS_PER_S)
#define STOP_WAIT_NS (10 * RB_NS_PER_S)
#define FIO_TAIL_LINES 5

struct opts {
    const char *target;
    uint64_t size_bytes;
    int rw;
    double rwmix_pct;
    struct rb_u64s bs, iodepth, numjobs;
    uint64_t runtime_ns, ramp_ns;
    const char *engine;
    int64_t direct;
    const char *slo;
    bool allow_destructive, keep;
    const char *fio;
};

static bool rw_writes(int rw)
{
    return rw == RW_RANDWRITE || rw == RW_WRITE || rw == RW_RANDRW;
}

static int usage_error(const char *opt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const char *opt, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "railbench: --%s: %s\n", opt, msg);
    return RB_EXIT_USAGE;
}

/* Checks what can be checked without touching the system; returns 0 or RB_EXIT_USAGE after one line. */
static int validate(const struct opts *o, struct rb_block_slo *slo, bool *have_slo)
{
    const char *why;
    if (!o->target || !*o->target)
        return usage_error("target", "required: a file, a directory or a block device (e.g. --target /mnt/nvme)");
    if ((why = rb_fio_value_problem(o->target)))
        return usage_error("target", "'%s' %s; use another path or a symlink", o->target, why);
    if (o->direct != 0 && o->direct != 1)
        return usage_error("direct", "%" PRId64 " is not 0 or 1 (fio's direct=)", o->direct);
    if (!o->engine || !*o->engine || strspn(o->engine, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(o->engine))
        return usage_error("engine", "'%s' is not a fio ioengine name (lower-case letters, digits, '_'; e.g. libaio, io_uring, psync)",
                           o->engine ? o->engine : "");
    if (o->runtime_ns < RB_NS_PER_MS)
        return usage_error("runtime", "must be at least 1ms (e.g. 30s)");
    if (o->ramp_ns % RB_NS_PER_MS || o->runtime_ns % RB_NS_PER_MS)
        return usage_error(o->ramp_ns % RB_NS_PER_MS ? "ramp" : "runtime",
                           "fio takes whole milliseconds (e.g. 1500ms, 2s)");
    if (o->rwmix_pct != (double)(unsigned)o->rwmix_pct)
        return usage_error("rwmix", "%g is not a whole percentage of reads (fio's rwmixread=, e.g. 70)", o->rwmix_pct);
    uint64_t max_bs = 0;
    for (size_t i = 0; i < o->bs.n; i++) {
        uint64_t b = o->bs.v[i];
        if (b == 0 || (o->direct && b % 512) || b > (UINT64_C(1) << 30))
            return usage_error("bs", "%" PRIu64 " is not a block size for %s I/O (%s, at most 1 GiB)", b,
                               o->direct ? "direct" : "buffered", o->direct ? "a multiple of 512" : "at least 1 byte");
        if (b > max_bs)
            max_bs = b;
    }
    for (size_t i = 0; i < o->iodepth.n; i++)
        if (o->iodepth.v[i] < 1 || o->iodepth.v[i] > 65536)
            return usage_error("iodepth", "%" PRIu64 " is out of range (1 to 65536)", o->iodepth.v[i]);
    for (size_t i = 0; i < o->numjobs.n; i++)
        if (o->numjobs.v[i] < 1 || o->numjobs.v[i] > 4096)
            return usage_error("numjobs", "%" PRIu64 " is out of range (1 to 4096)", o->numjobs.v[i]);
    if (!o->bs.n || !o->iodepth.n || !o->numjobs.n)
        return usage_error(!o->bs.n ? "bs" : !o->iodepth.n ? "iodepth" : "numjobs", "needs at least one value");
    if (o->size_bytes && (o->size_bytes % 4096 || o->size_bytes < max_bs))
        return usage_error("size", "%" PRIu64 " must be a multiple of 4 KiB and at least the largest --bs (%" PRIu64 ")",
                           o->size_bytes, max_bs);
    if (o->bs.n * o->iodepth.n * o->numjobs.n > 4096)
        return usage_error("bs", "the sweep has more than 4096 points; use fewer --bs, --iodepth or --numjobs values");
    *have_slo = o->slo && *o->slo;
    if (*have_slo) {
        char err[256];
        if (rb_block_slo_parse(o->slo, slo, err, sizeof err) != 0)
            return usage_error("slo", "%s", err);
    }
    return 0;
}

/* ---- the sweep's points ---- */

struct point_spec {
    uint64_t bs, iodepth, numjobs;
    char name[64];
};

/* Block size as fio users write it: 4k, 8k, 1m, or bytes. */
static void bs_label(char *buf, size_t len, uint64_t bs)
{
    if (bs % (UINT64_C(1) << 20) == 0)
        snprintf(buf, len, "%" PRIu64 "m", bs >> 20);
    else if (bs % 1024 == 0)
        snprintf(buf, len, "%" PRIu64 "k", bs >> 10);
    else
        snprintf(buf, len, "%" PRIu64, bs);
}

/* The point's figures as Prometheus gauges (cluster-wide; rank 0). */
static void point_metrics(struct rb_harness *h, const char *rw, const struct point_spec *ps,
                          const struct rb_block_point *bp)
{
    char bs[16], l[256];
    bs_label(bs, sizeof bs, ps->bs);
    int n = snprintf(l, sizeof l, "rw=\"%s\",bs=\"%s\",iodepth=\"%" PRIu64 "\",numjobs=\"%" PRIu64 "\"", rw,
                     bs, ps->iodepth, ps->numjobs);
    rb_harness_metric(h, "railbench_block_iops", "gauge", "IOPS of a sweep point, summed over ranks.", l,
                      bp->iops);
    for (int i = 0; i < RB_FIO_PCTS && n > 0 && (size_t)n < sizeof l; i++) {
        char lq[300];
        snprintf(lq, sizeof lq, "%s,percentile=\"%g\"", l, rb_fio_pct[i]);
        rb_harness_metric(h, "railbench_block_latency_seconds", "gauge",
                          "Completion latency percentile of a sweep point, merged over ranks.", lq,
                          (double)bp->clat_ns[i] / 1e9);
    }
}

static int cmp_point(const void *a, const void *b)
{
    const struct point_spec *x = a, *y = b;
    uint64_t ox = x->iodepth * x->numjobs, oy = y->iodepth * y->numjobs;
    if (ox != oy)
        return ox < oy ? -1 : 1;
    return (x->numjobs > y->numjobs) - (x->numjobs < y->numjobs);
}

/* Every block size in the order given; within one, combinations by growing outstanding I/O (fewer jobs first). */
static struct point_spec *make_points(const struct opts *o, size_t *n)
{
    size_t per_bs = o->iodepth.n * o->numjobs.n;
    struct point_spec *p = calloc(o->bs.n * per_bs, sizeof *p);
    if (!p)
        return NULL;
    size_t k = 0;
    for (size_t b = 0; b < o->bs.n; b++) {
        size_t first = k;
        for (size_t j = 0; j < o->numjobs.n; j++)
            for (size_t d = 0; d < o->iodepth.n; d++, k++) {
                p[k].bs = o->bs.v[b];
                p[k].numjobs = o->numjobs.v[j];
                p[k].iodepth = o->iodepth.v[d];
            }
        qsort(p + first, per_bs, sizeof *p, cmp_point);
    }
    for (size_t i = 0; i < k; i++) {
        char bs[24];
        bs_label(bs, sizeof bs, p[i].bs);
        snprintf(p[i].name, sizeof p[i].name, "%s-%s-qd%" PRIu64 "-j%" PRIu64, bs, rw_names[o->rw], p[i].iodepth,
                 p[i].numjobs);
    }
    *n = k;
    return p;
}

/* ---- this rank's target ---- */

enum target_kind { T_NEW_FILE, T_OWN_FILE, T_EXISTING_FILE, T_BLOCK };
static const char *const target_kind_names[] = {"new file", "file in directory", "existing file", "block device"};

struct target {
    char path[4096];
    enum target_kind kind;
    bool ours;            /* railbench creates it and removes it at the end unless --keep */
    bool created;         /* it exists now because of this run (or a kept earlier one: T_OWN_FILE) */
    uint64_t size_bytes;  /* size= for fio; 0 lets fio use the whole device */
    uint64_t device_bytes;
};

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

/* One error line and the status to return. */
static int target_error(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int target_error(int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rb_error("%s", msg);
    return status;
}

/* The one message for a filesystem without O_DIRECT, with what to do instead. */
static int direct_refused(const char *path)
{
    return target_error(RB_EXIT_USAGE,
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
    return target_error(RB_EXIT_RUNTIME, "--target %s: cannot open: %s", path, strerror(errno));
}

/*
 * Decides what this rank drives (README "railbench block", "Target"): "%r"
 * becomes the rank; a directory gets railbench-block.<rank>.data inside it;
 * a path that does not exist becomes a new file (with ".<rank>" appended
 * under more than one rank when the path has no "%r"); an existing file or
 * block device is used as it is, and writing to it needs --allow-destructive.
 * Returns 0, RB_EXIT_USAGE or RB_EXIT_RUNTIME after one line.
 */
static int resolve_target(const struct opts *o, int rank, int nranks, struct target *t)
{
    memset(t, 0, sizeof *t);
    char base[4096], cwd[2048] = "";
    /* Absolute, so that the job files kept in the result directory also run by hand from anywhere. */
    if (o->target[0] != '/' && (!getcwd(cwd, sizeof cwd - 1) || strlen(cwd) + strlen(o->target) + 2 > sizeof base))
        return target_error(RB_EXIT_USAGE, "--target %s: path too long", o->target);
    if (cwd[0] && strcmp(cwd, "/") != 0)
        strcat(cwd, "/");
    size_t cl = strlen(cwd);
    memcpy(base, cwd, cl);
    if (!expand_rank(o->target, rank, base + cl, sizeof base - cl))
        return target_error(RB_EXIT_USAGE, "--target %s: path too long", o->target);
    const bool has_r = strstr(o->target, "%r") != NULL;
    const bool writes = rw_writes(o->rw);
    struct stat st;
    int n = snprintf(t->path, sizeof t->path, "%s", base);
    if (stat(base, &st) == 0 && S_ISDIR(st.st_mode)) {
        n = snprintf(t->path, sizeof t->path, "%s/railbench-block.%d.data", base, rank);
        t->kind = T_OWN_FILE;
    } else if (stat(base, &st) != 0 && errno == ENOENT && nranks > 1 && !has_r) {
        n = snprintf(t->path, sizeof t->path, "%s.%d", base, rank);
    }
    if (n < 0 || (size_t)n >= sizeof t->path)
        return target_error(RB_EXIT_USAGE, "--target %s: path too long", o->target);

    if (stat(t->path, &st) != 0) {
        if (errno != ENOENT)
            return target_error(RB_EXIT_RUNTIME, "--target %s: %s", t->path, strerror(errno));
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", t->path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *(slash == dir ? slash + 1 : slash) = '\0';
        struct stat ds;
        if (stat(slash ? dir : ".", &ds) != 0 || !S_ISDIR(ds.st_mode))
            return target_error(RB_EXIT_USAGE, "--target %s: no such file, and its directory %s does not exist",
                                t->path, slash ? dir : ".");
        if (t->kind != T_OWN_FILE)
            t->kind = T_NEW_FILE;
        t->ours = true;
        t->size_bytes = o->size_bytes ? o->size_bytes : DEFAULT_FILE_SIZE;
    } else if (S_ISREG(st.st_mode) && t->kind == T_OWN_FILE) {
        /* Left by an earlier run with --keep: still railbench's own file, rewritten if the size differs. */
        t->ours = true;
        t->size_bytes = o->size_bytes ? o->size_bytes : DEFAULT_FILE_SIZE;
    } else if (S_ISREG(st.st_mode)) {
        t->kind = T_EXISTING_FILE;
        if (writes && !o->allow_destructive)
            return target_error(RB_EXIT_USAGE,
                                "--target %s: is an existing file and --rw %s overwrites it; add --allow-destructive, "
                                "or give a directory or a new file name",
                                t->path, rw_names[o->rw]);
        if (st.st_size == 0)
            return target_error(RB_EXIT_USAGE, "--target %s: is an empty file; remove it or give a new file name", t->path);
        if (o->size_bytes > (uint64_t)st.st_size)
            return target_error(RB_EXIT_USAGE, "--size %" PRIu64 ": larger than the existing file %s (%" PRIu64 " bytes)",
                                o->size_bytes, t->path, (uint64_t)st.st_size);
        t->size_bytes = o->size_bytes ? o->size_bytes : (uint64_t)st.st_size;
    } else if (S_ISBLK(st.st_mode)) {
        t->kind = T_BLOCK;
        if (writes && !o->allow_destructive)
            return target_error(RB_EXIT_USAGE,
                                "--target %s: is a block device and --rw %s writes to it, destroying its data; "
                                "add --allow-destructive to do that",
                                t->path, rw_names[o->rw]);
        int fd = open(t->path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return target_error(RB_EXIT_RUNTIME, "--target %s: cannot open: %s", t->path, strerror(errno));
        if (ioctl(fd, BLKGETSIZE64, &t->device_bytes) != 0)
            t->device_bytes = 0;
        close(fd);
        if (o->size_bytes && t->device_bytes && o->size_bytes > t->device_bytes)
            return target_error(RB_EXIT_USAGE, "--size %" PRIu64 ": larger than the device %s (%" PRIu64 " bytes)",
                                o->size_bytes, t->path, t->device_bytes);
        t->size_bytes = o->size_bytes;
        if (writes) {
            /* O_EXCL on a block device fails with EBUSY while it is mounted or held (md, dm, swap). */
            fd = open(t->path, O_WRONLY | O_EXCL | O_CLOEXEC);
            if (fd < 0 && errno == EBUSY)
                return target_error(RB_EXIT_USAGE, "--target %s: is in use (mounted, swap, or part of md/dm); "
                                                   "refusing to write to it", t->path);
            if (fd < 0)
                return target_error(RB_EXIT_RUNTIME, "--target %s: cannot open for writing: %s", t->path,
                                    strerror(errno));
            close(fd);
        }
    } else {
        return target_error(RB_EXIT_USAGE, "--target %s: is neither a file, a directory nor a block device", t->path);
    }
    const char *why = rb_fio_value_problem(t->path);
    if (why)
        return target_error(RB_EXIT_USAGE, "--target %s: %s", t->path, why);
    if (!t->ours && o->direct)
        return check_direct(t->path);
    return 0;
}

/* splitmix64: cheap distinct bytes for the target file, so no layer below can dedupe or compress it away. */
static uint64_t mix64(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/*
 * Writes the whole file before fio reads it: reads of never-written (sparse
 * or fallocated) ext4/xfs blocks return zeros without touching the disk and
 * would report the page allocator's IOPS. With O_DIRECT when direct=1, which
 * also checks that the filesystem allows it. A file of the right size left by
 * an earlier --keep run is reused.
 */
static int prepare_target(const struct opts *o, struct target *t)
{
    if (!t->ours)
        return 0;
    struct stat st;
    if (stat(t->path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == t->size_bytes) {
        t->created = true;
        return o->direct ? check_direct(t->path) : 0;
    }
    struct statvfs vfs;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", t->path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    if (statvfs(slash ? dir : ".", &vfs) == 0 &&
        (uint64_t)vfs.f_bavail * vfs.f_frsize < t->size_bytes)
        return target_error(RB_EXIT_RUNTIME, "--target %s: --size %" PRIu64 " does not fit; %" PRIu64
                                             " bytes free there",
                            t->path, t->size_bytes, (uint64_t)vfs.f_bavail * vfs.f_frsize);

    int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (o->direct ? O_DIRECT : 0);
    int fd = open(t->path, flags, 0644);
    if (fd < 0 && errno == EINVAL && o->direct) {
        unlink(t->path);
        return direct_refused(t->path);
    }
    if (fd < 0)
        return target_error(RB_EXIT_RUNTIME, "--target %s: cannot create: %s", t->path, strerror(errno));
    t->created = true;
    void *buf = NULL;
    int status = 0;
    if (posix_memalign(&buf, 4096, PREP_CHUNK) != 0) {
        status = target_error(RB_EXIT_RUNTIME, "out of memory");
        goto fail;
    }
    uint64_t seed = (uint64_t)getpid() ^ rb_clock_ns();
    for (size_t i = 0; i < PREP_CHUNK / 8; i++)
        ((uint64_t *)buf)[i] = mix64(&seed);
    for (uint64_t off = 0; off < t->size_bytes; off += PREP_CHUNK) {
        if (rb_harness_signalled()) {
            status = RB_EXIT_CHECK;
            goto fail;
        }
        size_t len = t->size_bytes - off < PREP_CHUNK ? (size_t)(t->size_bytes - off) : PREP_CHUNK;
        ((uint64_t *)buf)[0] = off ^ seed; /* every MiB differs */
        ssize_t w = pwrite(fd, buf, len, (off_t)off);
        if (w != (ssize_t)len) {
            status = target_error(RB_EXIT_RUNTIME, "--target %s: writing %zu bytes at %" PRIu64 ": %s", t->path, len,
                                  off, w < 0 ? strerror(errno) : "short write");
            goto fail;
        }
    }
    if (fsync(fd) != 0)
        status = target_error(RB_EXIT_RUNTIME, "--target %s: fsync: %s", t->path, strerror(errno));
fail:
    free(buf);
    close(fd);
    return status;
}

static void remove_target(const struct opts *o, const struct target *t)
{
    if (t->ours && t->created && !o->keep && unlink(t->path) != 0 && errno != ENOENT)
        rb_warn("cannot remove %s: %s", t->path, strerror(errno));
}

/* Finds prog in PATH (or checks it, when it has a '/'); fills out with the path to exec. */
static int find_program(const char *prog, char *out, size_t len)
{
    if (strchr(prog, '/')) {
        snprintf(out, len, "%s", prog);
        return access(out, X_OK) == 0 ? 0 : -ENOENT;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        int w = snprintf(out, len, "%.*s/%s", (int)n, n ? p : ".", prog);
        struct stat st;
        if (w > 0 && (size_t)w < len && stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 0;
        p += n;
        if (*p == ':')
            p++;
    }
    return -ENOENT;
}

/* CPUs this process may run on; fio inherits the set (and mpirun binds ranks, by default to one core when np <= 2). */
static int allowed_cpus(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

/* Rank 0 warns when a rank's binding leaves fewer CPUs than fio jobs: the jobs would share them (collective). */
static void warn_binding(struct rb_harness *h, const struct opts *o)
{
    int mine = allowed_cpus(), least = mine;
    if (mine < 0)
        mine = least = INT_MAX;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&mine, &least, 1, MPI_INT, MPI_MIN, h->comm));
    uint64_t jobs = 0;
    for (size_t i = 0; i < o->numjobs.n; i++)
        if (o->numjobs.v[i] > jobs)
            jobs = o->numjobs.v[i];
    if (h->rank == 0 && (uint64_t)least < jobs)
        rb_warn("a rank may run on only %d CPU(s) while up to %" PRIu64 " fio jobs share them (fio inherits the "
                "rank's CPU binding); consider mpirun --bind-to none or --bind-to socket",
                least, jobs);
}

/* ---- one point on this rank: fio as a child process ---- */

struct run {
    const struct opts *o;
    const char *fio_path;
    const char *name;
    char job_path[4400], json_path[4400], log_path[4400], output_arg[4500];
    pid_t pid;
    bool reaped, stopped, parsed, ok;
    int wstatus;
    char err[9000];
    struct rb_fio_result fio;
    struct rb_hist *clat, *lat;
};

/* Prints the last lines fio wrote to its log, where its own error messages are; appends the first of them to err. */
static void log_fio_tail(const char *log_path, char *err, size_t errlen)
{
    FILE *f = fopen(log_path, "r");
    if (!f)
        return;
    char lines[FIO_TAIL_LINES][512];
    size_t n = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        snprintf(lines[n % FIO_TAIL_LINES], sizeof lines[0], "%s", line);
        n++;
    }
    fclose(f);
    size_t first = n > FIO_TAIL_LINES ? n - FIO_TAIL_LINES : 0;
    for (size_t i = first; i < n; i++)
        rb_error("  %s", lines[i % FIO_TAIL_LINES]);
    size_t len = strlen(err);
    if (n > first && len < errlen)
        snprintf(err + len, errlen - len, " %s", lines[first % FIO_TAIL_LINES]);
}

/*
 * Starts fio on this rank's job file: fork and execv with an argument
 * vector, never a shell. The child gets its own process group (a terminal's
 * ^C reaches railbench, which then stops fio so that fio still writes its
 * results) and dies with railbench. A close-on-exec pipe tells the parent
 * whether execv itself failed.
 */
static int run_start(void *arg)
{
    struct run *r = arg;
    char *argv[8];
    int a = 0;
    argv[a++] = "fio";
    argv[a++] = "--output-format=json+";
    argv[a++] = r->output_arg;
    argv[a++] = "--eta=never";
    if (!rw_writes(r->o->rw))
        argv[a++] = "--readonly";
    argv[a++] = r->job_path;
    argv[a] = NULL;

    unlink(r->json_path);
    int logfd = open(r->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int pfd[2] = {-1, -1};
    int rc = 0;
    if (logfd < 0 || nullfd < 0 || pipe2(pfd, O_CLOEXEC) != 0) {
        rc = -errno;
        snprintf(r->err, sizeof r->err, "point %s: cannot set up fio's output (%s): %s", r->name, r->log_path,
                 strerror(errno));
        goto fail;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        rc = -errno;
        snprintf(r->err, sizeof r->err, "point %s: fork: %s", r->name, strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        /* Child: only async-signal-safe calls until execv. */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(127);
        signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        dup2(nullfd, STDIN_FILENO);
        dup2(logfd, STDOUT_FILENO);
        dup2(logfd, STDERR_FILENO);
        execv(r->fio_path, argv);
        int e = errno;
        ssize_t w = write(pfd[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    r->pid = pid;
    setpgid(pid, pid); /* also here, so that the group exists before run_stop could signal it */
    close(pfd[1]);
    pfd[1] = -1;
    int e = 0;
    ssize_t got;
    do
        got = read(pfd[0], &e, sizeof e);
    while (got < 0 && errno == EINTR);
    if (got == (ssize_t)sizeof e) {
        waitpid(pid, &r->wstatus, 0);
        r->reaped = true;
        rc = -e;
        snprintf(r->err, sizeof r->err, "point %s: cannot run %s: %s", r->name, r->fio_path, strerror(e));
    }
fail:
    if (logfd >= 0)
        close(logfd);
    if (nullfd >= 0)
        close(nullfd);
    if (pfd[0] >= 0)
        close(pfd[0]);
    if (pfd[1] >= 0)
        close(pfd[1]);
    if (rc)
        rb_error("%s", r->err);
    return rc;
}

/*
 * True once fio has exited. ECHILD means someone else reaped it (a library's
 * SIGCHLD handler): its status is lost, so the JSON it left decides.
 */
static bool run_done(void *arg)
{
    struct run *r = arg;
    if (r->reaped || r->pid <= 0)
        return true;
    pid_t w = waitpid(r->pid, &r->wstatus, WNOHANG);
    if (w == r->pid)
        r->reaped = true;
    else if (w < 0 && errno == ECHILD) {
        r->reaped = true;
        r->wstatus = 0;
    }
    return r->reaped;
}

/* Waits up to ns for fio to exit; true when it did. */
static bool run_wait(struct run *r, uint64_t ns)
{
    uint64_t t0 = rb_clock_ns();
    while (!run_done(r) && rb_clock_ns() - t0 < ns)
        rb_clock_sleep_ns(10 * RB_NS_PER_MS, NULL);
    return r->reaped;
}

/* SIGTERM makes fio stop its jobs and still write the JSON of what ran; SIGKILL the group if it lingers. */
static void run_stop(void *arg)
{
    struct run *r = arg;
    if (run_done(r))
        return;
    r->stopped = true;
    kill(r->pid, SIGTERM);
    if (run_wait(r, STOP_WAIT_NS))
        return;
    kill(-r->pid, SIGKILL);
    kill(r->pid, SIGKILL);
    /* A process stuck in uninterruptible I/O ignores even SIGKILL; leave it rather than hang the run. */
    if (!run_wait(r, STOP_WAIT_NS)) {
        rb_warn("point %s: fio (pid %d) does not exit even after SIGKILL; leaving it", r->name, (int)r->pid);
        r->reaped = true;
        r->wstatus = 0;
    }
}

/* Once fio has exited: checks how, parses its JSON, and hands the figures to the harness. */
static void run_collect(void *arg, struct rb_stats *into)
{
    struct run *r = arg;
    if (!r->reaped || r->parsed)
        return;
    r->parsed = true;
    if (!r->stopped) {
        if (WIFSIGNALED(r->wstatus)) {
            snprintf(r->err, sizeof r->err, "point %s: fio was killed by signal %d; its last output (%s):", r->name,
                     WTERMSIG(r->wstatus), r->log_path);
            return;
        }
        if (WEXITSTATUS(r->wstatus) != 0) {
            snprintf(r->err, sizeof r->err, "point %s: fio exited with status %d; its last output (%s):", r->name,
                     WEXITSTATUS(r->wstatus), r->log_path);
            return;
        }
    }
    char why[300];
    if (rb_fio_parse_file(r->json_path, &r->fio, r->clat, r->lat, why, sizeof why) != 0) {
        snprintf(r->err, sizeof r->err, "point %s: %s: %s", r->name, r->json_path, why);
        return;
    }
    if (r->fio.job_error) {
        snprintf(r->err, sizeof r->err, "point %s: fio reported error %d (%s) in %s; its last output (%s):", r->name,
                 r->fio.job_error, strerror(r->fio.job_error), r->json_path, r->log_path);
        return;
    }
    uint64_t ios = r->fio.read.total_ios + r->fio.write.total_ios;
    if (ios > 0 && r->clat->count == 0) {
        snprintf(r->err, sizeof r->err, "point %s: %s has no clat_ns bins (fio's json+ output is needed)", r->name,
                 r->json_path);
        return;
    }
    r->ok = true;
    into->ops += ios;
    into->bytes += r->fio.read.io_bytes + r->fio.write.io_bytes;
    rb_hist_merge(&into->lat, r->clat);
}

/* ---- figures as JSON ---- */

static cJSON *pct_json(const struct rb_fio_lat *l)
{
    cJSON *o = cJSON_CreateObject();
    if (l->have_pct)
        for (int i = 0; i < RB_FIO_PCTS; i++)
            cJSON_AddNumberToObject(o, rb_fio_pct_key[i], (double)l->pct_ns[i]);
    cJSON_AddNumberToObject(o, "min", (double)l->min_ns);
    cJSON_AddNumberToObject(o, "mean", l->mean_ns);
    cJSON_AddNumberToObject(o, "max", (double)l->max_ns);
    return o;
}

static cJSON *dir_json(const struct rb_fio_dir *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "iops", d->iops);
    cJSON_AddNumberToObject(o, "bw_bytes_per_s", d->bw_bytes_per_s);
    cJSON_AddItemToObject(o, "io_bytes", rb_json_u64(d->io_bytes));
    cJSON_AddItemToObject(o, "total_ios", rb_json_u64(d->total_ios));
    cJSON_AddNumberToObject(o, "runtime_ms", (double)d->runtime_ms);
    cJSON_AddItemToObject(o, "clat_ns", pct_json(&d->clat));
    cJSON_AddItemToObject(o, "lat_ns", pct_json(&d->lat));
    return o;
}

static void add_util(cJSON *o, double pct)
{
    if (pct >= 0)
        cJSON_AddNumberToObject(o, "disk_util_pct", pct);
    else
        cJSON_AddNullToObject(o, "disk_util_pct");
}

/* This rank's figures for one point, gathered by rank 0. */
static cJSON *rank_json(const struct rb_harness *h, const struct run *r, const struct target *t)
{
    const struct rb_fio_result *f = &r->fio;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "rank", h->rank);
    cJSON_AddStringToObject(o, "host", h->host);
    cJSON_AddStringToObject(o, "target", t->path);
    cJSON_AddStringToObject(o, "target_kind", target_kind_names[t->kind]);
    cJSON_AddStringToObject(o, "fio_json", r->json_path);
    cJSON_AddNumberToObject(o, "cpus_allowed", allowed_cpus());
    cJSON_AddNumberToObject(o, "iops", f->read.iops + f->write.iops);
    cJSON_AddNumberToObject(o, "bw_bytes_per_s", f->read.bw_bytes_per_s + f->write.bw_bytes_per_s);
    cJSON_AddItemToObject(o, "io_bytes", rb_json_u64(f->read.io_bytes + f->write.io_bytes));
    cJSON_AddItemToObject(o, "total_ios", rb_json_u64(f->read.total_ios + f->write.total_ios));
    /* From this rank's histogram, computed as the aggregate's are, so the two compare like for like. */
    cJSON_AddItemToObject(o, "clat_ns", rb_hist_summary_json(r->clat));
    cJSON_AddItemToObject(o, "lat_ns", rb_hist_summary_json(r->lat));
    add_util(o, f->disk_util_pct);
    if (f->disk[0])
        cJSON_AddStringToObject(o, "disk", f->disk);
    if (r->stopped)
        cJSON_AddBoolToObject(o, "interrupted", true);
    /* fio's own figures, unchanged. */
    cJSON *fo = cJSON_AddObjectToObject(o, "fio");
    cJSON_AddStringToObject(fo, "version", f->version);
    cJSON_AddNumberToObject(fo, "jobs", f->njobs);
    if (f->read.total_ios || f->read.iops > 0 || !f->write.total_ios)
        cJSON_AddItemToObject(fo, "read", dir_json(&f->read));
    if (f->write.total_ios || f->write.iops > 0)
        cJSON_AddItemToObject(fo, "write", dir_json(&f->write));
    cJSON_AddItemToObject(o, "lat_hist", rb_hist_to_json(r->lat));
    return o;
}

static double num(const cJSON *o, const char *k)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* The reported percentiles (rb_fio_pct) of a histogram. */
static void summary_pcts(const struct rb_hist *hist, uint64_t ns[RB_FIO_PCTS])
{
    for (int i = 0; i < RB_FIO_PCTS; i++)
        ns[i] = rb_hist_percentile(hist, rb_fio_pct[i]);
}

/*
 * Rank 0: the aggregate of one point from the ranks' figures. IOPS and
 * bandwidth are summed over ranks; latency percentiles come from the merged
 * histograms (every I/O of every rank), never from averaged percentiles.
 */
static cJSON *aggregate_point(const struct opts *o, const struct point_spec *ps, cJSON *per_rank,
                              const struct rb_stats *total, struct rb_block_point *bp, bool *interrupted)
{
    struct rb_hist *lat = rb_hist_new(), *one = rb_hist_new();
    memset(bp, 0, sizeof *bp);
    bp->bs_bytes = ps->bs;
    bp->iodepth = ps->iodepth;
    bp->numjobs = ps->numjobs;
    double util = 0;
    int nutil = 0, nranks = 0;
    uint64_t io_bytes = 0, ios = 0;
    *interrupted = false;
    cJSON *it;
    cJSON_ArrayForEach(it, per_rank)
    {
        bp->iops += num(it, "iops");
        bp->bw_bytes_per_s += num(it, "bw_bytes_per_s");
        uint64_t v = 0;
        if (rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(it, "io_bytes"), &v) == 0)
            io_bytes += v;
        if (rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(it, "total_ios"), &v) == 0)
            ios += v;
        double u = num(it, "disk_util_pct");
        if (u == u) {
            util += u;
            nutil++;
        }
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "interrupted")))
            *interrupted = true;
        if (lat && one && rb_hist_from_json(cJSON_GetObjectItemCaseSensitive(it, "lat_hist"), one) == 0)
            rb_hist_merge(lat, one);
        cJSON_DeleteItemFromObjectCaseSensitive(it, "lat_hist");
        nranks++;
    }
    bp->disk_util_pct = nutil ? util / nutil : -1;
    summary_pcts(&total->lat, bp->clat_ns);
    if (lat)
        summary_pcts(lat, bp->lat_ns);

    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "name", ps->name);
    cJSON_AddNumberToObject(p, "bs", (double)ps->bs);
    cJSON_AddStringToObject(p, "rw", rw_names[o->rw]);
    if (o->rw == RW_RANDRW)
        cJSON_AddNumberToObject(p, "rwmix_read_pct", o->rwmix_pct);
    cJSON_AddNumberToObject(p, "iodepth", (double)ps->iodepth);
    cJSON_AddNumberToObject(p, "numjobs", (double)ps->numjobs);
    cJSON_AddNumberToObject(p, "outstanding", (double)rb_block_outstanding(bp));
    cJSON_AddNumberToObject(p, "ranks", nranks);
    cJSON_AddNumberToObject(p, "iops", bp->iops);
    cJSON_AddNumberToObject(p, "bw_bytes_per_s", bp->bw_bytes_per_s);
    cJSON_AddItemToObject(p, "io_bytes", rb_json_u64(io_bytes));
    cJSON_AddItemToObject(p, "total_ios", rb_json_u64(ios));
    cJSON_AddItemToObject(p, "clat_ns", rb_hist_summary_json(&total->lat));
    cJSON_AddItemToObject(p, "lat_ns", lat ? rb_hist_summary_json(lat) : cJSON_CreateNull());
    add_util(p, bp->disk_util_pct);
    if (*interrupted)
        cJSON_AddBoolToObject(p, "interrupted", true);
    cJSON_AddItemToObject(p, "per_rank", per_rank);
    rb_hist_free(lat);
    rb_hist_free(one);
    return p;
}

/* ---- output ---- */


static void dur(char *buf, size_t len, uint64_t ns)
{
    rb_format_duration_human(buf, len, ns);
}

static cJSON *point_ref(const struct point_spec *ps, const struct rb_block_point *bp, int index)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "point", ps->name);
    cJSON_AddNumberToObject(o, "index", index);
    cJSON_AddNumberToObject(o, "bs", (double)bp->bs_bytes);
    cJSON_AddNumberToObject(o, "iodepth", (double)bp->iodepth);
    cJSON_AddNumberToObject(o, "numjobs", (double)bp->numjobs);
    cJSON_AddNumberToObject(o, "outstanding", (double)rb_block_outstanding(bp));
    cJSON_AddNumberToObject(o, "iops", bp->iops);
    cJSON_AddNumberToObject(o, "clat_p99_ns", (double)bp->clat_ns[2]);
    return o;
}

/*
 * Rank 0, after the sweep: the table per block size, the best point under
 * the SLO, the knee of each curve, and the summary for result.json. Only
 * points that ran to their end count for the SLO and the knee.
 */
static char *report(struct rb_harness *h, const struct opts *o, const struct rb_block_slo *slo, bool have_slo,
                    const struct point_spec *ps, const struct rb_block_point *bp, const bool *complete, size_t n,
                    cJSON *points, const char *target0, const char *fio_version)
{
    struct rb_buf t = {0};
    char size[32], rt[32];
    rb_format_duration(rt, sizeof rt, o->runtime_ns);
    rb_buf_printf(&t, "\n# railbench block: %s", rw_names[o->rw]);
    if (o->rw == RW_RANDRW)
        rb_buf_printf(&t, " (%.0f%% reads)", o->rwmix_pct);
    rb_buf_printf(&t, " on %d rank%s, %s direct=%d, runtime %s per point\n\ntarget (rank 0): %s\n", h->size,
            h->size == 1 ? "" : "s", o->engine, (int)o->direct, rt, target0);
    rb_buf_printf(&t, "Outstanding I/O is iodepth x jobs on each rank. IOPS and MiB/s are summed over ranks; latencies "
                "are completion latencies (clat) of every I/O of every rank.\n");

    cJSON *summary = cJSON_CreateObject();
    cJSON_AddStringToObject(summary, "rw", rw_names[o->rw]);
    cJSON_AddStringToObject(summary, "engine", o->engine);
    cJSON_AddNumberToObject(summary, "direct", (double)o->direct);
    cJSON_AddNumberToObject(summary, "runtime_s", (double)o->runtime_ns / 1e9);
    cJSON_AddNumberToObject(summary, "ramp_s", (double)o->ramp_ns / 1e9);
    cJSON_AddStringToObject(summary, "target", target0);
    cJSON_AddStringToObject(summary, "fio_version", fio_version);
    cJSON_AddItemToObject(summary, "block_points", points);
    cJSON *knee = cJSON_AddObjectToObject(summary, "knee");
    char rule[200];
    snprintf(rule, sizeof rule,
             "last point before the first step where IOPS grow < %.0f %% while clat p99 grows > %.0f %%",
             100 * RB_BLOCK_KNEE_MAX_IOPS_GAIN, 100 * RB_BLOCK_KNEE_MIN_P99_GROWTH);
    cJSON_AddStringToObject(knee, "rule", rule);
    cJSON *knees = cJSON_AddArrayToObject(knee, "per_bs");
    cJSON *slo_json = NULL, *slo_per_bs = NULL;
    if (have_slo) {
        slo_json = cJSON_AddObjectToObject(summary, "slo");
        cJSON_AddStringToObject(slo_json, "expr", slo->text);
        cJSON_AddStringToObject(slo_json, "latency", slo->kind == RB_BLOCK_LAT ? "lat" : "clat");
        cJSON_AddStringToObject(slo_json, "percentile", rb_fio_pct_key[slo->pct]);
        cJSON_AddNumberToObject(slo_json, "bound_ns", (double)slo->bound_ns);
        cJSON_AddBoolToObject(slo_json, "inclusive", slo->inclusive);
        slo_per_bs = cJSON_CreateArray();
    } else {
        cJSON_AddNullToObject(summary, "slo");
    }

    /* Only complete points, in sweep order; curves are the runs of equal block size. */
    struct rb_block_point *cp = calloc(n ? n : 1, sizeof *cp);
    int *cidx = calloc(n ? n : 1, sizeof *cidx);
    size_t m = 0;
    for (size_t i = 0; cp && cidx && i < n; i++)
        if (complete[i]) {
            cp[m] = bp[i];
            cidx[m++] = (int)i;
        }
    int best_all = -1;
    for (size_t a = 0; a < n;) {
        size_t b = a;
        while (b < n && ps[b].bs == ps[a].bs)
            b++;
        bool measured = false;
        for (size_t i = a; i < b; i++)
            measured = measured || bp[i].bs_bytes != 0;
        if (!measured) { /* the sweep stopped before this block size */
            a = b;
            continue;
        }
        size_t ca = 0, cb;
        while (ca < m && (size_t)cidx[ca] < a)
            ca++;
        for (cb = ca; cb < m && (size_t)cidx[cb] < b; cb++)
            ;
        int k = rb_block_knee(cp + ca, cb - ca);
        int knee_i = k >= 0 ? cidx[ca + (size_t)k] : -1;
        int best_i = -1;
        if (have_slo) {
            int s = rb_block_slo_best(slo, cp + ca, cb - ca);
            best_i = s >= 0 ? cidx[ca + (size_t)s] : -1;
            if (best_i >= 0 && (best_all < 0 || bp[best_i].iops > bp[best_all].iops))
                best_all = best_i;
        }

        rb_format_size(size, sizeof size, ps[a].bs);
        rb_buf_printf(&t, "\n## bs %s\n\n", size);
        rb_buf_printf(&t, "| outstanding | iodepth | jobs |       IOPS |    MiB/s | clat p50 | clat p99 | clat p99.9 | util %% | note |\n");
        rb_buf_printf(&t, "|------------:|--------:|-----:|-----------:|---------:|---------:|---------:|-----------:|-------:|------|\n");
        for (size_t i = a; i < b; i++) {
            char p50[16], p99[16], p999[16], util[16];
            dur(p50, sizeof p50, bp[i].clat_ns[0]);
            dur(p99, sizeof p99, bp[i].clat_ns[2]);
            dur(p999, sizeof p999, bp[i].clat_ns[3]);
            if (bp[i].disk_util_pct >= 0)
                snprintf(util, sizeof util, "%.1f", bp[i].disk_util_pct);
            else
                snprintf(util, sizeof util, "-");
            const char *note = !complete[i] ? "interrupted"
                               : (int)i == knee_i && (int)i == best_i ? "knee, best within SLO"
                               : (int)i == knee_i                     ? "knee"
                               : (int)i == best_i                     ? "best within SLO"
                                                                      : "";
            if (bp[i].bs_bytes == 0) /* not measured (the sweep stopped before it) */
                continue;
            rb_buf_printf(&t, "| %11" PRIu64 " | %7" PRIu64 " | %4" PRIu64 " | %10.0f | %8.2f | %8s | %8s | %10s | %6s | %s |\n",
                    rb_block_outstanding(&bp[i]), bp[i].iodepth, bp[i].numjobs, bp[i].iops,
                    bp[i].bw_bytes_per_s / (1024.0 * 1024.0), p50, p99, p999, util, note);
        }
        rb_buf_printf(&t, "\n");
        cJSON *kj = cJSON_CreateObject();
        cJSON_AddNumberToObject(kj, "bs", (double)ps[a].bs);
        cJSON_AddStringToObject(kj, "rw", rw_names[o->rw]);
        if (knee_i >= 0) {
            const struct rb_block_point *x = &bp[knee_i], *y = &cp[ca + (size_t)k + 1];
            double gain = 100 * (y->iops / x->iops - 1), growth = 100 * ((double)y->clat_ns[2] / (double)x->clat_ns[2] - 1);
            cJSON_AddItemToObject(kj, "point", point_ref(&ps[knee_i], x, knee_i));
            cJSON_AddItemToObject(kj, "next", point_ref(&ps[cidx[ca + (size_t)k + 1]], y, cidx[ca + (size_t)k + 1]));
            cJSON_AddNumberToObject(kj, "iops_gain_pct", gain);
            cJSON_AddNumberToObject(kj, "p99_growth_pct", growth);
            rb_buf_printf(&t, "knee: outstanding %" PRIu64 " (%.0f IOPS); the next step, outstanding %" PRIu64
                        ", changes IOPS by %+.1f %% and clat p99 by %+.0f %%\n",
                    rb_block_outstanding(x), x->iops, rb_block_outstanding(y), gain, growth);
        } else {
            cJSON_AddNullToObject(kj, "point");
            rb_buf_printf(&t, "knee: none up to outstanding %" PRIu64 " (no step adds < %.0f %% IOPS for > %.0f %% more clat p99)\n",
                    cb > ca ? rb_block_outstanding(&cp[cb - 1]) : 0, 100 * RB_BLOCK_KNEE_MAX_IOPS_GAIN,
                    100 * RB_BLOCK_KNEE_MIN_P99_GROWTH);
        }
        cJSON_AddItemToArray(knees, kj);
        if (have_slo) {
            cJSON *sj = cJSON_CreateObject();
            cJSON_AddNumberToObject(sj, "bs", (double)ps[a].bs);
            if (best_i >= 0) {
                cJSON_AddItemToObject(sj, "best", point_ref(&ps[best_i], &bp[best_i], best_i));
                rb_buf_printf(&t, "SLO %s: highest IOPS %.0f at outstanding %" PRIu64 " (iodepth %" PRIu64 ", jobs %" PRIu64 ")\n",
                        slo->text, bp[best_i].iops, rb_block_outstanding(&bp[best_i]), bp[best_i].iodepth,
                        bp[best_i].numjobs);
            } else {
                cJSON_AddNullToObject(sj, "best");
                rb_buf_printf(&t, "SLO %s: no point meets it\n", slo->text);
            }
            cJSON_AddItemToArray(slo_per_bs, sj);
        }
        a = b;
    }
    if (have_slo) {
        if (best_all >= 0)
            cJSON_AddItemToObject(slo_json, "best", point_ref(&ps[best_all], &bp[best_all], best_all));
        else
            cJSON_AddNullToObject(slo_json, "best");
        cJSON_AddItemToObject(slo_json, "per_bs", slo_per_bs);
        if (best_all >= 0)
            rb_result_check(&h->result, "slo", true, "%s met: %.0f IOPS at %s", slo->text, bp[best_all].iops,
                            ps[best_all].name);
        else
            rb_result_check(&h->result, "slo", false, "%s: no measured point meets it", slo->text);
    }
    free(cp);
    free(cidx);
    rb_result_set(&h->result, "summary", summary);
    if (cJSON_GetArraySize(points) == 0) { /* nothing measured: no table, only the error that said why */
        free(t.s);
        return NULL;
    }
    return t.s;
}

/* ---- the command ---- */

/* The worst status any rank has (collective on h->comm). */
static int agree(struct rb_harness *h, int status)
{
    int all = status;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&status, &all, 1, MPI_INT, MPI_MAX, h->comm));
    return all;
}

/* Rank 0: two ranks on one host must not share a target (each drives its own). */
static int check_distinct_targets(struct rb_harness *h, const struct target *t)
{
    cJSON *mine = cJSON_CreateObject();
    char real[4096];
    cJSON_AddStringToObject(mine, "host", h->host);
    cJSON_AddStringToObject(mine, "path", realpath(t->path, real) ? real : t->path);
    cJSON *all = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    int status = 0;
    if (h->rank == 0) {
        int n = cJSON_GetArraySize(all);
        for (int i = 0; i < n && !status; i++)
            for (int j = i + 1; j < n && !status; j++) {
                cJSON *a = cJSON_GetArrayItem(all, i), *b = cJSON_GetArrayItem(all, j);
                const char *ha = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "host"));
                const char *hb = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "host"));
                const char *pa = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "path"));
                const char *pb = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "path"));
                if (ha && hb && pa && pb && strcmp(ha, hb) == 0 && strcmp(pa, pb) == 0)
                    status = target_error(RB_EXIT_USAGE,
                                          "--target: ranks %d and %d on %s would both use %s; put %%r (the rank) in "
                                          "--target so that each rank has its own",
                                          i, j, ha, pa);
            }
    }
    cJSON_Delete(all);
    return status;
}

/* Rank 0 records why the sweep stopped as a failed check, with the first failing rank's message (collective). */
static void record_failure(struct rb_harness *h, const char *point, const char *err)
{
    cJSON *mine = NULL;
    if (err) {
        mine = cJSON_CreateObject();
        cJSON_AddNumberToObject(mine, "rank", h->rank);
        cJSON_AddStringToObject(mine, "error", err[0] ? err : "fio failed");
    }
    cJSON *all = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    if (h->rank == 0) {
        cJSON *first = cJSON_GetArrayItem(all, 0);
        if (first)
            rb_result_check(&h->result, "sweep", false, "rank %d: %s", (int)num(first, "rank"),
                            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(first, "error")));
        else
            rb_result_check(&h->result, "sweep", false, "stopped at point %s", point);
    }
    cJSON_Delete(all);
}

/* Writes this rank's job file for point ps; returns 0 or RB_EXIT_RUNTIME after one line. */
static int write_job(const struct opts *o, const struct target *t, const struct point_spec *ps, struct run *r)
{
    struct rb_fio_job job = {
        .name = ps->name, .filename = t->path, .size_bytes = t->size_bytes, .rw = rw_names[o->rw],
        .rwmix_read_pct = (unsigned)o->rwmix_pct, .bs_bytes = ps->bs, .iodepth = ps->iodepth,
        .numjobs = ps->numjobs, .runtime_ns = o->runtime_ns, .ramp_ns = o->ramp_ns, .engine = o->engine,
        .direct = (int)o->direct,
    };
    char text[8192];
    int len = rb_fio_job_text(&job, text, sizeof text);
    if (len < 0)
        return target_error(RB_EXIT_RUNTIME, "point %s: cannot write a job file for target %s", ps->name, t->path);
    int rc = rb_file_write_atomic(r->job_path, text, (size_t)len);
    if (rc)
        return target_error(RB_EXIT_RUNTIME, "point %s: cannot write %s: %s", ps->name, r->job_path, strerror(-rc));
    return 0;
}

int rb_block_main(int argc, char **argv)
{
    struct opts o = {
        .rw = RW_RANDREAD, .rwmix_pct = 50, .runtime_ns = 30 * RB_NS_PER_S, .engine = "libaio", .direct = 1,
        .fio = "fio",
    };
    o.bs.n = 1;
    o.bs.v[0] = 4096;
    static const uint64_t qd[] = {1, 2, 4, 8, 16, 32, 64};
    o.iodepth.n = sizeof qd / sizeof qd[0];
    memcpy(o.iodepth.v, qd, sizeof qd);
    o.numjobs.n = 1;
    o.numjobs.v[0] = 1;
    const struct rb_opt opts[] = {
        {"target", 0, RB_OPT_STR, &o.target, "PATH",
         "file, directory or block device; %r is replaced by the rank", NULL},
        {"size", 0, RB_OPT_SIZE, &o.size_bytes, "SIZE",
         "bytes of the target to use; 0: 1GiB for a file railbench creates, all of an existing file or device", NULL},
        {"rw", 0, RB_OPT_CHOICE, &o.rw, "RW", "I/O pattern (fio's rw=)", "randread|randwrite|read|write|randrw"},
        {"rwmix", 0, RB_OPT_PERCENT, &o.rwmix_pct, "PCT", "reads in percent for --rw randrw (fio's rwmixread=)", NULL},
        {"bs", 0, RB_OPT_SIZES, &o.bs, "SIZES", "block sizes, e.g. 4k,8k", NULL},
        {"iodepth", 0, RB_OPT_U64S, &o.iodepth, "N,...", "queue depths per job, e.g. 1,2,4,8", NULL},
        {"numjobs", 0, RB_OPT_U64S, &o.numjobs, "N,...", "jobs (processes) per rank, e.g. 1,2,4", NULL},
        {"runtime", 0, RB_OPT_DURATION, &o.runtime_ns, "DURATION", "measured time per point", NULL},
        {"ramp", 0, RB_OPT_DURATION, &o.ramp_ns, "DURATION", "unmeasured warm-up per point (fio's ramp_time)", NULL},
        {"engine", 0, RB_OPT_STR, &o.engine, "NAME", "fio ioengine", NULL},
        {"direct", 0, RB_OPT_INT, &o.direct, "0|1", "O_DIRECT (fio's direct=)", NULL},
        {"slo", 0, RB_OPT_STR, &o.slo, "EXPR", "latency bound, e.g. p99<=500us, p99.9<2ms, lat p99<=1ms", NULL},
        {"allow-destructive", 0, RB_OPT_FLAG, &o.allow_destructive, NULL,
         "allow writing to a block device or an existing file", NULL},
        {"keep", 0, RB_OPT_FLAG, &o.keep, NULL, "keep the file railbench created as target", NULL},
        {"fio", 0, RB_OPT_STR, &o.fio, "PROG", "fio program (looked up in PATH)", NULL},
        {0},
    };
    const struct rb_cmd_spec spec = {
        "railbench block --target PATH [options]",
        "Sweep fio over block size x iodepth x numjobs on every rank at once; report the IOPS-vs-latency "
        "curve, the highest IOPS within --slo, and the knee.",
        opts, 0, 0};
    struct rb_cli cli;
    int rc = rb_cli_parse(&cli, &spec, argc, argv);
    if (rc != 0) {
        rb_cli_free(&cli);
        return rc == RB_CLI_HELP ? RB_EXIT_OK : RB_EXIT_USAGE;
    }
    struct rb_block_slo slo;
    bool have_slo = false;
    if ((rc = validate(&o, &slo, &have_slo)) != 0) {
        rb_cli_free(&cli);
        return rc;
    }
    size_t npoints = 0;
    struct point_spec *ps = make_points(&o, &npoints);
    if (!ps) {
        rb_cli_free(&cli);
        fprintf(stderr, "railbench: out of memory\n");
        return RB_EXIT_RUNTIME;
    }

    struct rb_harness h;
    rc = rb_harness_init(&h, "block", &cli, &(struct rb_harness_opts){.mpi = true});
    if (rc != 0) {
        free(ps);
        rb_cli_free(&cli);
        return rc;
    }

    struct target t;
    char fio_path[4096] = "";
    struct rb_block_point *bp = NULL;
    bool *complete = NULL;
    cJSON *points = h.rank == 0 ? cJSON_CreateArray() : NULL;
    char fio_version[32] = "";
    int status = 0;
    struct run r;
    memset(&r, 0, sizeof r);
    r.clat = rb_hist_new();
    r.lat = rb_hist_new();
    memset(&t, 0, sizeof t);

    if (find_program(o.fio, fio_path, sizeof fio_path) != 0) {
        if (strcmp(o.fio, "fio") == 0)
            status = target_error(RB_EXIT_RUNTIME, "fio not found in PATH; install it with: apt-get install fio");
        else
            status = target_error(RB_EXIT_RUNTIME, "--fio %s: not found or not executable (install fio with: "
                                                   "apt-get install fio)", o.fio);
    }
    if ((status = agree(&h, status)) != 0)
        goto out;
    status = resolve_target(&o, h.rank, h.size, &t);
    if ((status = agree(&h, status)) != 0)
        goto out;
    if ((status = agree(&h, check_distinct_targets(&h, &t))) != 0)
        goto out;
    warn_binding(&h, &o);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/points/%d", h.out_dir, h.rank);
    if ((rc = rb_file_mkdir_p(dir)) != 0)
        status = target_error(RB_EXIT_RUNTIME, "cannot create %s: %s", dir, strerror(-rc));
    if (!status && (!r.clat || !r.lat))
        status = target_error(RB_EXIT_RUNTIME, "out of memory");
    if ((status = agree(&h, status)) != 0)
        goto out;
    if (h.rank == 0 && rb_log_get_level() >= RB_LOG_INFO && t.ours && !(t.size_bytes && access(t.path, F_OK) == 0))
        rb_info("writing %" PRIu64 " bytes to %s on every rank before the sweep", t.size_bytes, t.path);
    status = prepare_target(&o, &t);
    if ((status = agree(&h, status)) != 0) {
        if (status == RB_EXIT_CHECK)
            rb_harness_any_signalled(&h); /* a signal stopped the preparation: records the interruption */
        goto out;
    }

    bp = calloc(npoints, sizeof *bp);
    complete = calloc(npoints, sizeof *complete);
    if (!bp || !complete)
        rb_harness_fatal(&h, RB_EXIT_RUNTIME, "out of memory");
    r.o = &o;
    r.fio_path = fio_path;
    const uint64_t watchdog_ns = 2 * (o.runtime_ns + o.ramp_ns) + WATCHDOG_GRACE_NS;
    for (size_t k = 0; k < npoints; k++) {
        if (rb_harness_any_signalled(&h))
            break;
        r.name = ps[k].name;
        r.pid = 0;
        r.wstatus = 0;
        r.reaped = r.stopped = r.parsed = r.ok = false;
        r.err[0] = '\0';
        rb_hist_reset(r.clat);
        rb_hist_reset(r.lat);
        snprintf(r.job_path, sizeof r.job_path, "%s/%s.fio", dir, ps[k].name);
        snprintf(r.json_path, sizeof r.json_path, "%s/%s.json", dir, ps[k].name);
        snprintf(r.log_path, sizeof r.log_path, "%s/%s.log", dir, ps[k].name);
        snprintf(r.output_arg, sizeof r.output_arg, "--output=%s", r.json_path);
        if ((status = agree(&h, write_job(&o, &t, &ps[k], &r))) != 0)
            break;

        struct rb_phase p = {
            .name = ps[k].name, .op = rw_names[o.rw], .duration_ns = watchdog_ns, .start = run_start,
            .collect = run_collect, .done = run_done, .stop = run_stop, .ctx = &r, .no_progress = true,
        };
        int prc = rb_harness_run_phase(&h, &p);
        /* A failed start was logged by the rank it failed on; everyone else just stops. */
        int mine = 0;
        bool lost = false;
        if (prc == 0 && !r.ok) {
            if (r.stopped && h.interrupted) {
                lost = true; /* cut short by a signal before fio wrote results: not an error */
            } else if (r.stopped) {
                char w[32];
                rb_format_duration(w, sizeof w, watchdog_ns);
                snprintf(r.err, sizeof r.err, "point %s: fio had not finished after %s; stopped it (see %s)",
                         ps[k].name, w, r.log_path);
                rb_error("%s", r.err);
                mine = RB_EXIT_RUNTIME;
            } else {
                rb_error("%s", r.err[0] ? r.err : "fio failed");
                if (strstr(r.err, "last output"))
                    log_fio_tail(r.log_path, r.err, sizeof r.err);
                mine = RB_EXIT_RUNTIME;
            }
        }
        int flags[2] = {prc ? prc : mine, lost}, any[2] = {flags[0], flags[1]};
        if (h.mpi)
            RB_MPI_CHECK(MPI_Allreduce(flags, any, 2, MPI_INT, MPI_MAX, h.comm));
        if (any[0]) {
            status = any[0];
            record_failure(&h, ps[k].name, r.err[0] ? r.err : NULL);
            rb_harness_phase_free(&p);
            break;
        }
        if (!any[1]) {
            cJSON *mine_json = rank_json(&h, &r, &t);
            cJSON *per_rank = rb_harness_gather_json(&h, mine_json);
            cJSON_Delete(mine_json);
            if (h.rank == 0) {
                bool cut = false;
                cJSON *pj = aggregate_point(&o, &ps[k], per_rank, p.total, &bp[k], &cut);
                complete[k] = !cut;
                cJSON_AddItemToArray(points, pj);
                if (!fio_version[0])
                    snprintf(fio_version, sizeof fio_version, "%s", r.fio.version);
                point_metrics(&h, rw_names[o.rw], &ps[k], &bp[k]);
                if (rb_log_get_level() >= RB_LOG_INFO) {
                    char p50[16], p99[16], p999[16];
                    dur(p50, sizeof p50, bp[k].clat_ns[0]);
                    dur(p99, sizeof p99, bp[k].clat_ns[2]);
                    dur(p999, sizeof p999, bp[k].clat_ns[3]);
                    printf("[%zu/%zu] %-24s %10.0f IOPS %9.2f MiB/s  clat p50 %s p99 %s p99.9 %s%s\n", k + 1, npoints,
                           ps[k].name, bp[k].iops, bp[k].bw_bytes_per_s / (1024.0 * 1024.0), p50, p99, p999,
                           cut ? "  (interrupted)" : "");
                    fflush(stdout);
                }
            }
        } else if (h.rank == 0) {
            rb_warn("point %s: interrupted before every rank's fio wrote its results; not reported", ps[k].name);
        }
        rb_harness_phase_free(&p);
        if (h.interrupted)
            break;
    }

out:
    remove_target(&o, &t);
    char *table = NULL;
    if (h.rank == 0 && points) {
        if (bp && complete)
            table = report(&h, &o, &slo, have_slo, ps, bp, complete, npoints, points, t.path, fio_version);
        else
            cJSON_Delete(points);
    }
    rc = rb_harness_finish(&h, table, status);
    free(table);
    free(bp);
    free(complete);
    free(ps);
    rb_hist_free(r.clat);
    rb_hist_free(r.lat);
    rb_cli_free(&cli);
    return rc;
}
