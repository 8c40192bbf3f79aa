/* Element types, exact test data, checking and reduction kernels for the collectives. */
#include "data_int.h"

#include <errno.h>
#include <string.h>

static const char *const dtype_names[RB_COLL_DTYPES] = {
    "int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16",
};

static const char *const redop_names[RB_COLL_REDOPS + 1] = {"sum", "prod", "max", "min", "avg", "none"};

/*
 * Per type: bytes, signedness, the largest magnitude up to which every
 * integer is exact (so sums bounded by it are exact in any order), the
 * largest power of two a product may reach, and the period of the
 * non-reduction pattern (small enough to stay exact, prime-ish so that
 * shifted or foreign data differs).
 */
struct dtype_info {
    size_t bytes;
    bool is_signed;
    uint64_t exact_max;
    int pow2_max;
    uint64_t period;
};

static const struct dtype_info info[RB_COLL_DTYPES] = {
    [RB_COLL_INT8] = {1, true, 127, 6, 127},
    [RB_COLL_UINT8] = {1, false, 255, 7, 251},
    [RB_COLL_INT32] = {4, true, 2147483647ull, 30, 65521},
    [RB_COLL_UINT32] = {4, false, 4294967295ull, 31, 65521},
    [RB_COLL_INT64] = {8, true, 9223372036854775807ull, 62, 65521},
    [RB_COLL_UINT64] = {8, false, 18446744073709551615ull, 62, 65521},
    [RB_COLL_HALF] = {2, true, 2048, 15, 2048},
    [RB_COLL_FLOAT] = {4, true, 1ull << 24, 62, 65521},
    [RB_COLL_DOUBLE] = {8, true, 1ull << 53, 62, 65521},
    [RB_COLL_BFLOAT16] = {2, true, 256, 62, 256},
};

/* Caps the magnitude of sum inputs: larger values add nothing to what the check can catch. */
#define SUM_VALUE_CAP 1000u

const char *rb_coll_dtype_name(enum rb_coll_dtype t)
{
    return (unsigned)t < RB_COLL_DTYPES ? dtype_names[t] : NULL;
}

int rb_coll_dtype_parse(const char *s, enum rb_coll_dtype *t)
{
    static const struct {
        const char *alias;
        enum rb_coll_dtype t;
    } aliases[] = {{"float16", RB_COLL_HALF}, {"float32", RB_COLL_FLOAT}, {"float64", RB_COLL_DOUBLE}};
    for (int i = 0; i < RB_COLL_DTYPES; i++)
        if (strcmp(s, dtype_names[i]) == 0) {
            *t = (enum rb_coll_dtype)i;
            return 0;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(s, aliases[i].alias) == 0) {
            *t = aliases[i].t;
            return 0;
        }
    return -EINVAL;
}

size_t rb_coll_dtype_bytes(enum rb_coll_dtype t)
{
    return (unsigned)t < RB_COLL_DTYPES ? info[t].bytes : 0;
}

const char *rb_coll_redop_name(enum rb_coll_redop op)
{
    return (unsigned)op <= RB_COLL_REDOPS ? redop_names[op] : NULL;
}

int rb_coll_redop_parse(const char *s, enum rb_coll_redop *op)
{
    for (int i = 0; i < RB_COLL_REDOPS; i++)
        if (strcmp(s, redop_names[i]) == 0) {
            *op = (enum rb_coll_redop)i;
            return 0;
        }
    return -EINVAL;
}

/* ---- binary16 and bfloat16 ---- */

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Round-to-nearest-even of m >> shift (shift >= 1). */
static uint32_t shift_rne(uint32_t m, unsigned shift)
{
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    return q;
}

uint16_t rb_coll_half_from_float(float f)
{
    uint32_t b = float_bits(f);
    uint16_t sign = (uint16_t)((b >> 16) & 0x8000);
    int exp = (int)((b >> 23) & 0xff);
    uint32_t mant = b & 0x7fffff;
    if (exp == 0xff) /* infinity, or NaN kept quiet */
        return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0));
    int e = exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        /* Subnormal half: mantissa = value / 2^-24 = (mant | 1 << 23) >> (14 - e). Below 2^-25 rounds to 0. */
        if (e < -10)
            return sign;
        return (uint16_t)(sign | shift_rne(mant | 0x800000, (unsigned)(14 - e)));
    }
    /* A carry out of the mantissa correctly bumps the exponent (up to infinity). */
    return (uint16_t)(sign | shift_rne(((uint32_t)e << 23) | mant, 13));
}

float rb_coll_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    if (exp == 0) {
        float v = (float)mant * (1.0f / 16777216.0f); /* mant x 2^-24, exact */
        return sign ? -v : v;
    }
    if (exp == 31)
        return bits_float(sign | 0x7f800000 | (mant << 13));
    return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t rb_coll_bf16_from_float(float f)
{
    uint32_t b = float_bits(f);
    if ((b & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((b >> 16) | 0x40);
    return (uint16_t)((b + 0x7fff + ((b >> 16) & 1)) >> 16);
}

float rb_coll_bf16_to_float(uint16_t h)
{
    return bits_float((uint32_t)h << 16);
}

/* ---- test data ---- */

/*
 * A hash of index and rank, plus seed (so seed + 1 changes it whatever the
 * modulus). Hashed rather than linear: a linear mix summed over ranks that
 * cover its period gives the same total for every element.
 */
static uint64_t mix(uint64_t index, int rank, uint64_t seed)
{
    uint64_t x = index * 0x9e3779b97f4a7c15ull ^ ((uint64_t)rank + 1) * 0xc2b2ae3d27d4eb4full;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 32;
    return x + seed;
}

int64_t rb_coll_data_input(enum rb_coll_dtype t, enum rb_coll_redop op, int nranks, int rank,
                           uint64_t index, uint64_t seed)
{
    const struct dtype_info *d = &info[t];
    uint64_t n = nranks > 0 ? (uint64_t)nranks : 1, r = (uint64_t)rank;
    switch (op) {
    case RB_COLL_SUM: {
        /* |input| <= V with n x V <= exact_max: every partial sum is exact. */
        uint64_t v = d->exact_max / n;
        if (v > SUM_VALUE_CAP)
            v = SUM_VALUE_CAP;
        if (v == 0) {
            /* More ranks than exact integers: ones on at most exact_max ranks per element. */
            uint64_t q = (n + d->exact_max - 1) / d->exact_max;
            return (index + r + seed) % q == 0;
        }
        if (d->is_signed)
            return (int64_t)(mix(index, rank, seed) % (2 * v + 1)) - (int64_t)v;
        return (int64_t)(mix(index, rank, seed) % (v + 1));
    }
    case RB_COLL_PROD: {
        /*
         * Factors 1 or 2 (times -1 now and then for signed types): element
         * index gets c = (index + seed) % (min(n, pow2_max) + 1) twos, from the
         * ranks whose (rank + index + seed) % n is below c, so products vary
         * and stay within 2^pow2_max.
         */
        uint64_t cmax = n < (uint64_t)d->pow2_max ? n : (uint64_t)d->pow2_max;
        uint64_t c = (index + seed) % (cmax + 1);
        int64_t v = (r + index + seed) % n < c ? 2 : 1;
        if (d->is_signed && (index + 2 * r + seed) % 5 == 0)
            v = -v;
        return v;
    }
    case RB_COLL_MAX:
    case RB_COLL_MIN:
        return (int64_t)(mix(index, rank, seed) % 101) - (d->is_signed ? 50 : 0);
    case RB_COLL_AVG: {
        /*
         * Every rank gives u(index), plus 1 on one rank and -1 on another:
         * the sum is n x u, so sum / n = u exactly; |partial sums| <= n x U + 1.
         * Unsigned types keep u >= 1 so that u - 1 is not negative.
         */
        int64_t delta = (r == index % n) - (r == (index + 1) % n);
        uint64_t u_max = (d->exact_max - 1) / n;
        if (u_max > SUM_VALUE_CAP)
            u_max = SUM_VALUE_CAP;
        if (u_max == 0)
            return d->is_signed ? delta : 0;
        if (d->is_signed)
            return (int64_t)((index + seed) % (2 * u_max + 1)) - (int64_t)u_max + delta;
        return (int64_t)(1 + (index + seed) % u_max) + delta;
    }
    case RB_COLL_NONE:
    default:
        return rb_coll_data_value(t, rank, index, seed);
    }
}

int64_t rb_coll_data_expected(enum rb_coll_dtype t, enum rb_coll_redop op, int nranks, uint64_t index,
                              uint64_t seed)
{
    int64_t acc = rb_coll_data_input(t, op, nranks, 0, index, seed);
    for (int r = 1; r < nranks; r++) {
        int64_t v = rb_coll_data_input(t, op, nranks, r, index, seed);
        switch (op) {
        case RB_COLL_PROD: acc *= v; break;
        case RB_COLL_MAX: acc = v > acc ? v : acc; break;
        case RB_COLL_MIN: acc = v < acc ? v : acc; break;
        default: acc += v; break;
        }
    }
    if (op == RB_COLL_AVG && nranks > 0)
        acc /= nranks;
    return acc;
}

int64_t rb_coll_data_value(enum rb_coll_dtype t, int rank, uint64_t index, uint64_t seed)
{
    const struct dtype_info *d = &info[t];
    uint64_t v = (index * 31 + (uint64_t)rank * 7919 + seed * 101) % d->period;
    return (int64_t)v - (d->is_signed ? (int64_t)(d->period / 2) : 0);
}

double rb_coll_data_get(const void *buf, size_t i, enum rb_coll_dtype t)
{
    switch (t) {
    case RB_COLL_INT8: return ((const int8_t *)buf)[i];
    case RB_COLL_UINT8: return ((const uint8_t *)buf)[i];
    case RB_COLL_INT32: return ((const int32_t *)buf)[i];
    case RB_COLL_UINT32: return ((const uint32_t *)buf)[i];
    case RB_COLL_INT64: return (double)((const int64_t *)buf)[i];
    case RB_COLL_UINT64: return (double)((const uint64_t *)buf)[i];
    case RB_COLL_HALF: return rb_coll_half_to_float(((const uint16_t *)buf)[i]);
    case RB_COLL_FLOAT: return ((const float *)buf)[i];
    case RB_COLL_DOUBLE: return ((const double *)buf)[i];
    case RB_COLL_BFLOAT16: return rb_coll_bf16_to_float(((const uint16_t *)buf)[i]);
    default: return 0;
    }
}

void rb_coll_data_set(void *buf, size_t i, enum rb_coll_dtype t, int64_t v)
{
    switch (t) {
    case RB_COLL_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case RB_COLL_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case RB_COLL_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case RB_COLL_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    case RB_COLL_INT64: ((int64_t *)buf)[i] = v; break;
    case RB_COLL_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
    case RB_COLL_HALF: ((uint16_t *)buf)[i] = rb_coll_half_from_float((float)v); break;
    case RB_COLL_FLOAT: ((float *)buf)[i] = (float)v; break;
    case RB_COLL_DOUBLE: ((double *)buf)[i] = (double)v; break;
    case RB_COLL_BFLOAT16: ((uint16_t *)buf)[i] = rb_coll_bf16_from_float((float)v); break;
    default: break;
    }
}

void rb_coll_data_fill_input(void *buf, size_t count, enum rb_coll_dtype t, enum rb_coll_redop op,
                             int nranks, int rank, uint64_t index0, uint64_t seed)
{
    for (size_t k = 0; k < count; k++)
        rb_coll_data_set(buf, k, t, rb_coll_data_input(t, op, nranks, rank, index0 + k, seed));
}

void rb_coll_data_fill_value(void *buf, size_t count, enum rb_coll_dtype t, int rank, uint64_t index0,
                             uint64_t seed)
{
    for (size_t k = 0; k < count; k++)
        rb_coll_data_set(buf, k, t, rb_coll_data_value(t, rank, index0 + k, seed));
}

uint64_t rb_coll_data_check_expected(const void *buf, size_t count, enum rb_coll_dtype t,
                                     enum rb_coll_redop op, int nranks, uint64_t index0, uint64_t seed)
{
    uint64_t wrong = 0;
    for (size_t k = 0; k < count; k++)
        wrong += rb_coll_data_get(buf, k, t) != (double)rb_coll_data_expected(t, op, nranks, index0 + k, seed);
    return wrong;
}

uint64_t rb_coll_data_check_value(const void *buf, size_t count, enum rb_coll_dtype t, int rank,
                                  uint64_t index0, uint64_t seed)
{
    uint64_t wrong = 0;
    for (size_t k = 0; k < count; k++)
        wrong += rb_coll_data_get(buf, k, t) != (double)rb_coll_data_value(t, rank, index0 + k, seed);
    return wrong;
}

void rb_coll_data_poison(void *buf, size_t bytes)
{
    /* 0xA5 bytes: -91 as int8, a tiny non-integer as float/double/half/bfloat16. */
    memset(buf, 0xa5, bytes);
}

/* ---- reduction kernels ---- */

/*
 * dst = a op b. The accumulate form (dst == a) and the three-operand form
 * are separate loops so that restrict holds and the compiler vectorises
 * both; integer arithmetic goes through the unsigned type to wrap.
 */
#define LOOP3(T, EXPR)                                                                             \
    do {                                                                                           \
        T *restrict d_ = dst;                                                                      \
        const T *restrict a_ = a;                                                                  \
        const T *restrict b_ = b;                                                                  \
        for (size_t i = 0; i < count; i++) {                                                       \
            T x = a_[i], y = b_[i];                                                                \
            d_[i] = (EXPR);                                                                        \
        }                                                                                          \
    } while (0)
#define LOOP2(T, EXPR)                                                                             \
    do {                                                                                           \
        T *restrict d_ = dst;                                                                      \
        const T *restrict b_ = b;                                                                  \
        for (size_t i = 0; i < count; i++) {                                                       \
            T x = d_[i], y = b_[i];                                                                \
            d_[i] = (EXPR);                                                                        \
        }                                                                                          \
    } while (0)
#define LOOP(T, EXPR)                                                                              \
    do {                                                                                           \
        if (dst == a)                                                                              \
            LOOP2(T, EXPR);                                                                        \
        else                                                                                       \
            LOOP3(T, EXPR);                                                                        \
    } while (0)

#define REDUCE_INT(T, UT)                                                                          \
    do {                                                                                           \
        switch (op) {                                                                              \
        case RB_COLL_PROD: LOOP(T, (T)((UT)x * (UT)y)); break;                                     \
        case RB_COLL_MAX: LOOP(T, x > y ? x : y); break;                                           \
        case RB_COLL_MIN: LOOP(T, x < y ? x : y); break;                                           \
        default: LOOP(T, (T)((UT)x + (UT)y)); break;                                               \
        }                                                                                          \
    } while (0)

#define REDUCE_FLOAT(T)                                                                            \
    do {                                                                                           \
        switch (op) {                                                                              \
        case RB_COLL_PROD: LOOP(T, x * y); break;                                                  \
        case RB_COLL_MAX: LOOP(T, x > y ? x : y); break;                                           \
        case RB_COLL_MIN: LOOP(T, x < y ? x : y); break;                                           \
        default: LOOP(T, x + y); break;                                                            \
        }                                                                                          \
    } while (0)

/* 16-bit floats: widen to float, apply op, round back (exact for the test data). */
#define REDUCE_F16(TO, FROM)                                                                       \
    do {                                                                                           \
        switch (op) {                                                                              \
        case RB_COLL_PROD: LOOP(uint16_t, FROM(TO(x) * TO(y))); break;                             \
        case RB_COLL_MAX: LOOP(uint16_t, TO(x) > TO(y) ? x : y); break;                            \
        case RB_COLL_MIN: LOOP(uint16_t, TO(x) < TO(y) ? x : y); break;                            \
        default: LOOP(uint16_t, FROM(TO(x) + TO(y))); break;                                       \
        }                                                                                          \
    } while (0)

void rb_coll_data_reduce(void *dst, const void *a, const void *b, size_t count, enum rb_coll_dtype t,
                    enum rb_coll_redop op)
{
    switch (t) {
    case RB_COLL_INT8: REDUCE_INT(int8_t, uint8_t); break;
    case RB_COLL_UINT8: REDUCE_INT(uint8_t, unsigned); break;
    case RB_COLL_INT32: REDUCE_INT(int32_t, uint32_t); break;
    case RB_COLL_UINT32: REDUCE_INT(uint32_t, uint32_t); break;
    case RB_COLL_INT64: REDUCE_INT(int64_t, uint64_t); break;
    case RB_COLL_UINT64: REDUCE_INT(uint64_t, uint64_t); break;
    case RB_COLL_HALF: REDUCE_F16(rb_coll_half_to_float, rb_coll_half_from_float); break;
    case RB_COLL_FLOAT: REDUCE_FLOAT(float); break;
    case RB_COLL_DOUBLE: REDUCE_FLOAT(double); break;
    case RB_COLL_BFLOAT16: REDUCE_F16(rb_coll_bf16_to_float, rb_coll_bf16_from_float); break;
    default: break;
    }
}

#define DIVIDE(T, EXPR)                                                                            \
    do {                                                                                           \
        T *p_ = buf;                                                                               \
        for (size_t i = 0; i < count; i++)                                                         \
            p_[i] = (EXPR);                                                                        \
    } while (0)

void rb_coll_data_avg(void *buf, size_t count, enum rb_coll_dtype t, int nranks)
{
    if (nranks <= 1)
        return;
    switch (t) {
    case RB_COLL_INT8: DIVIDE(int8_t, (int8_t)(p_[i] / nranks)); break;
    case RB_COLL_UINT8: DIVIDE(uint8_t, (uint8_t)(p_[i] / (unsigned)nranks)); break;
    case RB_COLL_INT32: DIVIDE(int32_t, p_[i] / nranks); break;
    case RB_COLL_UINT32: DIVIDE(uint32_t, p_[i] / (uint32_t)nranks); break;
    case RB_COLL_INT64: DIVIDE(int64_t, p_[i] / nranks); break;
    case RB_COLL_UINT64: DIVIDE(uint64_t, p_[i] / (uint64_t)nranks); break;
    case RB_COLL_HALF:
        DIVIDE(uint16_t, rb_coll_half_from_float(rb_coll_half_to_float(p_[i]) / (float)nranks));
        break;
    case RB_COLL_FLOAT: DIVIDE(float, p_[i] / (float)nranks); break;
    case RB_COLL_DOUBLE: DIVIDE(double, p_[i] / nranks); break;
    case RB_COLL_BFLOAT16:
        DIVIDE(uint16_t, rb_coll_bf16_from_float(rb_coll_bf16_to_float(p_[i]) / (float)nranks));
        break;
    default: break;
    }
}
