/* Object sets: the names (and sizes) of the objects a run works on; generated, read from a file, partitioned. */
#ifndef RB_OBJSET_INT_H
#define RB_OBJSET_INT_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

/*
 * Not thread-safe for writing: a set is built on the main thread before the
 * workers start, and only read (never changed) while they run.
 */

/* Names (and sizes when known; 0 otherwise) of the objects a run works on. */
struct rb_objset {
    size_t n, cap;
    char **names;       /* owned */
    uint64_t *sizes;    /* owned; 0 = unknown */
};

/* Appends one object (name copied). Returns 0 or -ENOMEM. */
int rb_objset_add(struct rb_objset *s, const char *name, uint64_t size_bytes);

/* Generated names "<prefix><index>", index zero-padded to at least 8 digits. Returns 0 or -ENOMEM. */
int rb_objset_generate(struct rb_objset *s, const char *prefix, uint64_t n);

/*
 * Reads one object name per line (blank lines and lines starting with '#'
 * skipped; an optional second tab- or space-separated field is the size in
 * bytes). Returns 0, -errno when the file cannot be read, or -EINVAL with
 * a message in err naming the line.
 */
int rb_objset_from_file(struct rb_objset *s, const char *path, char *err, size_t errlen);

/* This rank's share of all: the objects whose index i has i % size == rank, in order. Returns 0 or -ENOMEM. */
int rb_objset_partition(const struct rb_objset *all, int rank, int size, struct rb_objset *mine);

/* Frees the set; NULL-safe, leaves it empty. */
void rb_objset_free(struct rb_objset *s);

/* In-place seeded Fisher-Yates permutation of idx[0..n) (the same on every host for the same seed). */
void rb_objset_shuffle(uint32_t *idx, size_t n, uint64_t seed);

/*
 * Makes every rank's set a copy of root's (names and sizes), for a listing
 * made once on root. Collective on comm: root passes its set, the others an
 * empty one. Returns 0 on every rank, or -ENOMEM / -EIO on every rank when
 * a rank could not take it (the sets are left partly filled then).
 */
int rb_objset_bcast(struct rb_objset *s, int root, MPI_Comm comm);

#endif
