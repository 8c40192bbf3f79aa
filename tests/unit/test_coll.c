/* Unit tests for the collectives' data, kernels, checker and busbw factors (no MPI calls). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>
#include <unistd.h>

#include "coll_int.h"

static const enum rb_coll_redop all_ops[] = {RB_COLL_SUM, RB_COLL_PROD, RB_COLL_MAX, RB_COLL_MIN, RB_COLL_AVG};

/* ---- names ---- */

static void test_names(void **state)
{
    (void)state;
    enum rb_coll_dtype t;
    assert_int_equal(rb_coll_dtype_parse("half", &t), 0);
    assert_int_equal(t, RB_COLL_HALF);
    assert_int_equal(rb_coll_dtype_parse("float16", &t), 0);
    assert_int_equal(t, RB_COLL_HALF);
    assert_int_equal(rb_coll_dtype_parse("float32", &t), 0);
    assert_int_equal(t, RB_COLL_FLOAT);
    assert_int_equal(rb_coll_dtype_parse("float64", &t), 0);
    assert_int_equal(t, RB_COLL_DOUBLE);
    assert_int_equal(rb_coll_dtype_parse("bfloat16", &t), 0);
    assert_int_equal(t, RB_COLL_BFLOAT16);
    assert_int_equal(rb_coll_dtype_parse("float8", &t), -EINVAL);
    assert_string_equal(rb_coll_dtype_name(RB_COLL_DOUBLE), "double");
    assert_int_equal(rb_coll_dtype_bytes(RB_COLL_BFLOAT16), 2);
    assert_int_equal(rb_coll_dtype_bytes(RB_COLL_UINT64), 8);
    enum rb_coll_redop op;
    assert_int_equal(rb_coll_redop_parse("avg", &op), 0);
    assert_int_equal(op, RB_COLL_AVG);
    assert_int_equal(rb_coll_redop_parse("none", &op), -EINVAL);
    assert_string_equal(rb_coll_redop_name(RB_COLL_NONE), "none");
    enum rb_coll_algo a;
    assert_int_equal(rb_coll_algo_parse("rhd", &a), 0);
    assert_int_equal(a, RB_COLL_ALGO_RHD);
    assert_int_equal(rb_coll_algo_parse("nccl", &a), -EINVAL);
}

/* ---- 16-bit floats ---- */

static void test_half_known(void **state)
{
    (void)state;
    assert_int_equal(rb_coll_half_from_float(1.0f), 0x3c00);
    assert_int_equal(rb_coll_half_from_float(-2.0f), 0xc000);
    assert_int_equal(rb_coll_half_from_float(65504.0f), 0x7bff);
    assert_int_equal(rb_coll_half_from_float(65520.0f), 0x7c00);  /* rounds up to infinity */
    assert_int_equal(rb_coll_half_from_float(65519.0f), 0x7bff);  /* just below the halfway point */
    assert_int_equal(rb_coll_half_from_float(2049.0f), 0x6800);   /* tie: to even, 2048 */
    assert_int_equal(rb_coll_half_from_float(2051.0f), 0x6802);   /* tie: to even, 2052 */
    assert_int_equal(rb_coll_half_from_float(0x1p-24f), 0x0001);  /* smallest subnormal */
    assert_int_equal(rb_coll_half_from_float(0x1p-25f), 0x0000);  /* tie: to even, zero */
    assert_int_equal(rb_coll_half_from_float(0x1.8p-25f), 0x0001);
    assert_int_equal(rb_coll_half_from_float(0x1p-14f), 0x0400);  /* smallest normal */
    assert_int_equal(rb_coll_half_from_float(INFINITY), 0x7c00);
    assert_true((rb_coll_half_from_float(NAN) & 0x7c00) == 0x7c00 && (rb_coll_half_from_float(NAN) & 0x3ff));
    assert_true(rb_coll_half_to_float(0x3555) == 0x1.554p-2f);
}

/* Every binary16 value survives half -> float -> half; NaNs stay NaN. */
static void test_half_roundtrip(void **state)
{
    (void)state;
    for (uint32_t h = 0; h <= 0xffff; h++) {
        float f = rb_coll_half_to_float((uint16_t)h);
        uint16_t back = rb_coll_half_from_float(f);
        if (isnan(f))
            assert_true((back & 0x7c00) == 0x7c00 && (back & 0x3ff));
        else if (back != h)
            fail_msg("half 0x%04x -> %a -> 0x%04x", h, (double)f, back);
    }
}

static void test_bf16(void **state)
{
    (void)state;
    assert_int_equal(rb_coll_bf16_from_float(1.0f), 0x3f80);
    assert_int_equal(rb_coll_bf16_from_float(-3.0f), 0xc040);
    assert_true(rb_coll_bf16_to_float(rb_coll_bf16_from_float(257.0f)) == 256.0f); /* tie: to even */
    assert_true(rb_coll_bf16_to_float(rb_coll_bf16_from_float(259.0f)) == 260.0f); /* tie: to even */
    assert_true(rb_coll_bf16_to_float(rb_coll_bf16_from_float(258.0f)) == 258.0f);
    assert_true(isnan(rb_coll_bf16_to_float(rb_coll_bf16_from_float(NAN))));
    for (uint32_t h = 0; h <= 0xffff; h++) {
        float f = rb_coll_bf16_to_float((uint16_t)h);
        if (!isnan(f) && rb_coll_bf16_from_float(f) != h)
            fail_msg("bfloat16 0x%04x does not round-trip", h);
    }
}

/* ---- exact data ---- */

/*
 * For every type, op and rank count, reducing the inputs in the type with
 * the kernel -- rank by rank upwards, and in pairs downwards, two different
 * orders and groupings -- gives exactly the expected value.
 */
static void test_data_exact(void **state)
{
    (void)state;
    static const int ranks[] = {1, 2, 3, 4, 5, 7, 8, 13, 64, 127, 300};
    enum { N = 600 };
    char *in = malloc(N * 8 * 300), *fwd = malloc(N * 8), *tree = malloc(N * 8 * 300);
    assert_non_null(in);
    assert_non_null(tree);
    for (int t = 0; t < RB_COLL_DTYPES; t++) {
        size_t tb = rb_coll_dtype_bytes((enum rb_coll_dtype)t);
        for (size_t oi = 0; oi < sizeof all_ops / sizeof all_ops[0]; oi++) {
            enum rb_coll_redop op = all_ops[oi];
            for (size_t ri = 0; ri < sizeof ranks / sizeof ranks[0]; ri++) {
                int n = ranks[ri];
                for (uint64_t seed = 0; seed < 2; seed++) {
                    for (int r = 0; r < n; r++)
                        rb_coll_data_fill_input(in + (size_t)r * N * tb, N, (enum rb_coll_dtype)t, op, n, r,
                                                1000, seed);
                    memcpy(fwd, in, N * tb);
                    for (int r = 1; r < n; r++)
                        rb_coll_data_reduce(fwd, fwd, in + (size_t)r * N * tb, N, (enum rb_coll_dtype)t, op);
                    memcpy(tree, in, (size_t)n * N * tb);
                    for (int stride = 1; stride < n; stride *= 2)
                        for (int r = 0; r + stride < n; r += 2 * stride)
                            rb_coll_data_reduce(tree + (size_t)r * N * tb, tree + (size_t)r * N * tb,
                                                tree + (size_t)(r + stride) * N * tb, N, (enum rb_coll_dtype)t, op);
                    if (op == RB_COLL_AVG) {
                        rb_coll_data_avg(fwd, N, (enum rb_coll_dtype)t, n);
                        rb_coll_data_avg(tree, N, (enum rb_coll_dtype)t, n);
                    }
                    uint64_t w1 = rb_coll_data_check_expected(fwd, N, (enum rb_coll_dtype)t, op, n, 1000, seed);
                    uint64_t w2 = rb_coll_data_check_expected(tree, N, (enum rb_coll_dtype)t, op, n, 1000, seed);
                    if (w1 || w2)
                        fail_msg("%s %s n=%d seed=%d: %llu wrong in rank order, %llu in pairs",
                                 rb_coll_dtype_name((enum rb_coll_dtype)t), rb_coll_redop_name(op), n, (int)seed,
                                 (unsigned long long)w1, (unsigned long long)w2);
                    /* The expected values are not all alike, so a shifted or missing block is caught. */
                    int64_t e0 = rb_coll_data_expected((enum rb_coll_dtype)t, op, n, 1000, seed);
                    bool differ = false;
                    for (uint64_t i = 1; i < 16 && !differ; i++)
                        differ = rb_coll_data_expected((enum rb_coll_dtype)t, op, n, 1000 + i, seed) != e0;
                    if (!differ && n <= 64)
                        fail_msg("%s %s n=%d: 16 equal expected values in a row",
                                 rb_coll_dtype_name((enum rb_coll_dtype)t), rb_coll_redop_name(op), n);
                }
            }
        }
    }
    free(in);
    free(fwd);
    free(tree);
}

/* Non-reduction values differ between neighbouring elements and between ranks. */
static void test_values_distinct(void **state)
{
    (void)state;
    for (int t = 0; t < RB_COLL_DTYPES; t++)
        for (int r = 0; r < 16; r++)
            for (uint64_t i = 0; i < 1000; i++) {
                int64_t v = rb_coll_data_value((enum rb_coll_dtype)t, r, i, 0);
                assert_true(v != rb_coll_data_value((enum rb_coll_dtype)t, r, i + 1, 0));
                assert_true(v != rb_coll_data_value((enum rb_coll_dtype)t, r + 1, i, 0));
                char buf[8];
                rb_coll_data_set(buf, 0, (enum rb_coll_dtype)t, v);
                assert_true(rb_coll_data_get(buf, 0, (enum rb_coll_dtype)t) == (double)v);
            }
}

/* Integer sums and products wrap instead of overflowing (UBSan would flag signed overflow). */
static void test_kernel_wraps(void **state)
{
    (void)state;
    int8_t a[2] = {127, -128}, b[2] = {1, -1};
    rb_coll_data_reduce(a, a, b, 2, RB_COLL_INT8, RB_COLL_SUM);
    assert_int_equal(a[0], -128);
    assert_int_equal(a[1], 127);
    int64_t c = INT64_MAX, d = 2;
    rb_coll_data_reduce(&c, &c, &d, 1, RB_COLL_INT64, RB_COLL_PROD);
    assert_int_equal(c, -2);
    float x[3] = {1, 5, -2}, y[3] = {4, 2, -3}, z[3];
    rb_coll_data_reduce(z, x, y, 3, RB_COLL_FLOAT, RB_COLL_MAX);
    assert_true(z[0] == 4 && z[1] == 5 && z[2] == -2);
    rb_coll_data_reduce(z, x, y, 3, RB_COLL_FLOAT, RB_COLL_MIN);
    assert_true(z[0] == 1 && z[1] == 2 && z[2] == -3);
}

/* ---- the collectives' init and check against a reference of their semantics ---- */

enum { NR = 4, COUNT = 37 };

struct sim {
    char *send[NR], *recv[NR];
    struct rb_coll_args a[NR];
    struct rb_coll_counts cn;
    struct rb_coll_a2av a2av; /* alltoallv's pattern (distance-weighted), every rank's */
};

static void sim_init(struct sim *s, const struct rb_coll_test *t, enum rb_coll_dtype type, enum rb_coll_redop op,
                     int root, uint64_t seed)
{
    const struct rb_coll_a2av_opts ao = {.spread = 1, .scale = -1};
    s->a2av = (struct rb_coll_a2av){0};
    assert_int_equal(rb_coll_alltoallv_setup(&ao, &s->a2av), 0);
    const struct rb_coll_args pa = {.a2av = &s->a2av};
    t->counts(&pa, COUNT, rb_coll_dtype_bytes(type), NR, true, &s->cn);
    size_t tb = rb_coll_dtype_bytes(type);
    for (int r = 0; r < NR; r++) {
        s->send[r] = calloc(s->cn.send + 1, tb);
        s->recv[r] = calloc(s->cn.recv + 1, tb);
        assert_non_null(s->send[r]);
        assert_non_null(s->recv[r]);
        struct rb_coll_args *a = &s->a[r];
        memset(a, 0, sizeof *a);
        a->world.rank = r;
        a->world.size = NR;
        a->type = type;
        a->type_bytes = tb;
        a->op = op;
        a->root = root;
        a->count = s->cn.param;
        a->send = s->send[r];
        a->recv = s->recv[r];
        a->a2av = &s->a2av;
        t->init(a, seed);
    }
}

static void sim_free(struct sim *s)
{
    for (int r = 0; r < NR; r++) {
        free(s->send[r]);
        free(s->recv[r]);
    }
    rb_coll_alltoallv_free(&s->a2av);
}

/* What rank r's output must be, computed from every rank's input without the collective's code. */
static void reference(struct sim *s, const struct rb_coll_test *t, int r)
{
    const struct rb_coll_args *a = &s->a[r];
    size_t tb = a->type_bytes, base = s->cn.param;
    char *out = s->recv[r];
    switch (t->kind) {
    case RB_COLL_ALLREDUCE:
    case RB_COLL_REDUCE:
    case RB_COLL_REDUCESCATTER: {
        size_t off = t->kind == RB_COLL_REDUCESCATTER ? (size_t)r * base : 0;
        memcpy(out, s->send[0] + off * tb, base * tb);
        for (int j = 1; j < NR; j++)
            rb_coll_data_reduce(out, out, s->send[j] + off * tb, base, a->type, a->op);
        if (a->op == RB_COLL_AVG)
            rb_coll_data_avg(out, base, a->type, NR);
        break;
    }
    case RB_COLL_ALLGATHER:
        for (int j = 0; j < NR; j++)
            memcpy(out + (size_t)j * base * tb, s->send[j], base * tb);
        break;
    case RB_COLL_BROADCAST:
        memcpy(out, s->send[a->root], base * tb);
        break;
    case RB_COLL_ALLTOALL:
        for (int j = 0; j < NR; j++)
            memcpy(out + (size_t)j * base * tb, s->send[j] + (size_t)r * base * tb, base * tb);
        break;
    case RB_COLL_SENDRECV:
        memcpy(out, s->send[(r - 1 + NR) % NR], base * tb);
        break;
    case RB_COLL_GATHER:
        for (int j = 0; j < NR && r == a->root; j++)
            memcpy(out + (size_t)j * base * tb, s->send[j], base * tb);
        break;
    case RB_COLL_SCATTER:
        memcpy(out, s->send[a->root] + (size_t)r * base * tb, base * tb);
        break;
    case RB_COLL_ALLTOALLV: {
        /* Source i's block for r starts where its blocks for ranks before r end (the pattern's own function). */
        size_t total = base * NR * tb, at = 0;
        for (int i = 0; i < NR; i++) {
            size_t skip = 0;
            for (int k = 0; k < r; k++)
                skip += rb_coll_alltoallv_pair_bytes(&s->a2av, i, k, NR, total);
            size_t bytes = rb_coll_alltoallv_pair_bytes(&s->a2av, i, r, NR, total);
            memcpy(out + at, s->send[i] + skip, bytes);
            at += bytes;
        }
        break;
    }
    default:
        fail();
    }
}

/* Changes element i of buf to a different value of the type. */
static void flip(void *buf, size_t i, enum rb_coll_dtype t)
{
    double v = rb_coll_data_get(buf, i, t);
    rb_coll_data_set(buf, i, t, v == 3 ? 5 : 3);
}

static void check_collective(enum rb_coll_kind kind)
{
    const struct rb_coll_test *t = rb_coll_test_get(kind);
    assert_non_null(t);
    assert_int_equal(t->kind, kind);
    assert_string_equal(t->name, rb_coll_kind_name(kind));
    const struct rb_coll_kind_def *kd = rb_coll_kind_def(kind);
    assert_non_null(t->run[RB_COLL_ALGO_MPI]);
    for (int a = 0; a < RB_COLL_ALGOS; a++)
        assert_true((t->run[a] == NULL) == (t->not_applicable[a] != NULL));
    size_t nops = kd->reduces ? sizeof all_ops / sizeof all_ops[0] : 1;
    for (int type = 0; type < RB_COLL_DTYPES; type++)
        for (size_t oi = 0; oi < nops; oi++) {
            enum rb_coll_redop op = kd->reduces ? all_ops[oi] : RB_COLL_NONE;
            int root = kd->rooted ? 2 : -1;
            struct sim s;
            sim_init(&s, t, (enum rb_coll_dtype)type, op, root, 3);
            /* The poisoned output is wrong where it is checked (8-bit types: the pattern may be a valid sum). */
            bool at_root_only = kind == RB_COLL_REDUCE || kind == RB_COLL_GATHER;
            int checked = at_root_only ? root : 0;
            uint64_t poisoned = t->check(&s.a[checked], 3);
            if (s.a[0].type_bytes == 1)
                assert_true(poisoned > s.cn.recv / 2);
            else
                assert_int_equal(poisoned, s.cn.recv);
            for (int r = 0; r < NR; r++) {
                reference(&s, t, r);
                uint64_t w = t->check(&s.a[r], 3);
                if (w != 0)
                    fail_msg("%s %s %s rank %d: %llu wrong in the reference output", t->name,
                             rb_coll_dtype_name((enum rb_coll_dtype)type), rb_coll_redop_name(op), r,
                             (unsigned long long)w);
                /* Other seeds' data does not pass for this one. */
                assert_true(t->check(&s.a[r], 4) > 0 || (at_root_only && r != root));
                /* One flipped element anywhere in the output is exactly one wrong element. */
                for (size_t i = 0; i < s.cn.recv; i += 5) {
                    char saved[8];
                    memcpy(saved, s.recv[r] + i * s.a[r].type_bytes, s.a[r].type_bytes);
                    flip(s.recv[r], i, (enum rb_coll_dtype)type);
                    uint64_t want = at_root_only && r != root ? 0 : 1;
                    if (t->check(&s.a[r], 3) != want)
                        fail_msg("%s %s rank %d: flipping element %zu gave %llu wrong", t->name,
                                 rb_coll_dtype_name((enum rb_coll_dtype)type), r, i,
                                 (unsigned long long)t->check(&s.a[r], 3));
                    memcpy(s.recv[r] + i * s.a[r].type_bytes, saved, s.a[r].type_bytes);
                }
            }
            sim_free(&s);
        }
}

static void test_allreduce(void **state) { (void)state; check_collective(RB_COLL_ALLREDUCE); }
static void test_allgather(void **state) { (void)state; check_collective(RB_COLL_ALLGATHER); }
static void test_reducescatter(void **state) { (void)state; check_collective(RB_COLL_REDUCESCATTER); }
static void test_broadcast(void **state) { (void)state; check_collective(RB_COLL_BROADCAST); }
static void test_reduce(void **state) { (void)state; check_collective(RB_COLL_REDUCE); }
static void test_alltoall(void **state) { (void)state; check_collective(RB_COLL_ALLTOALL); }
static void test_sendrecv(void **state) { (void)state; check_collective(RB_COLL_SENDRECV); }
static void test_gather(void **state) { (void)state; check_collective(RB_COLL_GATHER); }
static void test_scatter(void **state) { (void)state; check_collective(RB_COLL_SCATTER); }
static void test_alltoallv(void **state) { (void)state; check_collective(RB_COLL_ALLTOALLV); }

/* alltoallv's pattern against nccl-tests' formula worked by hand, and its counts (src/alltoallv.cu). */
static void test_alltoallv_pattern(void **state)
{
    (void)state;
    struct rb_coll_a2av_opts o = {.spread = 1, .scale = -1};
    struct rb_coll_a2av p = {0};
    const struct rb_coll_args pa = {.a2av = &p};
    assert_int_equal(rb_coll_alltoallv_setup(&o, &p), 0);
    /* 4 ranks, 1024 B each: distances 1, 2, 3 of 6 -> 170.7, 341.3, 512 -> aligned 160, 336, 512; none to itself. */
    assert_int_equal(rb_coll_alltoallv_pair_bytes(&p, 0, 0, 4, 1024), 0);
    assert_int_equal(rb_coll_alltoallv_pair_bytes(&p, 0, 1, 4, 1024), 160);
    assert_int_equal(rb_coll_alltoallv_pair_bytes(&p, 0, 2, 4, 1024), 336);
    assert_int_equal(rb_coll_alltoallv_pair_bytes(&p, 3, 2, 4, 1024), 512); /* distance (2 - 3) mod 4 = 3 */
    struct rb_coll_counts c;
    rb_coll_alltoallv.counts(&pa, 256, 4, 4, false, &c); /* -b 1K float: 64 per peer, 1008 B sent and received */
    assert_true(c.param == 64 && c.send == 252 && c.recv == 252);
    o.spread = 0; /* uniform: 256 B to everyone, itself included */
    assert_int_equal(rb_coll_alltoallv_setup(&o, &p), 0);
    assert_int_equal(rb_coll_alltoallv_pair_bytes(&p, 2, 2, 4, 1024), 256);
    o.spread = 0.5; /* halfway: (256 + 170.7) / 2 = 213.3 -> 208 */
    assert_int_equal(rb_coll_alltoallv_setup(&o, &p), 0);
    assert_int_equal(rb_coll_alltoallv_pair_bytes(&p, 0, 1, 4, 1024), 208);
    o.spread = 1.5;
    assert_int_equal(rb_coll_alltoallv_setup(&o, &p), RB_EXIT_USAGE);
    /* A matrix file: values aligned down to 16 after the scale; the busiest rank sizes the buffers. */
    char path[] = "/tmp/rb_a2av_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "0 100 200\n 17 0 0\n4000 15 32\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    o = (struct rb_coll_a2av_opts){.spread = -1, .matrix = path, .scale = 2};
    assert_int_equal(rb_coll_alltoallv_setup(&o, &p), 0);
    assert_int_equal(rb_coll_alltoallv_pair_bytes(&p, 0, 1, 3, 0), 192);  /* 200 -> 192 */
    assert_int_equal(rb_coll_alltoallv_pair_bytes(&p, 1, 0, 3, 0), 32);   /* 34 -> 32 */
    assert_int_equal(rb_coll_alltoallv_pair_bytes(&p, 2, 1, 3, 0), 16);   /* 30 -> 16 */
    assert_int_equal(rb_coll_alltoallv_pair_bytes(&p, 2, 0, 3, 0), 8000);
    rb_coll_alltoallv.counts(&pa, 1000, 1, 3, false, &c);
    assert_true(c.param == 0 && c.send == 8000 + 16 + 64 && c.recv == 8032);
    assert_int_equal(rb_coll_alltoallv_check(&p, 3, 8080, 8080), 0);
    assert_int_equal(rb_coll_alltoallv_check(&p, 3, 8079, 8079), RB_EXIT_USAGE); /* -e below the busiest rank */
    assert_int_equal(rb_coll_alltoallv_check(&p, 3, 8000, 9000), RB_EXIT_USAGE); /* -b != -e */
    assert_int_equal(rb_coll_alltoallv_check(&p, 4, 9000, 9000), RB_EXIT_USAGE); /* 4 ranks, 3x3 matrix */
    rb_coll_alltoallv_free(&p);
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, "1 2\n3\n", 6), 6);
    close(fd);
    o.scale = -1;
    assert_int_equal(rb_coll_alltoallv_setup(&o, &p), RB_EXIT_USAGE); /* not square */
    unlink(path);
    rb_coll_alltoallv_free(&p);
    o = (struct rb_coll_a2av_opts){.spread = 1, .scale = -1};
    assert_int_equal(rb_coll_alltoallv_setup(&o, &p), 0);
    /* Two patterns side by side (each run's own): setting up one leaves the other as it was. */
    struct rb_coll_a2av u = {0};
    o.spread = 0;
    assert_int_equal(rb_coll_alltoallv_setup(&o, &u), 0);
    assert_int_equal(rb_coll_alltoallv_pair_bytes(&u, 0, 1, 4, 1024), 256);
    assert_int_equal(rb_coll_alltoallv_pair_bytes(&p, 0, 1, 4, 1024), 160);
    rb_coll_alltoallv_free(&u);
    rb_coll_alltoallv_free(&p);
}

/* nccl-tests' element counts: per-rank blocks for the gathered/scattered ones, in-place offsets. */
static void test_counts(void **state)
{
    (void)state;
    struct rb_coll_counts c;
    rb_coll_allgather.counts(NULL, 1001, 4, 4, true, &c);
    assert_true(c.send == 250 && c.recv == 1000 && c.param == 250 && c.send_inplace_off == 250 &&
                c.recv_inplace_off == 0);
    rb_coll_reducescatter.counts(NULL, 1001, 4, 4, true, &c);
    assert_true(c.send == 1000 && c.recv == 250 && c.param == 250 && c.send_inplace_off == 0 &&
                c.recv_inplace_off == 250);
    rb_coll_alltoall.counts(NULL, 1001, 4, 4, true, &c);
    assert_true(c.send == 1000 && c.recv == 1000 && c.param == 250);
    rb_coll_allreduce.counts(NULL, 1001, 4, 4, false, &c);
    assert_true(c.send == 1001 && c.recv == 1001 && c.param == 1001);
    /* nccl-tests v2.13.12+: np 3, float, 1000 B is 80 elements (960 B) per rank; 83 (996 B) before. */
    rb_coll_allgather.counts(NULL, 250, 4, 3, false, &c);
    assert_true(c.send == 80 && c.recv == 240 && c.param == 80 && c.send_inplace_off == 80);
    rb_coll_allgather.counts(NULL, 250, 4, 3, true, &c);
    assert_true(c.param == 83 && c.recv == 249);
    rb_coll_reducescatter.counts(NULL, 250, 4, 3, false, &c);
    assert_true(c.send == 240 && c.recv == 80 && c.recv_inplace_off == 80);
    rb_coll_alltoall.counts(NULL, 250, 4, 3, false, &c);
    assert_true(c.send == 240 && c.param == 80);
    /* Multiples of 16 bytes: 16 int8, 8 half, 2 double elements. */
    assert_int_equal(rb_coll_per_rank_count(1000, 3, 1, false), 320);
    assert_int_equal(rb_coll_per_rank_count(500, 3, 2, false), 160);
    assert_int_equal(rb_coll_per_rank_count(125, 3, 8, false), 40);
    assert_int_equal(rb_coll_per_rank_count(7, 3, 4, false), 0);
    rb_coll_sendrecv.counts(NULL, 1001, 4, 3, false, &c);
    assert_true(c.param == 1001);
}

/* ---- busbw ---- */

static void test_busbw(void **state)
{
    (void)state;
    /* nccl-tests doc/PERFORMANCE.md */
    assert_true(rb_coll_busbw_factor(RB_COLL_ALLREDUCE, 4) == 1.5);
    assert_true(rb_coll_busbw_factor(RB_COLL_ALLREDUCE, 8) == 1.75);
    assert_true(rb_coll_busbw_factor(RB_COLL_ALLGATHER, 4) == 0.75);
    assert_true(rb_coll_busbw_factor(RB_COLL_REDUCESCATTER, 2) == 0.5);
    assert_true(rb_coll_busbw_factor(RB_COLL_ALLTOALL, 5) == 0.8);
    assert_true(rb_coll_busbw_factor(RB_COLL_BROADCAST, 16) == 1.0);
    assert_true(rb_coll_busbw_factor(RB_COLL_REDUCE, 16) == 1.0);
    assert_true(rb_coll_busbw_factor(RB_COLL_SENDRECV, 16) == 1.0);
    assert_true(rb_coll_busbw_factor(RB_COLL_ALLREDUCE, 1) == 0.0);
    assert_true(rb_coll_algbw_bytes(RB_COLL_ALLGATHER, 250, 4, 4) == 4000.0);
    assert_true(rb_coll_algbw_bytes(RB_COLL_ALLTOALL, 250, 4, 4) == 4000.0);
    assert_true(rb_coll_algbw_bytes(RB_COLL_ALLREDUCE, 1001, 4, 4) == 4004.0);
    assert_true(rb_coll_algbw_gbps(1e9, 1e6) == 1.0); /* 1 GB in 1 s */
    assert_true(rb_coll_algbw_gbps(1e9, 0) == 0.0);
}

/* nccl-tests 2.19's table, byte for byte (src/util.cu's format strings, written out here by hand). */
static void test_table_format(void **state)
{
    (void)state;
    char buf[1024];
    rb_coll_table_row_start(buf, sizeof buf, 1048576, 262144, "float", "sum", -1);
    assert_string_equal(buf, "     1048576        262144     float     sum      -1");
    assert_int_equal(strlen(buf), 52);
    rb_coll_table_half(buf, sizeof buf, 123.456, 8.5, 12.75, 0);
    assert_string_equal(buf, "   123.46    8.50   12.75       0");
    assert_int_equal(strlen(buf), 33);
    /* getFloatStr: fewer decimals when a figure does not fit, then an exponent cut to the column. */
    rb_coll_table_half(buf, sizeof buf, 12345.678, 123.456, 1234.5, 7);
    assert_string_equal(buf, "  12345.7  123.46  1234.5       7");
    rb_coll_table_half(buf, sizeof buf, 123456789.0, 999999.4, 0, 1234567);
    assert_string_equal(buf, "  1.2e+08  999999    0.00  1.23457e+06");
    rb_coll_table_float(buf, sizeof buf, 12345678.0, 6);
    assert_string_equal(buf, " 1e+07");
    rb_coll_table_half(buf, sizeof buf, 1, 2, 3, -1);
    assert_string_equal(buf, "     1.00    2.00    3.00    N/A");
    rb_coll_table_footer(buf, sizeof buf, 3, 1.5);
    assert_string_equal(buf, "# Out of bounds values : 3 FAILED\n# Avg bus bandwidth    : 1.5 \n#\n");
    rb_coll_table_footer(buf, sizeof buf, 0, 0);
    assert_non_null(strstr(buf, "# Out of bounds values : 0 OK\n"));
    assert_true(rb_coll_table_header_str(buf, sizeof buf, false, false, false) > 0);
    assert_string_equal(buf, "#\n"
                             "#                                                              out-of-place                 "
                             "      in-place          \n"
                             "#       size         count      type   redop    root     time   algbw   busbw  #wrong     "
                             "time   algbw   busbw  #wrong \n"
                             "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             "
                             "(us)  (GB/s)  (GB/s)         \n");
    /* The column lines are a row's 118 characters and a trailing space; -C renames the time columns. */
    char *second = strchr(buf + 2, '\n') + 1, *third = strchr(second, '\n') + 1;
    assert_int_equal(strchr(second, '\n') - second, 119);
    assert_int_equal(strchr(third, '\n') - third, 119);
    assert_true(rb_coll_table_header_str(buf, sizeof buf, true, false, false) > 0);
    assert_non_null(strstr(buf, "  cputime   algbw   busbw  #wrong  cputime   algbw"));
    /* -I adds four 7-wide columns per half; -S a 19-wide one after " ". */
    assert_true(rb_coll_table_header_str(buf, sizeof buf, false, true, true) > 0);
    char *title = buf + 2;
    second = strchr(title, '\n') + 1;
    third = strchr(second, '\n') + 1;
    assert_int_equal(strchr(second, '\n') - second, 52 + 2 * (33 + 36) + 1 + 19);
    assert_int_equal(strchr(third, '\n') - third, 52 + 2 * (33 + 36) + 1 + 19);
    assert_non_null(strstr(second, "   i_min    i_max    i_p99    i_cv%     time"));
    assert_non_null(strstr(second, "i_cv%           timestamp\n"));
    assert_non_null(strstr(third, "  %Y-%m-%d %H:%M:%S\n"));
    assert_non_null(strstr(title, "out-of-place (+ per-iteration)"));
    assert_int_equal(rb_coll_table_header_str(buf, 100, false, false, false), -ENOSPC);
}

/* NCCL_TESTS_SPLIT as nccl-tests 2.19 reads it. */
static void test_split(void **state)
{
    (void)state;
    int c = -1;
    assert_int_equal(rb_coll_split_color("AND 0x7", 13, &c), 0);
    assert_int_equal(c, 5);
    assert_int_equal(rb_coll_split_color("and 7", 13, &c), 0);
    assert_int_equal(c, 5);
    assert_int_equal(rb_coll_split_color("&0b110", 13, &c), 0);
    assert_int_equal(c, 4);
    assert_int_equal(rb_coll_split_color("OR 1", 4, &c), 0);
    assert_int_equal(c, 5);
    assert_int_equal(rb_coll_split_color("|010", 1, &c), 0); /* octal 8 */
    assert_int_equal(c, 9);
    assert_int_equal(rb_coll_split_color("MOD 8", 13, &c), 0);
    assert_int_equal(c, 5);
    assert_int_equal(rb_coll_split_color("%3", 13, &c), 0);
    assert_int_equal(c, 1);
    assert_int_equal(rb_coll_split_color(" DIV 8 ", 13, &c), 0);
    assert_int_equal(c, 1);
    assert_int_equal(rb_coll_split_color("/4", 13, &c), 0);
    assert_int_equal(c, 3);
    assert_int_equal(rb_coll_split_color("MOD 0", 13, &c), -EINVAL);
    assert_int_equal(rb_coll_split_color("DIV 0", 13, &c), -EINVAL);
    assert_int_equal(rb_coll_split_color("XOR 3", 13, &c), -EINVAL);
    assert_int_equal(rb_coll_split_color("AND", 13, &c), -EINVAL);
    assert_int_equal(rb_coll_split_color("AND 7x", 13, &c), -EINVAL);
    assert_int_equal(rb_coll_split_color("", 13, &c), -EINVAL);
    assert_int_equal(rb_coll_split_mask_color("0x6", 13, &c), 0);
    assert_int_equal(c, 4);
    assert_int_equal(rb_coll_split_mask_color("f", 29, &c), 0);
    assert_int_equal(c, 13);
    assert_int_equal(rb_coll_split_mask_color("zz", 13, &c), -EINVAL);
}

/* -w: every size from -b to -e, doubling (nccl-tests 2.19's TimeTest). */
static void test_warmup_sizes(void **state)
{
    (void)state;
    uint64_t s[70];
    assert_int_equal(rb_coll_warmup_sizes(1024, 65536, s, 70), 7);
    assert_true(s[0] == 1024 && s[1] == 2048 && s[6] == 65536);
    assert_int_equal(rb_coll_warmup_sizes(1000, 5000, s, 70), 3); /* 1000, 2000, 4000: not 5000 */
    assert_true(s[2] == 4000);
    assert_int_equal(rb_coll_warmup_sizes(0, 4, s, 70), 4); /* 0, 1, 2, 4 */
    assert_int_equal(rb_coll_warmup_sizes(8, 8, s, 70), 1);
    assert_int_equal(rb_coll_warmup_sizes(1, UINT64_MAX, s, 70), 64);
}

/* -I: nccl-tests' computeIterStats on known times. */
static void test_iter_stats(void **state)
{
    (void)state;
    const double t[] = {4, 1, 3, 2, 10, 5, 6, 7, 8, 9}; /* 1..10 */
    struct rb_coll_iter_stats s;
    rb_coll_iter_stats(t, 10, &s);
    assert_true(s.have);
    assert_true(s.min_us == 1 && s.max_us == 10 && s.avg_us == 5.5);
    assert_true(s.p50_us == 6);            /* sorted[n / 2] */
    assert_true(s.p95_us == 10 && s.p99_us == 10); /* index min(n-1, ceil(n*p/100)-1) = 9 */
    assert_true(fabs(s.stdev_us - sqrt(8.25)) < 1e-12); /* population: sum((i-5.5)^2)/10 */
    assert_true(fabs(s.cv_pct - sqrt(8.25) / 5.5 * 100) < 1e-9);
    const double one = 3;
    rb_coll_iter_stats(&one, 1, &s);
    assert_true(s.min_us == 3 && s.p99_us == 3 && s.stdev_us == 0 && s.cv_pct == 0);
}

/* Figures are rounded once to what cJSON writes, so the table and the JSON agree even on a half. */
static void test_fig(void **state)
{
    (void)state;
    const double halves[] = {7.575, 0.125, 1.005, 2.675, 123.4565, 1e-7 * 3.5};
    for (size_t i = 0; i < sizeof halves / sizeof *halves; i++)
        for (int k = -4; k <= 4; k++) { /* a few ulps either side of the half */
            double v = halves[i];
            for (int j = 0; j < (k < 0 ? -k : k); j++)
                v = nextafter(v, k < 0 ? 0 : INFINITY);
            double f = rb_coll_fig(v);
            cJSON *n = cJSON_CreateNumber(f);
            char *text = cJSON_PrintUnformatted(n);
            double back = strtod(text, NULL);
            char a[32], b[32];
            snprintf(a, sizeof a, "%.2f", f);
            snprintf(b, sizeof b, "%.2f", back);
            assert_true(back == f); /* the JSON holds exactly the figure the table printed */
            assert_string_equal(a, b);
            cJSON_free(text);
            cJSON_Delete(n);
        }
    assert_true(rb_coll_fig(0) == 0 && isinf(rb_coll_fig(INFINITY)) && isnan(rb_coll_fig(NAN)));
}

/* coll latency|bw|bibw's buffers start on a page and are zeroed, for any size (OSU's are page-aligned too). */
static void test_p2p_buf_aligned(void **state)
{
    (void)state;
    static const size_t sizes[] = {4, 4096, 65536, 1048576, 1048577, 3000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        unsigned char *p = (unsigned char *)rb_coll_p2p_buf(sizes[i]);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 4096, 0);
        assert_int_equal(p[0], 0);
        assert_int_equal(p[sizes[i] - 1], 0);
        free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),          cmocka_unit_test(test_half_known),
        cmocka_unit_test(test_p2p_buf_aligned),
        cmocka_unit_test(test_half_roundtrip), cmocka_unit_test(test_bf16),
        cmocka_unit_test(test_data_exact),     cmocka_unit_test(test_values_distinct),
        cmocka_unit_test(test_kernel_wraps),   cmocka_unit_test(test_allreduce),
        cmocka_unit_test(test_allgather),      cmocka_unit_test(test_reducescatter),
        cmocka_unit_test(test_broadcast),      cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_alltoall),       cmocka_unit_test(test_sendrecv),
        cmocka_unit_test(test_gather),         cmocka_unit_test(test_scatter),
        cmocka_unit_test(test_alltoallv),      cmocka_unit_test(test_alltoallv_pattern),
        cmocka_unit_test(test_counts),         cmocka_unit_test(test_busbw),
        cmocka_unit_test(test_table_format),   cmocka_unit_test(test_warmup_sizes), cmocka_unit_test(test_split),   cmocka_unit_test(test_iter_stats),
        cmocka_unit_test(test_fig),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
