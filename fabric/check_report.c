/* railbench fabric check: the per-rail host x host matrices, the findings in plain words, result.json, checks and gauges. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_int.h"
#include "railbench/buf.h"
#include "railbench/harness.h"

/* A short bandwidth for a matrix cell: "6.21G", "5.0M". */
static void cell_bw(char *buf, size_t len, double bps)
{
    if (isnan(bps))
        snprintf(buf, len, "-");
    else if (bps >= 1e9)
        snprintf(buf, len, "%.2fG", bps / 1e9);
    else
        snprintf(buf, len, "%.1fM", bps / 1e6);
}

/* The link of hosts x and y on rail r, or NULL. */
static const struct rb_check_link *find_link(const struct rb_check_run *R, int r, int x, int y, size_t *idx)
{
    for (size_t i = 0; i < R->nlinks; i++) {
        const struct rb_check_link *l = &R->links[i];
        if (l->rail == r && ((l->a == x && l->b == y) || (l->a == y && l->b == x))) {
            *idx = i;
            return l;
        }
    }
    return NULL;
}

/* The worst figure of a link for ordering: its slower direction over the rail median; -1 for a hang. */
static double link_score(const struct rb_check_link *l, const struct rb_check_analysis *a)
{
    if (l->status == RB_CHECK_TIMEOUT)
        return -1;
    if (l->status != RB_CHECK_OK)
        return INFINITY;
    double lo = fmin(l->bw_ab_bytes_per_s, l->bw_ba_bytes_per_s);
    double r = rb_outlier_ratio(&a->rails[l->rail].uni, lo);
    return isnan(r) ? INFINITY : r;
}

static int cmp_score(const void *x, const void *y, void *arg)
{
    const double *s = arg;
    int a = *(const int *)x, b = *(const int *)y;
    return s[a] < s[b] ? -1 : s[a] > s[b] ? 1 : a - b;
}

/* Hosts ordered by their worst link on rail r (worst first); order has R->nhosts entries. */
static void host_order(const struct rb_check_run *R, const struct rb_check_analysis *a, int r, int *order)
{
    double *worst = malloc((size_t)R->nhosts * sizeof *worst);
    for (int h = 0; h < R->nhosts; h++) {
        order[h] = h;
        if (worst)
            worst[h] = INFINITY;
    }
    if (!worst)
        return;
    for (size_t i = 0; i < R->nlinks; i++) {
        const struct rb_check_link *l = &R->links[i];
        if (l->rail != r)
            continue;
        double s = link_score(l, a);
        worst[l->a] = fmin(worst[l->a], s);
        worst[l->b] = fmin(worst[l->b], s);
    }
    /* Insertion sort: a stable order, and n is the number of hosts. */
    for (int i = 1; i < R->nhosts; i++)
        for (int j = i; j > 0 && cmp_score(&order[j], &order[j - 1], worst) < 0; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    free(worst);
}

/* One rail's host x host matrix: row sends, column receives (alone); '*' marks a slow direction, HANG a link that did not finish. */
static void rail_matrix(struct rb_buf *b, const struct rb_check_run *R, const struct rb_check_analysis *a, int r)
{
    int *order = malloc((size_t)R->nhosts * sizeof *order);
    if (!order)
        return;
    host_order(R, a, r, order);
    const struct rb_outlier_fleet *f = &a->rails[r].uni;
    rb_buf_printf(b, "\n## rail %d: bandwidth row -> column (decimal B/s), worst host first; median %.3f GB/s, MAD "
                     "%.3f GB/s over %zu directions\n\n| %-16s |", r, f->median / 1e9, f->mad / 1e9, f->n, "from \\ to");
    for (int j = 0; j < R->nhosts; j++)
        rb_buf_printf(b, " %16.16s |", R->names[order[j]]);
    rb_buf_printf(b, "\n|------------------|");
    for (int j = 0; j < R->nhosts; j++)
        rb_buf_printf(b, "-----------------:|");
    rb_buf_printf(b, "\n");
    for (int i = 0; i < R->nhosts; i++) {
        int x = order[i];
        rb_buf_printf(b, "| %-16.16s |", R->names[x]);
        for (int j = 0; j < R->nhosts; j++) {
            int y = order[j];
            size_t idx = 0;
            const struct rb_check_link *l = x == y ? NULL : find_link(R, r, x, y, &idx);
            char c[32] = "-";
            if (l && l->status == RB_CHECK_TIMEOUT)
                snprintf(c, sizeof c, "HANG");
            else if (l && l->status == RB_CHECK_OK) {
                cell_bw(c, sizeof c, l->a == x ? l->bw_ab_bytes_per_s : l->bw_ba_bytes_per_s);
                if (a->dir_slow[2 * idx + (l->a == x ? 0 : 1)])
                    strncat(c, " *", sizeof c - strlen(c) - 1);
            }
            rb_buf_printf(b, " %16s |", c);
        }
        rb_buf_printf(b, "\n");
    }
    free(order);
}

/* Every link, worst first. */
static void links_table(struct rb_buf *b, const struct rb_check_run *R, const struct rb_check_analysis *a)
{
    size_t *idx = malloc((R->nlinks + 1) * sizeof *idx);
    double *score = malloc((R->nlinks + 1) * sizeof *score);
    if (!idx || !score)
        goto fail;
    for (size_t i = 0; i < R->nlinks; i++) {
        idx[i] = i;
        score[i] = link_score(&R->links[i], a);
    }
    for (size_t i = 1; i < R->nlinks; i++)
        for (size_t j = i; j > 0 && score[idx[j]] < score[idx[j - 1]]; j--) {
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    rb_buf_printf(b, "\n## links, worst first (alone: one direction at a time; both: each direction while the other "
                     "runs)\n\n| rail | %-16s | %-16s | p50 us | p99 us |   a->b   |   b->a   | both a->b | both b->a | "
                     "x median | repeats | status |\n|-----:|------------------|------------------|-------:|-------:|"
                     "---------:|---------:|----------:|----------:|---------:|--------:|--------|\n", "a", "b");
    for (size_t k = 0; k < R->nlinks; k++) {
        const struct rb_check_link *l = &R->links[idx[k]];
        char x[32], y[32], z[32], w[32];
        cell_bw(x, sizeof x, l->bw_ab_bytes_per_s);
        cell_bw(y, sizeof y, l->bw_ba_bytes_per_s);
        cell_bw(z, sizeof z, l->bw_bidir_ab_bytes_per_s);
        cell_bw(w, sizeof w, l->bw_bidir_ba_bytes_per_s);
        const char *st = l->status == RB_CHECK_TIMEOUT ? "HANG" : a->slow[idx[k]] ? "slow" : "ok";
        char p50[16] = "-", p99[16] = "-", ratio[16] = "-";
        if (l->status == RB_CHECK_OK) {
            snprintf(p50, sizeof p50, "%.1f", l->lat_p50_s * 1e6);
            snprintf(p99, sizeof p99, "%.1f", l->lat_p99_s * 1e6);
            snprintf(ratio, sizeof ratio, "%.2f", score[idx[k]]);
        }
        rb_buf_printf(b, "| %4d | %-16.16s | %-16.16s | %6s | %6s | %8s | %8s | %9s | %9s | %8s | %7d | %-6s |\n",
                      l->rail, R->names[l->a], R->names[l->b], p50, p99, x, y, z, w, ratio, l->rep.n, st);
    }
fail:
    free(idx);
    free(score);
}

static cJSON *fleet_json(const struct rb_outlier_fleet *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "n", (double)f->n);
    cJSON_AddItemToObject(o, "median", f->n ? cJSON_CreateNumber(f->median) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "mad", f->n ? cJSON_CreateNumber(f->mad) : cJSON_CreateNull());
    return o;
}

/* result.json's summary: configuration, fleets, predictions, every link, the findings. */
static cJSON *summary_json(const struct rb_check_opts *o, const struct rb_check_run *R,
                           const struct rb_check_analysis *a, const struct rb_check_pred *pred)
{
    cJSON *s = cJSON_CreateObject();
    cJSON *hosts = cJSON_AddArrayToObject(s, "hosts");
    for (int h = 0; h < R->nhosts; h++)
        cJSON_AddItemToArray(hosts, cJSON_CreateString(R->names[h]));
    cJSON_AddNumberToObject(s, "rails", R->nrails);
    cJSON_AddNumberToObject(s, "rounds", rb_check_plan_rounds(R->nhosts));
    cJSON_AddNumberToObject(s, "duration_s", R->duration_s);
    cJSON_AddNumberToObject(s, "threshold", o->threshold);
    cJSON_AddNumberToObject(s, "latency_threshold", o->lat_threshold);
    cJSON_AddNumberToObject(s, "timeout_s", (double)o->timeout_ns / 1e9);
    cJSON_AddNumberToObject(s, "size_bytes", (double)o->net.size_bytes);
    cJSON_AddNumberToObject(s, "iters", (double)o->net.iters);
    cJSON_AddNumberToObject(s, "stage_duration_s", o->net.timed ? (double)o->net.stage_ns / 1e9 : 0);
    cJSON_AddNumberToObject(s, "confirm", (double)o->confirm);
    cJSON_AddNumberToObject(s, "confirm_z", o->confirm_z);
    cJSON_AddBoolToObject(s, "quick", o->quick_on);
    if (o->quick_on) {
        cJSON_AddNumberToObject(s, "quick_suspects", R->quick_suspects);
        cJSON_AddNumberToObject(s, "quick_second_pairs", R->quick_pairs);
    }
    cJSON *fl = cJSON_AddArrayToObject(s, "fleet");
    for (int r = 0; r < R->nrails; r++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "rail", r);
        cJSON_AddItemToObject(x, "bw_bytes_per_s", fleet_json(&a->rails[r].uni));
        cJSON_AddItemToObject(x, "bidir_bytes_per_s", fleet_json(&a->rails[r].bidir));
        cJSON_AddItemToObject(x, "latency_p50_s", fleet_json(&a->rails[r].lat));
        if (pred) {
            cJSON_AddNumberToObject(x, "predicted_bw_bytes_per_s", pred[r].bw_bytes_per_s);
            cJSON_AddNumberToObject(x, "predicted_latency_s", pred[r].lat_s);
        }
        cJSON_AddItemToArray(fl, x);
    }
    cJSON *links = cJSON_AddArrayToObject(s, "links");
    for (size_t i = 0; i < R->nlinks; i++) {
        cJSON *l = rb_check_link_json(&R->links[i], (const char *const *)R->names);
        cJSON_AddBoolToObject(l, "slow", a->slow[i]);
        cJSON_AddItemToArray(links, l);
    }
    cJSON *fs = cJSON_AddArrayToObject(s, "findings");
    for (size_t i = 0; i < a->nfindings; i++) {
        const struct rb_check_finding *f = &a->findings[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "kind", rb_check_kind_name(f->kind));
        cJSON_AddNumberToObject(x, "rail", f->rail);
        cJSON_AddItemToObject(x, "host", f->host >= 0 ? cJSON_CreateString(R->names[f->host]) : cJSON_CreateNull());
        cJSON_AddItemToObject(x, "peer", f->peer >= 0 ? cJSON_CreateString(R->names[f->peer]) : cJSON_CreateNull());
        if (f->kind == RB_FIND_ONEWAY) {
            cJSON_AddStringToObject(x, "src", R->names[f->host]);
            cJSON_AddStringToObject(x, "dst", R->names[f->peer]);
        }
        cJSON_AddStringToObject(x, "check", f->name);
        cJSON_AddStringToObject(x, "text", f->text);
        cJSON_AddItemToArray(fs, x);
    }
    return s;
}

/* Gauges per link and rail: bandwidth each way, both ways, latency, and whether it completed. */
static void link_metrics(struct rb_harness *h, const struct rb_check_run *R)
{
    for (size_t i = 0; i < R->nlinks; i++) {
        const struct rb_check_link *l = &R->links[i];
        const char *A = R->names[l->a], *B = R->names[l->b];
        char lab[512];
        snprintf(lab, sizeof lab, "rail=\"%d\",a=\"%s\",b=\"%s\"", l->rail, A, B);
        rb_harness_metric(h, "railbench_link_up", "gauge", "1 when the pair completed within --timeout, else 0.", lab,
                          l->status == RB_CHECK_OK);
        if (l->status != RB_CHECK_OK)
            continue;
        rb_harness_metric(h, "railbench_link_bidir_bandwidth_bytes_per_second", "gauge",
                          "Both directions at once, bytes of both over the time.", lab, l->bw_bidir_bytes_per_s);
        for (int q = 0; q < 2; q++) {
            snprintf(lab, sizeof lab, "rail=\"%d\",a=\"%s\",b=\"%s\",quantile=\"%s\"", l->rail, A, B, q ? "0.99" : "0.5");
            rb_harness_metric(h, "railbench_link_latency_seconds", "gauge", "One-way latency: half a small ping-pong.",
                              lab, q ? l->lat_p99_s : l->lat_p50_s);
        }
        for (int d = 0; d < 2; d++) {
            snprintf(lab, sizeof lab, "rail=\"%d\",src=\"%s\",dst=\"%s\"", l->rail, d ? B : A, d ? A : B);
            rb_harness_metric(h, "railbench_link_bandwidth_bytes_per_second", "gauge",
                              "Unidirectional bandwidth of one host pair on one rail.", lab,
                              d ? l->bw_ba_bytes_per_s : l->bw_ab_bytes_per_s);
        }
    }
}

/* --ring: a line per rail in the table, an array in the summary, a gauge, and a failed check for a ring that hung. */
static void ring_report(struct rb_harness *h, const struct rb_check_opts *o, const struct rb_check_run *R,
                        struct rb_buf *b, cJSON *summary)
{
    static const char *const status[] = {"ok", "timeout", "skipped"};
    if (!R->rings)
        return;
    cJSON *arr = cJSON_AddArrayToObject(summary, "rings");
    rb_buf_printf(b, "\n## ring all-reduce per rail (%llu bytes, float sum, best of %llu)\n\n"
                     "| rail | hosts | time us | busbw GB/s | #wrong | status |\n|-----:|------:|--------:|-----------:|-------:|--------|\n",
                  (unsigned long long)o->net.size_bytes, (unsigned long long)o->net.reps);
    for (int r = 0; r < R->nrails; r++) {
        const struct rb_check_ring *g = &R->rings[r];
        bool ok = g->status == RB_CHECK_OK;
        rb_buf_printf(b, "| %4d | %5d | %7.0f | %10.3f | %6lld | %-6s |\n", r, g->hosts, ok ? g->time_s * 1e6 : 0,
                      ok ? g->busbw_bytes_per_s / 1e9 : 0, g->wrong, status[g->status]);
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "rail", r);
        cJSON_AddNumberToObject(x, "hosts", g->hosts);
        cJSON_AddStringToObject(x, "status", status[g->status]);
        cJSON_AddItemToObject(x, "time_s", ok ? cJSON_CreateNumber(g->time_s) : cJSON_CreateNull());
        cJSON_AddItemToObject(x, "busbw_bytes_per_s", ok ? cJSON_CreateNumber(g->busbw_bytes_per_s) : cJSON_CreateNull());
        cJSON_AddNumberToObject(x, "wrong", (double)g->wrong);
        cJSON_AddItemToArray(arr, x);
        char lab[32], name[32];
        snprintf(lab, sizeof lab, "rail=\"%d\"", r);
        if (ok)
            rb_harness_metric(h, "railbench_rail_ring_busbw_bytes_per_second", "gauge",
                              "Bus bandwidth of a ring all-reduce over one rail's hosts (nccl-tests' busbw).", lab,
                              g->busbw_bytes_per_s);
        snprintf(name, sizeof name, "ring rail%d", r);
        if (g->status == RB_CHECK_TIMEOUT)
            rb_result_check(&h->result, name, false, "rail %d: the ring all-reduce over %d hosts did not complete "
                            "within the timeout", r, g->hosts);
        else if (g->wrong)
            rb_result_check(&h->result, name, false, "rail %d: the ring all-reduce over %d hosts got %lld wrong "
                            "elements", r, g->hosts, g->wrong);
    }
}

/*
 * Every direction of every completed link against its receiving interface's
 * counters: a failed check per link whose payload differs from the counters'
 * by more than RB_CHECK_WIRE_TOLERANCE (in a window of at least
 * RB_CHECK_WIRE_MIN_PACKETS packets), one passed check "wire" when every
 * counted direction agrees, none when nothing could be counted (the summary
 * says why). summary.wire holds the counts and the extreme ratios.
 */
static void wire_report(struct rb_harness *h, const struct rb_check_run *R, struct rb_buf *b, cJSON *summary)
{
    static const char *const arrow[RB_WIRE_DIRS] = {"alone", "alone", "both at once", "both at once"};
    long counted = 0, missing = 0, bad = 0;
    double lo = NAN, hi = NAN;
    int why = RB_WIRE_NONE;
    for (size_t i = 0; i < R->nlinks; i++) {
        const struct rb_check_link *l = &R->links[i];
        if (l->status != RB_CHECK_OK)
            continue;
        int worst = -1;
        double worst_dev = 0;
        for (int d = 0; d < RB_WIRE_DIRS; d++) {
            double r = rb_check_wire_ratio(&l->wire[d]);
            if (isnan(r)) {
                missing++;
                if (why == RB_WIRE_NONE || why == RB_WIRE_OK)
                    why = l->wire[d].note;
                continue;
            }
            counted++;
            lo = isnan(lo) || r < lo ? r : lo;
            hi = isnan(hi) || r > hi ? r : hi;
            if (l->wire[d].if_packets >= RB_CHECK_WIRE_MIN_PACKETS && fabs(r - 1) > RB_CHECK_WIRE_TOLERANCE &&
                fabs(r - 1) > worst_dev) {
                worst = d;
                worst_dev = fabs(r - 1);
            }
        }
        if (worst < 0)
            continue;
        bad++;
        const struct rb_check_wire *w = &l->wire[worst];
        bool ab = worst == RB_WIRE_AB || worst == RB_WIRE_BIDIR_AB;
        const char *src = R->names[ab ? l->a : l->b], *dst = R->names[ab ? l->b : l->a];
        char name[160];
        snprintf(name, sizeof name, "wire rail%d %s %s", l->rail, R->names[l->a], R->names[l->b]);
        rb_result_check(&h->result, name, false,
                        "rail %d: %s -> %s (%s): railbench received %.0f bytes in %.6f s where %s's interface "
                        "counted %.0f bytes in %.0f packets, %.0f of payload after %.0f header bytes a packet: "
                        "ratio %.4f, more than %.0f %% apart (a counting or window error, or other traffic on the "
                        "interface)", l->rail, src, dst, arrow[worst], w->bytes, w->window_s, dst, w->if_bytes,
                        w->if_packets, w->if_bytes - w->if_packets * w->hdr_bytes, w->hdr_bytes,
                        rb_check_wire_ratio(w), RB_CHECK_WIRE_TOLERANCE * 100);
    }
    cJSON *x = cJSON_AddObjectToObject(summary, "wire");
    cJSON_AddNumberToObject(x, "tolerance", RB_CHECK_WIRE_TOLERANCE);
    cJSON_AddNumberToObject(x, "counted", (double)counted);
    cJSON_AddNumberToObject(x, "not_counted", (double)missing);
    cJSON_AddNumberToObject(x, "failed_links", (double)bad);
    cJSON_AddItemToObject(x, "ratio_min", rb_json_number(lo));
    cJSON_AddItemToObject(x, "ratio_max", rb_json_number(hi));
    const char *note = missing ? rb_check_wire_note_text(why) : NULL;
    cJSON_AddItemToObject(x, "note", note ? cJSON_CreateString(note) : cJSON_CreateNull());
    if (counted == 0) {
        rb_buf_printf(b, "\ninterface counters: none compared%s%s\n", note ? ": " : "", note ? note : "");
        return;
    }
    rb_buf_printf(b, "\ninterface counters: %ld directions compared, railbench / counters %.4f-%.4f, %ld links "
                     "more than %.0f %% apart\n", counted, lo, hi, bad, RB_CHECK_WIRE_TOLERANCE * 100);
    if (!bad)
        rb_result_check(&h->result, "wire", true, "%ld directions: railbench's payload within %.0f %% of the "
                        "receiving interfaces' counts (ratio %.4f-%.4f)", counted, RB_CHECK_WIRE_TOLERANCE * 100,
                        lo, hi);
}

int rb_check_report(struct rb_harness *h, const struct rb_check_opts *o, const struct rb_check_run *R, char **table)
{
    struct rb_check_pred *pred = NULL;
    int rc = rb_check_predict(o, R->nrails, &pred);
    if (rc)
        return rc;
    struct rb_check_cfg cfg = {.threshold = o->threshold, .lat_threshold = o->lat_threshold, .min_z = o->min_z,
                               .confirm_z = o->confirm_z, .pred = pred};
    struct rb_check_analysis a;
    if (rb_check_analyse(R->links, R->nlinks, (const char *const *)R->names, R->nhosts, R->nrails, &cfg, &a) != 0) {
        free(pred);
        return RB_EXIT_RUNTIME;
    }
    struct rb_buf b = {0};
    size_t hung = 0;
    for (size_t i = 0; i < R->nlinks; i++)
        hung += R->links[i].status == RB_CHECK_TIMEOUT;
    rb_buf_printf(&b, "\n# railbench fabric check: %d hosts x %d rails, %d rounds, %zu links (%zu hung), %.1f s; "
                      "slow below %.2fx the rail median\n", R->nhosts, R->nrails, rb_check_plan_rounds(R->nhosts),
                  R->nlinks, hung, R->duration_s, o->threshold);
    for (int r = 0; r < R->nrails; r++)
        rail_matrix(&b, R, &a, r);
    links_table(&b, R, &a);
    rb_buf_printf(&b, "\n## findings\n\n");
    if (a.nfindings == 0)
        rb_buf_printf(&b, "none: every link within %.2fx of its rail's median, none hung\n", o->threshold);
    for (size_t i = 0; i < a.nfindings; i++) {
        rb_buf_printf(&b, "- %s\n", a.findings[i].text);
        rb_result_check(&h->result, a.findings[i].name, false, "%s", a.findings[i].text);
    }
    if (a.nfindings == 0)
        rb_result_check(&h->result, "fabric", true, "%zu links on %d rails: none slow, none hung", R->nlinks, R->nrails);
    cJSON *summary = summary_json(o, R, &a, pred);
    wire_report(h, R, &b, summary);
    ring_report(h, o, R, &b, summary);
    rc = rb_check_act(h, o, R, &a, summary, &b);
    rb_result_set(&h->result, "summary", summary);
    link_metrics(h, R);
    rb_harness_metric(h, "railbench_check_findings", "gauge", "Findings of the fabric check.", "", (double)a.nfindings);
    rb_check_analysis_free(&a);
    free(pred);
    *table = b.oom ? NULL : b.s;
    if (b.oom)
        rb_buf_free(&b);
    return rc;
}

const char *rb_check_wire_note_text(int note)
{
    switch (note) {
    case RB_WIRE_OK:
        return NULL;
    case RB_WIRE_UNREADABLE:
        return "the receiving interface's /sys/class/net statistics could not be read";
    case RB_WIRE_OTHER_NETNS:
        return "the /sys this rank sees belongs to another network namespace (its interface of that name has "
               "another ifindex): no counters of the rail's interface";
    default:
        return "not measured";
    }
}

double rb_check_wire_ratio(const struct rb_check_wire *w)
{
    if (w->note != RB_WIRE_OK || !isfinite(w->if_bytes) || !isfinite(w->if_packets) || !isfinite(w->hdr_bytes))
        return NAN;
    double payload = w->if_bytes - w->if_packets * w->hdr_bytes;
    return payload > 0 && w->bytes > 0 ? w->bytes / payload : NAN;
}

/* One direction's window and counters; figures not counted are null, with the note saying why. */
static cJSON *wire_json(const struct rb_check_wire *w, bool ok)
{
    if (!ok || w->note == RB_WIRE_NONE)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    bool cnt = w->note == RB_WIRE_OK;
    double payload = cnt ? w->if_bytes - w->if_packets * w->hdr_bytes : NAN;
    cJSON_AddStringToObject(o, "window_from", w->from_start ? "stage_start" : "first_byte");
    cJSON_AddItemToObject(o, "window_s", rb_json_number(w->window_s));
    cJSON_AddItemToObject(o, "payload_bytes", rb_json_number(w->bytes));
    cJSON_AddItemToObject(o, "payload_bytes_per_s", rb_json_number(w->window_s > 0 ? w->bytes / w->window_s : NAN));
    cJSON_AddItemToObject(o, "if_rx_bytes", rb_json_number(cnt ? w->if_bytes : NAN));
    cJSON_AddItemToObject(o, "if_rx_packets", rb_json_number(cnt ? w->if_packets : NAN));
    cJSON_AddItemToObject(o, "if_rx_bytes_per_s", rb_json_number(cnt && w->window_s > 0 ? w->if_bytes / w->window_s : NAN));
    cJSON_AddItemToObject(o, "header_bytes_per_packet", rb_json_number(cnt ? w->hdr_bytes : NAN));
    cJSON_AddItemToObject(o, "if_payload_bytes", rb_json_number(payload));
    cJSON_AddItemToObject(o, "if_payload_bytes_per_s", rb_json_number(cnt && w->window_s > 0 ? payload / w->window_s : NAN));
    cJSON_AddItemToObject(o, "ratio", rb_json_number(rb_check_wire_ratio(w)));
    const char *note = rb_check_wire_note_text(w->note);
    cJSON_AddItemToObject(o, "note", note ? cJSON_CreateString(note) : cJSON_CreateNull());
    return o;
}

static const char *const wire_dir_name[RB_WIRE_DIRS] = {"ab", "ba", "bidir_ab", "bidir_ba"};

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
    cJSON_AddItemToObject(o, "bw_bidir_ab_bytes_per_s", rb_json_number(ok ? l->bw_bidir_ab_bytes_per_s : NAN));
    cJSON_AddItemToObject(o, "bw_bidir_ba_bytes_per_s", rb_json_number(ok ? l->bw_bidir_ba_bytes_per_s : NAN));
    cJSON_AddItemToObject(o, "bw_bidir_bytes_per_s", rb_json_number(ok ? l->bw_bidir_bytes_per_s : NAN));
    cJSON_AddNumberToObject(o, "elapsed_s", l->elapsed_s);
    cJSON *wire = cJSON_AddObjectToObject(o, "wire");
    for (int d = 0; d < RB_WIRE_DIRS; d++)
        cJSON_AddItemToObject(wire, wire_dir_name[d], wire_json(&l->wire[d], ok));
    cJSON_AddBoolToObject(o, "confirmed", l->rep.n > 0);
    if (l->rep.n > 0) {
        cJSON *r = cJSON_AddObjectToObject(o, "repeats");
        cJSON_AddNumberToObject(r, "n", l->rep.n);
        cJSON_AddItemToObject(r, "latency_p50_s", rb_json_number(l->rep.lat_p50_s));
        cJSON_AddItemToObject(r, "bw_ab_bytes_per_s", rb_json_number(l->rep.bw_ab_bytes_per_s));
        cJSON_AddItemToObject(r, "bw_ba_bytes_per_s", rb_json_number(l->rep.bw_ba_bytes_per_s));
        cJSON_AddItemToObject(r, "bw_bidir_ab_bytes_per_s", rb_json_number(l->rep.bw_bidir_ab_bytes_per_s));
        cJSON_AddItemToObject(r, "bw_bidir_ba_bytes_per_s", rb_json_number(l->rep.bw_bidir_ba_bytes_per_s));
        const struct rb_check_ref *f = &l->rep.ref;
        cJSON *x = cJSON_AddObjectToObject(r, "reference");
        cJSON_AddNumberToObject(x, "n", f->n);
        cJSON_AddItemToObject(x, "bw_median_bytes_per_s", rb_json_number(f->n ? f->uni.median : NAN));
        cJSON_AddItemToObject(x, "bw_mad_bytes_per_s", rb_json_number(f->n ? f->uni.mad : NAN));
        cJSON_AddItemToObject(x, "bidir_median_bytes_per_s", rb_json_number(f->n ? f->bidir.median : NAN));
        cJSON_AddItemToObject(x, "latency_p50_median_s", rb_json_number(f->n ? f->lat.median : NAN));
    }
    return o;
}
