/* Internals of railbench fabric check: the data plane between two ranks of one rail (fabric/check_net.c). */
#ifndef RB_CHECK_INT_H
#define RB_CHECK_INT_H

#include <netinet/in.h>
#include <stdint.h>

#include "railbench/cli.h"
#include "railbench/fabcheck.h"

struct rb_harness;

/* What a pair measures: small ping-pongs, then large streams each way and both ways. */
struct rb_cnet_params {
    uint64_t lat_size_bytes, lat_iters;   /* ping-pong messages */
    uint64_t size_bytes, iters;           /* bandwidth messages and how many per repetition of a stage */
    uint64_t reps;                        /* repetitions of each bandwidth stage; the best one counts */
    uint64_t rep_budget_ns;               /* no further repetition once a stage has taken this long (0: none) */
};

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

/*
 * Drives one pair from host a's side: connects from src to dst (retrying
 * until the deadline), then latency, a->b, b->a and bidirectional stages.
 * Fills the measurements of *l, or status RB_CHECK_TIMEOUT with the stage
 * and last error when deadline_ns (rb_clock_ns) passes first. buf holds
 * p->size_bytes. Not thread-safe with respect to buf.
 */
void rb_cnet_drive(const struct rb_cnet_addr *src, const struct rb_cnet_addr *dst, int round, int a, int b,
                   const struct rb_cnet_params *p, char *buf, uint64_t deadline_ns, struct rb_check_link *l);

/*
 * Serves one pair on host b's side: accepts on listen_fd until host a's
 * connection for this round arrives, then answers its stages until it
 * quits or deadline_ns passes. Returns 0, or -ETIMEDOUT / -errno.
 */
int rb_cnet_serve(int listen_fd, int round, int a, int b, const struct rb_cnet_params *p, char *buf,
                  uint64_t deadline_ns);

/* Options of railbench fabric check, as parsed and checked. */
struct rb_check_opts {
    const char *ifaces;                 /* --ifaces as given */
    const char *ifv[RB_LIST_MAX];       /* split (pointers into ifbuf) */
    size_t nif;
    char ifbuf[1024];
    uint64_t rails, hosts;
    struct rb_cnet_params net;
    uint64_t timeout_ns;
    double threshold, lat_threshold, min_z;
    const char *topology;
    bool plan_only;
};

/* One run's state on one rank. */
struct rb_check_run {
    int nhosts, nrails;
    int host, rail;                     /* this rank's host index and rail (-1: no part) */
    int listen_fd;
    struct rb_cnet_addr *peers;         /* [host * nrails + rail]; ip 0: no such rank */
    char **names;                       /* host names by index */
    struct rb_check_link *mine;         /* links this rank drove */
    size_t nmine;
    struct rb_check_link *links;        /* rank 0: every link */
    size_t nlinks;
    char *buf;
    double duration_s;
};

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
