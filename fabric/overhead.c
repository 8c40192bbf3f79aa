/* Wire overhead of objects over TCP/IP and Ethernet: the per-packet header arithmetic of the AIStore write-up. */
#define _POSIX_C_SOURCE 200809L
#include "overhead_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "railbench/units.h"

/*
 * The AIStore benchmark write-up counts 66 header bytes per packet: 14
 * Ethernet + 20 IPv4 + 32 TCP (20 plus the 12-byte timestamp option).
 * Linux's MTU is the IP packet, so the Ethernet header rides outside it and
 * a 9000-byte MTU carries 9000 - 52 = 8948 payload bytes (the MSS): a
 * 10 MiB object is 1,172 packets and 77,352 header bytes.
 *
 * The write-up's own figures, about 1,056 packets and 70 KB of headers at
 * "MTU 9000" and about 165 packets at "64 KiB", cannot both come from one
 * payload rule with those MTUs: 10 MiB at <= 9,000 payload bytes a packet
 * needs at least 1,166 packets, and 1,056 / 165 = 6.4 while 65,536 / 9,000
 * = 7.3. They come out exactly as ceil(10 MiB / (MTU - 66)) with the MTUs
 * rounded to 10,000 and 64,000 bytes: ceil(10,485,760 / 9,934) = 1,056
 * packets (69,696 header bytes) and ceil(10,485,760 / 63,934) = 165. That
 * is mtu_includes_l2 (payload = MTU minus every header) at those MTUs;
 * docs/fabric.md "railbench fabric overhead" shows both.
 */
void rb_overhead_defaults(struct rb_overhead_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->mtu_bytes = 9000;
    c->l2_bytes = 14;
    c->l3_bytes = 20 + 20 + 12;
}

int rb_overhead_compute(const struct rb_overhead_cfg *c, uint64_t object_bytes, struct rb_overhead *o)
{
    memset(o, 0, sizeof *o);
    uint64_t inside = c->l3_bytes + (c->mtu_includes_l2 ? c->l2_bytes : 0);
    if (object_bytes == 0 || c->mtu_bytes <= inside)
        return -EINVAL;
    o->payload_per_packet = c->mtu_bytes - inside;
    uint64_t data = object_bytes + c->per_object_bytes;
    o->packets = data / o->payload_per_packet + (data % o->payload_per_packet != 0);
    o->header_bytes = o->packets * (c->l2_bytes + c->l3_bytes);
    o->wire_bytes = data + o->header_bytes;
    o->efficiency = (double)object_bytes / (double)o->wire_bytes;
    return 0;
}

double rb_overhead_goodput(const struct rb_overhead *o, uint64_t object_bytes, double link_bytes_per_s)
{
    return o->wire_bytes ? link_bytes_per_s * (double)object_bytes / (double)o->wire_bytes : 0;
}

double rb_overhead_objects_per_s(const struct rb_overhead *o, double link_bytes_per_s)
{
    return o->wire_bytes ? link_bytes_per_s / (double)o->wire_bytes : 0;
}

int rb_overhead_parse_stack(const char *s, uint64_t *total, char *err, size_t errlen)
{
    *total = 0;
    const char *p = s;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char elem[64];
        if (n == 0 || n >= sizeof elem) {
            snprintf(err, errlen, "empty or overlong element");
            return -EINVAL;
        }
        memcpy(elem, p, n);
        elem[n] = '\0';
        char *eq = strchr(elem, '=');
        uint64_t bytes;
        if (!eq || eq == elem || rb_parse_u64(eq + 1, &bytes) != 0 || bytes > 65535) {
            snprintf(err, errlen, "\"%s\" is not name=bytes (bytes 0..65535)", elem);
            return -EINVAL;
        }
        *total += bytes;
        p += n;
        if (*p == ',' && *++p == '\0') {
            snprintf(err, errlen, "trailing comma");
            return -EINVAL;
        }
    }
    return 0;
}
