/* railbench coll: nccl-tests-compatible collective benchmark with MPI's own and rail-aware algorithms side by side. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "railbench/clock.h"
#include "railbench/command.h"
#include "railbench/units.h"
#include "run_int.h"

/* -o and -d choices, in nccl-tests' order; the aliases of -d map to the type named by alias_type. */
#define OP_CHOICES "sum|prod|max|min|avg|all"
#define DTYPE_CHOICES "int8|uint8|int32|uint32|int64|uint64|half|float|double|bfloat16|float16|float32|float64|all"
static const enum rb_coll_dtype alias_type[] = {RB_COLL_HALF, RB_COLL_FLOAT, RB_COLL_DOUBLE};
#define DTYPE_ALL (RB_COLL_DTYPES + 3)

const struct rb_coll_test *rb_coll_test_get(enum rb_coll_kind k)
{
    static const struct rb_coll_test *const all[RB_COLL_KINDS] = {
#define RB_COLL_TEST_ROW(K, name, ...) [RB_COLL_##K] = &rb_coll_##name,
        RB_COLL_KIND_LIST(RB_COLL_TEST_ROW)
#undef RB_COLL_TEST_ROW
    };
    return (unsigned)k < RB_COLL_KINDS ? all[k] : NULL;
}

/* ---- options ---- */

/* Parses --algo: a comma-separated list of names, or "all". Returns 0 or -EINVAL after one line. */
static int parse_algos(const char *s, enum rb_coll_algo *out, int *n)
{
    char buf[256];
    bool seen[RB_COLL_ALGOS] = {false};
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        enum rb_coll_algo a;
        if (strcmp(tok, "all") == 0) {
            for (int i = 0; i < RB_COLL_ALGOS; i++)
                seen[i] = true;
            continue;
        }
        if (rb_coll_algo_parse(tok, &a) != 0) {
            rb_cli_usage_error("--algo: \"%s\" is not an algorithm (use mpi, ring, rd, rhd, tree, hier or all, "
                               "or a comma-separated list)",
                               tok);
            return -EINVAL;
        }
        seen[a] = true;
    }
    for (int i = 0; i < RB_COLL_ALGOS; i++)
        if (seen[i])
            out[(*n)++] = (enum rb_coll_algo)i;
    if (*n == 0) {
        rb_cli_usage_error("--algo: \"%s\" names no algorithm (use e.g. mpi or ring,hier)", s);
        return -EINVAL;
    }
    return 0;
}

/* Parses -r: a rank or "all"; the range is checked once the number of ranks is known. */
static int parse_root(const char *s, int *root, int *all)
{
    *all = strcmp(s, "all") == 0;
    if (*all) {
        *root = 0;
        return 0;
    }
    int64_t v;
    if (rb_parse_i64(s, &v) != 0 || v < 0 || v > INT_MAX) {
        rb_cli_usage_error("--root: \"%s\" is not a rank (use 0 to the number of ranks - 1, or all)", s);
        return -EINVAL;
    }
    *root = (int)v;
    return 0;
}

/* Checks what does not depend on the number of ranks; one line and RB_EXIT_USAGE on a mistake, else 0. */
static int check_opts(const struct rb_coll_opts *o)
{
    char a[32], b[32];
    if (o->minbytes > o->maxbytes) {
        rb_format_size(a, sizeof a, o->minbytes);
        rb_format_size(b, sizeof b, o->maxbytes);
        return rb_cli_usage_error("--minbytes: %s is larger than --maxbytes %s (use -b <= -e)", a, b);
    }
    if (o->maxbytes > INT_MAX) {
        rb_format_size(b, sizeof b, o->maxbytes);
        return rb_cli_usage_error("--maxbytes: %s is too large (at most 2147483647 bytes: MPI counts are int)", b);
    }
    if (o->iters == 0 || o->iters > INT_MAX)
        return rb_cli_usage_error("--iters: %llu is out of range (use 1 or more, e.g. -n 20)",
                                  (unsigned long long)o->iters);
    if (o->stepfactor == 0)
        return rb_cli_usage_error("--stepfactor: 0 is not a factor (use 2 or more, or 1 to step by -i)");
    if (o->stepfactor > 1 && o->minbytes == 0)
        return rb_cli_usage_error("--minbytes: 0 never grows by a factor (use -b 1 or more with -f)");
    if (o->stepfactor <= 1 && o->stepbytes == 0)
        return rb_cli_usage_error("--stepbytes: 0 never reaches --maxbytes (use a size > 0, or -f 2)");
    if (o->chunk == 0 || o->chunk > 64 * RB_MIB)
        return rb_cli_usage_error("--chunk: %llu is out of range (use 1 byte to 64MiB, e.g. 128k)",
                                  (unsigned long long)o->chunk);
    return rb_coll_flags_check(o);
}

/* Creates the -J file without replacing one (like nccl-tests: FILE, then FILE.0, FILE.1, ...). */
static int reserve_json(const char *path, char *used, size_t len)
{
    for (int i = -1; i < 1000; i++) {
        if (i < 0)
            snprintf(used, len, "%s", path);
        else
            snprintf(used, len, "%s.%d", path, i);
        int fd = open(used, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) {
            close(fd);
            return 0;
        }
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}


/* What the harness checks once the number of ranks is known, before the result directory exists. */
struct precheck {
    const struct rb_coll_opts *o;
    const struct rb_coll_a2av *a2av; /* alltoallv's pattern if it runs (its matrix must fit the ranks), or NULL */
    int root, root_all;
    char *json_path;
    size_t json_len;
};

static int precheck(void *ctx, int rank, int size)
{
    const struct precheck *c = ctx;
    const struct rb_coll_opts *o = c->o;
    if (!c->root_all && c->root >= size)
        return rank == 0 ? rb_cli_usage_error("--root: %d is out of range for %d ranks (use 0 to %d, or all)",
                                              c->root, size, size - 1)
                         : RB_EXIT_USAGE;
    if (o->ranks_per_node && (o->ranks_per_node > (uint64_t)size || size % (int)o->ranks_per_node))
        return rank == 0
                   ? rb_cli_usage_error("--ranks-per-node: %llu does not divide the %d ranks (use a divisor of %d)",
                                        (unsigned long long)o->ranks_per_node, size, size)
                   : RB_EXIT_USAGE;
    if (c->a2av) {
        int arc = rb_coll_alltoallv_check(c->a2av, size, o->minbytes, o->maxbytes);
        if (arc)
            return arc;
    }
    if (o->json && rank == 0) {
        int jrc = reserve_json(o->json, c->json_path, c->json_len);
        if (jrc)
            return rb_cli_usage_error("--output_json: cannot create \"%s\": %s (give a writable path)", o->json,
                                      strerror(-jrc));
    }
    return 0;
}

/* The lists the options name: collectives, reduction ops, types, algorithms, root. Returns 0 or RB_EXIT_USAGE. */
static int resolve(struct rb_coll_run *R, const struct rb_coll_opts *o, const char *which)
{
    enum rb_coll_kind kind;
    if (strcmp(which, "all") == 0) {
        for (int k = 0; k < RB_COLL_KINDS; k++)
            R->kinds[R->ntests++] = (enum rb_coll_kind)k;
    } else if (rb_coll_kind_parse(which, &kind) == 0) {
        R->kinds[R->ntests++] = kind;
    } else { /* every word coll takes: the collectives, all, the OSU-style tests, moe */
        const char *words[RB_COLL_KINDS + 8];
        int n = 0;
        for (int k = 0; k < RB_COLL_KINDS; k++)
            words[n++] = rb_coll_kind_name((enum rb_coll_kind)k);
        words[n++] = "all";
        for (int k = 0; rb_coll_p2p_name(k); k++)
            words[n++] = rb_coll_p2p_name(k);
        words[n++] = "moe";
        words[n] = NULL;
        return rb_unknown_word("collective", "railbench coll", which, words, sizeof words[0]);
    }
    for (int i = 0; i < R->ntests; i++)
        R->tests[i] = rb_coll_test_get(R->kinds[i]);
    if (o->op == RB_COLL_REDOPS) {
        for (int i = 0; i < RB_COLL_REDOPS; i++)
            R->ops[R->nops++] = (enum rb_coll_redop)i;
    } else {
        R->ops[R->nops++] = (enum rb_coll_redop)o->op;
    }
    if (o->dtype == DTYPE_ALL) {
        for (int i = 0; i < RB_COLL_DTYPES; i++)
            R->types[R->ntypes++] = (enum rb_coll_dtype)i;
    } else {
        R->types[R->ntypes++] =
            o->dtype < RB_COLL_DTYPES ? (enum rb_coll_dtype)o->dtype : alias_type[o->dtype - RB_COLL_DTYPES];
    }
    if (parse_algos(o->algo, R->algos, &R->nalgos) != 0 || parse_root(o->root, &R->root, &R->root_all) != 0)
        return RB_EXIT_USAGE;
    /* Split groups: --per-rail, --split, else nccl-tests' NCCL_TESTS_SPLIT_MASK, then NCCL_TESTS_SPLIT. */
    int color;
    const char *mask = o->split || o->per_rail ? NULL : getenv("NCCL_TESTS_SPLIT_MASK");
    R->split_expr = o->split ? o->split : mask || o->per_rail ? NULL : getenv("NCCL_TESTS_SPLIT");
    R->split_mask = mask && *mask ? mask : NULL;
    if (R->split_expr && !*R->split_expr)
        R->split_expr = NULL;
    if (o->split && o->per_rail)
        return rb_cli_usage_error("--split: give either --split or --per-rail (--per-rail is one group per rail)");
    if (R->split_expr && rb_coll_split_color(R->split_expr, 0, &color) != 0)
        return rb_cli_usage_error("%s: \"%s\" is not a split (use AND n, OR n, MOD n or DIV n, n > 0 for MOD and DIV, "
                                  "e.g. 'AND 0x7')",
                                  o->split ? "--split" : "NCCL_TESTS_SPLIT", R->split_expr);
    if (R->split_mask && rb_coll_split_mask_color(R->split_mask, 0, &color) != 0)
        return rb_cli_usage_error("NCCL_TESTS_SPLIT_MASK: \"%s\" is not a hex mask (e.g. 0x7)", R->split_mask);
    R->split_desc = o->per_rail ? "--per-rail" : R->split_expr ? R->split_expr : R->split_mask;
    return check_opts(o);
}

/* Rank 0's watchdog, the main thread held inside an operation that will not return: the record as it stands. */
static void stuck_record(void *ctx, const char *why)
{
    struct rb_coll_run *R = ctx;
    rb_harness_record_stuck(R->h, why); /* h->on_lost adds the rows */
}

/* Communicators, buffers, MPI types and the output with its preamble; collective. */
static void start(struct rb_coll_run *R, const char *json_path, int argc, char **argv)
{
    rb_coll_out_init(&R->out, R->h, R->o, json_path);
    R->out.split = R->split_desc;
    rb_coll_mpi_types_create();
    rb_coll_run_comms(R);
    R->out.ranks_per_node = R->rl.ranks_per_node;
    rb_coll_run_buffers(R);
    if (R->o->timeout_s) /* -T: also how long ranks wait for one another between operations */
        R->h->rank_timeout_ns = R->o->timeout_s * RB_NS_PER_S;
    int wrc = rb_coll_watchdog_start(R->o->timeout_s, R->h->host, R->h->rank == 0 ? stuck_record : NULL, R);
    if (wrc != 0)
        rb_harness_fatal(R->h, RB_EXIT_RUNTIME, "--timeout: cannot start the watchdog: %s", strerror(-wrc));
    char algos[128] = "";
    for (int i = 0, n = 0; i < R->nalgos; i++)
        n += snprintf(algos + n, sizeof algos - (size_t)n, "%s%s", i ? " " : "", rb_coll_algo_name(R->algos[i]));
    rb_coll_out_preamble(&R->out, R->which, algos, R->rl.node_index, R->rl.local, argc, argv);
    if (R->o->memory)
        rb_coll_out_text(&R->out, "# memory: %zu bytes per rank (send %zu, receive %zu, algorithms' scratch %zu)\n",
                         2 * R->buf_bytes + R->scratch_bytes, R->buf_bytes, R->buf_bytes, R->scratch_bytes);
}

/* Releases what start made; collective. */
static void stop(struct rb_coll_run *R)
{
    rb_coll_watchdog_stop();
    rb_coll_mpi_types_free();
    rb_coll_rails_free(R->h, &R->rl);
    free(R->sendbuf);
    free(R->recvbuf);
    free(R->scratch);
    free(R->times);
    free(R->iter_us);
    rb_coll_alltoallv_free(&R->a2av);
    rb_coll_out_free(&R->out);
}

/* Rank 0, at a signal: the rows so far into the copy of the record written at once, and the table so far. */
static void early_rows(void *ctx, cJSON *root)
{
    struct rb_coll_run *R = ctx;
    cJSON *sum = cJSON_CreateObject();
    cJSON_AddItemToObject(sum, "collective_rows",
                          R->out.coll_rows ? cJSON_Duplicate(R->out.coll_rows, 1) : cJSON_CreateArray());
    cJSON_AddNumberToObject(sum, "ranks", R->h->size);
    cJSON_DeleteItemFromObjectCaseSensitive(root, "summary");
    cJSON_AddItemToObject(root, "summary", sum);
    if (R->out.text)
        rb_result_write_table(&R->h->result, R->out.text);
}

/* Rank 0, when a lost rank ends the run: the rows measured so far become the record's summary. */
static void lost_summary(void *ctx)
{
    struct rb_coll_run *R = ctx;
    rb_coll_out_finish(&R->out, R->which, R->kinds, R->ntests, R->algos, R->nalgos);
}

/* The collectives of the parsed command line: resolve, the harness, every table, --background. An exit status. */
static int run(struct rb_cli *cli, struct rb_coll_opts *o, struct rb_coll_a2av_opts *a2av, const struct rb_coll_bg *bg,
               int argc, char **argv)
{
    int rc;
    static struct rb_coll_run R;
    memset(&R, 0, sizeof R);
    R.o = o;
    R.which = cli->args[0];
    if ((rc = resolve(&R, o, R.which)) != 0 || (rc = rb_coll_bg_check(&R, bg)) != 0 ||
        (rc = rb_coll_alltoallv_setup(a2av, &R.a2av)) != 0)
        return rb_coll_usage_exit(rc);
    char json_path[4096] = "", command[64];
    bool any_a2av = false;
    for (int i = 0; i < R.ntests; i++)
        any_a2av = any_a2av || R.kinds[i] == RB_COLL_ALLTOALLV;
    struct precheck pc = {.o = o,
                          .a2av = any_a2av ? &R.a2av : NULL,
                          .root = R.root,
                          .root_all = R.root_all,
                          .json_path = json_path,
                          .json_len = sizeof json_path};
    snprintf(command, sizeof command, "coll %s", R.which);
    struct rb_harness h;
    rc = rb_harness_init(&h, rb_cli_strdup(cli, command), cli,
                         &(struct rb_harness_opts){.mpi = true, .precheck = precheck, .ctx = &pc, .own_watchdog = true});
    if (rc != 0)
        return rb_coll_usage_exit(rc);
    R.h = &h;
    h.on_lost = lost_summary;
    h.early_summary = early_rows;
    h.on_lost_ctx = &R;
    start(&R, json_path, argc, argv);
    for (int ti = 0; ti < R.ntests && !R.stop; ti++)
        for (int ai = 0; ai < R.nalgos && !R.stop; ai++)
            rb_coll_run_table(&R, R.tests[ti], R.algos[ai]);
    cJSON *bg_rec = NULL;
    int status = R.bg && !R.stop ? rb_coll_bg_pass(&R, &bg_rec) : 0;
    rb_coll_out_finish(&R.out, R.which, R.kinds, R.ntests, R.algos, R.nalgos);
    if (bg_rec) /* beside the rows of the summary the output wrote */
        cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(h.result.root, "summary"), "background", bg_rec);
    stop(&R);
    return rb_harness_finish(&h, NULL, status);
}

int rb_coll_main(int argc, char **argv)
{
    /* OSU's point-to-point tests take OSU's flags (-m, -i, -x, -W mean other things to nccl-tests). */
    if (argc >= 2 && rb_coll_p2p_is(argv[1]))
        return rb_coll_p2p_main(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "moe") == 0)
        return rb_coll_moe_main(argc - 1, argv + 1);
    struct rb_coll_opts o = {.minbytes = 32 * RB_MIB, .maxbytes = 32 * RB_MIB, .stepbytes = RB_MIB,
                             .stepfactor = 1, .iters = 20, .warmup = 5, .check = 1, .chunk = 128 * RB_KIB,
                             .op = RB_COLL_SUM, .dtype = RB_COLL_FLOAT, .average = RB_COLL_AVG_MEAN, .root = "0",
                             .algo = "mpi", .agg_iters = 1, .run_cycles = 1, .nthreads = 1, .ngpus = 1,
                             .device_cta = 16, .cta_policy = -1};
    struct rb_coll_a2av_opts a2av = {.spread = -1, .scale = -1};
    struct rb_coll_bg bg = {.threads = 1, .inflight = 4, .alone_ns = 2 * RB_NS_PER_S, .timeout_ns = 30 * RB_NS_PER_S};
    const struct rb_opt own[] = {
        {"minbytes", 'b', RB_OPT_SIZE, &o.minbytes, "SIZE", "smallest size", NULL},
        {"maxbytes", 'e', RB_OPT_SIZE, &o.maxbytes, "SIZE", "largest size", NULL},
        {"stepbytes", 'i', RB_OPT_SIZE, &o.stepbytes, "SIZE", "fixed increment between sizes (without -f)", NULL},
        {"stepfactor", 'f', RB_OPT_U64, &o.stepfactor, "N", "multiply the size by N (1: step by -i)", NULL},
        {"iters", 'n', RB_OPT_U64, &o.iters, "N", "timed iterations per size", NULL},
        {"warmup_iters", 'w', RB_OPT_U64, &o.warmup, "N", "untimed iterations at every size (doubling from -b to -e)",
         NULL},
        {"check", 'c', RB_OPT_U64, &o.check, "N", "check iterations per size; 0 disables (#wrong N/A)", NULL},
        {"op", 'o', RB_OPT_CHOICE, &o.op, "OP", "reduction", OP_CHOICES},
        {"datatype", 'd', RB_OPT_CHOICE, &o.dtype, "TYPE", "element type", DTYPE_CHOICES},
        {"root", 'r', RB_OPT_STR, &o.root, "RANK", "root of broadcast and reduce, or all", NULL},
        {"average", 'a', RB_OPT_CHOICE, &o.average, "0|1|2|3",
         "reported time across ranks: 0 rank 0, 1 mean, 2 min, 3 max", "0|1|2|3"},
        {"output_json", 'J', RB_OPT_STR, &o.json, "FILE", "also write nccl-tests' JSON results to FILE", NULL},
        {"algo", 0, RB_OPT_STR, &o.algo, "LIST", "mpi, ring, rd, rhd, tree, hier, all, or a comma-separated list",
         "mpi|ring|rd|rhd|tree|hier|all"},
        {"ranks-per-node", 0, RB_OPT_U64, &o.ranks_per_node, "L",
         "treat each L consecutive ranks as one node (0: one node per host)", NULL},
        {"chunk", 0, RB_OPT_SIZE, &o.chunk, "SIZE", "pipeline chunk of the tree and chain algorithms", NULL},
        {"count-rule", 0, RB_OPT_CHOICE, &o.count_rule, "aligned|legacy",
         "per-rank share of allgather, reducescatter, alltoall: aligned to 16 bytes as nccl-tests v2.13.12+, "
         "or count / ranks as before", "aligned|legacy"},
        RB_COLL_NCCL_OPTS(o),
        {"split", 0, RB_OPT_STR, &o.split, "EXPR",
         "split the ranks into groups that run side by side: AND n, OR n, MOD n, DIV n (or & | % /) of the rank, "
         "e.g. 'AND 0x7' (if not given: NCCL_TESTS_SPLIT)", NULL},
        {"per-rail", 0, RB_OPT_FLAG, &o.per_rail, NULL,
         "one group per rail: the ranks with the same local index on every node", NULL},
        {"spread", 0, RB_OPT_DOUBLE, &a2av.spread, "F",
         "alltoallv: 0 uniform to 1 distance-weighted per-peer sizes (if not given: NCCL_TESTS_ALLTOALLV_SPREAD "
         "or 1)", NULL},
        {"matrix", 0, RB_OPT_STR, &a2av.matrix, "FILE",
         "alltoallv: bytes rank i sends rank j, a square whitespace-separated matrix; needs -b = -e (if not given: "
         "NCCL_TESTS_ALLTOALLV_MATRIX_FILE)", NULL},
        {"matrix-scale", 0, RB_OPT_DOUBLE, &a2av.scale, "F",
         "alltoallv: multiply the matrix's values by F (if not given: NCCL_TESTS_ALLTOALLV_MATRIX_SCALE or 1)",
         NULL},
        {0},
    };
    struct rb_opts opts = {0};
    rb_opts_add(&opts, own);
    rb_coll_bg_options(&opts, &bg);
    char names[256], usage[320];
    snprintf(usage, sizeof usage, "railbench coll %s|all [options]",
             rb_coll_kind_names(names, sizeof names, "|", NULL));
    const struct rb_cmd_spec spec = {
        usage,
        "Time collectives over the MPI ranks with nccl-tests' flags and table, MPI's own algorithm and "
        "ring, recursive doubling, Rabenseifner, tree and rail-aware hierarchical ones.\n"
        "Inside coll, nccl-tests' letters win: -c is check (not in-flight), -n iterations (not objects),\n"
        "-d datatype (not duration). Every nccl-tests flag is taken; those meaningless on CPU ranks\n"
        "(-G, -y, -R, -x, -V, -p) are noted in the output, -t and -g take 1 only, -D 0 only.\n"
        "OSU's point-to-point tests: railbench coll latency|bw|bibw|mbw_mr (see railbench coll latency --help).\n"
        "A mixture-of-experts layer's dispatch and combine: railbench coll moe (see railbench coll moe --help).",
        opts.v, 1, 1, false};
    struct rb_cli cli;
    int rc;
    if (!rb_cli_parse_cmd(&cli, &spec, argc, argv, &rc))
        return rb_coll_usage_exit(rc);
    rc = run(&cli, &o, &a2av, &bg, argc, argv);
    rb_cli_free(&cli);
    return rc;
}
