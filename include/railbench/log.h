/* Log lines on stderr, prefixed with host and rank once the harness knows them. */
#ifndef RB_LOG_H
#define RB_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum rb_log_level { RB_LOG_ERROR, RB_LOG_WARN, RB_LOG_INFO, RB_LOG_DEBUG };

/* Sets the "host:rank" prefix; rank < 0 means no MPI (prefix is just the program name). */
void rb_log_set_identity(const char *host, int rank);

/* Messages above level are dropped; --quiet sets RB_LOG_WARN, RAILBENCH_DEBUG=1 sets RB_LOG_DEBUG. */
void rb_log_set_level(enum rb_log_level level);
enum rb_log_level rb_log_get_level(void);

/* Writes one line "railbench[host:rank]: error: message" to stderr; thread-safe (one write per line). */
void rb_log(enum rb_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copies the last error message logged in this process (without prefix; "" if none). Thread-safe. */
void rb_log_last_error(char *buf, size_t len);

#define rb_error(...) rb_log(RB_LOG_ERROR, __VA_ARGS__)
#define rb_warn(...) rb_log(RB_LOG_WARN, __VA_ARGS__)
#define rb_info(...) rb_log(RB_LOG_INFO, __VA_ARGS__)
#define rb_debug(...) rb_log(RB_LOG_DEBUG, __VA_ARGS__)

#endif
