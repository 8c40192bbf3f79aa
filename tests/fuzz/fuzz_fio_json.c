/* libFuzzer target: fio's JSON output parser on arbitrary (truncated, garbage) input never crashes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../block/block_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    struct rb_hist *clat = rb_hist_new(), *lat = rb_hist_new();
    if (text && clat && lat) {
        memcpy(text, data, size);
        text[size] = '\0';
        struct rb_fio_result r;
        char err[256];
        (void)rb_fio_parse(text, &r, clat, lat, err, sizeof err);
    }
    rb_hist_free(clat);
    rb_hist_free(lat);
    free(text);
    return 0;
}
