#!/usr/bin/env bash
# needs: ceph root
# A stalled file system: CephFS (tests/servers/cephfs.sh, ceph-fuse) whose MDS, or whose ceph-fuse daemon itself, is
# stopped (SIGSTOP) while railbench runs. load put, load checkpoint, load train and load meta with --timeout 5s end
# within the timeout and a few seconds, exit 3, their record on disk, one error line naming the call and the file the
# mount stopped answering; SIGINT during the stall ends the run with its record too. The stopped process is continued
# (SIGCONT) before the next case and at the end, so the mount can be taken down.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: ceph-fuse mounts need root here"; exit 0; }

cephfs_up
M=$CEPHFS_MNT
MDS_PID=${CEPHFS_PIDS%% *}
FUSE_PID=$CEPHFS_FUSE_PID
assert_eq "the mount is ceph-fuse's" "fuse.ceph-fuse" "$(findmnt -n -o FSTYPE "$M")"
grep -q ceph-mds "/proc/$MDS_PID/cmdline" || fail "pid $MDS_PID is not the ceph-mds the test started"
grep -q ceph-fuse "/proc/$FUSE_PID/cmdline" || fail "pid $FUSE_PID is not the ceph-fuse the test started"
mkdir "$M/d" "$M/ck" "$M/tr" "$M/meta"
AT_EXIT+=("kill -CONT $MDS_PID $FUSE_PID 2>/dev/null")
STOP_PID=$MDS_PID # what stalled() stops: the MDS (creates and syncs wait), or ceph-fuse (every call waits)

# stalled NAME WHEN CMD...: runs CMD in the background; WHEN "before": $STOP_PID is stopped before it starts,
# "during": once the run's first interval line is written (its phase runs). $took: the seconds from the stop until the
# run's record is on disk (result.json with its "completed" check). Then $STOP_PID continues and the process exits: a
# thread left in a FUSE call the daemon has already taken waits in the kernel for its answer even while the process
# exits (the kernel's FUSE request wait), so the exit itself, not the record, follows the stopped one. $rc: its exit.
stalled() {
    local name=$1 when=$2 t0 pid; shift 2
    [ "$when" = before ] && kill -STOP "$STOP_PID"
    t0=$(date +%s%N)
    "$@" >"$T/$name.out" 2>"$T/$name.err" &
    pid=$!
    if [ "$when" = during ]; then
        for _ in $(seq 300); do [ -s "$T/$name/intervals.jsonl" ] && break; sleep 0.1; done
        [ -s "$T/$name/intervals.jsonl" ] || fail "$name wrote no interval line in 30 s"
        kill -STOP "$STOP_PID"
        t0=$(date +%s%N)
    fi
    for _ in $(seq 600); do
        jq -e '[.checks[] | select(.name == "completed")] | length == 1' "$T/$name/result.json" >/dev/null 2>&1 && break
        sleep 0.1
    done
    took=$((($(date +%s%N) - t0) / 1000000000))
    kill -CONT "$STOP_PID"
    rc=0
    timeout 60 tail --pid="$pid" -f /dev/null || fail "$name did not exit within 60 s of the file system's return"
    wait "$pid" || rc=$?
    sleep 2 # the MDS answers the client's other waiting requests before the next case
}

# 1. put --keep with the MDS stopped before it starts: its look-up of which names exist reads the directory, which
#    needs the MDS; the watchdog names that call after 5 s and the run ends with its record.
stalled put0 before "$RB" load put "file://$M/d" --objects 50 --size 64k --keep --timeout 5s --out "$T/put0"
assert_eq "put --keep on a stopped MDS: exit" 3 "$rc"
[ "$took" -le 12 ] || fail "put --keep: its record took $took s with --timeout 5s"
grep -Eq "error: (open|readdir|stat) $M/d.* has not returned after [0-9.]+ s \(--timeout 5\.00s\); the file system is not answering" \
    "$T/put0.err" || fail "put --keep: the call and file not named: $(cat "$T/put0.err")"
[ "$(grep -c 'error:' "$T/put0.err")" = 1 ] || fail "put --keep: expected one error line: $(cat "$T/put0.err")"
assert_jq "$T/put0/result.json" '[.checks[] | select(.name == "completed")][0].passed == false' \
    "put --keep: result.json on disk, not completed"
ok "put --keep ended $took s after the stop: $(grep 'error:' "$T/put0.err")"

# 2. put of new files (fsync before close), the MDS stopped mid-run: a create or a sync stops returning.
stalled put during "$RB" load put "file://$M/d" --prefix mid- --objects 100000 --size 64k --fsync close --keep \
    --timeout 5s --duration 60s --out "$T/put"
assert_eq "put on a stopped MDS: exit" 3 "$rc"
[ "$took" -le 12 ] || fail "put: its record took $took s after the stop with --timeout 5s"
grep -Eq "error: (open|write|fsync|close|stat) $M/d/mid-[0-9]+ has not returned after [0-9.]+ s \(--timeout 5\.00s\); the file system is not answering" "$T/put.err" ||
    fail "put: the call and file not named: $(cat "$T/put.err")"
assert_jq "$T/put/result.json" '.summary.ops[0].requests > 0 and ([.checks[] | select(.name == "completed")][0].passed == false)' \
    "put: result.json on disk with the requests before the stop, not completed"
[ -s "$T/put/table.md" ] || fail "put: no table.md"
grep -q 'outcome: failed: .*has not returned' "$T/put.err" || fail "put: no outcome line: $(tail -2 "$T/put.err")"
ok "put ended $took s after the stop: $(grep 'error:' "$T/put.err" | head -1)"

# 3. A checkpoint written with fsync (its default), the MDS stopped during the write: ends the same way.
stalled ckpt during "$RB" load checkpoint "file://$M/ck" --model llama3-8b --scale 1/1024 --writes 4 --reads 1 \
    --timeout 5s --out "$T/ckpt"
assert_eq "checkpoint on a stopped MDS: exit" 3 "$rc"
[ "$took" -le 12 ] || fail "checkpoint: its record took $took s after the stop"
grep -Eq "error: (open|write|fsync|close|stat|mkdir|unlink) $M/ck/.* has not returned after [0-9.]+ s \(--timeout 5\.00s\)" "$T/ckpt.err" ||
    fail "checkpoint: the call and file not named: $(cat "$T/ckpt.err")"
ok "checkpoint ended $took s after the stop: $(grep 'error:' "$T/ckpt.err" | head -1)"
assert_jq "$T/ckpt/result.json" '.command == "load checkpoint"' "checkpoint: result.json on disk"

# interrupted_stall NAME CMD...: runs CMD (its --out $T/NAME) in the background, stops $STOP_PID once its first
# interval line is written, sends SIGINT 3 s later, and waits for the record and the warning naming the call left
# behind (the early record is on disk at once; the stuck call is given up a second after the signal). $took: seconds
# from the signal; $rc: its exit once $STOP_PID continues.
interrupted_stall() {
    local name=$1 t0 pid; shift
    "$@" >/dev/null 2>"$T/$name.err" &
    pid=$!
    for _ in $(seq 300); do [ -s "$T/$name/intervals.jsonl" ] && break; sleep 0.1; done
    [ -s "$T/$name/intervals.jsonl" ] || fail "$name wrote no interval line in 30 s"
    kill -STOP "$STOP_PID"
    sleep 3
    t0=$(date +%s%N)
    kill -INT "$pid"
    for _ in $(seq 600); do
        jq -e '[.checks[] | select(.name == "completed")] | length == 1' "$T/$name/result.json" >/dev/null 2>&1 &&
            grep -q 'left behind in the kernel' "$T/$name.err" && break
        sleep 0.1
    done
    took=$((($(date +%s%N) - t0) / 1000000000))
    kill -CONT "$STOP_PID"
    rc=0
    wait "$pid" || rc=$?
    [ "$took" -le 5 ] || fail "$name: the record took $took s after SIGINT"
    grep -q 'left behind in the kernel' "$T/$name.err" || fail "$name: the stuck call not named: $(cat "$T/$name.err")"
    assert_eq "$name: exit after SIGINT with a call left behind" 3 "$rc"
    grep -q '^outcome: interrupted by SIGINT' "$T/$name.err" || fail "$name: no outcome line: $(tail -2 "$T/$name.err")"
}

# 4. SIGINT while a put waits on the stopped MDS (--timeout 60s, stopped mid-run).
interrupted_stall sig "$RB" load put "file://$M/d" --prefix sig- --objects 100000 --size 64k --fsync close \
    --timeout 60s --duration 60s --out "$T/sig"
assert_jq "$T/sig/result.json" '[.checks[] | select(.name == "completed")][0].detail | test("interrupted by a signal")' \
    "SIGINT: result.json on disk, interrupted"
ok "put SIGINT during the stall: record in $took s"

# 5. load train reading samples, ceph-fuse stopped mid-epoch: a read thread's open or read stops returning; the epoch
#    ends, is not complete and is left out of the AU mean; the run ends with its record.
"$RB" load put "file://$M/tr" --prefix s- --objects 200 --size 64k --keep --quiet --out "$T/trput" >/dev/null 2>&1 ||
    fail "the training samples could not be written"
STOP_PID=$FUSE_PID
stalled train during "$RB" load train "file://$M/tr" --prefix s- --objects 200 --sample-size 64k -b 4 \
    --compute-time 5ms --epochs 1000 --timeout 5s --out "$T/train"
assert_eq "train on a stopped ceph-fuse: exit" 3 "$rc"
[ "$took" -le 12 ] || fail "train: its record took $took s after the stop with --timeout 5s"
grep -Eq "error: (open|read|stat|close) $M/tr/s-[0-9]+ has not returned after [0-9.]+ s \(--timeout 5\.00s\)" \
    "$T/train.err" || fail "train: the call and file not named: $(cat "$T/train.err")"
assert_jq "$T/train/result.json" '(.summary.train_epochs | last | .complete == false) and
    ([.summary.train_epochs[] | select(.complete)] | length) == (.summary.train_epochs | length) - 1' \
    "train: the cut epoch is complete: false, the others complete"
assert_jq "$T/train/result.json" '[.checks[] | select(.name == "completed")][0].passed == false' \
    "train: result.json on disk, not completed"
ok "train ended $took s after the stop: $(grep 'error:' "$T/train.err" | head -1)"

# 5b. load get of the same files with --io-engine io_uring (the oldest I/O in the ring is the call watched): ends the
#     same way.
stalled get during "$RB" load get "file://$M/tr" --prefix s- --objects 200 --size 64k --io-engine io_uring \
    --inflight 8 --drop-cache files --duration 60s --timeout 5s --out "$T/get"
assert_eq "get on a stopped ceph-fuse: exit" 3 "$rc"
[ "$took" -le 12 ] || fail "get: its record took $took s after the stop with --timeout 5s"
# (--drop-cache files: the stall may come in the preparation's fadvise or mincore of a file, before its open.)
grep -Eq "error: (open|read|stat|close|fadvise|mincore) $M/tr/s-[0-9]+ has not returned after [0-9.]+ s \(--timeout 5\.00s\)" \
    "$T/get.err" || fail "get: the call and file not named: $(cat "$T/get.err")"
assert_jq "$T/get/result.json" '.phases[0].count > 0 and ([.checks[] | select(.name == "completed")][0].passed == false)' \
    "get: the reads before the stop kept, not completed"
ok "get (io_uring) ended $took s after the stop: $(grep 'error:' "$T/get.err" | head -1)"
sleep 2

# 6. SIGINT to a train run whose read threads wait on the stopped ceph-fuse (--timeout 60s).
interrupted_stall trsig "$RB" load train "file://$M/tr" --prefix s- --objects 200 --sample-size 64k -b 4 \
    --compute-time 5ms --epochs 1000 --timeout 60s --out "$T/trsig"
assert_jq "$T/trsig/result.json" '([.checks[] | select(.name == "completed")][0].detail | test("interrupted by a signal"))
    and (.summary.train_epochs | last | .complete == false and .interrupted == true)' \
    "train SIGINT: result.json on disk, interrupted, the cut epoch not complete"
ok "train SIGINT during the stall: record in $took s"
sleep 2

# 7. load meta creating files, ceph-fuse stopped mid-phase: a create stops returning; the tree is listed, not removed
#    (the file system does not answer), and removed here once it does.
stalled meta during "$RB" load meta "file://$M/meta" --dirs 2 --files 20000 --threads 2 --timeout 5s --out "$T/meta"
assert_eq "meta on a stopped ceph-fuse: exit" 3 "$rc"
[ "$took" -le 12 ] || fail "meta: its record took $took s after the stop with --timeout 5s"
grep -Eq "error: (mkdir|create|stat|read|rename|unlink|rmdir) $M/meta/rb-[^ ]*-meta/.* has not returned after [0-9.]+ s" \
    "$T/meta.err" || fail "meta: the call and file not named: $(cat "$T/meta.err")"
grep -q "^outcome: failed: .*; left behind: the tree $M/meta/rb-" "$T/meta.err" ||
    fail "meta: the tree it made is not listed: $(cat "$T/meta.err")"
assert_jq "$T/meta/result.json" '[.checks[] | select(.name == "completed")][0].passed == false' \
    "meta: result.json on disk, not completed"
ok "meta ended $took s after the stop: $(grep 'error:' "$T/meta.err" | head -1)"
rm -r "$M"/meta/rb-*-meta

ok "file_cephfs_stall: all checks passed"
