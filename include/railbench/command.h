/* Entry points of the subcommands and the dispatcher they share. */
#ifndef RB_COMMAND_H
#define RB_COMMAND_H

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

/* Group entry points (argv[0] is the group word). Each returns an exit status. */
int rb_block_main(int argc, char **argv);
int rb_coll_main(int argc, char **argv);
int rb_fabric_main(int argc, char **argv);
int rb_load_main(int argc, char **argv);
int rb_report_main(int argc, char **argv);
int rb_version_main(int argc, char **argv);

#endif
