# shellcheck shell=bash
# shellcheck disable=SC2154 # name, state, net, clients, rails, hosts_file come from cluster.sh, which sources this file
# Slurm in the cluster in a box: sourced by scripts/cluster.sh for `cluster.sh slurm up|down|status|CMD`.
#
# `slurm up` adds a management host NAME-mgmt (mgmt0 NET.0.4, its own hostname) running munged
# and slurmctld, and a slurmd on every client host, from Debian's slurm-wlm and munge. Everything
# lives in STATE/slurm: the generated slurm.conf (clients as nodes, their rails as node features),
# the munge key, spool and state directories, logs, and the list of what was made
# (STATE/slurm/created), which `slurm down` (and `down`) undoes, processes by PID.

slurm_tools=(munged mungekey slurmctld slurmd srun sbatch scontrol sinfo)

# slurm_layout: the Slurm paths and the management host's address.
slurm_layout() {
    sdir=$state/slurm
    slurm_conf=$sdir/slurm.conf
    munge_sock=$sdir/munge/munge.socket
    mgmt_host_ip=$net.0.4
}

# slurm_conf_text: slurm.conf for this cluster on stdout. Each client is a node with CPUs for
# max(rails, 2) tasks (config_overrides: the namespaces share this machine's cores), and its
# rails as features, so `--constraint rail1` picks nodes with a second rail.
slurm_conf_text() {
    local c feats cpus=$(( rails > 2 ? rails : 2 ))
    feats=$(seq -s, -f 'rail%g' 0 $((rails - 1)))
    cat <<EOF
# slurm.conf written by scripts/cluster.sh slurm up for cluster $name.
ClusterName=$name
SlurmctldHost=$name-mgmt($mgmt_host_ip)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$munge_sock
CredType=cred/munge
StateSaveLocation=$sdir/ctld
SlurmdSpoolDir=$sdir/spool/%n
SlurmctldPidFile=$sdir/run/slurmctld.pid
SlurmdPidFile=$sdir/run/slurmd-%n.pid
# slurmctld logs to STATE/log/mgmt-slurmctld.log (its stderr); slurmd and its slurmstepds
# to one file per node, as slurmstepd has no stderr of its own.
SlurmctldDebug=info
SlurmdDebug=info
SlurmdLogFile=$state/log/%n-slurmd-file.log
# No cgroups: the hosts are namespaces of one machine; tasks are tracked by process group.
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=pmix
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
MinJobAge=600
InactiveLimit=0
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
EOF
    for c in $(seq "$clients"); do
        echo "NodeName=$name-client$c NodeAddr=$(mgmt_ip "client$c") CPUs=$cpus RealMemory=1024${feats:+ Feature=$feats} State=UNKNOWN"
    done
    echo "PartitionName=rb Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
}

# slurm_host_ns: creates the management host (namespace, hostname, mgmt0 on the mgmt bridge).
slurm_host_ns() {
    local ns=$name-mgmt
    [ ! -e "/run/netns/$ns" ] || die "namespace $ns exists but is not recorded in $sdir; run: cluster.sh --name $name down"
    new_ns "$ns"
    new_uts "$ns"
    mkdir "/etc/netns/$ns"
    record etc "/etc/netns/$ns"
    cp "$hosts_file" "/etc/netns/$ns/hosts"
    veth_to_bridge "$ns" mgmt0 mgmt mgmt-m
    ip -n "$ns" addr add "$mgmt_host_ip/24" dev mgmt0
}

# slurm_wait_nodes: waits up to 30 s until every client's slurmd has registered (node idle).
slurm_wait_nodes() {
    local idle
    for _ in $(seq 150); do
        idle=$(slurm_cmd sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
        [ "$idle" -lt "$clients" ] || return 0
        slurm_healthy || die "a Slurm daemon exited; see $state/log/client*-slurmd.log and mgmt-slurmctld.log"
        sleep 0.2
    done
    die "slurmd on the clients did not register with slurmctld within 30 s; see $state/log/client*-slurmd.log and mgmt-slurmctld.log"
}

# slurm_cmd CMD ARGS...: runs a Slurm client command on client1 with this cluster's slurm.conf.
slurm_cmd() {
    in_host client1 env SLURM_CONF="$slurm_conf" "$@"
}

do_slurm_up() {
    [ "$(id -u)" -eq 0 ] || die "slurm up needs root"
    local t c
    for t in "${slurm_tools[@]}"; do
        command -v "$t" >/dev/null || die "'$t' is missing; run scripts/deps.sh (slurm-wlm, munge)"
    done
    if [ -f "$sdir/up-complete" ] && slurm_healthy; then
        note "slurm is already up in cluster $name"
        return 0
    fi
    [ ! -f "$sdir/created" ] || { note "slurm is partly up in cluster $name; removing it first"; do_slurm_down; }
    umask 022
    mkdir -p "$sdir/run" "$sdir/ctld" "$sdir/munge"
    records=$sdir/created
    : >"$records"
    trap slurm_up_failed EXIT
    trap 'exit 130' INT TERM
    slurm_host_ns
    # munged refuses keys and sockets in directories others may write; the key is 0600.
    chmod 0700 "$sdir/munge"
    mungekey --create --keyfile="$sdir/munge/munge.key" --force
    start_daemon mgmt munged munged --foreground --force --key-file="$sdir/munge/munge.key" \
        --socket="$munge_sock" --pid-file="$sdir/run/munged.pid" \
        --log-file="$state/log/mgmt-munged-file.log" --seed-file="$sdir/munge/munged.seed"
    for _ in $(seq 50); do [ -S "$munge_sock" ] && break; sleep 0.1; done
    [ -S "$munge_sock" ] || die "munged made no socket $munge_sock; see $state/log/mgmt-munged.log"
    slurm_conf_text >"$slurm_conf"
    for c in $(seq "$clients"); do mkdir -p "$sdir/spool/$name-client$c"; done
    start_daemon mgmt slurmctld slurmctld -D -i -f "$slurm_conf"
    wait_tcp "$mgmt_host_ip" 6817 "slurmctld"
    for c in $(seq "$clients"); do
        # slurmd 22.05 always loads a cgroup plugin, and `ip netns exec` gives the host a sysfs
        # of its own with nothing under /sys/fs/cgroup; mount the v1 freezer hierarchy there
        # (in that host's mount namespace only) and the named systemd one it checks for. Tasks are
        # still tracked by process group. Each host gets a /tmp of its own, as real hosts have
        # (Slurm's PMIx plugin names its directories there by job and step, not by node), and
        # sees its own disk at STATE/local and a /dev/shm of its own as its sshd does.
        mkdir -p "$sdir/tmp/$name-client$c"
        chmod 1777 "$sdir/tmp/$name-client$c"
        # shellcheck disable=SC2016 # expanded by the inner sh, from its arguments
        start_daemon "client$c" slurmd sh -c 'mount --bind "$3" /tmp && mount --bind "$4" "$5" &&
            mount -t tmpfs -o mode=1777 shm /dev/shm && mount -t tmpfs -o mode=0755 cgroup_root /sys/fs/cgroup &&
            mkdir /sys/fs/cgroup/freezer /sys/fs/cgroup/systemd &&
            mount -t cgroup -o freezer cgroup /sys/fs/cgroup/freezer &&
            mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd &&
            exec slurmd -D -f "$1" -N "$2"' slurmd "$slurm_conf" "$name-client$c" "$sdir/tmp/$name-client$c" \
            "$state/hostdisk/client$c" "$state/local"
    done
    slurm_wait_nodes
    trap - EXIT INT TERM
    date -u +%FT%TZ >"$sdir/up-complete"
    echo "slurm is up in cluster $name: slurmctld on $name-mgmt, slurmd on $clients clients; scripts/cluster.sh --name $name slurm status"
}

# slurm_up_failed: the EXIT trap while slurm up runs; removes what was made and exits 3.
slurm_up_failed() {
    local rc=$?
    trap - EXIT INT TERM
    note "slurm up failed (status $rc); removing what was made"
    do_slurm_down >&2 || true
    exit 3
}

# slurm_healthy: true if every process slurm up recorded still runs.
slurm_healthy() {
    local kind a b _
    [ -f "$sdir/created" ] || return 1
    while read -r kind a b _; do
        [ "$kind" != pid ] || alive "$a" "$b" || return 1
    done <"$sdir/created"
}

do_slurm_down() {
    if [ ! -f "$sdir/created" ]; then
        rm -rf -- "$sdir"
        echo "slurm is not up in cluster $name; nothing to remove"
        return 0
    fi
    # Jobs first, so slurmd ends their steps; whatever is left ends with the host processes below.
    if slurm_healthy; then timeout 10 env SLURM_CONF="$slurm_conf" scancel --user root 2>/dev/null || true; fi
    undo_records "$sdir/created"
    rm -rf -- "$sdir"
    echo "slurm is down in cluster $name"
}

do_slurm_status() {
    if [ ! -f "$sdir/up-complete" ]; then
        echo "slurm in cluster $name: down (no $sdir/up-complete)"
        return 1
    fi
    local ok=0 kind a b host svc
    echo "slurm in cluster $name: up since $(cat "$sdir/up-complete"), slurm.conf $slurm_conf"
    while read -r kind a b host svc; do
        [ "$kind" = pid ] || continue
        if alive "$a" "$b"; then echo "  $name-$host $svc($a)"; else echo "  $name-$host $svc(DEAD)"; ok=1; fi
    done <"$sdir/created"
    slurm_cmd sinfo -N -o '%N %T %c %f' || ok=1
    echo "run Slurm commands on $name-client1: scripts/cluster.sh --name $name slurm srun|sbatch|squeue|scancel|sinfo|scontrol ARGS..."
    echo "  or: scripts/cluster.sh --name $name exec client1 env SLURM_CONF=$slurm_conf srun ..."
    return "$ok"
}

# slurm_main SUBCOMMAND ARGS...: the `slurm` command of cluster.sh.
slurm_main() {
    local sub=${1:-}
    [ "$#" -ge 1 ] && shift
    case $sub in
        up) load_config; slurm_layout; do_slurm_up ;;
        down)
            if [ -f "$state/config" ]; then
                # shellcheck source=/dev/null
                . "$state/config"
            fi
            load_layout; slurm_layout; do_slurm_down ;;
        status) load_config; slurm_layout; do_slurm_status ;;
        srun|sbatch|salloc|squeue|scancel|sinfo|scontrol)
            load_config; slurm_layout
            [ -f "$sdir/up-complete" ] || die "slurm is not up in cluster $name; run: cluster.sh --name $name slurm up"
            exec ip netns exec "$name-client1" nsenter --uts="$state/uts/$name-client1" -- \
                env SLURM_CONF="$slurm_conf" "$sub" "$@" ;;
        *) die_usage "slurm: expected up, down, status, or a Slurm command (srun sbatch salloc squeue scancel sinfo scontrol), got '$sub'" ;;
    esac
}
