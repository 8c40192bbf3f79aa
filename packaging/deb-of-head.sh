#!/usr/bin/env bash
# deb-of-head.sh DIR: prints the path of the Debian package of this checkout's HEAD (railbench_<version>_amd64.deb),
# built by `dpkg-buildpackage -us -uc -b` in a clone of that commit under DIR/deb-<commit>/ (its log: build.log
# there) unless that directory holds it already. Callers at the same time wait on DIR/deb.lock and share the one
# build: make image (packaging/image/build.sh) and the deb_package test of one `make test` build it once. What
# other commits left under DIR is removed. A failed build: its log's last lines and one error line, exit 3.
set -euo pipefail

die() { echo "error: deb-of-head.sh: $*" >&2; exit "${2:-3}"; }
[ $# -eq 1 ] || die "usage: deb-of-head.sh DIR" 2
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1
for t in dpkg-buildpackage git flock; do
    command -v "$t" >/dev/null || die "$t not found (scripts/deps.sh installs it)"
done
mkdir -p "$out"
head=$(git -C "$root" rev-parse HEAD)
exec 9>"$out/deb.lock"
flock 9

# deb_of DIR: the railbench package in DIR, if there is one.
deb_of() { local f; for f in "$1"/railbench_*_amd64.deb; do [ ! -f "$f" ] || echo "$f"; done; }
dir=$out/deb-$head
deb=$(deb_of "$dir" | head -n 1)
if [ -z "$deb" ]; then
    rm -rf "$out"/deb-* && mkdir -p "$dir"
    git clone -q --no-checkout "$root" "$dir/railbench"
    git -C "$dir/railbench" checkout -q "$head"
    echo "  DEB     $dir (dpkg-buildpackage; the log: $dir/build.log)" >&2
    (cd "$dir/railbench" && DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck" nice -n 10 dpkg-buildpackage -us -uc -b) \
        >"$dir/build.log" 2>&1 || { tail -n 20 "$dir/build.log" >&2; die "dpkg-buildpackage failed (log: $dir/build.log)"; }
    rm -rf "$dir/railbench"
    deb=$(deb_of "$dir" | head -n 1)
    [ -n "$deb" ] || die "dpkg-buildpackage made no railbench_*_amd64.deb in $dir"
fi
echo "$deb"
