/* Tar shards: a seeded payload laid out as a ustar archive of fixed-size members (WebDataset-style samples). */
#ifndef RB_TARSHARD_INT_H
#define RB_TARSHARD_INT_H

#include <stddef.h>
#include <stdint.h>

/*
 * A shard of n members of m bytes each is, in order, for member i: one
 * 512-byte ustar header (name "<key>_<i>.bin", mode 0644, size m), m bytes
 * of data, zeros up to the next 512-byte boundary; then two zero blocks
 * (the end of the archive, POSIX pax/ustar). Member data are the shard's
 * plain payload (rb_payload_plain_fill) with the headers left out: member i holds
 * bytes [i m, (i+1) m) of it, so `tar -xOf` of a shard is its plain payload.
 * Every function here is pure and thread-safe.
 */

/* Largest member size a ustar header states in its 11 octal digits (8 GiB - 1). */
#define RB_TAR_MAX_MEMBER_BYTES 077777777777ull

/* Bytes of a shard of members members of member_bytes each (headers, padding and the end blocks included). */
uint64_t rb_tar_shard_bytes(uint64_t members, uint64_t member_bytes);

/* Writes the len bytes at offset of the shard (key, members, member_bytes) into buf. No allocation. */
void rb_tar_fill(uint64_t key, uint64_t members, uint64_t member_bytes, uint64_t offset, void *buf, size_t len);

/* Compares buf with the shard's bytes at offset; returns the index of the first differing byte, or len. */
size_t rb_tar_verify(uint64_t key, uint64_t members, uint64_t member_bytes, uint64_t offset, const void *buf,
                     size_t len);

#endif
