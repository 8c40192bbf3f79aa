/* railbench fabric sim: predicted nccl-tests tables from the alpha-beta model, design comparison, calibration. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"
#include "railbench/clock.h"
#include "railbench/command.h"
#include "railbench/busbw.h"
#include "sim_int.h"
#include "railbench/units.h"

#define MAX_SIZES 4096

struct dtype {
    const char *name;
    int bytes;
};

/* nccl-tests' -d types and their sizes. */
static const struct dtype dtypes[] = {
    {"int8", 1}, {"uint8", 1}, {"int32", 4}, {"uint32", 4}, {"int64", 8}, {"uint64", 8},
    {"half", 2}, {"float", 4}, {"double", 8}, {"bfloat16", 2}, {NULL, 0},
};

/* What is being predicted: collectives x algorithms over sizes. */
struct job {
    bool coll[RB_COLL_KINDS];
    bool algo[RB_SIM_ALGOS];
    bool all_algos;
    uint64_t sizes[MAX_SIZES];
    size_t nsizes;
    const struct dtype *type;
    const char *op;
    int root;
};

/*
 * Elements per rank and bytes as nccl-tests rounds them (v2.13.12+: the
 * per-rank share of allgather, reducescatter and alltoall aligned to 16
 * bytes); the size column is the whole array where S is.
 */
static void round_size(enum rb_coll_kind k, uint64_t size, int ranks, int tbytes, uint64_t *count, uint64_t *bytes)
{
    bool per_rank = rb_coll_kind_def(k)->whole_array;
    uint64_t elems = size / (uint64_t)tbytes;
    *count = per_rank ? rb_coll_per_rank_count(elems, ranks, (size_t)tbytes, false) : elems;
    *bytes = *count * (uint64_t)tbytes * (per_rank ? (uint64_t)ranks : 1u);
}

static int usage(const char *opt, const char *val, const char *want)
{
    return rb_cli_usage_error("%s: expected %s, got \"%s\"", opt, want, val);
}

static int parse_job(struct job *j, int nargs, const char **args, const char *algos, uint64_t b, uint64_t e,
                     uint64_t f, uint64_t inc, const char *type, const char *op, int64_t root)
{
    const char *colls = nargs > 0 ? args[0] : "allreduce";
    char buf[256];
    snprintf(buf, sizeof buf, "%s", colls);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        enum rb_coll_kind k;
        if (strcmp(w, "all") == 0)
            for (int i = 0; i < RB_COLL_KINDS; i++)
                j->coll[i] = true;
        else if (rb_coll_kind_parse(w, &k) == 0)
            j->coll[k] = true;
        else { /* every word fabric sim takes: the collectives, all, moe */
            const char *words[RB_COLL_KINDS + 3];
            int n = 0;
            for (int i = 0; i < RB_COLL_KINDS; i++)
                words[n++] = rb_coll_kind_name((enum rb_coll_kind)i);
            words[n++] = "all";
            words[n++] = "moe";
            words[n] = NULL;
            return rb_unknown_word("collective", "railbench fabric sim", w, words, sizeof words[0]);
        }
    }
    snprintf(buf, sizeof buf, "%s", algos);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        enum rb_sim_algo a;
        if (strcmp(w, "all") == 0)
            j->all_algos = true;
        else if (rb_sim_algo_parse(w, &a) == 0)
            j->algo[a] = true;
        else
            return usage("--algo", w, "ring, rd, rhd, tree, hier or all (comma-separated)");
    }
    /* An explicitly named algorithm must exist for every collective asked for. */
    for (int k = 0; k < RB_COLL_KINDS && !j->all_algos; k++)
        for (int a = 0; a < RB_SIM_ALGOS; a++)
            if (j->coll[k] && j->algo[a] && !rb_sim_supports((enum rb_coll_kind)k, (enum rb_sim_algo)a)) {
                char list[64] = "";
                for (int x = 0; x < RB_SIM_ALGOS; x++)
                    if (rb_sim_supports((enum rb_coll_kind)k, (enum rb_sim_algo)x))
                        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "",
                                 rb_sim_algo_name((enum rb_sim_algo)x));
                return rb_cli_usage_error("--algo %s: not modelled for %s (modelled: %s, or all)",
                                          rb_sim_algo_name((enum rb_sim_algo)a),
                                          rb_coll_kind_name((enum rb_coll_kind)k), list);
            }
    if (b == 0 || e < b)
        return rb_cli_usage_error("-b/-e: expected 0 < minbytes <= maxbytes, got -b %llu -e %llu",
                                  (unsigned long long)b, (unsigned long long)e);
    if (f < 2 && inc == 0)
        return rb_cli_usage_error("-f/-i: expected a factor >= 2 or a step -i > 0 (got -f %llu -i 0)",
                                  (unsigned long long)f);
    for (uint64_t s = b; s <= e; s = f >= 2 ? s * f : s + inc) {
        if (j->nsizes == MAX_SIZES)
            return rb_cli_usage_error("-b/-e/-f/-i: more than %d sizes; widen the step", MAX_SIZES);
        j->sizes[j->nsizes++] = s;
        if ((f >= 2 && s > UINT64_MAX / f) || (f < 2 && s > UINT64_MAX - inc))
            break;
    }
    j->type = NULL;
    for (const struct dtype *d = dtypes; d->name; d++)
        if (strcmp(d->name, type) == 0)
            j->type = d;
    if (!j->type)
        return usage("-d", type, "int8, uint8, int32, uint32, int64, uint64, half, float, double or bfloat16");
    static const char *const ops[] = {"sum", "prod", "max", "min", "avg", NULL};
    j->op = NULL;
    for (const char *const *o = ops; *o; o++)
        if (strcmp(*o, op) == 0)
            j->op = *o;
    if (!j->op)
        return usage("-o", op, "sum, prod, max, min or avg");
    if (root < 0 || root >= RB_TOPO_MAX_GPUS) {
        char v[32];
        snprintf(v, sizeof v, "%lld", (long long)root);
        return usage("-r", v, "a rank >= 0");
    }
    j->root = (int)root;
    return 0;
}

static bool wants(const struct job *j, int k, int a)
{
    return j->coll[k] && (j->all_algos || j->algo[a]) &&
           rb_sim_supports((enum rb_coll_kind)k, (enum rb_sim_algo)a);
}

static cJSON *half_json(double t_us, double algbw, double busbw)
{
    cJSON *h = cJSON_CreateObject();
    cJSON_AddNumberToObject(h, "time_us", t_us);
    cJSON_AddNumberToObject(h, "algbw_gbps", algbw);
    cJSON_AddNumberToObject(h, "busbw_gbps", busbw);
    cJSON_AddNullToObject(h, "wrong"); /* predicted: nothing was checked */
    return h;
}

/* One collective_rows entry in railbench coll's format, marked predicted. */
static cJSON *row_json(const struct job *j, enum rb_coll_kind k, enum rb_sim_algo a, uint64_t bytes,
                       uint64_t count, const struct rb_topo *t, bool pxn, const char *design, double t_us,
                       double algbw, double busbw)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "coll", rb_coll_kind_name(k));
    cJSON_AddStringToObject(r, "algo", rb_sim_algo_name(a));
    cJSON_AddNumberToObject(r, "size_bytes", (double)bytes);
    cJSON_AddNumberToObject(r, "count", (double)count);
    cJSON_AddStringToObject(r, "type", j->type->name);
    cJSON_AddStringToObject(r, "redop", rb_coll_kind_def(k)->reduces ? j->op : "none");
    cJSON_AddNumberToObject(r, "root", rb_coll_kind_def(k)->rooted ? j->root : -1);
    cJSON_AddNumberToObject(r, "ranks", rb_topo_gpus(t));
    cJSON_AddNumberToObject(r, "ranks_per_node", t->gpus_per_node);
    cJSON_AddBoolToObject(r, "predicted", true);
    cJSON_AddBoolToObject(r, "pxn", pxn);
    if (design)
        cJSON_AddStringToObject(r, "design", design);
    cJSON_AddItemToObject(r, "oop", half_json(t_us, algbw, busbw));
    cJSON_AddItemToObject(r, "ip", half_json(t_us, algbw, busbw));
    return r;
}

/* The nccl-tests table of every (collective, algorithm) asked for, one block each. */
static int run_tables(const struct job *j, const struct rb_topo *t, bool pxn, struct rb_buf *out, cJSON *summary)
{
    struct rb_sim *sim;
    int rc = rb_sim_create(t, pxn, &sim);
    if (rc == -EINVAL)
        return rb_cli_usage_error("sim: the topology needs at least 2 GPUs");
    if (rc != 0) {
        fprintf(stderr, "railbench: error: sim: out of memory\n");
        return RB_EXIT_RUNTIME;
    }
    int p = rb_topo_gpus(t);
    cJSON *rows = cJSON_AddArrayToObject(summary, "collective_rows");
    double sum_busbw = 0;
    long long nbusbw = 0;
    uint64_t t0 = rb_clock_ns();
    rb_buf_printf(out, "# railbench fabric sim: predicted by the alpha-beta model, no data moved\n# ");
    rb_fabric_design_text(out, t);
    rb_buf_printf(out, "; PXN %s\n", (pxn || !rb_topo_kind_def(t->kind)->spine_layer) ? "on" : "off");
    for (int k = 0; k < RB_COLL_KINDS; k++)
        for (int a = 0; a < RB_SIM_ALGOS; a++) {
            if (!wants(j, k, a))
                continue;
            double blk_sum = 0;
            int blk_n = 0;
            rb_buf_printf(out, "#\n# %s, algorithm %s, %d ranks (%d per node)\n", rb_coll_kind_name((enum rb_coll_kind)k),
                          rb_sim_algo_name((enum rb_sim_algo)a), p, t->gpus_per_node);
            char hdr[512];
            rb_coll_table_header_str(hdr, sizeof hdr, false, false, false);
            rb_buf_printf(out, "%s", hdr);
            for (size_t i = 0; i < j->nsizes; i++) {
                uint64_t count, bytes;
                round_size((enum rb_coll_kind)k, j->sizes[i], p, j->type->bytes, &count, &bytes);
                if (count == 0)
                    continue;
                double ts;
                if ((rc = rb_sim_time(sim, (enum rb_coll_kind)k, (enum rb_sim_algo)a, (double)bytes, &ts, NULL)) != 0) {
                    fprintf(stderr, "railbench: error: sim: %s\n", strerror(-rc));
                    rb_sim_free(sim);
                    return RB_EXIT_RUNTIME;
                }
                double t_us = ts * 1e6;
                double algbw = rb_coll_algbw_gbps((double)bytes, t_us);
                double busbw = rb_coll_busbw_gbps((enum rb_coll_kind)k, p, algbw);
                char lead[96], half[96];
                rb_coll_table_row_start(lead, sizeof lead, bytes, count, j->type->name,
                                        rb_coll_kind_def((enum rb_coll_kind)k)->reduces ? j->op : "none",
                                        rb_coll_kind_def((enum rb_coll_kind)k)->rooted ? j->root : -1);
                rb_coll_table_half(half, sizeof half, t_us, algbw, busbw, -1);
                rb_buf_printf(out, "%s%s%s\n", lead, half, half);
                cJSON_AddItemToArray(rows, row_json(j, (enum rb_coll_kind)k, (enum rb_sim_algo)a, bytes, count, t, pxn,
                                                    NULL, t_us, algbw, busbw));
                blk_sum += 2 * busbw; /* nccl-tests averages both halves */
                blk_n += 2;
            }
            rb_buf_printf(out, "# Out of bounds values : N/A (predicted)\n");
            rb_buf_printf(out, "# Avg bus bandwidth    : %g (predicted)\n", blk_n ? blk_sum / blk_n : 0.0);
            sum_busbw += blk_sum;
            nbusbw += blk_n;
        }
    double model_s = (double)(rb_clock_ns() - t0) * 1e-9;
    rb_buf_printf(out, "#\n# model time: %.3f s\n", model_s);
    cJSON_AddNumberToObject(summary, "avg_busbw_gbps", nbusbw ? sum_busbw / (double)nbusbw : 0.0);
    cJSON_AddNumberToObject(summary, "model_time_s", model_s);
    rb_sim_free(sim);
    return 0;
}

/* fat-tree, rail-optimized and rail-optimized with PXN, from the same nodes, NICs, switches and links. */
static int run_compare(const struct job *j, const struct rb_topo *base, struct rb_buf *out, cJSON *summary)
{
    static const char *const names[3] = {"fat-tree", "rail-optimized", "rail-optimized+pxn"};
    struct rb_topo t[3];
    struct rb_sim *sim[3] = {NULL, NULL, NULL};
    int rc = 0;
    if (base->spines < 1)
        return rb_cli_usage_error("--compare: the topology has no spines; give --spines N for the fat-tree and "
                                  "rail-optimized designs");
    for (int d = 0; d < 3; d++) {
        t[d] = *base;
        t[d].kind = d == 0 ? RB_TOPO_FAT_TREE : RB_TOPO_RAIL_OPTIMIZED;
        if (d == 0)
            t[d].rails = 1;
        else if (!rb_topo_kind_def(base->kind)->railed)
            t[d].rails = t[d].nics_per_node;
        char err[256];
        if (rb_topo_finish(&t[d], err, sizeof err) != 0) {
            rc = rb_cli_usage_error("--compare: as %s: %s", names[d], err);
            goto done;
        }
        if (rb_sim_create(&t[d], d == 2, &sim[d]) != 0) {
            rc = rb_cli_usage_error("--compare: the topology needs at least 2 GPUs");
            goto done;
        }
    }
    int p = rb_topo_gpus(base);
    uint64_t t0 = rb_clock_ns();
    cJSON *rows = cJSON_AddArrayToObject(summary, "collective_rows");
    cJSON *crow = cJSON_AddArrayToObject(summary, "compare_rows");
    rb_buf_printf(out, "# railbench fabric sim --compare: predicted by the alpha-beta model, no data moved\n# ");
    rb_fabric_design_text(out, base);
    rb_buf_printf(out, "\n# designs: same nodes, NICs, switches and links; only the cabling (and PXN) differs\n");
    for (int k = 0; k < RB_COLL_KINDS; k++)
        for (int a = 0; a < RB_SIM_ALGOS; a++) {
            if (!wants(j, k, a))
                continue;
            rb_buf_printf(out, "#\n# %s, algorithm %s, %d ranks (%d per node)\n#\n",
                          rb_coll_kind_name((enum rb_coll_kind)k), rb_sim_algo_name((enum rb_sim_algo)a), p,
                          base->gpus_per_node);
            rb_buf_printf(out, "#%12s  %20s  %20s  %20s\n", "size", names[0], names[1], names[2]);
            rb_buf_printf(out, "#%12s  %10s  %8s  %10s  %8s  %10s  %8s\n", "(B)", "time(us)", "busbw", "time(us)",
                          "busbw", "time(us)", "busbw");
            for (size_t i = 0; i < j->nsizes; i++) {
                uint64_t count, bytes;
                round_size((enum rb_coll_kind)k, j->sizes[i], p, j->type->bytes, &count, &bytes);
                if (count == 0)
                    continue;
                rb_buf_printf(out, "%13llu", (unsigned long long)bytes);
                cJSON *cr = cJSON_CreateObject();
                cJSON_AddStringToObject(cr, "coll", rb_coll_kind_name((enum rb_coll_kind)k));
                cJSON_AddStringToObject(cr, "algo", rb_sim_algo_name((enum rb_sim_algo)a));
                cJSON_AddNumberToObject(cr, "size_bytes", (double)bytes);
                for (int d = 0; d < 3; d++) {
                    double ts;
                    if (rb_sim_time(sim[d], (enum rb_coll_kind)k, (enum rb_sim_algo)a, (double)bytes, &ts, NULL) != 0) {
                        cJSON_Delete(cr);
                        fprintf(stderr, "railbench: error: sim: out of memory\n");
                        rc = RB_EXIT_RUNTIME;
                        goto done;
                    }
                    double t_us = ts * 1e6, algbw = rb_coll_algbw_gbps((double)bytes, t_us);
                    double busbw = rb_coll_busbw_gbps((enum rb_coll_kind)k, p, algbw);
                    rb_buf_printf(out, "  %10.2f  %8.2f", t_us, busbw);
                    cJSON_AddNumberToObject(cr, d == 0 ? "fat_tree_time_us" : d == 1 ? "rail_optimized_time_us"
                                                                                   : "rail_optimized_pxn_time_us",
                                            t_us);
                    cJSON_AddNumberToObject(cr, d == 0 ? "fat_tree_busbw_gbps" : d == 1 ? "rail_optimized_busbw_gbps"
                                                                                    : "rail_optimized_pxn_busbw_gbps",
                                            busbw);
                    cJSON_AddItemToArray(rows, row_json(j, (enum rb_coll_kind)k, (enum rb_sim_algo)a, bytes, count,
                                                        &t[d], d == 2, names[d], t_us, algbw, busbw));
                }
                cJSON_AddItemToArray(crow, cr);
                rb_buf_printf(out, "\n");
            }
        }
    double model_s = (double)(rb_clock_ns() - t0) * 1e-9;
    rb_buf_printf(out, "# busbw in GB/s, as nccl-tests\n#\n# model time: %.3f s\n", model_s);
    cJSON_AddNumberToObject(summary, "model_time_s", model_s);
done:
    for (int d = 0; d < 3; d++)
        rb_sim_free(sim[d]);
    return rc;
}

int rb_fabric_sim_main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "moe") == 0)
        return rb_fabric_sim_moe_main(argc - 1, argv + 1);
    struct rb_topo_opts to = {0};
    const char *algos = "ring", *type = "float", *op = "sum", *calibrate = NULL, *save = NULL;
    uint64_t minb = 8, maxb = 128 * RB_MIB, factor = 2, step = 0, bands = 3;
    int64_t root = 0;
    int pxn_choice = 0;
    bool compare = false, json = false;
    const struct rb_opt opts[] = {
        {"algo", 0, RB_OPT_STR, &algos, "ring|rd|rhd|tree|hier|all", "algorithms, comma-separated",
         "ring|rd|rhd|tree|hier|all"},
        {"minbytes", 'b', RB_OPT_SIZE, &minb, "SIZE", "smallest size", NULL},
        {"maxbytes", 'e', RB_OPT_SIZE, &maxb, "SIZE", "largest size", NULL},
        {"stepfactor", 'f', RB_OPT_U64, &factor, "N", "multiply the size by N (1: add -i instead)", NULL},
        {"stepbytes", 'i', RB_OPT_SIZE, &step, "SIZE", "add this to the size when -f is 1", NULL},
        {"datatype", 'd', RB_OPT_STR, &type, "TYPE", "element type (sizes round to whole elements)", NULL},
        {"op", 'o', RB_OPT_STR, &op, "OP", "reduction shown in the table: sum prod max min avg", NULL},
        {"root", 'r', RB_OPT_INT, &root, "N", "root shown for broadcast and reduce", NULL},
        {"pxn", 0, RB_OPT_CHOICE, &pxn_choice, "on|off", "PXN (cross-rail traffic via NVLink to the peer GPU on the "
                                                         "destination's rail)", "on|off"},
        {"compare", 0, RB_OPT_FLAG, &compare, NULL, "fat-tree, rail-optimized and rail-optimized + PXN side by side", NULL},
        {"calibrate", 0, RB_OPT_STR, &calibrate, "RESULT", "fit latency and bandwidth per link class to a railbench "
                                                           "coll result (directory or result.json)", NULL},
        {"save", 0, RB_OPT_STR, &save, "FILE", "with --calibrate: write the calibrated topology as JSON (the "
                                                "band of the largest sizes)", NULL},
        {"bands", 0, RB_OPT_U64, &bands, "N", "with --calibrate: at most N message-size bands, each with its own "
                                              "fit (1 to 4; 1: one alpha-beta fit for all sizes)", NULL},
        {"json", 0, RB_OPT_FLAG, &json, NULL, "print the summary as JSON instead of the table", NULL},
        RB_TOPO_OPTS(to),
        {0},
    };
    const struct rb_cmd_spec spec = {
        "railbench fabric sim [options] [COLLECTIVE[,COLLECTIVE...]|all]",
        "Predict time, algbw and busbw per size of collectives on a topology with an alpha-beta model that\n"
        "accounts for links shared along each path; print the table of railbench coll (and nccl-tests).\n"
        "railbench fabric sim moe predicts railbench coll moe's workload, PXN off and on (see its --help).",
        opts, 0, 1, false};
    struct rb_cli cli;
    int rc;
    if (!rb_cli_parse_cmd(&cli, &spec, argc, argv, &rc))
        return rc;
    struct job *j = calloc(1, sizeof *j);
    struct rb_topo t;
    struct rb_buf out = {0};
    cJSON *summary = NULL;
    bool pxn = pxn_choice == 0;
    if (!j) {
        rc = RB_EXIT_RUNTIME;
        goto done;
    }
    if ((rc = parse_job(j, cli.nargs, cli.args, algos, minb, maxb, factor, step, type, op, root)) != 0)
        goto done;
    if ((rc = rb_fabric_topo_resolve(&to, &t)) != 0)
        goto done;
    if (save && !calibrate) {
        rc = rb_cli_usage_error("--save: only with --calibrate (fabric topo --save writes a plain topology)");
        goto done;
    }
    if (bands < 1 || bands > RB_CALIB_MAX_BANDS) {
        rc = rb_cli_usage_error("--bands: %llu is out of range (use 1 to %d)", (unsigned long long)bands,
                                RB_CALIB_MAX_BANDS);
        goto done;
    }
    if (calibrate && compare) {
        rc = rb_cli_usage_error("--calibrate and --compare: choose one");
        goto done;
    }
    summary = cJSON_CreateObject();
    cJSON_AddBoolToObject(summary, "predicted", true);
    cJSON_AddItemToObject(summary, "topology", rb_topo_to_json(&t));
    cJSON_AddBoolToObject(summary, "pxn", pxn);
    if (calibrate)
        rc = rb_calib_cmd(calibrate, &t, pxn, save, (int)bands, &out, summary);
    else if (compare)
        rc = run_compare(j, &t, &out, summary);
    else
        rc = run_tables(j, &t, pxn, &out, summary);
    if (rc != 0)
        goto done;
    if (out.oom) {
        fprintf(stderr, "railbench: error: sim: out of memory\n");
        rc = RB_EXIT_RUNTIME;
        goto done;
    }
    rc = rb_fabric_emit("fabric sim", &cli, out.s, summary, json);
    summary = NULL;
done:
    cJSON_Delete(summary);
    rb_buf_free(&out);
    free(j);
    rb_cli_free(&cli);
    return rc;
}
