#!/usr/bin/env bash
# make image: the OCI image railbench:<version> (and railbench:latest) in the local podman store, built offline
# from anything but Debian's mirror:
#   1. the Debian package of HEAD (dpkg-buildpackage in a clone: build/image/railbench_<version>_amd64.deb);
#   2. a Debian 12 root by mmdebstrap (variant essential: no apt) holding only that package's runtime
#      dependencies and OpenSSH (MPIJob launchers reach workers over ssh); man pages, docs and locales left out;
#      imported as localhost/railbench-base:<hash of that list>, reused while the list stays the same;
#   3. podman build of packaging/image/Containerfile: the package installed with dpkg on that base.
# Environment: MIRROR (default http://deb.debian.org/debian, the mirror apt uses here), SECURITY_MIRROR
# (default http://deb.debian.org/debian-security), PODMAN_RUNTIME (default runc), IMAGE (default railbench).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build/image
mirror=${MIRROR:-http://deb.debian.org/debian}
security=${SECURITY_MIRROR:-http://deb.debian.org/debian-security}
runtime=${PODMAN_RUNTIME:-runc}
image=${IMAGE:-railbench}
die() { echo "error: make image: $*" >&2; exit 3; }
for t in podman mmdebstrap dpkg-buildpackage git; do
    command -v "$t" >/dev/null || die "$t not found (scripts/deps.sh installs it)"
done
[ "$(id -u)" -eq 0 ] || die "run as root: mmdebstrap's root and podman's store are rootful here"
mkdir -p "$out"

# 1. The Debian package of HEAD, reused while HEAD is the same commit.
head=$(git -C "$root" rev-parse HEAD)
deb=$(ls "$out"/deb-"$head"/railbench_*_amd64.deb 2>/dev/null | head -n 1 || true)
if [ -z "$deb" ]; then
    rm -rf "$out"/deb-* && mkdir -p "$out/deb-$head"
    git clone -q "$root" "$out/deb-$head/railbench"
    echo "  DEB     $out/deb-$head (dpkg-buildpackage; the log: $out/deb-$head/build.log)"
    (cd "$out/deb-$head/railbench" && DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck" \
        nice -n 10 dpkg-buildpackage -us -uc -b) >"$out/deb-$head/build.log" 2>&1 ||
        { tail -n 20 "$out/deb-$head/build.log" >&2; die "dpkg-buildpackage failed"; }
    rm -rf "$out/deb-$head/railbench"
    deb=$(ls "$out"/deb-"$head"/railbench_*_amd64.deb)
fi
version=$(dpkg-deb -f "$deb" Version)

# 2. The base: the package's Depends (alternatives: the first; versions: what the mirror has) and OpenSSH.
deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/[[:space:]]//g' | grep . | sort -u)
include=$(printf '%s\n' $deps openssh-client openssh-server ca-certificates | sort -u | paste -sd, -)
opts=(--quiet --variant=essential --include="$include"
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-include=/usr/share/man/man1/railbench*'
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*'
    --customize-hook='rm -f "$1"/etc/ssh/ssh_host_*_key*')
hash=$(printf '%s\n' "${opts[@]}" "$mirror" "$security" | sha256sum | cut -c1-12)
base=localhost/railbench-base:$hash
if ! podman image exists "$base"; then
    tar=$out/base-$hash.tar
    if [ ! -s "$tar" ]; then
        echo "  BASE    $tar (mmdebstrap bookworm from $mirror: $include)"
        nice -n 10 mmdebstrap "${opts[@]}" bookworm "$tar.part" "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
            "deb $security bookworm-security main" || die "mmdebstrap failed"
        mv "$tar.part" "$tar"
    fi
    podman import --quiet --change 'CMD ["/bin/bash"]' "$tar" "$base" >/dev/null || die "podman import $tar failed"
    rm -f "$tar"
fi

# 3. The image.
ctx=$out/ctx
rm -rf "$ctx" && mkdir -p "$ctx"
cp "$deb" "$ctx/"
echo "  IMAGE   $image:$version (base $base)"
nice -n 10 podman build --quiet --runtime "$runtime" --ulimit nofile=20000:20000 --ulimit nproc=32768:32768 \
    --build-arg BASE="$base" --build-arg DEB="$(basename "$deb")" \
    -t "$image:$version" -t "$image:latest" -f "$root/packaging/image/Containerfile" "$ctx" >/dev/null ||
    die "podman build failed"
rm -rf "$ctx"
echo "$image:$version" >"$out/image.tag"
echo "  DONE    $image:$version ($(podman image inspect --format '{{.Size}}' "$image:$version" |
    awk '{printf "%.0f MB", $1 / 1e6}')); save it for a registry with: podman save $image:$version"
