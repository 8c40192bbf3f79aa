/* railbench fabric check: each direction of each link against its rail's fleet (or its repeats' references), then who is to blame: a host's side, port or self, a rail, a link both ways or one way. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabcheck_int.h"

/* Bits of a host's side on a rail: every link out of it bad, every link into it bad. */
enum { SIDE_TX = 1, SIDE_RX = 2, SIDE_BOTH = 3 };

struct ctx {
    const struct rb_check_link *links;
    size_t n;
    const char *const *names;
    int nhosts, nrails;
    const struct rb_check_cfg *cfg;
    struct rb_check_analysis *out;
    bool (*bad)[2];             /* per link: a->b, b->a slow or hung */
    bool *lat;                  /* per link: latency high */
    bool *rail_below_model;     /* per rail: the whole rail is below the prediction */
    bool *rail_slow;            /* per rail: the whole rail is below the other rails */
    unsigned char *side;        /* [host * nrails + rail]: SIDE_* bits */
    unsigned char *host_side;   /* per host: SIDE_* bits that hold on every rail (2 rails at least) */
    size_t cap;
};

static const char *const kind_names[RB_FIND_KINDS] = {"hang",     "host", "host-tx", "host-rx",  "host-rail",
                                                      "rail",     "link", "one-way", "latency", "model"};

const char *rb_check_kind_name(int kind)
{
    return kind >= 0 && kind < RB_FIND_KINDS ? kind_names[kind] : "unknown";
}

/* "1.3 GB/s", "5.0 MB/s": decimal units as nccl-tests and iperf3 print them. */
static void fmt_bw(char *buf, size_t len, double bps)
{
    if (isnan(bps))
        snprintf(buf, len, "-");
    else if (bps >= 1e9)
        snprintf(buf, len, "%.2f GB/s", bps / 1e9);
    else if (bps >= 1e6)
        snprintf(buf, len, "%.1f MB/s", bps / 1e6);
    else
        snprintf(buf, len, "%.0f kB/s", bps / 1e3);
}

static int add_finding(struct ctx *c, int kind, int rail, int host, int peer, const char *name, const char *text)
{
    struct rb_check_analysis *o = c->out;
    if (o->nfindings == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 8;
        struct rb_check_finding *f = realloc(o->findings, cap * sizeof *f);
        if (!f)
            return -ENOMEM;
        o->findings = f;
        c->cap = cap;
    }
    struct rb_check_finding *f = &o->findings[o->nfindings++];
    *f = (struct rb_check_finding){.kind = kind, .rail = rail, .host = host, .peer = peer};
    snprintf(f->name, sizeof f->name, "%s", name);
    snprintf(f->text, sizeof f->text, "%s", text);
    return 0;
}

static bool on_rail(const struct rb_check_link *l, int rail)
{
    return l->rail == rail;
}

static bool reference_of(const struct rb_check_link *l, int k)
{
    return l->pass == RB_CHECK_PASS_REFERENCE && l->of == k;
}

/*
 * The better half of v[0..m) (the values at or above the median; at or below
 * it when lower is better), moved to the front; returns how many. A fault only
 * ever slows a link and so does noise, so the better half is the healthy
 * level even when the faulty links are up to three quarters of a rail (a bad
 * port on one of 3 hosts makes 2 of its 3 links slow).
 */
static int cmp_desc(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return isnan(a) ? 1 : isnan(b) ? -1 : a > b ? -1 : a < b;
}

static int cmp_asc(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return isnan(a) ? 1 : isnan(b) ? -1 : a < b ? -1 : a > b;
}

static size_t better_half(double *v, size_t m, bool higher_is_better)
{
    qsort(v, m, sizeof *v, higher_is_better ? cmp_desc : cmp_asc);
    size_t k = 0;
    while (k < m && !isnan(v[k]))
        k++;
    return (k + 1) / 2; /* the better half by rank: ties with the slow ones do not drag it down */
}

/*
 * Median and MAD of the completed links[j] that match(links[j], x): f[0]
 * each direction alone, f[1] each direction in both at once, f[2] p50 (of
 * their better half with upper); with log_mad, also the MADs of their
 * natural logs; with worst, the worst value of each (lowest bandwidth, highest p50). tmp holds 5n doubles. Returns how many links matched, or -ENOMEM.
 */
static long fleets_of(const struct rb_check_link *links, size_t n, bool (*match)(const struct rb_check_link *, int),
                      int x, bool upper, double *tmp, struct rb_outlier_fleet f[3], double *log_mad, double *worst)
{
    double *v[3] = {tmp, tmp + 2 * n, tmp + 4 * n};
    size_t m[3] = {0, 0, 0};
    for (size_t j = 0; j < n; j++) {
        const struct rb_check_link *l = &links[j];
        if (!match(l, x) || l->status != RB_CHECK_OK)
            continue;
        v[0][m[0]++] = l->bw_ab_bytes_per_s;
        v[0][m[0]++] = l->bw_ba_bytes_per_s;
        v[1][m[1]++] = l->bw_bidir_ab_bytes_per_s;
        v[1][m[1]++] = l->bw_bidir_ba_bytes_per_s;
        v[2][m[2]++] = l->lat_p50_s;
    }
    long matched = (long)m[2];
    for (int w = 0; w < 3 && worst; w++) {
        worst[w] = NAN;
        for (size_t j = 0; j < m[w]; j++)
            if (!isnan(v[w][j]) && (isnan(worst[w]) || (w < 2 ? v[w][j] < worst[w] : v[w][j] > worst[w])))
                worst[w] = v[w][j];
    }
    for (int w = 0; w < 3; w++) {
        if (upper)
            m[w] = better_half(v[w], m[w], w < 2);
        if (rb_outlier_fleet(v[w], m[w], &f[w]) == -ENOMEM)
            return -ENOMEM;
        if (!log_mad)
            continue;
        struct rb_outlier_fleet g;
        for (size_t j = 0; j < m[w]; j++)
            v[w][j] = v[w][j] > 0 ? log(v[w][j]) : NAN;
        if (rb_outlier_fleet(v[w], m[w], &g) == -ENOMEM)
            return -ENOMEM;
        log_mad[w] = g.n ? g.mad : 0;
    }
    return matched;
}

/* Per rail, the healthy level of the completed links (median and MAD of their better half): directions alone, in both at once, p50. */
static int rail_fleets(struct ctx *c)
{
    double *tmp = malloc((5 * c->n + 1) * sizeof *tmp);
    int rc = tmp ? 0 : -ENOMEM;
    for (int r = 0; r < c->nrails && !rc; r++) {
        struct rb_check_rail_fleet *f = &c->out->rails[r];
        struct rb_outlier_fleet three[3];
        if (fleets_of(c->links, c->n, on_rail, r, true, tmp, three, NULL, NULL) < 0)
            rc = -ENOMEM;
        f->uni = three[0];
        f->bidir = three[1];
        f->lat = three[2];
    }
    free(tmp);
    return rc;
}

/* Was link i measured again beside references? Then those, not the first pass and its fleet, judge it. */
static bool confirmed(const struct rb_check_link *l)
{
    return l->rep.n > 0 && l->rep.ref.n > 0;
}

/* The figures link i is judged by: a->b, b->a alone, a->b, b->a in both at once, p50 (its repeats' medians when confirmed). */
struct figs {
    double alone[2], both[2], lat;
};

static struct figs figs_of(const struct rb_check_link *l)
{
    if (l->rep.n > 0)
        return (struct figs){{l->rep.bw_ab_bytes_per_s, l->rep.bw_ba_bytes_per_s},
                             {l->rep.bw_bidir_ab_bytes_per_s, l->rep.bw_bidir_ba_bytes_per_s}, l->rep.lat_p50_s};
    return (struct figs){{l->bw_ab_bytes_per_s, l->bw_ba_bytes_per_s},
                         {l->bw_bidir_ab_bytes_per_s, l->bw_bidir_ba_bytes_per_s}, l->lat_p50_s};
}

/* The best repeat of a confirmed link, in the order of figs: rep.best is lat, ab, ba, both ab, both ba. */
static struct figs best_of(const struct rb_check_link *l)
{
    const double *b = l->rep.best;
    return (struct figs){{b[1], b[2]}, {b[3], b[4]}, b[0]};
}

/* What link i's figures are judged against: its references when it was confirmed, else its rail's fleet. */
static const struct rb_outlier_fleet *against(const struct ctx *c, size_t i, int which)
{
    const struct rb_check_link *l = &c->links[i];
    const struct rb_check_rail_fleet *f = &c->out->rails[l->rail];
    bool ref = confirmed(l);
    return which == 0 ? (ref ? &l->rep.ref.uni : &f->uni) : which == 1 ? (ref ? &l->rep.ref.bidir : &f->bidir)
                                                                        : (ref ? &l->rep.ref.lat : &f->lat);
}

/*
 * The rule for link i against what it is judged against (which: 0 alone, 1
 * in both at once, 2 latency): x's ratio to the median. A confirmed link
 * (x its repeats' median, best its best repeat) is slow when even its best
 * repeat is beyond the threshold and its median lies beyond the robust
 * spread of its references, on a log scale because noise on a shared host
 * multiplies a figure (a busy core halves it, or worse) rather than adding
 * to it: log(median / x) at least confirm_z standard errors of the
 * references' median (1.2533 x 1.4826 x MAD(log) / sqrt(n)).
 */
static bool low(const struct ctx *c, size_t i, int which, double x, double best)
{
    const struct rb_check_link *l = &c->links[i];
    const struct rb_check_cfg *g = c->cfg;
    if (which == 2 && !(g->lat_threshold > 0))
        return false;
    if (l->rep.n > 0 && l->rep.ref.n == 0) /* repeated, but no link was left to measure beside it */
        x = best;
    if (!confirmed(l))
        return which == 2 ? rb_outlier_is(against(c, i, 2), x, false, 1.0 / g->lat_threshold, g->min_z)
                          : rb_outlier_is(against(c, i, which), x, true, g->threshold, g->min_z);
    double ratio = rb_outlier_ratio(against(c, i, which), x), rbest = rb_outlier_ratio(against(c, i, which), best);
    if (isnan(ratio) || ratio <= 0)
        return false;
    /*
     * Even its best repeat is beyond the threshold, and beyond the worst of
     * its references (no overlap at all: a busy moment in a repeat, or a
     * reference's good one, cannot make a link slow).
     */
    double worst = l->rep.ref.worst[which];
    bool beyond = which == 2 ? rbest > g->lat_threshold && best > worst : rbest < g->threshold && best < worst;
    /* The references' median is known to its standard error, 1.2533 sigma / sqrt(n), sigma = 1.4826 MAD. */
    const struct rb_outlier_fleet *f = against(c, i, which);
    double se = 1.2533 * 1.4826 * l->rep.ref.log_mad[which] / sqrt((double)(f->n ? f->n : 1));
    return beyond && fabs(log(ratio)) >= g->confirm_z * se;
}

/* The rails as a whole: one far below the others' median, one below the model's prediction. */
static int judge_rails(struct ctx *c)
{
    const struct rb_check_cfg *g = c->cfg;
    double *others = malloc(((size_t)c->nrails + 1) * sizeof *others);
    if (!others)
        return -ENOMEM;
    for (int r = 0; r < c->nrails; r++) {
        const struct rb_check_pred *p = g->pred ? &g->pred[r] : NULL;
        double med = c->out->rails[r].uni.median;
        c->rail_below_model[r] = p && p->bw_bytes_per_s > 0 && med < g->threshold * p->bw_bytes_per_s;
        size_t k = 0;
        for (int q = 0; q < c->nrails; q++)
            if (q != r)
                others[k++] = c->out->rails[q].uni.median;
        /* The rail's best direction, not its median: one bad host pulls a small rail's median down. */
        double best = -INFINITY;
        for (size_t i = 0; i < c->n; i++) {
            const struct rb_check_link *l = &c->links[i];
            if (l->rail == r && l->status == RB_CHECK_OK)
                best = fmax(best, fmax(l->bw_ab_bytes_per_s, l->bw_ba_bytes_per_s));
        }
        struct rb_outlier_fleet f;
        c->rail_slow[r] = k > 0 && !isnan(med) && rb_outlier_fleet(others, k, &f) == 0 && best < g->threshold * f.median;
    }
    free(others);
    return 0;
}

/* Each direction of each link: slow alone, slow while the other way runs, below the model; hung both ways. */
static void judge_links(struct ctx *c)
{
    const struct rb_check_cfg *g = c->cfg;
    for (size_t i = 0; i < c->n; i++) {
        const struct rb_check_link *l = &c->links[i];
        if (l->status == RB_CHECK_TIMEOUT) {
            c->bad[i][0] = c->bad[i][1] = true;
            continue;
        }
        if (l->status != RB_CHECK_OK)
            continue;
        const struct rb_check_pred *p = g->pred ? &g->pred[l->rail] : NULL;
        bool model = p && p->bw_bytes_per_s > 0 && !c->rail_below_model[l->rail];
        struct figs f = figs_of(l), b = l->rep.n > 0 ? best_of(l) : f;
        bool alone[2] = {low(c, i, 0, f.alone[0], b.alone[0]), low(c, i, 0, f.alone[1], b.alone[1])};
        for (int d = 0; d < 2; d++)
            /*
             * Slow while the other way runs counts only when the other way is
             * normal alone: a direction throttled on its own also delays the
             * ACKs of the reverse stream queued behind it, which is then slow
             * in both at once without a fault of its own.
             */
            c->bad[i][d] = alone[d] || (low(c, i, 1, f.both[d], b.both[d]) && !alone[1 - d]) ||
                           (model && f.alone[d] < g->threshold * p->bw_bytes_per_s);
        c->lat[i] = low(c, i, 2, f.lat, b.lat);
        c->out->slow[i] = c->bad[i][0] || c->bad[i][1] || c->lat[i];
    }
}

/* Link i's direction d as a fraction of what it is judged against: the worse of alone and in both at once. */
static double dir_ratio(const struct ctx *c, size_t i, int d, bool *in_both)
{
    struct figs f = figs_of(&c->links[i]);
    double x = rb_outlier_ratio(against(c, i, 0), f.alone[d]);
    double y = rb_outlier_ratio(against(c, i, 1), f.both[d]);
    *in_both = !isnan(y) && (isnan(x) || y < x);
    return *in_both ? y : x;
}

/* "node-a → node-c at 0.01× the rail's level (3.7 MB/s vs 2.31 GB/s)" for link i's direction d. */
static void dir_text(const struct ctx *c, size_t i, int d, char *buf, size_t len)
{
    const struct rb_check_link *l = &c->links[i];
    bool both;
    double r = dir_ratio(c, i, d, &both);
    const struct rb_outlier_fleet *f = against(c, i, both ? 1 : 0);
    struct figs g = figs_of(l);
    double x = both ? g.both[d] : g.alone[d];
    char v[32], m[32];
    fmt_bw(v, sizeof v, x);
    fmt_bw(m, sizeof m, f->median);
    snprintf(buf, len, "%s → %s%s at %.2f× the %s (%s vs %s)", c->names[d ? l->b : l->a], c->names[d ? l->a : l->b],
             both ? " while the other way runs" : "", r,
             confirmed(l) ? "reference links' median" : "rail's level", v, m);
}

/* Host h's links on rail r, direction by direction: how many leave it and arrive, and how many of each are bad. */
static void host_dirs(const struct ctx *c, int h, int r, int *out_n, int *out_bad, int *in_n, int *in_bad)
{
    *out_n = *out_bad = *in_n = *in_bad = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct rb_check_link *l = &c->links[i];
        if (l->rail != r || (l->a != h && l->b != h) || l->status == RB_CHECK_SKIPPED)
            continue;
        int out = l->a == h ? 0 : 1; /* the direction that leaves h */
        (*out_n)++;
        (*in_n)++;
        *out_bad += c->bad[i][out];
        *in_bad += c->bad[i][1 - out];
    }
}

/* The worst direction leaving (tx), entering (rx) or either (both) host h on rail r, as "0.01× ... (x vs y)". */
static void host_worst(const struct ctx *c, int h, int r, int side, char *buf, size_t len)
{
    double worst = INFINITY;
    size_t wi = 0;
    int wd = -1;
    for (size_t i = 0; i < c->n; i++) {
        const struct rb_check_link *l = &c->links[i];
        if (l->rail != r || (l->a != h && l->b != h) || l->status != RB_CHECK_OK)
            continue;
        for (int d = 0; d < 2; d++) {
            bool leaves = (d == 0) == (l->a == h), both;
            if ((leaves && !(side & SIDE_TX)) || (!leaves && !(side & SIDE_RX)))
                continue;
            double x = dir_ratio(c, i, d, &both);
            if (!isnan(x) && x < worst) {
                worst = x;
                wi = i;
                wd = d;
            }
        }
    }
    if (wd < 0)
        snprintf(buf, len, "every one hangs");
    else
        dir_text(c, wi, wd, buf, len);
}

/* Each host's sides per rail, and the sides that hold on every rail. */
static void judge_hosts(struct ctx *c)
{
    for (int h = 0; h < c->nhosts; h++) {
        unsigned char every = SIDE_BOTH;
        for (int r = 0; r < c->nrails; r++) {
            int on, ob, in, ib;
            host_dirs(c, h, r, &on, &ob, &in, &ib);
            unsigned char s = (unsigned char)((on >= 2 && ob == on ? SIDE_TX : 0) | (in >= 2 && ib == in ? SIDE_RX : 0));
            c->side[h * c->nrails + r] = s;
            every &= s;
        }
        c->host_side[h] = c->nrails >= 2 ? every : 0;
    }
}

/* One finding per host side that explains its links: the whole host, a side on every rail, a port or side on a rail. */
static int host_findings(struct ctx *c)
{
    char name[64], text[1024], worst[256];
    for (int h = 0; h < c->nhosts; h++) {
        const char *H = c->names[h];
        unsigned char every = c->host_side[h];
        if (every == SIDE_BOTH) {
            snprintf(name, sizeof name, "host %s", H);
            snprintf(text, sizeof text, "%s: every link on every rail is slow or hangs both ways → suspect the host "
                     "itself (CPU, memory, PCIe, driver), not a cable", H);
            if (add_finding(c, RB_FIND_HOST, -1, h, -1, name, text))
                return -ENOMEM;
            continue;
        }
        if (every) {
            bool tx = every == SIDE_TX;
            snprintf(name, sizeof name, "%s %s", tx ? "host-tx" : "host-rx", H);
            snprintf(text, sizeof text, "%s: every link %s it is slow on every rail, every link %s it normal → "
                     "suspect %s's %s side itself (driver, queues, CPU), not one cable", H, tx ? "out of" : "into",
                     tx ? "into" : "out of", H, tx ? "transmit" : "receive");
            if (add_finding(c, tx ? RB_FIND_HOST_TX : RB_FIND_HOST_RX, -1, h, -1, name, text))
                return -ENOMEM;
        }
        for (int r = 0; r < c->nrails; r++) {
            unsigned char s = (unsigned char)(c->side[h * c->nrails + r] & ~every);
            if (!s)
                continue;
            host_worst(c, h, r, s, worst, sizeof worst);
            int kind = s == SIDE_BOTH ? RB_FIND_HOST_RAIL : s == SIDE_TX ? RB_FIND_HOST_TX : RB_FIND_HOST_RX;
            if (kind == RB_FIND_HOST_RAIL) {
                snprintf(name, sizeof name, "host-rail rail%d %s", r, H);
                snprintf(text, sizeof text, "rail %d: every link of %s is slow or hangs both ways (worst: %s); its "
                         "other rails are normal → suspect %s's rail %d NIC, port or cable", r, H, worst, H, r);
            } else {
                bool tx = kind == RB_FIND_HOST_TX;
                snprintf(name, sizeof name, "%s rail%d %s", tx ? "host-tx" : "host-rx", r, H);
                snprintf(text, sizeof text, "rail %d: every link %s %s is slow (worst: %s), every link %s it normal → "
                         "suspect %s's rail %d %s side (NIC queue or shaper, the cable's %s fibre, the switch port's "
                         "%s)", r, tx ? "out of" : "into", H, worst, tx ? "into" : "out of", H, r,
                         tx ? "transmit" : "receive", tx ? "send" : "receive", tx ? "ingress" : "egress");
            }
            if (add_finding(c, kind, r, h, -1, name, text))
                return -ENOMEM;
        }
    }
    return 0;
}

/* Is link i's direction d explained by a host side (the sender's transmit, the receiver's receive) or its rail? */
static bool explained(const struct ctx *c, size_t i, int d)
{
    const struct rb_check_link *l = &c->links[i];
    int src = d ? l->b : l->a, dst = d ? l->a : l->b;
    return (c->side[src * c->nrails + l->rail] & SIDE_TX) || (c->side[dst * c->nrails + l->rail] & SIDE_RX) ||
           c->rail_slow[l->rail];
}

/* "every other link of a and b on rail r is normal" or who else is bad, for a pair finding. */
static void others(const struct ctx *c, size_t i, char *buf, size_t len)
{
    const struct rb_check_link *l = &c->links[i];
    int bad_a = 0, bad_b = 0;
    for (size_t j = 0; j < c->n; j++) {
        const struct rb_check_link *m = &c->links[j];
        if (j == i || m->rail != l->rail || !(c->bad[j][0] || c->bad[j][1]))
            continue;
        bad_a += m->a == l->a || m->b == l->a;
        bad_b += m->a == l->b || m->b == l->b;
    }
    if (bad_a == 0 && bad_b == 0)
        snprintf(buf, len, "every other link of %s and %s on rail %d is normal", c->names[l->a], c->names[l->b],
                 l->rail);
    else
        snprintf(buf, len, "%s has %d and %s %d other bad links on rail %d", c->names[l->a], bad_a, c->names[l->b],
                 bad_b, l->rail);
}

/* Hangs, then each link's bad directions no host side explains: both ways, one way; else its latency. */
static int pair_findings(struct ctx *c)
{
    char name[64], text[1024], x[256], y[256], why[192];
    for (size_t i = 0; i < c->n; i++) {
        const struct rb_check_link *l = &c->links[i];
        const char *A = c->names[l->a], *B = c->names[l->b];
        int r = l->rail;
        if (l->status == RB_CHECK_TIMEOUT) {
            snprintf(text, sizeof text, "rail %d: %s ⇄ %s did not complete within the timeout (stage %s%s%s); the "
                     "pair was skipped from then on", r, A, B, l->stage, l->error[0] ? ": " : "", l->error);
            snprintf(name, sizeof name, "hang rail%d %s %s", r, A, B);
            if (add_finding(c, RB_FIND_HANG, r, l->a, l->b, name, text))
                return -ENOMEM;
            continue;
        }
        if (l->status != RB_CHECK_OK || !c->out->slow[i])
            continue;
        bool d0 = c->bad[i][0] && !explained(c, i, 0), d1 = c->bad[i][1] && !explained(c, i, 1);
        others(c, i, why, sizeof why);
        if (d0 && d1) {
            dir_text(c, i, 0, x, sizeof x);
            dir_text(c, i, 1, y, sizeof y);
            snprintf(text, sizeof text, "rail %d: %s ⇄ %s slow both ways: %s; %s; %s → suspect the %s/%s cable or "
                     "port (or the switch path between them)", r, A, B, x, y, why, A, B);
            snprintf(name, sizeof name, "link rail%d %s %s", r, A, B);
            if (add_finding(c, RB_FIND_LINK, r, l->a, l->b, name, text))
                return -ENOMEM;
        } else if (d0 || d1) {
            int d = d0 ? 0 : 1, src = d ? l->b : l->a, dst = d ? l->a : l->b;
            char v[32], w[32];
            struct figs g = figs_of(l);
            dir_text(c, i, d, x, sizeof x);
            fmt_bw(v, sizeof v, g.alone[1 - d]);
            fmt_bw(w, sizeof w, g.both[1 - d]);
            snprintf(text, sizeof text, "rail %d: one way only: %s, but %s → %s normal alone (%s; %s while both run); "
                     "%s → suspect %s's transmit path to %s or %s's receive side (a shaper or policer on that "
                     "destination, one fibre of the pair)", r, x, c->names[dst], c->names[src], v, w, why,
                     c->names[src], c->names[dst], c->names[dst]);
            snprintf(name, sizeof name, "one-way rail%d %s %s", r, c->names[src], c->names[dst]);
            if (add_finding(c, RB_FIND_ONEWAY, r, src, dst, name, text))
                return -ENOMEM;
        } else if (c->lat[i] && !c->bad[i][0] && !c->bad[i][1] && !c->rail_slow[r]) {
            const struct rb_outlier_fleet *f = against(c, i, 2);
            double p50 = figs_of(l).lat;
            snprintf(text, sizeof text, "rail %d: %s ⇄ %s one-way latency p50 %.1f us, %.1f× the %s (%.1f us); %s",
                     r, A, B, p50 * 1e6, rb_outlier_ratio(f, p50), confirmed(l) ? "reference links' median" : "rail's level",
                     f->median * 1e6, why);
            snprintf(name, sizeof name, "latency rail%d %s %s", r, A, B);
            if (add_finding(c, RB_FIND_LATENCY, r, l->a, l->b, name, text))
                return -ENOMEM;
        }
    }
    return 0;
}

/* A whole rail below the other rails, or below what the model predicts (--topology). */
static int rail_findings(struct ctx *c)
{
    char name[64], text[1024], x[32], y[32];
    for (int r = 0; r < c->nrails; r++) {
        fmt_bw(x, sizeof x, c->out->rails[r].uni.median);
        if (c->rail_slow[r]) {
            double others = 0;
            for (int q = 0; q < c->nrails; q++)
                if (q != r && c->out->rails[q].uni.median > others)
                    others = c->out->rails[q].uni.median;
            fmt_bw(y, sizeof y, others);
            snprintf(text, sizeof text, "rail %d: every link is slow, its level at %s, below %.2f× the other rails' "
                     "level (best %s) → the whole rail: its switch, cabling or settings", r, x, c->cfg->threshold, y);
            snprintf(name, sizeof name, "rail rail%d", r);
            if (add_finding(c, RB_FIND_RAIL, r, -1, -1, name, text))
                return -ENOMEM;
        }
        if (c->rail_below_model[r]) {
            fmt_bw(y, sizeof y, c->cfg->pred[r].bw_bytes_per_s);
            snprintf(text, sizeof text, "rail %d: the rail's level runs at %.2f× the model's prediction (%s vs %s) → "
                     "the whole rail (switch, cabling, settings) or the topology file is off",
                     r, c->out->rails[r].uni.median / c->cfg->pred[r].bw_bytes_per_s, x, y);
            snprintf(name, sizeof name, "model rail%d", r);
            if (add_finding(c, RB_FIND_MODEL, r, -1, -1, name, text))
                return -ENOMEM;
        }
    }
    return 0;
}

static void ctx_free(struct ctx *c)
{
    free(c->bad);
    free(c->lat);
    free(c->rail_below_model);
    free(c->rail_slow);
    free(c->side);
    free(c->host_side);
}

int rb_check_analyse(const struct rb_check_link *links, size_t n, const char *const *names, int nhosts, int nrails,
                     const struct rb_check_cfg *cfg, struct rb_check_analysis *out)
{
    memset(out, 0, sizeof *out);
    struct ctx c = {.links = links, .n = n, .names = names, .nhosts = nhosts, .nrails = nrails, .cfg = cfg, .out = out};
    out->nrails = nrails;
    out->rails = calloc((size_t)nrails + 1, sizeof *out->rails);
    out->slow = calloc(n + 1, sizeof *out->slow);
    out->dir_slow = calloc(2 * n + 1, sizeof *out->dir_slow);
    c.bad = calloc(n + 1, sizeof *c.bad);
    c.lat = calloc(n + 1, sizeof *c.lat);
    c.rail_below_model = calloc((size_t)nrails + 1, sizeof *c.rail_below_model);
    c.rail_slow = calloc((size_t)nrails + 1, sizeof *c.rail_slow);
    c.side = calloc((size_t)nhosts * (size_t)nrails + 1, 1);
    c.host_side = calloc((size_t)nhosts + 1, 1);
    int rc = -ENOMEM;
    if (!out->rails || !out->slow || !out->dir_slow || !c.bad || !c.lat || !c.rail_below_model || !c.rail_slow || !c.side ||
        !c.host_side)
        goto fail;
    if ((rc = rail_fleets(&c)) || (rc = judge_rails(&c)))
        goto fail;
    judge_links(&c);
    judge_hosts(&c);
    if ((rc = rail_findings(&c)) || (rc = host_findings(&c)) || (rc = pair_findings(&c)))
        goto fail;
    for (size_t i = 0; i < n; i++) {
        out->dir_slow[2 * i] = c.bad[i][0];
        out->dir_slow[2 * i + 1] = c.bad[i][1];
    }
    ctx_free(&c);
    return 0;
fail:
    ctx_free(&c);
    rb_check_analysis_free(out);
    return rc;
}

void rb_check_analysis_free(struct rb_check_analysis *a)
{
    if (!a)
        return;
    free(a->rails);
    free(a->slow);
    free(a->dir_slow);
    free(a->findings);
    memset(a, 0, sizeof *a);
}

/* ---------------------------------------------------------------- folding the confirmation in */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Median of the completed samples' field at offset off (NaN when none). */
static double median_of(const struct rb_check_link *const *s, size_t k, size_t off, double *tmp)
{
    size_t m = 0;
    for (size_t j = 0; j < k; j++) {
        double v = *(const double *)(const void *)((const char *)s[j] + off);
        if (s[j]->status == RB_CHECK_OK && !isnan(v))
            tmp[m++] = v;
    }
    if (m == 0)
        return NAN;
    qsort(tmp, m, sizeof *tmp, cmp_double);
    return m % 2 ? tmp[m / 2] : (tmp[m / 2 - 1] + tmp[m / 2]) / 2;
}

/* The best completed sample's field at offset off: the lowest when lower is better, else the highest (NaN when none). */
static double best_of_samples(const struct rb_check_link *const *s, size_t k, size_t off, bool lower)
{
    double best = NAN;
    for (size_t j = 0; j < k; j++) {
        double v = *(const double *)(const void *)((const char *)s[j] + off);
        if (s[j]->status == RB_CHECK_OK && !isnan(v) && (isnan(best) || (lower ? v < best : v > best)))
            best = v;
    }
    return best;
}

/* The references of suspect k: median and MAD of each kind of figure over every reference measurement of it. */
static int fold_refs(const struct rb_check_link *links, size_t n, int k, struct rb_check_ref *ref, double *tmp)
{
    struct rb_outlier_fleet three[3];
    *ref = (struct rb_check_ref){0};
    long m = fleets_of(links, n, reference_of, k, false, tmp, three, ref->log_mad, ref->worst);
    if (m < 0)
        return -ENOMEM;
    ref->n = (int)m;
    ref->uni = three[0];
    ref->bidir = three[1];
    ref->lat = three[2];
    return 0;
}

long rb_check_merge(struct rb_check_link *links, size_t n)
{
    static const size_t fields[] = {
        offsetof(struct rb_check_link, lat_p50_s), offsetof(struct rb_check_link, bw_ab_bytes_per_s),
        offsetof(struct rb_check_link, bw_ba_bytes_per_s), offsetof(struct rb_check_link, bw_bidir_ab_bytes_per_s),
        offsetof(struct rb_check_link, bw_bidir_ba_bytes_per_s),
    };
    const struct rb_check_link **s = malloc((n + 1) * sizeof *s);
    double *tmp = malloc((6 * n + 1) * sizeof *tmp);
    struct rb_check_link *merged = malloc((n + 1) * sizeof *merged);
    long rc = s && tmp && merged ? 0 : -ENOMEM;
    size_t kept = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (links[i].pass != RB_CHECK_PASS_SCHEDULE)
            continue;
        struct rb_check_link l = links[i];
        size_t k = 0, done = 0;
        int of = -1;
        for (size_t j = 0; j < n; j++)
            if (links[j].pass == RB_CHECK_PASS_REPEAT && links[j].a == l.a && links[j].b == l.b &&
                links[j].rail == l.rail) {
                s[k++] = &links[j];
                done += links[j].status == RB_CHECK_OK;
                of = links[j].of;
            }
        if (k > 0 && done == 0) {
            /* Every repeat hung: the link hangs, as the last repeat says. */
            const struct rb_check_link *last = s[k - 1];
            l.status = RB_CHECK_TIMEOUT;
            memcpy(l.stage, last->stage, sizeof l.stage);
            memcpy(l.error, last->error, sizeof l.error);
        } else if (k > 0) {
            double m[5];
            for (size_t f = 0; f < sizeof fields / sizeof *fields; f++)
                m[f] = median_of(s, k, fields[f], tmp);
            l.rep = (struct rb_check_repeat){.n = (int)done, .lat_p50_s = m[0], .bw_ab_bytes_per_s = m[1],
                                             .bw_ba_bytes_per_s = m[2], .bw_bidir_ab_bytes_per_s = m[3],
                                             .bw_bidir_ba_bytes_per_s = m[4]};
            for (size_t f = 0; f < sizeof fields / sizeof *fields; f++)
                l.rep.best[f] = best_of_samples(s, k, fields[f], f == 0);
            rc = fold_refs(links, n, of, &l.rep.ref, tmp);
        }
        merged[kept++] = l;
    }
    if (!rc) {
        memcpy(links, merged, kept * sizeof *links);
        rc = (long)kept;
    }
    free(s);
    free(tmp);
    free(merged);
    return rc;
}

/* A link's best bandwidth figure: noise lowers one figure of a healthy link, a fault every figure of a slow one. */
static double fastest_figure(const struct rb_check_link *l)
{
    const double v[] = {l->bw_ab_bytes_per_s, l->bw_ba_bytes_per_s, l->bw_bidir_ab_bytes_per_s,
                        l->bw_bidir_ba_bytes_per_s};
    double best = 0;
    for (size_t k = 0; k < sizeof v / sizeof *v; k++)
        if (v[k] > best)
            best = v[k];
    return best;
}

/* How good a reference link j is for suspect s: unflagged first, then on s's rail. */
static int reference_score(const struct rb_check_link *s, const struct rb_check_link *l, bool slow)
{
    return (slow ? 0 : 2) + (l->rail == s->rail);
}

long rb_check_reference(const struct rb_check_link *links, size_t n, const bool *slow, size_t i)
{
    const struct rb_check_link *s = &links[i];
    int top = -1;
    double fastest = 0;
    for (size_t j = 0; j < n; j++)
        if (j != i && links[j].status == RB_CHECK_OK) {
            int sc = reference_score(s, &links[j], slow[j]);
            double sp = fastest_figure(&links[j]);
            if (sc > top || (sc == top && sp > fastest)) {
                top = sc;
                fastest = sp;
            }
        }
    /*
     * Among the best-scored links (flagged ones only within 2x of the fastest
     * figure): one sharing no host with the suspect first, then the first
     * found (of flagged ones, the fastest). When noise flagged every link, a
     * link of a bad host is slow in every figure, and one that shares that
     * host with the suspect would clear it (seen on the busy box: host 3's
     * port throttled, every link flagged, 2-3 judged beside 1-3 and found
     * normal, so host 3 was not named).
     */
    long best = -1;
    bool apart = false;
    double speed = 0;
    for (size_t j = 0; j < n; j++) {
        const struct rb_check_link *l = &links[j];
        if (j == i || l->status != RB_CHECK_OK || reference_score(s, l, slow[j]) != top)
            continue;
        double sp = fastest_figure(l);
        bool away = l->a != s->a && l->a != s->b && l->b != s->a && l->b != s->b;
        if (slow[j] && !(sp >= 0.5 * fastest))
            continue;
        if (best < 0 || (away && !apart) || (away == apart && slow[j] && sp > speed)) {
            best = (long)j;
            apart = away;
            speed = sp;
        }
    }
    return best;
}
