#!/usr/bin/env bash
# CephFS on the single-host Ceph of rgw.sh: its monitor and memstore OSD, plus one MDS and a ceph-fuse mount.
#
#   cephfs.sh start DIR   starts rgw.sh's cluster under DIR (monitor, OSD, RGW), creates a file system
#                         (pools cephfs_meta and cephfs_data), starts ceph-mds and mounts the file system with
#                         ceph-fuse on DIR/mnt; prints shell-sourceable lines: CEPHFS_MNT, CEPHFS_PIDS (mds and
#                         ceph-fuse), CEPHFS_FUSE_PID, CEPHFS_CONF, then rgw.sh's lines (RGW_ENDPOINT, ...).
#   cephfs.sh stop DIR    unmounts DIR/mnt (fusermount3 -u, lazily when busy), then stops every process it
#                         and rgw.sh started (by PID, from DIR/pids) and removes DIR.
#
# Every wait is bounded and says what is missing when it runs out. As with rgw.sh, the daemons run as the
# ceph user when started as root; ceph-fuse runs as the caller (root: FUSE mounts need it here).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
die() { echo "cephfs.sh: $1" >&2; exit "${2:-3}"; }
usage() { die "usage: cephfs.sh start DIR | stop DIR" 2; }
alive() { kill -0 "$1" 2>/dev/null && ! grep -qs '^State:[[:space:]]*[ZX]' "/proc/$1/status"; } # a zombie has exited

# show_log LOG: what a daemon said before it failed: its error lines (a C++ daemon's "what():" comes first, before
# the backtrace) and its last lines. The directory goes when a failed start cleans up.
show_log() {
    grep -m 5 -E "what\(\)|terminate called|[Ee]rror|[Ff]ailed" "$1" >&2 || true
    tail -n 8 "$1" >&2
}

# await WHAT PID LOG SECONDS CHECK...: waits until CHECK succeeds; fails if PID dies or the time runs out,
# showing the daemon's LOG.
await() {
    local what=$1 pid=$2 log=$3 limit=$4 end; shift 4
    end=$((SECONDS + limit))
    while [ "$SECONDS" -lt "$end" ]; do
        "$@" >/dev/null 2>&1 && return 0
        alive "$pid" || { show_log "$log"; die "$what exited during start-up (its log above)"; }
        sleep 0.2
    done
    show_log "$log"
    die "$what not ready after ${limit}s (its log above)"
}

# mounted DIR: DIR is in the mount table, also when its FUSE daemon died (then stat, and so mountpoint, fail: ENOTCONN).
mounted() { awk -v m="$1" '$2 == m { found = 1 } END { exit !found }' /proc/self/mounts; }

unmount() {
    local mnt=$1
    mounted "$mnt" || return 0
    fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
}

start() {
    D=$1
    for b in ceph-mds ceph-fuse fusermount3; do
        command -v "$b" >/dev/null || die "$b not found (scripts/deps.sh installs ceph-mds, ceph-fuse and fuse3)"
    done
    [ -e /dev/fuse ] || die "/dev/fuse missing: this host cannot mount FUSE file systems"
    "$here/rgw.sh" start "$D" >/dev/null || die "the Ceph cluster under it (rgw.sh) did not start"
    D=$(cd "$D" && pwd)
    # A start that fails half way stops what it had started.
    trap '[ -f "$D/cephfs.env" ] || { unmount "$D/mnt"; "$here/rgw.sh" stop "$D" >/dev/null 2>&1; }' EXIT
    local conf=$D/ceph.conf user=()
    # As rgw.sh decides: the ceph user, unless a parent directory keeps it out of DIR (a clone under /root, mode
    # 0700: rgw.sh then runs its daemons as root but has still given DIR to ceph, so its owner says nothing).
    if [ "$(id -u)" = 0 ] && id ceph >/dev/null 2>&1 && runuser -u ceph -- test -w "$D"; then
        user=(--setuser ceph --setgroup ceph)
    fi
    cat >>"$conf" <<CONF
[mds]
mds data = $D/mds
CONF
    mkdir -p "$D/mds" "$D/mnt"
    [ ${#user[@]} -eq 0 ] || chown ceph:ceph "$D/mds"
    local c=(ceph -c "$conf" --connect-timeout 5) end=$((SECONDS + 60))
    # A busy monitor may not answer in time ("problem getting command descriptions from mon"); each step is
    # idempotent (a pool, or the file system on the same pools, that exists already is fine), so all are tried again.
    until "${c[@]}" osd pool create cephfs_meta 8 >"$D/log/cephfs-pools.out" 2>&1 &&
        "${c[@]}" osd pool create cephfs_data 8 >>"$D/log/cephfs-pools.out" 2>&1 &&
        "${c[@]}" fs new railbench cephfs_meta cephfs_data --force >>"$D/log/cephfs-pools.out" 2>&1; do
        [ "$SECONDS" -lt "$end" ] || die "creating the file system failed for 60 s: $(tail -n 1 "$D/log/cephfs-pools.out")"
        sleep 1
    done
    ceph-mds -c "$conf" -i a -f "${user[@]}" >"$D/log/mds.out" 2>&1 &
    local mds_pid=$!
    echo "$mds_pid" >>"$D/pids"
    # The monitor logs the MDS going active; then one command (half a second of CPU each) confirms it.
    await "ceph-mds (no MDS up:active)" "$mds_pid" "$D/log/mds.out" 60 grep -q "daemon mds\.a is now active" "$D/log/cluster.log"
    await "ceph-mds (no MDS up:active)" "$mds_pid" "$D/log/mds.out" 60 sh -c "${c[*]} mds stat 2>/dev/null | grep -q up:active"
    ceph-fuse -c "$conf" -f "$D/mnt" >"$D/log/ceph-fuse.out" 2>&1 &
    local fuse_pid=$!
    echo "$fuse_pid" >>"$D/pids"
    await "ceph-fuse (no mount on $D/mnt)" "$fuse_pid" "$D/log/ceph-fuse.out" 60 sh -c "mountpoint -q '$D/mnt' && stat -f '$D/mnt'"
    cat >"$D/cephfs.env" <<ENV
CEPHFS_MNT=$D/mnt
CEPHFS_CONF=$conf
CEPHFS_FUSE_PID=$fuse_pid
CEPHFS_PIDS="$mds_pid $fuse_pid"
ENV
    cat "$D/cephfs.env" "$D/env"
}

stop() {
    local dir=$1
    [ -f "$dir/ceph.conf" ] || die "$dir: not a cephfs.sh directory (no ceph.conf)" 2
    dir=$(cd "$dir" && pwd)
    unmount "$dir/mnt"
    "$here/rgw.sh" stop "$dir"
}

case ${1:-} in
start) [ $# -eq 2 ] || usage; start "$2" ;;
stop) [ $# -eq 2 ] || usage; stop "$2" ;;
*) usage ;;
esac
