/* railbench load tiers' derived figures: verdicts, speed-ups, size labels, the notes on figures not measured. */
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

void rb_tiers_unmeasured_notes(struct rb_buf *b, unsigned why, bool any_disk)
{
    static const struct {
        unsigned bit;
        const char *line;
    } notes[] = {
        {RB_TIERS_NET_LOCAL, "network –: not measured; the target is on loopback (or local files), and the interface "
                             "counters leave lo out"},
        {RB_TIERS_REMOTE_DISK, "disk util –: not measured; the storage is on another host, whose disks this host's "
                               "counters do not see"},
        {RB_TIERS_NO_DISK, "disk util –: not measured; this host has no block device to read"},
        {RB_TIERS_DIRECT_CACHE, "cache hit/miss –: direct reads do not pass the tier"},
    };
    const char *sep = "\n";
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++)
        if (why & notes[i].bit) {
            rb_buf_printf(b, "%s%s\n", sep, notes[i].line);
            sep = "";
        }
    if (any_disk)
        rb_buf_printf(b, "%sdisk util: the mean utilisation of this host's disks that did I/O during the phase (0.0: "
                         "none did; the reads came from page caches)\n", sep);
}
