/* railbench fabric check: the data plane of one pair on one rail, TCP from the rail's address, every wait bounded by a deadline. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/sockios.h>
#include <math.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_int.h"
#include "railbench/clock.h"
#include "railbench/hist.h"

#define MAGIC 0x72626663u /* "rbfc" */
#define RETRY_NS (100 * RB_NS_PER_MS)

/*
 * HELLO opens the control connection, DATA a data connection (idx 0 carries
 * a->b, 1 b->a); READY says host b has its data connections; GO tells host b
 * that host a is waiting for b's stream (b->a and both ways), so that no byte
 * of it is queued before its receiver looks; RESULT carries what host b
 * received (arg bytes in arg2 ns, and its interface's counters over that window).
 */
enum { CMD_HELLO = 1, CMD_LAT, CMD_TO_B, CMD_TO_A, CMD_BIDIR, CMD_PAUSE, CMD_QUIT, CMD_DATA, CMD_READY, CMD_RESULT,
       CMD_GO };

/* Every message on the control connection starts with this; fixed layout, host byte order (same build on both). */
struct hdr {
    uint32_t magic, cmd;
    uint64_t arg, arg2;
    int32_t round, a, b, idx;
    uint64_t if_bytes, if_packets;  /* RESULT: the receiving interface's rx deltas over the window */
    int32_t hdr_bytes, note;        /* RESULT: headers per counted packet; enum rb_check_wire_note */
};

/*
 * What a stream's receiver measured: bytes over ns is its figure, over its
 * own window (first byte to end of stream, or from its start of the stage
 * when from_start), with the interface's counters over the same window when
 * note is RB_WIRE_OK.
 */
struct rx_win {
    uint64_t bytes, ns, if_bytes, if_packets;
    int hdr_bytes, note, from_start;
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

static int open_stat(const char *ifname, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "/sys/class/net/%s/%s", ifname, name);
    return open(path, O_RDONLY | O_CLOEXEC);
}

/* One counter, re-read from offset 0 (sysfs renders the value again on each read at 0). */
static bool read_stat(int fd, uint64_t *v)
{
    char b[32];
    ssize_t n = pread(fd, b, sizeof b - 1, 0);
    if (n <= 0)
        return false;
    b[n] = '\0';
    char *end;
    errno = 0;
    unsigned long long x = strtoull(b, &end, 10);
    if (errno || end == b)
        return false;
    *v = x;
    return true;
}

void rb_cnet_rxif_open(struct rb_cnet_rxif *x, const char *ifname)
{
    *x = (struct rb_cnet_rxif){.bytes_fd = -1, .packets_fd = -1, .note = RB_WIRE_UNREADABLE};
    int idx_fd = open_stat(ifname, "ifindex");
    uint64_t idx = 0;
    bool have_idx = idx_fd >= 0 && read_stat(idx_fd, &idx);
    if (idx_fd >= 0)
        close(idx_fd);
    if (!have_idx)
        return;
    if (idx != if_nametoindex(ifname)) {
        x->note = RB_WIRE_OTHER_NETNS;
        return;
    }
    x->bytes_fd = open_stat(ifname, "statistics/rx_bytes");
    x->packets_fd = open_stat(ifname, "statistics/rx_packets");
    uint64_t v;
    if (x->bytes_fd >= 0 && x->packets_fd >= 0 && read_stat(x->bytes_fd, &v) && read_stat(x->packets_fd, &v)) {
        x->note = RB_WIRE_OK;
        return;
    }
    rb_cnet_rxif_close(x);
    x->note = RB_WIRE_UNREADABLE;
}

void rb_cnet_rxif_close(struct rb_cnet_rxif *x)
{
    if (x->bytes_fd >= 0)
        close(x->bytes_fd);
    if (x->packets_fd >= 0)
        close(x->packets_fd);
    x->bytes_fd = x->packets_fd = -1;
}

static bool rxif_read(const struct rb_cnet_rxif *x, uint64_t *bytes, uint64_t *packets)
{
    return x && x->note == RB_WIRE_OK && read_stat(x->bytes_fd, bytes) && read_stat(x->packets_fd, packets);
}

/*
 * Protocol headers per packet the interface counts on this connection:
 * Ethernet 14 (the rx_bytes of Linux drivers and veth count the MAC header,
 * not the FCS), IPv4 20, TCP 20 plus 12 when timestamps were negotiated
 * (RFC 7323: 10 bytes of option and 2 of NOP padding). A veth counts a TSO
 * segment as one packet with one set of headers, a NIC every frame; both
 * are one set per counted packet.
 */
static int header_bytes(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    bool ts = getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 && (ti.tcpi_options & TCPI_OPT_TIMESTAMPS);
    return 14 + 20 + 20 + (ts ? 12 : 0);
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

static int send_msg(int fd, const struct hdr *h, uint64_t deadline_ns)
{
    struct hdr m = *h;
    m.magic = MAGIC;
    return xfer(fd, (char *)&m, sizeof m, sizeof m, true, deadline_ns);
}

static int send_hdr(int fd, uint32_t cmd, uint64_t arg, int round, int a, int b, uint64_t deadline_ns)
{
    return send_msg(fd, &(struct hdr){.cmd = cmd, .arg = arg, .round = round, .a = a, .b = b}, deadline_ns);
}

/* Reads one message and checks it is cmd: 0, -EPROTO or the transfer's error. */
static int recv_msg(int fd, uint32_t cmd, struct hdr *h, uint64_t deadline_ns)
{
    int rc = xfer(fd, (char *)h, sizeof *h, sizeof *h, false, deadline_ns);
    return rc ? rc : h->magic != MAGIC || h->cmd != cmd ? -EPROTO : 0;
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

size_t rb_cnet_buf_bytes(const struct rb_cnet_params *p)
{
    size_t half = (size_t)(p->size_bytes > p->lat_size_bytes ? p->size_bytes : p->lat_size_bytes);
    return 2 * ((half + RB_CNET_BUF_ALIGN - 1) / RB_CNET_BUF_ALIGN * RB_CNET_BUF_ALIGN);
}

char *rb_cnet_buf_new(const struct rb_cnet_params *p)
{
    void *buf = NULL;
    if (posix_memalign(&buf, RB_CNET_BUF_ALIGN, rb_cnet_buf_bytes(p)) != 0)
        return NULL;
    memset(buf, 0x5a, rb_cnet_buf_bytes(p));
    return buf;
}

/* One direction's stream as its sender drives it: what to send and by when. */
struct sender {
    int fd;
    const char *buf;
    size_t wsize;
    uint64_t total;             /* bytes, or UINT64_MAX when timed */
    uint64_t stop_ns;           /* rb_clock_ns after which no more is written (0: none) */
    uint64_t deadline_ns;
    int rc;
};

/*
 * Writes s->total bytes in writes of s->wsize, or until s->stop_ns, then
 * half-closes the stream so its receiver sees the end. 0 or -errno.
 */
static int send_stream(struct sender *s)
{
    uint64_t sent = 0;
    int rc = 0;
    while (sent < s->total) {
        uint64_t now = rb_clock_ns();
        if (s->stop_ns && now >= s->stop_ns)
            break;
        size_t want = s->wsize < s->total - sent ? s->wsize : (size_t)(s->total - sent);
        ssize_t n = send(s->fd, s->buf, want, MSG_NOSIGNAL);
        if (n > 0) {
            sent += (uint64_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
            rc = -errno;
            break;
        }
        uint64_t until = s->stop_ns && s->stop_ns < s->deadline_ns ? s->stop_ns : s->deadline_ns;
        if ((rc = wait_fd(s->fd, POLLOUT, until)) != 0) {
            if (rc == -ETIMEDOUT && until == s->stop_ns && until < s->deadline_ns)
                rc = 0; /* the stage's time is up: what was sent counts */
            break;
        }
    }
    if (!rc && shutdown(s->fd, SHUT_WR) != 0)
        rc = -errno;
    return rc;
}

static void *sender_thread(void *arg)
{
    struct sender *s = arg;
    s->rc = send_stream(s);
    return NULL;
}

/*
 * Receives a stream to its end and measures it over the receiver's own
 * window, on its own clock: from its first read that returns bytes to the
 * end of stream. The bytes in the window are those that arrived after its
 * start: all, less the first read's and those already queued behind it
 * (SIOCINQ), which the interface counted before the window too. The
 * interface's counters are read at both ends of the same window. A stream
 * wholly queued before the first read (a receiver not scheduled while its
 * stream ran) leaves no such window: it is then measured from the call (the
 * receiver's start of the stage, before its sender was told to go), all its
 * bytes, with the counters read at the call. 0 or -errno.
 */
static int recv_stream(int fd, char *buf, size_t bufsize, const struct rb_cnet_rxif *rxif, uint64_t deadline_ns,
                       struct rx_win *w)
{
    uint64_t bc = 0, pc = 0, b0 = 0, p0 = 0, b1 = 0, p1 = 0;
    bool counted_call = rxif_read(rxif, &bc, &pc), first = true, counted = false;
    uint64_t t_call = rb_clock_ns(), t0 = 0, got = 0, before = 0;
    for (;;) {
        ssize_t n = recv(fd, buf, bufsize, 0);
        if (n > 0) {
            if (first) {
                first = false;
                t0 = rb_clock_ns();
                counted = rxif_read(rxif, &b0, &p0);
                int queued = 0;
                if (ioctl(fd, SIOCINQ, &queued) != 0 || queued < 0)
                    queued = 0;
                before = (uint64_t)n + (uint64_t)queued;
            }
            got += (uint64_t)n;
            continue;
        }
        if (n == 0)
            break;
        if (errno != EAGAIN && errno != EINTR)
            return -errno;
        int rc = wait_fd(fd, POLLIN, deadline_ns);
        if (rc)
            return rc;
    }
    uint64_t t1 = rb_clock_ns();
    bool end = rxif_read(rxif, &b1, &p1);
    *w = (struct rx_win){.bytes = got - before, .ns = t1 - t0, .hdr_bytes = header_bytes(fd),
                         .note = !rxif ? RB_WIRE_UNREADABLE : rxif->note};
    if (first || got <= before || t1 <= t0) {
        w->bytes = got;
        w->ns = t1 - t_call;
        w->from_start = 1;
        b0 = bc;
        p0 = pc;
        counted = counted_call;
    }
    counted = counted && end && b1 >= b0 && p1 >= p0;
    if (counted) {
        w->if_bytes = b1 - b0;
        w->if_packets = p1 - p0;
        w->note = RB_WIRE_OK;
    } else if (w->note == RB_WIRE_OK) {
        w->note = RB_WIRE_UNREADABLE;
    }
    return 0;
}

static double rate(uint64_t bytes, uint64_t ns)
{
    return (double)bytes / ((double)(ns ? ns : 1) * 1e-9);
}

/*
 * A data connection's Nagle, the same at both ends: on unless no_delay, as
 * iperf3's streams have it unless -N (connect_until turns it off for the
 * control connection's ping-pong). With one end different the two
 * directions differed: 128 KiB writes on the box's veths ran 2-3x faster
 * without Nagle (BENCHMARKS.md).
 */
static void nagle(int fd, bool no_delay)
{
    int v = no_delay;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v);
}

/* Host a's data connection idx (0: a->b, 1: b->a) of this stage, or -errno. */
static int open_data(const struct rb_cnet_addr *src, const struct rb_cnet_addr *dst, const struct rb_check_link *l,
                     int idx, bool no_delay, uint64_t deadline_ns)
{
    char err[96];
    int fd = connect_until(src, dst, deadline_ns, err, sizeof err);
    if (fd < 0)
        return fd;
    nagle(fd, no_delay);
    int rc = send_msg(fd, &(struct hdr){.cmd = CMD_DATA, .round = l->round, .a = l->a, .b = l->b, .idx = idx},
                      deadline_ns);
    if (rc) {
        close(fd);
        return rc;
    }
    return fd;
}

/* Host b: accepts the data connections of message h (fd[0] a->b, fd[1] b->a) as wanted. 0 or -ETIMEDOUT. */
static int accept_data(int listen_fd, const struct hdr *h, const bool want[2], bool no_delay, int fd[2],
                       uint64_t deadline_ns)
{
    while ((want[0] && fd[0] < 0) || (want[1] && fd[1] < 0)) {
        if (wait_fd(listen_fd, POLLIN, deadline_ns) != 0)
            return -ETIMEDOUT;
        int c = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0)
            continue;
        struct hdr m;
        uint64_t t = rb_clock_ns() + RB_NS_PER_S;
        if (recv_msg(c, CMD_DATA, &m, t < deadline_ns ? t : deadline_ns) == 0 && m.round == h->round &&
            m.a == h->a && m.b == h->b && (m.idx == 0 || m.idx == 1) && want[m.idx] && fd[m.idx] < 0) {
            nagle(c, no_delay);
            fd[m.idx] = c;
            continue;
        }
        close(c); /* a late attempt of an earlier stage, or a stranger */
    }
    return 0;
}

/* Which directions a bandwidth command moves: [0] a->b, [1] b->a. */
static void directions(uint32_t cmd, bool want[2])
{
    want[0] = cmd == CMD_TO_B || cmd == CMD_BIDIR;
    want[1] = cmd == CMD_TO_A || cmd == CMD_BIDIR;
}

/*
 * Both sides of one repetition of a stage, once the data connections are
 * up: this side sends on out (if >= 0, on a thread of its own when it also
 * receives) and receives on in (if >= 0). 0 or -errno.
 */
static int run_streams(int out, int in, const struct rb_cnet_params *p, char *buf, uint64_t total,
                       uint64_t deadline_ns, struct rx_win *w)
{
    size_t half = rb_cnet_buf_bytes(p) / 2;
    uint64_t now = rb_clock_ns();
    struct sender s = {.fd = out, .buf = buf, .wsize = (size_t)p->size_bytes, .total = total,
                       .stop_ns = p->stage_ns ? now + p->stage_ns : 0, .deadline_ns = deadline_ns};
    if (out >= 0 && in < 0)
        return send_stream(&s);
    if (out < 0)
        return recv_stream(in, buf + half, half, p->rxif, deadline_ns, w);
    pthread_t t;
    if (pthread_create(&t, NULL, sender_thread, &s) != 0)
        return -EAGAIN;
    int rc = recv_stream(in, buf + half, half, p->rxif, deadline_ns, w);
    if (rc)
        shutdown(out, SHUT_RDWR); /* the sender thread must not wait for the deadline */
    pthread_join(t, NULL);
    return rc ? rc : s.rc;
}

/* A receiver's measurement as the link records it. */
static struct rb_check_wire wire_of(const struct rx_win *w)
{
    bool ok = w->note == RB_WIRE_OK;
    return (struct rb_check_wire){.bytes = (double)w->bytes, .window_s = (double)w->ns * 1e-9,
                                  .if_bytes = ok ? (double)w->if_bytes : NAN,
                                  .if_packets = ok ? (double)w->if_packets : NAN,
                                  .hdr_bytes = ok ? w->hdr_bytes : NAN, .note = w->note,
                                  .from_start = w->from_start};
}

/*
 * One repetition of a bandwidth stage, host a's side: the rate of each
 * direction it moves (NaN for the other) and each one's receiver window with
 * its interface's counters (wire[0] a->b, as host b saw it; wire[1] b->a).
 */
static int stage_bw_once(int fd, uint32_t cmd, const struct rb_cnet_params *p, const struct rb_cnet_addr *src,
                         const struct rb_cnet_addr *dst, char *buf, uint64_t deadline_ns, const struct rb_check_link *l,
                         double bps[2], struct rb_check_wire wire[2])
{
    uint64_t total = p->timed ? UINT64_MAX : p->size_bytes * p->iters;
    bool want[2];
    int data[2] = {-1, -1}, rc;
    struct hdr m;
    struct rx_win w = {0};
    directions(cmd, want);
    bps[0] = bps[1] = NAN;
    rc = send_msg(fd, &(struct hdr){.cmd = cmd, .arg = total, .round = l->round, .a = l->a, .b = l->b}, deadline_ns);
    for (int i = 0; i < 2 && !rc; i++)
        if (want[i] && (data[i] = open_data(src, dst, l, i, p->no_delay, deadline_ns)) < 0)
            rc = data[i];
    if (!rc)
        rc = recv_msg(fd, CMD_READY, &m, deadline_ns);
    if (!rc && want[1])
        rc = send_hdr(fd, CMD_GO, 0, l->round, l->a, l->b, deadline_ns);
    if (!rc)
        rc = run_streams(data[0], data[1], p, buf, total, deadline_ns, &w);
    if (!rc && want[1]) {
        bps[1] = rate(w.bytes, w.ns);
        wire[1] = wire_of(&w);
    }
    if (!rc && want[0] && !(rc = recv_msg(fd, CMD_RESULT, &m, deadline_ns))) {
        struct rx_win got = {.bytes = m.arg, .ns = m.arg2, .if_bytes = m.if_bytes, .if_packets = m.if_packets,
                             .hdr_bytes = m.hdr_bytes, .note = m.note, .from_start = m.idx};
        bps[0] = rate(got.bytes, got.ns);
        wire[0] = wire_of(&got);
    }
    for (int i = 0; i < 2; i++)
        if (data[i] >= 0)
            close(data[i]);
    return rc;
}

/* Host b's side of one repetition of a bandwidth stage, announced by h. */
static int serve_bw_once(int fd, int listen_fd, const struct hdr *h, const struct rb_cnet_params *p, char *buf,
                         uint64_t deadline_ns)
{
    bool want[2];
    int data[2] = {-1, -1};
    struct rx_win w = {0};
    struct hdr go;
    directions(h->cmd, want);
    int rc = accept_data(listen_fd, h, want, p->no_delay, data, deadline_ns);
    if (!rc)
        rc = send_hdr(fd, CMD_READY, 0, h->round, h->a, h->b, deadline_ns);
    if (!rc && want[1])
        rc = recv_msg(fd, CMD_GO, &go, deadline_ns); /* host a waits for this stream before it starts */
    if (!rc)
        rc = run_streams(data[1], data[0], p, buf, h->arg, deadline_ns, &w);
    if (!rc && want[0])
        rc = send_msg(fd, &(struct hdr){.cmd = CMD_RESULT, .arg = w.bytes, .arg2 = w.ns, .round = h->round,
                                        .a = h->a, .b = h->b, .idx = w.from_start, .if_bytes = w.if_bytes,
                                        .if_packets = w.if_packets,
                                        .hdr_bytes = w.hdr_bytes, .note = w.note}, deadline_ns);
    for (int i = 0; i < 2; i++)
        if (data[i] >= 0)
            close(data[i]);
    return rc;
}

/*
 * A bandwidth stage: the best of p->reps repetitions, per direction. Noise on
 * shared hosts only ever slows a transfer down, so the best repetition is the
 * link's figure; a link that is really slow is slow in every one, so once a
 * repetition has run into the stage's cap (its writes not done by then), or
 * the stage has used its budget, the remaining repetitions are left out: a
 * link that slow is a suspect either way, and the second look measures it
 * again.
 */
static int stage_bw(int fd, uint32_t cmd, const struct rb_cnet_params *p, const struct rb_cnet_addr *src,
                    const struct rb_cnet_addr *dst, char *buf, uint64_t deadline_ns, const struct rb_check_link *l,
                    double best[2], struct rb_check_wire wire[2])
{
    int rc = 0;
    uint64_t t0 = rb_clock_ns();
    best[0] = best[1] = NAN;
    for (uint64_t k = 0; k < (p->reps ? p->reps : 1) && !rc; k++) {
        if (k > 0 && p->rep_budget_ns && rb_clock_ns() - t0 > p->rep_budget_ns)
            break;
        double x[2];
        struct rb_check_wire w[2];
        uint64_t t1 = rb_clock_ns();
        rc = stage_bw_once(fd, cmd, p, src, dst, buf, deadline_ns, l, x, w);
        for (int i = 0; !rc && i < 2; i++)
            if (!isnan(x[i]) && (isnan(best[i]) || x[i] > best[i])) {
                best[i] = x[i];
                wire[i] = w[i];
            }
        if (!p->timed && p->stage_ns && rb_clock_ns() - t1 >= p->stage_ns)
            break; /* capped */
    }
    return rc;
}

int rb_cnet_connect(const struct rb_cnet_addr *src, const struct rb_cnet_addr *dst, uint64_t deadline_ns,
                    struct rb_check_link *l)
{
    int rail = l->rail, round = l->round, a = l->a, b = l->b;
    *l = (struct rb_check_link){.a = a, .b = b, .rail = rail, .round = round, .status = RB_CHECK_OK,
                                .lat_p50_s = NAN, .lat_p99_s = NAN, .bw_ab_bytes_per_s = NAN,
                                .bw_ba_bytes_per_s = NAN, .bw_bidir_bytes_per_s = NAN,
                                .bw_bidir_ab_bytes_per_s = NAN, .bw_bidir_ba_bytes_per_s = NAN};
    for (int d = 0; d < RB_WIRE_DIRS; d++)
        l->wire[d] = (struct rb_check_wire){.bytes = NAN, .window_s = NAN, .if_bytes = NAN, .if_packets = NAN,
                                            .hdr_bytes = NAN, .note = RB_WIRE_NONE};
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
    l->bw_bidir_ab_bytes_per_s = l->bw_bidir_ba_bytes_per_s = NAN;
    l->elapsed_s = (double)(rb_clock_ns() - l->started_ns) * 1e-9;
}

int rb_cnet_drive(int fd, int part, const struct rb_cnet_params *p, const struct rb_cnet_addr *src,
                  const struct rb_cnet_addr *dst, char *buf, uint64_t deadline_ns, struct rb_check_link *l)
{
    int rc;
    if (part == RB_CNET_LATENCY) {
        snprintf(l->stage, sizeof l->stage, "latency");
        rc = stage_latency(fd, p, buf, deadline_ns, l);
        if (!rc)
            rc = send_hdr(fd, CMD_PAUSE, 0, l->round, l->a, l->b, deadline_ns);
    } else {
        struct rb_cnet_params warm = *p;
        double x[2];
        struct rb_check_wire w[2];
        warm.iters = warm.reps = 1;
        warm.timed = false;
        snprintf(l->stage, sizeof l->stage, "a->b");
        if (!(rc = stage_bw(fd, CMD_TO_B, &warm, src, dst, buf, deadline_ns, l, x, w)) &&
            !(rc = stage_bw(fd, CMD_TO_B, p, src, dst, buf, deadline_ns, l, x, w))) {
            l->bw_ab_bytes_per_s = x[0];
            l->wire[RB_WIRE_AB] = w[0];
            snprintf(l->stage, sizeof l->stage, "b->a");
            if (!(rc = stage_bw(fd, CMD_TO_A, p, src, dst, buf, deadline_ns, l, x, w))) {
                l->bw_ba_bytes_per_s = x[1];
                l->wire[RB_WIRE_BA] = w[1];
            }
        }
        if (!rc) {
            snprintf(l->stage, sizeof l->stage, "bidir");
            if (!(rc = stage_bw(fd, CMD_BIDIR, p, src, dst, buf, deadline_ns, l, x, w))) {
                l->bw_bidir_ab_bytes_per_s = x[0];
                l->bw_bidir_ba_bytes_per_s = x[1];
                l->bw_bidir_bytes_per_s = x[0] + x[1];
                l->wire[RB_WIRE_BIDIR_AB] = w[0];
                l->wire[RB_WIRE_BIDIR_BA] = w[1];
            }
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

int rb_cnet_serve(int fd, int listen_fd, const struct rb_cnet_params *p, char *buf, uint64_t deadline_ns)
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
        } else if (h.cmd == CMD_TO_B || h.cmd == CMD_TO_A || h.cmd == CMD_BIDIR) {
            rc = serve_bw_once(fd, listen_fd, &h, p, buf, deadline_ns);
        } else {
            rc = -EPROTO;
        }
        if (rc)
            return rc;
    }
}
