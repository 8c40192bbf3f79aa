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

/* Pairs measured at once: a round. rail -1: on every rail at once. */
struct rb_check_pairing {
    int a, b, rail, round;
};

/* Round q (0 <= q < quick) of --quick's first pass: quick rounds spread evenly over the full schedule's. */
int rb_check_plan_quick_round(int n, int q, int quick);

/*
 * --quick's second pass: each suspect host (suspect[h]) is paired with
 * `partners` known-good hosts (neither suspect nor already met: met is an
 * n x n matrix of pairs measured, or NULL), as cluster-health-scanner pairs a
 * failed node with passed ones. Pairs of one round are disjoint; the rounds
 * are numbered from 0 in .round (rail -1). Fills out (room for
 * n x partners entries) and returns how many, or -EINVAL; *rounds gets the
 * number of rounds. O(n x partners x good hosts).
 */
int rb_check_plan_second(int n, const bool *suspect, const bool *met, int partners, struct rb_check_pairing *out,
                         int *rounds);

/* ---------------------------------------------------------------- measurements */

enum rb_check_status {
    RB_CHECK_OK = 0,
    RB_CHECK_TIMEOUT,  /* the pair did not complete within --timeout */
    RB_CHECK_SKIPPED,  /* not measured: an earlier stage of it, or a host of it, failed */
};

/* Where a measurement comes from: the schedule, or the confirmation of suspect links. */
enum rb_check_pass {
    RB_CHECK_PASS_SCHEDULE = 0, /* the round-robin (or --quick) schedule */
    RB_CHECK_PASS_REPEAT,       /* a suspect link measured again, alone */
    RB_CHECK_PASS_REFERENCE,    /* a link not suspected, measured right after the repeat of suspect `of` */
};

/* What a confirmed suspect is judged against: the references measured beside its repeats. */
struct rb_check_ref {
    int n;                      /* reference measurements (0: none, the rail's fleet judges) */
    struct rb_outlier_fleet uni, bidir, lat; /* each direction alone, each direction in both at once, p50 */
    double log_mad[3];          /* MAD of the natural logs of the same three: noise on a shared host multiplies */
    double worst[3];            /* the worst reference value of each: the lowest bandwidths, the highest p50 */
};

/* A suspect's repeats: the median of each figure, and its references. */
struct rb_check_repeat {
    int n;                      /* completed repeats (0: not repeated) */
    double lat_p50_s, bw_ab_bytes_per_s, bw_ba_bytes_per_s, bw_bidir_ab_bytes_per_s, bw_bidir_ba_bytes_per_s;
    double best[5];             /* the best repeat of each, same order: the lowest p50, the highest bandwidths */
    struct rb_check_ref ref;
};

/*
 * Why a stage's interface counters are missing (rb_check_wire.note). The
 * counters are the receiving rail interface's /sys/class/net/IF/statistics
 * rx_bytes and rx_packets, read by the receiver at its first byte and at the
 * end of the stream.
 */
enum rb_check_wire_note {
    RB_WIRE_NONE = 0,           /* the stage was not measured */
    RB_WIRE_OK,                 /* counted */
    RB_WIRE_UNREADABLE,         /* the statistics files cannot be read */
    RB_WIRE_OTHER_NETNS,        /* /sys shows another network namespace's interface of that name */
    RB_WIRE_NOTES
};

/* The note's sentence in result.json (NULL for RB_WIRE_OK). */
const char *rb_check_wire_note_text(int note);

/*
 * One direction of one bandwidth stage as its receiver saw it, over its own
 * window (its clock, its first byte to the end of the stream), beside what
 * its interface counted over the same window. The per-packet protocol
 * headers (hdr_bytes: Ethernet 14 + IPv4 20 + TCP 20, 32 with timestamps)
 * turn the interface's bytes into payload: if_bytes - if_packets x hdr_bytes.
 */
struct rb_check_wire {
    double bytes, window_s;     /* payload railbench received in the window */
    double if_bytes, if_packets; /* the interface's rx deltas over the window; NaN when not counted */
    double hdr_bytes;           /* headers per counted packet; NaN when not counted */
    int note;                   /* enum rb_check_wire_note */
    int from_start;             /* the whole stream was queued before the receiver's first read: the window runs
                                   from the receiver's start of the stage (before its sender was told to go) */
};

/* Directions of a link's bandwidth stages, the order of rb_check_link.wire. */
enum { RB_WIRE_AB, RB_WIRE_BA, RB_WIRE_BIDIR_AB, RB_WIRE_BIDIR_BA, RB_WIRE_DIRS };

/* railbench's payload over the counters' payload in the same window (1: they agree); NaN when not counted. */
double rb_check_wire_ratio(const struct rb_check_wire *w);

/* The largest |ratio - 1| a direction may show before its check fails. */
#define RB_CHECK_WIRE_TOLERANCE 0.02
/*
 * Fewer packets than this in a window are compared but not judged: the counters are read at the window's two ends,
 * and one packet (up to 64 KiB under GSO) read on the wrong side of either is more than the tolerance of a stream
 * that short (a 512 KiB stage under strace: 11 packets, ratio 0.79).
 */
#define RB_CHECK_WIRE_MIN_PACKETS 64

/* One host pair on one rail, measured in one round; a is the host that drove it. */
struct rb_check_link {
    int a, b, rail, round;
    int status;                 /* enum rb_check_status */
    char stage[16];             /* the stage that did not complete: connect, latency, a->b, b->a, bidir */
    char error[96];             /* the last error seen before the deadline, or "" */
    double lat_p50_s, lat_p99_s; /* one-way latency: half the round trip of small messages */
    double bw_ab_bytes_per_s;   /* a -> b alone, one stream */
    double bw_ba_bytes_per_s;   /* b -> a alone */
    double bw_bidir_ab_bytes_per_s; /* a -> b while b -> a runs: one stream each way, each its own thread */
    double bw_bidir_ba_bytes_per_s;
    double bw_bidir_bytes_per_s; /* both at once: the sum of the two directions (iperf3 --bidir's sum) */
    double elapsed_s;
    unsigned long long started_ns; /* rb_clock_ns when the pair started (this rank's clock) */
    int pass;                   /* enum rb_check_pass */
    int of;                     /* passes REPEAT and REFERENCE: the suspect's position in the confirmation list */
    struct rb_check_wire wire[RB_WIRE_DIRS]; /* each direction's best repetition against its interface's counters */
    struct rb_check_repeat rep; /* after rb_check_merge: the repeats (the figures above stay the first pass's,
                                   measured under the same conditions as the rail's fleet) */
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
    double confirm_z;           /* a repeated suspect is slow only when its median is this many standard
                                   errors of its references' median below it, on a log scale, the spread
                                   from the MAD (0: the ratio alone) */
    const struct rb_check_pred *pred; /* per rail, or NULL */
};

enum rb_check_finding_kind {
    RB_FIND_HANG,               /* a pair did not complete */
    RB_FIND_HOST,               /* every link of a host is slow both ways on every rail: the host */
    RB_FIND_HOST_TX,            /* every link out of a host is slow, on one rail (its port) or every rail (-1) */
    RB_FIND_HOST_RX,            /* every link into a host is slow, on one rail or every rail */
    RB_FIND_HOST_RAIL,          /* every link of a host on one rail is slow both ways: its NIC, port or cable */
    RB_FIND_RAIL,               /* a whole rail is slow against the other rails */
    RB_FIND_LINK,               /* one pair is slow both ways */
    RB_FIND_ONEWAY,             /* one pair is slow one way only: host -> peer */
    RB_FIND_LATENCY,            /* one pair's latency is high */
    RB_FIND_MODEL,              /* the rail's median is below threshold x the model's prediction */
    RB_FIND_KINDS
};

/* The kind's name in result.json and the check's name: "hang", "host-tx", "one-way", ... */
const char *rb_check_kind_name(int kind);

struct rb_check_finding {
    int kind;                   /* enum rb_check_finding_kind */
    int rail;                   /* -1: every rail */
    int host, peer;             /* hosts named (-1 when none); for one-way host sends, peer receives */
    char name[64];              /* check name: "link rail1 node-b node-c" */
    char text[1024];            /* the finding in plain words */
};

/* Fleet figures of one rail. */
struct rb_check_rail_fleet {
    struct rb_outlier_fleet uni, bidir, lat;
};

struct rb_check_analysis {
    int nrails;
    struct rb_check_rail_fleet *rails;   /* nrails entries */
    bool *slow;                 /* per link: flagged (in the order given) */
    bool *dir_slow;             /* per link i: [2i] a->b, [2i+1] b->a slow (or hung) */
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

/*
 * Folds the confirmation measurements into the links they confirm: of
 * links[0..n), those of pass REPEAT set the rep of their schedule link (the
 * median of each figure over the completed repeats; a link whose every
 * repeat hung becomes a hang), those of pass REFERENCE its rep.ref (median
 * and MAD). A link with repeats and references is judged by them alone. The schedule's links are moved to the front in their order and
 * their number returned. Thread-safe; -ENOMEM when out of memory.
 */
long rb_check_merge(struct rb_check_link *links, size_t n);

/*
 * The reference for suspect links[i] in the second look: a completed link
 * other than i, preferring one slow[] does not flag, then one on i's rail,
 * then one sharing no host with i. When noise flagged every link the
 * reference is a flagged one within 2x of the fastest best figure, so never
 * a link of a bad host the suspect shares (the suspect is still judged
 * beside measurements made with it, never by the first pass). -1 when there
 * is none.
 */
long rb_check_reference(const struct rb_check_link *links, size_t n, const bool *slow, size_t i);

/* One link as JSON (every measurement; null where not measured); caller frees. */
cJSON *rb_check_link_json(const struct rb_check_link *l, const char *const *names);

#endif
