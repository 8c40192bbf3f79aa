/* libFuzzer target: any Accept header picks one of the three formats, and any request id (as an exemplar)
 * renders in OpenMetrics and protobuf; never a crash or leak. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/prom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    enum rb_prom_format f = rb_prom_negotiate(s);
    if (f != RB_PROM_TEXT && f != RB_PROM_OPENMETRICS && f != RB_PROM_PROTOBUF)
        abort();
    struct rb_prom *p = rb_prom_new("run=\"fuzz\"");
    struct rb_stats *st = rb_stats_new();
    if (p && st) {
        rb_hist_record(&st->lat, 1000 + size);
        st->ops = 1;
        rb_prom_phase(p, "get", "GET", NULL, st);
        rb_prom_exemplar(p, "get", "GET", (double)size * 1e-6, s, 1700000000);
        char *om = rb_prom_render_openmetrics(p);
        void *pb = NULL;
        size_t len = 0;
        if (!om || rb_prom_render_protobuf(p, &pb, &len) != 0 || !len)
            abort();
        free(om);
        free(pb);
    }
    rb_stats_free(st);
    rb_prom_free(p);
    free(s);
    return 0;
}
