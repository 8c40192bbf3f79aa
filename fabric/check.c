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
 * A barrier that sleeps while it waits: ranks with no pair in a round (all
 * but two while a suspect is measured again) would otherwise spin in
 * MPI_Barrier on the cores the measured pair needs, and slow it down. The
 * sleeps grow from 1 us to IDLE_POLL_MAX_NS: each MPI_Test runs Open MPI's
 * progress engine (about 12 us of CPU over TCP), so a rank polling every
 * 200 us while a slow pair ran for seconds took 6 % of a core from it; the
 * barrier ends at most one sleep, and never more than its own wait, late.
 */
#define IDLE_POLL_MAX_NS RB_NS_PER_MS
static void idle_barrier(struct rb_harness *h)
{
    MPI_Request req;
    int done = 0;
    uint64_t nap = RB_NS_PER_US;
    RB_MPI_CHECK(MPI_Ibarrier(h->comm, &req));
    for (;;) {
        RB_MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
        if (done)
            return;
        rb_clock_sleep_ns(nap, NULL);
        if (nap < IDLE_POLL_MAX_NS)
            nap *= 2;
    }
}

/*
 * One pair on this rank, or none (peer -1): the lower host index drives and
 * fills *l, the other serves. Every rank runs the latency part, meets the
 * others at a barrier, then runs the bandwidth part, so no ping-pong shares
 * the hosts with another pair's stream. Each part ends by its own deadline,
 * --timeout (plus the stages' --duration) after it starts. Collective.
 */
static void run_pair(struct rb_harness *h, const struct rb_check_opts *o, struct rb_check_run *R, int peer, int round,
                     const struct rb_cnet_params *net, struct rb_check_link *l)
{
    idle_barrier(h);
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
        if (fd >= 0 && rb_cnet_drive(fd, RB_CNET_LATENCY, net, mine, theirs, R->buf, deadline, l) != 0) {
            close(fd);
            fd = -1;
        }
    } else if (serve) {
        fd = rb_cnet_accept(R->listen_fd, round, peer, R->host, deadline);
        if (fd >= 0 && rb_cnet_serve(fd, R->listen_fd, net, R->buf, deadline) != 0) {
            close(fd);
            fd = -1;
        }
    }
    idle_barrier(h);
    /* Each part has the whole --timeout; with --duration the stages' own time on top. */
    deadline = rb_clock_ns() + o->timeout_ns + (net->timed ? (3 * net->reps + 1) * net->stage_ns : 0);
    if (drive && fd >= 0)
        rb_cnet_drive(fd, RB_CNET_BANDWIDTH, net, mine, theirs, R->buf, deadline, l);
    else if (serve && fd >= 0)
        rb_cnet_serve(fd, R->listen_fd, net, R->buf, deadline);
    if (fd >= 0)
        close(fd);
}

/* This rank's next slot for a link it drives; the run dies when the slots (sized at the start) are used up. */
static struct rb_check_link *next_slot(struct rb_harness *h, struct rb_check_run *R)
{
    if (R->nmine >= R->capmine)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "fabric check: more measurements than planned (%zu)", R->capmine);
    return &R->mine[R->nmine];
}

/*
 * One round of disjoint pairs p[0..np) (rail -1: every rail at once) on this
 * rank: its part if its host and rail are in one, else the barriers only.
 * The link this rank drives is kept with pass and of. Collective.
 */
static void run_pairs(struct rb_harness *h, const struct rb_check_opts *o, struct rb_check_run *R,
                      const struct rb_check_pairing *p, int np, int round, const struct rb_cnet_params *net, int pass,
                      int of)
{
    int peer = -1;
    for (int i = 0; i < np && R->rail >= 0; i++)
        if (p[i].rail < 0 || p[i].rail == R->rail) {
            if (p[i].a == R->host)
                peer = p[i].b;
            else if (p[i].b == R->host)
                peer = p[i].a;
        }
    bool drive = R->rail >= 0 && peer > R->host && R->peers[peer * R->nrails + R->rail].ip != 0;
    struct rb_check_link *l = drive ? next_slot(h, R) : NULL;
    run_pair(h, o, R, peer, round, net, l);
    if (drive) {
        l->pass = pass;
        l->of = of;
        R->nmine++;
    }
}

/* One round of the full schedule on this rank. */
static void run_round(struct rb_harness *h, const struct rb_check_opts *o, struct rb_check_run *R, int round)
{
    int peer = rb_check_plan_partner(R->nhosts, round, R->host);
    struct rb_check_pairing p = {.a = R->host, .b = peer, .rail = -1};
    run_pairs(h, o, R, &p, peer >= 0, round, &o->net, RB_CHECK_PASS_SCHEDULE, 0);
}

static void gather_links(struct rb_harness *h, struct rb_check_run *R);

/* Rank 0: the analysis of the links gathered so far (R->links), with the options' rules. 0 or -errno. */
static int analyse_now(const struct rb_check_opts *o, const struct rb_check_run *R, struct rb_check_analysis *a)
{
    struct rb_check_pred *pred = NULL;
    if (rb_check_predict(o, R->nrails, &pred) != 0)
        return -EINVAL;
    struct rb_check_cfg cfg = {.threshold = o->threshold, .lat_threshold = o->lat_threshold, .min_z = o->min_z,
                               .confirm_z = o->confirm_z, .pred = pred};
    int rc = rb_check_analyse(R->links, R->nlinks, (const char *const *)R->names, R->nhosts, R->nrails, &cfg, a);
    free(pred);
    return rc;
}

/*
 * Rank 0: the links the first pass found slow (not hung), at most
 * CONFIRM_MAX, each with its reference (rb_check_reference: a link on its
 * rail that is not slow and shares no host with it, else the nearest to
 * that; a flagged one when noise flagged every link; rail -1 when there is
 * none). out holds 2 pairings per suspect.
 */
static int suspects(const struct rb_check_opts *o, const struct rb_check_run *R, struct rb_check_pairing *out)
{
    struct rb_check_analysis a;
    int n = 0;
    if (analyse_now(o, R, &a) != 0)
        return 0;
    for (size_t i = 0; i < R->nlinks && n < CONFIRM_MAX; i++) {
        const struct rb_check_link *s = &R->links[i];
        if (!a.slow[i] || s->status != RB_CHECK_OK)
            continue;
        long best = rb_check_reference(R->links, R->nlinks, a.slow, i);
        out[2 * n] = (struct rb_check_pairing){.a = s->a, .b = s->b, .rail = s->rail};
        out[2 * n + 1] = best < 0 ? (struct rb_check_pairing){.a = -1, .b = -1, .rail = -1}
                                  : (struct rb_check_pairing){.a = R->links[best].a, .b = R->links[best].b,
                                                              .rail = R->links[best].rail};
        n++;
    }
    rb_check_analysis_free(&a);
    return n;
}

/*
 * Noise handled by method: every link the first pass found slow is measured
 * --confirm times more, one pair at a time with the rest of the fleet idle,
 * each time beside its reference link. The suspect is then judged by the
 * medians of its repeats against the median and MAD of its references,
 * measured under the same conditions (rb_check_merge), not against a fleet
 * measured earlier: a link that is really slow stays slow, the victim of a
 * busy moment does not. Collective.
 */
static void confirm_slow(struct rb_harness *h, const struct rb_check_opts *o, struct rb_check_run *R, int *round)
{
    struct rb_check_pairing list[2 * CONFIRM_MAX];
    int n = 0;
    if (o->confirm == 0)
        return;
    gather_links(h, R);
    if (h->rank == 0)
        n = suspects(o, R, list);
    free(R->links);
    R->links = NULL;
    R->nlinks = 0;
    RB_MPI_CHECK(MPI_Bcast(&n, 1, MPI_INT, 0, h->comm));
    RB_MPI_CHECK(MPI_Bcast(list, (int)(2 * (size_t)n * sizeof *list), MPI_BYTE, 0, h->comm));
    if (h->rank == 0 && n)
        rb_info("measuring %d slow link(s) %llu times more, one at a time, each beside a reference link", n,
                (unsigned long long)o->confirm);
    struct rb_cnet_params once = o->net;
    once.reps = 1; /* the median over the repeats replaces the best of --reps */
    for (uint64_t rep = 0; rep < o->confirm && !rb_harness_any_signalled(h); rep++)
        for (int k = 0; k < n && !rb_harness_any_signalled(h); k++) {
            /*
             * ABBA order (suspect first on even repeats, reference first on odd
             * ones): on the cluster in a box the second of two back-to-back
             * measurements ran slower most of the time, whichever link it was.
             */
            bool ref_first = rep % 2 == 1;
            for (int j = 0; j < 2; j++) {
                int which = (j == 0) == ref_first ? 1 : 0;
                if (list[2 * k + which].a >= 0)
                    run_pairs(h, o, R, &list[2 * k + which], 1, (*round)++, &once,
                              which ? RB_CHECK_PASS_REFERENCE : RB_CHECK_PASS_REPEAT, k);
            }
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

/* Rounds of --quick's second pass at most (each suspect meets 2 good hosts; more when suspects outnumber them). */
#define SECOND_MAX 8

/*
 * --quick's second pass: rank 0 finds the suspect hosts of the first pass
 * (a slow or hung link on any rail) and pairs each with two known-good hosts
 * it has not met; every rank runs those rounds. Collective.
 */
static void quick_second(struct rb_harness *h, const struct rb_check_opts *o, struct rb_check_run *R, int *round)
{
    int n = R->nhosts, np = 0, rounds = 0;
    struct rb_check_pairing *p = calloc((size_t)n * 2 + 1, sizeof *p);
    if (!p)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    gather_links(h, R);
    if (h->rank == 0) {
        bool *sus = calloc((size_t)n, sizeof *sus), *met = calloc((size_t)n * (size_t)n, sizeof *met);
        struct rb_check_analysis a;
        if (sus && met && analyse_now(o, R, &a) == 0) {
            int nsus = 0;
            for (size_t i = 0; i < R->nlinks; i++) {
                const struct rb_check_link *l = &R->links[i];
                met[(size_t)l->a * (size_t)n + (size_t)l->b] = met[(size_t)l->b * (size_t)n + (size_t)l->a] = true;
                if (a.slow[i] || l->status == RB_CHECK_TIMEOUT)
                    sus[l->a] = sus[l->b] = true;
            }
            rb_check_analysis_free(&a);
            for (int x = 0; x < n; x++)
                nsus += sus[x];
            np = nsus ? rb_check_plan_second(n, sus, met, 2, p, &rounds) : 0;
            if (np < 0 || rounds > SECOND_MAX)
                np = rounds = 0;
            rb_info("quick: %d suspect host(s), %d pair(s) with known-good hosts in %d round(s)", nsus, np, rounds);
            R->quick_suspects = nsus;
            R->quick_pairs = np;
        }
        free(sus);
        free(met);
    }
    free(R->links);
    R->links = NULL;
    R->nlinks = 0;
    RB_MPI_CHECK(MPI_Bcast(&np, 1, MPI_INT, 0, h->comm));
    RB_MPI_CHECK(MPI_Bcast(&rounds, 1, MPI_INT, 0, h->comm));
    RB_MPI_CHECK(MPI_Bcast(p, (int)((size_t)np * sizeof *p), MPI_BYTE, 0, h->comm));
    for (int r = 0, first = 0; r < rounds && !rb_harness_any_signalled(h); r++) {
        int k = first;
        while (k < np && p[k].round == r)
            k++;
        run_pairs(h, o, R, &p[first], k - first, (*round)++, &o->net, RB_CHECK_PASS_SCHEDULE, 0);
        first = k;
    }
    free(p);
}

/* The check under MPI: set-up, the rounds, the confirmation, the gather, the report on rank 0. */
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
    /* The receiving side of every stream reads its rail interface's counters over its window. */
    struct rb_cnet_rxif rxif = {.bytes_fd = -1, .packets_fd = -1, .note = RB_WIRE_UNREADABLE};
    if (R.rail >= 0) {
        char ifname[64];
        rail_iface(o, R.rail, ifname, sizeof ifname);
        rb_cnet_rxif_open(&rxif, ifname);
    }
    o->net.rxif = &rxif;
    int full = rb_check_plan_rounds(R.nhosts), rounds = full;
    if (o->quick_on && (int)o->quick_rounds < full)
        rounds = (int)o->quick_rounds;
    o->net.rep_budget_ns = o->timeout_ns / 4;
    /*
     * A slow link's stage ends with what it moved, not in a hang: every stage
     * of the bandwidth part (a warm-up, then 3 x --reps) capped, they all fit
     * in half of --timeout.
     */
    if (!o->net.timed)
        o->net.stage_ns = o->timeout_ns / (2 * (3 * o->net.reps + 1));
    R.capmine = (size_t)rounds + SECOND_MAX + 2 * (size_t)o->confirm * CONFIRM_MAX + 1;
    R.mine = calloc(R.capmine, sizeof *R.mine);
    R.buf = rb_cnet_buf_new(&o->net);
    if (!R.mine || !R.buf)
        rb_harness_fatal(&h, RB_EXIT_RUNTIME, "out of memory");
    if (h.rank == 0)
        rb_info("fabric check: %d hosts x %d rails, %d %srounds of %d pairs, timeout %.1f s per round", R.nhosts,
                R.nrails, rounds, rounds < full ? "quick " : "", rb_check_plan_pairs(R.nhosts),
                (double)o->timeout_ns / 1e9);
    uint64_t t0 = rb_clock_ns();
    for (int r = 0; r < rounds && !rb_harness_any_signalled(&h); r++) {
        run_round(&h, o, &R, rounds < full ? rb_check_plan_quick_round(R.nhosts, r, rounds) : r);
        if (h.rank == 0)
            rb_info("round %d/%d done at %.1f s", r + 1, rounds, (double)(rb_clock_ns() - t0) / 1e9);
    }
    int next = full + 2; /* round numbers after the schedule's (the ring's is full + 1) */
    if (rounds < full && !h.interrupted)
        quick_second(&h, o, &R, &next);
    if (!h.interrupted)
        confirm_slow(&h, o, &R, &next);
    rb_harness_barrier(&h);
    if (o->ring && !h.interrupted)
        rb_check_rings(&h, o, &R);
    R.duration_s = (double)(rb_clock_ns() - t0) / 1e9;
    gather_links(&h, &R);
    if (h.rank == 0) {
        long kept = rb_check_merge(R.links, R.nlinks);
        if (kept < 0)
            rb_harness_fatal(&h, RB_EXIT_RUNTIME, "out of memory");
        R.nlinks = (size_t)kept;
    }
    char *table = NULL;
    if (h.rank == 0)
        rc = rb_check_report(&h, o, &R, &table);
    rb_harness_metrics_update(&h);
    rc = rb_harness_finish(&h, table, rc);
    free(table);
    rb_cnet_rxif_close(&rxif);
    o->net.rxif = NULL;
    run_free(&R);
    return rc;
fail:
    rc = rb_harness_finish(&h, NULL, rc);
    run_free(&R);
    return rc;
}

int rb_fabric_check_main(int argc, char **argv)
{
    struct rb_check_opts o = {
        .net = {.lat_size_bytes = 8, .lat_iters = 200, .size_bytes = 4 << 20, .iters = 8, .reps = 3},
        .timeout_ns = 10 * RB_NS_PER_S, .threshold = 0.5, .lat_threshold = 3, .hosts = 0, .rails = 0,
        .confirm = 4, .confirm_z = 3, .quick_rounds = 2};
    const struct rb_opt opts[] = {
        {"ifaces", 0, RB_OPT_STR, &o.ifaces, "IF0,IF1,...",
         "rail interfaces in rail order (if not given: $RB_RAIL_IFACE from rail-bind.sh, else rail0, rail1, ...)", NULL},
        {"rails", 0, RB_OPT_U64, &o.rails, "R", "rails: local ranks 0..R-1 of each host (if not given: ranks per host)", NULL},
        {"size", 'b', RB_OPT_SIZE, &o.net.size_bytes, "SIZE", "bandwidth message size", NULL},
        {"iters", 'n', RB_OPT_U64, &o.net.iters, "N", "bandwidth messages per direction and stage", NULL},
        {"reps", 0, RB_OPT_U64, &o.net.reps, "N", "repetitions of each bandwidth stage, the best counts", NULL},
        {"duration", 't', RB_OPT_DURATION, &o.duration_ns, "DURATION",
         "each bandwidth stage sends for this long instead of --iters messages (iperf3's -t)", NULL},
        {"no-delay", 'N', RB_OPT_FLAG, &o.net.no_delay, NULL,
         "data connections without Nagle: TCP_NODELAY at both ends (iperf3's -N)", NULL},
        {"lat-size", 0, RB_OPT_SIZE, &o.net.lat_size_bytes, "SIZE", "ping-pong message size", NULL},
        {"lat-iters", 0, RB_OPT_U64, &o.net.lat_iters, "N", "ping-pong round trips", NULL},
        {"timeout", 0, RB_OPT_DURATION, &o.timeout_ns, "DURATION", "a pair not done by then hangs", NULL},
        {"threshold", 0, RB_OPT_DOUBLE, &o.threshold, "X",
         "a link below X times its rail's median (or the prediction) is slow; 0 < X <= 1", NULL},
        {"latency-threshold", 0, RB_OPT_DOUBLE, &o.lat_threshold, "X",
         "a one-way p50 above X times the rail's median is slow; 0 turns it off", NULL},
        {"min-z", 0, RB_OPT_DOUBLE, &o.min_z, "Z", "also require a robust z-score of at least Z (0: off)", NULL},
        {"confirm", 0, RB_OPT_U64, &o.confirm, "N",
         "measure each slow link N times more beside a reference link; judge medians (0: off)", NULL},
        {"confirm-z", 0, RB_OPT_DOUBLE, &o.confirm_z, "Z",
         "a repeated link is slow only when its median lies Z standard errors (log scale, from the MAD) beyond its "
         "references' median", NULL},
        {"quick", 0, RB_OPT_FLAG, &o.quick_on, NULL,
         "O(hosts) pairs: --quick-rounds rounds of the schedule, then each suspect host beside two known-good ones",
         NULL},
        {"quick-rounds", 0, RB_OPT_U64, &o.quick_rounds, "N", "rounds of --quick's first pass (at least 2)", NULL},
        {"drain", 0, RB_OPT_FLAG, &o.drain, NULL,
         "under Slurm: set every host a finding names to DRAIN, the finding as the reason", NULL},
        {"dry-run", 0, RB_OPT_FLAG, &o.dry_run, NULL, "with --drain: print the scontrol commands, run none", NULL},
        {"k8s-nodes", 0, RB_OPT_STR, &o.k8s_nodes, "FILE",
         "write Node labels and taints for every host (kubectl apply -f FILE)", NULL},
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
        "bandwidth each way alone and both ways at once (a stream per direction, as iperf3), compared with the rail's "
        "fleet; slow links confirmed by repeats; one-way, link, host side, host port, host, rail and hung findings.",
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
