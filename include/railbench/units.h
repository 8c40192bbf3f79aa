/* Parsing and formatting of sizes, durations, rates and lists, as fio and nccl-tests users write them. */
#ifndef RB_UNITS_H
#define RB_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Binary size units in bytes; use (double)RB_MIB where a fraction is wanted. */
#define RB_KIB (UINT64_C(1) << 10)
#define RB_MIB (UINT64_C(1) << 20)
#define RB_GIB (UINT64_C(1) << 30)
#define RB_TIB (UINT64_C(1) << 40)

/*
 * Sizes: a plain integer is bytes; suffixes B, KiB MiB GiB TiB (binary),
 * KB MB GB TB (decimal), and single letters k m g t in either case (binary,
 * as fio and nccl-tests read "-b 4M"). A decimal mantissa is allowed when the
 * result is a whole number of bytes ("1.5KiB" = 1536). Returns 0 or -EINVAL
 * (empty, unknown suffix, negative, fractional bytes) or -ERANGE (overflow).
 */
int rb_parse_size(const char *s, uint64_t *bytes);

/*
 * Durations: a number with ns us ms s m h; a plain number is seconds (as in
 * fio's runtime). Fractions allowed ("1.5s"). Returns 0, -EINVAL or -ERANGE.
 */
int rb_parse_duration(const char *s, uint64_t *ns);

/* Rates: "1000", "1000/s", "60/m", "3600/h", "2.5k/s" (k = 1000 here); result per second, > 0. */
int rb_parse_rate(const char *s, double *per_s);

/* Whole numbers: decimal only, no sign for u64; both reject trailing junk. */
int rb_parse_u64(const char *s, uint64_t *v);
int rb_parse_i64(const char *s, int64_t *v);
/* Finite floating-point number, no trailing junk. */
int rb_parse_double(const char *s, double *v);
/* Percentage "90" or "90%" in [0, 100]. */
int rb_parse_percent(const char *s, double *pct);

/*
 * Comma-separated list "4k,8k,1M" parsed element by element with parse()
 * into out[0..max). Returns 0 and *n, -EINVAL on an empty or bad element
 * (*bad_elem, if not NULL, points to its start inside s), -E2BIG over max.
 */
int rb_parse_list(const char *s, int (*parse)(const char *, uint64_t *), uint64_t *out, size_t max,
                  size_t *n, const char **bad_elem);

/* Human size with binary units and up to 3 significant decimals: "4 KiB", "1.5 MiB", "512 B". */
void rb_format_size(char *buf, size_t len, uint64_t bytes);

/* Exact duration in the largest unit that divides it: "1s", "1500ms", "250us", "7ns", "2m", "1h". */
void rb_format_duration(char *buf, size_t len, uint64_t ns);

/* Short human duration for tables: "812ns", "3.41us", "12.3ms", "1.25s". */
void rb_format_duration_human(char *buf, size_t len, uint64_t ns);

#endif
