#!/usr/bin/env bash
# Cluster in a box: client, tier and backend hosts made of network namespaces, each with its own hostname and sshd.
#
# Usage: cluster.sh [--name NAME] [--state DIR] up|down|status|exec|ssh|mpirun|path [options]
# See usage() below and docs/many-hosts.md. Needs root.
#
# What `up` builds (addresses for the default --net 10.77):
#   NAME-fabric   the switches: bridge "mgmt" (10.77.0.0/24), bridges "rail0".. "railR-1"
#                 (10.77.10+i.0/24), or one bridge "fat" for --fabric fat-tree
#   NAME-clientN  hostname NAME-clientN; mgmt0 10.77.0.(10+N); railI 10.77.(10+I).(10+N)
#   NAME-tier     hostname NAME-tier; mgmt0 10.77.0.2; nginx proxy_cache on :80
#   NAME-backend  hostname NAME-backend; mgmt0 10.77.0.3 behind the slow "cloud" link;
#                 nginx origin on :80 (PUT/DELETE allowed), s3rver on :4568 when installed
#   NAME-spine    with rails on the rail-optimised fabric: a router joining the rails
#                 (10.77.(10+I).1) through rate-limited links
#   NAME-ctl      the only thing in the root namespace: a veth on the mgmt bridge,
#                 10.77.0.1/24, so this machine (the Ansible controller) reaches the hosts
# No host has a default route, nothing forwards to the outside, there is no NAT.
# Everything made is recorded in STATE/created; `down` undoes exactly that list.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
prog=cluster.sh
# shellcheck source=scripts/cluster-slurm.sh
. "$here/scripts/cluster-slurm.sh"
# shellcheck source=scripts/cluster-cephfs.sh
. "$here/scripts/cluster-cephfs.sh"

die_usage() { echo "$prog: $*" >&2; exit 2; }
die() { echo "$prog: $*" >&2; exit 3; }
note() { echo "$prog: $*" >&2; }

usage() {
    cat <<'EOF'
usage: cluster.sh [--name NAME] [--state DIR] COMMAND [options]

commands:
  up [options]           build the cluster (safe to repeat with the same options)
      --clients N          client hosts, 1-16 (default 2)
      --rails R            extra interfaces per client, 0-8; interface i joins rail i (default 0)
      --fabric F           rail (rails joined by a rate-limited spine, default) or fat-tree (one bridge)
      --net A.B            first two octets of the private /16 used on the bridges (default 10.77)
      --backend-rate RATE  bandwidth of the backend's link each way, tc units (default 160mbit = 20 MB/s)
      --backend-delay D    one-way delay added on the backend's link, needs netem (default 20ms)
      --spine-rate RATE    bandwidth of each rail's link to the spine (default 400mbit)
      --spine-delay D      delay added on each spine link, needs netem (default 1ms)
      --origin-rate RATE   nginx limit_rate per connection on the origin, e.g. 20m (default: off)
  down                   remove everything up made (safe when nothing is up)
  status                 hosts, addresses, links and services; exit 1 if not (fully) up
  exec HOST CMD...       run CMD on HOST (its namespaces and hostname), e.g. exec client1 hostname
  ssh HOST [CMD...]      ssh to HOST from this machine with the cluster's keys
  mpirun [--net mgmt|rails] MPIRUN-ARGS...
                         run mpirun on client1 with the cluster's hostfile and ssh agent;
                         --net picks the interfaces of the MPI TCP traffic (default mgmt)
  path WHAT              print a path or URL: state ssh_config hostfile inventory hosts origin_root,
                         local (each host's own disk, seen there over ssh and under Slurm),
                         cephfs (where each client mounts CephFS, below),
                         and (when up) tier_url backend_url slurm_conf
  slurm up|down|status   Slurm in the cluster: munged and slurmctld on host NAME-mgmt, slurmd on each client
  slurm srun|sbatch|salloc|squeue|scancel|sinfo|scontrol ARGS...
                         run that Slurm command on client1 with the cluster's slurm.conf
  cephfs addr            put this machine on rail 0 (a leg, NET.10.2) for the Ceph daemons; print its address
                         (start tests/servers/cephfs.sh with RB_CEPH_ADDR set to it)
  cephfs mount CONF [OPT...]
                         mount that CephFS (CONF: cephfs.sh's ceph.conf) with ceph-fuse on every client, in its
                         network namespace (over its rail 0) and its sshd's mount namespace (and, with Slurm
                         up, its slurmd's), at `path cephfs`; OPT: ceph-fuse options (e.g. --client_oc=false)
  cephfs umount          unmount it on every client and stop each ceph-fuse by PID (down does it too)

global options (also from RB_CLUSTER_NAME, RB_CLUSTER_STATE):
  --name NAME            cluster name, [a-z][a-z0-9]{0,9} (default rbc); prefixes namespaces and hostnames
  --state DIR            state directory (default /run/railbench-cluster/NAME)
EOF
}

# ---------------------------------------------------------------- options

name=${RB_CLUSTER_NAME:-rbc}
state=${RB_CLUSTER_STATE:-}
cmd=
args=()
up_opts=()   # "flag value" pairs given, to reject them for commands other than up
clients=2 rails=0 fabric=rail net=10.77
backend_rate=160mbit backend_delay=20ms spine_rate=400mbit spine_delay=1ms origin_rate=

need_value() { [ "$#" -ge 2 ] || die_usage "option $1 needs a value"; }

while [ "$#" -gt 0 ]; do
    case $1 in
        -h|--help) usage; exit 0 ;;
        --name) need_value "$@"; name=$2; shift 2 ;;
        --state) need_value "$@"; state=$2; shift 2 ;;
        --clients) need_value "$@"; clients=$2; up_opts+=("$1"); shift 2 ;;
        --rails) need_value "$@"; rails=$2; up_opts+=("$1"); shift 2 ;;
        --fabric) need_value "$@"; fabric=$2; up_opts+=("$1"); shift 2 ;;
        --net) need_value "$@"; net=$2; up_opts+=("$1"); shift 2 ;;
        --backend-rate) need_value "$@"; backend_rate=$2; up_opts+=("$1"); shift 2 ;;
        --backend-delay) need_value "$@"; backend_delay=$2; up_opts+=("$1"); shift 2 ;;
        --spine-rate) need_value "$@"; spine_rate=$2; up_opts+=("$1"); shift 2 ;;
        --spine-delay) need_value "$@"; spine_delay=$2; up_opts+=("$1"); shift 2 ;;
        --origin-rate) need_value "$@"; origin_rate=$2; up_opts+=("$1"); shift 2 ;;
        -*) die_usage "unknown option '$1' (see cluster.sh --help)" ;;
        *)
            if [ -z "$cmd" ]; then
                cmd=$1; shift
                case $cmd in
                    up|down|status|path) ;;
                    exec|ssh|mpirun|slurm|cephfs) args=("$@"); break ;;
                    *) die_usage "unknown command '$cmd': expected up, down, status, exec, ssh, mpirun, slurm, cephfs or path" ;;
                esac
            else
                [ "$cmd" = path ] || die_usage "unexpected argument '$1' for $cmd"
                args+=("$1"); shift
            fi ;;
    esac
done
[ -n "$cmd" ] || { usage >&2; exit 2; }

[[ $name =~ ^[a-z][a-z0-9]{0,9}$ ]] || die_usage "--name '$name': expected [a-z][a-z0-9]{0,9}"
state=${state:-/run/railbench-cluster/$name}
case $state in /*) ;; *) state=$PWD/$state ;; esac
if [ "$cmd" != up ] && [ "${#up_opts[@]}" -gt 0 ]; then
    die_usage "option ${up_opts[0]} applies to 'up' only"
fi

if [ "$cmd" = up ]; then
    if ! [[ $clients =~ ^[0-9]{1,2}$ ]] || [ "$clients" -lt 1 ] || [ "$clients" -gt 16 ]; then
        die_usage "--clients '$clients': expected a number from 1 to 16"
    fi
    if ! [[ $rails =~ ^[0-9]$ ]] || [ "$rails" -gt 8 ]; then
        die_usage "--rails '$rails': expected a number from 0 to 8"
    fi
    case $fabric in rail|fat-tree) ;; *) die_usage "--fabric '$fabric': expected rail or fat-tree" ;; esac
    if [[ $net =~ ^([0-9]{1,3})\.([0-9]{1,3})$ ]] && [ "${BASH_REMATCH[1]}" -le 255 ] && [ "${BASH_REMATCH[2]}" -le 255 ]; then
        case ${BASH_REMATCH[1]} in
            10) ;;
            172) if [ "${BASH_REMATCH[2]}" -lt 16 ] || [ "${BASH_REMATCH[2]}" -gt 31 ]; then
                     die_usage "--net '$net': expected a private range (10.x, 172.16-31.x, 192.168)"
                 fi ;;
            192) [ "${BASH_REMATCH[2]}" = 168 ] || die_usage "--net '$net': expected a private range (10.x, 172.16-31.x, 192.168)" ;;
            *) die_usage "--net '$net': expected a private range (10.x, 172.16-31.x, 192.168)" ;;
        esac
    else
        die_usage "--net '$net': expected the first two octets, e.g. 10.77"
    fi
    for pair in "backend-rate:$backend_rate" "spine-rate:$spine_rate"; do
        [[ ${pair#*:} =~ ^[0-9]+(\.[0-9]+)?([kmgt]?bit|[kmgt]?bps)$ ]] ||
            die_usage "--${pair%%:*} '${pair#*:}': expected a tc rate such as 160mbit or 20mbps"
    done
    for pair in "backend-delay:$backend_delay" "spine-delay:$spine_delay"; do
        [[ ${pair#*:} =~ ^[0-9]+(\.[0-9]+)?(us|ms|s)$ ]] ||
            die_usage "--${pair%%:*} '${pair#*:}': expected a delay such as 20ms"
    done
    [ -z "$origin_rate" ] || [[ $origin_rate =~ ^[0-9]+[km]?$ ]] ||
        die_usage "--origin-rate '$origin_rate': expected an nginx rate such as 20m (bytes per second)"
fi

# ---------------------------------------------------------------- layout

# load_layout: sets the per-cluster names and addresses from $name, $net, $clients, $rails.
load_layout() {
    ns_fabric=$name-fabric
    ns_spine=$name-spine
    ctl_if=$name-ctl
    ctl_ip=$net.0.1
    tier_ip=$net.0.2
    backend_ip=$net.0.3
    hosts=()
    local c
    for c in $(seq "$clients"); do hosts+=("client$c"); done
    hosts+=(tier backend)
    ssh_config=$state/ssh/config
    hostfile=$state/hostfile
    inventory=$state/ansible/inventory.yml
    hosts_file=$state/hosts
    origin_root=$state/backend/www
    records=$state/created
}

# mgmt_ip HOST: the host's address on the management network.
mgmt_ip() {
    case $1 in
        tier) echo "$tier_ip" ;;
        backend) echo "$backend_ip" ;;
        client*) echo "$net.0.$((10 + ${1#client}))" ;;
    esac
}

# rail_ip HOST RAIL: a client's address on rail RAIL.
rail_ip() { echo "$net.$((10 + $2)).$((10 + ${1#client}))"; }

# ---------------------------------------------------------------- records

# record KIND ARGS...: appends what was just made to the list down undoes ($records: STATE/created,
# or STATE/slurm/created while slurm up runs).
record() { echo "$*" >>"$records"; }

# proc_start PID: the process's start time in clock ticks since boot (field 22 of /proc/PID/stat), or "" when it
# is gone or has exited (a zombie, state Z or X: an orphan waits there until PID 1 collects it, seconds on some
# machines, and a stop that waited for that would wait for nothing).
proc_start() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    stat=${stat##*) }
    # shellcheck disable=SC2086 # word splitting is how the fields are read
    set -- $stat
    case $1 in Z | X) return 0 ;; esac
    echo "${20}"
}

# alive PID START: true if PID runs and is the process that was recorded (same start time).
alive() { [ -n "$1" ] && [ "$(proc_start "$1")" = "$2" ]; }

# ---------------------------------------------------------------- running things on hosts

# host_ns HOST: the namespace name of a host given as client1/tier/backend or NAME-client1.
host_ns() {
    local h=${1#"$name"-}
    case $h in
        tier|backend) ;;
        client[0-9]*) [ "${h#client}" -ge 1 ] && [ "${h#client}" -le "$clients" ] || return 1 ;;
        *) return 1 ;;
    esac
    echo "$name-$h"
}

# in_host HOST CMD...: runs CMD in HOST's network namespace (with /sys and /etc/hosts of that
# namespace, as `ip netns exec` sets up) and its UTS namespace, so it sees the host's own name.
in_host() {
    local ns=$name-$1; shift
    ip netns exec "$ns" nsenter --uts="$state/uts/$ns" -- "$@"
}

# start_daemon HOST SERVICE CMD...: starts CMD on HOST in its own session, logs to
# STATE/log/HOST-SERVICE.log, records its PID; sets DAEMON_PID.
start_daemon() {
    local host=$1 svc=$2 ns=$name-$1; shift 2
    setsid ip netns exec "$ns" nsenter --uts="$state/uts/$ns" -- "$@" \
        </dev/null >>"$state/log/$host-$svc.log" 2>&1 &
    DAEMON_PID=$!
    local start=
    for _ in $(seq 50); do
        start=$(proc_start "$DAEMON_PID")
        [ -n "$start" ] && break
        sleep 0.02
    done
    [ -n "$start" ] || die "$svc on $host exited at once; see $state/log/$host-$svc.log"
    record pid "$DAEMON_PID" "$start" "$host" "$svc"
}

# wait_tcp IP PORT WHAT: waits up to 10 s until IP:PORT accepts a connection from this machine
# (the controller's leg reaches every management address).
wait_tcp() {
    for _ in $(seq 100); do
        if timeout 1 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    die "$3 does not accept on $1:$2 after 10 s; see $state/log/"
}

# ---------------------------------------------------------------- link shaping

# shape NS DEV RATE DELAY: limits DEV's egress in NS to RATE with DELAY added. Tries netem
# (delay and rate in one qdisc); where the kernel has no netem, falls back to tbf (rate only:
# its "latency" bounds the queue, it adds no delay). Sets SHAPED to "netem" or "tbf: <netem error>".
shape() {
    local ns=$1 dev=$2 rate=$3 delay=$4 err
    if err=$(ip netns exec "$ns" tc qdisc replace dev "$dev" root netem delay "$delay" rate "$rate" limit 10000 2>&1); then
        SHAPED=netem
        return 0
    fi
    # Burst: at least 10 ms worth of the rate and never below a 64 KiB GSO packet.
    local bits burst
    bits=$(rate_bits "$rate")
    burst=$((bits / 8 / 100))
    [ "$burst" -ge 131072 ] || burst=131072
    ip netns exec "$ns" tc qdisc replace dev "$dev" root tbf rate "$rate" burst "$burst" latency 100ms
    SHAPED="tbf: netem unavailable (${err//$'\n'/ })"
}

# rate_bits RATE: a tc rate (160mbit, 20mbps) in bits per second.
rate_bits() {
    local r=$1 num unit mult
    num=${r%%[a-z]*}; unit=${r#"$num"}
    case $unit in
        bit) mult=1 ;; kbit) mult=1000 ;; mbit) mult=1000000 ;; gbit) mult=1000000000 ;; tbit) mult=1000000000000 ;;
        bps) mult=8 ;; kbps) mult=8000 ;; mbps) mult=8000000 ;; gbps) mult=8000000000 ;; tbps) mult=8000000000000 ;;
    esac
    awk -v n="$num" -v m="$mult" 'BEGIN { printf "%.0f\n", n * m }'
}

# ---------------------------------------------------------------- up

# veth_to_bridge NS IFNAME BRIDGE PORT: a veth from NS (named IFNAME there) to BRIDGE in the
# fabric namespace (port PORT), both ends up, IPv6 off on the host end.
veth_to_bridge() {
    local ns=$1 ifname=$2 bridge=$3 port=$4
    ip -n "$ns_fabric" link add "$port" type veth peer name "$ifname" netns "$ns"
    ip -n "$ns_fabric" link set "$port" master "$bridge" up
    ip -n "$ns" link set "$ifname" up
}

# new_ns NS: a network namespace with lo up, IPv6 off (no stray neighbour discovery on the
# links whose counters tests read), loose reverse-path filtering and strict ARP replies (a
# host with several interfaces answers for an address only on the interface that has it).
new_ns() {
    ip netns add "$1"
    record ns "$1"
    ip -n "$1" link set lo up
    ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
        net.ipv4.conf.all.rp_filter=2 net.ipv4.conf.default.rp_filter=2 \
        net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
}

# new_uts NS: a persistent UTS namespace whose hostname is NS, bound to STATE/uts/NS.
new_uts() {
    local f=$state/uts/$1
    : >"$f"
    unshare --uts="$f" hostname "$1"
    record uts "$f"
}

write_hosts_file() {
    {
        echo "127.0.0.1 localhost"
        echo "$ctl_ip $name-controller controller"
        echo "$net.0.4 $name-mgmt mgmt"
        local h r
        for h in "${hosts[@]}"; do
            echo "$(mgmt_ip "$h") $name-$h $h"
            if [[ $h == client* ]]; then
                for r in $(seq 0 $((rails - 1))); do echo "$(rail_ip "$h" "$r") $name-$h-rail$r"; done
            fi
        done
    } >"$hosts_file"
}

build_network() {
    new_ns "$ns_fabric"
    ip -n "$ns_fabric" link add mgmt type bridge
    ip -n "$ns_fabric" link set mgmt up

    # The controller's leg, the only interface in the root namespace.
    ip link add "$ctl_if" type veth peer name ctl netns "$ns_fabric"
    record link "$ctl_if"
    sysctl -qw "net.ipv6.conf.$ctl_if.disable_ipv6=1"
    ip addr add "$ctl_ip/24" dev "$ctl_if"
    ip link set "$ctl_if" up
    ip -n "$ns_fabric" link set ctl master mgmt up

    local h ns r
    for h in "${hosts[@]}"; do
        ns=$name-$h
        new_ns "$ns"
        new_uts "$ns"
        if [ ! -d /etc/netns ]; then
            mkdir /etc/netns
            record etc-netns /etc/netns
        fi
        mkdir "/etc/netns/$ns"
        record etc "/etc/netns/$ns"
        cp "$hosts_file" "/etc/netns/$ns/hosts"
        veth_to_bridge "$ns" mgmt0 mgmt "$h-m"
        ip -n "$ns" addr add "$(mgmt_ip "$h")/24" dev mgmt0
    done

    # The backend's link is the "cloud" link: shaped both ways, on the backend's interface
    # (downloads) and on its bridge port (uploads).
    shape "$name-backend" mgmt0 "$backend_rate" "$backend_delay"
    backend_shape=$SHAPED
    shape "$ns_fabric" backend-m "$backend_rate" "$backend_delay"

    [ "$rails" -gt 0 ] || return 0
    if [ "$fabric" = fat-tree ]; then
        ip -n "$ns_fabric" link add fat type bridge
        ip -n "$ns_fabric" link set fat up
    else
        new_ns "$ns_spine"
        ip netns exec "$ns_spine" sysctl -qw net.ipv4.ip_forward=1
    fi
    for r in $(seq 0 $((rails - 1))); do
        if [ "$fabric" = rail ]; then
            ip -n "$ns_fabric" link add "rail$r" type bridge
            ip -n "$ns_fabric" link set "rail$r" up
            veth_to_bridge "$ns_spine" "r$r" "rail$r" "spine-r$r"
            ip -n "$ns_spine" addr add "$net.$((10 + r)).1/24" dev "r$r"
            shape "$ns_spine" "r$r" "$spine_rate" "$spine_delay"
            spine_shape=$SHAPED
            shape "$ns_fabric" "spine-r$r" "$spine_rate" "$spine_delay"
        fi
    done
    local c ip o
    for c in $(seq "$clients"); do
        ns=$name-client$c
        for r in $(seq 0 $((rails - 1))); do
            veth_to_bridge "$ns" "rail$r" "$([ "$fabric" = rail ] && echo "rail$r" || echo fat)" "client$c-r$r"
            ip=$(rail_ip "client$c" "$r")
            ip -n "$ns" addr add "$ip/24" dev "rail$r"
            # Traffic from rail r's address leaves on rail r: straight to rail r's subnet, to the
            # other rails through the spine (rail-optimised) or on the one switch (fat-tree).
            ip -n "$ns" rule add from "$ip" table $((100 + r)) pref $((1000 + r))
            ip -n "$ns" route add "$net.$((10 + r)).0/24" dev "rail$r" src "$ip" table $((100 + r))
            for o in $(seq 0 $((rails - 1))); do
                [ "$o" != "$r" ] || continue
                if [ "$fabric" = rail ]; then
                    ip -n "$ns" route add "$net.$((10 + o)).0/24" via "$net.$((10 + r)).1" dev "rail$r" src "$ip" table $((100 + r))
                else
                    ip -n "$ns" route add "$net.$((10 + o)).0/24" dev "rail$r" src "$ip" table $((100 + r))
                fi
            done
        done
    done
}

make_ssh() {
    local d=$state/ssh h ns key
    # sshd's privilege separation directory (sshd -t checks it too); the ssh service makes it
    # when it starts, which it never does on a machine whose sshd is not in use.
    if [ ! -d /run/sshd ]; then
        mkdir -m 0755 /run/sshd
        record sshd-dir /run/sshd
    fi
    mkdir -p "$d/hosts"
    ssh-keygen -q -t ed25519 -N '' -C "railbench-cluster-$name" -f "$d/id_ed25519"
    cp "$d/id_ed25519.pub" "$d/authorized_keys"
    : >"$d/known_hosts"
    {
        for h in "${hosts[@]}"; do
            printf 'Host %s %s %s\n    HostName %s\n    HostKeyAlias %s\n' \
                "$name-$h" "$h" "$(mgmt_ip "$h")" "$(mgmt_ip "$h")" "$name-$h"
        done
        cat <<EOF
Host *
    User root
    Port 22
    IdentityFile $d/id_ed25519
    IdentitiesOnly yes
    UserKnownHostsFile $d/known_hosts
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    CheckHostIP no
    BatchMode yes
    ConnectTimeout 5
    ControlMaster no
    ControlPath none
    LogLevel ERROR
EOF
    } >"$ssh_config"
    for h in "${hosts[@]}"; do
        ns=$name-$h
        key=$d/hosts/$ns/ssh_host_ed25519_key
        mkdir -p "$d/hosts/$ns"
        ssh-keygen -q -t ed25519 -N '' -C "$ns" -f "$key"
        echo "$ns $(cut -d' ' -f1,2 "$key.pub")" >>"$d/known_hosts"
        cat >"$d/hosts/$ns/sshd_config" <<EOF
ListenAddress $(mgmt_ip "$h"):22
HostKey $key
PidFile none
AuthorizedKeysFile $d/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
X11Forwarding no
AllowAgentForwarding no
AllowTcpForwarding no
PrintMotd no
MaxStartups 64:30:128
MaxSessions 64
SetEnv PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
Subsystem sftp internal-sftp
EOF
        /usr/sbin/sshd -t -f "$d/hosts/$ns/sshd_config" || die "sshd rejects $d/hosts/$ns/sshd_config"
    done
}

# start_sshds: an sshd on every host. Each host's sshd (and so every ssh session, mpirun daemon
# and Ansible task there) sees its own disk, STATE/hostdisk/HOST, at STATE/local, and a /dev/shm
# of its own (Open MPI's shared-memory segments), as real hosts have.
start_sshds() {
    local h
    for h in "${hosts[@]}"; do
        mkdir -p "$state/hostdisk/$h"
        # shellcheck disable=SC2016 # expanded by the inner sh, from its arguments
        start_daemon "$h" sshd sh -c 'mount --bind "$1" "$2" && mount -t tmpfs -o mode=1777 shm /dev/shm &&
            exec /usr/sbin/sshd -D -e -f "$3"' sshd \
            "$state/hostdisk/$h" "$state/local" "$state/ssh/hosts/$name-$h/sshd_config"
    done
    for h in "${hosts[@]}"; do wait_tcp "$(mgmt_ip "$h")" 22 "sshd on $h"; done
}

# nginx_conf HOST DIR BODY: writes DIR/nginx.conf whose http block ends with BODY and
# checks it on HOST (the check binds the listen addresses, which exist only there).
nginx_conf() {
    local host=$1 dir=$2 body=$3
    mkdir -p "$dir/tmp"
    # Workers stay root (cluster.sh runs as root): no state file has to be readable by nobody.
    cat >"$dir/nginx.conf" <<EOF
user root root;
worker_processes 2;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    default_type application/octet-stream;
$body
}
EOF
    in_host "$host" nginx -t -q -p "$dir" -c "$dir/nginx.conf" || die "nginx rejects $dir/nginx.conf"
}

start_servers() {
    local b=$state/backend t=$state/tier limit=
    mkdir -p "$origin_root" "$t/cache"
    [ -z "$origin_rate" ] || limit="limit_rate $origin_rate;"
    nginx_conf backend "$b" "    server {
        listen $backend_ip:80;
        root $origin_root;
        location / {
            dav_methods PUT DELETE;
            create_full_put_path on;
            dav_access user:rw group:r all:r;
            client_max_body_size 0;
            $limit
        }
    }"
    nginx_conf tier "$t" "    proxy_cache_path $t/cache levels=1:2 keys_zone=rbtier:32m max_size=64g inactive=30d use_temp_path=off;
    upstream backend { server $backend_ip:80; keepalive 32; }
    server {
        listen $tier_ip:80;
        location / {
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection \"\";
            proxy_cache rbtier;
            proxy_cache_key \$uri;
            proxy_cache_valid 200 30d;
            proxy_cache_lock on;
            add_header X-Cache-Status \$upstream_cache_status always;
        }
    }"
    start_daemon backend nginx nginx -p "$b" -c "$b/nginx.conf" -g 'daemon off;'
    start_daemon tier nginx nginx -p "$t" -c "$t/nginx.conf" -g 'daemon off;'
    wait_tcp "$backend_ip" 80 "nginx origin"
    wait_tcp "$tier_ip" 80 "nginx tier"

    # s3rver arrives with the object loader's npm lock file; start it when it is installed.
    local s3=$here/tests/servers/node_modules/.bin/s3rver
    if [ -x "$s3" ]; then
        mkdir -p "$b/s3"
        start_daemon backend s3rver "$s3" --address "$backend_ip" --port 4568 --directory "$b/s3" --silent --configure-bucket railbench
        wait_tcp "$backend_ip" 4568 "s3rver"
    fi
}

write_mpi_and_ansible() {
    local c slots=$(( rails > 2 ? rails : 2 ))
    : >"$hostfile"
    for c in $(seq "$clients"); do echo "$name-client$c slots=$slots" >>"$hostfile"; done
    local btl_if=mgmt0
    [ "$rails" -eq 0 ] || btl_if=$(seq -s, -f 'rail%g' 0 $((rails - 1)))
    local rail_ifaces h
    rail_ifaces=$(seq -s, -f 'rail%g' 0 $((rails - 1)))
    mkdir -p "$state/ansible/tmp"
    {
        echo "---"
        echo "# In-a-box inventory written by scripts/cluster.sh up for cluster $name; see ansible/inventory/example/."
        echo "# The railbench values are in group_vars/clients.yml beside this file."
        echo "all:"
        echo "  vars:"
        echo "    ansible_user: root"
        echo "    ansible_python_interpreter: /usr/bin/python3"
        echo "    ansible_ssh_common_args: -F $ssh_config"
        echo "    ansible_ssh_args: -o ControlMaster=no"
        echo "    ansible_remote_tmp: $state/ansible/tmp"
        echo "  children:"
        echo "    clients:"
        echo "      hosts:"
        for c in $(seq "$clients"); do echo "        $name-client$c: {ansible_host: $(mgmt_ip "client$c")}"; done
        for h in tier backend; do
            echo "    $h:"
            echo "      hosts:"
            echo "        $name-$h: {ansible_host: $(mgmt_ip "$h")}"
        done
    } >"$inventory"
    # Group vars of the inventory win over the playbooks' group_vars/all.yml defaults.
    mkdir -p "$state/ansible/group_vars"
    {
        echo "---"
        echo "# railbench values for cluster $name, written by scripts/cluster.sh up."
        echo "# The hosts share this machine's filesystem: build once, run from the tree."
        echo "railbench_src_dir: $here"
        echo "railbench_controller_src: $here"
        echo "railbench_shared_fs: true"
        echo "railbench_become: false"
        echo "railbench_install: false"
        echo "railbench_bin: $here/build/railbench"
        echo "railbench_controller_bin: $here/build/railbench"
        echo "railbench_results_dir: $state/results"
        echo "railbench_mpi_rsh_agent: ssh -F $ssh_config"
        echo "railbench_mpi_oob_if: mgmt0"
        echo "railbench_mpi_btl_if: $btl_if"
        echo "railbench_rail_ifaces: \"$rail_ifaces\""
        echo "railbench_mpirun_extra_args: [--mca, btl, 'self,vader,tcp', --mca, btl_vader_single_copy_mechanism, none]"
        echo "railbench_tier_url: http://$tier_ip"
        echo "railbench_backend_url: http://$backend_ip"
        echo "railbench_endpoints: [\"http://$tier_ip/\", \"http://$backend_ip/\"]"
    } >"$state/ansible/group_vars/clients.yml"
}

config_text() {
    cat <<EOF
clients=$clients
rails=$rails
fabric=$fabric
net=$net
backend_rate=$backend_rate
backend_delay=$backend_delay
spine_rate=$spine_rate
spine_delay=$spine_delay
origin_rate=$origin_rate
EOF
}

# healthy: true if every recorded namespace exists and every recorded process runs.
healthy() {
    local kind a b _
    while read -r kind a b _; do
        case $kind in
            ns) [ -e "/run/netns/$a" ] || return 1 ;;
            pid) alive "$a" "$b" || return 1 ;;
        esac
    done <"$state/created"
}

do_up() {
    [ "$(id -u)" -eq 0 ] || die "up needs root (network namespaces, veths, sshd)"
    local tool
    for tool in ip tc nsenter unshare setsid ssh ssh-keygen nginx awk; do
        command -v "$tool" >/dev/null || die "'$tool' is missing; run scripts/deps.sh"
    done
    [ -x /usr/sbin/sshd ] || die "/usr/sbin/sshd is missing; run scripts/deps.sh"

    if [ -f "$state/config" ]; then
        local want have
        want=$(config_text)
        have=$(cat "$state/config")
        if [ -f "$state/up-complete" ] && healthy; then
            [ "$want" = "$have" ] ||
                die_usage "cluster $name is up with other options ($(tr '\n' ' ' <"$state/config")); run down first or pick another --name"
            note "cluster $name is already up"
            return 0
        fi
        note "cluster $name is partly up (an earlier up failed or a process died); removing it first"
        do_down
    fi

    # The management and rail subnets must be free on this machine.
    if grep -q "^${net//./\\.}\." <<<"$(ip -o -4 addr show | awk '{print $4}'; ip -4 route show)"; then
        die_usage "--net $net: addresses or routes in $net.0.0/16 exist on this machine already; pick another --net"
    fi
    local ns_name
    for ns_name in "$ns_fabric" "$name-tier" "$name-backend"; do
        [ ! -e "/run/netns/$ns_name" ] || die "namespace $ns_name exists but is not recorded in $state; remove it or pick another --name"
    done
    ip link show "$ctl_if" >/dev/null 2>&1 && die "interface $ctl_if exists but is not recorded in $state; pick another --name"

    umask 022
    mkdir -p "$state/log" "$state/uts" "$state/results" "$state/local"
    chmod 0755 "$state"
    : >"$state/created"
    config_text >"$state/config"
    trap up_failed EXIT
    trap 'exit 130' INT TERM
    write_hosts_file
    build_network
    ( umask 077; make_ssh )
    start_sshds
    start_servers
    write_mpi_and_ansible
    { echo "backend_shape=\"${backend_shape}\""; echo "spine_shape=\"${spine_shape:-}\""; } >"$state/shape"
    trap - EXIT INT TERM
    date -u +%FT%TZ >"$state/up-complete"
    echo "cluster $name is up; scripts/cluster.sh --name $name status"
}

# up_failed: the EXIT trap while up runs; removes what was made and exits 3.
up_failed() {
    local rc=$?
    trap - EXIT INT TERM
    note "up failed (status $rc); removing what was made"
    do_down >&2 || true
    exit 3
}

# ---------------------------------------------------------------- down

# stop_pid PID START WHAT: SIGTERM, then SIGKILL after 5 s, to PID if it is still the
# process recorded.
stop_pid() {
    local pid=$1 start=$2
    alive "$pid" "$start" || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do alive "$pid" "$start" || return 0; sleep 0.1; done
    note "$3 (pid $pid) ignored SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
}

# undo_records FILE: undoes what FILE records, newest first: processes (by PID and start time),
# then whatever else still runs in the recorded namespaces, then namespaces, links, mounts, files.
undo_records() {
    local kind a b c d
    # Processes first, newest first, each by its recorded PID and start time.
    tac "$1" | while read -r kind a b c d; do
        [ "$kind" = pid ] && stop_pid "$a" "$b" "$d on $c"
        true
    done
    # Anything still running on the hosts (ssh sessions, orted, a shell from `exec`) runs in
    # a namespace up made; it ends with the namespace. Listed by namespace, ended by PID.
    local pid left
    tac "$1" | while read -r kind a _; do
        if [ "$kind" != ns ] || [ ! -e "/run/netns/$a" ]; then continue; fi
        left=$(ip netns pids "$a" 2>/dev/null || true)
        [ -n "$left" ] || continue
        for pid in $left; do
            note "ending process $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-60)) left in $a"
            kill -TERM "$pid" 2>/dev/null || true
        done
        for _ in $(seq 50); do [ -z "$(ip netns pids "$a" 2>/dev/null)" ] && break; sleep 0.1; done
        for pid in $(ip netns pids "$a" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    done
    tac "$1" | while read -r kind a _; do
        case $kind in
            ns) [ ! -e "/run/netns/$a" ] || ip netns del "$a" ;;
            link) ! ip link show "$a" >/dev/null 2>&1 || ip link del "$a" ;;
            uts) if mountpoint -q "$a" 2>/dev/null || grep -q " $a " /proc/self/mountinfo; then umount "$a"; fi
                 rm -f "$a" ;;
            etc) rm -rf -- "$a" ;;
            etc-netns) rmdir "$a" 2>/dev/null || true ;;
            sshd-dir)
                # Every sshd on the machine needs it (another cluster's, the system's): remove
                # it only when no sshd runs any more.
                if ! pgrep -x sshd >/dev/null; then rmdir "$a" 2>/dev/null || true; fi ;;
        esac
    done
}

do_down() {
    if [ ! -f "$state/created" ]; then
        [ -d "$state" ] && [ -z "$(ls -A "$state")" ] && rmdir "$state"
        echo "cluster $name is not up (no $state/created); nothing to remove"
        return 0
    fi
    # Slurm's hosts and daemons first: they sit on the bridges and namespaces below.
    # The clients' CephFS mounts before their sshds and slurmds: unmounted, not cut off.
    cephfs_layout
    if [ -s "$cephfs_list" ]; then cephfs_umount >/dev/null; fi
    if [ -f "$state/slurm/created" ]; then slurm_layout; do_slurm_down; fi
    undo_records "$state/created"
    rm -rf -- "$state"
    if [ "$(dirname "$state")" = /run/railbench-cluster ]; then rmdir /run/railbench-cluster 2>/dev/null || true; fi
    echo "cluster $name is down"
}

# ---------------------------------------------------------------- status

do_status() {
    if [ ! -f "$state/config" ]; then
        echo "cluster $name: down (no state in $state)"
        return 1
    fi
    local ok=0 h ns c r
    if [ -f "$state/up-complete" ] && healthy; then
        echo "cluster $name: up since $(cat "$state/up-complete"), state $state"
    else
        echo "cluster $name: NOT fully up (a recorded namespace or process is missing), state $state"
        ok=1
    fi
    backend_shape=unknown spine_shape=unknown
    if [ -f "$state/shape" ]; then
        # shellcheck source=/dev/null
        . "$state/shape"
    fi
    printf '%-16s %-16s %-34s %s\n' HOST HOSTNAME ADDRESSES SERVICES
    printf '%-16s %-16s %-34s %s\n' controller "(this machine)" "$ctl_if $ctl_ip" "ansible, ssh -F $ssh_config"
    for h in "${hosts[@]}"; do
        ns=$name-$h
        local addrs hn svcs=() kind a b host svc
        hn=$(in_host "$h" hostname 2>/dev/null || echo '?')
        addrs=$(ip -n "$ns" -o -4 addr show 2>/dev/null | awk '$2 != "lo" {printf "%s%s %s", sep, $2, $4; sep=", "}')
        while read -r kind a b host svc; do
            if [ "$kind" != pid ] || [ "$host" != "$h" ]; then continue; fi
            if alive "$a" "$b"; then svcs+=("$svc($a)"); else svcs+=("$svc(DEAD)"); ok=1; fi
        done <"$state/created"
        printf '%-16s %-16s %-34s %s\n' "$ns" "$hn" "$addrs" "${svcs[*]}"
    done
    echo
    echo "services:"
    echo "  origin  http://$backend_ip/  (nginx, files under $origin_root; PUT and DELETE allowed${origin_rate:+; limit_rate $origin_rate per connection})"
    grep -q ' backend s3rver$' "$state/created" &&
        echo "  s3      http://$backend_ip:4568/  (s3rver, bucket railbench; access key S3RVER, secret S3RVER)"
    echo "  tier    http://$tier_ip/  (nginx proxy_cache of the origin; header X-Cache-Status)"
    cephfs_layout
    if [ -s "$cephfs_list" ]; then
        local cf=() fsvc fpid fstart where
        while read -r h fsvc fpid fstart; do
            where=$h
            [ "$fsvc" = sshd ] || where=$h/$fsvc
            if alive "$fpid" "$fstart"; then cf+=("$where(ceph-fuse $fpid)"); else cf+=("$where(ceph-fuse DEAD)"); ok=1; fi
        done <"$cephfs_list"
        echo "  cephfs  $cephfs_mnt on ${cf[*]}, from Ceph on $stor_ip (rail 0)"
    fi
    echo "links:"
    echo "  backend mgmt0 <-> mgmt bridge, each way: $(tc -n "$name-backend" qdisc show dev mgmt0 root 2>/dev/null | sed 's/^qdisc //;s/ root refcnt [0-9]*//')"
    case $backend_shape in
        netem) echo "    netem adds $backend_delay one way and limits to $backend_rate" ;;
        *) echo "    rate limited to $backend_rate by tbf; NO delay added: ${backend_shape#tbf: } (tbf's latency bounds its queue only)" ;;
    esac
    if [ "$rails" -gt 0 ]; then
        if [ "$fabric" = rail ]; then
            echo "  rails: $rails bridges rail0..rail$((rails - 1)) ($net.10.0/24 ...); cross-rail traffic goes through $ns_spine"
            echo "    spine link each way: $(tc -n "$ns_spine" qdisc show dev r0 root 2>/dev/null | sed 's/^qdisc //;s/ root refcnt [0-9]*//')"
            case $spine_shape in
                netem) echo "    netem adds $spine_delay per spine link and limits to $spine_rate" ;;
                *) echo "    rate limited to $spine_rate by tbf; NO delay added: ${spine_shape#tbf: }" ;;
            esac
        else
            echo "  rails: $rails interfaces per client, all on one bridge (fat-tree): no spine, no limit"
        fi
    fi
    echo "files:"
    echo "  ssh config  $ssh_config   (ssh -F $ssh_config ${name}-client1)"
    echo "  hostfile    $hostfile"
    echo "  inventory   $inventory"
    echo "  hosts       $hosts_file   (/etc/hosts inside every host)"
    echo "mpirun:"
    echo "  scripts/cluster.sh --name $name mpirun -np $((clients * 2)) build/railbench fabric counters --duration 5s"
    [ "$rails" -eq 0 ] ||
        echo "  scripts/cluster.sh --name $name mpirun --net rails -np $((clients * rails)) scripts/rail-bind.sh build/railbench ..."
    return "$ok"
}

# ---------------------------------------------------------------- main

load_config() {
    if [ ! -f "$state/config" ] || [ ! -f "$state/up-complete" ]; then
        die "cluster $name is not up (no state in $state); run: cluster.sh --name $name up"
    fi
    # shellcheck source=/dev/null
    . "$state/config"
    load_layout
}

case $cmd in
    up) load_layout; do_up ;;
    down)
        if [ -f "$state/config" ]; then
            # shellcheck source=/dev/null
            . "$state/config"
        fi
        load_layout
        do_down ;;
    status)
        if [ -f "$state/config" ]; then
            # shellcheck source=/dev/null
            . "$state/config"
        fi
        load_layout
        do_status ;;
    exec)
        [ "${#args[@]}" -ge 2 ] || die_usage "exec needs HOST and a command, e.g. exec client1 hostname"
        load_config
        host_ns "${args[0]}" >/dev/null || die_usage "exec: unknown host '${args[0]}': expected one of ${hosts[*]}"
        h=$(host_ns "${args[0]}"); h=${h#"$name"-}
        exec ip netns exec "$name-$h" nsenter --uts="$state/uts/$name-$h" -- "${args[@]:1}" ;;
    slurm) slurm_main "${args[@]}" ;;
    cephfs) cephfs_main "${args[@]}" ;;
    ssh)
        [ "${#args[@]}" -ge 1 ] || die_usage "ssh needs HOST, e.g. ssh client1 hostname"
        load_config
        host_ns "${args[0]}" >/dev/null || die_usage "ssh: unknown host '${args[0]}': expected one of ${hosts[*]}"
        exec ssh -F "$ssh_config" "$(host_ns "${args[0]}")" "${args[@]:1}" ;;
    mpirun)
        load_config
        netsel=mgmt
        if [ "${args[0]:-}" = --net ]; then
            netsel=${args[1]:-}
            args=("${args[@]:2}")
        fi
        case $netsel in
            mgmt) btl_if=mgmt0 ;;
            rails)
                [ "$rails" -gt 0 ] || die_usage "--net rails: cluster $name has no rails (up --rails R)"
                btl_if=$(seq -s, -f 'rail%g' 0 $((rails - 1))) ;;
            *) die_usage "--net '$netsel': expected mgmt or rails" ;;
        esac
        [ "${#args[@]}" -ge 1 ] || die_usage "mpirun needs arguments, e.g. mpirun -np 4 build/railbench fabric counters"
        # shellcheck disable=SC2054 # the commas belong to MCA values
        mpi=(mpirun --hostfile "$hostfile"
             --mca plm_rsh_agent "ssh -F $ssh_config"
             --mca oob_tcp_if_include mgmt0
             --mca btl self,vader,tcp --mca btl_tcp_if_include "$btl_if"
             --mca btl_vader_single_copy_mechanism none
             "${args[@]}")
        note "on $name-client1: ${mpi[*]}"
        # mpirun, and with it client1's ranks, in a session of its own. The kernel's autogroup scheduler
        # shares the CPU equally between sessions, and every other host's ranks run in the session of
        # their ssh login; left in the caller's session, client1's ranks would share one part with whatever
        # else the caller runs (a test beside this one, a build) and measure slower than the other hosts'
        # (fabric check named healthy links out of client1 one-way). Started in the background of this
        # script (no job control), mpirun is no process-group leader, so setsid needs no fork and $! is
        # mpirun's PID; stdin stays the caller's, SIGINT/TERM/HUP to this script are passed on.
        # With CephFS mounted, in client1's sshd mount namespace (where its mount is), as on the other clients.
        enter=(ip netns exec "$name-client1")
        cephfs_layout
        if [ -s "$cephfs_list" ]; then
            spid=$(sshd_pid client1) || die "cephfs: the sshd of client1 is not running (cluster.sh status)"
            # Under the sshd's root and in this directory, as in_mountns (a chrooted machine's paths stay its own).
            enter=(nsenter --net="/run/netns/$name-client1" --mount="/proc/$spid/ns/mnt" --root="/proc/$spid/root"
                --wd="$PWD")
        fi
        "${enter[@]}" nsenter --uts="$state/uts/$name-client1" -- \
            env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 setsid "${mpi[@]}" <&0 &
        mpirun_pid=$!
        trap 'kill -INT "$mpirun_pid" 2>/dev/null || true' INT
        trap 'kill -TERM "$mpirun_pid" 2>/dev/null || true' TERM
        trap 'kill -HUP "$mpirun_pid" 2>/dev/null || true' HUP
        rc=0
        while :; do
            wait "$mpirun_pid" && rc=0 || rc=$?
            kill -0 "$mpirun_pid" 2>/dev/null || break
        done
        exit "$rc" ;;
    path)
        [ "${#args[@]}" -eq 1 ] || die_usage "path needs one of: state ssh_config hostfile inventory hosts origin_root tier_url backend_url slurm_conf local cephfs"
        case ${args[0]} in tier_url|backend_url) load_config ;; *) load_layout ;; esac
        slurm_layout
        case ${args[0]} in
            state) echo "$state" ;;
            ssh_config) echo "$ssh_config" ;;
            hostfile) echo "$hostfile" ;;
            inventory) echo "$inventory" ;;
            hosts) echo "$hosts_file" ;;
            origin_root) echo "$origin_root" ;;
            tier_url) echo "http://$tier_ip" ;;
            backend_url) echo "http://$backend_ip" ;;
            slurm_conf) echo "$slurm_conf" ;;
            local) echo "$state/local" ;;
            cephfs) cephfs_layout; echo "$cephfs_mnt" ;;
            *) die_usage "path '${args[0]}': expected state, ssh_config, hostfile, inventory, hosts, origin_root, tier_url, backend_url, slurm_conf, local or cephfs" ;;
        esac ;;
esac
