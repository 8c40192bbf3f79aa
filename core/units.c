/* Parsing and formatting of sizes, durations, rates and lists, with exact integer arithmetic. */
#define _POSIX_C_SOURCE 200809L

#include "railbench/units.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fractional digits kept exactly; 10^18 still fits a uint64_t. */
#define FRAC_DIGITS_MAX 18
/* Durations keep one digit less so frac * 36 (the hour's factor) cannot overflow. */
#define DURATION_FRAC_DIGITS_MAX 17
/* The longest list element we copy out to parse; no valid size or number comes close. */
#define LIST_ELEM_MAX 128

/* A decimal "123" or "1.25": whole part and fraction frac / 10^frac_digits. */
struct mantissa {
    uint64_t whole;
    uint64_t frac;         /* significant fractional digits, trailing zeros removed */
    unsigned frac_digits;
    bool frac_truncated;   /* a non-zero digit past FRAC_DIGITS_MAX was dropped */
    bool overflow;         /* the whole part does not fit 64 bits */
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static uint64_t pow10_u64(unsigned e)
{
    uint64_t p = 1;
    while (e--)
        p *= 10;
    return p;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/*
 * Reads digits[.digits] at s and sets *end to the first character after it.
 * No sign, no exponent, no leading dot: "1.", ".5" and "-1" are -EINVAL.
 * Overflow of the whole part is flagged, not returned, so the caller can
 * still tell a bad suffix (-EINVAL) from a big number (-ERANGE).
 */
static int parse_mantissa(const char *s, struct mantissa *m, const char **end)
{
    memset(m, 0, sizeof(*m));
    const char *p = s;
    if (!is_digit(*p))
        return -EINVAL;
    for (; is_digit(*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (m->whole > (UINT64_MAX - d) / 10)
            m->overflow = true;
        else
            m->whole = m->whole * 10 + d;
    }
    if (*p == '.') {
        p++;
        if (!is_digit(*p))
            return -EINVAL;
        for (; is_digit(*p); p++) {
            unsigned d = (unsigned)(*p - '0');
            if (m->frac_digits < FRAC_DIGITS_MAX) {
                m->frac = m->frac * 10 + d;
                m->frac_digits++;
            } else if (d != 0) {
                m->frac_truncated = true;
            }
        }
        while (m->frac_digits > 0 && m->frac % 10 == 0) {
            m->frac /= 10;
            m->frac_digits--;
        }
    }
    *end = p;
    return 0;
}

/* Maps k m g t (either case) to the power of the unit: 1..4; 0 when not a unit letter. */
static unsigned unit_power(char c)
{
    switch (c) {
    case 'k': case 'K': return 1;
    case 'm': case 'M': return 2;
    case 'g': case 'G': return 3;
    case 't': case 'T': return 4;
    default: return 0;
    }
}

/* Multiplier of a size suffix: "", "B", "k", "KiB", "KB" and so on; -EINVAL for anything else. */
static int size_suffix(const char *suf, uint64_t *mult)
{
    size_t len = strlen(suf);
    unsigned pw = len > 0 ? unit_power(suf[0]) : 0;
    uint64_t base = 1024;

    if (len == 0 || (len == 1 && suf[0] == 'B')) {
        *mult = 1;
        return 0;
    }
    if (pw == 0)
        return -EINVAL;
    if (len == 2 && suf[1] == 'B')
        base = 1000; /* KB MB GB TB are decimal */
    else if (!(len == 1 || (len == 3 && (suf[1] == 'i' || suf[1] == 'I') && suf[2] == 'B')))
        return -EINVAL;
    *mult = 1;
    while (pw--)
        *mult *= base;
    return 0;
}

int rb_parse_size(const char *s, uint64_t *bytes)
{
    struct mantissa m;
    const char *end;
    uint64_t mult;

    if (!s || !bytes)
        return -EINVAL;
    int rc = parse_mantissa(s, &m, &end);
    if (rc)
        return rc;
    if (size_suffix(end, &mult))
        return -EINVAL;
    if (m.overflow)
        return -ERANGE;
    if (m.frac_truncated)
        return -EINVAL; /* that many digits cannot make a whole number of bytes */
    if (m.whole > UINT64_MAX / mult)
        return -ERANGE;
    uint64_t whole = m.whole * mult;
    uint64_t part = 0;
    if (m.frac_digits > 0) {
        /* frac * mult / 10^d is whole exactly when 10^d / gcd divides frac. */
        uint64_t den = pow10_u64(m.frac_digits);
        uint64_t g = gcd_u64(mult, den);
        if (m.frac % (den / g) != 0)
            return -EINVAL;
        part = m.frac / (den / g) * (mult / g); /* < mult, cannot overflow */
    }
    if (part > UINT64_MAX - whole)
        return -ERANGE;
    *bytes = whole + part;
    return 0;
}

/* A duration unit as coef * 10^exp nanoseconds, so fractions stay in integers. */
struct dur_unit {
    const char *name;
    uint64_t coef;
    unsigned exp;
};

static const struct dur_unit dur_units[] = {
    {"ns", 1, 0}, {"us", 1, 3}, {"ms", 1, 6}, {"s", 1, 9}, {"m", 6, 10}, {"h", 36, 11},
};

int rb_parse_duration(const char *s, uint64_t *ns)
{
    struct mantissa m;
    const char *end;
    const struct dur_unit *u = NULL;

    if (!s || !ns)
        return -EINVAL;
    int rc = parse_mantissa(s, &m, &end);
    if (rc)
        return rc;
    if (*end == '\0') {
        u = &dur_units[3]; /* a plain number is seconds, as fio's runtime */
    } else {
        for (size_t i = 0; i < sizeof(dur_units) / sizeof(dur_units[0]); i++)
            if (strcmp(end, dur_units[i].name) == 0)
                u = &dur_units[i];
        if (!u)
            return -EINVAL;
    }
    if (m.overflow)
        return -ERANGE;

    uint64_t mult = u->coef * pow10_u64(u->exp);
    if (m.whole > UINT64_MAX / mult)
        return -ERANGE;
    uint64_t whole = m.whole * mult;

    /* Digits beyond 10^-17 of the unit are far below a nanosecond: drop them. */
    uint64_t frac = m.frac;
    unsigned d = m.frac_digits;
    if (d > DURATION_FRAC_DIGITS_MAX) {
        frac /= pow10_u64(d - DURATION_FRAC_DIGITS_MAX);
        d = DURATION_FRAC_DIGITS_MAX;
    }
    uint64_t part;
    if (d <= u->exp) {
        part = frac * pow10_u64(u->exp - d) * u->coef; /* < 10^exp * coef */
    } else {
        uint64_t den = pow10_u64(d - u->exp);
        uint64_t num = frac * u->coef; /* < 10^17 * 36 */
        part = num / den;
        if (num % den >= den - num % den)
            part++; /* round half up to the nearest nanosecond */
    }
    if (part > UINT64_MAX - whole)
        return -ERANGE;
    *ns = whole + part;
    return 0;
}

int rb_parse_rate(const char *s, double *per_s)
{
    struct mantissa m;
    const char *p;

    if (!s || !per_s)
        return -EINVAL;
    int rc = parse_mantissa(s, &m, &p);
    if (rc)
        return rc;
    /* Rates count events, so k M G are decimal here. */
    double mult = 1;
    switch (*p) {
    case 'k': case 'K': mult = 1e3; p++; break;
    case 'M': mult = 1e6; p++; break;
    case 'G': mult = 1e9; p++; break;
    default: break;
    }
    double per = 1;
    if (*p == '/') {
        p++;
        switch (*p) {
        case 's': per = 1; break;
        case 'm': per = 60; break;
        case 'h': per = 3600; break;
        default: return -EINVAL;
        }
        p++;
    }
    if (*p != '\0')
        return -EINVAL;
    if (m.overflow)
        return -ERANGE;
    double v = ((double)m.whole + (double)m.frac / (double)pow10_u64(m.frac_digits)) * mult / per;
    if (!isfinite(v))
        return -ERANGE;
    if (!(v > 0))
        return -EINVAL;
    *per_s = v;
    return 0;
}

/* Digits only into *v; -EINVAL without digits or with junk, -ERANGE past UINT64_MAX. */
static int parse_digits(const char *s, uint64_t *v)
{
    uint64_t x = 0;
    bool over = false;

    if (!is_digit(*s))
        return -EINVAL;
    for (; is_digit(*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            over = true;
        else
            x = x * 10 + d;
    }
    if (*s != '\0')
        return -EINVAL;
    if (over)
        return -ERANGE;
    *v = x;
    return 0;
}

int rb_parse_u64(const char *s, uint64_t *v)
{
    if (!s || !v)
        return -EINVAL;
    return parse_digits(s, v);
}

int rb_parse_i64(const char *s, int64_t *v)
{
    uint64_t mag;
    bool neg = false;

    if (!s || !v)
        return -EINVAL;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    int rc = parse_digits(s, &mag);
    if (rc)
        return rc;
    if (neg) {
        if (mag > (uint64_t)INT64_MAX + 1)
            return -ERANGE;
        *v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    } else {
        if (mag > (uint64_t)INT64_MAX)
            return -ERANGE;
        *v = (int64_t)mag;
    }
    return 0;
}

/* strtod without its leniencies: no leading space, no trailing junk except an allowed suffix. */
static int parse_double_suffix(const char *s, double *v, char suffix)
{
    char *end;

    if (!s || !v || *s == '\0' || *s == ' ' || (*s >= '\t' && *s <= '\r'))
        return -EINVAL;
    int saved = errno;
    errno = 0;
    double x = strtod(s, &end);
    int e = errno;
    errno = saved;
    if (end == s)
        return -EINVAL;
    if (suffix && *end == suffix)
        end++;
    if (*end != '\0')
        return -EINVAL;
    if (e == ERANGE && (x == HUGE_VAL || x == -HUGE_VAL))
        return -ERANGE;
    if (!isfinite(x))
        return -EINVAL; /* "inf" and "nan" are spelled out, not computed */
    *v = x;
    return 0;
}

int rb_parse_double(const char *s, double *v)
{
    return parse_double_suffix(s, v, '\0');
}

int rb_parse_percent(const char *s, double *pct)
{
    double x;
    int rc = parse_double_suffix(s, &x, '%');
    if (rc)
        return rc;
    if (x < 0 || x > 100)
        return -ERANGE;
    *pct = x;
    return 0;
}

int rb_parse_list(const char *s, int (*parse)(const char *, uint64_t *), uint64_t *out, size_t max,
                  size_t *n, const char **bad_elem)
{
    char elem[LIST_ELEM_MAX];
    size_t count = 0;

    if (!s || !parse || !n || (max > 0 && !out)) {
        if (bad_elem)
            *bad_elem = s;
        return -EINVAL;
    }
    const char *p = s;
    for (;;) {
        size_t len = strcspn(p, ",");
        uint64_t v;
        if (len == 0 || len >= sizeof(elem)) {
            if (bad_elem)
                *bad_elem = p;
            return -EINVAL;
        }
        memcpy(elem, p, len);
        elem[len] = '\0';
        if (parse(elem, &v) != 0) {
            if (bad_elem)
                *bad_elem = p;
            return -EINVAL;
        }
        if (count >= max) {
            if (bad_elem)
                *bad_elem = p;
            return -E2BIG;
        }
        out[count++] = v;
        if (p[len] == '\0')
            break;
        p += len + 1; /* a trailing comma leaves p at "" and fails as an empty element */
    }
    *n = count;
    return 0;
}

void rb_format_size(char *buf, size_t len, uint64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    const int top = (int)(sizeof(units) / sizeof(units[0])) - 1;
    char num[32];
    int u = 0;

    if (!buf || len == 0)
        return;
    for (uint64_t b = bytes; u < top && b >= 1024; b >>= 10)
        u++;
    if (u == 0) {
        snprintf(buf, len, "%" PRIu64 " B", bytes);
        return;
    }
    double v = (double)bytes / (double)((uint64_t)1 << (10 * u));
    snprintf(num, sizeof(num), "%.3f", v);
    if (strtod(num, NULL) >= 1024 && u < top) {
        u++; /* 1023.9996 KiB rounds to "1024.000": say 1 MiB instead */
        snprintf(num, sizeof(num), "%.3f", v / 1024);
    }
    char *dot = strchr(num, '.');
    if (dot) {
        char *e = num + strlen(num);
        while (e > dot + 1 && e[-1] == '0')
            *--e = '\0';
        if (e == dot + 1)
            *dot = '\0';
    }
    snprintf(buf, len, "%s %s", num, units[u]);
}

void rb_format_duration(char *buf, size_t len, uint64_t ns)
{
    if (!buf || len == 0)
        return;
    if (ns == 0) {
        snprintf(buf, len, "0s");
        return;
    }
    for (size_t i = sizeof(dur_units) / sizeof(dur_units[0]); i-- > 0;) {
        uint64_t mult = dur_units[i].coef * pow10_u64(dur_units[i].exp);
        if (ns % mult == 0) {
            snprintf(buf, len, "%" PRIu64 "%s", ns / mult, dur_units[i].name);
            return;
        }
    }
}

void rb_format_duration_human(char *buf, size_t len, uint64_t ns)
{
    /* up: move to the next unit from this value on (minutes give way to hours at 100). */
    static const struct {
        const char *name;
        double ns, up;
    } units[] = {{"us", 1e3, 999.5}, {"ms", 1e6, 999.5}, {"s", 1e9, 999.5}, {"m", 60e9, 99.95},
                 {"h", 3600e9, 0}};
    const size_t top = sizeof(units) / sizeof(units[0]) - 1;

    if (!buf || len == 0)
        return;
    if (ns < 1000) {
        snprintf(buf, len, "%" PRIu64 "ns", ns);
        return;
    }
    size_t i = 0;
    double v = (double)ns / units[0].ns;
    /* Move up while three significant digits would print 1000 or more. */
    while (i < top && v >= units[i].up) {
        i++;
        v = (double)ns / units[i].ns;
    }
    if (v < 9.995)
        snprintf(buf, len, "%.2f%s", v, units[i].name);
    else if (v < 99.95)
        snprintf(buf, len, "%.1f%s", v, units[i].name);
    else
        snprintf(buf, len, "%.0f%s", v, units[i].name);
}
