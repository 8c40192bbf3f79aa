#!/usr/bin/env bash
# needs: ceph mpi
# railbench load checkpoint against Ceph RGW: 2 ranks of the llama3-8b preset at a small --scale write exactly the
# bytes DLIO's formula gives (computed here independently, file by file), read them back verified with the ranks
# shifted, a rank delayed on purpose is named as the straggler, the figures follow MLPerf's definitions, the
# two-invocation form records the gap, and bad input (ranks that do not divide, a name in use, a read of a
# checkpoint never written) exits as documented. Nothing is left in the bucket.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T"
rgw_up
rgw_bucket ckpt
EP=$RGW_ENDPOINT
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE || true
SCALE=2000

# The formula, written again from DLIO's checkpointing (not from railbench's C): file name -> bytes.
expected() { python3 "$ROOT/tests/integration/checkpoint_formula.py" "$@"; }
# s3 PATH: one signed request to RGW with curl.
s3() { curl -sS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$EP/ckpt$1"; }
# listing PREFIX: "key size" lines under PREFIX (pages of 1,000 followed).
listing() {
    local tok="" body
    while :; do
        body=$(s3 "?list-type=2&prefix=${1//\//%2F}${tok:+&continuation-token=$(jq -rn --arg t "$tok" '$t|@uri')}")
        grep -q '<ListBucketResult' <<<"$body" || fail "listing $1: $body"
        python3 -c 'import re,sys; b=sys.stdin.read(); [print(k,s) for k,s in re.findall(r"<Key>([^<]*)</Key>.*?<Size>(\d+)</Size>", b)]' <<<"$body"
        tok=$(sed -n 's/.*<NextContinuationToken>\([^<]*\)<.*/\1/p' <<<"$body")
        [ -n "$tok" ] || break
    done
}
rb() { local name=$1; shift
    "$RB" "$@" --out "$T/$name" >"$T/$name.out" 2>"$T/$name.err" || { cat "$T/$name.err" >&2; fail "$name: railbench failed"; }; }
rbmpi() { local name=$1 np=$2; shift 2
    rb_mpirun "$np" "$RB" "$@" --out "$T/$name" >"$T/$name.out" 2>"$T/$name.err" \
        || { cat "$T/$name.err" >&2; fail "$name: railbench failed"; }; }

# 1. llama3-8b (1x1x8, ZeRO 3) on 2 processes (4 model ranks each), 2 writes kept, 2 reads verified and shifted.
rbmpi w1 2 load checkpoint s3://ckpt/run/ --endpoint "$EP" --model llama3-8b --scale 1/$SCALE --writes 2 --reads 2 \
    --recovery-rank-shift --verify --name a --keep --multipart-threshold 5M --part-size 5M -c 4
expected 4096 32 14336 128256 32 8 1 1 8 3 $SCALE | sort >"$T/want"
listing run/a/global_step1/ | sed 's|^run/a/global_step1/||' | sort >"$T/got1"
listing run/a/global_step2/ | sed 's|^run/a/global_step2/||' | sort >"$T/got2"
diff "$T/want" "$T/got1" || fail "checkpoint 1: files and sizes differ from the formula's"
diff "$T/want" "$T/got2" || fail "checkpoint 2: files and sizes differ from the formula's"
WANT=$(awk '{s += $2} END {print s}' "$T/want")
ok "16 files, $WANT bytes per checkpoint: each file's size is the formula's"
R=$T/w1/result.json
assert_eq "summary: checkpoint bytes" "$WANT" "$(jqr "$R" .summary.checkpoint_bytes)"
assert_jq "$R" "[.summary.writes[].bytes] == [$WANT, $WANT] and [.summary.reads[].bytes] == [$WANT, $WANT]" \
    "each write and read moved the checkpoint's bytes"
assert_jq "$R" '[.summary.writes[], .summary.reads[]] | all(.errors == 0)' "no failed request"
assert_jq "$R" '[.phases[] | select(.name | startswith("read-")) | .errors.total] | all(. == 0)' \
    "reads verified (no checksum or length error)"
assert_jq "$R" '.summary.recovery_rank_shift == 1' "reads shifted by one rank (one host)"
# MLPerf's figures from the per-rank times: duration the maximum, throughput bytes over it, the minimum rank's own.
assert_jq "$R" '[.summary.writes[], .summary.reads[]] | all(
    (.duration_s == ([.ranks[].time_s] | max)) and
    ((.throughput_bytes_per_s - .bytes / .duration_s) | fabs) < 1e-6 * .throughput_bytes_per_s and
    ((.min_rank_throughput_bytes_per_s - ([.ranks[] | .bytes / .time_s] | min)) | fabs) < 1e-6 * .min_rank_throughput_bytes_per_s)' \
    "duration = slowest rank, throughput = bytes / duration, min rank throughput"
assert_jq "$R" '.phases[] | select(.name == "write-1") | .latency_hist.count == 16 and .parts.count > 0' \
    "per-file latency histogram of the writes (16 files), optimizer files in parts"
grep -q '^| write |    1 |' "$T/w1/table.md" || fail "table: no write row"

# 2. The two-invocation form: read what w1 kept, --after its result (the gap is recorded and checked), each file
# above 1 MiB as parallel Range GETs of 1 MiB (--read-part-size): RGW's access log holds exactly the formula's parts.
assert_eq "Range GETs of checkpoint 1 before (w1 read whole files)" 0 "$(rgw_seen 'GET /ckpt/run/a/global_step1/[^ ]*' 206)"
rbmpi r2 2 load checkpoint s3://ckpt/run/ --endpoint "$EP" --model llama3-8b --scale 1/$SCALE --mode read --name a \
    --writes 2 --reads 1 --verify --recovery-rank-shift --after "$T/w1" --read-part-size 1MiB -c 4
PARTS=$(awk '$2 > 1048576 {n += int(($2 + 1048575) / 1048576)} END {print n + 0}' "$T/want")
rgw_assert_seen "Range GETs RGW answered 206 for checkpoint 1" "$PARTS" 'GET /ckpt/run/a/global_step1/[^ ]*' 206
assert_jq "$T/r2/result.json" ".phases[] | select(.name == \"read-1\") | .count == 16 and .parts.count == $PARTS and
    .parts.errors.total == 0" "read-1: 16 files, one record each, in $PARTS verified parts"
assert_jq "$T/r2/result.json" '.read_gap_s >= 0 and (.checks[] | select(.name == "read_gap") | .passed)' \
    "read gap recorded and within MLPerf's 30 s"
assert_jq "$T/r2/result.json" '.summary.reads[0].bytes == '"$WANT"' and .summary.reads[0].errors == 0' "read 1 verified"

# 3. A rank slowed on purpose is named as the straggler (the shared outlier rule on per-rank throughput: below half
# the median, which with two ranks means below a third of the other's; a 4 s late start makes it so here).
rbmpi s3 2 load checkpoint s3://ckpt/run/ --endpoint "$EP" --model llama3-8b --scale 1/$SCALE --writes 1 --reads 1 \
    --delay-rank 1:4s --recovery-rank-shift --verify
jq -c '.summary.writes[0].ranks, .summary.reads[0].ranks' "$T/s3/result.json"
assert_jq "$T/s3/result.json" '[.summary.writes[0].stragglers[].rank] == [1] and [.summary.reads[0].stragglers[].rank] == [1]' \
    "rank 1 named straggler of the write and the read"
grep -q 'straggler: write 1: rank 1' "$T/s3.err" || fail "no straggler line on stderr"
assert_jq "$T/s3/result.json" '.summary.writes[0].duration_s >= 4 and .summary.writes[0].slowest_rank == 1' \
    "the slowed rank's time is the checkpoint's duration"
assert_eq "s3: nothing left under its folder" 0 "$(jqr "$T/s3/result.json" .summary.cleanup.failed)"

# 4. Bad input.
assert_exit 2 "8 ranks on 3 processes" rb_mpirun 3 "$RB" load checkpoint s3://ckpt/run/ --endpoint "$EP" \
    --model llama3-8b --scale 1/$SCALE --out "$T/bad1"
grep -q '8 ranks (TP 1 x PP 1 x DP 8) do not divide over 3 processes' "$T/stderr" || { cat "$T/stderr"; fail "bad1 message"; }
assert_exit 2 "a --name in use" "$RB" load checkpoint s3://ckpt/run/ --endpoint "$EP" --model llama3-8b --dp 1 \
    --scale 1/$SCALE --name a --writes 1 --reads 0 --out "$T/bad2"
grep -q 'a run never overwrites' "$T/stderr" || { cat "$T/stderr"; fail "bad2 message"; }
assert_eq "w1's files still there" 32 "$(listing run/a/ | wc -l)"
assert_exit 3 "a read of a checkpoint never written" "$RB" load checkpoint s3://ckpt/run/ --endpoint "$EP" \
    --model llama3-8b --dp 1 --scale 1/$SCALE --mode read --name never --writes 1 --reads 1 --out "$T/bad3"
grep -q 'never written' "$T/stderr" || { cat "$T/stderr"; fail "bad3 message"; }
assert_exit 2 "an unknown preset" "$RB" load checkpoint s3://ckpt/run/ --endpoint "$EP" --model llama3-9b --out "$T/bad4"
assert_exit 2 "--zero 4" "$RB" load checkpoint s3://ckpt/run/ --endpoint "$EP" --model llama3-8b --zero 4 --out "$T/bad5"

# 5. Cleanup: a run without --keep deletes exactly what it wrote; w1's kept files are deleted here by hand.
rb c5 load checkpoint s3://ckpt/run/ --endpoint "$EP" --params 1000000 --tp 2 --dp 2 --writes 2 --reads 1 --verify
assert_jq "$T/c5/result.json" '.summary.checkpoint_bytes == 14000000 and .summary.cleanup.deleted == .summary.cleanup.written' \
    "--params 1e6 on 4 ranks: 2 + 12 bytes per parameter; cleanup deleted what it wrote"
assert_eq "only w1's kept files remain" 32 "$(listing run/ | wc -l)"

# 6. A folder named without its "/": s3://ckpt/ck is the prefix "ck/" (as aws-cli and file:// read it), so the keys
# are ck/n/global_stepK/... and every message names exactly those: none begins "ckn" (the URL glued to the name).
rb f6 load checkpoint s3://ckpt/ck --endpoint "$EP" --params 1000000 --tp 2 --dp 2 --writes 1 --reads 0 --name n --keep
n6=$(listing ck | wc -l)
[ "$n6" -gt 0 ] || fail "f6: no keys under ck"
assert_eq "f6: every key under \"ck\" is under ck/n/global_step1/" "$n6" "$(listing ck/n/global_step1/ | wc -l)"
assert_eq "f6: keys beginning \"ckn\"" 0 "$(listing ckn | wc -l)"
assert_jq "$T/f6/result.json" ".summary.checkpoint_bytes == 14000000 and .summary.writes[0].bytes == 14000000" \
    "f6: one checkpoint of 14000000 bytes written"
grep -q 'the checkpoints stay under s3://ckpt/ck/n/ (--name n)' "$T/f6.err" || { cat "$T/f6.err"; fail "f6: message"; }
grep -q 'per checkpoint under s3://ckpt/ck/n/,' "$T/f6.err" || { cat "$T/f6.err"; fail "f6: message"; }
ok "f6: $n6 keys under ck/n/, and the messages name s3://ckpt/ck/n/"
rb d6 load delete s3://ckpt/ck --endpoint "$EP" --prefix n/
assert_eq "d6: deleted what f6 kept" "$n6" "$(jqr "$T/d6/result.json" .phases[0].count)"
assert_eq "d6: nothing left under ck" 0 "$(listing ck | wc -l)"
