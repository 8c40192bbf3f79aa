#!/usr/bin/env bash
# needs: ceph mpi
# railbench load kvcache against Ceph RGW (tests/servers/rgw.sh): MLPerf Storage's option 1 scaled down from 2 ranks,
# each entry one object of 128 + tokens x 131,072 bytes (PUT, GET verified, DELETE on the engine); the bytes counted
# are the tokens' bytes, each trial's figures the ranks' sums and maxima; RGW's log shows the requests; an object that
# was in the bucket is untouched and nothing the run made is left; an entry kept and fetched is the .npy file numpy
# reads with the model's shape; a missing bucket is one line, exit 3.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T"
rgw_up
rgw_bucket kvc
EP=$RGW_ENDPOINT
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE || true
s3() { curl -sS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"; }
echo keep >"$T/there.txt"
s3 -X PUT --data-binary @"$T/there.txt" "$EP/kvc/rbkv-there.txt" >/dev/null

rb_mpirun 2 "$RB" load kvcache s3://kvc --endpoint "$EP" --option 1 --scale 1/64 --users 3 --inflight 3 --duration 3s \
    --trials 2 --gap 1s --verify --out "$T/run" >"$T/run.out" 2>"$T/run.err" || { cat "$T/run.err" >&2; fail "run"; }
R=$T/run/result.json
assert_jq "$R" '[.summary.trials[] | .counts, .ranks[].counts] | all(.writes > 0 and .reads > 0 and
    .bytes_written == .writes * 128 + .tokens_written * 131072 and .bytes_read == .reads * 128 + .tokens_read * 131072
    and .verify_failures == 0)' "2 ranks on RGW: bytes = 128 x objects + 131,072 x tokens, every read verified"
assert_jq "$R" '.summary.engine == "native"' "requests on the native engine"
assert_jq "$R" '[.summary.trials[] | . as $t | (.ranks | length) == 2 and
    (([.ranks[].read_bytes_per_s] | add) - $t.read_bytes_per_s | fabs) < 1e-6 * $t.read_bytes_per_s and
    (([.ranks[].write_bytes_per_s] | add) - $t.write_bytes_per_s | fabs) < 1e-6 * $t.write_bytes_per_s and
    ([.ranks[].device_read_p95_ns] | max) == $t.device_read_p95_ns and
    ([.ranks[].device_write_p95_ns] | max) == $t.device_write_p95_ns] | all' \
    "each trial's GB/s the ranks' sums, its device p95s their maximum"
W=$(jq '[.summary.trials[].counts.writes] | add' "$R")
rgw_assert_seen "RGW saw a PUT of each entry" "$W" "PUT /kvc/rbkv-[^ ]*-r[01]/u[0-9]+-c[0-9]+-t[0-9]+\\.npy" 200
rgw_assert_seen "RGW saw a GET of each read" "$(jq '[.summary.trials[].counts.reads] | add' "$R")" \
    "GET /kvc/rbkv-[^ ]*-r[01]/u[0-9]+-c[0-9]+-t[0-9]+\\.npy" 200
rgw_assert_seen "RGW saw a DELETE of each entry (conversations' ends and each trial's clean-up)" "$W" \
    "DELETE /kvc/rbkv-[^ ]*-r[01]/u[0-9]+-c[0-9]+-t[0-9]+\\.npy" 204
assert_eq "nothing of the run left in the bucket" 0 "$(rgw_keys kvc rbkv-2)"
assert_eq "the object that was there" keep "$(s3 "$EP/kvc/rbkv-there.txt")"

# The bytes: an entry kept (--keep), fetched from RGW, is the .npy file the model gives (numpy), its payload that of
# its name.
"$RB" load kvcache s3://kvc --endpoint "$EP" --model llama3.1-8b --scale 1/256 --users 2 --inflight 1 --duration 1s \
    --trials 1 --keep --verify --out "$T/k" >"$T/k.out" 2>&1 || { cat "$T/k.out" >&2; fail "--keep run"; }
pre=$(jqr "$T/k/result.json" .summary.entry_dir_prefix)0/
s3 "$EP/kvc?list-type=2&prefix=${pre//\//%2F}" | grep -o '<Key>[^<]*</Key>' | sed 's/<[^>]*>//g' >"$T/kept" || true
[ -s "$T/kept" ] || fail "--keep: nothing kept under $pre"
key=$(head -1 "$T/kept")
s3 -o "$T/obj.npy" "$EP/kvc/$key"
out=$(/usr/bin/python3 "$ROOT/tests/formats/check_kvnpy.py" 42 32 8 128 "$T/obj.npy" "$key") || fail "numpy: $out"
ok "numpy reads an object of RGW: $out"
while read -r k; do s3 -X DELETE "$EP/kvc/$k" >/dev/null; done <"$T/kept"
assert_eq "the kept objects removed (by the test)" 0 "$(rgw_keys kvc rbkv-2)"

rc=0
"$RB" load kvcache s3://nobucket --endpoint "$EP" --option 1 --duration 1s --out "$T/nob" >"$T/nob.out" 2>"$T/nob.err" || rc=$?
assert_eq "missing bucket: exit" 3 "$rc"
assert_eq "missing bucket: one line" 1 "$(grep -c . "$T/nob.err")"
grep -q '^railbench: error: .*nobucket' "$T/nob.err" || { cat "$T/nob.err" >&2; fail "missing bucket: the line"; }
ok "missing bucket: $(cat "$T/nob.err")"
