/*
 * The engine's option group (--engine, --max-redirects, --io-loop) and the one place its options are built from a
 * command's. The rows write into the command's struct rb_engine_args; nothing here keeps a pointer to it: what the
 * engine needs later (the listing engine, a forced io_uring) the command hands over as arguments.
 */
#include "engine_int.h"

void rb_engine_list_options(struct rb_opts *t, struct rb_engine_args *ea)
{
    const struct rb_opt rows[] = {
        {"engine", 0, RB_OPT_CHOICE, &ea->engine, "E",
         "listing engine: native (own epoll loop, one keep-alive connection per listing) or curl; auto: native",
         "auto|curl|native"},
        {0},
    };
    rb_opts_add(t, rows);
}

void rb_engine_options(struct rb_opts *t, struct rb_engine_args *ea)
{
    const struct rb_opt rows[] = {
        {"engine", 0, RB_OPT_CHOICE, &ea->engine, "E",
         "request engine: native (own epoll loop: http://, https://, s3:// with SigV4, ais://; GET, PUT, HEAD, "
         "DELETE, S3 multipart uploads, listings) or curl (everything); auto: native where it applies",
         "auto|curl|native"},
        {"max-redirects", 0, RB_OPT_U64, &ea->max_redirects, "N", "redirects followed per request (AIStore)", NULL},
        {"io-loop", 0, RB_OPT_CHOICE, &ea->io_loop, "L",
         "native engine's event loop: epoll, or io_uring (plain http:// GET, HEAD, DELETE: sends and receives "
         "batched into one system call per wait); auto: io_uring where it applies and the kernel allows it",
         "auto|epoll|io_uring"},
        {0},
    };
    rb_opts_add(t, rows);
}

struct rb_load_opts rb_load_opts_from(enum rb_load_op op, const struct rb_target *t, const struct rb_target_cfg *tc,
                                      const struct rb_engine_args *ea, int rank)
{
    return (struct rb_load_opts){
        .op = op,
        .target = t,
        .timeout_ns = tc->timeout_ns,
        .max_redirects = (long)ea->max_redirects,
        .engine = (enum rb_engine_kind)ea->engine,
        .io_loop = (enum rb_io_loop)ea->io_loop,
        .rank = rank,
        .log_fd = -1,
    };
}
