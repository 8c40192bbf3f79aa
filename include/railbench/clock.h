/* Clocks: monotonic nanoseconds for measuring, wall time for records. */
#ifndef RB_CLOCK_H
#define RB_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#define RB_NS_PER_US 1000ull
#define RB_NS_PER_MS 1000000ull
#define RB_NS_PER_S 1000000000ull

/* Monotonic time in nanoseconds (CLOCK_MONOTONIC). Thread-safe. */
uint64_t rb_clock_ns(void);

/* Wall-clock time in nanoseconds since the Unix epoch (CLOCK_REALTIME). */
uint64_t rb_clock_wall_ns(void);

/* Writes wall time wall_ns as UTC ISO 8601 with milliseconds ("2026-11-22T02:16:00.123Z"). */
void rb_clock_iso8601(char *buf, size_t len, uint64_t wall_ns);

/* Writes wall time as a compact UTC stamp for directory names ("20261122T021600Z"). */
void rb_clock_stamp(char *buf, size_t len, uint64_t wall_ns);

/* Sleeps for ns nanoseconds (resumes after signals until the time has passed or *stop is set; stop may be NULL). */
void rb_clock_sleep_ns(uint64_t ns, const volatile int *stop);

#endif
