/* The file transport's request loop as the engine's workers call it (its RB_TRANSPORT row: file_loop.c). */
#ifndef RB_FILE_LOOP_INT_H
#define RB_FILE_LOOP_INT_H

#include <stdatomic.h>
#include <stddef.h>

struct rb_worker;
struct rb_target;

/*
 * Sets up w's file loop (ep0 unused: one directory): one I/O queue of
 * w->nreq (the in-flight count; io_uring's depth) and a block buffer per slot. Returns 0, -ENOMEM,
 * -EOPNOTSUPP for an op files do not have, or the engine's -errno.
 */
int rb_file_new(struct rb_worker *w, size_t ep0);

/*
 * The request loop of rb_worker_run on files. Returns 0, the -errno of a
 * file system that stopped working (after one `error:` line per process),
 * or the I/O engine's -errno. Worker thread.
 */
int rb_file_run(struct rb_worker *w, const atomic_bool *stop, const volatile int *stop2);

/* Frees what rb_file_new set up; NULL-safe on a worker without one. */
void rb_file_free(struct rb_worker *w);

#endif
