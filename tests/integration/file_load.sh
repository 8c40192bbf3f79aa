#!/usr/bin/env bash
# needs: mpi root
# railbench load put|get|stat|delete on file:// targets, on ext4 and XFS loop devices: files on disk, exact bytes,
# O_DIRECT, psync and io_uring, each file once per epoch from 2 ranks, cold reads proven cold, data never overwritten.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: loop devices need root"; exit 0; }
summary() { jq -c ".summary.ops[0] | $2" "$T/$1/result.json"; }
MiB=1048576

loopfs_up xfs 600M xfs
D=$LOOP_MNT/data
mkdir "$D"

# 1. put 200 files of 1 MiB with O_DIRECT, 64 KiB writes, fsync before close: 200 files, each 1 MiB, on disk.
written_sectors() { awk -v d="$LOOP_NAME" '$3 == d { print $10 }' /proc/diskstats; }
sectors0=$(written_sectors)
"$RB" load put "file://$D" --objects 200 --size 1M --direct --block-size 64k --fsync close --keep -t 2 \
    --seed 3 --out "$T/p1" --quiet >/dev/null
assert_eq "put: files on disk (find)" 200 "$(find "$D" -type f | wc -l)"
assert_eq "put: every file 1 MiB" "1048576" "$(find "$D" -type f -printf '%s\n' | sort -u)"
assert_eq "put: requests" 200 "$(summary p1 .requests)"
assert_eq "put: bytes" $((200 * MiB)) "$(summary p1 .bytes)"
assert_eq "put: engine" '"file"' "$(jq -c .summary.engine "$T/p1/result.json")"
assert_jq "$T/p1/result.json" '.summary.file | .direct and .io_engine == "psync" and .block_size_bytes == 65536 and .fsync == "close"' "put: file options recorded"
# What the files are on: XFS on this test's loop device (named as such, with its backing file), and that device's
# counters over the run: at least the 200 MiB written went through it (O_DIRECT, fsync).
assert_jq "$T/p1/result.json" ".summary.file.mount | .fs_type == \"xfs\" and .kind == \"loop\" and .device == \"$LOOP_NAME\" and .path == \"$LOOP_MNT\" and (.loop_backing_file | endswith(\"/image\"))" \
    "put: the mount recorded: xfs on $LOOP_NAME, a loop device"
assert_jq "$T/p1/result.json" ".summary.file.mount.device_write_bytes >= $((200 * MiB))" "put: the loop device wrote at least the 200 MiB"
# The put phase's disk counters name the loop device too (a file system on a loop device has no other), with the
# bytes /proc/diskstats counted for it: at least the 200 MiB, at most what this test saw around the whole run.
around=$(( ($(written_sectors) - sectors0) * 512 ))
phase_loop=$(jq "[.phases[] | select(.name == \"put\") | .counters[].disk[] | select(.name == \"$LOOP_NAME\") | .write_bytes] | add" "$T/p1/result.json")
echo "put: $LOOP_NAME wrote $phase_loop bytes in the phase's counters, $around around the run (/proc/diskstats)"
[ "$phase_loop" != null ] && [ "$phase_loop" -ge $((200 * MiB)) ] && [ "$phase_loop" -le "$around" ] ||
    fail "put: the phase's counters for $LOOP_NAME: $phase_loop bytes written; expected 200 MiB to $around (diskstats)"
ok "put: the phase's disk counters hold $LOOP_NAME with the bytes /proc/diskstats counted"
# The bytes are the seeded payload: a second put of the same seed into a fresh directory writes the same bytes.
mkdir "$D.2"
"$RB" load put "$D.2" --objects 3 --size 1M --keep --seed 3 --out "$T/p2" --quiet >/dev/null
cmp "$D/obj-00000002" "$D.2/obj-00000002" || fail "the same seed wrote different bytes"
ok "put: payload is the seeded one (O_DIRECT and buffered writes agree)"

# 2. Read back from 2 ranks, one epoch, every byte verified, page cache dropped per file and residency checked:
#    each file exactly once, none of its pages cached before its read.
rb_mpirun 2 "$RB" load get "file://$D" --pattern epoch --epochs 1 --verify --seed 3 --size 1M \
    --drop-cache files --cold-check --log-requests "$T/reqs.csv" --out "$T/g1" --quiet >/dev/null
assert_eq "get: requests" 200 "$(summary g1 .requests)"
assert_eq "get: bytes" $((200 * MiB)) "$(summary g1 .bytes)"
assert_eq "get: errors" 0 "$(summary g1 .errors.total)"
assert_eq "get: each file once" "200 1" "$(tail -n +2 "$T/reqs.csv" | cut -d, -f4 | sort | uniq -c | awk '{print $1}' | sort -u | xargs echo "$(tail -n +2 "$T/reqs.csv" | cut -d, -f4 | sort -u | wc -l)")"
assert_eq "get: both ranks read" "0 1" "$(tail -n +2 "$T/reqs.csv" | cut -d, -f1 | sort -u | xargs)"
assert_eq "get: cold (cache_miss, cache_hit)" "200 0" "$(summary g1 '"\(.extra.cache_miss) \(.extra.cache_hit)"' | tr -d '"')"
assert_jq "$T/g1/result.json" '[.checks[] | select(.name == "cold")][0].passed == true' "get: cold check recorded as passed"

# 2b. --drop-cache host (root): one rank per host drops the whole page cache before the read, Cached before and
#     after recorded from /proc/meminfo, the check recorded; the reads are cold. Not root: exit 2, one line.
"$RB" load get "$D" --pattern epoch --drop-cache host --cold-check --out "$T/g1h" --quiet >/dev/null
assert_jq "$T/g1h/result.json" '[.checks[] | select(.name == "host_cache_dropped")][0] | .passed and (.detail | test("Cached [0-9]+ MiB -> [0-9]+ MiB"))' \
    "host drop: check recorded with Cached before and after"
assert_jq "$T/g1h/result.json" '.page_cache_drops | length == 1 and (.[0] | .dropped and (.cached_before_bytes | type) == "number" and (.cached_after_bytes | type) == "number")' \
    "host drop: one host, its /proc/meminfo figures"
assert_eq "host drop: every read cold (cache_miss, cache_hit)" "200 0" "$(summary g1h '"\(.extra.cache_miss) \(.extra.cache_hit)"' | tr -d '"')"
cp "$RB" "$T/rb-copy" && chmod 755 "$T" "$T/rb-copy"
assert_exit 2 "host drop as a user" setpriv --reuid 65534 --regid 65534 --clear-groups "$T/rb-copy" load get "$D" \
    --drop-cache host --quiet
assert_stderr_line 'drop-cache host: needs root'

# 2c. load train --drop-cache host: the host's page cache dropped before each of 3 epochs (recorded per epoch, one
#     check each), so every epoch reads cold: --cold-check counts 0 hits in each. 200 files of 1 MiB, 2 per batch.
"$RB" load train "$D" --objects 200 --sample-size 1M -b 2 --compute-time 1ms --epochs 3 --drop-cache host \
    --cold-check --out "$T/t1h" --quiet >/dev/null
assert_eq "train host drop: per epoch [samples, dropped, cold]" '[[200,true,true],[200,true,true],[200,true,true]]' \
    "$(jq -c '[.summary.train_epochs[] | [.samples, .host_cache_dropped, .cold]]' "$T/t1h/result.json")"
assert_eq "train host drop: drops and checks per epoch" '[["epoch-1","epoch-2","epoch-3"],[true,true,true]]' \
    "$(jq -c '[[.page_cache_drops[].phase], [.checks[] | select(.name | endswith("_host_cache_dropped")) | .passed]]' "$T/t1h/result.json")"
assert_eq "train host drop: no file had a cached page in any epoch (cache_miss, cache_hit per epoch)" \
    '[[200,0],[200,0],[200,0]]' "$(jq -c '[.summary.train_epochs[] | [.cache_miss, .cache_hit]]' "$T/t1h/result.json")"
assert_eq "train host drop: the cold check of each epoch" '[true,true,true]' \
    "$(jq -c '[.checks[] | select(.name | test("^epoch-[0-9]+_cold$")) | .passed]' "$T/t1h/result.json")"
# Without the drop, epoch 2 reads what epoch 1 left cached: the same check sees hits and fails (exit 1).
assert_exit 1 "train without the drop: epoch 2 not cold" "$RB" load train "$D" --objects 200 --sample-size 1M -b 2 \
    --compute-time 1ms --epochs 2 --cold-check --out "$T/t1w" --quiet
assert_jq "$T/t1w/result.json" '.summary.train_epochs[1].cache_hit > 0 and ([.checks[] | select(.name == "epoch-2_cold")][0].passed | not)' \
    "train without the drop: epoch 2 finds cached pages, its cold check fails"
# The epochs' labels come from the same counts as the checks: "cold" exactly where "<epoch>_cold" passed.
for run in t1h t1w; do
    assert_jq "$T/$run/result.json" '[.summary.train_epochs[] | .cache_basis] | all(. == "measured")' "$run: labels measured"
    assert_eq "$run: label cold = check passed, per epoch" \
        "$(jq -c '[.checks[] | select(.name | test("^epoch-[0-9]+_cold$")) | .passed]' "$T/$run/result.json")" \
        "$(jq -c '[.summary.train_epochs[] | .cold]' "$T/$run/result.json")"
done
assert_eq "train without the drop: epoch 2 labelled warm (every file had cached pages)" '"warm"' \
    "$(jq -c '.summary.train_epochs[1].cache' "$T/t1w/result.json")"
# --drop-cache files drops each file before its read: both epochs measured cold, and so labelled (table included).
"$RB" load train "$D" --objects 200 --sample-size 1M -b 2 --compute-time 1ms --epochs 2 --drop-cache files \
    --cold-check --out "$T/t1f" --quiet >/dev/null
assert_eq "train file drop: [cache, basis, cold check] per epoch" \
    '[["cold","measured",true],["cold","measured",true]]' \
    "$(jq -c '[.summary.train_epochs[] as $e | [$e.cache, $e.cache_basis,
        ([.checks[] | select(.name == ($e.phase + "_cold"))][0].passed)]]' "$T/t1f/result.json")"
grep -Eq '^\| 2 \| cold \|' "$T/t1f/table.md" || { cat "$T/t1f/table.md"; fail "train file drop: epoch 2 not shown cold"; }
# Without a count the label is what the run assumed, and the table says so.
"$RB" load train "$D" --objects 200 --sample-size 1M -b 2 --compute-time 1ms --epochs 2 --out "$T/t1c" --quiet >/dev/null
assert_eq "train, nothing counted: labels configured" '[["cold","configured"],["warm","configured"]]' \
    "$(jq -c '[.summary.train_epochs[] | [.cache, .cache_basis]]' "$T/t1c/result.json")"
grep -Eq '^\| 1 \| cold \(configured\) \|' "$T/t1c/table.md" || { cat "$T/t1c/table.md"; fail "configured label not shown"; }
"$RB" report "$T/t1c" >"$T/t1c.report" 2>&1
grep -q 'warm (configured)' "$T/t1c.report" || { cat "$T/t1c.report"; fail "report: configured label not shown"; }
ok "report: the configured label as in the table"

# 3. Without --drop-cache, after a buffered read every page is cached: the same check records hits and fails.
"$RB" load get "$D" --pattern epoch --out "$T/g2" --quiet >/dev/null
rc=0
"$RB" load get "$D" --pattern epoch --cold-check --out "$T/g3" --quiet >/dev/null 2>&1 || rc=$?
assert_eq "warm read: every file had cached pages (none missed)" "200 0" "$(summary g3 '"\(.extra.cache_hit + .extra.cache_other) \(.extra.cache_miss)"' | tr -d '"')"
assert_jq "$T/g3/result.json" '[.checks[] | select(.name == "cold")][0].passed == false' "warm read: cold check recorded as failed"
assert_eq "warm read: exit (a check failed)" 1 "$rc"

# 4. io_uring, 8 in flight, O_DIRECT 128 KiB reads, verified: the same bytes.
"$RB" load get "$D" --io-engine io_uring -c 8 --direct --block-size 128k --pattern epoch --verify --seed 3 \
    --size 1M --out "$T/g4" --quiet >/dev/null
assert_eq "io_uring direct: bytes, errors" "$((200 * MiB)) 0" "$(summary g4 '"\(.bytes) \(.errors.total)"' | tr -d '"')"
assert_jq "$T/g4/result.json" '.summary.inflight == 8 and .summary.file.io_engine == "io_uring"' "io_uring: depth recorded"
# Ranged reads: 4 KiB at offset 1000 (unaligned under O_DIRECT: the aligned block around it is read).
"$RB" load get "$D" --direct --range 1000:4k --count 50 --verify --seed 3 --size 1M --out "$T/g5" --quiet >/dev/null
assert_eq "ranged direct: bytes, errors" "$((50 * 4096)) 0" "$(summary g5 '"\(.bytes) \(.errors.total)"' | tr -d '"')"

# Random 4 KiB ranges, io_uring 8 deep, O_DIRECT, verified: files stay open between ranged reads, bytes exact.
"$RB" load get "$D" --io-engine io_uring -c 8 --direct --block-size 4k --random-range 4k --count 500 --verify --seed 3 \
    --size 1M --out "$T/g5r" --quiet >/dev/null
assert_eq "random ranges: bytes, errors" "$((500 * 4096)) 0" "$(summary g5r '"\(.bytes) \(.errors.total)"' | tr -d '"')"

# Record files (DLIO's samples packed in files): load train writes 50 files of 4 samples of 8 KiB and reads them
# twice with 2 read threads and a prefetch queue of 4 batches: every epoch reads each file's bytes once, verified.
mkdir "$D.rec"
"$RB" load train "$D.rec" --objects 50 --populate --samples-per-object 4 --sample-size 8k --compute-time 1ms -b 10 \
    --epochs 2 --read-threads 2 --prefetch 4 --verify --seed 3 --out "$T/t1" --quiet >/dev/null 2>&1
assert_eq "record files: on disk, each 4 x 8 KiB (find)" "50 32768" \
    "$(find "$D.rec" -type f | wc -l) $(find "$D.rec" -type f -printf '%s\n' | sort -u)"
assert_eq "record files: samples, requests, bytes per epoch = the files' bytes" \
    "200 50 $(find "$D.rec" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }') 200 50 1638400" \
    "$(jq -r '[.summary.train_epochs[] | "\(.samples) \(.requests) \(.bytes)"] | join(" ")' "$T/t1/result.json")"
assert_jq "$T/t1/result.json" '.summary.errors == 0 and ([.summary.train_epochs[].errors] == [0, 0])' \
    "record files: no errors (payload verified)"

# 5. stat every file, then a corrupted and a short file are caught by class.
"$RB" load stat "$D" --pattern epoch --out "$T/s1" --quiet >/dev/null
assert_eq "stat: requests, errors" "200 0" "$(summary s1 '"\(.requests) \(.errors.total)"' | tr -d '"')"
printf 'X' | dd of="$D/obj-00000007" bs=1 seek=4000 conv=notrunc status=none
truncate -s 100 "$D/obj-00000008"
rc=0
"$RB" load get "$D" --pattern epoch --verify --seed 3 --size 1M --out "$T/g6" --quiet >/dev/null 2>&1 || rc=$?
assert_eq "damaged: exit" 1 "$rc"
assert_eq "damaged: checksum, short_read" "1 1" "$(summary g6 '"\(.errors.checksum) \(.errors.short_read)"' | tr -d '"')"

# 6. A put never overwrites a file it did not create: names that exist are refused before anything is written
#    (exit 2, one line); with --overwrite they are replaced, and a later cleanup would leave them.
before=$(md5sum "$D/obj-00000001")
assert_exit 2 "overwrite refused" "$RB" load put "$D" --objects 5 --size 1M --seed 9 --keep --quiet
assert_stderr_line 'holds "obj-00000000" already .* a run never overwrites what it did not create'
assert_eq "overwrite refused: bytes unchanged" "$before" "$(md5sum "$D/obj-00000001")"
"$RB" load put "$D" --objects 5 --size 1M --seed 9 --keep --overwrite --out "$T/p3" --quiet >/dev/null 2>&1
assert_eq "--overwrite: replaced, no errors" "5 0" "$(summary p3 '"\(.requests) \(.errors.total)"' | tr -d '"')"
"$RB" load get "$D" --objects 5 --pattern epoch --verify --seed 9 --size 1M --out "$T/g7" --quiet >/dev/null
assert_eq "--overwrite: the new bytes read back" "5 0" "$(summary g7 '"\(.requests) \(.errors.total)"' | tr -d '"')"
assert_eq "--overwrite: still 1 MiB each" 1048576 "$(stat -c %s "$D/obj-00000004")"
# A put without --keep writes under its own run prefix (rb-<run id>-) and deletes exactly that at the end.
"$RB" load put "$D" --objects 7 --size 8k --out "$T/p6" --quiet >/dev/null
assert_eq "run prefix: nothing of it left" 0 "$(find "$D" -name 'rb-*' | wc -l)"
assert_jq "$T/p6/result.json" '(.summary.run_prefix | startswith("rb-")) and .summary.cleanup.deleted == 7' "run prefix: recorded, 7 deleted"
assert_eq "run prefix: the 200 files untouched" 200 "$(find "$D" -name 'obj-*' | wc -l)"

# 7. Without --keep a put deletes what it wrote (and only that): files there before stay.
mkdir "$D.3"
echo mine >"$D.3/obj-keepme"
"$RB" load put "$D.3" --objects 20 --size 64k --prefix sub/dir/f- --out "$T/p4" --quiet >/dev/null
assert_eq "cleanup: only the user's file is left" "obj-keepme" "$(find "$D.3" -type f -printf '%P\n')"
assert_eq "cleanup: deleted" 20 "$(jq .summary.cleanup.deleted "$T/p4/result.json")"

# 8. load delete removes the listed files; load get then finds none.
"$RB" load delete "$D.2" --prefix obj- --out "$T/d1" --quiet >/dev/null
assert_eq "delete: requests" 3 "$(summary d1 .requests)"
assert_eq "delete: files left" 0 "$(find "$D.2" -type f | wc -l)"

# 9. Bad input: one line each, exit 3 for what cannot be carried out, 2 for usage.
assert_exit 3 "missing directory" "$RB" load get "file://$D/nope" --quiet
assert_stderr_line 'error: file://.*/nope: No such file or directory'
assert_exit 3 "not a directory" "$RB" load get "$D/obj-00000003" --quiet
assert_stderr_line 'not a directory'
assert_exit 2 "relative path" "$RB" load get "file://relative/x" --quiet
assert_stderr_line 'expected file:///ABSOLUTE/PATH'
assert_exit 2 "--direct with an unaligned block size" "$RB" load get "$D" --direct --block-size 1000 --quiet
assert_stderr_line 'block-size 1000 with --direct: expected a multiple of 4 KiB'
assert_exit 2 "file option on an http target" "$RB" load get http://127.0.0.1:1/x --direct --quiet
assert_stderr_line '--direct: a file-system option'
assert_exit 2 "--drop-cache host on load checkpoint" "$RB" load checkpoint "$D/ck" --params 1000000 --drop-cache host --quiet
assert_stderr_line 'load checkpoint drops every host.s page cache between its writes and reads with --drop-caches'
[ ! -e "$D/ck" ] || fail "a refused checkpoint made $D/ck"

# 10. ENOSPC: a 32 MiB ext4 file system. 60 objects of 1 MiB cannot fit: refused before writing (one error line,
#     exit 3, nothing made). 60 of 256 KiB to 1 MiB may (the least they need fits): the put fills the file system,
#     one error line, exit 3, what was written is counted, and only whole files stay (the unfinished one is removed).
loopfs_up small 32M ext4
rc=0
"$RB" load put "$LOOP_MNT" --objects 60 --size 1M --keep --out "$T/p4" >/dev/null 2>"$T/p4.err" || rc=$?
assert_eq "too big: exit" 3 "$rc"
[ "$(grep -c 'error:' "$T/p4.err")" = 1 ] || fail "too big: expected one error line: $(cat "$T/p4.err")"
grep -q 'needs 0.063 GB, the file system under it has .* GB free: nothing written (ENOSPC)' "$T/p4.err" \
    || fail "too big: not refused up front: $(cat "$T/p4.err")"
assert_eq "too big: files made" 0 "$(find "$LOOP_MNT" -name 'obj-*' | wc -l)"
rc=0
"$RB" load put "$LOOP_MNT" --objects 60 --min-size 256k --max-size 1M --keep --out "$T/p5" >/dev/null 2>"$T/p5.err" \
    || rc=$?
assert_eq "ENOSPC: exit" 3 "$rc"
[ "$(grep -c 'error:' "$T/p5.err")" = 1 ] || fail "ENOSPC: expected one error line: $(cat "$T/p5.err")"
grep -q 'No space left on device' "$T/p5.err" || fail "ENOSPC: not named: $(cat "$T/p5.err")"
ok "ENOSPC: $(grep 'error:' "$T/p5.err")"
ok_files=$(find "$LOOP_MNT" -name 'obj-*' | wc -l)
assert_jq "$T/p5/result.json" ".summary.left_behind.objects == $ok_files" "ENOSPC: left_behind = the files on disk ($ok_files)"
assert_jq "$T/p5/result.json" ".summary.ops[0].requests - .summary.ops[0].errors.total == $ok_files" "ENOSPC: results kept; successes = whole files on disk ($ok_files)"
