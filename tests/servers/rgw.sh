#!/usr/bin/env bash
# A single-host Ceph RGW (S3) from Debian's packages: one monitor, one memstore OSD and radosgw on 127.0.0.1.
#
#   rgw.sh start [DIR]  starts it under DIR (default: a new temporary directory), creates an S3 user with
#                       generated keys, and prints shell-sourceable lines: RGW_DIR, RGW_ENDPOINT,
#                       RGW_VHOST_ENDPOINT (for --virtual-host: BUCKET.localhost, which libcurl resolves
#                       to loopback itself), RGW_PIDS, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.
#   rgw.sh env DIR      prints those lines again.
#   rgw.sh bucket DIR NAME [public-read]
#                       creates bucket NAME as that user (signed with SigV4 by curl, keys passed on stdin);
#                       public-read adds a bucket policy that lets anyone GET its objects and list it unsigned.
#   rgw.sh stop DIR     stops the processes it started (by PID, from DIR/pids) and removes DIR.
#
# Everything (config, monitor store, logs, sockets) lives under DIR; the cluster runs without cephx (S3
# users still sign every request with SigV4). As root, the daemons drop to the ceph user when it exists.
# RGW_MEMSTORE_BYTES sets the OSD's memory store size (default 4 GiB; memory is used only as objects arrive).
# RB_CEPH_ADDR binds the monitor, the OSD and RGW (and so cephfs.sh's MDS) to another IPv4 address of this host
# instead of 127.0.0.1: the address of the leg `cluster.sh cephfs addr` puts on a rail of the cluster in a box.
set -euo pipefail

die() { echo "rgw.sh: $1" >&2; exit "${2:-3}"; }

usage() { die "usage: rgw.sh start [DIR] | env DIR | bucket DIR NAME [public-read] | stop DIR" 2; }

free_port() {
    python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/free-port.py" "$@"
}

# port_open PORT: something accepts TCP connections on $addr:PORT.
port_open() { (exec 3<>"/dev/tcp/$addr/$1") 2>/dev/null; }

# alive PID: the process runs: it exists and has not exited (an orphaned daemon that has exited stays a zombie,
# state Z, until PID 1 collects it, seconds on some machines).
alive() { kill -0 "$1" 2>/dev/null && ! grep -qs '^State:[[:space:]]*[ZX]' "/proc/$1/status"; }

# stop_pids DIR: TERM each PID in DIR/pids, newest first, and wait for it to end (KILL after 10 s) before the next:
# the monitor goes last, so the OSD's "mark me down" on its way out is answered at once (with the monitor gone
# first, the OSD waited osd_mon_shutdown_timeout, 5 s, for an answer).
stop_pids() {
    local dir=$1 pid pids=()
    [ -f "$dir/pids" ] || return 0
    mapfile -t pids < <(tac "$dir/pids")
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 100); do alive "$pid" || break; sleep 0.05; done
        kill -9 "$pid" 2>/dev/null || true
    done
    rm -f "$dir/pids"
}

# launch NAME CMD...: starts a daemon in the foreground mode in the background, records its PID.
launch() {
    local name=$1; shift
    "$@" >"$D/log/$name.out" 2>&1 &
    echo $! >>"$D/pids"
    LAST_PID=$!
}

# await WHAT PID SECONDS CHECK...: waits until CHECK succeeds; fails if PID dies or the time runs out.
await() {
    local what=$1 pid=$2 limit=$3 end; shift 3
    end=$((SECONDS + limit))
    while [ "$SECONDS" -lt "$end" ]; do
        "$@" >/dev/null 2>&1 && return 0
        alive "$pid" || die "$what exited during start-up (logs: $D/log)"
        sleep 0.2
    done
    die "$what not ready after ${limit}s (logs: $D/log)"
}

# retry WHAT SECONDS CMD...: runs CMD until it succeeds (its output on stdout); after SECONDS, dies naming WHAT and
# CMD's last error line. Right after start-up the monitor can answer one command and refuse the next for a
# moment ("Error EPERM: problem getting command descriptions from mon."), more so with a second cluster starting
# beside it; every command of the start-up goes through here, none is silently ignored.
retry() {
    local what=$1 limit=$2 end; shift 2
    end=$((SECONDS + limit))
    until "$@" 2>"$D/log/retry.err"; do
        [ "$SECONDS" -lt "$end" ] || die "$what failed for ${limit}s: $(tail -n 1 "$D/log/retry.err") (logs: $D/log)"
        sleep 0.5
    done
}

# answers PORT: an HTTP server answers on $addr:PORT (any status: RGW answers an anonymous GET / with 200).
answers() { [ "$(curl -s -o /dev/null -m 5 -w '%{http_code}' "http://$addr:$1/")" != 000 ]; }

# key N ALPHABET: N random characters from ALPHABET (a string of the characters allowed).
# (bash's SRANDOM: 32 bits from the kernel's getrandom each, no process started.)
key() { local s='' i; for ((i = 0; i < $1; i++)); do s+=${2:SRANDOM % ${#2}:1}; done; echo "$s"; }

print_env() {
    cat "$1/env"
}

start() {
    D=${1:-}
    if [ -z "$D" ]; then
        D=$(mktemp -d "${TMPDIR:-/tmp}/railbench-rgw.XXXXXX")
    else
        mkdir -p "$D"
        [ ! -e "$D/pids" ] || die "$D already holds a running RGW (rgw.sh stop $D first)" 2
        D=$(cd "$D" && pwd)
    fi
    for b in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph; do
        command -v "$b" >/dev/null || die "$b not found (scripts/deps.sh installs ceph-mon ceph-osd radosgw ceph-common)"
    done
    # A start that fails half way stops what it had started.
    trap '[ -f "$D/env" ] || stop_pids "$D"' EXIT
    mkdir -p "$D/log" "$D/run" "$D/mon" "$D/osd0"
    local started_ns; started_ns=$(date +%s%N)
    local mon_port rgw_port fsid user=() conf=$D/ceph.conf
    addr=${RB_CEPH_ADDR:-127.0.0.1}
    [[ $addr =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] || die "RB_CEPH_ADDR '$addr': expected an IPv4 address" 2
    [ "$addr" = 127.0.0.1 ] || grep -q " inet $addr/" <<<"$(ip -4 -o addr show)" ||
        die "RB_CEPH_ADDR $addr: no interface of this host has that address" 2
    read -r mon_port rgw_port <<<"$(free_port 2 | tr '\n' ' ')"
    fsid=$(cat /proc/sys/kernel/random/uuid)
    if [ "$(id -u)" = 0 ] && id ceph >/dev/null 2>&1; then
        user=(--setuser ceph --setgroup ceph)
    fi
    cat >"$conf" <<EOF
[global]
fsid = $fsid
mon host = [v1:$addr:$mon_port]
public addr = $addr
cluster addr = $addr
ms bind msgr2 = false
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
run dir = $D/run
admin socket = $D/run/\$name.asok
log file = $D/log/\$name.log
pid file = $D/run/\$name.pid
keyring = /dev/null
[mon]
mon data = $D/mon
mon cluster log file = $D/log/cluster.log
[osd]
osd data = $D/osd0
# The OSD's own start-up commands can reach the monitor before its monmap (and fsid) does ("wrong fsid",
# then it exits); its place in the CRUSH map is set by this script instead.
osd crush update on start = false
osd class update on start = false
osd objectstore = memstore
memstore device bytes = ${RGW_MEMSTORE_BYTES:-4294967296}
osd max object name len = 460
osd max object namespace len = 64
[client]
rgw frontends = beast endpoint=$addr:$rgw_port
rgw dns name = localhost
rgw data = $D/rgw
rgw thread pool size = 128
rgw enable usage log = false
EOF
    [ ${#user[@]} -eq 0 ] || chown -R ceph:ceph "$D"
    # A parent directory the ceph user cannot enter would stop the daemons after they drop root.
    if [ ${#user[@]} -gt 0 ] && ! runuser -u ceph -- test -w "$D"; then
        user=()
    fi

    monmaptool --create --fsid "$fsid" --addv a "[v1:$addr:$mon_port]" "$D/monmap" >/dev/null
    ceph-mon -c "$conf" -i a --mkfs --monmap "$D/monmap" "${user[@]}" >"$D/log/mon-mkfs.out" 2>&1 ||
        die "ceph-mon --mkfs failed: $(tail -n 1 "$D/log/mon-mkfs.out")"
    [ ${#user[@]} -eq 0 ] || chown -R ceph:ceph "$D"
    launch mon ceph-mon -c "$conf" -i a -f "${user[@]}"
    local mon_pid=$LAST_PID
    # Each ceph command costs about half a second of CPU (a Python start): wait for the port first.
    await "ceph-mon (monitor on $addr:$mon_port)" "$mon_pid" 60 port_open "$mon_port"
    await "ceph-mon (monitor on $addr:$mon_port)" "$mon_pid" 60 ceph -c "$conf" --connect-timeout 2 mon stat

    local osd_uuid osd_id
    osd_uuid=$(cat /proc/sys/kernel/random/uuid)
    # osd new with the same UUID gives the same id, and the CRUSH command is idempotent: a retry cannot make a
    # second OSD or host. One command (each ceph command costs a second) places the OSD and makes what its location
    # names: the host bucket localhost under root default.
    osd_id=$(retry "ceph osd new" 60 ceph -c "$conf" --connect-timeout 5 osd new "$osd_uuid")
    retry "ceph osd crush add" 60 ceph -c "$conf" --connect-timeout 5 osd crush add "osd.$osd_id" 1.0 root=default \
        host=localhost >/dev/null
    ceph-osd -c "$conf" -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" "${user[@]}" >"$D/log/osd-mkfs.out" 2>&1 ||
        die "ceph-osd --mkfs failed: $(tail -n 1 "$D/log/osd-mkfs.out")"
    launch osd ceph-osd -c "$conf" -i "$osd_id" -f "${user[@]}"
    local osd_pid=$LAST_PID
    # The monitor logs the OSD's boot when it marks it up; then one command confirms it.
    await "ceph-osd (osd.$osd_id up)" "$osd_pid" 120 grep -q "osd\.$osd_id .* boot" "$D/log/cluster.log"
    await "ceph-osd (osd.$osd_id up)" "$osd_pid" 120 sh -c "ceph -c '$conf' --connect-timeout 5 osd stat -f json | grep -q '\"num_up_osds\":1'"

    mkdir -p "$D/rgw"
    [ ${#user[@]} -eq 0 ] || chown ceph:ceph "$D/rgw"
    launch rgw radosgw -c "$conf" -n client.rgw -f "${user[@]}"
    local rgw_pid=$LAST_PID
    # Listening is not answering: radosgw opens its port, then still sets up its pools; wait for an HTTP reply.
    await "radosgw (S3 on $addr:$rgw_port)" "$rgw_pid" 180 answers "$rgw_port"

    local id secret
    id=RB$(key 18 ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789)
    secret=$(key 40 ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789)
    retry "radosgw-admin user create" 60 radosgw-admin -c "$conf" user create --uid railbench --display-name railbench \
        --access-key "$id" --secret-key "$secret" >/dev/null
    local ready_ms=$((($(date +%s%N) - started_ns) / 1000000))
    umask 077
    cat >"$D/env" <<EOF
RGW_DIR=$D
RGW_ENDPOINT=http://$addr:$rgw_port
RGW_VHOST_ENDPOINT=http://localhost:$rgw_port
RGW_PORT=$rgw_port
RGW_PIDS="$mon_pid $osd_pid $rgw_pid"
RGW_START_MS=$ready_ms
AWS_ACCESS_KEY_ID=$id
AWS_SECRET_ACCESS_KEY=$secret
EOF
    print_env "$D"
}

# s3_curl DIR CURL-ARGS...: curl signed with SigV4 as DIR's user; the keys go to curl on stdin, not argv.
s3_curl() {
    local dir=$1; shift
    # shellcheck disable=SC1091
    . "$dir/env"
    printf 'user = "%s:%s"\n' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" |
        curl -sS -K - --aws-sigv4 aws:amz:us-east-1:s3 -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
            -o "$dir/log/last-reply.xml" -w '%{http_code}' "$@"
}

# bucket DIR NAME [public-read]: creates the bucket; exit 3 with the server's reply when it refuses.
bucket() {
    local dir=$1 name=$2 acl=${3:-} code
    [ -f "$dir/env" ] || die "$dir/env: no RGW started there" 2
    [ -z "$acl" ] || [ "$acl" = public-read ] || die "bucket $name: unknown option \"$acl\" (expected public-read)" 2
    code=$(s3_curl "$dir" -X PUT "$(sed -n 's/^RGW_ENDPOINT=//p' "$dir/env")/$name")
    [ "$code" = 200 ] || die "creating bucket $name: HTTP $code $(cat "$dir/log/last-reply.xml")"
    [ -n "$acl" ] || return 0
    printf '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::%s/*"]},{"Effect":"Allow","Principal":"*","Action":["s3:ListBucket"],"Resource":["arn:aws:s3:::%s"]}]}' \
        "$name" "$name" >"$dir/log/policy-$name.json"
    code=$(s3_curl "$dir" -X PUT --data-binary "@$dir/log/policy-$name.json" \
        "$(sed -n 's/^RGW_ENDPOINT=//p' "$dir/env")/$name?policy=")
    [ "$code" = 200 ] || [ "$code" = 204 ] || die "bucket policy for $name: HTTP $code $(cat "$dir/log/last-reply.xml")"
}

case ${1:-} in
bucket) { [ $# -ge 3 ] && [ $# -le 4 ]; } || usage; bucket "$2" "$3" "${4:-}" ;;
start) [ $# -le 2 ] || usage; start "${2:-}" ;;
env) [ $# -eq 2 ] || usage; [ -f "$2/env" ] || die "$2/env: no RGW started there" 2; print_env "$2" ;;
stop)
    [ $# -eq 2 ] || usage
    [ -f "$2/ceph.conf" ] || die "$2: not an rgw.sh directory (no ceph.conf)" 2
    stop_pids "$2"
    rm -rf "$2"
    ;;
*) usage ;;
esac
