/* railbench fabric check: every host pair on every rail, round by round, with a deadline per pair; then the findings. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_int.h"
#include "fabric_int.h"
#include "railbench/clock.h"
#include "railbench/harness.h"
#include "railbench/log.h"

/* Slow links measured a second time at most (more than this is not noise). */
#define CONFIRM_MAX 32

/* What every rank learns about every rank of the check, gathered once at the start. */
struct rank_entry {
    int host, rail;              /* rail -1: this rank takes no part */
    struct rb_cnet_addr at;
    char name[64];
};

/* The rail interface of rail r: --ifaces, else the launcher's (rail-bind.sh), else "rail<r>". */
static void rail_iface(const struct rb_check_opts *o, int rail, char *buf, size_t len)
{
    const char *bound = getenv("RB_RAIL_IFACE");
    if (o->nif > 0)
        snprintf(buf, len, "%s", o->ifv[(size_t)rail % o->nif]);
    else if (bound && *bound)
        snprintf(buf, len, "%s", bound);
    else
        snprintf(buf, len, "rail%d", rail);
}

/*
 * Every rank: its rail (local rank < rails), its listener on the rail's address, and the table of all ranks.
 * Returns 0 or an exit status agreed by every rank (a rank that cannot listen says why).
 */
static int setup_ranks(struct rb_harness *h, const struct rb_check_opts *o, struct rb_check_run *R)
{
    int max_local = h->local_size;
    RB_MPI_CHECK(MPI_Allreduce(&h->local_size, &max_local, 1, MPI_INT, MPI_MAX, h->comm));
    R->nrails = o->rails > 0 ? (int)o->rails : max_local;
    R->nhosts = h->host_count;
    struct rank_entry me = {.host = h->host_index, .rail = h->local_rank < R->nrails ? h->local_rank : -1};
    snprintf(me.name, sizeof me.name, "%.63s", h->host);
    R->listen_fd = -1;
    int bad = 0;
    if (me.rail >= 0) {
        char ifname[64], err[256];
        rail_iface(o, me.rail, ifname, sizeof ifname);
        R->listen_fd = rb_cnet_listen(ifname, &me.at, err, sizeof err);
        if (R->listen_fd < 0) {
            rb_error("fabric check: rail %d of %s: %s (give the rail interfaces with --ifaces)", me.rail, h->host, err);
            bad = 1;
        }
    }
    int any_bad = bad;
    RB_MPI_CHECK(MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, h->comm));
    if (any_bad)
        return RB_EXIT_RUNTIME;
    struct rank_entry *all = calloc((size_t)h->size, sizeof *all);
    R->peers = calloc((size_t)R->nhosts * (size_t)R->nrails, sizeof *R->peers);
    R->names = calloc((size_t)R->nhosts, sizeof *R->names);
    if (!all || !R->peers || !R->names)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    RB_MPI_CHECK(MPI_Allgather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, h->comm));
    for (int i = 0; i < h->size; i++) {
        if (all[i].rail >= 0)
            R->peers[all[i].host * R->nrails + all[i].rail] = all[i].at;
        if (!R->names[all[i].host])
            R->names[all[i].host] = strdup(all[i].name);
    }
    free(all);
    R->rail = me.rail;
    R->host = h->host_index;
    return 0;
}

/*
 * One pair on this rank, or none (peer -1): the lower host index drives and
 * fills *l, the other serves. Every rank runs the latency part, meets the
 * others at a barrier, then runs the bandwidth part, so no ping-pong shares
 * the hosts with another pair's stream. Each part ends by its own deadline,
 * --timeout after it starts. Collective (the barriers).
 */
static void run_pair(struct rb_harness *h, const struct rb_check_opts *o, struct rb_check_run *R, int peer, int round,
                     struct rb_check_link *l)
{
    rb_harness_barrier(h);
    uint64_t deadline = rb_clock_ns() + o->timeout_ns;
    int fd = -1;
    const struct rb_cnet_addr *mine = NULL, *theirs = NULL;
    if (R->rail >= 0 && peer >= 0) {
        mine = &R->peers[R->host * R->nrails + R->rail];
        theirs = &R->peers[peer * R->nrails + R->rail];
        if (theirs->ip == 0)
            peer = -1; /* the peer host has no rank on this rail */
    }
    bool drive = R->rail >= 0 && peer >= 0 && R->host < peer, serve = R->rail >= 0 && peer >= 0 && R->host > peer;
    if (drive) {
        *l = (struct rb_check_link){.a = R->host, .b = peer, .rail = R->rail, .round = round};
        fd = rb_cnet_connect(mine, theirs, deadline, l);
        if (fd >= 0 && rb_cnet_drive(fd, RB_CNET_LATENCY, &o->net, R->buf, deadline, l) != 0) {
            close(fd);
            fd = -1;
        }
    } else if (serve) {
        fd = rb_cnet_accept(R->listen_fd, round, peer, R->host, deadline);
        if (fd >= 0 && rb_cnet_serve(fd, &o->net, R->buf, deadline) != 0) {
            close(fd);
            fd = -1;
        }
    }
    rb_harness_barrier(h);
    deadline = rb_clock_ns() + o->timeout_ns; /* each part has the whole --timeout */
    if (drive && fd >= 0)
        rb_cnet_drive(fd, RB_CNET_BANDWIDTH, &o->net, R->buf, deadline, l);
    else if (serve && fd >= 0)
        rb_cnet_serve(fd, &o->net, R->buf, deadline);
    if (fd >= 0)
        close(fd);
}

/* One round of the schedule on this rank. */
static void run_round(struct rb_harness *h, const struct rb_check_opts *o, struct rb_check_run *R, int round)
{
    int peer = rb_check_plan_partner(R->nhosts, round, R->host);
    bool drive = R->rail >= 0 && peer > R->host && R->peers[peer * R->nrails + R->rail].ip != 0;
    run_pair(h, o, R, peer, round, drive ? &R->mine[R->nmine] : NULL);
    if (drive)
        R->nmine++;
}

static void gather_links(struct rb_harness *h, struct rb_check_run *R);

/* The better of two measurements of one link: noise on shared hosts only ever makes a link look worse. */
static void keep_better(struct rb_check_link *was, const struct rb_check_link *now)
{
    if (now->status != RB_CHECK_OK || was->status != RB_CHECK_OK)
        return;
    was->bw_ab_bytes_per_s = fmax(was->bw_ab_bytes_per_s, now->bw_ab_bytes_per_s);
    was->bw_ba_bytes_per_s = fmax(was->bw_ba_bytes_per_s, now->bw_ba_bytes_per_s);
    was->bw_bidir_bytes_per_s = fmax(was->bw_bidir_bytes_per_s, now->bw_bidir_bytes_per_s);
    was->lat_p50_s = fmin(was->lat_p50_s, now->lat_p50_s);
    was->lat_p99_s = fmin(was->lat_p99_s, now->lat_p99_s);
    was->confirmed = 1;
}

/* Rank 0: the links the analysis finds slow (not hung), as (a, b, rail) triples; at most CONFIRM_MAX. */
static int suspects(const struct rb_check_opts *o, const struct rb_check_run *R, int *out)
{
    struct rb_check_pred *pred = NULL;
    if (rb_check_predict(o, R->nrails, &pred) != 0)
        return 0;
    struct rb_check_cfg cfg = {.threshold = o->threshold, .lat_threshold = o->lat_threshold, .min_z = o->min_z,
                               .pred = pred};
    struct rb_check_analysis a;
    int n = 0;
    if (rb_check_analyse(R->links, R->nlinks, (const char *const *)R->names, R->nhosts, R->nrails, &cfg, &a) == 0) {
        for (size_t i = 0; i < R->nlinks && n < CONFIRM_MAX; i++)
            if (a.slow[i] && R->links[i].status == RB_CHECK_OK) {
                out[3 * n] = R->links[i].a;
                out[3 * n + 1] = R->links[i].b;
                out[3 * n + 2] = R->links[i].rail;
                n++;
            }
        rb_check_analysis_free(&a);
    }
    free(pred);
    return n;
}

/*
 * Every link the first pass found slow is measured once more, one pair at a
 * time with the rest of the fleet idle, and keeps the better of its two
 * measurements: a link that is really slow stays slow, a victim of a busy
 * moment does not. Collective.
 */
static void confirm_slow(struct rb_harness *h, const struct rb_check_opts *o, struct rb_check_run *R, int rounds)
{
    int list[3 * CONFIRM_MAX], n = 0;
    gather_links(h, R);
    if (h->rank == 0)
        n = suspects(o, R, list);
    free(R->links);
    R->links = NULL;
    R->nlinks = 0;
    RB_MPI_CHECK(MPI_Bcast(&n, 1, MPI_INT, 0, h->comm));
    RB_MPI_CHECK(MPI_Bcast(list, 3 * n, MPI_INT, 0, h->comm));
    if (h->rank == 0 && n)
        rb_info("measuring %d slow link(s) again, one at a time", n);
    for (int k = 0; k < n && !rb_harness_any_signalled(h); k++) {
        int a = list[3 * k], b = list[3 * k + 1], rail = list[3 * k + 2];
        int peer = R->rail != rail ? -1 : R->host == a ? b : R->host == b ? a : -1;
        struct rb_check_link now = {0};
        run_pair(h, o, R, peer, rounds + 2 + k, peer == b ? &now : NULL);
        for (size_t i = 0; peer == b && i < R->nmine; i++)
            if (R->mine[i].a == a && R->mine[i].b == b && R->mine[i].rail == rail)
                keep_better(&R->mine[i], &now);
    }
}

/* Gathers every rank's links to rank 0 (R->links there). */
static void gather_links(struct rb_harness *h, struct rb_check_run *R)
{
    int bytes = (int)(R->nmine * sizeof *R->mine), *counts = NULL, *displs = NULL, total = 0;
    if (h->rank == 0) {
        counts = calloc((size_t)h->size, sizeof *counts);
        displs = calloc((size_t)h->size, sizeof *displs);
        if (!counts || !displs)
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    }
    RB_MPI_CHECK(MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, h->comm));
    if (h->rank == 0) {
        for (int i = 0; i < h->size; i++) {
            displs[i] = total;
            total += counts[i];
        }
        R->links = malloc((size_t)total + 1);
        if (!R->links)
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
        R->nlinks = (size_t)total / sizeof *R->links;
    }
    RB_MPI_CHECK(MPI_Gatherv(R->mine, bytes, MPI_BYTE, R->links, counts, displs, MPI_BYTE, 0, h->comm));
    free(counts);
    free(displs);
}

static void run_free(struct rb_check_run *R)
{
    if (R->listen_fd >= 0)
        close(R->listen_fd);
    for (int i = 0; R->names && i < R->nhosts; i++)
        free(R->names[i]);
    free(R->names);
    free(R->peers);
    free(R->mine);
    free(R->links);
    free(R->buf);
    free(R->rings);
}

/* The check under MPI: set-up, the rounds, the gather, the report on rank 0. */
static int check_mpi(struct rb_cli *cli, struct rb_check_opts *o)
{
    struct rb_harness h;
    int rc = rb_harness_init(&h, "fabric check", cli, &(struct rb_harness_opts){.mpi = true});
    if (rc != 0)
        return rc;
    struct rb_check_run R = {.listen_fd = -1};
    if ((rc = setup_ranks(&h, o, &R)) != 0)
        goto fail;
    if (R.nhosts < 2) {
        if (h.rank == 0)
            rb_error("fabric check needs ranks on at least 2 hosts (got %d); run it under mpirun across hosts",
                     R.nhosts);
        rc = RB_EXIT_USAGE;
        goto fail;
    }
    int rounds = rb_check_plan_rounds(R.nhosts);
    o->net.rep_budget_ns = o->timeout_ns / 4;
    size_t bufsize = o->net.size_bytes > o->net.lat_size_bytes ? o->net.size_bytes : o->net.lat_size_bytes;
    R.mine = calloc((size_t)rounds + 1, sizeof *R.mine);
    R.buf = malloc(bufsize);
    if (!R.mine || !R.buf)
        rb_harness_fatal(&h, RB_EXIT_RUNTIME, "out of memory");
    memset(R.buf, 0x5a, bufsize);
    if (h.rank == 0)
        rb_info("fabric check: %d hosts x %d rails, %d rounds of %d pairs, timeout %.1f s per round", R.nhosts,
                R.nrails, rounds, rb_check_plan_pairs(R.nhosts), (double)o->timeout_ns / 1e9);
    uint64_t t0 = rb_clock_ns();
    for (int r = 0; r < rounds && !rb_harness_any_signalled(&h); r++) {
        run_round(&h, o, &R, r);
        if (h.rank == 0)
            rb_info("round %d/%d done at %.1f s", r + 1, rounds, (double)(rb_clock_ns() - t0) / 1e9);
    }
    if (!h.interrupted)
        confirm_slow(&h, o, &R, rounds);
    rb_harness_barrier(&h);
    if (o->ring && !h.interrupted)
        rb_check_rings(&h, o, &R);
    R.duration_s = (double)(rb_clock_ns() - t0) / 1e9;
    gather_links(&h, &R);
    char *table = NULL;
    if (h.rank == 0)
        rc = rb_check_report(&h, o, &R, &table);
    rb_harness_metrics_update(&h);
    rc = rb_harness_finish(&h, table, rc);
    free(table);
    run_free(&R);
    return rc;
fail:
    rc = rb_harness_finish(&h, NULL, rc);
    run_free(&R);
    return rc;
}

int rb_fabric_check(int argc, char **argv)
{
    struct rb_check_opts o = {
        .net = {.lat_size_bytes = 8, .lat_iters = 200, .size_bytes = 4 << 20, .iters = 8, .reps = 3},
        .timeout_ns = 10 * RB_NS_PER_S, .threshold = 0.5, .lat_threshold = 3, .hosts = 0, .rails = 0};
    const struct rb_opt opts[] = {
        {"ifaces", 0, RB_OPT_STR, &o.ifaces, "IF0,IF1,...",
         "rail interfaces in rail order (if not given: $RB_RAIL_IFACE from rail-bind.sh, else rail0, rail1, ...)", NULL},
        {"rails", 0, RB_OPT_U64, &o.rails, "R", "rails: local ranks 0..R-1 of each host (if not given: ranks per host)", NULL},
        {"size", 'b', RB_OPT_SIZE, &o.net.size_bytes, "SIZE", "bandwidth message size", NULL},
        {"iters", 'n', RB_OPT_U64, &o.net.iters, "N", "bandwidth messages per direction and stage", NULL},
        {"reps", 0, RB_OPT_U64, &o.net.reps, "N", "repetitions of each bandwidth stage, the best counts", NULL},
        {"lat-size", 0, RB_OPT_SIZE, &o.net.lat_size_bytes, "SIZE", "ping-pong message size", NULL},
        {"lat-iters", 0, RB_OPT_U64, &o.net.lat_iters, "N", "ping-pong round trips", NULL},
        {"timeout", 0, RB_OPT_DURATION, &o.timeout_ns, "DURATION", "a pair not done by then hangs", NULL},
        {"threshold", 0, RB_OPT_DOUBLE, &o.threshold, "X",
         "a link below X times its rail's median (or the prediction) is slow; 0 < X <= 1", NULL},
        {"latency-threshold", 0, RB_OPT_DOUBLE, &o.lat_threshold, "X",
         "a one-way p50 above X times the rail's median is slow; 0 turns it off", NULL},
        {"min-z", 0, RB_OPT_DOUBLE, &o.min_z, "Z", "also require a robust z-score of at least Z (0: off)", NULL},
        {"topology", 0, RB_OPT_STR, &o.topology, "FILE",
         "compare each rail with what this topology predicts for a same-rail link (fabric topo's JSON)", NULL},
        {"ring", 0, RB_OPT_FLAG, &o.ring, NULL,
         "also a ring all-reduce of --size per rail over its hosts (nccl-tests' busbw)", NULL},
        {"plan-only", 0, RB_OPT_FLAG, &o.plan_only, NULL, "print the schedule for --hosts and --rails; no MPI", NULL},
        {"hosts", 0, RB_OPT_U64, &o.hosts, "N", "hosts of the --plan-only schedule", NULL},
        {0},
    };
    const struct rb_cmd_spec spec = {
        "railbench fabric check [options]",
        "Find the bad link: every host pair on every rail (round-robin rounds of disjoint pairs), latency and "
        "bandwidth both ways, compared with the rail's fleet; slow links, slow host ports, asymmetric and hung pairs.",
        opts, 0, 0, false};
    struct rb_cli cli;
    int rc = 0;
    if (!rb_cli_parse_cmd(&cli, &spec, argc, argv, &rc))
        return rc;
    rc = rb_check_validate(&o);
    if (!rc)
        rc = o.plan_only ? rb_check_plan_cmd(&cli, &o) : check_mpi(&cli, &o);
    rb_cli_free(&cli);
    return rc;
}
