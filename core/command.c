/* Subcommand dispatch shared by railbench and its command groups. */
#include "railbench/command.h"

#include <stdio.h>
#include <string.h>

#include "railbench/cli.h"

int rb_dispatch(const char *group, const struct rb_subcommand *subs, int argc, char **argv)
{
    const char *word = argc > 1 ? argv[1] : NULL;
    if (!word || strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0 ||
        strcmp(word, "help") == 0) {
        if (word && rb_cli_help_json()) { /* for the man page and completion generators */
            printf("{\"usage\":\"%s <command> [options]\",\"commands\":[", group);
            for (const struct rb_subcommand *s = subs; s->name; s++)
                printf("%s{\"name\":\"%s\",\"summary\":\"%s\"}", s == subs ? "" : ",", s->name, s->summary);
            printf("]}\n");
            return RB_EXIT_OK;
        }
        FILE *out = word ? stdout : stderr;
        fprintf(out, "usage: %s <command> [options]\n\ncommands:\n", group);
        /* Names padded to the longest plus two spaces, so the summaries line up and a name never runs into its text. */
        int width = 10;
        for (const struct rb_subcommand *s = subs; s->name; s++)
            width = (int)strlen(s->name) + 1 > width ? (int)strlen(s->name) + 1 : width;
        for (const struct rb_subcommand *s = subs; s->name; s++)
            fprintf(out, "  %-*s %s\n", width, s->name, s->summary);
        fprintf(out, "\n'%s <command> --help' describes a command's options.\n", group);
        return word ? RB_EXIT_OK : RB_EXIT_USAGE;
    }
    for (const struct rb_subcommand *s = subs; s->name; s++)
        if (strcmp(word, s->name) == 0)
            return s->run(argc - 1, argv + 1);
    const char *near = rb_cli_suggest_word(word, &subs[0].name, sizeof subs[0]);
    if (near)
        return rb_cli_usage_error("unknown command \"%s\" for \"%s\"; did you mean \"%s\"? (see %s --help)", word,
                                  group, near, group);
    return rb_cli_usage_error("unknown command \"%s\" for \"%s\" (see %s --help)", word, group, group);
}
