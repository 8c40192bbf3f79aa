/* Internals of railbench fabric check: the round-robin schedule of host pairs and the analysis that finds the bad link (unit-tested). */
#ifndef RB_FABCHECK_INT_H
#define RB_FABCHECK_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "railbench/outlier.h"

/* ---------------------------------------------------------------- schedule (fabric/check_plan.c) */

/*
 * Round-robin tournament by the circle method: with n hosts (n + 1 when n is
 * odd, the extra one being a bye), round r pairs host h with
 * (2r - h) mod (m - 1), the fixed host m - 1 meeting the host the formula
 * maps to itself. Every pair meets exactly once; a round's pairs are
 * disjoint; there are n - 1 rounds for even n and n for odd n.
 */

/* Rounds of the schedule for n hosts (0 for n < 2). */
int rb_check_plan_rounds(int n);

/* Pairs in each round: floor(n / 2). */
int rb_check_plan_pairs(int n);

/* Host h's partner in round r, or -1 when h sits the round out (odd n) or the arguments are out of range. O(1). */
int rb_check_plan_partner(int n, int round, int h);

/*
 * Slot i (0 <= i < rb_check_plan_pairs) of round r: the pair with *a < *b.
 * Returns 0, or -EINVAL for arguments out of range. O(1).
 */
int rb_check_plan_pair(int n, int round, int i, int *a, int *b);

/* ---------------------------------------------------------------- measurements */

enum rb_check_status {
    RB_CHECK_OK = 0,
    RB_CHECK_TIMEOUT,  /* the pair did not complete within --timeout */
    RB_CHECK_SKIPPED,  /* not measured: an earlier stage of it, or a host of it, failed */
};

/* One host pair on one rail, measured in one round; a is the host that drove it. */
struct rb_check_link {
    int a, b, rail, round;
    int status;                 /* enum rb_check_status */
    char stage[16];             /* the stage that did not complete: connect, latency, a->b, b->a, bidir */
    char error[96];             /* the last error seen before the deadline, or "" */
    double lat_p50_s, lat_p99_s; /* one-way latency: half the round trip of small messages */
    double bw_ab_bytes_per_s;   /* a -> b, unidirectional */
    double bw_ba_bytes_per_s;   /* b -> a */
    double bw_bidir_bytes_per_s; /* both ways at once, bytes of both directions over the time */
    double elapsed_s;
    unsigned long long started_ns; /* rb_clock_ns when the pair started (this rank's clock) */
    int confirmed;              /* measured a second time (it looked slow); the better figures kept */
};

/* Per-rail ring all-reduce (--ring). */
struct rb_check_ring {
    int rail, hosts;            /* hosts in the ring (those with no failed link on the rail) */
    int status;                 /* enum rb_check_status */
    double time_s, busbw_bytes_per_s;
    long long wrong;            /* elements not equal to the number of hosts after a sum of ones, all members */
};

/* ---------------------------------------------------------------- analysis (fabric/check_report.c) */

/* What the model predicts for a link on a rail (from --topology); zero fields: no prediction. */
struct rb_check_pred {
    double lat_s, bw_bytes_per_s;
};

struct rb_check_cfg {
    double threshold;           /* a link below threshold x the rail median (or the prediction) is slow */
    double lat_threshold;       /* a one-way p50 above lat_threshold x the rail median is slow; 0: not judged */
    double min_z;               /* also require |robust z| >= min_z (0: off), see rb_outlier_is */
    const struct rb_check_pred *pred; /* per rail, or NULL */
};

enum rb_check_finding_kind {
    RB_FIND_TIMEOUT,            /* a pair did not complete */
    RB_FIND_HOST,               /* every link of a host is slow on every rail: the host */
    RB_FIND_HOST_RAIL,          /* every link of a host on one rail is slow: its NIC, port or cable */
    RB_FIND_LINK,               /* one pair is slow both ways */
    RB_FIND_ASYM,               /* one pair is slow one way only */
    RB_FIND_LATENCY,            /* one pair's latency is high */
    RB_FIND_MODEL,              /* the rail's median is below threshold x the model's prediction */
};

struct rb_check_finding {
    int kind;                   /* enum rb_check_finding_kind */
    int rail;                   /* -1: every rail */
    int host, peer;             /* hosts involved (-1 when none) */
    char name[64];              /* check name: "link rail1 node-b node-c" */
    char text[512];             /* the finding in plain words */
};

/* Fleet figures of one rail. */
struct rb_check_rail_fleet {
    struct rb_outlier_fleet uni, bidir, lat;
};

struct rb_check_analysis {
    int nrails;
    struct rb_check_rail_fleet *rails;   /* nrails entries */
    bool *slow;                 /* per link: flagged (in the order given) */
    struct rb_check_finding *findings;
    size_t nfindings;
};

/*
 * Analyses links[0..n) of hosts named names[0..nhosts) on nrails rails:
 * fleet median and MAD per rail, each link against them (and the
 * prediction), then attributes: a host whose every link on a rail is slow
 * (at least two links) is one finding for its rail port; a host slow on every
 * rail is a host finding; what remains is per pair. Returns 0 or -ENOMEM;
 * free with rb_check_analysis_free. Thread-safe.
 */
int rb_check_analyse(const struct rb_check_link *links, size_t n, const char *const *names, int nhosts, int nrails,
                     const struct rb_check_cfg *cfg, struct rb_check_analysis *out);

/* Frees what rb_check_analyse allocated; NULL-safe. */
void rb_check_analysis_free(struct rb_check_analysis *a);

/* One link as JSON (every measurement; null where not measured); caller frees. */
cJSON *rb_check_link_json(const struct rb_check_link *l, const char *const *names);

#endif
