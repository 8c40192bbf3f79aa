/* Unit tests of fabric/overhead.c: the AIStore write-up's wire arithmetic and the header-stack parser. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "overhead_int.h"

#define MiB (1024ull * 1024ull)

static void check(const struct rb_overhead_cfg *c, uint64_t object, uint64_t payload, uint64_t packets,
                  uint64_t header, uint64_t wire)
{
    struct rb_overhead o;
    assert_int_equal(rb_overhead_compute(c, object, &o), 0);
    if (o.payload_per_packet != payload || o.packets != packets || o.header_bytes != header || o.wire_bytes != wire)
        fail_msg("object %llu MTU %llu: payload %llu packets %llu header %llu wire %llu; want %llu %llu %llu %llu",
                 (unsigned long long)object, (unsigned long long)c->mtu_bytes, (unsigned long long)o.payload_per_packet,
                 (unsigned long long)o.packets, (unsigned long long)o.header_bytes, (unsigned long long)o.wire_bytes,
                 (unsigned long long)payload, (unsigned long long)packets, (unsigned long long)header,
                 (unsigned long long)wire);
    assert_true(fabs(o.efficiency - (double)object / (double)wire) < 1e-15);
}

static void test_defaults(void **state)
{
    (void)state;
    struct rb_overhead_cfg c;
    rb_overhead_defaults(&c);
    assert_int_equal(c.mtu_bytes, 9000);
    assert_int_equal(c.l2_bytes + c.l3_bytes, 66); /* 14 Ethernet + 20 IPv4 + 32 TCP with timestamps */
    /* 10 MiB at MTU 9000: 9000 - 52 = 8948 a packet, ceil(10485760 / 8948) = 1172 packets of 66 header bytes. */
    check(&c, 10 * MiB, 8948, 1172, 1172 * 66, 10 * MiB + 1172 * 66);
    c.mtu_bytes = 65536;
    check(&c, 10 * MiB, 65484, 161, 161 * 66, 10 * MiB + 161 * 66);
}

/* The write-up's figures: ~1,056 packets and ~70 KB of headers, ~165 packets at 64K. */
static void test_aistore_writeup(void **state)
{
    (void)state;
    struct rb_overhead_cfg c;
    rb_overhead_defaults(&c);
    c.mtu_includes_l2 = true;
    c.mtu_bytes = 10000;
    check(&c, 10 * MiB, 9934, 1056, 69696, 10 * MiB + 69696);
    c.mtu_bytes = 64000;
    check(&c, 10 * MiB, 63934, 165, 165 * 66, 10 * MiB + 165 * 66);
    /* At the literal MTU 9000 no payload rule gets near 1,056: at most 9000 bytes a packet is >= 1,166 packets. */
    c.mtu_bytes = 9000;
    check(&c, 10 * MiB, 8934, 1174, 1174 * 66, 10 * MiB + 1174 * 66);
}

static void test_per_object_and_goodput(void **state)
{
    (void)state;
    struct rb_overhead_cfg c;
    rb_overhead_defaults(&c);
    c.mtu_bytes = 1500;
    c.per_object_bytes = 300;
    /* 1 MiB + 300 request bytes over 1448-byte segments: 725 packets. */
    check(&c, MiB, 1448, 725, 47850, MiB + 300 + 47850);
    struct rb_overhead o;
    assert_int_equal(rb_overhead_compute(&c, MiB, &o), 0);
    double good = rb_overhead_goodput(&o, MiB, 12.5e9);
    assert_true(fabs(good - 12.5e9 * (double)MiB / (double)(MiB + 300 + 47850)) < 1e-3);
    assert_true(fabs(rb_overhead_objects_per_s(&o, 12.5e9) - 12.5e9 / (double)(MiB + 300 + 47850)) < 1e-9);
    /* Headers that fill the MTU, and empty objects, are errors. */
    c.mtu_bytes = 52;
    assert_int_equal(rb_overhead_compute(&c, MiB, &o), -EINVAL);
    c.mtu_bytes = 9000;
    assert_int_equal(rb_overhead_compute(&c, 0, &o), -EINVAL);
}

static void test_parse_stack(void **state)
{
    (void)state;
    uint64_t v;
    char err[128];
    assert_int_equal(rb_overhead_parse_stack("ipv4=20,tcp=20,tcp-timestamps=12", &v, err, sizeof err), 0);
    assert_int_equal(v, 52);
    assert_int_equal(rb_overhead_parse_stack("ethernet=14,vlan=4", &v, err, sizeof err), 0);
    assert_int_equal(v, 18);
    assert_int_equal(rb_overhead_parse_stack("", &v, err, sizeof err), 0);
    assert_int_equal(v, 0);
    assert_int_equal(rb_overhead_parse_stack("ethernet", &v, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "ethernet"));
    assert_int_equal(rb_overhead_parse_stack("tcp=x", &v, err, sizeof err), -EINVAL);
    assert_int_equal(rb_overhead_parse_stack("=20", &v, err, sizeof err), -EINVAL);
    assert_int_equal(rb_overhead_parse_stack("ipv4=20,", &v, err, sizeof err), -EINVAL);
    assert_int_equal(rb_overhead_parse_stack("ipv4=20,,tcp=20", &v, err, sizeof err), -EINVAL);
    assert_int_equal(rb_overhead_parse_stack("jumbo=70000", &v, err, sizeof err), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_aistore_writeup),
        cmocka_unit_test(test_per_object_and_goodput),
        cmocka_unit_test(test_parse_stack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
