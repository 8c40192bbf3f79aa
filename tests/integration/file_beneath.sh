#!/usr/bin/env bash
# needs: root
# Every file operation of a file:// run stays beneath the target: a symbolic link at an object's name (to a file or a
# directory outside) is refused and counted as class symlink by put --overwrite, get, delete and stat; a hard link
# to a file outside is replaced as a name by put --overwrite, its shared inode never written; a victim file outside
# keeps its bytes, mtime and existence through all of it (load meta and load checkpoint included). On tmpfs and on
# ext4 (a loop device).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: tmpfs and loop mounts need root"; exit 0; }

errs() { jq -c ".summary.ops[0].errors.$2" "$T/$TAG-$1/result.json"; }
ops() { jq -c ".summary.ops[0].$2" "$T/$TAG-$1/result.json"; }
# The victim's fingerprint: sha256, mtime (ns), size and link count; "missing" when it is gone.
print_victim() { [ -e "$1" ] && echo "$(sha256sum <"$1" | cut -d' ' -f1) $(stat -c '%.9Y %s %h' "$1")" || echo missing; }
# run NAME EXPECTED_EXIT ARGS...: a railbench run into $T/$TAG-NAME, its exit checked.
run() {
    local name=$1 want=$2 rc=0
    shift 2
    "$RB" load "$@" --out "$T/$TAG-$name" --quiet >/dev/null 2>"$T/$TAG-$name.err" || rc=$?
    assert_eq "$TAG $name: exit" "$want" "$rc"
}
victim_unchanged() {
    assert_eq "$TAG $1: the victim outside unchanged (sha256, mtime, size, links)" "$VICTIM0" "$(print_victim "$V")"
    assert_eq "$TAG $1: the directory outside unchanged" "$OUTLS0" "$(ls -A "$OUT/dir")"
}

suite() {
    TAG=$1
    local FS=$2
    OUT=$FS/outside
    V=$OUT/victim
    mkdir -p "$OUT/dir"
    head -c 5000 /dev/urandom >"$V"
    echo sentinel >"$OUT/dir/sentinel"
    touch -d '2020-01-02 03:04:05' "$V"
    VICTIM0=$(print_victim "$V")
    OUTLS0=$(ls -A "$OUT/dir")

    # 1. put --overwrite with a link at one of its names: that name refused (class symlink), the link left, the
    #    other name written; the run fails its checks (exit 1) and names the path.
    local D=$FS/d1
    mkdir "$D"
    ln -s "$V" "$D/obj-00000001"
    mkdir "$T/$TAG-prom"
    run put 1 put "file://$D" --objects 2 --size 4k --keep --overwrite --prom-textfile "$T/$TAG-prom"
    assert_eq "$TAG put: Prometheus' count of class symlink" 1 \
        "$(awk '/^railbench_errors_total\{.*class="symlink"/ { print $2 }' "$T/$TAG-prom/railbench.prom")"
    assert_eq "$TAG put: symlink errors" 1 "$(errs put symlink)"
    assert_eq "$TAG put: errors in all" 1 "$(errs put total)"
    assert_eq "$TAG put: the other file written" 4096 "$(stat -c %s "$D/obj-00000000")"
    [ -L "$D/obj-00000001" ] || fail "$TAG put: the link was replaced"
    grep -q "obj-00000001: a symbolic link" "$T/$TAG-put.err" || fail "$TAG put: path not named: $(cat "$T/$TAG-put.err")"
    assert_jq "$T/$TAG-put/result.json" '[.checks[] | select(.name == "no_symlinks") | .passed] == [false]' "$TAG put: check no_symlinks failed"
    victim_unchanged put
    # without --overwrite the look-up finds something at the name and the run refuses to start
    run put-nooverwrite 2 put "file://$D" --objects 2 --size 4k --keep
    victim_unchanged put-nooverwrite

    # 2. get, stat, delete over --objects: the link refused and counted each time, never followed.
    run get 1 get "file://$D" --objects 2 --count 2 --pattern epoch
    assert_eq "$TAG get: symlink errors" 1 "$(errs get symlink)"
    assert_eq "$TAG get: bytes read (the file, not the victim)" 4096 "$(ops get bytes)"
    run stat 1 stat "file://$D" --objects 2 --count 2 --pattern epoch
    assert_eq "$TAG stat: symlink errors" 1 "$(errs stat symlink)"
    # get over a listing: links are not listed, so only the file is read
    run get-list 0 get "file://$D" --pattern epoch --count 1
    assert_eq "$TAG get over a listing: requests (files only)" 1 "$(ops get-list requests)"
    assert_eq "$TAG get over a listing: bytes" 4096 "$(ops get-list bytes)"
    run delete 1 delete "file://$D" --objects 2
    assert_eq "$TAG delete: symlink errors" 1 "$(errs delete symlink)"
    [ -L "$D/obj-00000001" ] || fail "$TAG delete: the link was removed"
    [ ! -e "$D/obj-00000000" ] || fail "$TAG delete: the file was not removed"
    victim_unchanged delete

    # 3. a symlinked directory inside the target (sub -> a directory outside): names under it refused, nothing made there.
    D=$FS/d3
    mkdir "$D"
    ln -s "$OUT/dir" "$D/sub"
    run dput 1 put "file://$D" --prefix sub/ --objects 3 --size 4k --overwrite
    assert_eq "$TAG dir put: symlink errors" 3 "$(errs dput symlink)"
    run dget 1 get "file://$D" --prefix sub/ --objects 3 --count 3 --pattern epoch
    assert_eq "$TAG dir get: symlink errors" 3 "$(errs dget symlink)"
    run dstat 1 stat "file://$D" --prefix sub/ --objects 3 --count 3 --pattern epoch
    assert_eq "$TAG dir stat: symlink errors" 3 "$(errs dstat symlink)"
    run ddel 1 delete "file://$D" --prefix sub/ --objects 3
    assert_eq "$TAG dir delete: symlink errors" 3 "$(errs ddel symlink)"
    # a deeper name (sub/a/obj-…): the directories are not made through the link either
    run dput2 1 put "file://$D" --prefix sub/a/ --objects 2 --size 4k --overwrite
    assert_eq "$TAG dir put (deeper): symlink errors" 2 "$(errs dput2 symlink)"
    # load meta: a --tree that is a link to a directory outside is something there: refused before it starts
    run meta 2 meta "file://$D" --tree sub --dirs 1 --files 2
    victim_unchanged dir

    # 4. a hard link inside the target to the victim: put --overwrite replaces the name, the shared inode is untouched.
    D=$FS/d4
    mkdir "$D"
    ln "$V" "$D/obj-00000000"
    run hard 0 put "file://$D" --objects 1 --size 4k --keep --overwrite
    assert_eq "$TAG hard link: errors" 0 "$(errs hard total)"
    assert_eq "$TAG hard link: the name holds the new file" 4096 "$(stat -c %s "$D/obj-00000000")"
    assert_eq "$TAG hard link: the victim has one link again" 1 "$(stat -c %h "$V")"
    victim_unchanged hard
    run hard-get 0 get "file://$D" --objects 1 --count 1 --verify --size 4k
    assert_eq "$TAG hard link: the new file verifies" 4096 "$(ops hard-get bytes)"

    # 5. load checkpoint whose folder NAME is a link to a directory outside: every file refused (class symlink).
    mkdir "$FS/d5"
    ln -s "$OUT/dir" "$FS/d5/ck"
    run ckpt 1 checkpoint "file://$FS/d5" --model llama3-8b --scale 1/2000 --writes 1 --reads 0 --name ck
    assert_jq "$T/$TAG-ckpt/result.json" '.phases[] | select(.name == "write-1") | .count > 0 and .errors.symlink == .count' \
        "$TAG checkpoint: every write of the folder through a link refused as symlink"
    victim_unchanged ckpt

    # 6. the root itself given through a link is the user's choice: resolved once, used as given.
    mkdir "$FS/real"
    ln -s "$FS/real" "$FS/rootlink"
    run root 0 put "file://$FS/rootlink" --objects 3 --size 4k --keep
    assert_eq "$TAG root via a link: files in the real directory" 3 "$(find "$FS/real" -type f | wc -l)"
    victim_unchanged root
}

mkdir "$T/tmpfs"
mount -t tmpfs -o size=64m tmpfs "$T/tmpfs" || fail "tmpfs not mounted"
AT_EXIT+=("umount '$T/tmpfs'")
suite tmpfs "$T/tmpfs"

loopfs_up ext4 128M ext4 # room for the 56 MB checkpoint of section 5 (it is refused up front where it cannot fit)
suite ext4 "$LOOP_MNT"
