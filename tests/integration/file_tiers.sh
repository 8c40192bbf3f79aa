#!/usr/bin/env bash
# needs: mpi root
# railbench load tiers with a file:// tier: a cache directory on an ext4 loop device read through in front of an
# nginx origin (WebDAV) and of a file:// origin. Cold reads fill the cache (MISS), warm reads come from its files
# (HIT): HIT/MISS counts, bytes from the origin and from the cache, the origin's own access log (the warm phase
# sends it nothing), the cache files on disk byte-identical to the origin's, from 2 ranks; cache files removed
# unless --keep-cache; cache names that exist before the run stop it (exit 2) and are left untouched; bad input.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || fail "needs root (an ext4 loop device for the cache)"
K=262144
M=1048576
loopfs_up cachefs 256M ext4
CACHE=$LOOP_MNT/cache
mkdir -p "$CACHE"
chmod 755 "$T"
nginx_dav origin "access_log $T/origin/access.log;"
row() { jq -r --argjson s "$2" --arg h "$3" ".summary.tiers_rows[] | select(.size_bytes == \$s and .how == \$h) | .$4" "$1"; }

# 1. nginx origin, 2 ranks x 2 threads, two sizes, two warm epochs, every byte verified, the cache kept.
rb_mpirun 2 "$RB" load tiers --backend "$DAV_URL" --tier "file://$CACHE" --sizes 256KiB,1MiB --objects 12 -t 2 \
    --warm-epochs 2 --verify --keep-cache --quiet --out "$T/t1" >/dev/null
R=$T/t1/result.json
assert_jq "$R" '.summary.checks_passed and .summary.cache_verified and .summary.ranks == 2' "checks passed on 2 ranks"
for s in $K $M; do
    assert_eq "$s B: cold hit/miss" "0/12" "$(row "$R" $s cold cache_hit)/$(row "$R" $s cold cache_miss)"
    assert_eq "$s B: warm hit/miss (2 epochs)" "24/0" "$(row "$R" $s warm cache_hit)/$(row "$R" $s warm cache_miss)"
    assert_eq "$s B: cold bytes, from origin, from cache" "$((12 * s)) $((12 * s)) 0" \
        "$(row "$R" $s cold bytes) $(row "$R" $s cold bytes_from_origin) $(row "$R" $s cold bytes_from_cache)"
    assert_eq "$s B: warm bytes, from origin, from cache" "$((24 * s)) 0 $((24 * s))" \
        "$(row "$R" $s warm bytes) $(row "$R" $s warm bytes_from_origin) $(row "$R" $s warm bytes_from_cache)"
    assert_eq "$s B: errors" "0 0 0" "$(row "$R" $s direct errors) $(row "$R" $s cold errors) $(row "$R" $s warm errors)"
done
label() { [ "$1" = $K ] && echo 256KiB || echo 1MiB; }
for s in $K $M; do
    l=$(label $s)
    # The origin saw each object twice: once direct, once for the cold fill; the warm epochs sent it nothing.
    assert_eq "$l: GETs the origin served" 24 "$(grep -c "\"GET /dav/obj-$l-[0-9]* HTTP/1.1\" 200 " "$T/origin/access.log")"
    assert_eq "$l: cache files on disk, whole" 12 "$(find "$CACHE" -maxdepth 1 -name "obj-$l-*" -size "${s}c" | wc -l)"
    for f in "$CACHE"/obj-"$l"-*; do cmp -s "$f" "$DAV_ROOT/$(basename "$f")" || fail "$f differs from the origin's file"; done
    ok "$l: every cache file is byte-identical to the origin's"
done
assert_eq "nothing else in the cache directory (no fill left behind)" 24 "$(find "$CACHE" -type f | wc -l)"
assert_jq "$R" ".summary.file_cache == {dir: \"$CACHE\", files_filled: 24, files_on_disk: 24,
    bytes_on_disk: $((12 * K + 12 * M)), files_removed: 0, kept: true, foreign_hits: 0, fill_conflicts: 0}" \
    "summary.file_cache: 24 filled, 24 on disk, none removed"
assert_jq "$R" '[.checks[] | select(.name | startswith("cache_files_")) | .passed] == [true, true]' "cache_files checks"
assert_jq "$R" '[.summary.tiers_rows[] | select(.how == "warm") | .disk_util_ratio] | all(. != null)' \
    "warm rows: the cache's disk utilisation measured (a loop device here)"
grep -q "^cache directory $CACHE (read through by railbench): 24 files filled from the backend, 24 of them on disk" \
    "$T/t1/table.md" || fail "table.md lacks the cache directory's line"
ok "table.md says what the cache directory holds"

# 2. The same names again: the kept cache files are not this run's, so it stops before writing anything.
sum_before=$(cat "$CACHE"/* | md5sum)
assert_exit 2 "cache names that exist" "$RB" load tiers --backend "$DAV_URL" --tier "file://$CACHE" \
    --sizes 256KiB --objects 12 --existing --quiet --out "$T/t2"
grep -Eq "^railbench: error: --tier file://$CACHE: 12 of the run's cache file names exist already \(e.g. $CACHE/obj-256KiB-0000000[0-9]\); railbench fills the cache directory with files of its own and never" "$T/stderr" ||
    { cat "$T/stderr" >&2; fail "no line naming the cache files that exist"; }
ok "the existing cache files are named"
assert_eq "the kept cache files untouched" "$sum_before" "$(cat "$CACHE"/* | md5sum)"

# 3. A file:// origin (a directory on another file system) and a fresh cache directory with one foreign file in it.
ORIGIN=$T/origin-files
C2=$LOOP_MNT/cache2
mkdir -p "$ORIGIN" "$C2"
echo "not railbench's" >"$C2/obj-64KiB-00000003"
assert_exit 2 "a foreign file at a cache name" "$RB" load tiers --backend "file://$ORIGIN" --tier "file://$C2" \
    --sizes 64KiB --objects 6 --quiet --out "$T/t3"
assert_eq "the foreign file untouched, nothing added" "not railbench's 1" "$(cat "$C2/obj-64KiB-00000003") $(find "$C2" -type f | wc -l)"
assert_eq "nothing written to the origin either" 0 "$(find "$ORIGIN" -type f | wc -l)"
rm "$C2/obj-64KiB-00000003"

# 4. The same without the foreign file, cache not kept: filled, read warm, then exactly the run's files removed.
echo "a user's file" >"$C2/notes.txt"
"$RB" load tiers --backend "file://$ORIGIN" --tier "file://$C2" --sizes 64KiB --objects 6 --verify --quiet \
    --out "$T/t4" >/dev/null
R=$T/t4/result.json
assert_eq "file origin: cold, warm hit/miss" "0/6 6/0" \
    "$(row "$R" 65536 cold cache_hit)/$(row "$R" 65536 cold cache_miss) $(row "$R" 65536 warm cache_hit)/$(row "$R" 65536 warm cache_miss)"
assert_eq "file origin: from origin cold, from cache warm" "393216 393216" \
    "$(row "$R" 65536 cold bytes_from_origin) $(row "$R" 65536 warm bytes_from_cache)"
assert_jq "$R" '.summary.file_cache.files_filled == 6 and .summary.file_cache.files_on_disk == 6
    and .summary.file_cache.files_removed == 6 and .summary.file_cache.kept == false' "6 filled, 6 on disk, 6 removed"
assert_eq "the cache directory holds the user's file alone" "notes.txt" "$(ls "$C2")"
assert_eq "the origin keeps its 6 files" 6 "$(find "$ORIGIN" -name 'obj-64KiB-*' -size 65536c | wc -l)"

# 5. The file options: 256 KiB reads and writes, each fill synced, every host's page cache dropped before each read
#    phase: the warm reads come from the cache's loop device, not from memory.
"$RB" load tiers --backend "file://$ORIGIN" --tier "file://$C2" --sizes 1MiB --objects 8 --block-size 256k \
    --fsync close --drop-cache host --verify --quiet --out "$T/t5" >/dev/null
R=$T/t5/result.json
assert_eq "dropped: cold, warm hit/miss" "0/8 8/0" \
    "$(row "$R" 1048576 cold cache_hit)/$(row "$R" 1048576 cold cache_miss) $(row "$R" 1048576 warm cache_hit)/$(row "$R" 1048576 warm cache_miss)"
assert_jq "$R" '[.checks[] | select(.name | endswith("_host_cache_dropped")) | .name] ==
    ["direct-1MiB_host_cache_dropped", "cold-1MiB_host_cache_dropped", "warm-1MiB_host_cache_dropped"]
    and ([.checks[] | select(.name | endswith("_host_cache_dropped")) | .passed] | all)' \
    "the page cache dropped before the direct, cold and warm phases"
assert_jq "$R" '.summary.file.block_size_bytes == 262144 and .summary.file.fsync == "close"
    and .summary.file.drop_cache == "host" and .summary.file.mount.kind == "loop"' "summary.file: the options and the cache's loop device"
warm_read=$(jq "[.phases[] | select(.name == \"warm-1MiB\") | .counters[].disk[] | select(.name == \"$LOOP_NAME\") | .read_bytes] | add" "$R")
[ "$warm_read" -ge $((8 * M)) ] || fail "the warm phase read $warm_read bytes from $LOOP_NAME, less than the 8 MiB it served"
ok "the warm phase read $warm_read bytes from the cache's device $LOOP_NAME (8 MiB served)"
assert_eq "the cache directory holds the user's file alone again" "notes.txt" "$(ls "$C2")"

# 6. Bad input: one line, exit 2.
assert_exit 2 "--direct with a file tier" "$RB" load tiers --backend "file://$ORIGIN" --tier "file://$C2" \
    --direct --objects 2 --sizes 4KiB
assert_stderr_line '^railbench: error: --direct: not for a file:// tier'
assert_exit 2 "--cache-header with a file tier" "$RB" load tiers --backend "file://$ORIGIN" --tier "file://$C2" \
    --cache-header X-Cache --objects 2 --sizes 4KiB
assert_stderr_line '^railbench: error: --cache-header X-Cache: a file:// tier has no header'
assert_exit 2 "--keep-cache with an http tier" "$RB" load tiers --backend "file://$ORIGIN" --tier "$DAV_URL" \
    --keep-cache --objects 2 --sizes 4KiB
assert_stderr_line '^railbench: error: --keep-cache: for a file:// tier'
assert_exit 3 "a cache directory that does not exist" "$RB" load tiers --backend "file://$ORIGIN" \
    --tier "file://$T/no-such-dir" --objects 2 --sizes 4KiB
grep -q "no-such-dir: No such file or directory" "$T/stderr" || { cat "$T/stderr" >&2; fail "the missing directory is not named"; }
ok "the missing cache directory is named"
