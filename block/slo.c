/* railbench block: the latency SLO and the knee of an IOPS-vs-latency curve, each figure in one function. */
#include "block_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "railbench/units.h"

static const char *const pct_label[RB_FIO_PCTS] = {"p50", "p90", "p99", "p99.9", "p99.99"};

static void slo_error(char *err, size_t errlen, const char *s)
{
    snprintf(err, errlen,
             "'%s' is not an SLO; expected [clat|lat] PERCENTILE<=DURATION with PERCENTILE one of "
             "p50 p90 p99 p99.9 p99.99 and \"<=\" or \"<\", e.g. p99<=500us",
             s);
}

int rb_block_slo_parse(const char *s, struct rb_block_slo *slo, char *err, size_t errlen)
{
    memset(slo, 0, sizeof *slo);
    const char *p = s;
    while (*p == ' ')
        p++;
    slo->kind = RB_BLOCK_CLAT;
    if (strncmp(p, "clat", 4) == 0)
        p += 4;
    else if (strncmp(p, "lat", 3) == 0) {
        slo->kind = RB_BLOCK_LAT;
        p += 3;
    }
    while (*p == ' ')
        p++;
    if (*p != 'p' && *p != 'P')
        goto bad;
    p++;
    size_t n = strspn(p, "0123456789.");
    static const char *const forms[][2] = {{"50", ""}, {"90", ""}, {"99", ""}, {"99.9", "999"}, {"99.99", "9999"}};
    slo->pct = -1;
    for (int i = 0; i < RB_FIO_PCTS; i++)
        for (int f = 0; f < 2; f++)
            if (*forms[i][f] && strlen(forms[i][f]) == n && strncmp(p, forms[i][f], n) == 0)
                slo->pct = i;
    if (slo->pct < 0)
        goto bad;
    p += n;
    while (*p == ' ')
        p++;
    if (p[0] != '<')
        goto bad;
    slo->inclusive = p[1] == '=';
    p += slo->inclusive ? 2 : 1;
    while (*p == ' ')
        p++;
    char dur[32];
    size_t dl = strlen(p);
    while (dl && p[dl - 1] == ' ')
        dl--;
    if (dl == 0 || dl >= sizeof dur)
        goto bad;
    memcpy(dur, p, dl);
    dur[dl] = '\0';
    /* A bare number has no obvious unit (fio's are us, ns, ms by field): the SLO must say. */
    if (dur[dl - 1] >= '0' && dur[dl - 1] <= '9') {
        snprintf(err, errlen, "'%s': the bound %s needs a unit (ns, us, ms or s), e.g. p99<=%sus", s, dur, dur);
        return -EINVAL;
    }
    if (rb_parse_duration(dur, &slo->bound_ns) != 0 || slo->bound_ns == 0)
        goto bad;
    char shown[32];
    rb_format_duration(shown, sizeof shown, slo->bound_ns);
    snprintf(slo->text, sizeof slo->text, "%s %s%s%s", slo->kind == RB_BLOCK_LAT ? "lat" : "clat",
             pct_label[slo->pct], slo->inclusive ? "<=" : "<", shown);
    return 0;
bad:
    slo_error(err, errlen, s);
    return -EINVAL;
}

uint64_t rb_block_outstanding(const struct rb_block_point *p)
{
    return p->iodepth * p->numjobs;
}

bool rb_block_slo_met(const struct rb_block_slo *slo, const struct rb_block_point *p)
{
    uint64_t v = slo->kind == RB_BLOCK_LAT ? p->lat_ns[slo->pct] : p->clat_ns[slo->pct];
    return slo->inclusive ? v <= slo->bound_ns : v < slo->bound_ns;
}

int rb_block_slo_best(const struct rb_block_slo *slo, const struct rb_block_point *pts, size_t n)
{
    int best = -1;
    for (size_t i = 0; i < n; i++) {
        if (!rb_block_slo_met(slo, &pts[i]))
            continue;
        if (best < 0 || pts[i].iops > pts[best].iops ||
            (pts[i].iops == pts[best].iops && rb_block_outstanding(&pts[i]) < rb_block_outstanding(&pts[best])))
            best = (int)i;
    }
    return best;
}

/*
 * The usual reading of an IOPS-vs-latency curve (Lightbits/Ceph style
 * sweeps): past the knee, more outstanding I/O only queues. A step that adds
 * under 10 % IOPS while p99 grows by more than half marks it.
 */
int rb_block_knee(const struct rb_block_point *pts, size_t n)
{
    const int p99 = 2; /* rb_fio_pct[2] == 99 */
    for (size_t i = 1; i < n; i++) {
        const struct rb_block_point *a = &pts[i - 1], *b = &pts[i];
        if (a->iops <= 0 || a->clat_ns[p99] == 0)
            continue;
        bool flat_iops = b->iops < a->iops * (1.0 + RB_BLOCK_KNEE_MAX_IOPS_GAIN);
        bool p99_up = (double)b->clat_ns[p99] > (double)a->clat_ns[p99] * (1.0 + RB_BLOCK_KNEE_MIN_P99_GROWTH);
        if (flat_iops && p99_up)
            return (int)(i - 1);
    }
    return -1;
}
