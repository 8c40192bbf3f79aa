/* libFuzzer target: the size, duration, rate and list parsers on arbitrary strings never crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    uint64_t v, list[16];
    double d;
    int64_t i;
    size_t n;
    const char *bad;
    char out[64];
    if (rb_parse_size(s, &v) == 0)
        rb_format_size(out, sizeof out, v);
    if (rb_parse_duration(s, &v) == 0) {
        rb_format_duration(out, sizeof out, v);
        rb_format_duration_human(out, sizeof out, v);
    }
    (void)rb_parse_rate(s, &d);
    (void)rb_parse_percent(s, &d);
    (void)rb_parse_i64(s, &i);
    (void)rb_parse_list(s, rb_parse_size, list, 16, &n, &bad);
    free(s);
    return 0;
}
