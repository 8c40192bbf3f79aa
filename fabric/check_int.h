/* Internals of railbench fabric check: the data plane between two ranks of one rail (fabric/check_net.c). */
#ifndef RB_CHECK_INT_H
#define RB_CHECK_INT_H

#include <netinet/in.h>
#include <stdint.h>

#include "railbench/cli.h"
#include "fabcheck_int.h"

struct rb_harness;
struct rb_buf;

/*
 * What a pair measures: small ping-pongs on the control connection, then
 * bandwidth stages on data connections of their own, one TCP stream per
 * direction as iperf3 opens them: a->b alone, b->a alone, then both at once
 * with each direction's stream driven by its own thread on each side.
 */
/*
 * The receiving side's rail interface counters, opened once per rank:
 * /sys/class/net/IF/statistics/rx_bytes and rx_packets, re-read with pread.
 * note is RB_WIRE_OK, RB_WIRE_UNREADABLE or RB_WIRE_OTHER_NETNS (the /sys
 * this process sees belongs to another network namespace: its IF has another
 * ifindex).
 */
struct rb_cnet_rxif {
    int bytes_fd, packets_fd;
    int note;
};

/* Opens ifname's counters into x (fds -1 and a note when they cannot be used). */
void rb_cnet_rxif_open(struct rb_cnet_rxif *x, const char *ifname);
void rb_cnet_rxif_close(struct rb_cnet_rxif *x);

struct rb_cnet_params {
    uint64_t lat_size_bytes, lat_iters;   /* ping-pong messages */
    uint64_t size_bytes, iters;           /* write size; writes per direction and stage (unless timed) */
    uint64_t stage_ns;                    /* a stage's sender stops after this long (0: no limit) */
    bool timed;                           /* --duration: every stage sends for stage_ns, bytes unlimited */
    bool no_delay;                        /* --no-delay: data connections without Nagle at both ends (iperf3 -N) */
    uint64_t reps;                        /* repetitions of each bandwidth stage; the best one counts */
    uint64_t rep_budget_ns;               /* no further repetition once a stage has taken this long (0: none) */
    const struct rb_cnet_rxif *rxif;      /* this rank's rail interface counters (NULL: not counted) */
};

/*
 * Bytes of the buffer rb_cnet_drive and rb_cnet_serve take: a send half and a
 * receive half, each a whole number of pages. Both halves start on a page
 * (rb_cnet_buf_new): the kernel's copy into a buffer 16 bytes past a page (as
 * malloc returns a large block) cost 1.4 times the CPU per byte of an aligned
 * one, which on a CPU-bound link is that much less bandwidth than iperf3's
 * page-aligned buffer (BENCHMARKS.md).
 */
#define RB_CNET_BUF_ALIGN 4096
size_t rb_cnet_buf_bytes(const struct rb_cnet_params *p);
/* That buffer, page-aligned and filled (free it with free), or NULL. */
char *rb_cnet_buf_new(const struct rb_cnet_params *p);

/* Where a rank of a rail listens: its rail interface's IPv4 address and a port. */
struct rb_cnet_addr {
    uint32_t ip;      /* network byte order */
    uint16_t port;    /* network byte order */
};

/*
 * Opens a listening TCP socket on ifname's first IPv4 address (an ephemeral
 * port) and fills *at. Returns the socket, or -errno with a sentence in err
 * (no such interface, no address, bind failure). The caller closes it.
 */
int rb_cnet_listen(const char *ifname, struct rb_cnet_addr *at, char *err, size_t errlen);

/* The two parts of a pair, with a barrier of every rank between them so no latency is measured beside a stream. */
enum { RB_CNET_LATENCY, RB_CNET_BANDWIDTH };

/*
 * Host a's side: connects from src to dst (retrying refused or unreachable
 * attempts until deadline_ns, rb_clock_ns) and says hello. l->a, b, rail
 * and round are set by the caller; the rest is reset. Returns the socket, or
 * -1 with l marked RB_CHECK_TIMEOUT (stage "connect", the last error).
 */
int rb_cnet_connect(const struct rb_cnet_addr *src, const struct rb_cnet_addr *dst, uint64_t deadline_ns,
                    struct rb_check_link *l);

/*
 * Host a's side of one part on control connection fd: RB_CNET_LATENCY
 * (ping-pongs, then a pause) or RB_CNET_BANDWIDTH (warm-up, a->b, b->a,
 * both ways, then quit; data connections from src to dst). Fills l's
 * figures; on failure or the deadline marks it RB_CHECK_TIMEOUT with the
 * stage and returns -errno. buf holds rb_cnet_buf_bytes(p) bytes.
 */
int rb_cnet_drive(int fd, int part, const struct rb_cnet_params *p, const struct rb_cnet_addr *src,
                  const struct rb_cnet_addr *dst, char *buf, uint64_t deadline_ns, struct rb_check_link *l);

/* Marks l as not completed after error rc (-errno), its figures NaN. */
void rb_cnet_fail(struct rb_check_link *l, int rc);

/* Host b's side: accepts until host a's hello for this round arrives. The socket, or -ETIMEDOUT. */
int rb_cnet_accept(int listen_fd, int round, int a, int b, uint64_t deadline_ns);

/*
 * Host b's side of one part: answers until a pause or quit (0), an error or
 * the deadline (-errno); data connections arrive on listen_fd. buf holds
 * rb_cnet_buf_bytes(p) bytes.
 */
int rb_cnet_serve(int fd, int listen_fd, const struct rb_cnet_params *p, char *buf, uint64_t deadline_ns);

/* Options of railbench fabric check, as parsed and checked. */
struct rb_check_opts {
    const char *ifaces;                 /* --ifaces as given */
    const char *ifv[RB_LIST_MAX];       /* split (pointers into ifbuf) */
    size_t nif;
    char ifbuf[1024];
    uint64_t rails, hosts;
    struct rb_cnet_params net;
    uint64_t timeout_ns, duration_ns;
    double threshold, lat_threshold, min_z, confirm_z;
    uint64_t confirm;                   /* repeats of each suspect link (0: none) */
    bool quick_on;                      /* --quick: quick_rounds rounds, then the second pass */
    uint64_t quick_rounds;
    const char *topology;
    bool plan_only, ring;
    bool drain, dry_run;                /* --drain: scontrol update ... State=DRAIN; --dry-run prints it */
    const char *k8s_nodes;              /* --k8s-nodes FILE: Node labels and taints, kubectl apply -f */
};

/* One run's state on one rank. */
struct rb_check_run {
    int nhosts, nrails;
    int host, rail;                     /* this rank's host index and rail (-1: no part) */
    int listen_fd;
    struct rb_cnet_addr *peers;         /* [host * nrails + rail]; ip 0: no such rank */
    char **names;                       /* host names by index */
    struct rb_check_link *mine;         /* links this rank drove */
    size_t nmine, capmine;
    struct rb_check_link *links;        /* rank 0: every link */
    size_t nlinks;
    char *buf;
    double duration_s;
    struct rb_check_ring *rings;        /* rank 0 with --ring: one per rail */
    int quick_suspects, quick_pairs;    /* rank 0 with --quick: suspect hosts and the second pass's pairs */
};

/*
 * --ring (fabric/check_ring.c): on every rail at once, a ring all-reduce of
 * --size bytes over the hosts with no hung link on that rail, best of --reps
 * after a warm-up, each member by --timeout. Rank 0 gets R->rings (the
 * slowest member's time, nccl-tests' busbw). Collective.
 */
void rb_check_rings(struct rb_harness *h, const struct rb_check_opts *o, struct rb_check_run *R);

/*
 * Rank 0 (fabric/check_act.c): what the findings ask of the scheduler: with
 * --drain every host a finding names is set to DRAIN with the finding as the
 * reason (scontrol; printed instead with --dry-run), with --k8s-nodes a
 * Node label/taint file for kubectl apply is written; hosts no finding names
 * are never touched. Records what it did in summary ("actions") and checks.
 * Returns 0 or RB_EXIT_RUNTIME when scontrol failed or the file could not be written.
 */
int rb_check_act(struct rb_harness *h, const struct rb_check_opts *o, const struct rb_check_run *R,
                 const struct rb_check_analysis *a, cJSON *summary, struct rb_buf *table);

/* Checks the options' values (one line naming the option on failure). Returns 0 or RB_EXIT_USAGE. */
int rb_check_validate(struct rb_check_opts *o);

/* --plan-only: the schedule for --hosts and --rails, verified and timed, with a wall-time estimate. Exit status. */
int rb_check_plan_cmd(struct rb_cli *cli, const struct rb_check_opts *o);

/*
 * Rank 0: predictions per rail from --topology (NULL without one; *pred owned
 * by the caller). Returns 0 or RB_EXIT_USAGE after saying why.
 */
int rb_check_predict(const struct rb_check_opts *o, int nrails, struct rb_check_pred **pred);

/*
 * Rank 0: analyses R's links, records summary, checks and metrics in h, and
 * returns the table (*table, caller frees). Returns 0 or an exit status.
 */
int rb_check_report(struct rb_harness *h, const struct rb_check_opts *o, const struct rb_check_run *R, char **table);

#endif
