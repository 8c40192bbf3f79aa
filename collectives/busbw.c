/* nccl-tests' bus-bandwidth factors and table format, in one place for coll and fabric sim. */
#include "railbench/coll.h"

#include <errno.h>
#include <string.h>

static const char *const kind_names[RB_COLL_KINDS] = {
    "allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "sendrecv",
};

static const char *const algo_names[RB_COLL_ALGOS] = {"mpi", "ring", "rd", "rhd", "tree", "hier"};

const char *rb_coll_kind_name(enum rb_coll_kind k)
{
    return (unsigned)k < RB_COLL_KINDS ? kind_names[k] : NULL;
}

int rb_coll_kind_parse(const char *s, enum rb_coll_kind *k)
{
    for (int i = 0; i < RB_COLL_KINDS; i++)
        if (strcmp(s, kind_names[i]) == 0) {
            *k = (enum rb_coll_kind)i;
            return 0;
        }
    return -EINVAL;
}

const char *rb_coll_algo_name(enum rb_coll_algo a)
{
    return (unsigned)a < RB_COLL_ALGOS ? algo_names[a] : NULL;
}

int rb_coll_algo_parse(const char *s, enum rb_coll_algo *a)
{
    for (int i = 0; i < RB_COLL_ALGOS; i++)
        if (strcmp(s, algo_names[i]) == 0) {
            *a = (enum rb_coll_algo)i;
            return 0;
        }
    return -EINVAL;
}

/* Factors from nccl-tests doc/PERFORMANCE.md: the fraction of the data each rank's link must carry. */
double rb_coll_busbw_factor(enum rb_coll_kind k, int n)
{
    if (n < 1)
        n = 1;
    switch (k) {
    case RB_COLL_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case RB_COLL_ALLGATHER:
    case RB_COLL_REDUCESCATTER:
    case RB_COLL_ALLTOALL:
        return (double)(n - 1) / n;
    case RB_COLL_BROADCAST:
    case RB_COLL_REDUCE:
    case RB_COLL_SENDRECV:
    default:
        return 1.0;
    }
}

/* S per nccl-tests doc/PERFORMANCE.md: the gathered/scattered/exchanged collectives count the whole array. */
double rb_coll_algbw_bytes(enum rb_coll_kind k, size_t count, size_t type_bytes, int n)
{
    double s = (double)count * (double)type_bytes;
    switch (k) {
    case RB_COLL_ALLGATHER:
    case RB_COLL_REDUCESCATTER:
    case RB_COLL_ALLTOALL:
        return s * (n < 1 ? 1 : n);
    default:
        return s;
    }
}

double rb_coll_algbw_gbps(double size_bytes, double time_us)
{
    return time_us > 0 ? size_bytes / (time_us * 1e3) : 0;
}

double rb_coll_busbw_gbps(enum rb_coll_kind k, int n, double algbw_gbps)
{
    return algbw_gbps * rb_coll_busbw_factor(k, n);
}

int rb_coll_table_header_str(char *buf, size_t len)
{
    /* Each half is 37 characters wide: "  %9s  %7s  %7s  %6s". */
    return snprintf(buf, len,
                    "#%12s  %12s  %8s  %6s  %6s  %-35s  %s\n"
                    "#%12s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %6s  %9s  %7s  %7s  %6s\n"
                    "#%12s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %6s  %9s  %7s  %7s  %6s\n",
                    "", "", "", "", "", "           out-of-place", "             in-place", "size",
                    "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
                    "algbw", "busbw", "#wrong", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
                    "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

void rb_coll_table_header(FILE *out)
{
    char buf[512];
    rb_coll_table_header_str(buf, sizeof buf);
    fputs(buf, out);
}

int rb_coll_table_row_start(char *buf, size_t len, size_t size_bytes, size_t count, const char *type,
                            const char *redop, int root)
{
    return snprintf(buf, len, " %12zu  %12zu  %8s  %6s  %6d", size_bytes, count, type, redop, root);
}

int rb_coll_table_half(char *buf, size_t len, double time_us, double algbw, double busbw, long long wrong)
{
    char w[24];
    if (wrong < 0)
        snprintf(w, sizeof w, "N/A");
    else
        snprintf(w, sizeof w, "%lld", wrong);
    return snprintf(buf, len, "  %9.2f  %7.2f  %7.2f  %6s", time_us, algbw, busbw, w);
}

int rb_coll_table_footer(char *buf, size_t len, long long wrong, double avg_busbw_gbps)
{
    return snprintf(buf, len, "# %-20s : %lld %s\n# %-20s : %g \n#\n", "Out of bounds values", wrong,
                    wrong ? "FAILED" : "OK", "Avg bus bandwidth", avg_busbw_gbps);
}
