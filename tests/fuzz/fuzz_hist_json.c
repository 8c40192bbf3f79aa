/* libFuzzer target: rb_hist_from_json on arbitrary JSON never crashes, and what it accepts is consistent. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/hist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cJSON *j = cJSON_Parse(text);
    struct rb_hist *h = rb_hist_new();
    if (j && h && rb_hist_from_json(j, h) == 0) {
        uint64_t n = 0;
        for (size_t i = 0; i < RB_HIST_BUCKETS; i++)
            n += h->counts[i];
        if (n != h->count)
            abort();
        (void)rb_hist_percentile(h, 99.9);
        cJSON *back = rb_hist_to_json(h);
        cJSON_Delete(back);
    }
    rb_hist_free(h);
    cJSON_Delete(j);
    free(text);
    return 0;
}
