#!/usr/bin/env bash
# needs: ceph mpi root
# railbench load kvcache on a real CephFS (tests/servers/cephfs.sh, mounted with ceph-fuse) from 2 ranks: MLPerf
# Storage's option 1 scaled down, every byte read verified; the kept entries load with numpy as llama3.1-8b's
# (32, 2, tokens, 8, 128) <f2 arrays of 128 + tokens x 131,072 bytes; the bytes counted are the tokens' bytes;
# a second run leaves nothing and the file that was there untouched.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: ceph-fuse mounts need root here"; exit 0; }
cephfs_up
M=$CEPHFS_MNT
assert_eq "the mount is ceph-fuse's" "fuse.ceph-fuse" "$(findmnt -n -o FSTYPE "$M")"
mkdir "$M/kv"
echo keep >"$M/kv/there.txt"

rb_mpirun 2 "$RB" load kvcache "file://$M/kv" --option 1 --scale 1/128 --users 2 --inflight 2 --duration 3s \
    --trials 1 --verify --keep --out "$T/keep" >"$T/keep.out" 2>"$T/keep.err" || { cat "$T/keep.err" >&2; fail "keep run"; }
R=$T/keep/result.json
assert_jq "$R" '.summary.trials[0] | (.ranks | length) == 2 and .counts.writes > 0 and .counts.reads > 0 and
    .counts.verify_failures == 0 and ([.counts, .ranks[].counts] | all(.bytes_written == .writes * 128 +
    .tokens_written * 131072 and .bytes_read == .reads * 128 + .tokens_read * 131072)) and
    ([.ranks[].device_read_p95_ns] | max) == .device_read_p95_ns' \
    "2 ranks on CephFS: $(jq .summary.trials[0].counts.writes "$R") entries written, $(jq .summary.trials[0].counts.reads "$R") read, bytes = the tokens' bytes"
prefix=$(jqr "$R" .summary.entry_dir_prefix)
/usr/bin/python3 - "$M/kv" "$prefix" <<'PY' || fail "the entries on CephFS are not llama3.1-8b's NumPy arrays"
import glob, os, sys
import numpy as np
files = sorted(glob.glob(os.path.join(sys.argv[1], sys.argv[2] + "*", "*.npy")))
assert files, "no entry kept"
for f in files:
    a = np.load(f)
    assert a.dtype == np.dtype("<f2") and a.shape[:2] == (32, 2) and a.shape[3:] == (8, 128), (f, a.shape, a.dtype)
    assert os.path.getsize(f) == 128 + a.shape[2] * 131072, f
print("ok: %d entries on CephFS load with numpy as (32, 2, tokens, 8, 128) <f2" % len(files))
PY
rm -r "$M/kv/$prefix"0 "$M/kv/$prefix"1

rb_mpirun 2 "$RB" load kvcache "file://$M/kv" --option 1 --scale 1/128 --users 2 --inflight 2 --duration 2s \
    --trials 1 --out "$T/run" >"$T/run.out" 2>"$T/run.err" || { cat "$T/run.err" >&2; fail "run"; }
assert_jq "$T/run/result.json" '.summary.files_left == 0 and .summary.trials[0].counts.writes > 0' "second run: every entry removed"
assert_eq "CephFS: only the file that was there" "there.txt" "$(ls "$M/kv")"
assert_eq "CephFS: it is untouched" keep "$(cat "$M/kv/there.txt")"
