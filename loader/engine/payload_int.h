/* Seeded payload: deterministic, seekable bytes of (seed, object name, offset). */
#ifndef RB_PAYLOAD_INT_H
#define RB_PAYLOAD_INT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Every function here is pure (no allocation) and thread-safe: worker
 * threads call them per request. The one state is read-only: the plain
 * layout's 4 KiB pattern, made before main. A run's layout is a value its
 * options carry (struct rb_payload_layout below, rb_load_opts.payload), so
 * two runs in one process may lay their payloads out each its own way.
 * The plain layout, byte for byte, is in docs/load.md ("Payload and
 * verification").
 */

/* The key of one object's payload; every byte of the object is a function of key and offset. */
uint64_t rb_payload_key(uint64_t seed, const char *name);

/*
 * How a run's payloads are laid out: what every PUT writes and --verify
 * expects, in every protocol. fill(ctx, key, offset, buf, len) writes a
 * format's bytes (a tar shard's, a file format's; pure and thread-safe);
 * fill NULL: the plain layout. A value: a command sets it in the options it
 * hands the engine (rb_load_opts.payload, {0} by default), and ctx must
 * outlive every worker that uses it.
 */
struct rb_payload_layout {
    void (*fill)(const void *ctx, uint64_t key, uint64_t offset, void *buf, size_t len);
    const void *ctx;
};

/* Writes the len payload bytes starting at offset into buf, in layout l (NULL: plain). Thread-safe, no allocation. */
void rb_payload_fill(const struct rb_payload_layout *l, uint64_t key, uint64_t offset, void *buf, size_t len);

/* The same in the plain layout (a tar shard's members hold these bytes). */
void rb_payload_plain_fill(uint64_t key, uint64_t offset, void *buf, size_t len);

/* The word XORed into every 8 bytes of 4 KiB block `block` of the plain layout, as it lies in memory (CRCs by block). */
uint64_t rb_payload_plain_word_mask(uint64_t key, uint64_t block);

/* Compares buf with the payload at offset in layout l (NULL: plain): the index of the first differing byte, or len. */
size_t rb_payload_verify(const struct rb_payload_layout *l, uint64_t key, uint64_t offset, const void *buf,
                         size_t len);

/* Size of object name for a PUT of sizes in [min, max] (min when equal), seeded so GET can recompute it. */
uint64_t rb_payload_size(uint64_t seed, const char *name, uint64_t min_bytes, uint64_t max_bytes);

#endif
