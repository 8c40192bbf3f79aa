/* Emptying a caching tier before a cold phase: AIStore's evict API (the ais table's .evict), or the user's command. */
#ifndef RB_EVICT_INT_H
#define RB_EVICT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "target_int.h"

struct rb_buf;
/*
 * One request to t's proxy (its first endpoint): method on path_query with a
 * JSON body (may be NULL), at most timeout_ns (30 s); the reply's body lands
 * in out, its status in *status. Returns 0 (any HTTP status) or -EIO with one
 * line in err. Main thread or any thread after curl_global_init.
 */
int rb_ais_call(const struct rb_target *t, const char *method, const char *path_query, const char *body,
                uint64_t timeout_ns, struct rb_buf *out, long *status, char *err, size_t errlen);
/* "<target>: <what>: HTTP <status> <AIStore's message>" into err, for a reply that is not 200. */
void rb_ais_http_error(const struct rb_target *t, const char *what, long status, const struct rb_buf *b, char *err,
                       size_t errlen);

/* Names per evict-listrange request when the names do not form one template. */
#define RB_EVICT_LIST_BATCH 1000

/*
 * The ais table's .evict (see rb_target_evict). With names, evicts the
 * objects names[] from the AIStore tier t:
 * DELETE /v1/buckets/<bucket>?provider=<p> with {"action":"evict-listrange",
 * "value":{"template":"<prefix>{first..last}"}} when every name is prefix
 * followed by consecutive zero-padded indices (the names railbench
 * generates; prefix may be NULL), otherwise with {"objnames":[...]} in
 * batches of RB_EVICT_LIST_BATCH; then waits for each job AIStore started
 * (GET /v1/cluster?what=status {"id":..,"kind":"evict-listrange"} until its
 * end_time is set). Gives up after timeout_ns in total, or when *stop
 * becomes non-zero (stop may be NULL). With names NULL, evicts every
 * cached object of t's bucket but keeps the bucket itself:
 * DELETE /v1/buckets/<bucket>?provider=<p>&keep_bck_md=true with
 * {"action":"evict-remote-bck"} (synchronous in AIStore). Returns 0; -EIO
 * with one line in err (HTTP status and AIStore's message, or the job's
 * error); -ETIMEDOUT; -ECANCELED. Main thread only, after curl_global_init.
 */
int rb_target_ais_evict(const struct rb_target *t, const struct rb_objset *names, const char *prefix,
                        uint64_t timeout_ns, const volatile int *stop, char *err, size_t errlen);

/*
 * Splits cmd into words the way a POSIX shell splits a simple command, and
 * nothing more: blanks separate words; '...' keeps everything literally;
 * "..." keeps everything but lets a backslash escape " and \; a backslash
 * outside quotes keeps the next character. No variable, tilde or glob
 * expansion, no ; | & > < or $(...) meaning: those are ordinary
 * characters. Returns 0 with *words a NULL-terminated array (free with
 * rb_evict_words_free); -EINVAL with one sentence in err for an empty
 * command, an unterminated quote or a trailing backslash; -ENOMEM.
 */
int rb_evict_split(const char *cmd, char ***words, char *err, size_t errlen);

/* Frees what rb_evict_split returned; NULL-safe. */
void rb_evict_words_free(char **words);

/*
 * Runs argv[0] (searched in PATH when it has no '/') with argv through
 * fork and execvp, no shell, in its own process group, with the caller's
 * environment plus env ("NAME=value" strings, NULL-terminated; NULL for
 * none), stdin from /dev/null and stdout/stderr inherited. Waits until it
 * exits; after timeout_ns (0: no limit), or once *stop becomes non-zero,
 * sends SIGTERM to its process group and SIGKILL 2 s later. Returns 0 when
 * it exited with status 0; -ENOENT/-EACCES/... when it could not be
 * started; -EIO when it exited with another status or died of a signal;
 * -ETIMEDOUT; -ECANCELED. err gets one line for every failure.
 */
int rb_evict_run(char *const *argv, char *const *env, uint64_t timeout_ns, const volatile int *stop, char *err,
                 size_t errlen);

#endif
