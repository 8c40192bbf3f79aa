#!/usr/bin/env bash
# needs: ceph netns root
# CephFS in the cluster in a box: the single-host Ceph of tests/servers/cephfs.sh bound to a leg of this machine on
# rail 0 (cluster.sh cephfs addr), mounted with ceph-fuse on both clients in their own network and sshd mount
# namespaces (cluster.sh cephfs mount), and `load train file:///...` from 2 hosts reading one shared tree: each
# sample once per epoch across the hosts, bytes exact and verified, the clients' rail 0 counters (railbench's and
# /sys's) and the leg's carrying the data, the management network not; unmount by PID; with Slurm up, a mount for
# each slurmd too and load train under srun; down with the mounts up; bad input.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/cluster_lib.sh"
[ "$(id -u)" = 0 ] || fail "needs root (network namespaces, FUSE)"
N=256
S=262144
SHARE=$((N / 2 * S)) # one host's share of an epoch

cl up --clients 2 --rails 1 --net "$NET" >/dev/null
ADDR=$(cl cephfs addr)
assert_eq "the Ceph leg on rail 0" "$NET.10.2" "$ADDR"
assert_eq "cephfs addr again: the same leg" "$ADDR" "$(cl cephfs addr)"
export RB_CEPH_ADDR=$ADDR
cephfs_up
grep -q "^mon host = \[v1:$ADDR:" "$CEPHFS_CONF" || fail "the monitor is not on the leg: $(grep '^mon host' "$CEPHFS_CONF")"
ok "the monitor listens on the leg ($ADDR)"

# The data set, written once from this machine's own mount.
mkdir "$CEPHFS_MNT/train"
"$RB" load put "file://$CEPHFS_MNT/train" --objects $N --size $S --keep -t 2 --quiet --out "$T/put" >/dev/null

# 1. Each client mounts it, in its own namespaces.
cl cephfs mount "$CEPHFS_CONF" >/dev/null
P=$(cl path cephfs)
for h in client1 client2; do
    assert_eq "$h: the shared tree through its own mount" "fuse.ceph-fuse $N" \
        "$(cl ssh "$h" "findmnt -n -o FSTYPE $P; ls $P/train | wc -l" | xargs)"
done
! mountpoint -q "$P" || fail "$P is a mount point on this machine: the clients' mounts leaked out of their namespaces"
ok "this machine has no mount at $P (each client's is its own)"
while read -r h _ pid _; do
    assert_eq "$h's ceph-fuse (pid $pid) runs in $h's network namespace" "$NAME-$h" "$(ip netns identify "$pid")"
done <"$(cl path state)/cephfs.mounts"
cl status >"$T/status" || { cat "$T/status" >&2; fail "status: not healthy with CephFS mounted"; }
grep -Eq "^  cephfs  $P on client1\(ceph-fuse [0-9]+\) client2\(ceph-fuse [0-9]+\), from Ceph on $ADDR \(rail 0\)$" "$T/status" ||
    { cat "$T/status" >&2; fail "status does not show the CephFS mounts"; }
ok "status: $(grep '^  cephfs' "$T/status")"
assert_exit 2 "a second mount" "$CL" --name "$NAME" cephfs mount "$CEPHFS_CONF"
assert_stderr_line '^cluster.sh: cephfs: already mounted on client1 client2; cephfs umount first$'

# 2. load train from 2 hosts over the rail: 2 epochs, every sample once per epoch across the hosts, verified.
leg() { cat "/sys/class/net/$NAME-stor/statistics/tx_bytes"; }
rx() { cl exec "$1" cat "/sys/class/net/$2/statistics/rx_bytes"; }
leg0=$(leg) r1=$(rx client1 rail0) r2=$(rx client2 rail0)
cl mpirun -np 2 --map-by node "$RB" load train "file://$P/train" --objects $N --sample-size $S -b 8 \
    --compute-time 1ms --epochs 2 --verify --quiet --out "$T/train" >/dev/null 2>"$T/train.err" ||
    { cat "$T/train.err" >&2; fail "load train over CephFS in the box failed"; }
R=$T/train/result.json
assert_eq "ranks on two hosts" "$NAME-client1:1 $NAME-client2:1" "$(jq -r '[.hosts[] | "\(.name):\(.ranks)"] | join(" ")' "$R")"
assert_jq "$R" "[.summary.train_epochs[] | [.samples, .requests, .bytes, .errors]] == [[$N, $N, $((N * S)), 0], [$N, $N, $((N * S)), 0]]" \
    "each epoch: $N samples, $N reads, $((N * S)) bytes, no error (verified)"
assert_jq "$R" '.summary.file.mount.kind == "fuse" and .summary.file.mount.fs_type == "fuse.ceph-fuse"' \
    "the mount recorded as FUSE (ceph-fuse)"
# Epoch 1 is cold on both clients (their mounts never read the files): each host's share crossed its rail 0.
for h in client1 client2; do
    got=$(jq --arg h "$NAME-$h" '.summary.train_epochs[0].net_bytes[] | select(.host == $h and .interface == "rail0") | .rx_bytes' "$R")
    [ "$got" -ge "$SHARE" ] || fail "$h: rail0 received $got bytes in epoch 1, less than its share $SHARE"
    ok "$h: railbench counted $got bytes in on rail0 in epoch 1 (its share: $SHARE)"
    mg=$(jq --arg h "$NAME-$h" '.summary.train_epochs[0].net_bytes[] | select(.host == $h and .interface == "mgmt0") | .rx_bytes' "$R")
    [ "$mg" -lt $((SHARE / 10)) ] || fail "$h: mgmt0 received $mg bytes in epoch 1: the data did not stay on the rail"
    ok "$h: mgmt0 received $mg bytes (MPI's only)"
done
d1=$(($(rx client1 rail0) - r1)) d2=$(($(rx client2 rail0) - r2)) dl=$(($(leg) - leg0))
[ "$d1" -ge "$SHARE" ] && [ "$d2" -ge "$SHARE" ] || fail "rail0 in /sys: client1 +$d1, client2 +$d2 bytes, each below $SHARE"
ok "rail0 in /sys: client1 +$d1, client2 +$d2 bytes"
[ "$dl" -ge $((N * S)) ] || fail "the leg sent $dl bytes, less than the data set ($((N * S)))"
ok "the Ceph leg sent $dl bytes onto rail 0 (the data set: $((N * S)))"

# 3. Unmounted on every client, each ceph-fuse stopped by its PID.
pids=$(awk '{print $3}' "$(cl path state)/cephfs.mounts")
assert_eq "cephfs umount" "cephfs unmounted in cluster $NAME" "$(cl cephfs umount)"
for h in client1 client2; do
    assert_eq "$h: no mount left" "" "$(cl ssh "$h" "findmnt -n -o FSTYPE $P || true")"
done
for pid in $pids; do ! running "$pid" || fail "ceph-fuse $pid still runs after umount"; done
ok "every ceph-fuse stopped"
cl status >"$T/status" || { cat "$T/status" >&2; fail "status: the cluster is not whole after cephfs umount"; }
! grep -q '^  cephfs' "$T/status" || fail "status still shows CephFS after umount"
ok "status: whole, no CephFS line after umount"

# 4. With Slurm up, each client's slurmd gets a mount of its own too: load train under srun from 2 hosts.
cl slurm up >/dev/null
cl cephfs mount "$CEPHFS_CONF" >/dev/null
cl status >"$T/status" || { cat "$T/status" >&2; fail "status: not healthy with CephFS mounted for Slurm"; }
grep -Eq "^  cephfs  $P on client1\(ceph-fuse [0-9]+\) client1/slurmd\(ceph-fuse [0-9]+\) client2\(ceph-fuse [0-9]+\) client2/slurmd\(ceph-fuse [0-9]+\), " \
    "$T/status" || { cat "$T/status" >&2; fail "status does not show the 4 mounts"; }
ok "status: a mount for each client's sshd and slurmd"
OMPI_MCA_btl_tcp_if_include=mgmt0 cl slurm srun --mpi=pmix -N 2 --ntasks-per-node 1 "$RB" load train "file://$P/train" \
    --objects $N --sample-size $S -b 8 --compute-time 1ms --epochs 1 --verify --quiet --out "$T/strain" \
    >/dev/null 2>"$T/strain.err" || { cat "$T/strain.err" >&2; fail "load train under srun over CephFS failed"; }
R=$T/strain/result.json
assert_eq "srun: ranks on two hosts" "$NAME-client1:1 $NAME-client2:1" "$(jq -r '[.hosts[] | "\(.name):\(.ranks)"] | join(" ")' "$R")"
assert_jq "$R" "[.summary.train_epochs[] | [.samples, .requests, .bytes, .errors]] == [[$N, $N, $((N * S)), 0]]" \
    "srun: $N samples, $N reads, $((N * S)) bytes, no error (verified)"
assert_jq "$R" '[.summary.train_epochs[0].net_bytes[] | select(.interface == "rail0") | .rx_bytes] | all(. > 0)' \
    "srun: both hosts received on rail0"
cl cephfs umount >/dev/null
cl slurm down >/dev/null

# 5. Bad input: one line, exit 2.
assert_exit 2 "a ceph.conf that is not there" "$CL" --name "$NAME" cephfs mount "$T/none.conf"
assert_stderr_line "^cluster.sh: cephfs mount: $T/none.conf: no such file"
sed 's/^mon host = .*/mon host = [v1:127.0.0.1:6789]/' "$CEPHFS_CONF" >"$T/lo.conf"
assert_exit 2 "a monitor the clients cannot reach" "$CL" --name "$NAME" cephfs mount "$T/lo.conf"
assert_stderr_line "^cluster.sh: cephfs mount: $T/lo.conf: its monitor is not on the leg $ADDR"
assert_exit 2 "an unknown cephfs command" "$CL" --name "$NAME" cephfs remount
assert_stderr_line '^cluster.sh: cephfs: expected addr, mount CONF'

# 6. down with CephFS mounted: the mounts go first, every ceph-fuse stopped, nothing of the cluster left.
cl cephfs mount "$CEPHFS_CONF" >/dev/null
pids=$(awk '{print $3}' "$(cl path state)/cephfs.mounts")
state=$(cl path state)
cl down >/dev/null
for pid in $pids; do ! running "$pid" || fail "ceph-fuse $pid still runs after down"; done
! ip link show "$NAME-stor" >/dev/null 2>&1 || fail "the leg $NAME-stor is left after down"
[ ! -e "$state" ] || fail "state $state left after down"
ok "down: every ceph-fuse stopped, the leg and the state removed"
