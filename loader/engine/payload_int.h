/* Seeded payload: deterministic, seekable bytes of (seed, object name, offset). */
#ifndef RB_PAYLOAD_INT_H
#define RB_PAYLOAD_INT_H

#include <stddef.h>
#include <stdint.h>

/* Every function here is pure (no state, no allocation) and thread-safe: worker threads call them per request. */

/* The key of one object's payload; every byte of the object is a function of key and offset. */
uint64_t rb_payload_key(uint64_t seed, const char *name);

/* Writes the len payload bytes starting at offset into buf. Thread-safe, no allocation. */
void rb_payload_fill(uint64_t key, uint64_t offset, void *buf, size_t len);

/* Compares buf with the payload at offset; returns the index of the first differing byte, or len. */
size_t rb_payload_verify(uint64_t key, uint64_t offset, const void *buf, size_t len);

/* Size of object name for a PUT of sizes in [min, max] (min when equal), seeded so GET can recompute it. */
uint64_t rb_payload_size(uint64_t seed, const char *name, uint64_t min_bytes, uint64_t max_bytes);

#endif
