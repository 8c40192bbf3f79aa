/* Per-host samplers of disk, network, InfiniBand and CPU counters from /proc and /sys. */
#ifndef RB_COUNTERS_H
#define RB_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define RB_COUNTERS_MAX_DEV 64

struct rb_disk_stat {
    char name[32];
    uint64_t reads, writes;              /* completed I/Os */
    uint64_t read_bytes, write_bytes;    /* sectors x 512 */
    uint64_t io_ticks_ms;                /* time the device had I/O in flight */
};

struct rb_net_stat {
    char name[32];
    uint64_t rx_bytes, tx_bytes, rx_packets, tx_packets;
    int64_t speed_mbps;                  /* /sys/class/net/<if>/speed; -1 unknown */
};

struct rb_ib_stat {
    char name[48];                       /* "<dev>:<port>" */
    uint64_t xmit_bytes, rcv_bytes;      /* port_{xmit,rcv}_data x 4 (the counters are 4-byte words) */
    uint64_t xmit_packets, rcv_packets, xmit_wait;
    double rate_gbps;                    /* from ports/<n>/rate ("100 Gb/sec (4X EDR)"); 0 unknown */
};

struct rb_cpu_stat {
    uint64_t busy_ticks, total_ticks;    /* aggregate "cpu" line of /proc/stat */
};

struct rb_counters_sample {
    uint64_t t_ns;                       /* rb_clock_ns() when taken */
    size_t ndisk, nnet, nib;
    struct rb_disk_stat disk[RB_COUNTERS_MAX_DEV];
    struct rb_net_stat net[RB_COUNTERS_MAX_DEV];
    struct rb_ib_stat ib[RB_COUNTERS_MAX_DEV];
    struct rb_cpu_stat cpu;
};

struct rb_disk_rate {
    char name[32];
    double read_iops, write_iops, read_bytes_per_s, write_bytes_per_s;
    uint64_t read_bytes, write_bytes;    /* deltas */
    double util_ratio;                   /* io_ticks delta / wall delta, 0..1 */
};

struct rb_net_rate {
    char name[48];
    double rx_bytes_per_s, tx_bytes_per_s;
    uint64_t rx_bytes, tx_bytes;         /* deltas */
    double speed_bytes_per_s;            /* link speed; 0 unknown */
};

struct rb_counters_rates {
    double duration_s;
    size_t ndisk, nnet, nib;
    struct rb_disk_rate disk[RB_COUNTERS_MAX_DEV];
    struct rb_net_rate net[RB_COUNTERS_MAX_DEV];
    struct rb_net_rate ib[RB_COUNTERS_MAX_DEV];
    double cpu_util_ratio;
};

/*
 * Reads every counter under root ("/" for the live system; a fixture tree in
 * tests: root/proc/diskstats, root/proc/stat, root/sys/class/net/...,
 * root/sys/class/infiniband/...). Disks: whole devices only (names present in
 * root/sys/block when that exists), never ram*; attached loop devices (those
 * with root/sys/block/loopN/loop) after the others. Network: every
 * interface but lo. Missing files make an empty section, not an error.
 * Returns 0, or -errno only when root itself cannot be read.
 */
int rb_counters_sample(const char *root, struct rb_counters_sample *s);

/* Rates between two samples of the same host (b after a); devices matched by name. */
void rb_counters_rates(const struct rb_counters_sample *a, const struct rb_counters_sample *b,
                       struct rb_counters_rates *out);

/* {"duration_s":..,"cpu_util_ratio":..,"disk":[{name,read_iops,...}],"net":[...],"ib":[...]}; NULL on OOM. */
cJSON *rb_counters_rates_json(const struct rb_counters_rates *r);

/* Mean disk utilisation over the devices that did any I/O (0 when none did). */
double rb_counters_disk_util(const struct rb_counters_rates *r);

#endif
