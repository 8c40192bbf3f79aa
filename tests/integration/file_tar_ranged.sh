#!/usr/bin/env bash
# needs: ceph mpi
# load train --format tar --shard-read ranged: each shard's tar headers read once per rank (the index), then every
# sample read as one ranged read of exactly its member's bytes — pread on file://, HTTP Range GETs on nginx and Ceph
# RGW. Exact samples and bytes per epoch (the members' bytes GNU tar lists), the range requests each server logged
# (206s: the samples plus the index reads, no 200), shards GNU tar made with members of different sizes, and a
# truncated shard, a shard that is not tar and a member count other than --samples-per-object each one error line.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
S() { jq -c ".summary | $2" "$T/$1/result.json"; }
TRAIN=(--objects 12 --samples-per-object 4 --sample-size 3000 --format tar --batch-size 4 --compute-time 1ms
    --seed 5)
SHARD=$((4 * (512 + 3072) + 1024))
# Every shard: 4 header reads and the end block's = 5 reads of 512 bytes; a rank indexes a shard the first time it reads it.
index_ok() { # RESULT: index reads = 5 per shard indexed, 512 bytes each, each shard indexed once or twice (2 ranks)
    S "$1" '.dataset.index | .requests == 5 * .shards and .bytes == 512 * .requests and .shards >= 12 and .shards <= 24' |
        grep -qx true || fail "$1: index reads $(S "$1" .dataset.index)"
}

# 1. file://: the shards --populate wrote, 2 epochs from 2 ranks, verified: each epoch reads 48 samples of exactly
#    3000 bytes (48 x 3000 = what GNU tar lists), 48 reads, 6 steps per rank; whole reads take the shards' bytes.
D=$T/shards
mkdir -p "$D"
rb_mpirun 2 "$RB" load train "file://$D" "${TRAIN[@]}" --populate --epochs 2 --verify --shard-read ranged \
    --out "$T/file" --quiet >/dev/null
listed=$(for f in "$D"/obj-*; do tar -tvf "$f"; done | awk '{ n++; s += $3 } END { print n, s }')
assert_eq "GNU tar: members and their bytes in the 12 shards" "48 144000" "$listed"
assert_eq "file epochs: requests, samples, steps, bytes (= the members GNU tar lists), errors" \
    "[[48,48,6,144000,0],[48,48,6,144000,0]]" "$(S file '[.train_epochs[] | [.requests, .samples, .steps, .bytes, .errors]]')"
assert_eq "file: shard_read recorded" '"ranged"' "$(S file .dataset.shard_read)"
index_ok file
ok "file: index $(S file .dataset.index)"
"$RB" load train "file://$D" "${TRAIN[@]}" --out "$T/whole" --quiet >/dev/null
assert_eq "whole reads of the same shards: 12 reads of the shards' bytes, no index" "[12,48,$((12 * SHARD)),\"whole\",null]" \
    "$(S whole '[.train_epochs[0].requests, .train_epochs[0].samples, .train_epochs[0].bytes, .dataset.shard_read, .dataset.index]')"

# 2. nginx: the same shards PUT over WebDAV, then 2 epochs from 2 ranks ranged and verified. The access log holds
#    every request: 96 ranged GETs of 3000 bytes (the samples), the index reads of 512 bytes, all 206, no 200.
chmod 755 "$T"
nginx_dav web "access_log $T/web/access.log;"
rb_mpirun 2 "$RB" load train "$DAV_URL/set" "${TRAIN[@]}" --populate --epochs 2 --verify --shard-read ranged \
    --out "$T/http" --quiet >/dev/null
assert_eq "http epochs: requests, samples, steps, bytes, errors" "[[48,48,6,144000,0],[48,48,6,144000,0]]" \
    "$(S http '[.train_epochs[] | [.requests, .samples, .steps, .bytes, .errors]]')"
index_ok http
gets() { awk -v st="$1" -v b="$2" '$6 == "\"GET" && $9 == st && (b == "" || $10 == b)' "$T/web/access.log" | wc -l; }
assert_eq "nginx: 206 of 3000 bytes (one per sample read)" 96 "$(gets 206 3000)"
assert_eq "nginx: 206 of 512 bytes (the index reads)" "$(S http .dataset.index.requests)" "$(gets 206 512)"
assert_eq "nginx: every GET a 206 (none whole)" "$(gets 206 '')" "$(awk '$6 == "\"GET"' "$T/web/access.log" | wc -l)"

# 3. Shards GNU tar made, members of different sizes as WebDataset's are (a .jpg and a .cls per sample key): the
#    index gives each member's own offset and size; an epoch reads exactly the bytes tar -tvf lists.
G=$DAV_ROOT/gnu
mkdir -p "$G/src"
for i in 0 1 2 3; do
    for k in 0 1; do
        head -c $((4000 + 777 * i + 13 * k)) /dev/urandom >"$G/src/s$i$k.jpg"
        printf '%d' $((i * 2 + k)) >"$G/src/s$i$k.cls"
    done
    tar -C "$G/src" -cf "$G/shard-$i.tar" "s${i}0.jpg" "s${i}0.cls" "s${i}1.jpg" "s${i}1.cls"
done
rm -r "$G/src"
gnu=$(for f in "$G"/shard-*.tar; do tar -tvf "$f"; done | awk '{ n++; s += $3 } END { print n, s }')
"$RB" load train "$DAV_URL/gnu" --prefix shard- --format tar --samples-per-object 4 --batch-size 2 --compute-time 1ms \
    --shard-read ranged --out "$T/gnu" --quiet >/dev/null
assert_eq "GNU tar shards: samples and bytes of an epoch = what tar -tvf lists" "$gnu" \
    "$(S gnu '.train_epochs[0] | "\(.samples) \(.bytes)"' | tr -d '"')"
assert_eq "GNU tar shards: index reads (5 per shard), errors" "[4,20,0]" \
    "$(S gnu '[.dataset.index.shards, .dataset.index.requests, .train_epochs[0].errors]')"

# 4. Bad shards over HTTP, each one error line and exit 3 (2 for a usage error): a member that lies beyond the
#    object's end (the shard cut inside its last member), an object that is not tar, another member count.
# shard-0: s00.jpg (4000 bytes) at 512, s00.cls at 5120, s01.jpg (4013 bytes) at 6144: cut 1000 bytes into it.
head -c 7144 "$G/shard-0.tar" >"$G/cut.tar"
assert_exit 3 "a truncated shard" "$RB" load train "$DAV_URL/gnu" --filelist <(echo cut.tar) --format tar \
    --samples-per-object 4 --compute-time 1ms --shard-read ranged --quiet
assert_stderr_line '^railbench: error: --shard-read ranged: http://.*/gnu "cut.tar": member 2 \(4013 bytes at byte 6144\) lies beyond the object.s end \(7144 bytes\): a truncated shard$'
head -c 4096 /dev/urandom >"$G/noise.tar"
assert_exit 3 "an object that is not tar" "$RB" load train "$DAV_URL/gnu" --filelist <(echo noise.tar) --format tar \
    --samples-per-object 4 --compute-time 1ms --shard-read ranged --quiet
assert_stderr_line '"noise.tar": not a tar archive: the header at byte 0 has no valid checksum or size$'
assert_exit 3 "4 members where 3 were said" "$RB" load train "$DAV_URL/gnu" --filelist <(printf 'shard-%d.tar\n' 0 1 2 3) --format tar \
    --samples-per-object 3 --compute-time 1ms --shard-read ranged --quiet
assert_stderr_line '"shard-[0-3].tar": holds more than --samples-per-object 3 members$'
assert_exit 2 "--shard-read ranged without --format tar" "$RB" load train "$DAV_URL/gnu" --prefix shard- \
    --compute-time 1ms --shard-read ranged --quiet
assert_stderr_line '^railbench: error: --shard-read ranged: give --format tar'
assert_exit 2 "--shard-read of another kind" "$RB" load train "$DAV_URL/gnu" --prefix shard- --format tar \
    --compute-time 1ms --shard-read blocks --quiet
assert_stderr_line '^railbench: error: --shard-read: "blocks" is not one of whole, ranged$'
assert_eq "the shards GNU tar made are untouched" "$gnu" \
    "$(for f in "$G"/shard-*.tar; do tar -tvf "$f"; done | awk '{ n++; s += $3 } END { print n, s }')"

# 5. s3:// on Ceph RGW: --populate PUTs the shards (signed), one epoch ranged and verified; RGW's log has a 206 per
#    sample (48) and per index read, and no whole GET.
rgw_up
rgw_bucket shards
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE || true
"$RB" load train s3://shards/rset/ --endpoint "$RGW_ENDPOINT" "${TRAIN[@]}" --populate --verify --shard-read ranged \
    --out "$T/s3" --quiet >/dev/null
assert_eq "s3 epoch (1 rank): requests, samples, steps, bytes, errors" "[48,48,12,144000,0]" \
    "$(S s3 '.train_epochs[0] | [.requests, .samples, .steps, .bytes, .errors]')"
assert_eq "s3: index reads (12 shards, 5 each)" "[12,60]" "$(S s3 '[.dataset.index.shards, .dataset.index.requests]')"
assert_eq "RGW: 206s for the shards (48 samples + 60 index reads)" 108 "$(rgw_seen 'GET /shards/rset/obj-[0-9]+' 206)"
assert_eq "RGW: no whole GET of a shard" 0 "$(rgw_seen 'GET /shards/rset/obj-[0-9]+' 200)"
ok "file_tar_ranged: all checks passed"
