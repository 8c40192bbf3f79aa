#!/usr/bin/env bash
# needs: -
# railbench block --fio-opt KEY[=VALUE] with real fio: the option is in every job file and in fio's own JSON,
# rate_iops=200 gives ~200 IOPS in fio's JSON and in railbench's table, --config RUN repeats the options,
# keys railbench sets and malformed items exit 2 with one line, a key fio rejects exits 3 with fio's words.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

fio_json() { sed -n '/^{/,$p' "$1"; }
BLK=(block --allow-root-fs --target "$T/blk" --size 4M --bs 4k --runtime 2s --quiet)

# 1. Two points, three options: each job file carries them after railbench's own keys.
assert_exit 0 "rate_iops=200 with cpus_allowed" "$RB" "${BLK[@]}" --iodepth 1,2 --out "$T/r" \
    --fio-opt rate_iops=200 --fio-opt cpus_allowed=0 --fio-opt cpus_allowed_policy=shared
R=$T/r/result.json
for name in $(jq -r '.summary.block_points[].name' "$R"); do
    F=$T/r/points/0/$name
    for line in rate_iops=200 cpus_allowed=0 cpus_allowed_policy=shared; do
        grep -qx "$line" "$F.fio" || fail "$name.fio lacks $line"
    done
    # fio's own record of what it ran: its "global options" hold the three, with railbench's bs beside them.
    fio_json "$F.json" | jq -e '."global options" | .rate_iops == "200" and .cpus_allowed == "0"
        and .cpus_allowed_policy == "shared" and .bs == "4096"' >/dev/null || fail "$name: fio's JSON lacks the options"
    # rate_iops caps fio at 200 I/Os per second: fio never goes above it (measured 200.4 on 2 s), and on a loaded
    # 2-core box it may fall behind, never by 40 % on a 4 KiB read that takes ~100 us.
    iops=$(fio_json "$F.json" | jq '.jobs[0].read.iops')
    jq -en --argjson i "$iops" '$i >= 120 and $i <= 210' >/dev/null || fail "$name: fio measured $iops IOPS, not ~200"
    assert_jq "$R" "[.summary.block_points[] | select(.name == \"$name\") | .iops] == [$iops]" \
        "$name: railbench's IOPS is fio's ($iops, rate_iops=200)"
done
grep -Eq '^\| +1 \| +1 \| +1 \| +(1[2-9][0-9]|20[0-9]|210) \|' "$T/r/table.md" ||
    { cat "$T/r/table.md" >&2; fail "table.md: the qd1 row does not show ~200 IOPS"; }
ok "table.md: ~200 IOPS at outstanding 1"
assert_jq "$R" '.config["fio-opt"] == ["rate_iops=200", "cpus_allowed=0", "cpus_allowed_policy=shared"]
    and .summary.fio_opts == .config["fio-opt"]' "the options in the resolved config and the summary"

# 2. --config RUN repeats them.
assert_exit 0 "rerun from the result" "$RB" block --config "$T/r" --iodepth 1 --out "$T/r2" --quiet
assert_jq "$T/r2/result.json" '.config["fio-opt"] == ["rate_iops=200", "cpus_allowed=0", "cpus_allowed_policy=shared"]' \
    "the rerun's config has the same --fio-opt items"
grep -qx rate_iops=200 "$T/r2/points/0/4k-randread-qd1-j1.fio" || fail "the rerun's job file lacks rate_iops=200"
ok "the rerun's job file has rate_iops=200"

# 3. A flag without a value, and an io_uring engine option fio accepts for that engine only.
if fio --name=probe --ioengine=io_uring --filename="$T/probe" --size=64k --rw=read --output=/dev/null 2>/dev/null; then
    assert_exit 0 "io_uring with fixedbufs, registerfiles" "$RB" "${BLK[@]}" --iodepth 1 --runtime 1s \
        --engine io_uring --fio-opt fixedbufs --fio-opt registerfiles --out "$T/u"
    for line in ioengine=io_uring fixedbufs registerfiles; do
        grep -qx "$line" "$T/u/points/0/4k-randread-qd1-j1.fio" || fail "io_uring job file lacks $line"
    done
    ok "io_uring job file has fixedbufs and registerfiles"
else
    ok "io_uring not usable here (fio's probe failed): its run is left out"
fi
assert_exit 3 "fixedbufs with libaio" "$RB" "${BLK[@]}" --iodepth 1 --fio-opt fixedbufs --out "$T/e1"
assert_stderr_line '^railbench: error: --fio-opt fixedbufs: fio rejects the job file .*: Bad option <fixedbufs>'

# 4. What fio itself rejects: its own complaint, one line, exit 3; nothing ran.
assert_exit 3 "an unknown key" "$RB" "${BLK[@]}" --iodepth 1 --fio-opt no_such_key=1 --out "$T/e2"
assert_stderr_line '--fio-opt no_such_key=1: fio rejects the job file .*Bad option <no_such_key=1>'
assert_exit 3 "a value fio cannot parse" "$RB" "${BLK[@]}" --iodepth 1 --fio-opt rate_iops=lots --out "$T/e3"
assert_stderr_line 'fio: failed parsing rate_iops=lots'
[ ! -e "$T/blk" ] || fail "a rejected run wrote its target"
ok "no target written by the rejected runs"

# 5. Keys railbench sets, also under fio's other names for them: exit 2 naming the railbench option.
n=0
conflict() {
    n=$((n + 1))
    assert_exit 2 "--fio-opt $1" "$RB" "${BLK[@]}" --fio-opt "$1" --out "$T/c$n"
    assert_stderr_line "$2"
    [ -z "$(ls "$T/c$n/points/0" 2>/dev/null)" ] || fail "--fio-opt $1: refused, yet a job file was written"
}
conflict bs=8k "^railbench: error: --fio-opt 'bs=8k': railbench sets bs from --bs; use that option$"
conflict iodepth=4 "railbench sets iodepth from --iodepth"
conflict ioengine=psync "railbench sets ioengine from --engine"
conflict filename=/tmp/x "railbench sets filename from --target"
conflict runtime=10s "railbench sets runtime from --runtime"
conflict group_reporting=0 "group_reporting is set by railbench itself"
conflict output-format=normal "output-format is set by railbench itself"
conflict blocksize=8k "blocksize is fio's other name for bs, which --bs sets"
conflict timeout=5 "timeout is fio's other name for runtime, which --runtime sets"

# 6. Malformed items: exit 2, one line, before anything runs.
conflict =1 "'=1' has no key"
conflict 'a[b]=1' "contains '\\[' or '\\]'"
conflict "$(printf 'rate_iops=1\nexec_prerun=x')" "contains a control character"
conflict rate_iops= "has an empty value"
conflict 'cpus_allowed=0;1' "contains ';' or '#'"
conflict Rate_iops=1 "not a fio option name"
