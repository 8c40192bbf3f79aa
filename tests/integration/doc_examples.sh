#!/usr/bin/env bash
# needs: ceph
# Examples are tests (docs/HACKING.md, "Examples are tests"): every ```sh block of README.md and docs/**/*.md
# runs as pasted against scripts/servers.sh, in one shell per page, four pages at a time (those holding a rule on
# time, then README.md, alone), with railbench on PATH as the README's tour puts it; every `railbench ...`
# command of every block, ```sh cluster-only ones included, is parsed by the binary itself (the command exists,
# every option exists, every value parses: RAILBENCH_PARSE_ONLY=1). Broken copies of pages prove that each half fails: a misspelled option in a
# cluster-only block, a missing file and a missing bucket in runnable ones. Every example must be safe to
# paste where other data lives: foreign files and objects are planted first under the names the examples'
# cleanups could match (obj-mine.txt, obj-00000001.keep, ... in every directory, on the origin, in the
# bucket), and each must be there, byte for byte, after the examples ran; a copy of docs/file.md whose
# cleanup deletes by a bare --prefix obj- proves that the check fails.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
CHECK=$ROOT/tests/doc_examples.py

# The checkout seen through symlinks: the examples' results and files land in $T, and the servers' state too.
W=$T/work
mkdir -p "$W"
for e in "$ROOT"/* "$ROOT"/.ci "$ROOT"/.git; do
    [ "$(basename "$e")" = railbench-results ] || ln -s "$e" "$W/$(basename "$e")"
done
export RB_SERVERS_DIR=$T/servers
servers_down() { (cd "$W" && scripts/servers.sh down >/dev/null 2>&1) || true; }
# cleanup reads the test's status from $?: hand it the status the script ended with, not servers_down's.
trap 'rc=$?; servers_down; (exit "$rc"); cleanup' EXIT

# 1. What there is: runnable blocks and cluster-only ones, in README.md and under docs/.
python3 "$CHECK" list "$ROOT" >"$T/list"
nrun=$(awk -F'\t' '$2 == "run"' "$T/list" | wc -l)
ncluster=$(awk -F'\t' '$2 == "cluster-only"' "$T/list" | wc -l)
[ "$nrun" -ge 20 ] && [ "$ncluster" -ge 15 ] || fail "too few examples: $nrun runnable, $ncluster cluster-only"
grep -q '^README.md:' "$T/list" && grep -q '^docs/' "$T/list" || fail "README.md or docs/ has no example"
ok "$nrun runnable blocks, $ncluster cluster-only blocks"

# README.md links every page under docs/ (and links no page that is gone); a copy without its link to
# docs/file.md is caught.
python3 "$CHECK" links "$ROOT" >"$T/links.out" || { cat "$T/links.out" >&2; fail "README.md does not link every page"; }
npages=$(tail -n 1 "$T/links.out" | cut -d' ' -f1)
[ "$npages" -ge 24 ] || fail "only $npages pages under docs/"
mkdir -p "$T/nolink" && cp -r "$ROOT/README.md" "$ROOT/docs" "$T/nolink/"
sed -i 's|(docs/file\.md[^)]*)|(docs/load.md)|g' "$T/nolink/README.md"
if python3 "$CHECK" links "$T/nolink" >"$T/links.out"; then fail "a README without docs/file.md's link passed"; fi
grep -qx 'README.md: no link to docs/file.md' "$T/links.out" || { cat "$T/links.out" >&2; fail "the missing link was not named"; }
ok "README.md links all $npages pages under docs/; a missing link is named"
[ "$(grep -c '' "$ROOT/README.md")" -le 400 ] || fail "README.md is longer than 400 lines"

# 2. Every railbench command of every block parses.
python3 "$CHECK" parse "$RB" "$ROOT" >"$T/parse.out" || { cat "$T/parse.out" >&2; fail "an example does not parse"; }
nparsed=$(tail -n 1 "$T/parse.out" | cut -d' ' -f1)
[ "$nparsed" -ge 60 ] || fail "only $nparsed railbench commands parsed"
ok "$(tail -n 1 "$T/parse.out")"

# 3. The parse can fail: a misspelled option and a value that is no size, in cluster-only blocks of a copy.
mkdir -p "$T/broken"
cp -r "$ROOT/README.md" "$ROOT/docs" "$T/broken/"
sed -i 's/--workload resnet50 --objects 1024 --populate/--workload resnet50 --objekts 1024 --populate/' \
    "$T/broken/docs/train.md"
sed -i 's/--iodepth 1,2,4,8,16,32,64 --runtime 30s/--iodepth 1,2,4,8,16,32,64 --runtime 30x/' "$T/broken/docs/block.md"
if python3 "$CHECK" parse "$RB" "$T/broken" >"$T/broken-parse.out"; then fail "the broken copy parses"; fi
grep -Eq '^docs/train\.md:[0-9]+: railbench load train .*exit 2: .*--objekts' "$T/broken-parse.out" ||
    { cat "$T/broken-parse.out" >&2; fail "the misspelled --objekts was not named"; }
grep -Eq '^docs/block\.md:[0-9]+: railbench block .*exit 2: .*--runtime' "$T/broken-parse.out" ||
    { cat "$T/broken-parse.out" >&2; fail "--runtime 30x was not named"; }
ok "broken copy: $(grep -c '' "$T/broken-parse.out") lines, --objekts and --runtime 30x named with page and line"

# Pages run at the same time: two pages using one name are refused, both named, before anything runs.
mkdir -p "$T/clash" && cp -r "$ROOT/README.md" "$ROOT/docs" "$T/clash/"
sed -i 's/--prefix sw-/--prefix rep-/g' "$T/clash/docs/sweep.md"
if python3 "$CHECK" run "$W" "$T/clash" "$T/clash-logs" >"$T/clash.out" 2>&1; then fail "two pages sharing rep- ran"; fi
assert_eq "the clash" "docs/sweep.md and docs/report.md both use rep-: pages run at the same time" "$(cat "$T/clash.out")"
assert_eq "pages run despite the clash" "" "$(ls "$T/clash-logs")"
ok "two pages sharing a prefix refused: $(cat "$T/clash.out")"

# 4. The examples' /tmp is this test's own ($DOC_TMP); foreign data goes where they write, under names their
#    cleanups could match.
export DOC_TMP=$T/tmp
mkdir -p "$DOC_TMP"
eval "$(cd "$W" && scripts/servers.sh up)"
python3 "$CHECK" plant "$ROOT" "$T/planted" || fail "could not plant the foreign data"
nplanted=$(grep -c '' "$T/planted")
[ "$nplanted" -ge 100 ] && grep -q '"where": "s3://bench", "name": "obj-mine.txt"' "$T/planted" &&
    grep -q '"name": "obj-00000001.keep"' "$T/planted" || fail "too little planted: $nplanted"
ok "$nplanted foreign files and objects planted"

# 5. Every page's runnable blocks but the README's (its tour ends with scripts/servers.sh down: it runs last).
pages=$(cut -f1 "$T/list" | cut -d: -f1 | sort -u | grep -v '^README.md$')
# shellcheck disable=SC2086
python3 "$CHECK" run "$W" "$ROOT" "$T/logs" $pages >"$T/run.out" 2>&1 || { cat "$T/run.out" >&2; fail "an example failed"; }
cat "$T/run.out"
ok "docs/ examples ran: $(tail -n 1 "$T/run.out")"
python3 "$CHECK" verify "$T/planted" >"$T/verify.out" || { cat "$T/verify.out" >&2; fail "an example changed or deleted foreign data"; }
assert_eq "foreign data after docs/" "$nplanted of $nplanted foreign files and objects unchanged" "$(tail -n 1 "$T/verify.out")"
ok "after docs/: $(tail -n 1 "$T/verify.out")"

# 6. The run can fail where parsing cannot see it: a topology file that does not exist (docs/fabric.md), and
#    a bucket that does not exist on RGW (docs/tiers.md); each is named with its page and line.
sed -i 's|--topology fabric/topologies/dgx-h100-su.json|--topology fabric/topologies/no-such-design.json|' \
    "$T/broken/docs/fabric.md"
sed -i 's|--backend s3://bench --backend-endpoint "$RGW_ENDPOINT"|--backend s3://no-such-bucket --backend-endpoint "$RGW_ENDPOINT"|' \
    "$T/broken/docs/tiers.md"
python3 "$CHECK" parse "$RB" "$T/broken" docs/fabric.md docs/tiers.md >/dev/null ||
    fail "the planted run-time faults should still parse"
for page in docs/fabric.md docs/tiers.md; do
    if python3 "$CHECK" run "$W" "$T/broken" "$T/broken-logs" "$page" >"$T/broken-run.out" 2>&1; then
        cat "$T/broken-run.out" >&2
        fail "the broken $page ran"
    fi
    grep -Eq "^FAILED $page: $page:[0-9]+ \(line [0-9]+ of the block\): exit [1-9]" "$T/broken-run.out" ||
        { cat "$T/broken-run.out" >&2; fail "the broken $page failed, but was not named"; }
    ok "broken $page caught: $(grep -m1 '^FAILED' "$T/broken-run.out" | cut -c1-160)"
done

# 7. The foreign-data check can fail: file.md's first cleanup by a bare --prefix obj- deletes obj-mine.txt and
#    obj-00000001.keep of its directory, and they are named.
cp "$ROOT/docs/file.md" "$T/broken/docs/file.md"
sed -i '0,/railbench load delete \/tmp\/rb-file .*/s||railbench load delete /tmp/rb-file --prefix obj- --quiet|' \
    "$T/broken/docs/file.md"
n=$(grep -n 'load delete /tmp/rb-file --prefix obj- --quiet' "$T/broken/docs/file.md" | cut -d: -f1)
[ -n "$n" ] || fail "file.md's cleanup not found"
# The copy ends with the block of that cleanup: the page's later blocks, run in full in step 5, add nothing here.
end=$(awk -v n="$n" 'NR > n && /^```/ { print NR; exit }' "$T/broken/docs/file.md")
sed -i "$((end + 1)),\$d" "$T/broken/docs/file.md"
python3 "$CHECK" run "$W" "$T/broken" "$T/broken-logs" docs/file.md >"$T/broken-run.out" 2>&1 ||
    { cat "$T/broken-run.out" >&2; fail "the broken docs/file.md failed to run"; }
if python3 "$CHECK" verify "$T/planted" >"$T/verify.out"; then fail "a bare --prefix obj- cleanup went unseen"; fi
grep -qx "GONE $DOC_TMP/rb-file obj-mine.txt" "$T/verify.out" && grep -qx "GONE $DOC_TMP/rb-file obj-00000001.keep" "$T/verify.out" ||
    { cat "$T/verify.out" >&2; fail "the deleted foreign files were not named"; }
assert_eq "lines of the check (2 gone, the total)" 3 "$(grep -c '' "$T/verify.out")"
ok "a bare --prefix obj- cleanup caught: $(tr '\n' ';' <"$T/verify.out")"

# 8. The README's blocks, the tour last of all; the foreign data is checked just before its servers.sh down.
python3 "$CHECK" plant "$ROOT" "$T/planted" >/dev/null || fail "could not plant the foreign data again"
DOC_BEFORE_DOWN="python3 $CHECK verify $T/planted >$T/verify-readme.out" \
    python3 "$CHECK" run "$W" "$ROOT" "$T/logs" README.md >"$T/readme.out" 2>&1 ||
    { cat "$T/readme.out" >&2; fail "a README example failed"; }
cat "$T/readme.out"
assert_eq "foreign data after the README" "$nplanted of $nplanted foreign files and objects unchanged" \
    "$(tail -n 1 "$T/verify-readme.out")"
ok "README examples ran; $(tail -n 1 "$T/verify-readme.out")"
