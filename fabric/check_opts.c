/* railbench fabric check: option values, the --plan-only schedule with its wall-time estimate, and the model's prediction per rail. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_int.h"
#include "fabric_int.h"
#include "railbench/clock.h"
#include "topo_int.h"

/* Plans bigger than this are timed but not verified pair by pair (the bitmap would be n^2 / 8 bytes). */
#define VERIFY_MAX_HOSTS 65536
/* Software cost per message on top of the model's path latency, for the estimate (TCP on a kernel stack). */
#define SOFT_LAT_S 5e-6
/* Per round: the barrier and connection set-up, for the estimate. */
#define ROUND_OVERHEAD_S 2e-3

int rb_check_validate(struct rb_check_opts *o)
{
    if (!(o->threshold > 0 && o->threshold <= 1))
        return rb_cli_usage_error("--threshold %g: expected a number in (0, 1], e.g. 0.5", o->threshold);
    if (!(o->lat_threshold == 0 || o->lat_threshold >= 1))
        return rb_cli_usage_error("--latency-threshold %g: expected 0 (off) or a number >= 1, e.g. 3", o->lat_threshold);
    if (!(o->min_z >= 0))
        return rb_cli_usage_error("--min-z %g: expected a number >= 0", o->min_z);
    if (o->net.size_bytes == 0 || o->net.size_bytes > (1ull << 30))
        return rb_cli_usage_error("--size %llu: expected 1 byte to 1GiB", (unsigned long long)o->net.size_bytes);
    if (o->net.lat_size_bytes == 0 || o->net.lat_size_bytes > (1ull << 20))
        return rb_cli_usage_error("--lat-size %llu: expected 1 byte to 1MiB", (unsigned long long)o->net.lat_size_bytes);
    if (o->net.iters == 0 || o->net.lat_iters == 0 || o->net.iters > 1000000 || o->net.lat_iters > 1000000)
        return rb_cli_usage_error("--iters and --lat-iters: expected 1 to 1000000");
    if (o->net.reps == 0 || o->net.reps > 100)
        return rb_cli_usage_error("--reps %llu: expected 1 to 100", (unsigned long long)o->net.reps);
    if (o->timeout_ns < RB_NS_PER_MS)
        return rb_cli_usage_error("--timeout: expected at least 1ms, e.g. 10s");
    if (o->rails > 1024)
        return rb_cli_usage_error("--rails %llu: expected 1 to 1024", (unsigned long long)o->rails);
    if (o->plan_only && (o->hosts < 2 || o->hosts > (1u << 20)))
        return rb_cli_usage_error("--plan-only needs --hosts N with 2 <= N <= 1048576");
    if (!o->plan_only && o->hosts)
        return rb_cli_usage_error("--hosts applies to --plan-only only; under mpirun the hosts are the ranks' hosts");
    if (o->ifaces) {
        if (strlen(o->ifaces) >= sizeof o->ifbuf)
            return rb_cli_usage_error("--ifaces: too long; expected IF0,IF1,...");
        snprintf(o->ifbuf, sizeof o->ifbuf, "%s", o->ifaces);
        char *save = NULL;
        for (char *t = strtok_r(o->ifbuf, ",", &save); t && o->nif < RB_LIST_MAX; t = strtok_r(NULL, ",", &save))
            o->ifv[o->nif++] = t;
        if (o->nif == 0)
            return rb_cli_usage_error("--ifaces '%s': expected a comma-separated list such as rail0,rail1", o->ifaces);
    }
    return 0;
}

int rb_check_predict(const struct rb_check_opts *o, int nrails, struct rb_check_pred **pred)
{
    *pred = NULL;
    if (!o->topology)
        return 0;
    struct rb_topo t;
    char err[512];
    if (rb_topo_load(&t, o->topology, err, sizeof err) != 0)
        return rb_cli_usage_error("--topology %s: %s", o->topology, err);
    if (t.nodes < 2)
        return rb_cli_usage_error("--topology %s: needs at least 2 nodes to predict a link", o->topology);
    struct rb_check_pred *p = calloc((size_t)nrails + 1, sizeof *p);
    if (!p)
        return RB_EXIT_RUNTIME;
    for (int r = 0; r < nrails; r++) {
        /* The first GPU whose NIC is on rail r, to its twin on the next node: the rail's own path. */
        for (int g = 0; g < t.gpus_per_node; g++) {
            struct rb_route rt;
            if (rb_topo_nic_rail(&t, rb_topo_gpu_nic(&t, g)) != r ||
                rb_topo_route(&t, g, t.gpus_per_node + g, true, &rt) != 0)
                continue;
            double lat = 0, bw = INFINITY;
            for (int c = 0; c < RB_LINK_CLASSES; c++) {
                if (rt.traversals[c] == 0)
                    continue;
                lat += rt.traversals[c] * t.link[c].lat_s;
                if (t.link[c].bw_bytes_per_s < bw)
                    bw = t.link[c].bw_bytes_per_s;
            }
            p[r] = (struct rb_check_pred){.lat_s = lat, .bw_bytes_per_s = isinf(bw) ? 0 : bw};
            break;
        }
    }
    *pred = p;
    return 0;
}

/* Every pair once, rounds disjoint: false on the first violation. Needs n <= VERIFY_MAX_HOSTS. */
static bool plan_verify(int n, long long *pairs_seen)
{
    size_t bits = (size_t)n * (size_t)n;
    unsigned char *seen = calloc(bits / 8 + 1, 1);
    int *last = malloc((size_t)n * sizeof *last);
    bool ok = seen && last;
    for (int i = 0; ok && i < n; i++)
        last[i] = -1;
    *pairs_seen = 0;
    int rounds = rb_check_plan_rounds(n), per = rb_check_plan_pairs(n);
    for (int r = 0; ok && r < rounds; r++)
        for (int i = 0; ok && i < per; i++) {
            int a, b;
            if (rb_check_plan_pair(n, r, i, &a, &b) != 0 || a == b || last[a] == r || last[b] == r ||
                rb_check_plan_partner(n, r, a) != b || rb_check_plan_partner(n, r, b) != a) {
                ok = false;
                break;
            }
            size_t bit = (size_t)a * (size_t)n + (size_t)b;
            if (seen[bit / 8] & (1u << (bit % 8)))
                ok = false;
            seen[bit / 8] |= (unsigned char)(1u << (bit % 8));
            last[a] = last[b] = r;
            (*pairs_seen)++;
        }
    ok = ok && *pairs_seen == (long long)n * (n - 1) / 2;
    free(seen);
    free(last);
    return ok;
}

/* Seconds one pair takes on one rail: connection, ping-pongs, then a warm-up and three bandwidth stages. */
static double pair_seconds(const struct rb_cnet_params *p, const struct rb_check_pred *pred)
{
    double lat = pred->lat_s + SOFT_LAT_S, bw = pred->bw_bytes_per_s;
    double warm = (double)(p->lat_iters / 10 + 1);
    double t = 3 * lat;                                                        /* connect and hello */
    t += (warm + (double)p->lat_iters) * 2 * (lat + (double)p->lat_size_bytes / bw); /* ping-pong */
    t += (double)p->size_bytes / bw + 3 * lat;                                 /* warm-up message */
    t += 3 * (double)p->reps * ((double)(p->size_bytes * p->iters) / bw + 2 * lat); /* a->b, b->a, both ways */
    return t;
}

int rb_check_plan_cmd(struct rb_cli *cli, const struct rb_check_opts *o)
{
    int n = (int)o->hosts, rails = o->rails ? (int)o->rails : 8;
    struct rb_check_pred *pred = NULL, model;
    int rc = rb_check_predict(o, rails, &pred);
    if (rc)
        return rc;
    if (pred) {
        model = pred[0];
    } else {
        struct rb_topo t;
        rb_topo_default(&t);
        model = (struct rb_check_pred){.lat_s = 2 * t.link[RB_LINK_PCIE].lat_s + 2 * t.link[RB_LINK_LEAF].lat_s,
                                       .bw_bytes_per_s = t.link[RB_LINK_LEAF].bw_bytes_per_s};
    }
    free(pred);
    /* Plan: every (round, pair, rail) once, as the ranks of a real run would look them up. */
    uint64_t t0 = rb_clock_ns();
    int rounds = rb_check_plan_rounds(n), per = rb_check_plan_pairs(n);
    long long links = 0, sum = 0;
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < per; i++) {
            int a, b;
            rb_check_plan_pair(n, r, i, &a, &b);
            for (int q = 0; q < rails; q++, links++)
                sum += a ^ b ^ q; /* keeps the loop from being optimised away */
        }
    double plan_s = (double)(rb_clock_ns() - t0) / 1e9;
    long long pairs = 0;
    t0 = rb_clock_ns();
    bool verified = n <= VERIFY_MAX_HOSTS && plan_verify(n, &pairs);
    double verify_s = (double)(rb_clock_ns() - t0) / 1e9;
    if (n <= VERIFY_MAX_HOSTS && !verified) {
        fprintf(stderr, "railbench: error: the schedule for %d hosts failed its own check\n", n);
        return RB_EXIT_RUNTIME;
    }
    double pair_s = pair_seconds(&o->net, &model), round_s = pair_s + ROUND_OVERHEAD_S;
    char table[2048];
    snprintf(table, sizeof table,
             "# railbench fabric check --plan-only: %d hosts x %d rails\n"
             "# rounds %d, pairs per round %d, links %lld (every host pair once, on every rail at once)\n"
             "# planned in %.3f s; verified in %.3f s: %s\n"
             "# a pair on one rail: %.2f ms (%llu x %llu B ping-pong, %llu x %llu x %llu B each way and both ways, "
             "model link %.1f GB/s, %.1f us + %.0f us software per message)\n"
             "# estimated wall time of a real run: %d rounds x %.2f ms = %.1f s; each round with a hung pair "
             "adds up to --timeout (%.0f s)\n",
             n, rails, rounds, per, links, plan_s, verify_s,
             n > VERIFY_MAX_HOSTS ? "not verified (more than 65536 hosts)" : "every pair exactly once, rounds disjoint",
             pair_s * 1e3, (unsigned long long)o->net.lat_iters, (unsigned long long)o->net.lat_size_bytes,
             (unsigned long long)o->net.reps, (unsigned long long)o->net.iters, (unsigned long long)o->net.size_bytes, model.bw_bytes_per_s / 1e9,
             model.lat_s * 1e6, SOFT_LAT_S * 1e6, rounds, round_s * 1e3, rounds * round_s,
             (double)o->timeout_ns / 1e9);
    cJSON *s = cJSON_CreateObject();
    cJSON_AddNumberToObject(s, "hosts", n);
    cJSON_AddNumberToObject(s, "rails", rails);
    cJSON_AddNumberToObject(s, "rounds", rounds);
    cJSON_AddNumberToObject(s, "pairs_per_round", per);
    cJSON_AddNumberToObject(s, "links", (double)links);
    cJSON_AddNumberToObject(s, "plan_s", plan_s);
    cJSON_AddNumberToObject(s, "verify_s", verify_s);
    cJSON_AddBoolToObject(s, "verified", verified);
    cJSON_AddNumberToObject(s, "pair_s", pair_s);
    cJSON_AddNumberToObject(s, "estimated_run_s", rounds * round_s);
    cJSON_AddNumberToObject(s, "checksum", (double)sum);
    return rb_fabric_emit("fabric check", cli, table, s, false);
}
