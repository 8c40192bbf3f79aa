/* railbench coll latency|bw|bibw|mbw_mr: the OSU micro-benchmarks' point-to-point tests, with OSU's flags and output. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"
#include "railbench/clock.h"
#include "railbench/command.h"
#include "railbench/units.h"

/*
 * OSU's defaults (osu_pt2pt.h in 5.x, osu_util.h in 7.x; osu_mbw_mr.c's own are the same as bw's): messages up to
 * 8 KiB get more iterations; the latency test 100 times more than the window tests.
 */
#define OSU_LARGE_BYTES 8192
#define OSU_LAT_ITERS 10000
#define OSU_LAT_SKIP 100
#define OSU_LAT_ITERS_LARGE 1000
#define OSU_LAT_SKIP_LARGE 10
#define OSU_BW_ITERS 100
#define OSU_BW_SKIP 10
#define OSU_BW_ITERS_LARGE 20
#define OSU_BW_SKIP_LARGE 2
#define OSU_WINDOW 64
#define OSU_TAG 100
#define OSU_ACK_TAG 101
/* Message buffers start on a page, as OSU's (posix_memalign to the page size) and IMB's (MPI_Alloc_mem). */
#define P2P_BUF_ALIGN 4096

enum kind { LATENCY, BW, BIBW, MBW_MR, KINDS };

/* Each test's name, OSU's title line and its value column. */
static const struct def {
    const char *name, *title, *column;
} defs[KINDS] = {
    [LATENCY] = {"latency", "OSU MPI Latency Test", "Latency (us)"},
    [BW] = {"bw", "OSU MPI Bandwidth Test", "Bandwidth (MB/s)"},
    [BIBW] = {"bibw", "OSU MPI Bi-Directional Bandwidth Test", "Bandwidth (MB/s)"},
    [MBW_MR] = {"mbw_mr", "OSU MPI Multiple Bandwidth / Message Rate Test", "MB/s"},
};

struct p2p {
    enum kind kind;
    uint64_t min_bytes, max_bytes, iters, warmup, window; /* iters, warmup 0: OSU's default per size */
    struct rb_harness *h;
    char *sbuf, *rbuf;
    MPI_Request *reqs;
    struct rb_coll_out out;
};

/* One measured size, as the tables and the result report it. */
struct point {
    uint64_t size_bytes, iters, warmup, messages;
    double elapsed_s;  /* rank 0's timed loop (mbw_mr: the slowest sender's) */
    double latency_us; /* latency: half the round trip; others: time per message */
    double mb_per_s;   /* MB = 1e6 bytes, as OSU */
    double msgs_per_s;
};

const char *rb_coll_p2p_name(int k)
{
    return k >= 0 && k < KINDS ? defs[k].name : NULL;
}

bool rb_coll_p2p_is(const char *word)
{
    for (int k = 0; k < KINDS; k++)
        if (strcmp(word, defs[k].name) == 0)
            return true;
    return false;
}

/* -m [MIN:]MAX as OSU takes it; sizes in any railbench unit. Returns 0 or RB_EXIT_USAGE after one line. */
static int parse_range(const char *s, uint64_t *lo, uint64_t *hi)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    char *colon = strchr(buf, ':');
    if (colon)
        *colon = '\0';
    int bad = colon ? (buf[0] && rb_parse_size(buf, lo) != 0) || rb_parse_size(colon + 1, hi) != 0
                    : rb_parse_size(buf, hi) != 0;
    if (bad)
        return rb_cli_usage_error("--message-size: \"%s\" is not [MIN:]MAX (use e.g. -m 1:4M or -m 64K)", s);
    if (*lo > *hi || *hi > INT_MAX)
        return rb_cli_usage_error("--message-size: \"%s\" needs MIN <= MAX <= 2147483647 bytes (MPI counts are "
                                  "int; e.g. -m 1:4M)", s);
    return 0;
}

static int precheck(void *ctx, int rank, int size)
{
    const struct p2p *P = ctx;
    if (P->kind == MBW_MR ? size >= 2 && size % 2 == 0 : size == 2)
        return 0;
    return rank == 0 ? rb_cli_usage_error("coll %s: %d ranks; the test needs %s (as OSU's osu_%s)",
                                          defs[P->kind].name, size,
                                          P->kind == MBW_MR ? "an even number of ranks, in pairs" : "exactly 2",
                                          defs[P->kind].name)
                     : RB_EXIT_USAGE;
}

char *rb_coll_p2p_buf(size_t bytes)
{
    size_t rounded = (bytes + P2P_BUF_ALIGN - 1) / P2P_BUF_ALIGN * P2P_BUF_ALIGN;
    char *p = aligned_alloc(P2P_BUF_ALIGN, rounded);
    if (p)
        memset(p, 0, rounded); /* the pages faulted in before anything is timed */
    return p;
}

/* Ping-pong between ranks 0 and 1; returns rank 0's time of the timed round trips. */
static double run_latency(struct p2p *P, int size, uint64_t iters, uint64_t skip)
{
    MPI_Comm c = P->h->comm;
    int me = P->h->rank;
    uint64_t t0 = 0;
    for (uint64_t i = 0; i < iters + skip; i++) {
        if (i == skip)
            t0 = rb_clock_ns();
        if (me == 0) {
            RB_MPI_CHECK(MPI_Send(P->sbuf, size, MPI_CHAR, 1, OSU_TAG, c));
            RB_MPI_CHECK(MPI_Recv(P->rbuf, size, MPI_CHAR, 1, OSU_TAG, c, MPI_STATUS_IGNORE));
        } else {
            RB_MPI_CHECK(MPI_Recv(P->rbuf, size, MPI_CHAR, 0, OSU_TAG, c, MPI_STATUS_IGNORE));
            RB_MPI_CHECK(MPI_Send(P->sbuf, size, MPI_CHAR, 0, OSU_TAG, c));
        }
    }
    return (double)(rb_clock_ns() - t0) * 1e-9;
}

/*
 * A window of -W non-blocking sends to peer, then a 4-byte ack back (osu_bw,
 * osu_mbw_mr); with both set (osu_bibw) each side sends and receives a window.
 * Returns this rank's time of the timed windows.
 */
static double run_window(struct p2p *P, int size, int peer, bool sender, bool both, uint64_t iters, uint64_t skip)
{
    MPI_Comm c = P->h->comm;
    int w = (int)P->window, n;
    uint64_t t0 = 0;
    for (uint64_t i = 0; i < iters + skip; i++) {
        if (i == skip)
            t0 = rb_clock_ns();
        n = 0;
        if (both || !sender)
            for (int k = 0; k < w; k++)
                RB_MPI_CHECK(MPI_Irecv(P->rbuf, size, MPI_CHAR, peer, OSU_TAG, c, &P->reqs[n++]));
        if (both || sender)
            for (int k = 0; k < w; k++)
                RB_MPI_CHECK(MPI_Isend(P->sbuf, size, MPI_CHAR, peer, OSU_TAG, c, &P->reqs[n++]));
        if (both) { /* as osu_bibw: the sends completed first, then the receives */
            RB_MPI_CHECK(MPI_Waitall(w, P->reqs + w, MPI_STATUSES_IGNORE));
            RB_MPI_CHECK(MPI_Waitall(w, P->reqs, MPI_STATUSES_IGNORE));
            continue;
        }
        RB_MPI_CHECK(MPI_Waitall(n, P->reqs, MPI_STATUSES_IGNORE));
        if (sender)
            RB_MPI_CHECK(MPI_Recv(P->rbuf, 4, MPI_CHAR, peer, OSU_ACK_TAG, c, MPI_STATUS_IGNORE));
        else
            RB_MPI_CHECK(MPI_Send(P->sbuf, 4, MPI_CHAR, peer, OSU_ACK_TAG, c));
    }
    return (double)(rb_clock_ns() - t0) * 1e-9;
}

/* Measures one size on every rank; the figures are valid on rank 0. Collective. */
static void measure(struct p2p *P, uint64_t size, struct point *pt)
{
    struct rb_harness *h = P->h;
    bool large = size > OSU_LARGE_BYTES;
    memset(pt, 0, sizeof *pt);
    pt->size_bytes = size;
    bool lat = P->kind == LATENCY;
    pt->iters = P->iters         ? P->iters
                : lat            ? (large ? OSU_LAT_ITERS_LARGE : OSU_LAT_ITERS)
                                 : (large ? OSU_BW_ITERS_LARGE : OSU_BW_ITERS);
    pt->warmup = P->warmup != UINT64_MAX ? P->warmup
                 : lat                   ? (large ? OSU_LAT_SKIP_LARGE : OSU_LAT_SKIP)
                                         : (large ? OSU_BW_SKIP_LARGE : OSU_BW_SKIP);
    int pairs = h->size / 2, me = h->rank;
    RB_MPI_CHECK(MPI_Barrier(h->comm));
    double t;
    if (P->kind == LATENCY)
        t = run_latency(P, (int)size, pt->iters, pt->warmup);
    else
        t = run_window(P, (int)size, me < pairs ? me + pairs : me - pairs, me < pairs, P->kind == BIBW, pt->iters,
                       pt->warmup);
    /* Bandwidth of each sender (osu_mbw_mr sums the pairs); rank 0's time is the one OSU prints. */
    double mine = me < pairs && t > 0 ? (double)size * (double)pt->iters * (double)P->window / t : 0, sum = 0, tmax = 0;
    RB_MPI_CHECK(MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, h->comm));
    RB_MPI_CHECK(MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, h->comm));
    if (me != 0)
        return;
    pt->elapsed_s = P->kind == MBW_MR ? tmax : t;
    if (P->kind == LATENCY) {
        pt->messages = 2 * pt->iters;
        pt->latency_us = t * 1e6 / (2.0 * (double)pt->iters);
        pt->mb_per_s = t > 0 ? (double)size * (double)pt->messages / t / 1e6 : 0;
    } else {
        pt->messages = pt->iters * P->window * (P->kind == BIBW ? 2 : P->kind == MBW_MR ? (uint64_t)pairs : 1);
        pt->mb_per_s = P->kind == MBW_MR ? sum / 1e6 : t > 0 ? (double)size * (double)pt->messages / t / 1e6 : 0;
        pt->latency_us = t * 1e6 / (double)(pt->iters * P->window);
    }
    pt->msgs_per_s = size ? pt->mb_per_s * 1e6 / (double)size : (double)pt->messages / pt->elapsed_s;
}

/* OSU's row (size left in 10 columns, values right in 18 with 2 decimals) and the result's phase. */
static void report(struct p2p *P, const struct point *pt)
{
    if (P->kind == LATENCY)
        rb_coll_out_text(&P->out, "%-10llu%18.2f\n", (unsigned long long)pt->size_bytes, pt->latency_us);
    else if (P->kind == MBW_MR)
        rb_coll_out_text(&P->out, "%-10llu%18.2f%18.2f\n", (unsigned long long)pt->size_bytes, pt->mb_per_s,
                         pt->msgs_per_s);
    else
        rb_coll_out_text(&P->out, "%-10llu%18.2f\n", (unsigned long long)pt->size_bytes, pt->mb_per_s);
    char name[64];
    snprintf(name, sizeof name, "%s/%llu", defs[P->kind].name, (unsigned long long)pt->size_bytes);
    cJSON *ph = cJSON_CreateObject();
    cJSON_AddStringToObject(ph, "name", name);
    cJSON_AddStringToObject(ph, "op", defs[P->kind].name);
    cJSON_AddNumberToObject(ph, "size_bytes", (double)pt->size_bytes);
    cJSON_AddNumberToObject(ph, "iterations", (double)pt->iters);
    cJSON_AddNumberToObject(ph, "warmup", (double)pt->warmup);
    cJSON_AddNumberToObject(ph, "window", P->kind == LATENCY ? 1 : (double)P->window);
    cJSON_AddNumberToObject(ph, "count", (double)pt->messages);
    cJSON_AddNumberToObject(ph, "bytes", (double)pt->messages * (double)pt->size_bytes);
    cJSON_AddNumberToObject(ph, "duration_s", pt->elapsed_s);
    cJSON_AddNumberToObject(ph, "throughput_bytes_per_s", pt->mb_per_s * 1e6);
    cJSON_AddNumberToObject(ph, "ops_per_s", pt->msgs_per_s);
    cJSON_AddNumberToObject(ph, "latency_us", pt->latency_us);
    cJSON_AddNumberToObject(ph, "bandwidth_mb_per_s", pt->mb_per_s);
    cJSON_AddObjectToObject(ph, "errors");
    rb_result_add_phase(&P->h->result, ph);
}

/* railbench's table beside OSU's: every figure of each size in one row. */
static void table(struct p2p *P, const struct point *pts, size_t n)
{
    rb_coll_out_text(&P->out, "#\n# railbench coll %s: %d ranks%s\n", defs[P->kind].name, P->h->size,
                     P->kind == LATENCY ? "" : ", MB = 1e6 bytes");
    rb_coll_out_text(&P->out, "#%12s  %10s  %8s  %8s  %12s  %12s  %10s  %14s\n", "size (B)", "iterations", "warm-up",
                     "window", "time (s)", "lat (us)", "MB/s", "messages/s");
    for (size_t i = 0; i < n; i++)
        rb_coll_out_text(&P->out, " %12llu  %10llu  %8llu  %8llu  %12.6f  %12.2f  %10.2f  %14.0f\n",
                         (unsigned long long)pts[i].size_bytes, (unsigned long long)pts[i].iters,
                         (unsigned long long)pts[i].warmup,
                         (unsigned long long)(P->kind == LATENCY ? 1 : P->window), pts[i].elapsed_s,
                         pts[i].latency_us, pts[i].mb_per_s, pts[i].msgs_per_s);
}

/* The sizes from MIN to MAX, doubling (from 0 to 1 first, as OSU). Collective. */
static void run(struct p2p *P)
{
    struct point pts[64];
    size_t n = 0;
    rb_coll_out_text(&P->out, "# %s (railbench %s)\n", defs[P->kind].title, rb_version());
    if (P->kind == MBW_MR)
        rb_coll_out_text(&P->out, "# [ pairs: %d ] [ window size: %llu ]\n", P->h->size / 2,
                         (unsigned long long)P->window);
    if (P->kind == MBW_MR)
        rb_coll_out_text(&P->out, "%-10s%18s%18s\n", "# Size", "MB/s", "Messages/s");
    else
        rb_coll_out_text(&P->out, "%-10s%18s\n", "# Size", defs[P->kind].column);
    for (uint64_t s = P->min_bytes; s <= P->max_bytes && n < 64; s = s ? s * 2 : 1) {
        measure(P, s, &pts[n]);
        if (P->h->rank == 0)
            report(P, &pts[n]);
        n++;
        if (rb_harness_any_signalled(P->h))
            break;
    }
    if (P->h->rank != 0)
        return;
    table(P, pts, n);
    cJSON *summary = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(summary, "osu_rows");
    cJSON_AddStringToObject(summary, "test", defs[P->kind].name);
    cJSON_AddNumberToObject(summary, "ranks", P->h->size);
    cJSON_AddNumberToObject(summary, "window", P->kind == LATENCY ? 1 : (double)P->window);
    for (size_t i = 0; i < n; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "size_bytes", (double)pts[i].size_bytes);
        cJSON_AddNumberToObject(r, P->kind == LATENCY ? "latency_us" : "bandwidth_mb_per_s",
                                P->kind == LATENCY ? pts[i].latency_us : pts[i].mb_per_s);
        if (P->kind == MBW_MR)
            cJSON_AddNumberToObject(r, "messages_per_s", pts[i].msgs_per_s);
        cJSON_AddItemToArray(rows, r);
    }
    rb_result_set(&P->h->result, "summary", summary);
    rb_result_write_table(&P->h->result, P->out.text ? P->out.text : "");
}

int rb_coll_p2p_main(int argc, char **argv)
{
    static struct p2p P;
    memset(&P, 0, sizeof P);
    const char *range = "1:4M";
    P.warmup = UINT64_MAX;
    P.window = OSU_WINDOW;
    const struct rb_opt opts[] = {
        {"message-size", 'm', RB_OPT_STR, &range, "[MIN:]MAX", "message sizes, doubling from MIN (OSU: 1:4M)", NULL},
        {"iterations", 'i', RB_OPT_U64, &P.iters, "N", "timed iterations per size (if not given: latency 10000 up to 8 KiB, 1000 above; bw, bibw, mbw_mr 100 and 20)",
         NULL},
        {"warmup", 'x', RB_OPT_U64, &P.warmup, "N", "untimed iterations per size (if not given: latency 100 up to 8 KiB, 10 above; bw, bibw, mbw_mr 10 and 2)",
         NULL},
        {"window-size", 'W', RB_OPT_U64, &P.window, "N", "messages in flight per window (bw, bibw, mbw_mr)", NULL},
        {0},
    };
    const struct rb_cmd_spec spec = {
        "railbench coll latency|bw|bibw|mbw_mr [options]",
        "OSU's point-to-point tests (osu_latency, osu_bw, osu_bibw, osu_mbw_mr) with OSU's flags and output,\n"
        "then railbench's table. latency, bw, bibw: exactly 2 ranks; mbw_mr: pairs (rank r with r + np/2).\n"
        "Here OSU's letters win: -m sizes, -i iterations, -x warm-up, -W window.",
        opts, 0, 0, false};
    struct rb_cli cli;
    int rc;
    if (!rb_cli_parse_cmd(&cli, &spec, argc, argv, &rc))
        return rb_coll_usage_exit(rc);
    for (int k = 0; k < KINDS; k++)
        if (strcmp(argv[0], defs[k].name) == 0)
            P.kind = (enum kind)k;
    if ((rc = parse_range(range, &P.min_bytes, &P.max_bytes)) == 0 && (P.window == 0 || P.window > 4096))
        rc = rb_cli_usage_error("--window-size: %llu is out of range (use 1 to 4096; OSU's default is 64)",
                                (unsigned long long)P.window);
    if (rc == 0 && P.iters > 100000000)
        rc = rb_cli_usage_error("--iterations: %llu is out of range (use 1 to 100000000)", (unsigned long long)P.iters);
    if (rc != 0) {
        rb_cli_free(&cli);
        return rb_coll_usage_exit(rc);
    }
    char command[64];
    snprintf(command, sizeof command, "coll %s", defs[P.kind].name);
    struct rb_harness h;
    /* No thread of its own: MPI_THREAD_SINGLE, as OSU's MPI_Init (Open MPI takes no locks then). */
    struct rb_harness_opts ho = {.mpi = true, .thread_single = true, .precheck = precheck, .ctx = &P};
    rc = rb_harness_init(&h, rb_cli_strdup(&cli, command), &cli, &ho);
    if (rc != 0) {
        rb_cli_free(&cli);
        return rb_coll_usage_exit(rc);
    }
    P.h = &h;
    struct rb_coll_opts none = {0};
    rb_coll_out_init(&P.out, &h, &none, "");
    size_t bytes = P.max_bytes > 4 ? P.max_bytes : 4;
    P.sbuf = rb_coll_p2p_buf(bytes);
    P.rbuf = rb_coll_p2p_buf(bytes);
    P.reqs = calloc(2 * P.window, sizeof *P.reqs);
    if (!P.sbuf || !P.rbuf || !P.reqs)
        rb_harness_fatal(&h, RB_EXIT_RUNTIME, "out of memory for %zu-byte buffers", bytes);
    memset(P.sbuf, 'a', bytes);
    run(&P);
    rb_coll_out_free(&P.out);
    free(P.sbuf);
    free(P.rbuf);
    free(P.reqs);
    rc = rb_harness_finish(&h, NULL, 0);
    rb_cli_free(&cli);
    return rc;
}
