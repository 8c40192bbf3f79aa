/* Files kept open across ranged reads, as fio keeps its files open: one worker's table of name -> descriptor. */
#ifndef RB_OPENFILES_INT_H
#define RB_OPENFILES_INT_H

#include <stdbool.h>

/* At most this many files are kept; beyond that a request opens and closes its own. */
#define RB_OPENFILES_MAX 1024u

struct rb_openfiles;

/* An empty table in *out. Returns 0 or -ENOMEM. Owned by one worker thread. */
int rb_openfiles_new(struct rb_openfiles **out);

/* The descriptor kept for name, or -1 when the table has none. */
int rb_openfiles_find(const struct rb_openfiles *t, const char *name);

/*
 * Keeps fd as name's descriptor while the table has room (name not in it
 * yet). Returns true when the table took it (it closes fd when freed), false
 * when the caller keeps it.
 */
bool rb_openfiles_keep(struct rb_openfiles *t, const char *name, int fd);

/* Closes every kept descriptor and frees t; NULL-safe. */
void rb_openfiles_free(struct rb_openfiles *t);

#endif
