#!/usr/bin/env bash
# needs: ceph mpi
# load get --samples tar: tar shards GET whole, their members counted as samples as the bodies stream — a second row
# "GET sample" (count, member bytes, per-sample latency) and summary.samples — on file://, over HTTP (nginx, both
# engines) and S3 (Ceph RGW); counts and bytes equal to what GNU tar lists (directories and pax records are not
# samples); a shard that is not tar, a truncated one and a corrupt header each one error line and exit 3; the shards
# are read, never written.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
S() { jq -c ".summary | $2" "$T/$1/result.json"; }
SHARD=$((4 * (512 + 3072) + 1024))
POP=(--format tar --objects 12 --samples-per-object 4 --sample-size 3000 --populate --compute-time 1ms --seed 5)
# GNU tar's listing of FILES: regular members and their bytes ("-" in the mode's first column: a file).
listed() { for f in "$@"; do tar -tvf "$f"; done | awk '$1 ~ /^-/ { n++; s += $3 } END { print n + 0, s + 0 }'; }
sample_row() { S "$1" '[.ops[1].op, .ops[1].requests, .ops[1].bytes, .samples.objects, .samples.samples, .samples.sample_bytes, .samples.samples_per_object, .samples.not_tar]'; }

# 1. file://: 12 shards load train wrote, one epoch of load get from 2 ranks: 12 GETs of the shards' bytes, 48
#    samples of 3000 bytes (what GNU tar lists), one latency per sample in the phase record.
D=$T/shards
mkdir -p "$D"
"$RB" load train "file://$D" "${POP[@]}" --out "$T/pop" --quiet >/dev/null
assert_eq "GNU tar: members and bytes of the 12 shards" "48 144000" "$(listed "$D"/obj-*)"
sums=$(cd "$D" && md5sum obj-* | md5sum)
rb_mpirun 2 "$RB" load get "file://$D" --prefix obj- --pattern epoch --samples tar --out "$T/file" --quiet >/dev/null
assert_eq "file: GET row: requests, bytes (the shards'), errors" "[12,$((12 * SHARD)),0]" \
    "$(S file '.ops[0] | [.requests, .bytes, .errors.total]')"
assert_eq "file: GET sample row and summary.samples" '["GET sample",48,144000,12,48,144000,4,0]' "$(sample_row file)"
assert_eq "file: one latency per sample, samples/s recorded" "[48,true]" \
    "$(jq -c '.phases[0].samples | [.count, .ops_per_s > 0]' "$T/file/result.json")"
grep -q '^## GET sample (phase get)' "$T/file/table.md" || fail "table.md has no GET sample row"
assert_eq "the shards are as they were (read, never written)" "$sums" "$(cd "$D" && md5sum obj-* | md5sum)"

# 2. nginx: shards GNU tar made as WebDataset's are (a .jpg and a .cls per key, members of different sizes), one of
#    them pax with a directory entry: only the regular members are samples. Both engines count the same.
chmod 755 "$T"
nginx_dav web
G=$DAV_ROOT/gnu
mkdir -p "$G/src/d"
for i in 0 1 2; do
    for k in 0 1 2; do
        head -c $((2000 + 1111 * i + 7 * k)) /dev/urandom >"$G/src/s$i$k.jpg"
        printf '%d' $((i * 3 + k)) >"$G/src/s$i$k.cls"
    done
    tar -C "$G/src" -cf "$G/shard-$i.tar" s${i}0.jpg s${i}0.cls s${i}1.jpg s${i}1.cls s${i}2.jpg s${i}2.cls
done
cp "$G/src/s00.jpg" "$G/src/d/s30.jpg"
tar -C "$G/src" --format=pax -cf "$G/shard-3.tar" d s00.cls
rm -r "$G/src"
gnu=$(listed "$G"/shard-*.tar)
assert_eq "GNU tar: 20 regular members (the directory is none)" 20 "${gnu% *}"
gnu_bytes=$(find "$G" -name 'shard-*.tar' -printf '%s\n' | awk '{ s += $1 } END { print s }')
for e in native curl; do
    "$RB" load get "$DAV_URL/gnu" --prefix shard- --pattern epoch --samples tar --engine "$e" --out "$T/gnu-$e" \
        --quiet >/dev/null
    assert_eq "nginx ($e): GET row: requests, bytes (the files'), engine" "[4,$gnu_bytes,\"$e\"]" \
        "$(S "gnu-$e" '[.ops[0].requests, .ops[0].bytes, .engine]')"
    assert_eq "nginx ($e): samples and their bytes = what tar -tvf lists" "$gnu" \
        "$(S "gnu-$e" '"\(.samples.samples) \(.samples.sample_bytes)"' | tr -d '"')"
done

# 3. Bad shards, each one error line naming the object and the byte, exit 3, what was measured kept: not tar, cut
#    inside a member, a flipped byte in the second header; and the usage errors (exit 2).
head -c 4096 /dev/urandom >"$G/noise.tar"
assert_exit 3 "an object that is not tar" "$RB" load get "$DAV_URL/gnu" --filelist <(echo noise.tar) --pattern epoch \
    --samples tar --quiet --out "$T/noise"
assert_stderr_line '^railbench: error: --samples tar: http://.*/gnu "noise.tar": a header.s checksum or size field does not hold: not a tar archive, or a corrupt header \(at byte 0 of 4096\); stopping'
assert_eq "not tar: the GET counted, the sample error recorded" "[1,0,1]" \
    "$(S noise '[.ops[0].requests, .samples.samples, .samples.not_tar]')"
head -c 4000 "$G/shard-1.tar" >"$G/cut.tar" # inside the padding after member 0 (3111 bytes at 512)
assert_exit 3 "a truncated shard" "$RB" load get "$DAV_URL/gnu" --filelist <(echo cut.tar) --pattern epoch \
    --samples tar --quiet --out "$T/cut"
assert_stderr_line '"cut.tar": the body ends inside a member or header: a truncated shard \(at byte 4000 of 4000\)'
assert_eq "truncated: the member that came whole is counted" "[1,1]" "$(S cut '[.samples.samples, .samples.not_tar]')"
cp "$G/shard-2.tar" "$G/flip.tar"
second=$((512 + ($(tar -tvf "$G/flip.tar" | awk 'NR == 1 { print $3 }') + 511) / 512 * 512))
printf 'Z' | dd of="$G/flip.tar" bs=1 seek=$((second + 5)) conv=notrunc status=none
assert_exit 3 "a corrupt header" "$RB" load get "$DAV_URL/gnu" --filelist <(echo flip.tar) --pattern epoch \
    --samples tar --engine curl --quiet --out "$T/flip"
assert_stderr_line "\"flip.tar\": a header.s checksum or size field does not hold: not a tar archive, or a corrupt header \\(at byte $second of"
assert_exit 2 "--samples tar --verify" "$RB" load get "$DAV_URL/gnu" --prefix shard- --samples tar --verify --quiet
assert_stderr_line '^railbench: error: --samples tar with --verify: '
assert_exit 2 "--samples of another kind" "$RB" load get "$DAV_URL/gnu" --prefix shard- --samples members --quiet
assert_stderr_line '^railbench: error: --samples: "members" is not one of objects, tar$'
assert_eq "GNU tar's shards are untouched" "$gnu" "$(listed "$G"/shard-*.tar)"

# 4. s3:// on Ceph RGW: load train PUTs the shards (signed), load get counts their members.
rgw_up
rgw_bucket shards
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE || true
"$RB" load train s3://shards/set/ --endpoint "$RGW_ENDPOINT" "${POP[@]}" --out "$T/s3pop" --quiet >/dev/null
"$RB" load get s3://shards/set/ --endpoint "$RGW_ENDPOINT" --pattern epoch --samples tar --out "$T/s3" --quiet >/dev/null
assert_eq "s3: GET row: requests, bytes" "[12,$((12 * SHARD))]" "$(S s3 '[.ops[0].requests, .ops[0].bytes]')"
assert_eq "s3: GET sample row and summary.samples" '["GET sample",48,144000,12,48,144000,4,0]' "$(sample_row s3)"
ok "file_tar_get: all checks passed"
