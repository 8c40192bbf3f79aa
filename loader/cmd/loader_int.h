/* Loader internals shared by the load subcommands (load, list, mixed, tiers, sweep, train): parsing, targets, object sets (common.c). */
#ifndef RB_LOADER_INT_H
#define RB_LOADER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../engine/engine_int.h"
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

/*
 * Opens url with cfg's target options (rb_target_options: endpoints,
 * credentials, provider, ...); what ("--backend") prefixes the message, or
 * NULL. Returns 0, or RB_EXIT_USAGE after the first rank printed the
 * one-line reason.
 */
int rb_load_target_open(const struct rb_target_cfg *cfg, const char *url, const char *what, struct rb_target **t);

/*
 * One connection to every endpoint of t before anything starts: an
 * unreachable one is one line on the first rank and exit 3, with no result
 * directory (nothing was measured). Returns 0 or RB_EXIT_RUNTIME.
 */
int rb_load_target_probe(const struct rb_target *t, uint64_t timeout_ns);

struct rb_engine_args;
struct rb_file_opts;

/*
 * The defaults of the option groups a command that runs a load takes, set
 * before its options are parsed (they are what --help shows): the target
 * group's (a --timeout of 30 s, no endpoints), the engine's (--engine auto,
 * --max-redirects RB_ENGINE_MAX_REDIRECTS) and the file protocol's
 * (RB_FILE_OPTS_DEFAULT). NULL: a group the command does not take. A command
 * sets what differs for it after the call.
 */
void rb_load_defaults(struct rb_target_cfg *tgt, struct rb_engine_args *eng, struct rb_file_opts *file);

struct rb_opts;

/*
 * Adds the option groups of a command that opens a target to t, in this
 * order: the target group (rb_target_options: --endpoint, --timeout,
 * --insecure, then every protocol's own rows: s3's, ais's), the engine's
 * (rb_engine_options) and the file protocol's (rb_file_options), their
 * values in tgt, eng and file (set them with rb_load_defaults first). NULL:
 * a group the command does not take. The one place a command gets the
 * protocols' options: a protocol's new option reaches every command here.
 * Main thread.
 */
void rb_load_options(struct rb_opts *t, struct rb_target_cfg *tgt, struct rb_engine_args *eng,
                     struct rb_file_opts *file);

/*
 * Builds the object set (collective): count generated names
 * "<prefix><index>" (O(1) memory), the names in filelist, or (count == 0
 * and no filelist) rank 0's listing of t under prefix on engine (the
 * command's --engine: rb_engine_list). With whole, a
 * generated set is every rank's, a listed one (file or listing) rank 0's
 * alone, the others' left empty for rb_objset_share; otherwise only its share
 * (i % size == rank), which is all it ever stores: a generated share, the
 * file's lines read by every rank keeping its own, the listing scattered
 * by rank 0. *total gets the number of objects of all ranks. An empty set
 * is an error whose message ends with hint ("to read (put some first,
 * ...)"). Returns 0 or an exit status after rank 0 logged why.
 */
int rb_load_build_objects(struct rb_harness *h, const struct rb_target *t, uint64_t count, const char *filelist,
                          const char *prefix, uint64_t timeout_ns, enum rb_engine_kind engine, const char *hint, bool whole,
                          struct rb_objset *set, uint64_t *total);


/*
 * The load subcommands' entry points (load_cmd.c, list_cmd.c), called by
 * the dispatcher loader/load.c with argv after "load": argv[0] is the
 * subcommand's word. Each returns the exit status.
 */
int rb_load_put_main(int argc, char **argv);
int rb_load_get_main(int argc, char **argv);
int rb_load_delete_main(int argc, char **argv);
int rb_load_stat_main(int argc, char **argv);
int rb_load_mixed_main(int argc, char **argv);
int rb_load_list_main(int argc, char **argv);

#endif
