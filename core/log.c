/* Log lines on stderr, prefixed with host and rank once the harness knows them. */
#define _POSIX_C_SOURCE 200809L
#include "railbench/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char log_prefix[160] = "railbench";
static enum rb_log_level log_level = RB_LOG_INFO;
static int log_level_from_env = -1;
/* The last error message (without prefix), for the run record of a failed run. */
static char last_error[1024];
static pthread_mutex_t last_error_lock = PTHREAD_MUTEX_INITIALIZER;

void rb_log_set_identity(const char *host, int rank)
{
    if (rank < 0)
        snprintf(log_prefix, sizeof log_prefix, "railbench");
    else
        snprintf(log_prefix, sizeof log_prefix, "railbench[%s:%d]", host, rank);
}

void rb_log_set_level(enum rb_log_level level)
{
    if (log_level_from_env < 0) {
        const char *d = getenv("RAILBENCH_DEBUG");
        log_level_from_env = d && *d && strcmp(d, "0") != 0;
    }
    log_level = log_level_from_env ? RB_LOG_DEBUG : level;
}

enum rb_log_level rb_log_get_level(void)
{
    return log_level;
}

void rb_log(enum rb_log_level level, const char *fmt, ...)
{
    static const char *names[] = {"error", "warning", "info", "debug"};
    if (level > log_level)
        return;
    char line[2048];
    int n = snprintf(line, sizeof line, "%s: %s: ", log_prefix, names[level]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (level == RB_LOG_ERROR) {
        pthread_mutex_lock(&last_error_lock);
        snprintf(last_error, sizeof last_error, "%s", line + n);
        pthread_mutex_unlock(&last_error_lock);
    }
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    /* One write per line so lines from threads and ranks do not interleave. */
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

void rb_log_last_error(char *buf, size_t len)
{
    pthread_mutex_lock(&last_error_lock);
    snprintf(buf, len, "%s", last_error);
    pthread_mutex_unlock(&last_error_lock);
}
