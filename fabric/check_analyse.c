/* railbench fabric check: each link against its rail's fleet and the model, then attribution to a link, a host port or a host. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabcheck_int.h"
#include "railbench/result.h"

/* Per link verdicts, before attribution. */
struct verdict {
    bool ab, ba, bidir, lat, model;
};

struct ctx {
    const struct rb_check_link *links;
    size_t n;
    const char *const *names;
    int nhosts, nrails;
    const struct rb_check_cfg *cfg;
    struct rb_check_analysis *out;
    struct verdict *v;
    bool *rail_below_model;     /* per rail: the whole rail is below the prediction */
    bool *host_rail;            /* [host * nrails + rail]: every link of the host on the rail is bad */
    size_t cap;
};

/* "1.3 GB/s", "5.0 MB/s": decimal units as nccl-tests prints them. */
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

static double min2(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a < b ? a : b;
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

/* Fleet median and MAD per rail of the completed links. */
static int rail_fleets(struct ctx *c)
{
    double *uni = malloc((2 * c->n + 1) * sizeof *uni), *bi = malloc((c->n + 1) * sizeof *bi),
           *lat = malloc((c->n + 1) * sizeof *lat);
    int rc = uni && bi && lat ? 0 : -ENOMEM;
    for (int r = 0; r < c->nrails && !rc; r++) {
        size_t nu = 0, nb = 0;
        for (size_t i = 0; i < c->n; i++) {
            const struct rb_check_link *l = &c->links[i];
            if (l->rail != r || l->status != RB_CHECK_OK)
                continue;
            uni[nu++] = l->bw_ab_bytes_per_s;
            uni[nu++] = l->bw_ba_bytes_per_s;
            bi[nb] = l->bw_bidir_bytes_per_s;
            lat[nb++] = l->lat_p50_s;
        }
        struct rb_check_rail_fleet *f = &c->out->rails[r];
        if ((rb_outlier_fleet(uni, nu, &f->uni) == -ENOMEM) || (rb_outlier_fleet(bi, nb, &f->bidir) == -ENOMEM) ||
            (rb_outlier_fleet(lat, nb, &f->lat) == -ENOMEM))
            rc = -ENOMEM;
    }
    free(uni);
    free(bi);
    free(lat);
    return rc;
}

/* Each completed link against its rail's fleet and, where the rail as a whole meets it, the prediction. */
static void judge_links(struct ctx *c)
{
    const struct rb_check_cfg *g = c->cfg;
    for (int r = 0; r < c->nrails; r++) {
        const struct rb_check_pred *p = g->pred ? &g->pred[r] : NULL;
        c->rail_below_model[r] = p && p->bw_bytes_per_s > 0 &&
                                 c->out->rails[r].uni.median < g->threshold * p->bw_bytes_per_s;
    }
    for (size_t i = 0; i < c->n; i++) {
        const struct rb_check_link *l = &c->links[i];
        struct verdict *v = &c->v[i];
        if (l->status != RB_CHECK_OK)
            continue;
        const struct rb_check_rail_fleet *f = &c->out->rails[l->rail];
        v->ab = rb_outlier_is(&f->uni, l->bw_ab_bytes_per_s, true, g->threshold, g->min_z);
        v->ba = rb_outlier_is(&f->uni, l->bw_ba_bytes_per_s, true, g->threshold, g->min_z);
        v->bidir = rb_outlier_is(&f->bidir, l->bw_bidir_bytes_per_s, true, g->threshold, g->min_z);
        v->lat = g->lat_threshold > 0 && rb_outlier_is(&f->lat, l->lat_p50_s, false, 1.0 / g->lat_threshold, g->min_z);
        const struct rb_check_pred *p = g->pred ? &g->pred[l->rail] : NULL;
        if (p && p->bw_bytes_per_s > 0 && !c->rail_below_model[l->rail]) {
            double lo = min2(l->bw_ab_bytes_per_s, l->bw_ba_bytes_per_s);
            v->model = lo < g->threshold * p->bw_bytes_per_s;
        }
        c->out->slow[i] = v->ab || v->ba || v->bidir || v->lat || v->model;
    }
}

/* Is link i bad (slow or not completed)? */
static bool bad(const struct ctx *c, size_t i)
{
    return c->links[i].status == RB_CHECK_TIMEOUT || c->out->slow[i];
}

/* Links of host h on rail r: how many, and how many are bad (other than link skip). */
static void host_links(const struct ctx *c, int h, int r, size_t skip, int *total, int *nbad)
{
    *total = *nbad = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct rb_check_link *l = &c->links[i];
        if (i == skip || l->rail != r || (l->a != h && l->b != h) || l->status == RB_CHECK_SKIPPED)
            continue;
        (*total)++;
        *nbad += bad(c, i);
    }
}

/* Hosts whose every link on a rail is bad (two links at least): one finding for the host's port on that rail. */
static int attribute_hosts(struct ctx *c)
{
    char name[64], text[512], lo[32], med[32];
    for (int h = 0; h < c->nhosts; h++) {
        int rails_bad = 0;
        for (int r = 0; r < c->nrails; r++) {
            int total, nbad;
            host_links(c, h, r, (size_t)-1, &total, &nbad);
            c->host_rail[h * c->nrails + r] = total >= 2 && nbad == total;
            rails_bad += c->host_rail[h * c->nrails + r];
        }
        if (c->nrails >= 2 && rails_bad == c->nrails) {
            snprintf(name, sizeof name, "host %s", c->names[h]);
            snprintf(text, sizeof text,
                     "%s: every link on every rail is slow or hangs → suspect the host itself (CPU, memory, PCIe, "
                     "driver), not a cable", c->names[h]);
            if (add_finding(c, RB_FIND_HOST, -1, h, -1, name, text))
                return -ENOMEM;
            continue;
        }
        for (int r = 0; r < c->nrails; r++) {
            if (!c->host_rail[h * c->nrails + r])
                continue;
            /* The worst completed direction of the host's links on the rail, for the numbers. */
            double worst = NAN;
            for (size_t i = 0; i < c->n; i++) {
                const struct rb_check_link *l = &c->links[i];
                if (l->rail == r && (l->a == h || l->b == h) && l->status == RB_CHECK_OK)
                    worst = min2(worst, min2(l->bw_ab_bytes_per_s, l->bw_ba_bytes_per_s));
            }
            const struct rb_outlier_fleet *f = &c->out->rails[r].uni;
            fmt_bw(lo, sizeof lo, worst);
            fmt_bw(med, sizeof med, f->median);
            snprintf(name, sizeof name, "host-rail rail%d %s", r, c->names[h]);
            if (isnan(worst))
                snprintf(text, sizeof text, "rail %d: every link of %s hangs → suspect %s's rail %d NIC, port or cable",
                         r, c->names[h], c->names[h], r);
            else
                snprintf(text, sizeof text,
                         "rail %d: every link of %s is slow, down to %.2f× the rail median (%s vs %s); its other "
                         "rails are normal → suspect %s's rail %d NIC, port or cable", r, c->names[h],
                         rb_outlier_ratio(f, worst), lo, med, c->names[h], r);
            if (add_finding(c, RB_FIND_HOST_RAIL, r, h, -1, name, text))
                return -ENOMEM;
        }
    }
    return 0;
}

/* Whether host h's problem on rail r is already one finding (its port, or the whole host). */
static bool explained(const struct ctx *c, int h, int r)
{
    if (c->host_rail[h * c->nrails + r])
        return true;
    for (int q = 0; q < c->nrails; q++)
        if (!c->host_rail[h * c->nrails + q])
            return false;
    return c->nrails >= 2;
}

/* "every other link of node-b is normal" or who else is bad, for a pair finding. */
static void others(const struct ctx *c, size_t i, char *buf, size_t len)
{
    const struct rb_check_link *l = &c->links[i];
    int ta, ba, tb, bb;
    host_links(c, l->a, l->rail, i, &ta, &ba);
    host_links(c, l->b, l->rail, i, &tb, &bb);
    if (ba == 0 && bb == 0)
        snprintf(buf, len, "every other link of %s and %s on rail %d is normal → suspect the %s/%s cable or port "
                 "(or the switch path between them)", c->names[l->a], c->names[l->b], l->rail, c->names[l->a],
                 c->names[l->b]);
    else
        snprintf(buf, len, "%s has %d and %s %d other bad links on rail %d", c->names[l->a], ba, c->names[l->b], bb,
                 l->rail);
}

/* The text of a pair finding that is not a hang: its kind, or -1 when the link is fine. */
static int pair_text(const struct ctx *c, size_t i, char *name, size_t nlen, char *text, size_t tlen)
{
    const struct rb_check_link *l = &c->links[i];
    const struct verdict *v = &c->v[i];
    const char *A = c->names[l->a], *B = c->names[l->b];
    const struct rb_outlier_fleet *f = &c->out->rails[l->rail].uni;
    char why[256], x[32], y[32], med[32];
    others(c, i, why, sizeof why);
    fmt_bw(med, sizeof med, f->median);
    if (v->ab != v->ba && !v->bidir) {
        bool ab = v->ab;
        double slow = ab ? l->bw_ab_bytes_per_s : l->bw_ba_bytes_per_s;
        fmt_bw(x, sizeof x, slow);
        fmt_bw(y, sizeof y, ab ? l->bw_ba_bytes_per_s : l->bw_ab_bytes_per_s);
        snprintf(text, tlen, "rail %d: %s → %s at %.2f× the rail median (%s vs %s) but %s → %s normal (%s): one "
                 "direction only → suspect %s's transmit or %s's receive side", l->rail, ab ? A : B, ab ? B : A,
                 rb_outlier_ratio(f, slow), x, med, ab ? B : A, ab ? A : B, y, ab ? A : B, ab ? B : A);
        snprintf(name, nlen, "asymmetric rail%d %s %s", l->rail, A, B);
        return RB_FIND_ASYM;
    }
    if (v->ab || v->ba || v->bidir || v->model) {
        double lo = min2(l->bw_ab_bytes_per_s, l->bw_ba_bytes_per_s);
        const struct rb_check_pred *p = c->cfg->pred ? &c->cfg->pred[l->rail] : NULL;
        fmt_bw(x, sizeof x, lo);
        if (v->ab || v->ba) {
            snprintf(text, tlen, "rail %d: %s ⇄ %s at %.2f× the rail median (%s vs %s); %s", l->rail, A, B,
                     rb_outlier_ratio(f, lo), x, med, why);
        } else if (v->bidir) {
            const struct rb_outlier_fleet *fb = &c->out->rails[l->rail].bidir;
            fmt_bw(x, sizeof x, l->bw_bidir_bytes_per_s);
            fmt_bw(y, sizeof y, fb->median);
            snprintf(text, tlen, "rail %d: %s ⇄ %s both ways at once at %.2f× the rail median (%s vs %s), each way "
                     "alone normal; %s", l->rail, A, B, rb_outlier_ratio(fb, l->bw_bidir_bytes_per_s), x, y, why);
        } else {
            fmt_bw(y, sizeof y, p ? p->bw_bytes_per_s : NAN);
            snprintf(text, tlen, "rail %d: %s ⇄ %s at %.2f× the model's prediction (%s vs %s); %s", l->rail, A, B,
                     p ? lo / p->bw_bytes_per_s : NAN, x, y, why);
        }
        snprintf(name, nlen, "link rail%d %s %s", l->rail, A, B);
        return RB_FIND_LINK;
    }
    if (v->lat) {
        const struct rb_outlier_fleet *fl = &c->out->rails[l->rail].lat;
        snprintf(text, tlen, "rail %d: %s ⇄ %s one-way latency p50 %.1f us, %.1f× the rail median (%.1f us); %s",
                 l->rail, A, B, l->lat_p50_s * 1e6, rb_outlier_ratio(fl, l->lat_p50_s), fl->median * 1e6, why);
        snprintf(name, nlen, "latency rail%d %s %s", l->rail, A, B);
        return RB_FIND_LATENCY;
    }
    return -1;
}

/* One finding per pair that did not complete, or is bad and not explained by a host finding. */
static int pair_findings(struct ctx *c)
{
    char name[64], text[512];
    for (size_t i = 0; i < c->n; i++) {
        const struct rb_check_link *l = &c->links[i];
        int kind;
        if (l->status == RB_CHECK_TIMEOUT) {
            kind = RB_FIND_TIMEOUT;
            snprintf(text, sizeof text, "rail %d: %s ⇄ %s did not complete within the timeout (stage %s%s%s); the "
                     "pair was skipped from then on", l->rail, c->names[l->a], c->names[l->b], l->stage,
                     l->error[0] ? ": " : "", l->error);
            snprintf(name, sizeof name, "hang rail%d %s %s", l->rail, c->names[l->a], c->names[l->b]);
        } else if (!c->out->slow[i] || explained(c, l->a, l->rail) || explained(c, l->b, l->rail)) {
            continue;
        } else if ((kind = pair_text(c, i, name, sizeof name, text, sizeof text)) < 0) {
            continue;
        }
        if (add_finding(c, kind, l->rail, l->a, l->b, name, text))
            return -ENOMEM;
    }
    return 0;
}

/* A whole rail below what the model predicts (--topology). */
static int model_findings(struct ctx *c)
{
    char name[64], text[512], x[32], y[32];
    for (int r = 0; r < c->nrails; r++) {
        if (!c->rail_below_model[r])
            continue;
        fmt_bw(x, sizeof x, c->out->rails[r].uni.median);
        fmt_bw(y, sizeof y, c->cfg->pred[r].bw_bytes_per_s);
        snprintf(text, sizeof text, "rail %d: the median link runs at %.2f× the model's prediction (%s vs %s) → the "
                 "whole rail (switch, cabling, settings) or the topology file is off",
                 r, c->out->rails[r].uni.median / c->cfg->pred[r].bw_bytes_per_s, x, y);
        snprintf(name, sizeof name, "model rail%d", r);
        if (add_finding(c, RB_FIND_MODEL, r, -1, -1, name, text))
            return -ENOMEM;
    }
    return 0;
}

int rb_check_analyse(const struct rb_check_link *links, size_t n, const char *const *names, int nhosts, int nrails,
                     const struct rb_check_cfg *cfg, struct rb_check_analysis *out)
{
    memset(out, 0, sizeof *out);
    struct ctx c = {.links = links, .n = n, .names = names, .nhosts = nhosts, .nrails = nrails, .cfg = cfg, .out = out};
    out->nrails = nrails;
    out->rails = calloc((size_t)nrails + 1, sizeof *out->rails);
    out->slow = calloc(n + 1, sizeof *out->slow);
    c.v = calloc(n + 1, sizeof *c.v);
    c.rail_below_model = calloc((size_t)nrails + 1, sizeof *c.rail_below_model);
    c.host_rail = calloc((size_t)nhosts * (size_t)nrails + 1, sizeof *c.host_rail);
    int rc = -ENOMEM;
    if (!out->rails || !out->slow || !c.v || !c.rail_below_model || !c.host_rail)
        goto fail;
    if ((rc = rail_fleets(&c)) != 0)
        goto fail;
    judge_links(&c);
    if ((rc = model_findings(&c)) || (rc = attribute_hosts(&c)) || (rc = pair_findings(&c)))
        goto fail;
    free(c.v);
    free(c.rail_below_model);
    free(c.host_rail);
    return 0;
fail:
    free(c.v);
    free(c.rail_below_model);
    free(c.host_rail);
    rb_check_analysis_free(out);
    return rc;
}

void rb_check_analysis_free(struct rb_check_analysis *a)
{
    if (!a)
        return;
    free(a->rails);
    free(a->slow);
    free(a->findings);
    memset(a, 0, sizeof *a);
}


cJSON *rb_check_link_json(const struct rb_check_link *l, const char *const *names)
{
    static const char *const status[] = {"ok", "timeout", "skipped"};
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "rail", l->rail);
    cJSON_AddNumberToObject(o, "round", l->round);
    cJSON_AddStringToObject(o, "a", names[l->a]);
    cJSON_AddStringToObject(o, "b", names[l->b]);
    cJSON_AddStringToObject(o, "status", status[l->status >= 0 && l->status <= 2 ? l->status : 2]);
    if (l->status != RB_CHECK_OK) {
        cJSON_AddStringToObject(o, "stage", l->stage);
        cJSON_AddStringToObject(o, "error", l->error);
    }
    bool ok = l->status == RB_CHECK_OK;
    cJSON_AddItemToObject(o, "latency_p50_s", rb_json_number(ok ? l->lat_p50_s : NAN));
    cJSON_AddItemToObject(o, "latency_p99_s", rb_json_number(ok ? l->lat_p99_s : NAN));
    cJSON_AddItemToObject(o, "bw_ab_bytes_per_s", rb_json_number(ok ? l->bw_ab_bytes_per_s : NAN));
    cJSON_AddItemToObject(o, "bw_ba_bytes_per_s", rb_json_number(ok ? l->bw_ba_bytes_per_s : NAN));
    cJSON_AddItemToObject(o, "bw_bidir_bytes_per_s", rb_json_number(ok ? l->bw_bidir_bytes_per_s : NAN));
    cJSON_AddNumberToObject(o, "elapsed_s", l->elapsed_s);
    cJSON_AddBoolToObject(o, "confirmed", l->confirmed != 0);
    return o;
}
