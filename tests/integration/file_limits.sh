#!/usr/bin/env bash
# needs: -
# Every limit holds on file://: reads of files shorter than expected end as short_read (O_DIRECT too, psync and
# io_uring, checkpoint reads, train --verify of tar shards and per-sample files); a call that does not return (an
# object that is a FIFO: open blocks in the kernel, as on a file system that stopped answering) ends the run after
# --timeout with its record and one line naming the call and file, and SIGINT ends it within about a second; the
# look-up of names a --keep put would write is bounded by --duration, says how far it got, and reads an empty
# directory once instead of asking for 4,294,967,295 names.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
# secs CMD...: runs CMD (exit in $rc, stderr in $T/stderr), its whole seconds in $took.
secs() {
    local t0
    t0=$(date +%s%N)
    rc=0
    "$@" >"$T/stdout" 2>"$T/stderr" || rc=$?
    took=$((($(date +%s%N) - t0) / 1000000000))
}

# 1. Files shorter than --size, lengths not a multiple of 4 KiB: each read ends as short_read (never re-read forever).
D=$T/short
mkdir "$D"
"$RB" load put "file://$D" --objects 8 --size 64k --keep --out "$T/p0" --quiet >/dev/null
truncate -s 1000 "$D/obj-00000002"
truncate -s 8292 "$D/obj-00000003"
truncate -s 0 "$D/obj-00000005"
for mode in "--direct" "--direct --io-engine io_uring" ""; do
    out=$T/get$(echo "$mode" | tr -d ' -')
    # shellcheck disable=SC2086
    secs timeout -s KILL 60 "$RB" load get "file://$D" --objects 8 --size 64k --pattern epoch $mode --timeout 10s \
        --out "$out"
    assert_eq "get ${mode:-buffered} of 3 short files: exit" 1 "$rc"
    assert_eq "get ${mode:-buffered}: requests, short_read, errors" "8 3 3" \
        "$(jq -r '.summary.ops[0] | "\(.requests) \(.errors.short_read) \(.errors.total)"' "$out/result.json")"
    [ "$took" -le 20 ] || fail "get $mode took $took s"
done
grep -Eq 'the file ends at byte (0|1000|8292), expected 65536' "$T/stderr" || fail "short_read not described: $(cat "$T/stderr")"

# 2. A checkpoint file cut short after the write: the read (O_DIRECT) counts it as short_read, exit 1.
mkdir "$T/ck"
"$RB" load checkpoint "file://$T/ck" --model llama3-8b --scale 1/4096 --mode write --writes 1 --name t \
    --out "$T/ckw" --quiet >/dev/null
f=$(find "$T/ck/t" -type f | sort | head -1)
truncate -s $(($(stat -c %s "$f") / 2 + 100)) "$f"
secs timeout -s KILL 60 "$RB" load checkpoint "file://$T/ck" --model llama3-8b --scale 1/4096 --mode read --writes 1 \
    --reads 1 --name t --direct --timeout 10s --out "$T/ckr"
assert_eq "checkpoint read of a cut file: exit" 1 "$rc"
assert_eq "checkpoint read: short_read" 1 "$(jq '[.phases[] | select(.name == "read-1") | .errors.short_read][0]' "$T/ckr/result.json")"

# 3. train --verify: tar shards cut to 7000, 3584 and 0 of their 15360 bytes, per-sample files cut to 1000 and 0.
S=$T/shards
mkdir "$S"
TRAIN=(--objects 4 --samples-per-object 4 --sample-size 3000 --format tar --batch-size 4 --compute-time 1ms --seed 5)
"$RB" load train "file://$S" "${TRAIN[@]}" --populate --out "$T/tp" --quiet >/dev/null 2>&1
assert_eq "shards written" "15360" "$(find "$S" -type f -printf '%s\n' | sort -u)"
truncate -s 7000 "$S/obj-00000001"
truncate -s 3584 "$S/obj-00000002"
truncate -s 0 "$S/obj-00000003"
secs "$RB" load train "file://$S" "${TRAIN[@]}" --verify --out "$T/tv"
assert_eq "train --verify of 3 cut shards: exit" 1 "$rc"
assert_eq "train --verify, tar: reads, short_read" "4 3" \
    "$(jq -r '"\(.summary.train_epochs[0].requests) \(.phases[] | select(.name == "epoch-1") | .errors.short_read)"' "$T/tv/result.json")"
R=$T/samples
mkdir "$R"
RAW=(--objects 8 --samples-per-object 1 --sample-size 4000 --batch-size 4 --compute-time 1ms --seed 5)
"$RB" load train "file://$R" "${RAW[@]}" --populate --out "$T/rp" --quiet >/dev/null 2>&1
truncate -s 1000 "$R/obj-00000001"
truncate -s 0 "$R/obj-00000005"
secs "$RB" load train "file://$R" "${RAW[@]}" --verify --out "$T/rv"
assert_eq "train --verify of 2 cut sample files: exit" 1 "$rc"
assert_eq "train --verify, per-sample files: short_read" 2 \
    "$(jq '.phases[] | select(.name == "epoch-1") | .errors.short_read' "$T/rv/result.json")"

# 4. A call that never returns: an object that is a FIFO (open for reading waits for a writer in the kernel).
F=$T/fifo
mkdir "$F"
"$RB" load put "file://$F" --objects 4 --size 4k --keep --out "$T/fp" --quiet >/dev/null
rm "$F/obj-00000002"
mkfifo "$F/obj-00000002"
secs timeout -s KILL 60 "$RB" load get "file://$F" --objects 4 --size 4k --threads 2 --timeout 2s --duration 30s \
    --out "$T/stall"
assert_eq "get stuck in open: exit" 3 "$rc"
[ "$took" -le 6 ] || fail "get stuck in open took $took s with --timeout 2s"
[ "$(grep -c 'error:' "$T/stderr")" = 1 ] || fail "expected one error line: $(cat "$T/stderr")"
grep -Eq "error: open $F/obj-00000002 has not returned after 2\.[0-9] s \(--timeout 2\.00s\); the file system is not answering" \
    "$T/stderr" || fail "the call and file not named: $(cat "$T/stderr")"
grep -q 'outcome: failed: open .* has not returned' "$T/stderr" || fail "no outcome line: $(tail -2 "$T/stderr")"
assert_jq "$T/stall/result.json" '[.checks[] | select(.name == "completed")][0].passed == false' \
    "get stuck in open: result.json written, not completed"
assert_jq "$T/stall/result.json" '.phases[0].errors.timeout >= 1 and .phases[0].errors.timeout <= 2' \
    "get stuck in open: the stuck request counted as timeout"
ok "get stuck in open ended after $took s"
# put --overwrite replaces regular files only: the FIFO is neither opened (which would wait for a reader) nor
# removed; its request fails at once (class other) and the run fails its error check (exit 1).
secs timeout -s KILL 60 "$RB" load put "file://$F" --objects 4 --size 4k --keep --overwrite --timeout 2s \
    --out "$T/pstall"
assert_eq "put --overwrite over a FIFO: exit" 1 "$rc"
[ "$took" -le 6 ] || fail "put --overwrite over a FIFO took $took s"
grep -q "replace (not a regular file: --overwrite replaces files only)" "$T/stderr" ||
    fail "put: the FIFO not named: $(cat "$T/stderr")"
assert_jq "$T/pstall/result.json" '.summary.ops[0].errors.other == 1 and .summary.ops[0].objects == 3' \
    "put --overwrite over a FIFO: 3 files replaced, the FIFO's request failed"
assert_eq "the FIFO is still a FIFO" fifo "$(stat -c %F "$F/obj-00000002" | cut -d' ' -f1)"
# SIGINT while the call waits (--timeout 60s): the run ends about a second later, its record written.
"$RB" load get "file://$F" --objects 4 --size 4k --timeout 60s --out "$T/sig" >/dev/null 2>"$T/sig.err" &
rbpid=$!
sleep 1.5
t0=$(date +%s%N)
kill -INT "$rbpid"
rc=0
wait "$rbpid" || rc=$?
took=$((($(date +%s%N) - t0) / 1000000000))
assert_eq "SIGINT while stuck in open: exit" 3 "$rc"
[ "$took" -le 3 ] || fail "SIGINT: the run took $took s to end"
grep -q "the run was interrupted: open $F/obj-00000002 has not returned after 1\.[0-9] s; left behind in the kernel" \
    "$T/sig.err" || fail "SIGINT: the call not named: $(cat "$T/sig.err")"
assert_jq "$T/sig/result.json" '[.checks[] | select(.name == "completed")][0].detail | test("interrupted")' \
    "SIGINT: result.json written, interrupted"

# 5. put --keep of 4,294,967,295 names into an empty directory: one read of the directory answers for every name,
#    the put runs its 2 s and ends; the same names again find the files it wrote (exit 2, at once).
K=$T/keep
mkdir "$K"
secs timeout -s KILL 60 "$RB" load put "file://$K" --keep --objects 4294967295 --size 1k --duration 2s --out "$T/k1"
assert_eq "put --keep of 2^32-1 names, --duration 2s: exit" 0 "$rc"
[ "$took" -le 8 ] || fail "put --keep of 2^32-1 names took $took s"
assert_eq "files written = requests" "$(jq '.summary.ops[0].requests' "$T/k1/result.json")" "$(find "$K" -type f | wc -l)"
secs timeout -s KILL 60 "$RB" load put "file://$K" --keep --objects 4294967295 --size 1k --duration 2s --out "$T/k2"
assert_eq "the same names again: exit" 2 "$rc"
[ "$took" -le 5 ] || fail "the look-up of 2^32-1 names over a full directory took $took s"
grep -q 'holds "obj-0000000000" already' "$T/stderr" || fail "the first existing name not named: $(cat "$T/stderr")"
# Names that must be looked up one by one (a list): the look-up stops at --duration with its line, nothing written.
seq -f 'n%09.0f' 0 1999999 >"$T/names"
secs timeout -s KILL 60 "$RB" load put "file://$K" --filelist "$T/names" --size 1k --duration 1s --out "$T/k3"
assert_eq "look-up cut by --duration: exit" 3 "$rc"
[ "$took" -le 10 ] || fail "look-up with --duration 1s took $took s"
grep -Eq 'error: load put --filelist: --duration 1\.00s passed while looking up which names exist, after [0-9]+ of 2000000 names \([0-9.]+ s\): a run writes no name it has not checked, so it wrote nothing' \
    "$T/stderr" || fail "the look-up line: $(cat "$T/stderr")"
assert_eq "nothing written by the cut look-up" 0 "$(find "$K" -name 'n*' | wc -l)"
# 5. Requests that end inside their own system call (stat, delete; load mixed of stat alone), closed loop, no
#    --count: each round of slots is followed by a look at the stop flags, so --duration and SIGTERM end the run.
S=$T/stat
mkdir "$S"
for i in 0 1 2 3; do head -c 100 /dev/zero >"$S/obj-0000000$i"; done
secs timeout -s KILL 60 "$RB" load stat "file://$S" --objects 4 --duration 2s --out "$T/s1"
assert_eq "stat, --duration 2s: exit" 0 "$rc"
[ "$took" -le 10 ] || fail "stat with --duration 2s took $took s"
assert_jq "$T/s1/result.json" '.summary.ops[0].requests > 4 and .summary.ops[0].errors.total == 0' "stat: requests beyond one round, no error"
secs timeout -s KILL 60 "$RB" load mixed "file://$S" --objects 4 --size 100 --mix stat=1 --no-prepare --overwrite \
    --duration 2s --out "$T/s2"
assert_eq "mixed stat=1, --duration 2s: exit" 0 "$rc"
[ "$took" -le 10 ] || fail "mixed stat=1 with --duration 2s took $took s"
"$RB" load stat "file://$S" --objects 4 --duration 1m --out "$T/s3" >"$T/s3.out" 2>&1 &
pid=$!
sleep 2
kill -TERM "$pid"
t0=$SECONDS
rc=0; wait "$pid" || rc=$?
assert_eq "stat, SIGTERM: exit" 1 "$rc"
[ $((SECONDS - t0)) -le 5 ] || fail "stat took $((SECONDS - t0)) s to end after SIGTERM"
assert_jq "$T/s3/result.json" '.summary.ops[0].requests > 4' "stat, SIGTERM: result.json with what was measured"
assert_eq "the stat target's files untouched" 4 "$(find "$S" -type f -size 100c | wc -l)"
ok "file_limits: all checks passed"
