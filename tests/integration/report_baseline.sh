#!/usr/bin/env bash
# needs: -
# railbench report --baseline DIR: runs held against a saved run of their command per size, phase and link; regressions named
# by the rule (below --baseline-ratio of the baseline), exit 1; none when a run equals its baseline; usage errors exit 2.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
F=tests/fixtures/report

# 1. A run against itself: no regression, exit 0.
assert_exit 0 "coll against itself" "$RB" report --baseline "$F/coll" "$F/coll"
grep -q "none: every figure of every run within 0.90× of its baseline" "$T/stdout" || { cat "$T/stdout"; fail "no 'none' line"; }

# 2. coll with the 1 KiB rows' out-of-place busbw halved (ring and hier): that size named twice, ratio 0.5, exit 1.
mkdir -p "$T/coll-slow"
jq '(.summary.collective_rows[] | select(.size_bytes == 1024) | .oop.busbw_gbps) |= . / 2' "$F/coll/result.json" >"$T/coll-slow/result.json"
assert_exit 1 "coll with one size at half the busbw" "$RB" report --baseline "$F/coll" "$T/coll-slow" --format json
J=$T/stdout
assert_jq "$J" '[.tables[] | select(.id == "baseline-regressions") | .rows[] | [.run, .row, .figure]] == [["coll-slow", "allreduce · ring · 1024 · 256 · float · sum · -1", "oop busbw (GB/s)"], ["coll-slow", "allreduce · hier · 1024 · 256 · float · sum · -1", "oop busbw (GB/s)"]]' \
    "two regressions named: allreduce ring and hier at 1024 B, out-of-place busbw"
assert_jq "$J" '[.tables[] | select(.id == "baseline-regressions") | .rows[] | .ratio] == [0.5, 0.5]' "both at 0.5x"
ok "$(jq -c '.tables[] | select(.id == "baseline-regressions") | .rows[0] | [.row, .figure, .ratio]' "$J")"

# 3. A directory of saved runs: each run is held against the one of its command. A GET run at 0.85x throughput:
#    a regression at the default 0.9, none at 0.8.
mkdir -p "$T/base" "$T/get-slow"
cp -r "$F/coll" "$F/get-a" "$T/base/"
jq '.summary.ops[] |= (.throughput_bytes_per_s *= 0.85 | .ops_per_s *= 0.85)' "$F/get-a/result.json" >"$T/get-slow/result.json"
assert_exit 1 "load get at 0.85x against a directory of baselines" "$RB" report --baseline "$T/base" "$T/get-slow" "$F/coll" --format json
assert_jq "$T/stdout" '[.tables[] | select(.id == "baseline-regressions") | .rows[] | .run] | unique == ["get-slow"]' "only get-slow regressed"
assert_jq "$T/stdout" '[.tables[] | select(.id == "baseline-regressions") | .rows[] | select(.figure | test("throughput|GiB/s|MiB/s")) | .ratio] | length >= 1 and all(. > 0.84 and . < 0.86)' \
    "its throughput named at 0.85x"
assert_exit 0 "the same at --baseline-ratio 0.8" "$RB" report --baseline "$T/base" "$T/get-slow" --baseline-ratio 0.8

# 4. Usage: no saved run of the command, nothing in DIR, --compare with --baseline, a ratio out of range.
assert_exit 2 "no saved run of the command" "$RB" report --baseline "$F/coll" "$F/get-a"
assert_stderr_line 'no saved run of "load get" there'
mkdir -p "$T/empty"
assert_exit 2 "an empty baseline directory" "$RB" report --baseline "$T/empty" "$F/coll"
assert_stderr_line "no result directory there"
assert_exit 2 "--baseline with --compare" "$RB" report --baseline "$F/coll" --compare "$F/coll" "$F/coll"
assert_exit 2 "--baseline-ratio 1.5" "$RB" report --baseline "$F/coll" --baseline-ratio 1.5 "$F/coll"
assert_stderr_line "baseline-ratio: expected a number in \\(0, 1\\)"
