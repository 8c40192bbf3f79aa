#!/usr/bin/env bash
# needs: -
# railbench load tiers against an nginx origin (limit_rate) and an nginx proxy_cache tier: MISS/HIT counts per
# phase, exact bytes, warm faster than direct by design (a band), a pre-warmed tier caught, --fresh, --evict-cmd (no shell,
# and with --evict-shell), X-Cache fallback, an unknown header, bad input, SIGINT.
# Runs once per request engine of the GET phases (RB_ENGINE=curl or native runs one of them).
set -euo pipefail
if [ -z "${RB_ENGINE:-}" ]; then
    for e in curl native; do RB_ENGINE=$e bash "$0" "$@" || exit 1; done
    exit 0
fi
. "$(dirname "$0")/../lib.sh"
echo "engine: $RB_ENGINE"
. "$(dirname "$0")/../tiers_servers.sh"
# 2 MiB/s per connection: a 1 MiB object takes ~0.5 s from the origin and a few ms from the tier's cache.
tiers_servers 2m
K=262144
M=1048576
common=(--backend "$BACKEND" --tier "$TIER" --objects 8 -c 4 --quiet --engine "$RB_ENGINE")

# 1. An empty tier, two sizes, two warm epochs.
"$RB" load tiers "${common[@]}" --sizes 256KiB,1MiB --warm-epochs 2 --prom-textfile "$T/prom" --out "$T/t1" >/dev/null
R=$T/t1/result.json
assert_eq "phases in order" "put-256KiB direct-256KiB cold-256KiB warm-256KiB put-1MiB direct-1MiB cold-1MiB warm-1MiB" \
    "$(jq -r '[.phases[].name] | join(" ")' "$R")"
assert_eq "rows" "DIRECT,COLD through tier,WARM through tier,DIRECT,COLD through tier,WARM through tier" \
    "$(jq -r '[.summary.tiers_rows[].label] | join(",")' "$R")"
for s in $K $M; do
    assert_eq "$s B: objects direct/cold/warm" "8 8 16" "$(row "$R" $s direct objects) $(row "$R" $s cold objects) $(row "$R" $s warm objects)"
    assert_eq "$s B: bytes direct" $((8 * s)) "$(row "$R" $s direct bytes)"
    assert_eq "$s B: bytes cold" $((8 * s)) "$(row "$R" $s cold bytes)"
    assert_eq "$s B: bytes warm (2 epochs)" $((16 * s)) "$(row "$R" $s warm bytes)"
    assert_eq "$s B: cold hit/miss" "0/8" "$(row "$R" $s cold cache_hit)/$(row "$R" $s cold cache_miss)"
    assert_eq "$s B: warm hit/miss" "16/0" "$(row "$R" $s warm cache_hit)/$(row "$R" $s warm cache_miss)"
    assert_eq "$s B: direct is not counted" "null/null" "$(row "$R" $s direct cache_hit)/$(row "$R" $s direct cache_miss)"
    band "$s B: warm / direct throughput" "$(jq -n "$(row "$R" $s warm throughput_bytes_per_s) / $(row "$R" $s direct throughput_bytes_per_s)")" 3 -
    # The speed-up is the ratio of the rows' throughputs.
    jq -e --argjson s $s '(.summary.speedups[] | select(.size_bytes == $s)) as $x
        | ([.summary.tiers_rows[] | select(.size_bytes == $s)] | map({(.how): .throughput_bytes_per_s}) | add) as $t
        | ($x.warm_over_direct - $t.warm / $t.direct | fabs) < 1e-9 * $x.warm_over_direct
          and ($x.warm_over_cold - $t.warm / $t.cold | fabs) < 1e-9 * $x.warm_over_cold' "$R" >/dev/null ||
        fail "$s B: speed-ups are not the throughput ratios"
    ok "$s B: speed-ups are the throughput ratios"
done
assert_jq "$R" '.summary.checks_passed and .summary.cache_verified' "checks passed, cache verified"
assert_jq "$R" '[.checks[] | select(.name == "cold_is_cold" or .name == "warm_is_warm") | .passed] == [true,true,true,true]' \
    "cold_is_cold and warm_is_warm per size"
assert_jq "$R" '[.summary.tiers_rows[] | has("latency_avg_ns", "latency_p99_ns", "ttfb_p50_ns", "disk_util_ratio",
    "net_bytes_per_s", "ops_per_s")] | all' "every row has every column"
assert_eq "objects on the origin" "8 8" "$(find "$ORIGIN_DIR" -name 'obj-256KiB-*' -size ${K}c | wc -l) $(find "$ORIGIN_DIR" -name 'obj-1MiB-*' -size ${M}c | wc -l)"
grep -q '^| WARM through tier | 1 MiB |' "$T/t1/table.md" || fail "table.md lacks the WARM 1 MiB row"
grep -q '^speed-ups: 256 KiB: warm/direct ' "$T/t1/table.md" || fail "table.md lacks the speed-ups"
ok "table.md has the rows and the speed-ups"
# Loopback is not counted by the interface counters: the network column is "–" in every row, said once below,
# and null in result.json (not 0).
assert_eq "network column: – in every row" 6 "$(grep -c '^| .* | – | [^|]* |$' "$T/t1/table.md")"
assert_eq "the reason, once" 1 "$(grep -c '^network –: not measured; the target is on loopback' "$T/t1/table.md")"
assert_jq "$R" '[.summary.tiers_rows[].net_bytes_per_s] | all(. == null)' "net_bytes_per_s null on loopback"
grep -q '^railbench_events_total{op="GET",phase="warm-1MiB",event="cache_hit",run="[^"]*"} 16$' "$T/prom/railbench.prom" ||
    fail "no cache_hit counter for warm-1MiB in the Prometheus textfile"
ok "Prometheus: railbench_events_total cache_hit of warm-1MiB = 16"

# 2. The same objects again: the tier holds them, so cold is not cold, and the run says why.
rc=0
"$RB" load tiers "${common[@]}" --sizes 256KiB --existing --out "$T/t2" >/dev/null 2>"$T/t2.err" || rc=$?
assert_eq "pre-warmed tier: exit status" 1 "$rc"
assert_eq "pre-warmed: cold hit/miss" "8/0" "$(row "$T/t2/result.json" $K cold cache_hit)/$(row "$T/t2/result.json" $K cold cache_miss)"
assert_jq "$T/t2/result.json" '.summary.checks_passed == false and
    (.checks[] | select(.name == "cold_is_cold") | .passed == false and (.detail | test("8 of 8 cold GETs were cache HITs")))' \
    "failed cold_is_cold check with the count"
grep -q 'cold-256KiB: 8 of 8 cold GETs were cache HITs.*use --fresh' "$T/t2.err" || { cat "$T/t2.err"; fail "no message saying why"; }
ok "says why: $(head -c 150 "$T/t2.err")..."

# 3. --evict-cmd empties the tier's cache first; its words reach the program as written (no shell).
cat >"$T/evict.sh" <<'SH'
#!/bin/sh
out=$1; shift
for a in "$@"; do printf '[%s]' "$a"; done >"$out"
printf '\n%s %s %s %s\n' "$RB_TIERS_PHASE" "$RB_TIERS_SIZE_BYTES" "$RB_TIERS_OBJECTS" "$RB_TIERS_PREFIX" >>"$out"
find "$CACHE_DIR_FOR_EVICT" -type f -delete
SH
chmod 755 "$T/evict.sh"
CACHE_DIR_FOR_EVICT=$CACHE_DIR "$RB" load tiers "${common[@]}" --sizes 256KiB --existing \
    --evict-cmd "$T/evict.sh $T/evict.out 'a b;c' \$HOME \"*\"" --out "$T/t3" >/dev/null
assert_eq "evict-cmd: cold hit/miss" "0/8" "$(row "$T/t3/result.json" $K cold cache_hit)/$(row "$T/t3/result.json" $K cold cache_miss)"
assert_eq "evict-cmd: arguments exactly as written, nothing expanded" '[a b;c][$HOME][*]' "$(head -1 "$T/evict.out")"
assert_eq "evict-cmd: what it was told" "cold-256KiB $K 8 obj-256KiB-" "$(sed -n 2p "$T/evict.out")"
assert_jq "$T/t3/result.json" '.summary.checks_passed and (.checks[] | select(.name == "evict") | .passed)' "evict check passed"

# 4. --evict-shell: the user asked for a shell, so $VARIABLES and ; work.
"$RB" load tiers "${common[@]}" --sizes 256KiB --existing --evict-shell \
    --evict-cmd "echo \"\$RB_TIERS_PHASE\" >$T/shell.out; find $CACHE_DIR -type f -delete" --out "$T/t4" >/dev/null
assert_eq "evict-shell: the shell expanded the variable" "cold-256KiB" "$(cat "$T/shell.out")"
assert_eq "evict-shell: cold hit/miss" "0/8" "$(row "$T/t4/result.json" $K cold cache_hit)/$(row "$T/t4/result.json" $K cold cache_miss)"

# 5. --fresh: a new object set per run, so two runs on one tier are both cold. The first keeps its objects
#    (--keep, and says where they are); the second deletes its own at the end (WebDAV DELETE on the origin).
before=$(find "$ORIGIN_DIR" -type f | wc -l)
"$RB" load tiers "${common[@]}" --sizes 64KiB --fresh --keep --out "$T/f1" >/dev/null 2>"$T/f1.err"
"$RB" load tiers "${common[@]}" --sizes 64KiB --fresh --out "$T/f2" >/dev/null 2>"$T/f2.err"
for f in f1 f2; do
    assert_eq "fresh $f: cold hit/miss" "0/8" "$(row "$T/$f/result.json" 65536 cold cache_hit)/$(row "$T/$f/result.json" 65536 cold cache_miss)"
done
assert_eq "fresh: 8 new objects on the origin (the --keep run's)" $((before + 8)) "$(find "$ORIGIN_DIR" -type f | wc -l)"
assert_eq "fresh --keep: left_behind.objects" 8 "$(jq .summary.left_behind.objects "$T/f1/result.json")"
assert_eq "fresh: left_behind.objects after the cleanup" 0 "$(jq .summary.left_behind.objects "$T/f2/result.json")"
grep -q 'left up to 8 objects .*(--keep) (railbench load delete .* --prefix .* removes them)' "$T/f1.err" ||
    { cat "$T/f1.err"; fail "--keep run does not say what it left"; }
assert_jq "$T/f2/result.json" '[.phases[] | select(.name == "cleanup-64KiB")][0] | .op == "DELETE" and .count == 8' \
    "cleanup phase: 8 DELETEs"
[ "$(jq -r .summary.fresh "$T/f1/result.json")" != "$(jq -r .summary.fresh "$T/f2/result.json")" ] || fail "fresh names repeat"
f1=$(jq -r .summary.fresh "$T/f1/result.json")
assert_eq "fresh names carry the run and the size" 8 "$(find "$ORIGIN_DIR" -name "obj-$f1-64KiB-*" | wc -l)"

# 6. Cache status from X-Cache when the tier sends no X-Cache-Status; X-Cache-Status first when it sends both.
"$RB" load tiers --engine "$RB_ENGINE" --backend "$BACKEND" --tier "$TIER_XC" --objects 4 -c 4 --sizes 64KiB --fresh --quiet --out "$T/x1" >/dev/null
assert_eq "X-Cache only: cold miss, warm hit" "4 4" "$(row "$T/x1/result.json" 65536 cold cache_miss) $(row "$T/x1/result.json" 65536 warm cache_hit)"
"$RB" load tiers --engine "$RB_ENGINE" --backend "$BACKEND" --tier "$TIER_BOTH" --objects 4 -c 4 --sizes 64KiB --fresh --quiet --out "$T/x2" >/dev/null
assert_eq "both headers: warm counted from X-Cache-Status" "4 0" "$(row "$T/x2/result.json" 65536 warm cache_hit) $(row "$T/x2/result.json" 65536 warm cache_miss)"

# 7. A header the tier never sends: measured, then stopped with one clear line (exit 2), no silent pass; the
#    --fresh objects are still deleted (cleanup-64KiB), so nothing is left behind and nothing else is said.
assert_exit 2 "unknown cache header" "$RB" load tiers "${common[@]}" --sizes 64KiB --fresh --cache-header X-Nope --out "$T/u1"
assert_stderr_line '^railbench: error: --cache-header X-Nope: the tier answered none of the 8 GETs of cold-64KiB with this header'
assert_jq "$T/u1/result.json" '(.checks[] | select(.name == "cache_header") | .passed == false)
    and ([.phases[].name] == ["put-64KiB", "direct-64KiB", "cold-64KiB", "cleanup-64KiB"])
    and .summary.checks_passed == false and .summary.left_behind.objects == 0' \
    "cache_header check failed, no warm phase, cleaned up"

# 8. Bad input: one line, exit 2 (usage) or 3 (could not be carried out).
assert_exit 2 "tier equal to backend" "$RB" load tiers --backend "$BACKEND" --tier "$BACKEND/" --objects 1 --sizes 4k
assert_stderr_line 'is the same place as --backend'
assert_exit 2 "--evict on an nginx tier" "$RB" load tiers "${common[@]}" --sizes 4k --evict
assert_stderr_line "^railbench: error: --evict: the tier $TIER is not an AIStore tier"
assert_exit 2 "--evict-bucket on an nginx tier" "$RB" load tiers "${common[@]}" --sizes 4k --evict-bucket
assert_stderr_line 'evict-bucket: the tier .* is not an AIStore tier'
assert_exit 2 "unterminated quote in --evict-cmd" "$RB" load tiers "${common[@]}" --sizes 4k --evict-cmd "rm 'x"
assert_stderr_line "evict-cmd \"rm 'x\": unterminated ' quote"
assert_exit 2 "--existing with --fresh" "$RB" load tiers "${common[@]}" --sizes 4k --existing --fresh
assert_stderr_line 'existing and --fresh'
assert_exit 2 "no --backend" "$RB" load tiers --tier "$TIER" --objects 1
assert_stderr_line 'backend URL is required'
assert_exit 2 "a list in --cache-header" "$RB" load tiers "${common[@]}" --cache-header X-A,X-B
assert_stderr_line 'cache-header "X-A,X-B": expected one header name'
assert_exit 2 "zero-byte size" "$RB" load tiers "${common[@]}" --sizes 0
assert_stderr_line 'sizes: an object size of 0 bytes'
assert_exit 2 "bad tier URL" "$RB" load tiers --backend "$BACKEND" --tier "ftp://x/y" --objects 1
assert_stderr_line '^railbench: error: --tier: .*unknown scheme "ftp"'
dead=$(free_port)
assert_exit 3 "unreachable tier" "$RB" load tiers --backend "$BACKEND" --tier "http://127.0.0.1:$dead/data" --objects 1 --out "$T/d1"
assert_stderr_line "cannot connect to endpoint http://127.0.0.1:$dead"
assert_exit 3 "--evict-cmd that cannot run" "$RB" load tiers "${common[@]}" --sizes 4k --fresh --evict-cmd "$T/no-such-program x" --out "$T/e1"
assert_stderr_line "before cold-4KiB: --evict-cmd: cannot run \"$T/no-such-program\": No such file or directory"
assert_jq "$T/e1/result.json" '(.checks[] | select(.name == "evict") | .passed == false) and ([.phases[].name] | index("cold-4KiB") == null)' \
    "evict failure recorded, no cold phase"
assert_exit 3 "--evict-cmd that fails" "$RB" load tiers "${common[@]}" --sizes 4k --fresh --evict-cmd "sh -c 'exit 4'" --out "$T/e2"
assert_stderr_line '"sh" exited with status 4'

# 9. SIGINT during a long direct phase: result.json is still written, with what was measured.
bg "$RB" load tiers "${common[@]}" --sizes 64KiB --fresh --duration 60s --interval 200ms --out "$T/int"
pid=$LAST_PID
for _ in $(seq 150); do grep -q '"phase":"direct-64KiB"' "$T/int/intervals.jsonl" 2>/dev/null && break; sleep 0.1; done
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
assert_eq "exit status after SIGINT" 1 "$rc"
assert_jq "$T/int/result.json" '(.checks[] | select(.name == "completed") | .passed == false) and .summary.checks_passed == false
    and (.summary.tiers_rows[0].how == "direct") and (.summary.tiers_rows[0].objects > 0)
    and (.summary.tiers_rows[0].bytes == .summary.tiers_rows[0].objects * 65536)' "interrupted run recorded with its direct row"
