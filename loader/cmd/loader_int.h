/* Loader internals shared by the load subcommands (load_cmd.c, tiers, sweep, train): parsing, targets, object sets. */
#ifndef RB_LOADER_INT_H
#define RB_LOADER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../objset/objset_int.h"
#include "railbench/cli.h"
#include "railbench/harness.h"
#include "railbench/result.h"
#include "../proto/target_int.h"

/* Main thread only. */

/*
 * The shape of every load subcommand: parses argv against spec, sets up
 * libcurl, calls run(args, cli) and cleans up. Returns the exit status
 * (0 after --help, 2 for a usage error, else run's).
 */
int rb_load_command(const struct rb_cmd_spec *spec, int argc, char **argv,
                    int (*run)(void *args, struct rb_cli *cli), void *args);

/* The target options load get, sweep and train share (--endpoint, --region, --virtual-host, ...). */
struct rb_target_args {
    struct rb_strs endpoints;
    const char *region, *provider, *credentials_file, *profile;
    bool virtual_host;
    bool insecure; /* --insecure: https certificates not verified */
    bool sign_payload; /* --sign-payload: s3 bodies hashed into the signature (native engine) */
};

/* Opens url with ta's options. Returns 0, or RB_EXIT_USAGE after the first rank printed the one-line reason. */
int rb_load_target_open(const struct rb_target_args *ta, const char *url, struct rb_target **t);

/*
 * One connection to every endpoint of t before anything starts: an
 * unreachable one is one line on the first rank and exit 3, with no result
 * directory (nothing was measured). Returns 0 or RB_EXIT_RUNTIME.
 */
int rb_load_target_probe(const struct rb_target *t, uint64_t timeout_ns);

/*
 * Builds the object set (collective): count generated names
 * "<prefix><index>" (O(1) memory), the names in filelist, or (count == 0
 * and no filelist) rank 0's listing of t under prefix. With whole, a
 * generated set is every rank's, a listed one (file or listing) rank 0's
 * alone, the others' left empty for rb_objset_share; otherwise only its share
 * (i % size == rank), which is all it ever stores: a generated share, the
 * file's lines read by every rank keeping its own, the listing scattered
 * by rank 0. *total gets the number of objects of all ranks. An empty set
 * is an error whose message ends with hint ("to read (put some first,
 * ...)"). Returns 0 or an exit status after rank 0 logged why.
 */
int rb_load_build_objects(struct rb_harness *h, const struct rb_target *t, uint64_t count, const char *filelist,
                          const char *prefix, uint64_t timeout_ns, const char *hint, bool whole,
                          struct rb_objset *set, uint64_t *total);

/*
 * The load commands' one error policy: the run fails (check error_rate, exit 1)
 * when more than max_pct percent of its requests failed, and when no request
 * was made at all (nothing was measured). The default --max-error-rate of
 * every load command is 0: any failed request fails the run. what names the
 * phase (or NULL for the whole run), noun the request kind ("requests",
 * "reads"). Records the check on r in every case; returns whether it passed.
 */
bool rb_load_check_errors(struct rb_result *r, const char *what, const char *noun, const uint64_t *err_by_class,
                          uint64_t errors, uint64_t requests, double max_pct);

/* rb_load_check_errors without its error line: for a run that already ended on one (exit 3). */
bool rb_load_record_errors(struct rb_result *r, const char *what, const char *noun, const uint64_t *err_by_class,
                           uint64_t errors, uint64_t requests, double max_pct);

/* Whether errors of requests are above max_pct percent, or no request was made. */
bool rb_load_errors_over(uint64_t errors, uint64_t requests, double max_pct);

/* The help text of --max-error-rate, the same for every load command. */
#define RB_LOAD_MAX_ERROR_HELP "exit 1 (check error_rate) when more than PCT % of requests fail; default 0: any failure"

/* railbench load list (list_cmd.c): argv after "list"; returns the exit status. */
int rb_load_list_main(int argc, char **argv);

#endif
