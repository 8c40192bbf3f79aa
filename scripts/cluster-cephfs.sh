# shellcheck shell=bash
# CephFS in the cluster in a box (sourced by scripts/cluster.sh; see docs/many-hosts.md): a leg of this machine on
# rail 0 for the Ceph daemons (tests/servers/cephfs.sh started with RB_CEPH_ADDR at its address), and on every
# client a ceph-fuse mount of its own, run in the client's network namespace (its traffic crosses the client's
# rail 0 interface) and in the mount namespace of the client's sshd, at STATE/cephfs: ssh sessions, mpirun's
# ranks (cluster.sh mpirun enters client1's) and Ansible tasks see one shared tree at the same path on every client;
# with Slurm up, a second one in the mount namespace of the client's slurmd, for Slurm's jobs.

# cephfs_layout: the leg's names and address, the mount point, the list of mounts.
cephfs_layout() {
    stor_if=$name-stor
    stor_peer=stor
    stor_ip=$net.10.2
    cephfs_mnt=$state/cephfs
    cephfs_list=$state/cephfs.mounts
}

# daemon_pid HOST SVC [RECORDS]: the PID of HOST's daemon SVC as up (or slurm up) recorded it, if it runs; its mount
# namespace is the one SVC's sessions and jobs see.
daemon_pid() {
    local kind a b host svc
    [ -f "${3:-$state/created}" ] || return 1
    while read -r kind a b host svc; do
        if [ "$kind" = pid ] && [ "$host" = "$1" ] && [ "$svc" = "$2" ] && alive "$a" "$b"; then echo "$a"; return 0; fi
    done <"${3:-$state/created}"
    return 1
}
sshd_pid() { daemon_pid "$1" sshd; }

# cephfs_addr: makes the leg (once; down removes it) and prints its address.
cephfs_addr() {
    [ "$rails" -gt 0 ] || die_usage "cephfs: cluster $name has no rails; the Ceph daemons sit on rail 0 (up --rails 1 or more)"
    local bridge=rail0
    [ "$fabric" = rail ] || bridge=fat
    if ! ip link show "$stor_if" >/dev/null 2>&1; then
        ip link add "$stor_if" type veth peer name "$stor_peer" netns "$ns_fabric"
        record link "$stor_if"
        sysctl -qw "net.ipv6.conf.$stor_if.disable_ipv6=1"
        ip addr add "$stor_ip/24" dev "$stor_if"
        ip link set "$stor_if" up
        ip -n "$ns_fabric" link set "$stor_peer" master "$bridge" up
    fi
    echo "$stor_ip"
}

# in_mountns PID CMD...: runs CMD in the mount namespace of process PID, under PID's root directory. Entering a
# mount namespace sets the root to the namespace's own, so a chrooted machine (a build root, a container-like
# root) would otherwise run CMD from outside its root, where neither CMD's paths nor the mount are.
in_mountns() {
    local pid=$1; shift
    nsenter --mount="/proc/$pid/ns/mnt" --root="/proc/$pid/root" --wd=/ -- "$@"
}

# fuse_start HOST SVC NSPID CONF [OPTION...]: a ceph-fuse for HOST in its network namespace and in the mount
# namespace of process NSPID (its SVC), listed in cephfs.mounts; waits (60 s) for its mount there.
fuse_start() {
    local h=$1 svc=$2 pid=$3 conf=$4 ns=$name-$1 start i; shift 4
    # Its own admin socket, pid file and log (the conf's are the host mount's); its address on rail 0.
    setsid nsenter --net="/run/netns/$ns" --mount="/proc/$pid/ns/mnt" --root="/proc/$pid/root" --wd=/ \
        --uts="$state/uts/$ns" -- \
        ceph-fuse -f -c "$conf" --public_addr "$(rail_ip "$h" 0)" --admin_socket "$state/cephfs-$h-$svc.asok" \
        --pid_file "$state/cephfs-$h-$svc.pid" --log_file "$state/log/$h-ceph-fuse-$svc.log" "$@" "$cephfs_mnt" \
        </dev/null >>"$state/log/$h-ceph-fuse-$svc.out" 2>&1 &
    local fpid=$!
    start=
    for _ in $(seq 50); do start=$(proc_start "$fpid"); [ -n "$start" ] && break; sleep 0.02; done
    [ -n "$start" ] || die "ceph-fuse on $h ($svc) exited at once; see $state/log/$h-ceph-fuse-$svc.out"
    # Listed here, not in up's records: after an umount they are gone and the cluster is still whole (a
    # ceph-fuse down could not stop by this list ends with its host's namespace, as any process there does).
    echo "$h $svc $fpid $start" >>"$cephfs_list"
    for i in $(seq 300); do
        in_mountns "$pid" sh -c "mountpoint -q '$cephfs_mnt' && stat -f '$cephfs_mnt'" \
            >/dev/null 2>&1 && return 0
        alive "$fpid" "$start" || die "ceph-fuse on $h ($svc) exited; see $state/log/$h-ceph-fuse-$svc.out"
        [ "$i" -lt 300 ] || die "ceph-fuse on $h ($svc): no mount on $cephfs_mnt after 60 s; see $state/log/$h-ceph-fuse-$svc.out"
        sleep 0.2
    done
}

# cephfs_mount CONF [CEPH-FUSE-OPTION...]: a ceph-fuse mount on every client (and one for its slurmd).
cephfs_mount() {
    local conf=$1 c h pid; shift
    [ -f "$conf" ] || die_usage "cephfs mount: $conf: no such file (the ceph.conf tests/servers/cephfs.sh wrote)"
    grep -q "^mon host = \[v1:$stor_ip:" "$conf" ||
        die_usage "cephfs mount: $conf: its monitor is not on the leg $stor_ip (start cephfs.sh with RB_CEPH_ADDR=\$(cluster.sh cephfs addr))"
    command -v ceph-fuse >/dev/null || die "ceph-fuse not found (scripts/deps.sh installs it)"
    [ ! -s "$cephfs_list" ] || die_usage "cephfs: already mounted on $(awk '{print $1}' "$cephfs_list" | sort -u | xargs); cephfs umount first"
    mkdir -p "$cephfs_mnt" "$state/log"
    local slurm=
    for c in $(seq "$clients"); do
        h=client$c
        pid=$(sshd_pid "$h") || die "cephfs: the sshd of $h is not running (cluster.sh status)"
        fuse_start "$h" sshd "$pid" "$conf" "$@"
        if pid=$(daemon_pid "$h" slurmd "$state/slurm/created"); then
            fuse_start "$h" slurmd "$pid" "$conf" "$@"
            slurm=" (and for Slurm's jobs)"
        fi
    done
    echo "cephfs mounted at $cephfs_mnt on ${clients} client(s)$slurm, each over its rail 0 to $stor_ip"
}

# cephfs_umount: unmounts every mount (lazily when busy) and stops its ceph-fuse by PID. Each is unmounted in
# its ceph-fuse's own mount namespace, which outlives the sshd or slurmd it was made for.
cephfs_umount() {
    [ -s "$cephfs_list" ] || { echo "cephfs: not mounted in cluster $name"; return 0; }
    local h svc pid start
    while read -r h svc pid start; do
        if alive "$pid" "$start"; then
            in_mountns "$pid" sh -c "fusermount3 -u '$cephfs_mnt' 2>/dev/null ||
                umount '$cephfs_mnt' 2>/dev/null || umount -l '$cephfs_mnt'" ||
                note "cephfs: $h ($svc): $cephfs_mnt would not unmount"
        fi
        for _ in $(seq 50); do alive "$pid" "$start" || break; sleep 0.1; done
        stop_pid "$pid" "$start" "ceph-fuse on $h ($svc)"
    done <"$cephfs_list"
    rm -f "$cephfs_list"
    echo "cephfs unmounted in cluster $name"
}

# cephfs_main ARGS...: cluster.sh cephfs addr|mount CONF [OPTION...]|umount.
cephfs_main() {
    load_config
    cephfs_layout
    case ${1:-} in
        addr) [ "$#" -eq 1 ] || die_usage "cephfs addr takes no arguments"; cephfs_addr ;;
        mount) [ "$#" -ge 2 ] || die_usage "cephfs mount needs the ceph.conf of tests/servers/cephfs.sh"
               cephfs_mount "${@:2}" ;;
        umount) [ "$#" -eq 1 ] || die_usage "cephfs umount takes no arguments"; cephfs_umount ;;
        *) die_usage "cephfs: expected addr, mount CONF [CEPH-FUSE-OPTION...] or umount" ;;
    esac
}
