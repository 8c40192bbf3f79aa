/* railbench load tiers' derived figures: a phase's verdict from its cache-status counts, speed-ups, size labels. */
#include "tiers_int.h"

#include <inttypes.h>
#include <stdio.h>

#include "railbench/units.h"

enum rb_tiers_verdict rb_tiers_judge(enum rb_tiers_how how, const struct rb_tiers_cache *c, char *why, size_t len)
{
    char dummy[8];
    if (!why) {
        why = dummy;
        len = sizeof dummy;
    }
    const uint64_t seen = c->hit + c->miss + c->other, total = seen + c->absent;
    if (how == RB_TIERS_DIRECT) {
        snprintf(why, len, "direct reads do not pass the tier");
        return RB_TIERS_UNVERIFIED;
    }
    if (!seen) {
        snprintf(why, len, "none of the %" PRIu64 " responses carried a cache-status header", total);
        return RB_TIERS_UNVERIFIED;
    }
    if (how == RB_TIERS_COLD && c->hit) {
        snprintf(why, len,
                 "%" PRIu64 " of %" PRIu64 " cold GETs were cache HITs: the tier already held objects this run "
                 "had not read through it, so the read was not cold",
                 c->hit, total);
        return RB_TIERS_FAILED;
    }
    if (how == RB_TIERS_WARM && c->miss) {
        snprintf(why, len,
                 "%" PRIu64 " of %" PRIu64 " warm GETs were cache MISSes: the tier did not keep what the cold "
                 "phase fetched (cache too small, responses not cacheable, or evicted meanwhile)",
                 c->miss, total);
        return RB_TIERS_FAILED;
    }
    snprintf(why, len, "%" PRIu64 " GETs: %" PRIu64 " MISS, %" PRIu64 " HIT, %" PRIu64 " other, %" PRIu64
             " without the header", total, c->miss, c->hit, c->other, c->absent);
    return RB_TIERS_VERIFIED;
}

double rb_tiers_speedup(double fast_bytes_per_s, double slow_bytes_per_s)
{
    return slow_bytes_per_s > 0 ? fast_bytes_per_s / slow_bytes_per_s : -1;
}

void rb_tiers_size_label(char *buf, size_t len, uint64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (u < 4 && bytes && bytes % 1024 == 0) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, len, "%" PRIu64 "%s", bytes, units[u]);
}
