#!/usr/bin/env bash
# needs: ceph mpi
# Data the user owns (docs/safety.md): load put, load mixed and load tiers against nginx WebDAV (HEAD per name) and Ceph RGW
# (one LIST) where objects already exist under the names a run would use. Without --keep a run writes under its own
# prefix rb-<run id>- (printed, in result.json) and deletes only that; with --keep, --prefix or --filelist it looks
# the names up first and refuses (exit 2, one error line naming the first) unless --overwrite, and cleanup never
# deletes what was there before. The user's objects are byte-for-byte the same afterwards (sha256 of every one).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T" # nginx's workers run as nobody
nginx_dav web "access_log $T/web/access.log;"
URL=http://127.0.0.1:$DAV_PORT/dav

# The user's data: 4 objects obj-00000000..03 of random sizes and bytes, and one unrelated file.
mkdir -p "$DAV_ROOT/s"
for i in 0 1 2 3; do head -c $((1000 + i * 777)) /dev/urandom >"$DAV_ROOT/s/$(printf 'obj-%08d' "$i")"; done
echo "notes" >"$DAV_ROOT/s/README"
chmod 666 "$DAV_ROOT"/s/*
(cd "$DAV_ROOT/s" && sha256sum -- * >"$T/user.sha")
unchanged() { # WHAT: every one of the user's files is there with the same bytes, and nothing else is
    (cd "$DAV_ROOT/s" && sha256sum --quiet -c "$T/user.sha") || fail "$1: the user's objects changed"
    assert_eq "$1: files in the directory" "$(wc -l <"$T/user.sha")" "$(find "$DAV_ROOT/s" -type f | wc -l)"
}
puts_of() { grep -c "\"PUT /dav/s/$1" "$T/web/access.log" || true; }

# 1. put without --keep: its own prefix, printed and recorded; cleanup deletes exactly its 4 objects.
"$RB" load put "$URL/s" --objects 4 --size 4k --out "$T/p1" >"$T/p1.out" 2>"$T/p1.err"
pfx=$(jqr "$T/p1/result.json" .summary.run_prefix)
[[ $pfx =~ ^rb-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}-obj-$ ]] || fail "p1: run prefix '$pfx'"
ok "p1: run prefix $pfx"
grep -q "names: this run's own prefix \"$pfx\"" "$T/p1.err" || fail "p1: the banner does not print the prefix"
assert_eq "p1: PUTs under the run prefix (nginx log)" 4 "$(puts_of "$pfx")"
assert_eq "p1: PUTs of obj- names" 0 "$(puts_of obj-)"
assert_jq "$T/p1/result.json" '.summary.cleanup.deleted == 4 and .summary.cleanup.failed == 0
    and .summary.left_behind.prefix == .summary.run_prefix' "p1: cleanup deleted the 4 objects it wrote"
unchanged p1

# 2. put --keep on names that exist: refused before any PUT, one error line naming the first, no directory left.
assert_exit 2 "p2: put --keep over existing names" "$RB" load put "$URL/s" --objects 8 --size 4k --keep --out "$T/p2"
assert_stderr_line '^railbench: error: load put --keep: http://127.0.0.1:[0-9]+/dav/s holds "obj-00000000" already \(4 of the 8 names this run would write exist\).*--overwrite'
assert_eq "p2: PUTs of obj- names" 0 "$(puts_of obj-)"
[ ! -e "$T/p2" ] || fail "p2: the refused run left $T/p2"
ok "p2: no result directory left"
unchanged p2

# 3. --prefix without --keep names the user's objects too: refused the same way; under a new prefix it runs.
assert_exit 2 "p3: put --prefix obj- over existing names" "$RB" load put "$URL/s" --objects 2 --prefix obj- --out "$T/p3"
grep -q 'load put --prefix: .* holds "obj-00000000" already (2 of the 2 names' "$T/stderr" || fail "p3: message"
"$RB" load put "$URL/s" --objects 3 --size 4k --prefix new- --keep --out "$T/p3b" >/dev/null 2>&1
assert_eq "p3b: new- objects kept" 3 "$(find "$DAV_ROOT/s" -name 'new-*' | wc -l)"
assert_jq "$T/p3b/result.json" '.summary.run_prefix == null and .summary.cleanup.kept == true' "p3b: user names, kept"
rm -f "$DAV_ROOT"/s/new-*

# 4. mixed without --keep: its own prefix for prepare, mix and cleanup; nothing of the user's touched.
"$RB" load mixed "$URL/s" --objects 4 --size 4k --count 200 --out "$T/mx1" >/dev/null 2>"$T/mx1.err"
mpfx=$(jqr "$T/mx1/result.json" .summary.run_prefix)
[[ $mpfx =~ ^rb-.*-obj-$ && $mpfx != "$pfx" ]] || fail "mx1: run prefix '$mpfx' (put's was $pfx)"
assert_jq "$T/mx1/result.json" '.summary.total.requests == 200 and .summary.cleanup.failed == 0
    and .summary.cleanup.deleted == .summary.live_objects' "mx1: 200 requests, cleanup deleted the live set"
assert_eq "mx1: PUTs of obj- names" 0 "$(puts_of obj-)"
assert_eq "mx1: DELETEs of obj- names" 0 "$(grep -c '"DELETE /dav/s/obj-' "$T/web/access.log" || true)"
unchanged mx1

# 5. mixed --keep and --no-prepare with writes in the mix: refused; --no-prepare reading only runs on them.
assert_exit 2 "mx2: mixed --keep over existing names" "$RB" load mixed "$URL/s" --objects 4 --keep --count 10 --out "$T/mx2"
assert_stderr_line 'error: load mixed --keep: .* holds "obj-00000000" already'
assert_exit 2 "mx3: mixed --no-prepare with put and delete" "$RB" load mixed "$URL/s" --objects 4 --no-prepare --count 10
assert_stderr_line 'error: load mixed --no-prepare --mix get=45,put=15,delete=10,stat=30: .*add --overwrite'
"$RB" load mixed "$URL/s" --objects 4 --no-prepare --mix get=70,stat=30 --count 40 --out "$T/mx4" >/dev/null 2>&1
assert_jq "$T/mx4/result.json" '.summary.total.requests == 40 and .summary.total.errors.total == 0' \
    "mx4: --no-prepare reading the user's objects"
unchanged mx4

# 6. --overwrite: the names that existed are written over and kept; cleanup deletes only the ones the run created.
mkdir -p "$DAV_ROOT/o"
chmod 777 "$DAV_ROOT/o"
for i in 0 1; do head -c 100 /dev/urandom >"$DAV_ROOT/o/$(printf 'obj-%08d' "$i")"; done
chmod 666 "$DAV_ROOT"/o/*
"$RB" load put "$URL/o" --objects 4 --size 4k --prefix obj- --overwrite --out "$T/o1" >/dev/null 2>"$T/o1.err"
grep -q 'warning: --overwrite: 2 of the 4 names exist' "$T/o1.err" || fail "o1: no --overwrite warning"
assert_eq "o1: objects left" "obj-00000000 obj-00000001" "$(cd "$DAV_ROOT/o" && echo obj-*)"
assert_eq "o1: the ones that existed now hold the run's 4 KiB" "4096 4096" \
    "$(stat -c %s "$DAV_ROOT"/o/obj-0000000[01] | xargs)"
assert_jq "$T/o1/result.json" '.summary.cleanup.written == 2 and .summary.cleanup.deleted == 2' \
    "o1: cleanup deleted the 2 objects the run created"

# 7. train --populate writes a data set the user keeps: looked up first, the same refusal; 2 MPI ranks each look up
#    their own share (HEAD), and the first existing name is reported once.
assert_exit 2 "t1: train --populate over existing names" "$RB" load train "$URL/s" --objects 4 --populate \
    --sample-size 1k --compute-time 1ms --batch-size 2 --epochs 1
assert_eq "t1: the error line" 1 "$(grep -c 'error: load train --populate: .* holds "obj-00000000" already (4 of the 4 names.*leave out --populate' "$T/stderr")"
assert_eq "t1: PUTs of obj- names" 0 "$(puts_of obj-)"
assert_exit 2 "t2: put --keep on 2 ranks" rb_mpirun 2 "$RB" load put "$URL/s" --objects 8 --keep --size 4k
assert_eq "t2: error lines" 1 "$(grep -c 'error: load put --keep: .* holds "obj-0000000[01]" already (4 of the 8 names' "$T/stderr")"
assert_eq "t2: PUTs of obj- names" 0 "$(puts_of obj-)"
unchanged t2

# 7b. load tiers' default names (<prefix><size>-<index>): every size's names looked up before the first PUT; two of
#     the user's objects under them stop the run (exit 2, no PUT of any size, no result directory) and stay as they
#     were. The tier here is another path of the same server (the run stops before it reads through it).
mkdir -p "$DAV_ROOT/tr"
for i in 0 1; do head -c $((3000 + i)) /dev/urandom >"$DAV_ROOT/tr/$(printf 'obj-4KiB-%08d' "$i")"; done
chmod 666 "$DAV_ROOT"/tr/*
(cd "$DAV_ROOT/tr" && sha256sum -- * >"$T/tiers.sha")
assert_exit 2 "ti1: load tiers over the user's objects" "$RB" load tiers --backend "$URL/tr" --tier "$URL/tier" \
    --sizes 1KiB,4KiB --objects 4 --out "$T/ti1"
assert_eq "ti1: the error line" 1 "$(grep -c '^railbench: error: load tiers (default names): http://127.0.0.1:[0-9]*/dav/tr holds "obj-4KiB-00000000" already (2 of the 4 names.*--fresh.*--existing.*--overwrite' "$T/stderr")"
assert_eq "ti1: stderr lines besides the banner" 1 "$(grep -vc 'info: load tiers:' "$T/stderr")"
assert_eq "ti1: PUTs under tr/ (1KiB names free, still not written)" 0 "$(grep -c '"PUT /dav/tr/' "$T/web/access.log" || true)"
[ ! -e "$T/ti1" ] || fail "ti1: the refused run left $T/ti1"
(cd "$DAV_ROOT/tr" && sha256sum --quiet -c "$T/tiers.sha") || fail "ti1: the user's objects changed"
assert_eq "ti1: files under tr/" 2 "$(find "$DAV_ROOT/tr" -type f | wc -l)"
ok "ti1: the user's 2 objects unchanged, nothing written"

# 8. Ceph RGW: the check is one LIST; the same outcomes on s3://.
rgw_up
rgw_bucket safe
s3() { curl -fsS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"; }
mkdir -p "$T/s3user"
for i in 0 1 2 3; do
    f=$T/s3user/$(printf 'obj-%08d' "$i")
    head -c $((2000 + i * 333)) /dev/urandom >"$f"
    s3 -T "$f" "$RGW_ENDPOINT/safe/${f##*/}" >/dev/null
done
s3_unchanged() {
    local f
    for f in "$T"/s3user/obj-*; do
        cmp -s "$f" <(s3 "$RGW_ENDPOINT/safe/${f##*/}") || fail "$1: s3://safe/${f##*/} changed"
    done
    assert_eq "$1: keys in the bucket" 4 "$(rgw_keys safe '')"
}
"$RB" load put s3://safe --endpoint "$RGW_ENDPOINT" --objects 4 --size 4k --out "$T/s1" >/dev/null 2>&1
assert_jq "$T/s1/result.json" '(.summary.run_prefix | test("^rb-.*-obj-$")) and .summary.cleanup.deleted == 4' \
    "s1: put under its own prefix, cleanup deleted 4"
s3_unchanged s1
assert_exit 2 "s2: put --keep over existing keys" "$RB" load put s3://safe --endpoint "$RGW_ENDPOINT" --objects 6 --keep
assert_stderr_line 'error: load put --keep: s3://safe holds "obj-00000000" already \(4 of the 6 names'
"$RB" load mixed s3://safe --endpoint "$RGW_ENDPOINT" --objects 4 --size 4k --count 100 --out "$T/s3" >/dev/null 2>&1
assert_jq "$T/s3/result.json" '.summary.total.requests == 100 and .summary.cleanup.failed == 0
    and .summary.cleanup.deleted == .summary.live_objects' "s3: mixed under its own prefix, cleaned up"
assert_exit 2 "s4: mixed --keep over existing keys" "$RB" load mixed s3://safe --endpoint "$RGW_ENDPOINT" --objects 4 \
    --keep --count 10
s3_unchanged s4
rgw_assert_seen "RGW: PUTs of the user's names (only the 4 the test made)" 4 'PUT /safe/obj-[0-9]+' 200
assert_eq "RGW: DELETEs of the user's names" 0 "$(rgw_seen 'DELETE /safe/obj-[0-9]+' 204)"

# 9. load tiers' default names on s3://: one LIST; a user's key under them stops the run, byte-for-byte unchanged.
rgw_bucket safet
head -c 5000 /dev/urandom >"$T/s3user-t"
s3 -T "$T/s3user-t" "$RGW_ENDPOINT/safet/obj-64KiB-00000002" >/dev/null
assert_exit 2 "ti2: load tiers over a user's key" "$RB" load tiers --backend s3://safet --backend-endpoint "$RGW_ENDPOINT" \
    --tier "$URL/tier" --sizes 64KiB --objects 4 --quiet
assert_stderr_line '^railbench: error: load tiers \(default names\): s3://safet holds "obj-64KiB-00000002" already \(1 of the 4 names'
cmp -s "$T/s3user-t" <(s3 "$RGW_ENDPOINT/safet/obj-64KiB-00000002") || fail "ti2: s3://safet/obj-64KiB-00000002 changed"
assert_eq "ti2: keys in the bucket" 1 "$(rgw_keys safet '')"
assert_eq "RGW: PUTs under safet/ (only the test's own)" 1 "$(rgw_seen 'PUT /safet/obj-[^ ]+' 200)"
