/* Tar shards: a seeded payload laid out as a ustar archive of fixed-size members (WebDataset-style samples). */
#ifndef RB_TARSHARD_INT_H
#define RB_TARSHARD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "railbench/stats.h"

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

/* Tar shards as a payload layout: struct rb_payload_layout {rb_tar_layout_fill, ctx}, ctx a struct rb_tar_layout. */
struct rb_tar_layout {
    uint64_t members, member_bytes;
};
/* rb_tar_fill of the shard layout ctx. */
void rb_tar_layout_fill(const void *ctx, uint64_t key, uint64_t offset, void *buf, size_t len);

/*
 * Reads one 512-byte header block of any POSIX ustar, pax or GNU archive:
 * 1 for an all-zero block (the archive's end), 0 with *size (the bytes of
 * data that follow it, octal or GNU base-256) and *regular (a regular file:
 * a sample; directories, links, pax and long-name records are not), or
 * -EINVAL when its checksum or size field does not hold. Pure.
 */
int rb_tar_header(const unsigned char h[512], uint64_t *size, bool *regular);

/* Bytes one entry of size bytes takes in an archive: its header and its data padded to 512. Pure. */
uint64_t rb_tar_entry_bytes(uint64_t size);

/*
 * A tar archive read as it streams (a shard GET whole): members counted as
 * their last data byte arrives. A sample's latency is the time from the
 * previous member's end (for the first: from the request's send, the
 * start) to its own last byte: how long a streaming loader waits for each
 * next sample. One per request; no allocation.
 */
struct rb_tar_stream {
    unsigned char head[512];
    unsigned have;              /* bytes of the current header gathered */
    uint64_t size, data_left, pad_left; /* the current entry's size and what is still to come of it */
    bool regular, ended;        /* the current entry is a sample; the end block came */
    uint64_t pos;               /* body bytes consumed */
    uint64_t members, member_bytes; /* samples completed and their data bytes */
    uint64_t last_ns;           /* when the last sample ended (or the request started) */
    const char *why;            /* not NULL once the body is known not to be a whole tar archive */
    uint64_t bad_at;            /* the body offset where it was found */
};

/* Starts s for a request sent at now_ns. */
void rb_tar_stream_start(struct rb_tar_stream *s, uint64_t now_ns);

/*
 * Feeds len body bytes that arrived at now_ns; each sample completed in them
 * is one op of samples (its data bytes, its latency into lat) when samples is
 * not NULL. Returns 0, or -EBADMSG once the body is not tar (s->why, s->bad_at).
 */
int rb_tar_stream_feed(struct rb_tar_stream *s, const void *buf, size_t len, uint64_t now_ns,
                       struct rb_stats *samples);

/*
 * At the body's end: 0 when it was a whole archive (its end block, or, as
 * GNU tar accepts, ending at a header's boundary), else -EBADMSG with s->why
 * (cut inside a member or header: truncated; empty; not tar).
 */
int rb_tar_stream_end(struct rb_tar_stream *s);

#endif
