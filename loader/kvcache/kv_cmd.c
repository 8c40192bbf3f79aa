/* railbench load kvcache: MLPerf Storage's KV-cache offload benchmark (users, turns, tiers): options and presets. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cmd/loader_int.h"
#include "../engine/fwatch_int.h"
#include "../proto/target_int.h"
#include "kvcache_int.h"
#include "railbench/beneath.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "railbench/units.h"

#define MAX_SCALE (UINT64_C(1) << 20)

/* "1/N" or "1". */
static int parse_scale(const char *s, uint64_t *den)
{
    *den = 1;
    if (!s || strcmp(s, "1") == 0)
        return 0;
    if (strncmp(s, "1/", 2) != 0 || rb_parse_u64(s + 2, den) || *den == 0 || *den > MAX_SCALE)
        return -EINVAL;
    return 0;
}

/* An architecture option given alone overrides the preset's; without a preset all three are needed. */
static int resolve_model(struct rb_kv_args *a)
{
    const struct rb_kv_model *m = NULL;
    const char *name = a->model_s ? a->model_s : a->preset ? a->preset->model : NULL;
    if (name && !(m = rb_kv_model_find(name)))
        return rb_cli_usage_error("--model \"%s\": expected %s (or --layers, --kv-heads and --head-dim)", name,
                                  rb_kv_model_list);
    if (!m && (!a->layers || !a->kv_heads || !a->head_dim))
        return rb_cli_usage_error("load kvcache: give --option 1|2|3, --model %s, or --layers, --kv-heads and "
                                  "--head-dim", rb_kv_model_list);
    a->model = m ? *m : (struct rb_kv_model){.name = "custom", .dtype_bytes = 2};
    if (a->layers || a->kv_heads || a->head_dim)
        a->model.name = "custom";
    if (a->layers)
        a->model.layers = (uint32_t)a->layers;
    if (a->kv_heads)
        a->model.kv_heads = (uint32_t)a->kv_heads;
    if (a->head_dim)
        a->model.head_dim = (uint32_t)a->head_dim;
    if (a->layers > 4096 || a->kv_heads > 4096 || a->head_dim > 4096)
        return rb_cli_usage_error("--layers, --kv-heads, --head-dim: at most 4096 each");
    if (!a->tp || a->tp > 4096 || a->model.kv_heads % a->tp)
        return rb_cli_usage_error("--tp %" PRIu64 ": expected a divisor of the model's %" PRIu32 " KV heads", a->tp,
                                  a->model.kv_heads);
    a->bytes_per_token = rb_kv_bytes_per_token(&a->model, (uint32_t)a->tp);
    return 0;
}

/* The preset (--option), then every option given on its own over it. */
static int resolve(struct rb_kv_args *a, const struct rb_cli *cli)
{
    if (a->option && !(a->preset = rb_kv_option_get((unsigned)a->option)))
        return rb_cli_usage_error("--option %" PRIu64 ": expected 1 (storage stress), 2 (throughput) or 3 (large "
                                  "model)", a->option);
    int st = resolve_model(a);
    if (st)
        return st;
    if (parse_scale(a->scale_s, &a->scale_den))
        return rb_cli_usage_error("--scale \"%s\": expected 1/N (users, entries and CPU tier N times smaller), N from "
                                  "1 to 2^20", a->scale_s);
    const struct rb_kv_option *p = a->preset;
    if (p && !rb_cli_given(cli, "--users"))
        a->users = p->users;
    if (p && !rb_cli_given(cli, "--cpu-tier"))
        a->cpu_tier_bytes = p->cpu_tier_bytes;
    if (p && !rb_cli_given(cli, "--inflight"))
        a->inflight = p->inflight;
    if (!rb_cli_given(cli, "--users")) /* the preset's users scaled; users given are taken as they are */
        a->users = (a->users + a->scale_den - 1) / a->scale_den;
    if (!rb_cli_given(cli, "--cpu-tier"))
        a->cpu_tier_bytes /= a->scale_den;
    if (!a->users || a->users > 100000)
        return rb_cli_usage_error("--users %" PRIu64 ": expected 1 to 100000 simulated users per rank", a->users);
    if (!a->inflight || a->inflight > 1024)
        return rb_cli_usage_error("--inflight %" PRIu64 ": expected 1 to 1024 allocations in flight per rank",
                                  a->inflight);
    if (!a->trials || a->trials > 100)
        return rb_cli_usage_error("--trials %" PRIu64 ": expected 1 to 100", a->trials);
    if (a->trace_path) {
        if (rb_cli_given(cli, "--trials") || rb_cli_given(cli, "--gap"))
            return rb_cli_usage_error("--trace: one replay of the trace; --trials and --gap are for the options");
        if (!(a->speedup > 0) || a->speedup > 1e6)
            return rb_cli_usage_error("--speedup %g: expected more than 0, at most 1e6", a->speedup);
        a->trials = 1;
        if (!rb_cli_given(cli, "--duration"))
            a->duration_ns = 0; /* until the trace's last request is done */
    } else if (rb_cli_given(cli, "--speedup")) {
        return rb_cli_usage_error("--speedup: for --trace (the trace's arrival times this many times faster)");
    }
    if (!a->duration_ns && !a->trace_path)
        return rb_cli_usage_error("--duration 0: a trial needs a length (MLPerf Storage: 300s)");
    if (a->block_bytes < 4096 || a->block_bytes > (UINT64_C(1) << 30))
        return rb_cli_usage_error("--block-size %" PRIu64 ": expected 4KiB to 1GiB", a->block_bytes);
    return 0;
}

static int run_args(void *args, struct rb_cli *cli)
{
    struct rb_kv_args *a = args;
    int status = resolve(a, cli);
    if (status)
        return status;
    return rb_kv_run(a, cli);
}

int rb_load_kvcache_main(int argc, char **argv)
{
    struct rb_kv_args a = {
        .tp = 1,
        .users = 1,
        .inflight = 16,
        .trials = 3,
        .seed = 42,
        .block_bytes = UINT64_C(4) << 20,
        .duration_ns = 300 * RB_NS_PER_S,
        .gap_ns = 90 * RB_NS_PER_S,
        .speedup = 1,
    };
    rb_load_defaults(&a.tgt, NULL, NULL);
    a.tgt.timeout_ns = 120 * RB_NS_PER_S;
    const struct rb_opt own[] = {
        {"option", 0, RB_OPT_U64, &a.option, "N",
         "MLPerf Storage v3.0's option: 1 storage stress (llama3.1-8b, 200 users, no CPU tier, 16 in flight), 2 "
         "throughput (100 users, 4GiB CPU tier), 3 large model (llama3.1-70b, 70 users, 4 in flight)", NULL},
        {"model", 0, RB_OPT_STR, &a.model_s, "NAME", "the model whose KV cache is offloaded (if not given: the "
         "option's)", "llama3.1-8b|llama3.1-70b|llama3.1-405b"},
        {"layers", 0, RB_OPT_U64, &a.layers, "N", "a model of its own: layers (with --kv-heads, --head-dim)", NULL},
        {"kv-heads", 0, RB_OPT_U64, &a.kv_heads, "N", "a model of its own: KV heads", NULL},
        {"head-dim", 0, RB_OPT_U64, &a.head_dim, "N", "a model of its own: head dimension", NULL},
        {"tp", 0, RB_OPT_U64, &a.tp, "N", "tensor parallelism: each entry keeps 1/N of the KV heads", NULL},
        {"users", 0, RB_OPT_U64, &a.users, "N", "simulated users per rank (if not given: the option's, scaled)", NULL},
        {"inflight", 'c', RB_OPT_U64, &a.inflight, "N", "allocations in flight per rank: threads, each playing its "
         "share of the users (if not given: the option's, else 16)", NULL},
        {"cpu-tier", 0, RB_OPT_SIZE, &a.cpu_tier_bytes, "SIZE", "in-process CPU tier per rank, LRU demotion to "
         "storage at 0.8 full; 0: off (if not given: the option's, scaled)", NULL},
        {"storage-tier", 0, RB_OPT_SIZE, &a.storage_tier_bytes, "SIZE", "storage tier per rank: beyond it the least "
         "recently used entries are deleted (0: no limit)", NULL},
        {"scale", 0, RB_OPT_STR, &a.scale_s, "1/N", "users, every entry's tokens and the CPU tier N times smaller: "
         "the option's shape at a size that fits", NULL},
        {"duration", 'd', RB_OPT_DURATION, &a.duration_ns, "D", "each trial's length (MLPerf Storage: 300s)", NULL},
        {"trials", 0, RB_OPT_U64, &a.trials, "N", "trials of the option (MLPerf Storage: 3)", NULL},
        {"gap", 0, RB_OPT_DURATION, &a.gap_ns, "D", "pause between trials (MLPerf Storage: 90s)", NULL},
        {"seed", 0, RB_OPT_U64, &a.seed, "N", "seed of the users (each rank: seed + rank) and of the payload", NULL},
        {"block-size", 0, RB_OPT_SIZE, &a.block_bytes, "SIZE", "bytes per read or write system call", NULL},
        {"trace", 0, RB_OPT_STR, &a.trace_path, "FILE", "replay a Mooncake (JSON lines) or BurstGPT (CSV) trace "
         "instead of the users: requests split over ranks, open loop at the trace's arrival times", NULL},
        {"speedup", 0, RB_OPT_DOUBLE, &a.speedup, "X", "--trace: arrivals X times faster than the trace's", NULL},
        {"keep", 0, RB_OPT_FLAG, &a.keep, NULL, "leave the entries of the last trial's open conversations (else every "
         "entry the run made is removed at the end)", NULL},
        {"verify", 0, RB_OPT_FLAG, &a.verify, NULL, "compare every byte read with the seeded payload", NULL},
        {0},
    };
    struct rb_opts opts = {0};
    rb_opts_add(&opts, own);
    rb_load_options(&opts, &a.tgt, NULL, NULL);
    const struct rb_cmd_spec spec = {
        "railbench load kvcache [options] URL",
        "MLPerf Storage's KV-cache offload benchmark on file:///PATH, s3://BUCKET[/PREFIX], ais://BUCKET or "
        "http://HOST/PATH: simulated users per rank hold conversations whose turns write their KV entry (a NumPy file, "
        "fsync'd, or an object) and read it back (a file's pages dropped first) while decoding; device and host time "
        "apart.",
        opts.v, 1, 1, false};
    return rb_load_command(&spec, argc, argv, run_args, &a);
}
