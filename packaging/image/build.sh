#!/usr/bin/env bash
# make image: the OCI image railbench:<version> (and railbench:latest) in the local podman store, built offline
# from anything but Debian's mirror:
#   1. the Debian package of HEAD (packaging/deb-of-head.sh: dpkg-buildpackage in a clone,
#      build/image/deb-<commit>/), or the one RAILBENCH_DEB names;
#   2. a Debian 12 root by mmdebstrap (variant essential: no apt) holding only that package's runtime
#      dependencies and OpenSSH (MPIJob launchers reach workers over ssh); man pages, docs and locales left out;
#      imported as localhost/railbench-base:<hash of that list>, reused while the list stays the same;
#   3. podman build of packaging/image/Containerfile: the package installed with dpkg on that base;
#   4. railbench-servers:latest, a root with nginx alone, for deploy/kubernetes/test-servers.yaml.
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

# 1. The Debian package of HEAD, reused while HEAD is the same commit (packaging/deb-of-head.sh; the deb_package
# test shares it).
deb=${RAILBENCH_DEB:-}
[ -z "$deb" ] || [ -f "$deb" ] || die "RAILBENCH_DEB=$deb: no such file"
[ -n "$deb" ] || deb=$("$root/packaging/deb-of-head.sh" "$out") || exit 3 # its error line said why
version=$(dpkg-deb -f "$deb" Version)

# 2. The base: the package's Depends (alternatives: the first; versions: what the mirror has) and OpenSSH.
# base_image NAME INCLUDE [IMPORT-CHANGE...]: a Debian 12 root holding INCLUDE (and what it depends on), imported
# as localhost/NAME:<hash of the list and options>; prints that tag. Reused while the list stays the same.
base_image() {
    local name=$1 include=$2; shift 2
    # shellcheck disable=SC2016 # "$1" is mmdebstrap's, in the hook's own shell
    local opts=(--quiet --variant=essential --include="$include"
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-include=/usr/share/man/man1/railbench*'
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
        --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*'
        --customize-hook='rm -f "$1"/etc/ssh/ssh_host_*_key*')
    local hash; hash=$(printf '%s\n' "${opts[@]}" "$mirror" "$security" "$@" | sha256sum | cut -c1-12)
    local tag=localhost/$name:$hash dir=$out/$name-$hash
    if ! podman image exists "$tag"; then
        if [ ! -d "$dir" ]; then
            echo "  ROOT    $dir (mmdebstrap bookworm from $mirror: $include)" >&2
            rm -rf "$dir.part"
            nice -n 10 mmdebstrap "${opts[@]}" --format=directory bookworm "$dir.part" "deb $mirror bookworm main" \
                "deb $mirror bookworm-updates main" "deb $security bookworm-security main" >&2 ||
                die "mmdebstrap failed"
            mv "$dir.part" "$dir"
        fi
        local changes=()
        for c in "$@"; do changes+=(--change "$c"); done
        tar --numeric-owner --xattrs -C "$dir" -cf - . | podman import --quiet "${changes[@]}" - "$tag" >/dev/null ||
            { podman rmi -f "$tag" >/dev/null 2>&1 || true; die "podman import of $dir failed"; }
        rm -rf "$dir"
    fi
    echo "$tag"
}
deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/[[:space:]]//g' | grep . | sort -u)
base=$(base_image railbench-base "$(printf '%s\n' "$deps" openssh-client openssh-server ca-certificates | sort -u |
    paste -sd, -)" 'CMD ["/bin/bash"]')

# 3. The image, its RUN step without a network. Its limits: at most 20000 files and 32768 processes, and no more
# than this shell's hard limits (raising one needs CAP_SYS_RESOURCE, which a sandbox may lack).
lim() { local h=$1; [ "$h" != unlimited ] || h=$2; [ "$h" -le "$2" ] || h=$2; echo "$h"; }
nofile=$(lim "$(ulimit -Hn)" 20000)
nproc=$(lim "$(ulimit -Hu)" 32768)
ctx=$out/ctx
rm -rf "$ctx" && mkdir -p "$ctx"
cp "$deb" "$ctx/"
echo "  IMAGE   $image:$version (base $base)"
nice -n 10 podman build --quiet --network none --runtime "$runtime" --ulimit "nofile=$nofile:$nofile" \
    --ulimit "nproc=$nproc:$nproc" --build-arg BASE="$base" --build-arg DEB="$(basename "$deb")" \
    -t "$image:$version" -t "$image:latest" -f "$root/packaging/image/Containerfile" "$ctx" >/dev/null ||
    die "podman build failed"
rm -rf "$ctx"
echo "$image:$version" >"$out/image.tag"

# 4. The test servers for trying it out (deploy/kubernetes/test-servers.yaml): nginx, configured by the manifest.
servers=$(base_image railbench-servers nginx 'CMD ["nginx", "-g", "daemon off;"]' 'EXPOSE 8080')
mkdir -p "$ctx"
printf 'FROM %s\nENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n' "$servers" >"$ctx/Containerfile"
nice -n 10 podman build --quiet -t "$image-servers:latest" -f "$ctx/Containerfile" "$ctx" >/dev/null ||
    die "podman build of $image-servers failed"
rm -rf "$ctx"
echo "  SERVERS $image-servers:latest (on $servers)"
echo "  DONE    $image:$version ($(podman image inspect --format '{{.Size}}' "$image:$version" |
    awk '{printf "%.0f MB", $1 / 1e6}')); save it for a registry with: podman save $image:$version"
