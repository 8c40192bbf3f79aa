/*
 * railbench fabric sim moe: the workload of railbench coll moe (the same
 * seeded router) predicted on a topology with PXN off and on -- dispatch
 * and combine as pairwise all-to-all-v, and the same tokens routed evenly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"
#include "railbench/cli.h"
#include "railbench/clock.h"
#include "railbench/moe.h"
#include "railbench/result.h"
#include "sim_int.h"

/* Predicted mean per step over steps (balanced: the even routing) on sim; times in us. */
struct moe_pred {
    double dispatch_us, combine_us, step_us, balanced_us;
};

/* One design's prediction; 0 or -errno. */
static int predict(struct rb_sim *sim, const struct rb_moe_cfg *c, uint64_t steps, double tok_bytes,
                   uint64_t *to, double *m, double *mt, struct moe_pred *out)
{
    const int n = c->ranks;
    memset(out, 0, sizeof *out);
    for (uint64_t s = 0; s <= steps; s++) { /* step `steps` stands for the balanced routing */
        int rc = s < steps ? rb_moe_route(c, s, to, NULL) : rb_moe_route_balanced(c, to, NULL);
        if (rc)
            return rc;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                m[(size_t)i * n + j] = mt[(size_t)j * n + i] = (double)to[(size_t)i * n + j] * tok_bytes;
        double td, tc;
        if ((rc = rb_sim_alltoallv_time(sim, m, &td)) != 0 || (rc = rb_sim_alltoallv_time(sim, mt, &tc)) != 0)
            return rc;
        if (s == steps) {
            out->balanced_us = (td + tc) * 1e6;
        } else {
            out->dispatch_us += td * 1e6 / (double)steps;
            out->combine_us += tc * 1e6 / (double)steps;
            out->step_us += (td + tc) * 1e6 / (double)steps;
        }
    }
    return 0;
}

static cJSON *pred_json(const struct moe_pred *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "step_us", p->step_us);
    cJSON_AddNumberToObject(o, "dispatch_us", p->dispatch_us);
    cJSON_AddNumberToObject(o, "combine_us", p->combine_us);
    cJSON_AddNumberToObject(o, "balanced_step_us", p->balanced_us);
    cJSON_AddNumberToObject(o, "lost_us", p->step_us - p->balanced_us);
    return o;
}

/* The command's options. */
struct moe_args {
    uint64_t batch, hidden, eb, experts, top_k, seed, steps;
    double skew;
    bool json;
};

/* The router's load imbalance over the steps, as coll moe reports it; tok: p x p scratch. */
static double route_imbalance(const struct rb_moe_cfg *c, uint64_t steps, uint64_t *tok)
{
    const int p = c->ranks;
    uint64_t *load = calloc((size_t)p, sizeof *load);
    for (uint64_t s = 0; load && s < steps; s++) {
        rb_moe_route(c, s, tok, NULL);
        for (int i = 0; i < p; i++)
            for (int j = 0; j < p; j++)
                load[j] += tok[(size_t)i * p + j];
    }
    double imb = load ? rb_moe_imbalance(load, p) : 0;
    free(load);
    return imb;
}

/* The table: the design, the workload, one row per PXN setting, the gain; t0_ns: when the model started. */
static void moe_table(struct rb_buf *out, const struct rb_topo *t, const struct moe_args *a, const struct rb_moe_cfg *c,
                      double imb, const struct moe_pred pr[2], double gain, uint64_t t0_ns)
{
    bool pxn_differs = rb_topo_kind_def(t->kind)->spine_layer;
    rb_buf_printf(out, "# railbench fabric sim moe: predicted by the alpha-beta model, no data moved\n# ");
    rb_fabric_design_text(out, t);
    rb_buf_printf(out, "\n# %d ranks (one per GPU), %d experts, top-%d, %llu tokens per rank, hidden %llu x %llu B, "
                       "skew %g, seed %llu, mean of %llu steps; load imbalance %.3f\n",
                  c->ranks, c->experts, c->top_k, (unsigned long long)a->batch, (unsigned long long)a->hidden,
                  (unsigned long long)a->eb, a->skew, (unsigned long long)a->seed, (unsigned long long)a->steps, imb);
    rb_buf_printf(out, "#%9s  %12s  %12s  %12s  %12s  %12s\n", "PXN", "step (us)", "dispatch", "combine",
                  "balanced", "lost");
    for (int d = 0; d < 2; d++)
        rb_buf_printf(out, "%10s  %12.2f  %12.2f  %12.2f  %12.2f  %12.2f\n", d ? "on" : "off", pr[d].step_us,
                      pr[d].dispatch_us, pr[d].combine_us, pr[d].balanced_us, pr[d].step_us - pr[d].balanced_us);
    rb_buf_printf(out, "# PXN on: %.1f %% shorter steps%s\n# model time: %.3f s\n", gain,
                  pxn_differs ? "" : " (this design has no spine: PXN changes nothing)",
                  (double)(rb_clock_ns() - t0_ns) * 1e-9);
}

/* The summary: the topology, the workload and both predictions. */
static cJSON *moe_summary(const struct rb_topo *t, const struct moe_args *a, const struct rb_moe_cfg *c, double imb,
                          const struct moe_pred pr[2], double gain)
{
    cJSON *summary = cJSON_CreateObject();
    cJSON_AddBoolToObject(summary, "predicted", true);
    cJSON_AddItemToObject(summary, "topology", rb_topo_to_json(t));
    cJSON *mo = cJSON_AddObjectToObject(summary, "moe");
    cJSON_AddNumberToObject(mo, "ranks", c->ranks);
    cJSON_AddNumberToObject(mo, "experts", c->experts);
    cJSON_AddNumberToObject(mo, "top_k", c->top_k);
    cJSON_AddItemToObject(mo, "tokens_per_rank", rb_json_u64(a->batch));
    cJSON_AddItemToObject(mo, "hidden", rb_json_u64(a->hidden));
    cJSON_AddItemToObject(mo, "element_bytes", rb_json_u64(a->eb));
    cJSON_AddNumberToObject(mo, "skew", a->skew);
    cJSON_AddItemToObject(mo, "seed", rb_json_u64(a->seed));
    cJSON_AddItemToObject(mo, "steps", rb_json_u64(a->steps));
    cJSON_AddNumberToObject(mo, "imbalance", imb);
    cJSON_AddItemToObject(mo, "pxn_off", pred_json(&pr[0]));
    cJSON_AddItemToObject(mo, "pxn_on", pred_json(&pr[1]));
    cJSON_AddNumberToObject(mo, "pxn_gain_pct", gain);
    return summary;
}

/* The workload against the options and the topology's p GPUs: 0 or RB_EXIT_USAGE after one line. */
static int check_workload(const struct moe_args *a, const struct rb_moe_cfg *c, int p)
{
    if (a->experts > 1u << 24 || a->top_k > 1u << 24 || rb_moe_check(c) || a->steps < 1 || a->steps > 1000 ||
        a->batch < 1 || a->hidden < 1 || a->eb < 1)
        return rb_cli_usage_error("fabric sim moe: --experts %d --top-k %d --steps %llu: need experts a multiple of "
                                  "the %d GPUs, 1 <= top-k <= experts, 1 to 1000 steps, --skew 0 to 16",
                                  c->experts, c->top_k, (unsigned long long)a->steps, p);
    if (p > RB_SIM_ALLTOALL_EXACT_RANKS)
        return rb_cli_usage_error("fabric sim moe: %d GPUs; the all-to-all-v model takes at most %d", p,
                                  RB_SIM_ALLTOALL_EXACT_RANKS);
    return 0;
}

int rb_fabric_sim_moe_main(int argc, char **argv)
{
    struct rb_topo_opts to = {0};
    struct moe_args a = {.batch = 4096, .hidden = 4096, .eb = 2, .top_k = 2, .seed = 1, .steps = 4};
    const struct rb_opt opts[] = {
        {"batch", 0, RB_OPT_U64, &a.batch, "N", "tokens per rank and step", NULL},
        {"hidden", 0, RB_OPT_U64, &a.hidden, "N", "hidden size: elements per token", NULL},
        {"element-bytes", 0, RB_OPT_U64, &a.eb, "N", "bytes per element (2: bfloat16)", NULL},
        {"experts", 0, RB_OPT_U64, &a.experts, "N", "experts, a multiple of the GPUs (if not given: 2 per GPU)", NULL},
        {"top-k", 0, RB_OPT_U64, &a.top_k, "K", "experts each token goes to", NULL},
        {"skew", 0, RB_OPT_DOUBLE, &a.skew, "S", "router skew: 0 uniform; s > 0 Zipf (as railbench coll moe)", NULL},
        {"seed", 0, RB_OPT_U64, &a.seed, "N", "router seed", NULL},
        {"steps", 0, RB_OPT_U64, &a.steps, "N", "steps averaged (each routed anew, as coll moe's)", NULL},
        {"json", 0, RB_OPT_FLAG, &a.json, NULL, "print the summary as JSON instead of the table", NULL},
        RB_TOPO_OPTS(to),
        {0},
    };
    const struct rb_cmd_spec spec = {
        "railbench fabric sim moe [options]",
        "Predict railbench coll moe's workload (the same router) on a topology, one rank per GPU, with PXN off\n"
        "and on: dispatch and combine as pairwise all-to-all-v, and the same tokens routed evenly.",
        opts, 0, 0, false};
    struct rb_cli cli;
    int rc;
    if (!rb_cli_parse_cmd(&cli, &spec, argc, argv, &rc))
        return rc;
    struct rb_topo t;
    struct rb_sim *sim[2] = {NULL, NULL};
    struct rb_buf out = {0};
    cJSON *summary = NULL;
    uint64_t *tok = NULL;
    double *m = NULL, *mt = NULL;
    if ((rc = rb_fabric_topo_resolve(&to, &t)) != 0)
        goto done;
    int p = rb_topo_gpus(&t);
    struct rb_moe_cfg c = {.ranks = p, .tokens = a.batch, .experts = a.experts ? (int)a.experts : 2 * p,
                           .top_k = (int)a.top_k, .skew = a.skew, .seed = a.seed};
    if ((rc = check_workload(&a, &c, p)) != 0)
        goto done;
    for (int d = 0; d < 2; d++)
        if (rb_sim_create(&t, d == 1, &sim[d]) != 0) {
            rc = rb_cli_usage_error("fabric sim moe: the topology needs at least 2 GPUs");
            goto done;
        }
    tok = calloc((size_t)p * p, sizeof *tok);
    m = calloc((size_t)p * p, sizeof *m);
    mt = calloc((size_t)p * p, sizeof *mt);
    if (!tok || !m || !mt) {
        rc = RB_EXIT_RUNTIME;
        fprintf(stderr, "railbench: error: sim moe: out of memory\n");
        goto done;
    }
    uint64_t t0 = rb_clock_ns();
    struct moe_pred pr[2];
    for (int d = 0; d < 2; d++)
        if ((rc = predict(sim[d], &c, a.steps, (double)(a.hidden * a.eb), tok, m, mt, &pr[d])) != 0) {
            fprintf(stderr, "railbench: error: sim moe: %s\n", strerror(-rc));
            rc = RB_EXIT_RUNTIME;
            goto done;
        }
    double imb = route_imbalance(&c, a.steps, tok);
    double gain = pr[0].step_us > 0 ? 100 * (pr[0].step_us - pr[1].step_us) / pr[0].step_us : 0;
    moe_table(&out, &t, &a, &c, imb, pr, gain, t0);
    summary = moe_summary(&t, &a, &c, imb, pr, gain);
    if (out.oom) {
        fprintf(stderr, "railbench: error: sim moe: out of memory\n");
        rc = RB_EXIT_RUNTIME;
        goto done;
    }
    rc = rb_fabric_emit("fabric sim moe", &cli, out.s, summary, a.json);
    summary = NULL;
done:
    for (int d = 0; d < 2; d++)
        rb_sim_free(sim[d]);
    cJSON_Delete(summary);
    rb_buf_free(&out);
    free(tok);
    free(m);
    free(mt);
    rb_cli_free(&cli);
    return rc;
}
