#!/usr/bin/env bash
# needs: ceph root
# load checkpoint on a real CephFS (tests/servers/cephfs.sh, ceph-fuse) whose FUSE daemon is killed (by PID) in the
# middle of the writes: the mount answers ENOTCONN. The run exits 3 with one `error:` line, and its outcome names
# ENOTCONN (not the cleanup that fails after it); the write cut short is complete:false, out of the mean; the files
# the run could not remove are counted by the failed cleanup check and listed in left-behind.txt; no output says nan.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: ceph-fuse mounts need root here"; exit 0; }

cephfs_up
M=$CEPHFS_MNT
mkdir "$M/ck"
rc=0
"$RB" load checkpoint "file://$M/ck" --model llama3-8b --scale 1/2000 --writes 20 --reads 0 --name c \
    --out "$T/c" >"$T/c.out" 2>"$T/c.err" &
rbpid=$!
for _ in $(seq 300); do [ -d "$M/ck/c/global_step2" ] && break; sleep 0.1; done
[ -d "$M/ck/c/global_step2" ] || fail "the second checkpoint did not start in 30 s"
kill -9 "$CEPHFS_FUSE_PID"
wait "$rbpid" || rc=$?
assert_eq "mount gone: exit" 3 "$rc"
! grep -qiw nan "$T/c.out" "$T/c.err" "$T/c/result.json" || fail "printed nan"
[ "$(grep -c 'error:' "$T/c.err")" = 1 ] || fail "expected one error line: $(grep 'error:' "$T/c.err")"
grep -q 'error: .*Transport endpoint is not connected' "$T/c.err" || fail "ENOTCONN not named: $(cat "$T/c.err")"
grep -Eq '^outcome: failed: .*Transport endpoint is not connected.*\(exit 3\)$' "$T/c.out" "$T/c.err" ||
    fail "the outcome does not name ENOTCONN: $(grep outcome: "$T/c.out" "$T/c.err")"
ok "mount gone: $(grep 'error:' "$T/c.err")"
R=$T/c/result.json
assert_jq "$R" '(.summary.writes[-1] | .complete == false and .throughput_bytes_per_s == null) and
    ([.summary.writes[] | select(.complete)] | length) == .summary.write_mean.checkpoints' \
    "the write cut short is complete:false and not in the mean"
failed=$(jqr "$R" .summary.cleanup.failed)
[ "$failed" -gt 0 ] || fail "the cleanup on a dead mount deleted everything? $(jq -c .summary.cleanup "$R")"
assert_jq "$R" '[.checks[] | select(.name == "cleanup")][0].passed == false' "the cleanup check failed"
assert_eq "left-behind.txt lists what the failed cleanup left" "$failed" "$(wc -l <"$T/c/left-behind.txt")"
grep -q "cleanup: $failed of [0-9]* objects this run wrote could not be deleted .*; listed in $T/c/left-behind.txt" \
    "$T/c.err" || fail "the failed cleanup is not a warning naming the list: $(grep cleanup: "$T/c.err")"
# An unfinished file the dead mount would not let the run remove is named with its rm, and listed.
while read -r path; do
    grep -qxF "c/${path#"$M/ck/c/"}" "$T/c/left-behind.txt" || fail "$path (could not be removed) is not listed"
    ok "could not be removed, named and listed: ${path#"$M/"}"
done < <(sed -n "s/.*warning: cannot remove \(.*\), the unfinished file this run created: Transport endpoint is not connected.*/\1/p" "$T/c.err")
