/* S3 multipart PUT: a worker's uploads (initiate, parts in parallel, complete; abort on failure) on its slots. */
#ifndef RB_MULTIPART_INT_H
#define RB_MULTIPART_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "railbench/stats.h"

/* S3's limits (AWS "Amazon S3 multipart upload limits"): parts of 5 MiB at least, except the last; 10,000 parts. */
#define RB_MP_MIN_PART_BYTES (5ull << 20)
#define RB_MP_MAX_PARTS 10000ull
/* The defaults, aws-cli's (multipart_threshold and multipart_chunksize, 8 MiB each). */
#define RB_MP_DEFAULT_PART_BYTES (8ull << 20)
#define RB_MP_DEFAULT_THRESHOLD_BYTES (8ull << 20)

/* Extra counters of the part statistics (rb_mp_part_names): uploads aborted, and aborts the server refused. */
enum rb_mp_extra { RB_MP_ABORTED, RB_MP_ABORT_FAILED, RB_MP_EXTRA_COUNT };
extern const char *const rb_mp_extra_names[RB_MP_EXTRA_COUNT + 1];

/* The number of parts of an object of size bytes cut in part_bytes pieces (the last one shorter). Pure. */
uint64_t rb_mp_parts(uint64_t size, uint64_t part_bytes);

/*
 * Checks --part-size and --multipart-threshold against S3's rules for objects
 * of at most max_size bytes: part size at least 5 MiB and at most 10,000
 * parts. Returns 0, or prints one line and returns RB_EXIT_USAGE. Pure but for the line.
 */
int rb_mp_check_usage(uint64_t part_bytes, uint64_t threshold_bytes, uint64_t max_size);

struct rb_worker;
struct rb_req;
struct rb_worker_driver;

/*
 * The driver of a PUT with o->part_size > 0 (struct rb_worker_driver): an
 * object up to the threshold is one PUT, a larger one an initiate, its parts
 * in parallel on the free slots, and the completion with the ETags; after the
 * loop every upload still open is aborted. Its state is w->mp.
 */
extern const struct rb_worker_driver rb_mp_driver;

/*
 * One part's record into s (a multipart PUT's part or a ranged GET's): class cls (< 0 success: bytes, latency
 * total_ns, time to first byte from r's response) or the error. Worker thread.
 */
void rb_mp_record_part(struct rb_stats *s, const struct rb_req *r, int cls, uint64_t bytes, uint64_t total_ns);
/* Adds w's per-part statistics (latency of each part PUT, aborts) into into. After the worker's thread joined. */
void rb_mp_collect_parts(const struct rb_worker *w, struct rb_stats *into);

#endif
