# shellcheck shell=bash
# Shared helpers for the cluster-in-a-box tests (tests/integration/cluster_*.sh); source after tests/lib.sh.
# Picks the cluster's name and subnet, brings the cluster down on exit, reads interface
# counters inside a host, and checks that down left nothing behind.
CL=$ROOT/scripts/cluster.sh
# Name and subnet: RB_TEST_CLUSTER_NAME and RB_TEST_CLUSTER_NET, else rbtPID and a free 10.x.
NAME=${RB_TEST_CLUSTER_NAME:-rbt$$}
NAME=${NAME:0:10}

# A /16 no interface or route on this machine uses.
NET=${RB_TEST_CLUSTER_NET:-}
[ -n "$NET" ] || for o in $(seq 200 250); do
    if ! grep -q "^10\.$o\." <<<"$(ip -o -4 addr show | awk '{print $4}'; ip -4 route show)"; then
        NET=10.$o; break
    fi
done
[ -n "$NET" ] || fail "no free 10.x.0.0/16 between 10.200 and 10.250"

cl() { "$CL" --name "$NAME" "$@"; }
cluster_cleanup() {
    local rc=$? # the test's status: cleanup exits with the $? it finds, which `down || true` would reset to 0
    "$CL" --name "$NAME" down >/dev/null 2>&1 || true
    (exit "$rc")
    cleanup
}
trap cluster_cleanup EXIT

# slurm_step OUT ERR SRUN-ARGS...: `srun --kill-on-bad-exit=1 SRUN-ARGS...` in the box, stdout to OUT, stderr to ERR;
# sets RC. Bounded: a step still running after 180 s shows each task's state and kernel wait channel and fails the
# test. A task that dies of SIGSEGV is made once more, after its stderr is shown: a rank crashed at the start of a
# step twice in this box (a null address, and Open MPI's "failed to TCP connect to a peer" or its shared-memory attach
# failing beside it), under srun --mpi=pmix only, never under mpirun; the second run must not.
slurm_step() {
    local out=$1 err=$2 pid attempt
    shift 2
    for attempt in 1 2; do
        RC=0
        cl slurm srun --kill-on-bad-exit=1 "$@" >"$out" 2>"$err" &
        pid=$!
        for _ in $(seq 1800); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            ps -eo pid,ppid,stat,wchan:28,etime,args | grep -E "[s]lurmstepd|[s]run |$RB" | grep -v grep >&2 || true
            tail -n 20 "$err" >&2
            kill "$pid" 2>/dev/null || true
            fail "srun $* still running after 180 s (its tasks above)"
        fi
        wait "$pid" || RC=$?
        if [ "$attempt" = 2 ] || ! grep -Eq '^srun: error: .*: task [0-9]+: Segmentation fault' "$err"; then
            return 0
        fi
        echo "note: a task of srun $* died of SIGSEGV; its stderr, then the step once more:"
        sed 's/^/    /' "$err"
    done
}

# counter HOST IFACE: rx_bytes + tx_bytes of IFACE as seen inside HOST (its own /sys).
counter() {
    local rx tx
    rx=$(cl exec "$1" cat "/sys/class/net/$2/statistics/rx_bytes")
    tx=$(cl exec "$1" cat "/sys/class/net/$2/statistics/tx_bytes")
    echo $((rx + tx))
}

# proc_start PID: field 22 of /proc/PID/stat, empty when PID is gone or has exited (a zombie PID 1 has not
# collected yet: state Z or X).
proc_start() {
    local s
    s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    s=${s##*) }
    awk '$1 != "Z" && $1 != "X" {print $20}' <<<"$s"
}

# check_down: nothing the cluster made is left: namespaces, the controller's veth, /etc/netns
# entries, the state directory, and every process up recorded.
check_down() {
    local state=$1 pids=$2 pid start left
    left=$(ip netns list | awk '{print $1}' | grep "^$NAME-" || true)
    [ -z "$left" ] || fail "namespaces left after down: $left"
    ! ip link show "$NAME-ctl" >/dev/null 2>&1 || fail "interface $NAME-ctl left after down"
    left=$(ip -o link show | grep -c "$NAME" || true)
    [ "$left" = 0 ] || fail "$left interfaces named after $NAME left after down"
    ! ls -d /etc/netns/"$NAME"-* >/dev/null 2>&1 || fail "/etc/netns/$NAME-* left after down"
    [ ! -e "$state" ] || fail "state directory $state left after down"
    [ -n "$pids" ] || fail "up recorded no processes"
    while read -r pid start; do
        [ "$(proc_start "$pid")" != "$start" ] || fail "process $pid recorded by up still runs after down"
    done <<<"$pids"
    ok "down left no namespace, interface, /etc/netns entry, state or process ($(wc -l <<<"$pids") recorded)"
}

# serve_on HOST COUNT BYTES URL: COUNT random objects of BYTES bytes, $T/www/d/obj-00000000 ..., served by nginx
# on port 8080 of every address of HOST (in its namespace; NGINX_PID), once client1 gets URL.
serve_on() {
    local i
    chmod 755 "$T"
    mkdir -p "$T/www/d" "$T/web/logs" "$T/web/tmp"
    for i in $(seq 0 $(($2 - 1))); do head -c "$3" /dev/urandom >"$T/www/d/obj-$(printf %08d "$i")"; done
    chmod -R a+rX "$T/www"
    cat >"$T/web/nginx.conf" <<CONF
$(nginx_user)
worker_processes 1;
pid $T/web/nginx.pid;
error_log $T/web/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $T/web/tmp/body;
    proxy_temp_path $T/web/tmp/proxy;
    fastcgi_temp_path $T/web/tmp/fastcgi;
    uwsgi_temp_path $T/web/tmp/uwsgi;
    scgi_temp_path $T/web/tmp/scgi;
    keepalive_requests 1000000;
    server { listen 8080; root $T/www; }
}
CONF
    bg ip netns exec "$NAME-$1" nginx -p "$T/web" -c "$T/web/nginx.conf" -g 'daemon off;'
    # shellcheck disable=SC2034 # the tests stop it
    NGINX_PID=$LAST_PID
    for _ in $(seq 100); do
        cl exec client1 curl -s -o /dev/null --max-time 1 "$4" && return 0
        sleep 0.1
    done
    fail "nginx on $1 did not answer $4"
}
