/* Clocks: monotonic nanoseconds for measuring, wall time for records. */
#define _POSIX_C_SOURCE 200809L
#include "railbench/clock.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

uint64_t rb_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * RB_NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t rb_clock_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * RB_NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void utc(uint64_t wall_ns, struct tm *tm)
{
    time_t t = (time_t)(wall_ns / RB_NS_PER_S);
    gmtime_r(&t, tm);
}

void rb_clock_iso8601(char *buf, size_t len, uint64_t wall_ns)
{
    struct tm tm;
    utc(wall_ns, &tm);
    snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (unsigned)(wall_ns % RB_NS_PER_S / RB_NS_PER_MS));
}

void rb_clock_stamp(char *buf, size_t len, uint64_t wall_ns)
{
    struct tm tm;
    utc(wall_ns, &tm);
    snprintf(buf, len, "%04d%02d%02dT%02d%02d%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec);
}

void rb_clock_sleep_ns(uint64_t ns, const volatile int *stop)
{
    uint64_t end = rb_clock_ns() + ns;
    for (;;) {
        uint64_t now = rb_clock_ns();
        if (now >= end || (stop && *stop))
            return;
        uint64_t left = end - now;
        struct timespec ts = {.tv_sec = (time_t)(left / RB_NS_PER_S),
                              .tv_nsec = (long)(left % RB_NS_PER_S)};
        if (nanosleep(&ts, NULL) == 0)
            return;
        if (errno != EINTR)
            return;
    }
}
