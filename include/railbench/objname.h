/* Object names and name prefixes from options: the one check that keeps them below their target. */
#ifndef RB_OBJNAME_H
#define RB_OBJNAME_H

#include <stdbool.h>

/*
 * Why value, an object name (or with prefix, the start of names: --prefix),
 * would name something outside its target or not one object: it starts
 * with "/", has a ".." component, has an empty component ("a//b"), or (a
 * name, not a prefix) is empty or ends with "/". NULL when it is fine.
 * A component is what lies between two "/"; in a prefix the last one
 * continues into the names, so only "/.." at its end (or ".." alone) is one.
 */
const char *rb_objname_problem(const char *value, bool prefix);

/*
 * rb_objname_problem as the usage error of option opt: 0 when value is
 * NULL or fine, else RB_EXIT_USAGE after one line:
 * `error: OPT "VALUE": WHY; give a name below the target`.
 */
int rb_objname_check(const char *opt, const char *value, bool prefix);

#endif
