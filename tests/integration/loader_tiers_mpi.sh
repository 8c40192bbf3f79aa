#!/usr/bin/env bash
# needs: mpi
# railbench load tiers under mpirun -np 2: cold objects partitioned by rank (every cold GET a MISS, none read
# twice), warm all HITs, exact merged bytes; a pre-warmed tier and a run-ending error agreed by both ranks.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../tiers_servers.sh"
tiers_servers 2m
K=262144
common=(--backend "$BACKEND" --tier "$TIER" -c 2 --sizes 256KiB --quiet)

# 1. 9 objects over 2 ranks (5 + 4): one cold read each, all MISS; 3 warm epochs, all HIT.
rb_mpirun 2 "$RB" load tiers "${common[@]}" --objects 9 --warm-epochs 3 --fresh --keep --out "$T/m1" >/dev/null
R=$T/m1/result.json
assert_jq "$R" '.mpi.size == 2 and .summary.ranks == 2' "two ranks"
assert_eq "direct: objects, bytes" "9 $((9 * K))" "$(row "$R" $K direct objects) $(row "$R" $K direct bytes)"
# Had a rank read another's share, cold would show 18 GETs with 9 HITs.
assert_eq "cold: GETs, hit/miss" "9 0/9" "$(row "$R" $K cold requests) $(row "$R" $K cold cache_hit)/$(row "$R" $K cold cache_miss)"
assert_eq "cold: bytes" $((9 * K)) "$(row "$R" $K cold bytes)"
assert_eq "warm: GETs, hit/miss" "27 27/0" "$(row "$R" $K warm requests) $(row "$R" $K warm cache_hit)/$(row "$R" $K warm cache_miss)"
assert_eq "warm: bytes" $((27 * K)) "$(row "$R" $K warm bytes)"
band "$K B: warm / direct throughput" "$(jq -n "$(row "$R" $K warm throughput_bytes_per_s) / $(row "$R" $K direct throughput_bytes_per_s)")" 3 -
assert_jq "$R" '.summary.checks_passed' "checks passed"
assert_jq "$R" '[.phases[] | select(.name == "cold-256KiB") | .ranks] == [2]' "cold phase record covers both ranks"

# 2. The same objects again: both ranks see HITs; the message comes once; exit 1.
prefix=obj-$(jq -r .summary.fresh "$R")-
rc=0
rb_mpirun 2 "$RB" load tiers "${common[@]}" --objects 9 --existing --prefix "$prefix" --out "$T/m2" >/dev/null 2>"$T/m2.err" || rc=$?
assert_eq "pre-warmed under mpirun: exit" 1 "$rc"
assert_eq "pre-warmed: cold hit/miss" "9/0" "$(row "$T/m2/result.json" $K cold cache_hit)/$(row "$T/m2/result.json" $K cold cache_miss)"
assert_eq "the reason, once (the warning; the outcome line names the check)" 1 "$(grep -v '^outcome:' "$T/m2.err" | grep -c 'cold GETs were cache HITs')"
grep -q "^outcome: completed, but a check failed: cold_is_cold" "$T/m2.err" || fail "no outcome line naming cold_is_cold: $(cat "$T/m2.err")"

# 3. A header the tier never sends stops both ranks after cold (exit 2, no hang); so does a failing --evict-cmd (exit 3).
assert_exit 2 "unknown header under mpirun" rb_mpirun 2 "$RB" load tiers "${common[@]}" --objects 4 --fresh --cache-header X-Nope --out "$T/m3"
assert_eq "the message, once" 1 "$(grep -c 'cache-header X-Nope: the tier answered none of the 4 GETs' "$T/stderr")"
assert_jq "$T/m3/result.json" '[.phases[].name] == ["put-256KiB", "direct-256KiB", "cold-256KiB", "cleanup-256KiB"]' "both ranks stopped after cold, then removed what --fresh wrote"
assert_exit 3 "failing --evict-cmd under mpirun" rb_mpirun 2 "$RB" load tiers "${common[@]}" --objects 4 --fresh --evict-cmd false --out "$T/m4"
assert_eq "the evict message, once" 1 "$(grep -c '"false" exited with status 1' "$T/stderr")"
