/* Entry points of the subcommands and the dispatcher they share. */
#ifndef RB_COMMAND_H
#define RB_COMMAND_H

#include <stddef.h>

/* One subcommand of a group ("fabric counters"); run gets argv with argv[0] = the subcommand word. */
struct rb_subcommand {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

/*
 * Runs the subcommand named by argv[1] of group (argv[0] is the group word);
 * prints the group's help for --help or no subcommand. Returns the exit
 * status: the subcommand's, 0 for help, 2 for an unknown subcommand.
 */
int rb_dispatch(const char *group, const struct rb_subcommand *subs, int argc, char **argv);

/*
 * The one usage error of every command group for a word that names none of its subcommands (or of coll's
 * collectives): "unknown WHAT "WORD" for "GROUP"; did you mean "NEAR"? (use A, B, ...; see GROUP --help)",
 * the guess left out when no name is near. names points at the first name of a table whose entries are
 * stride bytes apart and which ends with a NULL name (as rb_cli_suggest_word). Returns RB_EXIT_USAGE.
 */
int rb_unknown_word(const char *what, const char *group, const char *word, const char *const *names, size_t stride);

/* Group entry points (argv[0] is the group word). Each returns an exit status. */
int rb_block_main(int argc, char **argv);
int rb_coll_main(int argc, char **argv);
int rb_fabric_main(int argc, char **argv);
int rb_load_main(int argc, char **argv);
int rb_report_main(int argc, char **argv);
int rb_version_main(int argc, char **argv);

#endif
