/* railbench fabric check: the data plane of one pair on one rail, TCP from the rail's address, every wait bounded by a deadline. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <math.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_int.h"
#include "railbench/clock.h"
#include "railbench/hist.h"

#define MAGIC 0x72626663u /* "rbfc" */
#define RETRY_NS (100 * RB_NS_PER_MS)

enum { CMD_HELLO = 1, CMD_LAT, CMD_TO_B, CMD_TO_A, CMD_BIDIR, CMD_PAUSE, CMD_QUIT };

/* Every message between the two sides starts with this; fixed layout, host byte order (same build on both). */
struct hdr {
    uint32_t magic, cmd;
    uint64_t arg;
    int32_t round, a, b, pad;
};

int rb_cnet_listen(const char *ifname, struct rb_cnet_addr *at, char *err, size_t errlen)
{
    struct ifaddrs *ifs = NULL, *i;
    if (getifaddrs(&ifs) != 0) {
        snprintf(err, errlen, "getifaddrs: %s", strerror(errno));
        return -errno;
    }
    uint32_t ip = 0;
    bool found = false;
    for (i = ifs; i && !found; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, ifname)) {
            ip = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr;
            found = true;
        }
    freeifaddrs(ifs);
    if (!found) {
        snprintf(err, errlen, "interface %s has no IPv4 address here (or does not exist)", ifname);
        return -EADDRNOTAVAIL;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = ip};
    socklen_t len = sizeof sa;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        int e = errno;
        snprintf(err, errlen, "listening on %s (%s): %s", ifname, inet_ntoa(sa.sin_addr), strerror(e));
        if (fd >= 0)
            close(fd);
        return -e;
    }
    at->ip = ip;
    at->port = sa.sin_port;
    return fd;
}

/* Waits until fd is ready for events or the deadline passes: 0 or -ETIMEDOUT. */
static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
    for (;;) {
        uint64_t now = rb_clock_ns();
        if (now >= deadline_ns)
            return -ETIMEDOUT;
        uint64_t ms = (deadline_ns - now + RB_NS_PER_MS - 1) / RB_NS_PER_MS;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, ms > 1000 ? 1000 : (int)ms);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -errno;
    }
}

/* Moves len bytes out of (or into) buf, reusing buf when len is larger; 0, -ETIMEDOUT, -ECONNRESET or -errno. */
static int xfer(int fd, char *buf, size_t bufsize, uint64_t len, bool out, uint64_t deadline_ns)
{
    uint64_t done = 0;
    while (done < len) {
        size_t off = (size_t)(done % bufsize), want = bufsize - off;
        if (want > len - done)
            want = (size_t)(len - done);
        ssize_t n = out ? send(fd, buf + off, want, MSG_NOSIGNAL) : recv(fd, buf + off, want, 0);
        if (n > 0) {
            done += (uint64_t)n;
            continue;
        }
        if (n == 0)
            return -ECONNRESET;
        if (errno != EAGAIN && errno != EINTR)
            return -errno;
        int rc = wait_fd(fd, out ? POLLOUT : POLLIN, deadline_ns);
        if (rc)
            return rc;
    }
    return 0;
}

/* Sends len bytes while receiving len bytes, both on fd. */
static int bidir(int fd, char *buf, size_t bufsize, uint64_t len, uint64_t deadline_ns)
{
    uint64_t sent = 0, got = 0;
    while (sent < len || got < len) {
        if (rb_clock_ns() >= deadline_ns)
            return -ETIMEDOUT;
        struct pollfd p = {.fd = fd, .events = (short)((sent < len ? POLLOUT : 0) | (got < len ? POLLIN : 0))};
        if (poll(&p, 1, 100) < 0 && errno != EINTR)
            return -errno;
        if (sent < len && (p.revents & (POLLOUT | POLLERR))) {
            size_t want = bufsize < len - sent ? bufsize : (size_t)(len - sent);
            ssize_t n = send(fd, buf, want, MSG_NOSIGNAL);
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                return -errno;
            sent += n > 0 ? (uint64_t)n : 0;
        }
        if (got < len && (p.revents & (POLLIN | POLLERR | POLLHUP))) {
            size_t want = bufsize < len - got ? bufsize : (size_t)(len - got);
            ssize_t n = recv(fd, buf, want, 0);
            if (n == 0)
                return -ECONNRESET;
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                return -errno;
            got += n > 0 ? (uint64_t)n : 0;
        }
    }
    return 0;
}

static int send_hdr(int fd, uint32_t cmd, uint64_t arg, int round, int a, int b, uint64_t deadline_ns)
{
    struct hdr h = {.magic = MAGIC, .cmd = cmd, .arg = arg, .round = round, .a = a, .b = b};
    return xfer(fd, (char *)&h, sizeof h, sizeof h, true, deadline_ns);
}

/* Connects from src to dst, retrying refused or unreachable attempts until the deadline. */
static int connect_until(const struct rb_cnet_addr *src, const struct rb_cnet_addr *dst, uint64_t deadline_ns,
                         char *err, size_t errlen)
{
    struct sockaddr_in from = {.sin_family = AF_INET, .sin_addr.s_addr = src->ip};
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr.s_addr = dst->ip, .sin_port = dst->port};
    int rc = -ETIMEDOUT, one = 1;
    snprintf(err, errlen, "no answer from %s", inet_ntoa(to.sin_addr));
    while (rb_clock_ns() < deadline_ns) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -errno;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        /* Bound to the rail's address: the policy routes send it out of the rail's interface. */
        if (bind(fd, (struct sockaddr *)&from, sizeof from) == 0 &&
            (connect(fd, (struct sockaddr *)&to, sizeof to) == 0 || errno == EINPROGRESS)) {
            rc = wait_fd(fd, POLLOUT, deadline_ns);
            int soerr = 0;
            socklen_t sl = sizeof soerr;
            if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0)
                return fd;
            if (rc == 0)
                snprintf(err, errlen, "connect to %s: %s", inet_ntoa(to.sin_addr), strerror(soerr));
        } else {
            snprintf(err, errlen, "connect to %s: %s", inet_ntoa(to.sin_addr), strerror(errno));
        }
        close(fd);
        rb_clock_sleep_ns(RETRY_NS, NULL);
    }
    return -ETIMEDOUT;
}

/* The ping-pong stage: one-way latency is half of each round trip. */
static int stage_latency(int fd, const struct rb_cnet_params *p, char *buf, uint64_t deadline_ns,
                         struct rb_check_link *l)
{
    struct rb_hist *h = rb_hist_new();
    if (!h)
        return -ENOMEM;
    uint64_t warm = p->lat_iters / 10 + 1;
    int rc = send_hdr(fd, CMD_LAT, warm + p->lat_iters, l->round, l->a, l->b, deadline_ns);
    for (uint64_t k = 0; k < warm + p->lat_iters && !rc; k++) {
        uint64_t t0 = rb_clock_ns();
        rc = xfer(fd, buf, p->lat_size_bytes, p->lat_size_bytes, true, deadline_ns);
        if (!rc)
            rc = xfer(fd, buf, p->lat_size_bytes, p->lat_size_bytes, false, deadline_ns);
        if (!rc && k >= warm)
            rb_hist_record(h, (rb_clock_ns() - t0) / 2);
    }
    if (!rc) {
        l->lat_p50_s = (double)rb_hist_percentile(h, 50) * 1e-9;
        l->lat_p99_s = (double)rb_hist_percentile(h, 99) * 1e-9;
    }
    rb_hist_free(h);
    return rc;
}

/* One repetition of a bandwidth stage; *bps is the bytes moved (both ways for bidir) over its time. */
static int stage_bw_once(int fd, uint32_t cmd, const struct rb_cnet_params *p, char *buf, uint64_t deadline_ns,
                         const struct rb_check_link *l, double *bps)
{
    uint64_t total = p->size_bytes * p->iters;
    char ack = 0;
    uint64_t t0 = rb_clock_ns();
    int rc = send_hdr(fd, cmd, total, l->round, l->a, l->b, deadline_ns);
    if (rc)
        return rc;
    if (cmd == CMD_TO_B) {
        rc = xfer(fd, buf, p->size_bytes, total, true, deadline_ns);
        if (!rc)
            rc = xfer(fd, &ack, 1, 1, false, deadline_ns);
    } else if (cmd == CMD_TO_A) {
        rc = xfer(fd, buf, p->size_bytes, total, false, deadline_ns);
    } else {
        rc = bidir(fd, buf, p->size_bytes, total, deadline_ns);
    }
    double s = (double)(rb_clock_ns() - t0) * 1e-9;
    *bps = (double)total * (cmd == CMD_BIDIR ? 2 : 1) / (s > 0 ? s : 1e-9);
    return rc;
}

/*
 * A bandwidth stage: the best of p->reps repetitions. Noise on shared hosts
 * only ever slows a transfer down, so the best repetition is the link's
 * figure; a link that is really slow is slow in every one, so once a stage
 * has used its budget the remaining repetitions are left out.
 */
static int stage_bw(int fd, uint32_t cmd, const struct rb_cnet_params *p, char *buf, uint64_t deadline_ns,
                    const struct rb_check_link *l, double *bps)
{
    int rc = 0;
    uint64_t t0 = rb_clock_ns();
    *bps = 0;
    for (uint64_t k = 0; k < (p->reps ? p->reps : 1) && !rc; k++) {
        if (k > 0 && p->rep_budget_ns && rb_clock_ns() - t0 > p->rep_budget_ns)
            break;
        double x = 0;
        rc = stage_bw_once(fd, cmd, p, buf, deadline_ns, l, &x);
        if (!rc && x > *bps)
            *bps = x;
    }
    return rc;
}

int rb_cnet_connect(const struct rb_cnet_addr *src, const struct rb_cnet_addr *dst, uint64_t deadline_ns,
                    struct rb_check_link *l)
{
    int rail = l->rail, round = l->round, a = l->a, b = l->b;
    *l = (struct rb_check_link){.a = a, .b = b, .rail = rail, .round = round, .status = RB_CHECK_OK,
                                .lat_p50_s = NAN, .lat_p99_s = NAN, .bw_ab_bytes_per_s = NAN,
                                .bw_ba_bytes_per_s = NAN, .bw_bidir_bytes_per_s = NAN};
    l->started_ns = rb_clock_ns();
    snprintf(l->stage, sizeof l->stage, "connect");
    int fd = connect_until(src, dst, deadline_ns, l->error, sizeof l->error), rc = fd < 0 ? fd : 0;
    if (!rc) {
        l->error[0] = '\0';
        rc = send_hdr(fd, CMD_HELLO, 0, round, a, b, deadline_ns);
    }
    if (rc) {
        if (fd >= 0)
            close(fd);
        rb_cnet_fail(l, rc);
        return -1;
    }
    return fd;
}

void rb_cnet_fail(struct rb_check_link *l, int rc)
{
    l->status = RB_CHECK_TIMEOUT;
    if (rc == -ETIMEDOUT && !l->error[0])
        snprintf(l->error, sizeof l->error, "deadline passed");
    else if (rc != -ETIMEDOUT)
        snprintf(l->error, sizeof l->error, "%s", strerror(rc < 0 ? -rc : rc));
    l->lat_p50_s = l->lat_p99_s = l->bw_ab_bytes_per_s = l->bw_ba_bytes_per_s = l->bw_bidir_bytes_per_s = NAN;
    l->elapsed_s = (double)(rb_clock_ns() - l->started_ns) * 1e-9;
}

int rb_cnet_drive(int fd, int part, const struct rb_cnet_params *p, char *buf, uint64_t deadline_ns,
                  struct rb_check_link *l)
{
    int rc;
    if (part == RB_CNET_LATENCY) {
        snprintf(l->stage, sizeof l->stage, "latency");
        rc = stage_latency(fd, p, buf, deadline_ns, l);
        if (!rc)
            rc = send_hdr(fd, CMD_PAUSE, 0, l->round, l->a, l->b, deadline_ns);
    } else {
        struct rb_cnet_params warm = *p;
        double warm_bps;
        warm.iters = warm.reps = 1;
        snprintf(l->stage, sizeof l->stage, "a->b");
        if (!(rc = stage_bw(fd, CMD_TO_B, &warm, buf, deadline_ns, l, &warm_bps)) &&
            !(rc = stage_bw(fd, CMD_TO_B, p, buf, deadline_ns, l, &l->bw_ab_bytes_per_s))) {
            snprintf(l->stage, sizeof l->stage, "b->a");
            rc = stage_bw(fd, CMD_TO_A, p, buf, deadline_ns, l, &l->bw_ba_bytes_per_s);
        }
        if (!rc) {
            snprintf(l->stage, sizeof l->stage, "bidir");
            rc = stage_bw(fd, CMD_BIDIR, p, buf, deadline_ns, l, &l->bw_bidir_bytes_per_s);
        }
        if (!rc)
            rc = send_hdr(fd, CMD_QUIT, 0, l->round, l->a, l->b, deadline_ns);
    }
    if (rc) {
        rb_cnet_fail(l, rc);
        return rc;
    }
    l->elapsed_s = (double)(rb_clock_ns() - l->started_ns) * 1e-9;
    if (part != RB_CNET_LATENCY)
        l->stage[0] = l->error[0] = '\0';
    return 0;
}

int rb_cnet_accept(int listen_fd, int round, int a, int b, uint64_t deadline_ns)
{
    while (wait_fd(listen_fd, POLLIN, deadline_ns) == 0) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct hdr h;
        uint64_t t = rb_clock_ns() + RB_NS_PER_S;
        if (xfer(fd, (char *)&h, sizeof h, sizeof h, false, t < deadline_ns ? t : deadline_ns) == 0 &&
            h.magic == MAGIC && h.cmd == CMD_HELLO && h.round == round && h.a == a && h.b == b)
            return fd;
        close(fd); /* a late attempt of an earlier round, or a stranger */
    }
    return -ETIMEDOUT;
}

int rb_cnet_serve(int fd, const struct rb_cnet_params *p, char *buf, uint64_t deadline_ns)
{
    for (;;) {
        struct hdr h;
        int rc = xfer(fd, (char *)&h, sizeof h, sizeof h, false, deadline_ns);
        if (rc)
            return rc;
        if (h.magic != MAGIC)
            return -EPROTO;
        if (h.cmd == CMD_QUIT || h.cmd == CMD_PAUSE)
            return 0;
        if (h.cmd == CMD_LAT) {
            for (uint64_t k = 0; k < h.arg && !rc; k++) {
                rc = xfer(fd, buf, p->lat_size_bytes, p->lat_size_bytes, false, deadline_ns);
                if (!rc)
                    rc = xfer(fd, buf, p->lat_size_bytes, p->lat_size_bytes, true, deadline_ns);
            }
        } else if (h.cmd == CMD_TO_B) {
            char ack = 1;
            rc = xfer(fd, buf, p->size_bytes, h.arg, false, deadline_ns);
            if (!rc)
                rc = xfer(fd, &ack, 1, 1, true, deadline_ns);
        } else if (h.cmd == CMD_TO_A) {
            rc = xfer(fd, buf, p->size_bytes, h.arg, true, deadline_ns);
        } else if (h.cmd == CMD_BIDIR) {
            rc = bidir(fd, buf, p->size_bytes, h.arg, deadline_ns);
        } else {
            rc = -EPROTO;
        }
        if (rc)
            return rc;
    }
}
