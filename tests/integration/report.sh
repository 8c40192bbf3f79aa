#!/usr/bin/env bash
# needs: -
# railbench report: tables of every kind against expected text, --compare numbers and marks, partial and malformed input, the HTML in headless Chromium.
# RB_UPDATE_EXPECTED=1 rewrites tests/fixtures/report/expected/ from the current output (review the diff before committing).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
F=tests/fixtures/report
E=$F/expected
# The fixtures keep the result contract (schemas/), all but other/ (a command no kind tables, shown as phases).
check_results "$F"/[!o]*/ || fail "a fixture does not keep the result contract"
ok "fixtures keep the result contract: $(tail -n 1 "$T/.schema-check.out")"
# Below, broken results are planted in $T on purpose: the check at exit would refuse them.
SCHEMA_SKIP=1

# golden NAME ARGS...: stdout of `railbench report ARGS` must equal $E/NAME.
golden() {
    local name=$1 rc=0; shift
    "$RB" report "$@" >"$T/$name" 2>"$T/$name.err" || rc=$?
    [ "$rc" -le 1 ] || { cat "$T/$name.err" >&2; fail "$name: exit $rc"; }
    if [ -n "${RB_UPDATE_EXPECTED:-}" ]; then
        mkdir -p "$E"
        cp "$T/$name" "$E/$name"
    fi
    diff -u "$E/$name" "$T/$name" >&2 || fail "$name: output differs from $E/$name"
    ok "$name matches the expected text"
}

# 1. The table each kind calls for, from fixtures, against expected text.
for k in get-a put get-open tiers sweep train coll sim sim-cal block counters other; do
    golden "$k.md" "$F/$k"
done
golden multi.md "$F/get-a" "$F/get-b" "$F/get-open"
golden group.md --group-by conc "$F/get-a" "$F/get-b" "$F/get-open" "$F/put"
# A label no run has: one warning naming the labels they do have, and a heading that says what is missing.
"$RB" report --group-by size "$F/get-a" "$F/get-b" >"$T/nolabel.md" 2>"$T/nolabel.err"
grep -q '^railbench: warning: --group-by size: none of the 2 run(s) has the label size (labels they have: .*conc' \
    "$T/nolabel.err" || fail "no warning for a missing --group-by label: $(cat "$T/nolabel.err")"
grep -q '^# size not set (2 run(s) without --label size=VALUE)$' "$T/nolabel.md" || fail "no 'not set' heading"
ok "--group-by a label no run has: warned, heading says so"
golden tiers.csv --format csv "$F/tiers"
golden coll.csv --format csv "$F/coll"

# Table headings users know, and the figures in them, read from the fixtures with jq.
grep -q '^| GET from/how      | object size | objects | throughput (GiB/s) |' "$T/tiers.md" || fail "tiers header"
grep -q '^| collective | algo | size (B) | count (elements) | type  | redop | root |' "$T/coll.md" || fail "nccl-tests columns"
"$RB" report --format json "$F/get-a" "$F/tiers" "$F/coll" "$F/block" "$F/sweep" "$F/train" >"$T/all.json"
assert_jq "$T/all.json" '.schema == "railbench.report/v1" and ([.tables[].id] == ["runs","tiers","tiers-speedup","sweep","train","train-summary","load","collectives","block"])' \
    "one table per kind, in a fixed order"
jq -e --slurpfile r "$F/get-a/result.json" '(.tables[] | select(.id == "load") | .rows[0]) as $row | $r[0].summary.ops[0] as $o |
    $row.throughput_bytes_per_s == $o.throughput_bytes_per_s and $row.latency_p99_ns == $o.latency_ns.p99 and
    $row.ttfb_p50_ns == $o.ttfb_ns.p50 and $row.requests == $o.requests and $row.segment_slowest_bytes_per_s == $o.segments.slowest_bytes_per_s' \
    "$T/all.json" >/dev/null || fail "load row differs from summary.ops[0]"
ok "load row = summary.ops[0] (throughput, p99, TTFB p50, requests, slowest segment)"
jq -e --slurpfile r "$F/tiers/result.json" '[.tables[] | select(.id == "tiers") | .rows[] | [.label, .size_bytes, .throughput_bytes_per_s, .latency_p99_ns, .cache_miss]] ==
    [$r[0].summary.tiers_rows[] | [.label, .size_bytes, .throughput_bytes_per_s, .latency_p99_ns, .cache_miss]]' "$T/all.json" >/dev/null ||
    fail "tiers rows differ from tiers_rows"
ok "tiers rows = tiers_rows (label, size, throughput, p99, misses)"
grep -q "^| WARM through tier |       1 MiB |    1000 |              2.729 |" "$T/tiers.md" || fail "warm 1 MiB at 2.729 GiB/s"
avg=$(jq -r '.summary.avg_busbw_gbps' "$F/coll/result.json")
grep -q "^- Avg bus bandwidth: $(printf '%g' "$avg") GB/s$" "$T/coll.md" || fail "closing line of nccl-tests"
ok "nccl-tests closing line: Avg bus bandwidth $avg"
knee=$(jq -r '.summary.knee.per_bs[1].point.index' "$F/block/result.json")
assert_jq "$T/all.json" "[.tables[] | select(.id == \"block\") | .rows[$knee].note] == [\"knee\"]" "block: the knee row is marked"
assert_jq "$T/all.json" '[.tables[] | select(.id == "sweep") | .rows[] | select(.knee == "knee") | .inflight] == [16]' "sweep: the knee at 16 in flight"
assert_jq "$T/all.json" '[.tables[] | select(.id == "train-summary") | .rows[0] | .au_mean_pct, .passed] == [93.3, "PASS"]' "train: AU mean and PASS"

# A directory of result directories stands for all of them (sorted), each kind once.
assert_exit 0 "a directory of runs" "$RB" report "$F"
[ "$(grep -c '^## ' "$T/stdout")" -ge 13 ] || fail "expected every kind's tables"
grep -q '^## Warnings' "$T/stdout" || fail "the killed run's warnings are in the report"
ok "every fixture through one command"

# 2. --compare: absolute and % differences, regressions by the figure's direction, exit 1 on any.
golden compare.md --compare "$F/get-a" "$F/get-b"
"$RB" report --compare --format json "$F/get-a" "$F/get-b" >"$T/cmp.json" || true
jq -e --slurpfile a "$F/get-a/result.json" --slurpfile b "$F/get-b/result.json" '
    ($a[0].summary.ops[0]) as $A | ($b[0].summary.ops[0]) as $B |
    [.tables[] | select(.id == "load") | .rows[]] as $rows |
    def row($k): $rows[] | select(.figure_key == $k);
    (row("throughput_bytes_per_s") | .a == $A.throughput_bytes_per_s and .b == $B.throughput_bytes_per_s
        and .delta == ($B.throughput_bytes_per_s - $A.throughput_bytes_per_s)
        and ((.delta_pct - 100 * .delta / $A.throughput_bytes_per_s) | fabs) < 1e-9)
    and (row("latency_p99_ns") | .delta == ($B.latency_ns.p99 - $A.latency_ns.p99))' "$T/cmp.json" >/dev/null ||
    fail "compare: A, B, B - A or % differ from the fixtures"
ok "compare: A, B, B - A and % from the two results"
marks() { jq -r '[.tables[] | select(.id == "load") | .rows[] | "\(.figure_key)=\(.mark // "")"] | join(" ")' "$1"; }
m=$(marks "$T/cmp.json")
for want in throughput_bytes_per_s=improved latency_p99_ns=REGRESSION latency_mean_ns=REGRESSION ttfb_p99_ns=REGRESSION \
    requests= errors= segment_fastest_bytes_per_s=improved; do
    [[ " $m " == *" $want "* ]] || fail "compare mark: expected $want in: $m"
done
assert_jq "$T/cmp.json" '.compare.regressions == 9 and .compare.threshold_pct == 5' "9 regressions beyond 5 %"
ok "marks: throughput up = improved, latency up = REGRESSION, counts unmarked"
assert_exit 1 "compare with regressions" "$RB" report --compare "$F/get-a" "$F/get-b"
# At 10 %: +5.5 % and +9.8 % are no longer marked, +11.0 % still is.
"$RB" report --compare --threshold 10 --format json "$F/get-a" "$F/get-b" >"$T/cmp10.json" || true
m=$(marks "$T/cmp10.json")
for want in segment_fastest_bytes_per_s= segment_median_bytes_per_s= segment_slowest_bytes_per_s=improved \
    throughput_bytes_per_s= latency_p99_ns=REGRESSION; do
    [[ " $m " == *" $want "* ]] || fail "threshold 10: expected $want in: $m"
done
ok "--threshold 10 moves the marks"
# Swapped, lower throughput is the regression and lower latency the improvement.
"$RB" report --compare --format json "$F/get-b" "$F/get-a" >"$T/cmp-rev.json" || true
m=$(marks "$T/cmp-rev.json")
for want in throughput_bytes_per_s=REGRESSION latency_p99_ns=improved; do
    [[ " $m " == *" $want "* ]] || fail "swapped: expected $want in: $m"
done
ok "swapped: throughput down = REGRESSION"
assert_exit 0 "a run against itself" "$RB" report --compare "$F/coll" "$F/coll"
grep -q '^- 0 regressions beyond 5 %' "$T/stdout" || fail "no regressions against itself"
# Measured collectives against the model: both are nccl-tests tables, rows matched by size (none match here).
assert_exit 2 "different kinds" "$RB" report --compare "$F/get-a" "$F/block"
assert_stderr_line 'get-a is a "load get\|put" result and .*block a "block" one; they share no table'
assert_exit 2 "--compare with three" "$RB" report --compare "$F/get-a" "$F/get-b" "$F/put"
assert_stderr_line '^railbench: error: --compare: needs exactly two result directories'

# 3. Partial and malformed results: a warning naming the file, never a crash; exit 0 when anything is reported, else 2.
assert_exit 0 "killed run (no result.json, truncated last line)" "$RB" report "$F/partial"
grep -q 'partial/intervals.jsonl: the last line (4) is truncated (run killed?); skipped' "$T/stderr" || fail "truncated line warning"
grep -q 'partial: no result.json (run killed or still running?); 1 phase(s) rebuilt from 3 interval lines' "$T/stderr" || fail "rebuilt warning"
count=$(head -n 3 "$F/partial/intervals.jsonl" | jq -s 'map(.count) | add')
grep -Eq "^\| get +\| GET +\| +$count \|.*\| +n/a \| +n/a \|" "$T/stdout" || fail "rebuilt count $count with n/a percentiles"
ok "killed run: $count requests summed from the complete lines, percentiles n/a"
golden partial.md "$F/partial"

# A killed coll run: no result.json; each intervals.jsonl line is a finished row's out-of-place figures, and the
# report shows them per size (not 0), the run as "coll allreduce", rebuilt.
mkdir -p "$T/coll-killed"
jq -c '.summary.collective_rows[] | {phase: "\(.coll)/\(.algo)/\(.size_bytes)", op: .coll, t_s: 1, ts: "2026-11-22T03:43:50Z",
    time_us: .oop.time_us, algbw_gbps: .oop.algbw_gbps, busbw_gbps: .oop.busbw_gbps}' "$F/coll/result.json" >"$T/coll-killed/intervals.jsonl"
nrows=$(wc -l <"$T/coll-killed/intervals.jsonl")
[ "$nrows" -ge 2 ] || fail "the coll fixture has too few rows ($nrows)"
assert_exit 0 "killed coll run" "$RB" report --format json "$T/coll-killed" -o "$T/coll-killed.json"
assert_jq "$T/coll-killed.json" '[.tables[] | select(.id == "collectives") | .rows[]] | length' "a collectives table" 
want=$(jq -c '[.summary.collective_rows[] | [.size_bytes, .oop.busbw_gbps]]' "$F/coll/result.json")
got=$(jq -c '[.tables[] | select(.id == "collectives") | .rows[] | [.size_bytes, .oop_busbw_gbps]]' "$T/coll-killed.json")
assert_eq "killed coll run: busbw per size from intervals.jsonl" "$want" "$got"
assert_exit 0 "killed coll run (markdown)" "$RB" report "$T/coll-killed" -o "$T/coll-killed.md"
grep -q '| coll-killed | coll allreduce |.*| partial: rebuilt from intervals.jsonl |' "$T/coll-killed.md" ||
    { cat "$T/coll-killed.md" >&2; fail "the rebuilt run's command and record"; }
ok "killed coll run: reported as coll allreduce, rebuilt"

# The busbw note names every collective's factor as core/busbw.c computes it (gather, scatter, alltoallv (n-1)/n).
grep -q "alltoall, gather, scatter, alltoallv (n-1)/n; broadcast, reduce, sendrecv 1)" "$T/coll-killed.md" ||
    fail "busbw factors note"
ok "busbw factor note: gather, scatter, alltoallv (n-1)/n"

# coll moe: its own table from summary.moe, no "without summary." warning.
mkdir -p "$T/moe"
jq '.command = "coll moe" | .summary = {moe: {algo: "ring", ranks: 4, experts: 8, top_k: 2, tokens_per_rank: 256,
    hidden: 256, skew: 1.5, steps: 3, step_us: 72028.7, dispatch_us: 38603.5, combine_us: 39702.1, wait_us: 16171.9,
    balanced_step_us: 36396.6, lost_us: 35632.1, lost_pct: 49.47, imbalance: 2.5, wrong: 0}} | .phases = []' \
    "$F/coll/result.json" >"$T/moe/result.json"
assert_exit 0 "coll moe run" "$RB" report "$T/moe" -o "$T/moe.md"
! grep -q 'without summary\.' "$T/stderr" || fail "coll moe: warned about a missing summary"
grep -q '^## Mixture-of-experts dispatch and combine (coll moe)$' "$T/moe.md" || { cat "$T/moe.md" >&2; fail "no MoE table"; }
grep -Eq '^\| ring +\| +4 \| +8 \| +2 \| +256 \| +256 \| 1.50 \| +3 \| +72028.7 \| +38603.5 \| +39702.1 \| +16171.9 \| +36396.6 \| +35632.1 \| +49.5 \| +2.50 \| +0 \|$' "$T/moe.md" ||
    { cat "$T/moe.md" >&2; fail "MoE row"; }
ok "coll moe: its table, one row with summary.moe's figures"

mkdir -p "$T/bad/trunc" "$T/bad/garbage" "$T/bad/empty" "$T/bad/wrongtype" "$T/bad/noops" "$T/bad/nothing"
head -c 5000 "$F/get-a/result.json" >"$T/bad/trunc/result.json"
cp "$F/get-a/intervals.jsonl" "$T/bad/trunc/"
head -c 3000 "$ROOT/build/railbench" >"$T/bad/garbage/result.json"
: >"$T/bad/empty/result.json"
jq -c '.summary.ops = "nope" | .phases = 3' "$F/get-a/result.json" >"$T/bad/wrongtype/result.json"
assert_exit 0 "truncated result.json with intervals" "$RB" report "$T/bad/trunc"
grep -q 'trunc/result.json: it ends early at line 1 (truncated?)' "$T/stderr" || fail "truncated result.json warning"
grep -q 'rebuilt from 6 interval lines' "$T/stderr" || fail "fell back to intervals"
assert_exit 2 "garbage result.json alone" "$RB" report "$T/bad/garbage"
grep -q 'garbage/result.json: invalid JSON at line 1' "$T/stderr" || fail "garbage warning"
assert_exit 2 "empty result.json alone" "$RB" report "$T/bad/empty"
grep -q 'empty/result.json: empty file' "$T/stderr" || fail "empty warning"
assert_exit 0 "wrong types" "$RB" report "$T/bad/wrongtype"
grep -q 'wrongtype/result.json: "phases" is not an array; ignored' "$T/stderr" || fail "wrong type warning"
grep -q '^| GET ' "$T/stdout" && fail "wrong types: a row from summary.ops that is no array"
jq -c 'del(.summary.ops)' "$F/get-a/result.json" >"$T/bad/noops/result.json"
assert_exit 0 "no summary.ops" "$RB" report "$T/bad/noops"
grep -q 'noops/result.json: a "load get" result without summary.ops, which its schema requires' "$T/stderr" ||
    fail "no-summary warning"
grep -q '^## Object load: per operation' "$T/stdout" || fail "no summary.ops: not the load table (the command decides)"
assert_exit 2 "not a result directory" "$RB" report "$T/bad/nothing"
assert_stderr_line 'nothing: no result.json or intervals.jsonl; not a result directory'
assert_exit 0 "good and bad together" "$RB" report "$T/bad/garbage" "$F/get-a" /nonexistent/run
grep -q '^| GET | get   |     3397 |' "$T/stdout" || fail "the good run is reported"
[ "$(grep -c 'warning' "$T/stderr")" = 2 ] || fail "one warning per bad directory"
assert_exit 2 "missing directory" "$RB" report /nonexistent/run
assert_stderr_line '^railbench: error: report: /nonexistent/run: no such directory$'
assert_exit 2 "bad option" "$RB" report --format xml "$F/get-a"
assert_stderr_line '^railbench: error: --format: "xml" is not one of md, csv, json, html$'

# Fuzz-ish: prefixes and byte-flipped copies of every fixture, with and without intervals; no hang, no signal.
n=0
for k in tiers sweep train coll sim block counters get-open other; do
    src=$F/$k/result.json
    size=$(stat -c %s "$src")
    for cut in $(seq 1 $((size / 9)) "$size"); do
        d=$T/fuzz/$k-$cut
        mkdir -p "$d"
        head -c "$cut" "$src" >"$d/result.json"
        [ $((cut % 2)) = 0 ] && [ -f "$F/$k/intervals.jsonl" ] && head -c $((cut / 3)) "$F/$k/intervals.jsonl" >"$d/intervals.jsonl"
        rc=0
        timeout 10 "$RB" report "$d" --html "$d/r.html" >/dev/null 2>"$d/err" || rc=$?
        { [ "$rc" = 0 ] || [ "$rc" = 2 ]; } || fail "$d: exit $rc"
        [ "$cut" = "$size" ] || grep -q "$k-$cut" "$d/err" || fail "$d: no warning naming the directory"
        n=$((n + 1))
    done
    d=$T/fuzz/$k-flip
    mkdir -p "$d"
    python3 -c 'import sys, random
data = bytearray(open(sys.argv[1], "rb").read()); r = random.Random(7)
for _ in range(40): data[r.randrange(len(data))] = r.randrange(256)
open(sys.argv[2], "wb").write(data)' "$src" "$d/result.json"
    rc=0
    timeout 10 "$RB" report "$d" --html "$d/r.html" >/dev/null 2>/dev/null || rc=$?
    { [ "$rc" = 0 ] || [ "$rc" = 2 ]; } || fail "$d: exit $rc"
    n=$((n + 1))
done
ok "$n truncated and corrupted results: exit 0 or 2, a warning for each cut"

# 4. The HTML report in real headless Chromium: rendered, the expected SVG plots, nothing injected, nothing fetched.
# A run whose labels, host and phase names carry markup.
mkdir -p "$T/evil"
jq -c '.labels.run = "<script>alert(1)</script>" | .hosts[0].name = "<img src=x onerror=alert(2)>" |
       .summary.ops[0].phase = "</svg><script>alert(3)</script>" | .phases[0].name = "\"><svg onload=alert(4)>"' \
    "$F/get-a/result.json" >"$T/evil/result.json"
cp "$F/get-a/intervals.jsonl" "$T/evil/"
assert_exit 0 "html" "$RB" report "$F/get-a" "$F/get-b" "$F/tiers" "$F/sweep" "$F/train" "$F/coll" "$F/sim" "$F/block" \
    "$F/counters" "$F/partial" "$T/evil" --html "$T/report.html" -o "$T/report.md"
H=$T/report.html
grep -q 'Content-Security-Policy" content="default-src '"'"'none'"'" "$H" || fail "CSP"
# Only elements and attributes count: escaped text such as "&lt;img src=x" is harmless.
! grep -Eiq '<(script|link|img|iframe|object|embed)|\s(src|href|xlink:href)="|url\(|@import' "$H" ||
    fail "the page refers to something outside itself: $(grep -Eio '<(script|link|img)|\s(src|href)="|url\(' "$H" | head -1)"
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$H" || fail "label not escaped"
ok "self-contained page; markup from result files escaped"

# pages JOBS.json: loads the pages the list names in one headless chromium (tests/cdp_pages.js, over the DevTools
# protocol): their DOM, console messages and screenshots, as the list asks.
pages() {
    timeout --kill-after=5 300 node "$ROOT/tests/cdp_pages.js" "$T/chrome-profile" "$1" 2>"$T/pages.err" ||
        { cat "$T/pages.err" >&2; fail "chromium (tests/cdp_pages.js $1)"; }
}
# The page's DOM and console half a second after it loaded (any load it attempted is refused by then), and a copy
# with an inline script, which the page's Content-Security-Policy must refuse with a console message: the check of
# the console can fail.
sed 's|</body>|<script>document.title = "ran"</script></body>|' "$H" >"$T/inline.html"
cat >"$T/dom-jobs.json" <<JOBS
[{"url": "file://$H", "width": 1400, "height": 9000, "settle_ms": 500, "dom": "$T/dom.html", "console": "$T/chrome-dom.err"},
 {"url": "file://$T/inline.html", "width": 1400, "height": 1000, "settle_ms": 500, "dom": "$T/inline-dom.html",
  "console": "$T/inline.err"}]
JOBS
pages "$T/dom-jobs.json"
grep -q '^CONSOLE error security: .*Content Security Policy' "$T/inline.err" ||
    { cat "$T/inline.err" >&2; fail "an inline script in the page was not refused with a console message"; }
! grep -q '<title>ran</title>' "$T/inline-dom.html" || fail "an inline script in the page ran"
# The parsed DOM (what the browser built), not the file: plots by kind, axes with units, no injected elements.
plots() { grep -o "data-plot=\"$1\"" "$T/dom.html" | wc -l; }
# Latency curves: the load runs, tiers, sweep, train, block (the killed run has no histograms).
for want in latency-percentiles:5 throughput-time:3 latency-time:2 busbw-size:2 time-size:2 iops-latency:1 \
    sweep-knee:1 au-epoch:1 au-accelerators:1 tiers-bars:1 host-rates:1; do
    got=$(plots "${want%%:*}")
    assert_eq "SVG plots ${want%%:*}" "${want##*:}" "$got"
done
[ "$(grep -o '<path class="series' "$T/dom.html" | wc -l)" -ge 40 ] || fail "series lines"
for axis in 'percentile (log scale of 1/(1 - q))' 'latency (ms, log scale)' 'busbw (GB/s, log scale)' \
    'message size (bytes, log scale)' 'time per operation (us, log scale)' 'clat p99 latency (us, log scale)' \
    'AU (%)' 'throughput (MiB/s)' 'throughput (GiB/s)' 'time since the run started (s)' \
    "share of the epoch's wall time (%)"; do
    grep -qF ">$axis</text>" "$T/dom.html" || fail "axis title '$axis'"
done
grep -q '>p99.99</text>' "$T/dom.html" || fail "percentile ticks"
grep -q 'class="ref" ' "$T/dom.html" && grep -q '>SLO clat p99&lt;=2ms</text>' "$T/dom.html" || fail "SLO line"
grep -q '>AU minimum 90 %</text>' "$T/dom.html" || fail "AU minimum line"
! grep -Eq '<script|<img|<svg onload' "$T/dom.html" || fail "markup from a result file became elements"
# A blocked fetch or any script error would be a console message ("... violates the Content Security Policy").
! grep -q 'CONSOLE' "$T/chrome-dom.err" || fail "the page logged to the console: $(grep 'CONSOLE' "$T/chrome-dom.err" | head -1)"
ok "DOM: plots of every kind, axes with units, no injected elements, no console message (nothing blocked)"

png_info() { # width height and the first pixel's RGB of an 8-bit PNG (stdlib zlib only)
    python3 - "$1" <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h, depth, ctype = struct.unpack(">IIBB", d[16:26])
idat, i = b"", 8
while i < len(d):
    n, t = struct.unpack(">I4s", d[i:i + 8])
    if t == b"IDAT":
        idat += d[i + 8:i + 8 + n]
    i += 12 + n
raw = zlib.decompressobj().decompress(idat, 16)
# The first row's first pixel is stored as is under every PNG filter.
print(w, h, raw[1], raw[2], raw[3])
PY
}

# 5. Per kind, the headline figure as a person sees it at 1,400 px: measured in the rendered page (a test copy
# with tests/fixtures/report/dom_checks.js injected and the CSP that forbids it removed), then screenshots in
# light and dark kept under build/report-screenshots/ for people to look at.
SHOTS=$ROOT/build/report-screenshots
rm -rf "$SHOTS"
mkdir -p "$SHOTS"
# kind, the id of its first headline plot, its result directories ("compare:A,B" for --compare)
mapfile -t KINDS <<'KINDS'
tiers tiers-bars tiers
load throughput-time get-a
sweep sweep-knee sweep
block iops-latency block
coll busbw-size coll
sim-cal time-size sim-cal
train au-epoch train
compare throughput-time compare:get-a,get-b
KINDS
# Each kind's page and its probe copy, then the probes loaded in one browser, then the screenshots in one more.
jobs=()
for line in "${KINDS[@]}"; do
    read -r kind id dirs <<<"$line"
    args=()
    if [[ $dirs == compare:* ]]; then args=(--compare); dirs=${dirs#compare:}; fi
    for d in ${dirs//,/ }; do args+=("$F/$d"); done
    rc=0
    "$RB" report "${args[@]}" --html "$SHOTS/$kind.html" -o /dev/null --quiet || rc=$?
    [ "$rc" -le 1 ] || fail "$kind: report exit $rc"
    { sed 's/<meta http-equiv="Content-Security-Policy"[^>]*>//' "$SHOTS/$kind.html" | sed '/<\/body>/d'
      printf '<script>\n'; cat "$F/dom_checks.js"; printf '</script>\n</body>\n'; } >"$T/$kind-probe.html"
    jobs+=("{\"url\": \"file://$T/$kind-probe.html\", \"width\": 1400, \"height\": 1000, \"wait_for\": \"#rb-checks\", \"dom\": \"$T/$kind-probe.dom\"}")
done
(IFS=,; echo "[${jobs[*]}]") >"$T/probe-jobs.json"
pages "$T/probe-jobs.json"
jobs=()
for line in "${KINDS[@]}"; do
    read -r kind id dirs <<<"$line"
    sed -n 's:.*<pre id="rb-checks">\(.*\)</pre>.*:\1:p' "$T/$kind-probe.dom" | sed 's/&amp;/\&/g; s/&lt;/</g; s/&gt;/>/g' \
        >"$T/$kind-checks.json"
    C=$T/$kind-checks.json
    jq -e .viewport "$C" >/dev/null || fail "$kind: no measurements from the page"
    assert_jq "$C" '.page_width <= .viewport and (.too_wide | length) == 0' "$kind: nothing wider than the 1,400 px viewport"
    assert_jq "$C" ".headlines[0].id == \"$id\"" "$kind: headline $id first"
    assert_jq "$C" '.headlines | all(.width >= 1200)' "$kind: headline plots span the page (>= 1,200 px)"
    assert_jq "$C" '.headlines | all(.series >= 1 and .series == .legend and .distinct_styles == .series)' \
        "$kind: one legend entry and a distinct colour or dash per series"
    assert_jq "$C" '.headlines | all((.bars > 0) or (.paths_per_series | all(. == 1)))' "$kind: one path per line series"
    assert_jq "$C" '.headlines | all(.titles == .points + .bars)' "$kind: a tooltip on every point and bar"
    h=$(jq -r '.height' "$C")
    jobs+=("{\"url\": \"file://$SHOTS/$kind.html\", \"width\": 1400, \"height\": $h, \"png\": \"$SHOTS/$kind-light.png\"}"
        "{\"url\": \"file://$SHOTS/$kind.html\", \"width\": 1400, \"height\": $h, \"dark\": true, \"png\": \"$SHOTS/$kind-dark.png\"}")
done
(IFS=,; echo "[${jobs[*]}]") >"$T/shot-jobs.json"
pages "$T/shot-jobs.json"
for line in "${KINDS[@]}"; do
    read -r kind _ <<<"$line"
    # The background follows the scheme: white in light, near black in dark (its first pixel's R + G + B).
    read -r w sum < <(png_info "$SHOTS/$kind-light.png" | awk '{print $1, $3 + $4 + $5}')
    [ "$w" = 1400 ] && [ "$sum" -gt 720 ] || fail "$kind light: ${w}px, background R+G+B $sum"
    read -r w sum < <(png_info "$SHOTS/$kind-dark.png" | awk '{print $1, $3 + $4 + $5}')
    [ "$w" = 1400 ] && [ "$sum" -lt 120 ] || fail "$kind dark: ${w}px, background R+G+B $sum"
    ok "$kind: screenshots $SHOTS/$kind-{light,dark}.png"
done
# Numbers in the headlines, from the fixtures: what people read off the figures.
assert_jq "$T/tiers-checks.json" '.headlines[0] | .series == 3 and .bars == 6 and .labels == 6' \
    "tiers: 3 ways x 2 sizes, every bar labelled"
grep -q '>2.73 (6.8×)</text>' "$SHOTS/tiers.html" || fail "tiers: warm 1 MiB bar says 2.73 GiB/s, 6.8x direct"
assert_jq "$T/sweep-checks.json" '.headlines[0] | .labels == .points and .points >= 5 and .marks == 1' \
    "sweep: every step labelled, the knee circled"
grep -q '>16 in flight</text>' "$SHOTS/sweep.html" || fail "sweep: the step at 16 in flight is labelled"
assert_jq "$T/block-checks.json" '.headlines[0] | .series == 2 and .points == 6 and .labels == 6 and .ref == 1' \
    "block: a line per workload, 6 points labelled by queue depth, the SLO line"
grep -q '>qd 16</text>' "$SHOTS/block.html" || fail "block: qd labels"
assert_jq "$T/coll-checks.json" '[.headlines[].id] == ["busbw-size", "time-size"] and (.headlines | all(.series == 2))' \
    "coll: busbw and time by size, one line per algorithm (ring, hier)"
assert_jq "$T/sim-cal-checks.json" '.headlines[0] | .series == 4 and .distinct_styles == 4' \
    "sim-cal: measured and model per algorithm"
grep -q 'class="series s0 dash"' "$SHOTS/sim-cal.html" || fail "sim-cal: the model is dashed in the colour of its measurement"
assert_jq "$T/train-checks.json" '.headlines[0] | .series == 3 and .bars == 9 and .ref == 1' \
    "train: compute, data wait and the rest stacked for 3 epochs"
grep -q '>AU 87.4 %</text>' "$SHOTS/train.html" || fail "train: AU of epoch 1"
assert_jq "$T/load-checks.json" '[.headlines[].id] == ["throughput-time", "latency-time"]' "load: throughput and latency over time"
assert_jq "$T/compare-checks.json" \
    '.headlines[0] | .series == 2 and ((.styles[0] | split(" ")[0]) == (.styles[1] | split(" ")[0])) and .styles[0] != .styles[1]' \
    "compare: A and B in one hue, B dashed"
grep -q '<th>B / A</th>' "$SHOTS/compare.html" || fail "compare: the ratio column"


# A result directory used twice: its intervals.jsonl holds two runs of the phase, the second a minute later.
# On the run's time axis they are two stretches of line, not one line drawn back across the first.
mkdir -p "$T/reused"
cp "$F/get-a/result.json" "$T/reused/"
{ cat "$F/get-a/intervals.jsonl"; sed 's/"ts":"2026-11-22T03:43:5/"ts":"2026-11-22T03:44:5/' "$F/get-a/intervals.jsonl"; } >"$T/reused/intervals.jsonl"
null_was_dev=0; [ -c /dev/null ] && null_was_dev=1
assert_exit 0 "re-used result directory" "$RB" report "$T/reused" --html "$T/reused.html" -o /dev/null
# -o into a device writes into it: /dev/null stays a character device (a rename over it made it a regular file).
[ "$null_was_dev" = 0 ] || [ -c /dev/null ] || fail "report -o /dev/null replaced /dev/null: $(ls -l /dev/null)"
d=$(sed -n '/data-plot="throughput-time"/,/<\/svg>/p' "$T/reused.html" |
    grep -o '<path class="series[^>]*d="[^"]*"' | head -1 | sed 's/.* d="//; s/"$//')
assert_eq "throughput over time: moves in the re-used run's line" 2 "$(grep -o M <<<"$d" | wc -l)"
xs=$(tr ' ' '\n' <<<"$d" | sed 's/^[ML]//; s/,.*//')
[ "$(sort -n <<<"$xs" | tr '\n' ' ')" = "$(tr '\n' ' ' <<<"$xs")" ] || fail "the line goes back in time: $d"
ok "re-used directory: two stretches, x always growing (no diagonal back across the first run)"

# --format html writes the page itself; -o to a directory that does not exist is one line, exit 3.
assert_exit 0 "--format html" "$RB" report --format html "$F/coll" -o "$T/coll.html"
grep -q 'data-plot="busbw-size"' "$T/coll.html" || fail "--format html has the plot"
assert_exit 3 "unwritable -o" "$RB" report "$F/coll" -o /nonexistent/dir/report.md
assert_stderr_line 'report: --out /nonexistent/dir/report.md: cannot write'
