/* The file I/O watchdog: a deadline on every file system call a worker is inside, for a file system that stops answering. */
#ifndef RB_FWATCH_INT_H
#define RB_FWATCH_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * A worker publishes, lock-free, the call it is inside (its kind, its path,
 * when it started) in its own slot; one watchdog thread per process looks at
 * every slot a few times a second. A call older than the deadline (the run's
 * --timeout) fires it, once: it logs one error line naming the call and the
 * path ("fsync /mnt/d/obj-00000003 has not returned after 5.0 s (--timeout
 * 5s); the file system is not answering") and marks that slot stuck. From
 * then on rb_fwatch_fired is true: loops start no new file operation, a phase
 * ends (exit 3) and the engine gives up the stuck thread instead of joining
 * it (it stays in the kernel; the process exits around it). A thread blocked
 * in a system call cannot be woken, only left behind.
 *
 * Thread-safety: a slot is written only by the thread that claimed it; the
 * watchdog only reads slots (and sets stuck); every function may be called
 * from any thread.
 */
struct rb_fwatch;

/*
 * Starts the process's watchdog with deadline_ns (0: none, nothing is
 * watched). The first non-zero deadline stays for the process. Returns 0 or
 * -errno (the thread could not be started).
 */
int rb_fwatch_start(uint64_t deadline_ns);

/* A slot for the calling worker, or NULL (no watchdog, or every slot taken): rb_fwatch_enter is then a no-op. */
struct rb_fwatch *rb_fwatch_claim(void);
/* Gives the slot back (NULL-safe); a stuck slot is never given back. */
void rb_fwatch_release(struct rb_fwatch *s);

/* Before a call that may block: what it is ("open", "read", "fsync", ...) and its path. op must be a literal. */
void rb_fwatch_enter(struct rb_fwatch *s, const char *op, const char *path);
/* The same for a call that started at since_ns (io_uring: the oldest I/O still in the kernel). */
void rb_fwatch_enter_at(struct rb_fwatch *s, const char *op, const char *path, uint64_t since_ns);
/* After it returned. */
void rb_fwatch_leave(struct rb_fwatch *s);
/* rb_fwatch_leave that passes rc through and keeps errno: for RB_FWATCHED. */
long rb_fwatch_leave_rc(struct rb_fwatch *s, long rc);
/* A call that may block on a file system that stops answering, published in slot s while it runs; its value. */
#define RB_FWATCHED(s, op, path, call) (rb_fwatch_enter((s), op, path), rb_fwatch_leave_rc((s), (long)(call)))

/* True once a call has passed the deadline in this process. */
bool rb_fwatch_fired(void);
/*
 * The run is ending anyway (a signal): s's thread, when it has been inside its call for grace_ns or longer, is
 * given up now rather than at the deadline (one warning naming the call, why saying what ended the run).
 * Returns whether s is stuck (given up now or before). NULL-safe.
 */
bool rb_fwatch_give_up(struct rb_fwatch *s, uint64_t grace_ns, const char *why);
/* True when s is a slot whose call passed the deadline: its thread is not to be joined. NULL-safe. */
bool rb_fwatch_stuck(const struct rb_fwatch *s);
/*
 * Joins th, whose file system calls are published in s, unless s is found stuck while waiting: past the deadline,
 * or (after SIGINT or SIGTERM) inside one call for a second or more, given up with a warning. A stuck thread cannot
 * be woken: it is detached and false returned; what it uses must stay allocated, it may still come back. True:
 * joined. s NULL: a plain join.
 */
bool rb_fwatch_join(pthread_t th, struct rb_fwatch *s);
/*
 * Runs fn(arg) on a thread of its own whose call (op on path) is watched with deadline_ns (0: fn runs here,
 * unwatched): returns 0 with fn's value in *rc, or -ETIMEDOUT when it was left behind (the watchdog's line, or
 * after a signal its warning, said which call); arg must then stay allocated. For the calls a run makes before its
 * workers start (the target's first look at its directory).
 */
int rb_fwatch_call(uint64_t deadline_ns, const char *op, const char *path, int (*fn)(void *), void *arg, int *rc);

#endif
