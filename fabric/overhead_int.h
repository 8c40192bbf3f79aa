/* Wire overhead of objects sent over TCP/IP and Ethernet: packets, header bytes, efficiency, goodput. */
#ifndef RB_FABRIC_OVERHEAD_INT_H
#define RB_FABRIC_OVERHEAD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The header stack and MTU. */
struct rb_overhead_cfg {
    uint64_t mtu_bytes;
    uint64_t l2_bytes;         /* per packet, outside the MTU (Ethernet header) */
    uint64_t l3_bytes;         /* per packet, inside the MTU (IP, TCP and its options) */
    bool mtu_includes_l2;      /* payload = MTU - l2 - l3, the AIStore write-up's arithmetic */
    uint64_t per_object_bytes; /* application bytes per object, e.g. HTTP request and response headers */
};

struct rb_overhead {
    uint64_t payload_per_packet;
    uint64_t packets;
    uint64_t header_bytes;     /* packets x (l2 + l3) */
    uint64_t wire_bytes;       /* object + per-object bytes + header bytes */
    double efficiency;         /* object bytes / wire bytes */
};

/* Defaults: MTU 9000, Ethernet 14 outside it, IPv4 20 + TCP 20 + timestamps 12 inside: 66 bytes a packet. */
void rb_overhead_defaults(struct rb_overhead_cfg *c);

/*
 * Packets and bytes on the wire for one object of object_bytes (> 0):
 * packets = ceil((object + per-object bytes) / payload per packet).
 * Returns 0, or -EINVAL when the headers leave no payload in the MTU or the
 * object is empty.
 */
int rb_overhead_compute(const struct rb_overhead_cfg *c, uint64_t object_bytes, struct rb_overhead *o);

/* Object bytes per second delivered by a link of link_bytes_per_s carrying such objects back to back. */
double rb_overhead_goodput(const struct rb_overhead *o, uint64_t object_bytes, double link_bytes_per_s);

/* Objects per second such a link carries back to back (0 for an empty result). */
double rb_overhead_objects_per_s(const struct rb_overhead *o, double link_bytes_per_s);

/*
 * Sums a header stack written "name=bytes,name=bytes" (e.g.
 * "ipv4=20,tcp=20,tcp-timestamps=12"); an empty string is 0. Returns 0,
 * or -EINVAL with the offending element in err.
 */
int rb_overhead_parse_stack(const char *s, uint64_t *total, char *err, size_t errlen);

#endif
