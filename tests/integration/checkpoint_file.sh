#!/usr/bin/env bash
# needs: mpi root
# railbench load checkpoint on file systems (the file protocol) on loop devices: XFS and ext4 hold exactly the
# files and bytes of DLIO's formula after 2 ranks of llama3-8b write them (fsync at close by default), the reads
# are verified with the ranks shifted, a run without --keep leaves no file; a checkpoint larger than the file
# system is refused before writing (exit 3, nothing made, with or without --keep); --verify
# counts a flipped byte, two swapped blocks and another rank's block as checksum errors, file by file.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T"
SCALE=2000
rbmpi() { local name=$1 np=$2; shift 2
    rb_mpirun "$np" "$RB" "$@" --out "$T/$name" >"$T/$name.out" 2>"$T/$name.err" \
        || { cat "$T/$name.err" >&2; fail "$name: railbench failed"; }; }
# The formula's files of one checkpoint of llama3-8b (1x1x8, ZeRO 3) at 1/SCALE, from DLIO's rules (checkpoint_formula.py).
LLAMA8B="4096 32 14336 128256 32 8 1 1 8 3"
# shellcheck disable=SC2086
python3 "$ROOT/tests/integration/checkpoint_formula.py" $LLAMA8B $SCALE | sort >"$T/want"
WANT=$(awk '{s += $2} END {print s}' "$T/want")

for fs in xfs ext4; do
    loopfs_up "$fs" 400M "$fs"
    mkdir -p "$LOOP_MNT/ck"
    rbmpi "$fs-a" 2 load checkpoint "file://$LOOP_MNT/ck" --model llama3-8b --scale 1/$SCALE --writes 2 --reads 2 \
        --recovery-rank-shift --verify --name a --keep
    for k in 1 2; do
        (cd "$LOOP_MNT/ck/a/global_step$k" && find . -type f -printf '%P %s\n' | sort) >"$T/got"
        diff "$T/want" "$T/got" || fail "$fs checkpoint $k: files and sizes differ from the formula's"
    done
    ok "$fs: 16 files, $WANT bytes per checkpoint, each the formula's size"
    R=$T/$fs-a/result.json
    assert_jq "$R" ".summary.file.fsync == \"close\" and .summary.checkpoint_bytes == $WANT" "$fs: fsync at close"
    assert_jq "$R" "[.summary.writes[], .summary.reads[]] | all(.bytes == $WANT and .errors == 0)" \
        "$fs: 2 writes and 2 verified reads of the whole checkpoint"
    # A run without --keep removes exactly what it wrote: a's files stay, b leaves nothing.
    rbmpi "$fs-b" 2 load checkpoint "file://$LOOP_MNT/ck" --model llama3-8b --scale 1/$SCALE --writes 1 --reads 1 \
        --name b --verify
    [ ! -e "$LOOP_MNT/ck/b" ] || fail "$fs: run b left $(find "$LOOP_MNT/ck/b" | tr '\n' ' ')"
    assert_jq "$T/$fs-b/result.json" '.summary.dirs_removed == 2' "$fs: run b removed the 2 directories it made (b, b/global_step1)"
    assert_eq "$fs: run a's files untouched" 32 "$(find "$LOOP_MNT/ck/a" -type f | wc -l)"
    # Directories that existed before a run stay: pre/ and pre/global_step1/ were there (empty), global_step2/ was not.
    mkdir -p "$LOOP_MNT/ck/pre/global_step1"
    rbmpi "$fs-pre" 2 load checkpoint "file://$LOOP_MNT/ck" --model llama3-8b --scale 1/$SCALE --writes 2 --reads 0 \
        --name pre
    assert_eq "$fs: what run pre left (its own directory removed, the two that were there kept)" \
        "$LOOP_MNT/ck/pre $LOOP_MNT/ck/pre/global_step1" "$(find "$LOOP_MNT/ck/pre" | sort | tr '\n' ' ' | sed 's/ $//')"
    assert_jq "$T/$fs-pre/result.json" '.summary.dirs_removed == 1' "$fs: run pre removed 1 directory"
    rmdir "$LOOP_MNT/ck/pre/global_step1" "$LOOP_MNT/ck/pre"
done

# --verify catches what storage can get wrong (tests/unit/test_payload.c has the cases byte by byte). In ext4's
# checkpoint a, step 1: a byte flipped in rank 0's optimizer file, its 1 MiB write blocks 1 and 3 swapped in rank 3's,
# in rank 6's model file a 4 KiB block replaced by the same block of rank 7's. Reading step 1 back verified: exactly
# those 3 files are checksum errors (exit 1), where the same read was clean before (above).
S1=$LOOP_MNT/ck/a/global_step1
python3 - "$S1" <<'PY'
import sys
d = sys.argv[1] + "/zero_pp_rank_"
with open(d + "0_mp_rank_00_optim_states", "r+b") as f:
    f.seek(3000001); b = f.read(1); f.seek(3000001); f.write(bytes([b[0] ^ 0x04]))
with open(d + "3_mp_rank_00_optim_states", "r+b") as f:
    f.seek(1 << 20); one = f.read(1 << 20); f.seek(3 << 20); three = f.read(1 << 20)
    f.seek(1 << 20); f.write(three); f.seek(3 << 20); f.write(one)
with open(d + "7_mp_rank_00_model_states", "rb") as f:
    f.seek(5 * 4096); blk = f.read(4096)
with open(d + "6_mp_rank_00_model_states", "r+b") as f:
    f.seek(5 * 4096); f.write(blk)
PY
rc=0
rb_mpirun 2 "$RB" load checkpoint "file://$LOOP_MNT/ck" --model llama3-8b --scale 1/$SCALE --mode read --writes 1 \
    --reads 1 --name a --verify --keep --out "$T/bad" >"$T/bad.out" 2>"$T/bad.err" || rc=$?
assert_eq "damaged checkpoint read verified: exit" 1 "$rc"
assert_jq "$T/bad/result.json" '.summary.reads[0].errors == 3 and
    (.phases[] | select(.name == "read-1") | .errors.checksum == 3 and .count == 16)' \
    "a flipped byte, two swapped 1 MiB blocks, another rank's block: 3 files of 16 checksum errors"

# --subset: 2 processes play ranks 0 and 1 of llama3-70b's 64 (MLPerf's subset mode): 2 x 2 files, 2/64 of the bytes.
rbmpi sub 2 load checkpoint "file://$LOOP_MNT/ck" --model llama3-70b --subset --scale 1/100000 --writes 1 --reads 1 \
    --verify --name s --keep
assert_eq "subset: files" 4 "$(find "$LOOP_MNT/ck/s" -type f | wc -l)"
assert_jq "$T/sub/result.json" '(.summary.checkpoint_bytes * 32 - .summary.model.checkpoint_bytes / 100000 | fabs)
    < .summary.model.checkpoint_bytes / 100000 * 0.001 and .summary.reads[0].errors == 0' \
    "subset: 2 of 64 ranks' bytes, read back verified"

# --drop-caches (root): between the writes and the reads every host writes back and drops its page cache. Proof by
# mincore (--cold-check): each of the 16 files read had no page cached before its read; without the drop the same
# reads find the files' pages cached (they were just written), and the cold check fails (exit 1).
[ "$(id -u)" = 0 ] || fail "needs root: /proc/sys/vm/drop_caches and loop devices"
rbmpi drop 2 load checkpoint "file://$LOOP_MNT/ck" --model llama3-8b --scale 1/$SCALE --writes 1 --reads 1 --verify \
    --drop-caches --cold-check
R=$T/drop/result.json
assert_jq "$R" '.summary.cache_flush == "drop_caches" and (.summary.cache_drop | length) == 1 and
    (.summary.cache_drop[0] | .dropped and (.cached_before_bytes | type) == "number" and (.cached_after_bytes | type) == "number")' \
    "drop recorded: one host, Cached before and after from /proc/meminfo"
assert_jq "$R" '(.checks[] | select(.name == "read_1_cold") | .passed) and
    (.phases[] | select(.name == "read-1") | .extra.cache_miss == 16 and .extra.cache_hit == 0 and .extra.cache_other == 0)' \
    "after the drop: 16 of 16 files read cold (mincore)"
rc=0
rb_mpirun 2 "$RB" load checkpoint "file://$LOOP_MNT/ck" --model llama3-8b --scale 1/$SCALE --writes 1 --reads 1 \
    --verify --cold-check --out "$T/warm" >"$T/warm.out" 2>"$T/warm.err" || rc=$?
assert_eq "without --drop-caches: the cold check fails" 1 "$rc"
assert_jq "$T/warm/result.json" '(.checks[] | select(.name == "read_1_cold") | .passed | not) and
    (.phases[] | select(.name == "read-1") | .extra.cache_hit + .extra.cache_other > 0)' \
    "without the drop the files read had pages cached"

# A checkpoint that cannot fit: 32 MiB of ext4 cannot hold 56 MB, refused before anything is written (statvfs);
# ENOSPC part-way through a write is tests/integration/left_behind_file.sh's.
loopfs_up small 32M ext4
for keep in "" --keep; do
    rc=0
    rb_mpirun 2 "$RB" load checkpoint "file://$LOOP_MNT" --model llama3-8b --scale 1/$SCALE --writes 1 --reads 0 \
        --name full $keep --out "$T/full$keep" >"$T/full.out" 2>"$T/full.err" || rc=$?
    assert_eq "too big${keep:+ $keep}: exit" 3 "$rc"
    grep -q "error: file://$LOOP_MNT: 1 checkpoint(s) of .* bytes needs 0.056 GB, the file system under it has .* GB free: nothing written (ENOSPC)" \
        "$T/full.err" || fail "too big$keep: not refused up front: $(cat "$T/full.err")"
    [ ! -e "$LOOP_MNT/full" ] || fail "too big$keep: the run made $(find "$LOOP_MNT/full" | tr '\n' ' ')"
    ok "a checkpoint larger than the file system${keep:+ $keep}: exit 3, refused before writing, nothing made"
done
