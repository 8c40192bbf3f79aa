#!/usr/bin/env bash
# needs: ceph mpi netns root
# load checkpoint on CephFS (rgw.sh's Ceph with ceph-mds and a ceph-fuse mount, tests/servers/cephfs.sh), then from
# 2 hosts of the cluster in a box. One host: 2 ranks of llama3-8b write exactly the formula's files (on the mount, and
# their bytes in RADOS's data pool), each fsynced (ceph-fuse's own fsync count), read them back verified with the
# ranks shifted, and a run without --keep leaves nothing. Two hosts (2 ranks each) write one checkpoint to the same
# CephFS, each rank its share, and read it back verified, each rank reading the files the other host wrote.
# Needs root (FUSE, network namespaces, sshd); runs alone (tests/integration/cluster_*.sh).
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" -eq 0 ] || fail "needs root: ceph-fuse, network namespaces, veths and sshd"
# shellcheck source=tests/cluster_lib.sh
. "$ROOT/tests/cluster_lib.sh"
command -v rados >/dev/null || fail "rados not found (scripts/deps.sh installs ceph-common)"

# The file system first: the cluster's hosts see the mount their sshd started with.
cephfs_up
SCALE=2000
LLAMA8B="4096 32 14336 128256 32 8 1 1 8 3"
# shellcheck disable=SC2086
python3 "$ROOT/tests/integration/checkpoint_formula.py" $LLAMA8B $SCALE | sort >"$T/want"
WANT=$(awk '{s += $2} END {print s}' "$T/want")
ASOK=$RGW_DIR/run/client.admin.asok
fsyncs() { ceph --admin-daemon "$ASOK" perf dump | jq .client.fsync.avgcount; }
rbmpi() { local name=$1 np=$2; shift 2
    rb_mpirun "$np" "$RB" "$@" --out "$T/$name" >"$T/$name.out" 2>"$T/$name.err" \
        || { cat "$T/$name.err" >&2; fail "$name: railbench failed"; }; }
CK=$CEPHFS_MNT/ck
mkdir -p "$CK"

# ---------------------------------------------------------------- one host, 2 ranks

f0=$(fsyncs)
rbmpi one 2 load checkpoint "file://$CK" --model llama3-8b --scale 1/$SCALE --writes 2 --reads 2 \
    --recovery-rank-shift --verify --name a --keep
for k in 1 2; do
    (cd "$CK/a/global_step$k" && find . -type f -printf '%P %s\n' | sort) >"$T/got"
    diff "$T/want" "$T/got" || fail "CephFS checkpoint $k: files and sizes differ from the formula's"
done
ok "CephFS: 16 files per checkpoint, $WANT bytes, each the formula's size"
assert_eq "ceph-fuse fsyncs: one per file written (2 x 16)" 32 $(( $(fsyncs) - f0 ))
R=$T/one/result.json
assert_jq "$R" ".summary.file.fsync == \"close\" and ([.summary.writes[], .summary.reads[]] | all(.bytes == $WANT and
    .errors == 0)) and (.summary.reads | length) == 2 and .summary.recovery_rank_shift == 1" \
    "2 writes, 2 verified reads of the whole checkpoint, ranks shifted"
# The bytes in RADOS: CephFS stripes each file over objects of its data pool (4 MiB each by default).
rados -c "$CEPHFS_CONF" -p cephfs_data ls >"$T/objects" 2>"$T/rados.err" || fail "rados ls: $(cat "$T/rados.err")"
stored=0
while read -r obj; do
    s=$(rados -c "$CEPHFS_CONF" -p cephfs_data stat "$obj" 2>>"$T/rados.err" | sed -n 's/.* size \([0-9]*\)$/\1/p')
    [ -n "$s" ] || fail "rados stat $obj: $(tail -n 1 "$T/rados.err")"
    stored=$((stored + s))
done <"$T/objects"
assert_eq "bytes in the data pool (2 checkpoints)" $((2 * WANT)) "$stored"
# --fsync none: no fsync reaches ceph-fuse; without --keep the run leaves no file and no directory.
f0=$(fsyncs)
rbmpi nf 2 load checkpoint "file://$CK" --model llama3-8b --scale 1/$SCALE --writes 1 --reads 1 --verify \
    --fsync none --name nf
assert_eq "ceph-fuse fsyncs with --fsync none" 0 $(( $(fsyncs) - f0 ))
[ ! -e "$CK/nf" ] || fail "run nf left $(find "$CK/nf" | tr '\n' ' ')"
assert_jq "$T/nf/result.json" '.summary.cleanup.deleted == 16 and .summary.dirs_removed == 2' \
    "without --keep: its 16 files and 2 directories removed"

# ---------------------------------------------------------------- 2 hosts of the cluster, 2 ranks each

assert_exit 0 "up --clients 2" cl up --clients 2 --net "$NET"
cl mpirun -np 4 "$RB" load checkpoint "file://$CK" --model llama3-8b --scale 1/$SCALE --writes 1 --reads 1 \
    --recovery-rank-shift --verify --name two --keep --out "$T/two" >"$T/two.out" 2>"$T/two.err" ||
    { cat "$T/two.err" >&2; fail "load checkpoint from 2 hosts failed"; }
(cd "$CK/two/global_step1" && find . -type f -printf '%P %s\n' | sort) >"$T/got"
diff "$T/want" "$T/got" || fail "2 hosts: files and sizes differ from the formula's"
ok "2 hosts: 16 files, $WANT bytes on the shared CephFS"
R=$T/two/result.json
assert_jq "$R" "[.hosts[] | {name, ranks}] | sort_by(.name) == [{\"name\": \"$NAME-client1\", \"ranks\": 2},
    {\"name\": \"$NAME-client2\", \"ranks\": 2}]" "4 ranks on 2 hosts, 2 each"
# Each rank plays 2 of the 8 model ranks: a quarter of the checkpoint (ZeRO 3: every rank's files are alike).
for op in writes reads; do
    assert_jq "$R" ".summary.$op[0] | .bytes == $WANT and .errors == 0 and ([.ranks[].bytes] | all(. == $WANT / 4)) and
        ([.hosts[].bytes] | all(. == $WANT / 2)) and ([.ranks[] | .host] == [\"$NAME-client1\", \"$NAME-client1\",
        \"$NAME-client2\", \"$NAME-client2\"])" "$op: every rank its quarter, every host its half"
done
# The shift is one host (2 ranks): ranks 0 and 1 on client1 read the files ranks 2 and 3 wrote on client2.
assert_jq "$R" '.summary.recovery_rank_shift == 2 and (.phases[] | select(.name == "read-1") | .errors.total == 0)' \
    "reads shifted one host over, every byte verified"
