#!/usr/bin/env bash
# needs: ceph mpi root
# File-system data paths on a real CephFS (ceph-mon, memstore OSD, ceph-mds, mounted with ceph-fuse; tests/servers/
# cephfs.sh): 200 files of 1 MiB put, read back verified from 2 ranks (each file once), the drop recorded as cold,
# a load train over 1,000 per-sample files with AU, a metadata run counted against find, and railbench vs fio on the
# same files in one run. Then the FUSE daemon dies mid-run: one line, exit 3, results kept.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: ceph-fuse mounts need root here"; exit 0; }
summary() { jq -c ".summary.ops[0] | $2" "$T/$1/result.json"; }
MiB=1048576

cephfs_up
M=$CEPHFS_MNT
assert_eq "the mount is ceph-fuse's" "fuse.ceph-fuse" "$(findmnt -n -o FSTYPE "$M")"
mkdir "$M/data"

# 1. put 200 files of 1 MiB with O_DIRECT (FUSE: ceph-fuse takes it), fsync before close: 200 files of 1 MiB.
"$RB" load put "file://$M/data" --objects 200 --size 1M --direct --fsync close --keep -t 2 --seed 5 \
    --out "$T/p1" --quiet >/dev/null
assert_eq "put: requests, errors" "200 0" "$(summary p1 '"\(.requests) \(.errors.total)"' | tr -d '"')"
assert_eq "put: files on CephFS (find)" 200 "$(find "$M/data" -type f | wc -l)"
assert_eq "put: every file 1 MiB" 1048576 "$(find "$M/data" -type f -printf '%s\n' | sort -u)"
assert_jq "$T/p1/result.json" '.summary.file.mount | .kind == "fuse" and .fs_type == "fuse.ceph-fuse" and .device == null and .device_write_bytes == null' \
    "put: the mount recorded as FUSE (ceph-fuse), no block device"

# 2. Read back from 2 ranks, one epoch, every byte verified, each file's pages dropped and checked before its read.
rb_mpirun 2 "$RB" load get "file://$M/data" --pattern epoch --epochs 1 --verify --seed 5 --size 1M \
    --drop-cache files --cold-check --log-requests "$T/reqs.csv" --out "$T/g1" --quiet >/dev/null
assert_eq "get: requests, bytes, errors" "200 $((200 * MiB)) 0" \
    "$(summary g1 '"\(.requests) \(.bytes) \(.errors.total)"' | tr -d '"')"
assert_eq "get: 200 names, each read once" "200 1" \
    "$(tail -n +2 "$T/reqs.csv" | cut -d, -f4 | sort -u | wc -l) $(tail -n +2 "$T/reqs.csv" | cut -d, -f4 | sort | uniq -c | awk '{print $1}' | sort -u | xargs)"
assert_eq "get: both ranks read" "0 1" "$(tail -n +2 "$T/reqs.csv" | cut -d, -f1 | sort -u | xargs)"
assert_jq "$T/g1/result.json" '[.checks[] | select(.name == "cold")][0].passed == true' "get: recorded cold (mincore)"
assert_eq "get: cache_miss" 200 "$(summary g1 .extra.cache_miss)"

# 3. load train over 1,000 per-sample files on CephFS: written by --populate, then 2 epochs from 2 ranks; AU reported,
#    every sample read once per epoch.
mkdir "$M/train"
rb_mpirun 2 "$RB" load train "file://$M/train" --objects 1000 --populate --sample-size 16k --compute-time 1ms \
    -b 10 --epochs 2 --read-threads 2 --seed 5 --out "$T/t1" --quiet >/dev/null
assert_eq "train: files on CephFS (find)" 1000 "$(find "$M/train" -type f | wc -l)"
assert_jq "$T/t1/result.json" '.summary.au_mean_pct | type == "number" and . > 0 and . <= 100' "train: AU reported"
assert_jq "$T/t1/result.json" '[.summary.train_epochs[] | .samples] == [1000, 1000]' "train: 1,000 samples in each epoch"
assert_jq "$T/t1/result.json" '.summary.file.io_engine == "psync"' "train: the file options recorded"

# 4. Metadata: mdtest's phases from 2 ranks x 2 threads; what find sees equals what the phases counted.
rb_mpirun 2 "$RB" load meta "$M" --dirs 4 --files 50 --size 4k -t 2 --keep --tree md --phases mkdir,create,stat,read \
    --verify --out "$T/m1" --quiet >/dev/null
assert_eq "meta: created = files on CephFS (find)" "$(find "$M/md" -type f | wc -l)" \
    "$(jq '.summary.ops[] | select(.phase == "create") | .requests - .errors.total' "$T/m1/result.json")"
assert_eq "meta: 200 files, 4 directories" "200 4" "$(find "$M/md" -type f | wc -l) $(find "$M/md" -mindepth 1 -type d | wc -l)"
rb_mpirun 2 "$RB" load meta "$M" --dirs 4 --files 50 -t 2 --out "$T/m2" --quiet >/dev/null
assert_eq "meta cycle: create, unlink counts" "200 200" \
    "$(jq -r '[.summary.ops[] | select(.phase == "create" or .phase == "unlink") | .requests - .errors.total] | join(" ")' "$T/m2/result.json")"
assert_eq "meta cycle: nothing left but the data, train and kept trees" "data md train" "$(ls "$M" | xargs)"

# 5. railbench vs fio on the same 200 files, the same 1 MiB psync reads, one pass each: the ratio in this run. Both
#    drop the kernel's pages first (fio --invalidate, railbench --drop-cache files); ceph-fuse's own client cache
#    drops nothing, so one untimed pass warms it for both.
cat "$M"/data/* >/dev/null
files=$(cd "$M/data" && find . -type f -printf '%P\n' | sort | tr '\n' ':')
fio --name=cephfs --directory="$M/data" --filename="${files%:}" --readonly --invalidate=1 --rw=read --bs=1M --ioengine=psync \
    --file_service_type=sequential --output-format=json --output="$T/fio.json" >/dev/null
"$RB" load get "$M/data" --pattern epoch --block-size 1M --drop-cache files --size 1M --out "$T/g2" --quiet >/dev/null
fio_bytes=$(jq '.jobs[0].read.io_bytes' "$T/fio.json")
assert_eq "fio and railbench read the same bytes" "$((200 * MiB)) $((200 * MiB))" "$fio_bytes $(summary g2 .bytes)"
ok "railbench/fio on CephFS, sequential 1 MiB psync, one pass: $(jq -n --argjson a "$(summary g2 .throughput_bytes_per_s)" \
    --argjson b "$(jq '.jobs[0].read.bw_bytes' "$T/fio.json")" '$a / $b * 1000 | round / 1000')"

# 6. The FUSE daemon dies during a read: the mount answers ENOTCONN; one error line, exit 3, results kept.
rc=0
"$RB" load get "$M/data" --duration 30s --size 1M --out "$T/g3" >/dev/null 2>"$T/g3.err" &
rbpid=$!
for _ in $(seq 100); do [ -s "$T/g3/intervals.jsonl" ] && break; sleep 0.1; done
[ -s "$T/g3/intervals.jsonl" ] || fail "the read wrote no interval in 10 s"
kill -9 "$CEPHFS_FUSE_PID"
wait "$rbpid" || rc=$?
assert_eq "mount gone: exit" 3 "$rc"
[ "$(grep -c 'error:' "$T/g3.err")" = 1 ] || fail "mount gone: expected one error line: $(cat "$T/g3.err")"
grep -q 'Transport endpoint is not connected' "$T/g3.err" || fail "mount gone: ENOTCONN not named: $(cat "$T/g3.err")"
ok "mount gone: $(grep 'error:' "$T/g3.err")"
assert_jq "$T/g3/result.json" '.summary.ops[0].requests > 0' "mount gone: the reads before it kept"
