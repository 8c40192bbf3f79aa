#!/usr/bin/env bash
# needs: -
# Everything a file:// run made is accounted for, on a small tmpfs (8 MiB; a second one with few inodes) that fills
# up: a put that meets ENOSPC (psync and io_uring) removes its partial and empty files, left_behind in result.json
# equals the files the run left on disk (0 without --keep, the whole ones with it) and the foreign file stays; a put
# or checkpoint that cannot fit is refused before writing (exit 3, nothing made); a checkpoint write that meets
# ENOSPC is complete:false, out of the means, and leaves no file (--mode write: only whole files, the unfinished
# ones named as removed); a checkpoint cut short by SIGINT records its last write complete:false, out of the mean,
# and lists in left-behind.txt exactly the files on disk; a read-only directory is one error naming EROFS, exit 3;
# --writes 0 --reads 0 and --inflight above io_uring's ring are refused at parse (exit 2). No output says "nan".
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: mounting a tmpfs needs root"; exit 0; }

M=$T/m
mkdir -p "$M"
mount -t tmpfs -o size=8m tmpfs "$M" || fail "tmpfs not mounted"
AT_EXIT+=("umount '$M'")
head -c 1048576 /dev/urandom >"$M/foreign"
FOREIGN_SUM=$(md5sum <"$M/foreign")

# run NAME EXPECTED_EXIT ARGS...: railbench ARGS --out $T/NAME, output in $T/NAME.out and .err.
run() {
    local name=$1 want=$2 rc=0; shift 2
    "$RB" "$@" --out "$T/$name" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    [ "$rc" = "$want" ] || { cat "$T/$name.err" >&2; fail "$name: exit $rc, expected $want"; }
    ! grep -qiw 'nan' "$T/$name.out" "$T/$name.err" || fail "$name: printed nan: $(grep -iw nan "$T/$name.out" "$T/$name.err")"
    [ ! -f "$T/$name/result.json" ] || ! grep -qiw 'nan' "$T/$name/result.json" || fail "$name: nan in result.json"
}
# made DIR: the files under DIR other than the foreign one.
made() { find "$1" -type f ! -name foreign | wc -l; }
foreign_intact() { [ "$(md5sum <"$M/foreign")" = "$FOREIGN_SUM" ] || fail "$1: the foreign file changed"; }

# 1. put with ENOSPC part-way: 6 objects of 1 to 3 MiB (seeded) do not fit in the 7 MiB left.
for eng in psync io_uring; do
    run "put-$eng" 3 load put "file://$M" --objects 6 --min-size 1MiB --max-size 3MiB --io-engine "$eng" --inflight 4
    grep -q 'No space left on device' "$T/put-$eng.err" || fail "put-$eng: ENOSPC not named"
    left=$(jqr "$T/put-$eng/result.json" .summary.left_behind.objects)
    assert_eq "put $eng: files the run made left on disk = left_behind" "$left" "$(made "$M")"
    assert_eq "put $eng: nothing left" 0 "$left"
    # (no whole object: no cleanup phase, no check)
    assert_jq "$T/put-$eng/result.json" '.summary.cleanup.failed == 0 and .summary.cleanup.deleted == .summary.cleanup.written
        and ([.checks[] | select(.name == "cleanup") | .passed] | all)' "put $eng: cleanup deleted every whole object"
    grep -q "removed $M/rb-.*, the unfinished file this run created" "$T/put-$eng.err" \
        || fail "put-$eng: the removed unfinished file is not named"
    foreign_intact "put $eng"
done

# 2. --keep: the whole objects stay (left_behind counts them), the unfinished one does not.
run put-keep 3 load put "file://$M" --objects 6 --min-size 1MiB --max-size 3MiB --keep --prefix kept-
left=$(jqr "$T/put-keep/result.json" .summary.left_behind.objects)
assert_eq "put --keep: left_behind = the files on disk" "$left" "$(made "$M")"
[ "$left" -gt 0 ] || fail "put --keep: no whole object kept"
for f in "$M"/kept-*; do
    want=$(grep -o "PUT.*$(basename "$f")" "$T/put-keep.err" || true)
    [ -z "$want" ] || fail "put --keep: $f is the one whose write failed, yet it stays"
done
rm -f "$M"/kept-*
foreign_intact "put --keep"

# 3. What cannot fit is refused before anything is written.
run put-huge 3 load put "file://$M" --objects 1 --size 1TiB
grep -q 'needs 1099.512 GB, the file system under it has .* GB free: nothing written (ENOSPC)' "$T/put-huge.err" \
    || fail "put --size 1TiB: not refused up front: $(cat "$T/put-huge.err")"
assert_eq "put --size 1TiB: files made" 0 "$(made "$M")"
run ckpt-huge 3 load checkpoint "file://$M" --model llama3-8b --scale 1/2000 --writes 1 --reads 0 --name big
grep -q 'needs .* GB, the file system under it has .* GB free: nothing written (ENOSPC)' "$T/ckpt-huge.err" \
    || fail "checkpoint too big: not refused: $(cat "$T/ckpt-huge.err")"
[ ! -e "$M/big" ] || fail "checkpoint too big: made $M/big"
ok "a put or checkpoint larger than the free space is refused with nothing made"

# 4. A checkpoint write that meets ENOSPC part-way: a tmpfs with room for the bytes but for only 10 inodes.
N=$T/n
mkdir -p "$N"
mount -t tmpfs -o size=16m,nr_inodes=10 tmpfs "$N" || fail "tmpfs (few inodes) not mounted"
AT_EXIT+=("umount '$N'")
for mode in both write; do
    # io_uring: 8 files in flight when the create fails, all unfinished; psync (--mode write): the files before it whole.
    eng=(--io-engine io_uring --inflight 8)
    [ "$mode" = both ] || eng=(--io-engine psync)
    run "ck-$mode" 3 load checkpoint "file://$N" --model llama3-8b --scale 1/20000 --writes 1 --reads 0 \
        --mode "$mode" --name "c$mode" "${eng[@]}"
    grep -q 'No space left on device' "$T/ck-$mode.err" || fail "ck-$mode: ENOSPC not named"
    R=$T/ck-$mode/result.json
    assert_jq "$R" '.summary.writes[0].complete == false and .summary.writes[0].throughput_bytes_per_s == null and
        .summary.writes[0].files == 16 and .summary.writes[0].files_done < 16 and
        .summary.write_mean.checkpoints == 0 and .summary.write_mean.throughput_bytes_per_s == null' \
        "checkpoint $mode with ENOSPC: complete false, no throughput, no mean"
    grep -q '| write |    1 |.*–.*incomplete:' "$T/ck-$mode.out" || fail "ck-$mode: the table does not say incomplete"
    done_n=$(jqr "$R" .summary.writes[0].files_done)
    if [ "$mode" = write ]; then
        [ "$done_n" -gt 0 ] || fail "ck-write: no file written whole before ENOSPC"
        assert_eq "checkpoint --mode write: the files kept are the whole ones" "$done_n" "$(made "$N/cwrite")"
        while read -r f; do
            [ ! -e "$f" ] || fail "ck-write: $f was named removed but exists"
        done < <(sed -n "s/.*info: removed \(.*\), the unfinished file this run created/\1/p" "$T/ck-write.err")
        find "$N/cwrite" -type f -printf '%s\n' | while read -r s; do
            [ "$s" -gt 0 ] || fail "ck-write: an empty file stays"
        done
        rm -rf "${N:?}/cwrite"
    else
        assert_eq "checkpoint with ENOSPC: files left" 0 "$(made "$N")"
        [ ! -e "$N/cboth" ] || fail "checkpoint with ENOSPC: its directories stay"
    fi
done

# 5. A checkpoint cut short by SIGINT: its last write is complete:false and out of the mean; what stays on disk
#    is exactly what left-behind.txt lists, and load delete --filelist removes it.
C=$T/c
mkdir -p "$C"
rc=0
timeout --preserve-status -s INT 1.5 "$RB" load checkpoint "file://$C" --model llama3-8b --scale 1/2000 --writes 40 \
    --reads 40 --name i --out "$T/int" >"$T/int.out" 2>"$T/int.err" || rc=$?
assert_eq "interrupted checkpoint: exit" 1 "$rc"
! grep -qiw nan "$T/int.out" "$T/int.err" "$T/int/result.json" || fail "interrupted checkpoint: printed nan"
R=$T/int/result.json
assert_jq "$R" '.summary.writes | length >= 1' "interrupted checkpoint: writes recorded"
assert_jq "$R" '.summary.write_mean.checkpoints as $m | [.summary.writes[] | select(.complete)] | length == $m' \
    "interrupted checkpoint: the mean counts only whole writes"
assert_jq "$R" '[.summary.writes[] | select(.complete | not) | .throughput_bytes_per_s == null] | all' \
    "interrupted checkpoint: no throughput for a write cut short"
last=$(jqr "$R" '.summary.writes[-1] | "\(.complete) \(.files_done) \(.files)"')
case $last in
"true 16 16") ok "the signal came after the last write's last file: it is whole" ;;
false*) ok "the write cut short: $last (complete, files done, files)" ;;
*) fail "interrupted checkpoint: last write $last" ;;
esac
sort "$T/int/left-behind.txt" >"$T/listed"
(cd "$C" && find . -type f -printf '%P\n' | sort) >"$T/ondisk"
diff "$T/listed" "$T/ondisk" || fail "interrupted checkpoint: left-behind.txt differs from the files on disk"
assert_eq "interrupted checkpoint: cleanup.written = files listed" "$(wc -l <"$T/listed")" "$(jqr "$R" .summary.cleanup.written)"
done_files=$(jqr "$R" '[.summary.writes[].files_done] | add')
assert_eq "interrupted checkpoint: files on disk = the files the writes finished" "$done_files" "$(wc -l <"$T/ondisk")"
grep -q "railbench load delete --filelist $T/int/left-behind.txt file://$C removes them" "$T/int.err" \
    || fail "interrupted checkpoint: the removing command is not named"
run int-delete 0 load delete --filelist "$T/int/left-behind.txt" "file://$C"
assert_eq "after load delete --filelist: files left" 0 "$(find "$C" -type f | wc -l)"

# 6. A read-only file system is refused before writing (EROFS named, exit 3); an unwritable directory (a user
#    without write permission) is one error naming the directory it could not make and EACCES, exit 3; neither
#    claims a directory it never made.
RO=$T/ro
mkdir -p "$RO"
mount -t tmpfs -o ro,size=64m tmpfs "$RO" || fail "read-only tmpfs not mounted"
AT_EXIT+=("umount '$RO'")
run ck-ro 3 load checkpoint "file://$RO" --model llama3-8b --scale 1/20000 --writes 1 --reads 1 --name r
grep -q "error: file://$RO: 1 checkpoint(s) of .* bytes: the file system under it is mounted read-only (EROFS)" \
    "$T/ck-ro.err" || fail "read-only: EROFS not named: $(cat "$T/ck-ro.err")"
ok "read-only file system: EROFS named, exit 3"
# The user's directories where it can reach them: the checkout may be under a home (/root) it cannot enter.
UD=$(mktemp -d /tmp/rb-left-behind.XXXXXX)
AT_EXIT+=("rm -rf '$UD'")
chmod 755 "$UD"
U=$UD/u
mkdir -p "$U" "$UD/uout" "$UD/ompi"
chown 65534:65534 "$UD/uout" "$UD/ompi"
rc=0
# Open MPI's session directory where the user can make it (tests/lib.sh puts it under $T, root's).
OMPI_MCA_orte_tmpdir_base=$UD/ompi setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$RB" load checkpoint "file://$U" --model llama3-8b --scale 1/20000 --writes 1 --reads 1 --name r \
    --out "$UD/uout/r" >"$T/ck-u.out" 2>"$T/ck-u.err" || rc=$?
assert_eq "unwritable directory: exit" 3 "$rc"
grep -q "error: file://$U: Permission denied (mkdir $U/r)" "$T/ck-u.err" \
    || fail "unwritable: the error does not name EACCES and the directory: $(cat "$T/ck-u.err")"
grep -q "outcome: failed: file://$U: Permission denied (mkdir $U/r)" "$T/ck-u.out" "$T/ck-u.err" \
    || fail "unwritable: the outcome does not name EACCES"
! grep -qE 'this run made|No such file or directory' "$T/ck-u.err" \
    || fail "unwritable: ENOENT, or a directory it never made: $(cat "$T/ck-u.err")"
ok "unwritable directory: EACCES named with the directory, exit 3"

# 7. Nothing to measure, and a ring the kernel refuses, are refused where the options are read.
assert_exit 2 "checkpoint --writes 0 --reads 0" "$RB" load checkpoint "file://$C" --model llama3-8b --writes 0 --reads 0
assert_stderr_line '^railbench: error: --writes 0 --reads 0: nothing to measure$'
assert_exit 2 "--inflight 40000 --io-engine io_uring" "$RB" load put "file://$C" --objects 1 --size 4k \
    --inflight 40000 --io-engine io_uring --quiet
assert_stderr_line 'error: --inflight 40000 with --io-engine io_uring: at most 32768'
assert_eq "files made by the refused runs" 0 "$(find "$C" -type f | wc -l)"
