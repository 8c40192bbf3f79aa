#!/usr/bin/env bash
# needs: -
# Honest tables: human units in every command's table (no raw nanosecond or microsecond counts such as
# "2257876ns" or "9646us"), and per-second segments in op/s where no bytes move (load stat, load delete).
# Runs each command briefly (against nginx WebDAV where it needs a target) and scans what it printed.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T"
nginx_dav web
URL=http://127.0.0.1:$DAV_PORT/dav
run() { # NAME CMD...: runs a railbench command; its stdout and table.md go to $T/tables
    local name=$1; shift
    "$RB" "$@" --out "$T/$name" >"$T/$name.out" 2>/dev/null || fail "$name: exit $?"
    cat "$T/$name.out" "$T/$name/table.md" >>"$T/tables" 2>/dev/null || true
    ok "$name ran"
}
run put load put "$URL/u" --objects 40 --size 4k --keep
run get load get "$URL/u" --objects 40 --duration 2500ms -c 4
run stat load stat "$URL/u" --objects 40 --duration 2500ms -c 4
run list load list "$URL/u/" --count 20
run mixed load mixed "$URL/m" --objects 20 --size 4k --count 300
run sweep load sweep "$URL/u" --objects 40 -c 1,2 --duration 1s
run train load train "$URL/u" --objects 40 --compute-time 1ms --batch-size 4 --epochs 1
run delete load delete "$URL/u" --objects 40 -c 1 --rate 15/s
run coll coll allreduce -b 1k -e 64k
run counters fabric counters --duration 1s --interval 500ms
run overhead fabric overhead --size 4KiB,1MiB
run sim fabric sim allreduce --nodes 2 -b 1k -e 1M
# tiers through an nginx caching tier of its own (tests/tiers_servers.sh; its nginx keeps its files in $T/tiers,
# so the result goes to $T/tiers-run).
. "$(dirname "$0")/../tiers_servers.sh"
tiers_servers 0
run tiers-run load tiers --backend "$BACKEND" --tier "$TIER" --fresh --sizes 4KiB --objects 8
run block block --target "$T/blk" --allow-root-fs --size 4MiB --bs 4k --iodepth 1,2 --runtime 1s
run report report "$T/put" "$T/get" "$T/sweep" "$T/train" "$T/tiers-run" "$T/block" "$T/coll" "$T/counters"

# 1. No raw counts of ns or us: 1000 ns and up is us, 1000 us and up is ms (rb_format_duration_human).
if grep -nE '(^|[^0-9.])[0-9]{4,}(ns|us)\b' "$T/tables"; then
    fail "a table prints a raw count of ns or us (above)"
fi
ok "no raw ns/us figure in $(wc -l <"$T/tables") table lines of 15 commands"
grep -Eq '\| *[0-9.]+(ns|us|ms|s) *\| *[0-9.]+(ns|us|ms|s) *\|' "$T/list.out" || fail "load list: no human latencies"
ok "load list latencies: $(grep -E '^\| LIST' "$T/list.out" | head -n 1)"

# 2. Segments: MiB/s where bytes move, op/s where none do (HEAD, DELETE), from the same counters as the total.
grep -Eq '^1-second segments \([0-9]+ of [0-9.]+ s\): fastest [0-9.]+ MiB/s' "$T/get.out" || fail "get: segments not in MiB/s"
grep -Eq '^1-second segments \([0-9]+ of [0-9.]+ s\): fastest [0-9]+ op/s, median [0-9]+ op/s, slowest [0-9]+ op/s$' "$T/stat.out" ||
    fail "stat: segments not in op/s: $(grep segments "$T/stat.out")"
assert_jq "$T/stat/result.json" '.summary.ops[0].segments | .seconds == 2 and .fastest_ops_per_s > 0
    and .slowest_ops_per_s > 0 and (has("fastest_bytes_per_s") | not)' "stat: segments in op/s in result.json"
# delete at 15/s for 40 objects: about 2.7 s, so 2 whole seconds of about 15 requests each.
assert_jq "$T/delete/result.json" '.summary.ops[0].segments | .seconds == 2 and .median_ops_per_s >= 10
    and .median_ops_per_s <= 20' "delete: 2 whole seconds of about 15 op/s"

# 3. A figure not measured is –, never 0, and each output that shows one says why below its table ("X –: ...").
for name in put get stat list mixed sweep train delete coll counters overhead sim tiers-run block report; do
    for f in "$T/$name.out" "$T/$name/table.md"; do
        [ -f "$f" ] || continue
        if grep -q '^|.*–' "$f" && ! grep -q '–:' "$f"; then
            grep -n '–' "$f" >&2
            fail "$name: ${f##*/} shows – in a table but says nowhere why"
        fi
    done
done
ok "every table that shows – says why below it"
# On loopback: tiers' network is –, its disk util measured or –, each with its reason; never a bare 0.0000.
grep -q '^network –: not measured; the target is on loopback' "$T/tiers-run/table.md" || fail "tiers: no network – note"
grep -Eq '^\| DIRECT \| 4 KiB \|( [0-9.]+ \|){5} ([0-9.]+|–) \| – \| – \|$' "$T/tiers-run/table.md" ||
    fail "tiers: DIRECT row: $(grep '^| DIRECT' "$T/tiers-run/table.md")"
assert_jq "$T/tiers-run/result.json" '.summary.tiers_rows | all(.net_bytes_per_s == null)' "tiers: network null in result.json"
grep -q '^cache hit/miss –: direct reads do not pass the tier' "$T/tiers-run/table.md" || fail "tiers: no cache – note"
ok "tiers: $(grep '^| DIRECT' "$T/tiers-run/table.md")"
