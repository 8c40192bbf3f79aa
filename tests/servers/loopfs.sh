#!/usr/bin/env bash
# A file system on a loop device, for O_DIRECT and page-cache tests on a known device (root only).
#
#   loopfs.sh mount DIR SIZE ext4|xfs   makes DIR/image (SIZE, sparse), attaches it to a free loop device
#                                       (--direct-io=on: the loop device reads and writes the image with O_DIRECT,
#                                       so what the tests drop from the page cache is not still cached below it),
#                                       makes the file system and mounts it on DIR/mnt; prints shell-sourceable
#                                       lines LOOP_DEV (/dev/loopN), LOOP_NAME (loopN: its /proc/diskstats name)
#                                       and LOOP_MNT.
#   loopfs.sh umount DIR                unmounts DIR/mnt, detaches the device, removes the image.
#
# What it set up is written to DIR/loop.env first, so umount undoes exactly that (and only that).
set -euo pipefail

die() { echo "loopfs.sh: $1" >&2; exit "${2:-3}"; }

mount_fs() {
    local dir=$1 size=$2 fs=$3 dev
    [ "$(id -u)" = 0 ] || die "loop devices need root"
    case $fs in ext4) mkfs=(mkfs.ext4 -q -F) ;; xfs) mkfs=(mkfs.xfs -q -f) ;; *) die "file system '$fs': expected ext4 or xfs" 2 ;; esac
    command -v "${mkfs[0]}" >/dev/null || die "${mkfs[0]} not found (scripts/deps.sh installs e2fsprogs and xfsprogs)"
    mkdir -p "$dir/mnt"
    dir=$(cd "$dir" && pwd)
    [ ! -e "$dir/loop.env" ] || die "$dir already holds a loop file system (loopfs.sh umount $dir first)" 2
    truncate -s "$size" "$dir/image"
    dev=$(losetup --find --show --direct-io=on "$dir/image") || die "no free loop device (losetup --find failed)"
    printf 'LOOP_DEV=%s\nLOOP_NAME=%s\nLOOP_MNT=%s\n' "$dev" "${dev#/dev/}" "$dir/mnt" >"$dir/loop.env"
    "${mkfs[@]}" "$dev" >"$dir/mkfs.out" 2>&1 || { undo "$dir"; die "${mkfs[0]} $dev failed: $(tail -n 1 "$dir/mkfs.out")"; }
    mount "$dev" "$dir/mnt" || { undo "$dir"; die "mount $dev $dir/mnt failed"; }
    cat "$dir/loop.env"
}

# undo DIR: unmounts and detaches what DIR/loop.env names; each step may already be undone.
undo() {
    local dir=$1 LOOP_DEV LOOP_MNT
    [ -f "$dir/loop.env" ] || return 0
    # shellcheck disable=SC1091
    . "$dir/loop.env"
    if mountpoint -q "$LOOP_MNT"; then
        umount "$LOOP_MNT" 2>/dev/null || { sleep 1; umount "$LOOP_MNT"; } || umount -l "$LOOP_MNT"
    fi
    losetup -d "$LOOP_DEV" 2>/dev/null || true
    rm -f "$dir/image" "$dir/loop.env"
}

case ${1:-} in
    mount) [ $# -eq 4 ] || die "usage: loopfs.sh mount DIR SIZE ext4|xfs" 2; mount_fs "$2" "$3" "$4" ;;
    umount) [ $# -eq 2 ] || die "usage: loopfs.sh umount DIR" 2; undo "$2" ;;
    *) die "usage: loopfs.sh mount DIR SIZE ext4|xfs | umount DIR" 2 ;;
esac
