/* Seeded payload: deterministic, seekable bytes of (seed, object name, offset). */
#ifndef RB_PAYLOAD_INT_H
#define RB_PAYLOAD_INT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Every function here is pure (no allocation) and thread-safe: worker
 * threads call them per request. The state is read-only once workers run:
 * the plain layout's 4 KiB pattern (made before main) and the process's
 * payload layout, set once before any worker starts (rb_payload_set_layout).
 * The plain layout, byte for byte, is in docs/load.md ("Payload and
 * verification").
 */

/* The key of one object's payload; every byte of the object is a function of key and offset. */
uint64_t rb_payload_key(uint64_t seed, const char *name);

/* Writes the len payload bytes starting at offset into buf, in the process's layout. Thread-safe, no allocation. */
void rb_payload_fill(uint64_t key, uint64_t offset, void *buf, size_t len);

/* The same in the plain layout, whatever the process's is (a tar shard's members hold these bytes). */
void rb_payload_plain_fill(uint64_t key, uint64_t offset, void *buf, size_t len);

/* The word XORed into every 8 bytes of 4 KiB block `block` of the plain layout, as it lies in memory (CRCs by block). */
uint64_t rb_payload_plain_word_mask(uint64_t key, uint64_t block);

/*
 * From now on every payload (what PUT writes and --verify expects, in
 * every protocol) is what fill writes (a file format's layout, a tar
 * shard's: fill(ctx, key, offset, buf, len), pure and thread-safe); NULL:
 * back to plain. Call before any worker starts; ctx must outlive the workers.
 */
void rb_payload_set_layout(void (*fill)(const void *ctx, uint64_t key, uint64_t offset, void *buf, size_t len),
                           const void *ctx);

/* Compares buf with the payload at offset; returns the index of the first differing byte, or len. */
size_t rb_payload_verify(uint64_t key, uint64_t offset, const void *buf, size_t len);

/* Size of object name for a PUT of sizes in [min, max] (min when equal), seeded so GET can recompute it. */
uint64_t rb_payload_size(uint64_t seed, const char *name, uint64_t min_bytes, uint64_t max_bytes);

#endif
