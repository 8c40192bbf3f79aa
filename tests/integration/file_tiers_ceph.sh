#!/usr/bin/env bash
# needs: ceph mpi root
# railbench load tiers with a file:// tier in front of Ceph: a cache directory on an XFS loop device read through in
# front of Ceph RGW (s3://, signed GETs) and in front of CephFS (file:// on a ceph-fuse mount), from 2 ranks: HIT/MISS
# counts, bytes from the origin and from the cache, RGW's own log (the warm phase sent it no GET), the cache files on
# disk byte-identical to the objects and files they came from, and only the run's files removed.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || fail "needs root (an XFS loop device for the cache, FUSE)"
S=1048576
loopfs_up cachefs 512M xfs
CACHE=$LOOP_MNT/cache
mkdir -p "$CACHE"
cephfs_up
RGW_LOG=$RGW_DIR/log/client.rgw.log # its per-request (beast access) log, as rgw_up sets it
rgw_bucket bench
row() { jq -r --arg h "$2" ".summary.tiers_rows[] | select(.how == \$h) | .$3" "$1"; }

# 1. RGW as the origin: 16 objects of 1 MiB, 2 ranks x 2 threads, 2 warm epochs, verified, the cache kept.
rb_mpirun 2 "$RB" load tiers --backend s3://bench --backend-endpoint "$RGW_ENDPOINT" --tier "file://$CACHE" \
    --sizes 1MiB --objects 16 -t 2 --warm-epochs 2 --verify --keep-cache --quiet --out "$T/s3" >/dev/null
R=$T/s3/result.json
assert_jq "$R" '.summary.checks_passed and .summary.ranks == 2' "RGW origin: checks passed on 2 ranks"
assert_eq "RGW origin: cold, warm hit/miss" "0/16 32/0" \
    "$(row "$R" cold cache_hit)/$(row "$R" cold cache_miss) $(row "$R" warm cache_hit)/$(row "$R" warm cache_miss)"
assert_eq "RGW origin: bytes from RGW cold, from the cache warm" "$((16 * S)) 0 0 $((32 * S))" \
    "$(row "$R" cold bytes_from_origin) $(row "$R" cold bytes_from_cache) $(row "$R" warm bytes_from_origin) $(row "$R" warm bytes_from_cache)"
# RGW served each object twice (direct, then the cold fill): the warm epochs did not reach it.
rgw_assert_seen "RGW: GETs of the objects (direct and cold only)" 32 'GET /bench/obj-1MiB-[0-9]+' 200
assert_eq "RGW origin: cache files on disk, whole" 16 "$(find "$CACHE" -name 'obj-1MiB-*' -size "${S}c" | wc -l)"
curl -sS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -o "$T/obj7" "$RGW_ENDPOINT/bench/obj-1MiB-00000007"
cmp "$T/obj7" "$CACHE/obj-1MiB-00000007" || fail "the cache file differs from the object in RGW"
ok "a cache file is byte-identical to its object in RGW"
assert_jq "$R" '.summary.file_cache.files_filled == 16 and .summary.file_cache.files_on_disk == 16 and .summary.file_cache.kept' \
    "RGW origin: 16 filled, 16 on disk, kept"
rm "$CACHE"/obj-1MiB-*

# 2. CephFS as the origin (a shared file system's mount): 2 ranks, the cache removed at the end.
O=$CEPHFS_MNT/origin
mkdir "$O"
echo "a user's file" >"$CACHE/keep.txt"
rb_mpirun 2 "$RB" load tiers --backend "file://$O" --tier "file://$CACHE" --sizes 1MiB --objects 16 -t 2 \
    --verify --quiet --out "$T/fs" >/dev/null
R=$T/fs/result.json
assert_jq "$R" '.summary.checks_passed' "CephFS origin: checks passed"
assert_eq "CephFS origin: cold, warm hit/miss" "0/16 16/0" \
    "$(row "$R" cold cache_hit)/$(row "$R" cold cache_miss) $(row "$R" warm cache_hit)/$(row "$R" warm cache_miss)"
assert_eq "CephFS origin: bytes from CephFS cold, from the cache warm" "$((16 * S)) $((16 * S))" \
    "$(row "$R" cold bytes_from_origin) $(row "$R" warm bytes_from_cache)"
assert_jq "$R" '.summary.file_cache.files_filled == 16 and .summary.file_cache.files_on_disk == 16
    and .summary.file_cache.files_removed == 16' "CephFS origin: 16 filled, 16 on disk, 16 removed"
assert_eq "the cache directory keeps the user's file alone" "keep.txt" "$(ls "$CACHE")"
assert_eq "the objects stay on CephFS" 16 "$(find "$O" -name 'obj-1MiB-*' -size "${S}c" | wc -l)"
