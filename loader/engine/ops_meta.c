/* The DELETE and HEAD (stat) op rows: requests that carry no body either way. */
#include <curl/curl.h>

#include "worker_int.h"

/* DELETE of the object: S3 answers 204, AIStore 200, nginx WebDAV 204; nothing is counted as bytes. */
static int delete_slot_setup(struct rb_req *r)
{
    RB_CURL_CHECK(curl_easy_setopt(r->easy, CURLOPT_CUSTOMREQUEST, "DELETE"));
    return 0;
}

/* HEAD (warp's STAT): the server looks the object up and answers its metadata, no body. */
static int head_slot_setup(struct rb_req *r)
{
    RB_CURL_CHECK(curl_easy_setopt(r->easy, CURLOPT_NOBODY, 1L));
    return 0;
}

static void meta_prepare(struct rb_worker *w, struct rb_req *r, const char *name, uint64_t size)
{
    (void)w;
    (void)name;
    r->key = 0;
    r->size = size;
    r->ranged = false;
    r->expect_len = 0;
}

static uint64_t meta_bytes(const struct rb_req *r)
{
    (void)r;
    return 0;
}

const struct rb_xfer_op rb_xfer_delete_op = {
    .name = "DELETE", .slot_setup = delete_slot_setup, .prepare = meta_prepare, .bytes = meta_bytes, .no_body = true};
const struct rb_xfer_op rb_xfer_head_op = {
    .name = "HEAD", .slot_setup = head_slot_setup, .prepare = meta_prepare, .bytes = meta_bytes, .no_body = true};
