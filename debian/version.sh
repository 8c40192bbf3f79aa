#!/bin/sh
# The Debian version of this checkout, from `git describe --tags --match 'v[0-9]*' --dirty` (or from the
# describe string given as $1, for tests):
#   v0.1.0                  -> 0.1.0              (a tagged release)
#   v0.1.0-12-g1a2b3c4      -> 0.1.0+12.g1a2b3c4  (12 commits after it; sorts above 0.1.0, below 0.1.1)
#   ...-dirty               -> ...+dirty          (uncommitted changes)
# Prints nothing without git or a tag; debian/changelog's version then stands.
d=${1-$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null)} || exit 0
[ -n "$d" ] || exit 0
echo "$d" | sed -e 's/^v//' -e 's/-\([0-9][0-9]*\)-\(g[0-9a-f]*\)/+\1.\2/' -e 's/-dirty$/+dirty/'
