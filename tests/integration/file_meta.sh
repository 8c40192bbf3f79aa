#!/usr/bin/env bash
# needs: mpi root
# railbench load meta (mdtest's phases) on an ext4 loop device from 2 ranks x 2 threads: every phase's count equals
# what find sees on disk, the bytes read are the bytes written, names are shared out once over ranks and threads,
# the tree is the run's own (never one that exists), and a full file system ends the run with one line, exit 3.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: loop devices need root"; exit 0; }
row() { jq -c "[.summary.ops[] | select(.phase == \"$2\")][0] | $3" "$T/$1/result.json"; }

loopfs_up meta 256M ext4
D=$LOOP_MNT/data
mkdir "$D"

# 1. A kept tree of 6 directories x 50 files of 3000 bytes: mkdir, create, stat, read (verified) from 2 ranks x 2
#    threads; find sees exactly the directories and files the phases counted, each of 3000 bytes.
rb_mpirun 2 "$RB" load meta "file://$D" --dirs 6 --files 50 --size 3000 -t 2 --keep --tree kept --verify \
    --phases mkdir,create,stat,read --out "$T/m1" --quiet >/dev/null
assert_eq "kept: phases run" '["mkdir","create","stat","read"]' "$(jq -c '[.summary.ops[].phase]' "$T/m1/result.json")"
assert_eq "kept: mkdir count, directories on disk (find)" "6 6" \
    "$(row m1 mkdir .requests) $(find "$D/kept" -mindepth 1 -type d | wc -l)"
assert_eq "kept: create count = files on disk (find)" "$(find "$D/kept" -type f | wc -l)" "$(row m1 create '.requests - .errors.total')"
assert_eq "kept: every file 3000 bytes" 3000 "$(find "$D/kept" -type f -printf '%s\n' | sort -u)"
assert_eq "kept: 50 files in every directory" 50 "$(for d in "$D"/kept/*/; do find "$d" -type f | wc -l; done | sort -u)"
assert_eq "kept: create bytes" $((300 * 3000)) "$(row m1 create .bytes)"
assert_eq "kept: read bytes, errors" "$((300 * 3000)) 0" "$(row m1 read '"\(.bytes) \(.errors.total)"' | tr -d '"')"
assert_eq "kept: stat count" 300 "$(row m1 stat .requests)"
assert_jq "$T/m1/result.json" '[.checks[] | select(.name == "complete")][0].passed' "kept: complete check passed"
assert_jq "$T/m1/result.json" '.summary.ops[] | select(.phase == "create") | .latency_ns.p50 > 0 and .ops_per_s > 0' \
    "kept: create has a rate and a latency"
# The bytes are load put's payload of the same seed and name: the file reads back through load get --verify.
"$RB" load get "$D/kept" --prefix d0000003/ --pattern epoch --verify --seed 1 --size 3000 --out "$T/g1" --quiet >/dev/null
assert_eq "kept: load get --verify over one directory" "50 0" \
    "$(jq -r '.summary.ops[0] | "\(.requests) \(.errors.total)"' "$T/g1/result.json")"

# 2. The whole cycle from 2 ranks: every phase does all its items, and nothing is left on disk.
rb_mpirun 2 "$RB" load meta "$D" --dirs 4 --files 250 --size 1k -t 2 --out "$T/m2" --quiet >/dev/null
for p in create stat read rename unlink; do
    assert_eq "cycle: $p requests, errors" "1000 0" "$(row m2 $p '"\(.requests) \(.errors.total)"' | tr -d '"')"
done
assert_eq "cycle: mkdir, rmdir" "4 4" "$(row m2 mkdir .requests) $(row m2 rmdir .requests)"
assert_eq "cycle: a phase record with a latency histogram per operation" "mkdir create stat read rename unlink rmdir 1000" \
    "$(jq -r '([.phases[].name] | join(" ")) + " " + ([.phases[] | select(.name == "stat") | .latency_hist.count][0] | tostring)' "$T/m2/result.json")"
assert_eq "cycle: only the kept tree is left" "kept" "$(ls "$D")"
assert_jq "$T/m2/result.json" '.summary.tree | test("/rb-[0-9TZ]+-[0-9a-f]+-meta$")' "cycle: the tree had the run's name"

# 3. Names are shared out once: 2 ranks x 3 threads over 7 x 13 names create each once (no EEXIST, none missing).
rb_mpirun 2 "$RB" load meta "$D" --dirs 7 --files 13 -t 3 --phases mkdir,create,rename --keep --tree odd --out "$T/m3" --quiet >/dev/null
assert_eq "shares: created, renamed, errors" "91 91 0" \
    "$(jq -r '[.summary.ops[] | select(.phase == "create" or .phase == "rename")] | "\(.[0].requests) \(.[1].requests) \(.[0].errors.total + .[1].errors.total)"' "$T/m3/result.json")"
assert_eq "shares: files on disk, all renamed (find)" "91 91" \
    "$(find "$D/odd" -type f | wc -l) $(find "$D/odd" -type f -name 'f*.r' | wc -l)"

# 4. Bad input: one line, exit 2 for usage, 3 for what cannot be done; nothing that existed is touched.
assert_exit 2 "a tree that exists" "$RB" load meta "$D" --tree kept --quiet
assert_stderr_line 'tree kept: .* exists already'
assert_eq "the existing tree untouched" 300 "$(find "$D/kept" -type f | wc -l)"
assert_exit 2 "unknown phase" "$RB" load meta "$D" --phases mkdir,create,chmod --keep --quiet
assert_stderr_line 'phases: "chmod": expected a list of'
assert_exit 2 "a tree left without --keep" "$RB" load meta "$D" --phases mkdir,create,stat --quiet
assert_stderr_line 'unlink and rmdir remove the run.s tree; add them, or --keep'
assert_exit 2 "an object target" "$RB" load meta http://127.0.0.1:1/x --quiet
assert_stderr_line 'load meta works on a directory'
assert_exit 3 "a missing directory" "$RB" load meta "$D/nope" --quiet
assert_stderr_line 'nope: No such file or directory'

# 5. ENOSPC: 40 files of 1 MiB on a 16 MiB file system: one error line, exit 3, the results so far kept, and the
#    run removes what it made (only its own tree).
loopfs_up small 16M ext4
echo mine >"$LOOP_MNT/user-file"
rc=0
"$RB" load meta "$LOOP_MNT" --dirs 2 --files 20 --size 1M --out "$T/m5" >/dev/null 2>"$T/m5.err" || rc=$?
assert_eq "ENOSPC: exit" 3 "$rc"
[ "$(grep -c 'error:' "$T/m5.err")" = 1 ] || fail "ENOSPC: expected one error line: $(cat "$T/m5.err")"
grep -q 'create: No space left on device' "$T/m5.err" || fail "ENOSPC: not named: $(cat "$T/m5.err")"
ok "ENOSPC: $(grep 'error:' "$T/m5.err")"
assert_jq "$T/m5/result.json" '.summary.ops[] | select(.phase == "create") | .requests > 0 and .requests < 40' \
    "ENOSPC: the create phase's counts kept"
assert_eq "ENOSPC: only the user's file is left" "lost+found user-file" "$(ls "$LOOP_MNT" | xargs)"
