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
    return rb_unknown_word("command", group, word, &subs[0].name, sizeof subs[0]);
}

int rb_unknown_word(const char *what, const char *group, const char *word, const char *const *names, size_t stride)
{
    char list[1024] = "";
    size_t off = 0;
    for (const char *const *n = names; *n && off < sizeof list; n = (const char *const *)((const char *)n + stride)) {
        int w = snprintf(list + off, sizeof list - off, "%s%s", off ? ", " : "", *n);
        off += w > 0 ? (size_t)w : 0;
    }
    const char *near = rb_cli_suggest_word(word, names, stride);
    if (near)
        return rb_cli_usage_error("unknown %s \"%s\" for \"%s\"; did you mean \"%s\"? (use %s; see %s --help)", what,
                                  word, group, near, list, group);
    return rb_cli_usage_error("unknown %s \"%s\" for \"%s\" (use %s; see %s --help)", what, word, group, list, group);
}
