/* Object sets: the names (and sizes) of the objects a run works on; generated, read from a file, partitioned. */
#ifndef RB_OBJSET_INT_H
#define RB_OBJSET_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

/*
 * Not thread-safe for writing: a set is built on the main thread before the
 * workers start, and only read (never changed) while they run; any number
 * of threads may read it at once.
 */

/* Longest object name a set holds, in bytes (S3's key limit); a name buffer takes one more. */
#define RB_OBJSET_NAME_MAX 1024
#define RB_OBJSET_NAME_BYTES (RB_OBJSET_NAME_MAX + 1)

/* Names per block of listed offsets: a block's names span < 4 GiB, so in-block offsets fit 32 bits. */
#define RB_OBJSET_BLOCK_SHIFT 16

/*
 * The objects of a run, in one of two forms:
 * - generated (prefix != NULL): element i is "<prefix><base + i x stride>",
 *   the number zero-padded to width digits; O(1) memory whatever n is, and a
 *   partition is the same form with another base and stride;
 * - listed (prefix == NULL): names stored once, NUL-terminated, back to back
 *   in one arena; element i starts at block_off[i >> 16] + rel_off[i], with
 *   its size in sizes[i] (0 = unknown): name length + 13 bytes per object.
 *   A listed set may be shared (rb_objset_share): its arrays then live in
 *   one MPI-3 shared-memory window per host, written once, read by all.
 * Read it through rb_objset_name and rb_objset_size, never the fields.
 */
struct rb_objset {
    uint64_t n;                 /* objects in the set */
    /* generated */
    char *prefix;               /* owned; NULL for a listed set */
    size_t prefix_len;
    unsigned width;             /* digits of the index, at least 8 */
    uint64_t base, stride;      /* element i has index base + i x stride */
    /* listed */
    char *arena;                /* owned: "name\0name\0..." */
    uint64_t arena_len, arena_cap;
    uint32_t *rel_off;          /* owned; n entries (cap allocated) */
    uint64_t *block_off;        /* owned; one per 2^16 names */
    uint64_t cap;
    /* both */
    uint64_t *sizes;            /* owned; n entries (0 = unknown), or NULL: none of their own */
    uint64_t size_bytes;        /* objects without a size of their own; 0 = unknown */
    bool shared;                /* the listed arrays are in win, not owned (rb_objset_share) */
    MPI_Win win;
};

/* Appends one object to a listed set (name copied into the arena). Returns 0, -ENAMETOOLONG above RB_OBJSET_NAME_MAX bytes, -EINVAL on a generated set, or -ENOMEM. */
int rb_objset_add(struct rb_objset *s, const char *name, uint64_t size_bytes);

/*
 * Makes s the generated set "<prefix><index>", index in [0, n) zero-padded
 * to at least 8 digits (the width of n - 1 when wider). No name is stored:
 * O(1) memory. Returns 0, -ENAMETOOLONG for a prefix over 1000 bytes, or -ENOMEM.
 */
int rb_objset_generate(struct rb_objset *s, const char *prefix, uint64_t n);

/*
 * Element i's name (i < s->n): for a listed set a pointer into its arena
 * (valid until the set is freed; buf unused, may be NULL), for a generated
 * set buf, into which it is formatted (buf holds RB_OBJSET_NAME_BYTES).
 * Never allocates; thread-safe for distinct bufs.
 */
const char *rb_objset_name(const struct rb_objset *s, uint64_t i, char buf[RB_OBJSET_NAME_BYTES]);

/* Element i's size in bytes (i < s->n): its own when set, else the set's common size; 0 when unknown. Pure. */
uint64_t rb_objset_size(const struct rb_objset *s, uint64_t i);

/*
 * Sets element i's own size (i < s->n). A generated set gets its sizes
 * array (8 bytes per object) at the first call: use rb_objset_set_common_size
 * where every object has one size. Returns 0, -ENOMEM, or -EPERM on a
 * shared set (read-only). Not thread-safe.
 */
int rb_objset_set_size(struct rb_objset *s, uint64_t i, uint64_t size_bytes);

/* Sets the size of every object without one of its own, in O(1). Not thread-safe. */
void rb_objset_set_common_size(struct rb_objset *s, uint64_t size_bytes);

/* True when s is generated (names computed from prefix and index). */
bool rb_objset_generated(const struct rb_objset *s);

/*
 * Reads one object name per line (blank lines and lines starting with '#'
 * skipped; an optional second tab- or space-separated field is the size in
 * bytes), keeping only the names whose position k among them has
 * k % size == rank (rank 0 of 1 keeps all): a rank stores its share only.
 * *total gets the number of names in the file (may be NULL). Returns 0,
 * -errno when the file cannot be read, or -EINVAL with a message in err
 * naming the line.
 */
int rb_objset_from_file(struct rb_objset *s, const char *path, int rank, int size, uint64_t *total, char *err,
                        size_t errlen);

/*
 * This rank's share of all: the objects whose index i has i % size == rank,
 * in order. A generated share is generated too (O(1)); a listed one is
 * copied. Returns 0, -EINVAL for a bad rank or size, or -ENOMEM.
 */
int rb_objset_partition(const struct rb_objset *all, int rank, int size, struct rb_objset *mine);

/* Frees the set; NULL-safe, leaves it empty. */
void rb_objset_free(struct rb_objset *s);

/*
 * Makes rank 0's listed set every rank's, held once per host: the host's
 * first rank allocates an MPI-3 shared-memory window
 * (MPI_Win_allocate_shared on the ranks of MPI_COMM_TYPE_SHARED) and
 * receives the arena, offsets and sizes into it, as they are, from rank 0
 * (the hosts' first ranks only); the host's other ranks map it. For a
 * listing every rank needs whole (train shuffles all objects across ranks
 * each epoch). Collective on comm: rank 0 passes its set, the others an
 * empty one. The shared set is read-only; rb_objset_free on it is
 * collective on the host's ranks (or after MPI_Finalize, which ends the
 * window). Rank 0's host holds two copies while its own is copied in.
 * Returns 0 on every rank, or -ENOMEM / -EIO on every rank.
 */
int rb_objset_share(struct rb_objset *s, MPI_Comm comm);

/* Bytes a listed set's names, offsets and sizes take (its arena and index arrays as stored); 0 for a generated set. Pure. */
uint64_t rb_objset_stored_bytes(const struct rb_objset *s);

/* Frees a shared set's window (rb_objset_free calls it); collective on the host's ranks until MPI_Finalize. */
void rb_objset_unshare(struct rb_objset *s);

/*
 * Makes every rank's set its share (i % size == rank) of root's listed set,
 * for a listing made once on root: root's full set is replaced by its own
 * share, and the others, passed empty, receive only theirs. *total gets the
 * listing's size on every rank. Collective on comm. Returns 0 on every rank,
 * or -ENOMEM / -EIO on every rank when a rank could not take its share.
 */
int rb_objset_scatter(struct rb_objset *s, int root, MPI_Comm comm, uint64_t *total);

#endif
