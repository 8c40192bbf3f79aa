#!/usr/bin/env bash
# needs: root
# railbench block with real fio on files under the test directory (ext4, O_DIRECT): parsed figures equal fio's own JSON.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

# fio's JSON for one point, without the notes fio may write ahead of it.
fio_json() { sed -n '/^{/,$p' "$1"; }

# 1. A small sweep: 2 block sizes x 2 queue depths, 1 s per point, on a file railbench creates in $T/data.
mkdir -p "$T/data"
assert_exit 0 "sweep" "$RB" block --allow-root-fs --target "$T/data" --size 32M --bs 4k,8k --iodepth 1,4 --runtime 1s \
    --slo 'p99<=1h' --out "$T/r1" --quiet
R=$T/r1/result.json
assert_jq "$R" '.summary.block_points | length == 4' "four points"
assert_jq "$R" '[.summary.block_points[] | [.bs, .iodepth, .numjobs, .outstanding]] == [[4096,1,1,1],[4096,4,1,4],[8192,1,1,1],[8192,4,1,4]]' \
    "points in sweep order, outstanding = iodepth x numjobs"
[ -z "$(ls "$T/data")" ] || fail "target file not removed: $(ls "$T/data")"
ok "target file removed after the run"

for k in 0 1 2 3; do
    name=$(jqr "$R" ".summary.block_points[$k].name")
    F=$T/r1/points/0/$name.json
    [ -s "$F" ] || fail "raw fio JSON of $name not kept"
    fio_json "$F" >"$T/fio.json"
    jq -e '.jobs | length == 1' "$T/fio.json" >/dev/null || fail "$name: expected one job (group_reporting)"
    grep -qx 'direct=1' "$T/r1/points/0/$name.fio" && grep -qx 'ioengine=libaio' "$T/r1/points/0/$name.fio" ||
        fail "$name: job file lacks direct=1 / ioengine=libaio"
    # Every figure railbench parsed for this rank equals the one in fio's own JSON for the same point.
    jq -en --slurpfile f "$T/fio.json" --slurpfile r "$R" --argjson k "$k" '
        ($f[0].jobs[0].read) as $fr | ($r[0].summary.block_points[$k]) as $p | ($p.per_rank[0].fio.read) as $rr |
        def pct($o): {p50: $o.percentile["50.000000"], p90: $o.percentile["90.000000"], p99: $o.percentile["99.000000"],
                      p999: $o.percentile["99.900000"], p9999: $o.percentile["99.990000"]};
        ($rr.iops == $fr.iops) and ($rr.bw_bytes_per_s == $fr.bw_bytes) and ($rr.io_bytes == $fr.io_bytes)
        and ($rr.total_ios == $fr.total_ios) and ($rr.runtime_ms == $fr.runtime)
        and ($rr.clat_ns | {p50, p90, p99, p999, p9999}) == pct($fr.clat_ns)
        and ($rr.lat_ns | {p50, p90, p99, p999, p9999}) == pct($fr.lat_ns)
        and ($rr.clat_ns.min == $fr.clat_ns.min) and ($rr.clat_ns.max == $fr.clat_ns.max)
        and ($p.iops == $fr.iops) and ($p.bw_bytes_per_s == $fr.bw_bytes) and ($p.total_ios == $fr.total_ios)
        and ($p.disk_util_pct == ([$f[0].disk_util[]?.util] | max))
        and ($r[0].phases[$k].name == $p.name) and ($r[0].phases[$k].count == $fr.total_ios)
        and ($r[0].phases[$k].latency_hist.count == $fr.clat_ns.N)' >/dev/null ||
        fail "$name: parsed figures differ from fio's JSON"
    ok "$name: iops, bw, bytes, I/Os, runtime, clat/lat p50..p99.99, min, max, disk_util equal fio's JSON"
    # The aggregate's percentiles come from fio's json+ bins in our histogram: within one bucket (< 1 %) of fio's.
    jq -en --slurpfile f "$T/fio.json" --slurpfile r "$R" --argjson k "$k" '
        ($f[0].jobs[0].read.clat_ns.percentile) as $q | ($r[0].summary.block_points[$k].clat_ns) as $c |
        [["p50","50.000000"],["p99","99.000000"],["p999","99.900000"]] |
        all(. as [$a, $b] | (($c[$a] - $q[$b]) | fabs) <= 0.01 * $q[$b])' >/dev/null ||
        fail "$name: histogram percentiles more than 1 % from fio's"
    ok "$name: clat p50/p99/p99.9 from the bins within 1 % of fio's"
    # The table row shows the same IOPS.
    iops=$(jq -r --argjson k "$k" '.summary.block_points[$k].iops | round' "$R")
    out=$(jq -r --argjson k "$k" '.summary.block_points[$k].outstanding' "$R")
    grep -Eq "^\| +$out \| .*\| +$iops \|" "$T/r1/table.md" || fail "$name: table.md lacks a row with $iops IOPS"
done
assert_jq "$R" '.summary.slo.expr == "clat p99<=1h" and .summary.slo.best.iops == ([.summary.block_points[].iops] | max)' \
    "SLO met everywhere: best is the highest IOPS"
assert_jq "$R" '.checks[] | select(.name == "slo") | .passed' "slo check passed"
assert_jq "$R" '.summary.knee.per_bs | length == 2' "one knee entry per block size"
grep -q '^## bs 8 KiB' "$T/r1/table.md" || fail "no table for 8 KiB"

# 1b. --rw randrw: reads and writes apart (IOPS that add up to the mixed figure, fio's own p99 per direction),
#     the target named with the mount it lands on.
assert_exit 0 "randrw" "$RB" block --allow-root-fs --target "$T/mixed" --size 16M --rw randrw --iodepth 2 --runtime 1s \
    --direct 0 --out "$T/rrw" --quiet
assert_jq "$T/rrw/result.json" '.summary.block_points[0] as $p | ($p.read.iops > 0) and ($p.write.iops > 0)
    and (($p.read.iops + $p.write.iops - $p.iops) | fabs < 1) and ($p.read.clat_ns.p99 > 0) and ($p.write.clat_ns.p99 > 0)
    and ($p.read.total_ios + $p.write.total_ios == $p.total_ios)' "randrw: read and write apart, adding up"
grep -q 'read IOPS | read clat p99 | write IOPS | write clat p99' "$T/rrw/table.md" || fail "no read/write table"
ok "table.md splits reads and writes"
assert_jq "$T/rrw/result.json" '.summary.target_mount.mount_point == "'"$(stat -c %m "$T")"'"' "target's mount named"
grep -q "target (rank 0): .* on .* mounted at $(stat -c %m "$T")" "$T/rrw/table.md" || fail "table.md lacks the mount"
ok "table.md names the mount"

# 2. --keep leaves the file (written to its full size); an SLO nothing meets exits 1 with the check failed.
assert_exit 1 "SLO missed" "$RB" block --allow-root-fs --target "$T/data" --size 16M --iodepth 2 --runtime 1s --slo 'p99.9<1ns' \
    --keep --out "$T/r2" --quiet
assert_jq "$T/r2/result.json" '.summary.slo.best == null and (.checks[] | select(.name == "slo") | .passed == false)' \
    "no point meets p99.9<1ns"
assert_eq "kept file size" 16777216 "$(stat -c %s "$T/data/railbench-block.0.data")"
# Fully written, not sparse: at least its size allocated (a file system may add an extent block).
alloc=$(( $(stat -c %b "$T/data/railbench-block.0.data") * 512 ))
[ "$alloc" -ge 16777216 ] || fail "kept file is sparse: $alloc bytes allocated for 16777216"
ok "kept file fully written: $alloc bytes allocated"
rm -f "$T/data/railbench-block.0.data"

# 3. SIGINT during the second point: the first is kept, the second is cut short, result.json is still written.
bg "$RB" block --allow-root-fs --target "$T/data" --size 16M --iodepth 1,2 --runtime 4s --out "$T/r3" --quiet
pid=$LAST_PID
for _ in $(seq 150); do [ -e "$T/r3/points/0/4k-randread-qd2-j1.log" ] && break; sleep 0.1; done
[ -e "$T/r3/points/0/4k-randread-qd2-j1.log" ] || fail "second point never started"
sleep 1
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
assert_eq "exit status after SIGINT" 1 "$rc"
R3=$T/r3/result.json
assert_jq "$R3" '.checks[] | select(.name == "completed") | .passed == false' "interrupted run recorded"
assert_jq "$R3" '.summary.block_points[0].name == "4k-randread-qd1-j1" and (.summary.block_points[0].interrupted | not) and .summary.block_points[0].iops > 0' \
    "first point complete"
assert_jq "$R3" '.summary.block_points | length == 1 or (.[1].interrupted and .[1].per_rank[0].fio.read.runtime_ms < 4000)' \
    "second point absent or marked interrupted"
[ -z "$(ls "$T/data")" ] || fail "target file not removed after SIGINT"
ok "target removed after SIGINT"

# 4. An existing file: read as it is and never removed; writing to it needs --allow-destructive.
head -c 8388608 /dev/urandom >"$T/existing.dat"
sum=$(md5sum <"$T/existing.dat")
assert_exit 0 "read an existing file" "$RB" block --allow-root-fs --target "$T/existing.dat" --iodepth 2 --runtime 1s --out "$T/r4" --quiet
assert_jq "$T/r4/result.json" '.summary.block_points[0].per_rank[0].target_kind == "existing file" and .summary.block_points[0].iops > 0' \
    "existing file read"
# --force over a block result: its points/<rank>/ files are railbench's, so they go and this run's take their place.
ls "$T/r4/points/0" >"$T/r4.points"
touch -d '2001-01-01' "$T/r4/points/0"/*
assert_exit 0 "--force over a block result" "$RB" block --allow-root-fs --target "$T/existing.dat" --iodepth 2 \
    --runtime 1s --out "$T/r4" --force --quiet
assert_eq "the same point files, written again" "$(cat "$T/r4.points")" "$(ls "$T/r4/points/0")"
assert_eq "point files older than this run" 0 "$(find "$T/r4/points" -type f ! -newer "$T/r4.points" | wc -l)"
assert_exit 2 "write to an existing file refused" "$RB" block --allow-root-fs --target "$T/existing.dat" --rw randwrite --iodepth 2 --runtime 1s --out "$T/r5" --quiet
assert_stderr_line 'existing.dat: is an existing file and --rw randwrite overwrites it; add --allow-destructive'
assert_eq "existing file untouched" "$sum" "$(md5sum <"$T/existing.dat")"

# 5. A block device: refused for writes without --allow-destructive (its content unchanged); written with it.
LOOP=
if command -v losetup >/dev/null && truncate -s 32M "$T/loop.img" && LOOP=$(losetup -f --show "$T/loop.img" 2>/dev/null); then
    trap 'losetup -d "$LOOP" 2>/dev/null || true; cleanup' EXIT
    sum=$(md5sum <"$T/loop.img")
    assert_exit 2 "write to a block device refused" "$RB" block --target "$LOOP" --rw randwrite --iodepth 1 --runtime 1s --out "$T/r6" --quiet
    assert_stderr_line "$LOOP: is a block device and --rw randwrite writes to it, destroying its data; add --allow-destructive"
    assert_eq "device content unchanged" "$sum" "$(md5sum <"$T/loop.img")"
    assert_exit 0 "write to a block device allowed" "$RB" block --target "$LOOP" --rw randwrite --iodepth 4 --runtime 1s \
        --allow-destructive --out "$T/r7" --quiet
    fio_json "$T/r7/points/0/4k-randwrite-qd4-j1.json" >"$T/fio.json"
    jq -en --slurpfile f "$T/fio.json" --slurpfile r "$T/r7/result.json" '
        $r[0].summary.block_points[0] as $p | ($p.iops == $f[0].jobs[0].write.iops) and ($p.iops > 0)
        and ($p.per_rank[0].target_kind == "block device") and ($p.per_rank[0].fio.write.total_ios == $f[0].jobs[0].write.total_ios)' \
        >/dev/null || fail "device write figures differ from fio's"
    ok "block device written: IOPS equal fio's write iops"
    [ "$(md5sum <"$T/loop.img")" != "$sum" ] || fail "device content did not change"
    losetup -d "$LOOP"
else
    # No loop devices here: a device node for an absent device still is a block device to stat(2).
    mknod "$T/fakeblk" b 7 250
    assert_exit 2 "write to a block device refused" "$RB" block --allow-root-fs --target "$T/fakeblk" --rw write --iodepth 1 --runtime 1s --out "$T/r6" --quiet
    assert_stderr_line 'fakeblk: is a block device and --rw write writes to it, destroying its data; add --allow-destructive'
fi

# 6. fio missing: PATH holds everything from the usual directories but fio.
mkdir -p "$T/bin"
# find, not a glob: an empty or absent directory yields nothing (a glob would yield itself).
while IFS= read -r f; do
    b=${f##*/}
    [ "$b" = fio ] || [ -e "$T/bin/$b" ] || [ -L "$T/bin/$b" ] || ln -s "$f" "$T/bin/$b"
done < <(find -H /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin -mindepth 1 -maxdepth 1 2>/dev/null)
assert_exit 3 "fio missing" env PATH="$T/bin" "$RB" block --allow-root-fs --target "$T/data" --size 8M --iodepth 1 --runtime 1s --out "$T/r8" --quiet
assert_stderr_line '^railbench: error: fio not found in PATH; install it with: apt-get install fio$'

# 7. fio failing: its own last lines are shown, exit 3, result.json says why, the target is still removed.
assert_exit 3 "fio failing" "$RB" block --allow-root-fs --target "$T/data" --size 8M --iodepth 1 --runtime 1s --engine nosuchengine --out "$T/r9" --quiet
grep -q 'point 4k-randread-qd1-j1: fio exited with status 1' "$T/stderr" || { cat "$T/stderr"; fail "no point/status line"; }
grep -q 'fio: engine nosuchengine not loadable' "$T/stderr" || { cat "$T/stderr"; fail "fio's own error line not shown"; }
ok "fio's last stderr lines shown"
assert_jq "$T/r9/result.json" '.checks[] | select(.name == "sweep") | (.passed == false) and (.detail | test("nosuchengine not loadable"))' \
    "result.json records the failure"
[ -z "$(ls "$T/data")" ] || fail "target file not removed after fio failed"

# 7b. Truncated fio JSON: real fio runs, then its output is cut in half (what a full disk or a killed writer leaves).
cat >"$T/fio-truncating" <<'EOF'
#!/bin/sh
fio "$@" || exit
for a in "$@"; do
    case $a in --output=*) f=${a#--output=}; truncate -s $(( $(stat -c %s "$f") / 2 )) "$f" ;; esac
done
EOF
chmod +x "$T/fio-truncating"
assert_exit 3 "truncated fio JSON" "$RB" block --allow-root-fs --target "$T/data" --size 8M --iodepth 1,2 --runtime 1s --fio "$T/fio-truncating" \
    --out "$T/r12" --quiet
assert_stderr_line '^railbench: error: point 4k-randread-qd1-j1: .*/points/0/4k-randread-qd1-j1.json: malformed or truncated fio JSON \(parse error at byte [0-9]+ of [0-9]+\)$'
[ ! -e "$T/r12/points/0/4k-randread-qd2-j1.fio" ] || fail "the sweep went on after a bad point"
assert_jq "$T/r12/result.json" '.summary.block_points == [] and (.checks[] | select(.name == "sweep") | .detail | test("truncated"))' \
    "result.json records the bad point"

# 8. Bad usage: one line naming the option, exit 2, nothing run.
assert_exit 2 "no target" "$RB" block --runtime 1s --out "$T/r10"
assert_stderr_line '^railbench: error: --target: required'
assert_exit 2 "bad SLO" "$RB" block --allow-root-fs --target "$T/data" --slo 'p42<=1ms'
assert_stderr_line "^railbench: error: --slo: 'p42<=1ms' is not an SLO; expected"
assert_exit 2 "SLO without a unit" "$RB" block --allow-root-fs --target "$T/data" --slo 'p99<=500'
assert_stderr_line "^railbench: error: --slo: 'p99<=500': the bound 500 needs a unit \(ns, us, ms or s\), e.g. p99<=500us"
# A file railbench would create on the root file system (a /mnt/nvme with nothing mounted there) is refused,
# naming the device it would land on; --allow-root-fs (used above) lets it through.
if [ "$(stat -c %m "$T")" = / ]; then
    assert_exit 2 "target on the root file system" "$RB" block --target "$T/rootfs.dat" --runtime 1s --out "$T/r13" --quiet
    assert_stderr_line "--target $T/rootfs.dat: lands on the root file system \(.*, mounted at /\), not on a mount of its own.*--allow-root-fs"
    [ ! -e "$T/rootfs.dat" ] || fail "the refused target was created"
    # Refused at its usage check, nothing measured: the run leaves no directory behind (docs/safety.md).
    [ ! -e "$T/r13" ] || fail "the refused run left $T/r13: $(ls "$T/r13")"
    ok "the refused run left no result directory"
else
    echo "skip: $T is not on the root file system"
fi
assert_exit 2 "bad bs" "$RB" block --allow-root-fs --target "$T/data" --bs 4k,huge
assert_stderr_line '^railbench: error: --bs:'
assert_exit 2 "unaligned bs for O_DIRECT" "$RB" block --allow-root-fs --target "$T/data" --bs 1000
assert_stderr_line '^railbench: error: --bs: 1000 is not a block size for direct I/O'
assert_exit 2 "comment char in target" "$RB" block --allow-root-fs --target "$T/a;b"
assert_stderr_line "^railbench: error: --target: .*contains ';' or '#'"
assert_exit 2 "bad rw" "$RB" block --allow-root-fs --target "$T/data" --rw sideways
assert_stderr_line '^railbench: error: --rw:'
assert_exit 2 "missing directory" "$RB" block --allow-root-fs --target "$T/nope/file.dat" --runtime 1s --out "$T/r11" --quiet
assert_stderr_line 'no such file, and its directory .*/nope does not exist'
[ ! -e "$T/r10" ] && [ ! -e "$T/r11/points/0/4k-randread-qd1-j1.fio" ] || fail "a point ran despite bad usage"
ok "no point ran on bad usage"
