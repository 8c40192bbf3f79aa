/*
 * railbench coll moe: a mixture-of-experts layer's communication, step by
 * step -- every rank routes its tokens to top-k experts (seeded, skew from
 * uniform to Zipf), dispatch sends each token copy to its expert's rank
 * (all-to-all-v), combine returns them -- with step time, bytes per rank
 * pair, the load imbalance and the time lost to the most loaded expert rank.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo_int.h"
#include "railbench/clock.h"
#include "railbench/command.h"
#include "railbench/moe.h"
#include "railbench/units.h"

struct moe_opts {
    uint64_t tokens, hidden, experts, top_k, seed, steps, warmup, elem_bytes, ranks_per_node;
    double skew;
    const char *algo;
};

/* One pass of steps (routed as configured, or the even baseline): per step, the slowest rank's times. */
struct pass {
    double *dispatch_us, *combine_us, *step_us, *wait_us; /* [steps] on rank 0 */
    uint64_t *pair_bytes;                                  /* [n x n] dispatch bytes summed over the timed steps */
    uint64_t *pair_counted;                                /* the same as MPI_Get_count saw it (ring), or NULL */
    uint64_t *rank_tokens, *expert_tokens;                 /* token copies per expert rank and per expert, summed */
    uint64_t wrong;
};

struct moe {
    struct rb_harness *h;
    const struct moe_opts *o;
    struct rb_moe_cfg cfg;
    enum rb_coll_algo algo;
    struct rb_coll_rails rl;
    struct rb_coll_args a;
    char *send, *recv, *back;
    size_t cap_send, cap_recv, cap_back;
    uint64_t *tokens_to, *expert_load, *got;
    size_t *m, *mt;
};

/* Grows *buf to at least bytes (outside the timed calls); pages touched. */
static void grow(struct moe *M, char **buf, size_t *cap, size_t bytes)
{
    if (bytes <= *cap)
        return;
    free(*buf);
    if (!(*buf = malloc(bytes)))
        rb_harness_fatal(M->h, RB_EXIT_RUNTIME, "cannot allocate %zu bytes for a step's tokens (lower --batch)", bytes);
    memset(*buf, 0, bytes);
    *cap = bytes;
}

static int exchange(struct moe *M, const size_t *m, const void *send, void *recv, uint64_t *got)
{
    switch (M->algo) {
    case RB_COLL_ALGO_RING: return rb_a2av_pairwise(&M->a, m, send, recv, got);
    case RB_COLL_ALGO_HIER: return rb_a2av_pxn(&M->a, m, send, recv);
    default: return rb_a2av_mpi(&M->a, m, send, recv);
    }
}

/*
 * One step: route (every rank computes every rank's routing), fill this
 * rank's tokens, then dispatch and combine, each timed; the combine sends
 * every token back to its rank, so the result must equal what was sent.
 * Returns this rank's wrong bytes; times in us into t[0..1].
 */
static uint64_t one_step(struct moe *M, uint64_t step, bool balanced, double *t)
{
    const int n = M->h->size, me = M->h->rank;
    const size_t tok_bytes = M->o->hidden * M->o->elem_bytes;
    int rc = balanced ? rb_moe_route_balanced(&M->cfg, M->tokens_to, M->expert_load)
                      : rb_moe_route(&M->cfg, step, M->tokens_to, M->expert_load);
    if (rc)
        rb_harness_fatal(M->h, RB_EXIT_RUNTIME, "moe: routing failed: %s", strerror(-rc));
    size_t sent = 0, got = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            M->m[(size_t)i * n + j] = M->tokens_to[(size_t)i * n + j] * tok_bytes;
            M->mt[(size_t)j * n + i] = M->m[(size_t)i * n + j];
            sent += i == me ? M->m[(size_t)i * n + j] : 0;
            got += j == me ? M->m[(size_t)i * n + j] : 0;
        }
    grow(M, &M->send, &M->cap_send, sent + 1);
    grow(M, &M->recv, &M->cap_recv, got + 1);
    grow(M, &M->back, &M->cap_back, sent + 1); /* combine brings back what was sent */
    rb_coll_data_fill_value(M->send, sent, RB_COLL_UINT8, me, 0, step);
    RB_MPI_CHECK(MPI_Barrier(M->h->comm));
    uint64_t t0 = rb_clock_ns();
    rc = exchange(M, M->m, M->send, M->recv, M->got);
    uint64_t t1 = rb_clock_ns();
    if (!rc)
        rc = exchange(M, M->mt, M->recv, M->back, NULL);
    uint64_t t2 = rb_clock_ns();
    if (rc)
        rb_harness_fatal(M->h, RB_EXIT_RUNTIME, "moe: all-to-all-v failed: %s", strerror(-rc));
    t[0] = (double)(t1 - t0) / 1e3;
    t[1] = (double)(t2 - t1) / 1e3;
    /* Dispatch: the block from rank i is i's tokens for me, from where its blocks for ranks before me end. */
    uint64_t wrong = 0;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        size_t skip = 0;
        for (int k = 0; k < me; k++)
            skip += M->m[(size_t)i * n + k];
        wrong += rb_coll_data_check_value(M->recv + at, M->m[(size_t)i * n + me], RB_COLL_UINT8, i, skip, step);
        at += M->m[(size_t)i * n + me];
    }
    /* Combine: every token came home. */
    wrong += rb_coll_data_check_value(M->back, sent, RB_COLL_UINT8, me, 0, step);
    return wrong;
}

/* Runs warm-up then timed steps; rank 0 fills p. Collective. */
static void run_pass(struct moe *M, bool balanced, struct pass *p)
{
    const int n = M->h->size;
    const uint64_t steps = M->o->steps;
    double *mine = calloc(2 * steps, sizeof *mine), *all = NULL;
    uint64_t *counted = M->algo == RB_COLL_ALGO_RING ? calloc((size_t)n, sizeof *counted) : NULL;
    if (!mine || (M->h->rank == 0 && !(all = calloc(2 * steps * (size_t)n, sizeof *all))))
        rb_harness_fatal(M->h, RB_EXIT_RUNTIME, "out of memory");
    memset(p, 0, sizeof *p);
    p->pair_bytes = calloc((size_t)n * n, sizeof *p->pair_bytes);
    p->rank_tokens = calloc((size_t)n, sizeof *p->rank_tokens);
    p->expert_tokens = calloc((size_t)M->cfg.experts, sizeof *p->expert_tokens);
    if (!p->pair_bytes || !p->rank_tokens || !p->expert_tokens)
        rb_harness_fatal(M->h, RB_EXIT_RUNTIME, "out of memory");
    uint64_t wrong = 0;
    for (uint64_t s = 0; s < M->o->warmup + steps; s++) {
        double t[2];
        wrong += one_step(M, s, balanced, t);
        if (s < M->o->warmup)
            continue;
        uint64_t k = s - M->o->warmup;
        mine[2 * k] = t[0];
        mine[2 * k + 1] = t[1];
        for (int i = 0; i < n * n; i++)
            p->pair_bytes[i] += M->m[i];
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                p->rank_tokens[j] += M->tokens_to[(size_t)i * n + j];
        for (int e = 0; e < M->cfg.experts; e++)
            p->expert_tokens[e] += M->expert_load[e];
        for (int i = 0; counted && i < n; i++)
            counted[i] += M->got[i];
    }
    RB_MPI_CHECK(MPI_Gather(mine, (int)(2 * steps), MPI_DOUBLE, all, (int)(2 * steps), MPI_DOUBLE, 0, M->h->comm));
    RB_MPI_CHECK(MPI_Reduce(&wrong, &p->wrong, 1, MPI_UINT64_T, MPI_SUM, 0, M->h->comm));
    if (counted) { /* [source][destination]: each destination's counts of what arrived from each source */
        uint64_t *cols = M->h->rank == 0 ? calloc((size_t)n * n, sizeof *cols) : NULL;
        RB_MPI_CHECK(MPI_Gather(counted, n, MPI_UINT64_T, cols, n, MPI_UINT64_T, 0, M->h->comm));
        if (cols && (p->pair_counted = calloc((size_t)n * n, sizeof *p->pair_counted)))
            for (int d = 0; d < n; d++)
                for (int s = 0; s < n; s++)
                    p->pair_counted[(size_t)s * n + d] = cols[(size_t)d * n + s];
        free(cols);
    }
    if (M->h->rank == 0) {
        p->dispatch_us = calloc(steps, sizeof(double));
        p->combine_us = calloc(steps, sizeof(double));
        p->step_us = calloc(steps, sizeof(double));
        p->wait_us = calloc(steps, sizeof(double));
        if (!p->dispatch_us || !p->combine_us || !p->step_us || !p->wait_us)
            rb_harness_fatal(M->h, RB_EXIT_RUNTIME, "out of memory");
        /* A step ends when its slowest rank does; the others wait (max - mean) for it. */
        for (uint64_t k = 0; k < steps; k++) {
            double mean = 0;
            for (int r = 0; r < n; r++) {
                const double *x = all + (size_t)r * 2 * steps + 2 * k;
                p->dispatch_us[k] = x[0] > p->dispatch_us[k] ? x[0] : p->dispatch_us[k];
                p->combine_us[k] = x[1] > p->combine_us[k] ? x[1] : p->combine_us[k];
                p->step_us[k] = x[0] + x[1] > p->step_us[k] ? x[0] + x[1] : p->step_us[k];
                mean += (x[0] + x[1]) / n;
            }
            p->wait_us[k] = p->step_us[k] - mean;
        }
    }
    free(mine);
    free(all);
    free(counted);
}

static void pass_free(struct pass *p)
{
    free(p->dispatch_us);
    free(p->combine_us);
    free(p->step_us);
    free(p->wait_us);
    free(p->pair_bytes);
    free(p->pair_counted);
    free(p->rank_tokens);
    free(p->expert_tokens);
}

static double mean_of(const double *v, uint64_t n)
{
    double s = 0;
    for (uint64_t i = 0; i < n; i++)
        s += v[i];
    return n ? s / (double)n : 0;
}

static cJSON *u64_matrix(const uint64_t *m, int n, double div)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *row = cJSON_CreateArray();
        for (int j = 0; j < n; j++)
            cJSON_AddItemToArray(row, div == 1 ? rb_json_u64(m[(size_t)i * n + j])
                                               : cJSON_CreateNumber((double)m[(size_t)i * n + j] / div));
        cJSON_AddItemToArray(a, row);
    }
    return a;
}

static cJSON *u64_list(const uint64_t *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, rb_json_u64(v[i]));
    return a;
}

/* Rank 0: the text and summary.moe. */
static void report(struct moe *M, const struct pass *sk, const struct pass *bal)
{
    struct rb_harness *h = M->h;
    const struct moe_opts *o = M->o;
    const int n = h->size;
    const uint64_t steps = o->steps;
    double step = mean_of(sk->step_us, steps), disp = mean_of(sk->dispatch_us, steps),
           comb = mean_of(sk->combine_us, steps), wait = mean_of(sk->wait_us, steps),
           even = mean_of(bal->step_us, steps), lost = step - even, slowest = 0;
    for (uint64_t k = 0; k < steps; k++)
        slowest = sk->step_us[k] > slowest ? sk->step_us[k] : slowest;
    double imb = rb_moe_imbalance(sk->rank_tokens, n), imb_e = rb_moe_imbalance(sk->expert_tokens, M->cfg.experts);
    uint64_t total = 0;
    for (int i = 0; i < n * n; i++)
        total += sk->pair_bytes[i];
    printf("# railbench coll moe: %d ranks (%d per node), %d experts (%d per rank), top-%d, %llu tokens per rank, "
           "hidden %llu x %llu B, skew %g, seed %llu, algorithm %s, %llu steps after %llu warm-up\n",
           n, M->rl.ranks_per_node, M->cfg.experts, M->cfg.experts / n, M->cfg.top_k, (unsigned long long)o->tokens,
           (unsigned long long)o->hidden, (unsigned long long)o->elem_bytes, o->skew, (unsigned long long)o->seed,
           rb_coll_algo_name(M->algo), (unsigned long long)steps, (unsigned long long)o->warmup);
    printf("#  step  dispatch (us)  combine (us)   step (us)  wait (us)\n");
    for (uint64_t k = 0; k < steps; k++)
        printf("%7llu  %13.2f  %12.2f  %10.2f  %9.2f\n", (unsigned long long)k, sk->dispatch_us[k], sk->combine_us[k],
               sk->step_us[k], sk->wait_us[k]);
    printf("# step time      : %.2f us mean (dispatch %.2f, combine %.2f; slowest step %.2f)\n", step, disp, comb,
           slowest);
    printf("# balanced route : %.2f us mean per step (the same tokens, every expert rank equally loaded)\n", even);
    printf("# lost to the most loaded expert rank: %.2f us per step (%.1f %% of the step); the other ranks wait "
           "%.2f us per step for the slowest\n",
           lost, step > 0 ? 100 * lost / step : 0.0, wait);
    printf("# load imbalance : %.3f (max / mean token copies per expert rank), %.3f per expert\n", imb, imb_e);
    printf("# tokens per expert rank:");
    for (int j = 0; j < n; j++)
        printf(" %llu", (unsigned long long)sk->rank_tokens[j]);
    printf("\n# dispatch bytes per rank pair, mean per step (combine is the transpose), from row to column:\n#%9s", "");
    for (int j = 0; j < n; j++)
        printf("  %12d", j);
    printf("\n");
    for (int i = 0; i < n; i++) {
        printf("# %8d", i);
        for (int j = 0; j < n; j++)
            printf("  %12.0f", (double)sk->pair_bytes[(size_t)i * n + j] / (double)steps);
        printf("\n");
    }
    printf("# Out of bounds values : %llu %s\n", (unsigned long long)(sk->wrong + bal->wrong),
           sk->wrong + bal->wrong ? "FAILED" : "OK");
    fflush(stdout);

    cJSON *s = cJSON_CreateObject(), *moe = cJSON_AddObjectToObject(s, "moe");
    cJSON_AddNumberToObject(moe, "ranks", n);
    cJSON_AddNumberToObject(moe, "ranks_per_node", M->rl.ranks_per_node);
    cJSON_AddNumberToObject(moe, "experts", M->cfg.experts);
    cJSON_AddNumberToObject(moe, "top_k", M->cfg.top_k);
    cJSON_AddItemToObject(moe, "tokens_per_rank", rb_json_u64(o->tokens));
    cJSON_AddItemToObject(moe, "hidden", rb_json_u64(o->hidden));
    cJSON_AddItemToObject(moe, "element_bytes", rb_json_u64(o->elem_bytes));
    cJSON_AddNumberToObject(moe, "skew", o->skew);
    cJSON_AddItemToObject(moe, "seed", rb_json_u64(o->seed));
    cJSON_AddStringToObject(moe, "algo", rb_coll_algo_name(M->algo));
    cJSON_AddItemToObject(moe, "steps", rb_json_u64(steps));
    cJSON_AddNumberToObject(moe, "step_us", step);
    cJSON_AddNumberToObject(moe, "dispatch_us", disp);
    cJSON_AddNumberToObject(moe, "combine_us", comb);
    cJSON_AddNumberToObject(moe, "wait_us", wait);
    cJSON_AddNumberToObject(moe, "balanced_step_us", even);
    cJSON_AddNumberToObject(moe, "lost_us", lost);
    cJSON_AddNumberToObject(moe, "lost_pct", step > 0 ? 100 * lost / step : 0.0);
    cJSON_AddNumberToObject(moe, "imbalance", imb);
    cJSON_AddNumberToObject(moe, "imbalance_per_expert", imb_e);
    cJSON_AddItemToObject(moe, "rank_tokens", u64_list(sk->rank_tokens, n));
    cJSON_AddItemToObject(moe, "expert_tokens", u64_list(sk->expert_tokens, M->cfg.experts));
    cJSON_AddItemToObject(moe, "pair_bytes", u64_matrix(sk->pair_bytes, n, 1));
    if (sk->pair_counted)
        cJSON_AddItemToObject(moe, "pair_bytes_counted", u64_matrix(sk->pair_counted, n, 1));
    cJSON_AddItemToObject(moe, "balanced_rank_tokens", u64_list(bal->rank_tokens, n));
    cJSON *st = cJSON_AddArrayToObject(moe, "per_step");
    for (uint64_t k = 0; k < steps; k++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "dispatch_us", sk->dispatch_us[k]);
        cJSON_AddNumberToObject(x, "combine_us", sk->combine_us[k]);
        cJSON_AddNumberToObject(x, "step_us", sk->step_us[k]);
        cJSON_AddNumberToObject(x, "wait_us", sk->wait_us[k]);
        cJSON_AddItemToArray(st, x);
    }
    cJSON_AddItemToObject(moe, "wrong", rb_json_u64(sk->wrong + bal->wrong));
    rb_result_set(&h->result, "summary", s);
    cJSON *ph = cJSON_CreateObject();
    cJSON_AddStringToObject(ph, "name", "moe");
    cJSON_AddStringToObject(ph, "op", "moe");
    cJSON_AddNumberToObject(ph, "count", (double)steps);
    cJSON_AddNumberToObject(ph, "bytes", 2.0 * (double)total);
    cJSON_AddNumberToObject(ph, "duration_s", step * (double)steps / 1e6);
    cJSON_AddNumberToObject(ph, "ops_per_s", step > 0 ? 1e6 / step : 0);
    cJSON *errs = cJSON_AddObjectToObject(ph, "errors");
    cJSON_AddNumberToObject(errs, "total", (double)(sk->wrong + bal->wrong));
    rb_result_add_phase(&h->result, ph);
    rb_result_check(&h->result, "wrong", sk->wrong + bal->wrong == 0, "%llu wrong bytes after dispatch and combine",
                    (unsigned long long)(sk->wrong + bal->wrong));
}

/* Checks the options once the number of ranks is known; one line and RB_EXIT_USAGE, else 0. */
static int precheck(void *ctx, int rank, int size)
{
    struct moe *M = ctx;
    const struct moe_opts *o = M->o;
    M->cfg.ranks = size;
    if (!o->experts)
        M->cfg.experts = 2 * size;
    if (M->cfg.experts % size || rb_moe_check(&M->cfg))
        return rank == 0 ? rb_cli_usage_error("--experts %d --top-k %d: need a multiple of the %d ranks and 1 <= "
                                              "top-k <= experts (e.g. --experts %d)",
                                              M->cfg.experts, M->cfg.top_k, size, 2 * size)
                         : RB_EXIT_USAGE;
    double step_bytes = (double)o->tokens * (double)o->top_k * (double)o->hidden * (double)o->elem_bytes;
    if (step_bytes > 2147483647.0)
        return rank == 0 ? rb_cli_usage_error("--batch %llu x --top-k x --hidden x --element-bytes: %.0f bytes per "
                                              "rank and step, at most 2147483647 (MPI counts are int)",
                                              (unsigned long long)o->tokens, step_bytes)
                         : RB_EXIT_USAGE;
    return 0;
}

int rb_coll_moe_main(int argc, char **argv)
{
    struct moe_opts o = {.tokens = 4096, .hidden = 4096, .top_k = 2, .seed = 1, .steps = 10, .warmup = 2,
                         .elem_bytes = 2, .algo = "mpi"};
    const struct rb_opt opts[] = {
        {"batch", 0, RB_OPT_U64, &o.tokens, "N", "tokens per rank and step", NULL},
        {"hidden", 0, RB_OPT_U64, &o.hidden, "N", "hidden size: elements per token", NULL},
        {"element-bytes", 0, RB_OPT_U64, &o.elem_bytes, "N", "bytes per element (2: bfloat16)", NULL},
        {"experts", 0, RB_OPT_U64, &o.experts, "N", "experts, a multiple of the ranks (if not given: 2 per rank)",
         NULL},
        {"top-k", 0, RB_OPT_U64, &o.top_k, "K", "experts each token goes to", NULL},
        {"skew", 0, RB_OPT_DOUBLE, &o.skew, "S",
         "router skew: 0 uniform; s > 0 Zipf, expert e drawn with weight 1/(e+1)^s (expert 0 on rank 0)", NULL},
        {"seed", 0, RB_OPT_U64, &o.seed, "N", "router seed (the same on every rank)", NULL},
        {"steps", 0, RB_OPT_U64, &o.steps, "N", "timed steps (each routed anew)", NULL},
        {"warmup-steps", 0, RB_OPT_U64, &o.warmup, "N", "untimed steps before them", NULL},
        {"algo", 0, RB_OPT_STR, &o.algo, "ALGO",
         "all-to-all-v of dispatch and combine: mpi (MPI_Alltoallv), ring (pairwise), hier (PXN relay over rails)",
         NULL},
        {"ranks-per-node", 0, RB_OPT_U64, &o.ranks_per_node, "L",
         "treat each L consecutive ranks as one node (0: one node per host)", NULL},
        {0},
    };
    const struct rb_cmd_spec spec = {
        "railbench coll moe [options]",
        "A mixture-of-experts layer's dispatch and combine all-to-all-v per step: seeded top-k routing from "
        "uniform to Zipf, step time, bytes per rank pair, load imbalance, and the time lost to the most loaded "
        "expert rank against the same tokens routed evenly.",
        opts, 0, 0, false};
    struct rb_cli cli;
    int rc;
    if (!rb_cli_parse_cmd(&cli, &spec, argc, argv, &rc))
        return rb_coll_usage_exit(rc);
    static struct moe M;
    memset(&M, 0, sizeof M);
    M.o = &o;
    M.cfg = (struct rb_moe_cfg){.tokens = o.tokens, .experts = (int)o.experts, .top_k = (int)o.top_k,
                                .skew = o.skew, .seed = o.seed};
    const char *bad = NULL;
    if (rb_coll_algo_parse(o.algo, &M.algo) != 0 ||
        (M.algo != RB_COLL_ALGO_MPI && M.algo != RB_COLL_ALGO_RING && M.algo != RB_COLL_ALGO_HIER))
        bad = "--algo: use mpi, ring or hier";
    else if (!(o.skew >= 0 && o.skew <= 16))
        bad = "--skew: use 0 (uniform) to 16";
    else if (o.steps < 1 || o.steps > 100000 || o.tokens < 1 || o.hidden < 1 || o.elem_bytes < 1 || o.top_k < 1 ||
             o.experts > 1 << 20 || o.top_k > 1 << 20)
        bad = "--steps, --batch, --hidden, --element-bytes and --top-k must be at least 1 (--steps at most 100000)";
    if (bad) {
        rc = rb_cli_usage_error("%s", bad);
        rb_cli_free(&cli);
        return rb_coll_usage_exit(rc);
    }
    struct rb_harness h;
    rc = rb_harness_init(&h, "coll moe", &cli, &(struct rb_harness_opts){.mpi = true, .precheck = precheck, .ctx = &M});
    if (rc != 0) {
        rb_cli_free(&cli);
        return rb_coll_usage_exit(rc);
    }
    M.h = &h;
    rb_coll_rails_place(&h, o.ranks_per_node, &M.rl);
    rb_coll_rails_build(&h, h.comm, &M.rl);
    if (M.algo == RB_COLL_ALGO_HIER && !M.rl.hier_ok)
        rb_harness_fatal(&h, RB_EXIT_USAGE, "--algo hier: %s", M.rl.hier_why);
    M.a = (struct rb_coll_args){.world = M.rl.world, .node = M.rl.node, .rail = M.rl.rail,
                                .world_of = M.rl.hier_ok ? M.rl.world_of : NULL, .type = RB_COLL_UINT8,
                                .type_bytes = 1, .op = RB_COLL_NONE, .root = -1};
    const size_t n = (size_t)h.size;
    M.tokens_to = calloc(n * n, sizeof *M.tokens_to);
    M.expert_load = calloc((size_t)M.cfg.experts, sizeof *M.expert_load);
    M.got = calloc(n, sizeof *M.got);
    M.m = calloc(n * n, sizeof *M.m);
    M.mt = calloc(n * n, sizeof *M.mt);
    if (!M.tokens_to || !M.expert_load || !M.got || !M.m || !M.mt)
        rb_harness_fatal(&h, RB_EXIT_RUNTIME, "out of memory");
    struct pass sk, bal;
    run_pass(&M, false, &sk);
    run_pass(&M, true, &bal);
    if (h.rank == 0)
        report(&M, &sk, &bal);
    uint64_t wrong = sk.wrong + bal.wrong;
    RB_MPI_CHECK(MPI_Bcast(&wrong, 1, MPI_UINT64_T, 0, h.comm));
    pass_free(&sk);
    pass_free(&bal);
    free(M.tokens_to);
    free(M.expert_load);
    free(M.got);
    free(M.m);
    free(M.mt);
    free(M.send);
    free(M.recv);
    free(M.back);
    rb_coll_rails_free(&h, &M.rl);
    rc = rb_harness_finish(&h, NULL, wrong ? RB_EXIT_CHECK : 0);
    rb_cli_free(&cli);
    return rc;
}
