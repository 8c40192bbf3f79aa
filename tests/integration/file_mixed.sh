#!/usr/bin/env bash
# needs: mpi
# load mixed on file:// (warp's mix of get, put, delete and stat against a directory): the op counts against the files
# on disk at the end, each left file the seeded payload, io_uring and psync, 2 ranks, files the run did not make untouched.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
S() { jq -c ".summary | $2" "$T/$1/result.json"; }
op() { jq ".summary.ops[] | select(.op == \"$2\") | .requests" "$T/$1/result.json"; }
D=$T/dir
mkdir -p "$D"
printf 'not ours\n' >"$D/notes.txt"

# 1. Deletes only: 30 of the 50 files go, exactly; the 20 left are on disk, each whole.
"$RB" load mixed "file://$D" --objects 50 --size 8k --mix delete=1 --count 30 --keep --out "$T/del" --quiet >/dev/null
assert_eq "delete-only: deletes, errors, live" "[30,0,20]" "$(S del '[.ops[0].requests, .total.errors.total, .live_objects]')"
assert_eq "delete-only: files on disk (find, notes.txt included)" 21 "$(find "$D" -type f | wc -l)"
assert_eq "delete-only: every file left is 8 KiB" 8192 "$(find "$D" -name 'obj-*' -printf '%s\n' | sort -u)"
find "$D" -name 'obj-*' -delete

# 2. warp's default mix, 2 ranks x 2 threads, io_uring 4 deep, 3,000 requests: the ops add up to the count, nothing
#    failed, and the files on disk are the live set the run reports: at least the 80 prepared minus the deletes, at
#    most that plus the puts; every one whole and its seeded payload (as a plain put of the same seed writes it).
rb_mpirun 2 "$RB" load mixed "file://$D" --objects 80 --size 16k --count 3000 -t 2 --io-engine io_uring -c 4 \
    --keep --seed 4 --out "$T/mix" --quiet >/dev/null
get=$(op mix GET) put=$(op mix PUT) del=$(op mix DELETE) stat=$(op mix HEAD)
live=$(S mix .live_objects)
echo "mix: get $get, put $put, delete $del, stat $stat; live $live"
assert_eq "mix: the ops add up to --count" 3000 $((get + put + del + stat))
assert_eq "mix: errors, unknown" "[0,0]" "$(S mix '[.total.errors.total, .live_unknown]')"
assert_eq "mix: the files on disk are the live set" "$live" "$(find "$D" -name 'obj-*' | wc -l)"
[ "$live" -ge $((80 - del)) ] && [ "$live" -le $((80 - del + put)) ] ||
    fail "mix: $live live; expected 80 - $del deletes to that + $put puts"
ok "mix: $live live within [80 - deletes, 80 - deletes + puts]"
assert_eq "mix: every file 16 KiB" 16384 "$(find "$D" -name 'obj-*' -printf '%s\n' | sort -u)"
mkdir "$T/ref"
"$RB" load put "file://$T/ref" --objects 80 --size 16k --keep --seed 4 --quiet >/dev/null
for f in "$D"/obj-*; do cmp -s "$f" "$T/ref/${f##*/}" || fail "mix: ${f##*/} is not its seeded payload"; done
ok "mix: every file left is its seeded payload"
assert_eq "mix: every op drawn" true "$(S mix '[.ops[].requests > 0] | all')"
assert_eq "mix: file options recorded" '["io_uring",true]' "$(S mix '[.file.io_engine, (.file.mount != null)]')"
# A second run over the same names without --no-prepare stops before writing (exit 2): they exist.
assert_exit 2 "mix over existing names" "$RB" load mixed "file://$D" --objects 80 --size 16k --count 10 --keep
find "$D" -name 'obj-*' -delete

# 3. Without --keep: the run's own prefix, and at the end exactly its live files deleted; notes.txt untouched.
"$RB" load mixed "file://$D" --objects 40 --size 4k --count 500 --out "$T/clean" --quiet >/dev/null
assert_eq "cleanup: deleted = live at the end, none failed" true \
    "$(S clean '.cleanup.deleted == .live_objects and .cleanup.failed == 0')"
assert_eq "cleanup: only notes.txt is left" "notes.txt" "$(cd "$D" && find . -type f -printf '%P\n')"
assert_eq "notes.txt untouched" "not ours" "$(cat "$D/notes.txt")"

# 4. Bad input: the host page cache has no read phase to be dropped before here.
assert_exit 2 "--drop-cache host" "$RB" load mixed "file://$D" --objects 4 --drop-cache host --quiet
assert_stderr_line 'load mixed --drop-cache host: reads and writes share one phase'
ok "file_mixed: all checks passed"
