#!/usr/bin/env bash
# needs: ceph
# PUTs whose outcome is unknown are looked up and accounted for. (1) The AIStore stand-in (tests/servers/peer.py
# --ais-put-late-ms) stores each PUT and answers after the client's --timeout: every PUT times out, HEAD after the
# phase finds each stored, cleanup deletes them, and unknown-outcome.txt lists exactly the keys the stand-in held.
# (2) The stand-in killed (by PID) while it holds PUTs it has not answered: the PUTs are reset, HEAD fails too, and
# the record lists each key it held as unknown (left_behind.unknown, objects_max). (3) Ceph RGW's radosgw killed
# (by PID) in the middle of a put and started again: the keys RGW holds under the run's prefix are the objects
# left_behind counts plus some of those unknown-outcome.txt lists, and the failed cleanup lists what stays.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

# rgw_list BUCKET PREFIX: the keys RGW lists under PREFIX (one signed page, up to 1,000), sorted.
rgw_list() {
    curl -sS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$RGW_ENDPOINT/$1?list-type=2&prefix=${2//\//%2F}" |
        { grep -o '<Key>[^<]*</Key>' || true; } | sed 's/<[^>]*>//g' | sort
}
# held PORT PREFIX: the keys the stand-in holds under bucket/PREFIX, sorted, without the bucket.
held() { curl -s "http://127.0.0.1:$1/peer/stats" | jq -r --arg p "$2" '.held[] | select(startswith($p)) | sub("^[^/]*/"; "")' | sort; }

# 1. Stored but answered late: timeout on every PUT, HEAD finds them, cleanup deletes them.
P=$(free_port)
bg python3 "$ROOT/tests/servers/peer.py" --port "$P" --ais-put-late-ms 1500
wait_port "$P"
rc=0
"$RB" load put ais://late --endpoint "http://127.0.0.1:$P" --objects 6 --size 4k --timeout 500ms -c 2 \
    --out "$T/late" >"$T/late.out" 2>"$T/late.err" || rc=$?
assert_eq "late answers: exit (every PUT failed: a failed check)" 1 "$rc"
R=$T/late/result.json
assert_jq "$R" '.summary.ops[0].errors.timeout == 6 and .summary.left_behind.unknown_outcome == 6 and
    .summary.left_behind.unknown_outcome_stored == 6 and .summary.left_behind.unknown == 0' \
    "6 PUTs timed out; HEAD found all 6 stored"
assert_jq "$R" '.summary.cleanup.written == 6 and .summary.cleanup.deleted == 6 and .summary.left_behind.objects == 0
    and .summary.left_behind.objects_max == 0' "cleanup deleted the 6 stored objects; nothing left"
pfx=$(jqr "$R" .summary.run_prefix)
assert_eq "objects the stand-in holds after the run" "" "$(held "$P" "late/")"
sort "$T/late/unknown-outcome.txt" >"$T/late.listed"
for i in 0 1 2 3 4 5; do printf '%s%08d\n' "$pfx" "$i"; done | sort >"$T/late.want"
diff "$T/late.want" "$T/late.listed" || fail "unknown-outcome.txt is not the 6 keys the run put"
grep -q "6 put(s) timed out, were reset or were in flight at the end: their outcome was not known; HEAD after the phase: 6 stored (cleanup deletes them): ${pfx}0000000" \
    "$T/late.err" || fail "the warning does not name the keys: $(cat "$T/late.err")"
! grep -qiw nan "$T/late.out" "$T/late.err" "$R" || fail "late: printed nan"

# 2. The stand-in killed while it holds PUTs it has not answered: reset, HEAD refused, all unknown.
P2=$(free_port)
python3 "$ROOT/tests/servers/peer.py" --port "$P2" --ais-put-late-ms 30000 &
PEER2=$!
PIDS+=("$PEER2")
wait_port "$P2"
"$RB" load put ais://gone --endpoint "http://127.0.0.1:$P2" --objects 4 --size 4k --timeout 20s -c 4 \
    --out "$T/gone" >"$T/gone.out" 2>"$T/gone.err" &
RUN=$!
for _ in $(seq 100); do [ "$(held "$P2" gone/ | wc -l)" = 4 ] && break; sleep 0.1; done
held "$P2" gone/ >"$T/gone.held"
assert_eq "PUTs the stand-in holds before it is killed" 4 "$(wc -l <"$T/gone.held")"
kill -9 "$PEER2"
rc=0
wait "$RUN" || rc=$?
assert_eq "server gone: exit" 1 "$rc"
R=$T/gone/result.json
assert_jq "$R" '.summary.left_behind.unknown_outcome == 4 and .summary.left_behind.unknown == 4 and
    .summary.left_behind.unknown_outcome_stored == 0 and .summary.left_behind.objects == 0 and
    .summary.left_behind.objects_max == 4' "4 PUTs reset, HEAD failed: 4 unknown, objects_max 4"
sort "$T/gone/unknown-outcome.txt" >"$T/gone.listed"
diff "$T/gone.held" "$T/gone.listed" || fail "the keys listed are not the keys the stand-in held"
grep -q "0 stored (cleanup deletes them), 0 not stored, 4 unknown (HEAD failed too): $(jqr "$R" .summary.run_prefix)" \
    "$T/gone.err" || fail "the warning does not name the unknown keys: $(cat "$T/gone.err")"
ok "the keys the killed server held are the ones the record lists as unknown"

# 3. Ceph RGW: radosgw killed (by PID) in the middle of a put, then started again.
rgw_up
rgw_bucket acc
RGW_PID=${RGW_PIDS##* }
"$RB" load put s3://acc/k/ --endpoint "$RGW_ENDPOINT" --objects 4000 --size 64k -c 8 --timeout 5s \
    --out "$T/put3" >"$T/put3.out" 2>"$T/put3.err" &
RUN=$!
# Some PUTs done and some in flight: RGW holds 50 of the run's objects.
for _ in $(seq 300); do [ "$(rgw_keys acc k/)" -ge 50 ] && break; sleep 0.1; done
kill -9 "$RGW_PID"
rc=0
wait "$RUN" || rc=$?
[ "$rc" != 0 ] || fail "put with radosgw killed: exit 0"
R=$T/put3/result.json
objects=$(jqr "$R" .summary.left_behind.objects)
unknown=$(jqr "$R" .summary.left_behind.unknown)
ok "radosgw killed: exit $rc, left_behind.objects $objects, unknown $unknown"
[ "$unknown" -gt 0 ] || fail "no PUT was in flight when radosgw died: $(jq -c .summary.left_behind "$R")"
# radosgw again, on the same cluster and port.
CONF=$RGW_DIR/ceph.conf
[ -f "$CONF" ] || CONF=$(ls "$RGW_DIR"/*.conf | head -n 1)
user=()
[ "$(stat -c %U "$RGW_DIR")" != ceph ] || user=(--setuser ceph --setgroup ceph)
radosgw -c "$CONF" -n client.rgw -f "${user[@]}" >>"$RGW_DIR/log/rgw-again.out" 2>&1 &
PIDS+=("$!")
for _ in $(seq 300); do curl -s -o /dev/null "$RGW_ENDPOINT" && break; sleep 0.2; done
keys=$(rgw_keys acc k/)
# What RGW holds: every object left_behind counts, plus those of the unknown ones it stored before it died.
sort "$T/put3/unknown-outcome.txt" >"$T/rgw.unknown"
assert_eq "unknown-outcome.txt lines = left_behind.unknown" "$unknown" "$(wc -l <"$T/rgw.unknown")"
[ "$keys" -ge "$objects" ] && [ "$keys" -le $((objects + unknown)) ] ||
    fail "RGW holds $keys keys under k/, the record: $objects left, $unknown unknown"
ok "RGW holds $keys keys: $objects left_behind.objects + $((keys - objects)) of the $unknown unknown"
[ "$objects" -gt 0 ] || fail "no PUT finished before radosgw died"
[ -f "$T/put3/left-behind.txt" ] || fail "the failed cleanup did not list what stays"
assert_eq "left-behind.txt lines = left_behind.objects" "$objects" "$(wc -l <"$T/put3/left-behind.txt")"
# Key by key: every listed object is in RGW, and what RGW holds beyond them is among the unknown ones.
rgw_list acc k/ >"$T/rgw.keys"
sort "$T/put3/left-behind.txt" >"$T/rgw.left"
[ -z "$(comm -23 "$T/rgw.left" "$T/rgw.keys")" ] || fail "objects listed as left that RGW does not hold"
comm -13 "$T/rgw.left" "$T/rgw.keys" >"$T/rgw.extra"
[ -z "$(comm -23 "$T/rgw.extra" "$T/rgw.unknown")" ] || fail "RGW holds objects the record does not list: $(cat "$T/rgw.extra")"
ok "RGW's keys = the $objects listed in left-behind.txt + $(wc -l <"$T/rgw.extra") of those in unknown-outcome.txt"
! grep -qiw nan "$T/put3.out" "$T/put3.err" "$R" || fail "rgw: printed nan"
"$RB" load delete s3://acc --endpoint "$RGW_ENDPOINT" --prefix k/ --out "$T/del" --quiet >/dev/null
assert_eq "after load delete: keys under k/" 0 "$(rgw_keys acc k/)"
