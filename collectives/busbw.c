/* nccl-tests' bus-bandwidth factors and table format, in one place for coll and fabric sim. */
#include "railbench/coll.h"

#include <errno.h>
#include <string.h>

static const char *const kind_names[RB_COLL_KINDS] = {
    "allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "sendrecv",
};

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

double rb_coll_algbw_gbps(double size_bytes, double time_us)
{
    return time_us > 0 ? size_bytes / (time_us * 1e3) : 0;
}

void rb_coll_table_header(FILE *out)
{
    fprintf(out, "#\n#%12s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %6s  %9s  %7s  %7s  %6s\n", "size",
            "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
            "busbw", "#wrong");
    fprintf(out, "#%12s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %6s  %9s  %7s  %7s  %6s\n", "(B)",
            "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
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
