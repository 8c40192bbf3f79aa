/* Object names and name prefixes from options: the one check that keeps them below their target. */
#include "railbench/objname.h"

#include <string.h>

#include "railbench/cli.h"

const char *rb_objname_problem(const char *value, bool prefix)
{
    if (!value)
        return NULL;
    if (!*value)
        return prefix ? NULL : "an empty name";
    if (value[0] == '/')
        return "starts with \"/\"";
    for (const char *c = value;;) {
        size_t n = strcspn(c, "/");
        if (n == 2 && c[0] == '.' && c[1] == '.')
            return "has a \"..\" component";
        if (!c[n])
            return NULL;
        if (c[n + 1] == '\0')
            return prefix ? NULL : "ends with \"/\"";
        if (c[n + 1] == '/')
            return "has an empty component (\"//\")";
        c += n + 1;
    }
}

int rb_objname_check(const char *opt, const char *value, bool prefix)
{
    const char *why = rb_objname_problem(value, prefix);
    if (!why)
        return 0;
    return rb_cli_usage_error("%s \"%.200s\": %s; give a name below the target", opt, value, why);
}
