#!/usr/bin/env bash
# needs: ceph mpi
# load train --format tar: WebDataset-style tar shards written by --populate (real ustar: GNU tar lists the members
# with the sizes written), read whole and in order from 2 ranks on file://, over HTTP (nginx WebDAV) and S3 (Ceph
# RGW): exact samples, steps and bytes per epoch, every header and member byte verified, a corrupted header counted,
# shards GNU tar made read as they are, and files the run did not create never written.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
S() { jq -c ".summary | $2" "$T/$1/result.json"; }
SHARD=$((4 * (512 + 3072) + 1024)) # 4 members of 3000 bytes: a header each, data padded to 512, two end blocks
TRAIN=(--objects 12 --samples-per-object 4 --sample-size 3000 --format tar --batch-size 4 --compute-time 1ms
    --seed 5)

# 1. A name of the data set that exists already stops --populate (exit 2) and is left as it was.
D=$T/shards
mkdir -p "$D"
printf 'not ours\n' >"$D/obj-00000002"
assert_exit 2 "populate over an existing file" "$RB" load train "file://$D" "${TRAIN[@]}" --populate --out "$T/refused"
assert_eq "the existing file is untouched" "not ours" "$(cat "$D/obj-00000002")"
assert_eq "nothing else written" 1 "$(find "$D" -type f | wc -l)"
rm "$D/obj-00000002"

# 2. --populate writes 12 shards, then 2 epochs from 2 ranks, every byte checked: each rank 6 shards x 4 samples = 6
#    steps of 4; each epoch reads every shard once, whole.
rb_mpirun 2 "$RB" load train "file://$D" "${TRAIN[@]}" --populate --epochs 2 --verify --out "$T/pop" --quiet \
    >/dev/null
assert_eq "shards on disk (find)" 12 "$(find "$D" -type f | wc -l)"
assert_eq "every shard's size: headers, members, padding, end blocks" "$SHARD" "$(find "$D" -type f -printf '%s\n' | sort -u)"
on_disk=$(find "$D" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
assert_eq "epochs: requests, samples, steps, bytes (= the shards on disk), errors" \
    "[[12,48,6,$on_disk,0],[12,48,6,$on_disk,0]]" \
    "$(S pop '[.train_epochs[] | [.requests, .samples, .steps, .bytes, .errors]]')"
assert_eq "data set record" "[\"tar\",3000,$SHARD,48,$on_disk]" \
    "$(S pop '.dataset | [.format, .member_bytes, .shard_bytes, .samples, .bytes]')"
# GNU tar reads every shard: 4 regular members of 3000 bytes each, named <key>_<index>.bin; their bytes are 4 x 3000.
for f in "$D"/obj-*; do
    tar -tvf "$f" >"$T/listing" || fail "GNU tar cannot list $f"
    awk '$1 != "-rw-r--r--" || $3 != 3000 { exit 1 }' "$T/listing" || { cat "$T/listing"; fail "$f: a member is not 3000 bytes"; }
    [ "$(wc -l <"$T/listing")" = 4 ] || fail "$f: $(wc -l <"$T/listing") members, expected 4"
    grep -Eq '_000003\.bin$' "$T/listing" || fail "$f: no member 3"
    [ "$(tar -xOf "$f" | wc -c)" = 12000 ] || fail "$f: the members' bytes are not 4 x 3000"
done
ok "GNU tar lists 4 members of 3000 bytes in each of the 12 shards (member bytes 12000 each)"

# 3. A flipped byte in one member's header: --verify counts that shard (class checksum) in each epoch; GNU tar sees it too.
printf 'Z' | dd of="$D/obj-00000007" bs=1 seek=$((512 + 3072 + 3)) conv=notrunc status=none
assert_exit 1 "a corrupted shard header with --max-error-rate 0" "$RB" load train "file://$D" "${TRAIN[@]}" \
    --verify --max-error-rate 0 --out "$T/bad" --quiet
assert_jq "$T/bad/result.json" '.phases[0].errors.checksum == 1 and .summary.errors == 1' "the corrupted shard counted once"
tar -tf "$D/obj-00000007" >/dev/null 2>&1 && fail "GNU tar accepted the corrupted header" || ok "GNU tar refuses it as well"

# 4. Over HTTP (nginx WebDAV): --populate PUTs the same shards (the bytes do not depend on the protocol), each epoch
#    GETs every shard whole, verified; a shard fetched with curl is the file written above.
chmod 755 "$T"
nginx_dav web
rm "$D/obj-00000007"
rb_mpirun 2 "$RB" load train "$DAV_URL/set" "${TRAIN[@]}" --populate --epochs 2 --verify --out "$T/http" --quiet \
    >/dev/null
assert_eq "http epochs: requests, samples, steps, bytes, errors" "[[12,48,6,$on_disk,0],[12,48,6,$on_disk,0]]" \
    "$(S http '[.train_epochs[] | [.requests, .samples, .steps, .bytes, .errors]]')"
curl -fsS "$DAV_URL/set/obj-00000003" -o "$T/got.tar"
cmp "$T/got.tar" "$D/obj-00000003" || fail "the shard PUT over HTTP differs from the one written to file://"
assert_eq "GNU tar lists the shard fetched over HTTP" "4 3000" \
    "$(tar -tvf "$T/got.tar" | awk '{ n++; s[$3] = 1 } END { for (k in s) printf "%d %s", n, k }')"

# 5. Shards made elsewhere (GNU tar, 3 members of 5000 bytes each, as WebDataset's ShardWriter makes them) are read as
#    they are: whole, 3 samples each (their headers say so), the bytes their files hold.
G=$T/gnu
mkdir -p "$G/src"
for i in 0 1 2 3 4 5; do
    for m in 0 1 2; do head -c 5000 /dev/urandom >"$G/src/s$i-$m.jpg"; done
    tar -C "$G/src" -cf "$G/shard-$i.tar" "s$i-0.jpg" "s$i-1.jpg" "s$i-2.jpg"
done
rm -r "$G/src"
gnu_bytes=$(find "$G" -name '*.tar' -printf '%s\n' | awk '{ s += $1 } END { print s }')
"$RB" load train "file://$G" --prefix shard- --format tar --samples-per-object 3 --batch-size 3 --compute-time 1ms \
    --out "$T/gnu-run" --quiet >/dev/null
assert_eq "GNU tar shards: objects, requests, samples, steps, bytes (= the files)" "[6,6,18,6,$gnu_bytes]" \
    "$(S gnu-run '[.dataset.objects, .train_epochs[0].requests, .train_epochs[0].samples, .train_epochs[0].steps, .train_epochs[0].bytes]')"
# Their headers are read first: a --samples-per-object other than the 3 members each holds is refused (exit 2),
# and a file that is not tar too.
assert_exit 2 "GNU tar shards with --samples-per-object 4" "$RB" load train "file://$G" --prefix shard- --format tar \
    --samples-per-object 4 --batch-size 3 --compute-time 1ms --quiet
assert_stderr_line 'samples-per-object 4: the shard .*shard-[0-9].tar holds 3 members \(its tar headers\); give --samples-per-object 3'
head -c 2048 /dev/urandom >"$G/shard-9.tar"
assert_exit 2 "a shard that is not tar" "$RB" load train "file://$G" --filelist <(echo shard-9.tar) --format tar \
    --compute-time 1ms --quiet
assert_stderr_line 'shard-9.tar: not a tar archive'
rm "$G/shard-9.tar"

# 6. s3:// on Ceph RGW: --populate PUTs the shards (signed), an epoch GETs each whole, verified; GNU tar lists the
#    object RGW holds (its key, set/obj-..., seeds other bytes than the file's name did).
rgw_up
rgw_bucket shards
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE || true
"$RB" load train s3://shards/set/ --endpoint "$RGW_ENDPOINT" "${TRAIN[@]}" --populate --verify --out "$T/s3" --quiet \
    >/dev/null
assert_eq "s3 epoch (1 rank): requests, samples, steps, bytes, errors" "[12,48,12,$on_disk,0]" \
    "$(S s3 '.train_epochs[0] | [.requests, .samples, .steps, .bytes, .errors]')"
curl -fsS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$RGW_ENDPOINT/shards/set/obj-00000003" -o "$T/s3.tar"
assert_eq "GNU tar lists the shard RGW holds: 4 members of 3000 bytes, the shard's size" "4 3000 $SHARD" \
    "$(tar -tvf "$T/s3.tar" | awk -v b="$(stat -c %s "$T/s3.tar")" '{ n++; s[$3] = 1 } END { for (k in s) printf "%d %s %d", n, k, b }')"

# 7. Bad input: a shard's members are one size, and --verify needs that size.
assert_exit 2 "--format tar with a sample size distribution" "$RB" load train "file://$D" --objects 4 \
    --sample-size 3000/100 --format tar --compute-time 1ms
assert_stderr_line '--format tar with --sample-size "3000/100": give a fixed size'
assert_exit 2 "--format tar --verify without a sample size" "$RB" load train "file://$D" --objects 4 --format tar \
    --verify --compute-time 1ms
assert_stderr_line '--format tar --verify: give --sample-size'
assert_exit 3 "tar shards read as --format npz" "$RB" load train "file://$D" --objects 4 --format npz --compute-time 1ms --quiet
assert_stderr_line '^railbench: error: --format npz: file://'"$D"' "obj-00000000": not an npz file \(no zip local header at its start\)$'
assert_exit 2 "--format of no kind railbench writes" "$RB" load train "file://$D" --objects 4 --format hdf5 --compute-time 1ms
assert_stderr_line '^railbench: error: --format: "hdf5" is not one of '
ok "file_tar_shards: all checks passed"
